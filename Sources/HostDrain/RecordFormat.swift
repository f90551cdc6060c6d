import ShareQueueCore

/// How records are printed: JSON Lines for programs, or text for people.
enum RecordFormat: String {
    case json
    case text

    /// Appends `record` to `out` in this format, ending with a newline.
    func append(_ drained: DrainedRecord, to out: inout [UInt8]) {
        switch self {
        case .json:
            out += drained.jsonLine
            out.append(0x0A)
        case .text:
            let record = drained.record
            var heading = "\(record.date)  \(record.source)  \(record.kind)  \(record.id)"
            if let key = record.key { heading += "  key=\(key)" }
            // Labelled apart from the key, which a meta member may be named too.
            if let meta = record.meta { heading += meta.map { "  meta.\($0.name)=\($0.value)" }.joined() }
            out += Array((Self.shown(heading[...]) + "\n").utf8)
            let body: String
            if let text = record.text {
                body = text
            } else if let json = record.json {
                body = String(decoding: json.compactJSON, as: UTF8.self)
            } else {
                body = ""
            }
            for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
                out += Array(("    " + Self.shown(line, keepingTabs: true) + "\n").utf8)
            }
            // Every file the record brought, where the drain put it, as the JSON Lines give it.
            for attachment in record.attachments ?? [] {
                let line = "attachment: \(attachment.name)  \(attachment.size) bytes  \(attachment.path ?? attachment.file)"
                out += Array(("    " + Self.shown(line[...]) + "\n").utf8)
            }
        }
    }

    /// `text` with control characters and invisible ones written as JSON escapes (`\n`, `\u001b`,
    /// `\u202e`): text for people goes to a terminal, where a record could otherwise move the cursor,
    /// recolour the screen, forge a line of its own, or show its text reversed or hidden.
    static func shown(_ text: Substring, keepingTabs: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { isHidden($0) && !(keepingTabs && $0 == "\t") }) else { return String(text) }
        var shown = ""
        for scalar in text.unicodeScalars {
            guard isHidden(scalar) && !(keepingTabs && scalar == "\t") else { shown.unicodeScalars.append(scalar); continue }
            switch scalar {
            case "\n": shown += "\\n"
            case "\r": shown += "\\r"
            case "\t": shown += "\\t"
            default:
                // Past U+FFFF, as JSON writes it: the two halves of a UTF-16 surrogate pair.
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    shown += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            }
        }
        return shown
    }

    /// C0 and C1 controls, DEL, and what a terminal shows as nothing or uses to reorder text:
    /// format characters (bidirectional overrides, zero-width spaces and joiners, the byte
    /// order mark) and the line and paragraph separators.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return true }
        guard scalar.value >= 0xA0 else { return false }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}
