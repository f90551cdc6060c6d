/// Counting a sink's refusals of a record, and turning it into a dead letter at the limit.
extension DrainRun {
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

    func clearAttempts(_ ids: [String]) throws {
        let letters = DeadLetters(directory: directory, warn: drainer.warn)
        var (attempts, damaged) = letters.attempts()
        guard !attempts.isEmpty || damaged else { return }
        let before = attempts.count
        for id in ids { attempts[Array(id.utf8)] = nil }
        // A damaged file is rewritten clean, so that its damage is reported once.
        if attempts.count != before || damaged { try letters.saveAttempts(attempts) }
    }
}
