import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// `share-append`: the extension's side. Appends content to the queue and
/// prints the ids it was given.
public enum ShareAppendTool {
    static let tool = Tool(
        name: "share-append",
        overview: "Append shared content to a ShareQueue queue and print each new record's id.",
        usage: "share-append [options] [TEXT ...]",
        argumentsHelp: [("TEXT", "Text for one record, the arguments joined by single spaces. Without TEXT, all of standard input is one record, but for one line end at its end (a newline, or a carriage return and a newline).")],
        options: Tool.directoryOptions + [
            OptionSpec(names: ["--lines"], value: nil, help: "Make every non-empty line of standard input a record (a line ends at a newline, or a carriage return and a newline), appended in atomic chunks (see --chunk-bytes, and whatever is in hand once the input is quiet for 10 ms) whose ids print as each is durable."),
            OptionSpec(names: ["--atomic"], value: nil, help: "With --lines, append all the lines as one atomic batch of at most 16 MiB, or nothing."),
            OptionSpec(names: ["--chunk-bytes"], value: "N", help: "With --lines, append at most N bytes of records at a time (default 4194304, from 4096 to 16777216)."),
            OptionSpec(names: ["--json"], value: nil, help: "The input is a JSON value (with --lines, one per line); it is validated and stored compactly."),
            OptionSpec(names: ["--url"], value: nil, help: "The input is a URL (with --lines, one per line)."),
            OptionSpec(names: ["--source"], value: "NAME", help: "Who produced the record. The default is share-append."),
            OptionSpec(names: ["--key"], value: "KEY", help: "A key: a newer record with the same key supersedes this one."),
            OptionSpec(names: ["--if-changed"], value: nil, help: "With --key, append only if the content differs from the last record appended with that key; otherwise append nothing and print that record's id."),
            OptionSpec(names: ["--meta"], value: "K=V", help: "Attach a string field to the record's meta; repeat for more.", repeatable: true),
            OptionSpec(names: ["--id"], value: "ID", help: "Use this UUID as the record's id, so a retried append can be deduplicated."),
            OptionSpec(names: ["--attach"], value: "FILE", help: "Copy FILE into the queue and attach it to the record; repeat for more. Its text, JSON or URL then comes only from TEXT: standard input is not read.", repeatable: true),
            OptionSpec(names: ["--max-attachment-bytes"], value: "N", help: "Refuse attachments of more than N bytes in all (default 268435456, as host-drain reads)."),
            OptionSpec(names: ["--quiet", "-q"], value: nil, help: "Print nothing on success."),
            OptionSpec(names: ["--no-sync"], value: nil, help: "Do not fsync before reporting success (faster; a power cut may lose the record)."),
            OptionSpec(names: ["--max-record-bytes"], value: "N", help: "Refuse a record whose stored JSON is over N bytes (default 1048576, at most 16777216)."),
            OptionSpec(names: ["--max-pending-bytes"], value: "N", help: "Refuse to append while the pending file would grow over N bytes (default 268435456)."),
            OptionSpec(names: ["--lock-timeout"], value: "SECONDS", help: "Wait at most SECONDS for the producers' lock (default 10), then exit with 75 naming the process that holds it."),
        ] + ProgressLine.options + Tool.commonOptions,
        examples: examples, environment: Tool.queueEnvironment, files: Tool.queueFiles)

    static let examples = [
        Tool.Example("Append a note and print its id:", "share-append --dir ~/queue 'Buy milk'"),
        Tool.Example("Append every line of a file as a URL, all or none:", "share-append --dir ~/queue --lines --atomic --url < links.txt"),
        Tool.Example("Append JSON with a key, so that a newer record of the same key supersedes it:", "echo '{\"done\":3}' | share-append --json --key progress"),
        Tool.Example("Publish the current wallpaper, appending only when it changed:", "share-append --if-changed --key wallpaper beach.jpg"),
        Tool.Example("Attach a photo to a record:", "share-append --group group.com.example.notes --attach photo.jpg 'Holiday'"),
    ]

    public static func main() -> Never {
        let closed = Host.openClosedStandardDescriptors()
        FileDescriptor.letLockWaitsUseSignals()
        Host.ignoreFileSizeLimitSignal()
        let arguments = tool.parse()
        do throws(ShareQueueError) {
            // An appended record whose id cannot be printed would look failed and be appended again.
            if closed.contains(1) && !arguments.has("--quiet") {
                throw ShareQueueError(.ioError, "standard output was closed when share-append started, so the new ids could not be printed; nothing was appended (use -q to append without them)")
            }
            try run(arguments) { ids throws(ShareQueueError) in
                // For a power-cut explorer: from here on these ids count as acknowledged (durable, unless --no-sync).
                SystemTrace.current?.mark([arguments.has("--no-sync") ? "printed-unsynced" : "printed"] + ids)
                if arguments.has("--quiet") { return }
                do {
                    try FileDescriptor.standardOutput.writeAll(Array(ids.map { $0 + "\n" }.joined().utf8))
                } catch {
                    throw ShareQueueError(.ioError, "the records were appended, but their ids could not be printed", underlying: error)
                }
            }
            Host.exit(0)
        } catch {
            tool.fail(error)
        }
    }

    /// Appends what the arguments ask for, handing each append's ids to `printIDs` once they are durable.
    static func run(_ arguments: ParsedArguments, printIDs: ([String]) throws(ShareQueueError) -> Void) throws(ShareQueueError) {
        var options = AppendOptions()
        options.synchronize = !arguments.has("--no-sync")
        if let limit = try arguments.integer("--max-record-bytes", in: 1...(16 << 20)) { options.maxRecordBytes = limit }
        if let cap = try arguments.integer("--max-pending-bytes", in: Int64(1)...Int64.max / 2) { options.maxPendingBytes = cap }
        if let timeout = arguments.value("--lock-timeout") {
            guard let seconds = Double(timeout), seconds >= 0, seconds <= 86_400 else {
                throw ShareQueueError(.invalidArgument, "--lock-timeout needs a number of seconds from 0 to 86400, not '\(timeout)'")
            }
            options.lockTimeoutSeconds = seconds
        }
        if arguments.has("--json") && arguments.has("--url") { throw ShareQueueError(.invalidArgument, "give --json or --url, not both") }
        if arguments.has("--lines") && !arguments.arguments.isEmpty { throw ShareQueueError(.invalidArgument, "--lines reads standard input; give no TEXT") }
        let chunkBytes = try chunkSize(arguments)
        let ifChanged = arguments.has("--if-changed")
        if ifChanged && !arguments.has("--key") { throw ShareQueueError(.invalidArgument, "--if-changed compares with the last record of a key; give --key") }
        if ifChanged && arguments.has("--lines") { throw ShareQueueError(.invalidArgument, "--if-changed publishes one record; it does not combine with --lines") }

        // Names are told apart by their bytes: é composed and decomposed are two labels; a name given again keeps its last value.
        var meta: JSONMembers<String>? = nil
        for pair in arguments.all("--meta") {
            // Split at the byte '=', not at a Character: "=" followed by a combining mark is one Character.
            guard let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")), equals != pair.utf8.startIndex else {
                throw ShareQueueError(.invalidArgument, "--meta needs KEY=VALUE, not '\(pair)'")
            }
            meta = meta ?? [:]
            meta![String(decoding: pair.utf8[..<equals], as: UTF8.self)] = String(decoding: pair.utf8[pair.utf8.index(after: equals)...], as: UTF8.self)
        }

        let files = arguments.all("--attach")
        let maxAttachmentBytes = try arguments.integer("--max-attachment-bytes", in: Int64(1)...Int64.max / 2) ?? Attachment.defaultMaxBytes
        if !files.isEmpty && arguments.has("--lines") { throw ShareQueueError(.invalidArgument, "--attach adds files to one record; it does not combine with --lines") }
        // With files, the record's content comes only from TEXT: standard input is not read, so a
        // kind of content asked for without TEXT would be dropped unchecked.
        if !files.isEmpty && arguments.arguments.isEmpty, let kind = ["--json", "--url"].first(where: arguments.has) {
            throw ShareQueueError(.invalidArgument, "with --attach, \(kind) takes its value as TEXT: standard input is not read")
        }
        if files.count > Attachment.maximumPerRecord { throw ShareQueueError(.invalidArgument, "a record has at most \(Attachment.maximumPerRecord) attachments, not \(files.count)") }

        // All input is read and checked before the queue is touched: bad input changes nothing.
        let makeDraft = { (content: RecordDraft.Content) in
            RecordDraft(content, source: arguments.value("--source") ?? "share-append", key: arguments.value("--key"), meta: meta, id: arguments.value("--id"))
        }
        var drafts: [RecordDraft]
        if arguments.has("--lines") && !arguments.has("--atomic") {
            return try appendLinesInChunks(arguments, chunkBytes: chunkBytes, options: options, makeDraft: makeDraft, printIDs: printIDs)
        } else if arguments.has("--lines") {
            // Checked line by line as read, so that too much input is refused at the line that breaks a limit.
            drafts = try readLineDrafts(arguments, limit: 16 << 20, options: options, makeDraft: makeDraft)
        } else {
            let content = !files.isEmpty && arguments.arguments.isEmpty
                ? .attachmentsOnly : try readContent(arguments, limit: Int64(maxInputBytesPerRecord(options)))
            drafts = [makeDraft(content)]
            var total: Int64 = 0
            for file in files { total += try checkAttachment(file, maxBytes: maxAttachmentBytes, after: total) }
            if !files.isEmpty {
                // Stand-ins of the same shape, so that the size check counts the attachment fields.
                drafts[0].attachments = files.map { file in
                    Attachment(name: String(decoding: file.utf8.split(separator: UInt8(ascii: "/")).last ?? "".utf8[...], as: UTF8.self), file: "00000000-0000-0000-0000-000000000000.bin",
                               size: 0, sha256: String(repeating: "0", count: 64), type: "application/octet-stream")
                }
            }
            try QueueAppender.check(drafts, options: options)
        }

        let directory = try QueueDirectory(path: try tool.directoryPath(arguments))
        if let notRead = directory.markerNotRead { tool.warn(notRead) }
        let store = AttachmentStore(directory: directory)
        var copies: [Attachment] = []
        let ids: [String]
        do {
            // A file that grew since it was checked still keeps the record within the limit.
            for file in files { copies.append(try store.add(copyOf: file, maxBytes: maxAttachmentBytes - Attachment.totalBytes(copies))) }
            if !copies.isEmpty { drafts[0].attachments = copies }
            let appender = try QueueAppender(directory: directory, options: options)
            if ifChanged {
                let published = try appender.appendIfChanged(drafts[0])
                // Unchanged: the copies belong to no record.
                if !published.appended { copies.forEach(store.remove) }
                ids = [published.id]
            } else {
                ids = try appender.append(drafts)
            }
        } catch {
            // A failed append leaves nothing behind, copies included; but a record written and not
            // made durable may still be delivered, and its copies stay with it.
            if !error.recordWasWritten { copies.forEach(store.remove) }
            throw error
        }
        try printIDs(ids)
    }

    /// Refuses, before anything is copied, an attachment that is missing, not a file, or too large
    /// for what the record's limit leaves after the `used` bytes of the attachments before it.
    /// - Returns: its size.
    static func checkAttachment(_ path: String, maxBytes: Int64, after used: Int64) throws(ShareQueueError) -> Int64 {
        let status: FileStatus?
        do { status = try FileSystem.status(path) } catch {
            throw ShareQueueError(.noInput, "cannot read the attachment", path: path, underlying: error)
        }
        guard let status else { throw ShareQueueError(.noInput, "the attachment does not exist", path: path) }
        guard status.isRegularFile else { throw ShareQueueError(.badData, "an attachment must be a regular file", path: path) }
        guard status.size <= maxBytes - used else {
            throw ShareQueueError(.badData, used == 0
                ? "the attachment is \(status.size) bytes, over the limit of \(maxBytes) (--max-attachment-bytes)"
                : "the attachments are \(used + status.size) bytes in all, over the limit of \(maxBytes) for all of a record's attachments (--max-attachment-bytes)", path: path)
        }
        return status.size
    }

    /// The content of one record, from the arguments or all of standard input.
    static func readContent(_ arguments: ParsedArguments, limit: Int64) throws(ShareQueueError) -> RecordDraft.Content {
        var input: [UInt8]
        if !arguments.arguments.isEmpty {
            // The words' bytes joined by spaces, by hand: the generic `joined(separator:)` looks
            // up its collection's element type at run time, a tenth of a one-record process.
            input = []
            for (index, word) in arguments.arguments.enumerated() {
                if index > 0 { input.append(UInt8(ascii: " ")) }
                input += word.utf8
            }
        } else {
            input = try readStandardInput(limit: limit)
        }
        if input.isEmpty { throw ShareQueueError(.noInput, "nothing to append: the input is empty") }
        return try content(of: input, arguments, place: "")
    }

    /// A record's content from its bytes, as --json or --url ask.
    static func content(of bytes: [UInt8], _ arguments: ParsedArguments, place: String) throws(ShareQueueError) -> RecordDraft.Content {
        if arguments.has("--json") {
            do { return .json(try JSONText(validating: bytes)) } catch { throw ShareQueueError(.badData, place + error.message) }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ShareQueueError(.badData, "\(place)the input is not valid UTF-8")
        }
        return arguments.has("--url") ? .url(text) : .text(text)
    }

    /// All of standard input but one line end at its end, refused past `limit` bytes.
    ///
    /// A shell's `echo` adds a newline that is not part of the content; a carriage return
    /// before it is part of that line end, as `--lines` reads one. The line end does not
    /// count toward the limit, as with `--lines`, so up to two bytes more are read.
    static func readStandardInput(limit: Int64) throws(ShareQueueError) -> [UInt8] {
        func tooLarge() -> ShareQueueError { ShareQueueError(.badData, "the input is larger than the limit of \(limit) bytes") }
        var input: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n: Int
            do {
                n = try FileDescriptor.standardInput.read(into: &chunk, from: 0)
            } catch {
                throw ShareQueueError(.ioError, "cannot read standard input", underlying: error)
            }
            if n == 0 { break }
            input += chunk[0..<n]
            if Int64(input.count) > limit + 2 { throw tooLarge() }
        }
        if input.last == 0x0A { input.removeLast(); if input.last == 0x0D { input.removeLast() } }
        if Int64(input.count) > limit { throw tooLarge() }
        return input
    }
}
