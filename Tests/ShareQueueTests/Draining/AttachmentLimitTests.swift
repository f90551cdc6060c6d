import Foundation
import Testing
@testable import ShareQueueCore

/// A record's `size` for an attachment is a producer's word: a drain reads no attachment
/// over its limit, and such a record waits as a dead letter, whole, with its files.
@Suite("Attachment size limit", .runTimeLimit(minutes: 3))
struct AttachmentLimitTests {
    /// The sinks: 0 prints, 1 copies attachments out (`--attachments-to`), 2 stores (`--store`).
    static func sink(_ index: Int, _ scratch: TemporaryDirectory) -> [String] {
        [[], ["--attachments-to", scratch.file("received")], ["--store", scratch.file("inbox.sqlite")]][index]
    }

    @Test("A record whose attachment is over the drain's limit becomes a dead letter unread, the records after it are delivered, and a higher limit delivers it once put back",
          arguments: [0, 1, 2])
    func overTheLimitWaitsAsADeadLetter(sink: Int) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 5_000)
        let large = try queue.append(["--attach", photo.path, "photo"]).lines
        let after = try queue.append(text: "after")
        let file = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))[0]

        let first = try queue.drain(Self.sink(sink, scratch) + ["--max-attachment-bytes", "4999"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("4999"), "\(first.stderr)")
        if sink < 2 { #expect(try ids(in: first.stdout) == after) }
        let letters = try queue.deadLetters()
        #expect(letters.count == 1)
        #expect((letters.first?["record"] as? [String: Any])?["id"] as? String == large[0])
        #expect(try queue.quarantine().isEmpty)
        #expect(FileManager.default.fileExists(atPath: queue.file("attachments/" + file)), "the dead letter's file was removed")

        #expect(try queue.drain(["--requeue-dead"]).status == 0)
        let again = try queue.drain(Self.sink(sink, scratch) + ["--max-attachment-bytes", "5000"])
        #expect(again.status == 0, "\(again.stderr)")
        if sink == 2 {
            #expect(try sqlite(scratch.file("inbox.sqlite"), "SELECT id FROM records ORDER BY rowid") == after + large)
        } else {
            #expect(try ids(in: again.stdout) == large)
        }
        if sink == 1 {
            let path = try #require(((try jsonObjects(again.stdout)[0]["attachments"] as? [[String: Any]])?[0])?["path"] as? String)
            #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == photo.sha256)
        }
        #expect(try queue.quarantine().isEmpty)
    }

    @Test("The limit is for all of a record's attachments, each entry counted: share-append refuses more, and a drain sets a record naming one file many times aside as a dead letter")
    func limitIsForTheWholeRecord() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let first = try AttachmentTests.makeFile(scratch, "first.jpg", bytes: 3_000)
        let second = try AttachmentTests.makeFile(scratch, "second.jpg", bytes: 3_000)
        let refused = try queue.append(["--max-attachment-bytes", "5000", "--attach", first.path, "--attach", second.path, "two"])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("6000 bytes in all, over the limit of 5000"), "\(refused.stderr)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: queue.file("attachments")))?.isEmpty ?? true)
        let both = try queue.append(["--max-attachment-bytes", "6000", "--attach", first.path, "--attach", second.path, "two"]).lines
        // One file of the queue named four times: read four times to check, so counted four times.
        let one = try queue.append(["--attach", first.path, "one"]).lines
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments")).first { name in
            (try? Data(contentsOf: URL(fileURLWithPath: queue.file("attachments/" + name))).count) == 3_000
        })
        try queue.appendStored([AttachmentDeliveryTests.record(id: "four-times", naming: file, size: 3_000, sha256: first.sha256, times: 4)])
        let drain = try queue.drain(["--max-attachment-bytes", "5000"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == one)
        #expect(try queue.deadLetters().compactMap { ($0["record"] as? [String: Any])?["id"] as? String } == [both[0], "four-times"])
    }

    @Test("A copy that is mostly holes, which no producer here writes and which costs its maker no disk, waits as a dead letter unread; the same zeros written are delivered, and --sparse-attachments reads it")
    func mostlyHolesIsADeadLetter() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        #expect(try queue.append(["--attach", (try AttachmentTests.makeFile(scratch, "a.txt", bytes: 10)).path, "first"]).status == 0)
        #expect(try queue.drain(["--attachments-to", scratch.file("first")]).status == 0)
        let size = 8 << 20
        let zeros = SHA256.hex([UInt8](repeating: 0, count: size))
        let sparse = "5C3D2E1F-0000-4000-8000-00000000000A.bin", written = "5C3D2E1F-0000-4000-8000-00000000000B.bin"
        #expect(FileManager.default.createFile(atPath: queue.file("attachments/" + sparse), contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: queue.file("attachments/" + sparse)))
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        #expect(FileManager.default.createFile(atPath: queue.file("attachments/" + written), contents: Data(count: size)))
        try queue.appendStored([AttachmentDeliveryTests.record(id: "sparse", naming: sparse, size: size, sha256: zeros),
                                AttachmentDeliveryTests.record(id: "written", naming: written, size: size, sha256: zeros)])
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == ["written"])
        let letter = try #require(try queue.deadLetters().first)
        #expect((letter["record"] as? [String: Any])?["id"] as? String == "sparse")
        #expect((letter["error"] as? String)?.contains("holes") == true, "\(letter)")
        #expect(try queue.quarantine().isEmpty)
        // A file system that compresses makes such copies of honest ones: a host on one reads them.
        #expect(try queue.drain(["--requeue-dead"]).status == 0)
        let reading = try queue.drain(["--sparse-attachments"])
        #expect(reading.status == 0, "\(reading.stderr)")
        #expect(try ids(in: reading.stdout) == ["sparse"])
    }

    @Test("A record has at most 1,000 attachments: share-append and the library refuse more, and a drain sets a record with more aside as a dead letter, its empty files unopened")
    func attachmentsPerRecord() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let empty = try AttachmentTests.makeFile(scratch, "empty.txt", bytes: 0)
        let refused = try queue.append(Array(repeating: ["--attach", empty.path], count: 1001).flatMap { $0 } + ["many"])
        #expect(refused.status == 64, "\(refused.stderr)")
        let entry = Attachment(name: "e", file: "E.txt", size: 0, sha256: empty.sha256, type: "text/plain")
        #expect(throws: ShareQueueError.self) {
            try queue.appendThroughLibrary([RecordDraft(.text("many"), source: "s", attachments: Array(repeating: entry, count: 1001))])
        }
        try queue.appendStored([AttachmentDeliveryTests.record(id: "many", naming: "E.txt", size: 0, sha256: empty.sha256, times: 1001)])
        let after = try queue.append(text: "after")
        let drain = try queue.drain(["--attachments-to", scratch.file("received")])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == after)
        #expect(try queue.deadLetters().compactMap { ($0["record"] as? [String: Any])?["id"] as? String } == ["many"])
        #expect((try? FileManager.default.contentsOfDirectory(atPath: scratch.file("received")))?.isEmpty ?? true)
    }

    @Test("Records naming one attachment file, with its digest or another, cost one read of it, not one each, whether delivered in the queue or copied out",
          arguments: [0, 1])
    func oneFileNamedManyTimesIsReadOnce(sink: Int) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let photo = try AttachmentTests.makeFile(scratch, "photo.jpg", bytes: 8 << 20)
        let honest = try queue.append(["--attach", photo.path, "photo"]).lines
        let file = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))[0]
        // Another producer's records, a few hundred bytes each, naming that file: half with its digest, half with another.
        let wrong = String(repeating: "0", count: 64)
        try queue.appendStored((0..<20).map { AttachmentDeliveryTests.record(id: "named-\($0)", naming: file, size: 8 << 20, sha256: $0 % 2 == 0 ? photo.sha256 : wrong) })
        // What the drain read, through read(2) and the like: a child's counts join its shell's once it is reaped.
        let drain = try run("/bin/sh", ["-c", "\"$0\" \"$@\" > '\(scratch.file("out"))'; echo \"exit $?\"; cat /proc/$$/io", Executables.path("host-drain"), "--dir", queue.path]
                            + Self.sink(sink, scratch), in: scratch)
        let report = String(decoding: drain.stdout, as: UTF8.self)
        #expect(report.contains("exit 0"), "\(report) \(drain.stderr)")
        let read = try #require(report.split(separator: "\n").first { $0.hasPrefix("rchar:") }.flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) })
        #expect(read < 3 * (8 << 20), "read \(read) bytes")
        let delivered = try ids(in: Data(contentsOf: URL(fileURLWithPath: scratch.file("out"))))
        #expect(delivered == honest + (0..<10).map { "named-\($0 * 2)" })
        #expect(try queue.quarantine().count == 10)
    }

    /// A record another producer wrote, naming an attachment of 1,000 bytes: a dead letter under a limit of 10.
    static func overLimit(_ index: Int, text: String) -> [UInt8] {
        Array(("{\"v\":1,\"id\":\"letter-\(index)\",\"date\":\"2026-12-02T00:00:00.000Z\",\"source\":\"s\",\"kind\":\"file\",\"text\":\"\(text)\","
            + "\"attachments\":[{\"name\":\"a.bin\",\"file\":\"A\(index).bin\",\"size\":1000,\"sha256\":\"\(String(repeating: "0", count: 64))\",\"type\":\"application/octet-stream\"}]}").utf8)
    }

    /// Drains three times into a command that fails, then once to standard output; checks that no letter was written twice.
    private func drainBehindAFailingSink(_ queue: TestQueue, letters: Int) throws {
        for run in 1...3 {
            let failing = try queue.drain(["--max-attachment-bytes", "10", "--exec", "cat > /dev/null; exit 75"])
            #expect(failing.status == 75, "run \(run): \(failing.stderr)")
            let written = try queue.deadLetters()
            #expect(Set(written.map { ($0["record"] as? [String: Any])?["id"] as? String }).count == written.count, "run \(run): letters written again")
        }
        let drain = try queue.drain(["--max-attachment-bytes", "10"])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try queue.deadLetters().count == letters)
    }

    @Test("Dead letters count towards their batch: a sink that keeps failing does not have them written again on every run, past the window a drain looks back over")
    func deadLettersBehindAFailingSink() throws {
        let queue = TestQueue()
        _ = try queue.append(text: "first")
        // 12 MB of letters: more than the 8 MiB a drain once read back to find the letters it wrote already.
        let text = String(repeating: "x", count: 300_000)
        for index in 0..<40 { try queue.appendStored([Self.overLimit(index, text: text)]) }
        try drainBehindAFailingSink(queue, letters: 40)
    }

    @Test("One dead letter larger than 8 MiB behind a sink that keeps failing is written once")
    func largeDeadLetterBehindAFailingSink() throws {
        let queue = TestQueue()
        _ = try queue.append(text: "first")
        var options = AppendOptions()
        options.maxRecordBytes = 16 << 20
        try QueueAppender(directory: try QueueDirectory(path: queue.path), options: options).appendStored([Self.overLimit(0, text: String(repeating: "y", count: 9 << 20))])
        try drainBehindAFailingSink(queue, letters: 1)
    }

    @Test("A record declaring a terabyte attachment, a sparse file that costs its producer nothing, waits as a dead letter at once under the default limit, under coalescing too",
          arguments: [0, 1, 2])
    func sparseTerabyteIsNeverRead(sink: Int) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        // A first attachment, delivered, leaves the queue its attachments folder.
        #expect(try queue.append(["--attach", (try AttachmentTests.makeFile(scratch, "a.txt", bytes: 10)).path, "first"]).status == 0)
        #expect(try queue.drain(["--attachments-to", scratch.file("first")]).status == 0)
        let terabyte: Int64 = 1 << 40
        let file = "0F6C1A4E-27B5-4C0A-9E47-5D2B8C7A9E10.bin"
        #expect(FileManager.default.createFile(atPath: queue.file("attachments/" + file), contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: queue.file("attachments/" + file)))
        try handle.truncate(atOffset: UInt64(terabyte))
        try handle.close()
        // Under coalescing, as the older of two records of one key, it is checked before it may be superseded.
        try queue.appendStored([AttachmentDeliveryTests.record(id: "terabyte", naming: file, size: Int(terabyte), sha256: String(repeating: "0", count: 64),
                                                               key: sink == 0 ? "k" : nil)])
        let after = sink == 0 ? try queue.append(["--key", "k", "after"]).lines : try queue.append(text: "after")

        // Reading a terabyte of holes takes minutes: the drain must not begin to.
        let drain = try run("/usr/bin/timeout", ["-s", "KILL", "60", Executables.path("host-drain"), "--dir", queue.path]
                            + Self.sink(sink, scratch) + (sink == 0 ? ["--coalesce"] : []), in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        if sink < 2 { #expect(try ids(in: drain.stdout) == after) }
        #expect((try queue.deadLetters().first?["record"] as? [String: Any])?["id"] as? String == "terabyte")
        #expect(try queue.quarantine().isEmpty)
        #expect(FileManager.default.fileExists(atPath: queue.file("attachments/" + file)))
    }
}
