import Foundation
import Testing
@testable import ShareQueueCore

/// `host-drain --status --prometheus`: the queue's state for a Prometheus
/// scraper, read by a strict checker of the exposition format, with exact values.
@Suite("Queue metrics")
struct MetricsTests {
    static let gauges = ["sharequeue_pending_records", "sharequeue_pending_bytes", "sharequeue_oldest_pending_age_seconds",
                         "sharequeue_sealed_segments", "sharequeue_quarantined_regions", "sharequeue_quarantined_bytes",
                         "sharequeue_dead_letters", "sharequeue_waiting_letters", "sharequeue_id_conflict_letters", "sharequeue_rejected_files", "sharequeue_attachment_files", "sharequeue_attachment_bytes",
                         "sharequeue_last_drain_timestamp_seconds"]

    /// A text record dated `date`, as a producer stores it.
    static func payload(_ text: String, date: String) -> [UInt8] {
        Record.encode(id: "id-" + text, date: date, source: "metrics-test", kind: .text, text: text, jsonBytes: nil, key: nil, meta: nil)
    }

    /// The metrics of `queue`, checked against the format; every sample labelled with the queue's path (each `\` doubled).
    static func metrics(_ queue: TestQueue, _ arguments: [String] = []) throws -> Exposition {
        let result = try queue.drain(["--status", "--prometheus"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let exposition = try Exposition(result.output)
        for sample in exposition.samples {
            #expect(sample.labels == ["queue": queue.path.replacingOccurrences(of: "\\", with: "\\\\")], "\(sample.name)")
            #expect(exposition.types[sample.name] == "gauge", "\(sample.name)")
            #expect(exposition.help[sample.name]?.isEmpty == false, "\(sample.name)")
        }
        return exposition
    }

    static var nowMilliseconds: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    @Test("A queue with known contents: 3 pending records, 1 dead letter, 1 quarantined region, 2 attachments")
    func knownQueue() throws {
        let queue = TestQueue()
        // A drain dead-letters one record and sets aside the damage between it and the next.
        try queue.appendStored([Self.payload("refuse-me", date: "2021-05-06T07:08:09.010Z")])
        let garbage = Array("not a record at all\n".utf8)
        try queue.plant(garbage)
        try queue.appendStored([Self.payload("taken", date: "2021-05-06T07:08:09.011Z")])
        let drainStarted = Self.nowMilliseconds / 1000
        let command = "input=$(cat); case \"$input\" in *refuse-me*) exit 1;; esac"
        #expect(try queue.drain(["-q", "--max-attempts", "1", "--exec", command]).status == 0)
        let drainEnded = (Self.nowMilliseconds + 999) / 1000
        #expect(try queue.deadLetters().count == 1)
        #expect(try queue.quarantine().count == 1)

        let pending = [Self.payload("first", date: "2020-01-01T00:00:00.000Z"), Self.payload("second", date: "2020-01-01T00:00:01.000Z"),
                       Self.payload("third and longer", date: "2020-01-01T00:00:02.000Z")]
        try queue.appendStored(pending)
        let store = AttachmentStore(directory: try QueueDirectory(path: queue.path))
        for (name, size) in [("a.txt", 5), ("b.bin", 1000)] {
            let source = queue.scratch.file(name)
            #expect(FileManager.default.createFile(atPath: source, contents: Data(repeating: 0x61, count: size)))
            _ = try store.add(copyOf: source, maxBytes: 1 << 20)
        }

        let before = Self.nowMilliseconds
        let exposition = try Self.metrics(queue)
        let after = Self.nowMilliseconds
        #expect(exposition.samples.map(\.name) == Self.gauges)
        #expect(exposition.value("sharequeue_pending_records") == 3)
        #expect(exposition.value("sharequeue_pending_bytes") == Double(pending.map { $0.count + Frame.overhead }.reduce(0, +)))
        #expect(exposition.value("sharequeue_sealed_segments") == 0)
        #expect(exposition.value("sharequeue_quarantined_regions") == 1)
        #expect(exposition.value("sharequeue_quarantined_bytes") == Double(queue.bytes("quarantine.log").count))
        #expect(exposition.value("sharequeue_dead_letters") == 1)
        #expect(exposition.value("sharequeue_rejected_files") == 0)
        #expect(exposition.value("sharequeue_attachment_files") == 2)
        #expect(exposition.value("sharequeue_attachment_bytes") == 1005)
        let oldest: Int64 = 1_577_836_800_000  // 2020-01-01T00:00:00.000Z
        let age = try #require(exposition.value("sharequeue_oldest_pending_age_seconds"))
        #expect(Int64((age * 1000).rounded()) >= before - oldest && Int64((age * 1000).rounded()) <= after - oldest, "\(age)")
        let lastDrain = try #require(exposition.value("sharequeue_last_drain_timestamp_seconds"))
        #expect(lastDrain >= Double(drainStarted) && lastDrain <= Double(drainEnded), "\(lastDrain)")

        // The same counts as --status --json, and nothing was drained by asking.
        let status = try queue.status()
        #expect(status["pending"] as? Int == 3)
        #expect(status["pendingBytes"] as? Int == Int(exposition.value("sharequeue_pending_bytes") ?? 0))
        #expect(status["quarantined"] as? Int == 1 && status["deadLetters"] as? Int == 1)
        #expect(status["quarantinedBytes"] as? Int == queue.bytes("quarantine.log").count)
        #expect(status["lastDrainSeconds"] as? Int == Int(lastDrain))
        #expect(status["sealedSegments"] as? Int == 0)
    }

    @Test("Where there is no queue, --status, --prometheus and --peek exit 66 and make none")
    func noQueue() throws {
        let scratch = TemporaryDirectory()
        let empty = scratch.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        for arguments in [["--status"], ["--status", "--json"], ["--status", "--prometheus"], ["--peek"]] {
            for (path, words) in [(scratch.file("typo/queue"), "there is no queue here"), (empty, "no format marker")] {
                let looked = try run("host-drain", ["--dir", path] + arguments, in: scratch)
                #expect(looked.status == 66, "\(arguments) \(path): \(looked.stderr)")
                #expect(looked.stderr.contains(words) && looked.stderr.contains(path), "\(looked.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: scratch.file("typo")))
            #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        }
    }

    @Test("A new queue: nothing pending is an age of 0, and a queue never drained has no last drain")
    func newQueue() throws {
        let queue = TestQueue()
        // Made by a drain that found nothing to deliver.
        #expect(try queue.drain().status == 0)
        let exposition = try Self.metrics(queue)
        #expect(exposition.samples.map(\.name) == Self.gauges.filter { $0 != "sharequeue_last_drain_timestamp_seconds" })
        #expect(exposition.value("sharequeue_oldest_pending_age_seconds") == 0)
        #expect(exposition.samples.filter { $0.name != "sharequeue_oldest_pending_age_seconds" }.allSatisfy { $0.value == 0 })
        #expect(try queue.status()["lastDrainSeconds"] is NSNull)
    }

    @Test("A record whose date is not a time, or is more than 5 minutes ahead, gives no age rather than a made-up one; one dated a little ahead is not waiting yet")
    func untrustedDates() throws {
        let queue = TestQueue()
        try queue.appendStored([Self.payload("undated", date: "yesterday")])
        var exposition = try Self.metrics(queue)
        #expect(exposition.value("sharequeue_pending_records") == 1)
        #expect(exposition.value("sharequeue_oldest_pending_age_seconds") == nil)
        #expect(exposition.help["sharequeue_oldest_pending_age_seconds"] == nil)

        let ahead = TestQueue()
        try ahead.appendStored([Self.payload("from the future", date: "2999-01-01T00:00:00+01:00")])
        exposition = try Self.metrics(ahead)
        #expect(exposition.value("sharequeue_oldest_pending_age_seconds") == nil)
        let minuteAhead = Timestamp.format(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000) + 60_000)
        try ahead.appendStored([Self.payload("from a fast clock", date: minuteAhead)])
        exposition = try Self.metrics(ahead)
        #expect(exposition.value("sharequeue_oldest_pending_age_seconds") == 0)
    }

    @Test("The age is of the earliest date that parses: a record first in line dated far ahead, or not dated at all, hides no other's wait",
          arguments: ["2999-01-01T00:00:00Z", "yesterday"])
    func plantedFirstDate(_ planted: String) throws {
        let queue = TestQueue()
        try queue.appendStored([Self.payload("planted", date: planted), Self.payload("waiting", date: "2020-01-01T00:00:00.000Z"),
                                Self.payload("later", date: "2021-01-01T00:00:00.000Z")])
        let before = Self.nowMilliseconds
        let exposition = try Self.metrics(queue)
        let age = try #require(exposition.value("sharequeue_oldest_pending_age_seconds"))
        #expect(Int64((age * 1000).rounded()) >= before - 1_577_836_800_000, "\(age)")
        #expect(try queue.status()["oldest"] as? String == "2020-01-01T00:00:00.000Z")
    }

    @Test("The queue label escapes backslash, double quote and line feed; --store adds its rows")
    func labelEscapingAndStore() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch, name: "odd \"name\" \\ with\na line feed")
        try queue.append(["one"])
        let result = try queue.drain(["--status", "--prometheus"])
        // The path's `\` is `\\` in the label, so that `\xNN` can stand for a byte that is not UTF-8; each is then escaped.
        #expect(result.output.contains("{queue=\"\(scratch.path)/odd \\\"name\\\" \\\\\\\\ with\\na line feed\"} 1\n"), "\(result.output)")
        #expect(try Self.metrics(queue).value("sharequeue_pending_records") == 1)
        #expect(try queue.drain(["-q", "--store", scratch.file("store.sqlite")]).status == 0)
        let stored = try Self.metrics(queue, ["--store", scratch.file("store.sqlite")])
        #expect(stored.value("sharequeue_store_rows") == 1)
        #expect(stored.value("sharequeue_pending_records") == 0)
    }

    @Test("Queue directories whose names differ only in bytes that are not UTF-8 get labels of their own, valid UTF-8 kept as it is")
    func labelOfAPathThatIsNotUTF8() throws {
        let scratch = TemporaryDirectory()
        var labels: [String] = []
        // Through the working directory: the command line takes UTF-8 alone. printf makes the bytes 0xFF and 0xFE.
        for folder in ["q\\377", "q\\376", "q\u{FFFD}", "q\\\\xff"] {
            let script = "d=$(printf \"$1\") && mkdir \"$d\" && cd \"$d\" && \"$2\" --dir queue one > /dev/null && exec \"$3\" --dir queue --status --prometheus"
            let result = try run("/bin/sh", ["-c", script, "sh", scratch.path + "/" + folder, Executables.path("share-append"), Executables.path("host-drain")], in: scratch)
            #expect(result.status == 0, "\(folder): \(result.stderr)")
            let exposition = try Exposition(result.output)
            #expect(exposition.value("sharequeue_pending_records") == 1)
            labels.append(try #require(exposition.samples.first?.labels["queue"]))
        }
        // The working directory as the system gives it: without the temporary directory's doubled slash.
        let base = scratch.path.replacingOccurrences(of: "//", with: "/")
        #expect(labels == [base + "/q\\xff/queue", base + "/q\\xfe/queue", base + "/q\u{FFFD}/queue", base + "/q\\\\xff/queue"])
    }

    @Test("README's cron line leaves one whole metrics file in the textfile folder, and no temporary one")
    func readmeCronLine() throws {
        let readme = try String(contentsOfFile: ServiceSampleTests.samples + "/../README.md", encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").first { $0.hasPrefix("    * * * * *") && $0.contains("--prometheus") })
        let scratch = TemporaryDirectory()
        let textfiles = scratch.file("node-exporter")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        let command = line.dropFirst("    * * * * * ".count)
            .replacingOccurrences(of: "/usr/local/bin/host-drain", with: Executables.path("host-drain"))
            .replacingOccurrences(of: "/var/lib/prometheus/node-exporter", with: textfiles)
        let queue = scratch.file(".local/share/ShareQueue/default")
        #expect(try run("share-append", ["--dir", queue, "waiting"], in: scratch).status == 0)
        for _ in 1...2 {
            let cron = try run("/bin/sh", ["-c", command], environment: ["HOME": scratch.path], in: scratch)
            #expect(cron.status == 0 && cron.stderr.isEmpty, "\(cron.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: textfiles) == ["sharequeue.prom"])
        let written = try String(contentsOfFile: textfiles + "/sharequeue.prom", encoding: .utf8)
        let exposition = try Exposition(written)
        #expect(exposition.samples.first == Exposition.Sample(name: "sharequeue_pending_records", labels: ["queue": queue], value: 1))
        // A run that fails (here no queue can be made under HOME) keeps the last file and leaves no temporary one.
        let broken = TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: broken.file(".local"), contents: Data()))
        let failed = try run("/bin/sh", ["-c", command], environment: ["HOME": broken.path], in: scratch)
        #expect(failed.stderr.hasPrefix("host-drain: error: "), "\(failed.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: textfiles) == ["sharequeue.prom"])
        #expect(try String(contentsOfFile: textfiles + "/sharequeue.prom", encoding: .utf8) == written)
    }

    @Test("--prometheus goes with --status alone", arguments: [["--prometheus"], ["--status", "--prometheus", "--json"], ["--peek", "--prometheus"]])
    func usage(arguments: [String]) throws {
        let queue = TestQueue()
        let result = try queue.drain(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("The strict checker refuses what the format does not allow")
    func checkerIsStrict() {
        let bad = ["a 1", "# TYPE a gauge\n# TYPE a gauge\na 1\n", "a{b=\"\\x\"} 1\n", "a{__b=\"c\"} 1\n", "a{b=\"c\",b=\"d\"} 1\n",
                   "a 1\nb 1\na 2\n", "a 1\na 1\n", "a 1\n# HELP a late\n", "a one\n", "1a 1\n", "a{b=c} 1\n", "a 0x10\n"]
        for text in bad { #expect(throws: Exposition.FormatError.self, "\(text)") { try Exposition(text) } }
        #expect(throws: Never.self) { try Exposition("# a comment\n# HELP a x \\\\ y\\n\n# TYPE a gauge\na{b=\"\\\"\\n\\\\\",} -Inf 17\n\n") }
    }
}
