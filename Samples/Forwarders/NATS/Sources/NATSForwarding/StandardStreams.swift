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
    private var start = 0
    private var atEnd = false
    /// Whether the input ended in the middle of a line.
    public private(set) var endedMidLine = false

    public init() {}

    /// Calls `body` with each complete line, without its newline, until the input ends.
    /// - Throws: what `body` throws, or ``ForwardingFailure`` when standard input cannot be read.
    public mutating func forEach(_ body: (UnsafeBufferPointer<UInt8>) throws(ForwardingFailure) -> Void) throws(ForwardingFailure) {
        var scanned = 0
        while true {
            if let newline = buffer[(start + scanned)...].firstIndex(of: 0x0A) {
                try buffer.withUnsafeBufferPointer { (all) throws(ForwardingFailure) in
                    try body(UnsafeBufferPointer(rebasing: all[start..<newline]))
                }
                start = newline + 1
                scanned = 0
                continue
            }
            scanned = buffer.count - start
            if atEnd {
                endedMidLine = scanned > 0
                return
            }
            // Drop what was consumed before reading more, so the buffer holds at most one line and a piece.
            if start > 0 {
                buffer.removeSubrange(0..<start)
                start = 0
            }
            try readMore()
        }
    }

    private mutating func readMore() throws(ForwardingFailure) {
        let piece = 1 << 16
        let before = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: piece))
        var count = -1
        while count < 0 {
            count = buffer.withUnsafeMutableBufferPointer { read(0, $0.baseAddress! + before, piece) }
            if count < 0 && errno != EINTR {
                let cause = String(cString: strerror(errno))
                buffer.removeSubrange(before...)
                throw ForwardingFailure(.tryAgain, "cannot read standard input: \(cause)")
            }
        }
        buffer.removeSubrange((before + count)...)
        atEnd = count == 0
    }
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
