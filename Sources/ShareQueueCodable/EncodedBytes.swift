import ShareQueueCore

/// A member's name as written in an encoding's bytes.
struct MemberName {
    /// The name as a JSON string, quotes included; a colon follows it.
    let range: Range<Int>
    /// Whether the name needed no escape, so that the bytes between its quotes are its UTF-8.
    let plain: Bool
}

/// The bytes of one value's encoding, where every number, string and literal is
/// written as JSON the moment it is encoded, and every member name as a JSON
/// string: the value's tree refers to them by offset, and only objects and
/// arrays are nodes of their own.
final class EncodedBytes {
    // Unchecked: only the encoding that made this touches it, from one thread, and
    // no method here calls out while it writes, so no two accesses ever overlap.
    @exclusivity(unchecked) private(set) var bytes: [UInt8] = []

    init() {
        // A typical shared value fits, so that most encodings grow this once or never.
        bytes.reserveCapacity(256)
    }

    /// The node of what `write` writes.
    @inline(__always)
    private func written(_ write: () throws -> Void) rethrows -> EncodedNode {
        let start = bytes.count
        try write()
        return .bytes(start..<bytes.count)
    }

    /// Writes a literal such as `null`.
    func literal(_ text: StaticString) -> EncodedNode {
        written { bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) }
    }

    /// Writes `true` or `false`.
    func bool(_ value: Bool) -> EncodedNode { value ? literal("true") : literal("false") }

    /// Writes `text` as a JSON string, with only the escapes JSON requires.
    func string(_ text: String) -> EncodedNode {
        written { JSONWriter.appendString(text, to: &bytes) }
    }

    /// Writes a moment as an ISO-8601 string with milliseconds: `ISO8601Milliseconds.format`'s text, needing no escape.
    func timestamp(millisecondsSince1970 milliseconds: Int64) -> EncodedNode {
        written {
            bytes.append(UInt8(ascii: "\""))
            Timestamp.append(millisecondsSince1970: milliseconds, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// Writes an integer in full, whatever its width, so that `UInt64.max` is `18446744073709551615`.
    func integer<Value: BinaryInteger & LosslessStringConvertible>(_ value: Value) -> EncodedNode {
        written { bytes.append(contentsOf: value.description.utf8) }
    }

    /// Writes a floating-point number as the shortest literal that reads back as the same value.
    /// - Throws: `EncodingError.invalidValue` for NaN and the infinities, which JSON has no literal for.
    func float<Value: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Value, at path: @autoclosure () -> [any CodingKey]) throws -> EncodedNode {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: path(), debugDescription: "JSON has no \(value)"))
        }
        return written { bytes.append(contentsOf: value.description.utf8) }
    }

    /// Writes JSON that is already compact and valid, such as a `JSONValue`'s.
    func json(_ compact: [UInt8]) -> EncodedNode {
        written { bytes.append(contentsOf: compact) }
    }

    /// Writes an array of scalars, each as `element` writes it, with no encoder made
    /// for the array or its elements: what their own `encode(to:)` would write.
    func list<Element>(_ elements: [Element], _ element: (_ index: Int, Element) throws -> EncodedNode) rethrows -> EncodedNode {
        try written {
            bytes.append(UInt8(ascii: "["))
            for (index, value) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                _ = try element(index, value)
            }
            bytes.append(UInt8(ascii: "]"))
        }
    }

    /// Writes `name` as a JSON string and a colon: a member's value is written next, so that most
    /// members are one run of bytes, `"name":value`, to copy when the object is written out.
    /// - Returns: The member's name, quotes included.
    func name(_ name: String) -> MemberName {
        let start = bytes.count
        JSONWriter.appendString(name, to: &bytes)
        let end = bytes.count
        bytes.append(UInt8(ascii: ":"))
        return MemberName(range: start..<end, plain: end - start == name.utf8.count + 2)
    }

    /// Whether the bytes at `first` and at `second` are the same.
    func equal(_ first: Range<Int>, _ second: Range<Int>) -> Bool {
        guard first.count == second.count else { return false }
        return bytes.withUnsafeBufferPointer { buffer in
            UnsafeBufferPointer(rebasing: buffer[first]).elementsEqual(UnsafeBufferPointer(rebasing: buffer[second]))
        }
    }

    /// The JSON of `node`, a value of this encoding, written out.
    func output(of node: EncodedNode) -> [UInt8] {
        if case .bytes(let range) = node { return self[range] }
        var out: [UInt8] = []
        // Names and scalars are all written already: only punctuation is added, about two bytes a member.
        out.reserveCapacity(bytes.count + bytes.count / 4 + 16)
        bytes.withUnsafeBufferPointer { node.write(from: $0, to: &out) }
        return out
    }

    /// The bytes at `range`, copied.
    subscript(range: Range<Int>) -> [UInt8] { Array(bytes[range]) }
}
