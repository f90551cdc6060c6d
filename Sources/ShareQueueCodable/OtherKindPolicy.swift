import ShareQueueCore

/// What a drain does with a record of a kind it has no handler for, such as one
/// a newer extension appends.
///
/// Every typed drain, a ``ContentRouter`` and `drain(_:otherKinds:_:)` alike, fails by
/// default: nothing leaves the queue unless a handler took it or the host said to set
/// such records aside. An extension and its app ship together, so a kind the app does not
/// know is a mistake to see at once (a `contentKind` changed, a handler
/// left out), not a record to move away quietly; and two single-type drains one after
/// the other never send each other's records away. A host that shares a queue with apps
/// it does not update with, and must not stop at their kinds, says `.setAside`.
public struct OtherKindPolicy: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        case setAside, fail
    }

    let action: Action

    /// Moves the record to the dead letters when its batch commits, and says so, through
    /// `QueueDrainer.onEvent` and ``ContentRouter/setAside``; the drain goes on with
    /// the rest. If a handler throws, the record stays queued with the batch and is
    /// no dead letter, so it is never both delivered and set aside. `requeueDeadLetters()` puts it back at the end of the queue,
    /// for a host that has learned its kind.
    public static let setAside = OtherKindPolicy(action: .setAside)

    /// Stops the drain before the batch that holds the record, which stays
    /// queued with everything after it, and throws `.configuration` naming the
    /// record's kind (an ``UnhandledKind`` is the error's `underlying`). Nothing
    /// is moved to the dead letters.
    public static let fail = OtherKindPolicy(action: .fail)
}

/// The cause of the `.configuration` error a drain throws when it meets a
/// record of a kind it has no handler for, under ``OtherKindPolicy/fail``.
public struct UnhandledKind: Error, Sendable, CustomStringConvertible {
    /// The kind no handler takes.
    public let kind: Record.Kind
    /// The first record of that kind the drain met.
    public let recordID: String

    /// The error, in words.
    public var description: String { "no handler takes records of kind '\(kind)' (record \(recordID))" }

    /// The error a drain throws for it: the record, and all after it, stay queued.
    func error(handled: [Record.Kind]) -> ShareQueueError {
        let known = handled.map { "'\($0)'" }.joined(separator: ", ")
        return ShareQueueError(.configuration, "the queue holds a record of kind '\(kind)', and this drain takes only \(known); "
            + "it and the records after it stay queued (drain it with a handler for its kind, or set other kinds aside)", underlying: self)
    }

    /// The refusal that sets it aside as a dead letter, with how to get it back.
    var setAsideRefusal: RecordRefusal.Refused {
        .init(id: recordID, reason: "no handler takes records of kind '\(kind)'; requeueDeadLetters() puts it back for a host that has one", isFinal: true)
    }
}
