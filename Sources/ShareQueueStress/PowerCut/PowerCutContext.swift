import Foundation
import ShareQueueSystem
import ToolSupport

/// Where a power-cut workload runs, and the tools it runs, each under a deadline.
struct PowerCutContext {
    let tools: ToolRunner
    /// The workload's root: the queue is `root/q`, a store `root/store.sqlite`. Only files under it are traced.
    let root: String
    /// Files the workload reads (attachments' sources), outside the root.
    let inputs: String
    /// The environment of the tools: the trace, and a sync point left out, while the traced part runs.
    var environment: [String: String] = [:]
    /// Ids acknowledged before the traced part began: durable however the power is cut.
    var acknowledged: [String] = []
    /// Ids a drain delivered before the traced part began.
    var delivered: [String] = []
    /// Acknowledged ids whose bytes the setup damaged on purpose: set aside, not delivered.
    var damaged: [String] = []
    /// Every id any producer printed: all that may ever be delivered.
    var known: Set<String> = []
    /// The key of each keyed record appended, and the order of all, for a drain that coalesces.
    var keyOfID: [String: String] = [:]
    var appendOrder: [String] = []
    /// The copies of attachments the workload's drains handed over, by record id, relative to the root.
    var handedOver: [String: [String]] = [:]
    /// The records appended with a key, in the order appended: the last of a key is its newest.
    var keyed: [(key: String, id: String)] { appendOrder.compactMap { id in keyOfID[id].map { ($0, id) } } }

    var queue: String { root + "/q" }
    var store: String { root + "/store.sqlite" }

    /// The exit statuses the tools document.
    static let documentedStatuses: Set<Int32> = [0, 64, 65, 66, 69, 70, 73, 74, 75, 77, 78]

    /// How long any one tool may run before it counts as hung.
    static let deadline: Double = 20

    /// Runs a tool with a deadline: killed when it passes it, reported with status -1.
    func run(_ tool: String, _ arguments: [String], input: [UInt8]? = nil, extra: [String: String] = [:]) throws -> ToolRunner.Outcome {
        let done = DispatchSemaphore(value: 0)
        let timedOut = Flag()
        let outcome = try tools.run(tool, arguments, input: input, environment: environment.merging(extra) { $1 }, started: { pid in
            DispatchQueue.global().async {
                if done.wait(timeout: .now() + Self.deadline) == .timedOut {
                    timedOut.set()
                    Host.kill(pid)
                }
            }
        }, finished: { _ in done.signal() })
        return timedOut.isSet ? ToolRunner.Outcome(status: -1, output: outcome.output) : outcome
    }

    /// Appends through `share-append`, which must succeed; returns the ids it printed, now known and acknowledged.
    @discardableResult
    mutating func append(_ arguments: [String], input: [UInt8]? = nil, extra: [String: String] = [:]) throws -> [String] {
        let outcome = try run("share-append", ["--dir", queue] + arguments, input: input, extra: extra)
        guard outcome.status == 0 else { throw PowerCutError("share-append \(arguments.joined(separator: " ")) exited with \(outcome.status)") }
        let ids = Self.lines(outcome.output)
        noteAppended(ids, key: arguments.firstIndex(of: "--key").map { arguments[$0 + 1] })
        return ids
    }

    /// Notes ids a producer printed, in order, with their key.
    mutating func noteAppended(_ ids: [String], key: String? = nil) {
        known.formUnion(ids)
        appendOrder += ids
        if let key { for id in ids { keyOfID[id] = key } }
    }

    /// Runs `host-drain` on the queue, which must succeed; returns the ids it printed.
    @discardableResult
    mutating func drain(_ arguments: [String] = [], extra: [String: String] = [:]) throws -> [String] {
        let outcome = try run("host-drain", ["--dir", queue, "--quiet"] + arguments, extra: extra)
        guard outcome.status == 0 else { throw PowerCutError("host-drain \(arguments.joined(separator: " ")) exited with \(outcome.status)") }
        for (id, paths) in Self.attachmentPaths(inJSONLines: outcome.output) {
            handedOver[id] = paths.map { $0.hasPrefix(root + "/") ? String($0.dropFirst(root.count + 1)) : $0 }
        }
        return Self.ids(inJSONLines: outcome.output)
    }

    /// The paths of the attachments' copies each JSON Lines record names, by id.
    static func attachmentPaths(inJSONLines output: [UInt8]) -> [(String, [String])] {
        lines(output).compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let id = object["id"] as? String,
                  let attachments = object["attachments"] as? [[String: Any]] else { return nil }
            return (id, attachments.compactMap { $0["path"] as? String })
        }
    }

    static func lines(_ output: [UInt8]) -> [String] {
        String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The `id` of each JSON Lines record (at the top level, or under `record` for a dead letter).
    static func ids(inJSONLines output: [UInt8]) -> [String] {
        lines(output).compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (object["id"] as? String) ?? ((object["record"] as? [String: Any])?["id"] as? String)
        }
    }
}

/// A power-cut run that could not set up or run its workload.
struct PowerCutError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A flag one thread sets and another reads.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
