import Foundation
import Testing
@testable import ShareQueue

/// A sink that keeps what it is given.
struct CollectingSink: DrainSink {
    var texts: [String] = []
    mutating func deliver(_ batch: DrainBatch) throws {
        texts += batch.records.map { $0.record.text ?? "" }
    }
}

/// Torn and damaged queue files, through the library: the reader never
/// delivers a damaged record, never loses a whole record before the damage,
/// sets aside what it cannot read, and appends go on working.
@Suite("Torn and damaged files")
struct DamageTests {
    static func texts(_ count: Int) -> [String] { (1...count).map { "record \($0) " + String(repeating: "z", count: $0 * 5) } }

    /// A queue holding `texts`, and where each record starts in its pending file.
    static func makeQueue(_ path: String, texts: [String]) throws -> (QueueDirectory, [UInt8], [Int]) {
        let directory = try QueueDirectory(path: path)
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: directory, options: options)
        var starts: [Int] = []
        for text in texts {
            starts.append(Int((try? FileManager.default.attributesOfItem(atPath: directory.pendingPath)[.size] as? Int) ?? 0))
            try appender.append(RecordDraft(.text(text), source: "test"))
        }
        let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: directory.pendingPath))) ?? Data())
        return (directory, bytes, starts)
    }

    /// Replaces the pending file with `bytes`, appends one more record, drains.
    static func appendAndDrain(_ directory: QueueDirectory, pending bytes: [UInt8]) throws -> (delivered: [String], quarantined: Int) {
        try Data(bytes).write(to: URL(fileURLWithPath: directory.pendingPath))
        var options = AppendOptions()
        options.synchronize = false
        try QueueAppender(directory: directory, options: options).append(RecordDraft(.text("after the damage"), source: "test"))
        var sink = CollectingSink()
        let summary = try QueueDrainer(directory: directory).drain(into: &sink)
        #expect(summary.delivered == sink.texts.count)
        return (sink.texts, try Quarantine(directory: directory).count())
    }

    @Test("Truncated at every byte offset inside its last three records")
    func truncationAtEveryOffset() throws {
        let scratch = TemporaryDirectory()
        let texts = Self.texts(6)
        let (_, whole, starts) = try Self.makeQueue(scratch.file("original"), texts: texts)
        for cut in starts[3]..<whole.count {
            let (directory, _, _) = try Self.makeQueue(scratch.file("cut-\(cut)"), texts: [])
            let (delivered, quarantined) = try Self.appendAndDrain(directory, pending: Array(whole[..<cut]))
            let complete = starts.indices.filter { i in (i + 1 < starts.count ? starts[i + 1] : whole.count) <= cut }.count
            #expect(delivered == Array(texts.prefix(complete)) + ["after the damage"], "cut at \(cut)")
            #expect(quarantined == (starts.contains(cut) ? 0 : 1), "cut at \(cut)")
            try FileManager.default.removeItem(atPath: directory.path)
        }
    }

    @Test("An append of several records cut at any byte delivers none of them")
    func batchCutAnywhere() throws {
        let scratch = TemporaryDirectory()
        let (directory, first, _) = try Self.makeQueue(scratch.file("original"), texts: ["before"])
        _ = try QueueAppender(directory: directory).append((1...4).map { RecordDraft(.text("batch \($0)"), source: "test") })
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.pendingPath)))
        let batchStart = first.count
        for cut in batchStart..<whole.count {
            let (copy, _, _) = try Self.makeQueue(scratch.file("cut-\(cut)"), texts: [])
            let (delivered, quarantined) = try Self.appendAndDrain(copy, pending: Array(whole[..<cut]))
            #expect(delivered == ["before", "after the damage"], "cut at \(cut)")
            #expect(quarantined == (cut == batchStart ? 0 : 1), "cut at \(cut)")
            try FileManager.default.removeItem(atPath: copy.path)
        }
        let (intact, _, _) = try Self.makeQueue(scratch.file("whole"), texts: [])
        let (all, _) = try Self.appendAndDrain(intact, pending: whole)
        #expect(all == ["before", "batch 1", "batch 2", "batch 3", "batch 4", "after the damage"])
    }

    @Test("1,000 trials of random bit flips")
    func randomBitFlips() throws {
        let scratch = TemporaryDirectory()
        let texts = Self.texts(10)
        let (_, whole, starts) = try Self.makeQueue(scratch.file("original"), texts: texts)
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<1000 {
            var damaged = whole
            var first = Int.max
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let byte = Int.random(in: 0..<damaged.count, using: &generator)
                damaged[byte] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
                first = min(first, byte)
            }
            let (directory, _, _) = try Self.makeQueue(scratch.file("trial-\(trial)"), texts: [])
            let (delivered, quarantined) = try Self.appendAndDrain(directory, pending: damaged)
            // The later append is delivered, last.
            #expect(delivered.last == "after the damage", "trial \(trial)")
            // Only original records, in order, each once: nothing damaged.
            var remaining = texts[...]
            for text in delivered.dropLast() {
                guard let index = remaining.firstIndex(of: text) else {
                    Issue.record("trial \(trial): delivered a damaged or repeated record: \(text.prefix(40))")
                    break
                }
                remaining = remaining[(index + 1)...]
            }
            // Every record wholly before the first flip is delivered.
            let intact = starts.indices.filter { i in (i + 1 < starts.count ? starts[i + 1] : whole.count) <= first }.count
            #expect(Array(delivered.prefix(intact)) == Array(texts.prefix(intact)), "trial \(trial)")
            #expect(quarantined >= 1, "trial \(trial): the damage was not set aside")
            #expect(delivered.count - 1 + quarantined <= texts.count + 1, "trial \(trial)")
            try FileManager.default.removeItem(atPath: directory.path)
        }
    }
}
