import ShareQueueCore
import ShareQueueSystem

/// A sink that drains several content types in one pass, each kind to its own
/// typed handler.
///
/// ```swift
/// var links = 0, notes: [SharedNote] = []
/// var inbox = ContentRouter()
/// inbox.on(SharedLink.self) { links += $0.count }                  // [DrainedValue<SharedLink>]
/// inbox.on(SharedNote.self) { batch in notes += batch.map(\.value) }
/// let summary = try drainer.drain(into: &inbox)
/// ```
///
/// A handler is an ordinary closure: it may capture and change local state, since a
/// router is not `Sendable` and its handlers run where the drain's caller runs. The
/// blocking `drain(into:)` calls them on the calling thread. The `async` form,
/// `try await drainer.drain(into: &inbox)`, calls them in the caller's isolation (a
/// `@MainActor` model's handlers run on the main actor) while the drain reads and
/// decodes on a thread of its own, and also takes `async` handlers, which may `await`
/// and which see the draining task's cancellation. A router with an `async` handler
/// can only be drained with `await`; the blocking form throws `.configuration` for it
/// before it touches the queue.
///
/// Each batch is split by kind; each handler gets its kind's values in queue
/// order, handlers in the order their kinds first appear in the batch. The batch
/// is delivered once every handler has returned; if one throws, the whole batch
/// and everything after it stay queued and are offered again, handlers that
/// returned included, so save idempotently, by ``DrainedValue/id``.
///
/// A record of a handled kind that does not decode is refused and becomes a
/// dead letter after `maxAttempts` drains. A record of a kind no handler takes
/// is treated as ``otherwise`` says: by default (``OtherKindPolicy/fail``, as for a
/// typed drain) the drain stops before its batch, moves nothing and throws
/// `.configuration` naming the kind; under ``OtherKindPolicy/setAside`` it becomes a
/// dead letter when its batch commits, and comes back with `requeueDeadLetters()`
/// once the host has a handler for it.
///
/// Attachments are delivered as files the app owns: see ``DrainedValue/attachments``.
public struct ContentRouter: DrainSink {
    /// The kinds' decoders, which the `async` drain runs on its own thread.
    package private(set) var plan = RouterPlan()
    /// Each handled kind's handler.
    private var handlers: [Record.Kind: RouteHandler] = [:]

    /// What to do with a record of a kind no handler takes; ``OtherKindPolicy/fail`` unless changed.
    public var otherwise: OtherKindPolicy {
        get { plan.otherwise }
        set { plan.otherwise = newValue }
    }

    /// How many records of each kind no handler takes this router has refused under
    /// ``OtherKindPolicy/setAside``, for the drain to move to the dead letters. A refused
    /// record becomes a dead letter when its batch commits: if a handler then throws, it
    /// stays queued with its batch and is counted here all the same, and again when a
    /// later drain refuses it again. So this counts refusals, not dead letters: the
    /// drain's `DrainSummary.deadLettered` counts those. Empty until a drain meets such a record.
    public internal(set) var setAside: [Record.Kind: Int] = [:]

    /// A router with no handlers; until given some, the first record stops the drain
    /// (or, under ``OtherKindPolicy/setAside``, every record is set aside).
    public init() {}

    /// Sends the records of `type`'s kind, its ``SharedContent/contentKind``, to `handler`,
    /// a batch's values at a time. A second handler for the same kind replaces the first.
    /// - Parameters:
    ///   - type: The content type.
    ///   - handler: Receives the values of one batch, in queue order; throwing keeps the batch queued.
    ///     It runs where the drain's caller runs, and may change the caller's state.
    public mutating func on<Value: SharedContent & Sendable>(_ type: Value.Type, _ handler: @escaping ([DrainedValue<Value>]) throws -> Void) {
        add(type, .blocking { values throws in
            guard let values = values as? [DrainedValue<Value>] else { return }
            try handler(values)
        })
    }

    /// Sends the records of `type`'s kind to an `async` handler, for a router drained
    /// with `try await drainer.drain(into:)`; see ``on(_:_:)``.
    ///
    /// The handler runs in the isolation of the code that drains the router, which is the
    /// code that builds it, such as a `@MainActor` model; the drain reads and decodes on a
    /// thread of its own meanwhile, and the batch commits once the handler returns.
    /// `Task.isCancelled` in it is the draining task's.
    /// - Parameters:
    ///   - type: The content type.
    ///   - isolation: The caller's actor, which the handler is formed in; left to its default.
    ///   - handler: Receives the values of one batch, in queue order; throwing keeps the batch queued.
    public mutating func on<Value: SharedContent & Sendable>(_ type: Value.Type, isolation: isolated (any Actor)? = #isolation,
                                                             _ handler: @escaping ([DrainedValue<Value>]) async throws -> Void) {
        add(type, .async { values async throws in
            guard let values = values as? [DrainedValue<Value>] else { return }
            try await handler(values)
        })
    }

    private mutating func add<Value: SharedContent & Sendable>(_ type: Value.Type, _ handler: RouteHandler) {
        plan.add(type, kind: Value.contentKind)
        handlers[Value.contentKind] = handler
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", takes the records already queued)")
    public mutating func on<Value: Decodable & Sendable>(_ type: Value.Type, _ handler: @escaping ([DrainedValue<Value>]) throws -> Void) {
        fatalError("unavailable")
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", takes the records already queued)")
    public mutating func on<Value: Decodable & Sendable>(_ type: Value.Type, isolation: isolated (any Actor)? = #isolation,
                                                         _ handler: @escaping ([DrainedValue<Value>]) async throws -> Void) {
        fatalError("unavailable")
    }

    /// The kinds whose handlers are `async`, which the blocking drain cannot call.
    package var asyncKinds: [Record.Kind] {
        plan.kinds.filter { if case .async = handlers[$0] { true } else { false } }
    }

    /// Splits the batch by kind and hands each kind's values to its handler.
    /// - Throws: A `RecordRefusal` for records that do not decode or that are
    ///   set aside, `.configuration` for an unhandled kind under ``OtherKindPolicy/fail``
    ///   or for an `async` handler, or what a handler throws.
    public mutating func deliver(_ batch: DrainBatch) throws {
        let groups = try split(batch)
        for group in groups {
            switch handlers[group.kind] {
            case .blocking(let handler)?: try handler(group.values)
            case .async?: throw ShareQueueError(.configuration, "the handler of kind '\(group.kind)' is async: drain this router with `try await drainer.drain(into:)`")
            case nil: break
            }
        }
    }

    /// Hands one batch's decoded groups, from ``RouterPlan/split(_:)``, to their handlers, awaiting the `async` ones,
    /// in `isolation`, where the router was built.
    package func deliver(_ groups: [RouterPlan.Group], isolation: isolated (any Actor)?) async throws {
        for group in groups {
            switch handlers[group.kind] {
            case .blocking(let handler)?: try handler(group.values)
            case .async(let handler)?: try await handler(group.values)
            case nil: break
            }
        }
    }

    /// The batch's values, decoded and grouped by kind; counts what is set aside in ``setAside``.
    private mutating func split(_ batch: DrainBatch) throws -> [RouterPlan.Group] {
        do {
            return try plan.split(batch)
        } catch let refusal as RouterPlan.Refusal {
            setAside.merge(refusal.unhandled, uniquingKeysWith: +)
            throw refusal.refusal
        }
    }

    /// Counts records set aside by a drain that split its batches elsewhere.
    package mutating func count(setAside unhandled: [Record.Kind: Int]) {
        setAside.merge(unhandled, uniquingKeysWith: +)
    }

    /// False: values are decoded from the stored bytes the drain checked, without building records.
    public var needsRecords: Bool { false }
}

/// A handler, with its values' type erased; the values are a `[DrainedValue<Value>]`.
private enum RouteHandler {
    case blocking((any Sendable) throws -> Void)
    case async((any Sendable) async throws -> Void)
}

/// The decoding half of a ``ContentRouter``: which kinds it takes, how each decodes, and
/// what happens to other kinds. Sendable, so that an `async` drain decodes on its own thread.
package struct RouterPlan: Sendable {
    /// One kind's values of a batch, a `[DrainedValue<Value>]`.
    package struct Group: Sendable {
        package let kind: Record.Kind
        package let values: any Sendable
    }

    /// The refusal a split throws, with how many records of each unhandled kind it refuses.
    package struct Refusal: Error {
        package let refusal: RecordRefusal
        package let unhandled: [Record.Kind: Int]
    }

    private var decoders: [Record.Kind: @Sendable ([(DrainedRecord, StoredRecordLayout)], inout [RecordRefusal.Refused]) -> any Sendable] = [:]
    /// The handled kinds, in the order they were added, for messages.
    package private(set) var kinds: [Record.Kind] = []
    package var otherwise: OtherKindPolicy = .fail

    mutating func add<Value: Decodable & Sendable>(_ type: Value.Type, kind: Record.Kind) {
        if decoders[kind] == nil { kinds.append(kind) }
        decoders[kind] = { records, refused in
            var values: [DrainedValue<Value>] = []
            values.reserveCapacity(records.count)
            for (drained, layout) in records {
                if let value = DrainedValue<Value>.decoding(drained, layout: layout, refusing: &refused) { values.append(value) }
            }
            return values
        }
    }

    /// The batch's values, decoded and grouped by kind, kinds in the order they first appear.
    /// - Throws: A ``Refusal`` for records that do not decode or that are set aside, and
    ///   `.configuration` for an unhandled kind under ``OtherKindPolicy/fail``.
    package func split(_ batch: DrainBatch) throws -> [Group] {
        var groups: [Record.Kind: [(DrainedRecord, StoredRecordLayout)]] = [:]
        var order: [Record.Kind] = []
        var refused: [RecordRefusal.Refused] = []
        var unhandled: [Record.Kind: Int] = [:]
        for drained in batch.records {
            let layout = drained.layout
            let kind = layout.kindValue
            guard decoders[kind] != nil else {
                let other = UnhandledKind(kind: kind, recordID: drained.id)
                if otherwise == .fail { throw other.error(handled: kinds) }
                refused.append(other.setAsideRefusal)
                unhandled[kind, default: 0] += 1
                continue
            }
            if groups[kind] == nil { order.append(kind) }
            groups[kind, default: []].append((drained, layout))
        }
        var decoded: [Group] = []
        for kind in order {
            // Looked up above: every kind in `order` has a decoder.
            guard let decode = decoders[kind], let records = groups[kind] else { continue }
            decoded.append(Group(kind: kind, values: decode(records, &refused)))
        }
        // The drain sets aside what is refused for good and offers the rest again.
        if !refused.isEmpty { throw Refusal(refusal: RecordRefusal(refused), unhandled: unhandled) }
        return decoded
    }
}
