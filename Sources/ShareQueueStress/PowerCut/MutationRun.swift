import Foundation
import ShareQueueSystem

/// `share-stress power-cut --mutants`: each entry of the ``MutationCatalogue``
/// run on its workloads until one catches it, and its verdict compared with the
/// catalogue's: caught, or harmless for the reason written there.
enum MutationRun {
    /// What one entry did under one mode.
    struct Verdict {
        let entry: MutationCatalogue.Entry
        /// The workload, state and first problem of the violation that caught it; nil if none did.
        let caught: (workload: String, state: Int, problem: String)?
        let states: Int
        let mode: CrashMode

        var expectedHarmless: Bool { entry.harmless[mode] != nil }
        var matches: Bool { (caught == nil) == expectedHarmless }
    }

    /// Runs the catalogue (or the entries named `only`) under `options.mode`; true if every verdict is the catalogue's.
    static func run(tools: ToolRunner, options: PowerCutRun.Options, only: [String]?, directory: String, json: Bool) throws -> Bool {
        let entries = MutationCatalogue.entries.filter { only?.contains($0.name) ?? true }
        if !json { PowerCutCommand.emit("power-cut: the mutation catalogue, mode \(options.mode.rawValue), seed \(options.seed), at most \(options.states) states per workload") }
        var verdicts: [Verdict] = []
        for entry in entries {
            var mutated = options
            switch entry.change {
            case .skipSync(let point): mutated.skipped = point
            case .mutant(let mutant): mutated.mutant = mutant
            }
            let run = PowerCutRun(tools: tools, options: mutated, directory: directory)
            var caught: (workload: String, state: Int, problem: String)?
            var states = 0
            for name in entry.workloads where caught == nil {
                guard let workload = PowerCutWorkload.all.first(where: { $0.name == name }) else {
                    throw PowerCutError("the catalogue names no workload '\(name)'")
                }
                let report = try run.run(workload)
                states += report.states
                if let first = report.violations.first { caught = (name, first.state, first.problems.first ?? "") }
            }
            let verdict = Verdict(entry: entry, caught: caught, states: states, mode: options.mode)
            verdicts.append(verdict)
            emit(verdict, json: json)
        }
        let breaking = verdicts.filter { !$0.expectedHarmless }
        let caught = breaking.filter { $0.caught != nil }.count
        let harmless = verdicts.filter { $0.expectedHarmless && $0.caught == nil }.count
        let mismatches = verdicts.filter { !$0.matches }
        if json {
            let object: [String: Any] = ["mode": options.mode.rawValue, "seed": options.seed, "mutants": verdicts.count, "breaking": breaking.count,
                                         "caught": caught, "harmless": harmless, "mismatches": mismatches.map(\.entry.name)]
            PowerCutCommand.emit(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
        } else {
            PowerCutCommand.emit("\(options.mode.rawValue): caught \(caught) of the \(breaking.count) mutants that break an invariant; "
                                 + "\(harmless) of \(verdicts.count - breaking.count) shown harmless; \(mismatches.count) verdicts differ from the catalogue")
        }
        return mismatches.isEmpty
    }

    private static func emit(_ verdict: Verdict, json: Bool) {
        if json {
            var object: [String: Any] = ["mutant": verdict.entry.name, "mode": verdict.mode.rawValue, "caught": verdict.caught != nil,
                                         "expected": verdict.expectedHarmless ? "harmless" : "caught", "states": verdict.states]
            if let caught = verdict.caught { object["workload"] = caught.workload; object["state"] = caught.state; object["problem"] = caught.problem }
            if let reason = verdict.entry.harmless[verdict.mode] { object["reason"] = reason }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) { PowerCutCommand.emit(String(decoding: data, as: UTF8.self)) }
            return
        }
        let name = verdict.entry.name.padding(toLength: 52, withPad: " ", startingAt: 0)
        let mark = verdict.matches ? "" : "  << the catalogue says \(verdict.expectedHarmless ? "harmless" : "caught")"
        if let caught = verdict.caught {
            PowerCutCommand.emit(name + "caught: \(caught.workload) state \(caught.state): \(caught.problem.prefix(100))" + mark)
        } else {
            PowerCutCommand.emit(name + "harmless in \(verdict.states) states: \(verdict.entry.harmless[verdict.mode] ?? "no reason written")" + mark)
        }
    }
}
