/// A record taken out of the queue, with the exact bytes that were stored.
///
/// A drain checks every record fully, but builds the `Record` only for sinks
/// that ask for it (`DrainSink.needsRecords`) and for records with
/// attachments; sinks that pass the stored JSON through skip that cost.
/// Immutable, and a class so that a drain passing it along batches and
/// checkpoints copies one reference rather than all its fields. Its bytes lie in
/// storage shared with the records read before and after it (64 KiB at most,
/// but for a larger record): a record kept after its batch keeps that storage.
public final class DrainedRecord: Sendable {
    /// The stored JSON object, byte for byte as the producer wrote it: copied, each time
    /// it is asked for, from storage the records of a batch share.
    public var storedJSON: [UInt8] { bytes.array }
    /// The stored bytes, where the drain's reader keeps them.
    let bytes: StoredBytes
    /// The queue position just after this record.
    public let end: DrainPosition
    /// The record's id, stable across redeliveries: what a consumer deduplicates on.
    public var id: String { built?.record.id ?? bytes.string(labelSpans.id) }
    /// The record's date as stored, ISO-8601 text; `import ShareQueue` adds `date`, a `Date`.
    package var dateText: String { built?.record.date ?? bytes.string(labelSpans.date) }
    /// The record's key, if it has one.
    public var key: String? {
        if let built { return built.record.key }
        return labelSpans.key.map(bytes.string)
    }
    /// Where the summary found the labels in `storedJSON`; unused when the drain built the record.
    private let labelSpans: LabelSpans
    /// The record the drain built, or nil for a record passed through as stored. Boxed, so that
    /// a record passed through holds only plain values besides its bytes, and letting it go
    /// releases two references rather than destroying a `Record`'s every field.
    private let built: BuiltRecord?
    let hasAttachments: Bool
    /// Whether the stored JSON is not one line, so that `jsonLine` must re-encode it.
    let spansLines: Bool
    /// Where its labels are in `storedJSON`, when the drain's one-pass reading found a record
    /// of unescaped labels alone (see ``StoredLabels``); nil when it built the record.
    package let storedLabels: StoredLabels?

    /// The record as the drain built it, its attachments' paths filled in.
    var decoded: Record? { built?.record }

    /// How many bytes the stored JSON takes.
    package var storedByteCount: Int { bytes.count }

    /// Appends the stored JSON to `out`, copied once from where it lies.
    package func appendStoredJSON(to out: inout [UInt8]) {
        bytes.append(to: &out)
    }

    /// Where the labels lie in the stored bytes, as 32-bit offsets (a record is at most
    /// 16 MiB): with them a record passed through stays small enough for the C library's
    /// quickest allocations.
    private struct LabelSpans {
        private let idStart, idEnd, dateStart, dateEnd, keyStart, keyEnd: UInt32
        /// Which labels hold escapes: 1 the id, 2 the date, 4 the key.
        private let escapes: UInt8
        private static let absent = UInt32.max

        init(id: JSONParser.StringSpan, date: JSONParser.StringSpan, key: JSONParser.StringSpan?) {
            (idStart, idEnd) = (UInt32(id.contents.lowerBound), UInt32(id.contents.upperBound))
            (dateStart, dateEnd) = (UInt32(date.contents.lowerBound), UInt32(date.contents.upperBound))
            (keyStart, keyEnd) = key.map { (UInt32($0.contents.lowerBound), UInt32($0.contents.upperBound)) } ?? (Self.absent, Self.absent)
            escapes = (id.hasEscapes ? 1 : 0) | (date.hasEscapes ? 2 : 0) | (key?.hasEscapes == true ? 4 : 0)
        }

        var id: JSONParser.StringSpan { .init(contents: Int(idStart)..<Int(idEnd), hasEscapes: escapes & 1 != 0) }
        var date: JSONParser.StringSpan { .init(contents: Int(dateStart)..<Int(dateEnd), hasEscapes: escapes & 2 != 0) }
        var key: JSONParser.StringSpan? {
            keyEnd == Self.absent ? nil : .init(contents: Int(keyStart)..<Int(keyEnd), hasEscapes: escapes & 4 != 0)
        }

        static let none = LabelSpans(id: .init(contents: 0..<0, hasEscapes: false), date: .init(contents: 0..<0, hasEscapes: false), key: nil)
    }

    private final class BuiltRecord: Sendable {
        let record: Record
        init(_ record: Record) { self.record = record }
    }

    convenience init(record: Record, storedJSON: [UInt8], end: DrainPosition) {
        self.init(record: record, stored: StoredBytes(storedJSON), end: end)
    }

    convenience init(summary: RecordSummary, storedJSON: [UInt8], end: DrainPosition) {
        self.init(summary: summary, stored: StoredBytes(storedJSON), end: end)
    }

    init(record: Record, stored: StoredBytes, end: DrainPosition) {
        bytes = stored
        self.end = end
        labelSpans = .none
        built = BuiltRecord(record)
        hasAttachments = record.attachments != nil
        spansLines = stored.withUnsafeBytes { $0.contains { $0 == 0x0A || $0 == 0x0D } }
        storedLabels = nil
    }

    init(summary: RecordSummary, stored: StoredBytes, end: DrainPosition) {
        bytes = stored
        self.end = end
        labelSpans = LabelSpans(id: summary.idText, date: summary.dateText, key: summary.keyText)
        built = nil
        hasAttachments = summary.hasAttachments
        spansLines = summary.spansLines
        storedLabels = summary.labels
    }

    /// The record, built now unless the drain built it already. Its bytes were
    /// checked with the rules `Record(jsonBytes:)` applies, so this succeeds.
    public var record: Record {
        if let decoded { return decoded }
        return (try? Record(jsonBytes: storedJSON)) ?? Record(id: id, date: dateText, source: "", kind: .text, key: key)
    }

    /// One line of JSON for this record: the stored bytes when they are
    /// already a single line and nothing was added, so a drain passes them
    /// through unchanged. An empty `attachments` gains no `path`: nothing is added.
    public var jsonLine: [UInt8] {
        isStoredLine ? storedJSON : record.jsonLine
    }

    /// Whether ``jsonLine`` is the stored bytes as they are.
    package var isStoredLine: Bool {
        !spansLines && built?.record.attachments?.isEmpty != false
    }
}

/// Records delivered together, and the queue position just after them.
public struct DrainBatch: Sendable {
    /// The records, in queue order.
    public let records: [DrainedRecord]
    /// The position up to which everything is delivered or set aside: just after the
    /// batch; or, while a record before it that the sink refused stays queued, just before
    /// that record (the checkpoint's); or, when the drain has yet to make records among
    /// them dead letters (which it writes at the commit after the batch), just before the
    /// first of those. So a stored position never passes a record that is neither delivered
    /// nor a dead letter. A sink that stores it with the records returns it from
    /// ``DrainSink/deliveredPosition()``.
    public let end: DrainPosition
}

/// Where a drain delivers records: standard output, a command, a database.
///
/// A drain hands the sink its records a batch at a time, in queue order, and
/// records a checkpoint after each batch it took. A drain killed between the
/// two offers the batch again, so a sink takes each record at least once:
/// consume idempotently, by ``DrainedRecord/id``, or store ``DrainBatch/end``
/// with the records and return it from ``deliveredPosition()``.
public protocol DrainSink {
    /// Takes a batch. Returning means the batch is delivered and the drain
    /// will not offer it again; throwing leaves it, and everything after it, queued.
    /// - Parameter batch: Records in queue order, and the position after them.
    /// - Throws: Any error, to keep the batch queued; the drain then stops and
    ///   rethrows it as it is, so that the caller catches it by its own type. A
    ///   ``RecordRefusal`` instead refuses only the
    ///   records it names: they become dead letters or count an attempt, and the
    ///   drain offers the rest of the batch again.
    mutating func deliver(_ batch: DrainBatch) throws

    /// The position this sink has itself recorded, for a sink that stores it
    /// atomically with the records. The default, nil, trusts the checkpoint file.
    func deliveredPosition() throws -> DrainPosition?

    /// Whether a failure means the sink refused these records (so the drain
    /// bisects the batch to find which, counts an attempt for each, and delivers the
    /// others), rather than that the sink is unavailable. A ``ShareQueueError`` is never
    /// a refusal: a sink throws one to say it is broken or unavailable. The default is false.
    var failuresAreRefusals: Bool { get }

    /// Whether the sink reads `DrainedRecord.record`; a sink that writes only
    /// the stored JSON says false and spares the drain building every record.
    /// The default is true.
    var needsRecords: Bool { get }
}

extension DrainSink {
    /// Returns nil: the drain trusts its checkpoint file.
    public func deliveredPosition() throws -> DrainPosition? { nil }
    /// False: a failure means the sink is unavailable, and the batch stays queued as it is.
    public var failuresAreRefusals: Bool { false }
    /// True: the drain builds every record.
    public var needsRecords: Bool { true }
}

/// What one drain did.
public struct DrainSummary: Sendable, Equatable {
    /// Records the sink took.
    public var delivered = 0
    /// Batches the sink took.
    public var batches = 0
    /// Damaged regions and broken records set aside in the quarantine file.
    public var quarantined = 0
    /// Keyed records skipped because a newer one with the same key followed (`coalesceKeys`).
    public var superseded = 0
    /// Records moved to the dead-letter file after too many refusals.
    public var deadLettered = 0
    /// Of the records made dead letters, those whose id the sink already held with other
    /// content (``QueueEvent/DeadLetterCause/idStoredWithOtherContent``): not delivered, since the
    /// first record of an id keeps it, and worth a person's look, since producers choose ids.
    public var idConflicts = 0
    /// True when `maxRecords` stopped the drain before the queue was empty.
    public var stoppedAtLimit = false
    /// True when `shouldStop` ended the drain after a batch.
    public var stoppedOnRequest = false

    /// A summary of a drain that did nothing.
    public init() {}
}
