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
    private let parser: JSONParser
    /// Records with attachments are decoded in full: their files need checking.
    let hasAttachments: Bool
    /// Whether the stored JSON spans lines, so that JSON Lines must re-encode it.
    let spansLines: Bool
    /// The labels' stored bytes, for a record of unescaped labels alone read in one pass.
    let labels: StoredLabels?

    init(jsonBytes: [UInt8]) throws(ShareQueueError) {
        // Most records are stored as the encoder writes them: read in one pass, or by the full reading.
        guard let fields = EncoderShapedFields.read(jsonBytes) else {
            try self.init(checkingInFull: jsonBytes)
            return
        }
        self.init(jsonBytes, id: fields.id, date: fields.date, key: fields.key,
                  hasAttachments: fields.hasAttachments, spansLines: fields.spansLines, labels: StoredLabels(fields, count: jsonBytes.count))
    }

    /// The summary by the full reading alone, for any shape of record.
    init(checkingInFull jsonBytes: [UInt8]) throws(ShareQueueError) {
        let fields = try StoredFields(jsonBytes, buildingAll: false)
        _ = try fields.check()
        // The checks passed, so `id` and `date` are strings.
        guard let id = fields.id?.text, let date = fields.date?.text else { throw ShareQueueError(.badData, "not a record") }
        self.init(jsonBytes, id: id, date: date, key: fields.key?.text, hasAttachments: fields.hasAttachments, spansLines: fields.spansLines, labels: nil)
    }

    private init(_ jsonBytes: [UInt8], id: JSONParser.StringSpan, date: JSONParser.StringSpan, key: JSONParser.StringSpan?,
                 hasAttachments: Bool, spansLines: Bool, labels: StoredLabels?) {
        idText = id
        dateText = date
        keyText = key
        parser = JSONParser(jsonBytes)
        self.hasAttachments = hasAttachments
        self.spansLines = spansLines
        self.labels = labels
    }

    var id: String { parser.string(idText) }
    var date: String { parser.string(dateText) }
    var key: String? { keyText.map(parser.string) }
}
