import ShareQueueSystem

/// Handing batches to the sink and moving the checkpoint past what it took.
extension DrainRun {
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

    /// What delivering records still has to do, in order; a refusal replaces one
    /// offer with the steps that settle it.
    enum DeliveryStep {
        case offer(ArraySlice<DrainedRecord>)
        case commit(DrainPosition)
        case countRefusal(DrainedRecord, reason: String)
    }

    /// Delivers records; when the sink refuses them, bisects to find the one it
    /// refuses, and counts that record's attempts. The steps wait on a stack, not
    /// in nested calls, so that a sink refusing one record per offer costs no
    /// stack depth for each: a batch of a thousand overflowed a thread's 512 KiB.
    mutating func deliver<Sink: DrainSink>(_ records: ArraySlice<DrainedRecord>, into sink: inout Sink) throws {
        var steps: [DeliveryStep] = [.offer(records)]
        while let step = steps.popLast() {
            switch step {
            case .commit(let position): try commit(upTo: position)
            case .countRefusal(let record, let reason): try refused(record, error: reason)
            case .offer(let records):
                // Pushed in reverse, so that they run in the order written.
                steps += try offer(records, into: &sink).reversed()
            }
        }
    }

    /// Offers records to the sink once; returns what must follow if it refused some.
    private mutating func offer<Sink: DrainSink>(_ records: ArraySlice<DrainedRecord>, into sink: inout Sink) throws -> [DeliveryStep] {
        try mutatedCheckpoint(before: records.last!.end)
        do {
            try sink.deliver(DrainBatch(records: Array(records), end: positionForSink(ending: records.last!.end)))
        } catch let refusal as RecordRefusal where options.shouldStop?() != true {
            return try settle(records, refusing: refusal)
        } catch let error where sink.failuresAreRefusals && !(error is ShareQueueError) && options.shouldStop?() != true {
            if records.count > 1 {
                let middle = records.startIndex + records.count / 2
                return [.offer(records[..<middle]), .offer(records[middle...])]
            }
            return [.countRefusal(records.first!, reason: "\(error)")]
        }
        summary.delivered += records.count
        summary.batches += 1
        CrashPoint.reached(.drainDelivered)
        try commit(upTo: records.last!.end)
        return []
    }

    /// Settles records the sink took in part: sets aside those it refused for good
    /// or for the last allowed time, then offers the others again, and counts an
    /// attempt for the first refused record still under the limit, stopping there.
    /// - Returns: the steps that follow: offering, committing, counting.
    mutating func settle(_ records: ArraySlice<DrainedRecord>, refusing refusal: RecordRefusal) throws -> [DeliveryStep] {
        var refusedByID: [ByteKey: RecordRefusal.Refused] = [:]
        for refused in refusal.refused where refusedByID[ByteKey(refused.id)] == nil { refusedByID[ByteKey(refused.id)] = refused }
        var accepted: [DrainedRecord] = []
        var final: [(DeadLetters.Letter, warning: String)] = []
        var counted: (index: Int, reason: String)?
        // Read once, and only if a refusal is counted: a record refused for the last
        // time is set aside in this pass, so that the rest are not offered once for each.
        var attempts: DeadLetters.Counts?
        for index in records.indices {
            guard let refused = refusedByID[ByteKey(records[index].id)] else {
                accepted.append(records[index])
                continue
            }
            let quotedID = DeadLetters.quoted(refused.id)
            if refused.isFinal {
                final.append((DeadLetters.Letter(record: records[index], attempts: 1, error: refused.reason),
                              "record \(quotedID) was refused for good; moved it to the dead letters: \(refused.reason)"))
                continue
            }
            if attempts == nil { attempts = try DeadLetters(directory: directory, warn: drainer.warn).attempts().counts }
            let count = (attempts?[ByteKey(refused.id)] ?? 0) + 1
            guard count >= options.maxAttempts else {
                counted = (index, refused.reason)
                break
            }
            final.append((DeadLetters.Letter(record: records[index], attempts: count, error: refused.reason),
                          "record \(quotedID) was refused \(count) times; moved it to the dead letters: \(refused.reason)"))
        }
        guard !final.isEmpty || counted != nil else {
            throw ShareQueueError(.tryAgain, "the sink refused records that are not in the batch: \(refusal)", underlying: refusal)
        }
        // Written at the commit that passes them, once the others are delivered: if they are not, these stay
        // queued with them. A sink that stores its position is given none past them (`positionForSink`).
        for (letter, warning) in final { deadLetter(letter, warning: warning) }
        var steps: [DeliveryStep] = []
        if !accepted.isEmpty { steps.append(.offer(accepted[...])) }
        let settled = counted.map { records[records.startIndex..<$0.index] } ?? records
        if let last = settled.last { steps.append(.commit(last.end)) }
        guard let counted else { return steps }
        steps.append(.countRefusal(records[counted.index], reason: counted.reason))
        if counted.index + 1 < records.endIndex { steps.append(.offer(records[(counted.index + 1)...])) }
        return steps
    }

    /// The checkpoint a mutant writes before the sink takes the batch ending at `end`
    /// (see `Mutant`); nothing in a build without them.
    private func mutatedCheckpoint(before end: DrainPosition) throws {
        switch Mutant.active {
        case .checkpointBeforeDelivery?:
            try checkpoint.write(end)
            try checkpoint.synchronize(.checkpointAtEnd)
        case .coalesceCheckpointBeforeDelivery? where options.coalesceKeys:
            try checkpoint.write(end)
            try checkpoint.synchronize(.checkpointAtEnd)
        #if SHARE_QUEUE_TEST_HOOKS
        case .checkpointAroundLayer?:
            try checkpoint.writeAroundLayer(end)
        #endif
        default:
            break
        }
    }

    /// Records the checkpoint at `position`, then forgets the refusals of the
    /// records before it and removes the queue's copies of attachments delivered elsewhere.
    mutating func commit(upTo position: DrainPosition) throws {
        var count = firstUncommitted
        while count < uncommitted.count && uncommitted[count].end <= position { count += 1 }
        let done = uncommitted[firstUncommitted..<count]
        guard !done.isEmpty else { return }
        // The letters first: a drain killed between the two finds them written and adds none again (§13).
        try writeLetters(upTo: position)
        try checkpoint.write(position)
        committedPosition = position
        CrashPoint.reached(.drainCheckpointed)
        for item in done {
            switch item {
            case .record(let drained):
                // A dead letter keeps naming its files.
                guard !deadLettered.contains(ByteKey(drained.id)) else { continue }
                forgetReferences(of: drained.decoded?.attachments ?? [], endingAt: drained.end)
                guard options.attachmentsDestination != nil, let delivered = drained.decoded?.attachments else { continue }
                try removeUnnamed(delivered, checkpoint: position)
            case .superseded(let drained):
                summary.superseded += 1
                guard drained.hasAttachments, let files = drained.record.attachments else { continue }
                forgetReferences(of: files, endingAt: drained.end)
                try removeUnnamed(files.filter { !filesOfNewest.contains(ByteKey($0.file)) }, checkpoint: position)
            case .damaged:
                summary.quarantined += 1
            case .deadLettered:
                // Counted when it was set aside; its letter keeps naming its files.
                break
            }
        }
        try clearAttempts(done)
        firstUncommitted = count
        if firstUncommitted == uncommitted.count {
            uncommitted.removeAll(keepingCapacity: true)
            firstUncommitted = 0
        }
    }
}
