import ShareQueueCore

/// A record as the store's `records` table keeps it: its members as text
/// columns, `json`, `meta`, `attachments` and the unknown members as compact JSON
/// (Format.md §8.2), each column as UTF-8 bytes. The one place that decides a
/// row's values, for the store and for the benchmark's store floor, which
/// inserts the same rows.
package struct StoreRow {
    /// Text columns are UTF-8 bytes, NULL is nil.
    package typealias Column = ArraySlice<UInt8>?

    package let id, date, source, kind: ArraySlice<UInt8>
    package let text, json, key, meta, attachments: Column
    /// The members this version does not know, kept as a JSON object.
    package let extra: Column

    /// The row of a drained record. Most records hold their labels alone, unescaped:
    /// then the columns are slices of the stored bytes, and no record is built.
    package init(_ drained: DrainedRecord) {
        guard let labels = drained.storedLabels else {
            self.init(drained.record)
            return
        }
        let bytes = drained.storedJSON
        self.init(id: bytes[labels.id], date: bytes[labels.date], source: bytes[labels.source], kind: bytes[labels.kind],
                  text: labels.text.map { bytes[$0] }, json: nil, key: labels.key.map { bytes[$0] }, meta: nil, attachments: nil, extra: nil)
    }

    private init(id: ArraySlice<UInt8>, date: ArraySlice<UInt8>, source: ArraySlice<UInt8>, kind: ArraySlice<UInt8>,
                 text: Column, json: Column, key: Column, meta: Column, attachments: Column, extra: Column) {
        self.id = id
        self.date = date
        self.source = source
        self.kind = kind
        self.text = text
        self.json = json
        self.key = key
        self.meta = meta
        self.attachments = attachments
        self.extra = extra
    }

    package init(_ record: Record) {
        self.init(id: Self.utf8(record.id), date: Self.utf8(record.date), source: Self.utf8(record.source), kind: Self.utf8(record.kind.rawValue),
                  text: record.text.map(Self.utf8), json: record.json.map { $0.compactJSON[...] }, key: record.key.map(Self.utf8),
                  meta: record.meta.map { JSONValue.object(JSONMembers($0.lazy.map { ($0.name, .string($0.value)) })).compactJSON[...] },
                  attachments: record.attachments.map { Self.attachmentsJSON($0) },
                  extra: record.unknownFields.isEmpty ? nil : JSONValue.object(record.unknownFields).compactJSON[...])
    }

    /// The values of `records`' columns but `ingested_at`, in the table's order.
    package var columns: [Column] { [id, date, source, kind, text, json, key, meta, attachments, extra] }

    private static func utf8(_ text: String) -> ArraySlice<UInt8> { Array(text.utf8)[...] }

    private static func attachmentsJSON(_ attachments: [Attachment]) -> ArraySlice<UInt8> {
        JSONValue.array(attachments.map { attachment in
            // Sorted by name, as the objects this package makes are.
            var fields: JSONMembers<JSONValue> = ["name": .string(attachment.name)]
            if let path = attachment.path { fields["path"] = .string(path) }
            fields["sha256"] = .string(attachment.sha256)
            fields["size"] = .number(String(attachment.size))
            fields["type"] = .string(attachment.type)
            return .object(fields)
        }).compactJSON[...]
    }
}
