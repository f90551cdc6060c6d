import ShareQueueSystem

/// Waiting, within a bound, for one of the queue's locks: the producers' (see ``ProducersLock``) or `drain.lock`.
///
/// A process stopped while it holds a lock (SIGSTOP, a debugger, an app that iOS
/// suspended) holds it until it continues or ends. So no one waits for a lock
/// without a bound, and whoever gives up says which lock, and which process
/// holds it where the system can tell.
enum QueueLock {
    /// How long a drain waits for the producers' lock at least, whatever its own
    /// wait: producers hold it for one write, which a busy disk can stretch to moments.
    static let minimumSealWait = 1.0

    /// Takes the exclusive lock on `file`, waiting at most `seconds`; a free lock costs one `flock`.
    /// - Parameters:
    ///   - path: The lock file's path, for messages: spelled out only for one, not at every append.
    ///   - shouldStop: Asked between tries; true gives up at once.
    ///   - busy: What a held lock means, to begin the message: "another drain is running".
    ///   - consequence: What giving up leaves, to end it: "nothing was appended".
    /// - Throws: `.busy` naming the lock and its holder when the time runs out,
    ///   `.ioError` (or another kind from the errno) when `flock` itself fails.
    static func take(_ file: FileDescriptor, path: @autoclosure () -> String, seconds: Double, shouldStop: (() -> Bool)? = nil,
                     busy: String, consequence: String) throws(ShareQueueError) {
        let locked: Bool
        do { locked = try file.lockExclusive(waitingUpTo: seconds, shouldStop: shouldStop) } catch {
            throw ShareQueueError("cannot take a lock", path: path(), error)
        }
        guard !locked else { return }
        if let cause = sharedHolding(file, path: path()) {
            throw ShareQueueError.busy(busy, path: path(), waited: .seconds(seconds), cause: cause + "; \(consequence)")
        }
        let process = file.lockHolder()
        let holder = process.map { "process \($0)" + (FileDescriptor.processOwner($0).map { " of user \($0)" } ?? "") }
            ?? "a process the system does not name (another user's, or one in another container)"
        // A lock held past a wait is most likely held by a process that is not running.
        let cause = seconds > 0
            ? "\(holder) held it throughout \(spelled(seconds)) s; \(consequence). A process stopped or suspended while it holds the lock keeps it "
                + "until it continues or ends, and no other process can take it from it: \(remedy(process, path: path()))"
            : "\(holder) holds it; \(consequence)"
        throw ShareQueueError.busy(busy, path: path(), waited: .seconds(seconds), cause: cause)
    }

    /// What to do about a lock held past a wait by `process` (nil: one the system does not name).
    private static func remedy(_ process: Int32?, path: String) -> String {
        guard let process else { return "find it with `fuser -v \(path)` as root, and let it go on (`kill -CONT`) or end it, or ask the user who runs it to" }
        return "if it is stopped, let it go on (`kill -CONT \(process)`); if it is no ShareQueue tool at work, end it, or ask the user who runs it to"
    }

    /// What holds `file` with a shared lock, which no tool of the queue takes, and what to do about it;
    /// nil if no shared lock is found. A member of a shared queue's group can hold one to stop every drain.
    static func sharedHolding(_ file: FileDescriptor, path: String) -> String? {
        let holders = file.sharedLockHolders()
        guard !holders.isEmpty else { return nil }
        let named = holders.filter { $0.process > 0 }
        guard !named.isEmpty else {
            return "a shared lock on it is held by a process the system does not name (another user's, or one in another container); "
                + "no ShareQueue tool takes a shared lock. Find it with `fuser -v \(path)` as root and end it, or ask the user who runs it to"
        }
        let who = named.map { holder in "process \(holder.process)" + (holder.user.map { " of user \($0)" } ?? "") }.joined(separator: ", ")
        return "\(who) holds a shared lock on it, which no ShareQueue tool takes: another program's; end it, or ask the user who runs it to"
    }

    /// Lets go of a lock taken with ``take(_:path:seconds:shouldStop:busy:consequence:)`` and closes its file.
    ///
    /// Unlocked before it is closed because closing alone frees the lock only with the last
    /// descriptor of its open file: a process that another thread forked holds copies of them
    /// all until it calls exec, and through that moment the lock would look taken.
    static func release(_ file: FileDescriptor) {
        file.unlock()
        file.close()
    }

    /// Seconds as people write them, to a tenth: 10, 0.5 (a wait's remainder such as 7.99999 reads 8).
    private static func spelled(_ seconds: Double) -> String {
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() && tenths < 1e9 ? String(Int(tenths)) : String(tenths)
    }
}
