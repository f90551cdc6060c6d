import Foundation
import Testing

/// README's NATS recipe, run for real: host-drain hands its batches to the sample
/// forwarder (`Samples/Forwarders/NATS`), which publishes them to a local JetStream
/// with `Nats-Msg-Id` set to each record's id. What the stream holds is read back with
/// the sample's `nats-stream-dump`, message by message.
///
/// They need `nats-server` and libnats (`.ci/run` installs them); without them these tests
/// are skipped with that reason, except under CI, where that is a failure.
@Suite("Forwarding to NATS JetStream", .serialized,
       .enabled(if: NATSServer.isInstalled || ProcessInfo.processInfo.environment["CI"] != nil,
                "nats-server and libnats are not installed: apt-get install nats-server libnats-dev"))
struct NATSForwardingTests {
    static let package = ServiceSampleTests.samples + "/Forwarders/NATS"

    /// The sample's programs, built once per test run into the sample's own `.build`.
    static let built = SharingAppTests.build(package)

    /// The sample's bin folder, or a failure that says what is missing.
    func bin() throws -> String {
        try #require(NATSServer.isInstalled, "nats-server and libnats are needed (.ci/run installs nats-server and libnats-dev)")
        return try Self.built.get()
    }

    /// The forwarder as host-drain runs it: a shell command.
    func forwarder(_ bin: String, _ server: NATSServer, subject: String, _ extra: String = "") -> String {
        "'\(bin)/forward-nats' --server \(server.url) --subject \(subject) \(extra)"
    }

    /// Creates the stream `name` capturing `subject`, through the forwarder with an empty batch.
    func createStream(_ bin: String, _ server: NATSServer, _ name: String, subject: String, _ extra: [String] = [],
                      in scratch: TemporaryDirectory) throws {
        let made = try run(bin + "/forward-nats", ["--server", server.url, "--subject", subject, "--create-stream", name] + extra,
                           in: scratch)
        #expect(made.status == 0, "\(made.stderr)")
    }

    /// Every message of `stream`: its `Nats-Msg-Id`, and the `id` of the record it carries.
    func messages(_ bin: String, _ server: NATSServer, _ stream: String, in scratch: TemporaryDirectory) throws -> [(header: String, id: String)] {
        let dump = try run(bin + "/nats-stream-dump", ["--server", server.url, "--stream", stream], in: scratch)
        try #require(dump.status == 0, "\(dump.stderr)")
        return try dump.lines.map { line in
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            try #require(parts.count == 2, "\(line)")
            return (parts[0], try ids(in: Data(parts[1].utf8))[0])
        }
    }

    func count(_ bin: String, _ server: NATSServer, _ stream: String, in scratch: TemporaryDirectory) throws -> Int {
        let dump = try run(bin + "/nats-stream-dump", ["--server", server.url, "--stream", stream, "--count"], in: scratch)
        try #require(dump.status == 0, "\(dump.stderr)")
        return Int(dump.lines.first ?? "") ?? -1
    }

    /// Checks that the stream holds each of `ids` exactly once, under its own id, and nothing else.
    func expectEachOnce(_ ids: [String], in stream: String, _ bin: String, _ server: NATSServer,
                        in scratch: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let held = try messages(bin, server, stream, in: scratch)
        #expect(held.count == ids.count, "the stream holds \(held.count) messages for \(ids.count) ids", sourceLocation: sourceLocation)
        #expect(held.allSatisfy { $0.header == $0.id }, sourceLocation: sourceLocation)
        var seen: [String: Int] = [:]
        for message in held { seen[message.id, default: 0] += 1 }
        #expect(seen.values.allSatisfy { $0 == 1 }, "ids held more than once: \(seen.filter { $0.value > 1 }.count)", sourceLocation: sourceLocation)
        #expect(Set(seen.keys) == Set(ids), sourceLocation: sourceLocation)
    }

    func appendLines(_ count: Int, _ prefix: String, _ queue: String, in scratch: TemporaryDirectory) throws -> [String] {
        let lines = (1...count).map { "\(prefix) \($0) https://example.com/\(prefix)/\($0)" }.joined(separator: "\n")
        let appended = try run("share-append", ["--dir", queue, "--lines", "--no-sync"], stdin: lines, in: scratch)
        try #require(appended.status == 0, "\(appended.stderr)")
        return appended.lines
    }

    @Test("10,000 records drained through forward-nats: the stream holds exactly 10,000 messages, one per id; with --long-running one forwarder takes both batches of 5000",
          arguments: [false, true])
    func tenThousandRecords(_ longRunning: Bool) throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        let appended = try appendLines(10_000, "shared link", scratch.queue, in: scratch)
        #expect(appended.count == 10_000)

        try createStream(bin, server, "SHARED", subject: "shared.items", in: scratch)
        let starts = scratch.file("starts")
        let command = "echo $$ >> '\(starts)'; exec " + forwarder(bin, server, subject: "shared.items", "--stream SHARED")
        let drain = try run("host-drain", ["--dir", scratch.queue, "-q"] + (longRunning ? ["--long-running"] : []) + ["--exec", command], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        try expectEachOnce(appended, in: "SHARED", bin, server, in: scratch)
        #expect(try run("host-drain", ["--dir", scratch.queue, "--peek"], in: scratch).output.isEmpty)
        #expect(RefusalTests.lines(of: starts).count == (longRunning ? 1 : 10))
    }

    @Test("--long-running with the server down: the forwarder exits 75 before it greets back, and nothing is counted; started again, everything arrives once")
    func longRunningServerDown() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "DOWN", subject: "down", in: scratch)
        let appended = try appendLines(3000, "down", scratch.queue, in: scratch)
        server.stop()
        let stopped = try run("host-drain", ["--dir", scratch.queue, "-q", "--long-running", "--exec", forwarder(bin, server, subject: "down", "--timeout 1s")], in: scratch)
        #expect(stopped.status == 75, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("try again later (status 75)"), "\(stopped.stderr)")
        #expect(try run("host-drain", ["--dir", scratch.queue, "--peek"], in: scratch).lines.count == 3000)
        #expect(!FileManager.default.fileExists(atPath: scratch.queue + "/attempts"))

        try server.start()
        let again = try run("host-drain", ["--dir", scratch.queue, "-q", "--long-running", "--exec", forwarder(bin, server, subject: "down")], in: scratch)
        #expect(again.status == 0, "\(again.stderr)")
        try expectEachOnce(appended, in: "DOWN", bin, server, in: scratch)
    }

    @Test("Killing host-drain or the forwarder at random points over 20 runs leaves each acknowledged id once in the stream")
    func killsAtRandomPoints() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "KILLS", subject: "kills", in: scratch)
        // Each forwarder writes its pid first (the shell's, which exec hands on to it).
        let pids = scratch.file("forwarders")
        let command = "echo $$ >> '\(pids)'; exec " + forwarder(bin, server, subject: "kills")
        var appended: [String] = []
        var generator = SystemRandomNumberGenerator()
        for round in 1...20 {
            appended += try appendLines(100, "round \(round)", scratch.queue, in: scratch)
            let startedBefore = (try? String(contentsOfFile: pids, encoding: .utf8))?.split(separator: "\n").count ?? 0
            let drain = try RunningTool("host-drain", ["--dir", scratch.queue, "-q", "--batch", "25", "--exec", command], in: scratch)
            if round.isMultiple(of: 2) {
                usleep(UInt32.random(in: 0..<150_000, using: &generator))
                drain.kill()
            } else {
                // The first forwarder of this run, some way into its batch.
                var victim: Int32? = nil
                try? waitUntil("a forwarder", seconds: 10) {
                    let started = (try? String(contentsOfFile: pids, encoding: .utf8))?.split(separator: "\n") ?? []
                    victim = started.count > startedBefore ? Int32(started[startedBefore]) : nil
                    return victim != nil || !drain.process.isRunning
                }
                usleep(UInt32.random(in: 0..<20_000, using: &generator))
                if let victim { kill(victim, SIGKILL) }
            }
            let status = drain.wait().status
            #expect([0, 75, 128 + SIGKILL].contains(status), "round \(round): status \(status)")
        }
        // A forwarder whose drain was killed goes on alone to the end of its input.
        let started = (try? String(contentsOfFile: pids, encoding: .utf8))?.split(separator: "\n").compactMap { Int32($0) } ?? []
        for pid in started { try waitUntil("forwarder \(pid) to end") { Self.hasEnded(pid) } }

        let last = try run("host-drain", ["--dir", scratch.queue, "-q", "--exec", forwarder(bin, server, subject: "kills")], in: scratch)
        #expect(last.status == 0, "\(last.stderr)")
        #expect(appended.count == 2000)
        try expectEachOnce(appended, in: "KILLS", bin, server, in: scratch)
        #expect(!FileManager.default.fileExists(atPath: scratch.queue + "/dead-letters.log"))
    }

    @Test("The server stops in the middle of a batch: exit 75; started again, everything arrives once")
    func serverStopsMidBatch() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "RESTART", subject: "restart", in: scratch)
        let appended = try appendLines(1000, "restart", scratch.queue, in: scratch)
        // The batch reaches the forwarder in two parts: 100 records, then the rest once the test says so.
        let half = scratch.file("half-sent")
        let go = scratch.file("go-on")
        let command = """
            { for i in $(seq 100); do IFS= read -r line; printf '%s\\n' "$line"; done; touch '\(half)'; \
            while [ ! -e '\(go)' ]; do sleep 0.01; done; cat; } | \(forwarder(bin, server, subject: "restart"))
            """
        let drain = try RunningTool("host-drain", ["--dir", scratch.queue, "-q", "--exec", command], in: scratch)
        try waitUntil("the first 100 records in the stream") {
            try #require(drain.process.isRunning, "host-drain ended early: \(drain.wait().stderr)")
            guard FileManager.default.fileExists(atPath: half) else { return false }
            return try count(bin, server, "RESTART", in: scratch) == 100
        }
        server.stop()
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        let stopped = drain.wait()
        #expect(stopped.status == 75, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("asked to try again later (status 75)"), "\(stopped.stderr)")
        #expect(try run("host-drain", ["--dir", scratch.queue, "--peek"], in: scratch).lines.count == 1000)

        try server.start()
        let again = try run("host-drain", ["--dir", scratch.queue, "-q", "--exec", forwarder(bin, server, subject: "restart")], in: scratch)
        #expect(again.status == 0, "\(again.stderr)")
        try expectEachOnce(appended, in: "RESTART", bin, server, in: scratch)
    }

    @Test("A duplicate window shorter than the wait for a retry lets a duplicate in; a longer one does not")
    func duplicateWindowShorterThanARetry() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        // A drain killed after the forwarder's acknowledgements and before its checkpoint: its answer is lost.
        let window = 1.0
        var appended: [String: [String]] = [:]
        for (stream, dupeWindow) in [("SHORT", ["--dupe-window", "\(Int(window * 1000))ms"]), ("DEFAULT", [])] {
            let queue = scratch.file(stream)
            try createStream(bin, server, stream, subject: stream.lowercased(), dupeWindow, in: scratch)
            appended[stream] = try appendLines(10, stream, queue, in: scratch)
            let lost = try run("host-drain", ["--dir", queue, "-q", "--exec",
                                              forwarder(bin, server, subject: stream.lowercased()) + " && kill -KILL $PPID"], in: scratch)
            #expect(lost.status == 128 + SIGKILL)
            #expect(try count(bin, server, stream, in: scratch) == 10)
        }
        // The server forgets ids on a timer that runs once per window: three windows are past all of them.
        usleep(UInt32(3 * window * 1_000_000))
        for stream in ["SHORT", "DEFAULT"] {
            let retry = try run("host-drain", ["--dir", scratch.file(stream), "-q", "--exec", forwarder(bin, server, subject: stream.lowercased())],
                                in: scratch)
            #expect(retry.status == 0, "\(retry.stderr)")
        }
        let short = try messages(bin, server, "SHORT", in: scratch).map(\.id)
        #expect(short == appended["SHORT"]! + appended["SHORT"]!, "each id twice: the window had passed")
        try expectEachOnce(appended["DEFAULT"]!, in: "DEFAULT", bin, server, in: scratch)
    }

    @Test("A record larger than the server takes is refused for good (65, or the answer refused with --long-running): host-drain bisects, delivers the rest and sets it aside",
          arguments: [false, true])
    func recordTooLargeIsRefused(_ longRunning: Bool) throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "LARGE", subject: "large", in: scratch)
        var appended = try appendLines(3, "before", scratch.queue, in: scratch)
        // nats-server takes at most 1 MiB a message unless told otherwise.
        let large = try run("share-append", ["--dir", scratch.queue, "--max-record-bytes", "2000000"],
                            stdin: String(repeating: "x", count: 1_100_000), in: scratch)
        try #require(large.status == 0, "\(large.stderr)")
        appended += try appendLines(3, "after", scratch.queue, in: scratch)

        let starts = scratch.file("starts")
        let command = "echo $$ >> '\(starts)'; exec " + forwarder(bin, server, subject: "large")
        let mode = longRunning ? ["--long-running"] : []
        let drain = try run("host-drain", ["--dir", scratch.queue, "-q", "--max-attempts", "1"] + mode + ["--exec", command], in: scratch)
        #expect(drain.stderr.contains("the server takes at most 1048576"), "\(drain.stderr)")
        // Bisected with the one forwarder: each half a batch of its own.
        if longRunning { #expect(RefusalTests.lines(of: starts).count == 1) }
        #expect(try run("host-drain", ["--dir", scratch.queue, "-q"] + mode + ["--exec", forwarder(bin, server, subject: "large")], in: scratch).status == 0)
        try expectEachOnce(appended, in: "LARGE", bin, server, in: scratch)
        let deadLetters = try String(contentsOfFile: scratch.queue + "/dead-letters.log", encoding: .utf8)
        #expect(deadLetters.contains(large.lines[0]))
        #expect(deadLetters.contains(longRunning ? "command answered refused" : "command exited with status 65"))
    }

    @Test("A record that names another's id before its own is published under its own, the last, as host-drain reads it: the other is not taken for a duplicate")
    func repeatedIDMember() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "REPEATED", subject: "repeated", in: scratch)
        let victim = "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9"
        let queue = TestQueue(in: scratch)
        try queue.appendStored([Array(#"{"v":1,"id":"\#(victim)","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"text","text":"hostile","id":"hostile-1"}"#.utf8)])
        #expect(try queue.append(["--id", victim, "victim"]).lines == [victim])
        let drain = try run("host-drain", ["--dir", queue.path, "-q", "--exec", forwarder(bin, server, subject: "repeated")], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        let dump = try run(bin + "/nats-stream-dump", ["--server", server.url, "--stream", "REPEATED"], in: scratch)
        #expect(dump.lines.map { String($0.prefix { $0 != "\t" }) } == ["hostile-1", victim], "\(dump.stdout)")
    }

    @Test("Escapes are decoded where the forwarder reads the id: in the member's name, in its value, and in the values it skips")
    func escapedID() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "ESCAPED", subject: "escaped", in: scratch)
        let queue = TestQueue(in: scratch)
        try queue.appendStored([Array(#"{"v":1,"i\u0064":"caf\u00e9 1","date":"2026-01-02T03:04:05.678Z","source":"s\"q","kind":"text","text":"say \"id\":\"no\"\\"}"#.utf8),
                                Array(#"{"v":1,"id":"plain-2","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"text","text":"\u0022id\u0022"}"#.utf8)])
        let drain = try run("host-drain", ["--dir", queue.path, "-q", "--long-running", "--exec", forwarder(bin, server, subject: "escaped")], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        let dump = try run(bin + "/nats-stream-dump", ["--server", server.url, "--stream", "ESCAPED"], in: scratch)
        #expect(dump.lines.map { String($0.prefix { $0 != "\t" }) } == ["café 1", "plain-2"], "\(dump.output)")
    }

    @Test("forward-nats: --help, usage errors (64); an unreachable server (75); an unusable file (78, naming its option)")
    func commandLine() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let help = try run(bin + "/forward-nats", ["--help"], in: scratch)
        #expect(help.status == 0 && help.output.contains("USAGE: forward-nats --subject SUBJECT"))
        for arguments in [[], ["--subject"], ["--subject", "a.*"], ["--subject", "a", "--bogus"],
                          ["--subject", "a", "--dupe-window", "1s"], ["--subject", "a", "--timeout", "soon"],
                          ["--subject", "a", "--stream", "A", "--create-stream", "A"]] {
            let usage = try run(bin + "/forward-nats", arguments, in: scratch)
            #expect(usage.status == 64, "\(arguments): \(usage.stderr)")
            #expect(usage.stderr.hasPrefix("forward-nats: error: ") && usage.stderr.contains("Usage: "), "\(usage.stderr)")
        }
        // A port nothing listens on: a server that was just stopped.
        let server = try NATSServer(in: scratch)
        server.stop()
        let unreachable = try run(bin + "/forward-nats", ["--server", server.url, "--subject", "a"], stdin: "{\"id\":\"x\"}\n", in: scratch)
        #expect(unreachable.status == 75)
        #expect(unreachable.stderr.contains("cannot connect to \(server.url)"), "\(unreachable.stderr)")
        // A certificate or credentials file that cannot be used is the configuration's fault, not the records'.
        for option in ["--tlsca", "--creds"] {
            let arguments = ["--subject", "a", option, scratch.file("missing")]
            expectConfigurationError(try forward(bin, server, arguments, in: scratch), naming: option, given: arguments)
        }
    }

    /// forward-nats run by itself on one record, as host-drain would run it; with --create-stream
    /// on no input, as an operator runs it once.
    func forward(_ bin: String, _ server: NATSServer, _ arguments: [String], record: String = #"{"id":"r-1"}"#,
                 in scratch: TemporaryDirectory) throws -> ProcessResult {
        let input = arguments.contains("--create-stream") ? nil : record + "\n"
        return try run(bin + "/forward-nats", ["--server", server.url] + arguments, stdin: input, in: scratch)
    }

    /// Checks that `result` is a configuration error (78) that names `option` and suggests no option already given.
    func expectConfigurationError(_ result: ProcessResult, naming option: String, given: [String],
                                  sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 78, "\(given): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("forward-nats: error: "), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(option), "\(given): no \(option) in: \(result.stderr)", sourceLocation: sourceLocation)
        for already in given where already.hasPrefix("--") {
            #expect(!result.stderr.contains("pass \(already)") && !result.stderr.contains("add \(already)"),
                    "suggests \(already), which was given: \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test("An invalid stream name is a configuration error (78) that names the option; host-drain counts nothing against the records")
    func invalidStreamName() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        for (option, name) in [("--create-stream", "SHARED.ITEMS"), ("--stream", "SHARED ITEMS"), ("--create-stream", "a/b"), ("--stream", "ALL>")] {
            let arguments = ["--subject", "invalid", option, name]
            expectConfigurationError(try forward(bin, server, arguments, in: scratch), naming: option, given: arguments)
        }
        let appended = try appendLines(3, "invalid", scratch.queue, in: scratch)
        let drain = try run("host-drain", ["--dir", scratch.queue, "-q", "--exec", forwarder(bin, server, subject: "invalid", "--stream SHARED.ITEMS")],
                            in: scratch)
        #expect(drain.status == 78, "\(drain.stderr)")
        let attempts = FileManager.default.contents(atPath: scratch.queue + "/attempts") ?? Data()
        #expect(attempts.isEmpty, "attempts counted: \(String(decoding: attempts, as: UTF8.self))")
        #expect(try run("host-drain", ["--dir", scratch.queue, "--peek"], in: scratch).lines.count == appended.count)
    }

    @Test("A subject another stream captures is a configuration error (78) that names that stream, with --create-stream or --stream")
    func subjectCapturedByAnotherStream() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "OTHER", subject: "taken", in: scratch)
        try createStream(bin, server, "MINE", subject: "mine", in: scratch)
        for arguments in [["--subject", "taken", "--create-stream", "NEW"], ["--subject", "taken", "--stream", "MINE"]] {
            let result = try forward(bin, server, arguments, in: scratch)
            expectConfigurationError(result, naming: "--subject", given: arguments)
            #expect(result.stderr.contains("OTHER"), "\(arguments): \(result.stderr)")
        }
        let created = try run(bin + "/nats-stream-dump", ["--server", server.url, "--stream", "NEW", "--count"], in: scratch)
        #expect(created.status != 0, "the stream NEW was created: \(created.output)")
        #expect(try count(bin, server, "OTHER", in: scratch) == 0)
    }

    @Test("An existing stream whose subjects or duplicate window differ from the options is a configuration error (78) that names the option")
    func existingStreamDiffers() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "SHAPED", subject: "shaped", ["--dupe-window", "2m"], in: scratch)
        let cases: [(arguments: [String], option: String)] = [
            (["--subject", "elsewhere", "--create-stream", "SHAPED"], "--subject"),
            (["--subject", "elsewhere", "--stream", "SHAPED"], "--subject"),
            (["--subject", "shaped", "--create-stream", "SHAPED", "--dupe-window", "10m"], "--dupe-window"),
            (["--subject", "shaped", "--stream", "SHAPED", "--dupe-window", "10m"], "--dupe-window"),
        ]
        for (arguments, option) in cases {
            expectConfigurationError(try forward(bin, server, arguments, in: scratch), naming: option, given: arguments)
        }
        // What matches is forwarded.
        let matching = try forward(bin, server, ["--subject", "shaped", "--stream", "SHAPED", "--dupe-window", "2m"], in: scratch)
        #expect(matching.status == 0, "\(matching.stderr)")
        #expect(try count(bin, server, "SHAPED", in: scratch) == 1)
    }

    @Test("A stream deleted between two runs stops the forwarder (78), and is not made anew until --create-stream is run again")
    func streamDeletedBetweenRuns() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "GONE", subject: "gone", in: scratch)
        let first = try appendLines(10, "first", scratch.queue, in: scratch)
        let drained = try run("host-drain", ["--dir", scratch.queue, "-q", "--exec", forwarder(bin, server, subject: "gone", "--stream GONE")], in: scratch)
        #expect(drained.status == 0, "\(drained.stderr)")
        try expectEachOnce(first, in: "GONE", bin, server, in: scratch)

        let deleted = try run(bin + "/nats-stream-dump", ["--server", server.url, "--stream", "GONE", "--delete"], in: scratch)
        try #require(deleted.status == 0, "\(deleted.stderr)")
        let second = try appendLines(5, "second", scratch.queue, in: scratch)
        let stopped = try forward(bin, server, ["--subject", "gone", "--stream", "GONE"], in: scratch)
        expectConfigurationError(stopped, naming: "--create-stream", given: ["--subject", "--stream"])
        #expect(stopped.stderr.contains("GONE") && stopped.stderr.contains("does not exist"), "\(stopped.stderr)")
        // --create-stream left in the command host-drain runs would make it anew on every batch: it takes no records.
        let inDrain = try run(bin + "/forward-nats", ["--server", server.url, "--subject", "gone", "--create-stream", "GONE"],
                              stdin: #"{"id":"r-1"}"# + "\n", in: scratch)
        #expect(inDrain.status == 64, "\(inDrain.stderr)")
        #expect(inDrain.stderr.contains("--stream GONE"), "\(inDrain.stderr)")
        #expect(try run(bin + "/nats-stream-dump", ["--server", server.url, "--stream", "GONE", "--count"], in: scratch).status != 0)

        // Asked again, it is created again, empty: what it held is gone, and only what is still queued arrives.
        try createStream(bin, server, "GONE", subject: "gone", in: scratch)
        #expect(try count(bin, server, "GONE", in: scratch) == 0)
        let again = try run("host-drain", ["--dir", scratch.queue, "-q", "--exec", forwarder(bin, server, subject: "gone", "--stream GONE")], in: scratch)
        #expect(again.status == 0, "\(again.stderr)")
        try expectEachOnce(second, in: "GONE", bin, server, in: scratch)
    }

    @Test("A stream deleted while a batch is forwarded stops the forwarder (78), not a retry (75)")
    func streamDeletedWhileForwarding() throws {
        let bin = try bin()
        let scratch = TemporaryDirectory()
        let server = try NATSServer(in: scratch)
        try createStream(bin, server, "MIDWAY", subject: "midway", in: scratch)
        let records = scratch.file("records")
        try (1...1000).map { #"{"id":"m-\#($0)"}"# + "\n" }.joined().write(toFile: records, atomically: false, encoding: .utf8)
        // The batch reaches the forwarder in two parts: 100 records, then the rest once the test says so.
        let half = scratch.file("half-sent")
        let go = scratch.file("go-on")
        let command = """
            { head -n 100 '\(records)'; touch '\(half)'; while [ ! -e '\(go)' ]; do sleep 0.01; done; tail -n +101 '\(records)'; } | \
            \(forwarder(bin, server, subject: "midway", "--stream MIDWAY"))
            """
        let forwarding = try RunningTool("/bin/sh", ["-c", command], in: scratch)
        try waitUntil("the first 100 records in the stream") {
            try #require(forwarding.process.isRunning, "forward-nats ended early: \(forwarding.wait().stderr)")
            guard FileManager.default.fileExists(atPath: half) else { return false }
            return try count(bin, server, "MIDWAY", in: scratch) == 100
        }
        let deleted = try run(bin + "/nats-stream-dump", ["--server", server.url, "--stream", "MIDWAY", "--delete"], in: scratch)
        try #require(deleted.status == 0, "\(deleted.stderr)")
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        let stopped = forwarding.wait()
        expectConfigurationError(stopped, naming: "--create-stream", given: ["--subject", "--stream"])
        #expect(stopped.stderr.contains("MIDWAY was deleted while forwarding"), "\(stopped.stderr)")
    }

    /// Whether a process is gone, or a zombie nobody has reaped yet (an orphan's parent is init).
    static func hasEnded(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[close...].dropFirst(2).first == "Z"
    }
}
