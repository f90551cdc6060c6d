import Foundation
import Testing

/// `host-drain --watch`, running as a separate process.
@Suite("Watch mode", .serialized, .runTimeLimit(minutes: 3))
struct WatchTests {
    /// CPU seconds a process has used, from /proc.
    static func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        return (Double(fields[11])! + Double(fields[12])!) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func lineCount(_ path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    /// A watcher delivering to the file `out` through `cat`, once it has delivered a first record.
    static func watcherPastItsFirstRecord(_ queue: TestQueue, _ scratch: TemporaryDirectory, out: String) throws -> RunningTool {
        try queue.append(["first"])
        let watcher = try RunningTool("host-drain", ["--dir", queue.path, "--watch", "--exec", "cat >> '\(out)'"], in: scratch)
        try waitUntil("the first record") { lineCount(out) == 1 }
        return watcher
    }

    /// A watcher writing to the pipe `output`, as `host-drain --watch | reader` runs it.
    static func watcher(of queue: TestQueue, writingTo output: Pipe) throws -> Process {
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Executables.path("host-drain"))
        watcher.arguments = ["--dir", queue.path, "--watch"]
        watcher.standardOutput = output.fileHandleForWriting
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        return watcher
    }

    @Test("Delivers each record soon after its producer exits, idles without using the CPU, and stops cleanly on SIGTERM")
    func deliversPromptlyAndIdles() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        try queue.append(["before"])
        let watcher = try RunningTool("host-drain", ["--dir", queue.path, "--watch", "--exec", "cat >> '\(out)'"], in: scratch)
        defer { watcher.kill() }
        try waitUntil("the waiting record") { Self.lineCount(out) == 1 }
        var delays: [Double] = []
        for i in 1...20 {
            try queue.append(["record \(i)"])
            let exited = Date()
            try waitUntil("record \(i)") { Self.lineCount(out) == i + 1 }
            delays.append(Date().timeIntervalSince(exited))
        }
        delays.sort()
        let median = delays[delays.count / 2]
        #expect(median < 0.25, "median delay \(median) s")  // typically a few ms; generous for a loaded machine
        let cpuBefore = try Self.cpuSeconds(watcher.pid)
        usleep(1_500_000)
        let idle = try Self.cpuSeconds(watcher.pid) - cpuBefore
        #expect(idle < 0.05, "used \(idle) s of CPU while idle")
        kill(watcher.pid, SIGTERM)
        #expect(watcher.wait().status == 0)
    }

    @Test("Writes to other files that overflow the kernel's queue of events do not hide a record from the watcher",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/sys/fs/inotify/max_queued_events")))
    func eventQueueOverflow() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let watcher = try Self.watcherPastItsFirstRecord(queue, scratch, out: out)
        defer { watcher.kill() }
        // Stopped while it waits for events, so that they pile up unread.
        try waitUntil("the watcher waiting") { (try? String(contentsOfFile: "/proc/\(watcher.pid)/wchan", encoding: .utf8))?.contains("poll") == true }
        kill(watcher.pid, SIGSTOP)
        // More events than the queue holds, to two files in turn (the kernel merges repeats of the last event);
        // the record's write then finds the queue full.
        let limit = Int(try String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 16_384
        let files = [open(queue.file("other-a"), O_WRONLY | O_CREAT, 0o600), open(queue.file("other-b"), O_WRONLY | O_CREAT, 0o600)]
        for index in 0...(limit + 100) { _ = write(files[index % 2], "x", 1) }
        files.forEach { _ = close($0) }
        try queue.append(["second"])
        kill(watcher.pid, SIGCONT)
        try waitUntil("the second record", seconds: 20) { Self.lineCount(out) == 2 }
        kill(watcher.pid, SIGTERM)
        #expect(watcher.wait().status == 0)
    }

    @Test("A watcher whose standard output no one reads any more ends, 75, rather than try again for good; the record stays queued")
    func readerOfStandardOutputGone() throws {
        let queue = TestQueue()
        let output = Pipe()
        try output.fileHandleForReading.close()
        let watcher = try Self.watcher(of: queue, writingTo: output)
        defer { kill(watcher.processIdentifier, SIGKILL) }
        let appended = try queue.append(["one"]).lines
        try waitUntil("the watcher to end") { !watcher.isRunning }
        #expect(watcher.terminationStatus == 75)
        #expect(try ids(in: try queue.drain().stdout) == appended)
    }

    @Test("SIGTERM stops a watcher whose standard output is not being read: exit 0, the batch stays queued")
    func stoppedWhileOutputIsFull() throws {
        let queue = TestQueue()
        let output = Pipe()
        let watcher = try Self.watcher(of: queue, writingTo: output)
        defer { kill(watcher.processIdentifier, SIGKILL) }
        // More than a pipe holds, so that the watcher waits for a reader that never reads.
        let appended = try queue.append([], stdin: String(repeating: "x", count: 200_000)).lines
        let reader = output.fileHandleForReading.fileDescriptor
        try waitUntil("the pipe full") {
            var waiting: Int32 = 0
            return ioctl(reader, UInt(FIONREAD), &waiting) == 0 && waiting >= 60_000
        }
        kill(watcher.processIdentifier, SIGTERM)
        try waitUntil("the watcher to end", seconds: 10) { !watcher.isRunning }
        #expect(watcher.terminationStatus == 0)
        #expect(try ids(in: try queue.drain().stdout) == appended)
    }

    @Test("A watcher reads the format marker again before each drain: a queue marked with a newer format since is not touched, 78")
    func markerChangedWhileWatching() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let watcher = try Self.watcherPastItsFirstRecord(queue, scratch, out: out)
        defer { watcher.kill() }
        // Stopped meanwhile, so that the record and the new marker are both there when it looks.
        kill(watcher.pid, SIGSTOP)
        try queue.append(["second"])
        try Data("ShareQueue queue format 2\n".utf8).write(to: URL(fileURLWithPath: queue.file("format")))
        kill(watcher.pid, SIGCONT)
        let result = watcher.wait()
        #expect(result.status == 78 && result.stderr.contains("newer than"), "\(result.stderr)")
        #expect(Self.lineCount(out) == 1)
    }

    @Test("A burst of 500 separate share-append processes becomes at most one delivery per debounce window")
    func burstCoalesces() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let deliveries = scratch.file("deliveries")
        let watcher = try RunningTool("host-drain", ["--dir", queue.path, "--watch", "--batch", "1000", "--debounce", "100ms",
                                                    "--exec", "echo x >> '\(deliveries)'; cat >> '\(out)'"], in: scratch)
        defer { watcher.kill() }
        _ = try queue.append(["warm-up"])
        try waitUntil("the warm-up record") { Self.lineCount(out) == 1 }
        let start = Date()
        let burst = Process()
        burst.executableURL = URL(fileURLWithPath: "/bin/sh")
        burst.arguments = ["-c", "i=1; while [ $i -le 500 ]; do \"$0\" --dir \"$1\" -q \"burst $i\" || exit 1; i=$((i+1)); done",
                           Executables.path("share-append"), queue.path]
        try burst.run()
        burst.waitUntilExit()
        #expect(burst.terminationStatus == 0)
        let seconds = Date().timeIntervalSince(start)
        try waitUntil("all 501 records") { Self.lineCount(out) == 501 }
        let count = Self.lineCount(deliveries) - 1
        // At most one delivery per 100 ms of the burst, plus the first and the last: how many that is
        // depends on how fast processes start here (a debug build, or a sanitizer, starts them slower).
        #expect(count <= Int(seconds / 0.1) + 3, "\(count) deliveries in \(seconds) s")
        #expect(count < 500, "\(count) deliveries: one a record")
        kill(watcher.pid, SIGINT)
        #expect(watcher.wait().status == 0)
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))).count == 501)
    }

    // A command is ended instead (see ExecTimeoutTests): it may hang, and must not outlive the drain.
    @Test("SIGTERM in the middle of a slow batch finishes it, records the checkpoint, and exits 0", arguments: ["--store", "stdout"])
    func stopsAfterTheBatchInHand(_ sink: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let appended = try queue.appendLines((1...30).map { "r\($0)" })
        var arguments = ["--dir", queue.path, "--watch", "--batch", "10"]
        switch sink {
        case "--store": arguments += ["--store", scratch.file("inbox.sqlite")]
        default: break
        }
        let watcher = try RunningTool("host-drain", arguments, in: scratch, outputFile: sink == "stdout" ? out : nil)
        defer { watcher.kill() }
        try waitUntil("the records to be delivered") {
            sink == "--store" ? (try? sqlite(scratch.file("inbox.sqlite"), "SELECT count(*) FROM records")) == ["30"] : Self.lineCount(out) == 30
        }
        kill(watcher.pid, SIGTERM)
        #expect(watcher.wait().status == 0)
        let pending = try queue.status()["pending"] as! Int
        let delivered = sink == "--store" ? Int(try sqlite(scratch.file("inbox.sqlite"), "SELECT count(*) FROM records")[0])! : Self.lineCount(out)
        // The batch in hand was finished and recorded: what was delivered is no longer pending.
        #expect(delivered >= 10)
        #expect(delivered + pending == appended.count, "delivered \(delivered), pending \(pending)")
    }
}
