#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueueCore

/// The values whose own `Codable` conformance is not what shared content
/// wants, each with the encoding ``ShareQueueCodable/SharedContent`` documents: `Date` as ISO-8601
/// UTC with milliseconds, `URL` as its absolute string, `UUID` as its string,
/// `Data` as Base64, `Decimal` and `JSONValue` as their exact JSON.
enum FoundationValues {
    /// The types read here rather than through their own `Decodable` conformance.
    enum Special {
        case date, url, uuid, data, decimal, json

        /// The special type `type` is, or nil: compared by identity, a few compares for an app's own types.
        init?(_ type: Any.Type) {
            if type == Date.self { self = .date } else if type == URL.self { self = .url } else if type == UUID.self { self = .uuid }
            else if type == Data.self { self = .data } else if type == Decimal.self { self = .decimal } else if type == JSONValue.self { self = .json }
            else { return nil }
        }
    }

    /// The value at `start` in `json` read as `type`, which is `special`.
    static func value<Value>(_ special: Special, as type: Value.Type, from json: CheckedJSON, at start: Int,
                             _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Value {
        func corrupted(_ what: String) -> DecodingError {
            DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath(), debugDescription: what))
        }
        func string(_ name: String) throws -> String {
            guard json.kind(at: start) == .string else {
                throw DecodingError.typeMismatch(type, DecodingError.Context(codingPath: codingPath(), debugDescription: "expected \(name) as a string, found \(json.kind(at: start).name)"))
            }
            return json.string(at: start)
        }
        // `special` says which type `Value` is, so each value below is a `Value` already; the cast only tells the compiler.
        switch special {
        case .date:
            // A date stored without escapes, as every producer writes one, is read from its bytes without making its text.
            let (end, hasEscapes) = json.kind(at: start) == .string ? json.endOfString(at: start) : (start, true)
            if !hasEscapes, let date = ISO8601Milliseconds.parse(json.bytes[(start + 1)..<(end - 1)]) { return unsafeBitCast(date, to: type) }
            let text = try string("a date")
            guard let date = ISO8601Milliseconds.parse(text) else { throw corrupted("not a date such as 2026-11-29T14:52:20.123Z or 2026-11-29T15:52:20.123+01:00: '\(text.prefix(100))'") }
            return unsafeBitCast(date, to: type)
        case .url:
            let text = try string("a URL")
            guard let url = URL(string: text) else { throw corrupted("not a URL: '\(text.prefix(200))'") }
            return unsafeBitCast(url, to: type)
        case .uuid:
            let text = try string("a UUID")
            guard let uuid = UUID(uuidString: text) else { throw corrupted("not a UUID: '\(text.prefix(100))'") }
            return unsafeBitCast(uuid, to: type)
        case .data:
            let text = try string("Base64 data")
            guard let data = Data(base64Encoded: text) else { throw corrupted("not Base64 data") }
            return unsafeBitCast(data, to: type)
        case .decimal:
            guard json.kind(at: start) == .number else {
                throw DecodingError.typeMismatch(type, DecodingError.Context(codingPath: codingPath(), debugDescription: "expected a number, found \(json.kind(at: start).name)"))
            }
            let literal = String(decoding: json.bytes[json.literal(at: start)], as: UTF8.self)
            guard let decimal = Decimal(string: literal) else { throw corrupted("the number \(literal.prefix(100)) does not fit a Decimal") }
            return unsafeBitCast(decimal, to: type)
        case .json:
            return unsafeBitCast(json.value(at: start), to: type)
        }
    }
}
