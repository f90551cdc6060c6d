import ShareQueueSystem
/// Counting a sink's refusals of a record, and turning it into a dead letter at the limit.
extension DrainRun {
    /// Counts a refusal: at the limit the record becomes a dead letter; under it the record
    /// is held, and stays queued, while the drain goes on with the records after it.
    mutating func refused(_ drained: DrainedRecord, reason: RefusalReason) throws {
        let key = ByteKey(drained.id)
        let count = (try attempts()[key] ?? 0) + 1
        if count >= options.maxAttempts {
            deadLetter(DeadLetters.Letter(record: drained, attempts: count, error: reason.recorded),
                       event: .recordDeadLettered(id: drained.id, cause: .refusedTooOften(attempts: count), reason: reason.shown))
            try commit(upTo: drained.end)
            return
        }
        attemptCounts![key] = count
        attemptsChanged = true
        held.hold(id: drained.id, attempts: count, reason: reason.shown, checkpointAt: committedPosition)
        drainer.onEvent(.recordRefused(id: drained.id, attempt: count, maxAttempts: options.maxAttempts, reason: reason.shown))
        // Let go with the records after it: the next run reads it again.
        try commit(upTo: drained.end)
    }

    /// The refusal counts, read once a run.
    mutating func attempts() throws -> DeadLetters.Counts {
        if let attemptCounts { return attemptCounts }
        let (counts, damaged) = try DeadLetters(directory: directory, onEvent: drainer.onEvent).attempts()
        attemptCounts = counts
        // A damaged file is rewritten clean, so that its damage is reported once.
        attemptsChanged = damaged
        return counts
    }

    /// Writes the refusal counts if this run changed them: after each batch, so that a
    /// drain killed before loses at most one batch's counts (then refused more times, never fewer).
    mutating func saveAttemptsIfChanged() throws {
        guard attemptsChanged, let attemptCounts else { return }
        try DeadLetters(directory: directory, onEvent: drainer.onEvent).saveAttempts(attemptCounts)
        attemptsChanged = false
    }

    /// Makes a record a dead letter at the commit that passes it (see ``writeLetters(upTo:)``), not
    /// before: if its batch is not settled, the record stays queued and is no dead letter.
    /// - Parameters:
    ///   - letter: The record, and why.
    ///   - event: What the drain reports once the letter is written.
    mutating func deadLetter(_ letter: DeadLetters.Letter, event: QueueEvent) {
        lettersAtCommit.append((letter, event))
        deadLettered.insert(ByteKey(letter.record.id))
        // A dead letter names its files until it is put back: the queue's copies stay.
        if letter.record.hasAttachments { letter.record.record.attachments?.forEach { filesOfDeadLetters.insert(ByteKey($0.file)) } }
    }

    /// Writes the dead letters of the records before `position` in one write, just before
    /// the checkpoint passes them, skipping any that a drain which died before its checkpoint
    /// had already written, or that another letter holds byte for byte; counts those it writes.
    mutating func writeLetters(upTo position: DrainPosition) throws {
        let due = lettersAtCommit.filter { $0.letter.record.end <= position }
        guard !due.isEmpty else { return }
        let file = DeadLetters(directory: directory, onEvent: drainer.onEvent)
        if knownDeadLetters == nil {
            knownDeadLetters = try file.storedRecordDigests(options: options)
            // A drain killed after it wrote letters may not have synced them, nor the name of a file it made:
            // this one passes their records as set aside, so it makes them durable first.
            if !knownDeadLetters!.isEmpty && Mutant.active != .foundLettersUnsynced { try file.makeDurable() }
        }
        var new: [DeadLetters.Letter] = []
        var digests: Set<DeadLetters.StoredDigest> = []
        for (letter, _) in due {
            let digest = DeadLetters.StoredDigest(letter.record.storedJSON)
            if !knownDeadLetters!.contains(digest) && digests.insert(digest).inserted { new.append(letter) }
        }
        try file.add(new.filter { !$0.waiting })
        try file.add(new.filter(\.waiting), to: QueueLayout.deadLettersWaiting)
        knownDeadLetters!.formUnion(digests)
        lettersAtCommit.removeAll { $0.letter.record.end <= position }
        for (_, event) in due {
            drainer.onEvent(event)
            if case .recordDeadLettered(_, .idStoredWithOtherContent, _) = event { summary.idConflicts += 1 }
        }
        summary.deadLettered += new.count
    }

    /// The position a sink may store with records ending at `end`: never past a record still
    /// waiting for its dead letter, which a sink resuming from its own position would skip for
    /// good if the drain stopped before writing the letter. So: the position just before the
    /// first such record (the end of the item before it, or of the last commit), or `end`.
    func positionForSink(ending end: DrainPosition) -> DrainPosition {
        guard let first = lettersAtCommit.lazy.map(\.letter.record.end).filter({ $0 <= end }).min() else { return end }
        guard let index = uncommitted.firstIndex(where: { $0.end == first }), index > 0 else { return committedPosition }
        return uncommitted[index - 1].end
    }

    /// Forgets the refusals counted for the records among `items`, now delivered;
    /// their ids are spelled out only when some refusal is counted at all.
    mutating func clearAttempts(_ items: ArraySlice<BatchItem>) throws {
        guard try !attempts().isEmpty else { return }
        for case .record(let record) in items where attemptCounts![ByteKey(record.id)] != nil {
            attemptCounts![ByteKey(record.id)] = nil
            attemptsChanged = true
        }
    }
}
