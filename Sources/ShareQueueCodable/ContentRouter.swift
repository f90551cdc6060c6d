import ShareQueueCore

/// A sink that drains several content types in one pass, each kind to its own
/// typed handler.
///
/// ```swift
/// var inbox = ContentRouter()
/// inbox.on(SharedLink.self) { links in try store.save(links) }   // [DrainedValue<SharedLink>]
/// inbox.on(SharedNote.self) { notes in try store.save(notes) }
/// let summary = try drainer.drain(into: &inbox)
/// ```
///
/// Each batch is split by kind; each handler gets its kind's values in queue
/// order, handlers in the order their kinds first appear in the batch. The batch
/// is delivered once every handler has returned; if one throws, the whole batch
/// and everything after it stay queued and are offered again, handlers that
/// returned included, so save idempotently, by ``DrainedValue/id``.
///
/// A record of a handled kind that does not decode is refused and becomes a
/// dead letter after `maxAttempts` drains. A record of a kind no handler takes
/// is treated as ``otherwise`` says: by default it is set aside as a dead letter
/// when the batch commits (a handler that throws leaves it queued with the batch),
/// counted in ``setAside``, and comes back with `requeueDeadLetters()`
/// once the host has a handler for it.
public struct ContentRouter: DrainSink, Sendable {
    private var routes: [Record.Kind: any Route] = [:]
    /// The handled kinds, in the order they were added, for messages.
    private var kinds: [Record.Kind] = []

    /// What to do with a record of a kind no handler takes; ``OtherKindPolicy/setAside`` unless changed.
    public var otherwise: OtherKindPolicy = .setAside

    /// How many records of each unhandled kind this router has set aside as
    /// dead letters; empty after a drain that met none. Counted when the router
    /// refuses them, so a batch whose handler then threw counts them too.
    public private(set) var setAside: [Record.Kind: Int] = [:]

    /// A router with no handlers, which sets every record aside until given some.
    public init() {}

    /// Sends the records of `type`'s kind, `Record.Kind(for:)`, to `handler`,
    /// a batch's values at a time. A second handler for the same kind replaces the first.
    /// - Parameters:
    ///   - type: The content type.
    ///   - handler: Receives the values of one batch, in queue order; throwing keeps the batch queued.
    public mutating func on<Value: Decodable>(_ type: Value.Type, _ handler: @escaping @Sendable ([DrainedValue<Value>]) throws -> Void) {
        let kind = Record.Kind(for: type)
        if routes[kind] == nil { kinds.append(kind) }
        routes[kind] = TypedRoute(handler: handler)
    }

    /// Splits the batch by kind and hands each kind's values to its handler.
    /// - Throws: A `RecordRefusal` for records that do not decode or that are
    ///   set aside, `.configuration` for an unhandled kind under ``OtherKindPolicy/fail``,
    ///   or what a handler throws.
    public mutating func deliver(_ batch: DrainBatch) throws {
        var groups: [Record.Kind: [(DrainedRecord, StoredRecordLayout)]] = [:]
        var order: [Record.Kind] = []
        var refused: [RecordRefusal.Refused] = []
        var unhandled: [Record.Kind: Int] = [:]
        for drained in batch.records {
            let layout = drained.layout
            let kind = layout.kindValue
            guard routes[kind] != nil else {
                let other = UnhandledKind(kind: kind, recordID: drained.id)
                if otherwise == .fail { throw other.error(handled: kinds) }
                refused.append(other.setAsideRefusal)
                unhandled[kind, default: 0] += 1
                continue
            }
            if groups[kind] == nil { order.append(kind) }
            groups[kind, default: []].append((drained, layout))
        }
        let calls = order.map { kind in routes[kind]!.decode(groups[kind]!, refusing: &refused) }
        if !refused.isEmpty {
            // The drain sets aside what is refused for good and offers the rest again.
            setAside.merge(unhandled, uniquingKeysWith: +)
            throw RecordRefusal(refused)
        }
        for call in calls { try call() }
    }

    /// False: values are decoded from the stored bytes the drain checked, without building records.
    public var needsRecords: Bool { false }
}

/// The handler of one kind, with the type its records decode as.
private protocol Route: Sendable {
    /// Decodes `records`, refusing those that do not decode, and returns the call that hands the values on.
    func decode(_ records: [(DrainedRecord, StoredRecordLayout)], refusing refused: inout [RecordRefusal.Refused]) -> () throws -> Void
}

private struct TypedRoute<Value: Decodable>: Route {
    let handler: @Sendable ([DrainedValue<Value>]) throws -> Void

    func decode(_ records: [(DrainedRecord, StoredRecordLayout)], refusing refused: inout [RecordRefusal.Refused]) -> () throws -> Void {
        var values: [DrainedValue<Value>] = []
        values.reserveCapacity(records.count)
        for (drained, layout) in records {
            if let value = DrainedValue<Value>.decoding(drained, layout: layout, refusing: &refused) { values.append(value) }
        }
        return { [values, handler] in try handler(values) }
    }
}
