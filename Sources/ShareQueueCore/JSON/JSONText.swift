/// A validated JSON document in compact form: the producer's own tokens, in
/// its own order, with insignificant whitespace removed.
public struct JSONText: Sendable, Hashable {
    /// The compact JSON, UTF-8.
    public let bytes: [UInt8]

    /// Validates `bytes` as one JSON value (RFC 8259, strict UTF-8) and compacts it.
    /// - Parameter bytes: The JSON text, UTF-8.
    /// - Throws: `ShareQueueError` of kind `.badData`, saying where the JSON breaks.
    public init(validating bytes: [UInt8]) throws(ShareQueueError) {
        _ = try JSONParser.parse(bytes)
        self.bytes = JSONParser.compact(bytes)
    }

    /// Bytes that an encoder of this package wrote as compact JSON, taken
    /// unchecked: an append checks the whole record before writing it anyway,
    /// and refuses one whose value is not JSON.
    package init(encoded bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The JSON as a value, parsed now.
    package var value: JSONValue {
        // Validated at creation, so parsing again cannot fail.
        (try? JSONParser.parse(bytes)) ?? .null
    }
}
