/// Counting a sink's refusals of a record, and turning it into a dead letter at the limit.
extension DrainRun {
    /// Counts a refusal; at the limit the record becomes a dead letter, else the drain stops here.
    mutating func refused(_ drained: DrainedRecord, error: String) throws {
        let letters = DeadLetters(directory: directory, warn: drainer.warn)
        var attempts = try letters.attempts().counts
        let key = ByteKey(drained.id)
        let count = (attempts[key] ?? 0) + 1
        if count >= options.maxAttempts {
            try deadLetter([DeadLetters.Letter(record: drained, attempts: count, error: error)])
            drainer.warn("record \(DeadLetters.quoted(drained.id)) was refused \(count) times; moved it to \(letters.path): \(error)")
            try commit(upTo: drained.end)
            return
        }
        attempts[key] = count
        try letters.saveAttempts(attempts)
        throw ShareQueueError(.tryAgain, "the sink refused record \(DeadLetters.quoted(drained.id)) (attempt \(count) of \(options.maxAttempts)); it and the records after it stay queued", cause: error)
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
    func clearAttempts(_ items: ArraySlice<BatchItem>) throws {
        let letters = DeadLetters(directory: directory, warn: drainer.warn)
        var (attempts, damaged) = try letters.attempts()
        guard !attempts.isEmpty || damaged else { return }
        let before = attempts.count
        for case .record(let record) in items { attempts[ByteKey(record.id)] = nil }
        // A damaged file is rewritten clean, so that its damage is reported once.
        if attempts.count != before || damaged { try letters.saveAttempts(attempts) }
    }
}
