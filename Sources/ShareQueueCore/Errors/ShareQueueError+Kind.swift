extension ShareQueueError {
    /// The kind of a failure: whether to fix the input, fix the setup, or try again.
    ///
    /// A struct rather than an enum, so that kinds can be added without
    /// breaking code that switches over them: such a switch needs a `default`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: Hashable, Sendable {
            case invalidArgument, badData, noInput, cannotCreate, ioError, tryAgain, permissionDenied, configuration
        }

        private let code: Code

        private init(_ code: Code) { self.code = code }

        /// An argument was not one the operation accepts: a malformed id, an empty source, a bad option.
        public static let invalidArgument = Kind(.invalidArgument)
        /// The input cannot be a record: invalid UTF-8 or JSON, or too large.
        public static let badData = Kind(.badData)
        /// There was nothing to read: empty input, or an input file that does not exist.
        public static let noInput = Kind(.noInput)
        /// A directory or file could not be created.
        public static let cannotCreate = Kind(.cannotCreate)
        /// Reading or writing failed, a full disk included.
        public static let ioError = Kind(.ioError)
        /// Busy, full, or a sink refused: nothing was lost, run again later.
        public static let tryAgain = Kind(.tryAgain)
        /// The operating system refused access.
        public static let permissionDenied = Kind(.permissionDenied)
        /// The queue's format or the setup is not one this version can use.
        public static let configuration = Kind(.configuration)

        /// The kind's name, as in `.tryAgain`.
        public var description: String { "\(code)" }
    }
}
