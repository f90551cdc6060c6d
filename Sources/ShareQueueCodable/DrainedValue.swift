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
    /// Files that travel with the record, with the paths the drain gave them.
    public let attachments: [Attachment]?
}

extension DrainedValue: Sendable where Value: Sendable {}

extension DrainedValue where Value: Decodable {
    /// The value `drained` holds; nil, with a refusal saying why, for a date
    /// that is not ISO-8601 or a value that does not decode. Its kind is not checked.
    static func decoding(_ drained: DrainedRecord, refusing refused: inout [RecordRefusal.Refused]) -> DrainedValue? {
        let record = drained.record
        guard let date = ISO8601Milliseconds.parse(record.date) else {
            refused.append(.init(id: record.id, reason: "its date is not ISO-8601: '\(record.date.prefix(100))'"))
            return nil
        }
        do {
            let value = try record.decode(Value.self)
            return DrainedValue(value: value, id: record.id, date: date, source: record.source, key: record.key,
                                meta: record.meta, attachments: record.attachments)
        } catch {
            refused.append(.init(id: record.id, reason: error.message))
            return nil
        }
    }
}
