import ShareQueueSystem

/// Removing what has been delivered, and what producers and drains that died left behind.
extension DrainRun {
    func removeSegment(_ sequence: UInt64) throws {
        let name = directory.sealedName(sequence)
        do {
            try directory.folder.remove(name)
            try directory.folder.synchronize()
        } catch {
            throw ShareQueueError("cannot remove a delivered segment", path: directory.path(of: name), error)
        }
    }

    /// Moves a file that is not what the queue wrote (a symlink, a FIFO, a
    /// file with other names) out of the way without following or reading it.
    mutating func setAsideFile(_ name: String) throws {
        try drainer.moveAsideForeign(name, "is not a regular file with one name")
        summary.quarantined += 1
    }

    /// Removes what producers and drains that died left behind, once a day old:
    /// half-copied attachments, and attachments no pending record or dead letter refers to.
    func removeStaleFiles() {
        let store = attachments
        store.removeStaleTemporaries(olderThan: QueueDrainer.staleAge)
        let stale = store.staleFiles(olderThan: QueueDrainer.staleAge)
        guard !stale.isEmpty else { return }
        var referenced: Set<ByteKey> = []
        do {
            try QueueInspector(directory: directory).forEachPending { drained in
                if drained.hasAttachments { drained.record.attachments?.forEach { referenced.insert(ByteKey($0.file)) } }
            }
            let letters = DeadLetters(directory: directory, warn: drainer.warn)
            for file in [QueueLayout.deadLetters, QueueLayout.deadLettersRequeue] {
                let skipped = try letters.forEachRecord(in: file) { payload in
                    (try? Record(jsonBytes: payload))?.attachments?.forEach { referenced.insert(ByteKey($0.file)) }
                }
                // A damaged letter might refer to any of them.
                if skipped > 0 { return }
            }
        } catch {
            return  // When in doubt, keep them.
        }
        store.removeFiles(stale.filter { !referenced.contains(ByteKey($0)) })
    }
}
