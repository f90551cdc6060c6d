import Foundation
import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Draining a large queue: speed against the floor, memory, and what producers feel meanwhile.
extension Benchmark {
    /// host-drain's batch size for JSON Lines on standard output (its `--batch` default).
    static let jsonLinesBatch = 5000

    func drains(idleP99: Double) throws -> [Figure] {
        let big = try filledQueue("drain-big", records: sizes.drainRecords)
        let small = try filledQueue("drain-small", records: sizes.smallDrainRecords)
        let bytes = Double(try fileSize(big + "/" + QueueLayout.pending))

        // Three runs each, interleaved so that drift in the machine's speed touches all alike:
        // the floor's locked copy of the same bytes, JSON Lines into a file (measuring memory
        // too), and a library sink reading every record. Each figure is the median of its runs.
        var floorRates: [Double] = [], jsonRates: [Double] = [], builtRates: [Double] = []
        var jsonMemory: Int64 = 0
        // SQLite's peers drain the same number of rows of the same bytes, in batches of the drain's size:
        // host-drain's default to standard output, and the library's default for a library sink.
        let database = try filledDatabase("drain-big.db", records: sizes.drainRecords)
        var sqliteFullRates: [Double] = [], sqliteNormalRates: [Double] = [], sqliteBuiltRates: [Double] = []
        for _ in 0..<3 {
            let floorQueue = scratch("floor-drain")
            try? FileManager.default.removeItem(atPath: floorQueue)
            try FileManager.default.copyItem(atPath: big + "/" + QueueLayout.pending, toPath: floorQueue)
            FileSystem.synchronizeAll()
            let floorOutput = try ToolRunner.run(program: floor.program, ["drain", floorQueue, scratch("floor-drain.out")])
            let floorSeconds = Double(String(decoding: floorOutput.output, as: UTF8.self).split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)) ?? 1
            floorRates.append(bytes / floorSeconds)
            let jsonQueue = try copyQueue(big, as: "drain-json")
            let (jsonSeconds, memory) = try drainTimed(["--dir", jsonQueue], output: scratch("drain.jsonl"))
            jsonRates.append(bytes / jsonSeconds)
            jsonMemory = max(jsonMemory, memory)
            builtRates.append(try recordsBuilt(from: big, as: "drain-records"))
            sqliteFullRates.append(try sqliteDrainRate(from: database, synchronous: .full, batchSize: Self.jsonLinesBatch))
            sqliteNormalRates.append(try sqliteDrainRate(from: database, synchronous: .normal, batchSize: Self.jsonLinesBatch))
            sqliteBuiltRates.append(try sqliteDrainRate(from: database, synchronous: .full, batchSize: DrainOptions().batchSize, building: true))
        }
        let floorRate = median(floorRates), jsonRate = median(jsonRates)
        let (_, smallMemory) = try drainTimed(["--dir", small], output: "/dev/null")
        let busyQueue = try copyQueue(big, as: "drain-busy")
        let during = try appendsDuringDrain(busyQueue)

        let records = Double(sizes.drainRecords)
        return [
            Figure(name: "drain to JSON Lines file (vs floor locked copy)", unit: "MB/s", value: jsonRate / 1e6, floor: floorRate / 1e6, target: ">= 0.50"),
            Figure(name: "drain to JSON Lines file (vs SQLite WAL FULL)", unit: "records/s", value: jsonRate / bytes * records,
                   floor: median(sqliteFullRates), target: "-"),
            Figure(name: "drain to JSON Lines file (vs SQLite WAL NORMAL)", unit: "records/s", value: jsonRate / bytes * records,
                   floor: median(sqliteNormalRates), target: "-"),
            Figure(name: "drain building records, library sink", unit: "records/s", value: median(builtRates), floor: nil, target: ">= 300000"),
            Figure(name: "drain building records (vs SQLite FULL building)", unit: "records/s", value: median(builtRates),
                   floor: median(sqliteBuiltRates), target: "-"),
            Figure(name: "host-drain peak memory, \(sizes.drainRecords) pending (vs \(sizes.smallDrainRecords))", unit: "MiB",
                   value: Double(jsonMemory) / 1_048_576, floor: Double(smallMemory) / 1_048_576, target: "<= 1.5, and < 32 MiB", higherIsBetter: false),
            Figure(name: "share-append p99 during a large drain (vs idle p99)", unit: "ms", value: during * 1000, floor: idleP99 > 0 ? idleP99 * 1000 : nil,
                   target: "<= 3.0", higherIsBetter: false),
        ]
    }

    /// p99 of share-append while a drain of a large queue runs.
    func appendsDuringDrain(_ queue: String) throws -> Double {
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

    func processHasExited(_ pid: Int32) -> Bool {
        (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z") ?? false
    }
}
