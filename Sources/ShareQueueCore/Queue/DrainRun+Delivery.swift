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
            // Behind a held record the checkpoint will not pass this damage in this run: the run
            // that moves it past sets the damage aside, once.
            if held.isEmpty {
                try setAside(items[firstDamage...].compactMap { if case .damaged(let damage, let segment, _) = $0 { (damage, segment) } else { nil } })
            }
            let nextRecord = items[firstDamage...].firstIndex(where: \.isRecord) ?? items.endIndex
            try commit(upTo: items[nextRecord - 1].end)
            let after = records(items[nextRecord...])
            if !after.isEmpty { try deliver(after[...], into: &sink) }
        } else {
            let all = records(items)
            if !all.isEmpty { try deliver(all[...], into: &sink) }
        }
        try commit(upTo: end)
        try saveAttemptsIfChanged()
    }

    /// What delivering records still has to do, in order; a refusal replaces one
    /// offer with the steps that settle it.
    enum DeliveryStep {
        case offer(ArraySlice<DrainedRecord>)
        case commit(DrainPosition)
        case countRefusal(DrainedRecord, reason: RefusalReason)
    }

    /// Why a sink refused a record: what the queue's files keep, which other users of the
    /// queue may read, and what the host's own standard error is told.
    struct RefusalReason {
        /// The sink's kind and status, never a command line or its output.
        let recorded: String
        /// All the sink said, for the host alone.
        let shown: String

        init(recorded: String, shown: String) {
            self.recorded = recorded
            self.shown = shown
        }

        /// The reason of a sink error: a ``SinkRefusal`` says what may be kept; of any other, only its type is.
        init(_ error: any Error) {
            recorded = (error as? any SinkRefusal)?.recordedReason ?? "the sink refused the batch (\(type(of: error)))"
            shown = "\(error)"
        }
    }

    /// Delivers records; when the sink refuses them, bisects to find each one it
    /// refuses, counts an attempt for each, and delivers the others. The steps wait on
    /// a stack, not in nested calls, so that a sink refusing one record per offer costs no
    /// stack depth for each: a batch of a thousand overflowed a thread's 512 KiB.
    mutating func deliver<Sink: DrainSink>(_ records: ArraySlice<DrainedRecord>, into sink: inout Sink) throws {
        var steps: [DeliveryStep] = [.offer(records)]
        while let step = steps.popLast() {
            switch step {
            case .commit(let position): try commit(upTo: position)
            case .countRefusal(let record, let reason): try refused(record, reason: reason)
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
            // Behind a held record, a sink that stores its position must store the checkpoint's, not one past that record.
            try sink.deliver(DrainBatch(records: Array(records), end: held.checkpoint ?? positionForSink(ending: records.last!.end)))
        } catch let refusal as RecordRefusal where options.shouldStop?() != true {
            return try settle(records, refusing: refusal)
        } catch let error where sink.failuresAreRefusals && !(error is ShareQueueError) && options.shouldStop?() != true {
            if records.count > 1 {
                let middle = records.startIndex + records.count / 2
                return [.offer(records[..<middle]), .offer(records[middle...])]
            }
            return [.countRefusal(records.first!, reason: RefusalReason(error))]
        }
        summary.delivered += records.count
        summary.batches += 1
        CrashPoint.reached(.drainDelivered)
        try commit(upTo: records.last!.end)
        return []
    }

    /// Settles records the sink took in part: makes those it refused for good dead letters
    /// (written at the commit that passes them), and returns, in queue order, offers of the
    /// others, commits, and a count for each record it refused that is not final.
    /// - Returns: the steps that follow: offering, committing, counting.
    mutating func settle(_ records: ArraySlice<DrainedRecord>, refusing refusal: RecordRefusal) throws -> [DeliveryStep] {
        var refusedByID: [ByteKey: RecordRefusal.Refused] = [:]
        // A refusal that names its record's position refuses that record alone: another with the same id may be taken.
        var refusedAt: [DrainPosition: RecordRefusal.Refused] = [:]
        for refused in refusal.refused {
            if let position = refused.position {
                if refusedAt[position] == nil { refusedAt[position] = refused }
            } else if refusedByID[ByteKey(refused.id)] == nil {
                refusedByID[ByteKey(refused.id)] = refused
            }
        }
        var steps: [DeliveryStep] = []
        var accepted: [DrainedRecord] = []
        for record in records {
            let refusedHere = refusedAt.isEmpty ? nil : refusedAt[record.end].flatMap { ByteKey($0.id) == ByteKey(record.id) ? $0 : nil }
            guard let refused = refusedHere ?? refusedByID[ByteKey(record.id)] else {
                accepted.append(record)
                continue
            }
            if !accepted.isEmpty { steps.append(.offer(accepted[...])) }
            accepted = []
            if refused.isFinal {
                // Written at the commit that passes it, once the records before it are delivered (see `deadLetter(_:event:)`).
                deadLetter(DeadLetters.Letter(record: record, attempts: 1, error: refused.reason),
                           event: .recordDeadLettered(id: refused.id, cause: refused.cause, reason: refused.reason))
                // Records refused for good one after another are settled by one commit, their letters in one write.
                if case .commit? = steps.last { steps.removeLast() }
                steps.append(.commit(record.end))
            } else {
                steps.append(.countRefusal(record, reason: RefusalReason(recorded: refused.reason, shown: refused.reason)))
            }
        }
        guard !steps.isEmpty else {
            throw ShareQueueError(.sinkRefused, "the sink refused records that are not in the batch: \(refusal)", underlying: refusal)
        }
        if !accepted.isEmpty { steps.append(.offer(accepted[...])) }
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
    /// Behind a held record it records nothing: the items up to `position` are let go,
    /// to be read again by the next run.
    mutating func commit(upTo position: DrainPosition) throws {
        var count = firstUncommitted
        while count < uncommitted.count && uncommitted[count].end <= position { count += 1 }
        let done = uncommitted[firstUncommitted..<count]
        guard !done.isEmpty else { return }
        if held.isEmpty {
            // The letters first: a drain killed between the two finds them written and adds none again (§13).
            try writeLetters(upTo: position)
            try checkpoint.write(position)
            committedPosition = position
            CrashPoint.reached(.drainCheckpointed)
            try settleCommitted(done, checkpoint: position)
        }
        firstUncommitted = count
        if firstUncommitted == uncommitted.count {
            uncommitted.removeAll(keepingCapacity: true)
            firstUncommitted = 0
        }
    }

    /// What follows a checkpoint past `done`: their attachment copies removed, their refusals forgotten.
    private mutating func settleCommitted(_ done: ArraySlice<BatchItem>, checkpoint position: DrainPosition) throws {
        for item in done {
            switch item {
            case .record(let drained):
                // A record passed through as stored names no files: nothing to forget or remove,
                // and its id is not spelled out for each record of every batch.
                guard let delivered = drained.decoded?.attachments else { continue }
                // A dead letter keeps naming its files.
                guard deadLettered.isEmpty || !deadLettered.contains(ByteKey(drained.id)) else { continue }
                forgetReferences(of: delivered, endingAt: drained.end)
                guard options.attachmentsDestination != nil else { continue }
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
    }
}
