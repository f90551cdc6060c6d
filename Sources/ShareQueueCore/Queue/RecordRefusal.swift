/// Thrown by a sink to refuse some records of a batch, such as those it cannot
/// decode, without failing the rest.
///
/// The drain sets aside the refused records that are final as dead letters,
/// then offers the batch again without them. A record refused but not final
/// counts an attempt and stays queued: the drain delivers the records after it in
/// the same run, but its checkpoint stays before it, so the next run offers it (and
/// those records) again, until it has been refused `maxAttempts` times; then it too
/// becomes a dead letter. Dead letters are recoverable with ``QueueDrainer/requeueDeadLetters()``.
public struct RecordRefusal: Error, Sendable, CustomStringConvertible {
    /// One refused record.
    public struct Refused: Sendable {
        /// The record's ``DrainedRecord/id``.
        public let id: String
        /// Why, as the dead-letter file records it.
        public let reason: String
        /// Whether the record becomes a dead letter at once, for one that no retry
        /// can make acceptable, such as one of a kind this host does not know.
        public let isFinal: Bool
        /// Which record of the batch, by the position just after it, when the batch may hold
        /// others with the same id that are not refused; nil refuses every record with the id.
        package let position: DrainPosition?
        /// What the drain reports of a final refusal.
        package let cause: QueueEvent.DeadLetterCause

        /// A refusal of the record `id`, final or counted.
        public init(id: String, reason: String, isFinal: Bool = false) {
            self.id = id
            self.reason = reason
            self.isFinal = isFinal
            position = nil
            cause = .refusedForGood
        }

        /// A final refusal of the one record `record`, whose id the sink already holds with other
        /// content: a record with the same id, earlier in the same batch, may be one it takes.
        package init(idTakenBy record: DrainedRecord) {
            id = record.id
            reason = Self.idTakenReason
            isFinal = true
            position = record.end
            cause = .idStoredWithOtherContent
        }

        /// The reason a dead letter keeps for ``init(idTakenBy:)``.
        package static let idTakenReason = "id already stored with different content"
    }

    /// The refused records of the batch.
    public let refused: [Refused]

    /// A refusal of these records of the batch.
    public init(_ refused: [Refused]) { self.refused = refused }

    /// A refusal of the one record `id`.
    /// - Parameters:
    ///   - id: The refused record's ``DrainedRecord/id``, one of the batch's.
    ///   - reason: Why, for the dead-letter file and the warning.
    ///   - isFinal: True to make it a dead letter at once.
    public init(id: String, reason: String, isFinal: Bool = false) {
        refused = [Refused(id: id, reason: reason, isFinal: isFinal)]
    }

    /// The reasons, one per refused record.
    public var description: String { refused.map { "\(DeadLetters.quoted($0.id)): \($0.reason)" }.joined(separator: "; ") }
}

/// An error by which a sink whose failures are refusals (``DrainSink/failuresAreRefusals``)
/// refuses a batch, telling what the queue's files may keep from what only the host may see.
///
/// The dead-letter file is the queue's, which other users of a shared queue may read: it
/// keeps ``recordedReason``; the host's warnings show the error's `description`. A refusal
/// of another type is recorded by its type's name alone.
public protocol SinkRefusal: Error, CustomStringConvertible {
    /// The sink's kind and status, such as `command exited with status 1`: never a
    /// command line, its arguments or its output.
    var recordedReason: String { get }
}
