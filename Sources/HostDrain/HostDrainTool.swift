import ShareQueueCore
import ToolSupport
import ShareQueueStore
import ShareQueueSystem

/// `host-drain`: the host's side. Drains the queue into a sink and clears
/// exactly what was delivered, once or as a watcher; or shows what is waiting.
public enum HostDrainTool {
    static let tool = Tool(
        name: "host-drain",
        overview: "Deliver the records waiting in a ShareQueue queue, then clear exactly those.",
        usage: "host-drain [options]",
        argumentsHelp: [],
        options: Tool.directoryOptions + [
            OptionSpec(names: ["--format"], value: "json|text", help: "Print records as JSON Lines (the default) or as text for people."),
            OptionSpec(names: ["--exec"], value: "CMD", help: "Run '/bin/sh -c CMD' for each batch, with the batch as JSON Lines on its standard input; exit status 0 means delivered, 75 means try again later, 64, 78, 126 and 127 mean the command is broken (nothing is counted; exit 78), any other is a refusal."),
            OptionSpec(names: ["--long-running"], value: nil, help: "Keep the --exec command running for the whole drain: it takes batch after batch on its standard input and answers each on its standard output, in the long-running sink protocol that README describes (each batch's answer is delivered, refused or retry)."),
            OptionSpec(names: ["--exec-timeout"], value: "DURATION", help: "End a command still running after DURATION, such as 30s, 10m or 1h (default 10m; 0 for no limit), or, with --long-running, one that has not answered a batch within DURATION: SIGTERM to its process group, SIGKILL 2s later. Its batch stays queued, not refused."),
            OptionSpec(names: ["--store"], value: "PATH", help: "Ingest into the SQLite database PATH (created if missing), exactly once; attachments go to the folder PATH.attachments. With --status, count the records of that database, which must exist."),
            OptionSpec(names: ["--watch"], value: nil, help: "Keep running and deliver as records arrive; SIGINT or SIGTERM finishes the batch in hand and exits 0 (a running --exec command is ended, or output no one reads is given up, and its batch stays queued); a standard output whose reader is gone ends it with 75."),
            OptionSpec(names: ["--debounce"], value: "DURATION", help: "With --watch, deliver at most once per DURATION during a burst, such as 50ms or 1s (default 50ms)."),
            OptionSpec(names: ["--coalesce"], value: nil, help: "Deliver only the newest record of each key among those waiting; count the others as superseded."),
            OptionSpec(names: ["--attachments-to"], value: "DIR", help: "Copy attachments into DIR (created if missing) as files of your own, and give records their new paths; without it they stay in the queue."),
            OptionSpec(names: ["--max-attachment-bytes"], value: "N", help: "Read at most N bytes of attachments for one record (default 268435456, as share-append): a record with more goes to the dead-letter file unread; raise N and --requeue-dead to deliver it."),
            OptionSpec(names: ["--sparse-attachments"], value: nil, help: "Read attachment copies that are mostly holes, which a file system that compresses (ZFS) may make of zeros; without it a record with one goes to the dead-letter file unread, since no producer here writes one."),
            OptionSpec(names: ["--max-attempts"], value: "N", help: "After a command refuses a record N times, move it to the dead-letter file (default 5)."),
            OptionSpec(names: ["--requeue-dead"], value: nil, help: "Put the dead letters back at the end of the queue, and exit."),
            OptionSpec(names: ["--batch"], value: "N", help: "Deliver at most N records at a time (default 5000; 1000 with --exec without --long-running); the checkpoint moves after each batch."),
            OptionSpec(names: ["--max"], value: "N", help: "Deliver at most N records in this run."),
            OptionSpec(names: ["--wait"], value: "SECONDS", help: "Wait up to SECONDS for a lock another process holds (another drain's; the producers' lock, at least 1s, for the rename that seals) instead of exiting with 75."),
            OptionSpec(names: ["--status"], value: nil, help: "Show what is waiting (pending records and bytes, the oldest, quarantined, dead letters, attachments) without draining; it takes only --dir or --group, --store, and --json or --prometheus."),
            OptionSpec(names: ["--json"], value: nil, help: "With --status, print one JSON object."),
            OptionSpec(names: ["--prometheus"], value: nil, help: "With --status, print the queue's state as Prometheus metrics (text format 0.0.4), for node_exporter's textfile collector."),
            OptionSpec(names: ["--peek"], value: nil, help: "Print the pending records without draining them; it takes only --dir or --group, and --format."),
            OptionSpec(names: ["--quiet", "-q"], value: nil, help: "Do not print the summary line on standard error."),
        ] + ProgressLine.options + Tool.commonOptions,
        examples: examples, environment: Tool.queueEnvironment, files: Tool.queueFiles + [
            ("PATH.attachments", "With --store PATH, the folder the attachments of stored records are copied to."),
        ],
        exitCodes: Tool.standardExitCodes.map { code in
            code.0 != "65" ? code : ("65", code.1.dropLast() + "; with --store, a record whose id the store already holds with other content, "
                                         + "which went to the dead letters while the other records were stored.")
        })

    static let examples = [
        Tool.Example("Print the waiting records as JSON Lines and clear them:", "host-drain --dir ~/queue"),
        Tool.Example("See what is waiting without draining:", "host-drain --dir ~/queue --status"),
        Tool.Example("Write the queue's metrics for node_exporter, replacing the file in one rename:",
                     "cd /var/lib/prometheus/node-exporter && host-drain --dir ~/queue --status --prometheus > queue.prom.$$ && mv queue.prom.$$ queue.prom || rm -f queue.prom.$$"),
        Tool.Example("Keep running and post each batch to a server; exit 75 from curl keeps the batch queued:",
                     "host-drain --watch --exec 'curl -fsS --data-binary @- https://example.com/ingest || exit 75'"),
        Tool.Example("Forward every batch through one command that stays running and answers each (see README, Long-running commands):",
                     "host-drain --long-running --exec 'forward-nats --subject shared.items --stream SHARED'"),
        Tool.Example("Ingest into SQLite exactly once:", "host-drain --group group.com.example.notes --store notes.sqlite"),
    ]

    public static func main() -> Never {
        let closed = Host.openClosedStandardDescriptors()
        FileDescriptor.letLockWaitsUseSignals()
        Host.ignoreBrokenPipes()
        Host.ignoreFileSizeLimitSignal()
        // Each batch frees what the next allocates again: kept, its pages are not faulted in anew each time.
        Host.keepFreedMemory(upTo: 64 << 20)
        let arguments = tool.parse()
        do throws(ShareQueueError) {
            try run(arguments, standardOutputWasClosed: closed.contains(1))
            Host.exit(0)
        } catch {
            tool.fail(error)
        }
    }

    static func run(_ arguments: ParsedArguments, standardOutputWasClosed: Bool) throws(ShareQueueError) {
        // A watcher stopped while it starts must still stop cleanly: SIGTERM is its way to finish.
        if arguments.has("--watch") { _ = StopRequest.install() }
        guard arguments.arguments.isEmpty else { throw ShareQueueError(.invalidArgument, "unexpected argument '\(arguments.arguments[0])'") }
        let formatName = arguments.value("--format") ?? "json"
        guard let format = RecordFormat(rawValue: formatName) else { throw ShareQueueError(.invalidArgument, "--format is json or text, not '\(formatName)'") }
        try checkCombinations(arguments)
        // Records written to /dev/null would be cleared as delivered: refuse before touching the queue.
        let printsRecords = !arguments.has("--exec") && !arguments.has("--store") && !arguments.has("--requeue-dead")
        if standardOutputWasClosed && (printsRecords || arguments.has("--status")) {
            throw ShareQueueError(.ioError, "standard output was closed when host-drain started; refusing to write records or status into nothing")
        }
        var options = DrainOptions()
        if let batch = try arguments.integer("--batch", in: 1...1_000_000) { options.batchSize = batch }
        if let max = try arguments.integer("--max", in: 1...Int.max) { options.maxRecords = max }
        if let attempts = try arguments.integer("--max-attempts", in: 1...1_000_000) { options.maxAttempts = attempts }
        if let bytes = try arguments.integer("--max-attachment-bytes", in: Int64(1)...Int64.max / 2) { options.maxAttachmentBytes = bytes }
        if let wait = arguments.value("--wait") {
            guard let seconds = Double(wait), seconds >= 0, seconds <= 86_400 else {
                throw ShareQueueError(.invalidArgument, "--wait needs a number of seconds from 0 to 86400, not '\(wait)'")
            }
            options.waitSeconds = seconds
        }
        options.coalesceKeys = arguments.has("--coalesce")
        options.attachmentsDestination = arguments.value("--attachments-to")
        options.readsSparseAttachments = arguments.has("--sparse-attachments")
        let debounce = try arguments.value("--debounce").map { text throws(ShareQueueError) in try parseDuration(text, of: "--debounce", upTo: 3600) } ?? 0.05
        let execTimeout = try arguments.value("--exec-timeout").map { text throws(ShareQueueError) in try parseDuration(text, of: "--exec-timeout", upTo: 30 * 86_400) } ?? 600

        // Looking at a queue makes none: a mistyped path is an error, not an empty queue.
        let onlyLooks = arguments.has("--status") || arguments.has("--peek")
        let directory = try QueueDirectory(path: try tool.directoryPath(arguments), creating: !onlyLooks)
        if let notRead = directory.markerNotRead { tool.warn(notRead) }
        if arguments.has("--status") {
            return try printStatus(directory, store: arguments.value("--store"), json: arguments.has("--json"), prometheus: arguments.has("--prometheus"))
        }
        if arguments.has("--peek") { return try peek(directory, format: format) }
        if arguments.has("--requeue-dead") {
            let drainer = try QueueDrainer(directory: directory, options: options)
            drainer.onEvent = tool.warn
            let count = try drainer.requeueDeadLetters()
            if !arguments.has("--quiet") { tool.printError("\(tool.name): put \(count) dead letter\(count == 1 ? "" : "s") back in the queue\n") }
            return
        }

        // A command started once a batch costs a process a batch: 1000. Every other sink costs a sync
        // (a file), a transaction (SQLite) or a wait for its last answer (a long-running command) a
        // batch: bigger batches, fewer of those.
        if !arguments.has("--batch") { options.batchSize = arguments.has("--exec") && !arguments.has("--long-running") ? 1000 : 5000 }
        var sink: any DrainSink
        // A long-running command is ended on every way out of this function, its input closed first.
        var longRunning: LongRunningCommandSink? = nil
        defer { if let warning = longRunning?.finish() { tool.warn(warning) } }
        if let command = arguments.value("--exec") {
            if arguments.has("--long-running") {
                longRunning = LongRunningCommandSink(command: command, timeout: execTimeout > 0 ? execTimeout : nil)
                sink = longRunning!
            } else {
                sink = CommandSink(command: command, timeout: execTimeout > 0 ? execTimeout : nil)
            }
            if !arguments.has("--watch") {
                // A stop request ends the running command's group rather than leaving it behind.
                _ = StopRequest.install()
                options.shouldStop = { StopRequest.isRequested }
            }
        } else if let path = arguments.value("--store") {
            let store = try StoreSink(path: path, queue: directory)
            options.attachmentsDestination = store.attachmentsFolder
            sink = store
        } else {
            sink = StandardOutputSink(format: format)
        }
        let quiet = arguments.has("--quiet")
        if arguments.has("--watch") {
            try WatchLoop(directory: directory, options: options, debounce: debounce, quiet: quiet).run(into: &sink)
        } else {
            let progress = try ProgressLine(tool: tool.name, arguments: arguments)
            if let progress { sink = ProgressSink(sink, progress: progress, bytesWaiting: try QueueInspector(directory: directory).undeliveredBytes()) }
            let summary: DrainSummary
            do throws(ShareQueueError) {
                summary = try drain(directory, options: options, into: &sink)
            } catch {
                progress?.finish()
                throw error
            }
            progress?.finish()
            if !quiet { report(summary) }
            // Every other record is delivered; a record kept out of the store this way is for a person
            // to look at, so the run says so in its status too, not only in a warning.
            if summary.idConflicts > 0, let store = arguments.value("--store") {
                let count = summary.idConflicts
                throw ShareQueueError(.badData, "\(count) record\(count == 1 ? "" : "s") came with an id the store already holds with other content, "
                                      + "and went to the dead letters, not into the store; the other records are stored", path: store)
            }
        }
    }

    static func checkCombinations(_ arguments: ParsedArguments) throws(ShareQueueError) {
        let sinks = ["--exec", "--store"].filter(arguments.has)
        if sinks.count > 1 { throw ShareQueueError(.invalidArgument, "give --exec or --store, not both") }
        let modes = ["--status", "--peek", "--requeue-dead", "--watch"].filter(arguments.has)
        if modes.count > 1 { throw ShareQueueError(.invalidArgument, "give only one of \(modes.joined(separator: ", "))") }
        if arguments.has("--json") && !arguments.has("--status") { throw ShareQueueError(.invalidArgument, "--json goes with --status; records are JSON Lines already") }
        if arguments.has("--prometheus") && !arguments.has("--status") { throw ShareQueueError(.invalidArgument, "--prometheus goes with --status") }
        if arguments.has("--prometheus") && arguments.has("--json") { throw ShareQueueError(.invalidArgument, "give --json or --prometheus, not both") }
        // What --status or --peek does not use is refused, not ignored: a --format or --max given to one would be a mistake
        // unseen, and what shapes a delivery (--coalesce, --max) would make --peek seem to show what a drain delivers.
        for (mode, takes, named) in [("--status", ["--json", "--prometheus", "--store"], "--dir or --group, --store, and --json or --prometheus"),
                                     ("--peek", ["--format"], "--dir or --group, and --format")] where arguments.has(mode) {
            let allowed = [mode] + takes + Tool.directoryOptions.map(\.key)
            if let option = tool.options.map(\.key).first(where: { arguments.has($0) && !allowed.contains($0) }) {
                throw ShareQueueError(.invalidArgument, "\(mode) takes only \(named); \(option) is not for it")
            }
        }
        if !sinks.isEmpty && arguments.has("--format") { throw ShareQueueError(.invalidArgument, "--format is for standard output; \(sinks[0]) takes records as they are") }
        if arguments.has("--store") && (arguments.has("--coalesce") || arguments.has("--attachments-to")) {
            throw ShareQueueError(.invalidArgument, "--store keeps every record and puts attachments beside the database; --coalesce and --attachments-to are for the other sinks")
        }
        if arguments.has("--debounce") && !arguments.has("--watch") { throw ShareQueueError(.invalidArgument, "--debounce goes with --watch") }
        if arguments.has("--max") && arguments.has("--watch") {
            throw ShareQueueError(.invalidArgument, "--max ends a run after N records; --watch runs until it is stopped: give one of them")
        }
        if arguments.has("--long-running") && !arguments.has("--exec") { throw ShareQueueError(.invalidArgument, "--long-running goes with --exec") }
        if arguments.has("--exec-timeout") && !arguments.has("--exec") { throw ShareQueueError(.invalidArgument, "--exec-timeout goes with --exec") }
        if let command = arguments.value("--exec"), command.allSatisfy(\.isWhitespace) {
            throw ShareQueueError(.invalidArgument, "--exec needs a command; an empty one would take every batch")
        }
    }

    /// `50ms`, `1.5s`, `10m`, `1h`, or a number of seconds, from 0 to `maximum` seconds.
    static func parseDuration(_ text: String, of option: String, upTo maximum: Double) throws(ShareQueueError) -> Double {
        let units: [(suffix: String, scale: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        let unit = units.first { text.hasSuffix($0.suffix) } ?? ("", 1)
        let number = text.dropLast(unit.suffix.count)
        guard number.first?.isNumber == true, let value = Double(number), value.isFinite, value * unit.scale <= maximum else {
            throw ShareQueueError(.invalidArgument, "\(option) needs a duration such as 500ms, 30s, 10m or 1h, up to \(Int(maximum))s, not '\(text)'")
        }
        return value * unit.scale
    }

    static func drain(_ directory: QueueDirectory, options: DrainOptions, into sink: inout any DrainSink) throws(ShareQueueError) -> DrainSummary {
        let drainer = try QueueDrainer(directory: directory, options: options)
        drainer.onEvent = tool.warn
        do { return try drainer.drain(into: &sink) } catch {
            throw Tool.reported(error, "the sink failed; the batch and the rest stay queued")
        }
    }

    static func report(_ summary: DrainSummary) {
        var line = "\(tool.name): delivered \(summary.delivered) record\(summary.delivered == 1 ? "" : "s") in \(summary.batches) batch\(summary.batches == 1 ? "" : "es")"
        if summary.superseded > 0 { line += "; \(summary.superseded) superseded by newer records of the same key" }
        if summary.quarantined > 0 { line += "; set aside \(summary.quarantined) damaged" }
        if summary.deadLettered > 0 { line += "; \(summary.deadLettered) moved to the dead letters" }
        if summary.idConflicts > 0 { line += "; \(summary.idConflicts) not stored, \(summary.idConflicts == 1 ? "its id" : "their ids") already stored with other content" }
        if summary.stoppedAtLimit { line += "; stopped at --max, more are waiting" }
        tool.printError(line + "\n")
    }

    static func peek(_ directory: QueueDirectory, format: RecordFormat) throws(ShareQueueError) {
        var out: [UInt8] = []
        func flush() throws(ShareQueueError) {
            do { try FileDescriptor.standardOutput.writeAll(out) } catch {
                throw ShareQueueError(.ioError, "cannot write to standard output", underlying: error)
            }
            out.removeAll(keepingCapacity: true)
        }
        var inspector = QueueInspector(directory: directory)
        inspector.onEvent = tool.warn
        try inspector.forEachPending { record in
            format.append(record, to: &out)
            if out.count >= 1 << 20 { try flush() }
        }
        try flush()
    }

    static func printStatus(_ directory: QueueDirectory, store: String?, json: Bool, prometheus: Bool) throws(ShareQueueError) {
        // Read only: --status neither creates a store nor changes one. Counted first, so that a mistyped path fails at once.
        let rows = try store.map { path throws(ShareQueueError) in try StoreSink.rowCount(path: path) }
        var inspector = QueueInspector(directory: directory)
        inspector.onEvent = tool.warn
        // One reading of the clock judges the dates and measures the ages.
        let now = Host.millisecondsSince1970()
        let status = try inspector.status(atMilliseconds: now)
        var text: String
        if prometheus {
            text = QueueMetrics(queue: FileSystem.absoluteBytes(directory.path), status: status, nowMilliseconds: now, storeRows: rows).text
        } else if json {
            var object: JSONMembers<JSONValue> = [
                "directory": .string(directory.path),
                "formatVersion": .number(String(QueueDirectory.formatVersion)),
                "pending": .number(String(status.pending)),
                "pendingBytes": .number(String(status.pendingBytes)),
                "oldest": status.oldest.map { .string($0) } ?? .null,
                "quarantined": .number(String(status.quarantined)),
                "quarantinedBytes": .number(String(status.quarantinedBytes)),
                // When a drain last recorded progress, in seconds since 1970, as the metrics' timestamp.
                "lastDrainSeconds": status.lastDrainSeconds.map { .number(String($0)) } ?? .null,
                "sealedSegments": .number(String(status.sealedSegments)),
                "deadLetters": .number(String(status.deadLetters)),
                "waitingLetters": .number(String(status.waitingLetters)),
                "idConflictLetters": .number(String(status.idConflictLetters)),
                "rejectedFiles": .number(String(status.rejectedFiles)),
                "attachments": .object(["bytes": .number(String(status.attachmentBytes)), "count": .number(String(status.attachments))]),
            ]
            if let rows { object["rows"] = .number(String(rows)) }
            text = String(decoding: JSONValue.object(object.sortedByName()).compactJSON, as: UTF8.self) + "\n"
        } else {
            let lettersOfNote = [
                status.waitingLetters == 0 ? nil : "\(status.waitingLetters) waiting for another user's folder or copy",
                status.idConflictLetters == 0 ? nil : "\(status.idConflictLetters) not stored: id already stored with different content",
            ].compactMap { $0 }
            text = """
                directory: \(TerminalText.shown(directory.path[...]))
                pending: \(status.pending) record\(status.pending == 1 ? "" : "s"), \(status.pendingBytes) bytes
                oldest: \(TerminalText.shown((status.oldest ?? "-")[...]))
                quarantined: \(status.quarantined)
                dead letters: \(status.deadLetters)\(lettersOfNote.isEmpty ? "" : " (\(lettersOfNote.joined(separator: "; ")))")
                files moved aside: \(status.rejectedFiles)
                attachments: \(status.attachments) files, \(status.attachmentBytes) bytes

                """
            if let rows { text += "store rows: \(rows)\n" }
        }
        do { try FileDescriptor.standardOutput.writeAll(Array(text.utf8)) } catch {
            throw ShareQueueError(.ioError, "cannot write to standard output", underlying: error)
        }
    }
}
