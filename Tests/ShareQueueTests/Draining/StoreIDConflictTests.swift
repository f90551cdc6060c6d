import Foundation
import Testing
@testable import ShareQueueCore

/// `host-drain --store` and ids: producers choose them, so a record whose id the store already
/// holds with other content is not dropped without a word; the same record again is.
@Suite("Store ids taken by other content", .serialized, .runTimeLimit(minutes: 3))
struct StoreIDConflictTests {
    private static let id = "0C3B52F4-6E6A-4B55-9E57-3F1D7D2A9B10"

    /// The warning host-drain prints for a record whose id the store holds with other content.
    private static func warning(_ id: String) -> String {
        "host-drain: warning: record \"\(id)\" was not stored; moved it to the dead letters: id already stored with different content"
    }

    @Test("A second record with a stored id and other text is not stored: it becomes a dead letter with its cause, with a warning, exit 65, and --status counts it")
    func otherContentUnderAStoredID() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        #expect(try queue.append(["--id", Self.id, "first"]).lines == [Self.id])
        let first = try queue.drain(["--store", db])
        #expect(first.status == 0, "\(first.stderr)")

        #expect(try queue.append(["--id", Self.id, "second"]).lines == [Self.id])
        let later = try queue.append(text: "later")
        let second = try queue.drain(["--store", db])
        #expect(second.status == 65, "\(second.stderr)")
        #expect(second.stderr.contains(Self.warning(Self.id)), "\(second.stderr)")
        #expect(second.stderr.contains("1 record came with an id the store already holds with other content"), "\(second.stderr)")
        #expect(second.stderr.contains("delivered 1 record in 1 batch; 1 moved to the dead letters; 1 not stored"), "\(second.stderr)")
        // The first record keeps the id; the record after the conflicting one is stored all the same.
        #expect(try sqlite(db, "SELECT id, text FROM records ORDER BY rowid") == ["\(Self.id)|first", "\(later[0])|later"])
        let letters = try queue.deadLetters()
        try #require(letters.count == 1)
        #expect(letters[0]["error"] as? String == "id already stored with different content")
        let record = letters[0]["record"] as? [String: Any]
        #expect(record?["id"] as? String == Self.id && record?["text"] as? String == "second", "\(letters)")
        let status = try queue.status()
        #expect(status["deadLetters"] as? Int == 1 && status["idConflictLetters"] as? Int == 1, "\(status)")
        let text = try queue.drain(["--status"])
        #expect(text.lines.contains("dead letters: 1 (1 not stored: id already stored with different content)"), "\(text.lines)")
        let metrics = try queue.drain(["--status", "--prometheus"]).lines
        #expect(metrics.contains { $0.hasPrefix("sharequeue_id_conflict_letters{") && $0.hasSuffix(" 1") }, "\(metrics)")

        // Settled: the next drain has nothing to say, and a requeue brings the letter back to the same end.
        let third = try queue.drain(["--store", db])
        #expect(third.status == 0 && !third.stderr.contains("warning"), "\(third.stderr)")
        #expect(try queue.drain(["--requeue-dead"]).status == 0)
        let requeued = try queue.drain(["--store", db])
        #expect(requeued.status == 65 && requeued.stderr.contains(Self.warning(Self.id)), "\(requeued.stderr)")
        #expect(try sqlite(db, "SELECT count(*) FROM records") == ["2"])
        #expect(try queue.deadLetters().count == 1)
    }

    @Test("Two records with one id and other content in one batch: the first is stored, the second is a dead letter, and the records around them are stored")
    func otherContentInOneBatch() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        let before = try queue.append(text: "before")
        try queue.append(["--id", Self.id, "first"])
        try queue.append(["--id", Self.id, "second"])
        let after = try queue.append(text: "after")
        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 65, "\(drain.stderr)")
        #expect(drain.stderr.components(separatedBy: "warning:").count == 2 && drain.stderr.contains(Self.warning(Self.id)), "\(drain.stderr)")
        #expect(try sqlite(db, "SELECT id, text FROM records ORDER BY rowid") == ["\(before[0])|before", "\(Self.id)|first", "\(after[0])|after"])
        let letters = try queue.deadLetters()
        #expect(letters.count == 1 && (letters.first?["record"] as? [String: Any])?["text"] as? String == "second", "\(letters)")
        #expect(try queue.status(["--store", db])["rows"] as? Int == 3)
    }

    @Test("The same record delivered again, byte for byte, is stored once, in the same batch or a later drain, silently")
    func sameRecordAgain() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        try queue.plantRecord(id: Self.id, text: "same")
        try queue.plantRecord(id: Self.id, text: "same")
        let first = try queue.drain(["--store", db])
        #expect(first.status == 0 && !first.stderr.contains("warning"), "\(first.stderr)")
        try queue.plantRecord(id: Self.id, text: "same")
        let second = try queue.drain(["--store", db])
        #expect(second.status == 0 && !second.stderr.contains("warning"), "\(second.stderr)")
        #expect(try sqlite(db, "SELECT id, text FROM records") == ["\(Self.id)|same"])
        #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
        #expect(try queue.status()["idConflictLetters"] as? Int == 0)
    }

    @Test("An append retried under its --id, with the same text and its own date, is stored once, silently, in the same drain or a later one")
    func retriedAppend() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        for _ in 0..<2 { #expect(try queue.append(["--id", Self.id, "--key", "k", "retried"]).lines == [Self.id]) }
        let first = try queue.drain(["--store", db])
        #expect(first.status == 0 && !first.stderr.contains("warning"), "\(first.stderr)")
        usleep(2000)
        #expect(try queue.append(["--id", Self.id, "--key", "k", "retried"]).lines == [Self.id])
        let second = try queue.drain(["--store", db])
        #expect(second.status == 0 && !second.stderr.contains("warning"), "\(second.stderr)")
        #expect(try sqlite(db, "SELECT id, text FROM records") == ["\(Self.id)|retried"])
        #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
    }

    @Test("The same record with an attachment, delivered again where its copy's name is taken, is stored once, silently: where its copy went is no part of its content")
    func sameRecordWithAttachmentAgain() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        let note = scratch.file("note.txt")
        try Data("a note".utf8).write(to: URL(fileURLWithPath: note))
        let ids = try queue.append(["--attach", note, "with a note"]).lines
        // The same record again, as a foreign producer would write it: its id, date, text and attachment.
        let peeked = try queue.drain(["--peek"])
        try #require(peeked.status == 0 && peeked.lines.count == 1, "\(peeked.stderr)")
        try queue.appendStored([Array(peeked.stdout.dropLast())])
        #expect(try queue.drain(["--store", db, "--max", "1"]).status == 0)
        // Other bytes take the copy's name in the store's folder: the second delivery hands the copy over under another.
        let folder = db + ".attachments"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        try #require(names.count == 1, "\(names)")
        try FileManager.default.removeItem(atPath: folder + "/" + names[0])
        try Data("other bytes".utf8).write(to: URL(fileURLWithPath: folder + "/" + names[0]))
        let again = try queue.drain(["--store", db])
        #expect(again.status == 0 && !again.stderr.contains("warning"), "\(again.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 2)
        #expect(try sqlite(db, "SELECT id FROM records") == ids)
        #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
    }
}

/// The substitution a member of a shared queue's group can try on a store: read the id of an honest
/// record that waits among the dead letters (her own closed folder holds it), append her own record
/// with that id, and reopen the folder, so that hers is stored first.
@Suite("Store ids taken by a member", .serialized)
struct StoreIDSubstitutionTests {
    @Test("A member's record with the id of an honest one that waits is stored first; the honest one then comes back, is not stored, and is a dead letter with its cause, named in a warning and in --status",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func memberTakesAWaitingID() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        let home = scratch.file("host")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        TestUsers.chown(home, TestUsers.host)
        let db = home + "/inbox.sqlite"
        for (name, text) in [("mine.txt", "mine"), ("honest.bin", "honest bytes")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: scratch.file(name)))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: scratch.file(name))
        }
        func asMember(_ command: String) throws -> ProcessResult { try TestUsers.shell(as: TestUsers.secondProducer, command, in: scratch) }
        func hostDrain() throws -> ProcessResult {
            try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--store", db], in: scratch)
        }

        // She makes attachments/, hers; an honest producer attaches a file into it; she closes it.
        let mine = try TestUsers.run(as: TestUsers.secondProducer, "share-append", ["--dir", queue, "--attach", scratch.file("mine.txt"), "mine"], in: scratch)
        try #require(mine.status == 0, "\(mine.stderr)")
        let honest = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "--attach", scratch.file("honest.bin"), "honest text"], in: scratch)
        try #require(honest.status == 0 && honest.lines.count == 1, "\(honest.stderr)")
        let honestID = honest.lines[0]
        #expect(try asMember("chmod 700 '\(queue)/attachments'").status == 0)
        #expect(try hostDrain().status == 0)

        // The honest record waits. Its letter is the host's alone to read, but she could read its id in the
        // pending file before the drain, and appends her own under it.
        #expect(try asMember("cat '\(queue)/dead-letters.waiting'").status != 0, "a member read the letters that wait")
        let forged = try TestUsers.run(as: TestUsers.secondProducer, "share-append", ["--dir", queue, "--id", honestID, "FORGED"], in: scratch)
        try #require(forged.status == 0, "\(forged.stderr)")
        #expect(try hostDrain().status == 0)
        #expect(try sqlite(db, "SELECT text FROM records WHERE id = '\(honestID)'") == ["FORGED"])

        // She reopens her folder: the honest record comes back, and is not dropped without a word.
        #expect(try asMember("chmod 2770 '\(queue)'/rejected-*-attachments").status == 0)
        let later = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "later"], in: scratch)
        try #require(later.status == 0, "\(later.stderr)")
        let drain = try hostDrain()
        #expect(drain.status == 65, "\(drain.stderr)")
        #expect(drain.stderr.contains("record \"\(honestID)\" was not stored; moved it to the dead letters: id already stored with different content"), "\(drain.stderr)")
        #expect(try sqlite(db, "SELECT text FROM records WHERE id = '\(later.lines[0])'") == ["later"])
        let letters = try jsonObjects(FileManager.default.contents(atPath: queue + "/dead-letters.log") ?? Data())
        #expect(letters.count == 1, "\(letters)")
        #expect(letters.first?["error"] as? String == "id already stored with different content")
        #expect((letters.first?["record"] as? [String: Any])?["text"] as? String == "honest text", "\(letters)")
        let status = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--status", "--json"], in: scratch)
        let counted = try jsonObjects(status.stdout).first
        #expect(counted?["idConflictLetters"] as? Int == 1 && counted?["deadLetters"] as? Int == 1, "\(status.output) \(status.stderr)")
    }
}
