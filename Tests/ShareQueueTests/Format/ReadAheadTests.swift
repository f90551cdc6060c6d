import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueSystem

/// A drain reads a large segment on a thread of its own, ahead of its sink: it must find
/// exactly what reading as it goes finds, and stop when told. (How its read errors reach
/// the drain: `ReadAheadDrainTests`.)
@Suite("Reading ahead")
struct ReadAheadTests {
    /// A segment of several megabytes with what a reader must get right: appends of one record
    /// and of many, records that break a rule, garbage, a stretch of damage over a piece's size,
    /// and a torn tail.
    static func awkwardSegment() -> [UInt8] {
        var generator = SeededGenerator(state: 7)
        var bytes: [UInt8] = []
        var index = 0
        func record() -> [UInt8] {
            index += 1
            let text = String(repeating: "x", count: Int.random(in: 0...400, using: &generator))
            return Record.encode(id: "id-\(index)", date: "2026-01-02T03:04:05.678Z", source: "test", kind: .text,
                                 text: "\(index) \(text)", jsonBytes: nil, key: nil, meta: nil)
        }
        for append in 0..<6000 {
            let frames = append % 7 == 0 ? Int.random(in: 2...40, using: &generator) : 1
            for frame in 0..<frames { Frame.append(payload: record(), to: &bytes, last: frame == frames - 1) }
            if append % 500 == 250 { bytes += Array("garbage between records".utf8) }
            if append % 900 == 450 { Frame.append(payload: Array("{\"v\":1,\"id\":\"not a record\"}".utf8), to: &bytes, last: true) }
            if append == 3000 { bytes += [UInt8](repeating: 0x41, count: SegmentReader.damagePieceSize + 12345) }
        }
        var torn: [UInt8] = []
        Frame.append(payload: record(), to: &torn, last: true)
        return bytes + torn.dropLast(5)
    }

    /// What one event is, in words: equal exactly when the events are.
    static func describe(_ read: SegmentReadAhead.Read) -> String {
        switch read.event {
        case .record(let offset, let end, let payload, let continued):
            let reading = switch read.reading {
            case .summarized(let drained)?: "summarized \(drained.id) \(drained.end)"
            case .built(let drained)?: "built \(drained.id)"
            case .refused(let reason)?: "refused \(reason)"
            case nil: "no reading"
            }
            return "record \(offset)..<\(end) \(payload.array.hashValue) \(continued) \(reading)"
        case .damaged(let region):
            return "damage \(region.offset)+\(region.length) \(region.bytes.hashValue) \(region.reason) \(region.isTornTail)"
        }
    }

    @Test("Read ahead, a segment gives the events and summaries that reading as it goes gives, and ends at the same place",
          arguments: [false, true])
    func sameEventsAsReadingInLine(_ buildingRecords: Bool) throws {
        let scratch = TemporaryDirectory()
        let path = scratch.file("sealed-1.log")
        let bytes = Self.awkwardSegment()
        #expect(Int64(bytes.count) >= SegmentReadAhead.worthwhileBytes)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let file = try FileDescriptor.open(path, .readOnly)
        defer { file.close() }

        var reader = SegmentReader(file: file, from: 0)
        var inLine: [String] = []
        while let event = try reader.next() {
            inLine.append(Self.describe(SegmentReadAhead.Read(event, segment: 1, buildingRecords: buildingRecords)))
        }
        let ahead = try SegmentReadAhead(file: file, segment: 1, from: 0, summarizing: !buildingRecords)
        defer { ahead.stop() }
        var readAhead: [String] = []
        while let read = try ahead.next() {
            // Records to build are built by the drain's thread, as `SegmentRecords` does.
            #expect(buildingRecords == (read.reading == nil) || !read.event.isRecord)
            readAhead.append(Self.describe(read.reading != nil ? read : SegmentReadAhead.Read(read.event, segment: 1, buildingRecords: true)))
        }

        #expect(inLine.count > 6000)
        #expect(inLine.filter { $0.hasPrefix("damage") }.count >= 10)
        #expect(inLine.contains { $0.contains("refused") })
        #expect(readAhead == inLine)
        #expect(ahead.positionAtEnd == reader.position)
    }

    @Test("The reading thread reads no further ahead in a segment of empty frames than in one of records: each frame counts what holding it takes")
    func emptyFramesAreCounted() throws {
        let scratch = TemporaryDirectory()
        let path = scratch.file("sealed-1.log")
        // 1,000,000 whole frames with empty payloads, 20 MB: counted by their payloads alone, all of them would be read ahead.
        let frame = segment([[]])
        _ = FileManager.default.createFile(atPath: path, contents: Data(Array([[UInt8]](repeating: frame, count: 1_000_000).joined())))
        let file = try FileDescriptor.open(path, .readOnly)
        defer { file.close() }
        let ahead = try SegmentReadAhead(file: file, segment: 1, from: 0, summarizing: true)
        defer { ahead.stop() }
        _ = try ahead.next()
        try waitUntil("the reading thread waits or reaches the end", seconds: 120) { ahead.isWaitingForRoom || ahead.positionAtEnd != nil }
        #expect(ahead.positionAtEnd == nil, "the reading thread read the whole segment ahead")
    }

    @Test("A drain that stops early stops the reading thread, however far it has read")
    func stopsEarly() throws {
        let scratch = TemporaryDirectory()
        let path = scratch.file("sealed-1.log")
        _ = FileManager.default.createFile(atPath: path, contents: Data(Self.awkwardSegment()))
        let file = try FileDescriptor.open(path, .readOnly)
        defer { file.close() }
        for taken in [0, 1, 100, 5000] {
            let ahead = try SegmentReadAhead(file: file, segment: 1, from: 0, summarizing: true)
            defer { ahead.stop() }
            for _ in 0..<taken { _ = try ahead.next() }
            ahead.stop()
            #expect(ahead.positionAtEnd == nil, "the thread read \(taken) events and was stopped before the end")
        }
    }
}

private extension SegmentEvent {
    var isRecord: Bool { if case .record = self { true } else { false } }
}
