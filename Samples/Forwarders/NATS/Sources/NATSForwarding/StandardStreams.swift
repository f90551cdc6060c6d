// The only file that calls the C library directly (libnats aside).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads standard input line by line, in bounded pieces, without copying what it has not
/// been asked for. Only lines that end with a newline count: host-drain ends every record
/// with one, so a last line without it is a batch cut short.
public struct StandardInputLines {
    private var buffer: [UInt8] = []
    /// What one read fills, before it joins the buffer.
    private var piece = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0
    private var atEnd = false
    /// Whether the input ended in the middle of a line.
    public private(set) var endedMidLine = false

    /// A reader of this process's standard input, from where it stands.
    public init() {}

    /// Whether standard input is a terminal: someone typing, not a batch.
    public static var isTerminal: Bool { isatty(0) == 1 }

    /// Calls `body` with each complete line, without its newline, until the input ends.
    /// - Throws: what `body` throws, or ``ForwardingFailure`` when standard input cannot be read.
    public mutating func forEach(_ body: (UnsafeBufferPointer<UInt8>) throws(ForwardingFailure) -> Void) throws(ForwardingFailure) {
        while try withNextLine(body) != nil {}
    }

    /// Calls `body` with the next complete line, without its newline, and returns what it
    /// returns; nil once the input has ended.
    /// - Throws: what `body` throws, or ``ForwardingFailure`` when standard input cannot be read.
    @discardableResult
    public mutating func withNextLine<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws(ForwardingFailure) -> Result) throws(ForwardingFailure) -> Result? {
        var scanned = 0
        while true {
            if let newline = newlineIndex(from: start + scanned) {
                let result = try buffer.withUnsafeBufferPointer { (all) throws(ForwardingFailure) in
                    try body(UnsafeBufferPointer(rebasing: all[start..<newline]))
                }
                start = newline + 1
                return result
            }
            scanned = buffer.count - start
            if atEnd {
                endedMidLine = scanned > 0
                return nil
            }
            // Drop what was consumed before reading more, so the buffer holds at most one line and a piece.
            if start > 0 {
                buffer.removeSubrange(0..<start)
                start = 0
                scanned = buffer.count
            }
            try readMore()
        }
    }

    private func newlineIndex(from index: Int) -> Int? {
        buffer.withUnsafeBufferPointer { all in
            guard index < all.count, let found = memchr(all.baseAddress! + index, 0x0A, all.count - index) else { return nil }
            return all.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    private mutating func readMore() throws(ForwardingFailure) {
        var count = -1
        while count < 0 {
            count = piece.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno != EINTR {
                throw ForwardingFailure(.tryAgain, "cannot read standard input: \(String(cString: strerror(errno)))")
            }
        }
        buffer += piece[..<count]
        atEnd = count == 0
    }
}

/// Why the file at `path` cannot be read, or nil when it can be opened for reading.
func unreadableReason(_ path: String) -> String? {
    var descriptor: Int32 = -1
    repeat { descriptor = open(path, O_RDONLY | O_CLOEXEC) } while descriptor < 0 && errno == EINTR
    guard descriptor < 0 else {
        close(descriptor)
        return nil
    }
    return String(cString: strerror(errno))
}

/// Writes `text` to standard error, whole.
public func printError(_ text: String) {
    writeAll(2, Array(text.utf8))
}

/// Writes `text` to standard output, whole.
public func printOutput(_ text: String) {
    writeAll(1, Array(text.utf8))
}

private func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}

/// Ends the process with `status`.
public func exitProcess(_ status: Int32) -> Never {
    exit(status)
}
