import Foundation
import Testing

/// Failures that say nothing about the records (too many open files, an I/O
/// error, a signal storm): a drain stops with 74 or 75, sets nothing aside,
/// and the next drain delivers every record exactly once.
@Suite("Passing failures", .runTimeLimit(minutes: 5))
struct PassingFailureTests {
    /// A command that refuses any batch holding a record "poison" and appends the rest to `out`.
    static func refusingPoison(_ out: String) -> String {
        "input=$(cat); case \"$input\" in *'\"poison\"'*) exit 9;; esac; printf '%s\\n' \"$input\" >> '\(out)'"
    }

    /// Appends four records, each with an attachment of its own; returns their ids and the files' bytes.
    static func appendWithAttachments(to queue: TestQueue) throws -> (ids: [String], files: [Data]) {
        var ids: [String] = []
        var files: [Data] = []
        for i in 1...4 {
            let file = queue.scratch.file("file-\(i).bin")
            let bytes = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* (i + 1) &+ i) })
            try bytes.write(to: URL(fileURLWithPath: file))
            let result = try queue.append(["--attach", file, "record \(i)"])
            try #require(result.status == 0, "\(result.stderr)")
            ids += result.lines
            files.append(bytes)
        }
        return (ids, files)
    }

    /// Runs host-drain on `queue` with `arguments`, allowed at most `descriptors` open files.
    static func drain(_ queue: TestQueue, openFiles descriptors: Int, _ arguments: [String] = []) throws -> ProcessResult {
        try run("/bin/sh", ["-c", "ulimit -n \(descriptors) && exec \"$0\" \"$@\"", Executables.path("host-drain"), "--dir", queue.path] + arguments,
                in: queue.scratch)
    }

    /// Nothing was set aside: no quarantine, no file moved aside.
    static func expectNothingSetAside(_ queue: TestQueue, _ context: String) {
        #expect(!queue.names().contains("quarantine.log"), "\(context)")
        #expect(!queue.names().contains { $0.hasPrefix("rejected-") || $0.hasPrefix("quarantine-") }, "\(context)")
    }

    @Test("Allowed no file beyond the standard three, neither released tool can read its command line: 75 with a message, and nothing changes",
          Executables.needsRelease, arguments: ["share-append", "host-drain"])
    func noDescriptorsAtAll(_ tool: String) throws {
        // Released: a dynamically linked debug build cannot even load its libraries with no descriptor free.
        let queue = TestQueue()
        let appended = try queue.append(text: "kept")
        let before = snapshot(queue.path)
        for limit in [1, 3] {
            let limited = try run("/bin/sh", ["-c", "ulimit -n \(limit) && exec \"$0\" \"$@\"", Executables.releaseDirectory.appendingPathComponent(tool).path, "--dir", queue.path, "more"],
                                  in: queue.scratch)
            #expect(limited.status == 75, "\(tool), \(limit) descriptors: \(limited.status) \(limited.stderr)")
            #expect(limited.stderr.contains("command line"), "\(limited.stderr)")
            #expect(snapshot(queue.path) == before)
        }
        #expect(try ids(in: queue.drain().stdout) == appended)
    }

    @Test("Out of descriptors at any point of a drain: 75 and nothing set aside; a drain with descriptors delivers all four attachments intact",
          arguments: [[], ["--attachments-to", "INBOX"]])
    func outOfDescriptors(_ arguments: [String]) throws {
        let scratch = TemporaryDirectory()
        let pristine = TestQueue(in: scratch, name: "pristine")
        let (appended, files) = try Self.appendWithAttachments(to: pristine)
        var attachmentFailures = 0
        // From too few to open the queue (fewer, and the loader cannot load the tool) to
        // enough for everything: each limit runs short at a later step.
        for limit in 4...12 {
            let queue = TestQueue(in: scratch, name: "queue-\(limit)")
            try FileManager.default.copyItem(atPath: pristine.path, toPath: queue.path)
            let arguments = arguments.map { $0 == "INBOX" ? scratch.file("inbox-\(limit)") : $0 }
            let status = try Self.drain(queue, openFiles: limit, ["--status", "--json"])
            #expect(status.status == 0 || status.status == 75, "status with \(limit) descriptors: \(status.stderr)")
            if status.status == 0 {
                let counts = try #require(try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])
                #expect((counts["attachments"] as? [String: Any])?["count"] as? Int == 4, "status with \(limit) descriptors miscounted: \(counts)")
                #expect(counts["pending"] as? Int == 4)
            }
            let limited = try Self.drain(queue, openFiles: limit, arguments)
            #expect(limited.status == 0 || limited.status == 75, "\(limit) descriptors: \(limited.stderr)")
            if limited.status == 75 {
                #expect(limited.stderr.contains("Too many open files"), "\(limited.stderr)")
                #expect(limited.stderr.contains("(\(queue.path)") || limited.stderr.contains("(\(scratch.path)"), "\(limited.stderr)")
                if limited.stderr.contains("attachment") { attachmentFailures += 1 }
            }
            Self.expectNothingSetAside(queue, "\(limit) descriptors: \(limited.stderr)")
            let clean = try queue.drain(arguments)
            #expect(clean.status == 0, "\(clean.stderr)")
            let records = try jsonObjects(limited.stdout) + jsonObjects(clean.stdout)
            #expect(records.map { $0["id"] as! String } == appended, "\(limit) descriptors, then enough: every record once")
            for (record, bytes) in zip(records, files) {
                let path = try #require((record["attachments"] as? [[String: Any]])?.first?["path"] as? String)
                #expect(FileManager.default.contents(atPath: path) == bytes, "\(limit) descriptors: \(path)")
            }
            Self.expectNothingSetAside(queue, "the drain with descriptors")
        }
        #expect(attachmentFailures > 0, "no limit made reading an attachment fail")
    }

    @Test("Out of descriptors with --store, SQLite's own opening included: 75 naming the shortage, nothing set aside; with descriptors, every record stored once")
    func outOfDescriptorsWithTheStore() throws {
        let scratch = TemporaryDirectory()
        let pristine = TestQueue(in: scratch, name: "pristine")
        let appended = try pristine.appendLines(["a", "b", "c"])
        var storeFailures = 0
        for limit in 4...14 {
            let queue = TestQueue(in: scratch, name: "queue-\(limit)")
            try FileManager.default.copyItem(atPath: pristine.path, toPath: queue.path)
            let store = scratch.file("store-\(limit).sqlite")
            let limited = try Self.drain(queue, openFiles: limit, ["--store", store])
            #expect(limited.status == 0 || limited.status == 75, "\(limit) descriptors: \(limited.status) \(limited.stderr)")
            if limited.status == 75 {
                #expect(limited.stderr.contains("Too many open files"), "\(limited.stderr)")
                if limited.stderr.contains("store") { storeFailures += 1 }
            }
            Self.expectNothingSetAside(queue, "\(limit) descriptors: \(limited.stderr)")
            let clean = try queue.drain(["--store", store])
            #expect(clean.status == 0, "\(clean.stderr)")
            #expect(try sqlite(store, "SELECT id FROM records ORDER BY id") == appended.sorted(), "\(limit) descriptors")
        }
        #expect(storeFailures > 0, "no limit made the store's own opening fail")
    }

    /// A file a drain reads, and how to make a drain read it.
    enum Target: String, CaseIterable, CustomTestStringConvertible {
        case segment, attachment, checkpoint, attempts, deadLetters, formatMarker

        var testDescription: String { rawValue }

        /// The `name=` of `SHARE_QUEUE_FAULT`, and what the error message names.
        var name: String {
            switch self {
            case .segment: "sealed-"
            case .attachment: "attachments"
            case .checkpoint: "checkpoint"
            case .attempts: "attempts"
            case .deadLetters: "dead-letters"
            case .formatMarker: "format"
            }
        }
    }

    /// A call that fails, its error, and the exit status a drain must give for it.
    struct Fault: CustomTestStringConvertible {
        let call: String
        let errno: String
        let code: Int32
        let status: Int32
        var testDescription: String { "\(call) \(errno)" }
    }

    static let faults = [
        Fault(call: "pread", errno: "EIO", code: EIO, status: 74),
        Fault(call: "pread", errno: "EACCES", code: EACCES, status: 74),
        Fault(call: "pread", errno: "EAGAIN", code: EAGAIN, status: 75),
        Fault(call: "pread", errno: "ENOMEM", code: ENOMEM, status: 75),
        // Unbounded: more interruptions in a row than any call retries.
        Fault(call: "pread", errno: "EINTR", code: EINTR, status: 75),
        Fault(call: "openat", errno: "EMFILE", code: EMFILE, status: 75),
        Fault(call: "openat", errno: "ENFILE", code: ENFILE, status: 75),
    ]

    @Test("Reading or opening a file that fails at the system layer ends the drain with 74 or 75, naming the file and the cause; nothing is set aside, and the next drain delivers everything once",
          arguments: Target.allCases, faults)
    func injectedReadFailure(_ target: Target, _ fault: Fault) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered-by-command")
        var expected: [String] = []
        var faulted: [String]
        switch target {
        case .attempts:
            // A refusal is counted, so that the next drain reads the counts to clear them.
            let appended = try queue.appendLines(["a", "poison", "b"])
            // "b" is delivered behind the refused record, and again with it: the checkpoint stayed before it.
            expected = appended + [appended[2]]
            let refusing = try queue.drain(["--exec", Self.refusingPoison(out)])
            try #require(refusing.status == 75, "\(refusing.stderr)")
            try #require(queue.names().contains("attempts"))
            faulted = []
        case .deadLetters:
            // A dead letter is there, so that the next one set aside is checked against it.
            let first = try queue.appendLines(["a", "poison"])
            let refusing = try queue.drain(["--exec", Self.refusingPoison(out), "--max-attempts", "1"])
            try #require(refusing.status == 0, "\(refusing.stderr)")
            try #require(try queue.deadLetters().count == 1)
            expected = [first[0]] + (try queue.appendLines(["b", "poison", "c"]))
            faulted = ["--exec", Self.refusingPoison(out), "--max-attempts", "1"]
        default:
            expected = try queue.appendLines(["a", "b"]) + (try Self.appendWithAttachments(to: queue)).ids
            faulted = []
        }
        let lettersBefore = try queue.deadLetters().count
        let environment = ["SHARE_QUEUE_FAULT": "\(fault.call):\(fault.errno):name=\(target.name)"]
        let result = try queue.drain(faulted, environment: environment)
        // Reading the format marker is part of opening the queue, where access refused is 77 for every tool.
        let status = target == .formatMarker && fault.code == EACCES ? 77 : fault.status
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains("(\(queue.path)/\(target.name)"), "the message names the file: \(result.stderr)")
        #expect(result.stderr.contains(String(cString: strerror(fault.code))), "the message gives the cause: \(result.stderr)")
        Self.expectNothingSetAside(queue, result.stderr)
        #expect(try queue.deadLetters().count == lettersBefore)

        let clean = try queue.drain()
        #expect(clean.status == 0, "\(clean.stderr)")
        let byCommand = try ids(in: (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data())
        let delivered = try byCommand + ids(in: result.stdout) + ids(in: clean.stdout)
        #expect(delivered.sorted() == expected.sorted(), "every record exactly once")
        Self.expectNothingSetAside(queue, clean.stderr)
    }

    @Test("A storm of signals shorter than the retries is outlasted: the drain delivers everything")
    func boundedSignalStorm() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines(["a", "b", "c"])
        let result = try queue.drain(environment: ["SHARE_QUEUE_FAULT": "pread:EINTR:name=sealed-:count=900"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try ids(in: result.stdout) == appended)
    }

    @Test("An I/O error opening a file a tool would create (a lock file, the pending file) is 74, not 73: nothing says it could not be made",
          arguments: [("host-drain", "openat:EIO:name=drain.lock"), ("share-append", "openat:EIO:name=append.lock"), ("share-append", "openat:EIO:name=pending.log")])
    func ioErrorCreatingIs74(_ tool: String, _ fault: String) throws {
        let queue = TestQueue()
        let appended = try queue.append(text: "kept")
        let result = try run(tool, ["--dir", queue.path] + (tool == "share-append" ? ["more"] : []), environment: ["SHARE_QUEUE_FAULT": fault], in: queue.scratch)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(try ids(in: queue.drain().stdout) == appended)
    }

    @Test("--status stops with 74 or 75 rather than count what it could not read",
          arguments: [("pread:EIO:name=dead-letters", Int32(74)), ("openat:EMFILE:name=attachments", 75), ("pread:ENOMEM:name=quarantine", 75)])
    func statusFailure(_ fault: String, _ status: Int32) throws {
        let queue = TestQueue()
        _ = try Self.appendWithAttachments(to: queue)
        // A quarantine file and a dead letter to count.
        try queue.plant(Array("garbage".utf8))
        let out = queue.scratch.file("out")
        try queue.appendLines(["poison"])
        let drain = try queue.drain(["--exec", Self.refusingPoison(out), "--max-attempts", "1"])
        try #require(drain.status == 0, "\(drain.stderr)")
        try queue.appendLines(["pending"])
        let result = try queue.drain(["--status"], environment: ["SHARE_QUEUE_FAULT": fault])
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
