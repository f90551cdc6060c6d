/// Matching a failure by its code in a `catch` clause, as GRDB's `catch DatabaseError.SQL_CONSTRAINT`:
///
/// ```swift
/// do {
///     try await appender.append(link, source: "share-extension")
/// } catch ShareQueueError.queueFull {
///     // Nothing was appended and only a drain makes room: ask the user to open the app.
/// } catch ShareQueueError.busy {
///     // Another process held the producers' lock throughout `lockTimeoutSeconds`: retry in a moment.
/// }
/// ```
extension ShareQueueError {
    /// Matches an argument that was not one the operation accepts; see ``Code/invalidArgument``.
    public static let invalidArgument = Code.invalidArgument
    /// Matches input that cannot be a record; see ``Code/badData``.
    public static let badData = Code.badData
    /// Matches nothing to read; see ``Code/noInput``.
    public static let noInput = Code.noInput
    /// Matches a directory or file that could not be created; see ``Code/cannotCreate``.
    public static let cannotCreate = Code.cannotCreate
    /// Matches a failed read or write; see ``Code/ioError``.
    public static let ioError = Code.ioError
    /// Matches access the system refused; see ``Code/permissionDenied``.
    public static let permissionDenied = Code.permissionDenied
    /// Matches a format or setup this version cannot use; see ``Code/configuration``.
    public static let configuration = Code.configuration
    /// Matches a file of the queue that no version wrote; see ``Code/damaged``.
    public static let damaged = Code.damaged
    /// Matches a lock another process held throughout the wait; see ``Code/busy``.
    public static let busy = Code.busy
    /// Matches a queue at its size limit; see ``Code/queueFull``.
    public static let queueFull = Code.queueFull
    /// Matches a sink that failed to take a batch; see ``Code/handlerFailed``.
    public static let handlerFailed = Code.handlerFailed
    /// Matches records a sink refused; see ``Code/sinkRefused``.
    public static let sinkRefused = Code.sinkRefused
    /// Matches a name another process took meanwhile; see ``Code/nameTaken``.
    public static let nameTaken = Code.nameTaken
    /// Matches a shortage of descriptors, memory or the like; see ``Code/resourceShortage``.
    public static let resourceShortage = Code.resourceShortage
    /// Matches a record a drain kept queued until what it needs is in reach; see ``Code/recordHeld``.
    public static let recordHeld = Code.recordHeld
}

extension ShareQueueError.Code {
    /// Whether `error` is a ``ShareQueueError`` with this code, for `catch ShareQueueError.queueFull`.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? ShareQueueError)?.code == code
    }

    /// Whether `error` has this code, for a `catch` after a call that throws only ``ShareQueueError``.
    public static func ~= (code: Self, error: ShareQueueError) -> Bool {
        error.code == code
    }
}
