/// host-drain's long-running sink protocol (`host-drain --exec CMD --long-running`), as far
/// as the forwarder speaks it: host-drain greets with `sharequeue-sink 1`, the forwarder
/// greets back once it is connected, then each batch comes as `batch COUNT BYTES` and COUNT
/// lines, and is answered with one line, `delivered` or `refused MESSAGE`; the end of
/// standard input ends the forwarder. A failure that calls for a retry ends it with 75, as
/// it would in a process of its own, since its connection cannot be trusted after one.
enum SinkProtocol {
    /// The line both sides write first. A record is a JSON object, and never reads so.
    static let greeting = "sharequeue-sink 1"

    /// Whether `line` is host-drain's greeting.
    static func isGreeting(_ line: [UInt8]) -> Bool { line.elementsEqual(greeting.utf8) }

    /// The number of records of a batch, from the line that opens it.
    /// - Throws: ``ForwardingFailure`` of kind `.usage` for any other line: host-drain then
    ///   takes the forwarder for broken, and stops.
    static func recordCount(_ line: UnsafeBufferPointer<UInt8>) throws(ForwardingFailure) -> Int {
        let words = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard words.count == 3, words[0].elementsEqual("batch".utf8),
              let count = Int(String(decoding: words[1], as: UTF8.self)), count >= 0,
              Int(String(decoding: words[2], as: UTF8.self)) != nil else {
            throw ForwardingFailure(.usage, "expected a line 'batch COUNT BYTES' from host-drain, not '\(String(decoding: line.prefix(80), as: UTF8.self))'")
        }
        return count
    }

    /// The answer to a batch: `delivered`, or `refused` and why, on one line.
    static func answer(refusing refusal: ForwardingFailure?) -> String {
        guard let refusal else { return "delivered\n" }
        let message = refusal.message.map { $0 == "\n" || $0 == "\r" ? " " : $0 }
        return "refused " + String(message) + "\n"
    }
}
