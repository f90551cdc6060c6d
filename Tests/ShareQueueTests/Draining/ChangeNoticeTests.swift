import Foundation
import Testing
import ShareQueue
import ShareQueueSystem

/// `QueueDirectory.changes()`: notices of appends by other processes, how a burst is
/// coalesced, and what cancelling the consumer releases.
@Suite("Change notices", .serialized, .runTimeLimit(minutes: 10))
struct ChangeNoticeTests {
    let scratch = TemporaryDirectory()

    /// The error of the guide's store, which its loop catches by type.
    struct StoreOffline: Error {}

    /// A sink that keeps the ids it is given, in order.
    struct IDSink: DrainSink, Sendable {
        var ids: [String] = []
        mutating func deliver(_ batch: DrainBatch) throws { ids += batch.records.map(\.id) }
    }

    /// A host's model, as the guide (Documentation/Library.md) shows it: it drains on launch,
    /// on becoming active, and on every change notice while it runs.
    @MainActor final class InboxModel {
        let queue: QueueDirectory
        let drainer: QueueDrainer
        private(set) var ids: [String] = []

        init(queue: QueueDirectory) throws {
            self.queue = queue
            drainer = try QueueDrainer(directory: queue)
        }

        func refresh() async throws -> DrainSummary {
            var inbox = IDSink()
            let summary = try await drainer.drain(into: &inbox)
            ids += inbox.ids
            return summary
        }

        // The guide's loop, word for word.
        func drainWhileRunning(_ queue: QueueDirectory) async throws {
            for await _ in try queue.changes() {
                do {
                    _ = try await refresh()
                } catch ShareQueueError.busy {
                    // Another drain holds the queue: nothing was lost; the next notice retries.
                } catch is StoreOffline {
                    // The store's own error, as it threw it: the batch stays queued; the next notice retries.
                }
            }
        }
    }

    /// When a tool ended, and its exit status.
    struct ToolRun {
        let status: Int32
        let started: ContinuousClock.Instant
        let ended: ContinuousClock.Instant
        let stdout: Data
    }

    /// Runs a tool to its end without holding a thread of the test while it runs.
    static func run(_ tool: String, _ arguments: [String], stdin: Data? = nil, in scratch: TemporaryDirectory) async throws -> ToolRun {
        let id = UUID().uuidString
        let outPath = scratch.file("out-\(id)")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Executables.path(tool))
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = FileHandle.nullDevice
        if let stdin {
            let inPath = scratch.file("in-\(id)")
            _ = FileManager.default.createFile(atPath: inPath, contents: stdin)
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        let ended = Collected<ContinuousClock.Instant>()
        let started = ContinuousClock.now
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in
                ended.add([ContinuousClock.now])
                continuation.resume(returning: process.terminationStatus)
            }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        return ToolRun(status: status, started: started, ended: ended.values[0], stdout: FileManager.default.contents(atPath: outPath) ?? Data())
    }

    /// Waits, without holding a thread, until `condition` holds; fails after `seconds`.
    /// Long bounds: a task of this process may wait minutes for a thread while other suites' blocking tests hold them all.
    static func waitUntil(_ what: String, seconds: Double = 120, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while await !condition() {
            if ContinuousClock.now > deadline { throw WaitTimeout(what: what) }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Counts the notices of `changes` and drains `queue` after each, into `drained`.
    static func drainOnNotices(_ changes: QueueChanges, _ queue: QueueDirectory, notices: Collected<ContinuousClock.Instant>,
                               drained: Collected<String>) -> Task<Void, any Error> {
        Task {
            let drainer = try QueueDrainer(directory: queue)
            for await _ in changes {
                notices.add([ContinuousClock.now])
                var sink = IDSink()
                try await drainer.drain(into: &sink)
                drained.add(sink.ids)
            }
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The notices `share-stress notices` prints as it takes them, read on a thread of their own.
    final class NoticeTimes: @unchecked Sendable {
        private let lock = NSLock()
        private var times: [Double] = []
        var values: [Double] { lock.withLock { times } }
        func add(_ time: Double) { lock.withLock { times.append(time) } }
    }

    // Waited for in a process of its own: this one's threads are busy with other suites' blocking tests,
    // which would delay the task that awaits the notices, not the notices.
    @Test("A notice comes within 100 ms of an append by another process, after a quiet spell")
    func promptNotice() throws {
        let path = scratch.file("queue")
        _ = try QueueDirectory(path: path)
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Executables.path("share-stress"))
        watcher.arguments = ["notices", path, "11"]
        let pipe = Pipe()
        watcher.standardOutput = pipe
        try watcher.run()
        defer { if watcher.isRunning { watcher.terminate() } }
        let notices = NoticeTimes()
        let reading = Thread {
            var pending = Data()
            while true {
                let data = pipe.fileHandleForReading.availableData
                if data.isEmpty { return }
                pending.append(data)
                while let end = pending.firstIndex(of: 0x0A) {
                    if let time = Double(String(decoding: pending[pending.startIndex..<end], as: UTF8.self)) { notices.add(time) }
                    pending = pending[(end + 1)...]
                }
            }
        }
        reading.start()
        try ShareQueueTests.waitUntil("the first notice") { notices.values.count == 1 }
        var afterExit: [Double] = [], afterStart: [Double] = []
        for i in 1...10 {
            // A quiet spell longer than the interval between notices: the next one goes at once.
            Thread.sleep(forTimeInterval: 0.15)
            let before = notices.values.count
            let started = Host.monotonicSeconds()
            let appended = try ShareQueueTests.run("share-append", ["--dir", path, "-q", "record \(i)"], in: scratch)
            let ended = Host.monotonicSeconds()
            #expect(appended.status == 0)
            try ShareQueueTests.waitUntil("the notice of record \(i)", seconds: 5) { notices.values.count > before }
            let noticed = notices.values[before]
            afterExit.append(noticed - ended)
            afterStart.append(noticed - started)
        }
        watcher.waitUntilExit()
        #expect(watcher.terminationStatus == 0)
        afterExit.sort()
        afterStart.sort()
        func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
        print("notice after the producer's exit: median \(milliseconds(afterExit[5])), worst \(milliseconds(afterExit[9])); "
              + "after its start: median \(milliseconds(afterStart[5])), worst \(milliseconds(afterStart[9]))")
        // After the exit, every time (negative when the notice came before this process saw the producer end);
        // after the start, which bounds the time from the append itself, in the median.
        #expect(afterExit[9] < 0.1 * Double(sanitizerAllowance), "worst \(afterExit[9]) s after the producer's exit")
        #expect(afterStart[5] < 0.1 * Double(sanitizerAllowance), "median \(afterStart[5]) s after the producer's start")
    }

    @Test("1,000 lines from share-append --lines come as a few notices, and the drains after them deliver all 1,000")
    func burstOfLines() async throws {
        let path = scratch.file("queue")
        let queue = try QueueDirectory(path: path)
        let notices = Collected<ContinuousClock.Instant>(), drained = Collected<String>()
        let consumer = Self.drainOnNotices(try queue.changes(), queue, notices: notices, drained: drained)
        defer { consumer.cancel() }
        try await Self.waitUntil("the first notice") { notices.values.count == 1 }
        let lines = (1...1000).map { "line \($0)\n" }.joined()
        let appended = try await Self.run("share-append", ["--dir", path, "--lines"], stdin: Data(lines.utf8), in: scratch)
        #expect(appended.status == 0)
        let ids = String(decoding: appended.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(ids.count == 1000)
        try await Self.waitUntil("all 1,000 records drained", seconds: 120) { drained.values.count >= 1000 }
        // Any notice still to come is at most one interval away.
        try await Task.sleep(for: .milliseconds(300))
        consumer.cancel()
        _ = await consumer.result
        let count = notices.values.count - 1
        print("1,000 lines: \(count) notices")
        #expect(count >= 1 && count < 50, "\(count) notices")
        #expect(drained.values == ids)
    }

    @Test("1,000 appends by separate share-append processes come as at most one notice per 100 ms, and all 1,000 are drained")
    func burstOfProcesses() async throws {
        let path = scratch.file("queue")
        let queue = try QueueDirectory(path: path)
        let notices = Collected<ContinuousClock.Instant>(), drained = Collected<String>()
        let consumer = Self.drainOnNotices(try queue.changes(), queue, notices: notices, drained: drained)
        defer { consumer.cancel() }
        try await Self.waitUntil("the first notice") { notices.values.count == 1 }
        let loop = "i=1; while [ $i -le 1000 ]; do \"$0\" --dir \"$1\" -q --no-sync \"burst $i\" || exit 1; i=$((i+1)); done"
        let burst = try await Self.run("/bin/sh", ["-c", loop, Executables.path("share-append"), path], in: scratch)
        #expect(burst.status == 0)
        let seconds = Self.seconds(burst.ended - burst.started)
        try await Self.waitUntil("all 1,000 records drained", seconds: 120) { drained.values.count >= 1000 }
        try await Task.sleep(for: .milliseconds(300))
        consumer.cancel()
        _ = await consumer.result
        let count = notices.values.count - 1
        print("1,000 processes in \(String(format: "%.1f", seconds)) s: \(count) notices")
        // At most one per 100 ms of the burst, plus the first and the last.
        #expect(count >= 1 && count <= Int(seconds / 0.1) + 3, "\(count) notices in \(seconds) s")
        #expect(drained.values.count == 1000 && Set(drained.values).count == 1000)
    }

    @Test("The guide's loop drains what was queued before it began and what arrives while it runs, until its task is cancelled")
    func guideLoop() async throws {
        let path = scratch.file("queue")
        let queue = try QueueDirectory(path: path)
        let before = try await Self.run("share-append", ["--dir", path, "before"], in: scratch)
        let model = try await InboxModel(queue: queue)
        let running = Task { try await model.drainWhileRunning(queue) }
        try await Self.waitUntil("the record queued before") { await model.ids.count == 1 }
        let after = try await Self.run("share-append", ["--dir", path, "after"], in: scratch)
        try await Self.waitUntil("the record appended while it runs") { await model.ids.count == 2 }
        running.cancel()
        try await running.value
        let ids = String(decoding: before.stdout + after.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(await model.ids == ids)
    }

    @Test("Sixteen consumers waiting at once hold no thread of the cooperative pool: other tasks run, and each consumer gets the notice of an append")
    func waitingHoldsNoThread() async throws {
        let path = scratch.file("queue")
        let queue = try QueueDirectory(path: path)
        let notices = Collected<Int>()
        var consumers: [Task<Void, Never>] = []
        for index in 0..<16 {
            let changes = try queue.changes()
            consumers.append(Task {
                for await _ in changes { notices.add([index]) }
            })
        }
        defer { consumers.forEach { $0.cancel() } }
        try await Self.waitUntil("every first notice") { notices.values.count == 16 }
        // More waiting consumers than the pool has threads: were one held by each, this would never run.
        let other = Task { 42 }
        #expect(await other.value == 42)
        let appended = try await Self.run("share-append", ["--dir", path, "-q", "one"], in: scratch)
        #expect(appended.status == 0)
        try await Self.waitUntil("every consumer's notice") {
            (0..<16).allSatisfy { index in notices.values.filter { $0 == index }.count >= 2 }
        }
    }

    @Test("Watching a queue whose directory is gone throws, naming it")
    func directoryGone() throws {
        let path = scratch.file("queue")
        let queue = try QueueDirectory(path: path)
        try FileManager.default.moveItem(atPath: path, toPath: scratch.file("moved"))
        #expect {
            _ = try queue.changes()
        } throws: { error in
            (error as? ShareQueueError)?.path == path && (error as? ShareQueueError)?.code == .ioError
        }
    }

    /// What every signal is set to do in this process: its handler's address (or SIG_DFL, SIG_IGN) and flags.
    static func signalDispositions() -> [String] {
        (1..<32).map { number in
            var action = sigaction()
            _ = sigaction(Int32(number), nil, &action)
            #if os(Linux)
            let handler = withUnsafeBytes(of: &action.__sigaction_handler) { $0.load(as: UInt.self) }
            #else
            let handler = withUnsafeBytes(of: &action.__sigaction_u) { $0.load(as: UInt.self) }
            #endif
            return "\(number): \(handler) \(action.sa_flags)"
        }
    }

    @Test("Watching installs no signal handler")
    func noSignalHandler() async throws {
        let path = scratch.file("queue")
        let queue = try QueueDirectory(path: path)
        let before = Self.signalDispositions()
        let notices = Collected<Int>()
        let consumer = Task { for await _ in try queue.changes() { notices.add([1]) } }
        try await Self.waitUntil("the first notice") { notices.values.count == 1 }
        #expect(try await Self.run("share-append", ["--dir", path, "-q", "one"], in: scratch).status == 0)
        try await Self.waitUntil("the notice of the append") { notices.values.count == 2 }
        consumer.cancel()
        try await consumer.value
        #expect(Self.signalDispositions() == before)
    }

    #if os(Linux)
    /// The descriptors this process has open, by number, with what each is.
    static func openDescriptors() -> [String: String] {
        var open: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            open[name] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? "?"
        }
        return open
    }

    static func inotifyCount() -> Int { openDescriptors().values.filter { $0.contains("inotify") }.count }

    @Test("Cancelling the consuming task ends the sequence and closes the watch's descriptor before the loop ends")
    func cancellationReleases() async throws {
        let queue = try QueueDirectory(path: scratch.file("queue"))
        // Dispatch opens descriptors of its own the first time a source is used, and keeps them.
        let warmUp = Task { for await _ in try queue.changes() { break } }
        try await warmUp.value
        try await Self.waitUntil("the warm-up released") { Self.inotifyCount() == 0 }
        // Other suites open and close descriptors meanwhile: a cycle that leaks one never counts the same,
        // so one of a few cycles counting the same shows that none leaks.
        var counts: [(before: Int, after: Int)] = []
        for _ in 1...5 {
            let before = Self.openDescriptors().count
            let changes = try queue.changes()
            #expect(Self.inotifyCount() == 1)
            let notices = Collected<Int>()
            let consumer = Task { () -> Int in
                var count = 0
                for await _ in changes { count += 1; notices.add([count]) }
                return count
            }
            try await Self.waitUntil("the first notice") { notices.values.count == 1 }
            consumer.cancel()
            #expect(await consumer.value == 1)
            // At once: iteration ends only once the watch is released.
            #expect(Self.inotifyCount() == 0)
            counts.append((before, Self.openDescriptors().count))
            if counts.last!.before == counts.last!.after { break }
        }
        print("descriptors before and after: \(counts.map { "\($0.before) and \($0.after)" }.joined(separator: ", "))")
        #expect(counts.contains { $0.before == $0.after }, "\(counts)")
    }

    @Test("A sequence dropped without being iterated, or left by break, closes its descriptor")
    func droppedReleases() async throws {
        let queue = try QueueDirectory(path: scratch.file("queue"))
        do {
            let changes = try queue.changes()
            _ = changes
            #expect(Self.inotifyCount() == 1)
        }
        try await Self.waitUntil("the dropped sequence released") { Self.inotifyCount() == 0 }
        for await _ in try queue.changes() { break }
        try await Self.waitUntil("the sequence left by break released") { Self.inotifyCount() == 0 }
    }
    #endif
}

