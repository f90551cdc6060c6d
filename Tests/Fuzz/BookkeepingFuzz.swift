// Fuzz target "bookkeeping": the input is planted as the refusal counts
// (`attempts`) and as the dead letters (`dead-letters.log`), read the way a
// drain reads them.
//
// Whatever the files hold: counts saved and read back are the counts read,
// every dead letter returned is a record, and each one is found again.

import ShareQueueSystem

private let letters: DeadLetters = {
    do { return DeadLetters(directory: try QueueDirectory(path: Fuzz.scratch + "/bookkeeping-queue")) } catch { fatalError("cannot make the queue: \(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBookkeeping(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []

    Fuzz.replaceFile(letters.attemptsPath, with: input)
    let counts: DeadLetters.Counts
    let reread: (counts: DeadLetters.Counts, damaged: Bool)
    do {
        counts = try letters.attempts().counts
        try letters.saveAttempts(counts)
        reread = try letters.attempts()
    } catch { fatalError("cannot read or save the counts: \(error)") }
    Fuzz.check(reread.counts == counts && !reread.damaged, "counts saved and read back differ: \(counts.count) entries, then \(reread.counts.count)")

    Fuzz.replaceFile(letters.path, with: input)
    try? FileSystem.removeFile(letters.requeuePath)
    _ = try? letters.count()
    // Small inputs: the digests a drain reads from the file's end cover all of it.
    let digests = (try? letters.storedRecordDigests()) ?? []
    _ = try? letters.forEachRecord(in: QueueLayout.deadLetters) { record in
        guard (try? RecordSummary(jsonBytes: record)) != nil else { fatalError("invariant broken: a dead letter returned is not a record") }
        Fuzz.check(digests.contains(DeadLetters.StoredDigest(record)), "a dead letter returned is not found again")
    }
    return 0
}
