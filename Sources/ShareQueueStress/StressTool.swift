import Foundation
import ShareQueueCore
import ToolSupport
import ShareQueueStore
import ShareQueueSystem

/// `share-stress`: proves that nothing acknowledged is lost, by running the
/// real tools concurrently, killing them, and counting what comes out.
public enum StressTool {
    static let tool = Tool(
        name: "share-stress",
        overview: "Hammer a ShareQueue queue with concurrent producers and drainers, kill them, and check that nothing acknowledged is lost.",
        usage: "share-stress [--dir DIR] --producers P --records M [--drainers D] [--kill] [--duration S] [--library] [--json]\n       share-stress --crash-points [--dir DIR] [--json]\n       share-stress power-cut [--workload NAMES] [--states N] [--seed S] [--mode MODE] [--json]",
        argumentsHelp: [],
        options: [
            OptionSpec(names: ["--dir"], value: "DIR", help: "Work in DIR (created if missing, left in place); by default a new temporary directory, removed when the run passes."),
            OptionSpec(names: ["--producers"], value: "P", help: "Producer processes appending at once (default 4)."),
            OptionSpec(names: ["--records"], value: "M", help: "Records each producer appends (default 100)."),
            OptionSpec(names: ["--drainers"], value: "D", help: "Drainers running host-drain again and again at once (default 1)."),
            OptionSpec(names: ["--kill"], value: nil, help: "Send SIGKILL to random producers and drainers at random moments, and have some crash at random steps."),
            OptionSpec(names: ["--duration"], value: "S", help: "Stop producing after S seconds, even if fewer than M records were appended."),
            OptionSpec(names: ["--library"], value: nil, help: "Producers append through the library in a loop instead of running share-append per record."),
            OptionSpec(names: ["--store"], value: nil, help: "Drainers ingest into a SQLite store, which must hold every record exactly once."),
            OptionSpec(names: ["--watch"], value: nil, help: "Drainers are long-running host-drain --watch processes, restarted when killed and stopped with SIGTERM."),
            OptionSpec(names: ["--crash-points"], value: nil, help: "Crash producers and drainers at every crash point in turn, recover, and check; prints a table."),
            OptionSpec(names: ["--json"], value: nil, help: "Print one JSON object instead of the summary line or table."),
            OptionSpec(names: ["--bin"], value: "DIR", help: "Where share-append and host-drain are (default: beside share-stress)."),
        ] + Tool.commonOptions,
        examples: [
            Tool.Example("Eight producers of 500 records each, with kills:", "share-stress --producers 8 --records 500 --kill"),
            Tool.Example("Drain into SQLite with watching drainers, for 30 seconds:", "share-stress --producers 4 --records 100000 --store --watch --duration 30"),
            Tool.Example("Crash at every crash point in turn and print the table:", "share-stress --crash-points"),
            Tool.Example("Recover from every crash state a power cut may leave (see share-stress power-cut --help):", "share-stress power-cut --states 2000"),
            Tool.Example("The performance table (after swift build -c release):", "share-stress bench"),
        ],
        environment: [("TMPDIR", "Where the temporary work directory is made when --dir is not given.")],
        files: [("DIR/queue", "The queue the run appends to and drains."), ("DIR/store.sqlite", "The SQLite store, with --store.")],
        exitCodes: [("0", "Nothing acknowledged was lost, duplicated or corrupted."), ("1", "The check failed; the work directory is kept and named on standard error.")]
            + Tool.standardExitCodes.dropFirst())

    static let produceOptions = [
        OptionSpec(names: ["--dir"], value: "DIR", help: ""),
        OptionSpec(names: ["--producer"], value: "N", help: ""),
        OptionSpec(names: ["--first"], value: "N", help: ""),
        OptionSpec(names: ["--count"], value: "N", help: ""),
    ]

    public static func main() -> Never {
        Host.ignoreBrokenPipes()
        Host.ignoreFileSizeLimitSignal()
        switch CommandLine.arguments.dropFirst().first {
        case "produce": produce()
        case "bench": bench()
        case "bench-append", "bench-sqlite": benchHelper(CommandLine.arguments[1])
        case "power-cut": PowerCutCommand.main()
        case "power-cut-typed": TypedProgram.main()
        case "notices": NoticeProgram.main()
        default: break
        }
        let arguments = tool.parse()
        do {
            Host.exit(try run(arguments) ? 0 : 1)
        } catch let error as ShareQueueError {
            tool.fail(error)
        } catch {
            tool.fail(ShareQueueError(.ioError, "the stress run failed", underlying: error))
        }
    }

    /// `share-stress produce`, the library producer that stress runs start.
    static func produce() -> Never {
        do throws(ShareQueueError) {
            let arguments = try ParsedArguments(Array(CommandLine.arguments.dropFirst(2)), options: produceOptions)
            guard let directory = arguments.value("--dir"), let producer = try arguments.integer("--producer", in: 1...1_000_000),
                  let first = try arguments.integer("--first", in: 1...Int.max / 2), let count = try arguments.integer("--count", in: 0...Int.max / 2) else {
                throw ShareQueueError(.invalidArgument, "produce needs --dir, --producer, --first and --count")
            }
            try LibraryProducer.run(directory: directory, producer: producer, first: first, count: count)
            Host.exit(0)
        } catch {
            tool.fail(error)
        }
    }

    static let benchOptions = [
        OptionSpec(names: ["--quick"], value: nil, help: "Small sizes, to check that the benchmark works (as CI does); the figures mean little."),
        OptionSpec(names: ["--json"], value: nil, help: "Print one JSON object per figure, a line each, with name, unit, value, floor, ratio and target."),
        OptionSpec(names: ["--dir"], value: "DIR", help: "Work in DIR (default: a new temporary directory, removed afterwards)."),
        OptionSpec(names: ["--bin"], value: "DIR", help: "Where the tools are (default: beside share-stress)."),
        OptionSpec(names: ["--only"], value: "PARTS", help: "Run only these parts, comma-separated: library, content, durable, process, drains, store, watch, forwarding (which needs nats-server and libnats, and is skipped without them)."),
    ] + Tool.commonOptions

    /// `share-stress bench`: the performance table.
    static func bench() -> Never {
        let benchTool = Tool(name: "share-stress bench",
                             overview: "Measure ShareQueue against the physical floor (Floor/floor.c, compiled at the start with clang or cc and checked to link against libc alone) and SQLite, side by side in one run. Build with -c release first.",
                             usage: "share-stress bench [--quick] [--json] [--dir DIR] [--only PARTS]", argumentsHelp: [], options: benchOptions)
        do {
            let arguments = try ParsedArguments(Array(CommandLine.arguments.dropFirst(2)), options: benchOptions)
            if arguments.has("--help") { print(benchTool.help); Host.exit(0) }
            let tools = ToolRunner(binDirectory: arguments.value("--bin") ?? ownDirectory())
            let keep = arguments.value("--dir")
            let directory = try keep ?? makeTemporaryDirectory()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }
            let floor = try CFloor.build(into: directory)
            benchTool.printError("share-stress bench: the C floor: \(floor.description)\n")
            var benchmark = Benchmark(tools: tools, floor: floor, peakMemory: try CFloor.buildPeakMemory(into: directory), directory: directory, sizes: arguments.has("--quick") ? .quick : Benchmark.Sizes(),
                                      progress: { benchTool.printError("share-stress bench: \($0)\n") })
            if let only = arguments.value("--only") {
                let parts = Set(only.split(separator: ",").map(String.init))
                guard parts.isSubset(of: Benchmark.partNames) else {
                    throw ShareQueueError(.invalidArgument, "--only takes parts among \(Benchmark.partNames.joined(separator: ", ")), not '\(only)'")
                }
                benchmark.parts = parts
            }
            if benchmark.parts?.contains("store") ?? true {
                benchmark.storeFloor = try CFloor.buildStoreFloor(into: directory)
                benchTool.printError("share-stress bench: the store floor: \(benchmark.storeFloor!.description)\n")
            }
            let figures = try benchmark.run()
            print(arguments.has("--json") ? BenchmarkReport.jsonLines(figures) : BenchmarkReport.table(figures, floor: floor, storeFloor: benchmark.storeFloor), terminator: "")
            Host.exit(0)
        } catch let error as ShareQueueError {
            benchTool.fail(error)
        } catch {
            benchTool.fail(ShareQueueError(.ioError, "the benchmark failed", underlying: error))
        }
    }

    /// The processes the benchmark starts to append at once: through the library, or into SQLite.
    static func benchHelper(_ mode: String) -> Never {
        let options = [OptionSpec(names: ["--dir"], value: "DIR", help: ""), OptionSpec(names: ["--db"], value: "PATH", help: ""),
                       OptionSpec(names: ["--count"], value: "N", help: ""), OptionSpec(names: ["--no-sync"], value: nil, help: ""),
                       OptionSpec(names: ["--start-at"], value: "SECONDS", help: "")]
        do throws(ShareQueueError) {
            let arguments = try ParsedArguments(Array(CommandLine.arguments.dropFirst(2)), options: options)
            let count = try arguments.integer("--count", in: 1...10_000_000) ?? 1
            // Opened first, then, given --start-at, waiting for the others: processes started one after
            // another begin appending together, and each prints its count and the monotonic clock's
            // readings when it began and ended, so that start-up stays out of the rate.
            let appendOne: () throws(ShareQueueError) -> Void
            if mode == "bench-sqlite" {
                let peer = try SQLitePeer(path: arguments.value("--db") ?? "bench.db", synchronous: .full)
                let body = Benchmark.samplePayloadBytes
                appendOne = { () throws(ShareQueueError) in try peer.append(body) }
            } else {
                var appendOptions = AppendOptions()
                appendOptions.synchronize = !arguments.has("--no-sync")
                let appender = try QueueAppender(directory: try QueueDirectory(path: arguments.value("--dir") ?? "."), options: appendOptions)
                let draft = RecordDraft(.text(Benchmark.sampleText), source: "bench")
                appendOne = { () throws(ShareQueueError) in try appender.append(draft) }
            }
            let startAt = arguments.value("--start-at").flatMap(Double.init)
            if let startAt { Host.sleep(untilMonotonic: startAt) }
            let began = Host.monotonicSeconds()
            for _ in 0..<count { try appendOne() }
            if startAt != nil { print("\(count) \(began) \(Host.monotonicSeconds())") }
            Host.exit(0)
        } catch {
            tool.fail(error)
        }
    }

    static func run(_ arguments: ParsedArguments) throws -> Bool {
        guard arguments.arguments.isEmpty else { throw ShareQueueError(.invalidArgument, "unexpected argument '\(arguments.arguments[0])'") }
        let tools = ToolRunner(binDirectory: arguments.value("--bin") ?? ownDirectory())
        for name in ["share-append", "host-drain", "share-stress"] where access(tools.path(name), X_OK) != 0 {
            throw ShareQueueError(.configuration, "cannot find \(name); build the package or pass --bin", path: tools.path(name))
        }
        let keep = arguments.value("--dir")
        let directory = try keep ?? makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let passed = arguments.has("--crash-points")
            ? try runCrashPoints(tools, directory: directory, json: arguments.has("--json"))
            : try runStress(arguments, tools, directory: directory)
        if passed && keep == nil { try? FileManager.default.removeItem(atPath: directory) }
        if !passed { tool.printError("share-stress: the queues are kept for inspection in \(directory)\n") }
        return passed
    }

    static func runStress(_ arguments: ParsedArguments, _ tools: ToolRunner, directory: String) throws -> Bool {
        var options = StressOptions()
        options.directory = directory + "/queue"
        options.producers = try arguments.integer("--producers", in: 1...256) ?? 4
        options.records = try arguments.integer("--records", in: 1...10_000_000) ?? 100
        options.drainers = try arguments.integer("--drainers", in: 0...64) ?? 1
        options.kill = arguments.has("--kill")
        options.library = arguments.has("--library")
        options.watch = arguments.has("--watch")
        if arguments.has("--store") { options.store = directory + "/store.sqlite" }
        if let text = arguments.value("--duration") {
            guard let seconds = Double(text), seconds > 0 else { throw ShareQueueError(.invalidArgument, "--duration needs a number of seconds, not '\(text)'") }
            options.duration = seconds
        }
        let report = try StressRun(options: options, tools: tools).run()
        let v = report.verdict
        if arguments.has("--json") {
            let object: JSONMembers<JSONValue> = [
                "producers": .number(String(options.producers)), "records": .number(String(options.records)),
                "store": .bool(options.store != nil), "watch": .bool(options.watch),
                "drainers": .number(String(options.drainers)), "library": .bool(options.library),
                "acknowledged": .number(String(v.acknowledged)), "delivered": .number(String(v.delivered)),
                "lost": .number(String(v.lost)), "duplicates": .number(String(v.duplicates)),
                "corrupt": .number(String(v.corrupt)), "outOfOrder": .number(String(v.outOfOrder)),
                "unacknowledgedDelivered": .number(String(v.unacknowledgedDelivered)),
                "kills": .number(String(report.kills)), "quarantined": .number(String(report.quarantined)),
                "failures": .array(report.failures.map { .string($0) }),
                "seconds": .number(String(format: "%.2f", report.seconds)), "passed": .bool(report.passed),
            ]
            print(String(decoding: JSONValue.object(object.sortedByName()).compactJSON, as: UTF8.self))
        } else {
            print("share-stress: \(report.passed ? "PASS" : "FAIL"): \(v.acknowledged) acknowledged, \(v.delivered) delivered, "
                  + "\(v.lost) lost, \(v.duplicates) duplicates, \(v.corrupt) corrupt, \(v.outOfOrder) out of order, "
                  + "\(v.unacknowledgedDelivered) unacknowledged delivered, \(report.kills) kills, \(report.quarantined) quarantined, "
                  + String(format: "%.1f s", report.seconds))
            for failure in report.failures.prefix(20) { print("  failure: \(failure)") }
        }
        return report.passed
    }

    /// The crash points, the trace, the left-out syncs and the mutants are test hooks: a build
    /// without them would crash nowhere and explore nothing, and report that as a pass.
    static func requireTestHooks(for command: String) throws {
        #if !SHARE_QUEUE_TEST_HOOKS
        throw ShareQueueError(.configuration, "\(command) needs a build with the TestHooks trait: swift build --traits TestHooks")
        #endif
    }

    static func runCrashPoints(_ tools: ToolRunner, directory: String, json: Bool) throws -> Bool {
        try requireTestHooks(for: "share-stress --crash-points")
        let outcomes = try CrashPointRun(tools: tools, baseDirectory: directory).run()
        let passed = outcomes.allSatisfy(\.ok)
        if json {
            let points: [JSONValue] = outcomes.map { outcome in
                .object(["failures": .array(outcome.failures.map { .string($0) }), "name": .string(outcome.point.rawValue),
                         "ok": .bool(outcome.ok), "runs": .number(String(outcome.runs))])
            }
            print(String(decoding: JSONValue.object(["passed": .bool(passed), "points": .array(points)]).compactJSON, as: UTF8.self))
        } else {
            print("point".padding(to: 28) + "runs  ok")
            for outcome in outcomes {
                print(outcome.point.rawValue.padding(to: 28) + String(outcome.runs).padding(to: 6) + (outcome.ok ? "yes" : "NO"))
                for failure in outcome.failures { print("    \(failure)") }
            }
            print("share-stress: \(passed ? "PASS" : "FAIL"): \(outcomes.filter(\.ok).count) of \(outcomes.count) crash points recovered with nothing lost")
        }
        return passed
    }

    static func ownDirectory() -> String {
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        return executable.resolvingSymlinksInPath().deletingLastPathComponent().path
    }

    static func makeTemporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/share-stress-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw ShareQueueError(.cannotCreate, "cannot make a temporary directory", path: NSTemporaryDirectory())
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
