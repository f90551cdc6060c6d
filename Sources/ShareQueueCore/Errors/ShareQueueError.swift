/// Why a queue operation failed: what failed, where, and the underlying cause.
///
/// Every failure leaves the queue as it was; `kind` tells a caller whether to
/// fix its input, its setup, or simply try again later. The underlying error
/// stays a value (a system call's error with its errno, a sink's own error),
/// so a caller can look into it instead of parsing text.
public struct ShareQueueError: Error, CustomStringConvertible, Sendable {
    /// The kind of failure, which tells a caller what to do about it.
    public let kind: Kind
    /// What failed, in words: "cannot write the record".
    public let message: String
    /// The file or directory the failure concerns, if there is one.
    public let path: String?
    /// The error that caused this one, if another error did.
    public let underlying: (any Error)?
    /// Why it failed, in words, where the cause is text rather than an error value.
    private let reason: String?
    /// Whether an append wrote its records before it failed, unable to make them durable: unlike
    /// every other failure this one may not leave the queue as it was, since the records may still
    /// be delivered. What they name, such as their attachments' copies, must then stay.
    public internal(set) var recordWasWritten = false

    /// Makes an error, with the error that caused it, if any.
    /// - Parameters:
    ///   - kind: the kind of failure.
    ///   - message: what failed.
    ///   - path: the file or directory concerned.
    ///   - underlying: the error that caused this one; its description becomes `cause`.
    public init(_ kind: Kind, _ message: String, path: String? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
        self.underlying = underlying
        self.reason = nil
    }

    /// Makes an error whose cause is only known as text, such as a database's message.
    /// - Parameters:
    ///   - kind: the kind of failure.
    ///   - message: what failed.
    ///   - path: the file or directory concerned.
    ///   - cause: why it failed.
    public init(_ kind: Kind, _ message: String, path: String? = nil, cause: String) {
        self.kind = kind
        self.message = message
        self.path = path
        self.underlying = nil
        self.reason = cause
    }

    /// Why it failed, in words: the text given, or the underlying error's description.
    public var cause: String? { reason ?? underlying.map { "\($0)" } }

    /// `what (path): cause`, the form the tools print after `error:`.
    public var description: String {
        var text = message
        if let path { text += " (\(path))" }
        if let cause { text += ": \(cause)" }
        return text
    }
}
