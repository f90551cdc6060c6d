import Foundation
import Testing
import ShareQueueSystem
import ToolSupport

/// `share-append --lines` streams: input of any size goes in as consecutive
/// atomic appends, each append's ids printed once it is durable.
@Suite("Streaming appends", .serialized)
struct StreamingAppendTests {
    /// `count` lines of `length` bytes each (newline included), written to `path`.
    static func lines(_ count: Int, length: Int, at path: String) -> String {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = FileHandle(forWritingAtPath: path)!
        let line = Data((String(repeating: "x", count: length - 1) + "\n").utf8)
        let block = Data((0..<64).flatMap { _ in line })
        for _ in 0..<(count / 64) { handle.write(block) }
        for _ in 0..<(count % 64) { handle.write(line) }
        handle.closeFile()
        return path
    }

    @Test("32 MiB of lines, twice the limit of one append, go in with memory bounded by the chunk, every record drained",
          OptionalProgram.needs("/usr/bin/time"))
    func largeInputInBoundedMemory() throws {
        let scratch = TemporaryDirectory()
        let records = 32 * 64
        let input = Self.lines(records, length: 16 << 10, at: scratch.file("input"))
        let result = try measuredRun("share-append", ["--dir", scratch.queue, "--lines"], input: input, deadline: 120, in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.peakMemory < (64 << 20) * Int64(sanitizerAllowance), "took \(result.peakMemory >> 20) MiB")
        #expect(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").count == records)
        let drain = try run("host-drain", ["--dir", scratch.queue, "--exec", "cat > /dev/null"], in: scratch)
        #expect(drain.status == 0)
        #expect(drain.stderr.contains("delivered \(records) records"), "\(drain.stderr)")
    }

    /// `share-append --lines` reading a FIFO that this test writes and keeps open, its ids going to the file `out`.
    static func appendingLinesFromFIFO(_ scratch: TemporaryDirectory, _ extra: [String] = []) throws -> (child: ShareQueueSystem.Host.Child, writer: FileHandle, out: String) {
        let fifo = scratch.file("input")
        #expect(mkfifo(fifo, 0o600) == 0)
        let out = scratch.file("ids")
        let options = extra.map { " '\($0)'" }.joined()
        let child = try Host.spawn("/bin/sh", ["-c", "exec '\(Executables.path("share-append"))' --dir '\(scratch.queue)' --lines\(options) < '\(fifo)' > '\(out)'"],
                                   newProcessGroup: true)
        return (child, try #require(FileHandle(forWritingAtPath: fifo)), out)
    }

    @Test("The first append's ids are printed while standard input is still open")
    func idsPrintedPerChunk() throws {
        let scratch = TemporaryDirectory()
        let (child, writer, out) = try Self.appendingLinesFromFIFO(scratch, ["--chunk-bytes", "4096"])
        // 100 records of about 200 bytes stored: several chunks of 4 KiB.
        writer.write(Data((1...100).map { "line \($0)\n" }.joined().utf8))
        try waitUntil("the first ids, with standard input open") {
            (FileManager.default.contents(atPath: out)?.count ?? 0) > 0
        }
        writer.closeFile()
        let (status, _) = try Host.waitForExitMeasuringMemory(child.pid)
        #expect(status == 0)
        let all = String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self).split(separator: "\n")
        #expect(all.count == 100)
        let drained = try run("host-drain", ["--dir", scratch.queue], in: scratch)
        #expect(try ids(in: drained.stdout) == all.map(String.init))
    }

    @Test("Lines written now and then into a pipe kept open are appended as the input goes quiet: each id is printed before the next line is written")
    func quietInputIsAppended() throws {
        let scratch = TemporaryDirectory()
        let (child, writer, out) = try Self.appendingLinesFromFIFO(scratch)
        func printed() -> [String] {
            String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self).split(separator: "\n").map(String.init)
        }
        // The second write is two lines at once, and a line begun but not ended waits for its end.
        for (text, count) in [("first\n", 1), ("second\nthird\nfour", 3), ("th\n", 4)] {
            writer.write(Data(text.utf8))
            try waitUntil("\(count) ids, with standard input open") { printed().count == count }
        }
        writer.closeFile()
        let (status, _) = try Host.waitForExitMeasuringMemory(child.pid)
        #expect(status == 0)
        let drained = try run("host-drain", ["--dir", scratch.queue], in: scratch)
        #expect(try ids(in: drained.stdout) == printed())
        #expect(try jsonObjects(drained.stdout).map { $0["text"] as? String } == ["first", "second", "third", "fourth"])
    }

    @Test("A bad line in the middle stops there: the chunks before it stay, the error names the line and the count, exit 65")
    func badLineInTheMiddle() throws {
        let scratch = TemporaryDirectory()
        // 1000 records, then invalid JSON at line 1001, then more that must not go in.
        let input = (1...1000).map { "{\"n\":\($0)}\n" }.joined() + "{\"n\":\n" + (1...10).map { "{\"after\":\($0)}\n" }.joined()
        let result = try run("share-append", ["--dir", scratch.queue, "--lines", "--json", "--chunk-bytes", "8192"], stdin: input, in: scratch)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("stopped at line 1001"), "\(result.stderr)")
        // Whole chunks only: a count below 1000, and exactly the ids printed.
        let printed = result.lines.count
        #expect(printed > 0 && printed < 1000)
        #expect(result.stderr.contains("the \(printed) records of the lines before line \(printed + 1) were appended"), "\(result.stderr)")
        let drained = try jsonObjects(try run("host-drain", ["--dir", scratch.queue], in: scratch).stdout)
        #expect(drained.map { $0["id"] as? String } == result.lines.map { Optional($0) })
        #expect(drained.map { ($0["json"] as? [String: Any])?["n"] as? Int } == (1...printed).map { Optional($0) })
    }

    @Test("Ids that cannot be printed (standard output is /dev/full) are said to be unprinted, for the lines they came from, exit 74",
          arguments: [[], ["--chunk-bytes", "4096"]])
    func idsNotPrinted(_ chunking: [String]) throws {
        let scratch = TemporaryDirectory()
        let lines = (1...300).map { "line \($0)\n" }.joined()
        #expect(FileManager.default.createFile(atPath: scratch.file("lines"), contents: Data(lines.utf8)))
        let result = try run("/bin/sh", ["-c", "q=$1 f=$2; shift 2; exec \"$0\" --dir \"$q\" --lines \"$@\" < \"$f\" > /dev/full",
                                         Executables.path("share-append"), scratch.queue, scratch.file("lines")] + chunking, in: scratch)
        #expect(result.status == 74, "\(result.stderr)")
        // Appended, since an id is printed only once its record is durable.
        let drained = try jsonObjects(try run("host-drain", ["--dir", scratch.queue], in: scratch).stdout)
        try #require(!drained.isEmpty)
        let last = drained.count
        #expect(result.stderr.contains("stopped after line \(last)\(last == 300 ? ", the last" : ""): the \(last) records of lines 1 to \(last) were appended, "
                                       + "but the ids of the last"), "\(result.stderr)")
        #expect(result.stderr.contains("could not all be printed") && !result.stderr.contains("their ids are printed"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing from line") == (last < 300), "\(result.stderr)")
    }

    @Test("A line over the limit stops the input at that line, which the error names")
    func overlongLineNamed() throws {
        let scratch = TemporaryDirectory()
        // The limit of one line with --max-record-bytes 1000 is 4 x 1000 + 4096 bytes.
        let input = "ok\n\n" + String(repeating: "a", count: 9_000) + "\nafter\n"
        let result = try run("share-append", ["--dir", scratch.queue, "--lines", "--max-record-bytes", "1000"], stdin: input, in: scratch)
        #expect(result.status == 65 && result.stderr.contains("stopped at line 3: nothing was appended: line 3 is longer"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.queue))
    }

    @Test("--atomic refuses input over 16 MiB and appends nothing")
    func atomicOverLimit() throws {
        let scratch = TemporaryDirectory()
        let input = Self.lines(17 * 64, length: 16 << 10, at: scratch.file("input"))
        let result = try run("share-append", ["--dir", scratch.queue, "--lines", "--atomic"], stdinData: FileManager.default.contents(atPath: input), in: scratch)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: scratch.queue + "/pending.log"))
    }

    @Test("--chunk-bytes and --atomic are checked", arguments: [
        (["--lines", "--chunk-bytes", "4095"], "from 4096 to 16777216"),
        (["--lines", "--chunk-bytes", "16777217"], "from 4096 to 16777216"),
        (["--lines", "--chunk-bytes", "lots"], "whole number"),
        (["--chunk-bytes", "65536", "text"], "--chunk-bytes goes with --lines"),
        (["--atomic", "text"], "--atomic goes with --lines"),
        (["--lines", "--atomic", "--chunk-bytes", "65536"], "takes no --chunk-bytes"),
    ])
    func chunkBytesValidation(_ arguments: [String], _ message: String) throws {
        let scratch = TemporaryDirectory()
        let result = try run("share-append", ["--dir", scratch.queue] + arguments, stdin: "a\n", in: scratch)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.queue))
    }
}
