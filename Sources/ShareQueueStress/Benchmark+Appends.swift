import Foundation
import ShareQueueCore
import ShareQueueSystem

/// Appending: through the library, durably, from several processes, and a whole process at a time.
extension Benchmark {
    func libraryAppends() throws -> [Figure] {
        let queue = try freshQueue("library")
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: queue, options: options)
        let draft = RecordDraft(.text(Self.sampleText), source: "bench")
        let start = Host.monotonicSeconds()
        for _ in 0..<sizes.libraryAppends { try appender.append(draft) }
        let rate = Double(sizes.libraryAppends) / (Host.monotonicSeconds() - start)
        let floor = try floorRate(["append", scratch("floor-library"), String(sizes.libraryAppends)])
        let sqlite = try sqliteAppendRate("sqlite-library.db", count: sizes.libraryAppends, synchronous: .normal)
        return [
            Figure(name: "library append, no fsync", unit: "records/s", value: rate, floor: floor, target: ">= 0.50"),
            Figure(name: "library append, no fsync (vs SQLite WAL NORMAL)", unit: "records/s", value: rate, floor: sqlite, target: "-"),
        ]
    }

    func durableAppends() throws -> [Figure] {
        let count = sizes.durableAppends
        let queue = try freshQueue("durable")
        let appender = try QueueAppender(directory: queue)
        let draft = RecordDraft(.text(Self.sampleText), source: "bench")
        let start = Host.monotonicSeconds()
        for _ in 0..<count { try appender.append(draft) }
        let one = Double(count) / (Host.monotonicSeconds() - start)
        let sqliteOne = try sqliteAppendRate("sqlite-1.db", count: count, synchronous: .full)
        let floorOne = try floorRate(["append", scratch("floor-durable"), String(count), "sync"])
        // What one of these records takes in the pending file, header and trailer included, so
        // that the format's floor stores as much per record as the library: the floor's own are 128 bytes.
        let recordBytes = String(Int((Double(try fileSize(queue.path + "/" + QueueLayout.pending)) / Double(count)).rounded()))

        // Eight processes at once, each appending its share; five runs interleaved with eight
        // floor processes doing the same (flock, write, unlock, fdatasync), eight doing what the
        // format adds to that in C (`floor format`) with records as long as the library's, eight
        // doing that with group commit (`floor group`), and eight into SQLite, and the medians.
        // Each process opens its queue, then waits for a common start, so that the rate is of
        // appending alone: process start-up has figures of its own.
        let tools = self.tools
        let program = floor.program
        var eights: [Double] = [], floorEights: [Double] = [], formatEights: [Double] = [], groupEights: [Double] = [], sqliteEights: [Double] = []
        var contended: [Double] = [], sqliteContended: [Double] = []
        let eightCount = sizes.eightProducerAppends
        for run in 0..<5 {
            let eightQueue = try freshQueue("durable-8").path
            func library() throws {
                eights.append(try startedTogether { startAt in
                    try tools.run("share-stress", ["bench-append", "--dir", eightQueue, "--count", String(eightCount / 8), "--start-at", startAt])
                })
            }
            let floorFile = scratch("floor-durable-8-\(run)")
            func floorProcesses() throws {
                floorEights.append(try startedTogether { startAt in
                    try ToolRunner.run(program: program, ["append", floorFile, String(eightCount / 8), "unlocked-sync", startAt])
                })
            }
            // Each first in every other run, so that neither always follows the heavier runs of the one before.
            if run.isMultiple(of: 2) { try library(); try floorProcesses() } else { try floorProcesses(); try library() }
            try? FileManager.default.removeItem(atPath: floorFile)
            let formatFolder = try freshQueue("format-floor-8").path
            formatEights.append(try startedTogether { startAt in
                try ToolRunner.run(program: program, ["format", formatFolder, String(eightCount / 8), startAt, recordBytes])
            })
            let groupFolder = try freshQueue("group-floor-8").path
            groupEights.append(try startedTogether { startAt in
                try ToolRunner.run(program: program, ["group", groupFolder, String(eightCount / 8), startAt, recordBytes])
            })
            let sqlitePath = scratch("sqlite-8-\(run).db")
            removeDatabase(sqlitePath)
            // Created first, so that no producer races to create it.
            _ = try SQLitePeer(path: sqlitePath, synchronous: .full)
            sqliteEights.append(try startedTogether { startAt in
                try tools.run("share-stress", ["bench-sqlite", "--db", sqlitePath, "--count", String(eightCount / 8), "--start-at", startAt])
            })
            let (queueRate, sqliteRate) = try contention(run: run)
            contended.append(queueRate)
            sqliteContended.append(sqliteRate)
        }
        let eight = median(eights), floorEight = median(floorEights), formatEight = median(formatEights), groupEight = median(groupEights)
        // Against the floors, the run whose ratio is the median: the disk's rate drifts by half within a minute.
        let againstFloor = medianPair(Array(zip(eights, floorEights))), againstFormat = medianPair(Array(zip(eights, formatEights)))
        let sqliteEight = median(sqliteEights)
        return [
            Figure(name: "durable append, 1 producer (vs SQLite WAL FULL)", unit: "records/s", value: one, floor: sqliteOne, target: ">= 1.0, aim 1.3"),
            Figure(name: "durable append, 1 producer (vs floor fdatasync)", unit: "records/s", value: one, floor: floorOne, target: ">= 0.95"),
            Figure(name: "durable append, 8 producers (vs 1 producer)", unit: "records/s", value: eight, floor: one, target: ">= 2.0"),
            Figure(name: "durable append, 8 producers (vs floor, 8 processes)", unit: "records/s", value: againstFloor.value, floor: againstFloor.floor, target: ">= 1.0"),
            Figure(name: "durable append, 8 producers (vs format floor, \(recordBytes) B)", unit: "records/s", value: againstFormat.value, floor: againstFormat.floor, target: "-"),
            Figure(name: "format floor, 8 x \(recordBytes) B (vs floor, 8 x 128 B)", unit: "records/s", value: formatEight, floor: floorEight, target: "-"),
            Figure(name: "format floor, group commit (vs without, 8 processes)", unit: "records/s", value: groupEight, floor: formatEight, target: "-"),
            Figure(name: "durable append, 8 producers (vs SQLite FULL, 8 processes)", unit: "records/s", value: eight, floor: sqliteEight, target: "-"),
            Figure(name: "8 durable producers + a drain (vs SQLite FULL)", unit: "records/s", value: median(contended),
                   floor: median(sqliteContended), target: "-"),
        ]
    }

    /// Whole-process latency of share-append next to the floor's one-record process.
    func processLatency() throws -> ([Figure], idleP99: Double) {
        let queue = try freshQueue("process").path
        let floorFile = scratch("floor-process")
        var ours: [Double] = []
        var durable: [Double] = []
        var floorTimes: [Double] = []
        for i in 0..<sizes.processRuns {
            // Interleaved, so that drift in the machine's speed touches both alike.
            ours.append(try timed("share-append", ["--dir", queue, "-q", "--no-sync", "process \(i)"]))
            floorTimes.append(try timedFloor(["append1", floorFile]))
            durable.append(try timed("share-append", ["--dir", queue, "-q", "durable \(i)"]))
        }
        let figures = [
            Figure(name: "share-append process, median (vs C append1)", unit: "ms", value: percentile(ours, 0.5) * 1000,
                   floor: percentile(floorTimes, 0.5) * 1000, target: "<= 1.5", higherIsBetter: false),
            Figure(name: "share-append process, p99 (vs C append1)", unit: "ms", value: percentile(ours, 0.99) * 1000,
                   floor: percentile(floorTimes, 0.99) * 1000, target: "<= 3.0", higherIsBetter: false),
            Figure(name: "share-append process with fsync, median", unit: "ms", value: percentile(durable, 0.5) * 1000,
                   floor: percentile(floorTimes, 0.5) * 1000, target: "-", higherIsBetter: false),
        ]
        return (figures, percentile(ours, 0.99))
    }
}
