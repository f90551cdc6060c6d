import Foundation
import Testing
@testable import ShareQueueCore

/// The conformance corpus in `Tests/Conformance`: queue directories built byte
/// by byte from `Documentation/Format.md`, each drained by the real
/// `host-drain`, with exactly what it must print, set aside and record. Another
/// implementation can run the same cases; see `Tests/Conformance/README.md`.
///
/// With `SHAREQUEUE_UPDATE_CONFORMANCE=1` the tests write what the drain did
/// into each case's `expected/` instead of comparing, so that a deliberate
/// change of behaviour is one reviewed diff.
@Suite("Conformance corpus")
struct ConformanceTests {
    /// `Tests/Conformance`, found from this file's place in `Tests/ShareQueueTests/Format`.
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Conformance").path
    static let updating = ProcessInfo.processInfo.environment["SHAREQUEUE_UPDATE_CONFORMANCE"] == "1"

    /// Every folder of the corpus that holds a `queue`.
    static let cases: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: corpus)) ?? [])
        .filter { FileManager.default.fileExists(atPath: corpus + "/" + $0 + "/queue") }
        .sorted()

    /// The drain's arguments besides `--dir`: the case's `options` file, one a line.
    static func options(of name: String) -> [String] {
        guard let text = FileManager.default.contents(atPath: corpus + "/" + name + "/options") else { return [] }
        return String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The files a case compares, and what each holds.
    static let expectedFiles = ["delivered.jsonl", "quarantine.jsonl", "checkpoint", "exit", "files"]

    @Test("The corpus is there and covers every kind of damage")
    func corpusIsComplete() {
        for name in ["clean", "torn-tail-mid-header", "torn-tail-mid-payload", "torn-tail-mid-trailer", "checksum-mismatch",
                     "length-field-changed", "garbage-between-records", "batch-torn-at-end", "batch-damaged-in-middle",
                     "record-rules", "pass-through", "checkpoint-mid-sealed-segment", "checkpoint-newer-slot-damaged", "newer-format",
                     "coalesce-newest-instant"] {
            #expect(Self.cases.contains(name), "the corpus (\(Self.corpus)) has no case \(name)")
        }
    }

    /// Copies case `name`'s queue to `queue`, without the group's and others' write bits a checkout made
    /// under umask 002 gives: the cases are queues of one user, and a queue its group may write is read by
    /// other rules (a drain trusts no file others may write, and numbers segments from the clock).
    static func copyCase(_ name: String, to queue: String) throws {
        try FileManager.default.copyItem(atPath: corpus + "/" + name + "/queue", toPath: queue)
        for path in [queue] + (FileManager.default.subpaths(atPath: queue) ?? []).map({ queue + "/" + $0 }) {
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT != S_IFLNK else { continue }
            _ = chmod(path, status.st_mode & 0o7755)
        }
    }

    @Test("host-drain does exactly what each case expects", arguments: cases)
    func drainMatchesExpected(_ name: String) throws {
        let scratch = TemporaryDirectory()
        let queue = scratch.file("queue")
        try Self.copyCase(name, to: queue)
        let before = Self.tree(queue)
        let result = try run("host-drain", ["--dir", queue] + Self.options(of: name), in: scratch)
        let after = Self.tree(queue)

        let actual: [String: String] = [
            "delivered.jsonl": result.output.replacingOccurrences(of: queue, with: "$QUEUE"),
            "quarantine.jsonl": Self.withoutDates(String(decoding: after["quarantine.log"] ?? Data(), as: UTF8.self)),
            "checkpoint": Self.position(in: [UInt8](after["checkpoint"] ?? Data())) + "\n",
            "exit": "\(result.status)\n",
            // A file moved aside is named with the time it was moved.
            "files": after.keys.map { $0.replacing(/^rejected-[0-9]+-/, with: "rejected-<ms>-") }.sorted().map { $0 + "\n" }.joined(),
        ]
        let expectedFolder = Self.corpus + "/" + name + "/expected"
        if Self.updating {
            try FileManager.default.createDirectory(atPath: expectedFolder, withIntermediateDirectories: true)
            for (file, text) in actual { try Data(text.utf8).write(to: URL(fileURLWithPath: expectedFolder + "/" + file)) }
            return
        }
        try compare(name, actual, expectedFolder, result)
        // A queue a drain refuses (a newer or unknown format) must be left exactly as it was.
        if result.status == 78 { #expect(after == before, "\(name): a refused queue was changed") }
        // No drain reads, changes or removes anything in the keys folder.
        for (path, bytes) in before where path.hasPrefix("keys/") {
            #expect(after[path] == bytes, "\(name): a drain changed or removed \(path)")
        }
    }

    /// Compares what the drain did with the case's `expected/` files.
    func compare(_ name: String, _ actual: [String: String], _ expectedFolder: String, _ result: ProcessResult) throws {
        for file in Self.expectedFiles {
            guard let expected = FileManager.default.contents(atPath: expectedFolder + "/" + file) else {
                Issue.record("\(name): no expected/\(file); run the tests with SHAREQUEUE_UPDATE_CONFORMANCE=1 to write it, and review it")
                continue
            }
            #expect(actual[file] == String(decoding: expected, as: UTF8.self),
                    "\(name): \(file) differs from \(expectedFolder)/\(file); stderr: \(result.stderr)")
        }
    }

    /// Every file under `path`, by its path relative to it, with its bytes.
    static func tree(_ path: String) -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: path) else { return files }
        for case let relative as String in walker {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = FileManager.default.contents(atPath: path + "/" + relative) ?? Data()
            }
        }
        return files
    }

    /// Quarantine lines without their `date`, the one field that changes from run to run.
    static func withoutDates(_ text: String) -> String {
        text.split(separator: "\n").map { line -> String in
            let prefix = "{\"date\":\""
            guard line.hasPrefix(prefix), let close = line.dropFirst(prefix.count).firstIndex(of: "\"") else { return String(line) }
            let rest = line[line.index(after: close)...]
            return "{" + rest.dropFirst(rest.hasPrefix(",") ? 1 : 0) + "\n"
        }.joined()
    }

    /// The checkpoint's position, read by Format.md's rule (§10.2): of the two
    /// 64-byte slots, the valid one (`SERIAL SEGMENT OFFSET CRC`) with the higher serial.
    static func position(in bytes: [UInt8]) -> String {
        var best: (serial: UInt64, text: String)? = nil
        for start in stride(from: 0, to: bytes.count - Checkpoint.slotSize + 1, by: Checkpoint.slotSize) where bytes.count >= Checkpoint.slotSize {
            let words = String(decoding: bytes[start..<(start + Checkpoint.slotSize)], as: UTF8.self)
                .split(whereSeparator: { $0 == " " || $0 == "\n" })
            guard words.count == 4, let serial = UInt64(words[0]), serial > 0, UInt64(words[1]) != nil, UInt64(words[2]) != nil,
                  words[3] == String(CRC32C.checksum(Array(words[0...2].joined(separator: " ").utf8)), radix: 16) else { continue }
            if serial > best?.serial ?? 0 { best = (serial, "segment \(words[1]) offset \(words[2])") }
        }
        return best?.text ?? "segment 0 offset 0"
    }
}
