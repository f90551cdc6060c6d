import Foundation
import Testing

/// A record stored over several lines (another producer's, spaced as JSON
/// allows) is a valid record, so it can be refused and dead-lettered like any
/// other: its letter must still be one line, or no drain can read it back.
@Suite("Dead letters of records stored over several lines", .runTimeLimit(minutes: 2))
struct MultiLineDeadLetterTests {
    static let id = "00000000-0000-4000-8000-000000000077"
    static let stored = "{\"v\":1,\n \"id\":\"\(id)\",\r\n \"date\":\"2026-11-29T14:52:20.123Z\",\"source\":\"other\",\n"
        + " \"kind\":\"com.example.reading\",\"json\":{\"s\":\"\\u00e9\\n\",\"n\":1.50}}"

    @Test("Its letter is one line holding the record with its line breaks as spaces; it is added once and put back whole")
    func letterIsOneLine() throws {
        let queue = TestQueue()
        try queue.appendStored([Array(Self.stored.utf8)])
        let refused = try queue.drain(["--exec", "exit 1", "--max-attempts", "1"])
        #expect(refused.status == 0, "\(refused.stderr)")
        let oneLine = Self.stored.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        let letters = String(decoding: queue.bytes("dead-letters.log"), as: UTF8.self)
        #expect(letters.split(separator: "\n").count == 1)
        #expect(letters.hasSuffix(",\"record\":" + oneLine + "}\n"))

        // The same stored bytes refused again (as after a drain killed before its checkpoint) are not added twice.
        try queue.appendStored([Array(Self.stored.utf8)])
        #expect(try queue.drain(["--exec", "exit 1", "--max-attempts", "1"]).status == 0)
        #expect(String(decoding: queue.bytes("dead-letters.log"), as: UTF8.self) == letters)

        let requeue = try queue.drain(["--requeue-dead"])
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.stderr.contains("put 1 dead letter back"), "\(requeue.stderr)")
        let delivered = try queue.drain()
        #expect(String(decoding: delivered.stdout, as: UTF8.self) == oneLine + "\n")
    }

    @Test("A letter after a torn last line (a write cut short) starts a line of its own and is put back")
    func afterATornLine() throws {
        let queue = TestQueue()
        _ = try queue.append(text: "refused")
        try FileManager.default.createDirectory(atPath: queue.path, withIntermediateDirectories: true)
        let torn = #"{"date":"2026-11-29T14:52:20.123Z","attempts":1,"error":"x","record":{"v":1,"id":"cut"#
        try Data(torn.utf8).write(to: URL(fileURLWithPath: queue.file("dead-letters.log")))
        #expect(try queue.drain(["--exec", "exit 1", "--max-attempts", "1"]).status == 0)
        let requeue = try queue.drain(["--requeue-dead"])
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.stderr.contains("put 1 dead letter back"), "\(requeue.stderr)")
        #expect(try queue.drain().lines.count == 1)
    }
}
