// What a typed reader takes from a drained record, read from its stored bytes.

/// Where a drained record's members lie in its stored JSON, found by one pass
/// that checks nothing: the drain checked every byte before it made the record,
/// so a typed drain decodes the content where it lies, without building the
/// `Record` or a `JSONValue`. A member that occurs twice counts with its last
/// value, as in every reading of a record.
package struct StoredRecordLayout {
    /// The record's stored bytes.
    package let json: CheckedJSON
    /// Where the values of `kind`, `source`, `json` and `meta` start, when present.
    package private(set) var kind, source, content, meta: Int?

    init(_ json: CheckedJSON) {
        self.json = json
        let start = json.skippingWhitespace(from: 0)
        json.forEachMember(ofObjectAt: start) { member in
            // The names are told apart by length first: most members are none of these.
            switch member.name.count {
            case 4 where json.name(of: member, is: "kind"): kind = member.value
            case 4 where json.name(of: member, is: "json"): content = member.value
            case 4 where json.name(of: member, is: "meta"): meta = member.value
            case 6 where json.name(of: member, is: "source"): source = member.value
            default:
                // An escaped name is longer as stored than as text.
                guard member.nameHasEscapes else { return }
                let name = json.name(of: member)
                if ByteKey.equal(name, "kind") { kind = member.value }
                if ByteKey.equal(name, "json") { content = member.value }
                if ByteKey.equal(name, "meta") { meta = member.value }
                if ByteKey.equal(name, "source") { source = member.value }
            }
        }
    }

    /// The record's kind.
    package var kindValue: Record.Kind { Record.Kind(rawValue: kind.map(json.string(at:)) ?? "") }

    /// Who produced the record.
    package var sourceText: String { source.map(json.string(at:)) ?? "" }

    /// The producer's labels; nil when there are none (or `meta` is null).
    package var labels: JSONMembers<String>? {
        guard let meta, json.kind(at: meta) == .object else { return nil }
        var labels = JSONMembers<String>()
        // The drain's checks passed, so every value is a string.
        json.forEachMember(ofObjectAt: meta) { labels[json.name(of: $0)] = json.string(at: $0.value) }
        return labels
    }
}

extension DrainedRecord {
    /// Where the members a typed reader takes lie in ``storedJSON``, found now.
    package var layout: StoredRecordLayout { StoredRecordLayout(CheckedJSON(checked: storedJSON)) }

    /// The record's attachments, with the paths the drain gave them; nil if it has none.
    package var attachments: [Attachment]? {
        if let decoded { return decoded.attachments }
        return hasAttachments ? record.attachments : nil
    }
}
