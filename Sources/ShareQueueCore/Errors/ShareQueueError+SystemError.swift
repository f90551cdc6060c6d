import ShareQueueSystem

extension ShareQueueError {
    /// Wraps a failed system call, choosing the code from its errno: a resource
    /// that comes back by itself (see ``ReadFailure``) is `.resourceShortage`, whatever the call.
    /// - Parameters:
    ///   - message: what failed.
    ///   - path: the file or directory concerned.
    ///   - error: the failed call, kept as the underlying error.
    ///   - creating: whether the call was creating something, which makes a failure `.cannotCreate`
    ///     (but an I/O error, `.ioError` whatever the call).
    package init(_ message: String, path: String, _ error: SystemError, creating: Bool = false) {
        let code: Code
        if error.isResourceShortage {
            code = .resourceShortage
        } else if error.isAccessDenied {
            code = .permissionDenied
        } else if error.isUnexpectedFileType {
            code = .configuration
        } else if creating && !error.isInputOutput {
            // An I/O error says nothing of whether the thing could be made: the disk failed.
            code = .cannotCreate
        } else {
            code = .ioError
        }
        self.init(code, message, path: path, underlying: error)
    }

    /// The failed system call behind this error, if one is.
    package var systemError: SystemError? { underlying as? SystemError }
}
