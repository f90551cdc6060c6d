import ShareQueueCore

extension QueueDrainer {
    /// Drains the records of `type`'s kind, decoded, into `body`, a batch at a time.
    ///
    /// ```swift
    /// var count = 0
    /// try drainer.drain(SharedLink.self) { batch in count += batch.count }
    /// ```
    ///
    /// `body` runs on the calling thread before this returns, so it may capture and
    /// change local state. A batch `body` returns from is delivered; if it throws, that
    /// batch and everything after it stay queued and the drain rethrows the error as it
    /// is, so save idempotently, by ``DrainedValue/id``.
    /// A record of this kind that does not decode is refused, and becomes a
    /// dead letter after `maxAttempts` drains. Attachments are delivered as files the
    /// app owns (see ``DrainedValue/attachments``).
    ///
    /// The queue delivers in order, so a record of another kind cannot be
    /// skipped and taken later: by default the drain stops before its batch and
    /// throws `.configuration` naming its kind, leaving it and everything after
    /// it queued. A host that takes several types drains them in one pass with
    /// a ``ContentRouter``; one that wants other kinds set aside as dead letters
    /// says so with `otherKinds: .setAside`.
    /// - Parameters:
    ///   - type: The content type; its records are those of its ``SharedContent/contentKind``.
    ///   - otherKinds: What to do with a record of another kind: ``OtherKindPolicy/fail`` (the default) or ``OtherKindPolicy/setAside``.
    ///   - body: Receives each batch's values in queue order.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What `body` throws, as it is; `.configuration` for a record of another kind under
    ///   ``OtherKindPolicy/fail``; and what `drain(into:)` throws.
    @discardableResult
    public func drain<Value: SharedContent>(_ type: Value.Type, otherKinds: OtherKindPolicy = .fail,
                                            _ body: ([DrainedValue<Value>]) throws -> Void) throws -> DrainSummary {
        try drain(type, kind: Value.contentKind, otherKinds: otherKinds, body)
    }

    /// Drains the records of one kind, decoded as `type`, a type that is not `SharedContent`,
    /// into `body`, a batch at a time; as `drain(_:otherKinds:_:)` does for a content type.
    ///
    /// `try drainer.drain(Bookmark.self, kind: "bookmark") { batch in bookmarks += batch.map(\.value) }`
    /// - Parameters:
    ///   - type: The type the values decode as.
    ///   - kind: The records' kind, as the producer appended them with `append(_:kind:source:key:meta:)`.
    ///   - otherKinds: What to do with a record of another kind: ``OtherKindPolicy/fail`` (the default) or ``OtherKindPolicy/setAside``.
    ///   - body: Receives each batch's values in queue order.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What `body` throws, as it is; `.configuration` for a record of another kind under
    ///   ``OtherKindPolicy/fail``; and what `drain(into:)` throws.
    @discardableResult
    public func drain<Value: Decodable>(_ type: Value.Type, kind: Record.Kind, otherKinds: OtherKindPolicy = .fail,
                                        _ body: ([DrainedValue<Value>]) throws -> Void) throws -> DrainSummary {
        let drainer = try deliveringAttachments()
        return try withoutActuallyEscaping(body) { body in
            var sink = ValueSink<Value>(kind: kind, otherKinds: otherKinds, body: body)
            return try drainer.drain(into: &sink)
        }
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", takes the records already queued), or pass kind:")
    @discardableResult
    public func drain<Value: Decodable>(_ type: Value.Type, otherKinds: OtherKindPolicy = .fail,
                                        _ body: ([DrainedValue<Value>]) throws -> Void) throws -> DrainSummary {
        fatalError("unavailable")
    }

    /// Drains the queue through `router`, each kind to its handler, on the calling thread.
    ///
    /// The handlers run on this thread before this returns, so they may capture and
    /// change local state. Attachments are delivered as files the app owns (see
    /// ``DrainedValue/attachments``).
    /// - Parameter router: The handlers; it counts in ``ContentRouter/setAside`` what it refuses.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What a handler throws, as it is, with its batch and everything after it queued;
    ///   `.configuration`, before anything is read, for a router with an `async` handler (drain
    ///   it with `await`); and what `drain(into:)` throws.
    @discardableResult
    public func drain(into router: inout ContentRouter) throws -> DrainSummary {
        let async = router.asyncKinds
        guard async.isEmpty else {
            throw ShareQueueError(.configuration, "the handlers of kind \(async.map { "'\($0)'" }.joined(separator: ", ")) are async: "
                                  + "drain this router with `try await drainer.drain(into:)`")
        }
        return try deliveringAttachments().drainAnySink(&router)
    }

    /// The generic `drain(into:)`, for a sink that has an overload of its own.
    private func drainAnySink<Sink: DrainSink>(_ sink: inout Sink) throws -> DrainSummary {
        try drain(into: &sink)
    }

    /// This drainer, or, when its options name no `attachmentsDestination`, one like it that
    /// delivers attachments to ``QueueDirectory/defaultAttachmentsDestination``: a typed drain
    /// hands over files the app owns, never paths into the queue that a later drain removes.
    package func deliveringAttachments() throws(ShareQueueError) -> QueueDrainer {
        guard options.attachmentsDestination == nil else { return self }
        var options = self.options
        options.attachmentsDestination = directory.defaultAttachmentsDestination
        let drainer = try QueueDrainer(directory: directory, options: options)
        drainer.onEvent = onEvent
        return drainer
    }
}

extension QueueDirectory {
    /// The folder a typed drain (`drain(_:otherKinds:_:)`, a ``ContentRouter``, `batches(of:)`)
    /// delivers attachments to when `DrainOptions.attachmentsDestination` names none: the
    /// queue's path with `.attachments` added, beside the queue, such as
    /// `…/ShareQueue.attachments` for a queue at `…/ShareQueue` in the App Group container.
    /// It is made when the first attachment arrives. The files there are the app's: no
    /// drain removes them; the app moves or removes each once it has kept what it needs.
    public var defaultAttachmentsDestination: String {
        var folder = Substring(path)
        while folder.count > 1 && folder.hasSuffix("/") { folder = folder.dropLast() }
        return folder + ".attachments"
    }
}

/// Decodes each batch's records of one kind and hands the values on; refuses
/// those that do not decode, and treats other kinds as its policy says.
struct ValueSink<Value: Decodable>: DrainSink {
    let decoder: ValueDecoder<Value>
    let body: ([DrainedValue<Value>]) throws -> Void

    init(kind: Record.Kind, otherKinds: OtherKindPolicy, body: @escaping ([DrainedValue<Value>]) throws -> Void) {
        decoder = ValueDecoder(kind: kind, otherKinds: otherKinds)
        self.body = body
    }

    /// False: values are decoded from the stored bytes the drain checked, without building records.
    var needsRecords: Bool { false }

    func deliver(_ batch: DrainBatch) throws {
        try body(try decoder.decode(batch))
    }
}

/// Decodes a batch's records of one kind: what a typed drain does on the drain's thread.
package struct ValueDecoder<Value: Decodable>: Sendable {
    package let kind: Record.Kind
    package let otherKinds: OtherKindPolicy

    package init(kind: Record.Kind, otherKinds: OtherKindPolicy) {
        self.kind = kind
        self.otherKinds = otherKinds
    }

    /// The batch's values.
    /// - Throws: A `RecordRefusal` for records that do not decode or that are set aside, and
    ///   `.configuration` for a record of another kind under ``OtherKindPolicy/fail``.
    package func decode(_ batch: DrainBatch) throws -> [DrainedValue<Value>] {
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
        return values
    }
}
