/// Checks drafts one at a time, as they are made, by the rules
/// `QueueAppender.append` applies to one atomic batch of them, so that a
/// producer reading a large input refuses it at the record that breaks a limit,
/// without first building every record (and encoding each one twice).
package struct AppendCheck {
    let options: AppendOptions
    /// Drafts checked so far.
    package private(set) var records = 0
    /// Bytes their frames take together.
    private var bytes = 0
    private var scratch: [UInt8] = []
    private let sampleDate = Timestamp.format(millisecondsSince1970: 0)
    /// Any id made later has this length and these characters; a random one per draft would cost a getrandom each.
    private static let sampleID = "00000000-0000-4000-8000-000000000000"

    package init(options: AppendOptions) {
        self.options = options
    }

    /// Checks one more draft of the batch.
    /// - Throws: what `QueueAppender.append` would throw for the batch so far.
    package mutating func add(_ draft: RecordDraft) throws(ShareQueueError) {
        let size = try frameBytes(of: draft)
        records += 1
        bytes += size
        try QueueAppender.checkBatchSize(bytes, records: records)
    }

    /// Checks `draft` alone, as `add` does, without counting it in the batch.
    /// - Returns: the bytes its frame takes in an append, for a producer that splits input into appends by size.
    /// - Throws: what `QueueAppender.append` would throw for a batch of this draft alone.
    package mutating func frameBytes(of draft: RecordDraft) throws(ShareQueueError) -> Int {
        try draft.validate()
        scratch.removeAll(keepingCapacity: true)
        draft.appendPayload(id: draft.id ?? Self.sampleID, date: sampleDate, to: &scratch)
        try QueueAppender.checkRecordSize(scratch.count, options: options)
        try QueueAppender.checkStored(scratch)
        return scratch.count + Frame.overhead
    }
}
