import Foundation
import ShareQueue
import ShareQueueSystem

/// What the async form and the router cost over the blocking typed drain of the same records.
extension Benchmark {
    /// Two figures over one filled queue, from 7 runs of the three forms: an async typed drain
    /// against the blocking one, and a router with one handler against the blocking typed drain.
    func asyncAndRouterDrains() throws -> [Figure] {
        let records = min(sizes.drainRecords, 200_000) / 1000 * 1000
        let filled = try freshQueue("router-drain")
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: filled, options: options)
        let batch = Array(repeating: Self.sampleLink, count: 1000)
        for _ in 0..<(records / 1000) { try appender.append(contentsOf: batch, source: "bench") }
        // Each run drains with the three forms one after another, each form first in turn: a form
        // always run first was timed at a moment of its own (the async drain read 0.80 to 1.17 of
        // the blocking one in three runs of one build). Each figure is the run whose ratio is the
        // median, as for the typed append: the ratio of the forms' medians over all runs let the
        // machine's moments decide (0.76 to 1.12 for the async drain in six runs of two builds).
        var runs: [[DrainForm: Double]] = []
        for run in 0..<7 {
            var rates: [DrainForm: Double] = [:]
            for step in 0..<DrainForm.allCases.count {
                let form = DrainForm.allCases[(run + step) % DrainForm.allCases.count]
                rates[form] = try drainRate(form, of: filled.path, records: records, run: run)
            }
            runs.append(rates)
        }
        let async = medianPair(runs.map { ($0[.async]!, $0[.blocking]!) })
        let router = medianPair(runs.map { ($0[.router]!, $0[.blocking]!) })
        return [
            Figure(name: "async typed drain vs the blocking one", unit: "records/s", value: async.value, floor: async.floor, target: ">= 0.95"),
            Figure(name: "router, one kind, vs the typed drain", unit: "records/s", value: router.value, floor: router.floor, target: ">= 0.90"),
        ]
    }

    /// The three ways an app drains one kind of typed content.
    enum DrainForm: CaseIterable { case blocking, async, router }

    /// Records per second of one drain of a fresh copy of `filled`, in one of the forms.
    private func drainRate(_ form: DrainForm, of filled: String, records: Int, run: Int) throws -> Double {
        let queue = try QueueDirectory(path: try copyQueue(filled, as: "\(form)-drain-\(run)"))
        let counted = Locked(0)
        let start = Host.monotonicSeconds()
        switch form {
        case .blocking:
            try QueueDrainer(directory: queue).drain(SharedLink.self) { counted.value += $0.count }
        case .async:
            let drainer = try QueueDrainer(directory: queue)
            _ = try Self.wait { try await drainer.drain(SharedLink.self) { values in counted.value += values.count } }
        case .router:
            var inbox = ContentRouter()
            inbox.on(SharedLink.self) { values in counted.value += values.count }
            _ = try QueueDrainer(directory: queue).drain(into: &inbox)
        }
        return try rate(counted.value, of: records, since: start, "the \(form) drain")
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
