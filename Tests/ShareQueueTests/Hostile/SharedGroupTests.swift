import Foundation
import Testing
import ShareQueueCore

/// A queue shared on purpose: producers of several uids in one group and a
/// host of another, in a setgid, group-writable directory; root draining or
/// putting dead letters back in between.
@Suite("Group-shared queue", .serialized)
struct SharedGroupTests {
    /// A setgid directory of the group, 2770, owned by the host.
    private func sharedQueue(_ scratch: TemporaryDirectory) throws -> String {
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.path)
        let queue = scratch.file("queue")
        try FileManager.default.createDirectory(atPath: queue, withIntermediateDirectories: false)
        TestUsers.chown(queue, TestUsers.host, TestUsers.group)
        #expect(chmod(queue, 0o2770) == 0)
        return queue
    }

    /// Runs a shell command as the second producer, with no group but her own: what a member can do to the queue by hand.
    private func asSecondProducer(_ command: String, _ scratch: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try run("/usr/bin/setpriv", ["--reuid=\(TestUsers.secondProducer)", "--regid=nogroup", "--init-groups", "/bin/sh", "-c", command], in: scratch)
        try #require(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
    }

    /// Every file and folder in the queue belongs to the group, which can read and write it; others cannot.
    /// Those only drains write the group may read, not write; the letters that wait, neither.
    private func expectShared(_ queue: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for name in FileManager.default.subpaths(atPath: queue) ?? [] {
            let path = queue + "/" + name
            var status = stat()
            #expect(lstat(path, &status) == 0)
            #expect(status.st_gid == TestUsers.gid(TestUsers.group), "\(name)", sourceLocation: sourceLocation)
            let (checked, groupBits): (mode_t, mode_t) = switch QueueLayout.access(of: name) {
            case .shared: (0o060, 0o060)
            case .readByGroup: (0o070, 0o040)
            case .ownerOnly: (0o070, 0)
            }
            #expect(status.st_mode & checked == groupBits, "\(name): \(String(status.st_mode, radix: 8))", sourceLocation: sourceLocation)
            #expect(status.st_mode & 0o007 == 0, "\(name): \(String(status.st_mode, radix: 8))", sourceLocation: sourceLocation)
            #expect(status.st_uid != 0, "\(name) is root's", sourceLocation: sourceLocation)
        }
    }

    @Test("Producers of two uids and a host of a third share a setgid group directory, whatever their umask; root's drain and requeue leave it usable",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func groupSharedQueue() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let photo = scratch.file("photo.jpg")
        try Data(repeating: 3, count: 50_000).write(to: URL(fileURLWithPath: photo))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: photo)

        var appended: [String] = []
        func append(as user: String?, _ arguments: [String]) throws {
            let result = try TestUsers.run(as: user, "share-append", ["--dir", queue] + arguments, in: scratch)
            #expect(result.status == 0, "\(user ?? "root"): \(result.stderr)")
            appended += result.lines
        }
        try append(as: TestUsers.producer, ["first producer"])
        try append(as: TestUsers.secondProducer, ["--attach", photo, "second producer"])
        try append(as: TestUsers.producer, ["--key", "k", "--if-changed", "published"])
        try expectShared(queue)
        var delivered: [String] = []
        let host = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(host.status == 0, "\(host.stderr)")
        delivered += try ids(in: host.stdout)
        #expect(delivered == appended)
        // The host can read the attachment a producer copied in, where the drain says it is.
        let records = try jsonObjects(host.stdout)
        try #require(records.count == 3)
        let attachment = ((records[1]["attachments"] as! [[String: Any]])[0])["path"] as! String
        #expect(FileManager.default.contents(atPath: attachment)?.count == 50_000)

        // Root appends and drains in between, and a refused record goes to the dead letters and back.
        try append(as: nil, ["from root"])
        try append(as: TestUsers.secondProducer, ["refused once"])
        let refusing = try TestUsers.run(as: nil, "host-drain", ["--dir", queue, "--exec", "cat > /dev/null; exit 1", "--max-attempts", "1"], in: scratch)
        #expect(refusing.status == 0 || refusing.status == 65, "\(refusing.stderr)")
        #expect(FileManager.default.fileExists(atPath: queue + "/dead-letters.log"))
        let requeued = try TestUsers.run(as: nil, "host-drain", ["--dir", queue, "--requeue-dead"], in: scratch)
        #expect(requeued.status == 0, "\(requeued.stderr)")
        try expectShared(queue)
        try append(as: TestUsers.producer, ["after root"])
        let last = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(last.status == 0, "\(last.stderr)")
        delivered += try ids(in: last.stdout)
        #expect(Set(delivered) == Set(appended))
        try expectShared(queue)
    }

    @Test("A user outside the group is refused with 77 and changes nothing",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func outsiderIsRefused() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        #expect(try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "inside"], in: scratch).status == 0)
        let before = snapshot(queue)
        let append = try TestUsers.run(as: TestUsers.outsider, "share-append", ["--dir", queue, "outside"], in: scratch)
        #expect(append.status == 77, "\(append.stderr)")
        #expect(append.stderr.contains(queue))
        let drain = try TestUsers.run(as: TestUsers.outsider, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 77, "\(drain.stderr)")
        #expect(snapshot(queue) == before)
    }

    @Test("A group member's own files that the host may not read, at the drain's names and as a sealed segment, are moved aside: the host's drains go on",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func membersUnreadableFilesAreMovedAside() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        #expect(try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "first"], in: scratch).status == 0)
        #expect(try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch).status == 0)
        // The second producer replaces the drain's files with her own, which only she may read, and plants a segment.
        let names = ["checkpoint", "attempts", "quarantine.log", "dead-letters.log", "sealed-000000000099.log"]
        let plant = "cd '\(queue)' && rm -f \(names.joined(separator: " ")) && umask 077 && for f in \(names.joined(separator: " ")); do echo mine > $f; done"
            + " && mkdir dead-letters.requeue"
        try asSecondProducer(plant, scratch)
        let appended = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "second"], in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")

        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended.lines)
        for name in names {
            #expect(drain.stderr.contains(queue + "/" + name + " belongs to user \(TestUsers.uid(TestUsers.secondProducer))"), "\(name): \(drain.stderr)")
        }
        #expect(drain.stderr.contains("dead-letters.requeue is not a regular file"), "\(drain.stderr)")
        let requeue = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--requeue-dead"], in: scratch)
        #expect(requeue.status == 0, "\(requeue.stderr)")
        // What was moved aside is still there, for its owner.
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("rejected-") }.count == names.count + 1)
    }

    @Test("--requeue-dead sets aside unread, as a drain would, dead letters a member put in place that the host may read but not write",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func membersDeadLettersAreNotRequeued() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        #expect(try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "refused"], in: scratch).status == 0)
        let refusing = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--exec", "cat > /dev/null; exit 1", "--max-attempts", "1"], in: scratch)
        #expect(refusing.status == 0 || refusing.status == 65, "\(refusing.stderr)")
        try asSecondProducer("cd '\(queue)' && cp dead-letters.log mine && chmod 0640 mine && mv -f mine dead-letters.log", scratch)
        let requeue = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--requeue-dead"], in: scratch)
        #expect(requeue.status == 0, "\(requeue.stderr)")
        #expect(requeue.stderr.contains("dead-letters.log belongs to user \(TestUsers.uid(TestUsers.secondProducer))"), "\(requeue.stderr)")
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0 && drain.stdout.isEmpty, "\(drain.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("rejected-") && $0.hasSuffix("dead-letters.log") }.count == 1)
    }

    // An attachments folder the host may not list and search, or the group may not write, is moved aside by the drain (see `membersFolderIsRepaired`).
    @Test("A member's attachment copy that the host may not read makes that member's records dead letters that wait: the host's drains go on, and the letter comes back by itself once the host may read the copy",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason), arguments: ["chmod 600 attachments/*"])
    func membersUnreadableAttachments(_ lockOut: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let note = scratch.file("note.txt")
        try Data("a note".utf8).write(to: URL(fileURLWithPath: note))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: note)
        let attached = try TestUsers.run(as: TestUsers.secondProducer, "share-append", ["--dir", queue, "--attach", note, "attached"], in: scratch)
        #expect(attached.status == 0, "\(attached.stderr)")
        try asSecondProducer("cd '\(queue)' && \(lockOut)", scratch)
        let honest = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "honest"], in: scratch)
        #expect(honest.status == 0, "\(honest.stderr)")
        for _ in 0..<2 {
            let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
            #expect(drain.status == 0, "\(drain.stderr)")
            #expect(try ids(in: drain.stdout) == (drain.stderr.contains("waits among the dead letters") ? honest.lines : []), "\(drain.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: queue + "/dead-letters.log"))
        let letters = try jsonObjects(FileManager.default.contents(atPath: queue + "/dead-letters.waiting") ?? Data())
        #expect(letters.count == 1 && (letters.first?["record"] as? [String: Any])?["id"] as? String == attached.lines.first)
        #expect((letters.first?["error"] as? String)?.contains("belongs to user \(TestUsers.uid(TestUsers.secondProducer))") == true, "\(letters)")
        // Once she lets the host read it, the next drain puts it back by itself and delivers it.
        try asSecondProducer("cd '\(queue)' && chmod 640 attachments/*", scratch)
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == attached.lines, "\(drain.stderr)")
        let counted = try self.letters(queue, scratch)
        #expect(counted.letters == 0 && counted.waiting == 0, "\(counted)")
        #expect(!FileManager.default.fileExists(atPath: queue + "/dead-letters.waiting"))
    }

    @Test("A member's format marker that no one else may read is moved aside and written anew by the next producer or drain: the queue goes on",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func membersUnreadableFormatMarker() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let first = try TestUsers.run(as: TestUsers.secondProducer, "share-append", ["--dir", queue, "first"], in: scratch)
        #expect(first.status == 0, "\(first.stderr)")
        let plant = "cd '\(queue)' && cp format .x && chmod 600 .x && mv -f .x format"
        try asSecondProducer(plant, scratch)
        // Looked at first, as a monitor would: the queue as a drain would find it.
        let looked = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--status", "--json"], in: scratch)
        #expect(looked.status == 0 && looked.stderr.contains("format belongs to user"), "\(looked.stderr)")
        #expect(try jsonObjects(looked.stdout).first?["pending"] as? Int == 1)
        let second = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "second"], in: scratch)
        #expect(second.status == 0, "\(second.stderr)")
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == first.lines + second.lines)
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-format") }.count == 1)
        // Read-only looks neither move nor make anything.
        let status = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--status"], in: scratch)
        #expect(status.status == 0, "\(status.stderr)")
    }

    @Test("A member's file that the host may not read, at one of the queue's names, is not counted by --status, which says so and exits 0",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["echo x > .x && chmod 000 .x && mv .x checkpoint", "echo x > .x && chmod 000 .x && mv .x quarantine.log",
                      "echo x > .x && chmod 000 .x && mv .x dead-letters.log", "cp pending.log .x && chmod 000 .x && mv .x sealed-000000000001.log",
                      "mkdir attachments && chmod 000 attachments"])
    func membersUnreadableFilesInStatus(_ plant: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let first = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "first"], in: scratch)
        #expect(first.status == 0, "\(first.stderr)")
        try asSecondProducer("cd '\(queue)' && \(plant)", scratch)
        let before = try FileManager.default.contentsOfDirectory(atPath: queue).sorted()
        let status = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--status", "--json"], in: scratch)
        #expect(status.status == 0, "\(status.stderr)")
        let planted = String(plant.split(separator: " ").last ?? "")
        #expect(status.stderr.contains("host-drain: warning: \(queue)/\(planted) "), "\(status.stderr)")
        let counts = try #require(try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])
        #expect(counts["pending"] as? Int == 1 && counts["quarantined"] as? Int == 0 && counts["deadLetters"] as? Int == 0, "\(counts)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).sorted() == before)
    }

    @Test("A user who may read the queue but not write it gets its status as it is, the checkpoint read, without warnings",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func readOnlyStatus() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.path)
        let queue = scratch.file("queue")
        try FileManager.default.createDirectory(atPath: queue, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        TestUsers.chown(queue, TestUsers.host)
        let appended = try TestUsers.run(as: TestUsers.host, "share-append", ["--dir", queue, "--lines"], stdin: "one\ntwo\n", in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        #expect(try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--max", "1", "-q"], in: scratch).status == 0)
        _ = try run("/bin/chmod", ["-R", "go+rX", queue], in: scratch)
        let status = try TestUsers.run(as: TestUsers.outsider, "host-drain", ["--dir", queue, "--status", "--json"], in: scratch)
        #expect(status.status == 0 && status.stderr.isEmpty, "\(status.stderr)")
        let counts = try #require(try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])
        #expect(counts["pending"] as? Int == 1 && counts["lastDrainSeconds"] is Int, "\(counts)")
    }

    @Test("Files a member plants before a queue is first used, where its lock files and checkpoint go, are moved aside when it is made: appends and drains work",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["mkdir drain.lock", "mkdir append.lock", "mkdir checkpoint", "ln -s /etc/passwd checkpoint", "mkfifo checkpoint",
                      "echo x > checkpoint && chmod 600 checkpoint", "echo x > append.lock && chmod 600 append.lock"])
    func plantedBeforeTheQueueIsMade(_ plant: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        try asSecondProducer("cd '\(queue)' && \(plant)", scratch)
        let appended = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "first"], in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended.lines)
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("rejected-") }.count == 1)
    }

    @Test("On a queue in use whose marker is gone, another member's unreadable checkpoint is moved aside when the marker is written again, and no record is lost",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func checkpointPlantedInAQueueInUse() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let first = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "first"], in: scratch)
        #expect(first.status == 0, "\(first.stderr)")
        let plant = "cd '\(queue)' && rm -f format checkpoint && echo x > checkpoint && chmod 600 checkpoint"
        try asSecondProducer(plant, scratch)
        let second = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "second"], in: scratch)
        #expect(second.status == 0, "\(second.stderr)")
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == first.lines + second.lines)
    }

    @Test("A group member's own lock files, that no one else may open, are moved aside by the host's drain: drains and appends go on",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func membersLockFilesAreMovedAside() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let first = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "first"], in: scratch)
        #expect(first.status == 0, "\(first.stderr)")
        let plant = "cd '\(queue)' && for f in drain.lock append.lock; do cp $f .x && chmod 600 .x && mv -f .x $f; done"
        try asSecondProducer(plant, scratch)
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == first.lines)
        for name in ["drain.lock", "append.lock"] {
            #expect(drain.stderr.contains(queue + "/" + name + " belongs to user \(TestUsers.uid(TestUsers.secondProducer))"), "\(name): \(drain.stderr)")
        }
        let second = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "second"], in: scratch)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try ids(in: try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch).stdout) == second.lines)
    }

    @Test("Root draining a queue only its owner can use leaves every file it creates to that owner",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func rootLeavesTheOwnersFiles() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.path)
        let queue = scratch.file("queue")
        try FileManager.default.createDirectory(atPath: queue, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        TestUsers.chown(queue, TestUsers.producer)
        #expect(try TestUsers.run(as: nil, "share-append", ["--dir", queue, "root's record"], in: scratch).status == 0)
        _ = try TestUsers.run(as: nil, "host-drain", ["--dir", queue, "--exec", "cat > /dev/null; exit 1", "--max-attempts", "1"], in: scratch)
        #expect(FileManager.default.fileExists(atPath: queue + "/dead-letters.log"))
        #expect(try TestUsers.run(as: nil, "host-drain", ["--dir", queue, "--requeue-dead"], in: scratch).status == 0)
        for name in FileManager.default.subpaths(atPath: queue) ?? [] {
            var status = stat()
            #expect(lstat(queue + "/" + name, &status) == 0)
            #expect(status.st_uid == TestUsers.uid(TestUsers.producer), "\(name)")
            #expect(status.st_mode & 0o077 == 0, "\(name): \(String(status.st_mode, radix: 8))")
        }
        let appended = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "the owner's record"], in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        let drained = try TestUsers.run(as: TestUsers.producer, "host-drain", ["--dir", queue], in: scratch)
        #expect(drained.status == 0, "\(drained.stderr)")
        #expect(try ids(in: drained.stdout).count == 2)
    }

    @Test("A producer of another user killed at any step of making the queue's files, umask 077, leaves nothing that stops another producer",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["create-temporary", "create-shared", "create-linked"], [["first"], ["--attach", "NOTE", "first"], ["--key", "k", "--if-changed", "first"]])
    func killedWhileCreating(_ point: String, _ arguments: [String]) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let note = scratch.file("note.txt")
        try Data("a note".utf8).write(to: URL(fileURLWithPath: note))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: note)
        let arguments = arguments.map { $0 == "NOTE" ? note : $0 }
        // The queue made by its host, without the pending file its drain made: the producer's first append makes
        // it, as before a queue's first drain (and a folder, for an attachment or a key).
        #expect(try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch).status == 0)
        try FileManager.default.removeItem(atPath: queue + "/pending.log")
        let killed = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue] + arguments,
                                       environment: ["SHARE_QUEUE_CRASH_AT": point], in: scratch)
        #expect(killed.status != 0 && killed.lines.isEmpty, "\(killed.stderr)")
        var ids: [String] = []
        for user in [TestUsers.secondProducer, TestUsers.producer] {
            let appended = try TestUsers.run(as: user, "share-append", ["--dir", queue, "--attach", note, "--key", "k2", "--if-changed", "after"], in: scratch)
            #expect(appended.status == 0, "\(user) after a kill at \(point): \(appended.stderr)")
            ids += appended.lines
            let plain = try TestUsers.run(as: user, "share-append", ["--dir", queue] + arguments.filter { $0 != "first" } + ["again"], in: scratch)
            #expect(plain.status == 0, "\(user) after a kill at \(point): \(plain.stderr)")
            ids += plain.lines
        }
        // Everything at the queue's names is the group's; temporaries of the killed producer are at most its own leftovers.
        for name in try FileManager.default.contentsOfDirectory(atPath: queue) where !name.contains(".tmp-") {
            var status = stat()
            #expect(lstat(queue + "/" + name, &status) == 0)
            // Files only drains write the group may read: the format marker too, which the host's next drain writes anew.
            let groupBits: mode_t = QueueLayout.access(of: name) == .shared ? 0o060 : 0o040
            #expect(status.st_mode & groupBits == groupBits && status.st_gid == TestUsers.gid(TestUsers.group), "\(name): \(String(status.st_mode, radix: 8))")
        }
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(Set(try ShareQueueTests.ids(in: drain.stdout)).isSuperset(of: ids))
    }

    @Test("An empty pending file a member made that other producers cannot append to is moved aside by the next drain: producers go on",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: [("rm -f pending.log && umask 077 && : > pending.log", 77), ("rm -f pending.log && umask 007 && : > pending.log && ln pending.log mine", 78)])
    func membersEmptyPendingIsRepaired(_ plant: String, _ refusal: Int32) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        #expect(try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "first"], in: scratch).status == 0)
        #expect(try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch).status == 0)
        try asSecondProducer("cd '\(queue)' && \(plant)", scratch)
        let refused = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "refused"], in: scratch)
        #expect(refused.status == refusal, "\(refused.stderr)")
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drain.stderr.contains(queue + "/pending.log is empty and"), "\(drain.stderr)")
        let appended = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "second"], in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        let last = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(try ShareQueueTests.ids(in: last.stdout) == appended.lines, "\(last.stderr)")
    }

    @Test("An attachments or keys folder a member put in place that other producers cannot write is moved aside by the next drain: producers go on",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["attachments", "keys"], ["0700", "0500"])
    func membersFolderIsRepaired(_ folder: String, _ mode: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let note = scratch.file("note.txt")
        try Data("a note".utf8).write(to: URL(fileURLWithPath: note))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: note)
        let arguments = ["--dir", queue, "--attach", note, "--key", "k", "--if-changed", "text"]
        let first = try TestUsers.run(as: TestUsers.producer, "share-append", arguments, in: scratch)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch).status == 0)
        try asSecondProducer("cd '\(queue)' && mv \(folder) real-\(folder) && mkdir \(folder) && chmod \(mode) \(folder)", scratch)
        let refused = try TestUsers.run(as: TestUsers.producer, "share-append", arguments + ["changed"], in: scratch)
        #expect(refused.status == 77, "\(refused.stderr)")
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drain.stderr.contains(queue + "/" + folder + " "), "\(drain.stderr)")
        let appended = try TestUsers.run(as: TestUsers.producer, "share-append", arguments + ["changed again"], in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        let last = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(try ShareQueueTests.ids(in: last.stdout) == appended.lines, "\(last.stderr)")
    }

    /// A queue whose `attachments/` the second producer made, honestly, by the first `--attach`, with
    /// attachments of both producers in it: the acknowledged ids, and each attachment's bytes by its name.
    private func honestAttachments(_ queue: String, _ scratch: TemporaryDirectory) throws -> (ids: [String], files: [String: Data]) {
        var ids: [String] = []
        var files: [String: Data] = [:]
        for (index, user) in [TestUsers.secondProducer, TestUsers.producer, TestUsers.secondProducer, TestUsers.producer].enumerated() {
            let name = "note-\(index).txt"
            let path = scratch.file(name)
            files[name] = Data("note \(index) by \(user) ".utf8) + Data(repeating: UInt8(index), count: 1000 * (index + 1))
            try files[name]!.write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            let appended = try TestUsers.run(as: user, "share-append", ["--dir", queue, "--attach", path, "from \(user)"], in: scratch)
            try #require(appended.status == 0, "\(user): \(appended.stderr)")
            ids += appended.lines
        }
        var status = stat()
        #expect(lstat(queue + "/attachments", &status) == 0 && status.st_uid == TestUsers.uid(TestUsers.secondProducer))
        return (ids, files)
    }

    /// Every record in `output` has its attachment, delivered to `received` with the bytes its producer attached.
    private func expectIntact(_ output: Data, _ files: [String: Data], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for record in try jsonObjects(output) {
            let attachment = try #require((record["attachments"] as? [[String: Any]])?.first, sourceLocation: sourceLocation)
            let name = try #require(attachment["name"] as? String, sourceLocation: sourceLocation)
            let path = try #require(attachment["path"] as? String, sourceLocation: sourceLocation)
            #expect(FileManager.default.contents(atPath: path) == files[name], "\(name)", sourceLocation: sourceLocation)
        }
    }

    /// Nothing was set aside as damage or moved to the dead letters.
    private func expectNothingSetAside(_ queue: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for name in ["quarantine.log", "dead-letters.log", "dead-letters.waiting"] {
            #expect(!FileManager.default.fileExists(atPath: queue + "/" + name), "\(name)", sourceLocation: sourceLocation)
        }
    }

    @Test("A member who made the attachments folder honestly and then locks others out of it: one drain moves it aside, brings every copy back and delivers every record intact; producers go on",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: [("0700", nil), ("2750", TestUsers.host), ("2750", nil)] as [(String, String?)])
    func membersLockedFolderComesBack(_ mode: String, _ drainer: String?) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let received = scratch.file("received")
        try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: false)
        TestUsers.chown(received, TestUsers.host)
        let (acknowledged, files) = try honestAttachments(queue, scratch)
        try asSecondProducer("cd '\(queue)' && chmod \(mode) attachments", scratch)

        let drain = try TestUsers.run(as: drainer, "host-drain", ["--dir", queue, "--attachments-to", received], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == acknowledged, "\(drain.stderr)")
        try expectIntact(drain.stdout, files)
        expectNothingSetAside(queue)
        #expect(drain.stderr.contains(queue + "/attachments ") && drain.stderr.contains("brought back the copy"), "\(drain.stderr)")
        // The folder is the queue's again: the group's, 2770.
        var status = stat()
        #expect(lstat(queue + "/attachments", &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o2770 && status.st_gid == TestUsers.gid(TestUsers.group), "\(String(status.st_mode, radix: 8))")

        let note = scratch.file("after.txt")
        try Data("after".utf8).write(to: URL(fileURLWithPath: note))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: note)
        let appended = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "--attach", note, "after"], in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        let last = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--attachments-to", received], in: scratch)
        #expect(last.status == 0, "\(last.stderr)")
        #expect(try ids(in: last.stdout) == appended.lines, "\(last.stderr)")
        try expectIntact(last.stdout, ["after.txt": Data("after".utf8)])
        expectNothingSetAside(queue)
    }

    /// The dead letters as `--status --json` counts them, with those that wait for another user, and its warnings.
    private func letters(_ queue: String, _ scratch: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation) throws -> (letters: Int?, waiting: Int?, stderr: String) {
        let status = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--status", "--json"], in: scratch)
        #expect(status.status == 0, "\(status.stderr)", sourceLocation: sourceLocation)
        let object = try jsonObjects(status.stdout).first
        return (object?["deadLetters"] as? Int, object?["waitingLetters"] as? Int, status.stderr)
    }

    @Test("A member's attachments folder the host may not read holds only the records whose copies it has: they wait among the dead letters, later records are delivered at once, and once the folder is readable the next drain puts them back and delivers them intact",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason), arguments: [true, false])
    func membersUnreadableFolderHoldsOnlyItsRecords(_ memberRepairs: Bool) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let received = scratch.file("received")
        try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: false)
        TestUsers.chown(received, TestUsers.host)
        let (acknowledged, files) = try honestAttachments(queue, scratch)
        try asSecondProducer("cd '\(queue)' && chmod 0700 attachments", scratch)
        let later = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "later"], in: scratch)
        #expect(later.status == 0, "\(later.stderr)")

        let first = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--attachments-to", received], in: scratch)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try ids(in: first.stdout) == later.lines, "\(first.stderr)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-attachments") }
        try #require(aside.count == 1, "\(aside)")
        #expect(first.stderr.components(separatedBy: "waits among the dead letters").count == acknowledged.count + 1, "\(first.stderr)")
        #expect(first.stderr.contains(queue + "/" + aside[0]) && first.stderr.contains("user \(TestUsers.uid(TestUsers.secondProducer))"), "\(first.stderr)")
        #expect(!FileManager.default.fileExists(atPath: queue + "/quarantine.log"))
        var counted = try letters(queue, scratch)
        #expect(counted.letters == acknowledged.count && counted.waiting == acknowledged.count, "\(counted)")
        #expect(counted.stderr.contains(queue + "/" + aside[0]) && counted.stderr.contains("may not be read"), "\(counted.stderr)")

        // Producers go on, with attachments too, and each drain delivers what came since, however long the folder stays closed.
        let note = scratch.file("after.txt")
        try Data("after".utf8).write(to: URL(fileURLWithPath: note))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: note)
        for _ in 0..<2 {
            let appended = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "--attach", note, "after"], in: scratch)
            #expect(appended.status == 0, "\(appended.stderr)")
            let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--attachments-to", received], in: scratch)
            #expect(drain.status == 0, "\(drain.stderr)")
            #expect(try ids(in: drain.stdout) == appended.lines, "\(drain.stderr)")
            try expectIntact(drain.stdout, ["after.txt": Data("after".utf8)])
        }
        counted = try letters(queue, scratch)
        #expect(counted.letters == acknowledged.count && counted.waiting == acknowledged.count, "\(counted)")

        if memberRepairs {
            try asSecondProducer("cd '\(queue)' && chmod 2750 rejected-*-attachments", scratch)
        } else {
            _ = try run("/bin/sh", ["-c", "chmod g+rx '\(queue)'/rejected-*-attachments"], in: scratch)
        }
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--attachments-to", received], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == acknowledged, "\(drain.stderr)")
        try expectIntact(drain.stdout, files)
        #expect(drain.stderr.components(separatedBy: "no longer waits").count == acknowledged.count + 1, "\(drain.stderr)")
        counted = try letters(queue, scratch)
        #expect(counted.letters == 0 && counted.waiting == 0, "\(counted)")
        #expect(!FileManager.default.fileExists(atPath: queue + "/quarantine.log"))
        let again = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue], in: scratch)
        #expect(again.status == 0 && again.stdout.isEmpty, "\(again.stderr)")
    }

    @Test("A member who removes her own copy and closes a folder named as moved aside holds back her own record alone: honest records are delivered by the first drain, whatever the folder's date",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: [("999999999999999999", []), ("now", []), ("now", ["--coalesce"])] as [(String, [String])])
    func membersOwnRecordHoldsNoOther(_ date: String, _ options: [String]) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let note = scratch.file("note.txt")
        try Data("a note".utf8).write(to: URL(fileURLWithPath: note))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: note)
        let own = try TestUsers.run(as: TestUsers.secondProducer, "share-append", ["--dir", queue, "--attach", note, "--key", "k", "hers"], in: scratch)
        #expect(own.status == 0, "\(own.stderr)")
        let name = "rejected-" + (date == "now" ? String(Int64(Date().timeIntervalSince1970 * 1000)) : date) + "-attachments"
        try asSecondProducer("cd '\(queue)' && mkdir \(name) && mv attachments/* \(name)/ && chmod 0700 \(name)", scratch)
        var honest: [String] = []
        for user in [TestUsers.producer, TestUsers.host] {
            let appended = try TestUsers.run(as: user, "share-append", ["--dir", queue, "from \(user)"], in: scratch)
            #expect(appended.status == 0, "\(appended.stderr)")
            honest += appended.lines
        }
        for run in 0..<2 {
            let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue] + options, in: scratch)
            #expect(drain.status == 0, "\(drain.stderr)")
            #expect(try ids(in: drain.stdout) == (run == 0 ? honest : []), "\(drain.stderr)")
        }
        let counted = try letters(queue, scratch)
        if date == "now" {
            // A folder of a date a drain may have given it: her record waits for it, and says so.
            #expect(counted.letters == 1 && counted.waiting == 1, "\(counted)")
            #expect(counted.stderr.contains(queue + "/" + name), "\(counted.stderr)")
        } else {
            // A name dated ahead of every drain's clock is not looked in: her copy is missing, and her record set aside.
            #expect(counted.letters == 0 && counted.waiting == 0, "\(counted)")
            let quarantine = try String(contentsOfFile: queue + "/quarantine.log", encoding: .utf8)
            #expect(quarantine.contains("is missing"), "\(quarantine)")
        }
    }

    @Test("Folders a member plants, dated after one moved aside from another producer, do not push that one out of the drain's reach: its copies come back",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func plantedFoldersPushOutOnlyTheirOwner() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        let received = scratch.file("received")
        try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: false)
        TestUsers.chown(received, TestUsers.host)
        let note = scratch.file("note.txt")
        try Data("a note".utf8).write(to: URL(fileURLWithPath: note))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: note)
        // The first producer's folder, which she leaves without the group's write: the drain moves it aside.
        let appended = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "--attach", note, "honest"], in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        _ = try run("/usr/bin/setpriv", ["--reuid=\(TestUsers.producer)", "--regid=nogroup", "--init-groups", "/bin/sh", "-c", "chmod 2750 '\(queue)/attachments'"], in: scratch)
        // The member's, a minute ahead of the drain (within the clock's allowance), each with a file of that name and other bytes.
        let ahead = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        let copy = try FileManager.default.contentsOfDirectory(atPath: queue + "/attachments").first { !$0.hasPrefix(".") } ?? "missing"
        let plant = (0..<10).map { "mkdir rejected-\(ahead + Int64($0))-attachments && echo other > rejected-\(ahead + Int64($0))-attachments/\(copy)" }
        try asSecondProducer("cd '\(queue)' && " + plant.joined(separator: " && "), scratch)

        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--attachments-to", received], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended.lines, "\(drain.stderr)")
        try expectIntact(drain.stdout, ["note.txt": Data("a note".utf8)])
        #expect(drain.stderr.contains("brought back the copy"), "\(drain.stderr)")
        expectNothingSetAside(queue)
    }

    @Test("A member holding drain.lock with a shared lock: the drain says a shared lock holds it, whose, and what to do",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func membersSharedDrainLock() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try sharedQueue(scratch)
        #expect(try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "first"], in: scratch).status == 0)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        holder.arguments = ["--reuid=\(TestUsers.secondProducer)", "--regid=nogroup", "--init-groups", "/usr/bin/flock", "-s", queue + "/drain.lock", "sleep", "5"]
        try holder.run()
        defer { holder.terminate(); holder.waitUntilExit() }
        var drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--wait", "0"], in: scratch)
        for _ in 0..<50 where drain.status == 0 {
            // Until the holder has its lock.
            usleep(100_000)
            drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--wait", "0"], in: scratch)
        }
        #expect(drain.status == 75, "\(drain.stderr)")
        #expect(drain.stderr.contains("holds a shared lock on it, which no ShareQueue tool takes"), "\(drain.stderr)")
        #expect(drain.stderr.contains("of user \(TestUsers.uid(TestUsers.secondProducer))"), "\(drain.stderr)")
        #expect(!drain.stderr.contains("cannot name"), "\(drain.stderr)")
    }
}
