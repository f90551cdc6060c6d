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
    /// `Value` read from `json` if it is one of these types; nil for any other.
    static func value<Value>(_ type: Value.Type, from json: JSONValue, codingPath: [any CodingKey]) throws -> Value? {
        func corrupted(_ what: String) -> DecodingError {
            DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: what))
        }
        func string(_ name: String) throws -> String {
            guard case .string(let text) = json else {
                throw DecodingError.typeMismatch(type, DecodingError.Context(codingPath: codingPath, debugDescription: "expected \(name) as a string, found \(json.kindName)"))
            }
            return text
        }
        if type == Date.self {
            let text = try string("a date")
            guard let date = ISO8601Milliseconds.parse(text) else { throw corrupted("not an ISO-8601 date such as 2026-11-29T14:52:20.123Z: '\(text.prefix(100))'") }
            return date as? Value
        }
        if type == URL.self {
            let text = try string("a URL")
            guard let url = URL(string: text) else { throw corrupted("not a URL: '\(text.prefix(200))'") }
            return url as? Value
        }
        if type == UUID.self {
            let text = try string("a UUID")
            guard let uuid = UUID(uuidString: text) else { throw corrupted("not a UUID: '\(text.prefix(100))'") }
            return uuid as? Value
        }
        if type == Data.self {
            let text = try string("Base64 data")
            guard let data = Data(base64Encoded: text) else { throw corrupted("not Base64 data") }
            return data as? Value
        }
        if type == Decimal.self {
            guard case .number(let literal) = json else {
                throw DecodingError.typeMismatch(type, DecodingError.Context(codingPath: codingPath, debugDescription: "expected a number, found \(json.kindName)"))
            }
            guard let decimal = Decimal(string: literal) else { throw corrupted("the number \(literal.prefix(100)) does not fit a Decimal") }
            return decimal as? Value
        }
        if type == JSONValue.self { return json as? Value }
        return nil
    }
}
