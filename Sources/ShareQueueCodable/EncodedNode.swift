/// A value being encoded. Scalars are already JSON in the encoding's
/// ``EncodedBytes``; containers are classes, so that a nested container filled
/// after its parent moved on still lands in its place.
enum EncodedNode {
    /// JSON at these offsets of the encoding's bytes: a number, a string, a literal,
    /// or a value of a type with an encoding of its own.
    case bytes(Range<Int>)
    case array(EncodedArray)
    case object(EncodedObject)
    /// A super encoder's value, known only once its caller has finished with it.
    case deferred(ContentEncoder)

    /// Appends this value's JSON to `out`, object members sorted by name.
    /// - Parameter source: The bytes of the encoding this value belongs to.
    func write(from source: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        switch self {
        case .bytes(let range): out.append(contentsOf: UnsafeBufferPointer(rebasing: source[range]))
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (index, element) in array.elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(from: source, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object): object.write(from: source, to: &out)
        case .deferred(let encoder):
            // A value that asks for no container encodes as an empty object, as Foundation's does.
            if let node = encoder.node { node.write(from: source, to: &out) } else { out.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")]) }
        }
    }
}

/// Elements in the order they were encoded.
final class EncodedArray {
    // Unchecked, as `EncodedBytes.bytes` is: one encoding, one thread, no overlapping access.
    @exclusivity(unchecked) var elements: [EncodedNode] = []
}

/// Members in the order they were first set; setting a name again (the same
/// UTF-8 bytes) replaces its value.
final class EncodedObject {
    struct Member {
        let name: MemberName
        var value: EncodedNode
    }

    // Unchecked, as `EncodedBytes.bytes` is: one encoding, one thread, no overlapping access.
    @exclusivity(unchecked) private(set) var members: [Member] = []
    /// Built once an object grows past a few members, so that setting stays constant time.
    /// Keyed by the names as written, which are equal exactly when the names' UTF-8 bytes are.
    @exclusivity(unchecked) private var indexOfName: [[UInt8]: Int]?

    /// Sets the member `name` to `value`, both already written in `bytes`.
    func set(_ name: MemberName, _ value: EncodedNode, in bytes: EncodedBytes) {
        if let index = index(of: name.range, in: bytes) {
            // The first spelling of the name stays; the second is left unused in the bytes.
            members[index].value = value
            return
        }
        // Most objects have a few members: room for them at once, rather than growing 1, 2, 4, 8.
        if members.isEmpty { members.reserveCapacity(8) }
        members.append(Member(name: name, value: value))
        if indexOfName != nil {
            indexOfName![bytes[name.range]] = members.count - 1
        } else if members.count > 16 {
            indexOfName = Dictionary(members.indices.map { (bytes[members[$0].name.range], $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private func index(of name: Range<Int>, in bytes: EncodedBytes) -> Int? {
        if let indexOfName { return indexOfName[bytes[name]] }
        return members.firstIndex { bytes.equal($0.name.range, name) }
    }

    /// Appends this object's JSON to `out`, members sorted by name.
    func write(from source: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        // Sorted by bytes, so that equal values are equal bytes whatever order
        // a dictionary lists its keys in: a publish compares bytes.
        withOrder(in: source) { order in
            for position in order.indices {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                let index = order[position]
                let name = members[index].name.range
                if case .bytes(let value) = members[index].value, value.lowerBound == name.upperBound + 1 {
                    // The name, its colon and the value, as they were written.
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: source[name.lowerBound..<value.upperBound]))
                } else {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: source[name]))
                    out.append(UInt8(ascii: ":"))
                    members[index].value.write(from: source, to: &out)
                }
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Calls `body` with the members' indices sorted by their names' UTF-8 bytes.
    private func withOrder(in source: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<Int>) -> Void) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: members.count) { order in
            for index in members.indices { order.initializeElement(at: index, to: index) }
            if members.count <= 16 {
                // An insertion sort: few members, often almost in order.
                for end in members.indices.dropFirst() {
                    let moving = order[end]
                    var slot = end
                    while slot > 0, Self.precedes(members[moving].name, members[order[slot - 1]].name, in: source) {
                        order[slot] = order[slot - 1]
                        slot -= 1
                    }
                    order[slot] = moving
                }
            } else {
                var order = order
                order.sort { Self.precedes(members[$0].name, members[$1].name, in: source) }
            }
            body(UnsafeBufferPointer(order))
        }
    }

    /// Whether `first` sorts before `second` by their UTF-8 bytes.
    private static func precedes(_ first: MemberName, _ second: MemberName, in source: UnsafeBufferPointer<UInt8>) -> Bool {
        // Between the quotes.
        let left = UnsafeBufferPointer(rebasing: source[(first.range.lowerBound + 1)..<(first.range.upperBound - 1)])
        let right = UnsafeBufferPointer(rebasing: source[(second.range.lowerBound + 1)..<(second.range.upperBound - 1)])
        if first.plain && second.plain { return left.lexicographicallyPrecedes(right) }
        // Escaping changes the order (a" sorts before a#, but its escape a\" after it): escaped names are compared unescaped.
        return UnescapedBytes(escaped: left).lexicographicallyPrecedes(UnescapedBytes(escaped: right))
    }
}

/// The UTF-8 bytes of a string as `JSONWriter` escapes it: `\"`, `\\`, `\n`, `\r`, `\t` and `\u00XX`.
struct UnescapedBytes: Sequence, IteratorProtocol {
    let escaped: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(escaped: UnsafeBufferPointer<UInt8>) { self.escaped = escaped }

    mutating func next() -> UInt8? {
        guard index < escaped.count else { return nil }
        let byte = escaped[index]
        guard byte == UInt8(ascii: "\\") else {
            index += 1
            return byte
        }
        let escape = escaped[index + 1]
        index += 2
        switch escape {
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        case UInt8(ascii: "u"):
            // Only control characters are written this way: \u00XX.
            defer { index += 4 }
            return Self.hexDigit(escaped[index + 2]) << 4 | Self.hexDigit(escaped[index + 3])
        default: return escape
        }
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "a") ? byte - UInt8(ascii: "a") + 10 : byte - UInt8(ascii: "0")
    }
}
