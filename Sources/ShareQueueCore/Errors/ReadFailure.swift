import ShareQueueSystem

/// The one rule that tells damage from a passing failure, for everything a
/// drain or a status reads or updates in the queue: segments, attachments,
/// and the bookkeeping (checkpoint, attempts, dead letters, quarantine, format
/// marker, the directory's listing).
///
/// Only what the bytes themselves show (a checksum, a rule, a digest, a size)
/// or what stands at a name (nothing, or not a regular file) proves damage and
/// lets a record be set aside. Every other failure says nothing about the
/// record: the drain stops, keeps it and every record after it for the next
/// drain, and exits
/// - `.resourceShortage` (the tools exit 75) when a resource ran short that comes back by itself:
///   descriptors (EMFILE, ENFILE), memory (ENOMEM, ENOBUFS), EAGAIN, or signals
///   that kept interrupting a call (EINTR);
/// - `.ioError` (74) for the rest: EIO, a full disk (ENOSPC, EDQUOT), access
///   refused to a file inside the queue (EACCES, EPERM), a read-only file system;
/// - `.configuration` (78) where something other than the queue's own file
///   stands at a name the caller could not set aside (a FIFO, a symlink).
///
/// Opening the queue itself (its directory and format marker) is setup, not
/// reading: there, access refused is `.permissionDenied` (77), as for any tool (see
/// ``ShareQueueError/init(_:path:_:creating:)``); a shortage is `.resourceShortage` there too.
///
/// A few readers keep going on a failure instead, where going on can cost at
/// most a duplicate, never a record: a producer that cannot read a key's
/// entry appends again; cleanup keeps a file it cannot prove unreferenced.
enum ReadFailure {
    /// What `error` proves about the file it concerns, in words to follow its
    /// name ("is missing"), or nil if it proves nothing.
    static func damage(_ error: SystemError) -> String? {
        if error.isNotFound { return "is missing" }
        if error.isUnexpectedFileType { return "is not a regular file" }
        return nil
    }

    /// The code of a failure that proves nothing: `.resourceShortage` when a
    /// resource ran short, `.configuration` for a planted file that is
    /// not a regular one, `.ioError` otherwise.
    static func code(of error: SystemError) -> ShareQueueError.Code {
        if error.isResourceShortage { return .resourceShortage }
        return error.isUnexpectedFileType ? .configuration : .ioError
    }

    /// A failure that proves nothing, as the drain reports it.
    /// - Parameters:
    ///   - message: what failed, such as "cannot read a sealed segment".
    ///   - path: the file concerned.
    ///   - error: the failed call, kept as the cause.
    static func error(_ message: String, path: String, _ error: SystemError) -> ShareQueueError {
        ShareQueueError(code(of: error), message, path: path, underlying: error)
    }

    /// Any error that stopped a drain or a status, as reported: a
    /// ``ShareQueueError`` as it is, a failed call by the rule above, and
    /// anything else as `.ioError`. The one place these are told apart.
    static func error(_ message: String, path: String, _ error: any Error) -> ShareQueueError {
        if let error = error as? ShareQueueError { return error }
        if let error = error as? SystemError { return Self.error(message, path: path, error) }
        return ShareQueueError(.ioError, message, path: path, underlying: error)
    }
}
