import Foundation
import Testing
@testable import ShareQueueCore

/// The files only a drain writes (the format marker, the checkpoint, the refusal counts, the dead letters)
/// in a queue shared with a group: a member may not write into them, and one she puts in their place is
/// set aside by the host's next drain, which goes on as if there were none; no honest producer stops.
@Suite("Files only a drain writes, in a shared queue", .serialized)
struct DrainOwnedFileTests {
    private let member = TestUsers.secondProducer

    /// Runs `command` in `queue` as the member.
    private func asMember(_ command: String, in queue: String, _ scratch: TemporaryDirectory) throws -> ProcessResult {
        try TestUsers.shell(as: member, "cd '\(queue)' && \(command)", in: scratch)
    }

    private func append(_ text: String, to queue: String, _ scratch: TemporaryDirectory, as user: String = TestUsers.producer) throws -> ProcessResult {
        try TestUsers.run(as: user, "share-append", ["--dir", queue, "--lock-timeout", "1", text], in: scratch)
    }

    private func drain(_ queue: String, _ scratch: TemporaryDirectory, _ extra: [String] = []) throws -> ProcessResult {
        try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--wait", "1"] + extra, in: scratch)
    }

    /// The owner and permissions of `path`.
    private func ownerAndMode(_ path: String) -> (owner: uid_t, mode: UInt32)? {
        var status = stat()
        return lstat(path, &status) == 0 ? (status.st_uid, UInt32(status.st_mode & 0o7777)) : nil
    }

    /// A file of `bytes` in `scratch` that anyone may read, for the member to copy into the queue.
    private func readableFile(_ bytes: [UInt8], _ scratch: TemporaryDirectory) throws -> String {
        let path = scratch.file("planted-\(UInt64.random(in: 0 ... .max))")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        return path
    }

    /// Drains twice more as the host, and expects every id of `acknowledged` among `delivered` and what they deliver.
    private func expectNothingLost(_ acknowledged: [String], delivered: [String], _ queue: String, _ scratch: TemporaryDirectory) throws {
        var delivered = delivered
        for _ in 0..<2 {
            let host = try drain(queue, scratch)
            #expect(host.status == 0, "\(host.stderr)")
            delivered += try ids(in: host.stdout)
        }
        let lost = acknowledged.filter { !delivered.contains($0) }
        #expect(lost.isEmpty, "lost \(lost.count) of \(acknowledged.count)")
    }

    /// Runs the host's drain with `arguments`, stopped once it has checked its own files and before it opens
    /// any (`drain-files-checked`); runs the shell command `meanwhile` then, and lets the drain go on.
    /// - Returns: the script's result (the drain's status), and the drain's standard error; its standard
    ///   output is in the file `drained` of `scratch`.
    private func drainInterrupted(_ queue: String, _ arguments: [String], meanwhile: String,
                                  _ scratch: TemporaryDirectory) throws -> (run: ProcessResult, errors: String) {
        let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
        let script = """
        cd '\(scratch.path)'
        SHARE_QUEUE_STOP_AT=drain-files-checked setpriv --reuid=\(TestUsers.host) --regid=nogroup --init-groups '\(TestUsers.tools)/host-drain' --dir '\(queue)' \(quoted) > drained 2> drain-errors &
        drain=$!
        while :; do
            case "$(cut -d' ' -f3 /proc/$drain/stat)" in T) break ;; Z) exit 3 ;; esac
            sleep 0.02
        done
        \(meanwhile) || exit 4
        kill -CONT $drain
        wait $drain
        """
        let run = try ShareQueueTests.run("/bin/sh", ["-c", script], in: scratch)
        return (run, (try? String(contentsOfFile: scratch.file("drain-errors"), encoding: .utf8)) ?? "")
    }

    @Test("The format marker is the host's, which the group may read but not write; junk in a member's marker in its place stops no producer, and the next drain writes its own",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["replaced", "group-writable", "removed"])
    func membersFormatMarker(_ how: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        let marker = queue + "/format"
        var acknowledged = try append("before", to: queue, scratch).lines
        var delivered = try ids(in: try drain(queue, scratch).stdout)
        #expect(ownerAndMode(marker)?.owner == TestUsers.uid(TestUsers.host) && ownerAndMode(marker)?.mode == 0o640, "\(String(describing: ownerAndMode(marker)))")
        let original = try String(contentsOfFile: marker, encoding: .utf8)
        let write = try asMember("echo junk > format", in: queue, scratch)
        #expect(write.status != 0, "a member wrote into the host's marker")
        #expect(try String(contentsOfFile: marker, encoding: .utf8) == original)
        switch how {
        case "replaced": #expect(try asMember("rm -f format && echo 'ShareQueue queue format 7' > format && chmod 664 format", in: queue, scratch).status == 0)
        case "group-writable":
            // A queue made before markers were closed to the group: the host's own, which a member wrote into.
            #expect(chmod(marker, 0o660) == 0)
            #expect(try asMember("echo junk > format", in: queue, scratch).status == 0)
        default: #expect(try asMember("rm -f format", in: queue, scratch).status == 0)
        }
        for user in [TestUsers.producer, TestUsers.thirdProducer] {
            let appended = try append("from \(user)", to: queue, scratch, as: user)
            #expect(appended.status == 0, "\(user): \(appended.stderr)")
            // Said, where what it found is no marker this version writes.
            #expect(appended.stderr.contains(marker + " ") == (how != "removed"), "\(user): \(appended.stderr)")
            acknowledged += appended.lines
        }
        // A producer that makes a lost marker anew leaves the host's checkpoint, which it may not write, where it is.
        #expect(ownerAndMode(queue + "/checkpoint")?.owner == TestUsers.uid(TestUsers.host))
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("rejected-") }.isEmpty)
        let status = try TestUsers.run(as: TestUsers.thirdProducer, "host-drain", ["--dir", queue, "--status"], in: scratch)
        #expect(status.status == 0, "\(status.stderr)")
        let host = try drain(queue, scratch)
        #expect(host.status == 0, "\(host.stderr)")
        delivered += try ids(in: host.stdout)
        #expect(delivered == acknowledged, "\(host.stderr)")
        // A member's is set aside, where its owner finds it; the one a producer made when there was none is replaced, as it was.
        #expect(host.stderr.contains(marker + " ") == (how != "removed"), "\(host.stderr)")
        #expect(ownerAndMode(marker)?.owner == TestUsers.uid(TestUsers.host) && ownerAndMode(marker)?.mode == 0o640, "\(String(describing: ownerAndMode(marker)))")
        let repaired = try String(contentsOfFile: marker, encoding: .utf8)
        #expect(repaired.hasPrefix("ShareQueue queue format 1\nqueue "))
        let after = try drain(queue, scratch)
        #expect(after.status == 0 && !after.stderr.contains(marker), "\(after.stderr)")
    }

    @Test("A checkpoint a member rewrites, or replaces with her own, past records a failed sink left queued skips none of them",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["rewritten", "replaced"])
    func membersCheckpointSkipsNothing(_ how: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        #expect(try drain(queue, scratch).status == 0)
        var acknowledged: [String] = []
        for text in ["one", "two", "three"] { acknowledged += try append(text, to: queue, scratch).lines }
        let failed = try drain(queue, scratch, ["--exec", "cat > /dev/null; exit 75"])
        #expect(failed.status == 75, "\(failed.stderr)")
        let checkpoint = queue + "/checkpoint"
        #expect(ownerAndMode(checkpoint)?.owner == TestUsers.uid(TestUsers.host) && ownerAndMode(checkpoint)?.mode == 0o640, "\(String(describing: ownerAndMode(checkpoint)))")
        // Numbered from the clock in a queue its group may write (Format.md §4).
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: queue).first { QueueLayout.sealedSequence(of: $0) != nil })
        let size = try #require(try FileManager.default.attributesOfItem(atPath: queue + "/" + name)[.size] as? Int)
        let sequence = try #require(QueueLayout.sealedSequence(of: name))
        let forged = try readableFile(Checkpoint.slot(serial: 7, DrainPosition(segment: sequence, offset: Int64(size))) + Checkpoint.blankSlot, scratch)
        if how == "rewritten" {
            let write = try asMember("cat '\(forged)' > checkpoint", in: queue, scratch)
            #expect(write.status != 0, "a member wrote into the host's checkpoint")
        } else {
            // Hers, which the host may read and write.
            #expect(try asMember("rm -f checkpoint && cat '\(forged)' > checkpoint && chmod 660 checkpoint", in: queue, scratch).status == 0)
        }
        let looked = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--status", "--json"], in: scratch)
        #expect(try jsonObjects(looked.stdout).first?["pending"] as? Int == 3, "\(looked.stderr)")
        let host = try drain(queue, scratch)
        #expect(host.status == 0, "\(host.stderr)")
        #expect(try ids(in: host.stdout) == acknowledged, "\(host.stderr)")
        if how == "replaced" { #expect(host.stderr.contains(checkpoint + " belongs to user \(TestUsers.uid(member))"), "\(host.stderr)") }
    }

    @Test("Refusal counts a member puts in place of the host's make no honest record a dead letter",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func membersAttemptsDeadLetterNothing() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        let honest = try append("honest", to: queue, scratch).lines
        let refusing = ["--exec", "cat > /dev/null; exit 1", "--max-attempts", "3"]
        // Refused under the limit: held, 75.
        let first = try drain(queue, scratch, refusing)
        #expect(first.status == 75, "\(first.stderr)")
        let attempts = queue + "/attempts"
        #expect(ownerAndMode(attempts)?.owner == TestUsers.uid(TestUsers.host) && ownerAndMode(attempts)?.mode == 0o640, "\(String(describing: ownerAndMode(attempts)))")
        let counts = try readableFile(Array("{\"id\":\"\(honest[0])\",\"attempts\":99}\n".utf8), scratch)
        #expect(try asMember("cat '\(counts)' > attempts", in: queue, scratch).status != 0, "a member wrote into the host's counts")
        #expect(try asMember("rm -f attempts && cat '\(counts)' > attempts && chmod 660 attempts", in: queue, scratch).status == 0)
        let second = try drain(queue, scratch, refusing)
        #expect(second.status == 75, "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: queue + "/dead-letters.log"), "\(second.stderr)")
        let host = try drain(queue, scratch)
        #expect(host.status == 0, "\(host.stderr)")
        #expect(try ids(in: host.stdout) == honest, "\(host.stderr)")
    }

    @Test("Letters that wait are the host's alone to read: a member cannot read their ids, and her --status says they are not counted",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func waitingLettersAreTheHostsAlone() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        let note = try readableFile(Array("a note".utf8), scratch)
        let attached = try TestUsers.run(as: member, "share-append", ["--dir", queue, "--attach", note, "attached"], in: scratch)
        #expect(attached.status == 0, "\(attached.stderr)")
        #expect(try asMember("chmod 600 attachments/*", in: queue, scratch).status == 0)
        #expect(try drain(queue, scratch).status == 0)
        let waiting = queue + "/dead-letters.waiting"
        #expect(ownerAndMode(waiting)?.owner == TestUsers.uid(TestUsers.host) && ownerAndMode(waiting)?.mode == 0o600, "\(String(describing: ownerAndMode(waiting)))")
        #expect(try TestUsers.shell(as: TestUsers.producer, "cat '\(waiting)'", in: scratch).status != 0)
        let status = try TestUsers.run(as: TestUsers.producer, "host-drain", ["--dir", queue, "--status"], in: scratch)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stderr.contains("dead-letters.waiting is the queue owner's alone to read"), "\(status.stderr)")
        let hosts = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--status", "--json"], in: scratch)
        #expect(try jsonObjects(hosts.stdout).first?["waitingLetters"] as? Int == 1, "\(hosts.stderr)")
    }

    @Test("A dead letters file a member puts at the name while a drain runs gets no honest letter: the drain moves it aside and writes its own",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func membersDeadLettersFileGetsNoLetter() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: scratch.path)
        let honest = try append("honest", to: queue, scratch).lines
        // The sink refuses, once the member has put her file at the dead letters' name.
        let sink = scratch.file("sink.sh")
        try "#!/bin/sh\ncat > /dev/null; : > '\(scratch.file("in-sink"))'; while [ ! -e '\(scratch.file("planted"))' ]; do sleep 0.02; done; exit 1\n"
            .write(toFile: sink, atomically: true, encoding: .utf8)
        #expect(chmod(sink, 0o755) == 0)
        let script = """
        cd '\(scratch.path)'
        setpriv --reuid=\(TestUsers.host) --regid=nogroup --init-groups '\(TestUsers.tools)/host-drain' --dir '\(queue)' --exec '\(sink)' --max-attempts 1 > drained 2> drain-errors &
        drain=$!
        while [ ! -e in-sink ]; do sleep 0.02; done
        setpriv --reuid=\(member) --regid=nogroup --init-groups /bin/sh -c "cd '\(queue)' && : > dead-letters.log && chmod 660 dead-letters.log" || exit 1
        : > planted
        wait $drain
        """
        let run = try ShareQueueTests.run("/bin/sh", ["-c", script], in: scratch)
        #expect(run.status == 0, "\(run.stderr) \((try? String(contentsOfFile: scratch.file("drain-errors"), encoding: .utf8)) ?? "")")
        // She closes what is at the name now to the host.
        _ = try asMember("chmod 600 dead-letters.log", in: queue, scratch)
        let requeue = try drain(queue, scratch, ["--requeue-dead"])
        #expect(requeue.status == 0, "\(requeue.stderr)")
        let delivered = try drain(queue, scratch)
        #expect(delivered.status == 0, "\(delivered.stderr)")
        #expect(try ids(in: delivered.stdout) == honest, "\(requeue.stderr) \(delivered.stderr)")
    }

    @Test("A member who renames the host's checkpoint to the format marker's name stops no producer, and the host's next drain writes a marker anew",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func hostsFileAsMarker() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        var acknowledged = try append("first", to: queue, scratch).lines
        #expect(try drain(queue, scratch).status == 0)
        #expect(try asMember("mv checkpoint format", in: queue, scratch).status == 0)
        let appended = try append("second", to: queue, scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        acknowledged += appended.lines
        let host = try drain(queue, scratch)
        #expect(host.status == 0, "\(host.stderr)")
        #expect(try String(contentsOfFile: queue + "/format", encoding: .utf8).hasPrefix("ShareQueue queue format 1\n"))
        acknowledged += try append("third", to: queue, scratch).lines
        let last = try drain(queue, scratch)
        #expect(last.status == 0, "\(last.stderr)")
        #expect(Set(try ids(in: host.stdout) + ids(in: last.stdout)).isSuperset(of: acknowledged.dropFirst()), "\(host.stderr) \(last.stderr)")
    }

    @Test("A member who hides the host's checkpoint and brings it back later, once a new segment waits, makes no drain skip that segment's records",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func hiddenCheckpointSkipsNothing() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        var acknowledged: [String] = []
        for index in 1...3 { acknowledged += try append("old \(index)", to: queue, scratch).lines }
        let delivered = try ids(in: try drain(queue, scratch).stdout)
        #expect(try asMember("mv checkpoint .hidden", in: queue, scratch).status == 0)
        for index in 1...5 { acknowledged += try append("new \(index)", to: queue, scratch).lines }
        // The sink is down for a moment: the new segment waits.
        #expect(try drain(queue, scratch, ["--exec", "cat > /dev/null; exit 75"]).status == 75)
        #expect(try asMember("mv .hidden checkpoint", in: queue, scratch).status == 0)
        try expectNothingLost(acknowledged, delivered: delivered, queue, scratch)
    }

    /// The member hides the checkpoint, and keeps a segment of her own in the queue while a sink is down, so
    /// that the drain seals the honest records under the number the hidden checkpoint names; then she takes
    /// her segment away and brings the checkpoint back.
    @Test("A member who hides the checkpoint and holds a segment of her own in the queue meanwhile makes no drain skip the records sealed after it",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func heldSegmentSteersNoNumber() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: scratch.path)
        var acknowledged: [String] = []
        for index in 1...3 { acknowledged += try append("old \(index)", to: queue, scratch).lines }
        let delivered = try ids(in: try drain(queue, scratch).stdout)
        let checkpoint = try Data(contentsOf: URL(fileURLWithPath: queue + "/checkpoint"))
        let finished = try #require(UInt64(String(decoding: checkpoint.prefix(64), as: UTF8.self).split(separator: " ")[1]))
        let hers = scratch.file("hers")
        #expect(try TestUsers.run(as: member, "share-append", ["--dir", hers, "hers"], in: scratch).status == 0)
        let planted = QueueLayout.sealedName(finished - 1)
        #expect(try asMember("mv checkpoint .hidden && cp '\(hers)/pending.log' \(planted) && chmod 640 \(planted)", in: queue, scratch).status == 0)
        for index in 1...5 { acknowledged += try append("new \(index)", to: queue, scratch).lines }
        // The sink refuses her record, which stays under the limit, and is down for the rest: both segments wait.
        let refusing = ["--batch", "1", "--exec", "if grep -q '\"text\":\"hers\"'; then exit 1; fi; exit 75"]
        #expect(try drain(queue, scratch, refusing).status == 75)
        #expect(try asMember("rm \(planted) && mv .hidden checkpoint", in: queue, scratch).status == 0)
        try expectNothingLost(acknowledged, delivered: delivered, queue, scratch)
    }

    /// A drain checks the files only drains write when it starts, and then opens them one by one. A member may
    /// rename her own file over the host's in between: the drain is stopped there, and she does.
    @Test("A checkpoint, counts or dead letters a member renames over the host's after a drain looked, before it opens them, are not believed: no record is skipped, made a dead letter, or taken for one",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["checkpoint", "attempts", "dead-letters.log"])
    func membersFileRenamedInWhileTheDrainRuns(_ name: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: scratch.path)
        var acknowledged: [String] = []
        for text in ["one", "two", "three"] { acknowledged += try append(text, to: queue, scratch).lines }
        // The sink is down: the records wait in a sealed segment, the checkpoint before them.
        #expect(try drain(queue, scratch, ["--exec", "cat > /dev/null; exit 75"]).status == 75)
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: queue).first { QueueLayout.sealedSequence(of: $0) != nil })
        let size = try #require(try FileManager.default.attributesOfItem(atPath: queue + "/" + segment)[.size] as? Int)
        let forged: [UInt8]
        switch name {
        case "checkpoint":
            forged = Checkpoint.slot(serial: 7, DrainPosition(segment: try #require(QueueLayout.sealedSequence(of: segment)), offset: Int64(size))) + Checkpoint.blankSlot
        case "attempts":
            forged = Array(acknowledged.map { "{\"id\":\"\($0)\",\"attempts\":99}\n" }.joined().utf8)
        default:
            // Letters holding the records byte for byte, as a drain that died before its checkpoint leaves them.
            let stored = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--peek"], in: scratch).lines
            forged = Array(stored.map { "{\"date\":\"2026-12-07T00:00:00Z\",\"attempts\":1,\"error\":\"x\",\"record\":\($0)}\n" }.joined().utf8)
        }
        let planted = try readableFile(forged, scratch)
        let sink = name == "checkpoint" ? "cat" : "cat > /dev/null; exit 1"
        let maxAttempts = name == "attempts" ? "3" : "1"
        let membersRename = "setpriv --reuid=\(member) --regid=nogroup --init-groups /bin/sh -c \"cd '\(queue)' && cp '\(planted)' .hers && chmod 660 .hers && mv -f .hers \(name)\""
        let (run, errors) = try drainInterrupted(queue, ["--exec", sink, "--max-attempts", maxAttempts], meanwhile: membersRename, scratch)
        #expect(errors.contains(queue + "/\(name) belongs to user \(TestUsers.uid(member))"), "\(errors)")
        if name == "checkpoint" {
            #expect(run.status == 0, "\(run.stderr) \(errors)")
            #expect(try ids(in: try Data(contentsOf: URL(fileURLWithPath: scratch.file("drained")))) == acknowledged, "\(errors)")
        } else if name == "dead-letters.log" {
            // Refused at the limit: each a dead letter in the host's own file, put back and delivered.
            #expect(run.status == 0, "\(run.stderr) \(errors)")
            #expect(ownerAndMode(queue + "/dead-letters.log")?.owner == TestUsers.uid(TestUsers.host))
            #expect(try drain(queue, scratch, ["--requeue-dead"]).status == 0)
            let host = try drain(queue, scratch)
            #expect(host.status == 0, "\(host.stderr)")
            #expect(try ids(in: host.stdout) == acknowledged, "\(host.stderr)")
        } else {
            // Refused once each, under the limit: queued still, none a dead letter.
            #expect(run.status == 75, "\(run.stderr) \(errors)")
            #expect(!FileManager.default.fileExists(atPath: queue + "/dead-letters.log"), "\(errors)")
            let host = try drain(queue, scratch)
            #expect(host.status == 0, "\(host.stderr)")
            #expect(try ids(in: host.stdout) == acknowledged, "\(host.stderr)")
        }
    }

    /// Where another name can be linked to the host's file (macOS lets anyone link a file they can see;
    /// Linux only with `protected_hardlinks` off, so root does it here), a drain cannot vouch for it.
    @Test("Letters that wait, given a second name while a drain runs, are neither read nor removed: they stay, for a person",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func linkedWaitingLettersStay() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: scratch.path)
        let note = try readableFile(Array("a note".utf8), scratch)
        let attached = try TestUsers.run(as: member, "share-append", ["--dir", queue, "--attach", note, "attached"], in: scratch)
        #expect(attached.status == 0, "\(attached.stderr)")
        #expect(try asMember("chmod 600 attachments/*", in: queue, scratch).status == 0)
        #expect(try drain(queue, scratch).status == 0)
        let waiting = queue + "/dead-letters.waiting"
        let letters = try Data(contentsOf: URL(fileURLWithPath: waiting))
        // Readable once more: the letter would be put back, and the file removed.
        #expect(try asMember("chmod 660 attachments/*", in: queue, scratch).status == 0)
        let (run, errors) = try drainInterrupted(queue, [], meanwhile: "ln '\(waiting)' second-name", scratch)
        #expect(run.status == 0, "\(run.stderr) \(errors)")
        #expect((try? Data(contentsOf: URL(fileURLWithPath: waiting))) == letters, "\(errors)")
    }
}
