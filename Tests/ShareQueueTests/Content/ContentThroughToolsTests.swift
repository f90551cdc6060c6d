import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// Typed values through the real tools: share-append takes their JSON, host-drain
/// hands them on as JSON Lines and into its store, and they decode as they went in.
@Suite("Content through the tools")
struct ContentThroughToolsTests {
    /// The compact JSON the library stores for `value`.
    private func json<Value: Encodable>(_ value: Value) throws -> String {
        guard case .value(let json, _) = try RecordDraft(encoding: value, kind: "test", source: "test").content else { return "" }
        return String(decoding: json.bytes, as: UTF8.self)
    }

    @Test("Every kind of value survives share-append, host-drain's JSON Lines and its store")
    func everyKind() throws {
        let queue = TestQueue()
        let value = EveryKind()
        // One from the library, one from share-append given the same JSON.
        try QueueAppender(directory: try QueueDirectory(path: queue.path)).append(value, source: "library")
        #expect(try queue.append(["--json"], stdin: try json(value)).status == 0)
        let store = queue.scratch.file("host.sqlite")
        #expect(try queue.drain(["--store", store]).status == 0)
        // The same records again, now to standard output.
        try QueueAppender(directory: try QueueDirectory(path: queue.path)).append(value, source: "library")
        #expect(try queue.append(["--json"], stdin: try json(value)).status == 0)
        let lines = try queue.drain().lines
        #expect(lines.count == 2)
        for line in lines {
            #expect(try Record(jsonBytes: Array(line.utf8)).decode(EveryKind.self) == value)
        }
        // The store keeps the JSON with its object keys sorted, every number and string byte as it was.
        let stored = try run("/usr/bin/sqlite3", [store, "SELECT hex(json) FROM records ORDER BY rowid"], in: queue.scratch).lines
        #expect(stored.count == 2)
        for hex in stored {
            let bytes = stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
            let record = Record(id: "r", date: "d", source: "s", kind: .json, json: try JSONText(validating: bytes))
            #expect(try record.decode(EveryKind.self) == value)
        }
    }

    @Test("A record from a newer extension decodes in an older host, and its new field stays in the queue, JSON Lines and the store")
    func newerProducer() throws {
        let queue = TestQueue()
        let directory = try QueueDirectory(path: queue.path)
        let newer = NoteV2(title: "t", body: "b", pinned: true)
        try QueueAppender(directory: directory).append(newer, source: "newer-extension")
        // JSON Lines keep the field.
        let line = try #require(try queue.drain().lines.first)
        #expect(line.contains(#""json":{"body":"b","pinned":true,"title":"t"}"#), "\(line)")
        #expect(try Record(jsonBytes: Array(line.utf8)).decode(NoteV1.self) == NoteV1(title: "t", body: "b"))
        // The store keeps it.
        try QueueAppender(directory: directory).append(newer, source: "newer-extension")
        let store = queue.scratch.file("host.sqlite")
        #expect(try queue.drain(["--store", store]).status == 0)
        let json = try run("/usr/bin/sqlite3", [store, "SELECT json FROM records"], in: queue.scratch).output
        #expect(json.contains(#""pinned":true"#), "\(json)")
        // The older host's typed drain takes it.
        try QueueAppender(directory: directory).append(newer, source: "newer-extension")
        var notes: [NoteV1] = []
        try QueueDrainer(directory: directory).drain(NoteV1.self) { notes += $0.map(\.value) }
        #expect(notes == [NoteV1(title: "t", body: "b")])
        // And a newer host reads an older extension's record, the new field absent.
        try QueueAppender(directory: directory).append(NoteV1(title: "old", body: "x"), source: "older-extension")
        var newerNotes: [NoteV2] = []
        try QueueDrainer(directory: directory).drain(NoteV2.self) { newerNotes += $0.map(\.value) }
        #expect(newerNotes == [NoteV2(title: "old", body: "x", pinned: nil)])
    }

    @Test("A JSON value decodes with its numbers exactly as share-append was given them")
    func exactNumbers() throws {
        let queue = TestQueue()
        let literal = #"{"big":123456789012345678901234567890,"decimal":1.50,"huge":1e400,"max":18446744073709551615}"#
        #expect(try queue.append(["--json"], stdin: literal).status == 0)
        let line = try #require(try queue.drain().lines.first)
        let value = try Record(jsonBytes: Array(line.utf8)).decode(JSONValue.self)
        #expect(value == .object(["big": .number("123456789012345678901234567890"), "decimal": .number("1.50"),
                                  "huge": .number("1e400"), "max": .number("18446744073709551615")]))
        struct Maximum: Decodable { var max: UInt64 }
        #expect(try Record(jsonBytes: Array(line.utf8)).decode(Maximum.self).max == UInt64.max)
    }
}
