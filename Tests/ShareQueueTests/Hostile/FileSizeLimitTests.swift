import Foundation
import Testing

/// A file size limit (`ulimit -f`) is an error with a path and exit 74, not a
/// death by SIGXFSZ; nothing temporary is left, and the queue stays whole.
@Suite("File size limit", .runTimeLimit(minutes: 2))
struct FileSizeLimitTests {
    /// 512 KiB, in the 512-byte blocks of `ulimit -f`.
    static let limitBlocks = 1024

    /// Runs a tool under `ulimit -f limitBlocks`, as a shell starts it: with SIGXFSZ
    /// not blocked. The test runner's threads block most signals, and a child
    /// inherits the mask of the thread that starts it, so it is opened for the start.
    static func limited(_ tool: String, _ arguments: [String], stdin: String? = nil, in scratch: TemporaryDirectory) throws -> ProcessResult {
        var fileSizeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&fileSizeSignal)
        sigaddset(&fileSizeSignal, SIGXFSZ)
        pthread_sigmask(SIG_UNBLOCK, &fileSizeSignal, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try run("/bin/sh", ["-c", "ulimit -f \(limitBlocks); exec \"$0\" \"$@\"", Executables.path(tool)] + arguments, stdin: stdin, in: scratch)
    }

    /// Every name under `path`, recursively, that is work in progress: `*.tmp-*`, `.tmp-*` or `*.partial`.
    static func temporaries(under path: String) -> [String] {
        let names = FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []
        return names.filter { name in
            let last = name.split(separator: "/").last.map(String.init) ?? name
            return last.contains(".tmp-") || last.hasSuffix(".partial")
        }
    }

    static func makeFile(_ scratch: TemporaryDirectory, bytes: Int) throws -> String {
        let path = scratch.file("big.bin")
        try Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("A record past the limit: share-append exits 74 naming pending.log, which keeps exactly what it held")
    func largeRecord() throws {
        let queue = TestQueue()
        let acknowledged = try queue.appendLines((1...10).map { "small \($0)" })
        let before = queue.bytes()
        let result = try Self.limited("share-append", ["--dir", queue.path], stdin: String(repeating: "x", count: 900_000), in: queue.scratch)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains(queue.pendingPath), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(queue.bytes() == before)
        #expect(Self.temporaries(under: queue.path).isEmpty)
        #expect(try ids(in: try queue.drain().stdout) == acknowledged)
    }

    @Test("Damage whose quarantine entry cannot be written whole: host-drain keeps its segment whole, as on a full disk, leaves no part of a line, and goes on")
    func quarantineLinePastTheLimit() throws {
        let queue = TestQueue()
        let acknowledged = try queue.append(text: "before the damage")
        // 600 KiB of garbage: its entry, in Base64, is past the 512 KiB limit.
        let garbage = [UInt8](repeating: 0x2A, count: 600 << 10)
        try queue.plant(garbage)
        let after = try queue.append(text: "after the damage")
        let limited = try Self.limited("host-drain", ["--dir", queue.path], in: queue.scratch)
        #expect(limited.status == 0, "\(limited.stderr)")
        #expect(try ids(in: limited.stdout) == acknowledged + after)
        let partial = queue.bytes("quarantine.log")
        #expect(partial.isEmpty || partial.last == 0x0A, "a part of a line was left: \(partial.count) bytes")
        let kept = try #require(queue.names().first { $0.hasPrefix("quarantine-sealed-") }, "\(limited.stderr)")
        #expect(queue.bytes(kept).range(of: Data(garbage)) != nil)
    }

    @Test("Standard output to a file past the limit: host-drain exits 74 or 75, the file holds whole lines, and the rest comes next time")
    func standardOutputPastTheLimit() throws {
        let queue = TestQueue()
        let acknowledged = try queue.appendLines((1...8).map { "record \($0) " + String(repeating: "x", count: 100_000) })
        let first = queue.scratch.file("first.jsonl")
        var fileSizeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&fileSizeSignal)
        sigaddset(&fileSizeSignal, SIGXFSZ)
        pthread_sigmask(SIG_UNBLOCK, &fileSizeSignal, &previous)
        let limited = try run("/bin/sh", ["-c", "ulimit -f \(Self.limitBlocks); exec \"$0\" --dir \"$1\" --batch 1 > \"$2\"", Executables.path("host-drain"), queue.path, first],
                              in: queue.scratch)
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        #expect(limited.status == 74 || limited.status == 75, "\(limited.stderr)")
        let written = try Data(contentsOf: URL(fileURLWithPath: first))
        #expect(written.last == 0x0A, "a part of a line was left: \(written.count) bytes")
        let rest = try queue.drain()
        #expect(rest.status == 0, "\(rest.stderr)")
        #expect(try ids(in: written) + ids(in: rest.stdout) == acknowledged)
    }

    @Test("An attachment past the limit: share-append --attach exits 74 naming the copy, and leaves no copy")
    func largeAttachment() throws {
        let queue = TestQueue()
        let acknowledged = try queue.append(text: "before")
        let before = queue.bytes()
        let file = try Self.makeFile(queue.scratch, bytes: 1_500_000)
        let result = try Self.limited("share-append", ["--dir", queue.path, "--attach", file, "with a big file"], in: queue.scratch)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains(queue.file("attachments/.tmp-")), "\(result.stderr)")
        #expect(Self.temporaries(under: queue.path).isEmpty)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))) ?? [] == [])
        #expect(queue.bytes() == before)
        #expect(try ids(in: try queue.drain().stdout) == acknowledged)
    }

    @Test("Delivering an attachment past the limit: host-drain exits 74 naming the destination; the record stays queued", arguments: ["--attachments-to", "--store"])
    func largeDelivery(sink: String) throws {
        let queue = TestQueue()
        let file = try Self.makeFile(queue.scratch, bytes: 1_500_000)
        let acknowledged = try queue.append(["--attach", file, "with a big file"]).lines
        let target = queue.scratch.file(sink == "--store" ? "inbox.sqlite" : "inbox")
        let destination = sink == "--store" ? target + ".attachments" : target
        let result = try Self.limited("host-drain", ["--dir", queue.path, sink, target], in: queue.scratch)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains(destination + "/"), "\(result.stderr)")
        #expect(Self.temporaries(under: destination).isEmpty)
        #expect(Self.temporaries(under: queue.path).isEmpty)

        // Without the limit, the same sink delivers the record, whole.
        let again = try queue.drain([sink, target])
        #expect(again.status == 0, "\(again.stderr)")
        let delivered = try FileManager.default.contentsOfDirectory(atPath: destination)
        #expect(delivered.count == 1)
        #expect(FileManager.default.contents(atPath: destination + "/" + delivered[0]) == FileManager.default.contents(atPath: file))
        if sink == "--store" {
            #expect(try sqlite(target, "SELECT id FROM records") == acknowledged)
        } else {
            #expect(try ids(in: again.stdout) == acknowledged)
        }
    }

    @Test("A store database growing past the limit: host-drain --store exits 74 naming it; the records stay queued")
    func largeStore() throws {
        let queue = TestQueue()
        let record = String(repeating: "y", count: 30_000)
        let acknowledged = try queue.appendLines(Array(repeating: record, count: 40))
        let database = queue.scratch.file("inbox.sqlite")
        let result = try Self.limited("host-drain", ["--dir", queue.path, "--store", database, "--batch", "5"], in: queue.scratch)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains(database), "\(result.stderr)")
        #expect(Self.temporaries(under: queue.path).isEmpty)
        let again = try queue.drain(["--store", database])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sqlite(database, "SELECT id FROM records ORDER BY rowid") == acknowledged)
    }

    @Test("What killed processes left in the queue (format, attempts and key entries being written) is removed by a drain once a day old; fresh ones are kept")
    func staleTemporaries() throws {
        let queue = TestQueue()
        try queue.append(text: "one")
        let attachments = queue.file("attachments"), keys = queue.file("keys")
        try FileManager.default.createDirectory(atPath: attachments, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        let old = ["format.tmp-123", "attempts.tmp-123", "keys/.tmp-123", "attachments/.tmp-0000.bin"]
        let fresh = ["format.tmp-124", "attempts.tmp-124", "keys/.tmp-124", "attachments/.tmp-0001.bin"]
        for name in old + fresh { #expect(FileManager.default.createFile(atPath: queue.file(name), contents: Data("left".utf8))) }
        let dayAgo = Date(timeIntervalSinceNow: -86_400 - 600)
        for name in old { try FileManager.default.setAttributes([.modificationDate: dayAgo], ofItemAtPath: queue.file(name)) }
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout).count == 1)
        for name in old { #expect(!FileManager.default.fileExists(atPath: queue.file(name)), "\(name) was kept") }
        for name in fresh { #expect(FileManager.default.fileExists(atPath: queue.file(name)), "\(name) was removed") }
    }
}
