/// What a drain reads of a stored record before it readies it for its sink: the record
/// checked and summarized, for a sink that passes the stored JSON on; built in full, for
/// one that reads records; or why the bytes hold no record. It depends on the bytes
/// alone, so a drain may read it ahead of delivering, on a thread of its own (see
/// ``SegmentReadAhead``). One reference or a message, so that it is cheap to move.
enum RecordReading: Sendable {
    /// Checked in full, but built only as far as the drain needs; a record with attachments
    /// is built when it is readied, since its files need checking.
    case summarized(DrainedRecord)
    case built(DrainedRecord)
    /// The bytes hold no record, for this reason.
    case refused(String)

    /// Reads the record stored as `payload`, which ends at `end`, for a drain whose sink
    /// reads records (`buildingRecords`) or passes the stored JSON on.
    init(_ payload: StoredBytes, end: DrainPosition, buildingRecords: Bool) {
        do throws(ShareQueueError) {
            self = buildingRecords
                ? .built(DrainedRecord(record: try Record(jsonBytes: payload.array), stored: payload, end: end))
                : .summarized(DrainedRecord(summary: try RecordSummary(stored: payload), stored: payload, end: end))
        } catch {
            self = .refused(error.message)
        }
    }
}
