/// With `coalesceKeys`: which record of each key is the one to deliver.
extension DrainRun {
    /// Reads the sealed segments, without changing them, to learn the newest
    /// record of each key: the latest date, and of equal dates the last appended.
    mutating func findNewestOfEachKey() throws {
        var newest: [String: (date: String, id: String)] = [:]
        let store = attachments
        try QueueInspector(directory: directory).forEachPending(includingUnsealed: false) { drained in
            guard let key = drained.key else { return }
            // Only a record that will itself be delivered may supersede others.
            if drained.hasAttachments {
                guard let record = try? Record(jsonBytes: drained.storedJSON),
                      try (record.attachments ?? []).allSatisfy({ attachment throws(ShareQueueError) in try store.problem(with: attachment) == nil }) else { return }
            }
            if let current = newest[key], drained.date < current.date { return }
            newest[key] = (drained.date, drained.id)
        }
        newestOfKey = newest.mapValues(\.id)
    }
}
