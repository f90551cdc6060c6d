/// With `coalesceKeys`: which record of each key is the one to deliver.
extension DrainRun {
    /// Reads the sealed segments, without changing them, to learn the newest
    /// record of each key: the latest date, and of equal dates the last appended.
    mutating func findNewestOfEachKey() throws {
        var newest: [ByteKey: (date: String, id: String)] = [:]
        let store = attachments
        let destination = options.attachmentsDestination
        try QueueInspector(directory: directory).forEachPending(includingUnsealed: false) { drained in
            guard let key = drained.key.map(ByteKey.init) else { return }
            // Only a record that will itself be delivered may supersede others.
            if drained.hasAttachments {
                guard let record = try? Record(jsonBytes: drained.storedJSON),
                      (record.attachments ?? []).allSatisfy({ store.problem(with: $0, deliveredTo: destination) == nil }) else { return }
            }
            if let current = newest[key], drained.date < current.date { return }
            newest[key] = (drained.date, drained.id)
        }
        newestOfKey = newest.mapValues { ByteKey($0.id) }
    }
}
