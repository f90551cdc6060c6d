import Foundation
import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// How soon `--watch` delivers a record after its producer exits.
extension Benchmark {
    /// Delay from a producer's exit to the record coming out of a watcher.
    func watchDelay() throws -> [Figure] {
        let queue = try freshQueue("watch").path
        let watcher = try Host.spawn(tools.path("host-drain"), ["--dir", queue, "--watch", "-q"], pipeOutput: true, silenceErrors: true)
        defer {
            kill(watcher.pid, SIGTERM)
            _ = try? Host.waitForExit(watcher.pid)
        }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var delays: [Double] = []
        for i in 0..<sizes.watchRuns {
            _ = try tools.run("share-append", ["--dir", queue, "-q", "watched \(i)"])
            let exited = Host.monotonicSeconds()
            while !pending.contains(0x0A) {
                let n = try watcher.output!.read(into: &chunk, from: 0)
                guard n > 0 else { throw ShareQueueError(.ioError, "the watcher stopped") }
                pending += chunk[0..<n]
            }
            delays.append(Host.monotonicSeconds() - exited)
            pending.removeSubrange(...pending.firstIndex(of: 0x0A)!)
            // A quiet spell between records, as a person sharing things would leave:
            // longer than the default debounce (50 ms), so each record goes at once.
            usleep(60_000)
        }
        return [
            Figure(name: "--watch delay, producer exit to delivery, median", unit: "ms", value: percentile(delays, 0.5) * 1000, floor: nil, target: "< 10 ms", higherIsBetter: false),
            Figure(name: "--watch delay, p99", unit: "ms", value: percentile(delays, 0.99) * 1000, floor: nil, target: "-", higherIsBetter: false),
        ]
    }
}
