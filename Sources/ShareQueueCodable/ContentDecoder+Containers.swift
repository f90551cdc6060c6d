// The three kinds of container a value decodes from.
import ShareQueueCore

struct KeyedContentDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let json: CheckedJSON
    /// The object's members in stored order, duplicates included: found by one scan.
    let members: [CheckedJSON.Member]
    /// Where each name's last value is, for an object large enough that looking
    /// names up one by one would cost its square; nil for small ones.
    let index: [ByteKey: Int]?
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }

    init(json: CheckedJSON, object start: Int, path: CodingPath) {
        self.json = json
        self.path = path
        members = json.members(ofObjectAt: start)
        guard members.count > 16 else {
            index = nil
            return
        }
        var index: [ByteKey: Int] = Dictionary(minimumCapacity: members.count)
        for (position, member) in members.enumerated() { index[ByteKey(json.name(of: member))] = position }
        self.index = index
    }

    /// The names in the order they first occur, each once, compared as UTF-8 bytes.
    var allKeys: [Key] {
        var seen = Set<ByteKey>()
        var keys: [Key] = []
        for member in members {
            let name = json.name(of: member)
            if seen.insert(ByteKey(name)).inserted, let key = Key(stringValue: name) { keys.append(key) }
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { start(of: key) != nil }

    /// Where the value of `key`'s name starts: its last occurrence, as the format says.
    private func start(of key: Key) -> Int? {
        let name = key.stringValue
        if let index { return index[ByteKey(name)].map { members[$0].value } }
        var position = members.count
        while position > 0 {
            position -= 1
            if json.name(of: members[position], is: name) { return members[position].value }
        }
        return nil
    }

    private func value(for key: Key) throws -> Int {
        guard let start = start(of: key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "no value for '\(key.stringValue)'"))
        }
        return start
    }

    func decodeNil(forKey key: Key) throws -> Bool { json.kind(at: try value(for: key)) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try NativeValues.bool(json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try NativeValues.string(json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try NativeValues.float(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try NativeValues.float(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try NativeValues.integer(type, json, try value(for: key), path.appending(key).keys) }

    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
        let start = try value(for: key)
        // Values with an encoding of their own are read here, without a decoder of their own.
        if let special = FoundationValues.Special(type) {
            return try FoundationValues.value(special, as: type, from: json, at: start, path.appending(key).keys)
        }
        return try Value(from: ContentDecoder(json: json, start: start, path: path.appending(key)))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ContentDecoder(json: json, start: try value(for: key), path: path.appending(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ContentDecoder(json: json, start: try value(for: key), path: path.appending(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let name = CoderKey(name: "super")
        return decoder(at: members.last { json.name(of: $0, is: name.stringValue) }?.value, path: path.appending(name))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoder(at: start(of: key), path: path.appending(key))
    }

    /// A decoder of the value at `start`, or of null when there is none.
    private func decoder(at start: Int?, path: CodingPath) -> ContentDecoder {
        guard let start else { return ContentDecoder(json: .null, start: 0, path: path) }
        return ContentDecoder(json: json, start: start, path: path)
    }
}

struct UnkeyedContentDecoder: UnkeyedDecodingContainer {
    let json: CheckedJSON
    /// Where each element starts.
    let elements: [Int]
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }
    private(set) var currentIndex = 0

    init(json: CheckedJSON, elements: [Int], path: CodingPath) {
        self.json = json
        self.elements = elements
        self.path = path
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private func path(at index: Int) -> CodingPath { path.appending(CoderKey(index: index)) }

    /// Decodes the next element with `read`, given where it starts and its coding path
    /// (made only when asked), moving on only if it succeeds.
    private mutating func next<Value>(_ type: Value.Type, _ read: (Int, () -> [any CodingKey]) throws -> Value) throws -> Value {
        let index = currentIndex
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(codingPath: path(at: index).keys, debugDescription: "the array has only \(elements.count) elements"))
        }
        let value = try read(elements[index]) { path(at: index).keys }
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, json.kind(at: elements[currentIndex]) == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { [json] in try NativeValues.bool(json, $0, $1()) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { [json] in try NativeValues.string(json, $0, $1()) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { [json] in try NativeValues.float(type, json, $0, $1()) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { [json] in try NativeValues.float(type, json, $0, $1()) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try next(type) { [json] in try NativeValues.integer(type, json, $0, $1()) } }

    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        let index = currentIndex
        return try next(type) { [json, path] start, codingPath in
            if let special = FoundationValues.Special(type) { return try FoundationValues.value(special, as: type, from: json, at: start, codingPath()) }
            return try Value(from: ContentDecoder(json: json, start: start, path: path.appending(CoderKey(index: index))))
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let index = currentIndex
        return try next(KeyedDecodingContainer<NestedKey>.self) { [json, path] start, _ in
            try ContentDecoder(json: json, start: start, path: path.appending(CoderKey(index: index))).container(keyedBy: type)
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let index = currentIndex
        return try next((any UnkeyedDecodingContainer).self) { [json, path] start, _ in
            try ContentDecoder(json: json, start: start, path: path.appending(CoderKey(index: index))).unkeyedContainer()
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        let index = currentIndex
        return try next((any Decoder).self) { [json, path] start, _ in ContentDecoder(json: json, start: start, path: path.appending(CoderKey(index: index))) }
    }
}

struct SingleValueContentDecoder: SingleValueDecodingContainer {
    let decoder: ContentDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    private var json: CheckedJSON { decoder.json }
    private var start: Int { decoder.start }

    func decodeNil() -> Bool { json.kind(at: start) == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try NativeValues.bool(json, start, codingPath) }
    func decode(_ type: String.Type) throws -> String { try NativeValues.string(json, start, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try NativeValues.float(type, json, start, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try NativeValues.float(type, json, start, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try NativeValues.integer(type, json, start, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try NativeValues.integer(type, json, start, codingPath) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try NativeValues.integer(type, json, start, codingPath) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try NativeValues.integer(type, json, start, codingPath) }

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try decoder.decodeValue(type) }
}
