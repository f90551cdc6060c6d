import Foundation
import Testing
@testable import ShareQueue
import ShareQueueSystem
import ToolSupport

/// The drain's bookkeeping files (`attempts`, `dead-letters.log`): they hold
/// any record id unambiguously, and whatever is planted in them, no tool reads
/// one whole or lets it stop the queue.
@Suite("Bookkeeping files", .timeLimit(.minutes(2)))
struct BookkeepingTests {
    /// A command that refuses any batch holding a record with the text "poison", and keeps the rest.
    static func command(_ out: String) -> String { DeadLetterTests.command(out) }

    /// Stores a record as a foreign producer would: any id, framed straight into the queue.
    static func plantRecord(id: String, text: String, in queue: String) throws {
        let payload = Record.encode(id: id, date: "2026-01-02T03:04:05.678Z", source: "foreign", kind: .text,
                                    text: text, jsonBytes: nil, key: nil, meta: nil)
        try QueueAppender(directory: try QueueDirectory(path: queue)).appendStored([payload])
    }

    static func status(_ q: String, in scratch: TemporaryDirectory) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: try run("host-drain", ["--dir", q, "--status", "--json"], in: scratch).stdout) as! [String: Any]
    }

    static let oddIDs = [
        "poison pill", "line\nbreak", "quo\"te", "back\\slash", "nul\u{0}byte", " ", "\n",
        String(repeating: "é", count: 64),  // 128 bytes: the longest id a record may have
    ]

    @Test("A record with any id is refused until it is a dead letter; the records around it are delivered once each", arguments: oddIDs)
    func anyIDReachesTheDeadLetters(id: String) throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let out = scratch.file("delivered")
        let before = try run("share-append", ["--dir", q, "--lines"], stdin: "a\nb\n", in: scratch).lines
        try Self.plantRecord(id: id, text: "poison", in: q)
        let after = try run("share-append", ["--dir", q, "--lines"], stdin: "c\nd\n", in: scratch).lines
        for attempt in 1...3 {
            let drain = try run("host-drain", ["--dir", q, "--exec", Self.command(out), "--max-attempts", "3"], in: scratch)
            if attempt < 3 {
                #expect(drain.status == 75, "\(drain.stderr)")
                #expect(drain.stderr.contains("attempt \(attempt) of 3"), "\(drain.stderr)")
            } else {
                #expect(drain.status == 0, "\(drain.stderr)")
                #expect(drain.stderr.contains("1 moved to the dead letters"), "\(drain.stderr)")
            }
        }
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == before + after)
        #expect(!FileManager.default.fileExists(atPath: q + "/attempts"))
        let letters = try jsonObjects(Data(contentsOf: URL(fileURLWithPath: q + "/dead-letters.log")))
        #expect(letters.count == 1)
        #expect((letters.first?["record"] as? [String: Any])?["id"] as? String == id)
        #expect(try Self.status(q, in: scratch)["deadLetters"] as? Int == 1)

        let requeue = try run("host-drain", ["--dir", q, "--requeue-dead"], in: scratch)
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.stderr.contains("put 1 dead letter back"))
        #expect(try ids(in: try run("host-drain", ["--dir", q], in: scratch).stdout) == [id])
    }

    @Test("An id with a line break cannot forge the refusal count of another record")
    func forgedCount() throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let out = scratch.file("delivered")
        let flag = scratch.file("refuse-once")
        _ = FileManager.default.createFile(atPath: flag, contents: nil)
        let victim = try run("share-append", ["--dir", q, "x"], in: scratch).lines[0]
        // Planted before the victim: refused once, which once wrote "<victim> 4" as a line of its own.
        try FileManager.default.removeItem(atPath: q + "/pending.log")
        try Self.plantRecord(id: "\(victim) 4\nx", text: "refuse-once", in: q)
        try Self.plantRecord(id: victim, text: "poison", in: q)
        let command = "input=$(cat); case \"$input\" in *'\"poison\"'*) exit 9;; esac; "
            + "case \"$input\" in *refuse-once*) if [ -e '\(flag)' ]; then rm '\(flag)'; exit 1; fi;; esac; printf '%s\\n' \"$input\" >> '\(out)'"
        let first = try run("host-drain", ["--dir", q, "--exec", command], in: scratch)
        #expect(first.status == 75, "\(first.stderr)")
        #expect(first.stderr.contains("attempt 1 of 5"))
        let second = try run("host-drain", ["--dir", q, "--exec", command], in: scratch)
        #expect(second.status == 75, "\(second.stderr)")
        #expect(second.stderr.contains("attempt 1 of 5"), "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: q + "/dead-letters.log"))
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == ["\(victim) 4\nx"])
    }

    @Test("A record whose id is longer than 128 bytes is set aside as damage; the records around it are delivered")
    func overlongID() throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let before = try run("share-append", ["--dir", q, "a"], in: scratch).lines
        try Self.plantRecord(id: String(repeating: "x", count: 129), text: "poison", in: q)
        let after = try run("share-append", ["--dir", q, "b"], in: scratch).lines
        let drain = try run("host-drain", ["--dir", q], in: scratch)
        #expect(drain.status == 0)
        #expect(try ids(in: drain.stdout) == before + after)
        #expect(try Self.status(q, in: scratch)["quarantined"] as? Int == 1)
    }

    @Test("A damaged attempts file costs at most a count: it is read strictly and the count starts over")
    func damagedAttempts() throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let out = scratch.file("delivered")
        let poison = try run("share-append", ["--dir", q, "poison"], in: scratch).lines[0]
        // Lines that are not exactly {"id":...,"attempts":N} count for nothing.
        let junk = "\(poison) 1\n{\"id\":\"\(poison)\",\"attempts\":1,\"more\":1}\n{\"id\":\"\(poison)\",\"attempts\":-1}\n\u{1}\u{ff}garbage\n{\"id\":\"\(poison)\""
        try Data(junk.utf8).write(to: URL(fileURLWithPath: q + "/attempts"))
        let drain = try run("host-drain", ["--dir", q, "--exec", Self.command(out), "--max-attempts", "2"], in: scratch)
        #expect(drain.status == 75, "\(drain.stderr)")
        #expect(drain.stderr.contains("attempt 1 of 2"), "\(drain.stderr)")
        #expect(drain.stderr.contains("attempts"))
        let again = try run("host-drain", ["--dir", q, "--exec", Self.command(out), "--max-attempts", "2"], in: scratch)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("1 moved to the dead letters"))
    }

    // MARK: - Files planted at absurd sizes

    static let plantedSize: Int64 = 64 << 30
    static let memoryLimit: Int64 = 64 << 20

    /// Runs a tool and returns what it left and the most memory it held at once.
    /// Measured by /usr/bin/time where there is one: the rusage of a child
    /// started with vfork also counts the memory of this (large) test process.
    static func runMeasuringMemory(_ tool: String, _ arguments: [String], in scratch: TemporaryDirectory) throws -> (ProcessResult, peakMemory: Int64) {
        let id = UUID().uuidString
        let (out, err, memory) = (scratch.file("out-\(id)"), scratch.file("err-\(id)"), scratch.file("memory-\(id)"))
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let timer = "/usr/bin/time"
        let measured = FileManager.default.isExecutableFile(atPath: timer)
        let words = ((measured ? [timer, "-q", "-o", memory, "-f", "%M"] : []) + [Executables.path(tool)] + arguments).map(quoted).joined(separator: " ")
        let child = try Host.spawnShell("exec \(words) < /dev/null > \(quoted(out)) 2> \(quoted(err))")
        child.input.close()
        var (status, peak) = try Host.waitForExitMeasuringMemory(child.pid)
        if measured {
            let kibibytes = Int64(String(decoding: FileManager.default.contents(atPath: memory) ?? Data(), as: UTF8.self)
                .split(separator: "\n").last.map(String.init) ?? "")
            #expect(kibibytes != nil, "no memory figure from \(timer)")
            peak = (kibibytes ?? Int64.max / 1024) * 1024
        }
        let stdout = FileManager.default.contents(atPath: out) ?? Data()
        let stderr = String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self)
        return (ProcessResult(status: status, stdout: stdout, stderr: stderr), peak)
    }

    /// Extends a file with a hole, so that it declares `size` more bytes without using the disk.
    static func extendSparse(_ path: String, by size: Int64) throws {
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(truncate(path, off_t(Int64(status.st_size) + size)) == 0)
    }

    @Test("A 64 GiB attempts file is set aside, not read: the drain delivers in bounded memory")
    func hugeAttempts() throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let appended = try run("share-append", ["--dir", q, "--lines"], stdin: "a\nb\nc\n", in: scratch).lines
        let attempts = q + "/attempts"
        _ = FileManager.default.createFile(atPath: attempts, contents: nil)
        try Self.extendSparse(attempts, by: Self.plantedSize)
        let (drain, peak) = try Self.runMeasuringMemory("host-drain", ["--dir", q], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        #expect(peak < Self.memoryLimit, "peak memory \(peak >> 20) MiB")
        #expect(drain.stderr.contains("attempts"), "\(drain.stderr)")
        #expect(!FileManager.default.fileExists(atPath: attempts))
        let rejected = try FileManager.default.contentsOfDirectory(atPath: q).filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-attempts") }
        #expect(rejected.count == 1)
    }

    @Test("A 64 GiB line in the dead letters is skipped with a warning by --status, a drain and --requeue-dead; the letters around it are kept")
    func hugeDeadLetters() throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let out = scratch.file("delivered")
        let poisoned = try run("share-append", ["--dir", q, "--lines"], stdin: "poison\npoison\n", in: scratch).lines
        #expect(try run("host-drain", ["--dir", q, "--exec", Self.command(out), "--max-attempts", "1"], in: scratch).status == 0)
        let path = q + "/dead-letters.log"
        let letters = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(letters.count == 2)
        try Data((letters[0] + "\n").utf8).write(to: URL(fileURLWithPath: path))
        try Self.extendSparse(path, by: Self.plantedSize)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.seekToEnd()
        try file.write(contentsOf: Data(("\n" + letters[1] + "\n").utf8))
        try file.close()
        let good = try run("share-append", ["--dir", q, "good"], in: scratch).lines
        let third = try run("share-append", ["--dir", q, "poison"], in: scratch).lines

        let (status, statusPeak) = try Self.runMeasuringMemory("host-drain", ["--dir", q, "--status", "--json"], in: scratch)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(statusPeak < Self.memoryLimit, "peak memory \(statusPeak >> 20) MiB")
        let shown = try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any]
        #expect(shown?["deadLetters"] as? Int == 2)
        #expect(shown?["pending"] as? Int == 2)
        #expect(status.stderr.contains("skipped a damaged line of \(Self.plantedSize) bytes"), "\(status.stderr)")

        // Dead-lettering reads the file to keep one letter per record.
        let (drain, drainPeak) = try Self.runMeasuringMemory("host-drain", ["--dir", q, "--exec", Self.command(out), "--max-attempts", "1"], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drainPeak < Self.memoryLimit, "peak memory \(drainPeak >> 20) MiB")
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == good)

        let (requeue, requeuePeak) = try Self.runMeasuringMemory("host-drain", ["--dir", q, "--requeue-dead"], in: scratch)
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeuePeak < Self.memoryLimit, "peak memory \(requeuePeak >> 20) MiB")
        #expect(requeue.stderr.contains("put 3 dead letters back"), "\(requeue.stderr)")
        #expect(requeue.stderr.contains("rejected-"), "\(requeue.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try ids(in: try run("host-drain", ["--dir", q], in: scratch).stdout) == poisoned + third)
    }
}
