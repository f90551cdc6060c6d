import ShareQueueSystem

/// Reading a sealed segment into batches, and readying each record for the sink.
extension DrainRun {
    /// Delivers one sealed segment from `offset`, then removes it.
    /// - Returns: false if the record limit or a stop request ended it early.
    mutating func deliverSegment<Sink: DrainSink>(_ sequence: UInt64, from offset: Int64, into sink: inout Sink) throws -> Bool {
        // Listed segments are named exactly so: this is the name that was found.
        let name = directory.sealedName(sequence)
        let path = directory.sealedPath(sequence)
        let file: FileDescriptor
        do {
            file = try directory.folder.open(name, .readOnly)
        } catch {
            // Another user's segment that this drain may not read would stop every drain at it: its owner keeps it, aside.
            if let foreign = directory.foreignFile(name, openFailure: error) {
                // Kept, and said loudly: a producer writes only into its own user's pending file, the owner's or root's
                // (see `QueueAppender.replaceOthersPending`), so what is in it its owner appended, but it is not delivered.
                try setAsideFile(name, foreign.problem, handling: .segmentKeptForOwner)
                return true
            }
            throw ReadFailure.error("cannot open a sealed segment", path: path, error)
        }
        defer { file.close() }
        let status: FileStatus
        do { status = try file.status() } catch { throw ReadFailure.error("cannot read a sealed segment", path: path, error) }
        guard status.isRegularFile else { try setAsideFile(name); return true }
        // A segment with other names is still read (every frame is checked), but
        // none of its bytes are copied out: they might belong to someone else.
        segmentHasOtherNames = status.linkCount != 1
        var start = offset
        if start > status.size {
            drainer.onEvent(.checkpointPastEnd(path: path))
            start = 0
        }

        var reader = SegmentRecords(file: file, segment: sequence, from: start, size: status.size, buildingRecords: buildRecords)
        defer { reader.stop() }
        var records = 0
        var damaged = 0
        var bytes = 0
        while true {
            let next: SegmentReadAhead.Read?
            do { next = try reader.next() } catch { throw ReadFailure.error("cannot read a sealed segment", path: path, error) }
            var finished = false
            var end: DrainPosition
            // Unwrapped at once: an optional event left to destroy costs a generic call per record.
            if let read = consume next {
                switch read.event {
                case .record(let recordOffset, let recordEnd, let payload, let continued):
                    end = DrainPosition(segment: sequence, offset: recordEnd)
                    let item = try prepare(payload, reading: read.reading!, continued: continued, at: recordOffset, end: end, segment: name)
                    // The bytes of records set aside, superseded or dead-lettered count too, and dead letters
                    // as many: a batch's letters must stay within what a rerun looks back over (§13), or each
                    // drain that its sink fails writes them again; and memory follows the batch, not the segment.
                    if case .record = item { records += 1 } else if case .deadLettered = item { damaged += 1 }
                    bytes += max(payload.count, DrainOptions.leastRecordBytes)
                    uncommitted.append(item)
                case .damaged(let region):
                    end = DrainPosition(segment: sequence, offset: region.end)
                    uncommitted.append(.damaged(region, segment: name, end: end))
                    damaged += 1
                    bytes += region.bytes.count
                }
            } else {
                end = DrainPosition(segment: sequence, offset: reader.positionAtEnd)
                finished = true
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
        // Behind a held record the checkpoint is in an earlier segment, or this one: it stays.
        guard held.isEmpty else { return true }
        CrashPoint.reached(.drainBeforeRemove)
        // Its number may be given again only once no checkpoint before its end can come back:
        // else a sink's stored position in it would fit the new segment and skip its records.
        if Mutant.active == .segmentRemovedBeforeCheckpoint { try removeSegment(sequence, delivered: status) }
        try checkpoint.synchronize(.checkpointBeforeSegmentRemoval)
        // A segment kept whole has its kept name already (see `keepWhole`): this one alone goes.
        if Mutant.active != .segmentRemovedBeforeCheckpoint { try removeSegment(sequence, delivered: status) }
        return true
    }

    /// Decodes a stored record and readies its attachments; what cannot be
    /// delivered becomes a damaged region to set aside.
    mutating func prepare(_ payload: StoredBytes, reading: RecordReading, continued: Bool, at offset: Int64, end: DrainPosition,
                          segment: String) throws -> BatchItem {
        func damaged(_ reason: String) -> BatchItem {
            // Set aside as the frame it was, byte for byte, like any other damage, so that it merges with its neighbours.
            var frame: [UInt8] = []
            payload.withUnsafeBytes { Frame.append(payload: $0, to: &frame, last: !continued) }
            var region = DamagedRegion(offset: offset, length: Int64(frame.count), reason: reason, bytes: frame, isTornTail: false)
            // A byte 00 is in no JSON text, so such a payload holds no record: its bytes are kept only
            // within the quarantine's limit, or frames of zeros, holes of a sparse file that cost
            // their writer nothing, would fill the disk through quarantine.log.
            region.holdsRecord = !payload.withUnsafeBytes { $0.contains(0) }
            return .damaged(region,
                            segment: segment, end: end)
        }
        var record: Record
        switch reading {
        case .refused(let reason):
            return damaged(reason)
        case .built(let drained):
            record = drained.record
            if !newestOfKey.isEmpty, let key = record.key, let newest = newestOfKey[Digest128(key.utf8)], newest != end { return try supersede(drained, damaged) }
            guard drained.hasAttachments else { return .record(drained) }
        case .summarized(let drained):
            // The sink passes the stored JSON on: all of it was checked, but only what the drain itself needs was built.
            // Keys are spelled out only when coalescing, which alone looks them up.
            if !newestOfKey.isEmpty, let key = drained.key, let newest = newestOfKey[Digest128(key.utf8)], newest != end {
                return try supersede(drained, damaged)
            }
            guard drained.hasAttachments else { return .record(drained) }
            do { record = try Record(jsonBytes: payload.array) } catch { return damaged(error.message) }
        }
        if var list = record.attachments {
            if let reason = try waitingReason(list, of: record.id) {
                return deadLetterWaiting(DrainedRecord(record: record, stored: payload, end: end), reason)
            }
            if let reason = attachments.unread(list, options: options) {
                return try deadLetterUnread(DrainedRecord(record: record, stored: payload, end: end), reason)
            }
            var made: [(name: String, status: FileStatus)] = []
            for index in list.indices {
                if let destination = options.attachmentsDestination {
                    switch try attachments.deliver(list[index], to: destination, checked: checkedFiles) {
                    case .delivered(let path, let created):
                        list[index].path = path
                        if let created { made.append(created) }
                    case .damaged(let problem):
                        // Set aside whole: none of its files reaches the host, so the copies made for it go.
                        for copy in made { attachments.removeDelivered(copy.name, made: copy.status, from: destination) }
                        return damaged(problem)
                    }
                } else {
                    if let problem = try attachments.problem(with: list[index], checked: checkedFiles) { return damaged(problem) }
                    list[index].path = attachments.path(of: list[index])
                }
            }
            record.attachments = list
        }
        return .record(DrainedRecord(record: record, stored: payload, end: end))
    }

    /// A record of a key whose newest record is another: superseded if its attachments pass their
    /// checks, set aside as damage if not (§7.3), as it would be without coalescing.
    private mutating func supersede(_ drained: DrainedRecord, _ damaged: (String) -> BatchItem) throws -> BatchItem {
        let files = drained.hasAttachments ? drained.record.attachments ?? [] : []
        if let reason = try waitingReason(files, of: drained.id) { return deadLetterWaiting(drained, reason) }
        if let reason = attachments.unread(files, options: options) { return try deadLetterUnread(drained, reason) }
        for attachment in files {
            if let problem = try attachments.problem(with: attachment, checked: checkedFiles) { return damaged(problem) }
        }
        return .superseded(drained)
    }

    /// Brings back the copies `files` names that `attachments` lacks from the folders a drain moved
    /// aside, saying so for each, and says why the record must wait for another user, if it must
    /// (see ``AttachmentStore/waitingReason(_:of:options:checked:restored:)``).
    func waitingReason(_ files: [Attachment], of id: String) throws(ShareQueueError) -> String? {
        let onEvent = drainer.onEvent, directory = directory
        return try attachments.waitingReason(files, of: id, options: options, checked: checkedFiles) { copy in
            onEvent(AttachmentStore.restoredEvent(copy, of: id, in: directory))
        }
    }

    /// A record that waits for another user's folder or copy (see ``waitingReason(_:of:)``): moved to the
    /// dead letters that wait (`dead-letters.waiting`), at the commit that passes it, so that the records after it are
    /// delivered; a drain puts it back by itself once it may read what it needs (`QueueDrainer.putBackWaitingLetters`).
    private mutating func deadLetterWaiting(_ drained: DrainedRecord, _ reason: String) -> BatchItem {
        var letter = DeadLetters.Letter(record: drained, attempts: 0, error: reason)
        letter.waiting = true
        deadLetter(letter, event: .recordDeadLettered(id: drained.id, cause: .waitsForAnotherUser, reason: reason))
        return .deadLettered(drained)
    }

    /// A record whose attachments a drain does not read (see ``AttachmentStore/unread(_:options:)``): moved to the dead
    /// letters, without reading its files, at the commit that passes it. A drain killed after the letter
    /// is written and before its checkpoint finds the letter already there (§13) and adds none.
    private mutating func deadLetterUnread(_ drained: DrainedRecord, _ reason: String) throws -> BatchItem {
        deadLetter(DeadLetters.Letter(record: drained, attempts: 0, error: reason),
                   event: .recordDeadLettered(id: drained.id, cause: .unread, reason: reason))
        return .deadLettered(drained)
    }
}

/// A sealed segment's events, each record with its reading: read ahead on a thread of its own
/// (``SegmentReadAhead``) when the segment holds enough to be worth one, else as they are asked for.
private struct SegmentRecords {
    private var here: SegmentReader?
    private let segment: UInt64
    private let buildingRecords: Bool
    private let ahead: SegmentReadAhead?

    init(file: FileDescriptor, segment: UInt64, from offset: Int64, size: Int64, buildingRecords: Bool) {
        self.segment = segment
        self.buildingRecords = buildingRecords
        // A drain that cannot have a thread reads as it goes.
        ahead = size - offset >= SegmentReadAhead.worthwhileBytes
            ? try? SegmentReadAhead(file: file, segment: segment, from: offset, summarizing: !buildingRecords) : nil
        here = ahead == nil ? SegmentReader(file: file, from: offset) : nil
    }

    mutating func next() throws(SystemError) -> SegmentReadAhead.Read? {
        guard here != nil else {
            guard let read = try ahead!.next() else { return nil }
            guard read.reading == nil, case .record = read.event else { return read }
            return SegmentReadAhead.Read(read.event, segment: segment, buildingRecords: buildingRecords)
        }
        return try here!.next().map { SegmentReadAhead.Read($0, segment: segment, buildingRecords: buildingRecords) }
    }

    /// Where reading ended, once ``next()`` has returned nil.
    var positionAtEnd: Int64 { here?.position ?? ahead!.positionAtEnd! }

    /// Lets go of the file: called before it is closed.
    func stop() { ahead?.stop() }
}
