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
        let (result, after) = await cancellable { drainer -> (Result<DrainSummary, any Error>, Sink) in
            var sink = start
            do { return (.success(try drainer.drain(into: &sink)), sink) } catch { return (.failure(error), sink) }
        } ?? (.success(Self.cancelledBeforeStart), start)
        sink = after
        return try result.get()
    }

    /// Drains the records of `type`'s kind into `body` without blocking the
    /// caller; see `drain(_:otherKinds:_:)` and `drain(into:)` for
    /// what is delivered and how cancelling stops it. `body` runs on the drain's thread.
    /// - Parameters:
    ///   - type: The content type.
    ///   - otherKinds: What to do with records of another kind; `OtherKindPolicy.fail` by default.
    ///   - body: Receives each batch's values in queue order; throwing keeps the batch queued.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What `body` throws, as it is, or a `ShareQueueError`, as the blocking typed drain does.
    @discardableResult
    public func drain<Value: Decodable>(_ type: Value.Type, otherKinds: OtherKindPolicy = .fail,
                                        _ body: @escaping @Sendable ([DrainedValue<Value>]) throws -> Void) async throws -> DrainSummary {
        // The blocking typed drain itself, on the drain's thread, so that the two cost the same: a
        // router of one kind would also look each record's kind up in a dictionary. Handed over as
        // any `BlockingDrain`, so that the closure for the drain's thread holds no generic type.
        let typed: any BlockingDrain = TypedDrain<Value>(otherKinds: otherKinds, body: body)
        return try (await cancellable { typed.run($0) } ?? .success(Self.cancelledBeforeStart)).get()
    }

    /// What a drain cancelled before it started reports: nothing done, stopped on request.
    private static var cancelledBeforeStart: DrainSummary {
        var summary = DrainSummary()
        summary.stoppedOnRequest = true
        return summary
    }

    /// Runs `work` off the caller's executor with a drainer like this one whose
    /// `shouldStop` also answers true once the task is cancelled; nil if it already was.
    private func cancellable<Output: Sendable>(_ work: @escaping @Sendable (QueueDrainer) -> Output) async -> Output? {
        let cancelled = CancellationFlag()
        var options = self.options
        let asked = options.shouldStop
        options.shouldStop = { cancelled.isSet || asked?() == true }
        let drainer = QueueDrainer(directory: directory, options: options)
        drainer.warn = warn
        return await withTaskCancellationHandler {
            if Task.isCancelled { return nil }
            return await OffThread.run { work(drainer) }
        } onCancel: {
            cancelled.raise()
        }
    }
}

/// A blocking drain to run on the drain's thread.
private protocol BlockingDrain: Sendable {
    func run(_ drainer: QueueDrainer) -> Result<DrainSummary, any Error>
}

/// The blocking typed drain of one type.
private struct TypedDrain<Value: Decodable>: BlockingDrain {
    let otherKinds: OtherKindPolicy
    let body: @Sendable ([DrainedValue<Value>]) throws -> Void

    func run(_ drainer: QueueDrainer) -> Result<DrainSummary, any Error> {
        do { return .success(try drainer.drain(Value.self, otherKinds: otherKinds, body)) } catch { return .failure(error) }
    }
}
