import ShareQueueSystem

/// Taking the pending file as a new segment, and names that only look like segments.
extension DrainRun {
    /// Renames the pending file to a sealed segment under the producers' lock,
    /// never over an existing file. The lock is held for that rename only, so a
    /// drain stopped at any other instant holds up no producer; the directory is
    /// synced after it is released, and before anything sealed is delivered.
    /// - Returns: false if nothing was pending, or no segment number is left.
    /// - Throws: `.nameTaken` if a file took the name since the directory was listed,
    ///   or the producers' lock stayed taken past the drain's wait (``QueueLock/minimumSealWait`` at least).
    mutating func seal(as sequence: UInt64) throws -> Bool {
        guard sequence <= QueueLayout.maximumSequence else {
            drainer.onEvent(.noSegmentNumberLeft(after: sequence - 1))
            return false
        }
        let lock = try drainer.takeProducersLock(seconds: max(options.waitSeconds, QueueLock.minimumSealWait),
                                                 consequence: "the pending records stay queued for the next drain")
        defer { lock.release() }
        // `drain.lock` is a file a member of a shared queue's group can remove while this drain holds
        // it, and another drain may then have delivered a segment of this number since this one listed
        // the queue, and removed it: its checkpoint names it, and a new segment of that number would be
        // read from that position on. Looked at under the producers' lock, as every seal is made.
        let checkpointed = try checkpoint.positionOnDisk()
        guard checkpointed.segment < sequence else {
            throw ShareQueueError(.nameTaken, "another drain ran beside this one and delivered segment \(checkpointed.segment) meanwhile "
                                  + "(was drain.lock removed?); the pending records stay queued for the next drain", path: directory.checkpointPath)
        }
        guard try renamePending(to: sequence) else { return false }
        lock.unlock()
        CrashPoint.reached(.drainSealUnlocked)
        do { try directory.folder.synchronize(.sealed) } catch {
            throw ShareQueueError("cannot seal the pending file", path: directory.pendingPath, error)
        }
        return true
    }

    /// Renames the pending file to segment `sequence`; called under the producers' lock.
    /// - Returns: false if nothing was pending, or what stood there was set aside.
    private mutating func renamePending(to sequence: UInt64) throws -> Bool {
        guard var status = try directory.folder.status(of: QueueLayout.pending) else { return false }
        if status.linkCount > 1 { status = directory.folder.dropCreationLinks(QueueLayout.pending, status) }
        if let problem = directory.unusablePending(status) {
            // Another user's producers could never append to it, and only the queue's owner can repair that.
            try drainer.moveAsideForeign(QueueLayout.pending, problem)
            return false
        }
        guard status.size > 0 || !status.isRegularFile else { return false }
        guard status.isRegularFile else {
            try setAsideFile(QueueLayout.pending)
            return false
        }
        do throws(SystemError) {
            try directory.folder.renameWithoutReplacing(QueueLayout.pending, to: directory.sealedName(sequence))
        } catch {
            // Not the queue's doing: keep both files; the next drain lists the new one and delivers it first.
            if error.isAlreadyExists {
                throw ShareQueueError(.nameTaken, "a file took the next segment's name while the queue was drained; the pending records stay queued for the next drain",
                                      path: directory.sealedPath(sequence))
            }
            throw ShareQueueError("cannot seal the pending file", path: directory.pendingPath, error)
        }
        CrashPoint.reached(.drainSealed)
        return true
    }

    /// Moves aside, unread, a name that looks like a segment but is not spelled
    /// as the queue spells one: it may hold records, so it is kept, under a name no drain reads.
    mutating func moveAsideForeignSegment(_ name: String) throws {
        try drainer.moveAsideForeign(name, "is not named as the queue names its segments")
        summary.quarantined += 1
    }
}
