import ShareQueueCore
import ShareQueueSystem
import ToolSupport

extension ShareAppendTool {
    /// A draft for every non-empty line of standard input, each checked as
    /// `QueueAppender.append` will check the batch, as soon as it is read.
    static func readLineDrafts(_ arguments: ParsedArguments, limit: Int64, options: AppendOptions,
                               makeDraft: (RecordDraft.Content) -> RecordDraft) throws(ShareQueueError) -> [RecordDraft] {
        var drafts: [RecordDraft] = []
        var check = AppendCheck(options: options)
        try forEachLine(ofStandardInputUpTo: limit, linesUpTo: maxInputBytesPerRecord(options)) { line, number throws(ShareQueueError) in
            if line.isEmpty { return }
            if arguments.has("--id") && !drafts.isEmpty { throw ShareQueueError(.invalidArgument, "--id names one record, but --lines gave more than one") }
            let draft = makeDraft(try content(of: line, arguments, place: "line \(number): "))
            try check.add(draft)
            drafts.append(draft)
        }
        if drafts.isEmpty { throw ShareQueueError(.noInput, "nothing to append: standard input has no non-empty line") }
        return drafts
    }

    /// How long `--lines` waits for more input before it appends the lines in hand: long enough
    /// that a writer's bursts make one append, short enough that no one waits for a record.
    static let quietMilliseconds: Int32 = 10

    /// The longest line read as one record's content: what a record given
    /// whole on standard input may be (JSON may shrink when compacted, so the record limit alone is too little).
    static func maxInputBytesPerRecord(_ options: AppendOptions) -> Int { options.maxRecordBytes * 4 + 4096 }

    /// Reads standard input in chunks and hands over each line, without its
    /// line end (a newline, or a carriage return and a newline), with its number; refuses input past `limit` bytes, and a
    /// line past `maxLine` bytes as soon as it is that long. Only the line
    /// being read is held, never all of the input.
    /// `onRead` hears the bytes read so far after every read. Given `quiet`, `onQuiet` is called
    /// when a read came up short and no more input comes within that many milliseconds: a writer
    /// that keeps its pipe open and writes now and then has its lines dealt with as they come.
    static func forEachLine(ofStandardInputUpTo limit: Int64, linesUpTo maxLine: Int, onRead: (Int64) -> Void = { _ in },
                            quiet: Int32? = nil, onQuiet: () throws(ShareQueueError) -> Void = {},
                            _ body: ([UInt8], Int) throws(ShareQueueError) -> Void) throws(ShareQueueError) {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var partial: [UInt8] = []
        var total: Int64 = 0
        var number = 0
        func tooLong(_ line: Int) -> ShareQueueError {
            ShareQueueError(.badData, "line \(line) is longer than the limit of \(maxLine) bytes for one record's input (4 x --max-record-bytes + 4096)")
        }
        // A line's end (a newline, or a carriage return and a newline) is not its content
        // and does not count, as with input given whole: so a line read so far may be one byte
        // longer, the carriage return that may come before its newline.
        func checkLength(_ length: Int) throws(ShareQueueError) {
            if length > maxLine + 1 { throw tooLong(number + 1) }
        }
        func emit(_ line: ArraySlice<UInt8>, ended: Bool) throws(ShareQueueError) {
            number += 1
            let content = ended && line.last == 0x0D ? line.dropLast() : line
            if content.count > maxLine { throw tooLong(number) }
            try body(Array(content), number)
        }
        while true {
            let n: Int
            do { n = try FileDescriptor.standardInput.read(into: &chunk, from: 0) } catch {
                throw ShareQueueError(.ioError, "cannot read standard input", underlying: error)
            }
            if n == 0 { break }
            total += Int64(n)
            if total > limit { throw ShareQueueError(.badData, "the input is larger than the limit of \(limit) bytes") }
            onRead(total)
            var lineStart = 0
            while let newline = chunk[lineStart..<n].firstIndex(of: 0x0A) {
                try checkLength(partial.count + newline - lineStart)
                if partial.isEmpty {
                    try emit(chunk[lineStart..<newline], ended: true)
                } else {
                    partial += chunk[lineStart..<newline]
                    try emit(partial[...], ended: true)
                    partial.removeAll(keepingCapacity: true)
                }
                lineStart = newline + 1
            }
            try checkLength(partial.count + n - lineStart)
            partial += chunk[lineStart..<n]
            if let quiet, n < chunk.count, !FileDescriptor.standardInput.hasInput(within: quiet) { try onQuiet() }
        }
        // The last line may have no newline; an empty one after the last newline is no line.
        if !partial.isEmpty { try emit(partial[...], ended: false) }
    }
}
