import Testing
import ToolSupport

/// The long-running sink protocol's lines, byte for byte: what host-drain writes and how it reads an answer.
@Suite("Long-running sink protocol lines")
struct SinkProtocolTests {
    @Test("host-drain greets with 'sharequeue-sink 1' and opens a batch with its count and its bytes")
    func linesWritten() {
        #expect(SinkProtocol.greetingLine == Array("sharequeue-sink 1\n".utf8))
        #expect(SinkProtocol.batchHeader(count: 1000, bytes: 171_234) == Array("batch 1000 171234\n".utf8))
    }

    @Test("An answer is a word, then after one space a message; a carriage return before the newline is taken off",
          arguments: [("delivered", SinkProtocol.Answer.delivered),
                      ("delivered\r", .delivered),
                      ("delivered all 1000", .delivered),
                      ("refused", .refused(message: "")),
                      ("refused record 7 is too large", .refused(message: "record 7 is too large")),
                      ("retry", .retry(message: "")),
                      ("retry server away\r", .retry(message: "server away"))])
    func answers(_ line: String, _ answer: SinkProtocol.Answer) {
        #expect(SinkProtocol.answer(Array(line.utf8)) == answer)
    }

    @Test("Anything else is no answer, shown escaped and cut at 200 bytes",
          arguments: ["", "ok", "Delivered", " delivered", "delivered\t", "refused\u{1B}[2J", String(repeating: "x", count: 300)])
    func malformed(_ line: String) throws {
        guard case .malformed(let shown) = SinkProtocol.answer(Array(line.utf8)) else {
            Issue.record("'\(line)' was taken for an answer")
            return
        }
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(shown)")
        #expect(shown.utf8.count <= 206, "\(shown)")
    }

    @Test("Only the greeting is the greeting")
    func greeting() {
        #expect(SinkProtocol.isGreeting(Array("sharequeue-sink 1".utf8)))
        #expect(SinkProtocol.isGreeting(Array("sharequeue-sink 1\r".utf8)))
        for other in ["sharequeue-sink 2", "sharequeue-sink 1 ", "sharequeue-sink", ""] {
            #expect(!SinkProtocol.isGreeting(Array(other.utf8)), "\(other)")
        }
    }
}
