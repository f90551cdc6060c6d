/// What the options ask of the stream they name: that it capture the subject and, when
/// `--dupe-window` is given, keep ids that long. The decisions here are pure; the
/// connection asks the server and hands its answers in.
struct StreamRequirement {
    /// The stream's name, from `--stream` or `--create-stream`.
    let name: String
    /// The subject every record is published to.
    let subject: String
    /// The duplicate window asked for, in nanoseconds as the server keeps it; nil for any.
    let duplicateWindow: Int64?
    /// The option that named the stream.
    let option: String
    /// Whether the options ask to make the stream when it does not exist.
    let creates: Bool
    /// The server, for the command that makes the stream.
    let server: String

    /// The requirement `options` make, or nil when they name no stream.
    init?(_ options: ForwarderOptions) {
        guard let name = options.stream else { return nil }
        self.name = name
        subject = options.subject
        duplicateWindow = options.dupeWindow.map { Int64(($0 * 1e9).rounded()) }
        option = options.streamOption
        creates = options.createsStream
        server = options.server
    }

    /// Checks the name before anything asks the server about it.
    /// - Throws: ``ForwardingFailure`` of kind `.configuration` for a name the server would refuse.
    func checkName() throws(ForwardingFailure) {
        // nats-server's rules: no token separator or wildcard, nothing that is not a file name.
        let forbidden: Set<UInt8> = [UInt8(ascii: "."), UInt8(ascii: "*"), UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "\\")]
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && !forbidden.contains($0) }) else {
            throw ForwardingFailure(.configuration, "'\(name)' is not a stream name (\(option)): a stream name has no '.', '*', '>', '/', '\\', spaces or control characters")
        }
    }

    /// Checks an existing stream's subjects and duplicate window against the options.
    /// - Parameters:
    ///   - subjects: the subjects the stream captures, wildcards included.
    ///   - duplicates: its duplicate window, in nanoseconds.
    ///   - capturedBy: the stream that captures `subject`, if another does.
    /// - Throws: ``ForwardingFailure`` of kind `.configuration` that says which option to change.
    func check(subjects: [String], duplicates: Int64, capturedBy other: String?) throws(ForwardingFailure) {
        if !subjects.contains(where: { Self.filter($0, captures: subject) }) {
            let captures = subjects.isEmpty ? "no subject" : subjects.joined(separator: ", ")
            if let other, other != name {
                throw ForwardingFailure(.configuration, "the stream \(name) captures \(captures), not \(subject), which the stream \(other) captures: change --subject to a subject \(name) captures, or \(option) to \(other)")
            }
            throw ForwardingFailure(.configuration, "the stream \(name) captures \(captures), not \(subject): change --subject to a subject \(name) captures, or \(option) to another stream's name")
        }
        if let duplicateWindow, duplicateWindow != duplicates {
            let kept = Self.duration(nanoseconds: duplicates), asked = Self.duration(nanoseconds: duplicateWindow)
            throw ForwardingFailure(.configuration, "the stream \(name) keeps ids for \(kept), not the \(asked) of --dupe-window: change --dupe-window to \(kept) or leave it out, or change the stream's window on the server (nats stream edit \(name) --dupe-window \(asked))")
        }
    }

    /// Why a subject's records cannot go to a new stream: another one captures it.
    func capturedElsewhere(by other: String?) -> ForwardingFailure {
        let owner = other.map { "the stream \($0)" } ?? "another stream"
        let use = other.map { ", or forward to it with --stream \($0) in place of \(option) \(name)" } ?? ""
        return ForwardingFailure(.configuration, "cannot make the stream \(name): \(owner) captures \(subject) already, and a subject goes to one stream only: change --subject\(use)")
    }

    /// Why forwarding stops when the stream is not there: it is never made anew unasked.
    /// - Parameter whileForwarding: whether it vanished during this batch.
    func missing(whileForwarding: Bool) -> ForwardingFailure {
        let what = whileForwarding ? "was deleted while forwarding" : "does not exist: it was deleted, or never made"
        let window = duplicateWindow.map { " --dupe-window " + Self.duration(nanoseconds: $0) } ?? ""
        return ForwardingFailure(.configuration, "the stream \(name) \(what). The records forwarded to a deleted stream went with it, and the queue no longer holds them; this batch stays queued. To make the stream (again), empty, run once by hand: forward-nats --server \(server) --subject \(subject) --create-stream \(name)\(window) </dev/null")
    }

    /// Whether the subject filter `filter` captures `subject`: `*` stands for one token, `>` for the rest.
    static func filter(_ filter: String, captures subject: String) -> Bool {
        let filterTokens = filter.split(separator: ".", omittingEmptySubsequences: false)
        let subjectTokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        for (index, token) in filterTokens.enumerated() {
            if token == ">" { return subjectTokens.count > index }
            guard index < subjectTokens.count, token == "*" || token == subjectTokens[index] else { return false }
        }
        return filterTokens.count == subjectTokens.count
    }

    /// `2m`, `90s`, `1h` or `500ms`, as `--dupe-window` takes durations.
    static func duration(nanoseconds: Int64) -> String {
        let milliseconds = nanoseconds / 1_000_000
        guard milliseconds % 1000 == 0, milliseconds > 0 else { return "\(milliseconds)ms" }
        let seconds = milliseconds / 1000
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}
