import ShareQueueCore

/// `share-stress --crash-points`: for every crash point in turn, processes that
/// die exactly there, then fresh processes that recover, then the check that
/// every acknowledged record is delivered, undamaged, in order, and duplicated
/// only where a crash falls between delivery and checkpoint.
struct CrashPointRun {
    struct Outcome {
        let point: CrashPoint
        var runs = 0
        var failures: [String] = []
        var ok: Bool { failures.isEmpty }
    }

    let tools: ToolRunner
    let baseDirectory: String
    static let drainBatch = 10

    func run() throws -> [Outcome] {
        try CrashPoint.allCases.filter(\.isReachedByStress).map { point in
            var outcome = Outcome(point: point)
            for visit in visits(point) {
                outcome.runs += 1
                let directory = baseDirectory + "/\(point.rawValue)-\(visit)"
                let problems = point.rawValue.hasPrefix("append-")
                    ? try appendScenario(point, visit: visit, directory: directory)
                    : try drainScenario(point, visit: visit, directory: directory)
                outcome.failures += problems.map { "visit \(visit): \($0)" }
            }
            return outcome
        }
    }

    /// Which visit of each point to crash at: the first, and a later one where a run reaches it again.
    private func visits(_ point: CrashPoint) -> [Int] {
        switch point {
        case .appendRepairQuarantined, .drainLocked, .drainFilesChecked, .drainSealed, .drainSealUnlocked, .drainQuarantined: return [1]
        case .drainDelivered, .drainCheckpointed, .drainBeforeRemove: return [1, 2]
        default: return [1, 3]
        }
    }

    /// Producer state carried through a scenario.
    private struct Producers {
        var ledger = DeliveryLedger()
        var nextSequence = 1
    }

    /// Appends `count` records as one `--lines` batch through share-append.
    private func appendBatch(_ count: Int, _ producers: inout Producers, directory: String, crashAt: String? = nil) throws -> ToolRunner.Outcome {
        let sequences = producers.nextSequence..<(producers.nextSequence + count)
        producers.nextSequence += count
        let input = sequences.map { StressText.make(producer: 1, sequence: $0) }.joined(separator: "\n")
        let outcome = try tools.run("share-append", ["--dir", directory, "--source", "stress-p1", "--lines"], input: Array(input.utf8),
                                    environment: crashAt.map { ["SHARE_QUEUE_CRASH_AT": $0] } ?? [:])
        if outcome.status == 0 {
            let ids = String(decoding: outcome.output, as: UTF8.self).split(separator: "\n").map(String.init)
            for (sequence, id) in zip(sequences, ids) { producers.ledger.acknowledge(id: id, producer: 1, sequence: sequence) }
        }
        return outcome
    }

    /// A torn tail, as a producer killed mid-write leaves one.
    private func tearTail(_ producers: inout Producers, directory: String) throws -> [String] {
        let torn = try appendBatch(2, &producers, directory: directory, crashAt: CrashPoint.appendHalfWritten.rawValue)
        return torn.wasKilled ? [] : ["a producer told to die mid-write exited with \(torn.status)"]
    }

    private func appendScenario(_ point: CrashPoint, visit: Int, directory: String) throws -> [String] {
        var producers = Producers()
        var problems: [String] = []
        func expectSuccess(_ outcome: ToolRunner.Outcome, _ what: String) {
            if outcome.status != 0 { problems.append("\(what) exited with \(outcome.status)") }
        }
        expectSuccess(try appendBatch(3, &producers, directory: directory), "the first append")
        if point == .appendRepairQuarantined { problems += try tearTail(&producers, directory: directory) }
        let crashed: ToolRunner.Outcome
        var crashedBatch: Range<Int>? = nil
        if visit == 1 {
            crashedBatch = producers.nextSequence..<(producers.nextSequence + 3)
            crashed = try appendBatch(3, &producers, directory: directory, crashAt: point.rawValue)
        } else {
            // The library in a loop reaches the point once per append: die at a later one.
            let first = producers.nextSequence
            producers.nextSequence += 5
            crashed = try tools.run("share-stress", ["produce", "--dir", directory, "--producer", "1", "--first", String(first), "--count", "5"],
                                    environment: ["SHARE_QUEUE_CRASH_AT": "\(point.rawValue):\(visit)"])
            for (sequence, id) in LibraryProducer.acknowledgements(crashed.output) {
                producers.ledger.acknowledge(id: id, producer: 1, sequence: sequence)
            }
        }
        if !crashed.wasKilled { problems.append("the producer did not die at \(point.rawValue) (exit \(crashed.status))") }
        expectSuccess(try appendBatch(3, &producers, directory: directory), "an append after the crash")
        let drain = try tools.run("host-drain", ["--dir", directory, "-q"])
        expectSuccess(drain, "the recovering drain")
        producers.ledger.addDrainOutput(drain.output)
        // An append of several records is atomic: all of it or none.
        if let crashedBatch {
            let count = producers.ledger.deliveredCount(producer: 1, sequences: crashedBatch)
            if count != 0 && count != crashedBatch.count { problems.append("\(count) of the \(crashedBatch.count) records of one append were delivered") }
        }
        return problems + judge(producers.ledger.verdict, allowedDuplicates: 0)
    }

    private func drainScenario(_ point: CrashPoint, visit: Int, directory: String) throws -> [String] {
        var producers = Producers()
        var problems: [String] = []
        for count in [10, 10, 5] {
            let outcome = try appendBatch(count, &producers, directory: directory)
            if outcome.status != 0 { problems.append("an append exited with \(outcome.status)") }
        }
        if visit > 1 {
            // Leave a sealed segment half delivered, so that a drain meets the point more than once.
            let partial = try tools.run("host-drain", ["--dir", directory, "-q", "--max", "5"])
            producers.ledger.addDrainOutput(partial.output)
            for count in [10, 5] { _ = try appendBatch(count, &producers, directory: directory) }
        }
        problems += try tearTail(&producers, directory: directory)
        let crashed = try tools.run("host-drain", ["--dir", directory, "-q", "--batch", String(Self.drainBatch)],
                                    environment: ["SHARE_QUEUE_CRASH_AT": "\(point.rawValue):\(visit)"])
        if !crashed.wasKilled { problems.append("the drain did not die at \(point.rawValue) (exit \(crashed.status))") }
        producers.ledger.addDrainOutput(crashed.output)
        let after = try appendBatch(3, &producers, directory: directory)
        if after.status != 0 { problems.append("an append after the crash exited with \(after.status)") }
        let recovery = try tools.run("host-drain", ["--dir", directory, "-q"])
        if recovery.status != 0 { problems.append("the recovering drain exited with \(recovery.status)") }
        producers.ledger.addDrainOutput(recovery.output)
        // Only a crash after the sink took a batch and before the checkpoint may repeat that batch.
        let mayRepeat = point == .drainDelivered
        return problems + judge(producers.ledger.verdict, allowedDuplicates: mayRepeat ? Self.drainBatch : 0)
    }

    private func judge(_ verdict: DeliveryLedger.Verdict, allowedDuplicates: Int) -> [String] {
        var problems: [String] = []
        if verdict.lost > 0 { problems.append("\(verdict.lost) acknowledged records lost") }
        if verdict.corrupt > 0 { problems.append("\(verdict.corrupt) records delivered damaged") }
        if verdict.outOfOrder > 0 { problems.append("\(verdict.outOfOrder) records out of order") }
        if verdict.duplicates > allowedDuplicates { problems.append("\(verdict.duplicates) duplicates, at most \(allowedDuplicates) allowed") }
        if verdict.acknowledged == 0 { problems.append("nothing was acknowledged") }
        return problems
    }
}
