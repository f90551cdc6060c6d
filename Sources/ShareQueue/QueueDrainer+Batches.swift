import ShareQueueCore
import ShareQueueSystem

extension QueueDrainer {
    /// The queue's records of `type`'s kind, decoded, a batch at a time, as an `AsyncSequence`.
    ///
    /// ```swift
    /// for try await batch in drainer.batches(of: SharedLink.self) {
    ///     for link in batch { links[link.id] = link.value }
    /// }
    /// ```
    ///
    /// The drain starts when the loop asks for the first batch, and reads and decodes on a
    /// thread of its own; the loop's body runs in the caller's isolation. A batch commits
    /// when the loop asks for the next one, so a batch the loop breaks out of, throws out
    /// of, or is cancelled in stays queued, with everything after it, for the next drain.
    /// The drain holds the queue's drain lock from the first batch until the loop ends:
    /// after `break` it lets go a moment later, on the drain's thread; a cancelled loop
    /// throws `CancellationError` once it has let go. What is delivered, and what happens
    /// to other kinds, is as for `drain(_:otherKinds:_:)`; attachments are files the app owns.
    /// - Parameters:
    ///   - type: The content type; its records are those of its ``SharedContent/contentKind``.
    ///   - otherKinds: What to do with records of another kind; ``OtherKindPolicy/fail`` by default.
    /// - Returns: The batches, for one loop.
    public func batches<Value: SharedContent & Sendable>(of type: Value.Type, otherKinds: OtherKindPolicy = .fail) -> DrainedBatches<Value> {
        DrainedBatches(drainer: self, decoder: ValueDecoder(kind: Value.contentKind, otherKinds: otherKinds))
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", takes the records already queued)")
    public func batches<Value: Decodable & Sendable>(of type: Value.Type, otherKinds: OtherKindPolicy = .fail) -> DrainedBatches<Value> {
        fatalError("unavailable")
    }
}

/// The batches of one content type a drain takes, from ``QueueDrainer/batches(of:otherKinds:)``.
///
/// Iterate it once. The iterator throws what the drain throws (a ``ShareQueueError``), or
/// `CancellationError` when its task is cancelled. An error the loop's body throws leaves
/// the loop as it is, never wrapped, and the batch the loop held stays queued.
public struct DrainedBatches<Value: Decodable & Sendable>: AsyncSequence, Sendable {
    /// One batch's values, in queue order.
    public typealias Element = [DrainedValue<Value>]

    let drainer: QueueDrainer
    let decoder: ValueDecoder<Value>

    /// The iterator: asking it for a batch commits the one before.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let run: BatchRun<Value>

        /// Commits the batch returned before, and waits for the next.
        /// - Returns: The next batch, or nil once the queue is drained (or its limit reached).
        /// - Throws: What the drain throws, or `CancellationError` once the task is cancelled;
        ///   the batch returned before then stays queued.
        public mutating func next() async throws -> [DrainedValue<Value>]? { try await run.next() }
    }

    /// The iterator, which starts the drain when first asked; make one only.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(run: BatchRun(drainer: drainer, decoder: decoder)) }
}

/// One loop over ``DrainedBatches``: the drain on its thread, and the batch the loop holds.
///
/// Dropped while holding a batch (the loop broke out or threw), it tells the drain to keep
/// that batch queued and stop.
final class BatchRun<Value: Decodable & Sendable>: @unchecked Sendable {
    // @unchecked: `state` is only touched while `lock` is held; `handOff` and `cancelled` are Sendable.
    private enum State {
        case notStarted
        /// The drain runs; `holding` while the loop has a batch it has not committed.
        case running(holding: Bool)
        case done
    }

    private let drainer: QueueDrainer
    private let decoder: ValueDecoder<Value>
    private let handOff = BatchHandOff<[DrainedValue<Value>]>()
    private let cancelled = CancellationFlag()
    private let lock = ThreadLock()
    private var state = State.notStarted

    init(drainer: QueueDrainer, decoder: ValueDecoder<Value>) {
        self.drainer = drainer
        self.decoder = decoder
    }

    deinit {
        if case .running(holding: true) = state { handOff.answer(.kept(LoopEnded())) }
    }

    func next() async throws -> [DrainedValue<Value>]? {
        switch lock.withLock({ state }) {
        case .done:
            return nil
        case .notStarted:
            if Task.isCancelled {
                lock.withLock { state = .done }
                throw CancellationError()
            }
            try start()
        case .running(holding: let holding):
            if holding {
                if Task.isCancelled { try await stop() }
                lock.withLock { state = .running(holding: false) }
                handOff.answer(.taken)
            }
        }
        let event = await withTaskCancellationHandler { await handOff.next() } onCancel: { cancelled.raise() }
        switch event {
        case .batch(let batch):
            lock.withLock { state = .running(holding: true) }
            if Task.isCancelled { try await stop() }
            return batch
        case .finished(let result):
            lock.withLock { state = .done }
            if Task.isCancelled { throw CancellationError() }
            _ = try result.get()
            return nil
        }
    }

    private func start() throws(ShareQueueError) {
        let drainer = try self.drainer.deliveringAttachments().stopping(when: cancelled)
        let decoder = self.decoder, handOff = self.handOff
        lock.withLock { state = .running(holding: false) }
        handOff.start {
            var sink = HandOffSink(decode: { batch in try decoder.decode(batch) }, handOff: handOff)
            do { return .success(try drainer.drain(into: &sink)) } catch { return .failure(error) }
        }
    }

    /// Keeps the batch held queued, waits for the drain to let go of the queue, and throws `CancellationError`.
    private func stop() async throws -> Never {
        lock.withLock { state = .done }
        handOff.answer(.kept(CancellationError()))
        while case .batch = await handOff.next() { handOff.answer(.kept(CancellationError())) }
        throw CancellationError()
    }
}

/// Why a batch stays queued when its loop ended without asking for the next one.
struct LoopEnded: Error, CustomStringConvertible {
    var description: String { "the loop over the batches ended before it asked for the next one; the batch it held stays queued" }
}
