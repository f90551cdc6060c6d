import Foundation
import Testing
import ShareQueueCore
import ShareQueueSystem

/// Whether this process may mount a small tmpfs (root on Linux).
let canMountTmpfs: Bool = {
    #if os(Linux)
    guard getuid() == 0 else { return false }
    let probe = NSTemporaryDirectory() + "/sharequeue-mount-probe-\(getpid())"
    try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: probe) }
    guard mount("tmpfs", probe, "tmpfs", 0, "size=64k") == 0 else { return false }
    umount(probe)
    return true
    #else
    return false
    #endif
}()

/// A file system that fills up: a 1 MiB tmpfs.
/// Skipped where a tmpfs cannot be mounted, except on CI (`CI` set), where that is a failure.
@Suite("Full disk", .serialized, .enabled(if: canMountTmpfs || ProcessInfo.processInfo.environment["CI"] != nil,
                                          "needs root to mount a small tmpfs"))
struct FullDiskTests {
    final class SmallFileSystem {
        let path: String
        init(in scratch: TemporaryDirectory) throws {
            path = scratch.file("small-fs")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            guard mount("tmpfs", path, "tmpfs", 0, "size=1m,mode=0700") == 0 else { throw WaitTimeout(what: "mounting a tmpfs") }
        }
        deinit { umount2(path, Int32(MNT_DETACH)) }

        /// Fills what is left with a file, so that nothing more fits.
        func fill() {
            let filler = path + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            let block = [UInt8](repeating: 0x5A, count: 4096)
            while write(fd, block, block.count) > 0 {}
            let byte: [UInt8] = [0x5A]
            while write(fd, byte, 1) > 0 {}
            close(fd)
        }

        func empty() { try? FileManager.default.removeItem(atPath: path + "/filler") }
    }

    @Test("Appends fail with 74 when the disk is full; the full queue still drains; nothing half-written comes out")
    func fullQueueDisk() throws {
        let scratch = TemporaryDirectory()
        let disk = try SmallFileSystem(in: scratch)
        let queue = TestQueue(at: disk.path + "/queue", in: scratch)
        var acknowledged: [String] = []
        var texts: [String: String] = [:]
        let first = try queue.append(["--lines"], stdin: (1...20).map { "early \($0)" }.joined(separator: "\n"))
        #expect(first.status == 0)
        acknowledged += first.lines
        disk.fill()
        // Keep appending records of 2 KiB until one is refused.
        var refused: ProcessResult? = nil
        for i in 1...600 {
            let text = "late \(i) " + String(repeating: "x", count: 2000)
            let result = try queue.append([text])
            if result.status != 0 { refused = result; break }
            acknowledged += result.lines
            texts[result.lines[0]] = text
        }
        let failure = try #require(refused, "the disk never filled")
        #expect(failure.status == 74, "\(failure.stderr)")
        #expect(failure.stderr.contains("no space left"), "\(failure.stderr)")
        #expect(failure.stdout.isEmpty)

        // The disk is still full: the drain must work all the same.
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        let records = try jsonObjects(drain.stdout)
        #expect(records.map { $0["id"] as! String } == acknowledged)
        for record in records where texts[record["id"] as! String] != nil {
            #expect(record["text"] as? String == texts[record["id"] as! String])
        }
        #expect(try queue.status()["pending"] as? Int == 0)
        // The drain gave the space back.
        let after = try queue.append(["after the drain"])
        #expect(after.status == 0)
    }

    @Test("A full disk and damaged data: the drain still makes progress, keeping the damaged segment whole")
    func fullDiskWithDamage() throws {
        let scratch = TemporaryDirectory()
        let disk = try SmallFileSystem(in: scratch)
        let queue = TestQueue(at: disk.path + "/queue", in: scratch)
        let appended = try queue.appendLines((1...10).map { "record \($0)" })
        let torn = try queue.append([String(repeating: "t", count: 50_000)], environment: ["SHARE_QUEUE_CRASH_AT": "append-half-written"])
        #expect(torn.status == 128 + SIGKILL)
        disk.fill()
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        let kept = queue.names().filter { $0.hasPrefix("quarantine-sealed-") }
        #expect(kept.count == 1)
        #expect(drain.warned(.segmentKeptWhole(path: queue.file(String(kept[0].dropFirst("quarantine-".count))), keptAs: queue.file(kept[0]))),
                "\(drain.stderr)")
        let again = try queue.drain()
        #expect(again.status == 0)
        #expect(again.stdout.isEmpty)
    }

    @Test("Damage that a full disk keeps out of quarantine.log is kept with its segment even when the drain stops before the segment's end: never lost",
          arguments: [false, true])
    func damageKeptWhenTheDrainStopsEarly(_ plantedAtTheKeptName: Bool) throws {
        let queue = TestQueue()
        let first = try queue.append(text: "r1")
        let handle = try #require(FileHandle(forWritingAtPath: queue.pendingPath))
        handle.seekToEndOfFile()
        handle.write(Data("garbage-bytes".utf8))
        handle.closeFile()
        let third = try queue.append(text: "r3")
        // A directory planted where the segment would be kept is moved aside, not a reason to stop.
        if plantedAtTheKeptName { try FileManager.default.createDirectory(atPath: queue.file("quarantine-sealed-000000000001.log"), withIntermediateDirectories: false) }
        // quarantine.log cannot grow, and the sink fails at r3: the drain stops after passing the damage.
        let delivered = queue.file("../delivered")
        let stopped = try queue.drain(["--exec", "batch=$(cat); case \"$batch\" in *r3*) exit 75;; esac; printf '%s\\n' \"$batch\" >> '\(delivered)'"], environment: ["SHARE_QUEUE_FAULT": "write:ENOSPC:name=quarantine.log"])
        #expect(stopped.status == 75, "\(stopped.stderr)")
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        let before = FileManager.default.contents(atPath: delivered) ?? Data()
        #expect(try ids(in: before) + ids(in: drain.stdout) == first + third)
        let kept = queue.names().filter { $0.hasPrefix("quarantine-sealed-") }
        let garbage = Data("garbage-bytes".utf8)
        let quarantined = try jsonObjects(FileManager.default.contents(atPath: queue.file("quarantine.log")) ?? Data())
            .compactMap { ($0["data"] as? String).flatMap { Data(base64Encoded: $0) } }
        let keptBytes = kept.compactMap { FileManager.default.contents(atPath: queue.file($0)) }
        #expect((quarantined + keptBytes).contains { $0.range(of: garbage) != nil }, "kept: \(kept), \(drain.stderr)")
    }

    @Test("quarantine.log or dead-letters.log grown as large as a file may be, as anyone who may write it can, stops no drain: damage keeps its segment, letters start a new file")
    func sideFilesAtTheirLargest() throws {
        let queue = TestQueue()
        let kept = try queue.append(text: "kept")
        try queue.plant(Array("garbage".utf8))
        let after = try queue.append(text: "after")
        let damaged = try queue.drain([], environment: ["SHARE_QUEUE_FAULT": "write:EFBIG:name=quarantine.log"])
        #expect(damaged.status == 0, "\(damaged.stderr)")
        #expect(try ids(in: damaged.stdout) == kept + after)
        #expect(queue.names().contains { $0.hasPrefix("quarantine-sealed-") })

        _ = try queue.append(text: "first refused")
        #expect(try queue.drain(["--max-attempts", "1", "--exec", "exit 1"]).status == 0)
        let second = try queue.append(text: "second refused")
        let refused = try queue.drain(["--max-attempts", "1", "--exec", "exit 1"], environment: ["SHARE_QUEUE_FAULT": "write:EFBIG:name=dead-letters.log:count=1"])
        let letters = try queue.deadLetters()
        #expect(letters.count == 1 && (letters.first?["record"] as? [String: Any])?["id"] as? String == second.first)
        let aside = try #require(queue.names().first { $0.hasPrefix("rejected-") && $0.hasSuffix("-dead-letters.log") })
        #expect(refused.status == 0 && refused.warned(.deadLettersMovedAside(path: queue.file("dead-letters.log"), movedTo: queue.file(aside),
                                                                              cause: "\(SystemError(call: "write", errno: EFBIG))")), "\(refused.stderr)")
    }

    @Test("A drain that cannot write its refusal counts or dead letters on a full disk exits 74 and keeps every record",
          arguments: [[], ["--max-attempts", "1"]])
    func fullDiskBookkeeping(_ limit: [String]) throws {
        let scratch = TemporaryDirectory()
        let disk = try SmallFileSystem(in: scratch)
        let queue = TestQueue(at: disk.path + "/queue", in: scratch)
        let appended = try queue.appendLines(["a", "poison", "b"])
        disk.fill()
        let out = scratch.file("delivered")
        let refusing = try queue.drain(["--exec", PassingFailureTests.refusingPoison(out)] + limit)
        #expect(refusing.status == 74, "\(refusing.stderr)")
        let file = limit.isEmpty ? "attempts" : "dead-letters.log"
        #expect(refusing.stderr.contains("(\(queue.path)/\(file)): No space left on device"), "\(refusing.stderr)")
        #expect(!queue.names().contains("quarantine.log"))
        #expect(try queue.deadLetters().isEmpty)
        #expect(!queue.names().contains { $0.hasPrefix(".") || $0.hasPrefix("rejected-") })

        disk.empty()
        let clean = try queue.drain()
        #expect(clean.status == 0, "\(clean.stderr)")
        let delivered = try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) + ids(in: clean.stdout)
        // Counting a refusal, the run goes on past the refused record and delivers "b", which the next run,
        // from the checkpoint before "poison", delivers again; a dead letter it cannot write stops it there.
        #expect(delivered == (limit.isEmpty ? [appended[0], appended[2], appended[1], appended[2]] : appended))
    }

    @Test("Attachments delivered to a full disk: 74 and nothing set aside; delivered intact once there is room")
    func fullAttachmentsDestination() throws {
        let scratch = TemporaryDirectory()
        let disk = try SmallFileSystem(in: scratch)
        let queue = TestQueue(in: scratch)
        let (appended, files) = try PassingFailureTests.appendWithAttachments(to: queue)
        disk.fill()
        let inbox = disk.path + "/inbox"
        let full = try queue.drain(["--attachments-to", inbox])
        #expect(full.status == 74, "\(full.stderr)")
        #expect(full.stderr.contains("no space left to deliver an attachment"), "\(full.stderr)")
        #expect(full.stdout.isEmpty)
        PassingFailureTests.expectNothingSetAside(queue, full.stderr)

        disk.empty()
        let clean = try queue.drain(["--attachments-to", inbox])
        #expect(clean.status == 0, "\(clean.stderr)")
        let records = try jsonObjects(clean.stdout)
        #expect(records.map { $0["id"] as! String } == appended)
        for (record, bytes) in zip(records, files) {
            let path = try #require((record["attachments"] as? [[String: Any]])?.first?["path"] as? String)
            #expect(path.hasPrefix(inbox + "/"))
            #expect(FileManager.default.contents(atPath: path) == bytes)
        }
    }

    @Test("A sink whose disk is full keeps the undelivered records")
    func fullSinkDisk() throws {
        let scratch = TemporaryDirectory()
        let disk = try SmallFileSystem(in: scratch)
        let queue = TestQueue(in: scratch)
        let appended = try queue.appendLines((1...50).map { "record \($0)" })
        disk.fill()
        let out = disk.path + "/inbox.jsonl"
        let failed = try queue.drain(["--exec", "cat >> '\(out)'"])
        #expect(failed.status == 75, "\(failed.stderr)")
        disk.empty()
        let retry = try queue.drain(["--exec", "cat >> '\(out)'"])
        #expect(retry.status == 0)
        let delivered = try ids(in: Data(contentsOf: URL(fileURLWithPath: out)))
        // Lines a failed batch managed to write before the disk filled come again; nothing is missing.
        #expect(Set(delivered) == Set(appended))
        #expect(Array(delivered.suffix(appended.count)) == appended)
    }
}
