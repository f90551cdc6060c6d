import Foundation
@testable import ShareQueueCore
import ShareQueueCodable

/// Values that exercise every way a type can drive an encoder: what the
/// stored bytes of each must stay, byte for byte, is pinned in `EncodedBytesTests`.
enum EncodingCorpus {
    /// A name for every kind of key: escapes, unicode in both normal forms, the empty name, upper case.
    struct Names: Encodable {
        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.init(stringValue) }
            init?(intValue: Int) { nil }
        }
        static let names = ["quote\"d", "back\\slash", "new\nline", "\u{1}start", "\u{7F}", "\u{E9}", "e\u{301}", "😀", "", "Zeta", "alpha",
                            "tab\t", "\u{2028}", "a", "ab", "a\u{0}",
                            // Pairs whose order as bytes differs from the order of their escaped forms.
                            "a\"", "a#", "a\u{1}", "a ", "a\\", "a]"]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for (index, name) in Self.names.enumerated() { try container.encode(index, forKey: Key(name)) }
        }
    }

    /// The same key set twice, or a nested container replaced by a value and back: the last one counts.
    struct Duplicates: Encodable {
        enum Key: String, CodingKey { case a, b, c, d }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(1, forKey: .a)
            try container.encode("two", forKey: .b)
            try container.encode([3], forKey: .a)
            var nested = container.nestedContainer(keyedBy: Key.self, forKey: .c)
            try nested.encode(true, forKey: .d)
            try container.encode(false, forKey: .c)
            try container.encodeNil(forKey: .d)
            var list = container.nestedUnkeyedContainer(forKey: .d)
            try list.encode("late")
            // Asked for again, the same object: members go on adding up.
            var again = encoder.container(keyedBy: Key.self)
            try again.encode(4, forKey: .b)
        }
    }

    /// More members than a small object holds without an index, some set twice.
    struct ManyMembers: Encodable {
        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for number in (0..<40).reversed() { try container.encode(number, forKey: Key(stringValue: "m\(number)")!) }
            for number in stride(from: 0, to: 40, by: 7) { try container.encode("again \(number)", forKey: Key(stringValue: "m\(number)")!) }
        }
    }

    /// Containers filled after their parent moved on, and super encoders filled after later members.
    struct LateFilling: Encodable {
        enum Key: String, CodingKey { case first, second, third, fourth, fifth }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            var nested = container.nestedContainer(keyedBy: Key.self, forKey: .third)
            var list = container.nestedUnkeyedContainer(forKey: .first)
            let parent = container.superEncoder()
            let named = container.superEncoder(forKey: .fifth)
            try container.encode(2, forKey: .second)
            try nested.encode("n", forKey: .first)
            try list.encode(1)
            var inner = list.nestedContainer(keyedBy: Key.self)
            var innerList = list.nestedUnkeyedContainer()
            let elementSuper = list.superEncoder()
            try list.encode(2)
            try inner.encode("x", forKey: .fourth)
            try innerList.encode(Decimal(string: "0.5")!)
            try Inner(level: 9).encode(to: elementSuper)
            try Inner(level: 1).encode(to: parent)
            var single = named.singleValueContainer()
            try single.encode(UUID(uuidString: "3b1a7a47-62e9-44de-8afc-c39f9309e7f9")!)
            try nested.encode(Date(timeIntervalSince1970: 0), forKey: .second)
        }

        struct Inner: Encodable { var level: Int }
    }

    /// A super encoder that is never given a value, and one given an unkeyed value.
    struct UnusedSuper: Encodable {
        enum Key: String, CodingKey { case value }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            _ = container.superEncoder(forKey: .value)
            var list = container.superEncoder().unkeyedContainer()
            try list.encode(Float(0.1))
        }
    }

    /// The coding path each encoder and container reports, written out as values.
    struct PathEcho: Encodable {
        enum Key: String, CodingKey { case here, list, nested, single }

        struct Echo: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(encoder.codingPath.map { "\($0.stringValue)#\($0.intValue.map(String.init) ?? "-")" }.joined(separator: "/"))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(Echo(), forKey: .here)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode(Echo())
            try list.encode(Echo())
            var nested = list.nestedContainer(keyedBy: Key.self)
            try nested.encode(Echo(), forKey: .nested)
            try nested.encode(nested.codingPath.map(\.stringValue).joined(separator: "/"), forKey: .here)
            try Echo().encode(to: nested.superEncoder(forKey: .single))
            try Echo().encode(to: list.superEncoder())
            try list.encode(list.codingPath.map(\.stringValue).joined(separator: "/"))
        }
    }

    /// Nested values of every shape, optionals set and not, arrays of values and of arrays.
    struct Nested: Codable {
        enum Shape: Codable { case circle(radius: Double), polygon([Int], closed: Bool), empty }
        struct Leaf: Codable { var name: String; var level: Int8?; var tags: [String] }

        var leaves = [Leaf(name: "a", level: nil, tags: []), Leaf(name: "b\u{0}\u{1F}\"\\/", level: -128, tags: ["x", "y"])]
        var optionalLeaf: Leaf? = nil
        var someLeaf: Leaf? = Leaf(name: "é e\u{301} 😀 \u{2028}\u{7F}", level: 0, tags: ["\n\r\t"])
        var grid: [[Double]] = [[0.1, -0.0, 1e300, .leastNonzeroMagnitude], [], [Double(Float.greatestFiniteMagnitude)]]
        var floats: [Float] = [0.1, 1.1, -3.4028235e38]
        var shapes: [Shape] = [.circle(radius: 2.5), .polygon([1, 2], closed: false), .empty]
        var byName = ["zz": 1, "": 0, "Z": 2]
        var byNumber = [10: "ten", 2: "two", -1: "minus one"]
        var optionals: [Int?] = [1, nil, 3]
        var empty: [String] = []
        var emptyObject: [String: Int] = [:]
        var nothing = Nothing()
        var widths = Widths()

        struct Nothing: Codable {}
        struct Widths: Codable {
            var int8 = Int8.min, int16 = Int16.min, int32 = Int32.min, int64 = Int64.min, int = Int.max
            var uint8 = UInt8.max, uint16 = UInt16.max, uint32 = UInt32.max, uint64 = UInt64.max, uint = UInt.min
            var int128 = Int128.min, uint128 = UInt128.max
            var flag = false
        }
    }

    /// Foundation's values, and the package's own JSON value, at the top and nested.
    struct Foundations: Codable {
        var dates = [Date(timeIntervalSince1970: 1_764_427_940.123), Date(timeIntervalSince1970: -62_135_596_800), Date(timeIntervalSince1970: 0.0005),
                     Date(timeIntervalSince1970: 253_402_300_799.999)]
        var urls = [URL(string: "https://example.com/a%20b?q=1#frag")!, URL(string: "b/c?d", relativeTo: URL(string: "https://x.org/a/"))!,
                    URL(string: "mailto:someone@example.com")!, URL(fileURLWithPath: "/tmp/a file")]
        var uuid = UUID(uuidString: "3b1a7a47-62e9-44de-8afc-c39f9309e7f9")!
        var data = [Data(), Data([0]), Data([0, 1]), Data((0...255).map { UInt8($0) })]
        var decimals = [Decimal(string: "12345678901234567890.123456789")!, Decimal(0), Decimal(string: "-1.5")!]
        var json: JSONValue = .object(["b": .number("1.50"), "a": .array([.null, .bool(true), .string("\u{0}")]), "c": .number("1e400")])
        var optionalDate: Date? = nil
    }

    /// A single value at the top: each writes a bare JSON value.
    static func single(_ name: String) -> any Encodable { singles.first { $0.0 == name }!.1 }

    private static var singles: [(String, any Encodable)] { [
        ("string", "plain"), ("escaped string", "\u{0}\u{1}\u{8}\u{C}\u{1F}\"\\/\u{7F}\u{2028}é"), ("int", -42), ("true", true),
        ("nil", Int?.none), ("double", 0.30000000000000004), ("negative zero", -0.0), ("float", Float(16_777_217)),
        ("date", Date(timeIntervalSince1970: 1_764_427_940.1239)), ("url", URL(string: "https://example.com")!), ("data", Data([1, 2, 3])),
        ("json", JSONValue.array([.number("-0"), .object([:])])), ("empty array", [Int]()), ("empty struct", Nested.Nothing()),
        ("array of optionals", [String?.none, "x"]), ("int128", Int128.max), ("uint8 array", [UInt8](arrayLiteral: 0, 255)),
    ] }
}
