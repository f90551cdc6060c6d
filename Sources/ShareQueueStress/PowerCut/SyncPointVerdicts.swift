import Foundation
import ShareQueueSystem

/// `share-stress power-cut --sync-points`: each sync point left out in turn,
/// every workload explored without it, and the verdict: needed (with the first
/// violation its loss causes) or not shown to be needed by any workload.
enum SyncPointVerdicts {
    static func run(tools: ToolRunner, options: PowerCutRun.Options, workloads: [PowerCutWorkload], directory: String, json: Bool) throws -> Bool {
        if !json { PowerCutCommand.emit("power-cut: each sync point left out, mode \(options.mode.rawValue), seed \(options.seed), at most \(options.states) states per workload") }
        for point in SyncPoint.allCases {
            var skipping = options
            skipping.skipped = point
            let run = PowerCutRun(tools: tools, options: skipping, directory: directory)
            var caught: (workload: String, violation: PowerCutRun.Violation)?
            var states = 0
            for workload in workloads where caught == nil {
                let report = try run.run(workload)
                states += report.states
                if let first = report.violations.first { caught = (workload.name, first) }
            }
            if json {
                var object: [String: Any] = ["syncPoint": point.rawValue, "needed": caught != nil, "states": states, "seed": options.seed]
                if let caught { object["workload"] = caught.workload; object["state"] = caught.violation.state; object["problem"] = caught.violation.problems.first ?? "" }
                PowerCutCommand.emit(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
            } else if let caught {
                PowerCutCommand.emit(point.rawValue.padding(toLength: 38, withPad: " ", startingAt: 0) + "needed: \(caught.workload) state \(caught.violation.state): \(caught.violation.problems.first ?? "")")
            } else {
                PowerCutCommand.emit(point.rawValue.padding(toLength: 38, withPad: " ", startingAt: 0) + "no violation in \(states) states")
            }
        }
        return true
    }
}
