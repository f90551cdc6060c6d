import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// How typed values are stored: the JSON each Swift value becomes, and back.
@Suite("Content coding")
struct ContentCodingTests {
    /// The stored `json` of a value appended through the library.
    private func storedJSON<Value: Encodable>(_ value: Value) throws -> String {
        guard case .value(let json, _) = try RecordDraft(encoding: value, kind: "test", source: "test").content else {
            Issue.record("not a value draft")
            return ""
        }
        return String(decoding: json.bytes, as: UTF8.self)
    }

    @Test("Every kind of value comes back equal through the library")
    func everyKindThroughTheLibrary() throws {
        let queue = TestQueue()
        let directory = try QueueDirectory(path: queue.path)
        let values = [EveryKind(), EveryKind(optionalInner: .init(name: "x", level: 1))]
        let ids = try QueueAppender(directory: directory).append(contentsOf: values, source: "test")
        var drained: [DrainedValue<EveryKind>] = []
        let summary = try QueueDrainer(directory: directory).drain(EveryKind.self) { drained += $0 }
        #expect(summary.delivered == 2)
        #expect(drained.map(\.value) == values)
        #expect(drained.map(\.id) == ids)
        #expect(drained.allSatisfy { $0.source == "test" })
    }

    @Test("Integers of every width are written in full")
    func integers() throws {
        #expect(try storedJSON([UInt64.max]) == "[18446744073709551615]")
        #expect(try storedJSON([Int64.min]) == "[-9223372036854775808]")
        #expect(try storedJSON([UInt128.max]) == "[340282366920938463463374607431768211455]")
    }

    @Test("Foundation values have their documented encodings")
    func foundationValues() throws {
        struct Shared: Codable {
            var date = Date(timeIntervalSince1970: 1_764_427_940.123)
            var url = URL(string: "https://example.com/path?q=1")!
            var uuid = UUID(uuidString: "3b1a7a47-62e9-44de-8afc-c39f9309e7f9")!
            var data = Data([0, 1, 2, 253, 254, 255])
            var decimal = Decimal(string: "1.25")!
        }
        #expect(try storedJSON(Shared()) == #"{"data":"AAEC/f7/","date":"2025-11-29T14:52:20.123Z","decimal":1.25,"url":"https://example.com/path?q=1","uuid":"3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9"}"#)
    }

    @Test("Members are sorted by name, as in every JSON value the package writes, and nil optionals are left out")
    func memberOrder() throws {
        struct Ordered: Codable {
            var zebra = 1
            var apple: String? = nil
            var mango = "m"
        }
        #expect(try storedJSON(Ordered()) == #"{"mango":"m","zebra":1}"#)
    }

    @Test("A JSON value keeps every number literal as written")
    func jsonValueLiterals() throws {
        let literal = #"{"big":123456789012345678901234567890,"decimal":1.50,"huge":1e400,"negative":-0.0}"#
        let text = try JSONText(validating: Array(literal.utf8))
        #expect(try storedJSON(text.value) == literal)
        let record = Record(id: "r", date: "2026-11-30T00:00:00.000Z", source: "s", kind: .json, json: text)
        #expect(try record.decode(JSONValue.self) == text.value)
    }

    @Test("A value JSON cannot hold is refused before anything is written", arguments: [Double.nan, .infinity, -.infinity])
    func nonFinite(_ number: Double) throws {
        #expect(throws: ShareQueueError.self) { try RecordDraft(encoding: ["x": number], kind: "test", source: "test") }
    }

    @Test("Dates are read in the ISO-8601 forms other producers write")
    func dateForms() throws {
        struct Dated: Codable { var at: Date }
        func read(_ text: String) throws -> Date {
            let record = Record(id: "r", date: "d", source: "s", kind: .json, jsonValue: .object(["at": .string(text)]))
            let dated: Dated = try record.decode(Dated.self)
            return dated.at
        }
        let moment = Date(timeIntervalSince1970: 1_764_427_940.123)
        #expect(try read("2025-11-29T14:52:20.123Z") == moment)
        #expect(try read("2025-11-29T15:52:20.123+01:00") == moment)
        #expect(try read("2025-11-29T14:52:20Z") == Date(timeIntervalSince1970: 1_764_427_940))
        #expect(abs(try read("2025-11-29T14:52:20.123456789Z").timeIntervalSince1970 - 1_764_427_940.123456789) < 1e-6)
        #expect(try read("0001-01-01T00:00:00.000Z") == Date(timeIntervalSince1970: -62_135_596_800))
        for bad in ["2025-02-29T00:00:00Z", "2025-11-29 14:52:20Z", "2025-11-29T24:00:00Z", "2025-11-29T14:52:20.Z", "2025-11-29T14:52:20", "yesterday"] {
            #expect(throws: ShareQueueError.self, "\(bad)") { try read(bad) }
        }
    }

    @Test("Decoding errors say what and where")
    func decodingErrors() throws {
        let record = Record(id: "r1", date: "d", source: "s", kind: .json, jsonValue: .object(["url": .string("https://x"), "title": .number("5")]))
        do {
            _ = try record.decode(PlainLink.self)
            Issue.record("decoded a number as a string")
        } catch {
            #expect(error.code == .badData)
            #expect(error.message.contains("at .title"), "\(error.message)")
        }
        let tooBig = Record(id: "r2", date: "d", source: "s", kind: .json, jsonValue: .array([.number("256")]))
        #expect(throws: ShareQueueError.self) { try tooBig.decode([UInt8].self) }
        let text = Record(id: "r3", date: "d", source: "s", kind: .text, text: "hello")
        #expect(throws: ShareQueueError.self) { try text.decode(String.self) }
    }

    @Test("Integers written with a fraction or an exponent read as integers when exact")
    func integerSpellings() throws {
        let record = Record(id: "r", date: "d", source: "s", kind: .json, jsonValue: .array([.number("2.0"), .number("1e3"), .number("-0")]))
        #expect(try record.decode([Int].self) == [2, 1000, 0])
        let inexact = Record(id: "r", date: "d", source: "s", kind: .json, jsonValue: .array([.number("2.5")]))
        #expect(throws: ShareQueueError.self) { try inexact.decode([Int].self) }
    }

    @Test("A content type's records are of its declared kind; a value of another type is of the kind its append names")
    func kinds() throws {
        #expect(Record.Kind(for: EveryKind.self).rawValue == "test.every-kind")
        #expect(Record.Kind(for: PlainLink.self).rawValue == "PlainLink")
        guard case .value(_, let kind) = try RecordDraft(encoding: PlainLink(url: URL(string: "https://x")!, title: "t"), source: "s").content,
              case .value(_, let boxKind) = try RecordDraft(encoding: Box(value: 1), kind: "box", source: "s").content else {
            Issue.record("not a value draft")
            return
        }
        #expect(kind.rawValue == "PlainLink" && boxKind.rawValue == "box")

        let queue = TestQueue()
        let directory = try QueueDirectory(path: queue.path)
        let appender = try QueueAppender(directory: directory)
        try appender.append(Box(value: 1), kind: "box", source: "s")
        try appender.append(Box(value: "x"), kind: "box.text", source: "s")
        var ints: [Int] = []
        try QueueDrainer(directory: directory).drain(Box<Int>.self, kind: "box", otherKinds: .setAside) { ints += $0.map(\.value.value) }
        #expect(ints == [1])
        try appender.append(Box(value: 2), kind: "box", source: "s")
        let failure = #expect(throws: ShareQueueError.self) {
            try QueueDrainer(directory: directory).drain(Box<String>.self, kind: "box.text") { _ in }
        }
        #expect((failure?.underlying as? UnhandledKind)?.kind == "box")
    }

    @Test("An explicit kind that names a built-in kind or breaks the rules is refused, blocking or awaited, and nothing is appended",
          arguments: ["text", "url", "file", "", "tab\there", String(repeating: "k", count: 257)])
    func explicitKindsAreChecked(_ kind: String) async throws {
        let queue = TestQueue()
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
        let blocking = #expect(throws: ShareQueueError.self) { try appender.append(Box(value: 1), kind: Record.Kind(rawValue: kind), source: "s") }
        #expect(blocking?.code == .invalidArgument)
        let awaited = await #expect(throws: ShareQueueError.self) { try await appender.append(Box(value: 1), kind: Record.Kind(rawValue: kind), source: "s") }
        #expect(awaited?.code == .invalidArgument)
        #expect(queue.bytes().isEmpty)
    }

    @Test("A content kind that a type computes is read at every append")
    func computedKind() throws {
        let queue = TestQueue()
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
        for round in 1...3 {
            ComputedKind.round = round
            try appender.append(ComputedKind(), source: "s")
        }
        var sink = AppSurfaceTests.RecordingSink()
        _ = try QueueDrainer(directory: try QueueDirectory(path: queue.path)).drain(into: &sink)
        #expect(sink.records.map(\.record.kind.rawValue) == ["round-1", "round-2", "round-3"])
    }

    @Test("Kinds beside the built-in ones are taken: as long but other, or longer", arguments: ["json", "texts", "tex", "fil", "url.", "Text", "ünï", String(repeating: "k", count: 256)])
    func kindsBesideReserved(_ kind: String) throws {
        let queue = TestQueue()
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
        try appender.append(RecordDraft(.value(try JSONText(validating: Array("{}".utf8)), kind: Record.Kind(rawValue: kind)), source: "s"))
        #expect(!queue.bytes().isEmpty)
    }

    @Test("A content kind that names a built-in kind without JSON, or holds a control character, is refused",
          arguments: ["text", "url", "file", "", "\u{1}", "link\ntext", "tab\there", "delete\u{7F}", "a kind longer than fifteen bytes\u{1F}",
                      String(repeating: "k", count: 257)])
    func reservedKinds(_ kind: String) throws {
        let queue = TestQueue()
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
        let draft = RecordDraft(.value(try JSONText(validating: Array("{}".utf8)), kind: Record.Kind(rawValue: kind)), source: "s")
        #expect(throws: ShareQueueError.self) { try appender.append(draft) }
        #expect(queue.bytes().isEmpty)
    }

    @Test("JSONValue through Foundation's coders keeps every 64-bit integer")
    func jsonValueThroughFoundation() throws {
        let value: JSONValue = .array([.number("18446744073709551615"), .number("-9223372036854775808"), .number("42")])
        let encoded = try JSONEncoder().encode(value)
        #expect(String(decoding: encoded, as: UTF8.self) == "[18446744073709551615,-9223372036854775808,42]")
        #expect(try JSONDecoder().decode(JSONValue.self, from: encoded) == value)
        #expect(throws: (any Error).self) { try JSONEncoder().encode(JSONValue.number("not a number")) }
    }
}

/// Publishing typed values: equal values are equal bytes, so an unchanged value appends nothing.
@Suite("Publishing typed values")
struct TypedPublishTests {
    struct Wallpaper: SharedContent, Equatable {
        static let contentKind = Record.Kind(rawValue: "wallpaper")
        var name: String
        var colors: [String: Int]
    }

    @Test("An equal value publishes once, however its dictionaries were built")
    func equalValuesPublishOnce() throws {
        let queue = TestQueue()
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
        var forward: [String: Int] = [:]
        for number in 0..<64 { forward["color \(number)"] = number }
        var backward: [String: Int] = Dictionary(minimumCapacity: 1000)
        for number in (0..<64).reversed() { backward["color \(number)"] = number }
        try #require(Array(forward.keys) != Array(backward.keys), "the two dictionaries list their keys in the same order")
        let first = try appender.appendIfChanged(RecordDraft(encoding: Wallpaper(name: "dunes", colors: forward), source: "widget", key: "current"))
        let second = try appender.appendIfChanged(RecordDraft(encoding: Wallpaper(name: "dunes", colors: backward), source: "widget", key: "current"))
        #expect(first.appended && !second.appended)
        #expect(second.id == first.id)
        let third = try appender.appendIfChanged(RecordDraft(encoding: Wallpaper(name: "waves", colors: backward), source: "widget", key: "current"))
        #expect(third.appended)
        var published: [Wallpaper] = []
        try QueueDrainer(directory: try QueueDirectory(path: queue.path)).drain(Wallpaper.self) { published += $0.map(\.value) }
        #expect(published.map(\.name) == ["dunes", "waves"])
    }
}

/// A value of a type that is not `SharedContent`, appended and drained under an explicit kind.
private struct Box<Wrapped: Codable & Sendable>: Codable, Sendable {
    var value: Wrapped
}

/// A content kind computed at every read, from the round a test is in.
private struct ComputedKind: SharedContent {
    nonisolated(unsafe) static var round = 0
    static var contentKind: Record.Kind { Record.Kind(rawValue: "round-\(round)") }
}
