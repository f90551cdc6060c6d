extension ShareQueueError {
    /// What went wrong, in a form to match: `catch ShareQueueError.queueFull`.
    ///
    /// A struct over a private enum rather than an enum, so that codes can be
    /// added without breaking code that switches over them: such a switch needs
    /// a `default`. Each code says what happened, not what a tool exits with;
    /// the tools map codes to exit statuses themselves.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case invalidArgument, badData, noInput, cannotCreate, ioError, permissionDenied, configuration, damaged
            case busy, queueFull, handlerFailed, sinkRefused, nameTaken, resourceShortage, recordHeld
        }

        private let value: Value

        private init(_ value: Value) { self.value = value }

        /// An argument was not one the operation accepts: a malformed id, an empty source, a bad option.
        public static let invalidArgument = Code(.invalidArgument)
        /// The input cannot be a record, or a record cannot be the value asked for: invalid UTF-8 or
        /// JSON, a record too large, a value that does not encode or decode.
        public static let badData = Code(.badData)
        /// There was nothing to read: empty input, an input file that does not exist, no queue at a path.
        public static let noInput = Code(.noInput)
        /// A directory or file could not be created.
        public static let cannotCreate = Code(.cannotCreate)
        /// Reading or writing failed, a full disk included; what was queued stays queued.
        public static let ioError = Code(.ioError)
        /// The operating system refused access.
        public static let permissionDenied = Code(.permissionDenied)
        /// The queue's format or the setup is not one this version can use: a queue in a newer
        /// format, something other than the queue's own file where one should be, no App Group container.
        public static let configuration = Code(.configuration)
        /// A file of the queue holds bytes no version of ShareQueue wrote, such as its format marker;
        /// the queue is left untouched. Damaged records are not errors: a drain sets them aside.
        public static let damaged = Code(.damaged)
        /// Another process held one of the queue's locks throughout the wait
        /// (``ShareQueueError/waited`` says how long): try again shortly.
        public static let busy = Code(.busy)
        /// The queue holds as many bytes as its producers allow (`AppendOptions.maxPendingBytes`):
        /// nothing was appended, and only a drain makes room.
        public static let queueFull = Code(.queueFull)
        /// A sink failed to take a batch, which stays queued with everything after it; its error, if it
        /// threw one, is ``ShareQueueError/underlying``. A drain rethrows an app's own sink or handler
        /// error as it is; this code is for failures the library or a tool reports itself.
        public static let handlerFailed = Code(.handlerFailed)
        /// A sink refused records: one refused under `DrainOptions.maxAttempts` stays queued with its
        /// attempt counted, and the drain delivered the others; try again later.
        public static let sinkRefused = Code(.sinkRefused)
        /// Another process took a name the queue was about to use while it worked; nothing was lost: try again.
        public static let nameTaken = Code(.nameTaken)
        /// The system ran short of something that comes back by itself: descriptors, memory, inotify
        /// instances, or a call that signals kept interrupting. Try again later.
        public static let resourceShortage = Code(.resourceShortage)
        /// Something a record needs is out of this drain's reach for now: a copy of its attachment in a
        /// folder moved aside that this user may not read, or an attachments folder that changed into one
        /// it may not read while it ran. A drain no longer ends with it: such a record waits among the dead
        /// letters (``QueueStatus/waitingLetters``) while the records after it are delivered, and a drain
        /// puts it back by itself once it may read what it needs.
        public static let recordHeld = Code(.recordHeld)

        /// Once busy, full, a failed sink and a shortage alike; match the one you mean.
        @available(*, unavailable, message: "split into busy, queueFull, handlerFailed, sinkRefused, nameTaken, resourceShortage and recordHeld")
        public static var tryAgain: Code { fatalError("unavailable") }

        /// The code's name, as in `queueFull`.
        public var description: String { "\(value)" }
    }
}
