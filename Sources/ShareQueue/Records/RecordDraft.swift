/// What a producer hands to `QueueAppender`: the content and its labels. The
/// appender adds the id (unless given), the date and the format version.
public struct RecordDraft: Sendable {
    public enum Content: Sendable, Hashable {
        case text(String)
        case url(String)
        case json(JSONText)
        /// No text: the record carries only its attachments.
        case attachmentsOnly
    }

    public var content: Content
    public var source: String
    public var key: String?
    public var meta: [String: String]?
    /// A caller's own UUID string, for a producer that retries; nil makes a new one.
    public var id: String?
    /// Files already copied into the queue with `AttachmentStore.add(copyOf:)`.
    public var attachments: [Attachment]?

    public init(_ content: Content, source: String, key: String? = nil, meta: [String: String]? = nil, id: String? = nil,
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
        let (kind, text, json): (Record.Kind, String?, [UInt8]?)
        switch content {
        case .text(let value): (kind, text, json) = (.text, value, nil)
        case .url(let value): (kind, text, json) = (.url, value, nil)
        case .json(let value): (kind, text, json) = (.json, nil, value.bytes)
        case .attachmentsOnly: (kind, text, json) = (.file, nil, nil)
        }
        Record.encode(id: id, date: date, source: source, kind: kind, text: text, jsonBytes: json, key: key, meta: meta,
                      attachments: attachments, into: &out)
    }

    func validate() throws(ShareQueueError) {
        if let id, !RecordID.isValid(id) { throw ShareQueueError(.invalidArgument, "an id must be a UUID string like 3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9: '\(id)'") }
        if source.isEmpty || source.utf8.count > 256 { throw ShareQueueError(.invalidArgument, "a source must be 1 to 256 bytes long") }
        if let key, key.isEmpty || key.utf8.count > 1024 { throw ShareQueueError(.invalidArgument, "a key must be 1 to 1024 bytes long") }
        if case .attachmentsOnly = content, (attachments ?? []).isEmpty {
            throw ShareQueueError(.noInput, "nothing to append: no text and no attachment")
        }
        if case .url(let url) = content, !Self.looksLikeURL(url) {
            throw ShareQueueError(.badData, "not a URL (a scheme such as https: and no spaces or control characters): '\(url.prefix(200))'")
        }
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
