import ShareQueueSystem

/// With `coalesceKeys`: which record of each key is the one to deliver.
extension DrainRun {
    /// Reads the sealed segments, without changing them, to learn the newest
    /// record of each key: the latest instant its date denotes as read now (see
    /// `DateInstant.asRead(at:)`: one from the future counts as none), and of equal
    /// instants the last appended.
    mutating func findNewestOfEachKey() throws {
        // Known by where it ends, not by its id, which any producer can give two records.
        var newest: [Digest128: (instant: DateInstant, end: DrainPosition, files: [String])] = [:]
        let store = attachments, options = options, checked = checkedFiles, onEvent = drainer.onEvent, directory = directory
        // One reading of the clock for the whole look, so that every record is judged alike.
        let now = DateInstant(millisecondsSince1970: Host.millisecondsSince1970())
        try QueueInspector(directory: directory).forEachPending(includingUnsealed: false) { drained in
            guard let key = drained.key.map({ Digest128($0.utf8) }) else { return }
            // Only a record that will itself be delivered may supersede others; one whose attachments
            // a drain does not read (see `AttachmentStore.unread`) is not, and its files are not read.
            var files: [String] = []
            if drained.hasAttachments {
                guard let record = try? Record(jsonBytes: drained.storedJSON) else { return }
                let list = record.attachments ?? []
                // Its copies brought back first, as delivery would: a record is not passed over for a folder moved aside.
                // One that waits for another user's folder or copy goes to the dead letters, as one not read does.
                let waits = try store.waitingReason(list, of: record.id, options: options, checked: checked) { copy in
                    onEvent(AttachmentStore.restoredEvent(copy, of: record.id, in: directory))
                }
                guard waits == nil, store.unread(list, options: options) == nil,
                      try list.allSatisfy({ attachment throws(ShareQueueError) in try store.problem(with: attachment, checked: checked) == nil }) else { return }
                files = list.map(\.file)
            }
            let instant = DateInstant(drained.dateText).asRead(at: now)
            if let current = newest[key], instant < current.instant { return }
            newest[key] = (instant, drained.end, files)
        }
        newestOfKey = newest.mapValues(\.end)
        filesOfNewest = Set(newest.values.flatMap { $0.files.map(ByteKey.init) })
    }
}
