import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// The drain's bookkeeping files (`attempts`, `dead-letters.log`): they hold
/// any record id unambiguously, and whatever is planted in them, no tool reads
/// one whole or lets it stop the queue.
@Suite("Bookkeeping files", .runTimeLimit(minutes: 2))
struct BookkeepingTests {
    /// A command that refuses any batch holding a record with the text "poison", and keeps the rest.
    static func command(_ out: String) -> String { DeadLetterTests.command(out) }

    static let oddIDs = [
        "poison pill", "line\nbreak", "quo\"te", "back\\slash", "nul\u{0}byte", " ", "\n",
        String(repeating: "é", count: 64),  // 128 bytes: the longest id a record may have
    ]

    @Test("A record with any id is refused until it is a dead letter; the records before it are delivered once, those after it in each run until it is set aside", arguments: oddIDs)
    func anyIDReachesTheDeadLetters(id: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let before = try queue.appendLines(["a", "b"])
        try queue.plantRecord(id: id, text: "poison")
        let after = try queue.appendLines(["c", "d"])
        for attempt in 1...3 {
            let drain = try queue.drain(["--exec", Self.command(out), "--max-attempts", "3"])
            if attempt < 3 {
                #expect(drain.status == 75, "\(drain.stderr)")
                #expect(drain.warned(.recordRefused(id: id, attempt: attempt, maxAttempts: 3, reason: anyText)), "\(drain.stderr)")
            } else {
                #expect(drain.status == 0, "\(drain.stderr)")
                #expect(drain.stderr.contains("1 moved to the dead letters"), "\(drain.stderr)")
                #expect(drain.warned(.recordDeadLettered(id: id, cause: .refusedTooOften(attempts: 3), reason: anyText)), "\(drain.stderr)")
            }
        }
        // The checkpoint waits before the refused record until it is a dead letter: the three runs deliver what follows it each time.
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == before + after + after + after)
        #expect(!FileManager.default.fileExists(atPath: queue.file("attempts")))
        let letters = try queue.deadLetters()
        #expect(letters.count == 1)
        #expect((letters.first?["record"] as? [String: Any])?["id"] as? String == id)
        #expect(try queue.status()["deadLetters"] as? Int == 1)

        let requeue = try queue.drain(["--requeue-dead"])
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.stderr.contains("put 1 dead letter back"))
        #expect(try ids(in: try queue.drain().stdout) == [id])
    }

    @Test("An id with a line break cannot forge the refusal count of another record")
    func forgedCount() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let flag = scratch.file("refuse-once")
        _ = FileManager.default.createFile(atPath: flag, contents: nil)
        let victim = try queue.append(text: "x")[0]
        // Planted before the victim: refused once, which once wrote "<victim> 4" as a line of its own.
        try FileManager.default.removeItem(atPath: queue.pendingPath)
        try queue.plantRecord(id: "\(victim) 4\nx", text: "refuse-once")
        try queue.plantRecord(id: victim, text: "poison")
        let command = "input=$(cat); case \"$input\" in *'\"poison\"'*) exit 9;; esac; "
            + "case \"$input\" in *refuse-once*) if [ -e '\(flag)' ]; then rm '\(flag)'; exit 1; fi;; esac; printf '%s\\n' \"$input\" >> '\(out)'"
        let first = try queue.drain(["--exec", command])
        #expect(first.status == 75, "\(first.stderr)")
        #expect(first.warned(.recordRefused(id: victim, attempt: 1, maxAttempts: 5, reason: anyText)), "\(first.stderr)")
        let second = try queue.drain(["--exec", command])
        #expect(second.status == 75, "\(second.stderr)")
        // Refused in each run, once a run: a forged count of 4 would have made this its fifth and last.
        #expect(second.warned(.recordRefused(id: victim, attempt: 2, maxAttempts: 5, reason: anyText)), "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == ["\(victim) 4\nx"])
    }

    @Test("A record whose id is longer than 128 bytes is set aside as damage; the records around it are delivered")
    func overlongID() throws {
        let queue = TestQueue()
        let before = try queue.append(text: "a")
        try queue.plantRecord(id: String(repeating: "x", count: 129), text: "poison")
        let after = try queue.append(text: "b")
        let drain = try queue.drain()
        #expect(drain.status == 0)
        #expect(try ids(in: drain.stdout) == before + after)
        #expect(try queue.status()["quarantined"] as? Int == 1)
    }

    @Test("A damaged attempts file costs at most a count: it is read strictly and the count starts over")
    func damagedAttempts() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let poison = try queue.append(text: "poison")[0]
        // Lines that are not exactly {"id":...,"attempts":N} count for nothing.
        let junk = "\(poison) 1\n{\"id\":\"\(poison)\",\"attempts\":1,\"more\":1}\n{\"id\":\"\(poison)\",\"attempts\":-1}\n\u{1}\u{ff}garbage\n{\"id\":\"\(poison)\""
        try Data(junk.utf8).write(to: URL(fileURLWithPath: queue.file("attempts")))
        let drain = try queue.drain(["--exec", Self.command(out), "--max-attempts", "2"])
        #expect(drain.status == 75, "\(drain.stderr)")
        #expect(drain.warned(.recordRefused(id: poison, attempt: 1, maxAttempts: 2, reason: anyText)), "\(drain.stderr)")
        // Every line of the file is damaged: none is exactly an id and a count above 0.
        #expect(drain.warned(.refusalCountsDamaged(path: queue.file("attempts"), damagedLines: 5)), "\(drain.stderr)")
        let again = try queue.drain(["--exec", Self.command(out), "--max-attempts", "2"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("1 moved to the dead letters"))
    }

    // MARK: - Files planted at absurd sizes

    static let plantedSize: Int64 = 64 << 30
    /// The memory bound of a tool run, wider under a sanitizer only.
    static let memoryLimit: Int64 = (64 << 20) * Int64(sanitizerAllowance)

    /// Extends a file with a hole, so that it declares `size` more bytes without using the disk.
    static func extendSparse(_ path: String, by size: Int64) throws {
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(truncate(path, off_t(Int64(status.st_size) + size)) == 0)
    }

    @Test("A 64 GiB attempts file is set aside, not read: the drain delivers in bounded memory")
    func hugeAttempts() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines(["a", "b", "c"])
        let attempts = queue.file("attempts")
        _ = FileManager.default.createFile(atPath: attempts, contents: nil)
        try Self.extendSparse(attempts, by: Self.plantedSize)
        let drain = try queue.measuredDrain([])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        #expect(drain.peakMemory < Self.memoryLimit, "peak memory \(drain.peakMemory >> 20) MiB")
        #expect(!FileManager.default.fileExists(atPath: attempts))
        let rejected = queue.names().filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-attempts") }
        #expect(rejected.count == 1)
        #expect(drain.warned(.refusalCountsTooLarge(path: attempts, movedTo: queue.file(rejected.first ?? ""), cause: nil)), "\(drain.stderr)")
    }

    @Test("A 64 GiB line in the dead letters is skipped with a warning by --status, a drain and --requeue-dead; the letters around it are kept")
    func hugeDeadLetters() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let poisoned = try queue.appendLines(["poison", "poison"])
        #expect(try queue.drain(["--exec", Self.command(out), "--max-attempts", "1"]).status == 0)
        let path = queue.file("dead-letters.log")
        let letters = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(letters.count == 2)
        try Data((letters[0] + "\n").utf8).write(to: URL(fileURLWithPath: path))
        try Self.extendSparse(path, by: Self.plantedSize)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.seekToEnd()
        try file.write(contentsOf: Data(("\n" + letters[1] + "\n").utf8))
        try file.close()
        let good = try queue.append(text: "good")
        let third = try queue.append(text: "poison")

        let status = try queue.measuredDrain(["--status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.peakMemory < Self.memoryLimit, "peak memory \(status.peakMemory >> 20) MiB")
        let shown = try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any]
        #expect(shown?["deadLetters"] as? Int == 2)
        #expect(shown?["pending"] as? Int == 2)
        #expect(status.warned(.damagedDeadLetterSkipped(path: path, offset: Int64((letters[0] + "\n").utf8.count), length: Self.plantedSize, isTooLong: true)),
                "\(status.stderr)")

        // Dead-lettering reads the file to keep one letter per record.
        let drain = try queue.measuredDrain(Self.letterDrain(out))
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drain.peakMemory < Self.memoryLimit, "peak memory \(drain.peakMemory >> 20) MiB")
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == good)

        let requeue = try queue.measuredDrain(["--requeue-dead"])
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.peakMemory < Self.memoryLimit, "peak memory \(requeue.peakMemory >> 20) MiB")
        #expect(requeue.stderr.contains("put 3 dead letters back"), "\(requeue.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))
        let aside = queue.names().filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-dead-letters.requeue") }
        #expect(requeue.warned(.damagedRequeueMovedAside(path: queue.file("dead-letters.requeue"), damagedLines: 1, movedTo: queue.file(aside.first ?? ""))),
                "\(requeue.stderr)")
        #expect(try ids(in: try queue.drain().stdout) == poisoned + third)
    }

    @Test("A requeue cut short and resumed skips the letters already queued again a stretch at a time: 100,000 of them cost no memory of their own")
    func resumedRequeueSkipsInStretches() throws {
        let scratch = TemporaryDirectory()
        var peaks: [Int64] = []
        for letterCount in [1, 100_000] {
            let queue = TestQueue(in: scratch, name: "letters-\(letterCount)")
            let payloads = (0..<100_000).map { index in
                Array(#"{"v":1,"id":"put-back-\#(index)","date":"2026-12-07T00:00:00.000Z","source":"s","kind":"text","text":"\#(String(repeating: "t", count: 100))"}"#.utf8)
            }
            for start in stride(from: 0, to: payloads.count, by: 10_000) { try queue.appendStored(Array(payloads[start..<(start + 10_000)])) }
            // What a requeue killed after its appends leaves: its letters, already queued again, none of them blanked yet.
            var letters = Data()
            for payload in payloads.prefix(letterCount) {
                letters += Data(#"{"date":"2026-12-07T00:00:00.000Z","attempts":5,"error":"refused","record":"#.utf8) + Data(payload) + Data("}\n".utf8)
            }
            #expect(FileManager.default.createFile(atPath: queue.file("dead-letters.requeue"), contents: letters, attributes: [.posixPermissions: 0o600]))
            let requeue = try queue.measuredDrain(["--requeue-dead"])
            #expect(requeue.status == 0, "\(requeue.stderr)")
            #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.requeue")))
            peaks.append(requeue.peakMemory)
            // Each record once: none was put back twice.
            #expect(try ids(in: queue.drain(["-q"]).stdout).count == 100_000)
        }
        #expect(peaks[1] < peaks[0] + (8 << 20) * Int64(sanitizerAllowance), "\(peaks[1]) bytes skipping 100,000 letters, \(peaks[0]) skipping one")
    }

    @Test("Dead-lettering costs the same next to 100,000 or 300,000 earlier letters: only the end of their file is read")
    func manyEarlierLetters() throws {
        // With batches of 10, a drain reads the last 21 MiB of the letters (`DeadLetters.recentLettersSize`):
        // 100,000 letters, about 26 MB, already fill it, and three times as many must not cost three times as much.
        let few = try drainNextToLetters(100_000)
        let many = try drainNextToLetters(300_000)
        #expect(many.seconds < few.seconds * 2, "\(many.seconds) s next to 300,000 letters, \(few.seconds) s next to 100,000")
        #expect(many.peakMemory < (24 << 20) * Int64(sanitizerAllowance), "peak memory \(many.peakMemory >> 20) MiB")
    }

    /// The options of the drains that make dead letters next to many others.
    private static func letterDrain(_ out: String) -> [String] { ["--exec", command(out), "--max-attempts", "1", "--batch", "10"] }

    /// Runs a drain that dead-letters one record, in a queue whose dead-letter
    /// file already holds `count` (a multiple of 1,000) distinct letters, about 260 bytes each.
    private func drainNextToLetters(_ count: Int) throws -> MeasuredRun {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        _ = try queue.appendLines(["poison"])
        #expect(try queue.drain(Self.letterDrain(out)).status == 0)
        let path = queue.file("dead-letters.log")
        let letter = try String(contentsOfFile: path, encoding: .utf8)
        // Letters like the first, each with an id of its own: a block of 1,000 whose ids end in
        // 000000 to 000999, then copies of it with the block's number in the six digits before those.
        let stored = try #require(letter.range(of: #""id":""#))
        let prefix = Array(letter[..<stored.upperBound].utf8), suffix = Array(letter[letter.index(stored.upperBound, offsetBy: 36)...].utf8)
        func digits(_ number: Int) -> [UInt8] { Array(String(1_000_000 + number).utf8.dropFirst()) }
        var block: [UInt8] = []
        for n in 0..<1000 { block += prefix + Array("00000000-0000-7000-8000-000000".utf8) + digits(n) + suffix }
        let letterSize = block.count / 1000, blockDigits = prefix.count + 24
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        for number in 1...(count / 1000) {
            let mark = digits(number)
            for n in 0..<1000 { block.replaceSubrange((n * letterSize + blockDigits)..<(n * letterSize + blockDigits + 6), with: mark) }
            try handle.write(contentsOf: block)
        }
        try handle.close()
        let good = try queue.append(text: "good")
        _ = try queue.append(text: "poison")
        let drain = try queue.measuredDrain(Self.letterDrain(out))
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == good)
        let lines = try Data(contentsOf: URL(fileURLWithPath: path)).reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
        #expect(lines == count + 2)
        return drain
    }
}
