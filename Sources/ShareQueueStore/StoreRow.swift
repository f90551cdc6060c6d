import ShareQueueCore

/// A record as the store's `records` table keeps it: its members as text
/// columns, `json`, `meta`, `attachments` and the unknown members as compact JSON
/// (Format.md §8.2), each column as UTF-8 bytes. The one place that decides a
/// row's values, for the store and for the benchmark's store floor, which
/// inserts the same rows.
package struct StoreRow {
    /// Text columns are UTF-8 bytes, NULL is nil.
    package typealias Column = ArraySlice<UInt8>?

    /// The bytes every column is a slice of, so that a store binds them all in place
    /// from one buffer: a record's stored JSON, or its values laid end to end.
    package let bytes: [UInt8]

    package let id, date, source, kind: ArraySlice<UInt8>
    package let text, json, key, meta, attachments: Column
    /// The members this version does not know, kept as a JSON object.
    package let extra: Column
}

// In an extension, so that the struct keeps the memberwise initializer these build on.
extension StoreRow {
    /// The row of a drained record. Most records hold their labels alone, unescaped:
    /// then the columns are slices of the stored bytes, and no record is built.
    package init(_ drained: DrainedRecord) {
        guard let labels = drained.storedLabels else {
            self.init(drained.record)
            return
        }
        let bytes = drained.storedJSON
        self.init(bytes: bytes, id: bytes[labels.id], date: bytes[labels.date], source: bytes[labels.source], kind: bytes[labels.kind],
                  text: labels.text.map { bytes[$0] }, json: nil, key: labels.key.map { bytes[$0] }, meta: nil, attachments: nil, extra: nil)
    }

    package init(_ record: Record) {
        let values: [Column] = [
            Self.utf8(record.id), Self.utf8(record.date), Self.utf8(record.source), Self.utf8(record.kind.rawValue),
            record.text.map(Self.utf8), record.jsonValue.map { $0.compactJSON[...] }, record.key.map(Self.utf8),
            record.meta.map { JSONValue.object(JSONMembers($0.lazy.map { ($0.name, .string($0.value)) })).compactJSON[...] },
            record.attachments.map { Self.attachmentsJSON($0) },
            record.unknownFields.isEmpty ? nil : JSONValue.object(record.unknownFields).compactJSON[...],
        ]
        // Laid end to end in one buffer, each column then a slice of it.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.reduce(0) { $0 + ($1?.count ?? 0) })
        let ranges = values.map { value in
            value.map { value in
                let start = bytes.count
                bytes.append(contentsOf: value)
                return start..<bytes.count
            }
        }
        func column(_ index: Int) -> Column { ranges[index].map { bytes[$0] } }
        self.init(bytes: bytes, id: column(0)!, date: column(1)!, source: column(2)!, kind: column(3)!, text: column(4), json: column(5),
                  key: column(6), meta: column(7), attachments: column(8), extra: column(9))
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
