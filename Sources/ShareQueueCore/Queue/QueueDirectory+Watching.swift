import ShareQueueSystem

extension QueueDirectory {
    /// A watcher of this queue's pending file, which every append writes: a write to any
    /// other file of the queue (a drain's checkpoint, say) is no change.
    ///
    /// The one watcher of the package: `host-drain --watch` waits with it on its own thread,
    /// and `changes(minimumInterval:)` through a dispatch source.
    /// - Throws: What `ChangeWatcher(directory:fileName:)` throws, as a `ShareQueueError` naming the directory.
    package func changeWatcher() throws(ShareQueueError) -> ChangeWatcher {
        do { return try ChangeWatcher(directory: path, fileName: QueueLayout.pending) } catch {
            throw ShareQueueError("cannot watch the queue directory", path: path, error)
        }
    }
}
