/// Counting a sink's refusals of a record, and turning it into a dead letter at the limit.
extension DrainRun {
    /// Counts a refusal: at the limit the record becomes a dead letter; under it the record
    /// is held, and stays queued, while the drain goes on with the records after it.
    mutating func refused(_ drained: DrainedRecord, reason: RefusalReason) throws {
        let key = ByteKey(drained.id)
        let count = (try attempts()[key] ?? 0) + 1
        if count >= options.maxAttempts {
            try deadLetter([DeadLetters.Letter(record: drained, attempts: count, error: reason.recorded)])
            drainer.warn("record \(DeadLetters.quoted(drained.id)) was refused \(count) times; moved it to the dead letters: \(reason.shown)")
            try commit(upTo: drained.end)
            return
        }
        attemptCounts![key] = count
        attemptsChanged = true
        held.hold(id: drained.id, attempts: count, reason: reason.shown, checkpointAt: committedPosition)
        drainer.warn("record \(DeadLetters.quoted(drained.id)) was refused (attempt \(count) of \(options.maxAttempts)); it stays queued: \(reason.shown)")
        // Let go with the records after it: the next run reads it again.
        try commit(upTo: drained.end)
    }

    /// The refusal counts, read once a run.
    mutating func attempts() throws -> DeadLetters.Counts {
        if let attemptCounts { return attemptCounts }
        let (counts, damaged) = try DeadLetters(directory: directory, warn: drainer.warn).attempts()
        attemptCounts = counts
        // A damaged file is rewritten clean, so that its damage is reported once.
        attemptsChanged = damaged
        return counts
    }

    /// Writes the refusal counts if this run changed them: after each batch, so that a
    /// drain killed before loses at most one batch's counts (then refused more times, never fewer).
    mutating func saveAttemptsIfChanged() throws {
        guard attemptsChanged, let attemptCounts else { return }
        try DeadLetters(directory: directory, warn: drainer.warn).saveAttempts(attemptCounts)
        attemptsChanged = false
    }

    /// Moves records to the dead-letter file in one write, skipping any that a
    /// drain which died before its checkpoint had already moved there, or that
    /// another of `letters` holds byte for byte; counts those it writes.
    mutating func deadLetter(_ letters: [DeadLetters.Letter]) throws {
        let file = DeadLetters(directory: directory, warn: drainer.warn)
        if knownDeadLetters == nil { knownDeadLetters = try file.storedRecordDigests(options: options) }
        var new: [DeadLetters.Letter] = []
        var digests: Set<DeadLetters.StoredDigest> = []
        for letter in letters {
            let digest = DeadLetters.StoredDigest(letter.record.storedJSON)
            if !knownDeadLetters!.contains(digest) && digests.insert(digest).inserted { new.append(letter) }
        }
        try file.add(new)
        knownDeadLetters!.formUnion(digests)
        for letter in letters {
            deadLettered.insert(ByteKey(letter.record.id))
            // A dead letter names its files until it is put back: the queue's copies stay.
            if letter.record.hasAttachments { letter.record.record.attachments?.forEach { filesOfDeadLetters.insert(ByteKey($0.file)) } }
        }
        summary.deadLettered += new.count
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
