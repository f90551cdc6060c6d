// Records to and from their stored bytes.

extension Record {
    /// The compact JSON object stored for a record. `jsonBytes` is the `json`
    /// field already as compact JSON, so a producer's own tokens are kept.
    static func encode(version: Int = Record.currentVersion, id: String, date: String, source: String, kind: Kind,
                       text: String?, jsonBytes: [UInt8]?, key: String?, meta: JSONMembers<String>?,
                       attachments: [Attachment]? = nil, unknownFields: JSONMembers<JSONValue> = JSONMembers()) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96 + (text?.utf8.count ?? 0) + (jsonBytes?.count ?? 0))
        encode(version: version, id: id, date: date, source: source, kind: kind, text: text, jsonBytes: jsonBytes, key: key,
               meta: meta, attachments: attachments, unknownFields: unknownFields, into: &out)
        return out
    }

    /// Appends a literal's bytes in one copy (a `String`'s `utf8` view goes byte by byte).
    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends the stored JSON of a record to `out`: an appender writes it straight into its frames.
    /// Objects are written with their members in their order (`meta` too: a producer sorts its own first).
    static func encode(version: Int = Record.currentVersion, versionDigits: [UInt8]? = nil, id: String, date: String, source: String, kind: Kind,
                       text: String?, jsonBytes: [UInt8]?, key: String?, meta: JSONMembers<String>?,
                       attachments: [Attachment]? = nil, unknownFields: JSONMembers<JSONValue> = JSONMembers(), into out: inout [UInt8]) {
        if let versionDigits {
            append("{\"v\":", to: &out)
            out.append(contentsOf: versionDigits)
            append(",\"id\":", to: &out)
        } else if version == 1 {
            append("{\"v\":1,\"id\":", to: &out)
        } else {
            out.append(contentsOf: "{\"v\":\(version),\"id\":".utf8)
        }
        JSONWriter.appendString(id, to: &out)
        append(",\"date\":", to: &out)
        JSONWriter.appendString(date, to: &out)
        append(",\"source\":", to: &out)
        JSONWriter.appendString(source, to: &out)
        append(",\"kind\":", to: &out)
        JSONWriter.appendString(kind.rawValue, to: &out)
        if let text {
            append(",\"text\":", to: &out)
            JSONWriter.appendString(text, to: &out)
        }
        if let jsonBytes {
            append(",\"json\":", to: &out)
            out.append(contentsOf: jsonBytes)
        }
        if let key {
            append(",\"key\":", to: &out)
            JSONWriter.appendString(key, to: &out)
        }
        if let meta {
            append(",\"meta\":{", to: &out)
            for (index, member) in meta.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(member.name, to: &out)
                out.append(UInt8(ascii: ":"))
                JSONWriter.appendString(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        if let attachments {
            append(",\"attachments\":", to: &out)
            JSONWriter.append(.array(attachments.map(\.jsonValue)), to: &out)
        }
        for (name, value) in unknownFields {
            out.append(UInt8(ascii: ","))
            JSONWriter.appendString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.append(value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// This record as one line of compact JSON, without the newline.
    public var jsonLine: [UInt8] {
        var jsonBytes: [UInt8]? = nil
        if let json = jsonValue {
            var bytes: [UInt8] = []
            JSONWriter.append(json, to: &bytes)
            jsonBytes = bytes
        }
        var out: [UInt8] = []
        Record.encode(version: version, versionDigits: versionDigits, id: id, date: date, source: source, kind: kind, text: text,
                      jsonBytes: jsonBytes, key: key, meta: meta, attachments: attachments, unknownFields: unknownFields, into: &out)
        return out
    }

    /// Decodes and checks a stored record; every field is distrusted.
    /// - Parameter jsonBytes: One JSON object, such as ``DrainedRecord/storedJSON``.
    /// - Throws: `ShareQueueError` of kind `.badData` naming what is wrong.
    public init(jsonBytes: [UInt8]) throws(ShareQueueError) {
        // A record of labels alone (most are) in the encoder's shape is built from the one-pass
        // reading, which accepts only what the full reading accepts, with the same spans.
        if let shaped = EncoderShapedFields.read(jsonBytes), shaped.holdsLabelsOnly {
            let parser = JSONParser(jsonBytes)
            self.init(id: parser.string(shaped.id), date: parser.string(shaped.date), source: parser.string(shaped.source),
                      kind: shaped.kind(in: jsonBytes), text: shaped.text.map(parser.string), key: shaped.key.map(parser.string),
                      version: shaped.version)
            return
        }
        try self.init(readingInFull: jsonBytes)
    }

    /// Decodes and checks a stored record by the full reading alone, whatever its shape.
    init(readingInFull jsonBytes: [UInt8]) throws(ShareQueueError) {
        let fields = try StoredFields(jsonBytes, buildingAll: true)
        let checked = try fields.check()
        var meta: JSONMembers<String>? = nil
        if case .object(let members)? = fields.meta {
            // The checks passed, so every member is a string.
            var labels = JSONMembers<String>()
            for (name, value) in members { if case .string(let text) = value { labels[name] = text } }
            meta = labels
        }
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
        // The checks passed, so the labels they require are strings.
        self.init(id: fields.string(fields.id) ?? "", date: fields.string(fields.date) ?? "", source: fields.string(fields.source) ?? "",
                  kind: checked.kind, text: fields.string(fields.text), jsonValue: fields.json, key: fields.string(fields.key), meta: meta,
                  attachments: attachments, unknownFields: fields.unknown, version: checked.version)
        versionDigits = fields.versionDigits
    }
}

extension Record {
    /// Checks stored bytes with every rule a drain applies to a record before
    /// delivering it: `RecordSummary`'s, and for a record with attachments, the
    /// full decoding. A producer runs this on the exact bytes it writes, so it
    /// never acknowledges a record that a drain would set aside.
    /// - Throws: `ShareQueueError` of kind `.badData` naming the rule broken.
    static func checkStored(_ bytes: [UInt8]) throws(ShareQueueError) {
        // Most records are stored as the encoder writes them: checked in one pass, or by the full reading.
        if let fields = EncoderShapedFields.read(bytes), !fields.hasAttachments { return }
        try checkStoredInFull(bytes)
    }

    /// `checkStored` by the full reading alone, for any shape of record.
    static func checkStoredInFull(_ bytes: [UInt8]) throws(ShareQueueError) {
        // The summary's rules without building its labels: a producer needs only the verdict.
        let fields = try StoredFields(bytes, buildingAll: false)
        _ = try fields.check()
        if fields.hasAttachments { _ = try Record(jsonBytes: bytes) }
    }
}
