import Foundation
import Testing

/// `Tests/Conformance/reader.py`, a reader written in Python from
/// `Documentation/Format.md` alone, predicts what a drain delivers and sets
/// aside; `host-drain` must do exactly that, byte for byte. So the format
/// document, not this package's code, is what two implementations agree on.
@Suite("A second reader, from Format.md alone", .serialized, .runTimeLimit(minutes: 3), OptionalProgram.needs("python3"))
struct SecondReaderTests {
    static let reader = ConformanceTests.corpus + "/reader.py"

    /// The reader's prediction for a copy of a queue: the JSON Lines, the set-aside entries, and its exit status.
    static func predict(_ queue: String, options: [String] = [], in scratch: TemporaryDirectory) throws -> (delivered: String, setAside: String, status: Int32)? {
        guard let python = OptionalProgram.required("python3") else { return nil }
        let setAside = scratch.file("set-aside-\(UUID().uuidString)")
        let result = try run(python, [reader, queue] + options + ["--set-aside", setAside], in: scratch)
        #expect(result.stderr.isEmpty, "reader.py: \(result.stderr)")
        let entries = FileManager.default.contents(atPath: setAside).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return (result.output, entries, result.status)
    }

    /// Quarantine lines as the reader writes them: without `reason` (and `date`,
    /// which the lines of `expected/quarantine.jsonl` already lack).
    static func withoutReason(_ lines: String) -> String {
        lines.replacing(/,"reason":"(?:[^"\\]|\\.)*"/, with: "")
    }

    /// The drain's deliveries with the queue's path, spelled either way, as `$QUEUE`.
    static func placeholder(_ output: String, queue: String) -> String {
        output.replacingOccurrences(of: queue, with: "$QUEUE")
            .replacingOccurrences(of: URL(fileURLWithPath: queue).standardizedFileURL.path, with: "$QUEUE")
    }

    @Test("The reader predicts every conformance case", arguments: ConformanceTests.cases)
    func predictsCase(_ name: String) throws {
        let scratch = TemporaryDirectory()
        let queue = scratch.file("queue")
        try ConformanceTests.copyCase(name, to: queue)
        guard let predicted = try Self.predict(queue, options: ConformanceTests.options(of: name), in: scratch) else { return }
        let expected = ConformanceTests.corpus + "/" + name + "/expected/"
        let status = String(decoding: FileManager.default.contents(atPath: expected + "exit") ?? Data(), as: UTF8.self)
        #expect("\(predicted.status)\n" == status, "\(name): reader.py exited \(predicted.status)")
        let delivered = String(decoding: FileManager.default.contents(atPath: expected + "delivered.jsonl") ?? Data(), as: UTF8.self)
        #expect(Self.placeholder(predicted.delivered, queue: queue) == delivered, "\(name): deliveries differ")
        let quarantine = String(decoding: FileManager.default.contents(atPath: expected + "quarantine.jsonl") ?? Data(), as: UTF8.self)
        #expect(predicted.setAside == Self.withoutReason(quarantine), "\(name): what is set aside differs")
    }

    @Test("The reader predicts host-drain byte for byte on a queue written by concurrent producers, some killed")
    func predictsQueueWrittenUnderKills() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        // Records of several shapes: text with escapes and non-ASCII, JSON values kept as written, keys and meta.
        func lines(_ producer: Int) -> String {
            (1...400).map { i in
                switch i % 4 {
                case 0: "\"producer \(producer) record \(i) \u{00e9}e\u{0301} \\\"quoted\\\" \\\\ tab\\t\""
                case 1: "{\"producer\": \(producer), \"record\": \(i), \"value\": 1.50, \"s\": \"\\u00e9\\/\"}"
                case 2: "[\(producer), \(i), null, true, {\"b\": 1, \"a\": 2}]"
                default: "\"producer \(producer) record \(i)\""
                }
            }.joined(separator: "\n") + "\n"
        }
        var producers: [RunningTool] = []
        for p in 1...6 {
            var environment: [String: String] = [:]
            // Two die half-way through a write of their own, leaving a torn append for the next producer to cut off.
            if p <= 2 { environment["SHARE_QUEUE_CRASH_AT"] = "append-half-written:\(p + 1)" }
            let options = p % 2 == 0 ? ["--lines", "--json", "--chunk-bytes", "4096"] : ["--lines", "--json", "--chunk-bytes", "4096", "--key", "k\(p % 3)", "--meta", "p=\(p)"]
            producers.append(try RunningTool("share-append", ["--dir", queue.path, "-q"] + options, stdin: Data(lines(p).utf8), environment: environment, in: scratch))
        }
        // Two more are killed from outside once the queue has grown.
        try waitUntil("the queue to grow", seconds: 60) {
            ((try? FileManager.default.attributesOfItem(atPath: queue.path + "/pending.log")[.size] as? NSNumber)?.intValue ?? 0) > 20_000
        }
        producers[2].kill()
        producers[3].kill()
        for producer in producers {
            let result = producer.wait()
            #expect(result.status == 0 || result.status == 137, "a producer failed: \(result.stderr)")
        }
        // A drain seals what there is; more appends follow, the last of them torn at the end.
        _ = try run("host-drain", ["--dir", queue.path, "--max", "100", "-q"], in: scratch)
        _ = try run("share-append", ["--dir", queue.path, "-q", "--lines"], stdin: "after the drain\nsecond line\n", in: scratch)
        let torn = try run("share-append", ["--dir", queue.path, "-q", "--lines"], stdin: "torn one\ntorn two\n",
                           environment: ["SHARE_QUEUE_CRASH_AT": "append-half-written"], in: scratch)
        #expect(torn.status == 137, "the last producer should have died mid-write: \(torn.stderr)")

        let copy = scratch.file("copy")
        try FileManager.default.copyItem(atPath: queue.path, toPath: copy)
        let quarantinedBefore = (FileManager.default.contents(atPath: queue.path + "/quarantine.log") ?? Data()).count
        guard let predicted = try Self.predict(copy, in: scratch) else { return }
        let drained = try run("host-drain", ["--dir", queue.path], in: scratch)
        #expect(drained.status == 0, "\(drained.stderr)")
        #expect(predicted.status == 0)
        #expect(drained.lines.count > 500, "too few records to mean much: \(drained.lines.count)")
        #expect(predicted.delivered == drained.output, "reader.py and host-drain deliver different bytes")
        let quarantine = FileManager.default.contents(atPath: queue.path + "/quarantine.log") ?? Data()
        let setAside = Self.withoutReason(ConformanceTests.withoutDates(String(decoding: quarantine.dropFirst(quarantinedBefore), as: UTF8.self)))
        #expect(!setAside.isEmpty, "the torn append at the end should have been set aside")
        #expect(predicted.setAside == setAside, "reader.py and host-drain set aside different bytes")
    }
}
