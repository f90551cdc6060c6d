// Records to and from their stored bytes, and through Codable.

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
    static func encode(version: Int = Record.currentVersion, id: String, date: String, source: String, kind: Kind,
                       text: String?, jsonBytes: [UInt8]?, key: String?, meta: JSONMembers<String>?,
                       attachments: [Attachment]? = nil, unknownFields: JSONMembers<JSONValue> = JSONMembers(), into out: inout [UInt8]) {
        if version == 1 { append("{\"v\":1,\"id\":", to: &out) } else { out.append(contentsOf: "{\"v\":\(version),\"id\":".utf8) }
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
                  kind: checked.kind, text: fields.string(fields.text), json: fields.json, key: fields.string(fields.key), meta: meta,
                  attachments: attachments, unknownFields: fields.unknown, version: checked.version)
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

/// The top-level members of a stored record, gathered in one scan, and the
/// rules every record must keep. Both ways of reading a record, whole
/// (`Record(jsonBytes:)`) and summed up for a drain (`RecordSummary`), go
/// through here, so they accept the same records.
///
/// Every member is checked, but the scan builds no `String` and no `JSONValue`
/// for the labels: it notes where each string is, and a reader builds only the
/// strings it takes. This runs for every record a drain passes through and
/// every record a producer appends.
struct StoredFields {
    /// A member the rules read, as its last occurrence was: its kind, and
    /// where its text is stored when it is a string.
    struct Member {
        let kind: JSONParser.Kind
        let text: JSONParser.StringSpan?
    }

    /// Over the record's bytes, which the members' spans index.
    private let parser: JSONParser
    var id, date, source, kind, key, text: Member?
    var versionKind: JSONParser.Kind?
    /// `v` when it is an integer of at least 1.
    var version: Int?
    /// Always built: its rule reads every member.
    var meta: JSONValue?
    /// Built only when building all; their kinds are always known.
    var json, attachments: JSONValue?
    var jsonKind, attachmentsKind: JSONParser.Kind?
    /// In their stored order; a name that occurs again keeps its first place and takes its last value.
    var unknown = JSONMembers<JSONValue>()
    /// Whether the stored JSON spans lines.
    let spansLines: Bool

    /// The names the rules know, told apart without building the name.
    private enum Name { case v, id, date, source, kind, text, json, key, meta, attachments, other }

    init(_ bytes: [UInt8], buildingAll: Bool) throws(ShareQueueError) {
        var members = try JSONParser.ObjectMembers(bytes)
        while let name = try members.next() {
            switch Self.name(name, in: members.parser) {
            case .v:
                let start = members.parser.index
                let found = try members.parser.skipValue()
                versionKind = found
                version = found == .number ? Self.positiveInteger(bytes[start..<members.parser.index]) : nil
            case .id: id = try Self.member(&members.parser)
            case .date: date = try Self.member(&members.parser)
            case .source: source = try Self.member(&members.parser)
            case .kind: kind = try Self.member(&members.parser)
            case .key: key = try Self.member(&members.parser)
            case .text: text = try Self.member(&members.parser)
            case .meta: meta = try members.parser.parseValue()
            case .json: (json, jsonKind) = try Self.value(&members.parser, building: buildingAll)
            case .attachments: (attachments, attachmentsKind) = try Self.value(&members.parser, building: buildingAll)
            case .other:
                let (value, _) = try Self.value(&members.parser, building: buildingAll)
                if let value { unknown[members.parser.string(name)] = value }
            }
        }
        spansLines = members.spansLines
        parser = members.parser
    }

    /// The next value and its kind, built only when `building`; else checked and skipped.
    private static func value(_ parser: inout JSONParser, building: Bool) throws(ShareQueueError) -> (JSONValue?, JSONParser.Kind) {
        guard building else { return (nil, try parser.skipValue()) }
        let value = try parser.parseValue()
        return (value, value.kind)
    }

    /// Which name a member has, by its UTF-8 bytes: stored bytes equal to a
    /// name are that name, and other plain ASCII is none of them; only escapes
    /// and other characters need the name built.
    private static func name(_ span: JSONParser.StringSpan, in parser: JSONParser) -> Name {
        if !span.hasEscapes && !span.contents.isEmpty {
            // Told apart by length and first byte, then compared once.
            let candidate: (Name, StaticString)?
            switch (span.contents.count, parser.bytes[span.contents.lowerBound]) {
            case (1, UInt8(ascii: "v")): candidate = (.v, "v")
            case (2, UInt8(ascii: "i")): candidate = (.id, "id")
            case (3, UInt8(ascii: "k")): candidate = (.key, "key")
            case (4, UInt8(ascii: "d")): candidate = (.date, "date")
            case (4, UInt8(ascii: "k")): candidate = (.kind, "kind")
            case (4, UInt8(ascii: "t")): candidate = (.text, "text")
            case (4, UInt8(ascii: "j")): candidate = (.json, "json")
            case (4, UInt8(ascii: "m")): candidate = (.meta, "meta")
            case (6, UInt8(ascii: "s")): candidate = (.source, "source")
            case (11, UInt8(ascii: "a")): candidate = (.attachments, "attachments")
            default: candidate = nil
            }
            if let (name, text) = candidate, parser.storedBytes(span, equal: text) { return name }
            if parser.isPlainASCII(span) { return .other }
        }
        let text = parser.string(span)
        return knownNames.first { ByteKey.equal($0.text, text) }?.name ?? .other
    }

    private static let knownNames: [(text: String, name: Name)] = [
        ("v", .v), ("id", .id), ("date", .date), ("source", .source), ("kind", .kind), ("text", .text),
        ("json", .json), ("key", .key), ("meta", .meta), ("attachments", .attachments),
    ]

    /// Checks one value, noting where it is when it is a string.
    private static func member(_ parser: inout JSONParser) throws(ShareQueueError) -> Member {
        if parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "\"") {
            return Member(kind: .string, text: try parser.scanString())
        }
        return Member(kind: try parser.skipValue(), text: nil)
    }

    /// What `Int(literal)` makes of a JSON number literal, when it is at least 1.
    private static func positiveInteger(_ literal: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in literal {
            // A sign, a fraction or an exponent: `Int` refuses it, or it is not positive.
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            if overflowed || overflowedAgain { return nil }
            value = sum
        }
        return value >= 1 ? value : nil
    }

    /// The text of a member that is a string.
    func string(_ member: Member?) -> String? {
        member?.text.map(parser.string)
    }

    /// Whether `attachments` is an array: such a record is decoded in full before it is delivered or trusted.
    var hasAttachments: Bool {
        if case .array? = attachmentsKind { true } else { false }
    }

    /// Applies the rules of a record (all but those inside `attachments`) and returns its version and kind.
    func check() throws(ShareQueueError) -> (version: Int, kind: Record.Kind) {
        func requireString(_ member: Member?, _ name: String, required: Bool) throws(ShareQueueError) {
            switch member?.kind {
            case .string?: return
            case nil, .null?: if required { throw ShareQueueError(.badData, "not a record: '\(name)' is missing") }
            default: throw ShareQueueError(.badData, "not a record: '\(name)' is not a string")
            }
        }
        guard versionKind == .number, let version else {
            throw ShareQueueError(.badData, "not a record: 'v' is missing or not a positive integer")
        }
        try requireString(id, "id", required: true)
        if let span = id?.text {
            // Without escapes the text is the stored bytes, already checked as UTF-8.
            let length = span.hasEscapes ? parser.string(span).utf8.count : span.contents.count
            guard length > 0, length <= 128 else { throw ShareQueueError(.badData, "not a record: 'id' is empty or too long") }
        }
        try requireString(date, "date", required: true)
        try requireString(source, "source", required: true)
        try requireString(kind, "kind", required: true)
        let recordKind = kindStored
        switch text?.kind {
        case nil, .null?: if recordKind == .text || recordKind == .url { throw ShareQueueError(.badData, "not a record: a \(recordKind) record has no 'text'") }
        case .string?: break
        default: throw ShareQueueError(.badData, "not a record: 'text' is not a string")
        }
        if recordKind == .json && jsonKind == nil { throw ShareQueueError(.badData, "not a record: a json record has no 'json'") }
        try requireString(key, "key", required: false)
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
        return (version, recordKind)
    }

    /// The record's kind, once `kind` is known to be a string: the kinds this
    /// version knows without building their text when they are stored plainly.
    private var kindStored: Record.Kind {
        guard let span = kind?.text else { return Record.Kind(rawValue: "") }
        if parser.isPlainASCII(span) {
            if parser.storedBytes(span, equal: "text") { return .text }
            if parser.storedBytes(span, equal: "url") { return .url }
            if parser.storedBytes(span, equal: "json") { return .json }
            if parser.storedBytes(span, equal: "file") { return .file }
        }
        return Record.Kind(rawValue: parser.string(span))
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
            json: try container.decodeIfPresent(JSONValue.self, forKey: FieldName("json")),
            key: try container.decodeIfPresent(String.self, forKey: FieldName("key")),
            meta: try container.decodeIfPresent(JSONMembers<String>.self, forKey: FieldName("meta")),
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
    /// Where the labels are in the stored JSON: a drain that passes records
    /// through never builds them, and any other reader builds them when it asks.
    let idText, dateText: JSONParser.StringSpan
    let keyText: JSONParser.StringSpan?
    private let parser: JSONParser
    /// Records with attachments are decoded in full: their files need checking.
    let hasAttachments: Bool
    /// Whether the stored JSON spans lines, so that JSON Lines must re-encode it.
    let spansLines: Bool

    init(jsonBytes: [UInt8]) throws(ShareQueueError) {
        // Most records are stored as the encoder writes them: read in one pass, or by the full reading.
        guard let fields = EncoderShapedFields.read(jsonBytes) else {
            try self.init(checkingInFull: jsonBytes)
            return
        }
        self.init(jsonBytes, id: fields.id, date: fields.date, key: fields.key,
                  hasAttachments: fields.hasAttachments, spansLines: fields.spansLines)
    }

    /// The summary by the full reading alone, for any shape of record.
    init(checkingInFull jsonBytes: [UInt8]) throws(ShareQueueError) {
        let fields = try StoredFields(jsonBytes, buildingAll: false)
        _ = try fields.check()
        // The checks passed, so `id` and `date` are strings.
        guard let id = fields.id?.text, let date = fields.date?.text else { throw ShareQueueError(.badData, "not a record") }
        self.init(jsonBytes, id: id, date: date, key: fields.key?.text, hasAttachments: fields.hasAttachments, spansLines: fields.spansLines)
    }

    private init(_ jsonBytes: [UInt8], id: JSONParser.StringSpan, date: JSONParser.StringSpan, key: JSONParser.StringSpan?,
                 hasAttachments: Bool, spansLines: Bool) {
        idText = id
        dateText = date
        keyText = key
        parser = JSONParser(jsonBytes)
        self.hasAttachments = hasAttachments
        self.spansLines = spansLines
    }

    var id: String { parser.string(idText) }
    var date: String { parser.string(dateText) }
    var key: String? { keyText.map(parser.string) }
}
