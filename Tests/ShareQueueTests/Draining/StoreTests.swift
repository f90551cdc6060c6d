import Foundation
import Testing
@testable import ShareQueueCore

/// `host-drain --store`: a real SQLite file, checked with the sqlite3 tool.
@Suite("SQLite store", .serialized, .runTimeLimit(minutes: 3))
struct StoreTests {
    @Test("Records land in the documented schema, once, with the drain position in the same database")
    func schemaAndRows() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        let text = try queue.append(["--source", "notes", "--meta", "app=mail", "hello"]).lines
        let json = try queue.append(["--json", "--key", "k"], stdin: "{\"a\": 12345678901234567890}").lines
        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drain.stdout.isEmpty)
        #expect(try sqlite(db, "PRAGMA journal_mode") == ["wal"])
        #expect(try sqlite(db, "SELECT id, source, kind, text, meta FROM records WHERE kind = 'text'") == ["\(text[0])|notes|text|hello|{\"app\":\"mail\"}"])
        #expect(try sqlite(db, "SELECT id, json, key FROM records WHERE kind = 'json'") == ["\(json[0])|{\"a\":12345678901234567890}|k"])
        #expect(try sqlite(db, "SELECT count(*) FROM records WHERE date LIKE '____-__-__T__:__:__.___Z' AND ingested_at IS NOT NULL AND extra IS NULL") == ["2"])
        #expect(try sqlite(db, "SELECT key, id FROM latest") == ["k|\(json[0])"])
        #expect(try sqlite(db, "SELECT count(*) FROM drain_position") == ["1"])
        // Draining again adds nothing; fields from a newer producer are kept in `extra`.
        let newer = Array(#"{"v":2,"id":"3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9","date":"2026-11-29T14:52:20.123Z","source":"newer","kind":"text","text":"t","mood":{"x":[1]}}"#.utf8)
        try queue.appendStored([newer])
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT count(*), count(DISTINCT id) FROM records") == ["3|3"])
        #expect(try sqlite(db, "SELECT extra FROM records WHERE source = 'newer'") == [#"{"mood":{"x":[1]}}"#])
        #expect(try queue.status(["--store", db])["rows"] as? Int == 3)
    }

    @Test("Exactly once: a drainer killed at every crash point, then recovered, stores every record once",
          arguments: CrashPoint.allCases.filter { $0.rawValue.hasPrefix("drain-") })
    func exactlyOnceAtEveryCrashPoint(_ point: CrashPoint) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        var appended = try queue.appendLines((1...25).map { "r\($0)" })
        // A partial earlier drain leaves a sealed segment, so the points are met more than once.
        #expect(try queue.drain(["--store", db, "--max", "5", "--batch", "5"]).status == 0)
        appended += try queue.appendLines((26...40).map { "r\($0)" })
        let torn = try queue.append(["torn"], environment: ["SHARE_QUEUE_CRASH_AT": "append-half-written"])
        #expect(torn.status == 128 + SIGKILL)
        for visit in [1, 2] {
            let crashed = try run("host-drain", ["--dir", queue.path, "--store", db, "--batch", "10"],
                                  environment: ["SHARE_QUEUE_CRASH_AT": "\(point.rawValue):\(visit)"], in: scratch)
            #expect(crashed.status == 128 + SIGKILL || crashed.status == 0, "\(crashed.stderr)")
            appended += try queue.append(text: "after \(point.rawValue) \(visit)")
        }
        let recovery = try queue.drain(["--store", db])
        #expect(recovery.status == 0, "\(recovery.stderr)")
        #expect(try sqlite(db, "SELECT count(*), count(DISTINCT id) FROM records") == ["\(appended.count)|\(appended.count)"])
        #expect(Set(try sqlite(db, "SELECT id FROM records")) == Set(appended))
    }

    @Test("A checkpoint lost or taken back never lets a new segment take the number the store's position is in")
    func storePositionNeverFitsANewSegment() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        var appended = try queue.appendLines((1...3).map { "old \($0)" })
        #expect(try queue.drain(["--store", db]).status == 0)
        // Segment 1 is delivered and removed; the store's position is inside it. Then the checkpoint
        // goes (damage, or a power cut taking back writes not yet synced) and the next drain dies once sealed.
        try FileManager.default.removeItem(atPath: queue.file("checkpoint"))
        appended += try queue.appendLines((1...6).map { "new \($0)" })
        #expect(try queue.drain(["--store", db], environment: ["SHARE_QUEUE_CRASH_AT": "drain-sealed"]).status == 128 + SIGKILL)
        let recovery = try queue.drain(["--store", db])
        #expect(recovery.status == 0, "\(recovery.stderr)")
        #expect(Set(try sqlite(db, "SELECT id FROM records")) == Set(appended), "\(recovery.stderr)")
    }

    @Test("Exactly once under random SIGKILLs of the drainer while producers append")
    func exactlyOnceUnderRandomKills() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        var appended: [String] = []
        var kills = 0
        for round in 1...12 {
            appended += try queue.appendLines((1...20).map { "round \(round) record \($0)" })
            let drainer = try RunningTool("host-drain", ["--dir", queue.path, "--store", db, "--batch", "3", "--wait", "5"], in: scratch)
            usleep(UInt32.random(in: 0...15_000))
            drainer.kill()
            if drainer.wait().status == 128 + SIGKILL { kills += 1 }
        }
        #expect(try queue.drain(["--store", db, "--wait", "5"]).status == 0)
        #expect(kills > 0)
        #expect(try sqlite(db, "SELECT count(*), count(DISTINCT id) FROM records") == ["\(appended.count)|\(appended.count)"])
    }

    @Test("A damaged record is set aside before the store moves past it, even if the drain dies right after")
    func damageBeforeStorePosition() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        let file = scratch.file("a.txt")
        try Data("attached".utf8).write(to: URL(fileURLWithPath: file))
        try queue.append(["--attach", file, "with a lost file"])
        for name in try FileManager.default.contentsOfDirectory(atPath: queue.file("attachments")) { try FileManager.default.removeItem(atPath: queue.path + "/attachments/" + name) }
        let good = try queue.append(text: "good")
        let crashed = try queue.drain(["--store", db], environment: ["SHARE_QUEUE_CRASH_AT": "drain-delivered"])
        #expect(crashed.status == 128 + SIGKILL)
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT id FROM records") == good)
        let quarantine = try queue.quarantine()
        #expect(quarantine.count >= 1)
        #expect((quarantine[0]["reason"] as? String)?.contains("missing") == true)
    }

    @Test("--coalesce never drops a record appended while it runs")
    func coalesceWithConcurrentAppend() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let started = scratch.file("started")
        let release = scratch.file("release")
        try queue.append(["filler"])
        try queue.append(["--key", "w", "old"])
        #expect(try queue.drain(["--max", "1", "--exec", "cat >> '\(out)'"]).status == 0)
        let slow = try RunningTool("host-drain", ["--dir", queue.path, "--coalesce", "--exec",
                                                 "touch '\(started)'; while [ ! -e '\(release)' ]; do sleep 0.02; done; cat >> '\(out)'"], in: scratch)
        defer { slow.kill() }
        try waitUntil("the slow sink") { FileManager.default.fileExists(atPath: started) }
        try queue.append(["--key", "w", "new"])
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        let first = slow.wait()
        #expect(first.status == 0)
        #expect(!first.stderr.contains("superseded"))
        #expect(try queue.drain(["--coalesce", "--exec", "cat >> '\(out)'"]).status == 0)
        #expect(try jsonObjects(Data(contentsOf: URL(fileURLWithPath: out))).map { $0["text"] as! String } == ["filler", "old", "new"])
    }

    @Test("latest keeps the newest record of each key; every record stays in records")
    func latestWins() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        try queue.append(["--key", "wallpaper", "forest.heic"])
        try queue.append(["--key", "ringtone", "bells"])
        // One --lines batch shares one date: the last appended wins the tie.
        let tied = try queue.append(["--key", "wallpaper", "--lines"], stdin: "desert.heic\nocean.heic\n").lines
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT key, text, id FROM latest ORDER BY key") == ["ringtone|bells|" + (try sqlite(db, "SELECT id FROM records WHERE text = 'bells'"))[0], "wallpaper|ocean.heic|\(tied[1])"])
        #expect(try sqlite(db, "SELECT count(*) FROM records WHERE key = 'wallpaper'") == ["3"])
        // An older record drained later does not replace a newer one.
        let directory = try QueueDirectory(path: queue.path)
        let old = Record.encode(id: RecordID.random(), date: "2001-01-01T00:00:00.000Z", source: "old", kind: .text, text: "old.heic", jsonBytes: nil, key: "wallpaper", meta: nil)
        try QueueAppender(directory: directory).appendStored([old])
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "SELECT text FROM latest WHERE key = 'wallpaper'") == ["ocean.heic"])
        #expect(try sqlite(db, "SELECT count(*) FROM records WHERE key = 'wallpaper'") == ["4"])
    }

    @Test("The store keeps every byte: U+0000 in text, key, source and meta, and keys that differ after it stay apart")
    func nulIsKept() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        let piped = try run("share-append", ["--dir", queue.path], stdinData: Data("before\0after".utf8), in: scratch)
        #expect(piped.status == 0, "\(piped.stderr)")
        // Arguments cannot hold U+0000: key, source and meta come through the library.
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
        let first = try appender.append(RecordDraft(.text("one\0"), source: "src\0a", key: "k\0a", meta: ["m\0k": "v\0v"]))
        let second = try appender.append(RecordDraft(.text("\0two"), source: "src\0b", key: "k\0b"))
        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 0, "\(drain.stderr)")
        // hex(): the sqlite3 tool itself prints text only up to U+0000.
        func hex(_ text: String) -> String { text.utf8.map { String(format: "%02X", $0) }.joined() }
        #expect(try sqlite(db, "SELECT id, hex(text) FROM records WHERE source = 'share-append'") == ["\(piped.lines[0])|\(hex("before\0after"))"])
        #expect(try sqlite(db, "SELECT id, hex(text), hex(source), hex(key), meta FROM records WHERE source <> 'share-append' ORDER BY rowid") == [
            "\(first)|\(hex("one\0"))|\(hex("src\0a"))|\(hex("k\0a"))|{\"m\\u0000k\":\"v\\u0000v\"}",
            "\(second)|\(hex("\0two"))|\(hex("src\0b"))|\(hex("k\0b"))|",
        ])
        #expect(try sqlite(db, "SELECT hex(key), id, hex(text) FROM latest ORDER BY key") == [
            "\(hex("k\0a"))|\(first)|\(hex("one\0"))", "\(hex("k\0b"))|\(second)|\(hex("\0two"))",
        ])
    }

    @Test("--coalesce delivers only the newest record of each key and counts the rest")
    func coalesce() throws {
        let queue = TestQueue()
        for value in ["one", "two", "three"] { try queue.append(["--key", "k", value]) }
        try queue.append(["unkeyed"])
        try queue.append(["--key", "other", "solo"])
        let drain = try queue.drain(["--coalesce"])
        #expect(drain.status == 0)
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as! String } == ["three", "unkeyed", "solo"])
        #expect(drain.stderr.contains("2 superseded"))
        #expect(try queue.status()["pending"] as? Int == 0)
    }

    @Test("--coalesce does not let a newer record that cannot be delivered supersede an older one")
    func coalesceIgnoresUndeliverable() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        try QueueAppender(directory: directory).append(RecordDraft(.text("good"), source: "test", key: "k"))
        let broken = Record.encode(id: RecordID.random(), date: "2999-01-01T00:00:00.000Z", source: "test", kind: .file, text: nil,
                                   jsonBytes: nil, key: "k", meta: nil, attachments: [])
        try QueueAppender(directory: directory).appendStored([broken])
        var options = DrainOptions()
        options.coalesceKeys = true
        var sink = CollectingSink()
        let summary = try QueueDrainer(directory: directory, options: options).drain(into: &sink)
        #expect(sink.texts == ["good"])
        #expect(summary.superseded == 0)
        #expect(summary.quarantined == 1)
    }

    @Test("A store with a newer schema is refused, 78")
    func newerSchema() throws {
        let scratch = TemporaryDirectory()
        let db = scratch.file("inbox.sqlite")
        _ = try sqlite(db, "PRAGMA user_version = 9")
        try run("share-append", ["--dir", scratch.queue, "x"], in: scratch)
        let drain = try run("host-drain", ["--dir", scratch.queue, "--store", db], in: scratch)
        #expect(drain.status == 78)
        #expect(try run("host-drain", ["--dir", scratch.queue, "--status", "--json"], in: scratch).output.contains("\"pending\":1"))
    }
}
