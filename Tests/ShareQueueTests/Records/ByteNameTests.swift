import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// Names, keys and ids that Swift's `String` calls equal (canonical equivalence) but
/// whose UTF-8 bytes differ: each is its own name, key or id on every path.
struct EquivalentNames: CustomTestStringConvertible, Sendable {
    let first: String
    let second: String
    let label: String
    var testDescription: String { label }

    static let all = [
        EquivalentNames(first: "\u{E9}", second: "e\u{301}", label: "composed and decomposed é"),
        EquivalentNames(first: "\u{D55C}", second: "\u{1112}\u{1161}\u{11AB}", label: "a Hangul syllable and its jamo"),
        EquivalentNames(first: "a\u{301}\u{323}", second: "a\u{323}\u{301}", label: "two combining marks in either order"),
    ]

    /// The two names' UTF-8 bytes.
    var bytes: (first: [UInt8], second: [UInt8]) { (Array(first.utf8), Array(second.utf8)) }
}

/// Whether `haystack` holds `needle`'s bytes.
private func contains(_ haystack: some Collection<UInt8>, _ needle: String) -> Bool {
    let target = Array(needle.utf8)
    let bytes = Array(haystack)
    guard target.count <= bytes.count else { return false }
    return (0...(bytes.count - target.count)).contains { bytes[$0..<($0 + target.count)].elementsEqual(target) }
}

@Suite("Names, keys and ids compare as bytes", .runTimeLimit(minutes: 2))
struct ByteNameTests {
    @Test("The pairs are equal as Swift strings and differ as bytes", arguments: EquivalentNames.all)
    func pairsAreEquivalent(_ pair: EquivalentNames) {
        #expect(pair.first == pair.second)
        #expect(pair.bytes.first != pair.bytes.second)
    }

    @Test("share-append --meta keeps both names", arguments: EquivalentNames.all)
    func metaKeepsBothNames(_ pair: EquivalentNames) throws {
        let queue = TestQueue()
        try queue.append(["--meta", "\(pair.first)=1", "--meta", "\(pair.second)=6", "hello"])
        let line = try queue.drain().stdout
        let (lower, higher) = pair.bytes.first.lexicographicallyPrecedes(pair.bytes.second) ? (pair.first + "\":\"1", pair.second + "\":\"6")
                                                                                          : (pair.second + "\":\"6", pair.first + "\":\"1")
        // Sorted by their bytes, as a producer writes the objects it makes.
        #expect(contains(line, "\"meta\":{\"\(lower)\",\"\(higher)\"}"), "\(String(decoding: line, as: UTF8.self))")
    }

    @Test("A repeated --meta name keeps its last value", arguments: EquivalentNames.all)
    func repeatedMetaName(_ pair: EquivalentNames) throws {
        let queue = TestQueue()
        try queue.append(["--meta", "\(pair.first)=1", "--meta", "\(pair.first)=2", "hello"])
        let line = try queue.drain().stdout
        #expect(contains(line, "\"meta\":{\"\(pair.first)\":\"2\"}"), "\(String(decoding: line, as: UTF8.self))")
    }

    @Test("share-append splits --meta at the byte '=' and an attachment's path at the byte '/', even before a combining mark")
    func splitsAtBytes() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try FileManager.default.createDirectory(atPath: scratch.file("dir"), withIntermediateDirectories: true)
        let file = scratch.file("dir/\u{301}x.txt")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
        let append = try queue.append(["--meta", "k=\u{301}v", "--attach", file, "note"])
        #expect(append.status == 0, "\(append.stderr)")
        let line = try queue.drain().stdout
        #expect(contains(line, "\"meta\":{\"k\":\"\u{301}v\"}"), "\(String(decoding: line, as: UTF8.self))")
        #expect(contains(line, "\"name\":\"\u{301}x.txt\""), "\(String(decoding: line, as: UTF8.self))")
    }

    /// A record over several lines, so that a drain re-encodes it, with both names in
    /// its value, its `meta` and its unknown members, and a name that occurs twice.
    private func plantSpreadRecord(_ queue: TestQueue, _ pair: EquivalentNames) throws -> [UInt8] {
        let stored = """
            {"v":1,"id":"r1","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"json",
             "json":{"\(pair.second)":6,"\(pair.first)":1,"z":[{"\(pair.first)":true,"\(pair.second)":null}],"d":1,"d":2},
             "meta":{"\(pair.second)":"6","\(pair.first)":"1"},"x\(pair.second)":1,"x\(pair.first)":2}
            """
        try queue.appendStored([Array(stored.utf8)])
        let expected = """
            {"v":1,"id":"r1","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"json",\
            "json":{"\(pair.second)":6,"\(pair.first)":1,"z":[{"\(pair.first)":true,"\(pair.second)":null}],"d":2},\
            "meta":{"\(pair.second)":"6","\(pair.first)":"1"},"x\(pair.second)":1,"x\(pair.first)":2}
            """
        return Array(expected.utf8)
    }

    @Test("Re-encoding keeps every member in its order with its exact name; a repeated name keeps its last value", arguments: EquivalentNames.all)
    func reEncodingKeepsMembers(_ pair: EquivalentNames) throws {
        let queue = TestQueue()
        let expected = try plantSpreadRecord(queue, pair)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(Array(drain.stdout) == expected + [0x0A], "\(String(decoding: drain.stdout, as: UTF8.self))")
    }

    @Test("The store's json, meta and extra columns keep every member with its exact name", arguments: EquivalentNames.all)
    func storeColumnsKeepMembers(_ pair: EquivalentNames) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        _ = try plantSpreadRecord(queue, pair)
        let db = scratch.file("inbox.sqlite")
        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 0, "\(drain.stderr)")
        let rows = try sqlite(db, "SELECT json, meta, extra FROM records")
        let expected = "{\"\(pair.second)\":6,\"\(pair.first)\":1,\"z\":[{\"\(pair.first)\":true,\"\(pair.second)\":null}],\"d\":2}"
            + "|{\"\(pair.second)\":\"6\",\"\(pair.first)\":\"1\"}|{\"x\(pair.second)\":1,\"x\(pair.first)\":2}"
        #expect(rows.map { Array($0.utf8) } == [Array(expected.utf8)], "\(rows)")
    }

    @Test("Coalescing keeps the keys apart", arguments: EquivalentNames.all)
    func coalescingKeepsKeysApart(_ pair: EquivalentNames) throws {
        let queue = TestQueue()
        let older = try queue.append(["--key", pair.first, "older"]).lines
        let other = try queue.append(["--key", pair.second, "other"]).lines
        let newer = try queue.append(["--key", pair.first, "newer"]).lines
        try #require(older.count == 1 && other.count == 1 && newer.count == 1)
        let drain = try queue.drain(["--coalesce"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == other + newer)
    }

    @Test("Coalescing compares ids as bytes: a record whose id only looks like the newest one's is superseded", arguments: EquivalentNames.all)
    func coalescingComparesIDsAsBytes(_ pair: EquivalentNames) throws {
        let queue = TestQueue()
        func record(_ id: String, _ text: String) -> [UInt8] {
            Record.encode(id: id, date: "2026-01-02T03:04:05.678Z", source: "s", kind: .text, text: text, jsonBytes: nil, key: "k", meta: nil)
        }
        try queue.appendStored([record("id-" + pair.first, "older"), record("id-" + pair.second, "newer")])
        let drain = try queue.drain(["--coalesce"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout).map { Array($0.utf8) } == [Array(("id-" + pair.second).utf8)])
    }

    @Test("The store's latest table keeps one row for each key", arguments: EquivalentNames.all)
    func storeLatestKeepsKeysApart(_ pair: EquivalentNames) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["--key", pair.first, "one"])
        try queue.append(["--key", pair.second, "two"])
        let db = scratch.file("inbox.sqlite")
        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 0, "\(drain.stderr)")
        let rows = try sqlite(db, "SELECT hex(key), text FROM latest ORDER BY key")
        let hex = { (text: String) in text.utf8.map { String(format: "%02X", $0) }.joined() }
        let expected = [(pair.first, "one"), (pair.second, "two")].sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
        #expect(rows == expected.map { "\(hex($0.0))|\($0.1)" })
    }

    @Test("--if-changed keeps the keys and the contents apart", arguments: EquivalentNames.all)
    func ifChangedKeepsKeysApart(_ pair: EquivalentNames) throws {
        let queue = TestQueue()
        let first = try queue.append(["--if-changed", "--key", pair.first, "same"]).lines
        let second = try queue.append(["--if-changed", "--key", pair.second, "same"]).lines
        #expect(first != second)
        let json = try queue.append(["--if-changed", "--key", "k", "--json"], stdin: "{\"\(pair.first)\":1}").lines
        let changed = try queue.append(["--if-changed", "--key", "k", "--json"], stdin: "{\"\(pair.second)\":1}").lines
        #expect(json != changed)
        let text = try queue.append(["--if-changed", "--key", "t", pair.first]).lines
        let changedText = try queue.append(["--if-changed", "--key", "t", pair.second]).lines
        #expect(text != changedText)
        #expect(try ids(in: queue.drain().stdout).count == 6)
    }

    @Test("A requeued dead letter makes both keys publish again", arguments: EquivalentNames.all)
    func requeueForgetsBothKeys(_ pair: EquivalentNames) throws {
        let queue = TestQueue()
        try queue.append(["--if-changed", "--key", pair.second, "other"])
        try queue.append(["--if-changed", "--key", pair.first, "old"])
        #expect(try queue.drain(["--exec", "exit 9", "--max-attempts", "1"]).status == 0)
        #expect(try queue.deadLetters().count == 2)
        let current = try queue.append(["--if-changed", "--key", pair.first, "new"]).lines
        #expect(try queue.drain(["--requeue-dead"]).status == 0)
        // The letter put back is now the newest record of its key: publishing "new" again must append.
        let again = try queue.append(["--if-changed", "--key", pair.first, "new"]).lines
        #expect(again != current)
    }

    struct TwoNames: SharedContent, Equatable {
        static let contentKind = Record.Kind(rawValue: "two-names")
        var composed: Int
        var decomposed: Int
        enum CodingKeys: String, CodingKey {
            case composed = "\u{E9}"
            case decomposed = "e\u{301}"
        }
    }

    @Test("A typed value whose coding keys are equivalent names keeps both values")
    func typedValueKeepsBothNames() throws {
        let queue = TestQueue()
        let directory = try QueueDirectory(path: queue.path)
        let value = TwoNames(composed: 1, decomposed: 6)
        _ = try QueueAppender(directory: directory).append(value, source: "test")
        var drained: [TwoNames] = []
        try QueueDrainer(directory: directory).drain(TwoNames.self) { drained += $0.map(\.value) }
        #expect(drained == [value])
        // Decoded from a record written by someone else, too.
        let stored = Array(#"{"v":1,"id":"r","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"two-names","json":{"e\u0301":6,"\u00e9":1}}"#.utf8)
        let other = TestQueue()
        try other.appendStored([stored])
        drained = []
        try QueueDrainer(directory: try QueueDirectory(path: other.path)).drain(TwoNames.self) { drained += $0.map(\.value) }
        #expect(drained == [value])
    }

    @Test("A JSON value read and written back is the same bytes, whatever its names", arguments: EquivalentNames.all)
    func valueRoundTrip(_ pair: EquivalentNames) throws {
        let text = Array("{\"\(pair.second)\":{\"b\":1,\"\(pair.first)\":[\"\(pair.second)\"]},\"\(pair.first)\":\"x\",\"a\":null}".utf8)
        let value = try JSONText(validating: text).value
        #expect(value.compactJSON == text)
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(members.count == 3)
        #expect(members[pair.first] == .string("x"))
        #expect(members[pair.second] != .string("x"))
        // Equal as values only when equal as bytes.
        #expect(JSONValue.string(pair.first) != JSONValue.string(pair.second))
        let swapped = try JSONText(validating: Array("{\"\(pair.first)\":1}".utf8)).value
        let other = try JSONText(validating: Array("{\"\(pair.second)\":1}".utf8)).value
        #expect(swapped != other)
        #expect(Record.Kind(rawValue: pair.first) != Record.Kind(rawValue: pair.second))
    }
}
