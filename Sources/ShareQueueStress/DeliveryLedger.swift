import ShareQueueCore

/// What producers were promised and what drains delivered, and the verdict.
struct DeliveryLedger {
    struct Verdict {
        /// Ids producers printed, and records drains handed out.
        var acknowledged = 0, delivered = 0
        /// What must stay zero for the run to pass.
        var lost = 0, corrupt = 0, outOfOrder = 0
        /// What at-least-once delivery allows: repeats, and records whose producer died before printing their id.
        var duplicates = 0, unacknowledgedDelivered = 0

        var passed: Bool { lost == 0 && corrupt == 0 && outOfOrder == 0 }
    }

    /// By id, compared as UTF-8 bytes.
    private var acknowledged: [ByteKey: (producer: Int, sequence: Int)] = [:]
    private var deliveries: [ByteKey: Int] = [:]
    private var deliveredSequences: [Int: Set<Int>] = [:]
    private var corrupt = 0
    private var outOfOrder = 0

    mutating func acknowledge(id: String, producer: Int, sequence: Int) {
        acknowledged[ByteKey(id)] = (producer, sequence)
    }

    /// Takes the JSON Lines one drain printed. A last line without its newline
    /// is a write the drain's death cut short; it was not checkpointed, so it
    /// is ignored here and delivered again by a later drain.
    mutating func addDrainOutput(_ output: [UInt8]) {
        var lines = output.split(separator: 0x0A, omittingEmptySubsequences: false)
        lines.removeLast()  // empty after a final newline, else the cut-short line
        var lastSequence: [Int: Int] = [:]
        for line in lines {
            guard let record = try? Record(jsonBytes: Array(line)), let text = record.text,
                  let (producer, sequence) = StressText.parse(text), ByteKey.equal(record.source, "stress-p\(producer)") else {
                corrupt += 1
                continue
            }
            let id = ByteKey(record.id)
            if let expected = acknowledged[id], expected != (producer, sequence) {
                corrupt += 1
                continue
            }
            deliveries[id, default: 0] += 1
            deliveredSequences[producer, default: []].insert(sequence)
            // One drain delivers in queue order, so each producer's numbers rise.
            if let last = lastSequence[producer], sequence <= last, deliveries[id] == 1 { outOfOrder += 1 }
            lastSequence[producer] = max(sequence, lastSequence[producer] ?? 0)
        }
    }

    /// How many of a producer's `sequences` were delivered at least once.
    func deliveredCount(producer: Int, sequences: Range<Int>) -> Int {
        sequences.filter { deliveredSequences[producer]?.contains($0) == true }.count
    }

    var verdict: Verdict {
        var verdict = Verdict()
        verdict.acknowledged = acknowledged.count
        verdict.delivered = deliveries.count
        verdict.lost = acknowledged.keys.filter { deliveries[$0] == nil }.count
        verdict.duplicates = deliveries.values.reduce(0) { $0 + $1 - 1 }
        verdict.corrupt = corrupt
        verdict.outOfOrder = outOfOrder
        verdict.unacknowledgedDelivered = deliveries.keys.filter { acknowledged[$0] == nil }.count
        return verdict
    }
}
