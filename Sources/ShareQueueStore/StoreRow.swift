import ShareQueueCore

/// A record as the store's `records` table keeps it: its members as text
/// columns, `json`, `meta`, `attachments` and the unknown members as compact JSON
/// (Format.md §8.2). The one place that decides a row's values, for the store
/// and for the benchmark's store floor, which inserts the same rows.
package struct StoreRow {
    package let id: String
    package let date: String
    package let source: String
    package let kind: String
    package let text: String?
    package let json: String?
    package let key: String?
    package let meta: String?
    package let attachments: String?
    /// The members this version does not know, kept as a JSON object.
    package let extra: String?

    package init(_ record: Record) {
        id = record.id
        date = record.date
        source = record.source
        kind = record.kind.rawValue
        text = record.text
        json = record.json.map { String(decoding: $0.compactJSON, as: UTF8.self) }
        key = record.key
        meta = record.meta.map { Self.jsonText(.object(JSONMembers($0.lazy.map { ($0.name, .string($0.value)) }))) }
        attachments = record.attachments.map { Self.attachmentsJSON($0) }
        extra = record.unknownFields.isEmpty ? nil : Self.jsonText(.object(record.unknownFields))
    }

    /// The values of `records`' columns but `ingested_at`, in the table's order.
    package var columns: [String?] { [id, date, source, kind, text, json, key, meta, attachments, extra] }

    private static func jsonText(_ value: JSONValue) -> String { String(decoding: value.compactJSON, as: UTF8.self) }

    private static func attachmentsJSON(_ attachments: [Attachment]) -> String {
        jsonText(.array(attachments.map { attachment in
            // Sorted by name, as the objects this package makes are.
            var fields: JSONMembers<JSONValue> = ["name": .string(attachment.name)]
            if let path = attachment.path { fields["path"] = .string(path) }
            fields["sha256"] = .string(attachment.sha256)
            fields["size"] = .number(String(attachment.size))
            fields["type"] = .string(attachment.type)
            return .object(fields)
        }))
    }
}
