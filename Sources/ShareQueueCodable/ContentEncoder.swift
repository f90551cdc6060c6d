import ShareQueueCore

/// Encodes a value as compact JSON, object members sorted by their names' UTF-8 bytes, with the
/// encodings of ``ShareQueueCodable/SharedContent``: numbers exact, dates as ISO-8601
/// with milliseconds, URLs and UUIDs as strings, data as Base64.
///
/// `Encodable` may fill containers in any order, so objects and arrays are built as
/// a small tree, written out once the value is encoded; every scalar, and every
/// member name, is written as JSON the moment it is encoded, into one buffer
/// that the tree refers to by offset.
final class ContentEncoder: Encoder {
    /// Where this encoding writes its scalars, shared by every encoder of one value.
    let bytes: EncodedBytes
    /// The path of the container this encoder's value is in.
    private let parent: EncodingPath
    /// The key or index of its value there; nil for the value at the top, and for a single value encoded in place.
    private let key: PathKey?
    var codingPath: [any CodingKey] { parent.codingPath + (key.map { [$0.codingKey] } ?? []) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// What the value encoded to; nil until it asks for a container.
    // Unchecked, as `EncodedBytes.bytes` is: one encoding, one thread, no overlapping access.
    @exclusivity(unchecked) var node: EncodedNode?

    init(bytes: EncodedBytes, parent: EncodingPath = .root, key: PathKey? = nil) {
        self.bytes = bytes
        self.parent = parent
        self.key = key
    }

    /// The compact JSON of `value`.
    static func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let bytes = EncodedBytes()
        let node = try node(for: value, in: .root, key: nil, bytes: bytes)
        return bytes.output(of: node)
    }

    /// The node of `value` found at `key` of `path`: one of the types with an encoding of
    /// their own, or a scalar, written at once; else what the value encodes to.
    static func node<Value: Encodable>(for value: Value, in path: EncodingPath, key: PathKey?, bytes: EncodedBytes) throws -> EncodedNode {
        if let written = try bytes.special(value, at: path.codingPath + (key.map { [$0.codingKey] } ?? [])) { return written }
        let encoder = ContentEncoder(bytes: bytes, parent: path, key: key)
        try value.encode(to: encoder)
        // A value that asks for no container encodes as an empty object, as Foundation's does.
        return encoder.node ?? bytes.literal("{}")
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: EncodedObject
        if case .object(let existing)? = node { object = existing } else {
            object = EncodedObject()
            node = .object(object)
        }
        return KeyedEncodingContainer(KeyedContentEncoder<Key>(bytes: bytes, object: object, path: .encoder(self)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: EncodedArray
        if case .array(let existing)? = node { array = existing } else {
            array = EncodedArray()
            node = .array(array)
        }
        return UnkeyedContentEncoder(bytes: bytes, array: array, path: .encoder(self))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContentEncoder(encoder: self) }
}

/// Where an encoder or a container is in the value being encoded, made into a
/// coding path only when one is asked for: for an error, or by a type that reads it.
enum EncodingPath {
    case root
    /// The path of this encoder.
    case encoder(ContentEncoder)
    /// A path already made: a super encoder's, which outlives the call that made it and so
    /// must not hold the encoder whose value holds it.
    case keys([any CodingKey])
    /// A nested container's: its container's path, and its key there.
    indirect case nested(EncodingPath, PathKey)

    var codingPath: [any CodingKey] {
        switch self {
        case .root: []
        case .encoder(let encoder): encoder.codingPath
        case .keys(let keys): keys
        case .nested(let parent, let key): parent.codingPath + [key.codingKey]
        }
    }
}

/// A member's key or an element's index, made into a coding key only when a path is asked for.
enum PathKey {
    case key(any CodingKey)
    case index(Int)

    var codingKey: any CodingKey {
        switch self {
        case .key(let key): key
        case .index(let index): CoderKey(index: index)
        }
    }
}
