import Foundation
import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Timing tools and the floor, running processes side by side, and percentiles.
extension Benchmark {
    /// Runs host-drain with standard output going to `output`; returns its seconds and peak memory.
    func drainTimed(_ arguments: [String], output: String) throws -> (Double, Int64) {
        let start = Host.monotonicSeconds()
        let peakFile = directory + "/drain-peak-memory.kib"
        let child = try Host.spawn(peakMemory.program, [peakFile, "/bin/sh", "-c", "exec \"$0\" \"$@\" -q > '\(output)'", tools.path("host-drain")] + arguments,
                                   silenceErrors: true)
        let status = try Host.waitForExit(child.pid)
        let seconds = Host.monotonicSeconds() - start
        guard status == 0 else { throw ShareQueueError(.ioError, "host-drain \(arguments.joined(separator: " ")) exited with \(status)") }
        let kibibytes = (try? String(contentsOfFile: peakFile, encoding: .utf8)).flatMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard let kibibytes else { throw ShareQueueError(.ioError, "the peak memory of host-drain was not recorded", path: peakFile) }
        return (seconds, kibibytes * 1024)
    }

    func timed(_ tool: String, _ arguments: [String]) throws -> Double {
        let start = Host.monotonicSeconds()
        let outcome = try tools.run(tool, arguments)
        guard outcome.status == 0 else { throw ShareQueueError(.ioError, "\(tool) exited with \(outcome.status)") }
        return Host.monotonicSeconds() - start
    }

    /// Seconds the C floor takes as a whole process.
    func timedFloor(_ arguments: [String]) throws -> Double {
        let start = Host.monotonicSeconds()
        let outcome = try ToolRunner.run(program: floor.program, arguments)
        guard outcome.status == 0 else { throw ShareQueueError(.ioError, "the C floor exited with \(outcome.status)") }
        return Host.monotonicSeconds() - start
    }

    /// The records per second the floor prints for an `append` run.
    func floorRate(_ arguments: [String]) throws -> Double {
        let outcome = try ToolRunner.run(program: floor.program, arguments)
        let words = String(decoding: outcome.output, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard outcome.status == 0, words.count == 2, let count = Double(words[0]), let seconds = Double(words[1]), seconds > 0 else {
            throw ShareQueueError(.ioError, "the C floor \(arguments.joined(separator: " ")) failed")
        }
        return count / seconds
    }

    func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) throws -> ToolRunner.Outcome) throws {
        try Self.concurrently(count, body)
    }

    static func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) throws -> ToolRunner.Outcome) throws {
        let group = DispatchGroup()
        let failures = FailureList()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                do {
                    let outcome = try body(index)
                    if outcome.status != 0 { failures.add("a benchmark process exited with \(outcome.status)") }
                } catch {
                    failures.add("\(error)")
                }
                group.leave()
            }
        }
        group.wait()
        if let first = failures.first { throw ShareQueueError(.ioError, first) }
    }

    /// Records per second of eight processes told to begin at one moment (a monotonic clock
    /// reading passed to `body`), from the first one's start to the last one's end; each
    /// prints its count and its clock readings at its start and end.
    func startedTogether(_ body: @escaping @Sendable (String) throws -> ToolRunner.Outcome) throws -> Double {
        // What earlier runs left to write back (a database, files removed) goes to the disk first,
        // so that no run's syncs wait behind another's.
        sync()
        // Long enough for eight processes to start on a busy machine; one that starts later still counts.
        let startAt = String(format: "%.6f", Host.monotonicSeconds() + 0.5)
        let lines = LineList()
        try concurrently(8) { _ in
            let outcome = try body(startAt)
            lines.add(String(decoding: outcome.output, as: UTF8.self))
            return outcome
        }
        let readings = lines.all.map { $0.split(whereSeparator: \.isWhitespace).compactMap { Double($0) } }
        guard readings.count == 8, readings.allSatisfy({ $0.count == 3 }) else {
            throw ShareQueueError(.ioError, "a benchmark process printed no count and times: \(lines.all)")
        }
        let first = readings.map { $0[1] }.min()!, last = readings.map { $0[2] }.max()!
        return readings.map { $0[0] }.reduce(0, +) / (last - first)
    }

    func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))]
    }

    /// Of rates measured in pairs close in time, the pair whose ratio is the median: the machine's
    /// drift moves both of a pair alike, where the ratio of two medians lets a few moments decide.
    func medianPair(_ pairs: [(value: Double, floor: Double)]) -> (value: Double, floor: Double) {
        pairs.sorted { $0.value / $0.floor < $1.value / $1.floor }[pairs.count / 2]
    }
}

/// Failures collected from threads.
private final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) { lock.lock(); messages.append(message); lock.unlock() }
    var first: String? { lock.lock(); defer { lock.unlock() }; return messages.first }
}

/// Lines printed by processes run from threads.
private final class LineList: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}
