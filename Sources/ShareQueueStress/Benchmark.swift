import Foundation
import ShareQueue
import ShareQueueStore
import ShareQueueSystem
import ToolSupport

/// `share-stress bench`: ShareQueue's speed, each figure measured side by side
/// with the physical floor (`share-floor`, in C) in the same run and quoted as
/// a ratio, because absolute times on shared machines drift.
struct Benchmark {
    /// One figure of the table.
    struct Figure {
        let name: String
        let unit: String
        let value: Double
        let floor: Double?
        /// What the ratio is to meet, in the direction that is better.
        let target: String
        /// Whether a larger ratio is better (throughput) or worse (latency, memory).
        var higherIsBetter = true

        var ratio: Double? { floor.map { $0 == 0 ? 0 : value / $0 } }
    }

    /// The sizes of a run: the full one, or `--quick` to keep it working in CI.
    struct Sizes {
        var libraryAppends = 100_000
        var durableAppends = 2_000
        var processRuns = 300
        var drainRecords = 1_000_000
        var smallDrainRecords = 10_000
        var appendsDuringDrain = 300
        var watchRuns = 200

        static let quick = Sizes(libraryAppends: 10_000, durableAppends: 200, processRuns: 30, drainRecords: 20_000,
                                 smallDrainRecords: 2_000, appendsDuringDrain: 30, watchRuns: 20)
    }

    let tools: ToolRunner
    let directory: String
    let sizes: Sizes
    let progress: (String) -> Void
    /// About 100 bytes stored, like a shared URL or note.
    static let sampleText = "https://example.com/a/shared/page"

    func run() throws -> [Figure] {
        var figures: [Figure] = []
        progress("library appends")
        figures.append(try libraryAppends())
        progress("durable appends")
        figures += try durableAppends()
        progress("process latency")
        let (appendFigures, idleP99) = try processLatency()
        figures += appendFigures
        progress("drains")
        figures += try drains(idleP99: idleP99)
        progress("watch")
        figures += try watchDelay()
        return figures
    }

    // MARK: Figures

    private func libraryAppends() throws -> Figure {
        let queue = try freshQueue("library")
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: queue, options: options)
        let draft = RecordDraft(.text(Self.sampleText), source: "bench")
        let start = Host.monotonicSeconds()
        for _ in 0..<sizes.libraryAppends { try appender.append(draft) }
        let rate = Double(sizes.libraryAppends) / (Host.monotonicSeconds() - start)
        let floor = try floorRate(["append", scratch("floor-library"), String(sizes.libraryAppends)])
        return Figure(name: "library append, no fsync", unit: "records/s", value: rate, floor: floor, target: ">= 0.30")
    }

    private func durableAppends() throws -> [Figure] {
        let count = sizes.durableAppends
        let queue = try freshQueue("durable")
        let appender = try QueueAppender(directory: queue)
        let draft = RecordDraft(.text(Self.sampleText), source: "bench")
        var start = Host.monotonicSeconds()
        for _ in 0..<count { try appender.append(draft) }
        let one = Double(count) / (Host.monotonicSeconds() - start)
        let sqliteOne = Double(count) / (try SQLiteBenchmark.durableInserts(path: scratch("sqlite-1.db"), count: count, payload: Self.samplePayload))
        let floorOne = try floorRate(["append", scratch("floor-durable"), String(count), "sync"])

        // Eight processes at once, each appending its share.
        let eightQueue = try freshQueue("durable-8").path
        let tools = self.tools
        start = Host.monotonicSeconds()
        try concurrently(8) { _ in
            try tools.run("share-stress", ["bench-append", "--dir", eightQueue, "--count", String(count / 8)])
        }
        let eight = Double(count / 8 * 8) / (Host.monotonicSeconds() - start)
        let sqlitePath = scratch("sqlite-8.db")
        start = Host.monotonicSeconds()
        try concurrently(8) { _ in
            try tools.run("share-stress", ["bench-sqlite", "--db", sqlitePath, "--count", String(count / 8)])
        }
        let sqliteEight = Double(count / 8 * 8) / (Host.monotonicSeconds() - start)
        return [
            Figure(name: "durable append, 1 producer (vs SQLite WAL FULL)", unit: "records/s", value: one, floor: sqliteOne, target: ">= 1.0, aim 1.3"),
            Figure(name: "durable append, 1 producer (vs floor fdatasync)", unit: "records/s", value: one, floor: floorOne, target: "-"),
            Figure(name: "durable append, 8 producers (vs 1 producer)", unit: "records/s", value: eight, floor: one, target: ">= 2.0"),
            Figure(name: "durable append, 8 producers (vs SQLite, 8 processes)", unit: "records/s", value: eight, floor: sqliteEight, target: "-"),
        ]
    }

    /// What a record of `sampleText` looks like stored, for SQLite to store too.
    static var samplePayload: String {
        "{\"v\":1,\"id\":\"\(UUID().uuidString)\",\"date\":\"\(Timestamp.now())\",\"source\":\"bench\",\"kind\":\"text\",\"text\":\"\(sampleText)\"}"
    }

    /// Whole-process latency of share-append next to the floor's one-record process.
    private func processLatency() throws -> ([Figure], idleP99: Double) {
        let queue = try freshQueue("process").path
        let floorFile = scratch("floor-process")
        var ours: [Double] = []
        var durable: [Double] = []
        var floor: [Double] = []
        for i in 0..<sizes.processRuns {
            // Interleaved, so that drift in the machine's speed touches both alike.
            ours.append(try timed("share-append", ["--dir", queue, "-q", "--no-sync", "process \(i)"]))
            floor.append(try timed("share-floor", ["append1", floorFile]))
            durable.append(try timed("share-append", ["--dir", queue, "-q", "durable \(i)"]))
        }
        let figures = [
            Figure(name: "share-append process, median (vs C append1)", unit: "ms", value: percentile(ours, 0.5) * 1000,
                   floor: percentile(floor, 0.5) * 1000, target: "<= 3.0", higherIsBetter: false),
            Figure(name: "share-append process, p99 (vs C append1)", unit: "ms", value: percentile(ours, 0.99) * 1000,
                   floor: percentile(floor, 0.99) * 1000, target: "-", higherIsBetter: false),
            Figure(name: "share-append process with fsync, median", unit: "ms", value: percentile(durable, 0.5) * 1000,
                   floor: percentile(floor, 0.5) * 1000, target: "-", higherIsBetter: false),
        ]
        return (figures, percentile(ours, 0.99))
    }

    private func drains(idleP99: Double) throws -> [Figure] {
        let big = try filledQueue("drain-big", records: sizes.drainRecords)
        let small = try filledQueue("drain-small", records: sizes.smallDrainRecords)
        let bytes = Double(try fileSize(big + "/pending.log"))

        // The floor: a locked copy of the same bytes.
        let floorQueue = scratch("floor-drain")
        try FileManager.default.copyItem(atPath: big + "/pending.log", toPath: floorQueue)
        let floorOutput = try tools.run("share-floor", ["drain", floorQueue, scratch("floor-drain.out")])
        let floorSeconds = Double(String(decoding: floorOutput.output, as: UTF8.self).split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)) ?? 1
        let floorRate = bytes / floorSeconds

        // JSON Lines into a file, measuring memory too; appends run alongside on a copy.
        let jsonQueue = try copyQueue(big, as: "drain-json")
        let (jsonSeconds, jsonMemory) = try drainTimed(["--dir", jsonQueue], output: scratch("drain.jsonl"))
        let (_, smallMemory) = try drainTimed(["--dir", small], output: "/dev/null")
        let storeQueue = try copyQueue(big, as: "drain-store")
        let (storeSeconds, _) = try drainTimed(["--dir", storeQueue, "--store", scratch("drain.sqlite")], output: "/dev/null")
        let busyQueue = try copyQueue(big, as: "drain-busy")
        let during = try appendsDuringDrain(busyQueue)

        let records = Double(sizes.drainRecords)
        return [
            Figure(name: "drain to JSON Lines file (vs floor locked copy)", unit: "MB/s", value: bytes / jsonSeconds / 1e6, floor: floorRate / 1e6, target: ">= 0.25"),
            Figure(name: "drain to JSON Lines file", unit: "records/s", value: records / jsonSeconds, floor: nil, target: "-"),
            Figure(name: "drain into --store", unit: "records/s", value: records / storeSeconds, floor: nil, target: ">= 150000"),
            Figure(name: "host-drain peak memory, \(sizes.drainRecords) pending (vs \(sizes.smallDrainRecords))", unit: "MiB",
                   value: Double(jsonMemory) / 1_048_576, floor: Double(smallMemory) / 1_048_576, target: "<= 1.5, and < 32 MiB", higherIsBetter: false),
            Figure(name: "share-append p99 during a large drain (vs idle p99)", unit: "ms", value: during * 1000, floor: idleP99 * 1000,
                   target: "<= 3.0", higherIsBetter: false),
        ]
    }

    /// p99 of share-append while a drain of a large queue runs.
    private func appendsDuringDrain(_ queue: String) throws -> Double {
        let drain = try Host.spawn(tools.path("host-drain"), ["--dir", queue, "-q"], pipeOutput: true, silenceErrors: true)
        let reader = Thread { [output = drain.output!] in
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while ((try? output.read(into: &chunk, from: 0)) ?? 0) > 0 {}
            output.close()
        }
        reader.start()
        var latencies: [Double] = []
        var finished = false
        while latencies.count < sizes.appendsDuringDrain && !finished {
            latencies.append(try timed("share-append", ["--dir", queue, "-q", "--no-sync", "during the drain"]))
            finished = kill(drain.pid, 0) != 0 || processHasExited(drain.pid)
        }
        _ = try Host.waitForExit(drain.pid)
        if latencies.count < 10 { progress("note: the drain ended after \(latencies.count) appends") }
        return percentile(latencies, 0.99)
    }

    private func processHasExited(_ pid: Int32) -> Bool {
        (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z") ?? false
    }

    /// Delay from a producer's exit to the record coming out of a watcher.
    private func watchDelay() throws -> [Figure] {
        let queue = try freshQueue("watch").path
        let watcher = try Host.spawn(tools.path("host-drain"), ["--dir", queue, "--watch", "-q"], pipeOutput: true, silenceErrors: true)
        defer {
            kill(watcher.pid, SIGTERM)
            _ = try? Host.waitForExit(watcher.pid)
        }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var delays: [Double] = []
        for i in 0..<sizes.watchRuns {
            _ = try tools.run("share-append", ["--dir", queue, "-q", "watched \(i)"])
            let exited = Host.monotonicSeconds()
            while !pending.contains(0x0A) {
                let n = try watcher.output!.read(into: &chunk, from: 0)
                guard n > 0 else { throw ShareQueueError(.ioError, "the watcher stopped") }
                pending += chunk[0..<n]
            }
            delays.append(Host.monotonicSeconds() - exited)
            pending.removeSubrange(...pending.firstIndex(of: 0x0A)!)
            // A quiet spell between records, as a person sharing things would leave:
            // longer than the default debounce (50 ms), so each record goes at once.
            usleep(60_000)
        }
        return [
            Figure(name: "--watch delay, producer exit to delivery, median", unit: "ms", value: percentile(delays, 0.5) * 1000, floor: nil, target: "< 10 ms", higherIsBetter: false),
            Figure(name: "--watch delay, p99", unit: "ms", value: percentile(delays, 0.99) * 1000, floor: nil, target: "-", higherIsBetter: false),
        ]
    }

    // MARK: Helpers

    private func scratch(_ name: String) -> String { directory + "/" + name }

    private func freshQueue(_ name: String) throws -> QueueDirectory {
        try? FileManager.default.removeItem(atPath: scratch(name))
        return try QueueDirectory(path: scratch(name))
    }

    /// A queue holding `records` records, appended quickly through the library.
    private func filledQueue(_ name: String, records: Int) throws -> String {
        let queue = try freshQueue(name)
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: queue, options: options)
        let drafts = (0..<1000).map { RecordDraft(.text(Self.sampleText + " \($0)"), source: "bench") }
        var left = records
        while left > 0 {
            _ = try appender.append(Array(drafts.prefix(left)))
            left -= min(left, drafts.count)
        }
        return queue.path
    }

    private func copyQueue(_ source: String, as name: String) throws -> String {
        try? FileManager.default.removeItem(atPath: scratch(name))
        try FileManager.default.copyItem(atPath: source, toPath: scratch(name))
        return scratch(name)
    }

    private func fileSize(_ path: String) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Runs host-drain with standard output going to `output`; returns its seconds and peak memory.
    private func drainTimed(_ arguments: [String], output: String) throws -> (Double, Int64) {
        let start = Host.monotonicSeconds()
        let child = try Host.spawn("/bin/sh", ["-c", "exec \"$0\" \"$@\" -q > '\(output)'", tools.path("host-drain")] + arguments, silenceErrors: true)
        let (status, memory) = try Host.waitForExitMeasuringMemory(child.pid)
        guard status == 0 else { throw ShareQueueError(.ioError, "host-drain \(arguments.joined(separator: " ")) exited with \(status)") }
        return (Host.monotonicSeconds() - start, memory)
    }

    private func timed(_ tool: String, _ arguments: [String]) throws -> Double {
        let start = Host.monotonicSeconds()
        let outcome = try tools.run(tool, arguments)
        guard outcome.status == 0 else { throw ShareQueueError(.ioError, "\(tool) exited with \(outcome.status)") }
        return Host.monotonicSeconds() - start
    }

    /// The records per second the floor prints for an `append` run.
    private func floorRate(_ arguments: [String]) throws -> Double {
        let outcome = try tools.run("share-floor", arguments)
        let words = String(decoding: outcome.output, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard outcome.status == 0, words.count == 2, let count = Double(words[0]), let seconds = Double(words[1]), seconds > 0 else {
            throw ShareQueueError(.ioError, "share-floor \(arguments.joined(separator: " ")) failed")
        }
        return count / seconds
    }

    private func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) throws -> ToolRunner.Outcome) throws {
        let group = DispatchGroup()
        let failures = FailureList()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                do {
                    let outcome = try body(index)
                    if outcome.status != 0 { failures.add("a benchmark process exited with \(outcome.status)") }
                } catch {
                    failures.add("\(error)")
                }
                group.leave()
            }
        }
        group.wait()
        if let first = failures.first { throw ShareQueueError(.ioError, first) }
    }

    private func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))]
    }
}

/// Failures collected from threads.
private final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) { lock.lock(); messages.append(message); lock.unlock() }
    var first: String? { lock.lock(); defer { lock.unlock() }; return messages.first }
}
