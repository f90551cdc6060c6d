/// Any JSON value. Numbers keep their literal text, so an integer above 2^53
/// or a long decimal passes through a queue exactly as the producer wrote it.
///
/// Through another coder, such as Foundation's `JSONEncoder` and `JSONDecoder`, a
/// number keeps its exact value if it is an integer that fits `Int64` or `UInt64`;
/// any other number goes through `Double`, so `1.50` becomes `1.5`, an integer of
/// more than 64 bits loses digits, and one beyond `Double`'s range (`1e400`) does
/// not encode at all. ShareQueue's own paths (`compactJSON`, stored records, and
/// the typed coders of `ShareQueueCodable`) keep every literal as it was written.
///
/// Package access: an app sees a record's JSON as ``JSONText``, bytes it decodes with
/// a decoder of its choice, and a typed drain decodes its own types.
///
/// Strings and names are compared as their UTF-8 bytes, never by Swift's canonical
/// equivalence: two values are equal when `compactJSON` writes them as the same bytes.
package enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its literal text, such as `"12345678901234567890"` or `"1.50"`.
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object: its members in order, each name exactly as written (see `JSONMembers`).
    /// A name that occurs twice in the text read counts once, with its last value, where it first occurred.
    case object(JSONMembers<JSONValue>)

    /// Whether both are the same value, strings and names compared as UTF-8 bytes and members in order.
    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let l), .bool(let r)): l == r
        case (.number(let l), .number(let r)): ByteKey.equal(l, r)
        case (.string(let l), .string(let r)): ByteKey.equal(l, r)
        case (.array(let l), .array(let r)): l == r
        case (.object(let l), .object(let r)): l == r
        default: false
        }
    }

    /// Hashes the value as `==` compares it.
    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .number(let literal): hasher.combine(2); ByteKey.hashBytes(of: literal, into: &hasher)
        case .string(let text): hasher.combine(3); ByteKey.hashBytes(of: text, into: &hasher)
        case .array(let elements): hasher.combine(4); hasher.combine(elements)
        case .object(let members): hasher.combine(5); hasher.combine(members)
        }
    }
}

extension JSONValue: Codable {
    /// Reads any JSON value from a decoder; a number goes through `Int64`,
    /// `UInt64` or `Double`, so only integers within 64 bits keep their exact value.
    /// - Throws: `DecodingError` when the decoder holds no JSON value.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .number(String(value))
        } else if let value = try? container.decode(UInt64.self) {
            self = .number(String(value))
        } else if let value = try? container.decode(Double.self) {
            self = .number(String(value))
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode(JSONMembers<JSONValue>.self))
        }
    }

    /// Writes the value to an encoder; a number goes out as `Int64` or `UInt64`
    /// if it is an integer within their range, else as `Double`.
    /// - Throws: `EncodingError.invalidValue` for a number literal that is not one,
    ///   and what the encoder throws (for one beyond `Double`'s range, say).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let literal):
            if let integer = Int64(literal) {
                try container.encode(integer)
            } else if let integer = UInt64(literal) {
                try container.encode(integer)
            } else if let number = Double(literal) {
                try container.encode(number)
            } else {
                throw EncodingError.invalidValue(self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "not a number: '\(literal.prefix(100))'"))
            }
        case .string(let value): try container.encode(value)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }
}

extension JSONValue {
    /// What sort of value this is, as the parser reports one it did not build.
    var kind: JSONParser.Kind {
        switch self {
        case .null: return .null
        case .bool: return .bool
        case .number: return .number
        case .string: return .string
        case .array(let elements): return .array(count: elements.count)
        case .object: return .object
        }
    }
}
