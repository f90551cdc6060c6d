import Foundation
import ShareQueue
import ShareQueueSystem

/// What the async form and the router cost over the blocking typed drain of the same records.
extension Benchmark {
    /// Two figures over one filled queue, medians of 3 interleaved runs: an async typed drain
    /// against the blocking one, and a router with one handler against the blocking typed drain.
    func asyncAndRouterDrains() throws -> [Figure] {
        let records = min(sizes.drainRecords, 200_000) / 1000 * 1000
        let filled = try freshQueue("router-drain")
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: filled, options: options)
        let batch = Array(repeating: Self.sampleLink, count: 1000)
        for _ in 0..<(records / 1000) { try appender.append(contentsOf: batch, source: "bench") }
        var blockingRates: [Double] = [], asyncRates: [Double] = [], routerRates: [Double] = []
        for run in 0..<3 {
            var queue = try QueueDirectory(path: try copyQueue(filled.path, as: "blocking-drain-\(run)"))
            var decoded = 0
            var start = Host.monotonicSeconds()
            try QueueDrainer(directory: queue).drain(SharedLink.self) { decoded += $0.count }
            blockingRates.append(try rate(decoded, of: records, since: start, "the blocking drain"))

            queue = try QueueDirectory(path: try copyQueue(filled.path, as: "async-drain-\(run)"))
            let counted = Locked(0)
            let drainer = QueueDrainer(directory: queue)
            start = Host.monotonicSeconds()
            _ = try Self.wait { try await drainer.drain(SharedLink.self) { values in counted.value += values.count } }
            asyncRates.append(try rate(counted.value, of: records, since: start, "the async drain"))

            queue = try QueueDirectory(path: try copyQueue(filled.path, as: "router-drain-\(run)"))
            let routed = Locked(0)
            var inbox = ContentRouter()
            inbox.on(SharedLink.self) { values in routed.value += values.count }
            start = Host.monotonicSeconds()
            _ = try QueueDrainer(directory: queue).drain(into: &inbox)
            routerRates.append(try rate(routed.value, of: records, since: start, "the router"))
        }
        return [
            Figure(name: "async typed drain vs the blocking one", unit: "records/s", value: median(asyncRates), floor: median(blockingRates),
                   target: ">= 0.95"),
            Figure(name: "router, one kind, vs the typed drain", unit: "records/s", value: median(routerRates), floor: median(blockingRates),
                   target: ">= 0.90"),
        ]
    }

    private func rate(_ count: Int, of records: Int, since start: Double, _ what: String) throws -> Double {
        guard count == records else { throw ShareQueueError(.ioError, "\(what) decoded \(count) records, not \(records)") }
        return Double(count) / (Host.monotonicSeconds() - start)
    }

    /// Runs `body` in a task and blocks this thread until it is done: the benchmark itself is synchronous.
    private static func wait<Output: Sendable>(_ body: @escaping @Sendable () async throws -> Output) throws -> Output {
        let result = Locked<Result<Output, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do { result.value = .success(try await body()) } catch { result.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return try result.value!.get()
    }
}
