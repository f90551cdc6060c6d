import Foundation
import Testing
@testable import ShareQueueCore

/// Refusals, retries and dead letters with `--exec`.
@Suite("Retries and dead letters", .runTimeLimit(minutes: 2))
struct DeadLetterTests {
    /// A command that refuses any batch holding the record "poison", and keeps the rest.
    static func command(_ out: String) -> String {
        "input=$(cat); case \"$input\" in *'\"poison\"'*) echo refused >&2; exit 9;; esac; printf '%s\\n' \"$input\" >> '\(out)'"
    }

    @Test("A refused record is found by bisecting, retried on later runs, then moved to the dead letters; the rest is delivered")
    func poisonRecord() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let appended = try queue.appendLines(["a", "b", "c", "poison", "d", "e", "f"])
        for attempt in 1...3 {
            let run = try queue.drain(["--exec", Self.command(out), "--max-attempts", "3"])
            if attempt < 3 {
                #expect(run.status == 75, "\(run.stderr)")
                #expect(run.warned(.recordRefused(id: appended[3], attempt: attempt, maxAttempts: 3, reason: anyText)), "\(run.stderr)")
            } else {
                #expect(run.status == 0, "\(run.stderr)")
                #expect(run.warned(.recordDeadLettered(id: appended[3], cause: .refusedTooOften(attempts: 3), reason: anyText)), "\(run.stderr)")
            }
        }
        // Those behind the refused record come in each run until it is set aside: at least once, in order each time.
        let delivered = try ids(in: Data(contentsOf: URL(fileURLWithPath: out)))
        let behind = [appended[4], appended[5], appended[6]]
        #expect(delivered == [appended[0], appended[1], appended[2]] + behind + behind + behind)
        let status = try queue.status()
        #expect(status["deadLetters"] as? Int == 1)
        #expect(status["pending"] as? Int == 0)
        let letters = try queue.deadLetters()
        #expect(letters.count == 1)
        #expect(letters[0]["attempts"] as? Int == 3)
        #expect(letters[0]["error"] as? String == "command exited with status 9")
        #expect((letters[0]["record"] as? [String: Any])?["id"] as? String == appended[3])

        let requeue = try queue.drain(["--requeue-dead"])
        #expect(requeue.status == 0)
        #expect(requeue.stderr.contains("put 1 dead letter back"))
        let after = try queue.status()
        #expect(after["deadLetters"] as? Int == 0)
        #expect(after["pending"] as? Int == 1)
        let again = try queue.drain()
        #expect(try ids(in: again.stdout) == [appended[3]])
    }

    @Test("Batches a command refuses while it is down are delivered, once each and in order, on a later run")
    func retriedNextRun() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let down = scratch.file("down")
        _ = FileManager.default.createFile(atPath: down, contents: nil)
        let appended = try queue.appendLines(["a", "b", "c", "d", "e"])
        let command = "if [ -e '\(down)' ]; then exit 1; fi; cat >> '\(out)'"
        let first = try queue.drain(["--exec", command])
        #expect(first.status == 75)
        #expect(!FileManager.default.fileExists(atPath: out))
        try FileManager.default.removeItem(atPath: down)
        let second = try queue.drain(["--exec", command])
        #expect(second.status == 0)
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == appended)
        // The refusal counted against the first record is forgotten once it is delivered.
        #expect(!FileManager.default.fileExists(atPath: queue.file("attempts")))
    }

    @Test("A command stopped by a signal has not refused anything: no attempt is counted")
    func stoppedIsNotRefused() throws {
        let queue = TestQueue()
        try queue.append(["x"])
        let drain = try queue.drain(["--max-attempts", "1", "--exec", "kill -TERM $$"])
        #expect(drain.status == 75)
        #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
        #expect(!FileManager.default.fileExists(atPath: queue.file("attempts")))
    }

    @Test("Dead letters come back byte for byte, once, even after a requeue that died half-way")
    func requeueExactly() throws {
        let queue = TestQueue()
        let appended = try queue.append(["--json"], stdin: "{\"zeta\": 1, \"record\": {\"a\": 1}, \"alpha\": 1.50}").lines
        #expect(try queue.drain(["--max-attempts", "1", "--exec", "exit 4"]).status == 0)
        let crashed = try queue.drain(["--requeue-dead"], environment: ["SHARE_QUEUE_CRASH_AT": "append-synced"])
        #expect(crashed.status == 128 + SIGKILL)
        #expect(try queue.drain(["--requeue-dead"]).status == 0)
        let drain = try queue.drain()
        #expect(try ids(in: drain.stdout) == appended)
        #expect(drain.output.contains("\"json\":{\"zeta\":1,\"record\":{\"a\":1},\"alpha\":1.50}"))
        #expect(!FileManager.default.fileExists(atPath: queue.file("quarantine.log")))
    }

    @Test("A pending record with a dead letter's id but other bytes does not stop the letter from being put back")
    func requeueBesideTheSameID() throws {
        let queue = TestQueue()
        let id = "0199AAAA-BBBB-7CCC-8DDD-EEEEEEEEEEEE"
        _ = try queue.append(["--id", id, "important"])
        #expect(try queue.drain(["--max-attempts", "1", "--exec", "exit 1"]).status == 0)
        // Any producer may append a record with the same id: ids are in the dead letters for anyone to read.
        _ = try queue.append(["--id", id, "other"])
        let requeue = try queue.drain(["--requeue-dead"])
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.stderr.contains("put 1 dead letter"), "\(requeue.stderr)")
        let drain = try queue.drain()
        #expect(drain.output.contains("\"text\":\"important\""), "\(drain.output)")
        #expect(drain.output.contains("\"text\":\"other\""), "\(drain.output)")
    }

    /// Ten dead letters of 1.8 MB records, as a producer with a higher limit writes them:
    /// they take two appends of at most 16 MiB to put back. Returns the records' ids.
    static func tenLargeDeadLetters(in queue: TestQueue) throws -> [String] {
        var options = AppendOptions()
        options.maxRecordBytes = 2 << 20
        options.synchronize = false
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path), options: options)
        let appended = try (0..<10).map { index in try appender.append(RecordDraft(.text("\(index) " + String(repeating: "x", count: 1_800_000)), source: "s")) }
        #expect(try queue.drain(["--max-attempts", "1", "--exec", "exit 4"]).status == 0)
        return appended
    }

    @Test("A drain after a requeue that died half-way finishes it first: every letter is delivered once, and a requeue after puts none back")
    func drainFinishesACutShortRequeue() throws {
        let queue = TestQueue()
        let appended = try Self.tenLargeDeadLetters(in: queue)
        #expect(try queue.deadLetters().count == 10)
        let crashed = try queue.drain(["--requeue-dead"], environment: ["SHARE_QUEUE_CRASH_AT": "append-synced"])
        #expect(crashed.status == 128 + SIGKILL)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        let requeue = try queue.drain(["--requeue-dead"])
        #expect(requeue.stderr.contains("put 0 dead letters back"), "\(requeue.stderr)")
        #expect(try ids(in: try queue.drain().stdout).isEmpty)
    }

    @Test("--requeue-dead that finds a requeue cut short and dead letters made since puts back both: every letter is delivered once")
    func requeueCutShortAndNewLetters() throws {
        let queue = TestQueue()
        let acknowledged = try queue.append(text: "acknowledged")
        func letter(_ number: Int) -> (id: String, line: String) {
            let id = "00000000-0000-4000-8000-0000000000\(number)"
            return (id, #"{"date":"2026-11-29T14:52:20.123Z","attempts":1,"error":"e","record":{"v":1,"id":"\#(id)","date":"2026-11-29T14:52:20.123Z","source":"s","kind":"text","text":"\#(number)"}}"# + "\n")
        }
        // A requeue cut short right after it took the letters, and a letter made since.
        try Data((letter(41).line + letter(42).line).utf8).write(to: URL(fileURLWithPath: queue.file("dead-letters.requeue")))
        try Data(letter(43).line.utf8).write(to: URL(fileURLWithPath: queue.file("dead-letters.log")))
        let requeue = try queue.drain(["--requeue-dead"])
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.stderr.contains("put 3 dead letters back"), "\(requeue.stderr)")
        #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.requeue")) && !FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
        #expect(try ids(in: try queue.drain().stdout) == acknowledged + [letter(41).id, letter(42).id, letter(43).id])
    }

    @Test("A dead-letters.requeue that is no requeue's (a second name, a FIFO, a symlink) is moved aside by a drain, with a warning, and stops nothing",
          arguments: ["link", "fifo", "symlink"])
    func foreignRequeueIsMovedAside(_ kind: String) throws {
        let queue = TestQueue()
        let acknowledged = try queue.append(text: "acknowledged")
        let requeue = queue.file("dead-letters.requeue")
        switch kind {
        case "link":
            try Data("{}\n".utf8).write(to: URL(fileURLWithPath: queue.file("letters")))
            #expect(link(queue.file("letters"), requeue) == 0)
        case "fifo": #expect(mkfifo(requeue, 0o600) == 0)
        default: #expect(symlink("/etc/passwd", requeue) == 0)
        }
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == acknowledged)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: requeue)) == nil && !FileManager.default.fileExists(atPath: requeue))
        let aside = queue.names().filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-dead-letters.requeue") }
        #expect(aside.count == 1)
        #expect(drain.warned(.fileMovedAside(path: requeue, problem: "is not a regular file with one name", movedTo: queue.file(aside[0]), handling: .unread)),
                "\(drain.stderr)")
    }

    @Test("Dead letters with a second name are moved aside unread, and counted as a file moved aside, so that their alert stays on; renamed back, they are put back")
    func secondNameOnTheDeadLetters() throws {
        let queue = TestQueue()
        let refused = try queue.append(text: "refused")
        #expect(try queue.drain(["--max-attempts", "1", "--exec", "exit 1"]).status == 0)
        // Any group member may give the group's dead letters a second name.
        #expect(link(queue.file("dead-letters.log"), queue.file("second-name")) == 0)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        let movedAside = try #require(queue.names().first { $0.hasPrefix("rejected-") && $0.hasSuffix("-dead-letters.log") }, "\(drain.stderr)")
        let status = try queue.status()
        #expect(status["deadLetters"] as? Int == 0 && status["rejectedFiles"] as? Int == 1, "\(status)")
        let metrics = try queue.drain(["--status", "--prometheus"])
        #expect(metrics.output.contains("\nsharequeue_rejected_files{queue=\""), "\(metrics.output)")
        #expect(metrics.output.split(separator: "\n").contains { $0.hasPrefix("sharequeue_rejected_files{") && $0.hasSuffix(" 1") })
        // A person who has looked at it renames it back, with one name.
        #expect(unlink(queue.file("second-name")) == 0)
        #expect(rename(queue.file(movedAside), queue.file("dead-letters.log")) == 0)
        #expect(try queue.drain(["--requeue-dead"]).stderr.contains("put 1 dead letter back"))
        #expect(try ids(in: queue.drain().stdout) == refused)
    }

    @Test("A requeue cut short that cannot be finished stops no drain: what is queued is delivered, and a later run finishes the requeue")
    func unfinishableRequeueStopsNoDrain() throws {
        let queue = TestQueue()
        let acknowledged = try queue.append(text: "acknowledged")
        let id = "00000000-0000-4000-8000-000000000078"
        let letter = #"{"date":"2026-11-29T14:52:20.123Z","attempts":1,"error":"e","record":{"v":1,"id":"\#(id)","date":"2026-11-29T14:52:20.123Z","source":"s","kind":"text","text":"p"}}"#
        try Data((letter + "\n").utf8).write(to: URL(fileURLWithPath: queue.file("dead-letters.requeue")))
        // A second name for the pending file, which any group member can make: no producer
        // appends to it, the requeue's included, until a drain has moved it aside.
        #expect(link(queue.pendingPath, queue.file("second-name")) == 0)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drain.warned(.requeueNotFinished(cause: anyText)), "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == acknowledged)
        let next = try queue.drain()
        #expect(next.status == 0, "\(next.stderr)")
        #expect(next.warned(.requeueFinished(recordsPutBack: 1)), "\(next.stderr)")
        #expect(try ids(in: next.stdout) == [id])
    }

    @Test("A requeue that keeps failing part-way puts nothing back twice: the letters it put back are delivered once, and the rest once it can")
    func requeueFailingPartWay() throws {
        let queue = TestQueue()
        let appended = try Self.tenLargeDeadLetters(in: queue)
        // The disk fills after the requeue's first append, and stays full for the next two drains.
        let full = ["SHARE_QUEUE_FAULT": "write:ENOSPC:name=pending.log"]
        let requeue = try queue.drain(["--requeue-dead"], environment: ["SHARE_QUEUE_FAULT": "write:ENOSPC:name=pending.log:after=1"])
        #expect(requeue.status == 74, "\(requeue.stderr)")
        var delivered: [String] = []
        for _ in 0..<2 {
            let drain = try queue.drain([], environment: full)
            #expect(drain.status == 0, "\(drain.stderr)")
            #expect(drain.warned(.requeueNotFinished(cause: anyText)), "\(drain.stderr)")
            delivered += try ids(in: drain.stdout)
        }
        #expect(!delivered.isEmpty && delivered.count < appended.count, "\(delivered.count) delivered while the disk was full")
        let freed = try queue.drain()
        #expect(freed.status == 0, "\(freed.stderr)")
        delivered += try ids(in: freed.stdout)
        #expect(delivered == appended)
        #expect(try queue.drain(["--requeue-dead"]).stderr.contains("put 0 dead letters back"))
    }

    @Test("A pending copy of a dead letter's bytes, which any producer can append, does not take the letter's place: spoiled after the requeue, it costs nothing")
    func requeueBesideACopy() throws {
        let queue = TestQueue()
        let appended = try queue.append(text: "important")
        #expect(try queue.drain(["--max-attempts", "1", "--exec", "exit 1"]).status == 0)
        // The letter's record, byte for byte as stored (the line's end), appended by another producer.
        let copy = try #require(queue.bytes("dead-letters.log").split(separator: 0x0A).first.flatMap { line -> [UInt8]? in
            let bytes = [UInt8](line)
            guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: Array(",\"record\":".utf8)) }) else { return nil }
            return Array(bytes[(start + 10)..<(bytes.count - 1)])
        })
        try queue.appendStored([copy])
        let copyStart = queue.bytes().count - (copy.count + Frame.overhead)
        let requeue = try queue.drain(["--requeue-dead"])
        #expect(requeue.stderr.contains("put 1 dead letter"), "\(requeue.stderr)")
        // The copy's producer spoils it: its checksum no longer matches.
        var bytes = queue.bytes()
        bytes[copyStart + 12] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: queue.pendingPath))
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
    }

    @Test("A record stored three times, byte for byte, is one dead letter, and the summary counts the letters written")
    func identicalRecordsAreOneLetter() throws {
        let queue = TestQueue()
        try queue.plantRecord(id: "same", text: "refused")
        try queue.plantRecord(id: "same", text: "refused")
        try queue.plantRecord(id: "same", text: "refused")
        try queue.plantRecord(id: "other", text: "refused too")
        let drain = try queue.drain(["--max-attempts", "1", "--exec", "exit 1"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drain.stderr.contains("; 2 moved to the dead letters"), "\(drain.stderr)")
        #expect(try queue.deadLetters().compactMap { ($0["record"] as? [String: Any])?["id"] as? String } == ["same", "other"])
    }

    @Test("A record whose command is killed outright (as by the out-of-memory killer) is still found and set aside")
    func killedCommand() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let appended = try queue.appendLines(["good", "poison", "also good"])
        let command = "input=$(cat); case \"$input\" in *poison*) kill -9 $$;; esac; printf '%s\\n' \"$input\" >> '\(out)'"
        #expect(try queue.drain(["--max-attempts", "1", "--exec", command]).status == 0)
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == [appended[0], appended[2]])
        #expect(try queue.deadLetters().count == 1)
    }

    @Test("Damage behind a sink that keeps failing is not copied out again on every attempt")
    func damageNotRequarantined() throws {
        let queue = TestQueue()
        let appended = try queue.append(text: "first")
        try queue.append(["second"])
        let third = try queue.append(text: "third")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: queue.pendingPath))
        let secondStart = 20 + Int(bytes[4]) + Int(bytes[5]) << 8
        bytes[secondStart + 30] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: queue.pendingPath))
        for _ in 1...3 { #expect(try queue.drain(["--exec", "exit 1"]).status == 75) }
        #expect(!FileManager.default.fileExists(atPath: queue.file("quarantine.log")))
        let drain = try queue.drain()
        #expect(try ids(in: drain.stdout) == appended + third)
        #expect(try queue.quarantine().count == 1)
    }

    @Test("A command that refuses once has the batch bisected at once: all delivered, none twice")
    func refusedOnce() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let flag = scratch.file("refuse-once")
        _ = FileManager.default.createFile(atPath: flag, contents: nil)
        let appended = try queue.appendLines(["a", "b", "c"])
        let command = "if [ -e '\(flag)' ]; then rm '\(flag)'; exit 1; fi; cat >> '\(out)'"
        #expect(try queue.drain(["--exec", command]).status == 0)
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == appended)
    }
}
