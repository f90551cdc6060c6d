import ShareQueueSystem

/// Removing what has been delivered, and what producers and drains that died left behind.
extension DrainRun {
    /// Removes delivered segment `sequence`, the file whose status is `delivered`, and syncs the directory.
    ///
    /// Only that file: a drain run beside this one (a member of a shared queue's group can remove
    /// `drain.lock`) may have sealed new records under the same name since. Looked at and removed
    /// under the producers' lock, under which every seal is made; another file there is left to its drain.
    func removeSegment(_ sequence: UInt64, delivered: FileStatus) throws {
        let name = directory.sealedName(sequence)
        let lock = try drainer.takeProducersLock(seconds: max(options.waitSeconds, QueueLock.minimumSealWait),
                                                 consequence: "the delivered segment stays, to be delivered again")
        defer { lock.release() }
        do {
            guard let named = try directory.folder.status(of: name), named.isSameFile(as: delivered) else { return }
            try directory.folder.remove(name)
            try directory.folder.synchronize(.segmentRemoved)
        } catch {
            throw ShareQueueError("cannot remove a delivered segment", path: directory.path(of: name), error)
        }
    }

    /// Moves a file that is not what the queue wrote (a symlink, a FIFO, a
    /// file with other names, another user's that this drain may not read)
    /// out of the way without following or reading it.
    mutating func setAsideFile(_ name: String, _ problem: String = "is not a regular file with one name", handling: QueueEvent.Handling = .unread) throws {
        try drainer.moveAsideForeign(name, problem, handling: handling)
        summary.quarantined += 1
    }

    /// Removes what producers and drains that died left behind, once a day old:
    /// files half-written under a temporary name (a format marker, refusal counts,
    /// a key's entry, an attachment's copy), and attachments no pending record or dead letter refers to.
    func removeStaleFiles() {
        Self.removeStaleTemporaries(in: directory.folder, matching: QueueLayout.isTemporary)
        if let keys = try? directory.folder.subfolder(QueueLayout.keys, creating: false) {
            Self.removeStaleTemporaries(in: keys, matching: QueueLayout.isKeyEntryTemporary)
        }
        let store = attachments
        store.removeStaleTemporaries(olderThan: QueueDrainer.staleAge, limit: QueueDrainer.staleFilesPerDrain)
        let stale = store.staleFiles(olderThan: QueueDrainer.staleAge, limit: QueueDrainer.staleFilesPerDrain)
        guard !stale.isEmpty else { return }
        // When in doubt (a failure to read, a damaged letter), keep them.
        guard let references = try? attachmentReferences(to: Set(stale.map(ByteKey.init))) else { return }
        store.removeFiles(stale.filter { references.pending[ByteKey($0)] == nil && !references.deadLetters.contains(ByteKey($0)) })
    }

    /// Removes the regular files and empty folders of `folder` whose names `isTemporary` accepts and
    /// that are older than a day: a live writer's file is younger, since each
    /// writer removes its own temporary name before it writes it anew.
    private static func removeStaleTemporaries(in folder: QueueFolder, matching isTemporary: (String) -> Bool) {
        let cutoff = Host.millisecondsSince1970() / 1000 - QueueDrainer.staleAge
        // Judged by age before they count towards the limit: new names, which stay, must not fill it.
        func isStale(_ name: String) -> Bool {
            guard isTemporary(name), let status = try? folder.status(of: name) else { return false }
            return status.modificationSeconds < cutoff
        }
        for name in (try? folder.entries(where: isStale, limit: QueueDrainer.staleFilesPerDrain)) ?? [] {
            guard let status = try? folder.status(of: name) else { continue }
            // A folder being made whole (`attachments.tmp-<pid>`) is removed only while empty.
            if status.isDirectory { try? folder.descriptor.removeDirectory(name) } else if status.isRegularFile { try? folder.remove(name) }
        }
    }
}
