/// A strict JSON parser over bytes (RFC 8259): no comments, no trailing
/// commas, no lone surrogates, no invalid UTF-8, nesting at most 256 deep so
/// that hostile input cannot exhaust the stack.
struct JSONParser {
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    /// Whether whitespace between tokens held a line break (a record that is not one line as stored).
    private var sawLineBreak = false

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Parses exactly one JSON value, with optional whitespace around it.
    static func parse(_ bytes: [UInt8]) throws(ShareQueueError) -> JSONValue {
        guard UTF8Validation.isValid(bytes) else {
            throw ShareQueueError(.badData, "input is not valid UTF-8")
        }
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index != bytes.count { throw parser.failure("unexpected data after the JSON value") }
        return value
    }

    /// What a value checked but not built was.
    enum Kind: Equatable {
        case null, bool, number, string, object
        case array(count: Int)
    }


    /// Checks `bytes` as exactly one JSON object, as strictly as `parse`, but
    /// builds only the top-level members named in `wanted`; of the others it
    /// reports only their kinds. Much cheaper than `parse` for a drain that
    /// passes records through.
    /// - Parameters:
    ///   - wanted: whether to build the member with this name.
    ///   - built: receives each member built, in order (a repeated name comes again; the last counts).
    ///   - skipped: receives the kind of each member checked but not built.
    /// - Returns: whether the object spans lines (whitespace between its tokens holds a line break).
    @discardableResult
    static func scanObject(_ bytes: [UInt8], wanted: (String) -> Bool, built: (String, JSONValue) throws(ShareQueueError) -> Void,
                           skipped: (String, Kind) throws(ShareQueueError) -> Void) throws(ShareQueueError) -> Bool {
        guard UTF8Validation.isValid(bytes) else { throw ShareQueueError(.badData, "input is not valid UTF-8") }
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "{") else { throw parser.failure("expected a JSON object") }
        try parser.enter()
        parser.index += 1
        parser.skipWhitespace()
        if parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "}") {
            parser.index += 1
        } else {
            while true {
                parser.skipWhitespace()
                guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "\"") else { throw parser.failure("expected a string key") }
                let key = try parser.parseString()
                parser.skipWhitespace()
                guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: ":") else { throw parser.failure("expected ':'") }
                parser.index += 1
                parser.skipWhitespace()
                if wanted(key) {
                    try built(key, try parser.parseValue())
                } else {
                    try skipped(key, try parser.skipValue())
                }
                parser.skipWhitespace()
                guard parser.index < bytes.count else { throw parser.failure("unexpected end of input") }
                if bytes[parser.index] == UInt8(ascii: ",") { parser.index += 1; continue }
                if bytes[parser.index] == UInt8(ascii: "}") { parser.index += 1; break }
                throw parser.failure("expected ',' or '}'")
            }
        }
        parser.skipWhitespace()
        if parser.index != bytes.count { throw parser.failure("unexpected data after the JSON value") }
        return parser.sawLineBreak
    }

    /// Checks one value without building it.
    private mutating func skipValue() throws(ShareQueueError) -> Kind {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try enter()
            defer { depth -= 1 }
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a string key") }
                try skipString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
                index += 1
                skipWhitespace()
                _ = try skipValue()
                skipWhitespace()
                guard index < bytes.count else { throw failure("unexpected end of input") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object }
                throw failure("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            try enter()
            defer { depth -= 1 }
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(count: 0) }
            var count = 0
            while true {
                skipWhitespace()
                _ = try skipValue()
                count += 1
                skipWhitespace()
                guard index < bytes.count else { throw failure("unexpected end of input") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(count: count) }
                throw failure("expected ',' or ']'")
            }
        case UInt8(ascii: "\""): try skipString(); return .string
        case UInt8(ascii: "t"): try expect("true"); return .bool
        case UInt8(ascii: "f"): try expect("false"); return .bool
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try scanNumber(); return .number
        default: throw failure("unexpected character")
        }
    }

    /// Checks a string, escapes included, without building it.
    private mutating func skipString() throws(ShareQueueError) {
        index += 1
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { index += 1; return }
            if byte < 0x20 { throw failure("control character in a string") }
            if byte != UInt8(ascii: "\\") { index += 1; continue }
            index += 1
            guard index < bytes.count else { throw failure("unterminated string") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                 UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                continue
            case UInt8(ascii: "u"):
                let code = try parseHex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("lone surrogate in \\u escape")
                    }
                    index += 2
                    guard (0xDC00...0xDFFF).contains(try parseHex4()) else { throw failure("lone surrogate in \\u escape") }
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw failure("lone surrogate in \\u escape")
                }
            default: throw failure("unknown escape")
            }
        }
    }

    /// `bytes` without whitespace outside strings. Only for input that `parse` accepted.
    static func compact(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                continue
            }
            result.append(byte)
        }
        return result
    }

    private func failure(_ what: String) -> ShareQueueError {
        ShareQueueError(.badData, "invalid JSON at byte \(index): \(what)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09: index += 1
            case 0x0A, 0x0D: index += 1; sawLineBreak = true
            default: return
            }
        }
    }

    private mutating func parseValue() throws(ShareQueueError) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    private mutating func expect(_ word: String) throws(ShareQueueError) {
        for byte in word.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw failure("expected '\(word)'") }
            index += 1
        }
    }

    private mutating func enter() throws(ShareQueueError) {
        depth += 1
        if depth > Self.maximumDepth { throw failure("nested more than \(Self.maximumDepth) deep") }
    }

    private mutating func parseObject() throws(ShareQueueError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue()
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw failure("expected ',' or '}'")
        }
    }

    private mutating func parseArray() throws(ShareQueueError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw failure("expected ',' or ']'")
        }
    }

    private mutating func parseNumber() throws(ShareQueueError) -> String {
        String(decoding: bytes[try scanNumber()], as: UTF8.self)
    }

    /// Checks a number and returns where it is.
    private mutating func scanNumber() throws(ShareQueueError) -> Range<Int> {
        let begin = index
        func digits(_ parser: inout JSONParser) -> Int {
            let first = parser.index
            while parser.index < parser.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index]) { parser.index += 1 }
            return parser.index - first
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits(&self)
        if integerDigits == 0 { throw failure("expected a digit") }
        if integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0") { throw failure("leading zero in a number") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits(&self) == 0 { throw failure("expected a digit after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            if digits(&self) == 0 { throw failure("expected a digit in the exponent") }
        }
        return begin..<index
    }

    private mutating func parseString() throws(ShareQueueError) -> String {
        // Most strings have no escape: make them straight from their bytes.
        var end = index + 1
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                index = end + 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            end += 1
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
            case UInt8(ascii: "u"):
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
                guard let scalar = Unicode.Scalar(code) else { throw failure("lone surrogate in \\u escape") }
                scalars.append(scalar)
            default: throw failure("unknown escape")
            }
            runStart = index
        }
    }

    private mutating func parseHex4() throws(ShareQueueError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<(index + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("bad hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }
}
