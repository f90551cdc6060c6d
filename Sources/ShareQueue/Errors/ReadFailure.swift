import ShareQueueSystem

/// The one rule that tells damage from a passing failure, for everything a
/// drain reads in the queue: segments, attachments and its own bookkeeping.
///
/// Only what the bytes themselves show (a checksum, a rule, a digest, a size)
/// or what stands at a name (nothing, or not a regular file) proves damage and
/// lets a record be set aside. Every other failure (EMFILE, ENFILE, ENOMEM,
/// EAGAIN, EIO, ENOSPC, EACCES, a signal) says nothing about the record: the
/// drain stops, keeps it for the next one, and exits 75 for a resource that
/// may come back by itself, 74 for the rest.
enum ReadFailure {
    /// What `error` proves about the file it concerns, in words to follow its
    /// name ("is missing"), or nil if it proves nothing.
    static func damage(_ error: SystemError) -> String? {
        if error.isNotFound { return "is missing" }
        if error.isUnexpectedFileType { return "is not a regular file" }
        return nil
    }

    /// A failure that proves nothing, as the drain reports it: `.tryAgain` (75)
    /// when a resource ran short, `.ioError` (74) otherwise.
    static func error(_ message: String, path: String, _ error: SystemError) -> ShareQueueError {
        ShareQueueError(error.isResourceShortage ? .tryAgain : .ioError, message, path: path, underlying: error)
    }
}
