import Foundation
import Testing

/// `--exec` commands have a deadline, and end with the drain that started them.
@Suite("Command deadlines")
struct ExecTimeoutTests {
    /// A command that hangs in a grandchild, after writing that grandchild's pid to `pidFile`.
    static func hangingCommand(_ pidFile: String) -> String {
        "sleep 1000 & echo $! > '\(pidFile)'.tmp; mv '\(pidFile)'.tmp '\(pidFile)'; wait"
    }

    /// Whether `pid` is a live process (a zombie waiting for a reaper is not).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }

    static func readPID(_ path: String) throws -> Int32 {
        try waitUntil("the command to start") { FileManager.default.fileExists(atPath: path) }
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return try #require(Int32(text))
    }

    static func pending(_ queue: TestQueue) throws -> Int {
        try #require(try queue.status()["pending"] as? Int)
    }

    /// Waits for `tool` to exit, for at most `seconds`; kills it and fails after that.
    static func finish(_ tool: RunningTool, within seconds: Double) throws -> ProcessResult {
        do { try waitUntil("the drain to exit", seconds: seconds) { !tool.process.isRunning } } catch {
            tool.kill()
            throw error
        }
        return tool.wait()
    }

    @Test("A command past --exec-timeout is ended, group and all, and counts as try again, not as a refusal")
    func timeout() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let appended = try queue.appendLines(["a", "b"])
        let pidFile = scratch.file("pid")
        let drain = try RunningTool("host-drain", ["--dir", queue.path, "--max-attempts", "1", "--exec-timeout", "1s", "--exec", Self.hangingCommand(pidFile)], in: scratch)
        defer { drain.kill() }
        let sleeper = try Self.readPID(pidFile)
        let result = try Self.finish(drain, within: 15)
        #expect(result.status == 75)
        #expect(result.stderr.contains("1s"), "\(result.stderr)")
        try waitUntil("the command's group to end", seconds: 5) { !Self.isRunning(sleeper) }
        #expect(try Self.pending(queue) == 2)
        #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
        #expect(!FileManager.default.fileExists(atPath: queue.file("attempts")))
        let out = scratch.file("out")
        #expect(try queue.drain(["--exec", "cat > '\(out)'"]).status == 0)
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == appended)
    }

    @Test("SIGTERM or SIGINT to a drain ends its command's group, leaves the batch queued, and exits within seconds",
          arguments: [("one-shot", SIGTERM), ("one-shot", SIGINT), ("--watch", SIGTERM), ("--watch", SIGINT)])
    func stopEndsCommand(_ mode: String, _ signal: Int32) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["--lines"], stdin: "a\nb\n")
        let pidFile = scratch.file("pid")
        var arguments = ["--dir", queue.path, "--exec", Self.hangingCommand(pidFile)]
        if mode == "--watch" { arguments.append("--watch") }
        let drain = try RunningTool("host-drain", arguments, in: scratch)
        defer { drain.kill() }
        let sleeper = try Self.readPID(pidFile)
        kill(drain.pid, signal)
        let result = try Self.finish(drain, within: 10)
        #expect(result.status == (mode == "--watch" ? 0 : 75), "\(result.stderr)")
        try waitUntil("the command's group to end", seconds: 5) { !Self.isRunning(sleeper) }
        #expect(try Self.pending(queue) == 2)
        #expect(!FileManager.default.fileExists(atPath: queue.file("attempts")))
    }

    @Test("An empty --exec is a usage error that leaves the queue as it was", arguments: ["", "  "])
    func emptyCommand(_ command: String) throws {
        let queue = TestQueue()
        try queue.append(["x"])
        let before = snapshot(queue.path)
        let result = try queue.drain(["--exec", command])
        #expect(result.status == 64)
        #expect(snapshot(queue.path) == before)
    }

    @Test("--exec-timeout takes 30s, 10m, 1h, plain seconds and 0 (none); anything else is a usage error")
    func durations() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("out")
        for text in ["30s", "10m", "1h", "2.5", "0", "500ms"] {
            try queue.append([text])
            let result = try queue.drain(["--exec-timeout", text, "--exec", "cat >> '\(out)'"])
            #expect(result.status == 0, "\(text): \(result.stderr)")
        }
        for text in ["", "-1s", "1x", "s", "ten"] {
            #expect(try queue.drain(["--exec-timeout", text, "--exec", "cat"]).status == 64, "\(text)")
        }
        #expect(try queue.drain(["--exec-timeout", "1s"]).status == 64)
    }
}
