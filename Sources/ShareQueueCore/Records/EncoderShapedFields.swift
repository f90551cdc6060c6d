// A shortcut for checking stored records in the shape this package writes them.

/// A stored record read and checked in one forward pass over its bytes, when
/// it is stored exactly as `Record.encode` writes it: compact, `v`, `id`,
/// `date`, `source` and `kind` first and in that order, then those of `text`,
/// `json`, `key`, `meta` and `attachments` it has, in that order, then members
/// this version does not know.
///
/// An accelerator only: the rules are written in full in `StoredFields` and
/// its `check()`, which read a record in any shape. This reading accepts a
/// record only when they accept it, with the same spans, version, kind and
/// attachments; on anything else (whitespace, another order, a repeated
/// member, a value of another type, an escaped name, kind or id, a surrogate
/// in a `\u` escape, a `meta` value that is not a string, any error) it declines, and the
/// full reading decides and names what is wrong. A drain checks every record
/// it passes through, and a producer every record it appends: most are in
/// this shape, and this costs a fraction of the full reading.
struct EncoderShapedFields {
    typealias StringSpan = JSONParser.StringSpan

    let version: Int
    /// One of the kinds with rules of their own, or `.other`. Only plain values are
    /// stored, so that a drain discards the reading without a call to destroy it.
    let knownKind: KnownKind
    let id, date, source, kindText: StringSpan
    let text, key: StringSpan?
    /// Whether `attachments` is present (and then it is an array).
    let hasAttachments: Bool
    /// Whether whitespace inside a nested value (`json`, `attachments`, an unknown member) holds a line break.
    let spansLines: Bool
    /// Whether the record holds its labels alone: no `json`, `meta`, `attachments` or unknown
    /// member, so that the spans above are all there is to build it from.
    let holdsLabelsOnly: Bool

    /// The record's fields, or nil when `bytes` are not in the encoder's shape
    /// or break a rule: then only the full reading may judge them.
    static func read(_ bytes: [UInt8]) -> EncoderShapedFields? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: bytes, buffer: buffer)
            return reader.fields()
        }
    }

    /// The same over bytes held elsewhere: a record with a nested value has them
    /// copied into an array once, for the full parser that checks that value.
    static func read(_ buffer: UnsafeBufferPointer<UInt8>) -> EncoderShapedFields? {
        var reader = Reader(bytes: nil, buffer: buffer)
        return reader.fields()
    }

    /// The kinds whose records must hold a member of their own.
    enum KnownKind { case text, url, json, file, other }

    /// The record's kind, built from its stored text.
    func kind(in bytes: [UInt8]) -> Record.Kind {
        switch knownKind {
        case .text: .text
        case .url: .url
        case .json: .json
        case .file: .file
        case .other: Record.Kind(rawValue: String(decoding: bytes[kindText.contents], as: UTF8.self))
        }
    }

    /// The optional members, in the order the encoder writes them.
    private enum Member: Int, Comparable {
        case text = 1, json, key, meta, attachments, unknown
        static func < (a: Member, b: Member) -> Bool { a.rawValue < b.rawValue }
    }

    /// One pass over the bytes, without bounds checks per byte in a release build.
    ///
    /// The full reading refuses a record that is not UTF-8 as a whole. This one checks
    /// it piece by piece, as it goes: the bytes it matches outside strings are ASCII,
    /// those inside strings are checked as they are scanned, and nested values once
    /// skipped. Pieces that meet at ASCII bytes are UTF-8 exactly when their whole is.
    private struct Reader {
        /// The same bytes as `buffer`, for the full parser's `skipValue` over nested values;
        /// copied from `buffer` when first needed, if not given.
        var bytes: [UInt8]?
        let buffer: UnsafeBufferPointer<UInt8>
        var index = 0
        var sawLineBreak = false

        mutating func fields() -> EncoderShapedFields? {
            guard take("{\"v\":"), let version = positiveInteger(),
                  take(",\"id\":"), let id = string(),
                  // Without escapes, the id's length is its stored length.
                  !id.hasEscapes, id.contents.count >= 1, id.contents.count <= 128,
                  take(",\"date\":"), let date = string(),
                  take(",\"source\":"), let source = string(),
                  take(",\"kind\":"), let kindText = string(), let kind = knownKind(kindText)
            else { return nil }
            var text: StringSpan? = nil
            var key: StringSpan? = nil
            var hasJSON = false
            var hasAttachments = false
            var holdsLabelsOnly = true
            var last: Member? = nil
            while true {
                guard index < buffer.count else { return nil }
                if buffer[index] == UInt8(ascii: "}") {
                    index += 1
                    guard index == buffer.count else { return nil }
                    break
                }
                guard take(","), let name = string(), take(":"), let member = member(named: name) else { return nil }
                // In the order the encoder writes; a repeated member would do no harm (each is checked,
                // the last one counts, as in the full reading), but the encoder writes none.
                if let last, member < last || (member == last && member != .unknown) { return nil }
                last = member
                if member != .text && member != .key { holdsLabelsOnly = false }
                switch member {
                case .text:
                    guard let span = string() else { return nil }
                    text = span
                case .key:
                    guard let span = string() else { return nil }
                    key = span
                case .json:
                    guard skipValue() != nil else { return nil }
                    hasJSON = true
                case .meta:
                    guard objectOfStrings() else { return nil }
                case .attachments:
                    guard index < buffer.count, buffer[index] == UInt8(ascii: "["), skipValue() != nil else { return nil }
                    hasAttachments = true
                case .unknown:
                    guard skipValue() != nil else { return nil }
                }
            }
            switch kind {
            case .text, .url: guard text != nil else { return nil }
            case .json: guard hasJSON else { return nil }
            case .file: guard hasAttachments else { return nil }
            default: break
            }
            return EncoderShapedFields(version: version, knownKind: kind, id: id, date: date, source: source, kindText: kindText,
                                       text: text, key: key, hasAttachments: hasAttachments, spansLines: sawLineBreak,
                                       holdsLabelsOnly: holdsLabelsOnly)
        }

        /// Moves past `literal` when the bytes at `index` are exactly it.
        @inline(__always)
        mutating func take(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard buffer.count - index >= count else { return false }
            let expected = UnsafeRawPointer(literal.utf8Start)
            let stored = UnsafeRawPointer(buffer.baseAddress! + index)
            if count >= 8 {
                // The labels' names: two words, overlapping when shorter than 16 bytes.
                precondition(count <= 16)
                guard stored.loadUnaligned(as: UInt64.self) == expected.loadUnaligned(as: UInt64.self),
                      stored.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                        == expected.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) else { return false }
            } else {
                for offset in 0..<count where stored.load(fromByteOffset: offset, as: UInt8.self) != expected.load(fromByteOffset: offset, as: UInt8.self) {
                    return false
                }
            }
            index += count
            return true
        }

        /// An integer of at least 1, without sign, fraction, exponent or leading zero,
        /// that `Int` holds; else nil, with the full reading to say what it is.
        @inline(__always)
        mutating func positiveInteger() -> Int? {
            guard index < buffer.count, buffer[index] >= UInt8(ascii: "1"), buffer[index] <= UInt8(ascii: "9") else { return nil }
            var value = 0
            var digits = 0
            while index < buffer.count, buffer[index] >= UInt8(ascii: "0"), buffer[index] <= UInt8(ascii: "9") {
                // 18 digits always fit; longer ones are left to the full reading.
                digits += 1
                guard digits <= 18 else { return nil }
                value = value * 10 + Int(buffer[index] - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }

        /// The string at `index`, checked as `JSONParser.scanString` checks it (and
        /// as UTF-8), with the same span; nil for anything else, and for surrogate
        /// escapes, which are rare.
        @inline(__always)
        mutating func string() -> StringSpan? {
            guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var hasEscapes = false
            index = start
            while true {
                index = JSONParser.endOfPlainRun(UnsafeRawBufferPointer(buffer), from: index, stoppingAtNonASCII: true)
                guard index < buffer.count else { return nil }
                let byte = buffer[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return StringSpan(contents: start..<(index - 1), hasEscapes: hasEscapes)
                }
                if byte >= 0x80 {
                    guard let length = UTF8Validation.sequenceLength(buffer, at: index) else { return nil }
                    index += length
                    continue
                }
                guard byte == UInt8(ascii: "\\"), index + 1 < buffer.count else { return nil }
                hasEscapes = true
                switch buffer[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    guard buffer.count - index >= 6, let code = JSONParser.hex4(buffer[(index + 2)..<(index + 6)]), code < 0xD800 || code > 0xDFFF else { return nil }
                    index += 6
                default: return nil
                }
            }
        }

        /// Whether the stored bytes of `span` are those of `text`.
        @inline(__always)
        func stored(_ span: StringSpan, equal text: StaticString) -> Bool {
            JSONParser.storedBytes(span, in: buffer, equal: text)
        }

        /// The kind a plainly stored `kind` names; nil for others, which the full reading compares as text.
        func knownKind(_ span: StringSpan) -> KnownKind? {
            guard JSONParser.isPlainASCII(span, in: buffer) else { return nil }
            if stored(span, equal: "text") { return .text }
            if stored(span, equal: "url") { return .url }
            if stored(span, equal: "json") { return .json }
            if stored(span, equal: "file") { return .file }
            return .other
        }

        /// Which optional member a name is; nil for the leading members (which are
        /// not repeated here) and for names not stored as plain ASCII.
        func member(named name: StringSpan) -> Member? {
            guard JSONParser.isPlainASCII(name, in: buffer) else { return nil }
            if stored(name, equal: "text") { return .text }
            if stored(name, equal: "json") { return .json }
            if stored(name, equal: "key") { return .key }
            if stored(name, equal: "meta") { return .meta }
            if stored(name, equal: "attachments") { return .attachments }
            for leading: StaticString in ["v", "id", "date", "source", "kind"] where stored(name, equal: leading) { return nil }
            return .unknown
        }

        /// An object whose values are all strings, compact; `meta` as its rule wants it.
        mutating func objectOfStrings() -> Bool {
            guard take("{") else { return false }
            if take("}") { return true }
            while true {
                guard string() != nil, take(":"), string() != nil else { return false }
                if take(",") { continue }
                return take("}")
            }
        }

        /// Checks any value with the full parser, which reads nested JSON (and then its bytes
        /// as UTF-8, which the full parser leaves to its caller); nil when it refuses it.
        mutating func skipValue() -> JSONParser.Kind? {
            if bytes == nil { bytes = Array(buffer) }
            var parser = JSONParser(bytes!)
            parser.index = index
            // Inside the record's object, as in the full reading, for the depth limit.
            parser.depth = 1
            guard let kind = try? parser.skipValue(),
                  UTF8Validation.isValid(UnsafeBufferPointer(rebasing: buffer[index..<parser.index])) else { return nil }
            index = parser.index
            if parser.sawLineBreak { sawLineBreak = true }
            return kind
        }
    }
}
