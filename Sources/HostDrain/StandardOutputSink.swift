import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Delivers each batch to standard output. A batch counts as delivered once
/// it is written (and, when standard output is a file, synced to disk); a
/// closed pipe or a full disk fails the batch and leaves it queued.
struct StandardOutputSink: DrainSink {
    let format: RecordFormat
    /// A batch's output, kept between batches so that its memory is not asked for again each time.
    private var out: [UInt8] = []
    /// Whether the reader of standard output is gone (EPIPE): no later batch can be delivered,
    /// so a watcher stops rather than try again for good.
    private(set) var readerIsGone = false

    init(format: RecordFormat) { self.format = format }

    /// JSON Lines are the stored bytes; only text needs the records built.
    var needsRecords: Bool { format == .text }

    mutating func deliver(_ batch: DrainBatch) throws {
        out.removeAll(keepingCapacity: true)
        for record in batch.records { format.append(record, to: &out) }
        let output = FileDescriptor.standardOutput
        // A file (not a pipe) is cut back to where the batch began if it cannot be written whole
        // (a full disk, a file size limit): it then holds whole lines, and the batch comes again whole.
        let start = output.endOfFileWrittenAt()
        do {
            if start != nil {
                #if SHARE_QUEUE_TEST_HOOKS
                if Mutant.active == .standardOutputAroundLayer { try output.appendAroundLayer(out) } else { try output.writeAll(out) }
                #else
                try output.writeAll(out)
                #endif
            } else if try !output.writeAllShared(out, unless: { StopRequest.isRequested }) {
                // Asked to stop while no one reads: the batch stays queued, as when its command is ended.
                throw ShareQueueError.handlerFailed("stopped while standard output was not being read; the batch stays queued")
            }
        } catch let error as SystemError {
            if let start { output.cutBack(to: start) }
            if error.isBrokenPipe { readerIsGone = true }
            throw error
        }
        try output.synchronize(.standardOutput)
        SystemTrace.current?.mark(["delivered"] + batch.records.map(\.id))
    }
}
