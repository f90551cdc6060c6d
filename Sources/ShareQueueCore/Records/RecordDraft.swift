/// What a producer hands to `QueueAppender`: the content and its labels. The
/// appender adds the id (unless given), the date and the format version.
public struct RecordDraft: Sendable {
    /// What the record carries; each case makes a record of its ``Record/Kind``.
    /// Contents are equal when their stored bytes are: text compares as UTF-8.
    public enum Content: Sendable, Hashable {
        /// Text: a `text` record.
        case text(String)
        /// A URL, which must have a scheme and no spaces: a `url` record.
        case url(String)
        /// A JSON value, kept as the producer wrote it: a `json` record.
        case json(JSONText)
        /// A JSON value of a content type of the producer's own, such as an encoded
        /// `Codable` value: a record of that kind with the value in ``Record/json``.
        /// An append checks the whole record, this value included, before it writes it.
        /// The kind is 1 to 256 bytes, with no control characters, and not `text`, `url` or `file`.
        case value(JSONText, kind: Record.Kind)
        /// No text: the record carries only its attachments (a `file` record).
        case attachmentsOnly

        /// Whether both are the same content, text compared as UTF-8 bytes.
        public static func == (lhs: Content, rhs: Content) -> Bool {
            switch (lhs, rhs) {
            case (.text(let l), .text(let r)), (.url(let l), .url(let r)): ByteKey.equal(l, r)
            case (.json(let l), .json(let r)): l == r
            case (.value(let l, let lk), .value(let r, let rk)): l == r && lk == rk
            case (.attachmentsOnly, .attachmentsOnly): true
            default: false
            }
        }

        /// Hashes the content as `==` compares it.
        public func hash(into hasher: inout Hasher) {
            switch self {
            case .text(let text): hasher.combine(0); ByteKey.hashBytes(of: text, into: &hasher)
            case .url(let url): hasher.combine(1); ByteKey.hashBytes(of: url, into: &hasher)
            case .json(let json): hasher.combine(2); hasher.combine(json)
            case .value(let json, let kind): hasher.combine(3); hasher.combine(json); hasher.combine(kind)
            case .attachmentsOnly: hasher.combine(4)
            }
        }
    }

    /// What the record carries.
    public var content: Content
    /// Who produces it, such as the extension's name: 1 to 256 bytes.
    public var source: String
    /// A key that a newer record with the same key supersedes, when a drain
    /// coalesces keys: 1 to 1024 bytes.
    public var key: String?
    /// The producer's own labels, strings only. Names are compared as UTF-8 bytes, so
    /// `"\u{E9}"` and `"e\u{301}"` are two labels; they are stored sorted by those bytes.
    public var meta: JSONMembers<String>?
    /// A caller's own UUID string, for a producer that retries; nil makes a new one.
    public var id: String?
    /// Files already copied into the queue with `AttachmentStore.add(copyOf:maxBytes:)`; at most ``Attachment/maximumPerRecord``.
    public var attachments: [Attachment]?

    /// A draft with this content and these labels.
    /// - Parameters:
    ///   - content: What the record carries.
    ///   - source: Who produces it, 1 to 256 bytes.
    ///   - key: Records with the same key supersede each other when a drain coalesces keys.
    ///   - meta: The producer's own labels.
    ///   - id: A UUID string of the caller's own, so that a retried append keeps its id; nil makes a new one.
    ///   - attachments: Files already copied into the queue with ``AttachmentStore/add(copyOf:maxBytes:)``.
    public init(_ content: Content, source: String, key: String? = nil, meta: JSONMembers<String>? = nil, id: String? = nil,
                attachments: [Attachment]? = nil) {
        self.content = content
        self.source = source
        self.key = key
        self.meta = meta
        self.id = id
        self.attachments = attachments
    }

    /// The stored JSON of this draft as a record with `id` made at `date`.
    func payload(id: String, date: String) -> [UInt8] {
        var out: [UInt8] = []
        appendPayload(id: id, date: date, to: &out)
        return out
    }

    /// Appends the stored JSON of this draft to `out`.
    func appendPayload(id: String, date: String, to out: inout [UInt8]) {
        let (kind, text, json) = storedContent
        // Sorted, as a producer writes the objects it makes.
        Record.encode(id: id, date: date, source: source, kind: kind, text: text, jsonBytes: json, key: key, meta: meta?.sortedByName(),
                      attachments: attachments, into: &out)
    }

    /// The record's kind and the `text` or `json` field it stores: what its content is,
    /// both for encoding and for telling whether a publish changed anything.
    var storedContent: (kind: Record.Kind, text: String?, json: [UInt8]?) {
        switch content {
        case .text(let value): (.text, value, nil)
        case .url(let value): (.url, value, nil)
        case .json(let value): (.json, nil, value.bytes)
        case .value(let value, let kind): (kind, nil, value.bytes)
        case .attachmentsOnly: (.file, nil, nil)
        }
    }

    func validate() throws(ShareQueueError) {
        if let id, !RecordID.isValid(id) { throw ShareQueueError(.invalidArgument, "an id must be a UUID string like 3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9: '\(id)'") }
        if source.isEmpty || source.utf8.count > 256 { throw ShareQueueError(.invalidArgument, "a source must be 1 to 256 bytes long") }
        if let key, key.isEmpty || key.utf8.count > 1024 { throw ShareQueueError(.invalidArgument, "a key must be 1 to 1024 bytes long") }
        if case .attachmentsOnly = content, (attachments ?? []).isEmpty {
            throw ShareQueueError(.noInput, "nothing to append: no text and no attachment")
        }
        if let attachments, attachments.count > Attachment.maximumPerRecord {
            throw ShareQueueError(.invalidArgument, "a record has at most \(Attachment.maximumPerRecord) attachments, not \(attachments.count)")
        }
        if case .value(_, let kind) = content, !Self.isContentKind(kind) {
            throw ShareQueueError(.invalidArgument, "a content kind must be 1 to 256 bytes without control characters, and not text, url or file: '\(kind.rawValue.prefix(200))'")
        }
        if case .url(let url) = content, !Self.looksLikeURL(url) {
            throw ShareQueueError(.badData, "not a URL (a scheme such as https: and no spaces or control characters): '\(url.prefix(200))'")
        }
    }

    /// Whether a value's kind names a content type rather than one of the kinds that carry no `json`.
    static func isContentKind(_ kind: Record.Kind) -> Bool {
        let length = kind.rawValue.utf8.count
        // Only a kind as short as `text`, `url` and `file` can be one of them: most are not compared at all.
        // No control characters: a kind is one line wherever it is written, such as a publish's digest input.
        return (1...256).contains(length) && (length > 4 || (kind != .text && kind != .url && kind != .file))
            && !containsControlCharacter(kind.rawValue)
    }

    /// Whether `text` holds a control character (below U+0020, or DEL).
    private static func containsControlCharacter(_ text: String) -> Bool {
        // Read in place where the string is contiguous, as native ones are: a typed append checks its
        // kind every time, and iterating a string's UTF-8 view costs ten times as much.
        let isControl = { (byte: UInt8) in byte < 0x20 || byte == 0x7F }
        return text.utf8.withContiguousStorageIfAvailable { $0.contains(where: isControl) } ?? text.utf8.contains(where: isControl)
    }

    /// A scheme followed by ':' and no whitespace or control characters.
    static func looksLikeURL(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.index(after: colon) != text.endIndex else { return false }
        let scheme = text[..<colon].unicodeScalars
        guard let first = scheme.first, first.isASCII, first.properties.isAlphabetic,
              scheme.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+.-".unicodeScalars.contains($0)) }) else { return false }
        return !text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || $0.properties.isWhitespace }
    }
}
