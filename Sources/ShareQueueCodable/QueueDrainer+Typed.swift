import ShareQueueCore

extension QueueDrainer {
    /// Drains the records of `type`'s kind, decoded, into `body`, a batch at a time.
    ///
    /// `try drainer.drain(SharedLink.self) { links in try save(links) }`
    ///
    /// A batch `body` returns from is delivered; if it throws, that batch and
    /// everything after it stay queued and the drain rethrows the error as it is,
    /// so save idempotently, by ``DrainedValue/id``.
    /// A record of this kind that does not decode is refused, and becomes a
    /// dead letter after `maxAttempts` drains.
    ///
    /// The queue delivers in order, so a record of another kind cannot be
    /// skipped and taken later: by default the drain stops before its batch and
    /// throws `.configuration` naming its kind, leaving it and everything after
    /// it queued. A host that takes several types drains them in one pass with
    /// a ``ContentRouter``; one that wants other kinds set aside as dead letters
    /// says so with `otherKinds: .setAside`.
    /// - Parameters:
    ///   - type: The content type; its records are those of kind `Record.Kind(for:)`.
    ///   - otherKinds: What to do with a record of another kind: ``OtherKindPolicy/fail`` (the default) or ``OtherKindPolicy/setAside``.
    ///   - body: Receives each batch's values in queue order.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What `body` throws, as it is; `.configuration` for a record of another kind under
    ///   ``OtherKindPolicy/fail``; and what `drain(into:)` throws.
    @discardableResult
    public func drain<Value: Decodable>(_ type: Value.Type, otherKinds: OtherKindPolicy = .fail,
                                        _ body: ([DrainedValue<Value>]) throws -> Void) throws -> DrainSummary {
        try withoutActuallyEscaping(body) { body in
            var sink = ValueSink<Value>(kind: Record.Kind(for: type), otherKinds: otherKinds, body: body)
            return try drain(into: &sink)
        }
    }
}

/// Decodes each batch's records of one kind and hands the values on; refuses
/// those that do not decode, and treats other kinds as its policy says.
struct ValueSink<Value: Decodable>: DrainSink {
    let kind: Record.Kind
    let otherKinds: OtherKindPolicy
    let body: ([DrainedValue<Value>]) throws -> Void

    /// False: values are decoded from the stored bytes the drain checked, without building records.
    var needsRecords: Bool { false }

    func deliver(_ batch: DrainBatch) throws {
        var values: [DrainedValue<Value>] = []
        values.reserveCapacity(batch.records.count)
        var refused: [RecordRefusal.Refused] = []
        for drained in batch.records {
            let layout = drained.layout
            let recordKind = layout.kindValue
            guard recordKind == kind else {
                let unhandled = UnhandledKind(kind: recordKind, recordID: drained.id)
                if otherKinds == .fail { throw unhandled.error(handled: [kind]) }
                refused.append(unhandled.setAsideRefusal)
                continue
            }
            if let value = DrainedValue<Value>.decoding(drained, layout: layout, refusing: &refused) { values.append(value) }
        }
        if !refused.isEmpty { throw RecordRefusal(refused) }
        try body(values)
    }
}
