import ShareQueueCore
import ShareQueueSystem
import ToolSupport

extension ShareAppendTool {
    /// The default of `--chunk-bytes`: big enough that an fsync per append costs little, small enough to hold.
    static let defaultChunkBytes = 4 << 20

    /// `--chunk-bytes`, checked, or the default; it and `--atomic` go only with `--lines`, and not together.
    static func chunkSize(_ arguments: ParsedArguments) throws(ShareQueueError) -> Int {
        for option in ["--atomic", "--chunk-bytes"] where arguments.has(option) && !arguments.has("--lines") {
            throw ShareQueueError(.invalidArgument, "\(option) goes with --lines")
        }
        if arguments.has("--atomic") && arguments.has("--chunk-bytes") {
            throw ShareQueueError(.invalidArgument, "--atomic appends everything at once; it takes no --chunk-bytes")
        }
        return try arguments.integer("--chunk-bytes", in: 4096...Frame.maximumBatchSize) ?? defaultChunkBytes
    }

    /// Appends the non-empty lines of standard input as consecutive atomic
    /// appends of at most `chunkBytes` of frames each (a single larger record
    /// goes alone), handing each append's ids to `printIDs` once it is durable.
    /// Memory holds one chunk, whatever the size of the input. A chunk is also
    /// appended when the input goes quiet (see `quietMilliseconds`), so that
    /// lines written now and then into a pipe kept open are not held back.
    ///
    /// Every line of a chunk is checked before the chunk is appended, so a
    /// chunk goes in whole or not at all. A failure part-way stops there: what
    /// was appended stays, and the error says how much that was and at which line it stopped.
    static func appendLinesInChunks(_ arguments: ParsedArguments, chunkBytes: Int, options: AppendOptions,
                                    makeDraft: (RecordDraft.Content) -> RecordDraft,
                                    printIDs: ([String]) throws(ShareQueueError) -> Void) throws(ShareQueueError) {
        let progress = try ProgressLine(tool: tool.name, arguments: arguments)
        defer { progress?.finish() }
        // A regular file tells how much input there is; a pipe does not.
        let inputBytes = (try? FileDescriptor.standardInput.status()).flatMap { $0.isRegularFile && $0.size > 0 ? $0.size : nil }
        var bytesRead: Int64 = 0
        var appender: QueueAppender? = nil
        var check = AppendCheck(options: options)
        var chunk: [RecordDraft] = []
        var chunkFrameBytes = 0
        var chunkFirstLine = 1
        var appended = 0
        var failedLine = 1
        var lastLine = 0
        // Records of the last chunk appended whose ids were not all printed, and whether all the input was read.
        var unprinted = 0
        var inputEnded = false

        /// Appends the chunk in hand, which ends just before line `next`.
        func appendChunk(endingBefore next: Int) throws(ShareQueueError) {
            // The queue is opened (or created) only when there is a checked chunk to put in it.
            if appender == nil {
                var options = options
                if Mutant.active == .linesChunkUnsynced { options.synchronize = false }
                let directory = try QueueDirectory(path: try tool.directoryPath(arguments))
                if let notRead = directory.markerNotRead { tool.warn(notRead) }
                appender = try QueueAppender(directory: directory, options: options)
            }
            let ids = try appender!.append(chunk)
            appended += ids.count
            chunkFirstLine = next
            chunk.removeAll(keepingCapacity: true)
            chunkFrameBytes = 0
            unprinted = ids.count
            try printIDs(ids)
            unprinted = 0
        }

        do {
            try forEachLine(ofStandardInputUpTo: Int64.max, linesUpTo: maxInputBytesPerRecord(options), onRead: { bytesRead = $0 },
                            quiet: quietMilliseconds, onQuiet: { () throws(ShareQueueError) in
                guard !chunk.isEmpty else { return }
                failedLine = chunkFirstLine
                try appendChunk(endingBefore: lastLine + 1)
                failedLine = lastLine + 1
            }) { line, number throws(ShareQueueError) in
                lastLine = number
                // A failure to read the input is at the line after this one.
                failedLine = number + 1
                if line.isEmpty { return }
                failedLine = number
                if arguments.has("--id") && appended + chunk.count > 0 {
                    throw ShareQueueError(.invalidArgument, "--id names one record, but --lines gave more than one")
                }
                let draft = makeDraft(try content(of: line, arguments, place: "line \(number): "))
                let size = try check.frameBytes(of: draft)
                if !chunk.isEmpty && chunkFrameBytes + size > chunkBytes {
                    failedLine = chunkFirstLine
                    try appendChunk(endingBefore: number)
                    failedLine = number
                }
                if chunk.isEmpty { chunkFirstLine = number }
                chunk.append(draft)
                chunkFrameBytes += size
                failedLine = number + 1
                progress?.update(done: appended, fraction: inputBytes.map { Double(bytesRead) / Double($0) })
            }
            inputEnded = true
            failedLine = chunkFirstLine
            if !chunk.isEmpty { try appendChunk(endingBefore: lastLine + 1) }
        } catch {
            guard appended > 0 || error.code != .invalidArgument && error.code != .noInput else { throw error }
            progress?.finish()
            let records = "\(appended) record\(appended == 1 ? "" : "s")"
            // An id goes out only once its record is durable, so records whose ids were lost are in the queue all the same.
            if unprinted > 0 {
                let line = chunkFirstLine - 1
                throw ShareQueueError(error.code, "stopped after line \(line)\(inputEnded ? ", the last" : ""): the \(records) of lines 1 to \(line) "
                                      + "were appended, but the ids of the last \(unprinted) could not all be printed"
                                      + (inputEnded ? "" : "; nothing from line \(chunkFirstLine) on"), underlying: error.underlying ?? error)
            }
            let what = appended == 0 ? "nothing was appended"
                : "the \(records) of the lines before line \(chunkFirstLine) were appended (their ids are printed), nothing from line \(chunkFirstLine) on"
            throw ShareQueueError(error.code, "stopped at line \(failedLine): \(what)", underlying: error)
        }
        if appended == 0 { throw ShareQueueError(.noInput, "nothing to append: standard input has no non-empty line") }
    }
}
