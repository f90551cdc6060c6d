import Foundation
import Testing
@testable import ShareQueueCore

/// `share-append --if-changed`: a keyed record is appended only when its
/// content differs from the last one appended with that key.
@Suite("Publishing only what changed", .serialized, .runTimeLimit(minutes: 3))
struct IfChangedTests {
    /// Publishes `arguments` with `--if-changed --key key`; returns the printed id.
    private func publish(_ queue: TestQueue, key: String = "wallpaper", _ arguments: [String]) throws -> String {
        let result = try queue.append(["--if-changed", "--key", key] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == 1)
        return result.lines.first ?? ""
    }

    /// Drains everything to standard output and returns the records, in queue order.
    private func drainAll(_ queue: TestQueue) throws -> [[String: Any]] {
        let drained = try queue.drain()
        #expect(drained.status == 0, "\(drained.stderr)")
        return try jsonObjects(drained.stdout)
    }

    /// The name of a key's file in `keys/`: SHA-256 of the key's UTF-8 bytes, lower-case hex.
    private func keyFile(_ queue: TestQueue, _ key: String = "wallpaper") -> String {
        queue.file("keys/" + SHA256.hex(Array(key.utf8)))
    }

    @Test("The same content twice appends one record; the second publish prints the first id")
    func sameContentTwice() throws {
        let queue = TestQueue()
        let first = try publish(queue, ["beach.jpg"])
        let second = try publish(queue, ["beach.jpg"])
        #expect(second == first)
        let records = try drainAll(queue)
        #expect(records.count == 1)
        #expect(records.first?["id"] as? String == first)
    }

    @Test("Changed content appends; A, B, A appends three records")
    func changedContent() throws {
        let queue = TestQueue()
        let a = try publish(queue, ["A"])
        let b = try publish(queue, ["B"])
        let again = try publish(queue, ["A"])
        #expect(Set([a, b, again]).count == 3)
        let records = try drainAll(queue)
        #expect(records.map { $0["text"] as? String } == ["A", "B", "A"])
        #expect(records.map { $0["id"] as? String } == [a, b, again])
    }

    @Test("Text and a URL of the same string are different content; other labels are not content")
    func kindIsContent() throws {
        let queue = TestQueue()
        let text = try publish(queue, ["https://example.com/a"])
        let url = try publish(queue, ["--url", "https://example.com/a"])
        #expect(url != text)
        // Source and meta are labels: the same URL with other labels is unchanged.
        let relabelled = try publish(queue, ["--url", "--source", "other", "--meta", "a=b", "https://example.com/a"])
        #expect(relabelled == url)
        // JSON compares compactly: the same value spaced differently is unchanged.
        let json = try queue.append(["--if-changed", "--key", "wallpaper", "--json"], stdin: "{\"a\": [1, 2]}\n").lines
        let spaced = try queue.append(["--if-changed", "--key", "wallpaper", "--json"], stdin: "{ \"a\":[1,2] }").lines
        #expect(json == spaced)
        #expect(try drainAll(queue).count == 3)
    }

    @Test("Other keys are independent")
    func keysAreIndependent() throws {
        let queue = TestQueue()
        let a = try publish(queue, key: "one", ["same"])
        let b = try publish(queue, key: "two", ["same"])
        #expect(a != b)
        #expect(try publish(queue, key: "one", ["same"]) == a)
        #expect(try drainAll(queue).count == 2)
    }

    @Test("--if-changed needs --key and one record: exit 64, nothing written")
    func usageErrors() throws {
        let queue = TestQueue()
        let noKey = try queue.append(["--if-changed", "text"])
        #expect(noKey.status == 64)
        #expect(noKey.stderr.contains("--key"))
        let lines = try queue.append(["--if-changed", "--key", "k", "--lines"], stdin: "a\nb\n")
        #expect(lines.status == 64)
        #expect(lines.stderr.contains("--lines"))
        let atomic = try queue.append(["--if-changed", "--key", "k", "--lines", "--atomic"], stdin: "a\nb\n")
        #expect(atomic.status == 64)
        #expect(queue.bytes().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: queue.file("keys")))
    }

    @Test("A drain that delivered the record leaves the index: the same content is still unchanged")
    func survivesDrains() throws {
        let queue = TestQueue()
        let first = try publish(queue, ["beach.jpg"])
        #expect(try drainAll(queue).count == 1)
        #expect(try publish(queue, ["beach.jpg"]) == first)
        #expect(try drainAll(queue).isEmpty)
        #expect(FileManager.default.fileExists(atPath: keyFile(queue)))
        #expect(try queue.status()["pending"] as? Int == 0)
        let changed = try publish(queue, ["forest.jpg"])
        #expect(changed != first)
        #expect(try drainAll(queue).map { $0["id"] as? String } == [changed])
    }

    @Test("A plain keyed append in between makes the old content new again")
    func plainAppendInBetween() throws {
        let queue = TestQueue()
        let x = try publish(queue, ["X"])
        let y = try queue.append(["--key", "wallpaper", "Y"])
        #expect(y.status == 0)
        let again = try publish(queue, ["X"])
        #expect(again != x)
        #expect(try drainAll(queue).map { $0["text"] as? String } == ["X", "Y", "X"])
    }

    @Test("An index entry written from Format.md's rules is honoured byte for byte")
    func entryFromTheSpecification() throws {
        let queue = TestQueue()
        _ = try queue.append(["warm-up"])  // makes the queue
        try FileManager.default.createDirectory(atPath: queue.file("keys"), withIntermediateDirectories: false)
        // Digest input: kind, LF, "text", LF, byte length, LF, the text, then the attachment count and LF.
        let text = "héllo\nwörld"
        var input = Array("text\ntext\n\(text.utf8.count)\n".utf8) + Array(text.utf8)
        input += Array("0\n".utf8)
        let id = "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9"
        let line = "{\"id\":\"\(id)\",\"content\":\"\(SHA256.hex(input))\"}\n"
        try Data(line.utf8).write(to: URL(fileURLWithPath: keyFile(queue, "spec")))
        let result = try queue.append(["--if-changed", "--key", "spec"], stdin: text)
        #expect(result.lines == [id])
        #expect(try drainAll(queue).count == 1)  // only the warm-up
    }

    @Test("Through the library: no key is refused; unchanged returns the earlier id and appended false")
    func library() throws {
        let queue = TestQueue()
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
        #expect(throws: ShareQueueError.self) { try appender.appendIfChanged(RecordDraft(.text("x"), source: "t")) }
        let first = try appender.appendIfChanged(RecordDraft(.json(try JSONText(validating: Array("[1]".utf8))), source: "t", key: "k"))
        #expect(first.appended)
        let second = try appender.appendIfChanged(RecordDraft(.json(try JSONText(validating: Array("[ 1 ]".utf8))), source: "u", key: "k",
                                                              meta: ["m": "n"], id: "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9"))
        #expect(second.id == first.id)
        #expect(!second.appended)
        let third = try appender.appendIfChanged(RecordDraft(.json(try JSONText(validating: Array("[2]".utf8))), source: "t", key: "k"))
        #expect(third.appended && third.id != first.id)
        #expect(try drainAll(queue).count == 2)
    }

    @Test("6 processes publishing to one key at once: never the same content twice in a row, nothing acknowledged lost")
    func concurrentPublishers() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let orders = ["a b c", "c b a", "b a c", "a c b", "c a b", "b c a"]
        var producers: [(Process, String)] = []
        for (p, order) in orders.enumerated() {
            let log = scratch.file("published-\(p)")
            let producer = Process()
            producer.executableURL = URL(fileURLWithPath: "/bin/sh")
            // Each value twice in a row, so that most publishes find themselves unchanged.
            producer.arguments = ["-c", """
                i=1; while [ $i -le 15 ]; do for v in $3 $3; do
                  id=$("$0" --dir "$1" --no-sync --if-changed --key shared "value $v") || exit 1; echo "$v $id" >> "$2"
                done; i=$((i+1)); done
                """, Executables.path("share-append"), queue.path, log, order]
            try producer.run()
            producers.append((producer, log))
        }
        var published: [(value: String, id: String)] = []
        for (producer, log) in producers {
            producer.waitUntilExit()
            #expect(producer.terminationStatus == 0)
            published += try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { line in
                let parts = line.split(separator: " ")
                return ("value " + parts[0], String(parts[1]))
            }
        }
        #expect(published.count == 6 * 15 * 6)
        let records = try drainAll(queue)
        let texts = records.map { $0["text"] as? String ?? "" }
        for (earlier, later) in zip(texts, texts.dropFirst()) { #expect(earlier != later) }
        // Every printed id is a record with the content that was published.
        let textByID = Dictionary(records.map { ($0["id"] as? String ?? "", $0["text"] as? String ?? "") }) { first, _ in first }
        for publish in published { #expect(textByID[publish.id] == publish.value, "\(publish)") }
        #expect(records.count < published.count)
    }

    @Test("The check does not read the backlog: 200,000 pending records cost no more than none")
    func constantCost() throws {
        let scratch = TemporaryDirectory()
        let empty = TestQueue(in: scratch, name: "empty")
        let full = TestQueue(in: scratch, name: "full")
        _ = try empty.append(["warm-up"])
        let filler = String(repeating: "x", count: 60)
        for batch in 0..<20 {
            try full.appendThroughLibrary((0..<10_000).map { RecordDraft(.text("\(batch) \($0) \(filler)"), source: "fill", key: "other") })
        }
        // Side by side, so that a busy machine slows both alike: each round publishes
        // an unchanged value and a changed one to each queue.
        var (emptySeconds, fullSeconds) = (0.0, 0.0)
        for round in 0..<8 {
            for value in ["same", "same", "changed \(round)"] {
                for (queue, isFull) in [(empty, false), (full, true)] {
                    let run = try measuredRun("share-append", ["--dir", queue.path, "--no-sync", "--if-changed", "--key", "k", value], in: scratch)
                    #expect(run.status == 0, "\(run.stderr)")
                    if isFull { fullSeconds += run.seconds } else { emptySeconds += run.seconds }
                }
            }
        }
        #expect(fullSeconds < emptySeconds * 3, "full \(fullSeconds) s, empty \(emptySeconds) s")
        // Each round after the first publishes "same" anew after a change, and the change.
        #expect(try full.status()["pending"] as? Int == 200_000 + 16)
    }

    @Test("Hostile index entries: the publish appends, follows no link, never blocks, and drains are unaffected",
          arguments: ["huge", "symlink", "fifo", "garbage", "directory", "keys-symlink"])
    func hostileIndex(_ plant: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let first = try publish(queue, ["X"])
        let entry = keyFile(queue)
        let honest = try Data(contentsOf: URL(fileURLWithPath: entry))
        // Elsewhere: a directory with an entry that claims X is unchanged, and must never be read.
        let elsewhere = scratch.file("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        let lure = elsewhere + "/" + (entry as NSString).lastPathComponent
        try honest.write(to: URL(fileURLWithPath: lure))
        try FileManager.default.removeItem(atPath: entry)
        switch plant {
        case "huge":
            // The honest entry, then a gigabyte of holes: a reader that reads it whole never returns.
            try honest.write(to: URL(fileURLWithPath: entry))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: entry))
            try handle.truncate(atOffset: 1 << 30)
            try handle.close()
        case "symlink": try FileManager.default.createSymbolicLink(atPath: entry, withDestinationPath: lure)
        case "fifo": #expect(mkfifo(entry, 0o600) == 0)
        case "garbage": try Data("{\"id\":\"\(first)\",\"content\":".utf8 + [0xFF, 0, 0x0A]).write(to: URL(fileURLWithPath: entry))
        case "directory": try FileManager.default.createDirectory(atPath: entry, withIntermediateDirectories: false)
        default:
            try FileManager.default.removeItem(atPath: queue.file("keys"))
            try FileManager.default.createSymbolicLink(atPath: queue.file("keys"), withDestinationPath: elsewhere)
        }
        let lureBefore = snapshot(elsewhere)
        let second = try publish(queue, ["X"])
        #expect(second != first)
        #expect(snapshot(elsewhere) == lureBefore)
        if plant != "directory" && plant != "keys-symlink" {
            // The entry is the publisher's own again.
            #expect(try publish(queue, ["X"]) == second)
        }
        let records = try drainAll(queue)
        #expect(records.map { $0["id"] as? String } == [first, second])
        #expect(snapshot(elsewhere) == lureBefore)
        if plant == "keys-symlink" {
            // The drain moved the link aside, unfollowed, so publishing keeps an index again.
            let third = try publish(queue, ["X"])
            let kind = try FileManager.default.attributesOfItem(atPath: queue.file("keys"))[.type] as? FileAttributeType
            #expect(kind == .typeDirectory)
            #expect(try publish(queue, ["X"]) == third)
            #expect(snapshot(elsewhere) == lureBefore)
        }
    }
}
