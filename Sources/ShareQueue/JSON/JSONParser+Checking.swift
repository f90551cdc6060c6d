/// Checking JSON without building it, for a drain that passes records through.
extension JSONParser {
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
    mutating func skipValue() throws(ShareQueueError) -> Kind {
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
    mutating func skipString() throws(ShareQueueError) {
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
                _ = try parseUnicodeEscape()
            default: throw failure("unknown escape")
            }
        }
    }
}
