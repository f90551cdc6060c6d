import Foundation
import Testing
@testable import ShareQueueCore

/// `share-append --attach` and what drains do with attachments.
@Suite("Attachments", .runTimeLimit(minutes: 2))
struct AttachmentTests {
    @Test("An append whose record was written but could not be synced keeps its attachment's copy: the record is delivered whole, not set aside")
    func copyKeptWhenTheSyncFails() throws {
        let queue = TestQueue()
        _ = try queue.append(text: "first")
        let file = queue.scratch.file("note.txt")
        try Data("a note".utf8).write(to: URL(fileURLWithPath: file))
        let failed = try queue.append(["--attach", file, "photo"], environment: ["SHARE_QUEUE_FAULT": "fsync:EIO:name=pending.log:count=1"])
        #expect(failed.status == 74 && failed.stderr.contains("written but could not be made durable"), "\(failed.stderr)")
        let drain = try queue.drain()
        let setAside = try queue.setAsideEvents()
        #expect(drain.status == 0 && drain.warningCount == 0 && setAside.isEmpty, "\(drain.stderr)")
        let records = try jsonObjects(drain.stdout)
        #expect(records.count == 2 && (records.last?["attachments"] as? [[String: Any]])?.count == 1, "\(drain.output)")
    }

    @Test("The folders a copy is looked for in: those moved aside from attachments, newest first by their time, at most 8 of each owner, none dated ahead of the clock")
    func movedAsideFolders() {
        #expect(QueueLayout.movedAsideMilliseconds("rejected-1700000000000-attachments", from: "attachments") == 1_700_000_000_000)
        #expect(QueueLayout.movedAsideMilliseconds("rejected-17-00112233445566ff-attachments", from: "attachments") == 17)
        for name in ["rejected--attachments", "rejected-17-attachments.x", "rejected-17-keys", "rejected-1x-attachments", "attachments",
                     "rejected-17-00112233445566FF-attachments", "rejected-17-0011-attachments", "rejected-1234567890123456789-attachments"] {
            #expect(QueueLayout.movedAsideMilliseconds(name, from: "attachments") == nil, "\(name)")
        }
        let names = (1...10).map { "rejected-\($0)-attachments" } + ["rejected-10-00000000000000aa-attachments", "rejected-99-keys", "pending.log"]
        #expect(AttachmentStore.movedAsideFolders(among: names.shuffled().map { ($0, 1000) }, now: 1_000)
                == ["rejected-10-00000000000000aa-attachments", "rejected-10-attachments"] + (4...9).reversed().map { "rejected-\($0)-attachments" })
        // A member's newer folders push out only her own: another owner's stay in reach.
        let planted = (11...30).map { ("rejected-\($0)-attachments", UInt32(1001)) }
        let honest = [("rejected-2-attachments", UInt32(1000)), ("rejected-1-attachments", UInt32(1002))]
        #expect(AttachmentStore.movedAsideFolders(among: (planted + honest).shuffled(), now: 1_000)
                == (23...30).reversed().map { "rejected-\($0)-attachments" } + ["rejected-2-attachments", "rejected-1-attachments"])
        // A name dated more than 5 minutes after the clock is no drain's: it is not looked in.
        let now: Int64 = 1_700_000_000_000
        let dated = [("rejected-999999999999999999-attachments", UInt32(1001)), ("rejected-\(now + 300_001)-attachments", UInt32(1001)),
                     ("rejected-\(now + 300_000)-attachments", UInt32(1001)), ("rejected-\(now - 5)-attachments", UInt32(1000))]
        #expect(AttachmentStore.movedAsideFolders(among: dated.shuffled(), now: now)
                == ["rejected-\(now + 300_000)-attachments", "rejected-\(now - 5)-attachments"])
    }

    @Test("A copy missing from attachments is brought back from the newest folder moved aside that holds its bytes; one held by none is damage")
    func copiesComeBackFromFoldersMovedAside() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let a = try Self.makeFile(scratch, "a.txt", bytes: 10)
        let b = try Self.makeFile(scratch, "b.pdf", bytes: 70_000)
        let kept = try queue.append(["--attach", a.path, "kept"]).lines
        let lost = try queue.append(["--attach", b.path, "lost"]).lines
        let folder = queue.file("attachments")
        let copies = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        try #require(copies.count == 2)
        let copyOfA = try #require(copies.first { $0.hasSuffix(".txt") })
        // An older folder holds a's copy; a newer one a file of its name with other bytes, and nothing holds b's.
        try FileManager.default.moveItem(atPath: folder, toPath: queue.file("rejected-5-attachments"))
        try FileManager.default.removeItem(atPath: queue.file("rejected-5-attachments/") + copies.first { $0.hasSuffix(".pdf") }!)
        try FileManager.default.createDirectory(atPath: queue.file("rejected-6-0123456789abcdef-attachments"), withIntermediateDirectories: false)
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: queue.file("rejected-6-0123456789abcdef-attachments/" + copyOfA)))

        let inbox = scratch.file("inbox")
        let drain = try queue.drain(["--attachments-to", inbox])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == kept, "\(drain.stderr)")
        #expect(drain.warned(.attachmentRestored(file: copyOfA, recordID: kept[0], folder: queue.file("attachments"), source: queue.file("rejected-5-attachments"))),
                "\(drain.stderr)")
        let path = try #require(((try jsonObjects(drain.stdout).first?["attachments"]) as? [[String: Any]])?.first?["path"] as? String)
        #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == a.sha256)
        let quarantined = try jsonObjects(FileManager.default.contents(atPath: queue.file("quarantine.log")) ?? Data())
        try #require(quarantined.count == 1)
        #expect((quarantined[0]["reason"] as? String)?.hasSuffix(" is missing") == true, "\(quarantined)")
        let frame = Data(base64Encoded: quarantined[0]["data"] as? String ?? "") ?? Data()
        #expect(String(decoding: frame, as: UTF8.self).contains(lost[0]), "\(quarantined)")
        // What was moved aside stays as it was.
        #expect(FileManager.default.fileExists(atPath: queue.file("rejected-5-attachments/" + copyOfA)))
    }

    @Test("--peek shows exactly what a drain delivers: not a record whose attachments break a record rule, and no path a writer stored")
    func peekAppliesTheDrainsRules() throws {
        let queue = TestQueue()
        let before = try queue.append(text: "before")
        func stored(_ number: Int, _ rest: String) -> [UInt8] {
            Array(#"{"v":1,"id":"00000000-0000-4000-8000-0000000000\#(number)","date":"2026-11-29T14:52:20.123Z","source":"s",\#(rest)}"#.utf8)
        }
        let entry = #"{"name":"n.txt","file":"7A1C2E3F-0000-4000-8000-000000000001.txt","size":1,"sha256":"\#(String(repeating: "0", count: 64))","type":"text/plain""#
        var frames: [UInt8] = []
        for payload in [stored(51, #""kind":"file","attachments":[]"#), stored(52, #""kind":"text","text":"t","attachments":[1]"#),
                        stored(53, "\"kind\":\"file\",\n\"attachments\":[" + entry + #","path":"/etc/passwd"}]"#),
                        stored(54, #""kind":"file","attachments":["# + entry + #","path":"/etc/passwd"}]"#)] {
            Frame.append(payload: payload, to: &frames)
        }
        let handle = try #require(FileHandle(forWritingAtPath: queue.pendingPath))
        handle.seekToEndOfFile()
        handle.write(Data(frames))
        handle.closeFile()
        let peek = try jsonObjects(try queue.drain(["--peek"]).stdout)
        // On several lines or on one, a record with attachments is shown without a path its writer stored.
        #expect(peek.map { $0["id"] as? String } == [before[0], "00000000-0000-4000-8000-000000000053", "00000000-0000-4000-8000-000000000054"], "\(peek)")
        for record in peek.dropFirst() {
            let described = try #require((record["attachments"] as? [[String: Any]])?.first)
            #expect(described["path"] == nil, "\(described)")
        }
    }

    static func makeFile(_ scratch: TemporaryDirectory, _ name: String, bytes: Int) throws -> (path: String, sha256: String) {
        let data = Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let path = scratch.file(name)
        try data.write(to: URL(fileURLWithPath: path))
        return (path, SHA256.hex([UInt8](data)))
    }

    /// The digest of `bytes` given to the hasher `chunk` bytes at a time.
    static func digest(_ bytes: [UInt8], chunk: Int = .max, usesInstruction: Bool) -> String {
        var hasher = SHA256(usesInstruction: usesInstruction)
        var start = 0
        repeat {
            let end = start + min(chunk, bytes.count - start)
            hasher.update(bytes[start..<end])
            start = end
        } while start < bytes.count
        return hasher.finish()
    }

    @Test("SHA-256 matches the standard test vectors, with the processor's instructions (where it has them) and without",
          arguments: [true, false])
    func digests(usesInstruction: Bool) {
        func digest(_ text: String, repeated: Int = 1, chunk: Int = .max) -> String {
            Self.digest(Array(String(repeating: text, count: repeated).utf8), chunk: chunk, usesInstruction: usesInstruction)
        }
        #expect(digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(digest("a", repeated: 1_000_000, chunk: 4099) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Vacuous on a processor without SHA instructions, where both are the Swift rounds.
    @Test("SHA-256 with the processor's instructions and in Swift agree on every length to 300 bytes, however it is split")
    func digestsAgree() {
        var generator = SeededGenerator(state: 7)
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for length in 0...300 {
            let expected = Self.digest(Array(bytes.prefix(length)), usesInstruction: false)
            for chunk in [1, 7, 63, 64, 65, 130] {
                #expect(Self.digest(Array(bytes.prefix(length)), chunk: chunk, usesInstruction: true) == expected, "\(length) bytes by \(chunk)")
            }
        }
    }

    @Test("An attachment is copied in, described in the record, and moved beside the store by --store")
    func attachToStore() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        let photo = try Self.makeFile(scratch, "Beach Photo.JPG", bytes: 300_000)
        let appended = try queue.append(["--attach", photo.path, "a day at the beach"])
        #expect(appended.status == 0, "\(appended.stderr)")
        let copies = try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments"))
        #expect(copies.count == 1 && copies[0].hasSuffix(".jpg"))
        let peek = try jsonObjects(try queue.drain(["--peek"]).stdout)
        let described = (peek[0]["attachments"] as! [[String: Any]])[0]
        #expect(described["name"] as? String == "Beach Photo.JPG")
        #expect(described["size"] as? Int == 300_000)
        #expect(described["sha256"] as? String == photo.sha256)
        #expect(described["type"] as? String == "image/jpeg")

        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 0, "\(drain.stderr)")
        let stored = try JSONSerialization.jsonObject(with: Data(try sqlite(db, "SELECT attachments FROM records")[0].utf8)) as! [[String: Any]]
        let path = stored[0]["path"] as! String
        #expect(path.hasPrefix("/") && path.hasPrefix(db + ".attachments/"))
        #expect(stored[0]["sha256"] as? String == photo.sha256)
        #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == photo.sha256)
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments")).isEmpty)
        #expect(FileManager.default.fileExists(atPath: photo.path))
    }

    @Test("Files alone make a file record; --attachments-to moves them and gives the JSON their new paths")
    func attachmentsTo() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let a = try Self.makeFile(scratch, "notes.txt", bytes: 10)
        let b = try Self.makeFile(scratch, "scan.pdf", bytes: 70_000)
        #expect(try queue.append(["--attach", a.path, "--attach", b.path]).status == 0)
        let inbox = scratch.file("inbox")
        let drain = try queue.drain(["--attachments-to", inbox])
        #expect(drain.status == 0, "\(drain.stderr)")
        let record = try jsonObjects(drain.stdout)[0]
        #expect(record["kind"] as? String == "file")
        let list = record["attachments"] as! [[String: Any]]
        #expect(list.map { $0["type"] as! String } == ["text/plain", "application/pdf"])
        for (item, file) in zip(list, [a, b]) {
            let path = item["path"] as! String
            #expect(path.hasPrefix(inbox + "/"))
            #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == file.sha256)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments")).isEmpty)
    }

    @Test("Without --attachments-to, the JSON carries the queue copy's path and the copy stays")
    func attachmentsStay() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let a = try Self.makeFile(scratch, "a.bin", bytes: 100)
        try queue.append(["--attach", a.path, "with a file"])
        let record = try jsonObjects(try queue.drain().stdout)[0]
        let path = (record["attachments"] as! [[String: Any]])[0]["path"] as! String
        #expect(path.hasPrefix(queue.path + "/attachments/"))
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test("A copy that fails appends nothing and leaves nothing behind")
    func failedCopy() throws {
        guard canMountTmpfs else { return }
        let scratch = TemporaryDirectory()
        let disk = try FullDiskTests.SmallFileSystem(in: scratch)
        let queue = TestQueue(at: disk.path + "/queue", in: scratch)
        #expect(try queue.append(["first"]).status == 0)
        let big = try Self.makeFile(scratch, "big.bin", bytes: 2 << 20)
        let result = try queue.append(["--attach", big.path, "too big for the disk"])
        #expect(result.status == 74, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments")).isEmpty)
        let drain = try queue.drain()
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as! String } == ["first"])
    }

    @Test("A record whose attachment is missing, foreign or points outside the queue is set aside, and nothing outside is touched",
          arguments: ["../outside.txt", "/etc/passwd", "symlink.txt", "missing.txt", "tampered.txt"])
    func hostileReference(_ file: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let directory = try QueueDirectory(path: queue.path)
        let outside = try Self.makeFile(scratch, "outside.txt", bytes: 64)
        try FileManager.default.createDirectory(atPath: queue.file("attachments"), withIntermediateDirectories: true)
        if file == "symlink.txt" { try FileManager.default.createSymbolicLink(atPath: queue.path + "/attachments/symlink.txt", withDestinationPath: outside.path) }
        if file == "tampered.txt" { try Data("changed".utf8).write(to: URL(fileURLWithPath: queue.path + "/attachments/tampered.txt")) }
        let attachment = Attachment(name: "x.txt", file: file, size: 64, sha256: outside.sha256, type: "text/plain")
        // Planted as stored bytes: a producer refuses a file name the queue does not make.
        let planted = Record.encode(id: RecordID.random(), date: Timestamp.now(), source: "test", kind: .text, text: "hostile",
                                    jsonBytes: nil, key: nil, meta: nil, attachments: [attachment])
        try QueueAppender(directory: directory).appendStored([planted])
        try queue.append(["fine"])
        let inbox = scratch.file("inbox")
        let drain = try queue.drain(["--attachments-to", inbox])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as! String } == ["fine"])
        let setAside = try queue.setAsideEvents()
        #expect(setAside.count == 1 && drain.warned(setAside[0]), "\(drain.stderr)")
        let status = try queue.status()
        #expect(status["quarantined"] as? Int == 1)
        #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: outside.path)))) == outside.sha256)
        #expect(!FileManager.default.fileExists(atPath: inbox + "/" + file))
    }

    @Test("An attachments folder that is a symlink is never followed: producers refuse it, a drain moves it aside")
    func symlinkedFolder() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["first"])
        let victim = scratch.file("victim")
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim + "/old.txt"))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3 * 86_400)], ofItemAtPath: victim + "/old.txt")
        try FileManager.default.createSymbolicLink(atPath: queue.file("attachments"), withDestinationPath: victim)
        let a = try Self.makeFile(scratch, "a.txt", bytes: 10)
        let refused = try queue.append(["--attach", a.path, "x"])
        #expect(refused.status == 78, "\(refused.stderr)")
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as! String } == ["first"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim) == ["old.txt"])
        #expect(try queue.append(["--attach", a.path, "after"]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim) == ["old.txt"])
    }

    @Test("Half-copied attachments older than a day are removed by the next drain; younger ones stay")
    func staleTemporaries() throws {
        let queue = TestQueue()
        try queue.append(["x"])
        let folder = queue.file("attachments")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in [".tmp-old.bin", ".tmp-new.bin", "orphan-old.bin"] {
            try Data("partial".utf8).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
        for name in [".tmp-old.bin", "orphan-old.bin"] {
            try FileManager.default.setAttributes([.modificationDate: twoDaysAgo], ofItemAtPath: folder + "/" + name)
        }
        #expect(try queue.drain(["-q"]).status == 0)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == [".tmp-new.bin"])
    }

    @Test("--status reports attachments and dead letters")
    func statusCounts() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let a = try Self.makeFile(scratch, "a.bin", bytes: 1000)
        try queue.append(["--attach", a.path, "x"])
        let status = try queue.status()
        #expect(status["attachments"] as? [String: Int] == ["count": 1, "bytes": 1000])
        #expect(status["deadLetters"] as? Int == 0)
    }
}
