import Foundation
import Testing
@testable import ShareQueueCore

/// Reading a file of lines from an offset: only lines that begin there or later.
@Suite("Line reader")
struct LineReaderTests {
    /// The lines `LineReader` visits in `text`, read from `offset`.
    private func lines(_ text: String, from offset: Int64) throws -> [String] {
        let scratch = TemporaryDirectory()
        try Data(text.utf8).write(to: URL(fileURLWithPath: scratch.file("lines")))
        var seen: [String] = []
        let file = try QueueFolder.openQueue(atPath: scratch.path).open("lines", .readOnly)
        defer { file.close() }
        try LineReader(maximumLength: 1 << 20).forEachLine(in: file, path: scratch.file("lines"), from: offset) { piece in
            if case .line(let bytes, _) = piece { seen.append(String(decoding: bytes, as: UTF8.self)) }
        }
        return seen
    }

    @Test("From an offset, a line beginning exactly there is read, one begun before it is not")
    func fromOffset() throws {
        let text = "first\nsecond\nthird"
        #expect(try lines(text, from: 0) == ["first", "second", "third"])
        #expect(try lines(text, from: 6) == ["second", "third"])
        #expect(try lines(text, from: 7) == ["third"])
        #expect(try lines(text, from: 13) == ["third"])
        #expect(try lines(text, from: 14) == [])
        #expect(try lines(text, from: 100) == [])
    }

    @Test("From an offset past a chunk, lines are found whatever the chunk boundaries")
    func acrossChunks() throws {
        let long = String(repeating: "x", count: LineReader.chunkSize + 10)
        let text = long + "\nafter\n" + long + "\nlast\n"
        let second = Int64(long.utf8.count + 1)
        #expect(try lines(text, from: 1) == ["after", long, "last"])
        #expect(try lines(text, from: second) == ["after", long, "last"])
        #expect(try lines(text, from: second + 1) == [long, "last"])
    }
}
