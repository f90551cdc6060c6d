import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// Decoding typed content where a drain finds it, in the stored bytes, agrees with
/// decoding the record's parsed value: the same values, the same errors at the same paths.
@Suite("Content decoding")
struct ContentDecodingTests {
    /// A stored record holding `content` as its `json`, exactly as given.
    private static func stored(_ content: String) -> [UInt8] {
        Array(#"{"v":1,"id":"r1","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"k","json":"#.utf8) + Array(content.utf8) + [UInt8(ascii: "}")]
    }

    /// `content` decoded as `type` from the stored bytes as a drain delivers them, and from the record's parsed value;
    /// each a value or the error's message.
    private func bothWays<Value: Decodable>(_ content: String, as type: Value.Type) throws -> (drained: Result<Value, ShareQueueError>, parsed: Result<Value, ShareQueueError>) {
        let bytes = Self.stored(content)
        let drained = DrainedRecord(summary: try RecordSummary(jsonBytes: bytes), storedJSON: bytes, end: DrainPosition(segment: 1, offset: 0))
        let record = try Record(jsonBytes: bytes)
        return (Result { () throws(ShareQueueError) in try drained.decode(type) }, Result { () throws(ShareQueueError) in try record.decode(type) })
    }

    /// Both ways give `expected`.
    private func expect<Value: Decodable & Equatable>(_ content: String, as type: Value.Type, _ expected: Value,
                                                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (drained, parsed) = try bothWays(content, as: type)
        #expect(try drained.get() == expected, sourceLocation: sourceLocation)
        #expect(try parsed.get() == expected, sourceLocation: sourceLocation)
    }

    /// Both ways fail with `message`.
    private func expectFailure<Value: Decodable>(_ content: String, as type: Value.Type, _ message: String,
                                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (drained, parsed) = try bothWays(content, as: type)
        for result in [drained, parsed] {
            switch result {
            case .success(let value): Issue.record("decoded \(value)", sourceLocation: sourceLocation)
            case .failure(let error):
                #expect(error.code == .badData, sourceLocation: sourceLocation)
                #expect(error.message == "record r1 does not decode as \(Value.self): \(message)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("Whitespace, escaped names and escaped strings read as their text")
    func escapes() throws {
        try expect(#" { "t\u0069tle" : "a\"b\\c\/\u00e9\ud83d\udc4d\n" ,"url" : "https://x/\u00e9" } "#, as: PlainLink.self,
                   PlainLink(url: URL(string: "https://x/é")!, title: "a\"b\\c/é👍\n"))
        try expect(#"["\u0000", "é e\u0301", "👍🏽", ""]"#, as: [String].self, ["\u{0}", "é e\u{301}", "👍🏽", ""])
    }

    @Test("A name that occurs twice counts with its last value, listed once where it first occurred")
    func duplicateNames() throws {
        try expect(#"{"url":"https://a","title":"first","title":"second"}"#, as: PlainLink.self, PlainLink(url: URL(string: "https://a")!, title: "second"))
        try expect(#"{"b":1,"a":2,"b":3}"#, as: JSONMembers<Int>.self, ["b": 3, "a": 2])
        try expect(#"{"a":1,"\u0061":2}"#, as: [String: Int].self, ["a": 2])
    }

    @Test("A large object finds its members by name the same way, the last of a repeated name winning")
    func largeObject() throws {
        let members = (0..<40).map { #""n\#($0)":\#($0)"# } + [#""n7":700"#, #""\u006e8":800"#]
        var expected: JSONMembers<Int> = [:]
        for number in 0..<40 { expected["n\(number)"] = number }
        expected["n7"] = 700
        expected["n8"] = 800
        try expect("{" + members.joined(separator: ",") + "}", as: JSONMembers<Int>.self, expected)
        struct Picked: Decodable, Equatable { var n7: Int, n8: Int, n39: Int }
        try expect("{" + members.joined(separator: ",") + "}", as: Picked.self, Picked(n7: 700, n8: 800, n39: 39))
    }

    @Test("A record built in code whose value is not JSON says so, rather than decoding it")
    func valueBuiltInCode() throws {
        let record = Record(id: "r1", date: "d", source: "s", kind: .json, jsonValue: .array([.number("1,2")]))
        let failure = #expect(throws: ShareQueueError.self) { try record.decode([Int].self) }
        #expect(failure?.code == .badData)
        #expect(failure?.message.hasPrefix("record r1 does not decode as Array<Int>: its value is not JSON") == true, "\(failure?.message ?? "")")
    }

    @Test("Names that Swift calls equal are two members", arguments: EquivalentNames.all)
    func equivalentNames(_ pair: EquivalentNames) throws {
        let (drained, parsed) = try bothWays(#"{"\#(pair.second)":6,"\#(pair.first)":1}"#, as: JSONMembers<Int>.self)
        for result in [drained, parsed] {
            let members = try result.get()
            #expect(members.map { Array($0.name.utf8) } == [pair.bytes.second, pair.bytes.first])
            #expect(members.map(\.value) == [6, 1])
        }
    }

    @Test("Missing keys, extra keys, nulls and wrong types fail or pass as before")
    func keys() throws {
        try expectFailure(#"{"url":"https://a"}"#, as: PlainLink.self, "no 'title'")
        try expect(#"{"url":"https://a","title":"t","extra":{"deep":[1,2,{"x":null}]}}"#, as: PlainLink.self, PlainLink(url: URL(string: "https://a")!, title: "t"))
        try expectFailure(#"{"url":"https://a","title":5}"#, as: PlainLink.self, "expected a string, found a number at .title")
        try expectFailure(#"{"url":"https://a","title":null}"#, as: PlainLink.self, "expected a string, found null at .title")
        try expectFailure(#"{"url":"https://a","title":["t"]}"#, as: PlainLink.self, "expected a string, found an array at .title")
        try expectFailure(#"[1]"#, as: PlainLink.self, "expected an object, found an array")
        try expectFailure(#"null"#, as: PlainLink.self, "expected an object, found null")
        try expectFailure(#"{"title":"t","pinned":"yes","body":""}"#, as: NoteV2.self, "expected a boolean, found a string at .pinned")
        try expect(#"{"title":"t","pinned":null,"body":""}"#, as: NoteV2.self, NoteV2(title: "t", body: "", pinned: nil))
        try expect(#"{"title":"t","body":""}"#, as: NoteV2.self, NoteV2(title: "t", body: "", pinned: nil))
    }

    @Test("Numbers read from their literal text, exactly or not at all")
    func numbers() throws {
        try expect("[9223372036854775807,-9223372036854775808,-0,2.0,1e3,1E+2,0]", as: [Int].self, [.max, .min, 0, 2, 1000, 100, 0])
        try expectFailure("[9223372036854775808]", as: [Int].self, "the number 9223372036854775808 does not fit Int at [0]")
        try expectFailure("[1,2.5]", as: [Int].self, "the number 2.5 does not fit Int at [1]")
        try expectFailure("[256]", as: [UInt8].self, "the number 256 does not fit UInt8 at [0]")
        try expectFailure("[-1]", as: [UInt].self, "the number -1 does not fit UInt at [0]")
        try expectFailure("[1e20]", as: [Int].self, "the number 1e20 does not fit Int at [0]")
        try expect("[18446744073709551615]", as: [UInt64].self, [.max])
        try expect("[340282366920938463463374607431768211455]", as: [UInt128].self, [.max])
        try expect("[-170141183460469231731687303715884105728]", as: [Int128].self, [.min])
        try expect("[0.1,1e-320,-0.0,123456789012345678901234567890]", as: [Double].self, [0.1, Double("1e-320")!, -0.0, Double("123456789012345678901234567890")!])
        try expectFailure("[1e400]", as: [Double].self, "the number 1e400 does not fit Double at [0]")
        try expectFailure("[1e39]", as: [Float].self, "the number 1e39 does not fit Float at [0]")
        try expect("[12345678901234567890.123456789]", as: [Decimal].self, [Decimal(string: "12345678901234567890.123456789")!])
        try expectFailure(#"["1"]"#, as: [Int].self, "expected an integer, found a string at [0]")
        let long = String(repeating: "9", count: 150)
        try expectFailure("[\(long)]", as: [Int].self, "the number \(long.prefix(100)) does not fit Int at [0]")
    }

    @Test("Foundation's values read in their documented encodings, and say what is wrong")
    func foundationValues() throws {
        struct Shared: Codable, Equatable {
            var date: Date
            var url: URL
            var uuid: UUID
            var data: Data
        }
        let good = #"{"data":"AAEC/f7/","date":"2025-11-29T14:52:20.123Z","url":"https://example.com/path?q=1","uuid":"3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9"}"#
        try expect(good, as: Shared.self, Shared(date: Date(timeIntervalSince1970: 1_764_427_940.123), url: URL(string: "https://example.com/path?q=1")!,
                                                 uuid: UUID(uuidString: "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9")!, data: Data([0, 1, 2, 253, 254, 255])))
        try expect(#"["2025-11-29T15:52:20.123+01:00","2025-11-29T14:52:20\u002e123Z"]"#, as: [Date].self,
                   [Date(timeIntervalSince1970: 1_764_427_940.123), Date(timeIntervalSince1970: 1_764_427_940.123)])
        try expectFailure(#"["yesterday"]"#, as: [Date].self, "not a date such as 2026-11-29T14:52:20.123Z or 2026-11-29T15:52:20.123+01:00: 'yesterday' at [0]")
        // The grammar of a record's date (Format.md 12.2): any number of fraction digits, the year 0; no
        // second 60, and upper-case T and Z only.
        try expect(#"["2025-11-29T14:52:20.1230000000001Z","0000-03-01T00:00:00Z"]"#, as: [Date].self,
                   [Date(timeIntervalSince1970: 1_764_427_940.123), Date(timeIntervalSince1970: -62_162_035_200)])
        try expectFailure(#"["2016-12-31T23:59:60Z"]"#, as: [Date].self, "not a date such as 2026-11-29T14:52:20.123Z or 2026-11-29T15:52:20.123+01:00: '2016-12-31T23:59:60Z' at [0]")
        try expectFailure(#"["2025-11-29t14:52:20Z"]"#, as: [Date].self, "not a date such as 2026-11-29T14:52:20.123Z or 2026-11-29T15:52:20.123+01:00: '2025-11-29t14:52:20Z' at [0]")
        try expectFailure(#"[5]"#, as: [Date].self, "expected a date as a string, found a number at [0]")
        try expectFailure(#"{"u":""}"#, as: [String: URL].self, "not a URL: '' at .u")
        try expectFailure(#"["x"]"#, as: [UUID].self, "not a UUID: 'x' at [0]")
        try expectFailure(#"["!!"]"#, as: [Data].self, "not Base64 data at [0]")
        try expectFailure(#"[true]"#, as: [Data].self, "expected Base64 data as a string, found a boolean at [0]")
        try expectFailure(#"["1"]"#, as: [Decimal].self, "expected a number, found a string at [0]")
        try expect(#"{"a":[1.50,{"b":null}],"c":1e400}"#, as: JSONValue.self,
                   .object(["a": .array([.number("1.50"), .object(["b": .null])]), "c": .number("1e400")]))
    }

    /// Reads its value through every kind of container a decoder gives.
    struct Containers: Decodable, Equatable {
        var keys: [String]
        var hasMissing: Bool
        var nilValue: Bool
        var nested: Int
        var list: [Int]
        var listNil: Bool
        var superValue: String
        var superForKey: Int
        var superMissing: Bool
        var elementSuper: String
        var afterEnd: Bool

        enum Key: String, CodingKey { case a, b, n, list, `super`, s }
        enum Inner: String, CodingKey { case x }

        init(keys: [String], hasMissing: Bool, nilValue: Bool, nested: Int, list: [Int], listNil: Bool, superValue: String,
             superForKey: Int, superMissing: Bool, elementSuper: String, afterEnd: Bool) {
            (self.keys, self.hasMissing, self.nilValue, self.nested, self.list, self.listNil) = (keys, hasMissing, nilValue, nested, list, listNil)
            (self.superValue, self.superForKey, self.superMissing, self.elementSuper, self.afterEnd) = (superValue, superForKey, superMissing, elementSuper, afterEnd)
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            keys = container.allKeys.map(\.stringValue)
            hasMissing = container.contains(.s)
            nilValue = try container.decodeNil(forKey: .n)
            nested = try container.nestedContainer(keyedBy: Inner.self, forKey: .a).decode(Int.self, forKey: .x)
            var unkeyed = try container.nestedUnkeyedContainer(forKey: .list)
            listNil = try unkeyed.decodeNil()
            list = []
            while !unkeyed.isAtEnd, unkeyed.currentIndex < 3 { list.append(try unkeyed.decode(Int.self)) }
            elementSuper = try unkeyed.superDecoder().singleValueContainer().decode(String.self)
            afterEnd = unkeyed.isAtEnd && unkeyed.count == 5
            superValue = try container.superDecoder().singleValueContainer().decode(String.self)
            superForKey = try container.superDecoder(forKey: .a).container(keyedBy: Inner.self).decode(Int.self, forKey: .x)
            superMissing = try container.superDecoder(forKey: .s).singleValueContainer().decodeNil()
        }
    }

    @Test("Every kind of container: nested, unkeyed, super decoders, nil and what is missing")
    func containers() throws {
        let content = #"{"n":null,"a":{"x":7},"list":[null,1,2,"e"],"super":"s","b":0,"zz":1}"#
        try expect(content, as: Containers.self,
                   Containers(keys: ["n", "a", "list", "super", "b"], hasMissing: false, nilValue: true, nested: 7, list: [1, 2], listNil: true,
                              superValue: "s", superForKey: 7, superMissing: true, elementSuper: "e", afterEnd: false))
    }

    /// Reads three integers from an unkeyed container, whatever it holds.
    struct Three: Decodable, Equatable {
        var numbers: [Int] = []
        init(numbers: [Int]) { self.numbers = numbers }
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            for _ in 0..<3 { numbers.append(try container.decode(Int.self)) }
        }
    }

    @Test("An unkeyed container past its end, or given the wrong type, says where")
    func unkeyedErrors() throws {
        try expect("[1,2,3]", as: Three.self, Three(numbers: [1, 2, 3]))
        try expectFailure("[1,2]", as: Three.self, "the array has only 2 elements at [2]")
        try expectFailure(#"{"a":[[1,"x"]]}"#, as: [String: [[Int]]].self, "expected an integer, found a string at .a[0][1]")
        try expectFailure(#"{"a":[1]}"#, as: [String: Three].self, "the array has only 1 elements at .a[1]")
    }

    /// A tree as deep as its data.
    struct Node: Decodable, Equatable {
        var children: [Node]
    }

    @Test("Values nested as deep as a record may hold decode, and deeper ones never reach a decoder")
    func deepNesting() throws {
        // The record's object is one level: its content may be 255 deep.
        let depth = JSONParser.maximumDepth - 1
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var expected = JSONValue.array([])
        for _ in 1..<depth { expected = .array([expected]) }
        try expect(arrays, as: JSONValue.self, expected)
        // Each node is an object and an array: two levels, the innermost one too.
        let wrappers = depth / 2 - 1
        let nodes = String(repeating: #"{"children":["#, count: wrappers) + "{\"children\":[]}" + String(repeating: "]}", count: wrappers)
        var node = Node(children: [])
        for _ in 0..<wrappers { node = Node(children: [node]) }
        try expect(nodes, as: Node.self, node)
        let deeper = Self.stored("[" + arrays + "]")
        #expect(throws: ShareQueueError.self) { try RecordSummary(jsonBytes: deeper) }
    }

    @Test("A record without a JSON value says so")
    func noContent() throws {
        let bytes = Array(#"{"v":1,"id":"r1","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"text","text":"hi"}"#.utf8)
        let drained = DrainedRecord(summary: try RecordSummary(jsonBytes: bytes), storedJSON: bytes, end: DrainPosition(segment: 1, offset: 0))
        let failure = #expect(throws: ShareQueueError.self) { try drained.decode(String.self) }
        #expect(failure?.message == "record r1 of kind text holds no JSON value to decode as String")
    }

    @Test("Every value of every kind decodes the same both ways, as stored by an append and as a parsed record")
    func everyKind() throws {
        for value in [EveryKind(), EveryKind(optionalInner: .init(name: "x\u{0}é", level: 1))] {
            guard case .value(let json, _) = try RecordDraft(encoding: value, source: "test").content else {
                Issue.record("not a value draft")
                return
            }
            try expect(String(decoding: json.bytes, as: UTF8.self), as: EveryKind.self, value)
        }
    }
}
