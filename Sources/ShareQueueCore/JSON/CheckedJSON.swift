/// JSON text that this package's parser has already checked (a stored record a
/// drain accepted, say), read where it lies without checking it again.
///
/// Positions are byte offsets into ``bytes``: a value is known by the offset of
/// its first byte. Nothing here validates: reading bytes that were not checked
/// gives meaningless answers (never a crash, since every index is bounds-checked).
/// Names compare as UTF-8 bytes, and strings are unescaped only when read.
package struct CheckedJSON: Sendable {
    /// The checked text.
    package let bytes: [UInt8]

    /// Where the arrays and objects end, for a decoding that may skip them once at each level they nest in.
    private let skips: ContainerSkips?

    /// Bytes a parser of this package accepted as JSON.
    package init(checked bytes: [UInt8]) {
        self.bytes = bytes
        skips = nil
    }

    private init(_ bytes: [UInt8], skips: ContainerSkips?) {
        self.bytes = bytes
        self.skips = skips
    }

    /// The same text for one decoding: a decoder lists each object's members and each
    /// array's elements, skipping every nested value, so a value nested n deep is
    /// skipped at each of its n levels. Once skipping has cost more than reading the
    /// text twice, where each array and object ends is noted in one pass and looked up,
    /// so that no nesting multiplies the work.
    package func forDecoding() -> CheckedJSON { CheckedJSON(bytes, skips: ContainerSkips(budget: 2 * bytes.count + 4096)) }

    /// `value` written as compact JSON, checked to read back as the same value: a value
    /// built in code may hold a number literal that is not one (`1,2` would read as two numbers).
    /// - Throws: `ShareQueueError` of kind `.badData` when it does not.
    package init(writing value: JSONValue) throws(ShareQueueError) {
        let bytes = value.compactJSON
        guard try JSONParser.parse(bytes) == value else { throw ShareQueueError(.badData, "a number literal is not a JSON number") }
        self.init(checked: bytes)
    }

    /// `null`, for a value that is absent.
    package static let null = CheckedJSON(checked: Array("null".utf8))

    /// What a value is, told by its first byte.
    package enum Kind: Equatable, Sendable {
        case null, bool, number, string, array, object
    }

    /// A member of an object: where its name's contents lie (between the quotes) and where its value starts.
    package struct Member: Sendable {
        package let name: Range<Int>
        package let nameHasEscapes: Bool
        package let value: Int
    }

    /// The offset of the first byte from `index` on that is not whitespace.
    package func skippingWhitespace(from index: Int) -> Int {
        var index = index
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return index
            }
        }
        return index
    }

    /// The kind of the value at `start`.
    package func kind(at start: Int) -> Kind {
        guard start < bytes.count else { return .null }
        switch bytes[start] {
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "{"): return .object
        default: return .number
        }
    }

    /// Whether the value at `start`, a boolean, is `true`.
    package func isTrue(at start: Int) -> Bool { start < bytes.count && bytes[start] == UInt8(ascii: "t") }

    /// The end of the string whose opening quote is at `start` (just past its closing quote),
    /// and whether it holds escapes.
    package func endOfString(at start: Int) -> (end: Int, hasEscapes: Bool) {
        var index = start + 1
        var hasEscapes = false
        while true {
            index = JSONParser.endOfPlainRun(bytes, from: index)
            guard index < bytes.count else { return (bytes.count, hasEscapes) }
            if bytes[index] == UInt8(ascii: "\"") { return (index + 1, hasEscapes) }
            // A backslash (checked text holds no control character in a string): the
            // escaped byte is never a quote's end, and a `\u`'s hex digits are plain.
            hasEscapes = true
            index += 2
        }
    }

    /// The end of the value at `start`: just past its last byte.
    package func end(ofValueAt start: Int) -> Int {
        guard start < bytes.count else { return bytes.count }
        switch bytes[start] {
        case UInt8(ascii: "\""): return endOfString(at: start).end
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard let skips else { return endOfContainer(at: start) }
            return skips.end(ofContainerAt: start, in: self)
        default:
            // A number or a literal word ends at a delimiter or whitespace.
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: return index
                default: index += 1
                }
            }
            return index
        }
    }

    /// The end of the array or object at `start`, found by reading to its close.
    fileprivate func endOfContainer(at start: Int) -> Int {
        // Counted, not recursed into: a nested value costs no stack.
        var depth = 0
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""): index = endOfString(at: index).end; continue
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return index + 1 }
            default: break
            }
            index += 1
        }
        return bytes.count
    }

    /// The text of the string at `start`, its escapes decoded.
    package func string(at start: Int) -> String {
        let (end, hasEscapes) = endOfString(at: start)
        let span = JSONParser.StringSpan(contents: (start + 1)..<max(start + 1, end - 1), hasEscapes: hasEscapes)
        return JSONParser(bytes).string(span)
    }

    /// The bytes of the number at `start`, as written.
    package func literal(at start: Int) -> Range<Int> { start..<end(ofValueAt: start) }

    /// The value at `start`, built: for a reader that asks for the JSON itself.
    package func value(at start: Int) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.index = start
        // Checked already, so parsing it again cannot fail.
        return (try? parser.parseValue()) ?? .null
    }

    /// Calls `body` with each member of the object at `start`, in order, duplicates included.
    package func forEachMember(ofObjectAt start: Int, _ body: (Member) -> Void) {
        var index = skippingWhitespace(from: start + 1)
        while index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            let (nameEnd, hasEscapes) = endOfString(at: index)
            let colon = skippingWhitespace(from: nameEnd)
            let value = skippingWhitespace(from: colon + 1)
            body(Member(name: (index + 1)..<max(index + 1, nameEnd - 1), nameHasEscapes: hasEscapes, value: value))
            let after = skippingWhitespace(from: end(ofValueAt: value))
            guard after < bytes.count, bytes[after] == UInt8(ascii: ",") else { return }
            index = skippingWhitespace(from: after + 1)
        }
    }

    /// The members of the object at `start`, in order, duplicates included.
    package func members(ofObjectAt start: Int) -> [Member] {
        var members: [Member] = []
        // Most objects a value decodes from are small: one allocation, not a growing one.
        members.reserveCapacity(16)
        forEachMember(ofObjectAt: start) { members.append($0) }
        return members
    }

    /// Where each element of the array at `start` starts, in order.
    package func elements(ofArrayAt start: Int) -> [Int] {
        var elements: [Int] = []
        var index = skippingWhitespace(from: start + 1)
        guard index < bytes.count, bytes[index] != UInt8(ascii: "]") else { return elements }
        while index < bytes.count {
            elements.append(index)
            let after = skippingWhitespace(from: end(ofValueAt: index))
            guard after < bytes.count, bytes[after] == UInt8(ascii: ",") else { break }
            index = skippingWhitespace(from: after + 1)
        }
        return elements
    }

    /// A member's name, its escapes decoded.
    package func name(of member: Member) -> String {
        JSONParser(bytes).string(JSONParser.StringSpan(contents: member.name, hasEscapes: member.nameHasEscapes))
    }

    /// Whether a member's name is `text`, compared as UTF-8 bytes (never by canonical equivalence).
    package func name(of member: Member, is text: String) -> Bool {
        let utf8 = text.utf8
        guard !member.nameHasEscapes else {
            // An escape of 2 to 12 stored bytes makes 1 to 4 bytes of text, so a name stored more than
            // 6 times longer than `text` is not it: a long escaped name is not decoded for every name looked up.
            guard member.name.count <= 6 * utf8.count else { return false }
            return ByteKey.equal(name(of: member), text)
        }
        guard utf8.count == member.name.count else { return false }
        if let same = utf8.withContiguousStorageIfAvailable({ stored(member.name, equal: $0) }) { return same }
        return bytes[member.name].elementsEqual(utf8)
    }

    private func stored(_ range: Range<Int>, equal text: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            guard range.upperBound <= buffer.count, range.count == text.count else { return false }
            return range.isEmpty || bytesEqual(buffer.baseAddress! + range.lowerBound, text.baseAddress!, range.count)
        }
    }

    /// Whether `count` bytes at `a` and `b` are the same, compared one by one (no C library below the platform layer).
    private func bytesEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        for offset in 0..<count where a[offset] != b[offset] { return false }
        return true
    }
}

/// Where the arrays and objects of one decoding's text end: read to their close while
/// that costs less than a budget, then noted for all of them in one pass.
///
/// `@unchecked Sendable` because `CheckedJSON` is: a decoding makes its own with
/// `forDecoding()` and reads it on the one thread it runs on, never sharing it.
private final class ContainerSkips: @unchecked Sendable {
    /// Bytes that skipping may still read before the ends are noted.
    private var budget: Int
    /// Where each array and object starts, in order, and where it ends; empty until noted.
    private var starts: [Int] = [], ends: [Int] = []
    private var noted = false

    init(budget: Int) { self.budget = budget }

    func end(ofContainerAt start: Int, in json: CheckedJSON) -> Int {
        if noted {
            // Binary search: `starts` is in increasing order.
            var low = 0, high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle] < start { low = middle + 1 } else { high = middle }
            }
            if low < starts.count, starts[low] == start { return ends[low] }
            return json.endOfContainer(at: start)
        }
        let end = json.endOfContainer(at: start)
        budget -= end - start
        if budget < 0 { note(json) }
        return end
    }

    /// Notes where every array and object ends, in one pass.
    private func note(_ json: CheckedJSON) {
        let bytes = json.bytes
        var open: [Int] = []
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""): index = json.endOfString(at: index).end; continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                open.append(starts.count)
                starts.append(index)
                ends.append(bytes.count)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if let position = open.popLast() { ends[position] = index + 1 }
            default: break
            }
            index += 1
        }
        noted = true
    }
}
