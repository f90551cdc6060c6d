import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Planted damage of the kind that once made a drain take minutes and hundreds
/// of megabytes: many small damaged stretches, each its own region.
enum DamageFlood: String, CaseIterable, CustomTestStringConvertible {
    /// The header magic over and over: each declares a length far above the maximum.
    case repeatedMagic
    /// Headers that declare the largest legal length, and nothing after them.
    case largestLengths
    /// Whole 20-byte frames with an empty payload and a wrong checksum.
    case badChecksums
    /// Whole, well-checksummed frames whose payload `{}` is no record.
    case undeliverableRecords

    var testDescription: String { rawValue }

    /// About 1 MiB of it.
    var bytes: [UInt8] {
        let unit: [UInt8]
        switch self {
        case .repeatedMagic: unit = Frame.headerMagic
        case .largestLengths: unit = Frame.headerMagic + [0, 0, 0, 1] + [0, 0, 0, 0]
        case .badChecksums: unit = Frame.headerMagic + [0, 0, 0, 0] + [0xDE, 0xAD, 0xBE, 0xEF] + [0, 0, 0, 0] + Frame.trailerMagic
        case .undeliverableRecords: unit = segment([Array("{}".utf8)])
        }
        return Array([[UInt8]](repeating: unit, count: (1 << 20) / unit.count).joined())
    }
}

/// Damage is handled in time linear in its bytes, in memory that does not
/// depend on how much of it there is, and set aside merged, without growing
/// the quarantine file much beyond the damaged bytes.
@Suite("Floods of damage", .serialized)
struct DamageFloodTests {
    /// A drain of about 1 MiB of whole records, 10,000 of them: what a flood's time is compared with.
    private static func drainOfWholeRecords(in scratch: TemporaryDirectory) throws -> MeasuredRun {
        let baseline = TestQueue(in: scratch, name: "baseline")
        let line = String(repeating: "r", count: 80)
        for batch in 0..<10 {
            try baseline.appendThroughLibrary((0..<1000).map { RecordDraft(.text("\(line) \(batch) \($0)"), source: "test") }, synchronize: true)
        }
        let whole = try baseline.measuredDrain(["-q"], deadline: 120)
        #expect(whole.status == 0)
        #expect(try ids(in: whole.stdout).count == 10_000)
        return whole
    }

    @Test("1 MiB of planted damage drains fast, in bounded memory, merged into few entries", arguments: DamageFlood.allCases)
    func plantedFlood(_ flood: DamageFlood) throws {
        let scratch = TemporaryDirectory()
        let whole = try Self.drainOfWholeRecords(in: scratch)

        let queue = TestQueue(in: scratch)
        let appended = try queue.append(["the one real record"])
        #expect(appended.status == 0)
        let recordBytes = try #require(FileManager.default.contents(atPath: queue.pendingPath)).count
        let planted = flood.bytes
        try queue.plant(planted)

        let bound = (10 * whole.seconds + 5) * Double(sanitizerAllowance)
        let drained = try queue.measuredDrain(["-q"], deadline: bound + 5)
        #expect(drained.status == 0)
        #expect(try ids(in: drained.stdout) == appended.lines)
        #expect(drained.seconds < bound, "damage took \(drained.seconds) s; as many bytes of records took \(whole.seconds) s")
        #expect(drained.peakMemory < (64 << 20) * Int64(sanitizerAllowance), "peak memory \(drained.peakMemory) bytes")

        // Every planted byte is in the quarantine file once, in order, in few entries.
        let entries = try queue.quarantine()
        let entryCount = entries.count
        #expect(entryCount <= 4)
        var offset = Int64(recordBytes)
        var data = Data()
        for entry in entries {
            #expect((entry["offset"] as? NSNumber)?.int64Value == offset)
            offset += (entry["length"] as? NSNumber)?.int64Value ?? 0
            data += Data(base64Encoded: entry["data"] as? String ?? "") ?? Data()
        }
        #expect(offset - Int64(recordBytes) == Int64(planted.count))
        // A Bool, not the bytes: a failed comparison of megabytes would make the test runner diff them for minutes.
        let quarantinedExactly = data == Data(planted)
        #expect(quarantinedExactly, "quarantined \(data.count) bytes for \(planted.count) planted")
        let quarantineSize = try #require(FileManager.default.attributesOfItem(atPath: queue.file("quarantine.log"))[.size] as? Int)
        #expect(quarantineSize <= 2 * planted.count + 4096)
    }

    @Test("8 MiB of whole, well-checksummed frames with nothing in them, each a record that is set aside and has no bytes to count, drain in bounded memory, in time linear in their bytes")
    func emptyRecordsDrainInBoundedMemory() throws {
        let scratch = TemporaryDirectory()
        let whole = try Self.drainOfWholeRecords(in: scratch)

        let queue = TestQueue(in: scratch)
        let appended = try queue.append(["the one real record"])
        var empty: [UInt8] = []
        Frame.append(payload: [], to: &empty, last: true)
        let planted = Array([[UInt8]](repeating: empty, count: (8 << 20) / empty.count).joined())
        try queue.plant(planted)
        let later = try queue.append(["the record after them"])

        // 8 times the bytes of the flood tests above, and the same bound for each MiB.
        let bound = 8 * (10 * whole.seconds + 5) * Double(sanitizerAllowance)
        let drained = try queue.measuredDrain(["-q"], deadline: bound + 5)
        #expect(drained.status == 0, "\(drained.stderr)")
        #expect(try ids(in: drained.stdout) == appended.lines + later.lines)
        #expect(drained.seconds < bound, "\(planted.count / empty.count) empty records took \(drained.seconds) s; 10,000 records took \(whole.seconds) s")
        #expect(drained.peakMemory < (48 << 20) * Int64(sanitizerAllowance), "peak memory \(drained.peakMemory) bytes")
        let data = try queue.quarantine().reduce(Data()) { $0 + (Data(base64Encoded: $1["data"] as? String ?? "") ?? Data()) }
        let quarantinedExactly = data == Data(planted)
        #expect(quarantinedExactly, "quarantined \(data.count) bytes for \(planted.count) planted")
    }

    @Test("Touching regions of 20 bytes join into one piece in time linear in their number")
    func joiningIsLinear() {
        func joiningTime(_ count: Int) -> Double {
            let regions = (0..<count).map {
                DamagedRegion(offset: Int64(20 * $0), length: 20, reason: "empty", bytes: [UInt8](repeating: 7, count: 20), isTornTail: false)
            }
            var shortest = Double.infinity
            for _ in 0..<3 {
                let started = ContinuousClock.now
                let joined = DamagedRegion.merged(regions)
                let elapsed = ContinuousClock.now - started
                #expect(joined.count == 1 && joined[0].bytes.count == 20 * count)
                shortest = min(shortest, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
            return shortest
        }
        // Up to a piece's worth: joining by copying what was joined so far takes 625 times as long for 25 times the regions.
        let few = joiningTime(2_000), many = joiningTime(50_000)
        #expect(many < 60 * few + 0.1, "50,000 regions took \(many) s; 2,000 took \(few) s")
    }

    /// `count` headers 64 bytes apart, header i declaring 4 MiB + 64 i, each with
    /// its forged trailer where that length ends, so that every header passes
    /// every check that comes before reading its payload.
    static func nestedHeaders(_ count: Int) -> [UInt8] {
        let base = 4 << 20
        var planted = [UInt8](repeating: 0x61, count: 256 * 64 + 12 + base + 256 * 64 + 8)
        for i in 0..<count {
            let length = base + 64 * i
            let lengthBytes = (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) }
            planted.replaceSubrange((64 * i)..<(64 * i + 12), with: Frame.headerMagic + lengthBytes + [1, 2, 3, 4])
            let trailer = 64 * i + 12 + length
            planted.replaceSubrange(trailer..<(trailer + 8), with: lengthBytes + Frame.trailerMagic)
        }
        return planted
    }

    @Test("56 MiB of zeros after a record, written: the record is delivered, and the quarantine file keeps bytes up to its 64 MiB limit and accounts for the rest")
    func quarantineKeepsBytesUpToItsLimit() throws {
        let queue = TestQueue()
        let acknowledged = try queue.append(text: "before the zeros")
        // Written, not a hole: a hole is set aside unread (terabyteHoleIsSetAsideUnread).
        try queue.plant([UInt8](repeating: 0, count: 56 << 20))
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == acknowledged)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: queue.file("quarantine.log"))[.size] as? Int)
        #expect(size <= (64 << 20) + (1 << 20), "quarantine.log holds \(size) bytes")
        let entries = try queue.quarantine()
        #expect(entries.reduce(0) { $0 + ($1["length"] as! Int) } == 56 << 20)
        #expect(entries.contains { $0["keptBytes"] as? Int == 0 })
        #expect(!queue.names().contains { $0.hasSuffix(".log") && $0 != "quarantine.log" && $0 != "pending.log" }, "\(queue.names())")

        // Past the limit, a record set aside whole still keeps its bytes; the garbage beside it does not.
        // The file is filled to the limit exactly first, with a line of padding.
        let padding = (64 << 20) - size - 1
        try queue.plant(Array("{\"padding\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "p"), count: padding - 15) + Array("\"}\n".utf8), after: "quarantine.log")
        let garbage = [UInt8](repeating: UInt8(ascii: "g"), count: 1 << 20)
        #expect(FileManager.default.createFile(atPath: queue.pendingPath, contents: Data(garbage)))
        try queue.appendStored([Array(#"{"v":1,"id":"kept","date":"d","source":"s","kind":"text"}"#.utf8)])
        try queue.plant(garbage)
        let after = try queue.append(text: "after")
        let second = try queue.drain()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try ids(in: second.stdout) == after)
        let added = try queue.quarantine().dropFirst(entries.count + 1)
        #expect(added.map { $0["keptBytes"] as? Int } == [0, added.dropFirst().first?["length"] as? Int, 0], "\(added)")
        #expect((added.dropFirst().first?["reason"] as? String)?.contains("'text'") == true, "\(added)")
    }

    @Test("A terabyte hole in a segment, which costs a hostile producer nothing, is set aside unread in an entry of its own, and the records on both sides of it are delivered")
    func terabyteHoleIsSetAsideUnread() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let before = try queue.append(text: "before the hole")
        let hole: UInt64 = 1 << 40
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: queue.pendingPath))
        try handle.truncate(atOffset: try handle.seekToEnd() + hole)
        try handle.close()
        // A record past the hole, framed as a producer would (share-append refuses a file this large).
        var frame: [UInt8] = []
        Frame.append(payload: Array(#"{"v":1,"id":"after-the-hole","date":"2026-12-02T00:00:00.000Z","source":"s","kind":"text","text":"after"}"#.utf8), to: &frame, last: true)
        try queue.plant(frame)
        // Read, a terabyte of zeros takes more than an hour.
        let drain = try run("/usr/bin/timeout", ["-s", "KILL", "60", Executables.path("host-drain"), "--dir", queue.path], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == before + ["after-the-hole"])
        let entries = try queue.quarantine()
        #expect(entries.reduce(0) { $0 + ($1["length"] as! Int) } == Int(hole))
        #expect(entries.contains { $0["keptBytes"] as? Int == 0 && ($0["length"] as! Int) > Int(hole) / 2 && $0["reason"] as? String == SegmentReader.holeReason }, "\(entries)")
        #expect(entries.reduce(0) { $0 + ($1["keptBytes"] as! Int) } <= 1 << 20)
    }

    @Test("Headers planted inside one another's payloads, each with a forged trailer, cost each byte about once")
    func nestedForgedHeaders() throws {
        let scratch = TemporaryDirectory()
        func drainAfterOneRecord(_ bytes: [UInt8], _ name: String) throws -> (MeasuredRun, [String]) {
            let queue = TestQueue(in: scratch, name: name)
            let appended = try queue.append(text: "the one real record")
            try queue.plant(bytes)
            return (try queue.measuredDrain(["-q"], deadline: 120), appended)
        }
        // The same number of bytes with 16 and with 256 headers: the time must not grow with the headers.
        let (few, _) = try drainAfterOneRecord(Self.nestedHeaders(16), "few")
        let planted = Self.nestedHeaders(256)
        let (nested, ids) = try drainAfterOneRecord(planted, "nested")
        #expect(nested.status == 0)
        #expect(try ShareQueueTests.ids(in: nested.stdout) == ids)
        #expect(nested.seconds < 3 * few.seconds + 0.5, "256 nested headers took \(nested.seconds) s; 16 took \(few.seconds) s")
        let data = try TestQueue(in: scratch, name: "nested").quarantine().reduce(Data()) { $0 + (Data(base64Encoded: $1["data"] as? String ?? "") ?? Data()) }
        // A Bool, not the bytes: a failed comparison of megabytes would make the test runner diff them for minutes.
        let quarantinedExactly = data == Data(planted)
        #expect(quarantinedExactly, "quarantined \(data.count) bytes for \(planted.count) planted")
    }

    @Test("Adjacent damage is one region, set aside in pieces of at most 1 MiB; records between damage are delivered")
    func mergedRegions() throws {
        let scratch = TemporaryDirectory()
        let records = samplePayloads(4)
        let magic = DamageFlood.repeatedMagic.bytes
        let checksums = DamageFlood.badChecksums.bytes
        let garbage = [UInt8](repeating: 0x41, count: 3 << 20)
        // record, 2 MiB of two kinds of damage, record, 1 byte, record, 3 MiB of garbage, record
        let bytes = segment([records[0]]) + magic + checksums + segment([records[1]]) + [0x42]
            + segment([records[2]]) + garbage + segment([records[3]])
        let events = try readSegment(bytes, in: scratch)
        #expect(payloads(events) == records)
        // Values, not the regions themselves, go into expectations: a failure would print them all.
        let damage = regions(events)
        let wholePieces = damage.allSatisfy { $0.length <= 1 << 20 && $0.bytes.count == Int($0.length) && !$0.isTornTail }
        #expect(wholePieces)
        let pieces = damage.count
        #expect(pieces == 2 + 1 + 3)
        // Pieces of one region follow each other without a gap.
        let firstEnd = Int64(records[0].count + Frame.overhead + magic.count + checksums.count)
        let first = damage.filter { $0.offset < firstEnd }
        let (firstPieces, firstRegionEnd) = (first.count, first.last?.end)
        #expect(firstPieces == 2)
        #expect(firstRegionEnd == firstEnd)
        let gapless = zip(first, first.dropFirst()).allSatisfy { $0.end == $1.offset }
        #expect(gapless)
        let firstReason = first.first?.reason ?? ""
        #expect(firstReason.contains("above the maximum"))
        let oneByteRegions = damage.filter { $0.length == 1 }.count
        #expect(oneByteRegions == 1)
        let lastIsGarbage = damage.last?.bytes == [UInt8](repeating: 0x41, count: 1 << 20)
        #expect(lastIsGarbage)
    }

    @Test("A header declaring a large length with no trailer where it says is damage of its own bytes")
    func largeLengthWithoutTrailer() throws {
        let scratch = TemporaryDirectory()
        let records = samplePayloads(30_000)
        let header = Frame.headerMagic + [0, 0, 0x10, 0] + [0, 0, 0, 0]  // 1 MiB declared
        let bytes = segment([records[0]]) + header + segment(Array(records[1...]))
        let events = try readSegment(bytes, in: scratch)
        let delivered = payloads(events).count
        #expect(delivered == records.count)
        let damage = regions(events).map { "\($0.offset) \($0.length) \($0.reason)" }
        #expect(damage == ["\(records[0].count + Frame.overhead) 12 record trailer does not match its header"])
    }

    @Test("Damage between many records is set aside with them in one pass")
    func interleaved() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: directory, options: options)
        // One append each: garbage goes between appends, not inside one.
        for i in 0..<2000 { _ = try appender.append(RecordDraft(.text("record \(i)"), source: "test")) }
        let clean = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.pendingPath)))
        // The same records, each followed by a few bytes of garbage.
        var damaged: [UInt8] = []
        var offset = 0
        while offset < clean.count {
            let length = Int(clean[offset + 4]) | Int(clean[offset + 5]) << 8
            damaged += clean[offset..<(offset + length + Frame.overhead)] + [0x41, 0x42, 0x43]
            offset += length + Frame.overhead
        }
        func timedDrain(_ bytes: [UInt8]) throws -> (seconds: Double, delivered: Int) {
            try Data(bytes).write(to: URL(fileURLWithPath: directory.pendingPath))
            var sink = CollectingSink()
            let started = Host.monotonicSeconds()
            _ = try QueueDrainer(directory: directory).drain(into: &sink)
            return (Host.monotonicSeconds() - started, sink.texts.count)
        }
        let cleanRun = try timedDrain(clean)
        let damagedRun = try timedDrain(damaged)
        #expect(cleanRun.delivered == 2000)
        #expect(damagedRun.delivered == 2000)
        #expect(try Quarantine(directory: directory).count() == 2000)
        #expect(damagedRun.seconds < 4 * cleanRun.seconds + 0.5, "with damage \(damagedRun.seconds) s, without \(cleanRun.seconds) s")
    }
}
