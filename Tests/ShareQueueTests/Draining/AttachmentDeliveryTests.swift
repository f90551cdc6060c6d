import Foundation
import Testing
@testable import ShareQueueCore

/// Delivering attachments: a drain killed at any step of it costs no record,
/// whatever sink comes next, and what the host receives is its own file.
@Suite("Attachment delivery", .runTimeLimit(minutes: 3))
struct AttachmentDeliveryTests {
    /// The steps of an attachment's delivery, in order: copied under a temporary name,
    /// renamed into the destination, taken by the sink, recorded by the checkpoint.
    static let steps = ["attachment-copied", "attachment-delivered", "drain-delivered", "drain-checkpointed"]

    /// The sinks that copy attachments out of the queue: 0 is `--attachments-to`, 1 is `--store`.
    static func firstSink(_ index: Int, _ scratch: TemporaryDirectory) -> [String] {
        index == 0 ? ["--attachments-to", scratch.file("received")] : ["--store", scratch.file("inbox.sqlite")]
    }

    /// A record another producer wrote that names the queue's attachment file `file`, of `size` bytes with digest `sha256`,
    /// in `times` entries, and has the key `key` if one is given.
    static func record(id: String, naming file: String, size: Int, sha256: String, times: Int = 1, key: String? = nil) -> [UInt8] {
        let entry = "{\"name\":\"a.jpg\",\"file\":\"\(file)\",\"size\":\(size),\"sha256\":\"\(sha256)\",\"type\":\"image/jpeg\"}"
        return Array(("{\"v\":1,\"id\":\"\(id)\",\"date\":\"2026-12-01T00:00:00.000Z\",\"source\":\"other\",\(key.map { "\"key\":\"\($0)\"," } ?? "")\"kind\":\"file\","
            + "\"attachments\":[" + Array(repeating: entry, count: times).joined(separator: ",") + "]}").utf8)
    }

    @Test("A delivered file whose name ends in .partial survives a later record naming the file it was copied from: a copy is written under a name no delivered file has",
          arguments: [0, 1])
    func deliveredPartialSurvives(first: Int) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let notes = try AttachmentTests.makeFile(scratch, "notes.partial", bytes: 1_000)
        #expect(try queue.append(["--attach", notes.path, "notes"]).status == 0)
        let sink = Self.firstSink(first, scratch)
        #expect(try queue.drain(sink).status == 0)
        let destination = first == 0 ? scratch.file("received") : scratch.file("inbox.sqlite.attachments")
        let delivered = try #require(try FileManager.default.contentsOfDirectory(atPath: destination).first { $0.hasSuffix(".partial") })
        let file = String(delivered.dropLast(".partial".count))
        // Another producer's copy at the delivered file's name less ".partial", and a record naming it.
        try Data("evil\n".utf8).write(to: URL(fileURLWithPath: queue.file("attachments/" + file)))
        try queue.appendStored([Self.record(id: "evil", naming: file, size: 5, sha256: SHA256.hex(Array("evil\n".utf8)))])
        #expect(try queue.drain(sink).status == 0)
        #expect(FileManager.default.contents(atPath: destination + "/" + delivered) == FileManager.default.contents(atPath: notes.path))
    }

    /// A queue holding two records with attachments and one without.
    private func queueWithAttachments(_ scratch: TemporaryDirectory) throws -> (queue: TestQueue, ids: [String], digests: Set<String>) {
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 300_000)
        let scan = try AttachmentTests.makeFile(scratch, "scan.pdf", bytes: 5_000)
        var ids = try queue.append(["--attach", photo.path, "photo"]).lines
        ids += try queue.append(["--attach", scan.path, "scan"]).lines
        ids += try queue.append(text: "plain")
        return (queue, ids, [photo.sha256, scan.sha256])
    }

    @Test("A drain killed at each step of an attachment's delivery, then a drain to another sink: every record delivered, none set aside",
          arguments: steps, [0, 1])
    func killedThenAnotherSink(step: String, first: Int) throws {
        let scratch = TemporaryDirectory()
        let (queue, ids, digests) = try queueWithAttachments(scratch)
        let killed = try queue.drain(Self.firstSink(first, scratch) + ["--batch", "1"], environment: ["SHARE_QUEUE_CRASH_AT": step])
        #expect(killed.status == 128 + SIGKILL, "sink \(first) at \(step): \(killed.stderr)")
        // A command that refuses once, then standard output.
        let refused = try queue.drain(["--exec", "cat > /dev/null; exit 1"])
        #expect(refused.status == 75, "\(refused.stderr)")
        let next = try queue.drain()
        #expect(next.status == 0, "\(next.stderr)")
        // Nothing was set aside as damage, so no drain reported any.
        #expect(try queue.setAsideEvents().isEmpty, "\(next.stderr)")
        let records = try jsonObjects(next.stdout)
        // The killed drain may have handed some to its sink already; the rest come now, each whole.
        let before = step == "drain-checkpointed" ? 1 : 0
        #expect(records.map { $0["id"] as! String } == Array(ids.dropFirst(before)))
        #expect(try queue.quarantine().isEmpty)
        for record in records {
            for attachment in record["attachments"] as? [[String: Any]] ?? [] {
                let data = try Data(contentsOf: URL(fileURLWithPath: attachment["path"] as! String))
                #expect(digests.contains(SHA256.hex([UInt8](data))))
            }
        }
    }

    @Test("An attachment with a second name, as a drain of an earlier version left it, is delivered, not set aside")
    func secondNameIsNotDamage() throws {
        let scratch = TemporaryDirectory()
        let (queue, appended, _) = try queueWithAttachments(scratch)
        let copy = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))[0]
        try FileManager.default.createDirectory(atPath: scratch.file("old-destination"), withIntermediateDirectories: false)
        try FileManager.default.linkItem(atPath: queue.file("attachments/" + copy), toPath: scratch.file("old-destination/" + copy))
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        #expect(try queue.quarantine().isEmpty)
    }

    @Test("A delivered attachment is the host's own file: one name, no write for others, and a writer of the queue's copy cannot change it",
          arguments: [0, 1])
    func deliveredFileBelongsToTheHost(first: Int) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 100_000)
        #expect(try queue.append(["--attach", photo.path, "photo"]).status == 0)
        // The producer keeps a descriptor of the queue's copy, open for writing.
        let copy = queue.file("attachments/" + (try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))[0]))
        let producer = try #require(FileHandle(forWritingAtPath: copy))
        defer { try? producer.close() }
        let drain = try queue.drain(Self.firstSink(first, scratch))
        #expect(drain.status == 0, "\(drain.stderr)")
        let path: String
        if first == 0 {
            path = (try jsonObjects(drain.stdout)[0]["attachments"] as! [[String: Any]])[0]["path"] as! String
        } else {
            let stored = try sqlite(scratch.file("inbox.sqlite"), "SELECT attachments FROM records")[0]
            path = ((try JSONSerialization.jsonObject(with: Data(stored.utf8)) as! [[String: Any]])[0])["path"] as! String
        }
        try producer.write(contentsOf: Data("rewritten by the producer".utf8))
        try producer.synchronize()
        let delivered = try FileManager.default.attributesOfItem(atPath: path)
        #expect(delivered[.referenceCount] as? Int == 1)
        #expect((delivered[.posixPermissions] as! Int) & 0o022 == 0)
        #expect(delivered[.ownerAccountID] as? Int == Int(geteuid()))
        #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == photo.sha256)
    }

    @Test("A later record naming a delivered attachment's file replaces nothing the host received: other bytes go to the next free name, the same bytes share the file",
          arguments: [0, 1])
    func deliveredFileIsNeverReplaced(first: Int) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 1_000)
        #expect(try queue.append(["--attach", photo.path, "photo"]).status == 0)
        let file = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))[0]
        #expect(try queue.drain(Self.firstSink(first, scratch)).status == 0)
        let destination = first == 0 ? scratch.file("received/") : scratch.file("inbox.sqlite.attachments/")
        let received = destination + file
        #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: received)))) == photo.sha256)

        // Another producer copies a file of the same name into the queue, and a record naming it.
        func plant(_ bytes: [UInt8], id: String) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: queue.file("attachments/" + file)))
            try queue.appendStored([Self.record(id: id, naming: file, size: bytes.count, sha256: SHA256.hex(bytes))])
        }
        try plant(Array("other bytes".utf8), id: "other-bytes")
        let other = try queue.drain(Self.firstSink(first, scratch))
        #expect(other.status == 0, "\(other.stderr)")
        #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: received)))) == photo.sha256)
        let next = destination + file.replacingOccurrences(of: ".jpg", with: "-2.jpg")
        #expect(FileManager.default.contents(atPath: next) == Data("other bytes".utf8))
        if first == 0 { #expect((try jsonObjects(other.stdout)[0]["attachments"] as! [[String: Any]])[0]["path"] as? String == next) }

        // The same bytes again (a drain cut short before its checkpoint delivers them twice) are delivered where they are.
        try plant([UInt8](try Data(contentsOf: URL(fileURLWithPath: photo.path))), id: "same-bytes")
        let shared = try queue.drain(Self.firstSink(first, scratch))
        #expect(shared.status == 0, "\(shared.stderr)")
        if first == 0 { #expect((try jsonObjects(shared.stdout)[0]["attachments"] as! [[String: Any]])[0]["path"] as? String == received) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination).sorted() == [file, file.replacingOccurrences(of: ".jpg", with: "-2.jpg")].sorted())
        #expect(try queue.status()["quarantined"] as? Int == 0)
    }

    /// A queue holding one record with a 1,000-byte photo, the name of the queue's copy of it, and an empty destination.
    private func queueWithPhoto(_ scratch: TemporaryDirectory) throws -> (queue: TestQueue, photo: (path: String, sha256: String), appended: [String], file: String, received: String) {
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 1_000)
        let appended = try queue.append(["--attach", photo.path, "photo"]).lines
        let file = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))[0]
        let received = scratch.file("received")
        try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: false)
        return (queue, photo, appended, file, received)
    }

    @Test("A symlink at the name an attachment is delivered under is neither followed nor a failure: the copy takes the next name")
    func symlinkAtTheDeliveredName() throws {
        let scratch = TemporaryDirectory()
        let (queue, _, appended, file, received) = try queueWithPhoto(scratch)
        let victim = scratch.file("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: received + "/" + file, withDestinationPath: victim)
        let drain = try queue.drain(["--attachments-to", received])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        let path = (try jsonObjects(drain.stdout)[0]["attachments"] as! [[String: Any]])[0]["path"] as? String
        #expect(path == scratch.file("received/" + file.replacingOccurrences(of: ".jpg", with: "-2.jpg")))
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    }

    @Test("In a destination others can write, a directory at the copy's temporary name stops no drain, and a file of the same bytes that another user owns is not taken for the host's: the copy takes the next name",
          arguments: ["partial", "same bytes"])
    func plantsInTheDestination(_ plant: String) throws {
        let scratch = TemporaryDirectory()
        let (queue, photo, appended, file, received) = try queueWithPhoto(scratch)
        if plant == "partial" {
            try FileManager.default.createDirectory(atPath: received + "/." + file + ".partial", withIntermediateDirectories: false)
        } else {
            // The very bytes, in a file of another user's that stays writable to that user (giving it away needs root).
            guard getuid() == 0 else { return }
            try FileManager.default.copyItem(atPath: photo.path, toPath: received + "/" + file)
            #expect(chown(received + "/" + file, 65534, 65534) == 0 && chmod(received + "/" + file, 0o666) == 0)
        }
        let drain = try queue.drain(["--attachments-to", received])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        let path = try #require((try jsonObjects(drain.stdout).first?["attachments"] as? [[String: Any]])?.first?["path"] as? String)
        var status = stat()
        #expect(lstat(path, &status) == 0 && status.st_uid == getuid() && status.st_mode & 0o077 == 0, "\(path)")
        if plant == "same bytes" { #expect(path == received + "/" + file.replacingOccurrences(of: ".jpg", with: "-2.jpg")) }
    }

    @Test("A record set aside for its second attachment leaves no copy of its first in the destination: none of its files reaches the host",
          arguments: ["--attachments-to", "--store"])
    func setAsideRecordLeavesNoCopy(_ sink: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let first = try AttachmentTests.makeFile(scratch, "a.txt", bytes: 100)
        let second = try AttachmentTests.makeFile(scratch, "b.txt", bytes: 100)
        _ = try queue.append(["--attach", first.path, "--attach", second.path, "two files"])
        // The second copy changed after its record was written: same size, other bytes.
        let copies = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments")).sorted()
        let attachments = try #require(try jsonObjects(queue.drain(["--peek"]).stdout).first?["attachments"] as? [[String: Any]])
        let secondCopy = try #require(attachments.last?["file"] as? String)
        #expect(copies.contains(secondCopy))
        try Data(repeating: 0x21, count: 100).write(to: URL(fileURLWithPath: queue.file("attachments/" + secondCopy)))
        let destination = scratch.file(sink == "--store" ? "inbox.sqlite" : "received")
        let drain = try queue.drain([sink, destination])
        let setAside = try queue.setAsideEvents()
        #expect(drain.status == 0 && setAside.count == 1 && drain.warned(setAside[0]), "\(drain.stderr)")
        let folder = sink == "--store" ? destination + ".attachments" : destination
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).isEmpty)
    }

    @Test("A command that changes a delivered file and asks for a retry gets the record again, with a fresh copy beside its change")
    func retryAfterTheHostChangedTheFile() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 1_000)
        let appended = try queue.append(["--attach", photo.path, "photo"]).lines
        let marker = scratch.file("tried")
        // The first run writes into the file it was handed, then fails for a while (75); the second takes the batch.
        let command = "input=$(cat); if [ ! -e '\(marker)' ]; then touch '\(marker)'; path=$(printf '%s' \"$input\" | sed 's/.*\"path\":\"\\([^\"]*\\)\".*/\\1/'); echo changed >> \"$path\"; exit 75; fi; printf '%s\\n' \"$input\" > '\(scratch.file("taken"))'"
        let first = try queue.drain(["--attachments-to", scratch.file("received"), "--exec", command])
        #expect(first.status == 75, "\(first.stderr)")
        let second = try queue.drain(["--attachments-to", scratch.file("received"), "--exec", command])
        #expect(second.status == 0, "\(second.stderr)")
        let taken = try jsonObjects(Data(contentsOf: URL(fileURLWithPath: scratch.file("taken"))))
        #expect(taken.map { $0["id"] as? String } == appended)
        let path = try #require((taken.first?["attachments"] as? [[String: Any]])?.first?["path"] as? String)
        #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == photo.sha256)
        #expect(try queue.status()["quarantined"] as? Int == 0)
    }

    @Test("Two records naming one attachment file are both delivered: the queue's copy outlives the first while the second still names it",
          arguments: [0, 1])
    func sharedFileOutlivesItsFirstRecord(first: Int) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 1_000)
        let appended = try queue.append(["--attach", photo.path, "photo"]).lines
        let file = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))[0]
        // A second record naming the same file, as a producer that reuses an attachment writes it.
        try queue.appendStored([Self.record(id: "second", naming: file, size: 1_000, sha256: photo.sha256)])
        let drain = try queue.drain(Self.firstSink(first, scratch) + ["--batch", "1"])
        #expect(drain.status == 0, "\(drain.stderr)")
        if first == 0 { #expect(try ids(in: drain.stdout) == appended + ["second"]) }
        #expect(try queue.status()["quarantined"] as? Int == 0)
        #expect(!FileManager.default.fileExists(atPath: queue.file("attachments/" + file)), "the last record's delivery removes it")
    }

    @Test("A file named by a record that becomes a dead letter and by one delivered stays for the letter, which comes back whole")
    func sharedFileOutlivesADeliveredRecordForADeadLetter() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 1_000)
        let refused = try queue.append(["--attach", photo.path, "refuse me"]).lines
        let file = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))[0]
        try queue.appendStored([Self.record(id: "second", naming: file, size: 1_000, sha256: photo.sha256)])
        let refusing = "if grep -q 'refuse me'; then exit 1; fi"
        let drain = try queue.drain(["--attachments-to", scratch.file("received"), "--max-attempts", "1", "--exec", refusing])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(FileManager.default.fileExists(atPath: queue.file("attachments/" + file)), "the dead letter's file was removed")
        #expect(try queue.drain(["--requeue-dead"]).status == 0)
        let again = try queue.drain(["--attachments-to", scratch.file("received")])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try ids(in: again.stdout) == refused)
        #expect(try queue.status()["quarantined"] as? Int == 0)
    }
}
