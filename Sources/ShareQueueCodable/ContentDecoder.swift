import ShareQueueCore

/// Decodes a value from a parsed JSON value, with the encodings of
/// ``ShareQueueCodable/SharedContent``. Numbers are read from their literal text, so every
/// integer within the Swift type's range comes back exact.
struct ContentDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: JSONValue, codingPath: [any CodingKey] = []) {
        self.value = value
        self.codingPath = codingPath
    }

    /// `type` read from `value`, through its own encoding if it has one here.
    func decodeValue<Value: Decodable>(_ type: Value.Type) throws -> Value {
        if let special = try FoundationValues.value(type, from: value, codingPath: codingPath) { return special }
        return try Value(from: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw NativeValues.mismatch(JSONMembers<JSONValue>.self, value, codingPath, "an object") }
        return KeyedDecodingContainer(KeyedContentDecoder<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw NativeValues.mismatch([JSONValue].self, value, codingPath, "an array") }
        return UnkeyedContentDecoder(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContentDecoder(decoder: self) }
}

/// Reading the values JSON has natively, with the errors Foundation's decoder gives.
enum NativeValues {
    static func mismatch<Value>(_ type: Value.Type, _ found: JSONValue, _ codingPath: [any CodingKey], _ expected: String) -> DecodingError {
        if found == .null {
            return DecodingError.valueNotFound(type, DecodingError.Context(codingPath: codingPath, debugDescription: "expected \(expected), found null"))
        }
        return DecodingError.typeMismatch(type, DecodingError.Context(codingPath: codingPath, debugDescription: "expected \(expected), found \(found.kindName)"))
    }

    static func bool(_ value: JSONValue, _ codingPath: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, codingPath, "a boolean") }
        return flag
    }

    static func string(_ value: JSONValue, _ codingPath: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, value, codingPath, "a string") }
        return text
    }

    static func integer<Value: FixedWidthInteger>(_ type: Value.Type, _ value: JSONValue, _ codingPath: [any CodingKey]) throws -> Value {
        guard case .number(let literal) = value else { throw mismatch(type, value, codingPath, "an integer") }
        if let exact = Value(literal) { return exact }
        // An integer written with a fraction or an exponent (`2.0`, `1e3`): exact only below 2^53.
        if let number = Double(literal), number.rounded() == number, abs(number) <= 9_007_199_254_740_992, let exact = Value(exactly: number) { return exact }
        throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: "the number \(literal.prefix(100)) does not fit \(type)"))
    }

    static func float<Value: BinaryFloatingPoint & LosslessStringConvertible>(_ type: Value.Type, _ value: JSONValue, _ codingPath: [any CodingKey]) throws -> Value {
        guard case .number(let literal) = value else { throw mismatch(type, value, codingPath, "a number") }
        guard let number = Value(literal), number.isFinite else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: "the number \(literal.prefix(100)) does not fit \(type)"))
        }
        return number
    }
}

extension JSONValue {
    /// What sort of value this is, for an error message.
    var kindName: String {
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
