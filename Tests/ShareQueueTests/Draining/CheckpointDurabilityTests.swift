import Foundation
import Testing
@testable import ShareQueueCore

/// What a power cut may take back of the checkpoint. Its writes are synced
/// lazily; that is safe only while a lost write costs a second delivery. Once
/// a delivered segment's removal is durable, a checkpoint that a power cut
/// takes back to before that segment's end lets the next drain give a new
/// segment the removed one's number (one more than the checkpoint's segment),
/// and a sink's stored position, which pointed into the removed segment, then
/// fits the new one: the drain would start in the middle of it and skip records.
@Suite("Checkpoint durability")
struct CheckpointDurabilityTests {
    /// Notes, each time it takes a batch, whether the segment the checkpoint
    /// points into is gone while the checkpoint may not be on disk.
    final class Observations {
        var delivered = 0
        var removedBeforeDurable: [DrainPosition] = []
    }

    struct Observing: DrainSink {
        let checkpoint: Checkpoint
        let directory: QueueDirectory
        let observations: Observations
        var needsRecords: Bool { false }

        mutating func deliver(_ batch: DrainBatch) throws {
            let position = checkpoint.position
            if position.segment > 0, checkpoint.mayBeUndone,
               !FileManager.default.fileExists(atPath: directory.sealedPath(position.segment)) {
                observations.removedBeforeDurable.append(position)
            }
            observations.delivered += batch.records.count
        }
    }

    @Test("A delivered segment is removed only once the checkpoint past it is durable")
    func segmentRemovedAfterDurableCheckpoint() throws {
        let queue = TestQueue()
        try queue.appendThroughLibrary((1...3).map { RecordDraft(.text("first \($0)"), source: "s") })
        let directory = try QueueDirectory(path: queue.path)
        let checkpoint = try Checkpoint(directory: directory, onEvent: { _ in })
        var run = DrainRun(drainer: try QueueDrainer(directory: directory), checkpoint: checkpoint, buildRecords: false)
        // Segment 1 holds the first records; the drain seals the next ones as segment 2 after removing it.
        #expect(try run.seal(as: 1))
        try queue.appendThroughLibrary((1...3).map { RecordDraft(.text("second \($0)"), source: "s") })
        let observations = Observations()
        var sink = Observing(checkpoint: checkpoint, directory: directory, observations: observations)
        try run.deliverAll(into: &sink)
        #expect(observations.delivered == 6)
        #expect(observations.removedBeforeDurable.isEmpty, "removed while the checkpoint was not durable: \(observations.removedBeforeDurable)")
    }
}
