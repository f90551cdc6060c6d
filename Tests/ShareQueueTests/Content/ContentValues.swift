import Foundation
@testable import ShareQueueCore
import ShareQueueCodable

/// A value of every kind shared content holds, for round trips.
struct EveryKind: SharedContent, Equatable {
    static let contentKind = Record.Kind(rawValue: "test.every-kind")

    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case polygon([Int], closed: Bool)
        case empty
    }

    struct Inner: Codable, Equatable {
        var name: String
        var level: Int8
    }

    var int = Int.min
    var int8 = Int8.min
    var int16 = Int16.max
    var int32 = Int32.min
    var int64 = Int64.min
    var uint = UInt.max
    var uint8 = UInt8.max
    var uint16 = UInt16.max
    var uint32 = UInt32.max
    var uint64 = UInt64.max
    var int128 = Int128.min
    var uint128 = UInt128.max
    var double = 0.1
    var tiny = Double.leastNonzeroMagnitude
    var float: Float = 1.1
    var decimal = Decimal(string: "12345678901234567890.123456789")!
    var text = "NUL \u{0} then é, e\u{301}, 👍🏽, \"quotes\", \\, \n\t and \u{1F}"
    var flag = true
    var some: Int? = 7
    var none: String? = nil
    var numbers = [1, -2, 3]
    var nested: [[String]] = [["a"], [], ["b", "c"]]
    var byName = ["one": 1, "two": 2, "": 0]
    var byNumber = [1: "one", 20: "twenty"]
    var shapes: [Shape] = [.circle(radius: 2.5), .polygon([1, 2, 3], closed: true), .empty]
    var inner = Inner(name: "in", level: -3)
    var optionalInner: Inner? = nil
    var date = Date(timeIntervalSince1970: 1_732_912_340.123)
    var oldDate = Date(timeIntervalSince1970: -2_208_988_800.5)
    var url = URL(string: "https://example.com/a%20b?q=1#frag")!
    var uuid = UUID(uuidString: "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9")!
    var data = Data((0...255).map { UInt8($0) })
    var json: JSONValue = .object([
        "big": .number("123456789012345678901234567890"), "decimal": .number("1.50"), "huge": .number("1e400"),
        "list": .array([.null, .bool(false), .string("\u{0}")]),
    ])
}

/// A content type as an older host knows it.
struct NoteV1: SharedContent, Equatable {
    static let contentKind = Record.Kind(rawValue: "note")
    var title: String
    var body: String
}

/// The same content type as a newer extension writes it: one more field, optional.
struct NoteV2: SharedContent, Equatable {
    static let contentKind = Record.Kind(rawValue: "note")
    var title: String
    var body: String
    var pinned: Bool?
}

/// A link whose records are of kind `PlainLink`, as they were when a kind defaulted to the type's name.
struct PlainLink: SharedContent, Equatable {
    static let contentKind: Record.Kind = "PlainLink"
    var url: URL
    var title: String
}
