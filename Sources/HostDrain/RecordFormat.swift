import ShareQueueCore
import ToolSupport

/// How records are printed: JSON Lines for programs, or text for people.
enum RecordFormat: String {
    case json
    case text

    /// Appends `record` to `out` in this format, ending with a newline.
    func append(_ drained: DrainedRecord, to out: inout [UInt8]) {
        switch self {
        case .json:
            // Most records are one line as stored: copied once, straight from their bytes.
            if drained.isStoredLine {
                drained.appendStoredJSON(to: &out)
            } else {
                out += drained.jsonLine
            }
            out.append(0x0A)
        case .text:
            let record = drained.record
            var heading = "\(record.date)  \(record.source)  \(record.kind)  \(record.id)"
            if let key = record.key { heading += "  key=\(key)" }
            // Labelled apart from the key, which a meta member may be named too.
            if let meta = record.meta { heading += meta.map { "  meta.\($0.name)=\($0.value)" }.joined() }
            out += Array((TerminalText.shown(heading[...]) + "\n").utf8)
            let body: String
            if let text = record.text {
                body = text
            } else if let json = record.jsonValue {
                body = String(decoding: json.compactJSON, as: UTF8.self)
            } else {
                body = ""
            }
            for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
                out += Array(("    " + TerminalText.shown(line, keepingTabs: true) + "\n").utf8)
            }
            // Every file the record brought, where the drain put it, as the JSON Lines give it.
            for attachment in record.attachments ?? [] {
                let line = "attachment: \(attachment.name)  \(attachment.size) bytes  \(attachment.path ?? attachment.file)"
                out += Array(("    " + TerminalText.shown(line[...]) + "\n").utf8)
            }
        }
    }
}
