import Foundation
import Testing
@testable import ShareQueueCore

/// Sinks that refuse records in the ways an app's code may: the drain must stay
/// linear and bounded however the refusals come.
@Suite("Refusals under attack")
struct RefusalAttackTests {
    /// Refuses every record of each batch for good, or only the first (a sink
    /// that checks records in order and stops at the first it cannot take).
    struct Refusing: DrainSink {
        var onlyFirst = false
        mutating func deliver(_ batch: DrainBatch) throws {
            let refused = onlyFirst ? [batch.records[0]] : batch.records
            throw RecordRefusal(refused.map { .init(id: $0.id, reason: "not for this host", isFinal: true) })
        }
    }

    /// A queue of `count` records that a drain killed after setting them all
    /// aside, before its checkpoint, left behind: the records still queued, and
    /// already in the dead letters. Returns how long the next drain took.
    private func drainAfterCrash(_ count: Int) throws -> Duration {
        let queue = TestQueue()
        try queue.appendThroughLibrary((1...count).map { RecordDraft(.text("record \($0) " + String(repeating: "x", count: 200)), source: "s") })
        let copy = TestQueue(in: queue.scratch, name: "copy")
        try FileManager.default.copyItem(atPath: queue.path, toPath: copy.path)
        var first = Refusing()
        _ = try QueueDrainer(directory: try QueueDirectory(path: copy.path)).drain(into: &first)
        try FileManager.default.copyItem(atPath: copy.file("dead-letters.log"), toPath: queue.file("dead-letters.log"))
        var again = Refusing()
        let elapsed = try ContinuousClock().measure {
            _ = try QueueDrainer(directory: try QueueDirectory(path: queue.path)).drain(into: &again)
        }
        // Each record is a dead letter once, not twice.
        #expect(try queue.deadLetters().count == count)
        #expect(try queue.drain().lines.isEmpty)
        return elapsed
    }

    @Test("A drain after a crash finds the records already set aside in one read, not one read per record")
    func setAsideAgainAfterCrash() throws {
        // The fastest of three runs of each, so that a moment of load on a busy machine does not count.
        let small = try (1...3).map { _ in try drainAfterCrash(150) }.min()!
        let large = try (1...3).map { _ in try drainAfterCrash(600) }.min()!
        // Four times the records: about four times the time; one read of the file per record made it sixteen.
        // (Under a sanitizer, whose checks cost more as more memory is in use, the ratio grows too.)
        #expect(large / small < 8 * Double(sanitizerAllowance), "150 records: \(small), 600: \(large)")
    }

    @Test("A sink refusing one record at a time does not grow the stack with the batch")
    func refusalsOneAtATime() async throws {
        await #expect(processExitsWith: .success) {
            let queue = TestQueue()
            try queue.appendThroughLibrary((1...1000).map { RecordDraft(.text("\($0)"), source: "s") })
            let directory = try QueueDirectory(path: queue.path)
            // An app drains on a secondary thread, whose stack is 512 KiB on Apple platforms.
            let drained = Thread {
                var sink = Refusing(onlyFirst: true)
                let summary = try? QueueDrainer(directory: directory).drain(into: &sink)
                exit(summary?.deadLettered == 1000 ? 0 : 1)
            }
            drained.stackSize = 512 << 10
            drained.start()
            while true { sleep(60) }
        }
    }

    @Test("A refusal when a stop is asked for leaves the batch queued and says the sink refused, not that the disk failed")
    func refusalWhileStopping() throws {
        final class Stop: @unchecked Sendable { var asked = false }
        struct StopThenRefuse: DrainSink {
            let stop: Stop
            mutating func deliver(_ batch: DrainBatch) throws {
                stop.asked = true
                throw RecordRefusal(id: batch.records[0].id, reason: "not for this host", isFinal: true)
            }
        }
        let queue = TestQueue()
        let ids = try queue.appendThroughLibrary((1...3).map { RecordDraft(.text("\($0)"), source: "s") })
        let stop = Stop()
        var options = DrainOptions()
        options.shouldStop = { stop.asked }
        var sink = StopThenRefuse(stop: stop)
        #expect {
            try QueueDrainer(directory: try QueueDirectory(path: queue.path), options: options).drain(into: &sink)
        } throws: { error in
            (error as? ShareQueueError)?.code == .sinkRefused
        }
        #expect(try queue.deadLetters().isEmpty)
        #expect(try ShareQueueTests.ids(in: queue.drain().stdout) == ids)
    }

    @Test("Records refused for the last time are all set aside in one pass, not one offer each")
    func lastAttemptsInOnePass() throws {
        struct EveryOther: DrainSink {
            var offered = 0
            var delivered: [String] = []
            mutating func deliver(_ batch: DrainBatch) throws {
                offered += batch.records.count
                let refused = batch.records.filter { Int($0.record.text ?? "")! % 2 == 0 }
                if !refused.isEmpty { throw RecordRefusal(refused.map { .init(id: $0.id, reason: "even") }) }
                delivered += batch.records.compactMap(\.record.text)
            }
        }
        let queue = TestQueue()
        try queue.appendThroughLibrary((1...1000).map { RecordDraft(.text("\($0)"), source: "s") })
        var options = DrainOptions()
        options.maxAttempts = 1
        var sink = EveryOther()
        let summary = try QueueDrainer(directory: try QueueDirectory(path: queue.path), options: options).drain(into: &sink)
        #expect(summary.deadLettered == 500)
        #expect(sink.delivered == (1...1000).filter { $0 % 2 == 1 }.map(String.init))
        #expect(sink.offered <= 2 * 1000, "offered \(sink.offered) records for a batch of 1000")
    }
}
