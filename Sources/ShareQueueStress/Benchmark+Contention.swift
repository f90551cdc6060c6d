import Foundation
import ShareQueueCore
import ShareQueueSystem

/// Contention: eight durable producer processes and a consumer draining while they append.
extension Benchmark {
    /// Records per second from the producers' start until the consumer (in this process,
    /// writing JSON Lines synced per batch) has taken all of them: ShareQueue, then SQLite (FULL).
    func contention(run: Int) throws -> (queue: Double, sqlite: Double) {
        let perProducer = sizes.durableAppends / 8, total = perProducer * 8
        let tools = self.tools

        let queue = try freshQueue("contention-\(run)")
        // Producers are spawned on another thread: a child between its clone and its exec
        // holds every descriptor of this process for a moment, the drain lock's among them,
        // so a drain started just then waits for it instead of giving up.
        var options = DrainOptions()
        options.waitSeconds = 10
        let drainer = try QueueDrainer(directory: queue, options: options)
        var sink = JSONLinesFileSink(file: try JSONLinesFile(scratch("contention.jsonl")))
        defer { sink.file.close() }
        let queueSeconds = try whileProducing({
            try Self.concurrently(8) { _ in
                try tools.run("share-stress", ["bench-append", "--dir", queue.path, "--count", String(perProducer)])
            }
        }, consume: {
            _ = try drainer.drain(into: &sink)
            return sink.records
        }, until: total)

        let database = scratch("contention-\(run).db")
        removeDatabase(database)
        // Created before the producers start, so that none of them races to create it.
        let peer = try SQLitePeer(path: database, synchronous: .full)
        var output = try JSONLinesFile(scratch("contention-sqlite.jsonl"))
        defer { output.close() }
        var taken = 0
        let sqliteSeconds = try whileProducing({
            try Self.concurrently(8) { _ in
                try tools.run("share-stress", ["bench-sqlite", "--db", database, "--count", String(perProducer)])
            }
        }, consume: {
            taken += try peer.drainBatch(DrainOptions().batchSize, row: { output.append($0) }, delivered: { () throws(ShareQueueError) in try output.flush() })
            return taken
        }, until: total)
        return (Double(total) / queueSeconds, Double(total) / sqliteSeconds)
    }

    /// Runs `produce` on another thread while calling `consume` (which returns how many records
    /// it has taken so far) until it has taken `total`; a consumer that found nothing new
    /// waits a millisecond before it looks again. Returns the seconds from start to the last record.
    private func whileProducing(_ produce: @escaping @Sendable () throws -> Void, consume: () throws -> Int, until total: Int) throws -> Double {
        let done = DispatchSemaphore(value: 0)
        let failure = ProducerFailure()
        let start = Host.monotonicSeconds()
        Thread.detachNewThread {
            do { try produce() } catch { failure.error = error }
            done.signal()
        }
        var taken = 0, producersDone = false
        while taken < total {
            let before = taken
            // Looked at before consuming, so that a drain after the producers' end has seen all they wrote.
            producersDone = producersDone || done.wait(timeout: .now()) == .success
            taken = try consume()
            if producersDone, let error = failure.error { throw error }
            if taken == before && taken < total {
                // Every producer had exited and a drain found nothing: records were lost.
                if producersDone { throw ShareQueueError(.ioError, "the contention run's consumer took \(taken) records of \(total)") }
                usleep(1000)
            }
        }
        let seconds = Host.monotonicSeconds() - start
        if !producersDone { done.wait() }
        return seconds
    }
}

/// A producer thread's error, read once the thread has signalled.
private final class ProducerFailure: @unchecked Sendable {
    var error: (any Error)?
}
