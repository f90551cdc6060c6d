// Records to and from their stored bytes, and through Codable.

extension Record {
    /// The compact JSON object stored for a record. `jsonBytes` is the `json`
    /// field already as compact JSON, so a producer's own tokens are kept.
    static func encode(version: Int = Record.currentVersion, id: String, date: String, source: String, kind: Kind,
                       text: String?, jsonBytes: [UInt8]?, key: String?, meta: [String: String]?,
                       attachments: [Attachment]? = nil, unknownFields: [String: JSONValue] = [:]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96 + (text?.utf8.count ?? 0) + (jsonBytes?.count ?? 0))
        out.append(contentsOf: "{\"v\":\(version),\"id\":".utf8)
        JSONWriter.appendString(id, to: &out)
        out.append(contentsOf: ",\"date\":".utf8)
        JSONWriter.appendString(date, to: &out)
        out.append(contentsOf: ",\"source\":".utf8)
        JSONWriter.appendString(source, to: &out)
        out.append(contentsOf: ",\"kind\":".utf8)
        JSONWriter.appendString(kind.rawValue, to: &out)
        if let text {
            out.append(contentsOf: ",\"text\":".utf8)
            JSONWriter.appendString(text, to: &out)
        }
        if let jsonBytes {
            out.append(contentsOf: ",\"json\":".utf8)
            out.append(contentsOf: jsonBytes)
        }
        if let key {
            out.append(contentsOf: ",\"key\":".utf8)
            JSONWriter.appendString(key, to: &out)
        }
        if let meta {
            out.append(contentsOf: ",\"meta\":".utf8)
            JSONWriter.append(.object(meta.mapValues { .string($0) }), to: &out)
        }
        if let attachments {
            out.append(contentsOf: ",\"attachments\":".utf8)
            JSONWriter.append(.array(attachments.map(\.jsonValue)), to: &out)
        }
        for name in unknownFields.keys.sorted() {
            out.append(UInt8(ascii: ","))
            JSONWriter.appendString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.append(unknownFields[name]!, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// This record as one line of compact JSON, without the newline.
    public var jsonLine: [UInt8] {
        var jsonBytes: [UInt8]? = nil
        if let json {
            var bytes: [UInt8] = []
            JSONWriter.append(json, to: &bytes)
            jsonBytes = bytes
        }
        return Record.encode(version: version, id: id, date: date, source: source, kind: kind, text: text,
                             jsonBytes: jsonBytes, key: key, meta: meta, attachments: attachments, unknownFields: unknownFields)
    }

    /// Decodes and checks a stored record; every field is distrusted.
    /// - Throws: `ShareQueueError` of kind `.badData` naming what is wrong.
    public init(jsonBytes: [UInt8]) throws(ShareQueueError) {
        // Members straight into variables, without a dictionary of them all: a drain into a store does this per record.
        var v, idValue, dateValue, sourceValue, kindValue, textValue, json, keyValue, metaValue, attachmentsValue: JSONValue?
        var unknown: [String: JSONValue] = [:]
        try JSONParser.scanObject(jsonBytes, wanted: { _ in true }, built: { name, value in
            switch name {
            case "v": v = value
            case "id": idValue = value
            case "date": dateValue = value
            case "source": sourceValue = value
            case "kind": kindValue = value
            case "text": textValue = value
            case "json": json = value
            case "key": keyValue = value
            case "meta": metaValue = value
            case "attachments": attachmentsValue = value
            default: unknown[name] = value
            }
        }, skipped: { _, _ in })
        func string(_ value: JSONValue?, _ name: String) throws(ShareQueueError) -> String? {
            switch value {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw ShareQueueError(.badData, "not a record: '\(name)' is not a string")
            }
        }
        func required(_ value: JSONValue?, _ name: String) throws(ShareQueueError) -> String {
            guard let text = try string(value, name) else { throw ShareQueueError(.badData, "not a record: '\(name)' is missing") }
            return text
        }
        guard case .number(let literal)? = v, let version = Int(literal), version >= 1 else {
            throw ShareQueueError(.badData, "not a record: 'v' is missing or not a positive integer")
        }
        let id = try required(idValue, "id")
        guard !id.isEmpty, id.utf8.count <= 128 else { throw ShareQueueError(.badData, "not a record: 'id' is empty or too long") }
        let date = try required(dateValue, "date")
        let source = try required(sourceValue, "source")
        let kind = Kind(rawValue: try required(kindValue, "kind"))
        let text = try string(textValue, "text")
        if (kind == .text || kind == .url) && text == nil { throw ShareQueueError(.badData, "not a record: a \(kind) record has no 'text'") }
        if kind == .json && json == nil { throw ShareQueueError(.badData, "not a record: a json record has no 'json'") }
        let key = try string(keyValue, "key")
        var meta: [String: String]? = nil
        switch metaValue {
        case nil, .null?: break
        case .object(let members)?:
            meta = [:]
            for (name, value) in members {
                guard case .string(let text) = value else { throw ShareQueueError(.badData, "not a record: 'meta.\(name)' is not a string") }
                meta?[name] = text
            }
        default: throw ShareQueueError(.badData, "not a record: 'meta' is not an object")
        }
        var attachments: [Attachment]? = nil
        switch attachmentsValue {
        case nil, .null?: break
        case .array(let values)?:
            attachments = []
            for value in values { attachments?.append(try Attachment(value)) }
        default: throw ShareQueueError(.badData, "not a record: 'attachments' is not an array")
        }
        if kind == .file && (attachments ?? []).isEmpty { throw ShareQueueError(.badData, "not a record: a file record has no attachments") }
        self.init(id: id, date: date, source: source, kind: kind, text: text, json: json, key: key, meta: meta,
                  attachments: attachments, unknownFields: unknown, version: version)
    }
}

extension Record: Codable {
    private struct FieldName: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FieldName.self)
        var unknown: [String: JSONValue] = [:]
        for field in container.allKeys where !Record.knownFields.contains(field.stringValue) {
            unknown[field.stringValue] = try container.decode(JSONValue.self, forKey: field)
        }
        self.init(
            id: try container.decode(String.self, forKey: FieldName("id")),
            date: try container.decode(String.self, forKey: FieldName("date")),
            source: try container.decode(String.self, forKey: FieldName("source")),
            kind: try container.decode(Kind.self, forKey: FieldName("kind")),
            text: try container.decodeIfPresent(String.self, forKey: FieldName("text")),
            json: try container.decodeIfPresent(JSONValue.self, forKey: FieldName("json")),
            key: try container.decodeIfPresent(String.self, forKey: FieldName("key")),
            meta: try container.decodeIfPresent([String: String].self, forKey: FieldName("meta")),
            attachments: try container.decodeIfPresent([Attachment].self, forKey: FieldName("attachments")),
            unknownFields: unknown,
            version: try container.decode(Int.self, forKey: FieldName("v")))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FieldName.self)
        try container.encode(version, forKey: FieldName("v"))
        try container.encode(id, forKey: FieldName("id"))
        try container.encode(date, forKey: FieldName("date"))
        try container.encode(source, forKey: FieldName("source"))
        try container.encode(kind, forKey: FieldName("kind"))
        try container.encodeIfPresent(text, forKey: FieldName("text"))
        try container.encodeIfPresent(json, forKey: FieldName("json"))
        try container.encodeIfPresent(key, forKey: FieldName("key"))
        try container.encodeIfPresent(meta, forKey: FieldName("meta"))
        try container.encodeIfPresent(attachments, forKey: FieldName("attachments"))
        for (name, value) in unknownFields { try container.encode(value, forKey: FieldName(name)) }
    }
}

/// What a drain needs to know of a stored record, read without building the
/// rest of it: enough for sinks that pass the stored JSON through. It accepts
/// what `Record(jsonBytes:)` accepts, except that it does not look inside
/// `attachments`: a record with attachments is always decoded in full before
/// it is delivered or trusted.
struct RecordSummary {
    let id: String
    let date: String
    let key: String?
    /// Records with attachments are decoded in full: their files need checking.
    let hasAttachments: Bool
    /// Whether the stored JSON spans lines, so that JSON Lines must re-encode it.
    let spansLines: Bool

    init(jsonBytes: [UInt8]) throws(ShareQueueError) {
        // The members checked by value; of the others (text, json, attachments, and
        // unknown ones) only the kind matters, and they are not built. No
        // dictionaries: this runs once per record of every drain.
        var v, id, date, source, kind, key, meta: JSONValue?
        var text, json, attachments: JSONParser.Kind?
        spansLines = try JSONParser.scanObject(
            jsonBytes,
            wanted: { name in name == "v" || name == "id" || name == "date" || name == "source" || name == "kind" || name == "key" || name == "meta" },
            built: { name, value in
                switch name {
                case "v": v = value
                case "id": id = value
                case "date": date = value
                case "source": source = value
                case "kind": kind = value
                case "key": key = value
                default: meta = value
                }
            },
            skipped: { name, found in
                switch name {
                case "text": text = found
                case "json": json = found
                case "attachments": attachments = found
                default: break
                }
            })
        func string(_ value: JSONValue?, _ name: String, required: Bool) throws(ShareQueueError) -> String? {
            switch value {
            case .string(let text)?: return text
            case nil, .null?:
                if required { throw ShareQueueError(.badData, "not a record: '\(name)' is missing") }
                return nil
            default: throw ShareQueueError(.badData, "not a record: '\(name)' is not a string")
            }
        }
        guard case .number(let literal)? = v, let version = Int(literal), version >= 1 else {
            throw ShareQueueError(.badData, "not a record: 'v' is missing or not a positive integer")
        }
        let recordID = try string(id, "id", required: true)!
        guard !recordID.isEmpty, recordID.utf8.count <= 128 else { throw ShareQueueError(.badData, "not a record: 'id' is empty or too long") }
        self.date = try string(date, "date", required: true)!
        _ = try string(source, "source", required: true)
        let recordKind = Record.Kind(rawValue: try string(kind, "kind", required: true)!)
        let hasText: Bool
        switch text {
        case nil, .null?: hasText = false
        case .string?: hasText = true
        default: throw ShareQueueError(.badData, "not a record: 'text' is not a string")
        }
        if (recordKind == .text || recordKind == .url) && !hasText { throw ShareQueueError(.badData, "not a record: a \(recordKind) record has no 'text'") }
        if recordKind == .json && json == nil { throw ShareQueueError(.badData, "not a record: a json record has no 'json'") }
        self.key = try string(key, "key", required: false)
        switch meta {
        case nil, .null?: break
        case .object(let members)?:
            for (name, value) in members {
                guard case .string = value else { throw ShareQueueError(.badData, "not a record: 'meta.\(name)' is not a string") }
            }
        default: throw ShareQueueError(.badData, "not a record: 'meta' is not an object")
        }
        switch attachments {
        case nil, .null?:
            hasAttachments = false
            if recordKind == .file { throw ShareQueueError(.badData, "not a record: a file record has no attachments") }
        case .array?: hasAttachments = true
        default: throw ShareQueueError(.badData, "not a record: 'attachments' is not an array")
        }
        self.id = recordID
    }
}
