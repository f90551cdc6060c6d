import Foundation
import Testing
@testable import ShareQueueCore

/// Files planted in the queue directory by buggy or hostile programs: none of
/// them may stop the queue for good, lose an acknowledged record, or make a
/// tool read or write outside the queue.
@Suite("Hostile files")
struct HostileFileTests {
    @Test("A sealed segment named with an absurd number is moved aside whole; drains and appends go on")
    func absurdSegmentNumber() throws {
        let queue = TestQueue()
        let one = try queue.append(text: "one")
        try FileManager.default.copyItem(atPath: queue.pendingPath, toPath: queue.file("sealed-18446744073709551615.log"))
        let two = try queue.append(text: "two")
        let first = try queue.drain()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try ids(in: first.stdout) == one + two)
        let three = try queue.append(text: "three")
        let second = try queue.drain()
        #expect(second.status == 0)
        #expect(try ids(in: second.stdout) == three)
        #expect(queue.names().filter { $0.hasSuffix("-sealed-18446744073709551615.log") }.count == 1)
    }

    @Test("A directory at the drain's own attempts.tmp-<pid>, which anyone sharing the queue can make at every pid, is moved aside: refusals are still counted")
    func directoryAtTheAttemptsTemporary() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let refused = try queue.append(text: "refused")
        let after = try queue.append(text: "after")
        // The shell makes the directory at its own pid, then becomes the drain, which keeps that pid.
        let refusing = "batch=$(cat); case \"$batch\" in *refused*) exit 1;; esac"
        let script = "mkdir \"$1/attempts.tmp-$$\" && exec \"$2\" --dir \"$1\" --max-attempts 2 --exec '\(refusing)'"
        let first = try run("/bin/sh", ["-c", script, "sh", queue.path, Executables.path("host-drain")], in: scratch)
        // 75: a record refused once stays queued for a later run.
        #expect(first.status == 75 && !first.stderr.contains("cannot record a refusal"), "\(first.stderr)")
        #expect(first.warned(.leftoverMovedAside(path: queue.file("attempts.tmp-") + anyText, movedTo: queue.file("rejected-") + anyText)), "\(first.stderr)")
        #expect(try String(contentsOfFile: queue.file("attempts"), encoding: .utf8).contains("\"attempts\":1"))
        let second = try queue.drain(["--max-attempts", "2", "--exec", refusing])
        #expect(second.status == 0, "\(second.stderr)")
        let letters = try queue.deadLetters()
        #expect(letters.count == 1 && (letters.first?["record"] as? [String: Any])?["id"] as? String == refused.first)
        // "after" was delivered to the command in the first run, beside the refused record found by bisecting.
        #expect(try ids(in: queue.drain().stdout).isEmpty && after.count == 1)
    }

    @Test("Whole frames whose payloads are holes of a sparse file (a valid checksum of zeros) cost the drain no disk: quarantine.log stays within its limit, and what is around them is delivered",
          arguments: [16 << 20, 48 << 10])
    func sparseFramesOfZeros(_ payloadLength: Int) throws {
        let queue = TestQueue()
        let before = try queue.append(text: "before")
        // Each frame's header and trailer written, its payload left a hole: 8 frames of 16 MiB cost a few blocks.
        var frame: [UInt8] = []
        Frame.append(payload: [UInt8](repeating: 0, count: payloadLength), to: &frame)
        let handle = try #require(FileHandle(forWritingAtPath: queue.pendingPath))
        var offset = handle.seekToEndOfFile()
        let frames = (16 << 20) * 8 / payloadLength
        for _ in 0..<frames {
            handle.seek(toFileOffset: offset)
            handle.write(Data(frame.prefix(Frame.headerSize)))
            handle.seek(toFileOffset: offset + UInt64(frame.count - Frame.trailerSize))
            handle.write(Data(frame.suffix(Frame.trailerSize)))
            offset += UInt64(frame.count)
        }
        handle.closeFile()
        let after = try queue.append(text: "after")
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == before + after)
        let quarantined = try #require(try FileManager.default.attributesOfItem(atPath: queue.file("quarantine.log"))[.size] as? Int)
        #expect(quarantined < Int(Quarantine.keptBytesLimit) + (1 << 20), "quarantine.log holds \(quarantined) bytes for \(frames) frames")
        // A frame too large to be read in one go is not read past its hole at all.
        if payloadLength > 64 << 10 {
            #expect(drain.stderr.contains(SegmentReader.payloadHoleReason) && quarantined < frames * (1 << 20), "\(quarantined) bytes")
        }
    }

    @Test("A directory, FIFO or symlink at the format marker is moved aside by a producer or drain, which write a new one; --status and --peek read the queue as it would then be, and say so",
          arguments: ["directory", "fifo", "symlink"])
    func foreignFormatMarker(_ kind: String) throws {
        let queue = TestQueue()
        let first = try queue.append(text: "first")
        #expect(unlink(queue.file("format")) == 0)
        switch kind {
        case "directory": try FileManager.default.createDirectory(atPath: queue.file("format"), withIntermediateDirectories: false)
        case "fifo": #expect(mkfifo(queue.file("format"), 0o600) == 0)
        default: #expect(symlink("/etc/passwd", queue.file("format")) == 0)
        }
        let before = snapshot(queue.path)
        for looking in [["--status", "--json"], ["--status", "--prometheus"], ["--peek"]] {
            let looked = try queue.drain(looking)
            #expect(looked.status == 0 && snapshot(queue.path) == before, "\(looking): \(looked.stderr)")
            #expect(looked.stderr.contains(queue.file("format") + " is not a regular file"), "\(looked.stderr)")
            if looking == ["--peek"] { #expect(try ids(in: looked.stdout) == first) }
            if looking == ["--status", "--json"] { #expect(try jsonObjects(looked.stdout).first?["pending"] as? Int == 1) }
        }
        let second = try queue.append(["second"])
        #expect(second.status == 0, "\(second.stderr)")
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == first + second.lines)
        #expect(queue.names().filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-format") }.count == 1)
    }

    /// The names and status of the queue's files, read without opening any: a planted FIFO would block a read.
    private func listing(_ queue: TestQueue) -> [String: String] {
        var files: [String: String] = [:]
        for name in queue.names() {
            var status = stat()
            _ = lstat(queue.file(name), &status)
            files[name] = "\(status.st_mode) \(status.st_size) \(status.st_ino) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
        }
        return files
    }

    @Test("--status neither reads, follows nor stops at what is planted where the queue's own files go: it warns, counts the rest, exits 0 and changes nothing",
          arguments: ["checkpoint", "quarantine.log", "dead-letters.log", "dead-letters.requeue", "attempts", "pending.log",
                      "sealed-000000000002.log", "attachments", "keys"],
          ["fifo", "symlink", "directory", "hard link"])
    func statusAroundPlantedFiles(_ name: String, _ kind: String) throws {
        // A folder is the queue's own directory; a segment with a second name is still read by a drain.
        guard !(name == "attachments" || name == "keys") || kind != "directory",
              !(name.hasSuffix(".log") && !["quarantine.log", "dead-letters.log"].contains(name) && kind == "hard link") else { return }
        let queue = TestQueue()
        let waiting = try queue.append(text: "waiting")
        #expect(rename(queue.pendingPath, queue.file("sealed-000000000001.log")) == 0)
        // Bytes that would count as an entry or a letter, were they read.
        let elsewhere = queue.scratch.file("elsewhere")
        try Data("{\"date\":\"x\",\"attempts\":1,\"error\":\"e\",\"record\":{}}\n".utf8).write(to: URL(fileURLWithPath: elsewhere))
        unlink(queue.file(name))
        switch kind {
        case "fifo": #expect(mkfifo(queue.file(name), 0o600) == 0)
        case "symlink": #expect(symlink(elsewhere, queue.file(name)) == 0)
        case "directory": #expect(mkdir(queue.file(name), 0o700) == 0)
        default: #expect(link(elsewhere, queue.file(name)) == 0)
        }
        let before = listing(queue)
        let json = try queue.drain(["--status", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.warned(.fileNotRead(path: queue.file(name), problem: anyText)), "\(json.stderr)")
        let status = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(status["pending"] as? Int == 1 && status["oldest"] is String, "\(status)")
        #expect(status["quarantined"] as? Int == 0 && status["deadLetters"] as? Int == 0, "\(status)")
        for format in [["--status"], ["--status", "--prometheus"]] {
            let shown = try queue.drain(format)
            #expect(shown.status == 0 && !shown.stdout.isEmpty, "\(format): \(shown.stderr)")
        }
        #expect(listing(queue) == before)
        // What --status passed over, the drain sets aside, and delivers the record.
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == waiting)
    }

    @Test("--status counts what a huge sparse file at a side file's name holds without reading its holes",
          arguments: ["checkpoint", "quarantine.log", "dead-letters.log", "dead-letters.requeue"])
    func statusAroundHugeFiles(_ name: String) throws {
        let queue = TestQueue()
        try queue.append(text: "waiting")
        let descriptor = open(queue.file(name), O_WRONLY | O_CREAT, 0o600)
        #expect(descriptor >= 0 && ftruncate(descriptor, 1 << 40) == 0)
        close(descriptor)
        let started = Date()
        let status = try queue.drain(["--status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test("A FIFO planted as the quarantine file makes an append fail at once, not hang; a drain clears it")
    func fifoQuarantine() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let kept = try queue.append(text: "kept")
        let torn = try run("share-append", ["--dir", queue.path, String(repeating: "t", count: 100_000)],
                           environment: ["SHARE_QUEUE_CRASH_AT": "append-half-written"], in: scratch)
        #expect(torn.status == 128 + SIGKILL)
        #expect(mkfifo(queue.file("quarantine.log"), 0o600) == 0)
        let append = try RunningTool("share-append", ["--dir", queue.path, "blocked?"], in: scratch)
        var finished = false
        try waitUntil("share-append to finish instead of hanging on the FIFO", seconds: 20) {
            finished = !append.process.isRunning
            return finished
        }
        let result = append.wait()
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("quarantine.log"))
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == kept)
        let after = try queue.append(["after"])
        #expect(after.status == 0)
    }

    @Test("A symlink planted as the checkpoint is moved aside; records come again rather than being lost")
    func symlinkCheckpoint() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let appended = try queue.appendLines(["a", "b", "c"])
        #expect(try queue.drain(["--max", "1", "-q"]).status == 0)
        let victim = scratch.file("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.removeItem(atPath: queue.file("checkpoint"))
        try FileManager.default.createSymbolicLink(atPath: queue.file("checkpoint"), withDestinationPath: victim)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(Set(try ids(in: drain.stdout)).isSuperset(of: appended[1...]))
        #expect(drain.warned(.fileMovedAside(path: queue.file("checkpoint"), problem: "is not a regular file with one name",
                                             movedTo: queue.file("rejected-") + anyText, handling: .unread)), "\(drain.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    }

    @Test("A symlink or a directory planted as a lock file is moved aside by a drain, which goes on; appends then go on too",
          arguments: ["append.lock", "drain.lock"])
    func lockFileThatIsNoFile(_ name: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        var appended = try queue.appendLines(["a", "b"])
        let victim = scratch.file("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        for planted in ["symlink", "directory"] {
            try FileManager.default.removeItem(atPath: queue.file(name))
            if planted == "symlink" {
                try FileManager.default.createSymbolicLink(atPath: queue.file(name), withDestinationPath: victim)
            } else {
                try FileManager.default.createDirectory(atPath: queue.file(name), withIntermediateDirectories: false)
            }
            let drain = try queue.drain()
            #expect(drain.status == 0, "\(planted): \(drain.stderr)")
            #expect(try ids(in: drain.stdout) == appended, "\(planted)")
            #expect(drain.warned(.fileMovedAside(path: queue.file(name), problem: "is not a regular file", movedTo: queue.file("rejected-") + anyText,
                                                 handling: .unfollowedAndReplaced)), "\(drain.stderr)")
            appended = try queue.appendLines(["after the \(planted)"])
        }
        #expect(try ids(in: queue.drain().stdout) == appended)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    }

    @Test("Names planted ahead for whatever a drain moves aside, for the next 30 seconds, do not stop it: it picks one no one can foresee")
    func movedAsideNamesTaken() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines(["a", "b"])
        try FileManager.default.removeItem(atPath: queue.file("drain.lock"))
        try FileManager.default.createDirectory(atPath: queue.file("drain.lock"), withIntermediateDirectories: false)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for milliseconds in now..<(now + 30_000) {
            _ = FileManager.default.createFile(atPath: queue.file("rejected-\(milliseconds)-drain.lock"), contents: nil)
        }
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        let movedAside = queue.names().filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-drain.lock") && $0.split(separator: "-").count == 4 }
        #expect(movedAside.count == 1, "\(drain.stderr)")
        #expect(movedAside.allSatisfy { queue.names().contains($0) && FileManager.default.fileExists(atPath: queue.file($0) + "/.") })
    }

    @Test("A hard link to the pending file does not cost its records; the other name is left alone")
    func hardLinkedPending() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let appended = try queue.appendLines(["a", "b"])
        let other = scratch.file("backup.log")
        #expect(link(queue.pendingPath, other) == 0)
        let refused = try queue.append(["c"])
        #expect(refused.status == 78)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        #expect(FileManager.default.fileExists(atPath: other))
        #expect(try queue.append(["d"]).status == 0)
    }

    @Test("An --exec command starts with default signal handling")
    func execSignals() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["x"])
        let signals = scratch.file("signals")
        let drain = try queue.drain(["--exec", "grep SigIgn /proc/$$/status > '\(signals)'; cat > /dev/null"])
        #expect(drain.status == 0)
        let line = try String(contentsOfFile: signals, encoding: .utf8)
        let mask = UInt64(line.split(separator: "\t").last!.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16)!
        #expect(mask & (1 << (UInt64(SIGPIPE) - 1)) == 0, "SIGPIPE is ignored in the command: \(line)")
    }

    @Test("A record a foreign producer stored over several lines still comes out as one JSON line")
    func recordSpanningLines() throws {
        let queue = TestQueue()
        let pretty = "{\n  \"v\": 1,\n  \"id\": \"3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9\",\n  \"date\": \"2026-11-29T14:52:20.123Z\",\n  \"source\": \"other\",\r\n  \"kind\": \"text\",\n  \"text\": \"two\\nlines\"\n}"
        try queue.appendStored([Array(pretty.utf8)])
        let drain = try queue.drain()
        #expect(drain.lines.count == 1)
        #expect(try jsonObjects(drain.stdout).first?["text"] as? String == "two\nlines")
    }

    @Test("A sink's stored position past every segment of this queue is ignored, not trusted")
    func storedPositionFromAnotherQueue() throws {
        struct ForeignSink: DrainSink {
            var texts: [String] = []
            mutating func deliver(_ batch: DrainBatch) throws { texts += batch.records.compactMap(\.record.text) }
            func deliveredPosition() throws -> DrainPosition? { DrainPosition(segment: 5, offset: 100) }
        }
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        try QueueAppender(directory: directory).append(RecordDraft(.text("a"), source: "test"))
        var sink = ForeignSink()
        _ = try QueueDrainer(directory: directory).drain(into: &sink)
        #expect(sink.texts == ["a"])
    }
}
