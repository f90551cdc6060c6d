// The three kinds of container a value encodes into. Integers of every width
// are written in full, so UInt64.max is stored as 18446744073709551615.

struct KeyedContentEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ContentEncoder
    let object: EncodedObject
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { object.set(key.stringValue, .literal("null")) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { object.set(key.stringValue, .literal(value ? "true" : "false")) }
    mutating func encode(_ value: String, forKey key: Key) throws { object.set(key.stringValue, .string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { object.set(key.stringValue, try FloatLiteral.node(value, codingPath + [key])) }
    mutating func encode(_ value: Float, forKey key: Key) throws { object.set(key.stringValue, try FloatLiteral.node(value, codingPath + [key])) }
    mutating func encode(_ value: Int, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws { object.set(key.stringValue, .literal(String(value))) }

    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        object.set(key.stringValue, try encoder.node(for: value, at: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        object.set(key.stringValue, .object(nested))
        return KeyedEncodingContainer(KeyedContentEncoder<NestedKey>(encoder: encoder, object: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        object.set(key.stringValue, .array(nested))
        return UnkeyedContentEncoder(encoder: encoder, array: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: "super") }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue, key: key) }

    private func superEncoder(named name: String, key: (any CodingKey)? = nil) -> any Encoder {
        let deferred = ContentEncoder(codingPath: codingPath + [key ?? CoderKey(name: name)])
        object.set(name, .deferred(deferred))
        return deferred
    }
}

struct UnkeyedContentEncoder: UnkeyedEncodingContainer {
    let encoder: ContentEncoder
    let array: EncodedArray
    let codingPath: [any CodingKey]
    var count: Int { array.elements.count }
    private var nextKey: any CodingKey { CoderKey(index: count) }

    init(encoder: ContentEncoder, array: EncodedArray, codingPath: [any CodingKey]) {
        self.encoder = encoder
        self.array = array
        self.codingPath = codingPath
    }

    mutating func encodeNil() throws { array.elements.append(.literal("null")) }
    mutating func encode(_ value: Bool) throws { array.elements.append(.literal(value ? "true" : "false")) }
    mutating func encode(_ value: String) throws { array.elements.append(.string(value)) }
    mutating func encode(_ value: Double) throws { array.elements.append(try FloatLiteral.node(value, codingPath + [nextKey])) }
    mutating func encode(_ value: Float) throws { array.elements.append(try FloatLiteral.node(value, codingPath + [nextKey])) }
    mutating func encode(_ value: Int) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: Int8) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: Int16) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: Int32) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: Int64) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: UInt) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: UInt8) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: UInt16) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: UInt32) throws { array.elements.append(.literal(String(value))) }
    mutating func encode(_ value: UInt64) throws { array.elements.append(.literal(String(value))) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { array.elements.append(.literal(String(value))) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { array.elements.append(.literal(String(value))) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        array.elements.append(try encoder.node(for: value, at: codingPath + [nextKey]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        let path = codingPath + [nextKey]
        array.elements.append(.object(nested))
        return KeyedEncodingContainer(KeyedContentEncoder<NestedKey>(encoder: encoder, object: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let path = codingPath + [nextKey]
        array.elements.append(.array(nested))
        return UnkeyedContentEncoder(encoder: encoder, array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let deferred = ContentEncoder(codingPath: codingPath + [nextKey])
        array.elements.append(.deferred(deferred))
        return deferred
    }
}

struct SingleValueContentEncoder: SingleValueEncodingContainer {
    let encoder: ContentEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.node = .literal("null") }
    mutating func encode(_ value: Bool) throws { encoder.node = .literal(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { encoder.node = .string(value) }
    mutating func encode(_ value: Double) throws { encoder.node = try FloatLiteral.node(value, codingPath) }
    mutating func encode(_ value: Float) throws { encoder.node = try FloatLiteral.node(value, codingPath) }
    mutating func encode(_ value: Int) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: Int8) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: Int16) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: Int32) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: Int64) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: UInt) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: UInt8) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: UInt16) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: UInt32) throws { encoder.node = .literal(String(value)) }
    mutating func encode(_ value: UInt64) throws { encoder.node = .literal(String(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { encoder.node = .literal(String(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { encoder.node = .literal(String(value)) }

    mutating func encode<Value: Encodable>(_ value: Value) throws { encoder.node = try encoder.node(for: value) }
}

/// A floating-point number as the shortest literal that reads back as the same value.
enum FloatLiteral {
    static func node<Value: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Value, _ codingPath: [any CodingKey]) throws -> EncodedNode {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: codingPath, debugDescription: "JSON has no \(value)"))
        }
        return .literal(value.description)
    }
}

/// A coding key for an array index, or a name of the coder's own such as `super`.
struct CoderKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init(name: String) {
        stringValue = name
        intValue = nil
    }

    init?(stringValue: String) { self.init(name: stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }
}
