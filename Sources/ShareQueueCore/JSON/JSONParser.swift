/// A strict JSON parser over bytes (RFC 8259): no comments, no trailing
/// commas, no lone surrogates, no invalid UTF-8, nesting at most 256 deep so
/// that hostile input cannot exhaust the stack.
struct JSONParser {
    static let maximumDepth = 256

    let bytes: [UInt8]
    var index = 0
    var depth = 0
    /// Whether whitespace between tokens held a line break (a record that is not one line as stored).
    var sawLineBreak = false

    init(_ bytes: [UInt8]) { self.bytes = bytes }

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

    func failure(_ what: String) -> ShareQueueError {
        ShareQueueError(.badData, "invalid JSON at byte \(index): \(what)")
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09: index += 1
            case 0x0A, 0x0D: index += 1; sawLineBreak = true
            default: return
            }
        }
    }

    mutating func parseValue() throws(ShareQueueError) -> JSONValue {
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

    mutating func expect(_ word: String) throws(ShareQueueError) {
        for byte in word.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw failure("expected '\(word)'") }
            index += 1
        }
    }

    mutating func enter() throws(ShareQueueError) {
        depth += 1
        if depth > Self.maximumDepth { throw failure("nested more than \(Self.maximumDepth) deep") }
    }

    mutating func parseObject() throws(ShareQueueError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        // A name that occurs again keeps its first place and takes its last value.
        var members = JSONMembers<JSONValue>()
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

    mutating func parseArray() throws(ShareQueueError) -> JSONValue {
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
}
