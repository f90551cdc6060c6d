/// Reads a file of lines in bounded pieces, so that memory never depends on
/// what the file declares: a line longer than the limit is reported as damaged,
/// not held, and the holes of a sparse file are skipped, not read.
import ShareQueueSystem
struct LineReader {
    /// What a reader finds: a line without its line break, where it begins, or the place of a damaged one.
    enum Piece {
        case line([UInt8], offset: Int64)
        /// A line over the limit, or one holding a hole of a sparse file (zeros, never JSON).
        case damaged(offset: Int64, length: Int64)
    }

    static let chunkSize = 256 << 10

    let maximumLength: Int

    /// Visits every non-empty line of `file` in order; the caller opened it, and closes it.
    /// - Parameter path: The file's path, for messages.
    /// - Parameter firstOffset: Where to begin: past 0, the first line visited
    ///   is the first that begins at or after it.
    /// - Throws: what `visit` throws, and `.ioError` and others if the file cannot be read.
    func forEachLine(in file: FileDescriptor, path: String, from firstOffset: Int64 = 0, _ visit: (Piece) throws(ShareQueueError) -> Void) throws(ShareQueueError) {
        func failure(_ error: SystemError) -> ShareQueueError { ReadFailure.error("cannot read a file of the queue", path: path, error) }
        var line: [UInt8] = []
        var lineStart: Int64 = 0
        var lineLength: Int64 = 0
        var damaged = false
        func finishLine(endingAt end: Int64) throws(ShareQueueError) {
            if damaged {
                try visit(.damaged(offset: lineStart, length: lineLength))
            } else if lineLength > 0 {
                try visit(.line(line, offset: lineStart))
            }
            line.removeAll(keepingCapacity: true)
            (lineStart, lineLength, damaged) = (end, 0, false)
        }
        func add(_ bytes: ArraySlice<UInt8>) {
            lineLength += Int64(bytes.count)
            guard !damaged else { return }
            if lineLength > Int64(maximumLength) {
                damaged = true
                line = []
            } else {
                line.append(contentsOf: bytes)
            }
        }
        let status: FileStatus
        do { status = try file.status() } catch { throw failure(error) }
        guard status.isRegularFile else { return }
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        // From the byte before `firstOffset`, so that a line beginning exactly there is kept:
        // everything up to the first line break read is the end of an earlier line.
        var offset = max(0, min(firstOffset, status.size) - 1)
        var skipping = firstOffset > 0
        while true {
            let data: Int64
            let count: Int
            do throws(SystemError) {
                // After the last data, a hole may run to the end of the file.
                data = try file.nextData(from: offset) ?? max(offset, status.size)
                count = try file.read(into: &chunk, from: 0, at: data)
            } catch { throw failure(error) }
            if data > offset {
                // A hole holds no line break: it is part of the line it falls in, which is damaged.
                lineLength += data - offset
                damaged = true
                line = []
                offset = data
            }
            if count == 0 { break }
            var start = 0
            if skipping {
                guard let newline = chunk[0..<count].firstIndex(of: 0x0A) else {
                    offset += Int64(count)
                    continue
                }
                skipping = false
                start = newline + 1
                (line, lineStart, lineLength, damaged) = ([], offset + Int64(start), 0, false)
            }
            while let newline = chunk[start..<count].firstIndex(of: 0x0A) {
                add(chunk[start..<newline])
                try finishLine(endingAt: offset + Int64(newline) + 1)
                start = newline + 1
            }
            add(chunk[start..<count])
            offset += Int64(count)
        }
        // A last line without a line break still counts, unless it began before `firstOffset`.
        if !skipping { try finishLine(endingAt: lineStart + lineLength) }
    }
}
