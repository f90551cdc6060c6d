import ShareQueueCore
import ToolSupport

/// Passes batches to another sink and shows on the progress line how many
/// records it took. The total is estimated from bytes: the segment bytes
/// waiting when the drain began (from file sizes, without reading a record),
/// against the bytes of the records delivered so far.
struct ProgressSink: DrainSink {
    var inner: any DrainSink
    let progress: ProgressLine
    let bytesWaiting: Int64
    private var delivered = 0
    private var bytesDelivered: Int64 = 0

    init(_ inner: any DrainSink, progress: ProgressLine, bytesWaiting: Int64) {
        self.inner = inner
        self.progress = progress
        self.bytesWaiting = bytesWaiting
    }

    mutating func deliver(_ batch: DrainBatch) throws {
        try inner.deliver(batch)
        delivered += batch.records.count
        for record in batch.records { bytesDelivered += Int64(record.storedByteCount + Frame.overhead) }
        progress.update(done: delivered, fraction: bytesWaiting > 0 ? Double(bytesDelivered) / Double(bytesWaiting) : nil)
    }

    func deliveredPosition() throws -> DrainPosition? { try inner.deliveredPosition() }
    var failuresAreRefusals: Bool { inner.failuresAreRefusals }
    var needsRecords: Bool { inner.needsRecords }
}
