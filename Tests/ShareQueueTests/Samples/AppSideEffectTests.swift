import Foundation
import Testing

/// What the library does to an app's process: nothing but its own work. Built as an app
/// builds it (the `TestHooks` trait off), the sample reads no test hook from the
/// environment, and a lock wait installs no signal handler and arms no timer.
@Suite("The library in an app's process", .serialized)
struct AppSideEffectTests {
    /// Every variable the tools' test hooks read, each set to what would crash, stop, fail, trace or mutate a process that read it.
    static let hooks = [
        "SHARE_QUEUE_CRASH_AT": "append-locked", "SHARE_QUEUE_STOP_AT": "append-written", "SHARE_QUEUE_FAULT": "write:EIO",
        "SHARE_QUEUE_SKIP_SYNC": "append-record", "SHARE_QUEUE_MUTANT": "checkpoint-before-delivery",
    ]

    @Test("An app with every test hook's variable set appends and drains as without them, and writes no trace")
    func hooksAreNotCompiledIn() throws {
        let bin = try SharingAppTests.built.get()
        let scratch = TemporaryDirectory()
        var environment = Self.hooks
        environment["SHARE_QUEUE_TRACE"] = scratch.file("trace")
        let shared = try run(bin + "/ShareExtension", ["--dir", scratch.queue, "link", "https://swift.org/", "Swift"], environment: environment, in: scratch)
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(shared.lines.count == 1)
        let drained = try run(bin + "/HostApp", ["--dir", scratch.queue, "--store", scratch.file("links.json")], environment: environment, in: scratch)
        #expect(drained.status == 0, "\(drained.stderr)")
        #expect(drained.output.hasPrefix("HostApp: 1 delivered, 1 new links, 1 stored"), "\(drained.output)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("trace")))
        // The tools the tests run are built with the trait: the same variable does crash them.
        let crashed = try run("share-append", ["--dir", scratch.queue, "x"], environment: ["SHARE_QUEUE_CRASH_AT": "append-locked"], in: scratch)
        #expect(crashed.status == 128 + SIGKILL)
    }

    /// The signal calls `strace` saw while `program` appended to a queue whose producers' lock another process held.
    func signalCallsOfContendedAppend(_ program: String, _ arguments: [String], queue: String, in scratch: TemporaryDirectory) throws -> [String] {
        let strace = try #require(OptionalProgram.required("strace"))
        let holder = try RunningTool("/usr/bin/flock", [queue + "/append.lock", "/bin/sh", "-c", "echo held; sleep 0.5"], in: scratch)
        try waitUntil("the lock is held") { try run("/usr/bin/flock", ["-n", queue + "/append.lock", "true"], in: scratch).status != 0 }
        let log = scratch.file("strace-\(UUID().uuidString)")
        let traced = try run(strace, ["-f", "-o", log, "-e", "trace=rt_sigaction,timer_create,timer_settime", program] + arguments, environment: tracedEnvironment, in: scratch)
        #expect(traced.status == 0, "\(traced.stderr)")
        #expect(holder.wait().status == 0)
        return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
            .filter { $0.contains("SIGURG") || $0.contains("timer_") }
    }

    @Test("An append that waits for another process's lock installs no signal handler and arms no timer in an app; the tools do, by choice",
          OptionalProgram.needs("strace"), OptionalProgram.needs("flock"))
    func lockWaitTouchesNoSignal() throws {
        let bin = try SharingAppTests.built.get()
        let scratch = TemporaryDirectory()
        let first = try run(bin + "/ShareExtension", ["--dir", scratch.queue, "link", "https://swift.org/", "first"], in: scratch)
        #expect(first.status == 0, "\(first.stderr)")
        let app = try signalCallsOfContendedAppend(bin + "/ShareExtension", ["--dir", scratch.queue, "link", "https://swift.org/", "waited"], queue: scratch.queue, in: scratch)
        #expect(app.isEmpty, "\(app)")
        let tool = try signalCallsOfContendedAppend(Executables.path("share-append"), ["--dir", scratch.queue, "waited too"], queue: scratch.queue, in: scratch)
        #expect(tool.contains { $0.contains("rt_sigaction(SIGURG") }, "\(tool)")
    }
}
