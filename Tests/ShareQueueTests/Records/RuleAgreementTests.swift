import Foundation
import Testing
@testable import ShareQueueCore

/// Random and edge-case input for a producer: texts, JSON documents (valid
/// or not), labels and attachments near and over every limit.
struct DraftInputs {
    var random: SeededGenerator

    /// Characters that need escapes, sit at encoding boundaries, or are simply not ASCII.
    static let awkward: [String] = ["\0", "\u{01}", "\u{1F}", "\u{7F}", "\"", "\\", "/", "\n", "\r", "\t", "é", "€", "😀", "\u{2028}",
                                    "\u{FEFF}", "\u{FFFF}", "\u{10FFFF}", "e\u{301}", " ", "{", "[", "]", ":"]

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func text(maxLength: Int = 40) -> String {
        let length = chance(10) ? Int.random(in: 200...1100, using: &random) : Int.random(in: 0...maxLength, using: &random)
        var text = ""
        for _ in 0..<length {
            if chance(30) {
                text += Self.awkward.randomElement(using: &random)!
            } else {
                text.unicodeScalars.append(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random)))
            }
        }
        return text
    }

    /// A label near its limit: empty, at it, one over, or random.
    mutating func label(limit: Int) -> String {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return ""
        case 1: return String(repeating: "s", count: limit)
        case 2: return String(repeating: "s", count: limit + 1)
        case 3: return String(repeating: "é", count: limit / 2)
        default:
            let text = text()
            return text.isEmpty ? "x" : text
        }
    }

    /// JSON as bytes, mostly valid; some with whitespace, long numbers, escapes and repeated keys.
    mutating func jsonBytes() -> [UInt8] {
        if chance(15) { return Array(Self.edgeJSON.randomElement(using: &random)!.utf8) }
        var out = ""
        value(into: &out, depth: 0)
        return Array(out.utf8)
    }

    private mutating func value(into out: inout String, depth: Int) {
        let space = chance(20) ? [" ", "\n", "\t", "\r\n"].randomElement(using: &random)! : ""
        out += space
        switch Int.random(in: 0..<(depth > 4 ? 5 : 8), using: &random) {
        case 0: out += ["null", "true", "false"].randomElement(using: &random)!
        case 1: out += ["0", "-0", "1e400", "-1E-400", "12345678901234567890123", "0.1e+2", "3.14159265358979323846264338327950288"].randomElement(using: &random)!
        case 2, 3: out += "\"" + escaped(text()) + "\""
        case 4: out += String(Int.random(in: -1_000_000...1_000_000, using: &random))
        case 5, 6:
            out += "{"
            for index in 0..<Int.random(in: 0...4, using: &random) {
                if index > 0 { out += "," }
                out += "\"" + escaped(chance(10) ? "dup" : text(maxLength: 8)) + "\"" + space + ":"
                value(into: &out, depth: depth + 1)
            }
            out += "}"
        default:
            out += "["
            for index in 0..<Int.random(in: 0...4, using: &random) {
                if index > 0 { out += "," }
                value(into: &out, depth: depth + 1)
            }
            out += "]"
        }
        out += space
    }

    /// A JSON string body for `text`, escaped in one of the ways JSON allows.
    private mutating func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || chance(5):
                if scalar.value > 0xFFFF {
                    let value = scalar.value - 0x10000
                    out += String(format: "\\u%04X\\u%04x", 0xD800 + (value >> 10), 0xDC00 + (value & 0x3FF))
                } else {
                    out += String(format: "\\u%04x", scalar.value)
                }
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func nested(_ depth: Int, open: String, close: String, inner: String = "") -> String {
        String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
    }

    /// Depths around the parser's limit, numbers no float holds, escapes at the edges of the rules.
    static let edgeJSON: [String] = [
        nested(254, open: "[", close: "]"), nested(255, open: "[", close: "]"), nested(256, open: "[", close: "]"),
        nested(257, open: "[", close: "]"), nested(255, open: "{\"a\":", close: "}", inner: "1"),
        nested(256, open: "{\"a\":", close: "}", inner: "1"), nested(255, open: "[", close: "]", inner: "{}"),
        "1e400", "-0", "-0.0e-0", "123456789012345678901234567890", "{\"a\":1,\"a\":2}", "\"\\u0000\"", "\"a\\u0000b\"",
        "\"\\ud83d\\ude00\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "[1,]", "{\"a\" 1}", "01", "\"\u{01}\"", "nul",
        " \n{\"k\" : [ 1 , 2 ] }\n ", "\"\u{2028}\"",
    ]

    mutating func content() -> RecordDraft.Content? {
        switch Int.random(in: 0..<10, using: &random) {
        case 0...3: return .text(text(maxLength: chance(20) ? 3000 : 60))
        case 4: return .url(chance(60) ? "https://example.com/" + text(maxLength: 10).filter { $0.isLetter } : text())
        default: return (try? JSONText(validating: jsonBytes())).map { .json($0) }
        }
    }

    mutating func id() -> String? {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return UUID().uuidString
        case 1: return UUID().uuidString.lowercased()
        case 2: return ["", "not-a-uuid", "3B1A7A47-62E9-44DE-8AFC-C39F9309E7FG", "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9\0"].randomElement(using: &random)!
        default: return nil
        }
    }

    mutating func meta() -> JSONMembers<String>? {
        guard chance(30) else { return nil }
        var meta: JSONMembers<String> = [:]
        for _ in 0..<Int.random(in: 0...3, using: &random) { meta[text(maxLength: 12)] = text() }
        return meta
    }

    /// Attachment descriptions a library caller could hand over: forged, with fields no queue makes.
    mutating func forgedAttachment() -> ShareQueueCore.Attachment {
        let digest = String(repeating: "a", count: 64)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return ShareQueueCore.Attachment(name: "n", file: "../escape.bin", size: 1, sha256: digest, type: "application/octet-stream")
        case 1: return ShareQueueCore.Attachment(name: "n", file: "a/b.bin", size: 1, sha256: digest, type: "application/octet-stream")
        case 2: return ShareQueueCore.Attachment(name: "n", file: ".hidden", size: 1, sha256: digest, type: "application/octet-stream")
        default: return ShareQueueCore.Attachment(name: "n", file: "\(UUID().uuidString).bin", size: -1, sha256: digest, type: "application/octet-stream")
        }
    }
}

/// What `share-append` or `QueueAppender` acknowledges, a drain delivers; what
/// they refuse leaves the queue as it was. Both sides see the same random and
/// edge-case input.
@Suite("One rule set for producers and drains", .serialized, .runTimeLimit(minutes: 3))
struct RuleAgreementTests {
    /// Ids in the order delivered, through a sink that builds every record (the full decoding path).
    struct RecordIDs: DrainSink {
        var ids: [String] = []
        mutating func deliver(_ batch: DrainBatch) throws { ids += batch.records.map { $0.record.id } }
    }

    /// Drains `queue` twice, from two copies: through the library, building every record, and
    /// through `host-drain` to standard output, which passes records through; both must deliver `expected`.
    func expectDelivered(_ expected: [String], queue: String, in scratch: TemporaryDirectory) throws {
        let copy = scratch.file("copy")
        try FileManager.default.copyItem(atPath: queue, toPath: copy)
        var sink = RecordIDs()
        let summary = try QueueDrainer(directory: try QueueDirectory(path: queue)).drain(into: &sink)
        #expect(summary.quarantined == 0)
        #expect(sink.ids == expected)
        let drain = try run("host-drain", ["--dir", copy], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drain.warningCount == 0, "\(drain.stderr)")
        #expect(Self.leadingIDs(drain.stdout) == expected)
    }

    /// The id of each JSON line, read from its documented place (`v` first, then `id`):
    /// Foundation's parser refuses numbers such as 1e400 that a queue passes through.
    static func leadingIDs(_ jsonLines: Data) -> [String] {
        let prefix = "{\"v\":1,\"id\":\""
        return String(decoding: jsonLines, as: UTF8.self).split(separator: "\n").map { line in
            line.hasPrefix(prefix) ? String(line.dropFirst(prefix.count).prefix(36)) : "not a record line: \(line.prefix(80))"
        }
    }

    @Test("Every record QueueAppender acknowledges is delivered; every one it refuses leaves the queue unchanged")
    func libraryProducer() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        var options = AppendOptions()
        options.synchronize = false
        options.maxRecordBytes = 2048
        let appender = try QueueAppender(directory: directory, options: options)
        let store = AttachmentStore(directory: directory)
        let attachment = scratch.file("photo.jpg")
        _ = FileManager.default.createFile(atPath: attachment, contents: Data("jpeg".utf8))
        var inputs = DraftInputs(random: SeededGenerator(state: 0x5EED_0003))
        var acknowledged: [String] = []
        var refused = 0
        for _ in 0..<600 {
            var drafts: [RecordDraft] = []
            for _ in 0..<(inputs.chance(20) ? Int.random(in: 2...3, using: &inputs.random) : 1) {
                guard let content = inputs.content() else { continue }
                var draft = RecordDraft(content, source: inputs.label(limit: 256), key: inputs.chance(40) ? inputs.label(limit: 1024) : nil,
                                        meta: inputs.meta(), id: inputs.id())
                if inputs.chance(8) {
                    draft.attachments = [inputs.chance(50) ? try store.add(copyOf: attachment, maxBytes: 1 << 20) : inputs.forgedAttachment()]
                }
                if inputs.chance(5) { draft.content = .attachmentsOnly }
                drafts.append(draft)
            }
            guard !drafts.isEmpty else { continue }
            let before = snapshot(directory.path)
            do {
                acknowledged += try appender.append(drafts)
            } catch {
                refused += 1
                #expect(snapshot(directory.path) == before, "a refused append changed the queue: \(error)")
            }
        }
        // Both outcomes must be common, or the comparison proves little.
        #expect(acknowledged.count > 200)
        #expect(refused > 100)
        try expectDelivered(acknowledged, queue: directory.path, in: scratch)
    }

    @Test("Every id share-append prints is delivered; every input it refuses leaves the queue unchanged")
    func toolProducer() throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        var inputs = DraftInputs(random: SeededGenerator(state: 0x5EED_0004))
        // The edge cases, then a sample of random ones: each process costs a few milliseconds.
        var cases: [(arguments: [String], input: [UInt8])] = DraftInputs.edgeJSON.map { (["--json"], Array($0.utf8)) }
        cases.append(([], Array("before\0after".utf8)))
        for _ in 0..<40 {
            var arguments: [String] = []
            let input: [UInt8]
            switch Int.random(in: 0..<3, using: &inputs.random) {
            case 0: (arguments, input) = (["--json"], inputs.jsonBytes())
            case 1: (arguments, input) = (["--url"], Array(inputs.text().utf8))
            default: input = Array(inputs.text(maxLength: 200).utf8)
            }
            // Arguments cannot hold U+0000.
            func argument(_ text: String) -> String { text.replacingOccurrences(of: "\0", with: "0") }
            if inputs.chance(40) { arguments += ["--source", argument(inputs.label(limit: 256))] }
            if inputs.chance(40) { arguments += ["--key", argument(inputs.label(limit: 1024))] }
            if inputs.chance(30) { arguments += ["--meta", argument(inputs.text(maxLength: 8)) + "=" + argument(inputs.text())] }
            if let id = inputs.id(), inputs.chance(50) { arguments += ["--id", argument(id)] }
            cases.append((arguments, input))
        }
        var acknowledged: [String] = []
        var refused = 0
        for (arguments, input) in cases {
            let before = snapshot(q)
            let result = try run("share-append", ["--dir", q, "--no-sync"] + arguments, stdinData: Data(input), in: scratch)
            if result.status == 0 {
                acknowledged += result.lines
            } else {
                refused += 1
                #expect(snapshot(q) == before, "a refused append changed the queue: \(result.stderr)")
            }
        }
        #expect(acknowledged.count > 20)
        #expect(refused > 10)
        try expectDelivered(acknowledged, queue: q, in: scratch)
    }

    @Test("JSON nested 255 deep is a record nested 256 deep: taken; one level more is refused by the producer, not the drain")
    func depthAtTheLimit() throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let taken = try run("share-append", ["--dir", q, "--json"], stdin: DraftInputs.nested(255, open: "[", close: "]"), in: scratch)
        #expect(taken.status == 0, "\(taken.stderr)")
        let refused = try run("share-append", ["--dir", q, "--json"], stdin: DraftInputs.nested(256, open: "[", close: "]"), in: scratch)
        #expect(refused.status == 65)
        #expect(refused.lines.isEmpty)
        #expect(refused.stderr.contains("nested more than 256 deep"), "\(refused.stderr)")
        try expectDelivered(taken.lines, queue: q, in: scratch)
    }
}
