// The three kinds of container a value decodes from.
import ShareQueueCore

struct KeyedContentDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// Looked up by name as UTF-8 bytes: names that Swift calls equal are two members.
    let members: JSONMembers<JSONValue>
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.names.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func value(for key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "no value for '\(key.stringValue)'"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(for: key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try NativeValues.bool(try value(for: key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try NativeValues.string(try value(for: key), codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try NativeValues.float(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try NativeValues.float(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try NativeValues.integer(type, try value(for: key), codingPath + [key]) }

    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
        try ContentDecoder(value: try value(for: key), codingPath: codingPath + [key]).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ContentDecoder(value: try value(for: key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ContentDecoder(value: try value(for: key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ContentDecoder(value: members["super"] ?? .null, codingPath: codingPath + [CoderKey(name: "super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ContentDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

struct UnkeyedContentDecoder: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// Decodes the next element with `read`, moving on only if it succeeds.
    private mutating func next<Value>(_ type: Value.Type, _ read: (JSONValue, [any CodingKey]) throws -> Value) throws -> Value {
        let path = codingPath + [CoderKey(index: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(codingPath: path, debugDescription: "the array has only \(elements.count) elements"))
        }
        let value = try read(elements[currentIndex], path)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try NativeValues.bool($0, $1) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try NativeValues.string($0, $1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try NativeValues.float(type, $0, $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try NativeValues.float(type, $0, $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try next(type) { try NativeValues.integer(type, $0, $1) } }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try next(type) { try NativeValues.integer(type, $0, $1) } }

    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try next(type) { try ContentDecoder(value: $0, codingPath: $1).decodeValue(type) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try ContentDecoder(value: $0, codingPath: $1).container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try ContentDecoder(value: $0, codingPath: $1).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { ContentDecoder(value: $0, codingPath: $1) }
    }
}

struct SingleValueContentDecoder: SingleValueDecodingContainer {
    let decoder: ContentDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try NativeValues.bool(decoder.value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try NativeValues.string(decoder.value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try NativeValues.float(type, decoder.value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try NativeValues.float(type, decoder.value, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try NativeValues.integer(type, decoder.value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try NativeValues.integer(type, decoder.value, codingPath) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try NativeValues.integer(type, decoder.value, codingPath) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try NativeValues.integer(type, decoder.value, codingPath) }

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try decoder.decodeValue(type) }
}
