// The rules every stored record is read by, without building its labels.

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
    /// `v`'s digits as stored, when `version` cannot hold them (past `Int.max`).
    var versionDigits: [UInt8]?
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
                versionDigits = version == Int.max ? Array(bytes[start..<members.parser.index]) : nil
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

    /// The version a JSON number literal of digits alone gives, when it is at least 1 (§7.1):
    /// one too large for `Int` is `Int.max`, a version like any above 1.
    private static func positiveInteger(_ literal: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in literal {
            // A sign, a fraction or an exponent: not a version.
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            value = overflowed || overflowedAgain ? Int.max : sum
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
