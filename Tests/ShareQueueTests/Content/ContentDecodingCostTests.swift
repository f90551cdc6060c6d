import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// Decoding stored content costs time in proportion to its size, whatever its shape:
/// the bytes are hostile, so no shape the format allows may multiply the work.
@Suite("Content decoding cost")
struct ContentDecodingCostTests {
    /// A type that nests itself, as a tree of comments or an app's own "any JSON" does.
    struct Nest: Decodable {
        let inner: [Nest]
    }

    /// A drained record whose `json` is `depth` objects of `Nest` around `padding` bytes of numbers;
    /// each object and its array nest two deeper, so 127 reach the format's limit of 256 with the record's own object.
    private static func nested(depth: Int, padding: Int) throws -> DrainedRecord {
        let numbers = Array(repeating: "0", count: padding / 2).joined(separator: ",")
        var content = #"{"inner":[],"pad":["# + numbers + "]}"
        for _ in 1..<depth { content = #"{"inner":["# + content + "]}" }
        let bytes = Array(#"{"v":1,"id":"r1","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"k","json":"#.utf8)
            + Array(content.utf8) + [UInt8(ascii: "}")]
        return DrainedRecord(summary: try RecordSummary(jsonBytes: bytes), storedJSON: bytes, end: DrainPosition(segment: 1, offset: 0))
    }

    /// The shortest of three decodings of `drained`, in seconds.
    private static func decodingTime(_ drained: DrainedRecord) throws -> Double {
        var shortest = Double.infinity
        for _ in 0..<3 {
            let started = ContinuousClock.now
            _ = try drained.decode(Nest.self)
            let elapsed = ContinuousClock.now - started
            shortest = min(shortest, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return shortest
    }

    @Test("Content nested as deep as the format allows decodes in time linear in its size")
    func deepNestingIsLinear() throws {
        let padding = 64 * 1024
        let shallow = try Self.decodingTime(try Self.nested(depth: 2, padding: padding))
        let deep = try Self.decodingTime(try Self.nested(depth: 127, padding: padding))
        // Linear work takes about as long at either depth; scanning each level's bytes again takes about 250 times as long.
        #expect(deep < shallow * 10, "deep \(deep) s, shallow \(shallow) s")
    }

    /// A type that looks for names an object does not hold, as one with optional members does.
    struct Optionals: Decodable {
        let a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p: String?
    }

    /// A type that looks for no name: what decoding costs before any is looked up.
    struct NoNames: Decodable {
        enum NoKeys: CodingKey {}
        init(from decoder: any Decoder) throws { _ = try decoder.container(keyedBy: NoKeys.self) }
    }

    /// The shortest of three decodings of `content` as `type`, in seconds.
    private static func decodingTime<Value: Decodable>(_ content: String, as type: Value.Type) throws -> Double {
        let bytes = Array(#"{"v":1,"id":"r1","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"k","json":"#.utf8)
            + Array(content.utf8) + [UInt8(ascii: "}")]
        let drained = DrainedRecord(summary: try RecordSummary(jsonBytes: bytes), storedJSON: bytes, end: DrainPosition(segment: 1, offset: 0))
        var shortest = Double.infinity
        for _ in 0..<3 {
            let started = ContinuousClock.now
            _ = try drained.decode(type)
            let elapsed = ContinuousClock.now - started
            shortest = min(shortest, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return shortest
    }

    @Test("Long escaped names are not decoded again for every name a type looks for")
    func longEscapedNames() throws {
        // Sixteen members, as many as are looked up one by one, each named by 32 KiB of escapes.
        let escaped = "{" + (0..<16).map { #""\#($0)"# + String(repeating: #"\n"#, count: 16 * 1024) + #"":0"# }.joined(separator: ",") + "}"
        let lookingUp = try Self.decodingTime(escaped, as: Optionals.self)
        let listing = try Self.decodingTime(escaped, as: NoNames.self)
        // Reading each name once costs about as much as listing the members; decoding them all for each of 16 names, far more.
        #expect(lookingUp < listing * 5 + 0.02, "looking up \(lookingUp) s, listing \(listing) s")
    }
}
