#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueueCore

/// A value taken out of the queue by a typed drain, with its record's labels.
public struct DrainedValue<Value> {
    /// The content, decoded.
    public let value: Value
    /// The record's id, stable across redeliveries: what a consumer deduplicates on.
    public let id: String
    /// When the producer appended it, to the millisecond.
    public let date: Date
    /// Who produced it, such as the extension's name.
    public let source: String
    /// The record's key, if it has one.
    public let key: String?
    /// The producer's own labels.
    public let meta: JSONMembers<String>?
    /// Files that travel with the record, empty when there are none; each `path` (and
    /// `Attachment.url`) names the file the drain delivered.
    ///
    /// The files are the app's: a typed drain copies them out of the queue into
    /// `DrainOptions.attachmentsDestination`, or by default into
    /// `QueueDirectory.defaultAttachmentsDestination` beside the queue, and no drain
    /// removes them there. Move each where the app keeps it, or remove it, once the value
    /// is saved. A batch delivered again (a drain stopped before its checkpoint) names the
    /// same files.
    public let attachments: [Attachment]
}

extension DrainedValue: Sendable where Value: Sendable {}

extension Attachment {
    /// The file the drain delivered, as a file URL; nil in the queue, before delivery.
    public var url: URL? { path.map { URL(fileURLWithPath: $0) } }
}

extension DrainedValue where Value: Decodable {
    /// The value `drained` holds, found through its `layout`; nil, with a refusal saying why, for a date
    /// that does not parse (Format.md §12.2) or a value that does not decode. Its kind is not checked.
    static func decoding(_ drained: DrainedRecord, layout: StoredRecordLayout, refusing refused: inout [RecordRefusal.Refused]) -> DrainedValue? {
        let dateText = drained.dateText
        guard let date = ISO8601Milliseconds.parse(dateText) else {
            refused.append(.init(id: drained.id, reason: "its date is not a date such as 2026-11-29T14:52:20.123Z: '\(dateText.prefix(100))'"))
            return nil
        }
        let id = drained.id
        guard let content = layout.content else {
            refused.append(.init(id: id, reason: "record \(id) of kind \(layout.kindValue) holds no JSON value to decode as \(Value.self)"))
            return nil
        }
        do {
            // Read where the drain checked it, in the stored bytes: no record and no JSON value are built.
            let value = try ContentDecoder.decode(Value.self, from: layout.json, at: content, recordID: id)
            return DrainedValue(value: value, id: id, date: date, source: layout.sourceText, key: drained.key,
                                meta: layout.labels, attachments: drained.attachments ?? [])
        } catch {
            refused.append(.init(id: id, reason: error.message))
            return nil
        }
    }
}
