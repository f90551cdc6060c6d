/// With `coalesceKeys`: which record of each key is the one to deliver.
extension DrainRun {
    /// Reads the sealed segments, without changing them, to learn the newest
    /// record of each key: the latest instant its date denotes (see `DateInstant`),
    /// and of equal instants the last appended.
    mutating func findNewestOfEachKey() throws {
        // Known by where it ends, not by its id, which any producer can give two records.
        var newest: [ByteKey: (instant: DateInstant, end: DrainPosition, files: [String])] = [:]
        let store = attachments, options = options, checked = checkedFiles
        try QueueInspector(directory: directory).forEachPending(includingUnsealed: false) { drained in
            guard let key = drained.key.map(ByteKey.init) else { return }
            // Only a record that will itself be delivered may supersede others; one whose attachments
            // a drain does not read (see `AttachmentStore.unread`) is not, and its files are not read.
            var files: [String] = []
            if drained.hasAttachments {
                guard let record = try? Record(jsonBytes: drained.storedJSON), store.unread(record.attachments ?? [], options: options) == nil,
                      try (record.attachments ?? []).allSatisfy({ attachment throws(ShareQueueError) in try store.problem(with: attachment, checked: checked) == nil }) else { return }
                files = record.attachments?.map(\.file) ?? []
            }
            let instant = DateInstant(drained.dateText)
            if let current = newest[key], instant < current.instant { return }
            newest[key] = (instant, drained.end, files)
        }
        newestOfKey = newest.mapValues(\.end)
        filesOfNewest = Set(newest.values.flatMap { $0.files.map(ByteKey.init) })
    }
}
