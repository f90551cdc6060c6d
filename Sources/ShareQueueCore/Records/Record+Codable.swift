// Records through Codable, unknown fields kept.

extension Record: Codable {
    private struct FieldName: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// Reads a record from any decoder, keeping the fields it does not know, to be written back out.
    /// - Throws: `DecodingError` when a required field is missing or of the wrong type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FieldName.self)
        var unknown = JSONMembers<JSONValue>()
        for field in container.allKeys where !Record.knownFields.contains(ByteKey(field.stringValue)) {
            unknown[field.stringValue] = try container.decode(JSONValue.self, forKey: field)
        }
        self.init(
            id: try container.decode(String.self, forKey: FieldName("id")),
            date: try container.decode(String.self, forKey: FieldName("date")),
            source: try container.decode(String.self, forKey: FieldName("source")),
            kind: try container.decode(Kind.self, forKey: FieldName("kind")),
            text: try container.decodeIfPresent(String.self, forKey: FieldName("text")),
            jsonValue: try container.decodeIfPresent(JSONValue.self, forKey: FieldName("json")),
            key: try container.decodeIfPresent(String.self, forKey: FieldName("key")),
            meta: try container.decodeIfPresent(JSONMembers<String>.self, forKey: FieldName("meta")),
            attachments: try container.decodeIfPresent([Attachment].self, forKey: FieldName("attachments")),
            unknownFields: unknown,
            version: try container.decode(Int.self, forKey: FieldName("v")))
    }

    /// Writes the record's fields, those it did not know included, under their stored names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FieldName.self)
        try container.encode(version, forKey: FieldName("v"))
        try container.encode(id, forKey: FieldName("id"))
        try container.encode(date, forKey: FieldName("date"))
        try container.encode(source, forKey: FieldName("source"))
        try container.encode(kind, forKey: FieldName("kind"))
        try container.encodeIfPresent(text, forKey: FieldName("text"))
        try container.encodeIfPresent(jsonValue, forKey: FieldName("json"))
        try container.encodeIfPresent(key, forKey: FieldName("key"))
        try container.encodeIfPresent(meta, forKey: FieldName("meta"))
        try container.encodeIfPresent(attachments, forKey: FieldName("attachments"))
        for (name, value) in unknownFields { try container.encode(value, forKey: FieldName(name)) }
    }
}
