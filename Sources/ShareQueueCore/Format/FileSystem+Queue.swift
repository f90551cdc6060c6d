import ShareQueueSystem

extension FileSystem {
    /// `linkStatus`, for callers that report failures as `ShareQueueError`.
    package static func linkStatusOrThrow(_ path: String) throws(ShareQueueError) -> FileStatus? {
        do { return try linkStatus(path) } catch { throw ShareQueueError("cannot examine a file", path: path, error) }
    }
}
