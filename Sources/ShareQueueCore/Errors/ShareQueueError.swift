/// Why a queue operation failed: what happened, where, and the underlying cause.
///
/// Every failure leaves the queue as it was; ``code`` says what happened, so that
/// a caller can tell a full queue (open the app) from a busy lock (retry in a
/// moment), and match it: `catch ShareQueueError.queueFull`. The underlying error
/// stays a value (a system call's error with its errno, a database's), so a
/// caller can look into it instead of parsing text.
///
/// An app's own error, thrown by its sink or handler during a drain, is not
/// wrapped in one: the drain rethrows it as it is (`catch let error as MyStoreError`).
///
/// Only the library makes these: each one comes from the place that knows what happened.
public struct ShareQueueError: Error, CustomStringConvertible, Sendable {
    /// What happened, to match with `catch ShareQueueError.busy` or to compare: `error.code == .queueFull`.
    public let code: Code
    /// What failed, in words: "cannot write the record".
    public let message: String
    /// The file or directory the failure concerns, if there is one.
    public let path: String?
    /// The error that caused this one, if another error did.
    public let underlying: (any Error)?
    /// How long the operation waited for a lock before giving up, for ``Code/busy``; nil otherwise.
    public let waited: Duration?
    /// Why it failed, in words, where the cause is text rather than an error value.
    private let reason: String?
    /// Whether an append wrote its records before it failed, unable to make them durable: unlike
    /// every other failure this one may not leave the queue as it was, since the records may still
    /// be delivered. What they name, such as their attachments' copies, must then stay.
    public internal(set) var recordWasWritten = false

    private init(code: Code, message: String, path: String?, underlying: (any Error)?, reason: String?, waited: Duration? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.underlying = underlying
        self.reason = reason
        self.waited = waited
    }

    /// Makes an error, with the error that caused it, if any.
    /// - Parameters:
    ///   - code: what happened.
    ///   - message: what failed.
    ///   - path: the file or directory concerned.
    ///   - underlying: the error that caused this one; its description becomes `cause`.
    package init(_ code: Code, _ message: String, path: String? = nil, underlying: (any Error)? = nil) {
        self.init(code: code, message: message, path: path, underlying: underlying, reason: nil)
    }

    /// Makes an error whose cause is only known as text, such as a database's message.
    /// - Parameters:
    ///   - code: what happened.
    ///   - message: what failed.
    ///   - path: the file or directory concerned.
    ///   - cause: why it failed.
    package init(_ code: Code, _ message: String, path: String? = nil, cause: String) {
        self.init(code: code, message: message, path: path, underlying: nil, reason: cause)
    }

    /// A lock another process held throughout `waited`.
    /// - Parameters:
    ///   - message: what the held lock means: "another drain is running".
    ///   - path: the lock file.
    ///   - waited: how long the operation waited for it.
    ///   - cause: who holds it, where the system can tell, and what giving up leaves.
    package static func busy(_ message: String, path: String, waited: Duration, cause: String) -> ShareQueueError {
        ShareQueueError(code: .busy, message: message, path: path, underlying: nil, reason: cause, waited: waited)
    }

    /// A sink that failed to take a batch, which stays queued.
    /// - Parameters:
    ///   - message: what failed: "the command did not finish within 30s".
    ///   - path: the file concerned, if one is.
    ///   - underlying: the sink's error, if it threw one.
    package static func handlerFailed(_ message: String, path: String? = nil, underlying: (any Error)? = nil) -> ShareQueueError {
        ShareQueueError(.handlerFailed, message, path: path, underlying: underlying)
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

// What an app written against the version before codes needs to find its way.
extension ShareQueueError {
    /// The former name of ``Code``.
    @available(*, deprecated, renamed: "Code")
    public typealias Kind = Code

    /// The former name of ``code``.
    @available(*, deprecated, renamed: "code")
    public var kind: Code { code }

    /// Once busy, full, a failed sink and a shortage alike; match the one you mean.
    @available(*, unavailable, message: "split into busy, queueFull, handlerFailed, sinkRefused, nameTaken, resourceShortage and recordHeld; a drain rethrows a handler's own error as it is")
    public static var tryAgain: Code { fatalError("unavailable") }
}
