import Foundation
import Testing
import ShareQueueSystem
@testable import ShareQueueCore

/// The one-pass reading of records in the encoder's shape is only a shortcut:
/// for every input it either declines, or agrees in every field with the full
/// reading (`StoredFields` and `check()`), and the public verdicts that use it
/// are those of the full reading alone.
@Suite("Records in the encoder's shape")
struct EncoderShapedFieldsTests {
    /// `Tests`, found from this file's place in `Tests/ShareQueueTests/Records`.
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Compares the shortcut with the full reading on `bytes`.
    /// - Returns: whether the shortcut took the record.
    @discardableResult
    static func compare(_ bytes: [UInt8], publicVerdicts: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let shortcut = EncoderShapedFields.read(bytes)
        if let shortcut {
            let described = String(decoding: bytes.prefix(300), as: UTF8.self)
            do {
                let fields = try StoredFields(bytes, buildingAll: false)
                let checked = try fields.check()
                func same(_ member: StoredFields.Member?, _ span: JSONParser.StringSpan?) -> Bool {
                    guard let span else { return member == nil }
                    return member?.kind == .string && member?.text == span
                }
                #expect(checked.version == shortcut.version && checked.kind == shortcut.kind(in: bytes), "\(described)", sourceLocation: sourceLocation)
                #expect(fields.versionKind == .number, "\(described)", sourceLocation: sourceLocation)
                #expect(same(fields.id, shortcut.id) && same(fields.date, shortcut.date) && same(fields.source, shortcut.source)
                        && same(fields.kind, shortcut.kindText) && same(fields.text, shortcut.text) && same(fields.key, shortcut.key),
                        "different spans: \(described)", sourceLocation: sourceLocation)
                #expect(fields.hasAttachments == shortcut.hasAttachments && fields.spansLines == shortcut.spansLines,
                        "\(described)", sourceLocation: sourceLocation)
                let all = try StoredFields(bytes, buildingAll: true)
                let labelsOnly = all.jsonKind == nil && all.meta == nil && all.attachmentsKind == nil && all.unknown.isEmpty
                #expect(shortcut.holdsLabelsOnly == labelsOnly, "\(described)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("the shortcut takes what the full reading refuses (\(error.message)): \(described)", sourceLocation: sourceLocation)
            }
        }
        if publicVerdicts { expectSameVerdicts(bytes, sourceLocation: sourceLocation) }
        return shortcut != nil
    }

    /// `RecordSummary(jsonBytes:)` and `Record.checkStored` as the full reading alone gives them.
    static func expectSameVerdicts(_ bytes: [UInt8], sourceLocation: SourceLocation) {
        let summary = Result { () throws(ShareQueueError) in try RecordSummary(jsonBytes: bytes) }
        let fullSummary = Result { () throws(ShareQueueError) in try RecordSummary(checkingInFull: bytes) }
        switch (summary, fullSummary) {
        case (.success(let a), .success(let b)):
            #expect(a.idText == b.idText && a.dateText == b.dateText && a.keyText == b.keyText
                    && a.hasAttachments == b.hasAttachments && a.spansLines == b.spansLines, sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)):
            #expect(a.message == b.message, sourceLocation: sourceLocation)
        default:
            Issue.record("RecordSummary changed its verdict: \(summary) against \(fullSummary)", sourceLocation: sourceLocation)
        }
        let check = Result { () throws(ShareQueueError) in try Record.checkStored(bytes) }
        let fullCheck = Result { () throws(ShareQueueError) in try Record.checkStoredInFull(bytes) }
        switch (check, fullCheck) {
        case (.success, .success): break
        case (.failure(let a), .failure(let b)): #expect(a.message == b.message, sourceLocation: sourceLocation)
        default: Issue.record("checkStored changed its verdict: \(check) against \(fullCheck)", sourceLocation: sourceLocation)
        }
        // The decoding takes the shortcut for a record of labels alone: the same record, or the same error, as the full reading.
        let decoded = Result { () throws(ShareQueueError) in try Record(jsonBytes: bytes) }
        let fullDecoded = Result { () throws(ShareQueueError) in try Record(readingInFull: bytes) }
        switch (decoded, fullDecoded) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(a) against \(b)", sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)): #expect(a.message == b.message, sourceLocation: sourceLocation)
        default: Issue.record("Record(jsonBytes:) changed its verdict: \(decoded) against \(fullDecoded)", sourceLocation: sourceLocation)
        }
        // What it accepts, the summary accepts with the same labels.
        if let record = try? fullDecoded.get() {
            let summary = try? summary.get()
            #expect(summary?.id == record.id && summary?.date == record.date && summary?.key == record.key, sourceLocation: sourceLocation)
            // A store takes the labels' stored bytes as they are only where they are the record's text.
            if let labels = StoredLabels(bytes) {
                let texts = [labels.id, labels.date, labels.source, labels.kind].map { Array(bytes[$0]) }
                #expect(texts == [record.id, record.date, record.source, record.kind.rawValue].map { Array($0.utf8) }
                        && labels.text.map { Array(bytes[$0]) } == record.text.map { Array($0.utf8) }
                        && labels.key.map { Array(bytes[$0]) } == record.key.map { Array($0.utf8) }
                        && record.json == nil && record.meta == nil && record.attachments == nil && record.unknownFields.isEmpty,
                        "stored labels differ: \(record)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Every file under `folder`, recursively.
    static func files(under folder: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var paths: [String] = []
        while let name = walker.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder), !isFolder.boolValue {
                paths.append(folder + "/" + name)
            }
        }
        return paths.sorted()
    }

    /// The payloads of the frames a segment reader finds in the file at `path`.
    static func payloads(ofSegment path: String) throws -> [[UInt8]] {
        let file = try FileDescriptor.open(path, .readOnly)
        defer { file.close() }
        var reader = SegmentReader(file: file, from: 0)
        var payloads: [[UInt8]] = []
        while let event = try reader.next() {
            if case .record(_, _, let payload, _) = event { payloads.append(payload.array) }
        }
        return payloads
    }

    @Test("Agrees with the full reading on the fuzz and conformance corpora")
    func corpora() throws {
        var inputs: [[UInt8]] = []
        // The record target's inputs are records; the others hold them in lines (dead letters, quarantine, deliveries) or frames.
        for path in Self.files(under: Self.tests + "/Fuzz/corpus/record") {
            inputs.append(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        for folder in ["/Fuzz/corpus/segment", "/Fuzz/corpus/bookkeeping", "/Conformance"] {
            for path in Self.files(under: Self.tests + folder) {
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
                inputs += bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map(Array.init)
                if folder == "/Fuzz/corpus/segment" || path.hasSuffix(".log") { inputs += try Self.payloads(ofSegment: path) }
            }
        }
        #expect(inputs.count > 2000)
        var taken = 0
        for input in inputs where Self.compare(input) { taken += 1 }
        // The corpora hold records in the encoder's shape: the shortcut is not always declining.
        #expect(taken > 100, "\(taken) of \(inputs.count)")
    }

    /// A record as a producer encodes it: every kind, escapes, other scripts, keys, meta, json, attachments, unknown members.
    static func encoded(_ inputs: inout DraftInputs, ordinary: Bool) -> [UInt8] {
        let kinds: [Record.Kind] = [.text, .url, .json, .file, Record.Kind(rawValue: "note")]
        let kind = kinds.randomElement(using: &inputs.random)!
        let text = kind == .text || kind == .url || inputs.chance(20) ? inputs.text(maxLength: 200) : nil
        var json: [UInt8]? = nil
        if kind == .json || inputs.chance(10) {
            json = (try? JSONParser.parse(inputs.jsonBytes())).map { $0.compactJSON } ?? Array("{\"a\":[1,2.5e3,null]}".utf8)
        }
        var attachments: [ShareQueueCore.Attachment]? = nil
        if kind == .file || inputs.chance(5) {
            attachments = (0..<Int.random(in: 1...2, using: &inputs.random)).map { index in
                ShareQueueCore.Attachment(name: inputs.text(maxLength: 10), file: "\(UUID().uuidString).bin", size: Int64(index * 1000),
                                      sha256: String(repeating: "0", count: 64), type: "image/png")
            }
        }
        var unknown: JSONMembers<JSONValue> = [:]
        if inputs.chance(15) {
            // Names in other scripts or with escapes are left to the full reading, which compares them as bytes.
            let name = ordinary ? ["x-later", "Text", "", "a b", "zz"].randomElement(using: &inputs.random)! : inputs.text(maxLength: 6)
            unknown[name] = inputs.chance(50) ? .string(inputs.text()) : .array([.number("1"), .null])
        }
        let id = ordinary ? UUID().uuidString : (inputs.id() ?? inputs.label(limit: 128))
        let version = ordinary || inputs.chance(80) ? 1 : Int.random(in: 0...Int.max, using: &inputs.random)
        return Record.encode(version: version, id: id, date: ordinary ? "2026-11-30T14:00:00.000Z" : inputs.label(limit: 64),
                             source: ordinary ? "bench" : inputs.label(limit: 64), kind: kind, text: text, jsonBytes: json,
                             key: inputs.chance(30) ? inputs.text(maxLength: 30) : nil, meta: inputs.meta(),
                             attachments: attachments, unknownFields: unknown)
    }

    @Test("Takes every ordinary record the encoder writes, with the full reading's fields")
    func encoderRecords() {
        var inputs = DraftInputs(random: SeededGenerator(state: 0x5EED_0001))
        var taken = 0
        for _ in 0..<1500 {
            let bytes = Self.encoded(&inputs, ordinary: true)
            // Only JSON nested past the limit makes an ordinary record one the full reading refuses.
            let accepted = (try? RecordSummary(checkingInFull: bytes)) != nil
            #expect(Self.compare(bytes) == accepted, "declined an ordinary record: \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            if accepted { taken += 1 }
        }
        #expect(taken > 1400)
        for _ in 0..<1500 { Self.compare(Self.encoded(&inputs, ordinary: false)) }
    }

    /// Cases at the edge of each rule, written by hand.
    static let edges: [String] = [
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":0,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":01,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1.0,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1e0,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":-1,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":999999999999999999,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":9223372036854775807,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":9223372036854775808,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":"1","id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"id":"","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"id":""# + String(repeating: "a", count: 128) + #"","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"id":""# + String(repeating: "a", count: 129) + #"","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"id":""# + String(repeating: "é", count: 64) + #"","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"id":""# + String(repeating: "é", count: 65) + #"","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"id":"\u0061","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"url","text":null}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"json"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"json","json":null}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"json","json":{"a":[1,{"b":"\ud83d\ude00"}]}}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"json","json":{"a":"\ud800"}}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"json","json":[1,]}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"json","json":[1,"#+"\n"+#"2]}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"json","json":"# + DraftInputs.nested(255, open: "[", close: "]") + "}",
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"json","json":"# + DraftInputs.nested(256, open: "[", close: "]") + "}",
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"file"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"file","attachments":[]}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"file","attachments":{}}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","attachments":null}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","attachments":[1]}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","meta":{"a":"b","c":"d"}}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","meta":{"a":"b","a":"c"}}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","meta":{"a":"b","c":1}}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","meta":{}}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","meta":null}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","meta":[]}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","key":null}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"note","key":5}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t","text":"u"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t","id":"b"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t","\u0069d":"b"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t","x":1,"x":2}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","key":"k","text":"t"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t","":1}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t","é":1}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"te\u0078t","text":"t"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"tëxt","text":"t"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"","text":"t"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"\u0000\"\\\/\b\f\n\r\t\u00e9\uFFFF"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"\ud800"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"\udc00"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"\ud83d\ude00"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"\u12G4"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"\x"}"#,
        #"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t"} "#,
        #" {"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1, "id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"id":"a","v":1,"date":"d","source":"s","kind":"text","text":"t"}"#,
        #"{"v":1,"v":2,"id":"a","date":"d","source":"s","kind":"text","text":"t"}"#,
    ]

    @Test("Agrees with the full reading at the edge of every rule", arguments: edges)
    func edge(_ text: String) {
        Self.compare(Array(text.utf8))
    }

    @Test("Agrees on bytes that are not UTF-8, control characters and truncated escapes")
    func badBytes() {
        let prefix = Array(#"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":""#.utf8)
        let suffix = Array(#""}"#.utf8)
        let middles: [[UInt8]] = [[0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0x80],
                                  [0xC3], [0xE2, 0x82], [0x00], [0x1F], [0x0A], [0x7F], [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80],
                                  Array(#"\"#.utf8), Array(#"\u"#.utf8), Array(#"\u00"#.utf8), Array(#"\u00e"#.utf8)]
        for middle in middles {
            Self.compare(prefix + middle + suffix)
            Self.compare(prefix + middle)
        }
    }

    /// Bytes a mutation puts in: structure, escapes, digits, and the bytes UTF-8 is made of.
    static let alphabet: [UInt8] = Array(#"{}[],:"\/u0189-.eE tnfrx"#.utf8) + [0x0A, 0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xFF]

    @Test("Agrees with the full reading on mutations of valid records")
    func mutations() {
        var inputs = DraftInputs(random: SeededGenerator(state: 0x5EED_0002))
        var count = 0
        // Small records: every deletion, truncation and replacement at every position.
        let small = [#"{"v":1,"id":"a","date":"d","source":"s","kind":"text","text":"t\n","key":"k","meta":{"m":"n"},"x":[1]}"#,
                     #"{"v":12,"id":"ab","date":"","source":"","kind":"json","json":{"a":-1.5e2},"attachments":[]}"#]
            .map { Array($0.utf8) }
        for record in small {
            for position in 0..<record.count {
                var deleted = record
                deleted.remove(at: position)
                Self.compare(deleted, publicVerdicts: false)
                Self.compare(Array(record[..<position]), publicVerdicts: false)
                for byte in Self.alphabet where byte != record[position] {
                    var replaced = record
                    replaced[position] = byte
                    Self.compare(replaced, publicVerdicts: false)
                    var inserted = record
                    inserted.insert(byte, at: position)
                    Self.compare(inserted, publicVerdicts: false)
                    count += 4
                }
            }
        }
        // Random records: a few random edits each; every tenth also through the public verdicts.
        let pool = (0..<300).map { _ in Self.encoded(&inputs, ordinary: inputs.chance(70)) }
        var taken = 0
        for round in 0..<250_000 {
            var bytes = pool[round % pool.count]
            for _ in 0..<Int.random(in: 1...3, using: &inputs.random) where !bytes.isEmpty {
                let position = Int.random(in: 0..<bytes.count, using: &inputs.random)
                switch Int.random(in: 0..<5, using: &inputs.random) {
                case 0: bytes[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &inputs.random)
                case 1: bytes[position] = Self.alphabet.randomElement(using: &inputs.random)!
                case 2: bytes.insert(Self.alphabet.randomElement(using: &inputs.random)!, at: position)
                case 3: bytes.remove(at: position)
                default: bytes.removeSubrange(position...)
                }
            }
            if Self.compare(bytes, publicVerdicts: round % 20 == 0) { taken += 1 }
            count += 1
        }
        #expect(count > 250_000)
        #expect(taken > 1000, "the shortcut took \(taken) mutated records")
    }
}
