/// One piece of shared content, as it travels from a producer to the host.
///
/// Stored as one compact JSON object: `v`, `id`, `date`, `source`, `kind`,
/// then `text` (for text and URLs) or `json`, then the optional `key`, `meta`
/// and `attachments`. Fields this version does not know (a newer producer's) are kept
/// and written back out, never dropped.
///
/// Two records are equal when their fields have the same bytes: ids, keys, kinds,
/// sources and every other string compare as UTF-8, never by Swift's canonical equivalence.
public struct Record: Sendable, Hashable {
    /// The record format this version writes.
    public static let currentVersion = 1

    /// What the payload is. Kinds a newer producer invents pass through unchanged.
    /// A struct rather than an enum, so that a host switching over kinds
    /// needs a default case, and a kind it does not know stays readable.
    /// Kinds are equal when their UTF-8 bytes are.
    public struct Kind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The kind as stored, such as `url`.
        public let rawValue: String
        /// The kind stored as `rawValue`, known to this version or not.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The kind written as a literal: `static let contentKind: Record.Kind = "link"`.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// Text, in ``Record/text``.
        public static let text = Kind(rawValue: "text")
        /// A URL, in ``Record/text``.
        public static let url = Kind(rawValue: "url")
        /// A JSON value, in ``Record/json``.
        public static let json = Kind(rawValue: "json")
        /// Only attachments, no text.
        public static let file = Kind(rawValue: "file")
        /// The kind as stored.
        public var description: String { rawValue }
        /// Whether both are the same bytes.
        public static func == (lhs: Kind, rhs: Kind) -> Bool { ByteKey.equal(lhs.rawValue, rhs.rawValue) }
        /// Hashes the kind's UTF-8 bytes.
        public func hash(into hasher: inout Hasher) { ByteKey.hashBytes(of: rawValue, into: &hasher) }
    }

    /// The record format version (`v`).
    public var version: Int
    /// A UUID string, stable across retries, for consumers to deduplicate on.
    public var id: String
    /// Creation time, ISO-8601 UTC with milliseconds: `2026-11-29T14:52:20.123Z`.
    public var date: String
    /// Who produced it, such as the extension's name.
    public var source: String
    /// What the payload is, and so which of `text` and `json` holds it.
    public var kind: Kind
    /// The text, or the URL, for `text` and `url` records.
    public var text: String?
    /// The value of a `json` record, or of a record of an app's own content kind, as compact JSON:
    /// the bytes ``jsonLine`` writes for it, to decode with a decoder of the host's choice.
    public var json: JSONText? {
        get { jsonValue.map { JSONText(encoded: $0.compactJSON) } }
        set { jsonValue = newValue?.value }
    }
    /// The value of a `json` record (or one of an app's own kind), as this package reads and writes it.
    package var jsonValue: JSONValue?
    /// Records with the same key supersede each other, newest first.
    public var key: String?
    /// The producer's own labels, strings only, in their stored order with their exact names.
    public var meta: JSONMembers<String>?
    /// Files that travel with the record.
    public var attachments: [Attachment]?
    /// Fields written by a newer producer, passed through as they are, in their stored order.
    package var unknownFields: JSONMembers<JSONValue>
    /// The digits of `v` as stored, when ``version`` cannot hold them (past `Int.max`),
    /// so that the record is written again as it was.
    var versionDigits: [UInt8]?

    /// A record with these fields, for a host that builds one itself (a producer
    /// appends a ``RecordDraft`` instead). Each parameter sets the property of its name;
    /// `version` sets ``version``.
    public init(id: String, date: String, source: String, kind: Kind, text: String? = nil, json: JSONText? = nil,
                key: String? = nil, meta: JSONMembers<String>? = nil, attachments: [Attachment]? = nil,
                version: Int = Record.currentVersion) {
        self.init(id: id, date: date, source: source, kind: kind, text: text, jsonValue: json?.value, key: key, meta: meta,
                  attachments: attachments, unknownFields: JSONMembers(), version: version)
    }

    /// A record with these fields, the value and the unknown fields as this package reads them.
    package init(id: String, date: String, source: String, kind: Kind, text: String? = nil, jsonValue: JSONValue?,
                 key: String? = nil, meta: JSONMembers<String>? = nil, attachments: [Attachment]? = nil,
                 unknownFields: JSONMembers<JSONValue> = JSONMembers(), version: Int = Record.currentVersion) {
        self.version = version
        self.id = id
        self.date = date
        self.source = source
        self.kind = kind
        self.text = text
        self.jsonValue = jsonValue
        self.key = key
        self.meta = meta
        self.attachments = attachments
        self.unknownFields = unknownFields
    }

    static let knownFields: Set<ByteKey> = Set(["v", "id", "date", "source", "kind", "text", "json", "key", "meta", "attachments"].map(ByteKey.init))

    /// Whether both records have the same fields, every string compared as UTF-8 bytes.
    public static func == (lhs: Record, rhs: Record) -> Bool {
        lhs.version == rhs.version && lhs.versionDigits == rhs.versionDigits && ByteKey.equal(lhs.id, rhs.id) && ByteKey.equal(lhs.date, rhs.date)
            && ByteKey.equal(lhs.source, rhs.source) && lhs.kind == rhs.kind && ByteKey.equal(lhs.text, rhs.text)
            && lhs.jsonValue == rhs.jsonValue && ByteKey.equal(lhs.key, rhs.key) && lhs.meta == rhs.meta
            && lhs.attachments == rhs.attachments && lhs.unknownFields == rhs.unknownFields
    }

    /// Hashes the record's id, the field consumers tell records apart by.
    public func hash(into hasher: inout Hasher) {
        ByteKey.hashBytes(of: id, into: &hasher)
    }
}
