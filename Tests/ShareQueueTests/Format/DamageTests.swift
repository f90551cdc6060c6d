import Foundation
import Testing
@testable import ShareQueueCore

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
            // Distinct bits: the same bit drawn twice flips back, and a file left
            // whole rightly has nothing set aside. Every trial changes 1 to 3 bits.
            var flips: Set<Int> = []
            let count = Int.random(in: 1...3, using: &generator)
            while flips.count < count { flips.insert(Int.random(in: 0..<(whole.count * 8), using: &generator)) }
            var damaged = whole
            for flip in flips { damaged[flip / 8] ^= UInt8(1) << UInt8(flip % 8) }
            let label = "trial \(trial), flipped " + flips.sorted().map { "byte \($0 / 8) bit \($0 % 8)" }.joined(separator: ", ")
            let (directory, _, _) = try Self.makeQueue(scratch.file("trial-\(trial)"), texts: [])
            let (delivered, quarantined) = try Self.appendAndDrain(directory, pending: damaged)
            // Each record's frame stands alone (an append of one), and no flip can make
            // another frame pass its checks: exactly the records whose frames hold no
            // flipped bit are delivered, in order, then the later append.
            let hit = Set(flips.map { flip in starts.lastIndex { $0 <= flip / 8 }! })
            let untouched = texts.indices.filter { !hit.contains($0) }.map { texts[$0] }
            #expect(delivered == untouched + ["after the damage"], "\(label)")
            // The damage is set aside; each entry is a run of damaged frames or a torn tail, and needs a flip.
            #expect(quarantined >= 1 && quarantined <= flips.count, "\(label): \(quarantined) entries set aside")
            try FileManager.default.removeItem(atPath: directory.path)
        }
    }
}
