import ShareQueueSystem

extension ShareQueueError {
    /// Wraps a failed system call, choosing the kind from its errno: a resource
    /// that comes back by itself (see ``ReadFailure``) is `.tryAgain`, whatever the call.
    /// - Parameters:
    ///   - message: what failed.
    ///   - path: the file or directory concerned.
    ///   - error: the failed call, kept as the underlying error.
    ///   - creating: whether the call was creating something, which makes a failure `.cannotCreate`
    ///     (but an I/O error, `.ioError` whatever the call).
    package init(_ message: String, path: String, _ error: SystemError, creating: Bool = false) {
        let kind: Kind
        if error.isResourceShortage {
            kind = .tryAgain
        } else if error.isAccessDenied {
            kind = .permissionDenied
        } else if error.isUnexpectedFileType {
            kind = .configuration
        } else if creating && !error.isInputOutput {
            // An I/O error says nothing of whether the thing could be made: the disk failed.
            kind = .cannotCreate
        } else {
            kind = .ioError
        }
        self.init(kind, message, path: path, underlying: error)
    }

    /// The failed system call behind this error, if one is.
    package var systemError: SystemError? { underlying as? SystemError }
}
