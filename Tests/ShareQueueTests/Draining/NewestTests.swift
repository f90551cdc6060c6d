import Foundation
import Testing
@testable import ShareQueueCore

/// "Newest" for `--coalesce` and the store's `latest`: the instant a date denotes,
/// then the record appended last. Each case appends the newer record first, so
/// that the tie rule alone would pick the wrong one.
@Suite("Newest of a key", .serialized, .runTimeLimit(minutes: 3))
struct NewestTests {
    /// Two dates of one key: `newer` denotes the later instant, and `older` is appended after it.
    struct Pair: CustomTestStringConvertible, Sendable {
        let newer: String
        let older: String
        var testDescription: String { "\(newer) over \(older)" }
    }

    static let pairs = [
        Pair(newer: "2026-11-29T09:00:00.000Z", older: "2026-11-29T10:00:00.000+02:00"),
        Pair(newer: "2026-11-29T09:00:00.000Z", older: "not a date"),
        Pair(newer: "2026-11-29T10:00:00.0001Z", older: "2026-11-29T10:00:00.000Z"),
        Pair(newer: "2026-11-29T10:00:00.000-05:30", older: "2026-11-29T15:29:59.999999Z"),
    ]

    func record(_ text: String, date: String, key: String = "k") -> [UInt8] {
        Record.encode(id: RecordID.random(), date: date, source: "test", kind: .text, text: text, jsonBytes: nil, key: key, meta: nil)
    }

    @Test("--coalesce delivers the record whose date is the later instant", arguments: pairs)
    func coalesceComparesInstants(_ pair: Pair) throws {
        let queue = TestQueue()
        try queue.appendStored([record("newer", date: pair.newer)])
        try queue.appendStored([record("older", date: pair.older)])
        let drain = try queue.drain(["--coalesce"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as? String } == ["newer"])
        #expect(drain.stderr.contains("1 superseded"), "\(drain.stderr)")
    }

    @Test("--coalesce delivers one record of a key even when two share an id: the newest, known by where it is, not by its id")
    func coalesceTwoRecordsOfOneID() throws {
        let queue = TestQueue()
        let id = "0190A000-0000-7000-8000-000000000001"
        #expect(try queue.append(["--id", id, "--key", "k", "old"]).status == 0)
        #expect(try queue.append(["--id", id, "--key", "k", "new"]).status == 0)
        let drain = try queue.drain(["--coalesce"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as? String } == ["new"])
        #expect(drain.stderr.contains("1 superseded"), "\(drain.stderr)")
    }

    @Test("The store's latest keeps the record whose date is the later instant", arguments: pairs)
    func latestComparesInstants(_ pair: Pair) throws {
        let queue = TestQueue()
        let db = queue.scratch.file("inbox.sqlite")
        // In one batch, and in two drains: the row already in latest is compared too.
        try queue.appendStored([record("newer", date: pair.newer)])
        try queue.appendStored([record("older", date: pair.older)])
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT text FROM latest WHERE key = 'k'") == ["newer"])
        try queue.appendStored([record("older again", date: pair.older)])
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT text, date FROM latest WHERE key = 'k'") == ["newer|\(pair.newer)"])
        #expect(try sqlite(db, "SELECT count(*) FROM records") == ["3"])
    }

    @Test("Equal instants go to the record appended last, in --coalesce and in latest")
    func tiesGoToLastAppended() throws {
        let queue = TestQueue()
        let db = queue.scratch.file("inbox.sqlite")
        try queue.appendStored([record("first", date: "2026-11-29T10:00:00Z")])
        try queue.appendStored([record("second", date: "2026-11-29T12:00:00.000+02:00")])
        try queue.appendStored([record("unparsed first", date: "soon", key: "u")])
        try queue.appendStored([record("unparsed second", date: "later", key: "u")])
        let peek = try queue.drain(["--peek"])
        #expect(peek.status == 0)
        let drain = try queue.drain(["--coalesce", "--exec", "cat > '\(queue.scratch.file("out"))'"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(Data(contentsOf: URL(fileURLWithPath: queue.scratch.file("out")))).map { $0["text"] as? String } == ["second", "unparsed second"])
        // The same records into the store.
        let again = TestQueue(in: queue.scratch, name: "again")
        for line in peek.lines { try again.appendStored([Array(line.utf8)]) }
        #expect(try again.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT key, text FROM latest ORDER BY key") == ["k|second", "u|unparsed second"])
    }

    @Test("A dead letter put back by --requeue-dead does not override a newer value")
    func requeuedDeadLetterDoesNotOverride() throws {
        let queue = TestQueue()
        let db = queue.scratch.file("inbox.sqlite")
        let out = queue.scratch.file("out")
        // 08:00 UTC, written with an offset: as text it sorts after the newer value below.
        try queue.appendStored([record("refused, older", date: "2026-11-29T10:00:00.000+02:00")])
        #expect(try queue.drain(["--max-attempts", "1", "--exec", "exit 4"]).status == 0)
        #expect(try queue.status()["deadLetters"] as? Int == 1)
        try queue.appendStored([record("newer", date: "2026-11-29T09:00:00.000Z")])

        // --coalesce: the requeued letter comes after the newer value and is superseded by it.
        let copy = TestQueue(in: queue.scratch, name: "copy")
        try FileManager.default.copyItem(atPath: queue.path, toPath: copy.path)
        #expect(try copy.drain(["--requeue-dead"]).status == 0)
        let coalesced = try copy.drain(["--coalesce", "--exec", "cat > '\(out)'"])
        #expect(coalesced.status == 0, "\(coalesced.stderr)")
        #expect(try jsonObjects(Data(contentsOf: URL(fileURLWithPath: out))).map { $0["text"] as? String } == ["newer"])

        // The store: the newer value is stored first, then the letter comes back and is stored after it.
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try queue.drain(["--requeue-dead"]).status == 0)
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT text FROM latest WHERE key = 'k'") == ["newer"])
        #expect(try sqlite(db, "SELECT count(*) FROM records") == ["2"])
    }

    /// A member's date from the future, and the date an honest producer writes: now.
    static let future = "9999-12-31T23:59:59.999Z"
    static func now(plusSeconds seconds: Int64 = 0) -> String { Timestamp.format(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000) + seconds * 1000) }

    @Test("--coalesce delivers an honest record of a key appended after one dated 9999-12-31")
    func coalesceDoesNotTrustAFutureDate() throws {
        let queue = TestQueue()
        try queue.appendStored([record("from the future", date: Self.future, key: "wallpaper")])
        try queue.appendStored([record("honest", date: Self.now(), key: "wallpaper")])
        let drain = try queue.drain(["--coalesce"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as? String } == ["honest"])
        #expect(drain.stderr.contains("1 superseded"), "\(drain.stderr)")
    }

    @Test("A date up to 5 minutes ahead still counts under --coalesce: a clock set back by a correction")
    func coalesceTrustsASmallLead() throws {
        let queue = TestQueue()
        try queue.appendStored([record("a minute ahead", date: Self.now(plusSeconds: 60))])
        try queue.appendStored([record("now", date: Self.now())])
        let drain = try queue.drain(["--coalesce"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as? String } == ["a minute ahead"])
    }

    @Test("The store's latest takes an honest record stored after one dated 9999-12-31, in one drain and in two")
    func latestDoesNotTrustAFutureDate() throws {
        let queue = TestQueue()
        let db = queue.scratch.file("inbox.sqlite")
        try queue.appendStored([record("from the future", date: Self.future, key: "wallpaper")])
        try queue.appendStored([record("honest", date: Self.now(), key: "wallpaper")])
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT text FROM latest WHERE key = 'wallpaper'") == ["honest"])

        // Two drains: the record dated 9999 is latest until the next one of its key is stored.
        let apart = TestQueue(in: queue.scratch, name: "apart")
        let separate = queue.scratch.file("apart.sqlite")
        try apart.appendStored([record("from the future", date: Self.future, key: "wallpaper")])
        #expect(try apart.drain(["--store", separate]).status == 0)
        #expect(try sqlite(separate, "SELECT text FROM latest WHERE key = 'wallpaper'") == ["from the future"])
        try apart.appendStored([record("honest", date: Self.now(), key: "wallpaper")])
        #expect(try apart.drain(["--store", separate]).status == 0)
        #expect(try sqlite(separate, "SELECT text FROM latest WHERE key = 'wallpaper'") == ["honest"])
        // And a second future date does not take it back.
        try apart.appendStored([record("from the future again", date: Self.future, key: "wallpaper")])
        #expect(try apart.drain(["--store", separate]).status == 0)
        #expect(try sqlite(separate, "SELECT text FROM latest WHERE key = 'wallpaper'") == ["honest"])
        #expect(try sqlite(separate, "SELECT count(*) FROM records") == ["3"])
    }

    @Test("--status and the metrics pass over a date more than 5 minutes ahead, as a date that does not parse")
    func statusDoesNotTrustAFutureDate() throws {
        let queue = TestQueue()
        try queue.appendStored([record("from the future", date: Self.future)])
        #expect(try queue.status()["oldest"] as? String == Self.future)
        let alone = try queue.drain(["--status", "--prometheus"])
        #expect(alone.status == 0, "\(alone.stderr)")
        #expect(!alone.output.contains("sharequeue_oldest_pending_age_seconds"), "\(alone.output)")
        let ahead = Self.now(plusSeconds: 60)
        try queue.appendStored([record("a minute ahead", date: ahead)])
        #expect(try queue.status()["oldest"] as? String == ahead)
        let both = try queue.drain(["--status", "--prometheus"])
        #expect(both.output.contains("sharequeue_oldest_pending_age_seconds{"), "\(both.output)")
    }

    /// A keyed record with one attachment: the file `file` in the queue's folder holding `bytes`,
    /// its record promising `promised` (by default, those bytes).
    func recordWithAttachment(_ queue: TestQueue, date: String, file: String, bytes: [UInt8], promised: [UInt8]? = nil) throws -> [UInt8] {
        try FileManager.default.createDirectory(atPath: queue.file("attachments"), withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: queue.file("attachments/" + file)))
        let promise = promised ?? bytes
        let record = "{\"v\":1,\"id\":\"\(RecordID.random())\",\"date\":\"\(date)\",\"source\":\"test\",\"kind\":\"file\",\"key\":\"k\","
            + "\"attachments\":[{\"name\":\"n.txt\",\"file\":\"\(file)\",\"size\":\(promise.count),\"sha256\":\"\(SHA256.hex(promise))\",\"type\":\"text/plain\"}]}"
        return Array(record.utf8)
    }

    @Test("--coalesce sets aside a record whose attachment fails its check, older or newer, rather than count it superseded",
          arguments: [true, false])
    func damagedAttachmentIsSetAside(damagedIsNewer: Bool) throws {
        let queue = TestQueue()
        let (damagedDate, plainDate) = damagedIsNewer
            ? ("2026-11-29T11:00:00.000Z", "2026-11-29T10:00:00.000Z") : ("2026-11-29T10:00:00.000Z", "2026-11-29T11:00:00.000Z")
        try queue.appendStored([record("plain", date: plainDate)])
        try queue.appendStored([try recordWithAttachment(queue, date: damagedDate, file: "a1.txt", bytes: Array("held".utf8), promised: Array("promised".utf8))])
        let drain = try queue.drain(["--coalesce"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as? String } == ["plain"])
        #expect(!drain.stderr.contains("superseded"), "\(drain.stderr)")
        #expect(try queue.status()["quarantined"] as? Int == 1)
    }

    @Test("--coalesce keeps an attachment file that the newest record shares with a superseded one")
    func sharedAttachmentOutlivesTheSuperseded() throws {
        let queue = TestQueue()
        let bytes = Array("the same file".utf8)
        try queue.appendStored([try recordWithAttachment(queue, date: "2026-11-29T10:00:00.000Z", file: "s1.txt", bytes: bytes)])
        try queue.appendStored([try recordWithAttachment(queue, date: "2026-11-29T11:00:00.000Z", file: "s1.txt", bytes: bytes)])
        let drain = try queue.drain(["--coalesce", "--batch", "1"])
        #expect(drain.status == 0, "\(drain.stderr)")
        let delivered = try jsonObjects(drain.stdout)
        try #require(delivered.count == 1)
        let path = try #require((delivered[0]["attachments"] as? [[String: Any]])?.first?["path"] as? String)
        #expect(FileManager.default.contents(atPath: path) == Data(bytes))
        #expect(try queue.status()["quarantined"] as? Int == 0)
    }

    @Test("--coalesce remembers each key in 16 bytes, however long a producer made it: 200 keys of 100 KB cost no more memory than 200 short ones")
    func longKeysCostNoMemory() throws {
        let scratch = TemporaryDirectory()
        var peaks: [Int64] = []
        for keyLength in [8, 100_000] {
            let queue = TestQueue(in: scratch, name: "keys-\(keyLength)")
            // Records of one size either way: the long key's bytes are the short key's text.
            for index in 0..<200 {
                let key = String(format: "%06d", index) + String(repeating: "k", count: keyLength - 6)
                let text = String(repeating: "t", count: 100_000 - keyLength + 8)
                try queue.appendStored([Record.encode(id: RecordID.random(), date: "2026-11-29T10:00:00.000Z", source: "test", kind: .text,
                                                      text: text, jsonBytes: nil, key: key, meta: nil)])
            }
            let drain = try queue.measuredDrain(["--coalesce", "-q"])
            #expect(drain.status == 0, "\(drain.stderr)")
            #expect(try ids(in: drain.stdout).count == 200)
            peaks.append(drain.peakMemory)
        }
        // The keys alone are 20 MB as text.
        #expect(peaks[1] < peaks[0] + (8 << 20) * Int64(sanitizerAllowance), "\(peaks[1]) bytes with long keys, \(peaks[0]) with short ones")
    }
}
