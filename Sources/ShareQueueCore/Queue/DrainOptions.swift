/// How a drain batches, what it does with keys and attachments, and how long
/// it waits for a lock another process holds.
public struct DrainOptions: Sendable {
    /// Records handed to the sink at once; the checkpoint moves after each batch.
    public var batchSize = 1000
    /// A batch also ends once its records reach this many bytes, which bounds memory.
    /// Each record counts its payload's bytes, and 256 at least.
    public var batchBytes = 4 << 20
    /// Stop after this many records; nil drains everything.
    public var maxRecords: Int? = nil
    /// How long to wait, in seconds, for a lock another process holds: the drain lock
    /// of another drainer (0 gives up at once), and the producers' lock, which a drain
    /// takes for the rename that seals the pending file (there at least a second,
    /// since producers hold it for moments). A lock still taken then ends the drain
    /// with `.busy`, naming the lock and, where the system can tell, its holder.
    public var waitSeconds: Double = 0
    /// Deliver only the newest record of each key among those this drain sees:
    /// the latest instant its `date` denotes (offsets applied, a date that does not
    /// parse as Format.md §12.2 has it older than any that does), and of equal instants the last appended.
    public var coalesceKeys = false
    /// Where attachments go (created if missing); nil leaves them in the queue
    /// and gives records the path of the queue's copy.
    public var attachmentsDestination: String? = nil
    /// The most bytes of attachments a drain reads for one record, each entry counted. A
    /// record's `size` for its attachment is its producer's word, and a drain reads what it
    /// checks whole: a record whose attachments add up to more goes to the dead letters unread,
    /// its files kept, so that a drain with a higher limit delivers it once
    /// ``QueueDrainer/requeueDeadLetters()`` puts it back.
    public var maxAttachmentBytes = Attachment.defaultMaxBytes
    /// Whether a drain reads an attachment copy more than half of which is holes of a sparse
    /// file. No producer here writes one, and its maker paid no disk for what a check would
    /// read, so such a record goes to the dead letters unread unless this is set; a file system
    /// that compresses (ZFS) makes holes of whole blocks of zeros in honest copies too.
    public var readsSparseAttachments = false
    /// A record refused this many times goes to the dead-letter file.
    public var maxAttempts = 5
    /// Asked after every batch; true ends the drain there, with the checkpoint recorded.
    public var shouldStop: (@Sendable () -> Bool)? = nil

    /// The defaults: batches of 1000 records or 4 MiB, no limit, no waiting,
    /// no coalescing, attachments left in the queue and read up to 256 MiB each, five attempts.
    public init() {}

    /// The bytes towards ``batchBytes`` that a record counts at least. A record set aside counts towards no
    /// other limit, and one with an empty payload holds as much memory as any: without a least count, a
    /// segment of them would be one batch, held whole.
    static let leastRecordBytes = 256

    /// What makes these options impossible to follow, in words; nil if nothing.
    var problem: String? {
        if batchSize < 1 { return "batchSize is \(batchSize), under 1" }
        if batchBytes < 1 { return "batchBytes is \(batchBytes), under 1" }
        if maxAttempts < 1 { return "maxAttempts is \(maxAttempts), under 1" }
        if let maxRecords, maxRecords < 0 { return "maxRecords is \(maxRecords), under 0" }
        if maxAttachmentBytes < 0 { return "maxAttachmentBytes is \(maxAttachmentBytes), under 0" }
        if !waitSeconds.isFinite || waitSeconds < 0 { return "waitSeconds is \(waitSeconds), not a number of seconds from 0" }
        return nil
    }
}
