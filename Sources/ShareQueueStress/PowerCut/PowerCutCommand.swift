import Foundation
import ShareQueue
import ShareQueueSystem
import ToolSupport

/// `share-stress power-cut`: the command around ``PowerCutRun``.
enum PowerCutCommand {
    static let options = [
        OptionSpec(names: ["--workload"], value: "NAMES", help: "Run these workloads, comma-separated (default: all): \(PowerCutWorkload.all.map(\.name).joined(separator: ", "))."),
        OptionSpec(names: ["--states"], value: "N", help: "Explore every crash state of a workload if it has at most N, else a sample of N (default 10000)."),
        OptionSpec(names: ["--seed"], value: "S", help: "The sample's seed (default: a random one, printed)."),
        OptionSpec(names: ["--mode"], value: "posix|ext4-ordered|apfs", help: "The file system's durability rules (default posix, the most conservative)."),
        OptionSpec(names: ["--skip-sync"], value: "NAME", help: "Have the traced tools leave out the sync point NAME, to show what its loss breaks."),
        OptionSpec(names: ["--mutant"], value: "NAME", help: "Have the traced tools carry the deliberate defect NAME (a build with the TestHooks trait), to show that it is caught: \(Mutant.allCases.map(\.rawValue).joined(separator: ", "))."),
        OptionSpec(names: ["--mutants"], value: nil, help: "Run the mutation catalogue: each defect on its workloads, its verdict compared with the catalogue's (a build with the TestHooks trait)."),
        OptionSpec(names: ["--only"], value: "NAMES", help: "With --mutants, run only these entries of the catalogue, comma-separated."),
        OptionSpec(names: ["--state"], value: "N", help: "Recover only state N of the sample (with the same --states and --seed) and keep its files."),
        OptionSpec(names: ["--list"], value: nil, help: "Print each workload's name and the paths it runs, and the mutation catalogue's entries, and exit."),
        OptionSpec(names: ["--json"], value: nil, help: "Print one JSON object per workload (or mutant) instead of the table."),
        OptionSpec(names: ["--dir"], value: "DIR", help: "Work in DIR (default: a new temporary directory, removed when nothing is found)."),
        OptionSpec(names: ["--bin"], value: "DIR", help: "Where share-append and host-drain are (default: beside share-stress)."),
    ] + Tool.commonOptions

    static let tool = Tool(
        name: "share-stress power-cut",
        overview: "Run workloads with the real tools, tracing every file change, then recover from each crash state a power cut may leave and check that nothing acknowledged is lost.",
        usage: "share-stress power-cut [--workload NAMES] [--states N] [--seed S] [--mode MODE] [--skip-sync NAME | --mutant NAME | --mutants] [--json]",
        argumentsHelp: [], options: options,
        exitCodes: [("0", "No state broke an invariant (with --mutants: every verdict is the catalogue's)."), ("1", "A state broke an invariant, each printed with its seed and number (with --mutants: a verdict differs from the catalogue's).")]
            + Tool.standardExitCodes.dropFirst())

    static func main() -> Never {
        do {
            let arguments = try ParsedArguments(Array(CommandLine.arguments.dropFirst(2)), options: options)
            if arguments.has("--help") { emit(tool.help); Host.exit(0) }
            if arguments.has("--list") { list(); Host.exit(0) }
            Host.exit(try run(arguments) ? 0 : 1)
        } catch let error as ShareQueueError {
            tool.fail(error)
        } catch {
            tool.fail(ShareQueueError(.ioError, "the power-cut run failed: \(error)"))
        }
    }

    static func run(_ arguments: ParsedArguments) throws -> Bool {
        try StressTool.requireTestHooks(for: "share-stress power-cut")
        var options = PowerCutRun.Options()
        options.states = try arguments.integer("--states", in: 1...10_000_000) ?? options.states
        if let text = arguments.value("--seed") {
            guard let seed = UInt64(text) else { throw ShareQueueError(.invalidArgument, "--seed takes a whole number, not '\(text)'") }
            options.seed = seed
        } else {
            options.seed = UInt64.random(in: 1...UInt64(UInt32.max))
        }
        if let text = arguments.value("--mode") {
            guard let mode = CrashMode(rawValue: text) else { throw ShareQueueError(.invalidArgument, "--mode takes posix, ext4-ordered or apfs, not '\(text)'") }
            options.mode = mode
        }
        if let text = arguments.value("--skip-sync") {
            guard let point = SyncPoint(rawValue: text) else {
                throw ShareQueueError(.invalidArgument, "--skip-sync takes one of \(SyncPoint.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'")
            }
            options.skipped = point
        }
        if let text = arguments.value("--mutant") {
            guard let mutant = Mutant(rawValue: text) else {
                throw ShareQueueError(.invalidArgument, "--mutant takes one of \(Mutant.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'")
            }
            options.mutant = mutant
        }
        options.onlyState = try arguments.integer("--state", in: 0...Int.max / 2)
        var workloads = PowerCutWorkload.all
        if let names = arguments.value("--workload") {
            let wanted = names.split(separator: ",").map(String.init)
            for name in wanted where !workloads.contains(where: { $0.name == name }) {
                throw ShareQueueError(.invalidArgument, "no workload '\(name)'; there are \(workloads.map(\.name).joined(separator: ", "))")
            }
            workloads = workloads.filter { wanted.contains($0.name) }
        }
        let tools = ToolRunner(binDirectory: arguments.value("--bin") ?? StressTool.ownDirectory())
        for name in ["share-append", "host-drain"] where access(tools.path(name), X_OK) != 0 {
            throw ShareQueueError(.configuration, "cannot find \(name); build the package or pass --bin", path: tools.path(name))
        }
        let keep = arguments.value("--dir")
        let directory = try keep ?? StressTool.makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let json = arguments.has("--json")
        let passed = arguments.has("--mutants")
            ? try MutationRun.run(tools: tools, options: options, only: arguments.value("--only").map { $0.split(separator: ",").map(String.init) },
                                  directory: directory, json: json)
            : try explore(tools: tools, options: options, workloads: workloads, directory: directory, json: json)
        if passed && keep == nil { try? FileManager.default.removeItem(atPath: directory) }
        if !passed { tool.printError("share-stress power-cut: the failing states are kept in \(directory)\n") }
        return passed
    }

    /// Explores each workload and prints its line; true if no state broke an invariant.
    static func explore(tools: ToolRunner, options: PowerCutRun.Options, workloads: [PowerCutWorkload], directory: String, json: Bool) throws -> Bool {
        let run = PowerCutRun(tools: tools, options: options, directory: directory)
        if !json {
            emit("power-cut: mode \(options.mode.rawValue), seed \(options.seed), at most \(options.states) states per workload"
                  + (options.skipped.map { ", without the sync point \($0.rawValue)" } ?? "") + (options.mutant.map { ", with the mutant \($0.rawValue)" } ?? ""))
            emit("workload".padding(toLength: 20, withPad: " ", startingAt: 0) + "ops   states  distinct  explored     violations  seconds")
        }
        var passed = true
        for workload in workloads {
            let report = try run.run(workload)
            passed = passed && report.violations.isEmpty
            if json {
                let object: [String: Any] = [
                    "workload": report.workload, "mode": options.mode.rawValue, "seed": options.seed, "operations": report.operations,
                    "states": report.states, "distinct": report.distinct, "exhaustive": report.exhaustive,
                    "seconds": (report.seconds * 100).rounded() / 100, "skipSync": options.skipped?.rawValue ?? NSNull(),
                    "mutant": options.mutant?.rawValue ?? NSNull(),
                    "violations": report.violations.map { ["state": $0.state, "cut": $0.cut, "problems": $0.problems] as [String: Any] },
                ]
                emit(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
            } else {
                emit(report.workload.padding(toLength: 20, withPad: " ", startingAt: 0) + String(report.operations).padding(toLength: 6, withPad: " ", startingAt: 0)
                      + String(report.states).padding(toLength: 8, withPad: " ", startingAt: 0) + String(report.distinct).padding(toLength: 10, withPad: " ", startingAt: 0)
                      + (report.exhaustive ? "all" : "sample").padding(toLength: 13, withPad: " ", startingAt: 0)
                      + String(report.violations.count).padding(toLength: 12, withPad: " ", startingAt: 0) + String(format: "%.1f", report.seconds))
                for violation in report.violations.prefix(10) where violation.state < 0 {
                    emit("  the run itself: \(violation.problems.joined(separator: "; "))")
                }
                for violation in report.violations.prefix(10) where violation.state >= 0 {
                    emit("  state \(violation.state) (cut after \(violation.cut) operations): \(violation.problems.joined(separator: "; "))")
                    emit("    replay: share-stress power-cut --workload \(report.workload) --states \(options.states) --seed \(options.seed) --mode \(options.mode.rawValue)"
                          + (options.skipped.map { " --skip-sync \($0.rawValue)" } ?? "") + (options.mutant.map { " --mutant \($0.rawValue)" } ?? "") + " --state \(violation.state) --dir DIR")
                }
            }
        }
        return passed
    }

    /// The workloads and the paths each runs, then the catalogue's entries and where each is expected harmless.
    static func list() {
        emit("workloads:")
        for workload in PowerCutWorkload.all { emit("  " + workload.name.padding(toLength: 22, withPad: " ", startingAt: 0) + workload.summary) }
        emit("mutation catalogue (caught under every mode unless marked harmless):")
        for entry in MutationCatalogue.entries {
            let harmless = CrashMode.allCases.filter { entry.harmless[$0] != nil }.map(\.rawValue)
            emit("  " + entry.name.padding(toLength: 46, withPad: " ", startingAt: 0) + entry.workloads.joined(separator: ", ")
                 + (harmless.isEmpty ? "" : "; harmless under " + harmless.joined(separator: ", ")))
        }
    }

    /// Writes one line to standard output at once, so that each workload's line shows as it finishes, even into a pipe.
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
