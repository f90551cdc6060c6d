/// How a drain batches and how long it waits for another drainer.
public struct DrainOptions: Sendable {
    /// Records handed to the sink at once; the checkpoint moves after each batch.
    public var batchSize = 100
    /// A batch also ends once its records reach this many bytes, which bounds memory.
    public var batchBytes = 4 << 20
    /// Stop after this many records; nil drains everything.
    public var maxRecords: Int? = nil
    /// How long to wait for another drainer to finish; 0 gives up at once.
    public var waitSeconds: Double = 0

    public init() {}
}

/// Takes records out of a queue and hands them to a sink: the host's side.
///
/// One drainer runs at a time. It seals the pending file by renaming it under
/// the producers' lock, which takes a moment, and then delivers from the sealed
/// file without holding that lock, so producers never wait for a sink. After
/// each batch it records a checkpoint; a sealed file is removed only once all
/// of it has been delivered or set aside. A drainer killed at any point resumes
/// from the checkpoint, so a record is delivered at least once, and exactly
/// once to a sink that stores the position itself.
public final class QueueDrainer {
    public let directory: QueueDirectory
    public let options: DrainOptions
    /// Receives notices about damaged records and files set aside.
    public var warn: (String) -> Void = { _ in }

    public init(directory: QueueDirectory, options: DrainOptions = DrainOptions()) {
        self.directory = directory
        self.options = options
    }

    /// Drains the queue into `sink`.
    /// - Throws: `.tryAgain` if another drainer is running or the sink fails
    ///   (what it did not take stays queued), `.ioError` and others as they come.
    public func drain<Sink: DrainSink>(into sink: inout Sink) throws(ShareQueueError) -> DrainSummary {
        let drainLock = try takeDrainLock()
        defer { drainLock.close() }
        CrashPoint.reached(.drainLocked)
        var run = DrainRun(drainer: self, checkpoint: try Checkpoint(directory: directory, warn: warn), summary: DrainSummary())
        do {
            try run.deliverAll(into: &sink)
        } catch let error as ShareQueueError {
            throw error
        } catch {
            throw ShareQueueError(.tryAgain, "the sink failed after \(run.summary.delivered) records; the rest stay queued", cause: "\(error)")
        }
        return run.summary
    }

    private func takeDrainLock() throws(ShareQueueError) -> FileDescriptor {
        let path = directory.drainLockPath
        do {
            let file = try FileDescriptor.open(path, .lockFile)
            let deadline = Host.monotonicSeconds() + options.waitSeconds
            while try !file.lockExclusive(wait: false) {
                if Host.monotonicSeconds() >= deadline {
                    file.close()
                    throw ShareQueueError(.tryAgain, "another drain is running", path: directory.path)
                }
                Host.sleep(milliseconds: 20)
            }
            return file
        } catch let error as SystemError {
            throw ShareQueueError("cannot take the drain lock", path: path, error, creating: true)
        } catch {
            throw error as! ShareQueueError
        }
    }
}

/// The state of one drain while it runs.
private struct DrainRun {
    let drainer: QueueDrainer
    let checkpoint: Checkpoint
    var summary: DrainSummary
    var directory: QueueDirectory { drainer.directory }
    var options: DrainOptions { drainer.options }

    var budgetLeft: Int { options.maxRecords.map { $0 - summary.delivered } ?? Int.max }

    mutating func deliverAll<Sink: DrainSink>(into sink: inout Sink) throws {
        var position = checkpoint.position
        if let stored = try sink.deliveredPosition(), stored > position { position = stored }
        let sealed = try directory.sealedSegments()
        var lastSequence = max(position.segment, sealed.last ?? 0)
        for sequence in sealed {
            if sequence < position.segment {
                // Fully delivered by a drain that died before removing it.
                try removeSegment(sequence)
                continue
            }
            let start = sequence == position.segment ? position.offset : 0
            guard try deliverSegment(sequence, from: start, into: &sink) else { return }
        }
        guard budgetLeft > 0 else { summary.stoppedAtLimit = true; return }
        lastSequence += 1
        if try seal(as: lastSequence) {
            _ = try deliverSegment(lastSequence, from: 0, into: &sink)
        }
    }

    /// Renames the pending file to a sealed segment under the producers' lock.
    /// - Returns: false if nothing was pending.
    mutating func seal(as sequence: UInt64) throws -> Bool {
        let lockPath = directory.appendLockPath
        let lock: FileDescriptor
        do { lock = try FileDescriptor.open(lockPath, .lockFile) } catch {
            throw ShareQueueError("cannot open the queue's lock file", path: lockPath, error, creating: true)
        }
        defer { lock.close() }
        return try lock.withExclusiveLock {
            let pending = directory.pendingPath
            guard let status = try FileSystem.linkStatus(pending), status.size > 0 || !status.isRegularFile else { return false }
            guard status.isRegularFile, status.linkCount == 1 else {
                try setAside(pending, name: "pending.log")
                return false
            }
            do throws(SystemError) {
                try FileSystem.rename(pending, to: directory.sealedPath(sequence))
                CrashPoint.reached(.drainSealed)
                try FileSystem.synchronizeDirectory(directory.path)
            } catch {
                throw ShareQueueError("cannot seal the pending file", path: pending, error)
            }
            return true
        }
    }

    /// Delivers one sealed segment from `offset`, then removes it.
    /// - Returns: false if the record limit stopped it before the end.
    mutating func deliverSegment<Sink: DrainSink>(_ sequence: UInt64, from offset: Int64, into sink: inout Sink) throws -> Bool {
        let name = directory.sealedName(sequence)
        let path = directory.sealedPath(sequence)
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, .readOnly)
        } catch {
            if error.isUnexpectedFileType { try setAside(path, name: name); return true }
            throw ShareQueueError("cannot open a sealed segment", path: path, error)
        }
        defer { file.close() }
        let status = try file.status()
        guard status.isRegularFile, status.linkCount == 1 else { try setAside(path, name: name); return true }
        var start = offset
        if start > status.size {
            drainer.warn("the checkpoint points past the end of \(path); delivering it from the start")
            start = 0
        }

        var reader = SegmentReader(file: file, from: start)
        var records: [DrainedRecord] = []
        var damaged: [DamagedRegion] = []
        var bytes = 0
        while true {
            let event = try reader.next()
            let finished = event == nil
            switch event {
            case .record(let recordOffset, let payload)?:
                do {
                    records.append(DrainedRecord(record: try Record(jsonBytes: payload), storedJSON: payload))
                    bytes += payload.count
                } catch {
                    damaged.append(DamagedRegion(offset: recordOffset, length: Int64(payload.count + Frame.overhead),
                                                 reason: error.message, bytes: payload, isTornTail: false))
                }
            case .damaged(let region)?:
                damaged.append(region)
            case nil:
                break
            }
            let full = records.count >= min(options.batchSize, budgetLeft) || bytes >= options.batchBytes
            if finished || full {
                try flush(&records, &damaged, end: DrainPosition(segment: sequence, offset: reader.position), segment: name, into: &sink)
                bytes = 0
            }
            if finished { break }
            if budgetLeft <= 0 {
                summary.stoppedAtLimit = true
                return false
            }
        }
        CrashPoint.reached(.drainBeforeRemove)
        try removeSegment(sequence)
        return true
    }

    /// Hands the batch to the sink, sets damaged regions aside, then records the checkpoint.
    mutating func flush<Sink: DrainSink>(_ records: inout [DrainedRecord], _ damaged: inout [DamagedRegion], end: DrainPosition,
                                         segment: String, into sink: inout Sink) throws {
        if !records.isEmpty {
            try sink.deliver(DrainBatch(records: records, end: end))
            summary.delivered += records.count
            summary.batches += 1
            CrashPoint.reached(.drainDelivered)
        }
        for region in damaged {
            try Quarantine(directory: directory).add(region, segment: segment)
            drainer.warn("set aside \(region.length) bytes at offset \(region.offset) of \(segment): \(region.reason)")
        }
        summary.quarantined += damaged.count
        if !damaged.isEmpty { CrashPoint.reached(.drainQuarantined) }
        if !records.isEmpty || !damaged.isEmpty {
            try checkpoint.write(end)
            CrashPoint.reached(.drainCheckpointed)
        }
        records.removeAll(keepingCapacity: true)
        damaged.removeAll()
    }

    func removeSegment(_ sequence: UInt64) throws {
        let path = directory.sealedPath(sequence)
        do {
            try FileSystem.removeFile(path)
            try FileSystem.synchronizeDirectory(directory.path)
        } catch {
            throw ShareQueueError("cannot remove a delivered segment", path: path, error)
        }
    }

    /// Moves a file that is not what the queue wrote (a symlink, a FIFO, a
    /// file with other names) out of the way without following or reading it.
    mutating func setAside(_ path: String, name: String) throws {
        let target = directory.path + "/rejected-\(Host.millisecondsSince1970())-\(name)"
        do { try FileSystem.rename(path, to: target) } catch {
            throw ShareQueueError("cannot set aside a file the queue did not write", path: path, error)
        }
        summary.quarantined += 1
        drainer.warn("\(path) is not a regular file with one name; moved it aside to \(target) without reading it")
    }
}
