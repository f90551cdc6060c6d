import ShareQueueSystem

/// Keeping records out of a pending file that another producer's user owns.
///
/// Whoever owns a file can change its mode at any time. A member of a shared queue's group
/// who owns `pending.log` could make it unreadable to the host once others had appended,
/// and every record in it would be set aside undelivered. So a producer writes only into a
/// pending file of its own, of the queue's owner, or of root; one of another user it first
/// copies into a file of its own, which takes its place. A drain makes the pending file
/// anew, as the queue's owner, after each seal, so that this copy is the exception.
extension QueueAppender {
    /// Whether a pending file whose status is `status` belongs to a user this producer must not write
    /// records into: neither this process's user, nor the queue directory's owner, nor root.
    func isOthersPending(_ status: FileStatus) -> Bool {
        guard status.owner != Host.effectiveUserID, status.owner != 0 else { return false }
        guard let owner = try? directory.folder.descriptor.status().owner else { return true }
        return status.owner != owner
    }

    /// Replaces the pending file `file` (whose status is `status`), another user's, with a copy of
    /// this process's own, made whole under `pending.log.tmp-<pid>`, synced, renamed over it and the
    /// directory synced; called under the producers' lock. `file` is closed.
    /// - Returns: the new pending file, open for appending, and its status.
    /// - Throws: `.nameTaken` if the file changed while it was copied (only a process that does not
    ///   take the producers' lock does that); the system's error if it cannot be copied.
    func replaceOthersPending(_ file: FileDescriptor, _ status: FileStatus) throws(ShareQueueError) -> (FileDescriptor, FileStatus) {
        defer { file.close() }
        let path = directory.pendingPath
        let folder = directory.folder
        let temporary = QueueLayout.creationTemporary(QueueLayout.pending, processID: Host.processID)
        func failure(_ error: SystemError) -> ShareQueueError {
            ShareQueueError("cannot copy the pending file of user \(status.owner) into one of this user's own before appending", path: path, error, creating: true)
        }
        // Nil: the file changed meanwhile, which only a process that does not take the producers' lock does.
        let replaced: (FileDescriptor, FileStatus)?
        do throws(SystemError) {
            _ = try folder.clearTemporary(temporary)
            let copy = try folder.open(temporary, .writeCreateExclusive)
            defer { copy.close() }
            // Up to the size seen under the lock: bytes its owner adds later, around the lock, are that owner's.
            var buffer = [UInt8](repeating: 0, count: 256 << 10)
            var offset: Int64 = 0
            while offset < status.size {
                let count = min(try file.read(into: &buffer, from: 0, at: offset), Int(status.size - offset))
                if count == 0 { break }
                try copy.writeAll(count == buffer.count ? buffer : Array(buffer.prefix(count)))
                offset += Int64(count)
            }
            // Synced whatever the producer's own setting: it holds other producers' records, which they synced.
            try copy.synchronize(.appendRecord)
            if let now = try folder.status(of: QueueLayout.pending), now.isSameFile(as: status), now.size == status.size {
                try folder.rename(temporary, to: QueueLayout.pending)
                // The copy's name is made durable before any record goes in, as a new pending file's is.
                try folder.synchronize(.pendingCreated)
                let own = try folder.open(QueueLayout.pending, .append)
                let ownStatus: FileStatus
                do { ownStatus = try own.status() } catch { own.close(); throw error }
                if ownStatus.isSameFile(as: try copy.status()) { replaced = (own, ownStatus) } else { own.close(); replaced = nil }
            } else {
                replaced = nil
            }
        } catch {
            try? folder.remove(temporary)
            // Moved away meanwhile, by a process that takes no lock: the next append finds what is there then.
            if error.isNotFound { replaced = nil } else { throw failure(error) }
        }
        try? folder.remove(temporary)
        guard let replaced else {
            throw ShareQueueError(.nameTaken, "the pending file of user \(status.owner) changed while this producer copied it; nothing was appended", path: path)
        }
        return replaced
    }
}
