import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueSystem

/// Reads every event of a segment held in memory, through a real file.
func readSegment(_ bytes: [UInt8], in scratch: TemporaryDirectory) throws -> [SegmentEvent] {
    let path = scratch.file("segment-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    let file = try FileDescriptor.open(path, .readOnly)
    defer { file.close() }
    var reader = SegmentReader(file: file, from: 0)
    var events: [SegmentEvent] = []
    while let event = try reader.next() { events.append(event) }
    return events
}

func payloads(_ events: [SegmentEvent]) -> [[UInt8]] {
    events.compactMap { if case .record(_, _, let payload, _) = $0 { payload.array } else { nil } }
}

func regions(_ events: [SegmentEvent]) -> [DamagedRegion] {
    events.compactMap { if case .damaged(let region) = $0 { region } else { nil } }
}

func samplePayloads(_ count: Int) -> [[UInt8]] {
    (0..<count).map { i in Array("{\"v\":1,\"id\":\"\(i)\",\"text\":\"\(String(repeating: "x", count: i * 7 % 50))\"}".utf8) }
}

func segment(_ payloads: [[UInt8]]) -> [UInt8] {
    var bytes: [UInt8] = []
    for payload in payloads { Frame.append(payload: payload, to: &bytes) }
    return bytes
}

@Suite("Framing")
struct FramingTests {
    @Test("CRC-32C matches the standard check value")
    func checksum() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        let long = (0..<1000).map { UInt8($0 % 251) }
        let split = long.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[500...]), continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<500]))) }
        #expect(split == CRC32C.checksum(long))
    }

    @Test("A frame is header, payload, trailer, and inspects as complete")
    func layout() {
        var bytes: [UInt8] = []
        Frame.append(payload: Array("{}".utf8), to: &bytes)
        #expect(bytes.count == 2 + Frame.overhead)
        #expect(Array(bytes[0..<4]) == Frame.headerMagic)
        #expect(Array(bytes[4..<8]) == [2, 0, 0, 0])
        #expect(Array(bytes[18..<22]) == Frame.trailerMagic)
        #expect(bytes.withUnsafeBytes { Frame.inspect($0) } == .complete(size: 22, continued: false))
    }

    @Test("Both ways of framing write the documented bytes, last or continued", arguments: [false, true])
    func exactBytes(last: Bool) {
        let payload = Array("{\"v\":1,\"text\":\"a record of a few dozen bytes\"}".utf8)
        let length = [UInt8(payload.count), 0, 0, 0]
        let crc = payload.withUnsafeBytes { CRC32C.checksum($0, continuing: CRC32C.checksum(length)) }
        let expected = [0xFF, 0x53, 0x51, 0x52] + length + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: crc >> $0) }
            + payload + length + (last ? [0xFF, 0x45, 0x4E, 0x44] : [0xFF, 0x4D, 0x4F, 0x52])
        // After other bytes, as the frames of one append follow each other.
        var copied: [UInt8] = [1, 2, 3]
        Frame.append(payload: payload, to: &copied, last: last)
        var inPlace: [UInt8] = [1, 2, 3]
        let written = Frame.append(to: &inPlace, last: last) { $0.append(contentsOf: payload) }
        #expect(copied == [1, 2, 3] + expected)
        #expect(inPlace == [1, 2, 3] + expected)
        #expect(written == payload.count)
    }

    @Test("Every cut point of the last record keeps all records before it", arguments: [1, 3, 10])
    func everyCutPoint(records: Int) throws {
        let scratch = TemporaryDirectory()
        let all = samplePayloads(records)
        let whole = segment(all)
        let lastStart = segment(Array(all.dropLast())).count
        for cut in lastStart..<whole.count {
            let events = try readSegment(Array(whole[..<cut]), in: scratch)
            #expect(payloads(events) == Array(all.dropLast()), "cut at \(cut)")
            let damage = regions(events)
            if cut == lastStart {
                #expect(damage.isEmpty)
            } else {
                #expect(damage.count == 1, "cut at \(cut)")
                #expect(damage.first?.isTornTail == true, "cut at \(cut)")
                #expect(damage.first?.offset == Int64(lastStart))
                #expect(damage.first?.length == Int64(cut - lastStart))
            }
        }
        #expect(payloads(try readSegment(whole, in: scratch)) == all)
    }

    @Test("Random bit flips: nothing damaged is delivered, nothing before the damage is lost")
    func bitFlips() throws {
        let scratch = TemporaryDirectory()
        let all = samplePayloads(12)
        let whole = segment(all)
        var starts: [Int] = []
        var offset = 0
        for payload in all { starts.append(offset); offset += payload.count + Frame.overhead }
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<300 {
            var damaged = whole
            let flips = Int.random(in: 1...3, using: &generator)
            var first = Int.max
            for _ in 0..<flips {
                let byte = Int.random(in: 0..<damaged.count, using: &generator)
                damaged[byte] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
                first = min(first, byte)
            }
            let delivered = payloads(try readSegment(damaged, in: scratch))
            // Only original records come out, in order, each at most once.
            var remaining = all[...]
            for payload in delivered {
                guard let index = remaining.firstIndex(of: payload) else {
                    Issue.record("trial \(trial): delivered a damaged or reordered record")
                    break
                }
                remaining = remaining[(index + 1)...]
            }
            // Every record wholly before the first flip is delivered.
            let intact = starts.indices.filter { starts[$0] + all[$0].count + Frame.overhead <= first }
            #expect(Array(delivered.prefix(intact.count)) == intact.map { all[$0] }, "trial \(trial)")
        }
    }

    @Test("A damaged record in the middle is reported and reading resumes after it")
    func damageInTheMiddle() throws {
        let scratch = TemporaryDirectory()
        let all = samplePayloads(5)
        var bytes = segment(all)
        let secondStart = all[0].count + Frame.overhead
        bytes[secondStart + Frame.headerSize + 2] ^= 0x01
        let events = try readSegment(bytes, in: scratch)
        #expect(payloads(events) == [all[0], all[2], all[3], all[4]])
        let damage = regions(events)
        #expect(damage.count == 1)
        #expect(damage[0].offset == Int64(secondStart))
        #expect(damage[0].reason == "checksum mismatch")
        #expect(damage[0].isTornTail == false)
    }

    @Test("A declared length above the maximum is refused before anything is allocated")
    func hugeLength() throws {
        let scratch = TemporaryDirectory()
        var bytes = Frame.headerMagic + [0xFF, 0xFF, 0xFF, 0x7F] + [0, 0, 0, 0]
        bytes += segment(samplePayloads(2))
        let events = try readSegment(bytes, in: scratch)
        #expect(payloads(events) == samplePayloads(2))
        #expect(regions(events).first?.reason.contains("above the maximum") == true)
    }

    /// However much damage comes first, and wherever the reader's reads end, damage runs to
    /// the next whole header magic: 1 to 3 bytes of one at the file's end belong to it (§6.2).
    @Test("A partial header magic at the end of damage belongs to the damage",
          arguments: [1, 8, 9, 20, 300_000], [1, 2, 3])
    func partialMagicAfterDamage(damageLength: Int, magicBytes: Int) throws {
        let scratch = TemporaryDirectory()
        let record = segment([samplePayloads(1)[0]])
        let tail = [UInt8](repeating: 0x41, count: damageLength) + Frame.headerMagic.prefix(magicBytes)
        for start in [[], record] {
            let events = try readSegment(start + tail, in: scratch)
            #expect(payloads(events).count == (start.isEmpty ? 0 : 1))
            let found = regions(events).map { [$0.offset, $0.length, $0.isTornTail ? 1 : 0] }
            // One region in pieces of at most 1 MiB, none of them a torn tail.
            #expect(found == [[Int64(start.count), Int64(tail.count), 0]])
        }
    }

    @Test("Garbage between records is skipped in bounded memory")
    func garbage() throws {
        let scratch = TemporaryDirectory()
        let garbage = [UInt8](repeating: 0x41, count: 3 << 20)
        let bytes = segment([samplePayloads(1)[0]]) + garbage + segment([samplePayloads(2)[1]])
        let events = try readSegment(bytes, in: scratch)
        #expect(payloads(events) == samplePayloads(2))
        // One region, in pieces of at most 1 MiB that follow each other.
        let pieces = regions(events).map { [$0.offset, $0.length] }
        let firstOffset = Int64(samplePayloads(1)[0].count + Frame.overhead)
        #expect(pieces == [[firstOffset, 1 << 20], [firstOffset + (1 << 20), 1 << 20], [firstOffset + (2 << 20), 1 << 20]])
    }
}
