import Foundation
import Testing
@testable import ShareQueueCore

/// `share-append --if-changed` against `Tests/Conformance/keys.py`, a second
/// writer of the `keys` folder made from `Documentation/Format.md` (§14) alone:
/// an entry that script writes is one the tools read, and an entry the tools
/// write has exactly the bytes (name, line, content digest) the script computes.
@Suite("The keys folder as Format.md specifies it", .runTimeLimit(minutes: 2), OptionalProgram.needs("python3"))
struct KeysFolderFormatTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Conformance/keys.py").path
    /// An id no tool made, so that printing it shows the entry was read.
    static let foreignID = "0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"
    static let key = "wallpaper \"now\" ü"

    /// One way to publish content: share-append's arguments and input, or a library
    /// draft, and the record's content members as the script is given them.
    struct Content: CustomStringConvertible, Sendable {
        let description: String
        let arguments: [String]
        let stdin: String?
        let draft: RecordDraft?
        /// `{"kind":…,"text" or "json":…,"attachments":[{"sha256":…}]}`, as stored.
        let members: @Sendable (_ attachmentDigest: String) -> String
    }

    static let note = "a small attached note\n"
    static let photo = "not really a photo\n"
    static let reading = "{\"serial\":12345678901234567890,\"price\":1.50,\"label\":\"nul \\u0000 e \\u00e9\"}"

    static let contents: [Content] = [
        Content(description: "text", arguments: ["beach.jpg"], stdin: nil, draft: nil) { _ in
            "{\"kind\":\"text\",\"text\":\"beach.jpg\"}" },
        Content(description: "url", arguments: ["--url", "https://example.com/a"], stdin: nil, draft: nil) { _ in
            "{\"kind\":\"url\",\"text\":\"https://example.com/a\"}" },
        Content(description: "json, spaced on input and stored compactly", arguments: ["--json"],
                stdin: "{\"b\" : [1.50, 12345678901234567890, \"\\u00e9\\u0000\"], \"a\":null}\n", draft: nil) { _ in
            "{\"kind\":\"json\",\"json\":{\"b\":[1.50,12345678901234567890,\"\\u00e9\\u0000\"],\"a\":null}}" },
        Content(description: "a kind of the producer's own", arguments: [], stdin: nil,
                draft: RecordDraft(.value(try! JSONText(validating: Array(reading.utf8)), kind: Record.Kind(rawValue: "com.example.reading")),
                                   source: "spec", key: key)) { _ in
            "{\"kind\":\"com.example.reading\",\"json\":\(reading)}" },
        Content(description: "text with an attachment", arguments: ["--attach", "NOTE", "caption"], stdin: nil, draft: nil) { note in
            "{\"kind\":\"text\",\"text\":\"caption\",\"attachments\":[{\"sha256\":\"\(note)\"}]}" },
        Content(description: "a file record of two attachments", arguments: ["--attach", "NOTE", "--attach", "PHOTO"], stdin: nil, draft: nil) { note in
            "{\"kind\":\"file\",\"attachments\":[{\"sha256\":\"\(note)\"},{\"sha256\":\"\(SHA256.hex(Array(photo.utf8)))\"}]}" },
    ]

    /// Publishes `content` with `--if-changed` (or `appendIfChanged`); returns the id reported.
    private func publish(_ content: Content, to queue: TestQueue) throws -> String {
        if let draft = content.draft {
            return try QueueAppender(directory: try QueueDirectory(path: queue.path)).appendIfChanged(draft).id
        }
        let note = queue.scratch.file("note.txt"), photo = queue.scratch.file("photo.jpg")
        try Data(Self.note.utf8).write(to: URL(fileURLWithPath: note))
        try Data(Self.photo.utf8).write(to: URL(fileURLWithPath: photo))
        let arguments = content.arguments.map { $0 == "NOTE" ? note : $0 == "PHOTO" ? photo : $0 }
        let result = try queue.append(["--if-changed", "--key", Self.key] + arguments, stdin: content.stdin)
        #expect(result.status == 0, "\(result.stderr)")
        return result.lines.first ?? ""
    }

    private func python(_ arguments: [String], stdin: String? = nil, in scratch: TemporaryDirectory) throws -> ProcessResult {
        let python = try #require(OptionalProgram.required("python3"))
        let result = try run(python, [Self.script] + arguments, stdin: stdin, in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        return result
    }

    @Test("An entry the script wrote makes an unchanged publish append nothing and print its id", arguments: contents)
    func scriptEntryIsRead(_ content: Content) throws {
        let queue = TestQueue()
        #expect(try queue.append(["-q", "seed"]).status == 0)
        let members = content.members(SHA256.hex(Array(Self.note.utf8)))
        _ = try python(["write", queue.path, Self.key, Self.foreignID], stdin: members, in: queue.scratch)
        #expect(try publish(content, to: queue) == Self.foreignID)
        #expect(try queue.status()["pending"] as? Int == 1, "the publish appended a record")
        // An unchanged publish leaves no copy of its attachments behind.
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))) ?? []).isEmpty)
    }

    @Test("An entry a publish wrote has exactly the name and line the script computes", arguments: contents)
    func toolEntryMatchesScript(_ content: Content) throws {
        let queue = TestQueue()
        let id = try publish(content, to: queue)
        let expected = String(decoding: try python(["entry", queue.path], in: queue.scratch).stdout, as: UTF8.self)
        let name = String(expected.prefix { $0 != "\n" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.file("keys")) == [name])
        #expect(String(decoding: queue.bytes("keys/" + name), as: UTF8.self) == String(expected.dropFirst(name.count + 1)))
        #expect(expected.contains("\"id\":\"\(id)\""))
        // The script's digest of the members alone agrees with its digest of the whole stored record.
        let other = TestQueue()
        #expect(try other.append(["-q", "seed"]).status == 0)
        _ = try python(["write", other.path, Self.key, id], stdin: content.members(SHA256.hex(Array(Self.note.utf8))), in: other.scratch)
        #expect(other.bytes("keys/" + name) == queue.bytes("keys/" + name))
    }
}
