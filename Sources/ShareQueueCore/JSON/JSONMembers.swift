/// The members of a JSON object: in the order they were written, each name
/// exactly as written.
///
/// Names compare as their UTF-8 bytes, not as Swift compares strings: `"\u{E9}"`
/// (é composed) and `"e\u{301}"` (é decomposed) are two names, and an object may
/// hold both. A name occurs at most once: setting a name that is there replaces its
/// value in its place, so an object read with a name that occurs twice holds that
/// name once, where it first occurred, with its last value.
///
///     var labels: JSONMembers<String> = ["app": "mail"]
///     labels["e\u{301}"] = "decomposed"
///     labels["\u{E9}"] = "composed"        // a third member, not a replacement
///     for (name, value) in labels { print(name, value) }
///
/// Two collections are equal when they hold the same members in the same order,
/// so that equal values are written as equal bytes. Looking a name up takes
/// constant time once a collection has more than a few members.
public struct JSONMembers<Value: Hashable & Sendable>: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// A member: its name and its value.
    public typealias Element = (name: String, value: Value)

    /// The names, in order.
    public private(set) var names: [String] = []
    /// The values, in the order of `names`.
    private var values: [Value] = []
    /// Where each name is, built once there are more than a few members, so that
    /// building or reading a large object costs what it holds, not its square.
    private var positions: [ByteKey: Int]?
    private static var indexedAbove: Int { 16 }

    /// No members.
    public init() {}

    /// The members of `members`, in their order; a name given twice keeps its first place and its last value.
    public init<Members: Sequence>(_ members: Members) where Members.Element == (name: String, value: Value) {
        for (name, value) in members { self[name] = value }
    }

    /// The members listed, in their order; a name given twice keeps its first place and its last value.
    public init(dictionaryLiteral elements: (String, Value)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// The position of the first member: 0.
    public var startIndex: Int { 0 }
    /// The position after the last member: the number of members.
    public var endIndex: Int { names.count }
    /// The member at `position`, counting from 0 in their order.
    public subscript(position: Int) -> Element { (names[position], values[position]) }

    /// The value of the member whose name has the same UTF-8 bytes as `name`, or nil.
    /// Setting a value replaces that member's value in its place, or adds a member at
    /// the end; setting nil removes the member.
    public subscript(name: String) -> Value? {
        get { position(of: name).map { values[$0] } }
        set {
            if let index = position(of: name) {
                if let newValue {
                    values[index] = newValue
                } else {
                    names.remove(at: index)
                    values.remove(at: index)
                    positions = nil
                    indexIfLarge()
                }
            } else if let newValue {
                names.append(name)
                values.append(newValue)
                if positions != nil { positions![ByteKey(name)] = names.count - 1 } else { indexIfLarge() }
            }
        }
    }

    /// The position of the member named `name`, compared as UTF-8 bytes.
    func position(of name: String) -> Int? {
        if let positions { return positions[ByteKey(name)] }
        return names.firstIndex { ByteKey.equal($0, name) }
    }

    private mutating func indexIfLarge() {
        guard positions == nil, names.count > Self.indexedAbove else { return }
        var index: [ByteKey: Int] = Dictionary(minimumCapacity: names.count)
        for (position, name) in names.enumerated() { index[ByteKey(name)] = position }
        positions = index
    }

    /// These members, ordered by their names' UTF-8 bytes (the members of values inside are left as they are).
    package func sortedByName() -> JSONMembers {
        var sorted = JSONMembers()
        for index in names.indices.sorted(by: { ByteKey.precedes(names[$0], names[$1]) }) { sorted[names[index]] = values[index] }
        return sorted
    }

    /// Whether both hold the same members in the same order, names compared as UTF-8 bytes.
    public static func == (lhs: JSONMembers, rhs: JSONMembers) -> Bool {
        lhs.names.count == rhs.names.count && lhs.values == rhs.values && zip(lhs.names, rhs.names).allSatisfy(ByteKey.equal)
    }

    /// Hashes the members in order, names as UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(names.count)
        for (name, value) in zip(names, values) {
            ByteKey.hashBytes(of: name, into: &hasher)
            hasher.combine(value)
        }
    }
}

extension JSONMembers: Codable where Value: Codable {
    /// A member's name as a coding key.
    private struct MemberName: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// Reads an object's members from a decoder, in the order the decoder lists them.
    /// ShareQueue's own decoder lists them as stored, with their exact names; a coder
    /// that keeps them in a `String`-keyed dictionary (Foundation's) has already merged
    /// canonically equivalent names and lost their order.
    /// - Throws: `DecodingError` when the value is not an object, or a member not a `Value`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: MemberName.self)
        self.init()
        for key in container.allKeys { self[key.stringValue] = try container.decode(Value.self, forKey: key) }
    }

    /// Writes the members to an encoder, in order.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberName.self)
        for (name, value) in zip(names, values) { try container.encode(value, forKey: MemberName(stringValue: name)) }
    }
}
