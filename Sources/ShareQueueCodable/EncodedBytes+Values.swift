#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueueCore

// The values written without an encoder of their own: scalars and lists of them met
// through a generic call (a `[String]` member, say), and the Foundation values whose
// own `Codable` conformance is not what shared content wants.

extension EncodedBytes {
    /// Writes `value` if it is a scalar or has an encoding of its own; nil for any other.
    ///
    /// A scalar, or a list of them, is written as its own `encode(to:)` would have it written, with no encoder made.
    /// The others have the encodings ``ShareQueueCodable/SharedContent`` documents: `Date` as ISO-8601
    /// UTC with milliseconds, `URL` as its absolute string, `UUID` as its string,
    /// `Data` as Base64, `Decimal` and `JSONValue` as their exact JSON.
    /// - Parameter path: Where `value` is, for an error.
    func special<Value>(_ value: Value, at path: @autoclosure () -> [any CodingKey]) throws -> EncodedNode? {
        // Comparing types first keeps the common case, a type of the app's own, to a few compares.
        let type = Value.self
        if type == String.self, let text = value as? String { return string(text) }
        if type == Bool.self, let flag = value as? Bool { return bool(flag) }
        if type == Int.self, let number = value as? Int { return integer(number) }
        if type == Double.self, let number = value as? Double { return try float(number, at: path()) }
        // Lists of scalars, the commonest lists in shared content (tags, say).
        if type == [String].self, let strings = value as? [String] { return list(strings) { string($1) } }
        if type == [Int].self, let numbers = value as? [Int] { return list(numbers) { integer($1) } }
        if type == [Double].self, let numbers = value as? [Double] {
            return try list(numbers) { index, number in try float(number, at: path() + [CoderKey(index: index)]) }
        }
        if type == Date.self, let date = value as? Date {
            guard let milliseconds = ISO8601Milliseconds.milliseconds(date) else {
                throw EncodingError.invalidValue(date, EncodingError.Context(codingPath: path(), debugDescription: "a date must lie in the years 1 to 9999"))
            }
            return timestamp(millisecondsSince1970: milliseconds)
        }
        if type == URL.self, let url = value as? URL { return string(url.absoluteString) }
        if type == UUID.self, let uuid = value as? UUID { return string(uuid.uuidString) }
        if type == Data.self, let data = value as? Data { return string(data.base64EncodedString()) }
        if type == Decimal.self, let decimal = value as? Decimal {
            guard decimal.isFinite else {
                throw EncodingError.invalidValue(decimal, EncodingError.Context(codingPath: path(), debugDescription: "JSON has no \(decimal)"))
            }
            return json(Array(decimal.description.utf8))
        }
        if type == JSONValue.self, let value = value as? JSONValue { return json(value.compactJSON) }
        return nil
    }
}
