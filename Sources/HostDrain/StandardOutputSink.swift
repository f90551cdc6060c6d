import ShareQueue
import ShareQueueSystem

/// Delivers each batch to standard output. A batch counts as delivered once
/// it is written (and, when standard output is a file, synced to disk); a
/// closed pipe or a full disk fails the batch and leaves it queued.
struct StandardOutputSink: DrainSink {
    let format: RecordFormat

    /// JSON Lines are the stored bytes; only text needs the records built.
    var needsRecords: Bool { format == .text }

    mutating func deliver(_ batch: DrainBatch) throws {
        var out: [UInt8] = []
        for record in batch.records { format.append(record, to: &out) }
        try FileDescriptor.standardOutput.writeAll(out)
        try FileDescriptor.standardOutput.synchronize()
    }
}
