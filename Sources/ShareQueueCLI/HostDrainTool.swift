import ShareQueue

/// `host-drain`: the host's side. Drains the queue into a sink and clears
/// exactly what was delivered; or shows what is waiting.
public enum HostDrainTool {
    static let tool = Tool(
        name: "host-drain",
        overview: "Deliver the records waiting in a ShareQueue queue, then clear exactly those.",
        usage: "host-drain [options]",
        argumentsHelp: [],
        options: Tool.directoryOptions + [
            OptionSpec(names: ["--format"], value: "json|text", help: "Print records as JSON Lines (the default) or as text for people."),
            OptionSpec(names: ["--exec"], value: "CMD", help: "Run '/bin/sh -c CMD' for each batch, with the batch as JSON Lines on its standard input; exit status 0 means delivered."),
            OptionSpec(names: ["--batch"], value: "N", help: "Deliver at most N records at a time (default 100); the checkpoint moves after each batch."),
            OptionSpec(names: ["--max"], value: "N", help: "Deliver at most N records in this run."),
            OptionSpec(names: ["--wait"], value: "SECONDS", help: "If another drain is running, wait up to SECONDS for it instead of exiting with 75."),
            OptionSpec(names: ["--status"], value: nil, help: "Show what is waiting (pending records and bytes, the oldest, the quarantined) without draining."),
            OptionSpec(names: ["--json"], value: nil, help: "With --status, print one JSON object."),
            OptionSpec(names: ["--peek"], value: nil, help: "Print the pending records without draining them."),
            OptionSpec(names: ["--quiet", "-q"], value: nil, help: "Do not print the summary line on standard error."),
        ] + Tool.commonOptions)

    public static func main() -> Never {
        Host.ignoreBrokenPipes()
        let arguments = tool.parse()
        do throws(ShareQueueError) {
            try run(arguments)
            Host.exit(0)
        } catch {
            tool.fail(error)
        }
    }

    static func run(_ arguments: ParsedArguments) throws(ShareQueueError) {
        guard arguments.arguments.isEmpty else { throw ShareQueueError(.usage, "unexpected argument '\(arguments.arguments[0])'") }
        let formatName = arguments.value("--format") ?? "json"
        guard let format = RecordFormat(rawValue: formatName) else { throw ShareQueueError(.usage, "--format is json or text, not '\(formatName)'") }
        if arguments.has("--status") && arguments.has("--peek") { throw ShareQueueError(.usage, "give --status or --peek, not both") }
        if arguments.has("--json") && !arguments.has("--status") { throw ShareQueueError(.usage, "--json goes with --status; records are JSON Lines already") }
        if arguments.has("--exec") && (arguments.has("--status") || arguments.has("--peek") || arguments.has("--format")) {
            throw ShareQueueError(.usage, "--exec delivers JSON Lines to a command; it does not combine with --status, --peek or --format")
        }
        var options = DrainOptions()
        if let batch = try arguments.integer("--batch", in: 1...1_000_000) { options.batchSize = batch }
        if let max = try arguments.integer("--max", in: 1...Int.max) { options.maxRecords = max }
        if let wait = arguments.value("--wait") {
            guard let seconds = Double(wait), seconds >= 0, seconds <= 86_400 else {
                throw ShareQueueError(.usage, "--wait needs a number of seconds from 0 to 86400, not '\(wait)'")
            }
            options.waitSeconds = seconds
        }

        let directory = try QueueDirectory(path: try tool.directoryPath(arguments))
        if arguments.has("--status") { return try printStatus(directory, json: arguments.has("--json")) }
        if arguments.has("--peek") { return try peek(directory, format: format) }

        let drainer = QueueDrainer(directory: directory, options: options)
        drainer.warn = tool.warn
        let summary: DrainSummary
        if let command = arguments.value("--exec") {
            var sink = CommandSink(command: command)
            summary = try drainer.drain(into: &sink)
        } else {
            var sink = StandardOutputSink(format: format)
            summary = try drainer.drain(into: &sink)
        }
        if !arguments.has("--quiet") {
            var line = "\(tool.name): delivered \(summary.delivered) record\(summary.delivered == 1 ? "" : "s") in \(summary.batches) batch\(summary.batches == 1 ? "" : "es")"
            if summary.quarantined > 0 { line += "; set aside \(summary.quarantined) damaged" }
            if summary.stoppedAtLimit { line += "; stopped at --max, more are waiting" }
            tool.printError(line + "\n")
        }
    }

    static func peek(_ directory: QueueDirectory, format: RecordFormat) throws(ShareQueueError) {
        var out: [UInt8] = []
        func flush() throws(ShareQueueError) {
            do { try FileDescriptor.standardOutput.writeAll(out) } catch {
                throw ShareQueueError(.ioError, "cannot write to standard output", cause: error.description)
            }
            out.removeAll(keepingCapacity: true)
        }
        try QueueInspector(directory: directory).forEachPending { record in
            format.append(record, to: &out)
            if out.count >= 1 << 20 { try flush() }
        }
        try flush()
    }

    static func printStatus(_ directory: QueueDirectory, json: Bool) throws(ShareQueueError) {
        let status = try QueueInspector(directory: directory).status()
        var text: String
        if json {
            var object: [String: JSONValue] = [
                "directory": .string(directory.path),
                "pending": .number(String(status.pending)),
                "pendingBytes": .number(String(status.pendingBytes)),
                "oldest": status.oldest.map { .string($0) } ?? .null,
                "quarantined": .number(String(status.quarantined)),
                "sealedSegments": .number(String(status.sealedSegments)),
            ]
            object["formatVersion"] = .number(String(QueueDirectory.formatVersion))
            text = String(decoding: JSONValue.object(object).compactJSON, as: UTF8.self) + "\n"
        } else {
            text = """
                directory: \(directory.path)
                pending: \(status.pending) record\(status.pending == 1 ? "" : "s"), \(status.pendingBytes) bytes
                oldest: \(status.oldest ?? "-")
                quarantined: \(status.quarantined)

                """
        }
        do { try FileDescriptor.standardOutput.writeAll(Array(text.utf8)) } catch {
            throw ShareQueueError(.ioError, "cannot write to standard output", cause: error.description)
        }
    }
}
