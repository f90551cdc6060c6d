/// Where the labels of a stored record lie in its stored JSON, for a record that
/// holds its labels alone (no `json`, `meta`, `attachments` or unknown member),
/// stored in the encoder's shape with no label escaped: then each label's stored
/// bytes are its text, and a sink that stores the labels (the SQLite store) can
/// take them as they are, without building the record.
package struct StoredLabels: Sendable {
    package let id, date, source, kind: Range<Int>
    package let text, key: Range<Int>?

    /// The labels of `bytes`, or nil when the record is not such a record; then build it.
    /// Read in one pass by the rules the full reading applies (`EncoderShapedFields`).
    package init?(_ bytes: [UInt8]) {
        guard let fields = EncoderShapedFields.read(bytes), fields.holdsLabelsOnly,
              !fields.id.hasEscapes, !fields.date.hasEscapes, !fields.source.hasEscapes, !fields.kindText.hasEscapes,
              fields.text?.hasEscapes != true, fields.key?.hasEscapes != true
        else { return nil }
        id = fields.id.contents
        date = fields.date.contents
        source = fields.source.contents
        kind = fields.kindText.contents
        text = fields.text?.contents
        key = fields.key?.contents
    }
}

extension DrainedRecord {
    /// The record's labels in ``storedJSON``, when it holds labels alone, none escaped; else nil.
    package var storedLabels: StoredLabels? { StoredLabels(storedJSON) }
}
