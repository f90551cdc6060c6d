import Foundation
import Testing
@testable import ShareQueueCore

@Suite("Records and JSON")
struct RecordTests {
    @Test("Strict JSON: valid documents pass, broken ones fail", arguments: [
        ("{\"a\": [1, -2.5e10, true, false, null, \"\\u00e9\\ud83d\\ude00\"]}", true),
        ("12345678901234567890", true),
        ("\"text\"", true),
        ("{", false), ("[1,]", false), ("{\"a\":1,}", false), ("01", false), ("1.", false),
        ("\"\\ud800\"", false), ("nul", false), ("{\"a\" 1}", false), ("[1] [2]", false), ("", false),
        ("\"tab\there\"", false),
    ])
    func validation(text: String, valid: Bool) {
        #expect(((try? JSONText(validating: Array(text.utf8))) != nil) == valid)
    }

    @Test("Deep nesting is refused instead of exhausting the stack")
    func nesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: ShareQueueError.self) { try JSONText(validating: Array(deep.utf8)) }
    }

    @Test("Compaction keeps the producer's tokens and order")
    func compaction() throws {
        let text = try JSONText(validating: Array(" { \"z\" : 1.50 , \"a\" : [ 12345678901234567890 , \"a b\" ] } ".utf8))
        #expect(String(decoding: text.bytes, as: UTF8.self) == "{\"z\":1.50,\"a\":[12345678901234567890,\"a b\"]}")
    }

    @Test("Invalid UTF-8 is rejected, not replaced")
    func invalidUTF8() {
        #expect(throws: ShareQueueError.self) { try JSONText(validating: [0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test("A record round-trips through its stored bytes")
    func roundTrip() throws {
        let draft = RecordDraft(.text("line one\nline \"two\"\u{1}"), source: "ext", key: "wallpaper", meta: ["a": "b"])
        let payload = draft.payload(id: "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9", date: "2026-11-29T14:52:20.123Z")
        #expect(!payload.contains(0x0A))
        let record = try Record(jsonBytes: payload)
        #expect(record.text == "line one\nline \"two\"\u{1}")
        #expect(record.key == "wallpaper")
        #expect(record.meta == ["a": "b"])
        #expect(record.kind == .text)
        #expect(record.jsonLine == payload)
    }

    @Test("A record's JSON value reaches a host as compact JSON bytes, and a record built with one stores it")
    func jsonAsText() throws {
        let stored = Array(#"{"v":1,"id":"x","date":"d","source":"s","kind":"json","json": { "z" : 1.50, "a" : [ "\u00e9" ] }}"#.utf8)
        let record = try Record(jsonBytes: stored)
        let json = try #require(record.json)
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"{"z":1.50,"a":["é"]}"#)
        #expect(record.jsonLine == Array(#"{"v":1,"id":"x","date":"d","source":"s","kind":"json","json":{"z":1.50,"a":["é"]}}"#.utf8))
        let built = Record(id: "x", date: "d", source: "s", kind: .json, json: json)
        #expect(built == record)
        var changed = built
        changed.json = try JSONText(validating: Array("[1]".utf8))
        #expect(changed.jsonValue == .array([.number("1")]))
        changed.json = nil
        #expect(changed.jsonValue == nil && changed.json == nil)
    }

    @Test("Fields from a newer producer pass through")
    func unknownFields() throws {
        let stored = Array(#"{"v":2,"id":"x","date":"d","source":"s","kind":"sticker","future":{"b":[1,2]},"text":"t"}"#.utf8)
        let record = try Record(jsonBytes: stored)
        #expect(record.version == 2)
        #expect(record.kind.rawValue == "sticker")
        #expect(record.unknownFields["future"] == .object(["b": .array([.number("1"), .number("2")])]))
        let again = try Record(jsonBytes: record.jsonLine)
        #expect(again == record)
        let viaCodable = try JSONDecoder().decode(Record.self, from: JSONEncoder().encode(record))
        #expect(viaCodable == record)
    }

    @Test("A payload that is not a record is refused", arguments: [
        "[]", #"{"id":"x"}"#, #"{"v":1,"id":"x","date":"d","source":"s","kind":"text"}"#,
        #"{"v":"1","id":"x","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"id":"x","date":"d","source":"s","kind":"text","text":"t","meta":{"a":1}}"#,
    ])
    func notARecord(text: String) {
        #expect(throws: ShareQueueError.self) { try Record(jsonBytes: Array(text.utf8)) }
    }

    @Test("UTF-8 is checked alike at every length and position around the word-sized steps")
    func utf8AtEveryLength() {
        for length in 0...40 {
            let ascii = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            #expect(UTF8Validation.isValid(ascii), "ASCII of \(length) bytes")
            for position in 0..<length {
                var accented = ascii
                accented.replaceSubrange(position..<(position + 1), with: [0xC3, 0xA9])
                #expect(UTF8Validation.isValid(accented), "é at \(position) of \(length)")
                var broken = ascii
                broken[position] = 0xC3
                #expect(!UTF8Validation.isValid(broken), "a lone lead byte at \(position) of \(length)")
            }
        }
    }

    @Test("Names and kinds count by their text, whatever escapes spell them", arguments: [
        // An escaped name is that name.
        (#"{"v":1,"\u0069d":"a","date":"d","source":"s","kin\u0064":"text","text":"t"}"#, nil),
        // An escaped kind is that kind, with its rules.
        (#"{"v":1,"id":"a","date":"d","source":"s","kind":"te\u0078t"}"#, "not a record: a text record has no 'text'"),
        // The id's length is that of its text: 129 bytes stored, 128 decoded.
        (#"{"v":1,"id":""# + String(repeating: "a", count: 127) + #"\u0061","date":"d","source":"s","kind":"text","text":"t"}"#, nil),
        (#"{"v":1,"id":""# + String(repeating: "a", count: 128) + #"\u0061","date":"d","source":"s","kind":"text","text":"t"}"#,
         "not a record: 'id' is empty or too long"),
        // A later member of the same name counts; a name in other letters is another member.
        (#"{"v":"1","v":1,"id":1,"id":"b","date":"d","source":"s","kind":"text","text":null,"text":"t","Text":5}"#, nil),
        (#"{"v":1.0,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#, "not a record: 'v' is missing or not a positive integer"),
        // Any digits from 1 up are a version (§7.1), however many: one beyond `Int` reads as `Int.max`.
        (#"{"v":9223372036854775808,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#, nil),
        (#"{"v":1000000000000000000000000000000000000000,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#, nil),
        (#"{"v":0,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#, "not a record: 'v' is missing or not a positive integer"),
    ] as [(String, String?)])
    func namesByText(text: String, refusal: String?) {
        let bytes = Array(text.utf8)
        let record = Result { () throws(ShareQueueError) in try Record(jsonBytes: bytes) }
        let summary = Result { () throws(ShareQueueError) in try RecordSummary(jsonBytes: bytes) }
        switch (record, summary) {
        case (.success(let record), .success(let summary)):
            #expect(refusal == nil)
            #expect(record.id == summary.id && record.date == summary.date && record.key == summary.key)
        case (.failure(let recordError), .failure(let summaryError)):
            #expect(recordError.message == refusal)
            #expect(summaryError.message == refusal)
        default:
            Issue.record("the record and its summary disagree: \(record), \(summary)")
        }
    }

    @Test("A version past what Int holds is written again with its digits as stored, by the library and by a drain",
          arguments: ["9223372036854775807", "9223372036854775808", "99999999999999999999"])
    func largeVersionKeepsItsDigits(_ digits: String) throws {
        // Over two lines, so that a drain writes it again rather than passing its bytes on.
        let stored = #"{"v":"# + digits + #","id":"big-v","date":"d","source":"s","kind":"text","text":"x""# + "\n}"
        let oneLine = stored.replacingOccurrences(of: "\n", with: "")
        #expect(String(decoding: try Record(jsonBytes: Array(stored.utf8)).jsonLine, as: UTF8.self) == oneLine)
        let queue = TestQueue()
        try queue.appendStored([Array(stored.utf8)])
        let drained = try queue.drain()
        #expect(drained.status == 0, "\(drained.stderr)")
        #expect(drained.output == oneLine + "\n")
    }

    @Test("Timestamps are ISO-8601 UTC with milliseconds")
    func timestamps() {
        #expect(Timestamp.format(millisecondsSince1970: 0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(millisecondsSince1970: 1_795_963_940_123) == "2026-11-29T14:52:20.123Z")
        #expect(Timestamp.format(millisecondsSince1970: 951_782_400_001) == "2000-02-29T00:00:00.001Z")
    }

    @Test("Ids are UUID strings")
    func recordIDs() {
        let id = RecordID.random()
        #expect(RecordID.isValid(id))
        #expect(UUID(uuidString: id) != nil)
        #expect(!RecordID.isValid("not-a-uuid"))
    }
}
