/// Checking JSON without building it, for a drain that passes records through.
extension JSONParser {
    /// What a value checked but not built was.
    enum Kind: Equatable {
        case null, bool, number, string, object
        case array(count: Int)
    }

    /// Reads `bytes` as exactly one JSON object, member by member, as strictly
    /// as `parse` and with the same errors, leaving it to the caller to build
    /// or only check each value: much cheaper than `parse` for a drain that
    /// passes records through.
    ///
    ///     var members = try JSONParser.ObjectMembers(bytes)
    ///     while let name = try members.next() { /* read one value with members.parser */ }
    struct ObjectMembers {
        var parser: JSONParser
        private var started = false

        /// Checks that `bytes` are UTF-8 and start an object.
        init(_ bytes: [UInt8]) throws(ShareQueueError) {
            guard UTF8Validation.isValid(bytes) else { throw ShareQueueError(.badData, "input is not valid UTF-8") }
            parser = JSONParser(bytes)
            parser.skipWhitespace()
            guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "{") else { throw parser.failure("expected a JSON object") }
            try parser.enter()
            parser.index += 1
        }

        /// The next member's name, with the parser at its value; nil after the
        /// last member, once the object and the input have ended. The caller reads
        /// exactly one value (`parseValue`, `skipValue`, `scanString`) before asking again.
        mutating func next() throws(ShareQueueError) -> StringSpan? {
            let bytes = parser.bytes
            if !started {
                started = true
                parser.skipWhitespace()
                if parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "}") { parser.index += 1; return try end() }
            } else {
                parser.skipWhitespace()
                guard parser.index < bytes.count else { throw parser.failure("unexpected end of input") }
                if bytes[parser.index] == UInt8(ascii: "}") { parser.index += 1; return try end() }
                guard bytes[parser.index] == UInt8(ascii: ",") else { throw parser.failure("expected ',' or '}'") }
                parser.index += 1
            }
            parser.skipWhitespace()
            guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "\"") else { throw parser.failure("expected a string key") }
            let name = try parser.scanString()
            parser.skipWhitespace()
            guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: ":") else { throw parser.failure("expected ':'") }
            parser.index += 1
            parser.skipWhitespace()
            return name
        }

        private mutating func end() throws(ShareQueueError) -> StringSpan? {
            parser.skipWhitespace()
            if parser.index != parser.bytes.count { throw parser.failure("unexpected data after the JSON value") }
            return nil
        }

        /// Whether the object spans lines (whitespace between its tokens holds a line break).
        var spansLines: Bool { parser.sawLineBreak }
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
        _ = try scanString()
    }
}
