/// Reads one string member at the top level of a JSON object, without building the rest:
/// the forwarder needs a record's id, and host-drain hands it records its own strict
/// parser has already validated. Anything that is not well-formed where it looks yields
/// nil, never a guess.
struct JSONMemberScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Puts the decoded UTF-8 of the string member `name` of the object in `json` in `value`,
    /// in place of what it held; false when the object has no such member, the member is not a
    /// string, or `json` is not an object. A name given twice has its last value, as host-drain
    /// and every reader of the format take it: a record cannot pass for another by naming the
    /// other's id first. `value` is the caller's, kept from record to record, so that reading
    /// an id allocates nothing.
    static func stringMember(_ name: StaticString, in json: UnsafeBufferPointer<UInt8>, into value: inout [UInt8]) -> Bool {
        var scanner = JSONMemberScanner(json)
        let name = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        guard let found = scanner.findMember(name) else { return false }
        value.removeAll(keepingCapacity: true)
        switch found {
        case .stored(let range): value.append(contentsOf: json[range])
        case .decoded(let decoded): value.append(contentsOf: decoded)
        }
        return true
    }

    private mutating func findMember(_ name: UnsafeBufferPointer<UInt8>) -> StringBytes? {
        guard take(UInt8(ascii: "{")) else { return nil }
        if take(UInt8(ascii: "}")) { return nil }
        var found: StringBytes? = nil
        repeat {
            guard take(UInt8(ascii: "\"")), let key = readStringBytes(), take(UInt8(ascii: ":")) else { return nil }
            let isName = matches(key, name)
            if isName && take(UInt8(ascii: "\"")) {
                guard let value = readStringBytes() else { return nil }
                found = value
            } else {
                if isName { found = nil }
                guard skipValue() else { return nil }
            }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? found : nil
    }

    /// Skips blanks, then consumes `byte` if it comes next.
    private mutating func take(_ byte: UInt8) -> Bool {
        while position < bytes.count, Self.isBlank(bytes[position]) { position += 1 }
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// A string's bytes: where they are, for one without escapes, or decoded.
    private enum StringBytes {
        case stored(Range<Int>)
        case decoded([UInt8])
    }

    /// The rest of a string whose opening quote was consumed: where it lies when it has no
    /// escape, which spares a record's every name and value an allocation; else decoded.
    private mutating func readStringBytes() -> StringBytes? {
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return .stored(start..<(position - 1))
            }
            if byte == UInt8(ascii: "\\") {
                position = start
                return readString().map(StringBytes.decoded)
            }
            if byte < 0x20 { return nil }
            position += 1
        }
        return nil
    }

    private func matches(_ string: StringBytes, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch string {
        case .stored(let range): UnsafeBufferPointer(rebasing: bytes[range]).elementsEqual(name)
        case .decoded(let decoded): decoded.elementsEqual(name)
        }
    }

    /// The rest of a string whose opening quote was consumed, its escapes decoded.
    private mutating func readString() -> [UInt8]? {
        var out: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""): return out
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return nil }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = readEscapedScalar() else { return nil }
                    out += Array(String(Character(scalar)).utf8)
                default: return nil
                }
            case 0..<0x20: return nil
            default: out.append(byte)
            }
        }
        return nil
    }

    /// The scalar of a `\u` escape whose `\u` was consumed: a surrogate pair is two escapes.
    private mutating func readEscapedScalar() -> Unicode.Scalar? {
        guard let high = readHex4() else { return nil }
        guard (0xD800..<0xDC00).contains(high) else { return Unicode.Scalar(high) }
        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else { return nil }
        position += 2
        guard let low = readHex4(), (0xDC00..<0xE000).contains(low) else { return nil }
        return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    private mutating func readHex4() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[position..<(position + 4)] {
            guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else { return nil }
            value = value << 4 | UInt32(digit)
        }
        position += 4
        return value
    }

    /// Skips one value: a string, an object or array (counting depth outside strings), or a
    /// number or literal (up to the delimiter after it, which is left for the caller).
    private mutating func skipValue() -> Bool {
        if take(UInt8(ascii: "\"")) { return readStringBytes() != nil }
        var depth = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                guard readStringBytes() != nil else { return false }
                continue
            }
            let opens = byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[")
            let closes = byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
            if depth == 0 && (closes || byte == UInt8(ascii: ",") || Self.isBlank(byte)) { return true }
            position += 1
            if opens { depth += 1 }
            if closes {
                depth -= 1
                if depth == 0 { return true }
            }
        }
        return depth == 0
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
