import ShareQueue

/// `share-append`: the extension's side. Appends content to the queue and
/// prints the ids it was given.
public enum ShareAppendTool {
    static let tool = Tool(
        name: "share-append",
        overview: "Append shared content to a ShareQueue queue and print each new record's id.",
        usage: "share-append [options] [TEXT ...]",
        argumentsHelp: [("TEXT", "Text for one record, the arguments joined by single spaces. Without TEXT, all of standard input is one record.")],
        options: Tool.directoryOptions + [
            OptionSpec(names: ["--lines"], value: nil, help: "Make every non-empty line of standard input a record, all appended as one atomic batch."),
            OptionSpec(names: ["--json"], value: nil, help: "The input is a JSON value (with --lines, one per line); it is validated and stored compactly."),
            OptionSpec(names: ["--url"], value: nil, help: "The input is a URL (with --lines, one per line)."),
            OptionSpec(names: ["--source"], value: "NAME", help: "Who produced the record. The default is share-append."),
            OptionSpec(names: ["--key"], value: "KEY", help: "A key: a newer record with the same key supersedes this one."),
            OptionSpec(names: ["--meta"], value: "K=V", help: "Attach a string field to the record's meta; repeat for more.", repeatable: true),
            OptionSpec(names: ["--id"], value: "ID", help: "Use this UUID as the record's id, so a retried append can be deduplicated."),
            OptionSpec(names: ["--attach"], value: "FILE", help: "Copy FILE into the queue and attach it to the record; repeat for more. Text then comes only from TEXT.", repeatable: true),
            OptionSpec(names: ["--max-attachment-bytes"], value: "N", help: "Refuse an attachment over N bytes (default 268435456)."),
            OptionSpec(names: ["--quiet", "-q"], value: nil, help: "Print nothing on success."),
            OptionSpec(names: ["--no-sync"], value: nil, help: "Do not fsync before reporting success (faster; a power cut may lose the record)."),
            OptionSpec(names: ["--max-record-bytes"], value: "N", help: "Refuse a record whose stored JSON is over N bytes (default 1048576, at most 16777216)."),
            OptionSpec(names: ["--max-pending-bytes"], value: "N", help: "Refuse to append while the pending file would grow over N bytes (default 268435456)."),
        ] + Tool.commonOptions)

    public static func main() -> Never {
        let arguments = tool.parse()
        do throws(ShareQueueError) {
            let ids = try run(arguments)
            if !arguments.has("--quiet") {
                do {
                    try FileDescriptor.standardOutput.writeAll(Array(ids.map { $0 + "\n" }.joined().utf8))
                } catch {
                    throw ShareQueueError(.ioError, "the records were appended, but their ids could not be printed", cause: error.description)
                }
            }
            Host.exit(0)
        } catch {
            tool.fail(error)
        }
    }

    static func run(_ arguments: ParsedArguments) throws(ShareQueueError) -> [String] {
        var options = AppendOptions()
        options.synchronize = !arguments.has("--no-sync")
        if let limit = try arguments.integer("--max-record-bytes", in: 1...(16 << 20)) { options.maxRecordBytes = limit }
        if let cap = try arguments.integer("--max-pending-bytes", in: Int64(1)...Int64.max / 2) { options.maxPendingBytes = cap }
        if arguments.has("--json") && arguments.has("--url") { throw ShareQueueError(.usage, "give --json or --url, not both") }
        if arguments.has("--lines") && !arguments.arguments.isEmpty { throw ShareQueueError(.usage, "--lines reads standard input; give no TEXT") }

        var meta: [String: String]? = nil
        for pair in arguments.all("--meta") {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ShareQueueError(.usage, "--meta needs KEY=VALUE, not '\(pair)'")
            }
            meta = meta ?? [:]
            meta![String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }

        let files = arguments.all("--attach")
        let maxAttachmentBytes = try arguments.integer("--max-attachment-bytes", in: Int64(1)...Int64.max / 2) ?? 256 << 20
        if !files.isEmpty && arguments.has("--lines") { throw ShareQueueError(.usage, "--attach adds files to one record; it does not combine with --lines") }

        // All input is read and checked before the queue is touched: bad input changes nothing.
        let contents: [RecordDraft.Content]
        if !files.isEmpty && arguments.arguments.isEmpty {
            contents = [.attachmentsOnly]
        } else {
            let limit = arguments.has("--lines") ? Int64(16 << 20) : Int64(options.maxRecordBytes) * 4 + 4096
            contents = try readContents(arguments, limit: limit)
        }
        if arguments.has("--id") && contents.count > 1 { throw ShareQueueError(.usage, "--id names one record, but --lines gave \(contents.count)") }
        var drafts = contents.map {
            RecordDraft($0, source: arguments.value("--source") ?? "share-append", key: arguments.value("--key"), meta: meta, id: arguments.value("--id"))
        }
        for file in files { try checkAttachment(file, maxBytes: maxAttachmentBytes) }
        if !files.isEmpty {
            // Stand-ins of the same shape, so that the size check counts the attachment fields.
            drafts[0].attachments = files.map { file in
                Attachment(name: String(file.split(separator: "/").last ?? ""), file: "00000000-0000-0000-0000-000000000000.bin",
                           size: 0, sha256: String(repeating: "0", count: 64), type: "application/octet-stream")
            }
        }
        try QueueAppender.check(drafts, options: options)

        let directory = try QueueDirectory(path: try tool.directoryPath(arguments))
        let store = AttachmentStore(directory: directory)
        var copies: [Attachment] = []
        do {
            for file in files { copies.append(try store.add(copyOf: file, maxBytes: maxAttachmentBytes)) }
            if !copies.isEmpty { drafts[0].attachments = copies }
            return try QueueAppender(directory: directory, options: options).append(drafts)
        } catch {
            // A failed append leaves nothing behind, copies included.
            copies.forEach(store.remove)
            throw error
        }
    }

    /// Refuses, before anything is copied, an attachment that is missing, not a file, or too large.
    static func checkAttachment(_ path: String, maxBytes: Int64) throws(ShareQueueError) {
        let status: FileStatus?
        do { status = try FileSystem.status(path) } catch {
            throw ShareQueueError(.noInput, "cannot read the attachment", path: path, cause: error.description)
        }
        guard let status else { throw ShareQueueError(.noInput, "the attachment does not exist", path: path) }
        guard status.isRegularFile else { throw ShareQueueError(.badData, "an attachment must be a regular file", path: path) }
        guard status.size <= maxBytes else {
            throw ShareQueueError(.badData, "the attachment is \(status.size) bytes, over the limit of \(maxBytes) (--max-attachment-bytes)", path: path)
        }
    }

    /// The records' contents from the arguments or standard input.
    static func readContents(_ arguments: ParsedArguments, limit: Int64) throws(ShareQueueError) -> [RecordDraft.Content] {
        let lines = arguments.has("--lines")
        var pieces: [[UInt8]]
        if !arguments.arguments.isEmpty {
            pieces = [Array(arguments.arguments.joined(separator: " ").utf8)]
        } else {
            var input = try readStandardInput(limit: limit)
            if lines {
                pieces = input.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
                    line.last == 0x0D ? Array(line.dropLast()) : Array(line)
                }
            } else {
                // A shell's `echo` adds a newline that is not part of the content.
                if input.last == 0x0A { input.removeLast(); if input.last == 0x0D { input.removeLast() } }
                pieces = [input]
            }
        }
        var contents: [RecordDraft.Content] = []
        for (index, piece) in pieces.enumerated() {
            if lines && piece.isEmpty { continue }
            let place = lines ? "line \(index + 1): " : ""
            guard let text = String(validating: piece, as: UTF8.self) else {
                throw ShareQueueError(.badData, "\(place)the input is not valid UTF-8")
            }
            if !lines && text.isEmpty { throw ShareQueueError(.noInput, "nothing to append: the input is empty") }
            if arguments.has("--json") {
                do {
                    contents.append(.json(try JSONText(validating: piece)))
                } catch {
                    throw ShareQueueError(.badData, place + error.message)
                }
            } else if arguments.has("--url") {
                contents.append(.url(text))
            } else {
                contents.append(.text(text))
            }
        }
        if contents.isEmpty { throw ShareQueueError(.noInput, "nothing to append: standard input has no non-empty line") }
        return contents
    }

    static func readStandardInput(limit: Int64) throws(ShareQueueError) -> [UInt8] {
        var input: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n: Int
            do {
                n = try FileDescriptor.standardInput.read(into: &chunk, from: 0)
            } catch {
                throw ShareQueueError(.ioError, "cannot read standard input", cause: "\(error)")
            }
            if n == 0 { return input }
            input += chunk[0..<n]
            if Int64(input.count) > limit {
                throw ShareQueueError(.badData, "the input is larger than the limit of \(limit) bytes")
            }
        }
    }
}
