import Foundation
import Testing
@testable import ShareQueueCore

/// Attachment extensions and media types as `Documentation/Format.md` gives
/// them (§7.3 and appendix A), read from the document itself.
@Suite("Attachment extensions and media types, as Format.md gives them")
struct MediaTypeTests {
    static let specification = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Documentation/Format.md").path

    /// The rows of appendix A: extension and media type.
    static func table() throws -> [(ext: String, type: String)] {
        let text = try String(contentsOfFile: specification, encoding: .utf8)
        let appendix = try #require(text.range(of: "## Appendix A. Media types"))
        let end = text.range(of: "## Appendix B", range: appendix.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        return text[appendix.upperBound..<end].split(separator: "\n").compactMap { line in
            guard let match = line.wholeMatch(of: /\| `([a-z0-9]+)` \| `([^`]+)` \|/) else { return nil }
            return (String(match.1), String(match.2))
        }
    }

    @Test("Every extension of appendix A gives its type, in either case; others give application/octet-stream")
    func tableMatches() throws {
        let rows = try Self.table()
        #expect(rows.count == 42, "appendix A has \(rows.count) rows")
        for (ext, type) in rows {
            #expect(MediaType.guess(fileName: "file.\(ext)") == type)
            #expect(MediaType.guess(fileName: "FILE.\(ext.uppercased())") == type)
        }
        for name in ["file.unknown", "file", ".txt", "notes."] {
            #expect(MediaType.guess(fileName: name) == "application/octet-stream", "\(name)")
        }
    }

    @Test("A copy keeps the extension §7.3 describes, lower case, or none")
    func extensions() {
        #expect(MediaType.safeExtension(of: "photo.JPG") == "jpg")
        #expect(MediaType.safeExtension(of: "archive.tar.gz") == "gz")
        #expect(MediaType.safeExtension(of: "x.abcdefghi0") == "abcdefghi0")
        for name in [".hidden", "notes.", "a.caf\u{e9}", "x.verylongext1", "x.a-b", "noextension"] {
            #expect(MediaType.safeExtension(of: name) == nil, "\(name)")
        }
        // U+212A KELVIN SIGN lower-cases to an ASCII "k": the extension is checked after lower-casing, not before.
        #expect(MediaType.safeExtension(of: "b.\u{212A}ey") == nil)
        #expect(MediaType.guess(fileName: "b.\u{212A}ey") == "application/octet-stream")
    }
}
