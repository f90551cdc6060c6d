import Foundation
import ShareQueueCore
import ShareQueueStore
import ShareQueueSystem
import ToolSupport

/// What a stress run is asked to do.
struct StressOptions: Sendable {
    var directory = ""
    var producers = 4
    var records = 100
    var drainers = 1
    var kill = false
    var duration: Double? = nil
    var library = false
    /// Drainers ingest into this SQLite store, which must then hold each record exactly once.
    var store: String? = nil
    /// Drainers are long-running `host-drain --watch` processes, restarted when killed.
    var watch = false
}

/// The figures a stress run reports.
struct StressReport {
    var verdict: DeliveryLedger.Verdict
    var kills: Int
    var failures: [String]
    var quarantined: Int
    var seconds: Double

    var exactlyOnce = false

    var passed: Bool { verdict.passed && failures.isEmpty && (!exactlyOnce || verdict.duplicates == 0) }
}

/// Producers and drainers as separate processes, all at once, with a killer
/// that sends SIGKILL to random ones at random moments; then a last drain and
/// the check that nothing acknowledged was lost or damaged.
final class StressRun: @unchecked Sendable {
    private let options: StressOptions
    private let tools: ToolRunner
    private let lock = NSLock()
    // Guarded by `lock`:
    private var ledger = DeliveryLedger()
    private var running: [Int32: Bool] = [:]  // pid, and whether it is a producer
    private var kills = 0
    private var killedByKiller: Set<Int32> = []
    private var failures: [String] = []
    private var producersDone = false

    init(options: StressOptions, tools: ToolRunner) {
        self.options = options
        self.tools = tools
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func run() throws -> StressReport {
        let start = Date()
        let deadline = options.duration.map { start.addingTimeInterval($0) }
        let producers = DispatchGroup()
        let drainers = DispatchGroup()
        for producer in 1...options.producers {
            producers.enter()
            Thread.detachNewThread { [self] in
                if options.library { produceThroughLibrary(producer, until: deadline) } else { produceThroughTool(producer, until: deadline) }
                producers.leave()
            }
        }
        for _ in 0..<options.drainers {
            drainers.enter()
            Thread.detachNewThread { [self] in
                drainRepeatedly()
                drainers.leave()
            }
        }
        let killer = DispatchGroup()
        if options.kill {
            killer.enter()
            Thread.detachNewThread { [self] in
                killAtRandom()
                killer.leave()
            }
        }
        producers.wait()
        locked { producersDone = true }
        killer.wait()
        if options.watch {
            // Watchers run until told to stop, which they must do cleanly.
            locked { for (pid, isProducer) in running where !isProducer { kill(pid, SIGTERM) } }
        }
        drainers.wait()

        // Nobody is killed now: one last drain must deliver all that is left.
        let last = try tools.run("host-drain", ["--dir", options.directory, "-q", "--wait", "60"] + sinkArguments)
        locked {
            if last.status != 0 { failures.append("the final drain exited with \(last.status)") }
            ledger.addDrainOutput(last.output)
        }
        if let store = options.store {
            let lines = try StoreSink(path: store, queue: try QueueDirectory(path: options.directory)).recordLines()
            locked { ledger.addDrainOutput(Array(lines.map { $0 + "\n" }.joined().utf8)) }
        }
        let status = try tools.run("host-drain", ["--dir", options.directory, "--status", "--json"])
        var quarantined = 0
        if case .object(let fields)? = (try? JSONText(validating: status.output))?.value {
            if case .number(let count)? = fields["quarantined"] { quarantined = Int(count) ?? 0 }
            if case .number(let pending)? = fields["pending"], pending != "0" {
                locked { failures.append("\(pending) records still pending after the final drain") }
            }
        }
        return locked {
            StressReport(verdict: ledger.verdict, kills: kills, failures: failures, quarantined: quarantined,
                         seconds: Date().timeIntervalSince(start), exactlyOnce: options.store != nil)
        }
    }

    private var sinkArguments: [String] { options.store.map { ["--store", $0] } ?? [] }

    private func track(_ pid: Int32, producer: Bool) { locked { running[pid] = producer } }

    /// Counts a run that died at its own crash point (one the killer did not kill). Call with the lock held.
    private func countSelfKill(_ outcome: ToolRunner.Outcome, pid: Int32, planned: [String: String]) {
        if outcome.wasKilled && !planned.isEmpty && !killedByKiller.contains(pid) { kills += 1 }
    }
    private func untrack(_ pid: Int32) { _ = locked { running.removeValue(forKey: pid) } }

    /// With --kill, some runs are also told to crash at a random step of their own.
    private func crashEnvironment(appendSide: Bool, visits: Int) -> [String: String] {
        guard options.kill, Int.random(in: 0..<100) < (appendSide ? 3 : 10) else { return [:] }
        let points = CrashPoint.allCases.filter { $0.rawValue.hasPrefix(appendSide ? "append-" : "drain-") }
        return ["SHARE_QUEUE_CRASH_AT": "\(points.randomElement()!.rawValue):\(Int.random(in: 1...max(1, visits)))"]
    }

    private func produceThroughTool(_ producer: Int, until deadline: Date?) {
        for sequence in 1...options.records {
            if let deadline, Date() > deadline { return }
            let text = StressText.make(producer: producer, sequence: sequence)
            let plan = crashEnvironment(appendSide: true, visits: 1)
            var pid: Int32 = 0
            do {
                let outcome = try tools.run("share-append", ["--dir", options.directory, "--source", "stress-p\(producer)", text],
                                            environment: plan, started: { pid = $0; track($0, producer: true) }, finished: untrack)
                let id = String(decoding: outcome.output, as: UTF8.self).split(separator: "\n").first.map(String.init)
                locked {
                    countSelfKill(outcome, pid: pid, planned: plan)
                    if outcome.status == 0, let id {
                        ledger.acknowledge(id: id, producer: producer, sequence: sequence)
                    } else if !outcome.wasKilled {
                        failures.append("share-append exited with \(outcome.status)")
                    }
                }
            } catch {
                locked { failures.append("cannot run share-append: \(error)") }
                return
            }
        }
    }

    private func produceThroughLibrary(_ producer: Int, until deadline: Date?) {
        var next = 1
        while next <= options.records {
            if let deadline, Date() > deadline { return }
            let count = options.records - next + 1
            let plan = crashEnvironment(appendSide: true, visits: count)
            var pid: Int32 = 0
            do {
                let outcome = try tools.run("share-stress", ["produce", "--dir", options.directory, "--producer", String(producer),
                                                             "--first", String(next), "--count", String(count)],
                                            environment: plan, started: { pid = $0; track($0, producer: true) }, finished: untrack)
                let acknowledged = LibraryProducer.acknowledgements(outcome.output)
                locked {
                    countSelfKill(outcome, pid: pid, planned: plan)
                    for (sequence, id) in acknowledged { ledger.acknowledge(id: id, producer: producer, sequence: sequence) }
                    if outcome.status != 0 && !outcome.wasKilled { failures.append("the library producer exited with \(outcome.status)") }
                }
                if outcome.status == 0 { return }
                // The append in flight when it died may or may not be in the queue: skip its number.
                next = (acknowledged.last?.sequence ?? next - 1) + 2
            } catch {
                locked { failures.append("cannot run the library producer: \(error)") }
                return
            }
        }
    }

    /// Runs host-drain again and again, as an over-eager cron would.
    private func drainRepeatedly() {
        while !locked({ producersDone }) {
            let batch = Int.random(in: 1...50)
            let plan = crashEnvironment(appendSide: false, visits: 3)
            var pid: Int32 = 0
            var arguments = ["--dir", options.directory, "-q", "--wait", "1", "--batch", String(batch)] + sinkArguments
            if options.watch { arguments += ["--watch", "--debounce", "\(Int.random(in: 0...50))ms"] }
            do {
                // A watcher told to stop before it is ready must still stop cleanly.
                let outcome = try tools.run("host-drain", arguments, environment: plan, holdingStops: options.watch,
                                            started: { pid = $0; track($0, producer: false) }, finished: untrack)
                locked {
                    countSelfKill(outcome, pid: pid, planned: plan)
                    ledger.addDrainOutput(outcome.output)
                    if ![0, 75].contains(outcome.status) && !outcome.wasKilled { failures.append("host-drain exited with \(outcome.status)") }
                }
            } catch {
                locked { failures.append("cannot run host-drain: \(error)") }
                return
            }
            usleep(UInt32.random(in: 0...20_000))
        }
    }

    private func killAtRandom() {
        while !locked({ producersDone }) {
            usleep(UInt32.random(in: 5_000...50_000))
            locked {
                guard let pid = running.keys.randomElement() else { return }
                Host.kill(pid)
                running.removeValue(forKey: pid)
                killedByKiller.insert(pid)
                kills += 1
            }
        }
    }
}
