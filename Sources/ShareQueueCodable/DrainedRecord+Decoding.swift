import ShareQueueCore

extension DrainedRecord {
    /// The record's `json` value read as `type`, with the encodings
    /// `SharedContent` describes. Fields the type does not know are ignored
    /// (they stay in the stored record); the kind is not checked, so compare
    /// `record.kind` with `Record.Kind(for:)` when a queue holds several types.
    /// - Throws: `.badData` when the record holds no JSON value or the value
    ///   does not decode as `type`; the `DecodingError` is the cause.
    public func decode<Value: Decodable>(_ type: Value.Type) throws(ShareQueueError) -> Value {
        try record.decode(type)
    }
}

extension Record {
    /// The `json` value read as `type`; see `DrainedRecord.decode(_:)`.
    /// - Throws: `.badData` when there is no JSON value or it does not decode as `type`.
    public func decode<Value: Decodable>(_ type: Value.Type) throws(ShareQueueError) -> Value {
        guard let json else { throw ShareQueueError(.badData, "record \(id) of kind \(kind) holds no JSON value to decode as \(Value.self)") }
        do { return try ContentDecoder(value: json).decodeValue(type) } catch {
            throw ShareQueueError(.badData, "record \(id) does not decode as \(Value.self): \(DecodingFailure.describe(error))", underlying: error)
        }
    }
}

/// A decoding error in one line: what was wrong, and where in the value.
enum DecodingFailure {
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let found), .valueNotFound(_, let found), .dataCorrupted(let found): context = found
        case .keyNotFound(let key, let found):
            return "no '\(key.stringValue)'" + at(found.codingPath)
        @unknown default: return "\(error)"
        }
        return context.debugDescription + at(context.codingPath)
    }

    private static func at(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "" : " at " + path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }
}
