import Foundation
import ShareQueueCore
import ShareQueueStore
import ShareQueueSystem

/// Draining into `--store`, against the store floor (`Floor/store-floor.c`): the same rows
/// inserted into the same schema, with the same settings, by plain C through SQLite's C API.
extension Benchmark {
    /// host-drain's batch size for `--store` (its `--batch` default): one transaction each.
    static let storeBatch = 5000

    func storeIngest() throws -> [Figure] {
        guard let storeFloor else { throw ShareQueueError(.configuration, "the store floor was not built") }
        // Two queues of new records: the first drained into an empty store, the second into
        // one holding the first. The floor gets the rows the store makes of the same records.
        let first = try filledQueue("store-first", records: sizes.drainRecords)
        let second = try filledQueue("store-second", records: sizes.drainRecords)
        let firstRows = try writeStoreRows(of: first, to: scratch("store-first.rows"))
        let secondRows = try writeStoreRows(of: second, to: scratch("store-second.rows"))
        // The store each "holding" run starts from a copy of, drained once, untimed.
        let holding = scratch("store-holding.sqlite")
        removeDatabase(holding)
        _ = try drainTimed(["--dir", try copyQueue(first, as: "store-queue"), "--store", holding], output: "/dev/null")
        try expectRows(sizes.drainRecords, in: holding)

        // Three runs each, interleaved, from fresh copies synced first; each figure is the median.
        var empty: [Double] = [], emptyFloor: [Double] = [], full: [Double] = [], fullFloor: [Double] = []
        for _ in 0..<3 {
            empty.append(try storeRate(draining: first, startingFrom: nil))
            emptyFloor.append(try storeFloorRate(storeFloor, rows: firstRows, of: first, startingFrom: nil))
            full.append(try storeRate(draining: second, startingFrom: holding))
            fullFloor.append(try storeFloorRate(storeFloor, rows: secondRows, of: second, startingFrom: holding))
        }
        progress("store runs (records/s): empty \(rates(empty)) vs floor \(rates(emptyFloor)); holding \(rates(full)) vs floor \(rates(fullFloor))")
        return [
            Figure(name: "drain into --store, empty (vs store floor)", unit: "records/s", value: median(empty), floor: median(emptyFloor), target: ">= 0.90"),
            Figure(name: "drain into --store holding \(sizes.drainRecords) rows (vs floor)", unit: "records/s", value: median(full),
                   floor: median(fullFloor), target: ">= 0.90"),
        ]
    }

    /// Records per second of host-drain draining a fresh copy of `queue` into a fresh store,
    /// or into a copy of the store at `base`: the whole process, as a user runs it.
    func storeRate(draining queue: String, startingFrom base: String?) throws -> Double {
        let database = scratch("store-run.sqlite")
        try copyDatabase(base, to: database)
        let copy = try copyQueue(queue, as: "store-queue")
        let (seconds, _) = try drainTimed(["--dir", copy, "--store", database], output: "/dev/null")
        try expectRows(sizes.drainRecords * (base == nil ? 1 : 2), in: database)
        return Double(sizes.drainRecords) / seconds
    }

    /// Rows per second the store floor inserts from `rows` (the rows of `queue`) into a fresh
    /// database, or into a copy of the store at `base`: its inserts and commits alone.
    func storeFloorRate(_ storeFloor: CFloor, rows: String, of queue: String, startingFrom base: String?) throws -> Double {
        let database = scratch("store-floor.sqlite")
        try copyDatabase(base, to: database)
        FileSystem.synchronizeAll()
        // The store keeps its position under the queue's identifier; so does the floor.
        let name = try QueueDirectory(path: queue).identifier ?? queue
        let outcome = try ToolRunner.run(program: storeFloor.program, [rows, database, name, String(Self.storeBatch)])
        let words = String(decoding: outcome.output, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard outcome.status == 0, words.count == 2, Int(words[0]) == sizes.drainRecords, let seconds = Double(words[1]), seconds > 0 else {
            throw ShareQueueError(.ioError, "the store floor exited with \(outcome.status) and printed '\(String(decoding: outcome.output, as: UTF8.self))'")
        }
        try expectRows(sizes.drainRecords * (base == nil ? 1 : 2), in: database)
        return Double(sizes.drainRecords) / seconds
    }

    /// Writes the store's row of every record in `queue` (drained from a copy) for the store
    /// floor: each of the ten columns as a 4-byte little-endian length, 0xFFFFFFFF for NULL,
    /// and its UTF-8 bytes.
    func writeStoreRows(of queue: String, to path: String) throws -> String {
        let copy = try copyQueue(queue, as: "store-rows-queue")
        try? FileManager.default.removeItem(atPath: path)
        var sink = StoreRowsFile(descriptor: try FileDescriptor.open(path, .writeCreateExclusive))
        defer { sink.descriptor.close() }
        let summary = try QueueDrainer(directory: try QueueDirectory(path: copy)).drain(into: &sink)
        guard summary.delivered == sizes.drainRecords else {
            throw ShareQueueError(.ioError, "the store's rows were taken from \(summary.delivered) records, not \(sizes.drainRecords)")
        }
        return path
    }

    /// Checks, read only, that the database at `path` is the store's (its schema exactly) and holds `count` rows.
    func expectRows(_ count: Int, in path: String) throws {
        let found = try StoreSink.rowCount(path: path)
        guard found == count else { throw ShareQueueError(.ioError, "the store holds \(found) rows, not \(count)", path: path) }
    }

    /// Replaces `database` with a copy of `base` (its log too), or with nothing.
    func copyDatabase(_ base: String?, to database: String) throws {
        removeDatabase(database)
        guard let base else { return }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: base + suffix) {
            try FileManager.default.copyItem(atPath: base + suffix, toPath: database + suffix)
        }
    }

    private func rates(_ values: [Double]) -> String { values.map { String(format: "%.0f", $0) }.joined(separator: ", ") }
}

/// A library sink writing each record's store row to a file, in the store floor's format.
private struct StoreRowsFile: DrainSink {
    let descriptor: FileDescriptor
    private var buffer: [UInt8] = []
    /// As the store: rows from the stored bytes where it can.
    var needsRecords: Bool { false }

    init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    mutating func deliver(_ batch: DrainBatch) throws {
        for drained in batch.records {
            for column in StoreRow(drained).columns {
                guard let column else {
                    buffer.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
                    continue
                }
                let length = UInt32(column.count)
                buffer.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) })
                buffer.append(contentsOf: column)
            }
        }
        try descriptor.writeAll(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
