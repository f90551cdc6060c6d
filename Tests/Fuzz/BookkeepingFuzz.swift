// Fuzz target "bookkeeping": the input is planted as the refusal counts
// (`attempts`) and as the dead letters (`dead-letters.log`), read the way a
// drain reads them.
//
// Whatever the files hold: counts saved and read back are the counts read,
// every dead letter returned is a record, and each one is found by its id.

private let letters: DeadLetters = {
    do { return DeadLetters(directory: try QueueDirectory(path: Fuzz.scratch + "/bookkeeping-queue")) } catch { fatalError("cannot make the queue: \(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBookkeeping(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []

    Fuzz.replaceFile(letters.attemptsPath, with: input)
    let counts = letters.attempts()
    do { try letters.saveAttempts(counts) } catch { fatalError("cannot save the counts read: \(error)") }
    let reread = letters.attempts()
    Fuzz.check(reread == counts, "counts saved and read back differ: \(counts.count) entries, then \(reread.count)")

    Fuzz.replaceFile(letters.path, with: input)
    try? FileSystem.removeFile(letters.requeuePath)
    _ = letters.count()
    if let records = try? letters.records(in: letters.path) {
        for record in records {
            guard let summary = try? RecordSummary(jsonBytes: record) else { fatalError("invariant broken: a dead letter returned is not a record") }
            Fuzz.check(letters.contains(summary.id), "the dead letter \(summary.id) is not found by its id")
        }
    }
    return 0
}
