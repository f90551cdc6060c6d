import Foundation
import Testing
@testable import ShareQueueCore

/// Records built from a grammar of pieces near the encoder's shape: every
/// member's value drawn from values at the edge of its rule (lengths, UTF-8
/// sequences, escapes, kinds, versions, nesting), names spelled with escapes,
/// members repeated, dropped or moved, whitespace and trailing bytes. The
/// shortcut must decline or agree with the full reading on each.
@Suite("Records near the encoder's shape, from a grammar")
struct EncoderShapedGrammarTests {
    /// String contents, as stored between the quotes.
    static let strings: [[UInt8]] = {
        var pieces: [[UInt8]] = ["", "a", "text", "url", "json", "file", "note", "TEXT", "te\\u0078t", "te\\u0058t",
                                 "\\u0000", "\\u00e9", "\\u00E9", "\\uFFFE", "\\uffff", "\\ud83d\\ude00", "\\uD83D\\uDE00",
                                 "\\ud800", "\\udc00", "\\uD83D\\u0041", "\\u", "\\u00", "\\u00g0", "\\x", "\\\"", "\\\\", "\\/",
                                 "\\b\\f\\n\\r\\t", "a\\", "é", "😀", "\u{212A}", "e\u{301}"].map { Array($0.utf8) }
        pieces += [[0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
                   [0xED, 0x9F, 0xBF], [0xEF, 0xBF, 0xBE], [0xEF, 0xBF, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80],
                   [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF0, 0x9F, 0x98],
                   [0xF0, 0x9F], [0xF0], [0xE2, 0x82], [0xC3], [0x80], [0xBF], [0xFE], [0xFF], [0x00], [0x1F], [0x7F], [0x09], [0x0A]]
        for count in [126, 127, 128, 129] {
            let run = [UInt8](repeating: UInt8(ascii: "a"), count: count)
            pieces += [run, run + [0xC3, 0xA9], run.dropLast(2) + [0xC3, 0xA9], run.dropLast(3) + [0xF0, 0x9F, 0x98, 0x80],
                       run.dropLast(1) + [0xF0, 0x9F, 0x98, 0x80], run.dropLast(6) + Array("\\u0061".utf8), run.dropLast(1) + [0xF0, 0x9F, 0x98]]
        }
        return pieces
    }()

    static let names = ["v", "id", "date", "source", "kind", "text", "json", "key", "meta", "attachments",
                        "\\u0076", "\\u0069d", "te\\u0078t", "\\u006Aso\\u006E", "ke\\u0079", "met\\u0061", "attachment\\u0073",
                        "x", "", "Text", "texts", "tex", "é", "\\ud800", "a b", "attachmentsx"]

    static let numbers = ["1", "2", "0", "01", "-1", "1.0", "1e0", "1E2", "999999999999999999", "9999999999999999999",
                          "9223372036854775807", "9223372036854775808", "-0", "1.", ".5", "+1", "00"]

    static let nestedEdges: [String] = [254, 255, 256, 257].flatMap { depth in
        [DraftInputs.nested(depth, open: "[", close: "]"),
         DraftInputs.nested(depth - 1, open: "{\"a\":", close: "}", inner: "1")]
    }

    static let attachment = #"{"name":"a","file":"0123456789abcdef.bin","size":3,"sha256":"0000000000000000000000000000000000000000000000000000000000000000","type":"x"}"#

    struct Generator {
        var random: SeededGenerator
        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
        mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &random)! }

        mutating func string() -> [UInt8] {
            var contents: [UInt8] = []
            // Mostly plain, so that whole records in shape are common enough.
            if chance(80) { contents = Array(pick(["a", "2026-11-30T14:00:00.000Z", "é😀", "\\n", "x y", String(repeating: "b", count: 128)]).utf8) } else {
                for _ in 0..<Int.random(in: 1...(chance(70) ? 1 : 3), using: &random) { contents += pick(EncoderShapedGrammarTests.strings) }
            }
            return [UInt8(ascii: "\"")] + contents + (chance(98) ? [UInt8(ascii: "\"")] : [])
        }

        mutating func value(depth: Int = 0) -> [UInt8] {
            switch Int.random(in: 0..<12, using: &random) {
            case 0...3: return string()
            case 4: return Array(pick(EncoderShapedGrammarTests.numbers).utf8)
            case 5: return Array(pick(["null", "true", "false", "nul", "[]", "{}", "[1,]", "{\"a\"}", "[\n1]", "{\"a\" :\r\"b\"}"]).utf8)
            case 6: return Array(pick(EncoderShapedGrammarTests.nestedEdges).utf8)
            case 7: return Array("{\"a\":".utf8) + string() + Array(",\"b\":".utf8) + string() + [UInt8(ascii: "}")]
            case 8: return Array(pick(["[", "[ "]).utf8) + (depth < 3 ? value(depth: depth + 1) : string()) + Array(pick(["]", "\n]", ",1]"]).utf8)
            case 9: return Array("{".utf8) + string() + Array(":".utf8) + (depth < 3 ? value(depth: depth + 1) : string()) + Array("}".utf8)
            case 10: return Array(("[" + EncoderShapedGrammarTests.attachment + "]").utf8)
            default: return Array("{}".utf8)
            }
        }

        mutating func meta() -> [UInt8] {
            if chance(20) { return value() }
            var out: [UInt8] = [UInt8(ascii: "{")]
            // At most one value that may not be a string: the full reading names the first it meets, in no fixed order.
            var other = false
            for index in 0..<Int.random(in: 0...3, using: &random) {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                let plain = other || chance(90)
                if !plain { other = true }
                out += string() + [UInt8(ascii: ":")] + (plain ? string() : value())
            }
            return out + [UInt8(ascii: "}")]
        }

        mutating func record() -> [UInt8] {
            var members: [(String, [UInt8])] = [
                ("v", Array(pick(Array(EncoderShapedGrammarTests.numbers.prefix(chance(80) ? 2 : 17))).utf8)),
                ("id", string()), ("date", string()), ("source", string()),
                ("kind", Array(("\"" + (chance(80) ? pick(["text", "url", "json", "file", "note"]) : pick(["", "TEXT", "te\\u0078t", "jso\\u006e", "url\\u0000"])) + "\"").utf8)),
            ]
            if chance(60) { members.append(("text", chance(90) ? string() : value())) }
            if chance(40) { members.append(("json", value())) }
            if chance(30) { members.append(("key", chance(90) ? string() : value())) }
            if chance(30) { members.append(("meta", meta())) }
            if chance(25) { members.append(("attachments", chance(70) ? Array(("[" + EncoderShapedGrammarTests.attachment + "]").utf8) : value())) }
            for _ in 0..<(chance(20) ? Int.random(in: 1...3, using: &random) : 0) { members.append((pick(EncoderShapedGrammarTests.names), value())) }
            // Out of shape: a member dropped, repeated, moved, or renamed with escapes.
            if chance(10), !members.isEmpty { members.remove(at: Int.random(in: 0..<members.count, using: &random)) }
            if chance(10) { members.insert(pick(members), at: Int.random(in: 0...members.count, using: &random)) }
            if chance(10) { members.swapAt(Int.random(in: 0..<members.count, using: &random), Int.random(in: 0..<members.count, using: &random)) }
            if chance(10) {
                let index = Int.random(in: 0..<members.count, using: &random)
                members[index].0 = pick(EncoderShapedGrammarTests.names)
            }
            var out: [UInt8] = chance(2) ? [UInt8(ascii: " ")] : []
            out.append(UInt8(ascii: "{"))
            for (index, (name, value)) in members.enumerated() {
                if index > 0 { out += Array((chance(2) ? ", " : ",").utf8) }
                out += Array(("\"" + name + "\"" + (chance(1) ? " : " : ":")).utf8) + value
            }
            out.append(UInt8(ascii: "}"))
            if chance(3) { out += Array(pick([" ", "\n", "}", ",", "x", "\u{0}"]).utf8) }
            return out
        }
    }

    @Test("Agrees with the full reading on records built from edge-case pieces")
    func grammar() {
        let count = Int(ProcessInfo.processInfo.environment["GRAMMAR_CASES"] ?? "") ?? 40_000
        var generator = Generator(random: SeededGenerator(state: UInt64(ProcessInfo.processInfo.environment["GRAMMAR_SEED"] ?? "") ?? 0x6EA4_0001))
        var taken = 0
        for round in 0..<count {
            let bytes = generator.record()
            if EncoderShapedFieldsTests.compare(bytes, publicVerdicts: round % 4 == 0) {
                taken += 1
                // A producer acknowledges it without the full decoding; a drain whose sink builds records decodes it in full.
                if (try? Record.checkStored(bytes)) != nil {
                    #expect((try? Record(jsonBytes: bytes)) != nil, "\(String(decoding: bytes.prefix(300), as: UTF8.self))")
                }
            }
        }
        #expect(taken > count / 20, "the shortcut took \(taken) of \(count)")
    }
}
