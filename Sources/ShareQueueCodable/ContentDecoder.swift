import ShareQueueCore

/// Decodes a value from JSON text already checked (a drained record's stored
/// bytes), where it lies, with the encodings of ``ShareQueueCodable/SharedContent``.
/// No tree is built: an object is scanned once for where its members are, names
/// compared as UTF-8 bytes; a string is unescaped only when read; a number is
/// read from its literal text, so every integer within the Swift type's range
/// comes back exact.
struct ContentDecoder: Decoder {
    let json: CheckedJSON
    /// Where the value starts in `json`.
    let start: Int
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(json: CheckedJSON, start: Int, path: CodingPath = .root) {
        self.json = json
        self.start = start
        self.path = path
    }

    /// `type` read from the value, through its own encoding if it has one here.
    func decodeValue<Value: Decodable>(_ type: Value.Type) throws -> Value {
        guard let special = FoundationValues.Special(type) else { return try Value(from: self) }
        return try FoundationValues.value(special, as: type, from: json, at: start, path.keys)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard json.kind(at: start) == .object else {
            throw NativeValues.mismatch(JSONMembers<JSONValue>.self, json, start, codingPath, "an object")
        }
        return KeyedDecodingContainer(KeyedContentDecoder<Key>(json: json, object: start, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard json.kind(at: start) == .array else {
            throw NativeValues.mismatch([JSONValue].self, json, start, codingPath, "an array")
        }
        return UnkeyedContentDecoder(json: json, elements: json.elements(ofArrayAt: start), path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContentDecoder(decoder: self) }
}

/// Where a value lies inside the content, built only as deep as decoding goes:
/// most values are read, or fail, without the keys ever being listed.
indirect enum CodingPath {
    case root
    case child(CodingPath, any CodingKey)

    /// The path with `key` added.
    func appending(_ key: any CodingKey) -> CodingPath { .child(self, key) }

    /// The keys from the top, for `codingPath` and errors.
    var keys: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = self
        while case .child(let parent, let key) = node {
            keys.append(key)
            node = parent
        }
        return keys.reversed()
    }
}

/// Reading the values JSON has natively, with the errors Foundation's decoder gives.
/// The coding path is asked for only when there is an error.
enum NativeValues {
    static func mismatch<Value>(_ type: Value.Type, _ json: CheckedJSON, _ start: Int, _ codingPath: @autoclosure () -> [any CodingKey],
                                _ expected: String) -> DecodingError {
        let kind = json.kind(at: start)
        if kind == .null {
            return DecodingError.valueNotFound(type, DecodingError.Context(codingPath: codingPath(), debugDescription: "expected \(expected), found null"))
        }
        return DecodingError.typeMismatch(type, DecodingError.Context(codingPath: codingPath(), debugDescription: "expected \(expected), found \(kind.name)"))
    }

    static func bool(_ json: CheckedJSON, _ start: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard json.kind(at: start) == .bool else { throw mismatch(Bool.self, json, start, codingPath(), "a boolean") }
        return json.isTrue(at: start)
    }

    static func string(_ json: CheckedJSON, _ start: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
        guard json.kind(at: start) == .string else { throw mismatch(String.self, json, start, codingPath(), "a string") }
        return json.string(at: start)
    }

    static func integer<Value: FixedWidthInteger>(_ type: Value.Type, _ json: CheckedJSON, _ start: Int,
                                                  _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Value {
        guard json.kind(at: start) == .number else { throw mismatch(type, json, start, codingPath(), "an integer") }
        let range = json.literal(at: start)
        // Most integers are plain digits that `Int64` holds: read without making their text.
        if let small = plainInteger(json.bytes[range]) {
            if let exact = Value(exactly: small) { return exact }
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath(), debugDescription: "the number \(small) does not fit \(type)"))
        }
        let literal = String(decoding: json.bytes[range], as: UTF8.self)
        if let exact = Value(literal) { return exact }
        // An integer written with a fraction or an exponent (`2.0`, `1e3`): exact only below 2^53.
        if let number = Double(literal), number.rounded() == number, abs(number) <= 9_007_199_254_740_992, let exact = Value(exactly: number) { return exact }
        throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath(), debugDescription: "the number \(literal.prefix(100)) does not fit \(type)"))
    }

    /// The value of an optional minus sign and at most 18 digits, which `Int64` always holds; nil for any other literal.
    /// What `Value(literal)` makes of them, when it fits, and what the `Double` reading makes of them when it does not.
    private static func plainInteger(_ digits: ArraySlice<UInt8>) -> Int64? {
        var index = digits.startIndex
        let negative = index < digits.endIndex && digits[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < digits.endIndex, digits.endIndex - index <= 18 else { return nil }
        var value: Int64 = 0
        while index < digits.endIndex {
            let digit = digits[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            index += 1
        }
        return negative ? -value : value
    }

    static func float<Value: BinaryFloatingPoint & LosslessStringConvertible>(_ type: Value.Type, _ json: CheckedJSON, _ start: Int,
                                                                          _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Value {
        guard json.kind(at: start) == .number else { throw mismatch(type, json, start, codingPath(), "a number") }
        let literal = String(decoding: json.bytes[json.literal(at: start)], as: UTF8.self)
        guard let number = Value(literal), number.isFinite else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath(), debugDescription: "the number \(literal.prefix(100)) does not fit \(type)"))
        }
        return number
    }
}

extension CheckedJSON.Kind {
    /// What sort of value this is, for an error message.
    var name: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
