import Foundation
import ShareQueueCore
import ShareQueueSystem

/// Building records: how fast a drain hands a library sink `Record` values.
extension Benchmark {
    /// A sink in this process that reads `DrainedRecord.record` for every record, as an app's own sink would.
    struct RecordReadingSink: DrainSink {
        var records = 0
        var textBytes = 0

        mutating func deliver(_ batch: DrainBatch) throws {
            for drained in batch.records {
                // Reading a field keeps the record from being optimised away.
                textBytes += drained.record.text?.utf8.count ?? 0
                records += 1
            }
        }
    }

    /// Records per second a library sink that reads every record takes from a copy of `queue`.
    func recordsBuilt(from queue: String, as name: String) throws -> Double {
        let copy = try copyQueue(queue, as: name)
        var sink = RecordReadingSink()
        let start = Host.monotonicSeconds()
        let summary = try QueueDrainer(directory: try QueueDirectory(path: copy)).drain(into: &sink)
        let seconds = Host.monotonicSeconds() - start
        guard summary.delivered == sizes.drainRecords, sink.records == summary.delivered else {
            throw ShareQueueError(.ioError, "the library drain delivered \(summary.delivered) records, not \(sizes.drainRecords)")
        }
        return Double(sink.records) / seconds
    }

    func median(_ values: [Double]) -> Double { percentile(values, 0.5) }
}
