import Dispatch
import ShareQueueCore
import ShareQueueSystem

/// Passes decoded batches from a drain running on a thread of its own to the task that
/// handles them, and that task's verdict back, so that the drain's file work stays off the
/// caller's actor while its handlers run in the caller's isolation.
///
/// The drain's thread blocks in ``offer(_:)`` until the task answers: the batch commits only
/// once its handler has returned. That thread is a dispatch thread, never one of the
/// cooperative pool, so the wait holds up no task.
final class BatchHandOff<Batch: Sendable>: @unchecked Sendable {
    // @unchecked: `events`, `waiter` and `verdict` are only touched while `lock` is held.
    enum Event: Sendable {
        case batch(Batch)
        /// The drain's result: its summary, or what it threw, a handler's own error as it is.
        case finished(Result<DrainSummary, any Error>)
    }

    /// What the handling task made of a batch.
    enum Verdict: Sendable {
        case taken
        case kept(any Error)
    }

    private let lock = ThreadLock()
    private var events: [Event] = []
    private var waiter: CheckedContinuation<Event, Never>?
    private var verdict: Verdict?
    private let answered = DispatchSemaphore(value: 0)

    /// Starts `drain` on a dispatch thread; its result is the last event.
    func start(_ drain: @escaping @Sendable () -> Result<DrainSummary, any Error>) {
        DispatchQueue.global(qos: .utility).async { self.post(.finished(drain())) }
    }

    /// On the drain's thread: hands `batch` over and waits for the verdict.
    func offer(_ batch: Batch) -> Verdict {
        post(.batch(batch))
        answered.wait()
        return lock.withLock {
            defer { verdict = nil }
            return verdict ?? .taken
        }
    }

    /// In the handling task: the next batch, or the drain's result.
    func next() async -> Event {
        await withCheckedContinuation { (continuation: CheckedContinuation<Event, Never>) in
            let ready: Event? = lock.withLock {
                if events.isEmpty {
                    waiter = continuation
                    return nil
                }
                return events.removeFirst()
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// In the handling task: answers the batch the drain's thread waits on.
    func answer(_ verdict: Verdict) {
        lock.withLock { self.verdict = verdict }
        answered.signal()
    }

    private func post(_ event: Event) {
        let waiting: CheckedContinuation<Event, Never>? = lock.withLock {
            guard let waiter else {
                events.append(event)
                return nil
            }
            self.waiter = nil
            return waiter
        }
        waiting?.resume(returning: event)
    }
}

/// A sink on the drain's thread that decodes each batch and hands it over.
struct HandOffSink<Batch: Sendable>: DrainSink {
    let decode: @Sendable (DrainBatch) throws -> Batch
    let handOff: BatchHandOff<Batch>

    var needsRecords: Bool { false }

    func deliver(_ batch: DrainBatch) throws {
        switch handOff.offer(try decode(batch)) {
        case .taken: return
        case .kept(let error): throw error
        }
    }
}
