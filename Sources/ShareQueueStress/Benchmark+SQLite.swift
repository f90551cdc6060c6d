import Foundation
import ShareQueueCore
import ShareQueueSystem

/// The SQLite peers: the same work done by SQLite used as a queue (`SQLitePeer`), in this process.
extension Benchmark {
    /// The stored bytes of one sample record, which the peer stores as its rows.
    static var samplePayloadBytes: [UInt8] { Array(samplePayload.utf8) }

    /// Records per second appended to a fresh SQLite queue, one transaction per record.
    func sqliteAppendRate(_ name: String, count: Int, synchronous: SQLitePeer.Synchronous) throws -> Double {
        removeDatabase(scratch(name))
        let peer = try SQLitePeer(path: scratch(name), synchronous: synchronous)
        let body = Self.samplePayloadBytes
        let start = Host.monotonicSeconds()
        for _ in 0..<count { try peer.append(body) }
        return Double(count) / (Host.monotonicSeconds() - start)
    }

    /// A SQLite queue holding `records` sample rows, for drains to copy (closed, so its log is folded in).
    func filledDatabase(_ name: String, records: Int) throws -> String {
        removeDatabase(scratch(name))
        try SQLitePeer(path: scratch(name), synchronous: .normal).fill(Self.samplePayloadBytes, count: records)
        return scratch(name)
    }

    /// Records per second a drain of a copy of `database` takes, in batches of `batchSize` (the
    /// size of the ShareQueue drain it stands beside): into a JSON Lines file written and synced
    /// once per batch, as host-drain does, or, when `building`, building each row's `Record` as a
    /// library sink reading every record would.
    func sqliteDrainRate(from database: String, synchronous: SQLitePeer.Synchronous, batchSize: Int, building: Bool = false) throws -> Double {
        let copy = database + "-drain"
        removeDatabase(copy)
        try FileManager.default.copyItem(atPath: database, toPath: copy)
        FileSystem.synchronizeAll()
        let peer = try SQLitePeer(path: copy, synchronous: synchronous)
        var output = try JSONLinesFile(scratch("sqlite-drain.jsonl"))
        defer { output.close() }
        var records = 0, textBytes = 0
        let start = Host.monotonicSeconds()
        while true {
            let taken = try peer.drainBatch(batchSize, row: { body in
                if building {
                    textBytes += (try? Record(jsonBytes: Array(body)))?.text?.utf8.count ?? 0
                } else {
                    output.append(body)
                }
            }, delivered: { () throws(ShareQueueError) in if !building { try output.flush() } })
            if taken == 0 { break }
            records += taken
        }
        let seconds = Host.monotonicSeconds() - start
        guard records == sizes.drainRecords, !building || textBytes > 0 else {
            throw ShareQueueError(.ioError, "the SQLite drain took \(records) rows, not \(sizes.drainRecords)")
        }
        return Double(records) / seconds
    }

    func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A JSON Lines file that a drain appends to and flushes once per batch, synced as host-drain syncs a file on its standard output.
struct JSONLinesFile {
    private let descriptor: FileDescriptor
    private var buffer: [UInt8] = []

    init(_ path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        descriptor = try FileDescriptor.open(path, .writeCreateExclusive)
        buffer.reserveCapacity(1 << 20)
    }

    mutating func append(_ line: UnsafeBufferPointer<UInt8>) {
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
    }

    mutating func append(_ line: [UInt8]) {
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
    }

    mutating func flush() throws(ShareQueueError) {
        do {
            try descriptor.writeAll(buffer)
            try descriptor.synchronize()
        } catch {
            throw ShareQueueError(.ioError, "cannot write the benchmark's JSON Lines", underlying: error)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func close() { descriptor.close() }
}

/// A library sink writing JSON Lines to a file, as host-drain's standard output sink does.
struct JSONLinesFileSink: DrainSink {
    var file: JSONLinesFile
    var records = 0
    var needsRecords: Bool { false }

    mutating func deliver(_ batch: DrainBatch) throws {
        for drained in batch.records { file.append(drained.jsonLine) }
        try file.flush()
        records += batch.records.count
    }
}
