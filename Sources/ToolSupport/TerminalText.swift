/// Text that came from a queue, made safe to show on a terminal.
///
/// Anything in a queue may have been written by a hostile producer: a record's text, an id,
/// an attachment's name, a meta member's name, a date. Printed as it is, it could move the
/// cursor, recolour the screen, set the window's title, forge a line of a tool's own, or show
/// its text reversed or hidden. So the tools' text output and every warning and error they
/// print go through ``shown(_:keepingTabs:)``.
package enum TerminalText {
    /// `text` with control characters and invisible ones written as JSON escapes (`\n`, `\u001b`,
    /// `\u202e`): text for people goes to a terminal, where a record could otherwise move the cursor,
    /// recolour the screen, forge a line of its own, or show its text reversed or hidden.
    package static func shown(_ text: Substring, keepingTabs: Bool = false) -> String {
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
