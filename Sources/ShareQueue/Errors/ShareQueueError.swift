/// Why a queue operation failed: what, where, and the underlying cause.
///
/// Every failure leaves the queue as it was; `kind` tells a caller whether to
/// fix its input, its setup, or simply try again later.
import ShareQueueSystem
public struct ShareQueueError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The command line was wrong.
        case usage
        /// The input cannot be a record: invalid UTF-8 or JSON, or too large.
        case badData
        /// There was nothing to read: empty input, or an input file that does not exist.
        case noInput
        /// A directory or file could not be created.
        case cannotCreate
        /// Reading or writing failed, a full disk included.
        case ioError
        /// Busy, full, or a sink refused: nothing was lost, run again later.
        case tryAgain
        /// The operating system refused access.
        case permissionDenied
        /// The queue's format or the setup is not one this version can use.
        case configuration
    }

    public let kind: Kind
    public let message: String
    public let path: String?
    public let cause: String?
    /// The errno behind the failure, if a system call failed.
    let errno: Int32?

    public init(_ kind: Kind, _ message: String, path: String? = nil, cause: String? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
        self.cause = cause
        self.errno = nil
    }

    init(_ kind: Kind, _ message: String, path: String, systemError: SystemError) {
        self.kind = kind
        self.message = message
        self.path = path
        self.cause = systemError.description
        self.errno = systemError.errno
    }

    /// Whether a full disk (or quota) caused it.
    var isNoSpace: Bool { errno.map { SystemError(call: "", errno: $0).isNoSpace } ?? false }

    /// `what (path): cause`, the form the tools print after `error:`.
    public var description: String {
        var text = message
        if let path { text += " (\(path))" }
        if let cause { text += ": \(cause)" }
        return text
    }
}

extension ShareQueueError {
    /// Wraps a failed system call, choosing the kind from its errno.
    package init(_ message: String, path: String, _ error: SystemError, creating: Bool = false) {
        let kind: Kind
        if error.isAccessDenied {
            kind = .permissionDenied
        } else if error.isUnexpectedFileType {
            kind = .configuration
        } else if creating {
            kind = .cannotCreate
        } else {
            kind = .ioError
        }
        self.init(kind, message, path: path, systemError: error)
    }
}

extension ShareQueueError {
    /// `error` itself if it is a `ShareQueueError`, else an I/O error with
    /// `message` and `error` as its cause: for the last `catch` after the typed
    /// ones, where a forced cast would crash on an error nobody foresaw.
    package init(_ error: any Error, otherwise message: String, path: String? = nil) {
        if let error = error as? ShareQueueError {
            self = error
        } else if let error = error as? SystemError, let path {
            self.init(.ioError, message, path: path, systemError: error)
        } else {
            self.init(.ioError, message, path: path, cause: "\(error)")
        }
    }
}
