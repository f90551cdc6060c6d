import Foundation
import ShareQueueCore
import ShareQueueSystem

/// `share-stress bench`: ShareQueue's speed, each figure measured side by side
/// with the physical floor (`Floor/floor.c`, built with the C compiler) in the same run and quoted as
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
        /// Eight producers' appends in all: a run of 2,000 lasted some 70 ms, within the reach of any other process's flush.
        var eightProducerAppends = 16_000
        var processRuns = 300
        var drainRecords = 1_000_000
        var smallDrainRecords = 10_000
        var appendsDuringDrain = 300
        var watchRuns = 200
        /// Records forwarded to NATS in each mode and by the floor, each round.
        var forwardedRecords = 100_000

        static let quick = Sizes(libraryAppends: 10_000, durableAppends: 200, eightProducerAppends: 800, processRuns: 30, drainRecords: 20_000,
                                 smallDrainRecords: 2_000, appendsDuringDrain: 30, watchRuns: 20, forwardedRecords: 10_000)
    }

    let tools: ToolRunner
    let floor: CFloor
    /// What measures a tool's peak memory (`Floor/peak-memory.c`).
    let peakMemory: CFloor
    /// The store floor (`Floor/store-floor.c`), built when the `store` part runs.
    var storeFloor: CFloor? = nil
    let directory: String
    let sizes: Sizes
    let progress: (String) -> Void
    /// The parts to run (`--only`); nil runs them all.
    var parts: Set<String>? = nil
    static let partNames = ["library", "content", "durable", "process", "drains", "store", "watch", "forwarding"]
    /// About 100 bytes stored, like a shared URL or note.
    static let sampleText = "https://example.com/a/shared/page"

    func run() throws -> [Figure] {
        var figures: [Figure] = []
        func wanted(_ part: String) -> Bool { parts?.contains(part) ?? true }
        if wanted("library") {
            progress("library appends")
            figures += try libraryAppends()
        }
        if wanted("content") {
            progress("typed content")
            figures += try contentFigures()
        }
        if wanted("durable") {
            progress("durable appends")
            figures += try durableAppends()
        }
        var idleP99 = 0.0
        if wanted("process") {
            progress("process latency")
            let (appendFigures, p99) = try processLatency()
            figures += appendFigures
            idleP99 = p99
        }
        if wanted("drains") {
            progress("drains")
            figures += try drains(idleP99: idleP99)
        }
        if wanted("store") {
            progress("store")
            figures += try storeIngest()
        }
        if wanted("watch") {
            progress("watch")
            figures += try watchDelay()
        }
        if wanted("forwarding") {
            progress("forwarding")
            figures += try forwarding()
        }
        return figures
    }

    /// What a record of `sampleText` looks like stored, for SQLite to store too.
    static var samplePayload: String {
        "{\"v\":1,\"id\":\"\(UUID().uuidString)\",\"date\":\"\(Timestamp.now())\",\"source\":\"bench\",\"kind\":\"text\",\"text\":\"\(sampleText)\"}"
    }

    // MARK: Queues to measure

    func scratch(_ name: String) -> String { directory + "/" + name }

    func freshQueue(_ name: String) throws -> QueueDirectory {
        try? FileManager.default.removeItem(atPath: scratch(name))
        return try QueueDirectory(path: scratch(name))
    }

    /// A queue holding `records` records, appended quickly through the library.
    func filledQueue(_ name: String, records: Int) throws -> String {
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

    /// A copy of a queue to drain, on disk before the drain starts: a measured drain must not pay for the copy's writes.
    func copyQueue(_ source: String, as name: String) throws -> String {
        try? FileManager.default.removeItem(atPath: scratch(name))
        try FileManager.default.copyItem(atPath: source, toPath: scratch(name))
        FileSystem.synchronizeAll()
        return scratch(name)
    }

    func fileSize(_ path: String) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}
