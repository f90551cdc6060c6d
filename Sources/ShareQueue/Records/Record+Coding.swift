// Records to and from their stored bytes, and through Codable.

extension Record {
    /// The compact JSON object stored for a record. `jsonBytes` is the `json`
    /// field already as compact JSON, so a producer's own tokens are kept.
    static func encode(version: Int = Record.currentVersion, id: String, date: String, source: String, kind: Kind,
                       text: String?, jsonBytes: [UInt8]?, key: String?, meta: [String: String]?,
                       attachments: [Attachment]? = nil, unknownFields: [String: JSONValue] = [:]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96 + (text?.utf8.count ?? 0) + (jsonBytes?.count ?? 0))
        encode(version: version, id: id, date: date, source: source, kind: kind, text: text, jsonBytes: jsonBytes, key: key,
               meta: meta, attachments: attachments, unknownFields: unknownFields, into: &out)
        return out
    }

    private static let versionOnePrefix = Array("{\"v\":1,\"id\":".utf8)

    /// Appends the stored JSON of a record to `out`: an appender writes it straight into its frames.
    static func encode(version: Int = Record.currentVersion, id: String, date: String, source: String, kind: Kind,
                       text: String?, jsonBytes: [UInt8]?, key: String?, meta: [String: String]?,
                       attachments: [Attachment]? = nil, unknownFields: [String: JSONValue] = [:], into out: inout [UInt8]) {
        if version == 1 { out.append(contentsOf: versionOnePrefix) } else { out.append(contentsOf: "{\"v\":\(version),\"id\":".utf8) }
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
    /// - Parameter jsonBytes: One JSON object, such as ``DrainedRecord/storedJSON``.
    /// - Throws: `ShareQueueError` of kind `.badData` naming what is wrong.
    public init(jsonBytes: [UInt8]) throws(ShareQueueError) {
        let fields = try StoredFields(jsonBytes, buildingAll: true)
        let checked = try fields.check()
        var meta: [String: String]? = nil
        if case .object(let members)? = fields.meta { meta = members.mapValues { if case .string(let text) = $0 { text } else { "" } } }
        var attachments: [Attachment]? = nil
        if case .array(let values)? = fields.attachments {
            attachments = []
            for value in values {
                let attachment = try Attachment(value)
                // A rule of the record, not only of delivery, so that a producer checking its record applies it too.
                guard attachment.hasSafeFileName else {
                    throw ShareQueueError(.badData, "not a record: attachment file name '\(attachment.file.prefix(100))' is not one the queue makes")
                }
                attachments?.append(attachment)
            }
            if checked.kind == .file && attachments!.isEmpty { throw ShareQueueError(.badData, "not a record: a file record has no attachments") }
        }
        var text: String? = nil
        if case .string(let value)? = fields.text { text = value }
        self.init(id: checked.id, date: checked.date, source: checked.source, kind: checked.kind, text: text, json: fields.json,
                  key: checked.key, meta: meta, attachments: attachments, unknownFields: fields.unknown, version: checked.version)
    }
}

extension Record {
    /// Checks stored bytes with every rule a drain applies to a record before
    /// delivering it: `RecordSummary`'s, and for a record with attachments, the
    /// full decoding. A producer runs this on the exact bytes it writes, so it
    /// never acknowledges a record that a drain would set aside.
    /// - Throws: `ShareQueueError` of kind `.badData` naming the rule broken.
    static func checkStored(_ bytes: [UInt8]) throws(ShareQueueError) {
        if try RecordSummary(jsonBytes: bytes).hasAttachments { _ = try Record(jsonBytes: bytes) }
    }
}

/// The top-level members of a stored record, gathered in one scan, and the
/// rules every record must keep. Both ways of reading a record, whole
/// (`Record(jsonBytes:)`) and summed up for a drain (`RecordSummary`), go
/// through here, so they accept the same records.
struct StoredFields {
    var v, id, date, source, kind, key, meta: JSONValue?
    /// Built only when building all; their kinds are always known.
    var text, json, attachments: JSONValue?
    var textKind, jsonKind, attachmentsKind: JSONParser.Kind?
    var unknown: [String: JSONValue] = [:]
    /// Whether the stored JSON spans lines.
    var spansLines = false

    /// The members every reading needs; the others are only checked unless `buildingAll`.
    private static func isAlwaysBuilt(_ name: String) -> Bool {
        name == "v" || name == "id" || name == "date" || name == "source" || name == "kind" || name == "key" || name == "meta"
    }

    init(_ bytes: [UInt8], buildingAll: Bool) throws(ShareQueueError) {
        // Straight into variables, without a dictionary of the members: this runs per record of every drain.
        var fields = StoredFields()
        fields.spansLines = try JSONParser.scanObject(
            bytes,
            wanted: { buildingAll || Self.isAlwaysBuilt($0) },
            built: { name, value in
                switch name {
                case "v": fields.v = value
                case "id": fields.id = value
                case "date": fields.date = value
                case "source": fields.source = value
                case "kind": fields.kind = value
                case "key": fields.key = value
                case "meta": fields.meta = value
                case "text": (fields.text, fields.textKind) = (value, value.kind)
                case "json": (fields.json, fields.jsonKind) = (value, value.kind)
                case "attachments": (fields.attachments, fields.attachmentsKind) = (value, value.kind)
                default: fields.unknown[name] = value
                }
            },
            skipped: { name, found in
                switch name {
                case "text": fields.textKind = found
                case "json": fields.jsonKind = found
                case "attachments": fields.attachmentsKind = found
                default: break
                }
            })
        self = fields
    }

    private init() {}

    /// Applies the rules of a record (all but those inside `attachments`) and returns its labels.
    func check() throws(ShareQueueError) -> (version: Int, id: String, date: String, source: String, kind: Record.Kind, key: String?) {
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
        let recordDate = try string(date, "date", required: true)!
        let recordSource = try string(source, "source", required: true)!
        let recordKind = Record.Kind(rawValue: try string(kind, "kind", required: true)!)
        switch textKind {
        case nil, .null?: if recordKind == .text || recordKind == .url { throw ShareQueueError(.badData, "not a record: a \(recordKind) record has no 'text'") }
        case .string?: break
        default: throw ShareQueueError(.badData, "not a record: 'text' is not a string")
        }
        if recordKind == .json && jsonKind == nil { throw ShareQueueError(.badData, "not a record: a json record has no 'json'") }
        let recordKey = try string(key, "key", required: false)
        switch meta {
        case nil, .null?: break
        case .object(let members)?:
            for (name, value) in members {
                guard case .string = value else { throw ShareQueueError(.badData, "not a record: 'meta.\(name)' is not a string") }
            }
        default: throw ShareQueueError(.badData, "not a record: 'meta' is not an object")
        }
        switch attachmentsKind {
        case nil, .null?: if recordKind == .file { throw ShareQueueError(.badData, "not a record: a file record has no attachments") }
        case .array?: break
        default: throw ShareQueueError(.badData, "not a record: 'attachments' is not an array")
        }
        return (version, recordID, recordDate, recordSource, recordKind, recordKey)
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

    /// Reads a record from any decoder, keeping the fields it does not know in `unknownFields`.
    /// - Throws: `DecodingError` when a required field is missing or of the wrong type.
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

    /// Writes the record's fields, `unknownFields` included, under their stored names.
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
/// rest of it: enough for sinks that pass the stored JSON through. It applies
/// the same rules as `Record(jsonBytes:)`, except inside `attachments`: a
/// record with attachments is always decoded in full before it is delivered or trusted.
struct RecordSummary {
    let id: String
    let date: String
    let key: String?
    /// Records with attachments are decoded in full: their files need checking.
    let hasAttachments: Bool
    /// Whether the stored JSON spans lines, so that JSON Lines must re-encode it.
    let spansLines: Bool

    init(jsonBytes: [UInt8]) throws(ShareQueueError) {
        let fields = try StoredFields(jsonBytes, buildingAll: false)
        let checked = try fields.check()
        id = checked.id
        date = checked.date
        key = checked.key
        hasAttachments = fields.attachmentsKind.map { if case .array = $0 { true } else { false } } ?? false
        spansLines = fields.spansLines
    }
}
