/// Writes compact JSON: no whitespace, object members in their order with their
/// exact names, and only the escapes that JSON requires. So a value read and
/// written back is the text read, compacted, with only those escapes.
package enum JSONWriter {
    static func append(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let literal): out.append(contentsOf: literal.utf8)
        case .string(let text): appendString(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                append(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                appendString(member.name, to: &out)
                out.append(UInt8(ascii: ":"))
                append(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    package static func appendString(_ text: String, to out: inout [UInt8]) {
        // Native strings, small ones too, are contiguous UTF-8: read in place, with no copy to mutate.
        if text.utf8.withContiguousStorageIfAvailable({ appendString($0, to: &out) }) != nil { return }
        var text = text
        // Any other one is made so, once.
        text.withUTF8 { appendString($0, to: &out) }
    }

    /// Appends UTF-8 text as a JSON string: runs that need no escape are copied whole.
    static func appendString(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        while runStart < utf8.count {
            let runEnd = JSONParser.endOfPlainRun(UnsafeRawBufferPointer(utf8), from: runStart)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<runEnd]))
            guard runEnd < utf8.count else { break }
            let byte = utf8[runEnd]
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            default:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
            runStart = runEnd + 1
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// This value as compact JSON, object members in their order.
    package var compactJSON: [UInt8] {
        var bytes: [UInt8] = []
        JSONWriter.append(self, to: &bytes)
        return bytes
    }
}
