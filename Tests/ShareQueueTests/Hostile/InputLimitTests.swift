import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// share-append checks its input as it reads it: memory and time stay bounded
/// by the limits it enforces, not by what it is given.
@Suite("Input limits", .serialized, OptionalProgram.needs("/usr/bin/time"))
struct InputLimitTests {
    static func repeatedLines(_ bytes: Int, at path: String) -> String {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = FileHandle(forWritingAtPath: path)!
        let block = Data(String(repeating: "a\n", count: 1 << 19).utf8)
        for _ in 0..<(bytes / block.count) { handle.write(block) }
        handle.closeFile()
        return path
    }

    @Test("--lines --atomic on 4, 16 and 64 MiB of one-byte lines is refused in memory within 4x the 16 MiB limit, in time that does not grow with the input")
    func oneByteLines() throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        var seconds: [Double] = []
        for mebibytes in [4, 16, 64] {
            let input = Self.repeatedLines(mebibytes << 20, at: scratch.file("input-\(mebibytes)"))
            let result = try measuredRun("share-append", ["--dir", q, "--lines", "--atomic", "-q"], input: input, deadline: 60, in: scratch)
            #expect(result.status == 65, "\(mebibytes) MiB")
            #expect(result.peakMemory < (64 << 20) * Int64(sanitizerAllowance), "\(mebibytes) MiB took \(result.peakMemory >> 20) MiB")
            seconds.append(result.seconds)
            try? FileManager.default.removeItem(atPath: input)
        }
        #expect(seconds[2] < seconds[0] * 4 + 0.5, "\(seconds)")
        let drain = try run("host-drain", ["--dir", q], in: scratch)
        #expect(drain.stdout.isEmpty)
    }

    @Test("An endless line is refused once it passes what one record's input may be, in bounded memory, with --atomic or without",
          arguments: [[], ["--atomic"]])
    func endlessLine(_ mode: [String]) throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let result = try measuredRun("share-append", ["--dir", q, "--lines"] + mode, input: "/dev/zero", deadline: 60, in: scratch)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("line 1 is longer than the limit of \((1 << 22) + 4096) bytes"), "\(result.stderr)")
        #expect(result.peakMemory < (64 << 20) * Int64(sanitizerAllowance), "took \(result.peakMemory >> 20) MiB")
        #expect(!FileManager.default.fileExists(atPath: q + "/pending.log"))
    }

    @Test("One record's input may be 4 x --max-record-bytes + 4096 bytes, its line end not counted, as a line or whole: JSON that compacts to fit is appended, a byte more is refused",
          arguments: [["--lines"], []], ["\n", "\r\n", ""])
    func inputAtTheLimit(_ mode: [String], lineEnd: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let spaces = String(repeating: " ", count: (1 << 22) + 4096 - 3)
        let fits = try queue.append(mode + ["--json"], stdin: "[" + spaces + "1]" + lineEnd)
        #expect(fits.status == 0, "\(fits.stderr)")
        let over = try queue.append(mode + ["--json"], stdin: "[" + spaces + " 1]" + lineEnd)
        #expect(over.status == 65 && over.stderr.contains(mode.isEmpty ? "the input is larger than the limit" : "line 1 is longer than the limit"), "\(over.stderr)")
        let drained = try jsonObjects(try queue.drain().stdout)
        #expect(drained.count == 1 && drained[0]["json"] as? [Int] == [1])
    }

    @Test("A line end is a newline or a carriage return and a newline, whole or by lines; a carriage return alone is content", arguments: [["--lines"], []])
    func lineEnds(_ mode: [String]) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        for input in ["a\r\n", "b\n", "c\r", "d\r\r\n", "e\n\r"] {
            let appended = try queue.append(mode, stdin: input)
            #expect(appended.status == 0, "\(appended.stderr)")
        }
        let texts = try jsonObjects(try queue.drain().stdout).compactMap { $0["text"] as? String }
        // By lines, "e\n\r" is the line "e" and a last line of one carriage return; whole, one record.
        #expect(texts == ["a", "b", "c\r", "d\r"] + (mode.isEmpty ? ["e\n\r"] : ["e", "\r"]), "\(texts)")
    }

    @Test("A batch just under the limit is appended in memory within 4x the limit", arguments: ["--lines", "--json"])
    func largeBatch(_ mode: String) throws {
        let scratch = TemporaryDirectory()
        let q = scratch.queue
        let input = scratch.file("input")
        // 100,000 short records: about 13 MiB stored, under the 16 MiB of one atomic append.
        let line = mode == "--json" ? "[1]\n" : "a\n"
        try String(repeating: line, count: 100_000).write(toFile: input, atomically: false, encoding: .utf8)
        let arguments = ["--dir", q, "--lines", "-q"] + (mode == "--json" ? ["--json"] : [])
        let result = try measuredRun("share-append", arguments, input: input, deadline: 60, in: scratch)
        #expect(result.status == 0)
        #expect(result.peakMemory < (64 << 20) * Int64(sanitizerAllowance), "took \(result.peakMemory >> 20) MiB")
        // Every record has the same stored size: the pending file holds 100,000 of one alone.
        let single = TestQueue(in: scratch, name: "single")
        try single.append(Array(arguments.dropFirst(2)), stdin: line)
        let one = try #require(try FileManager.default.attributesOfItem(atPath: single.pendingPath)[.size] as? Int)
        #expect(try FileManager.default.attributesOfItem(atPath: q + "/pending.log")[.size] as? Int == one * 100_000)
    }
}
