import Foundation
import ShareQueueSystem
import ToolSupport

/// `share-stress power-cut`: runs a workload with the real tools, tracing what
/// they change, then recovers from the crash states the trace allows and checks
/// that nothing acknowledged is lost (see ``CrashStates`` and ``PowerCutRecovery``).
struct PowerCutRun {
    struct Options {
        var states = 10_000
        var seed: UInt64 = 1
        var mode = CrashMode.posix
        /// A sync point the traced tools leave out, to show what its loss breaks.
        var skipped: SyncPoint?
        /// A deliberate defect the traced tools carry, to show that the explorer catches it.
        var mutant: Mutant?
        /// Only this state of the sample, kept for inspection.
        var onlyState: Int?
    }

    struct Violation {
        let state: Int
        let cut: Int
        let problems: [String]
    }

    struct Report {
        let workload: String
        let operations: Int
        let states: Int
        /// States that differed from every one before (files and acknowledgements), each recovered once.
        let distinct: Int
        let exhaustive: Bool
        let seconds: Double
        let violations: [Violation]
    }

    let tools: ToolRunner
    let options: Options
    /// Where each workload's files go; a state with a violation is kept there.
    let directory: String

    func run(_ workload: PowerCutWorkload) throws -> Report {
        let began = Date()
        let base = directory + "/" + workload.name + (options.skipped.map { "-without-" + $0.rawValue } ?? "")
            + (options.mutant.map { "-with-" + $0.rawValue } ?? "")
        let manager = FileManager.default
        try? manager.removeItem(atPath: base)
        for folder in ["root", "inputs", "states"] { try manager.createDirectory(atPath: base + "/" + folder, withIntermediateDirectories: true) }
        let root = URL(fileURLWithPath: base + "/root").resolvingSymlinksInPath().path
        var context = PowerCutContext(tools: tools, root: root, inputs: base + "/inputs")
        // Traced too, only for what its drains delivered: the setup is durable before any cut.
        context.environment = ["SHARE_QUEUE_TRACE": base + "/setup-trace"]
        try workload.setup(&context)
        let setupSteps = (try? TraceStep.read(base + "/setup-trace", root: root)) ?? []
        for case .mark(let words) in setupSteps where words.first == "delivered" { context.delivered += words.dropFirst() }
        let initial = try FileImage.read(root)
        let trace = base + "/trace"
        context.environment = ["SHARE_QUEUE_TRACE": trace]
        if let skipped = options.skipped { context.environment["SHARE_QUEUE_SKIP_SYNC"] = skipped.rawValue }
        if let mutant = options.mutant { context.environment["SHARE_QUEUE_MUTANT"] = mutant.rawValue }
        try workload.traced(&context)
        context.environment = [:]
        let states = CrashStates(initial: initial, steps: try TraceStep.read(trace, root: root), mode: options.mode)
        // A change the trace did not see (a call around ShareQueueSystem) would make every state a guess:
        // the files after the run must be what the trace says. SQLite's -shm is memory it rebuilds after a crash.
        let untraced = try FileImage.read(root).differences(from: states.everythingKept, ignoring: { $0.hasSuffix("-shm") })
        if !untraced.isEmpty {
            let problems = ["the trace does not account for every change the tools made: " + untraced.prefix(5).joined(separator: "; ")]
            return Report(workload: workload.name, operations: states.operations.count, states: 0, distinct: 0, exhaustive: false,
                          seconds: Date().timeIntervalSince(began), violations: [Violation(state: -1, cut: states.operations.count, problems: problems)])
        }
        let sampler = CrashSampler(states, budget: options.states, seed: options.seed)
        let recovery = PowerCutRecovery(workload: workload, tools: tools, run: context)
        // States are recovered in memory where there is a tmpfs: their syncs then cost nothing.
        let scratch = Self.scratchDirectory(fallback: base + "/scratch")
        try manager.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? manager.removeItem(atPath: scratch) }
        var seen: [Data: [String]] = [:]
        var violations: [Violation] = []
        for (number, pick) in sampler.picks.enumerated() {
            if let only = options.onlyState, only != number { continue }
            let cut = sampler.cuts[pick.cut]
            let state = states.state(cut, choices: pick.choices)
            let (printed, delivered) = states.marks(before: pick.cut)
            var key = state.key
            key.append(contentsOf: Array((printed + ["|"] + delivered).joined(separator: " ").utf8))
            let problems: [String]
            if let known = seen[key], options.onlyState == nil {
                problems = known
            } else {
                let place = scratch + "/\(number)"
                problems = try recovery.check(state, printed: printed, delivered: delivered, in: place)
                seen[key] = problems
                if !problems.isEmpty || options.onlyState != nil { try? manager.copyItem(atPath: place, toPath: base + "/states/\(number)") }
                try? manager.removeItem(atPath: place)
            }
            if !problems.isEmpty { violations.append(Violation(state: number, cut: pick.cut, problems: problems)) }
        }
        if violations.isEmpty && options.onlyState == nil { try? manager.removeItem(atPath: base) }
        return Report(workload: workload.name, operations: states.operations.count, states: options.onlyState == nil ? sampler.picks.count : 1,
                      distinct: seen.count, exhaustive: sampler.exhaustive, seconds: Date().timeIntervalSince(began), violations: violations)
    }

    /// A new directory in /dev/shm if there is one to write, else `fallback`.
    static func scratchDirectory(fallback: String) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
              access("/dev/shm", W_OK) == 0 else { return fallback }
        return "/dev/shm/share-stress-power-cut-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }
}
