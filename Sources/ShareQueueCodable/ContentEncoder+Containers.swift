// The three kinds of container a value encodes into. Scalars are written as
// JSON at once; integers of every width in full, so UInt64.max is stored as 18446744073709551615.

struct KeyedContentEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let bytes: EncodedBytes
    let object: EncodedObject
    let path: EncodingPath
    var codingPath: [any CodingKey] { path.codingPath }

    /// Sets the member `key` to the value `write` writes, just after the member's name.
    private func set(_ key: Key, _ write: () throws -> EncodedNode) rethrows {
        let name = bytes.name(key.stringValue)
        object.set(name, try write(), in: bytes)
    }

    mutating func encodeNil(forKey key: Key) throws { set(key) { bytes.literal("null") } }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(key) { bytes.bool(value) } }
    mutating func encode(_ value: String, forKey key: Key) throws { set(key) { bytes.string(value) } }
    mutating func encode(_ value: Double, forKey key: Key) throws { try set(key) { try bytes.float(value, at: codingPath + [key]) } }
    mutating func encode(_ value: Float, forKey key: Key) throws { try set(key) { try bytes.float(value, at: codingPath + [key]) } }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws { set(key) { bytes.integer(value) } }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws { set(key) { bytes.integer(value) } }

    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        try set(key) { try ContentEncoder.node(for: value, in: path, key: .key(key), bytes: bytes) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        set(key) { .object(nested) }
        return KeyedEncodingContainer(KeyedContentEncoder<NestedKey>(bytes: bytes, object: nested, path: .nested(path, .key(key))))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        set(key) { .array(nested) }
        return UnkeyedContentEncoder(bytes: bytes, array: nested, path: .nested(path, .key(key)))
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: "super", key: CoderKey(name: "super")) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue, key: key) }

    private func superEncoder(named name: String, key: any CodingKey) -> any Encoder {
        let deferred = ContentEncoder(bytes: bytes, parent: .keys(codingPath), key: .key(key))
        object.set(bytes.name(name), .deferred(deferred), in: bytes)
        return deferred
    }
}

struct UnkeyedContentEncoder: UnkeyedEncodingContainer {
    let bytes: EncodedBytes
    let array: EncodedArray
    let path: EncodingPath
    var codingPath: [any CodingKey] { path.codingPath }
    var count: Int { array.elements.count }
    private var nextKey: any CodingKey { CoderKey(index: count) }

    init(bytes: EncodedBytes, array: EncodedArray, path: EncodingPath) {
        self.bytes = bytes
        self.array = array
        self.path = path
    }

    private func append(_ node: EncodedNode) { array.elements.append(node) }

    mutating func encodeNil() throws { append(bytes.literal("null")) }
    mutating func encode(_ value: Bool) throws { append(bytes.bool(value)) }
    mutating func encode(_ value: String) throws { append(bytes.string(value)) }
    mutating func encode(_ value: Double) throws { append(try bytes.float(value, at: codingPath + [nextKey])) }
    mutating func encode(_ value: Float) throws { append(try bytes.float(value, at: codingPath + [nextKey])) }
    mutating func encode(_ value: Int) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: Int8) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: Int16) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: Int32) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: Int64) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: UInt) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: UInt8) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: UInt16) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: UInt32) throws { append(bytes.integer(value)) }
    mutating func encode(_ value: UInt64) throws { append(bytes.integer(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { append(bytes.integer(value)) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { append(bytes.integer(value)) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        append(try ContentEncoder.node(for: value, in: path, key: .index(count), bytes: bytes))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        let nestedPath = EncodingPath.nested(path, .index(count))
        append(.object(nested))
        return KeyedEncodingContainer(KeyedContentEncoder<NestedKey>(bytes: bytes, object: nested, path: nestedPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let nestedPath = EncodingPath.nested(path, .index(count))
        append(.array(nested))
        return UnkeyedContentEncoder(bytes: bytes, array: nested, path: nestedPath)
    }

    mutating func superEncoder() -> any Encoder {
        let deferred = ContentEncoder(bytes: bytes, parent: .keys(codingPath), key: .index(count))
        append(.deferred(deferred))
        return deferred
    }
}

struct SingleValueContentEncoder: SingleValueEncodingContainer {
    let encoder: ContentEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var bytes: EncodedBytes { encoder.bytes }

    mutating func encodeNil() throws { encoder.node = bytes.literal("null") }
    mutating func encode(_ value: Bool) throws { encoder.node = bytes.bool(value) }
    mutating func encode(_ value: String) throws { encoder.node = bytes.string(value) }
    mutating func encode(_ value: Double) throws { encoder.node = try bytes.float(value, at: codingPath) }
    mutating func encode(_ value: Float) throws { encoder.node = try bytes.float(value, at: codingPath) }
    mutating func encode(_ value: Int) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: Int8) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: Int16) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: Int32) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: Int64) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: UInt) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: UInt8) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: UInt16) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: UInt32) throws { encoder.node = bytes.integer(value) }
    mutating func encode(_ value: UInt64) throws { encoder.node = bytes.integer(value) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { encoder.node = bytes.integer(value) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { encoder.node = bytes.integer(value) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        encoder.node = try ContentEncoder.node(for: value, in: .encoder(encoder), key: nil, bytes: bytes)
    }
}
