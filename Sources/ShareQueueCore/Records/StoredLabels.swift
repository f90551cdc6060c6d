/// Where the labels of a stored record lie in its stored JSON, for a record that
/// holds its labels alone (no `json`, `meta`, `attachments` or unknown member),
/// stored in the encoder's shape with no label escaped: then each label's stored
/// bytes are its text, and a sink that stores the labels (the SQLite store) can
/// take them as they are, without building the record.
package struct StoredLabels: Sendable {
    // Offsets as 32-bit numbers (a record is at most 16 MiB), since every drained record
    // of a batch carries them; an absent label has no end.
    private let idStart, idEnd, dateStart, dateEnd, sourceStart, sourceEnd, kindStart, kindEnd: UInt32
    private let textStart, textEnd, keyStart, keyEnd: UInt32
    private static let absent = UInt32.max

    package var id: Range<Int> { Int(idStart)..<Int(idEnd) }
    package var date: Range<Int> { Int(dateStart)..<Int(dateEnd) }
    package var source: Range<Int> { Int(sourceStart)..<Int(sourceEnd) }
    package var kind: Range<Int> { Int(kindStart)..<Int(kindEnd) }
    package var text: Range<Int>? { textEnd == Self.absent ? nil : Int(textStart)..<Int(textEnd) }
    package var key: Range<Int>? { keyEnd == Self.absent ? nil : Int(keyStart)..<Int(keyEnd) }

    /// The labels of `bytes`, or nil when the record is not such a record; then build it.
    /// Read in one pass by the rules the full reading applies (`EncoderShapedFields`).
    package init?(_ bytes: [UInt8]) {
        guard let fields = EncoderShapedFields.read(bytes) else { return nil }
        self.init(fields, count: bytes.count)
    }

    /// The labels of a record the one-pass reading took, as a drain's summary keeps them.
    init?(_ fields: EncoderShapedFields, count: Int) {
        guard fields.holdsLabelsOnly, count < Int(Self.absent),
              !fields.id.hasEscapes, !fields.date.hasEscapes, !fields.source.hasEscapes, !fields.kindText.hasEscapes,
              fields.text?.hasEscapes != true, fields.key?.hasEscapes != true
        else { return nil }
        (idStart, idEnd) = Self.bounds(fields.id.contents)
        (dateStart, dateEnd) = Self.bounds(fields.date.contents)
        (sourceStart, sourceEnd) = Self.bounds(fields.source.contents)
        (kindStart, kindEnd) = Self.bounds(fields.kindText.contents)
        (textStart, textEnd) = fields.text.map { Self.bounds($0.contents) } ?? (Self.absent, Self.absent)
        (keyStart, keyEnd) = fields.key.map { Self.bounds($0.contents) } ?? (Self.absent, Self.absent)
    }

    private static func bounds(_ range: Range<Int>) -> (UInt32, UInt32) { (UInt32(range.lowerBound), UInt32(range.upperBound)) }
}
