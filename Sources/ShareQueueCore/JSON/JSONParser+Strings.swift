/// Strings: escapes decoded, surrogate pairs joined, lone surrogates refused.
extension JSONParser {
    mutating func parseString() throws(ShareQueueError) -> String {
        // Most strings have no escape: make them straight from their bytes.
        let end = Self.endOfPlainRun(bytes, from: index + 1)
        if end < bytes.count && bytes[end] == UInt8(ascii: "\"") {
            let text = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
            index = end + 1
            return text
        }
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun(_ parser: JSONParser, into scalars: inout String.UnicodeScalarView, upTo end: Int) {
            if end > runStart { scalars.append(contentsOf: String(decoding: parser.bytes[runStart..<end], as: UTF8.self).unicodeScalars) }
        }
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flushRun(self, into: &scalars, upTo: index)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw failure("control character in a string") }
            if byte != UInt8(ascii: "\\") { index += 1; continue }
            flushRun(self, into: &scalars, upTo: index)
            index += 1
            guard index < bytes.count else { throw failure("unterminated string") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"): scalars.append(try parseUnicodeEscape())
            default: throw failure("unknown escape")
            }
            runStart = index
        }
    }

    /// Where a string checked by `scanString` lies: its contents as stored,
    /// between the quotes, and whether they hold escapes.
    struct StringSpan: Equatable {
        let contents: Range<Int>
        let hasEscapes: Bool
    }

    /// Checks the string at `index` as strictly as `parseString`, with the
    /// same errors at the same offsets, and moves past it without building it.
    mutating func scanString() throws(ShareQueueError) -> StringSpan {
        let start = index + 1
        var hasEscapes = false
        index = start
        while true {
            index = Self.endOfPlainRun(bytes, from: index)
            guard index < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return StringSpan(contents: start..<(index - 1), hasEscapes: hasEscapes)
            }
            if byte < 0x20 { throw failure("control character in a string") }
            hasEscapes = true
            index += 1
            guard index < bytes.count else { throw failure("unterminated string") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                 UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                continue
            case UInt8(ascii: "u"):
                _ = try parseUnicodeEscape()
            default: throw failure("unknown escape")
            }
        }
    }

    /// The text of a string that `scanString` accepted.
    func string(_ span: StringSpan) -> String {
        guard span.hasEscapes else { return String(decoding: bytes[span.contents], as: UTF8.self) }
        var again = self
        again.index = span.contents.lowerBound - 1
        // Checked already, so decoding it cannot fail.
        return (try? again.parseString()) ?? ""
    }

    /// Whether a string that `scanString` accepted is stored as plain ASCII,
    /// without escapes. Such a string equals another ASCII one (as `String`
    /// compares, by canonical equivalence) exactly when their bytes are equal.
    func isPlainASCII(_ span: StringSpan) -> Bool {
        bytes.withUnsafeBufferPointer { Self.isPlainASCII(span, in: $0) }
    }

    /// `isPlainASCII` over the bytes the span indexes.
    @inline(__always)
    static func isPlainASCII(_ span: StringSpan, in buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !span.hasEscapes else { return false }
        for offset in span.contents where buffer[offset] >= 0x80 { return false }
        return true
    }

    /// Whether the stored bytes of a string that `scanString` accepted are those of `text`.
    func storedBytes(_ span: StringSpan, equal text: StaticString) -> Bool {
        bytes.withUnsafeBufferPointer { Self.storedBytes(span, in: $0, equal: text) }
    }

    /// `storedBytes` over the bytes the span indexes.
    @inline(__always)
    static func storedBytes(_ span: StringSpan, in buffer: UnsafeBufferPointer<UInt8>, equal text: StaticString) -> Bool {
        guard span.contents.count == text.utf8CodeUnitCount else { return false }
        guard !span.contents.isEmpty else { return true }
        // One bounds check for the span, none per byte: this runs for every member of every record.
        precondition(span.contents.upperBound <= buffer.count)
        let stored = buffer.baseAddress! + span.contents.lowerBound
        let expected = text.utf8Start
        for offset in 0..<span.contents.count where stored[offset] != expected[offset] { return false }
        return true
    }

    /// The index of the first byte from `start` on that a string cannot hold
    /// as it is (a quote, a backslash or a control character), or `bytes.count`.
    static func endOfPlainRun(_ bytes: [UInt8], from start: Int) -> Int {
        bytes.withUnsafeBytes { endOfPlainRun($0, from: start) }
    }

    /// `endOfPlainRun` over raw bytes, eight at a time: strings are most of a
    /// record's bytes, both read (`scanString`) and written (`JSONWriter`).
    /// `stoppingAtNonASCII` also stops at bytes of 0x80 and above, for a reader
    /// that checks them as UTF-8 as it goes.
    @inline(__always)
    static func endOfPlainRun(_ buffer: UnsafeRawBufferPointer, from start: Int, stoppingAtNonASCII: Bool = false) -> Int {
        let count = buffer.count
        var i = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i + 8 <= count {
            let word = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            // A byte is flagged when it is zero after the XOR (quote, backslash), or below 0x20
            // (or, when asked, has its high bit set); the lowest flag is exact, since borrows
            // only move upwards from a flagged byte.
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            let nonASCII = stoppingAtNonASCII ? word : 0
            let flags = ((quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes | (word &- ones &* 0x20) & ~word | nonASCII) & highs
            if flags != 0 { return i + flags.trailingZeroBitCount / 8 }
            i += 8
        }
        while i < count {
            let byte = buffer[i]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || (stoppingAtNonASCII && byte >= 0x80) { return i }
            i += 1
        }
        return count
    }

    /// Reads what follows `\u`: four hex digits, and after a high surrogate
    /// the `\u` escape of its low surrogate.
    /// - Returns: the scalar they encode.
    mutating func parseUnicodeEscape() throws(ShareQueueError) -> Unicode.Scalar {
        var code = try parseHex4()
        if (0xD800...0xDBFF).contains(code) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("lone surrogate in \\u escape")
            }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("lone surrogate in \\u escape") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        }
        // A lone low surrogate is no scalar.
        guard let scalar = Unicode.Scalar(code) else { throw failure("lone surrogate in \\u escape") }
        return scalar
    }

    mutating func parseHex4() throws(ShareQueueError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("short \\u escape") }
        guard let value = Self.hex4(bytes[index..<(index + 4)]) else { throw failure("bad hex digit in \\u escape") }
        index += 4
        return value
    }

    /// The value of four hex digits, either case; nil if one is not a hex digit.
    @inline(__always)
    static func hex4<Digits: Sequence<UInt8>>(_ digits: Digits) -> UInt32? {
        var value: UInt32 = 0
        for byte in digits {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
