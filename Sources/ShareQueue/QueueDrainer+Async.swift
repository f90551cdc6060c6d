import ShareQueueSystem

extension QueueDrainer {
    /// Drains the queue into `sink` without blocking the caller: the drain runs
    /// on a thread of its own while the calling task waits.
    ///
    /// ```swift
    /// let summary = try await drainer.drain(into: &inbox)
    /// ```
    ///
    /// Cancelling the task stops the drain between batches, as
    /// `DrainOptions.shouldStop` does: the batches delivered so far are
    /// cleared, the rest stay queued, and the summary says
    /// `DrainSummary.stoppedOnRequest`. A task cancelled before the drain
    /// starts delivers nothing.
    /// - Parameter sink: Where the records go; the drain works on a copy and
    ///   hands back what it became, after a failure too.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What the blocking `drain(into:)` throws: the sink's own error as it is, or a `ShareQueueError`.
    @discardableResult
    public func drain<Sink: DrainSink & Sendable>(into sink: inout Sink) async throws -> DrainSummary {
        let start = sink
        let (result, after) = try await cancellable { drainer -> (Result<DrainSummary, any Error>, Sink) in
            var sink = start
            do { return (.success(try drainer.drain(into: &sink)), sink) } catch { return (.failure(error), sink) }
        } ?? (.success(Self.cancelledBeforeStart), start)
        sink = after
        return try result.get()
    }

    /// Drains the records of `type`'s kind into `body` without blocking the caller: the
    /// drain reads and decodes on a thread of its own, and `body` runs in the caller's
    /// isolation (on the main actor for a `@MainActor` caller), so it may change the
    /// caller's state and `await`.
    ///
    /// ```swift
    /// try await drainer.drain(SharedLink.self) { batch in
    ///     for link in batch { self.links[link.id] = link.value }      // a @MainActor model, no lock
    ///     try await database.save(batch)
    /// }
    /// ```
    ///
    /// A batch commits once `body` returns; if it throws, that batch and everything after it
    /// stay queued. `Task.isCancelled` in `body` is the draining task's: cancelling it stops
    /// the drain once `body` returns, with that batch delivered and the rest queued
    /// (`DrainSummary.stoppedOnRequest`). See `drain(_:otherKinds:_:)` for what is
    /// delivered; attachments are files the app owns (see ``DrainedValue/attachments``).
    /// - Parameters:
    ///   - type: The content type; its records are those of its ``SharedContent/contentKind``.
    ///   - otherKinds: What to do with records of another kind; ``OtherKindPolicy/fail`` by default.
    ///   - isolation: The caller's actor, where `body` runs; left to its default.
    ///   - body: Receives each batch's values in queue order; throwing keeps the batch queued.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What `body` throws, as it is, with its batch and everything after it queued;
    ///   otherwise a ``ShareQueueError``, as the blocking typed drain does.
    @discardableResult
    public func drain<Value: SharedContent & Sendable>(_ type: Value.Type, otherKinds: OtherKindPolicy = .fail,
                                                       isolation: isolated (any Actor)? = #isolation,
                                                       _ body: ([DrainedValue<Value>]) async throws -> Void) async throws -> DrainSummary {
        try await drain(type, kind: Value.contentKind, otherKinds: otherKinds, isolation: isolation, body)
    }

    /// Drains the records of `type`'s kind into a synchronous `body` without blocking the
    /// caller, as the form with an `async` body does; `body` runs in the caller's isolation.
    ///
    /// It exists so that in an `async` function a body without `await` resolves to an `async`
    /// drain, not to the blocking one, which would hold the caller's thread.
    @discardableResult
    public func drain<Value: SharedContent & Sendable>(_ type: Value.Type, otherKinds: OtherKindPolicy = .fail,
                                                       isolation: isolated (any Actor)? = #isolation,
                                                       _ body: ([DrainedValue<Value>]) throws -> Void) async throws -> DrainSummary {
        try await drain(type, kind: Value.contentKind, otherKinds: otherKinds, isolation: isolation, body)
    }

    /// Drains the records of one kind, decoded as `type`, a type that is not `SharedContent`,
    /// without blocking the caller; as `drain(_:otherKinds:isolation:_:)` does for a content type.
    /// - Parameters:
    ///   - type: The type the values decode as.
    ///   - kind: The records' kind, as the producer appended them with `append(_:kind:source:key:meta:)`.
    ///   - otherKinds: What to do with records of another kind; ``OtherKindPolicy/fail`` by default.
    ///   - isolation: The caller's actor, where `body` runs; left to its default.
    ///   - body: Receives each batch's values in queue order; throwing keeps the batch queued.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What `body` throws, as it is, with its batch and everything after it queued;
    ///   otherwise a ``ShareQueueError``, as the blocking typed drain does.
    @discardableResult
    public func drain<Value: Decodable & Sendable>(_ type: Value.Type, kind: Record.Kind, otherKinds: OtherKindPolicy = .fail,
                                                   isolation: isolated (any Actor)? = #isolation,
                                                   _ body: ([DrainedValue<Value>]) async throws -> Void) async throws -> DrainSummary {
        let decoder = ValueDecoder<Value>(kind: kind, otherKinds: otherKinds)
        return try await handingOff(decode: { batch in try decoder.decode(batch) }, isolation: isolation, body)
    }

    /// Drains the records of one kind, decoded as `type`, into a synchronous `body` without
    /// blocking the caller, as the form with an `async` body does, and for the same reason
    /// as `drain(_:otherKinds:isolation:_:)` with a synchronous body.
    @discardableResult
    public func drain<Value: Decodable & Sendable>(_ type: Value.Type, kind: Record.Kind, otherKinds: OtherKindPolicy = .fail,
                                                   isolation: isolated (any Actor)? = #isolation,
                                                   _ body: ([DrainedValue<Value>]) throws -> Void) async throws -> DrainSummary {
        let decoder = ValueDecoder<Value>(kind: kind, otherKinds: otherKinds)
        return try await handingOff(decode: { batch in try decoder.decode(batch) }, isolation: isolation) { values in
            // Naming `isolation` isolates this closure to it (SE-0420), so that `body` runs in the caller's isolation.
            _ = isolation
            try body(values)
        }
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", takes the records already queued), or pass kind:")
    @discardableResult
    public func drain<Value: Decodable & Sendable>(_ type: Value.Type, otherKinds: OtherKindPolicy = .fail,
                                                   isolation: isolated (any Actor)? = #isolation,
                                                   _ body: ([DrainedValue<Value>]) async throws -> Void) async throws -> DrainSummary {
        fatalError("unavailable")
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", takes the records already queued), or pass kind:")
    @discardableResult
    public func drain<Value: Decodable & Sendable>(_ type: Value.Type, otherKinds: OtherKindPolicy = .fail,
                                                   isolation: isolated (any Actor)? = #isolation,
                                                   _ body: ([DrainedValue<Value>]) throws -> Void) async throws -> DrainSummary {
        fatalError("unavailable")
    }

    /// Drains the queue through `router` without blocking the caller: the drain reads and
    /// decodes on a thread of its own, and the handlers, `async` or not, run in the caller's
    /// isolation, one batch at a time; the batch commits once every handler has returned.
    ///
    /// ```swift
    /// var inbox = ContentRouter()
    /// inbox.on(SharedLink.self) { batch in try await database.save(batch) }
    /// inbox.on(CurrentWallpaper.self) { batch in self.wallpaper = batch.last?.value ?? self.wallpaper }
    /// try await drainer.drain(into: &inbox)
    /// ```
    ///
    /// Cancelling the task stops the drain once the batch in hand is delivered, as for
    /// `drain(_:otherKinds:_:)`; handlers see the task's cancellation.
    /// - Parameters:
    ///   - router: The handlers; it counts in ``ContentRouter/setAside`` what it refuses.
    ///   - isolation: The caller's actor, where the handlers run; left to its default.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What a handler throws, as it is, with its batch and everything after it queued;
    ///   otherwise what the blocking `drain(into:)` throws.
    @discardableResult
    public func drain(into router: inout ContentRouter, isolation: isolated (any Actor)? = #isolation) async throws -> DrainSummary {
        let plan = router.plan
        let refused = Locked<[Record.Kind: Int]>([:])
        let result: Result<DrainSummary, any Error>
        do {
            result = .success(try await handingOff(decode: { batch in
                do { return try plan.split(batch) } catch let refusal as RouterPlan.Refusal {
                    // Only the drain's thread writes it, and the task reads it once the drain is over.
                    refused.value.merge(refusal.unhandled, uniquingKeysWith: +)
                    throw refusal.refusal
                }
            }, isolation: isolation) { groups in try await router.deliver(groups, isolation: isolation) })
        } catch {
            result = .failure(error)
        }
        router.count(setAside: refused.value)
        return try result.get()
    }

    /// Runs a drain on a thread of its own that decodes each batch with `decode`, and hands
    /// each batch to `handle` in the caller's isolation, committing it once `handle` returns.
    /// - Throws: What `handle` throws, as it is (the drain rethrows its sink's own error), with
    ///   that batch and everything after it queued; otherwise a ``ShareQueueError``.
    private func handingOff<Batch: Sendable>(decode: @escaping @Sendable (DrainBatch) throws -> Batch, isolation: isolated (any Actor)?,
                                             _ handle: (Batch) async throws -> Void) async throws -> DrainSummary {
        let cancelled = CancellationFlag()
        let drainer = try deliveringAttachments().stopping(when: cancelled)
        let handOff = BatchHandOff<Batch>()
        let result: Result<DrainSummary, any Error> = await withTaskCancellationHandler {
            // Naming `isolation` isolates this closure to it (SE-0420): the loop stays in the caller's isolation.
            _ = isolation
            if Task.isCancelled { return .success(Self.cancelledBeforeStart) }
            handOff.start {
                var sink = HandOffSink(decode: decode, handOff: handOff)
                do { return .success(try drainer.drain(into: &sink)) } catch { return .failure(error) }
            }
            while true {
                switch await handOff.next() {
                case .batch(let batch):
                    do {
                        try await handle(batch)
                        handOff.answer(.taken)
                    } catch {
                        handOff.answer(.kept(error))
                    }
                case .finished(let result):
                    return result
                }
            }
        } onCancel: {
            cancelled.raise()
        }
        return try result.get()
    }

    /// A drainer like this one whose `shouldStop` also answers true once `cancelled` is raised.
    func stopping(when cancelled: CancellationFlag) throws(ShareQueueError) -> QueueDrainer {
        var options = self.options
        let asked = options.shouldStop
        options.shouldStop = { cancelled.isSet || asked?() == true }
        let drainer = try QueueDrainer(directory: directory, options: options)
        drainer.onEvent = onEvent
        return drainer
    }

    /// What a drain cancelled before it started reports: nothing done, stopped on request.
    private static var cancelledBeforeStart: DrainSummary {
        var summary = DrainSummary()
        summary.stoppedOnRequest = true
        return summary
    }

    /// Runs `work` off the caller's executor with a drainer like this one whose
    /// `shouldStop` also answers true once the task is cancelled; nil if it already was.
    private func cancellable<Output: Sendable>(_ work: @escaping @Sendable (QueueDrainer) -> Output) async throws(ShareQueueError) -> Output? {
        let cancelled = CancellationFlag()
        let drainer = try stopping(when: cancelled)
        return await withTaskCancellationHandler {
            if Task.isCancelled { return nil }
            return await OffThread.run { work(drainer) }
        } onCancel: {
            cancelled.raise()
        }
    }
}
