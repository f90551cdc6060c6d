/// How a drain batches, what it does with keys and attachments, and how long
/// it waits for another drainer.
import ShareQueueSystem
public struct DrainOptions: Sendable {
    /// Records handed to the sink at once; the checkpoint moves after each batch.
    public var batchSize = 1000
    /// A batch also ends once its records reach this many bytes, which bounds memory.
    public var batchBytes = 4 << 20
    /// Stop after this many records; nil drains everything.
    public var maxRecords: Int? = nil
    /// How long to wait for another drainer to finish; 0 gives up at once.
    public var waitSeconds: Double = 0
    /// Deliver only the newest record of each key among those this drain sees.
    public var coalesceKeys = false
    /// Where attachments go (created if missing); nil leaves them in the queue
    /// and gives records the path of the queue's copy.
    public var attachmentsDestination: String? = nil
    /// A record refused this many times goes to the dead-letter file.
    public var maxAttempts = 5
    /// Asked after every batch; true ends the drain there, with the checkpoint recorded.
    public var shouldStop: (@Sendable () -> Bool)? = nil

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
    /// Files a drain removes once they are this old and nothing refers to them (a day).
    static let staleAge: Int64 = 86_400

    public init(directory: QueueDirectory, options: DrainOptions = DrainOptions()) {
        self.directory = directory
        self.options = options
    }

    /// Drains the queue into `sink`.
    /// - Throws: `.tryAgain` if another drainer is running or the sink fails
    ///   (what it did not take stays queued; the sink's error is the cause),
    ///   `.ioError` when reading or writing the queue's own files fails, and others as they come.
    public func drain<Sink: DrainSink>(into sink: inout Sink) throws(ShareQueueError) -> DrainSummary {
        let drainLock = try takeDrainLock()
        defer { drainLock.close() }
        CrashPoint.reached(.drainLocked)
        try setAsideForeignFiles()
        var run = DrainRun(drainer: self, checkpoint: try Checkpoint(directory: directory, warn: warn), buildRecords: sink.needsRecords)
        // The sink's own errors are marked, so that they are not mistaken for the queue's.
        var marked = SinkErrorMarking(sink)
        defer { sink = marked.sink }
        do {
            try run.deliverAll(into: &marked)
        } catch let error as ShareQueueError {
            throw error
        } catch let error as SinkErrorMarking<Sink>.Failure {
            throw ShareQueueError(.tryAgain, "the sink failed after \(run.summary.delivered) records; the rest stay queued", underlying: error.underlying)
        } catch let error as SystemError {
            throw ShareQueueError(.ioError, "cannot read or write the queue's files", path: directory.path, underlying: error)
        } catch {
            throw ShareQueueError(.ioError, "the drain failed", path: directory.path, underlying: error)
        }
        if !run.summary.stoppedAtLimit && !run.summary.stoppedOnRequest { run.removeStaleFiles() }
        return run.summary
    }

    /// Puts every dead letter back at the end of the queue, with its id and date.
    /// Lines that are not dead letters are kept aside as a `rejected-*` file.
    /// - Returns: how many records were put back.
    public func requeueDeadLetters() throws(ShareQueueError) -> Int {
        let drainLock = try takeDrainLock()
        defer { drainLock.close() }
        let letters = DeadLetters(directory: directory, warn: warn)
        // Renamed first, so that a crash cannot leave a letter both queued and waiting.
        if try FileSystem.linkStatusOrThrow(letters.requeuePath) == nil {
            guard try FileSystem.linkStatusOrThrow(letters.path) != nil else { return 0 }
            do { try FileSystem.rename(letters.path, to: letters.requeuePath) } catch {
                throw ShareQueueError("cannot take the dead letters", path: letters.path, error)
            }
        }
        // A requeue that died after appending left the file: skip what it already put back.
        var queued: Set<String> = []
        try QueueInspector(directory: directory).forEachPending { queued.insert($0.id) }
        // Records are put back as they were taken, whatever limit the producer used, in atomic appends of at most 16 MiB.
        var options = AppendOptions()
        options.maxRecordBytes = Frame.maximumPayloadSize
        let appender = try QueueAppender(directory: directory, options: options)
        var chunk: [[UInt8]] = []
        var chunkBytes = 0
        var count = 0
        // Read a letter at a time: the file may be far larger than memory.
        let skipped = try letters.forEachRecord(in: letters.requeuePath) { payload throws(ShareQueueError) in
            if let summary = try? RecordSummary(jsonBytes: payload), queued.contains(summary.id) { return }
            if !chunk.isEmpty && chunkBytes + payload.count + Frame.overhead > Frame.maximumBatchSize {
                try appender.appendStored(chunk)
                chunk = []
                chunkBytes = 0
            }
            chunk.append(payload)
            chunkBytes += payload.count + Frame.overhead
            count += 1
        }
        if !chunk.isEmpty { try appender.appendStored(chunk) }
        if skipped > 0 {
            // What could not be read as letters is not destroyed.
            let target = directory.path + "/rejected-\(Host.millisecondsSince1970())-dead-letters.requeue"
            do { try FileSystem.rename(letters.requeuePath, to: target) } catch {
                throw ShareQueueError("cannot set aside the damaged dead letters", path: letters.requeuePath, error)
            }
            warn("\(letters.requeuePath) held \(skipped) damaged line\(skipped == 1 ? "" : "s"); moved the file aside to \(target)")
        } else {
            try? FileSystem.removeFile(letters.requeuePath)
        }
        return count
    }

    /// Moves anything but a regular file with one name away from the paths
    /// of the files a drain writes, so that a planted symlink, FIFO or hard
    /// link cannot stop every drain; the checkpoint then starts over, which
    /// delivers again rather than loses.
    private func setAsideForeignFiles() throws(ShareQueueError) {
        let letters = DeadLetters(directory: directory)
        for path in [directory.checkpointPath, directory.quarantinePath, letters.path, letters.attemptsPath] {
            guard let status = try FileSystem.linkStatusOrThrow(path), !status.isRegularFile || status.linkCount != 1 else { continue }
            let name = String(path.split(separator: "/").last!)
            let target = directory.path + "/rejected-\(Host.millisecondsSince1970())-\(name)"
            do { try FileSystem.rename(path, to: target) } catch {
                throw ShareQueueError("cannot set aside a file the queue did not write", path: path, error)
            }
            warn("\(path) is not a regular file with one name; moved it aside to \(target) without reading it")
        }
        // The attachments folder must be a directory of the queue's own, not a link to somewhere else.
        let attachments = AttachmentStore(directory: directory).folder
        if let status = try FileSystem.linkStatusOrThrow(attachments), !status.isDirectory {
            let target = directory.path + "/rejected-\(Host.millisecondsSince1970())-\(AttachmentStore.folderName)"
            do { try FileSystem.rename(attachments, to: target) } catch {
                throw ShareQueueError("cannot set aside a file the queue did not write", path: attachments, error)
            }
            warn("\(attachments) is not a directory; moved it aside to \(target) without following it")
        }
    }

    private func takeDrainLock() throws(ShareQueueError) -> FileDescriptor {
        let path = directory.drainLockPath
        let file: FileDescriptor
        do { file = try FileDescriptor.open(path, .lockFile) } catch {
            throw ShareQueueError("cannot take the drain lock", path: path, error, creating: true)
        }
        let deadline = Host.monotonicSeconds() + options.waitSeconds
        while true {
            let locked: Bool
            do { locked = try file.lockExclusive(wait: false) } catch {
                file.close()
                throw ShareQueueError("cannot take the drain lock", path: path, error)
            }
            if locked { return file }
            if Host.monotonicSeconds() >= deadline || options.shouldStop?() == true {
                file.close()
                throw ShareQueueError(.tryAgain, "another drain is running", path: directory.path)
            }
            Host.sleep(milliseconds: 20)
        }
    }
}

/// One thing a batch holds, in queue order.
private enum BatchItem {
    case record(DrainedRecord)
    case damaged(DamagedRegion, segment: String, end: DrainPosition)
    case superseded(DrainedRecord)

    var end: DrainPosition {
        switch self {
        case .record(let drained), .superseded(let drained): return drained.end
        case .damaged(_, _, let end): return end
        }
    }

    var isRecord: Bool { if case .record = self { true } else { false } }
    var isDamaged: Bool { if case .damaged = self { true } else { false } }
}

/// The state of one drain while it runs.
private struct DrainRun {
    let drainer: QueueDrainer
    let checkpoint: Checkpoint
    /// Whether the sink reads whole records, or only their stored JSON.
    let buildRecords: Bool
    var summary = DrainSummary()
    /// Items read, from `firstUncommitted` on not yet covered by the checkpoint
    /// (an index, so that a commit costs what it covers, not what remains).
    var uncommitted: [BatchItem] = []
    var firstUncommitted = 0
    /// Records dead-lettered in this batch, whose attachments must stay.
    var deadLettered: Set<String> = []
    /// The id of the newest record of each key, with `coalesceKeys`.
    var newestOfKey: [String: String] = [:]
    /// Set when damaged data of the segment being read could not be copied to
    /// the quarantine file (a full disk): the segment is then kept whole instead of removed.
    var keepSegmentForDamage = false
    /// Set while reading a segment that has other names: its bytes are not copied anywhere.
    var segmentHasOtherNames = false
    var directory: QueueDirectory { drainer.directory }
    var options: DrainOptions { drainer.options }
    var attachments: AttachmentStore { AttachmentStore(directory: directory) }

    init(drainer: QueueDrainer, checkpoint: Checkpoint, buildRecords: Bool) {
        self.drainer = drainer
        self.checkpoint = checkpoint
        self.buildRecords = buildRecords
    }

    var budgetLeft: Int { options.maxRecords.map { $0 - summary.delivered } ?? Int.max }

    mutating func deliverAll<Sink: DrainSink>(into sink: inout Sink) throws {
        let listing = try directory.segmentListing()
        for name in listing.foreign { try moveAsideForeignSegment(name) }
        let sealed = listing.sealed
        var position = checkpoint.position
        if !position.isPlausible(withSealed: sealed) {
            // Delivering again is recoverable; skipping is not. Recorded, so that it is reported once.
            drainer.warn("the checkpoint (\(position)) does not fit the sealed segments there are; delivering from the oldest sealed segment again")
            position = .start
            try checkpoint.write(position)
        }
        if let stored = try sink.deliveredPosition(), stored > position {
            // A position past every segment this queue has made belongs to another queue.
            if stored.segment <= max(position.segment, sealed.last ?? 0) && stored.isPlausible(withSealed: sealed) {
                position = stored
            } else {
                drainer.warn("the sink's stored position (\(stored)) does not fit this queue's segments; ignoring it")
            }
        }
        var lastSequence = max(position.segment, sealed.last ?? 0)
        var segments = sealed
        if options.coalesceKeys {
            // Seal first and look only at sealed segments: a record appended
            // after the look must not be mistaken for an older one.
            if budgetLeft > 0, try seal(as: lastSequence + 1) {
                lastSequence += 1
                segments.append(lastSequence)
            }
            try findNewestOfEachKey()
        }
        // No segment is below a plausible position: every one is read, none skipped.
        for sequence in segments {
            let start = sequence == position.segment ? position.offset : 0
            guard try deliverSegment(sequence, from: start, into: &sink) else { return }
        }
        guard budgetLeft > 0 else { summary.stoppedAtLimit = true; return }
        if !options.coalesceKeys, try seal(as: lastSequence + 1) {
            _ = try deliverSegment(lastSequence + 1, from: 0, into: &sink)
        }
    }

    /// Reads the sealed segments, without changing them, to learn the newest
    /// record of each key: the latest date, and of equal dates the last appended.
    mutating func findNewestOfEachKey() throws {
        var newest: [String: (date: String, id: String)] = [:]
        let store = attachments
        let destination = options.attachmentsDestination
        try QueueInspector(directory: directory).forEachPending(includingUnsealed: false) { drained in
            guard let key = drained.key else { return }
            // Only a record that will itself be delivered may supersede others.
            if drained.hasAttachments {
                guard let record = try? Record(jsonBytes: drained.storedJSON),
                      (record.attachments ?? []).allSatisfy({ store.problem(with: $0, deliveredTo: destination) == nil }) else { return }
            }
            if let current = newest[key], drained.date < current.date { return }
            newest[key] = (drained.date, drained.id)
        }
        newestOfKey = newest.mapValues(\.id)
    }

    /// Renames the pending file to a sealed segment under the producers' lock,
    /// never over an existing file.
    /// - Returns: false if nothing was pending, or no segment number is left.
    /// - Throws: `.tryAgain` if a file took the name since the directory was listed.
    mutating func seal(as sequence: UInt64) throws -> Bool {
        guard sequence <= QueueDirectory.maximumSequence else {
            drainer.warn("no segment number is left after \(sequence - 1); the pending records stay queued for the next drain")
            return false
        }
        let lockPath = directory.appendLockPath
        let lock: FileDescriptor
        do { lock = try FileDescriptor.open(lockPath, .lockFile) } catch {
            throw ShareQueueError("cannot open the queue's lock file", path: lockPath, error, creating: true)
        }
        defer { lock.close() }
        return try lock.withExclusiveLock {
            let pending = directory.pendingPath
            guard let status = try FileSystem.linkStatus(pending), status.size > 0 || !status.isRegularFile else { return false }
            guard status.isRegularFile else {
                try setAside(pending, name: "pending.log")
                return false
            }
            let target = directory.sealedPath(sequence)
            do throws(SystemError) {
                try FileSystem.renameWithoutReplacing(pending, to: target)
                CrashPoint.reached(.drainSealed)
                try FileSystem.synchronizeDirectory(directory.path)
            } catch {
                // Not the queue's doing: keep both files; the next drain lists the new one and delivers it first.
                if error.isAlreadyExists {
                    throw ShareQueueError(.tryAgain, "a file took the next segment's name while the queue was drained; the pending records stay queued for the next drain", path: target)
                }
                throw ShareQueueError("cannot seal the pending file", path: pending, error)
            }
            return true
        }
    }

    /// Delivers one sealed segment from `offset`, then removes it.
    /// - Returns: false if the record limit or a stop request ended it early.
    mutating func deliverSegment<Sink: DrainSink>(_ sequence: UInt64, from offset: Int64, into sink: inout Sink) throws -> Bool {
        // Listed segments are named exactly so: this is the name that was found.
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
        guard status.isRegularFile else { try setAside(path, name: name); return true }
        // A segment with other names is still read (every frame is checked), but
        // none of its bytes are copied out: they might belong to someone else.
        segmentHasOtherNames = status.linkCount != 1
        keepSegmentForDamage = false
        var start = offset
        if start > status.size {
            drainer.warn("the checkpoint points past the end of \(path); delivering it from the start")
            start = 0
        }

        var reader = SegmentReader(file: file, from: start)
        var records = 0
        var damaged = 0
        var bytes = 0
        while true {
            let event: SegmentEvent?
            do { event = try reader.next() } catch { throw ShareQueueError(.ioError, "cannot read a sealed segment", path: path, underlying: error) }
            let finished = event == nil
            var end = DrainPosition(segment: sequence, offset: reader.position)
            switch event {
            case .record(let recordOffset, let recordEnd, let payload, let continued)?:
                end = DrainPosition(segment: sequence, offset: recordEnd)
                let item = try prepare(payload, continued: continued, at: recordOffset, end: end, segment: name)
                if case .record = item { records += 1; bytes += payload.count }
                uncommitted.append(item)
            case .damaged(let region)?:
                end = DrainPosition(segment: sequence, offset: region.end)
                uncommitted.append(.damaged(region, segment: name, end: end))
                damaged += 1
                bytes += region.bytes.count
            case nil:
                break
            }
            // Damage counts towards a batch too, so that what is held in memory stays bounded.
            let full = records >= min(options.batchSize, budgetLeft) || damaged >= options.batchSize || bytes >= options.batchBytes
            if finished || full {
                try flush(ending: end, into: &sink)
                records = 0
                damaged = 0
                bytes = 0
                if options.shouldStop?() == true {
                    summary.stoppedOnRequest = true
                    return false
                }
            }
            if finished { break }
            if budgetLeft <= 0 {
                summary.stoppedAtLimit = true
                return false
            }
        }
        CrashPoint.reached(.drainBeforeRemove)
        if keepSegmentForDamage {
            let target = directory.path + "/" + Quarantine.keptSegmentPrefix + name
            do { try FileSystem.rename(path, to: target) } catch {
                throw ShareQueueError("cannot keep a damaged segment", path: path, error)
            }
            drainer.warn("kept \(path) whole as \(target): its damaged data could not be copied to the quarantine file")
        } else {
            try removeSegment(sequence)
        }
        return true
    }

    /// Decodes a stored record and readies its attachments; what cannot be
    /// delivered becomes a damaged region to set aside.
    mutating func prepare(_ payload: [UInt8], continued: Bool, at offset: Int64, end: DrainPosition, segment: String) throws -> BatchItem {
        func damaged(_ reason: String) -> BatchItem {
            // Set aside as the frame it was, byte for byte, like any other damage, so that it merges with its neighbours.
            var frame: [UInt8] = []
            Frame.append(payload: payload, to: &frame, last: !continued)
            return .damaged(DamagedRegion(offset: offset, length: Int64(frame.count), reason: reason, bytes: frame, isTornTail: false),
                            segment: segment, end: end)
        }
        var record: Record
        if buildRecords {
            do { record = try Record(jsonBytes: payload) } catch { return damaged(error.message) }
            if let key = record.key, let newest = newestOfKey[key], newest != record.id {
                return .superseded(DrainedRecord(record: record, storedJSON: payload, end: end))
            }
        } else {
            // The sink passes the stored JSON on: check it all, but build only what the drain itself needs.
            let summary: RecordSummary
            do { summary = try RecordSummary(jsonBytes: payload) } catch { return damaged(error.message) }
            if let key = summary.key, let newest = newestOfKey[key], newest != summary.id {
                return .superseded(DrainedRecord(summary: summary, storedJSON: payload, end: end))
            }
            guard summary.hasAttachments else { return .record(DrainedRecord(summary: summary, storedJSON: payload, end: end)) }
            do { record = try Record(jsonBytes: payload) } catch { return damaged(error.message) }
        }
        if var list = record.attachments {
            for index in list.indices {
                if let problem = attachments.problem(with: list[index], deliveredTo: options.attachmentsDestination) {
                    return damaged(problem)
                }
                if let destination = options.attachmentsDestination {
                    list[index].path = try attachments.deliver(list[index], to: destination)
                } else {
                    list[index].path = attachments.path(of: list[index])
                }
            }
            record.attachments = list
        }
        return .record(DrainedRecord(record: record, storedJSON: payload, end: end))
    }

    /// Hands the batch's records to the sink, then records the checkpoint.
    ///
    /// The batch is cut at its first damaged data: the records before it are
    /// delivered and recorded first, then all the batch's damage is set aside in
    /// one write and one fsync, and the checkpoint moves past the damage up to
    /// the next record; then the records after it are delivered. So a sink that
    /// stores its own position never moves past damage that is not yet in the
    /// quarantine file, and a sink that keeps failing does not have the same
    /// damage copied out again on every attempt, except damage between its records.
    mutating func flush<Sink: DrainSink>(ending end: DrainPosition, into sink: inout Sink) throws {
        let items = uncommitted[firstUncommitted...]
        func records(_ items: ArraySlice<BatchItem>) -> [DrainedRecord] {
            items.compactMap { if case .record(let drained) = $0 { drained } else { nil } }
        }
        if let firstDamage = items.firstIndex(where: \.isDamaged) {
            let before = records(items[..<firstDamage])
            if !before.isEmpty { try deliver(before[...], into: &sink) }
            try setAside(items[firstDamage...].compactMap { if case .damaged(let damage, let segment, _) = $0 { (damage, segment) } else { nil } })
            let nextRecord = items[firstDamage...].firstIndex(where: \.isRecord) ?? items.endIndex
            try commit(upTo: items[nextRecord - 1].end)
            let after = records(items[nextRecord...])
            if !after.isEmpty { try deliver(after[...], into: &sink) }
        } else {
            let all = records(items)
            if !all.isEmpty { try deliver(all[...], into: &sink) }
        }
        try commit(upTo: end)
    }

    /// Copies damaged data to the quarantine file. A drain that dies after this
    /// and before the checkpoint copies it again next time: the quarantine may
    /// hold it twice, never zero times.
    mutating func setAside(_ damage: [(region: DamagedRegion, segment: String)]) throws {
        var start = 0
        while start < damage.count {
            // One write for each run of regions of the same segment: all of them, in practice.
            let segment = damage[start].segment
            var stop = start
            while stop < damage.count && damage[stop].segment == segment { stop += 1 }
            var regions = DamagedRegion.merged(damage[start..<stop].map(\.region))
            if segmentHasOtherNames { for index in regions.indices { regions[index].bytes = [] } }
            if let failure = Self.copyToQuarantine(regions, segment: segment, in: directory) {
                // Recording progress needs no space; copying damage out does. Keep the segment instead.
                guard failure.systemError?.isNoSpace == true else { throw failure }
                keepSegmentForDamage = true
            }
            for region in regions {
                drainer.warn("set aside \(region.length) bytes at offset \(region.offset) of \(segment): \(region.reason)")
            }
            start = stop
        }
        CrashPoint.reached(.drainQuarantined)
    }

    /// Delivers records; when the sink refuses them, bisects to find the one it
    /// refuses, and counts that record's attempts.
    mutating func deliver<Sink: DrainSink>(_ records: ArraySlice<DrainedRecord>, into sink: inout Sink) throws {
        do {
            try sink.deliver(DrainBatch(records: Array(records), end: records.last!.end))
        } catch let error where sink.failuresAreRefusals && !(error is ShareQueueError) && options.shouldStop?() != true {
            if records.count > 1 {
                let middle = records.startIndex + records.count / 2
                try deliver(records[..<middle], into: &sink)
                try deliver(records[middle...], into: &sink)
            } else {
                try refused(records.first!, error: "\(error)")
            }
            return
        }
        summary.delivered += records.count
        summary.batches += 1
        CrashPoint.reached(.drainDelivered)
        try commit(upTo: records.last!.end)
    }

    /// Counts a refusal; at the limit the record becomes a dead letter, else the drain stops here.
    mutating func refused(_ drained: DrainedRecord, error: String) throws {
        let letters = DeadLetters(directory: directory, warn: drainer.warn)
        var attempts = letters.attempts().counts
        let key = Array(drained.id.utf8)
        let count = (attempts[key] ?? 0) + 1
        let id = DeadLetters.quoted(drained.id)
        if count >= options.maxAttempts {
            // A drain that died after this and before the checkpoint meets the record again: one letter is enough.
            if !letters.contains(drained.storedJSON) { try letters.add(drained, attempts: count, error: error) }
            drainer.warn("record \(id) was refused \(count) times; moved it to \(letters.path): \(error)")
            summary.deadLettered += 1
            deadLettered.insert(drained.id)
            try commit(upTo: drained.end)
            return
        }
        attempts[key] = count
        try letters.saveAttempts(attempts)
        throw ShareQueueError(.tryAgain, "the sink refused record \(id) (attempt \(count) of \(options.maxAttempts)); it and the records after it stay queued", cause: error)
    }

    /// Records the checkpoint at `position`, then forgets the refusals of the
    /// records before it and removes the queue's copies of attachments delivered elsewhere.
    mutating func commit(upTo position: DrainPosition) throws {
        var count = firstUncommitted
        while count < uncommitted.count && uncommitted[count].end <= position { count += 1 }
        let done = uncommitted[firstUncommitted..<count]
        guard !done.isEmpty else { return }
        try checkpoint.write(position)
        CrashPoint.reached(.drainCheckpointed)
        var attemptsToClear: [String] = []
        for item in done {
            switch item {
            case .record(let drained):
                attemptsToClear.append(drained.id)
                if !deadLettered.contains(drained.id) && options.attachmentsDestination != nil {
                    drained.decoded?.attachments?.forEach(attachments.remove)
                }
            case .superseded(let drained):
                summary.superseded += 1
                if drained.hasAttachments { drained.record.attachments?.forEach(attachments.remove) }
            case .damaged:
                summary.quarantined += 1
            }
        }
        firstUncommitted = count
        if firstUncommitted == uncommitted.count {
            uncommitted.removeAll(keepingCapacity: true)
            firstUncommitted = 0
        }
        if !attemptsToClear.isEmpty { try clearAttempts(attemptsToClear) }
    }

    /// Appends to the quarantine file; returns the failure instead of throwing it.
    static func copyToQuarantine(_ regions: [DamagedRegion], segment: String, in directory: QueueDirectory) -> ShareQueueError? {
        do {
            try Quarantine(directory: directory).add(regions, segment: segment)
            return nil
        } catch {
            return error
        }
    }

    func clearAttempts(_ ids: [String]) throws {
        let letters = DeadLetters(directory: directory, warn: drainer.warn)
        var (attempts, damaged) = letters.attempts()
        guard !attempts.isEmpty || damaged else { return }
        let before = attempts.count
        for id in ids { attempts[Array(id.utf8)] = nil }
        // A damaged file is rewritten clean, so that its damage is reported once.
        if attempts.count != before || damaged { try letters.saveAttempts(attempts) }
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

    /// Moves aside, unread, a name that looks like a segment but is not spelled
    /// as the queue spells one: it may hold records, so it is kept, under a name no drain reads.
    mutating func moveAsideForeignSegment(_ name: String) throws {
        let path = directory.path + "/" + name
        let target = directory.path + "/rejected-\(Host.millisecondsSince1970())-\(name)"
        do { try FileSystem.renameWithoutReplacing(path, to: target) } catch {
            throw ShareQueueError("cannot set aside a file the queue did not write", path: path, error)
        }
        summary.quarantined += 1
        drainer.warn("\(path) is not named as the queue names its segments; moved it aside to \(target) without reading it")
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

    /// Removes what producers and drains that died left behind, once a day old:
    /// half-copied attachments, and attachments no pending record or dead letter refers to.
    func removeStaleFiles() {
        let store = attachments
        store.removeStaleTemporaries(olderThan: QueueDrainer.staleAge)
        let stale = store.staleFiles(olderThan: QueueDrainer.staleAge)
        guard !stale.isEmpty else { return }
        var referenced: Set<String> = []
        do {
            try QueueInspector(directory: directory).forEachPending { drained in
                if drained.hasAttachments { drained.record.attachments?.forEach { referenced.insert($0.file) } }
            }
            let letters = DeadLetters(directory: directory, warn: drainer.warn)
            for file in [letters.path, letters.requeuePath] {
                let skipped = try letters.forEachRecord(in: file) { payload in
                    (try? Record(jsonBytes: payload))?.attachments?.forEach { referenced.insert($0.file) }
                }
                // A damaged letter might refer to any of them.
                if skipped > 0 { return }
            }
        } catch {
            return  // When in doubt, keep them.
        }
        store.removeFiles(stale.filter { !referenced.contains($0) })
    }
}
