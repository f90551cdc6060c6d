// What a drain reads of a stored record that it passes through.

/// What a drain needs to know of a stored record, read without building the
/// rest of it: enough for sinks that pass the stored JSON through. It applies
/// the same rules as `Record(jsonBytes:)`, except inside `attachments`: a
/// record with attachments is always decoded in full before it is delivered or trusted.
struct RecordSummary {
    /// Where the labels are in the stored JSON: a drain that passes records
    /// through never builds them, and any other reader builds them when it asks.
    let idText, dateText: JSONParser.StringSpan
    let keyText: JSONParser.StringSpan?
    private let stored: StoredBytes
    /// Records with attachments are decoded in full: their files need checking.
    let hasAttachments: Bool
    /// Whether the stored JSON spans lines, so that JSON Lines must re-encode it.
    let spansLines: Bool
    /// The labels' stored bytes, for a record of unescaped labels alone read in one pass.
    let labels: StoredLabels?

    init(jsonBytes: [UInt8]) throws(ShareQueueError) {
        try self.init(stored: StoredBytes(jsonBytes))
    }

    /// The summary of a record's bytes as a reader stored them, read where they lie.
    init(stored: StoredBytes) throws(ShareQueueError) {
        // Most records are stored as the encoder writes them: read in one pass, or by the full reading.
        guard let fields = stored.withUnsafeBytes({ EncoderShapedFields.read($0.assumingMemoryBound(to: UInt8.self)) }) else {
            try self.init(checkingInFull: stored)
            return
        }
        self.init(stored, id: fields.id, date: fields.date, key: fields.key,
                  hasAttachments: fields.hasAttachments, spansLines: fields.spansLines, labels: StoredLabels(fields, count: stored.count))
    }

    /// The summary by the full reading alone, for any shape of record.
    init(checkingInFull jsonBytes: [UInt8]) throws(ShareQueueError) {
        try self.init(checkingInFull: StoredBytes(jsonBytes))
    }

    private init(checkingInFull stored: StoredBytes) throws(ShareQueueError) {
        let fields = try StoredFields(stored.array, buildingAll: false)
        _ = try fields.check()
        // The checks passed, so `id` and `date` are strings.
        guard let id = fields.id?.text, let date = fields.date?.text else { throw ShareQueueError(.badData, "not a record") }
        self.init(stored, id: id, date: date, key: fields.key?.text, hasAttachments: fields.hasAttachments, spansLines: fields.spansLines, labels: nil)
    }

    private init(_ stored: StoredBytes, id: JSONParser.StringSpan, date: JSONParser.StringSpan, key: JSONParser.StringSpan?,
                 hasAttachments: Bool, spansLines: Bool, labels: StoredLabels?) {
        idText = id
        dateText = date
        keyText = key
        self.stored = stored
        self.hasAttachments = hasAttachments
        self.spansLines = spansLines
        self.labels = labels
    }

    var id: String { stored.string(idText) }
    var date: String { stored.string(dateText) }
    var key: String? { keyText.map(stored.string) }
}
