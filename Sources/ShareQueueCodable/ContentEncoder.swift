import ShareQueueCore

/// Encodes a value as compact JSON, object members sorted by their names' UTF-8 bytes, with the
/// encodings of ``ShareQueueCodable/SharedContent``: numbers exact, dates as ISO-8601
/// with milliseconds, URLs and UUIDs as strings, data as Base64.
///
/// The value is first built as a small tree, because `Encodable` may fill
/// containers in any order; then the tree is written out once.
final class ContentEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// What the value encoded to; nil until it asks for a container.
    var node: EncodedNode?

    init(codingPath: [any CodingKey] = []) { self.codingPath = codingPath }

    /// The compact JSON of `value`.
    static func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        var out: [UInt8] = []
        try ContentEncoder().node(for: value).write(to: &out)
        return out
    }

    /// The node of `value`, one of the types with an encoding of their own or what it encodes to.
    func node<Value: Encodable>(for value: Value, at path: [any CodingKey]? = nil) throws -> EncodedNode {
        if let special = try FoundationValues.node(for: value, codingPath: path ?? codingPath) { return special }
        let encoder = ContentEncoder(codingPath: path ?? codingPath)
        try value.encode(to: encoder)
        // A value that asks for no container encodes as an empty object, as Foundation's does.
        return encoder.node ?? .object(EncodedObject())
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: EncodedObject
        if case .object(let existing)? = node { object = existing } else {
            object = EncodedObject()
            node = .object(object)
        }
        return KeyedEncodingContainer(KeyedContentEncoder<Key>(encoder: self, object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: EncodedArray
        if case .array(let existing)? = node { array = existing } else {
            array = EncodedArray()
            node = .array(array)
        }
        return UnkeyedContentEncoder(encoder: self, array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContentEncoder(encoder: self) }
}

/// A value being encoded. Containers are classes, so that a nested container
/// filled after its parent moved on still lands in its place.
enum EncodedNode {
    /// Number, `true`, `false` or `null`, as its JSON text.
    case literal(String)
    case string(String)
    case array(EncodedArray)
    case object(EncodedObject)
    /// A super encoder's value, known only once its caller has finished with it.
    case deferred(ContentEncoder)

    func write(to out: inout [UInt8]) throws {
        switch self {
        case .literal(let text): out.append(contentsOf: text.utf8)
        case .string(let text): JSONWriter.appendString(text, to: &out)
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (index, element) in array.elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            // Sorted by bytes, so that equal values are equal bytes whatever order
            // a dictionary lists its keys in: a publish compares bytes.
            for (position, index) in object.names.indices.sorted(by: { ByteKey.precedes(object.names[$0], object.names[$1]) }).enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(object.names[index], to: &out)
                out.append(UInt8(ascii: ":"))
                try object.values[index].write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .deferred(let encoder):
            try (encoder.node ?? .object(EncodedObject())).write(to: &out)
        }
    }
}

final class EncodedArray {
    var elements: [EncodedNode] = []
}

/// Members in the order they were first set; setting a name again (the same
/// UTF-8 bytes) replaces its value.
final class EncodedObject {
    private(set) var names: [String] = []
    private(set) var values: [EncodedNode] = []
    /// Built once an object grows past a few members, so that setting stays constant time.
    private var indexOfName: [ByteKey: Int]?

    func set(_ name: String, _ value: EncodedNode) {
        if let index = index(of: name) {
            values[index] = value
            return
        }
        names.append(name)
        values.append(value)
        if indexOfName != nil {
            indexOfName![ByteKey(name)] = names.count - 1
        } else if names.count > 16 {
            indexOfName = Dictionary(names.indices.map { (ByteKey(names[$0]), $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private func index(of name: String) -> Int? {
        if let indexOfName { return indexOfName[ByteKey(name)] }
        return names.firstIndex { ByteKey.equal($0, name) }
    }
}
