/// The words of the long-running sink protocol (`host-drain --exec CMD --long-running`):
/// pure functions over bytes, so that each line is tested byte by byte.
///
/// host-drain writes `sharequeue-sink 1` and a newline; the command answers with the same
/// line once it is ready. Then, for each batch, host-drain writes `batch COUNT BYTES`, a
/// newline, and COUNT records as JSON Lines, BYTES bytes in all, newlines included; the
/// command answers with one line: `delivered`, `refused`, or `retry`, each optionally
/// followed by a space and a message for host-drain's standard error. At the end,
/// host-drain closes the command's standard input, and the command exits.
package enum SinkProtocol {
    /// The name and version both sides write first.
    package static let greeting = "sharequeue-sink 1"

    /// The longest answer taken, newline excluded: a command that writes more without one
    /// does not speak the protocol.
    package static let longestAnswer = 4096

    /// The first line host-drain writes, and the line a command that speaks the protocol answers with.
    package static var greetingLine: [UInt8] { Array((greeting + "\n").utf8) }

    /// The line that opens a batch of `count` records taking `bytes` bytes of JSON Lines.
    package static func batchHeader(count: Int, bytes: Int) -> [UInt8] {
        Array("batch \(count) \(bytes)\n".utf8)
    }

    /// What a command answered about a batch.
    package enum Answer: Equatable {
        /// It took the whole batch.
        case delivered
        /// It refuses the batch: the drain bisects it to find the records it refuses.
        case refused(message: String)
        /// Its destination is unavailable: the batch waits, uncounted.
        case retry(message: String)
        /// Not an answer of the protocol: the command is broken.
        case malformed(String)
    }

    /// Reads an answer: a word, then, after one space, an optional message (on the line
    /// without its newline; a carriage return before the newline is taken off too).
    package static func answer(_ line: [UInt8]) -> Answer {
        var line = line[...]
        if line.last == 0x0D { line = line.dropLast() }
        let space = line.firstIndex(of: 0x20) ?? line.endIndex
        let word = line[..<space]
        let message = space < line.endIndex ? String(decoding: line[(space + 1)...], as: UTF8.self) : ""
        switch String(decoding: word, as: UTF8.self) {
        case "delivered": return .delivered
        case "refused": return .refused(message: message)
        case "retry": return .retry(message: message)
        default: return .malformed(shown(line))
        }
    }

    /// Whether `line` (without its newline) is the greeting a command answers with.
    package static func isGreeting(_ line: [UInt8]) -> Bool {
        var line = line[...]
        if line.last == 0x0D { line = line.dropLast() }
        return line.elementsEqual(greeting.utf8)
    }

    /// A line as host-drain shows it: at most 200 bytes, control characters escaped.
    package static func shown(_ line: ArraySlice<UInt8>) -> String {
        var text = ""
        for scalar in String(decoding: line.prefix(200), as: UTF8.self).unicodeScalars {
            text += scalar.value < 0x20 || scalar.value == 0x7F ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return "'" + text + (line.count > 200 ? "...'" : "'")
    }
}
