import ShareQueue

extension ShareQueueError {
    /// The sysexits code for this error, for the command-line stand-ins of the
    /// extension and the app (an app on iOS shows or logs the error instead).
    /// `Code` is a struct that can grow, so the switch has a default.
    public var exitStatus: Int32 {
        switch code {
        case .invalidArgument: 64      // EX_USAGE
        case .badData: 65              // EX_DATAERR
        case .noInput: 66              // EX_NOINPUT
        case .cannotCreate: 73         // EX_CANTCREAT
        case .ioError: 74              // EX_IOERR
        // Nothing was lost, run again later.
        case .busy, .queueFull, .handlerFailed, .sinkRefused, .nameTaken, .resourceShortage, .recordHeld: 75  // EX_TEMPFAIL
        case .permissionDenied: 77     // EX_NOPERM
        case .configuration, .damaged: 78  // EX_CONFIG
        default: 70                    // EX_SOFTWARE
        }
    }
}
