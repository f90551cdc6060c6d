import Foundation
import ShareQueueCore
import ToolSupport

/// A finished tool run, whose standard error holds its warnings.
protocol PrintsWarnings {
    var stderr: String { get }
}

extension ProcessResult: PrintsWarnings {}
extension MeasuredRun: PrintsWarnings {}

/// Stands, in a text field of an event given to `warned(_:tool:)`, for any text: a field a
/// test cannot know, such as the words of a sink's error.
let anyText = "⟨any⟩"

extension PrintsWarnings {
    /// Whether the tool printed `event` as a warning: the whole line it prints for one, in the
    /// words of the event's one rendering (checked on its own in `QueueEventTests`), so that a
    /// test names the event and its fields rather than matching English. A text field given as
    /// `anyText` matches whatever the line holds there.
    func warned(_ event: QueueEvent, tool: String = "host-drain") -> Bool {
        let pieces = event.description.components(separatedBy: anyText).map { TerminalText.shown($0[...]) }
        let prefix = "\(tool): warning: "
        return stderr.split(separator: "\n").contains { line in
            guard line.hasPrefix(prefix) else { return false }
            var rest = line.dropFirst(prefix.count)
            guard pieces.count > 1 else { return rest == pieces[0] }
            guard rest.hasPrefix(pieces[0]), rest.hasSuffix(pieces[pieces.count - 1]),
                  rest.count >= pieces[0].count + pieces[pieces.count - 1].count else { return false }
            rest = rest.dropFirst(pieces[0].count).dropLast(pieces[pieces.count - 1].count)
            for piece in pieces.dropFirst().dropLast() {
                guard let found = rest.range(of: piece) else { return false }
                rest = rest[found.upperBound...]
            }
            return true
        }
    }

    /// How many warnings the tool printed, of any kind.
    var warningCount: Int { stderr.split(separator: "\n").count { $0.contains(": warning: ") } }
}

extension TestQueue {
    /// The events a drain reports for what its quarantine file holds: one for each entry, with its fields.
    func setAsideEvents() throws -> [QueueEvent] {
        try quarantine().map { entry in
            .damageSetAside(segment: entry["segment"] as? String ?? "", offset: Int64(entry["offset"] as? Int ?? -1),
                            length: Int64(entry["length"] as? Int ?? -1), reason: entry["reason"] as? String ?? "")
        }
    }
}
