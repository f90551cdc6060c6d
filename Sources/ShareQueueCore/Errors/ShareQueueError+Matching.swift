/// Matching a failure by its kind in a `catch` clause:
///
/// ```swift
/// do { try drainer.drain(into: &inbox) }
/// catch ShareQueueError.tryAgain { scheduleRetry() }
/// catch { report(error) }
/// ```
extension ShareQueueError {
    /// Matches an argument that was not one the operation accepts; see ``Kind/invalidArgument``.
    public static let invalidArgument = Kind.invalidArgument
    /// Matches input that cannot be a record; see ``Kind/badData``.
    public static let badData = Kind.badData
    /// Matches nothing to read; see ``Kind/noInput``.
    public static let noInput = Kind.noInput
    /// Matches a directory or file that could not be created; see ``Kind/cannotCreate``.
    public static let cannotCreate = Kind.cannotCreate
    /// Matches a failed read or write; see ``Kind/ioError``.
    public static let ioError = Kind.ioError
    /// Matches busy, full, or a sink that failed; see ``Kind/tryAgain``.
    public static let tryAgain = Kind.tryAgain
    /// Matches access the system refused; see ``Kind/permissionDenied``.
    public static let permissionDenied = Kind.permissionDenied
    /// Matches a format or setup this version cannot use; see ``Kind/configuration``.
    public static let configuration = Kind.configuration
}

extension ShareQueueError.Kind {
    /// Whether `error` is a ``ShareQueueError`` of this kind, for `catch ShareQueueError.tryAgain`.
    public static func ~= (kind: Self, error: any Error) -> Bool {
        (error as? ShareQueueError)?.kind == kind
    }

    /// Whether `error` is of this kind, for a `catch` after a call that throws only ``ShareQueueError``.
    public static func ~= (kind: Self, error: ShareQueueError) -> Bool {
        error.kind == kind
    }
}
