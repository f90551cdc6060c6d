import ShareQueueCore

extension DrainedRecord {
    /// The record's `json` value read as `type`, with the encodings
    /// `SharedContent` describes. Fields the type does not know are ignored
    /// (they stay in the stored record); the kind is not checked, so compare
    /// `record.kind` with the type's `SharedContent.contentKind` when a queue holds several types.
    /// The value is read from `storedJSON`, which the drain has checked, without building the record.
    /// - Throws: `.badData` when the record holds no JSON value or the value
    ///   does not decode as `type`; the `DecodingError` is the cause.
    public func decode<Value: Decodable>(_ type: Value.Type) throws(ShareQueueError) -> Value {
        let layout = self.layout
        guard let content = layout.content else {
            throw ShareQueueError(.badData, "record \(id) of kind \(layout.kindValue) holds no JSON value to decode as \(Value.self)")
        }
        return try ContentDecoder.decode(type, from: layout.json, at: content, recordID: id)
    }
}

extension Record {
    /// The `json` value read as `type`; see `DrainedRecord.decode(_:)`.
    /// - Throws: `.badData` when there is no JSON value or it does not decode as `type`.
    public func decode<Value: Decodable>(_ type: Value.Type) throws(ShareQueueError) -> Value {
        guard let json = jsonValue else { throw ShareQueueError(.badData, "record \(id) of kind \(kind) holds no JSON value to decode as \(Value.self)") }
        // Written out for the decoder, which reads JSON text; a value built in code is checked to read back as itself.
        let text: CheckedJSON
        do { text = try CheckedJSON(writing: json) } catch {
            throw ShareQueueError(.badData, "record \(id) does not decode as \(Value.self): its value is not JSON (\(error.message))", underlying: error)
        }
        return try ContentDecoder.decode(type, from: text, at: 0, recordID: id)
    }
}

extension ContentDecoder {
    /// The value at `start` read as `type`, with the drain's error for one that does not decode.
    static func decode<Value: Decodable>(_ type: Value.Type, from json: CheckedJSON, at start: Int, recordID: @autoclosure () -> String) throws(ShareQueueError) -> Value {
        do { return try ContentDecoder(json: json.forDecoding(), start: start).decodeValue(type) } catch {
            throw ShareQueueError(.badData, "record \(recordID()) does not decode as \(Value.self): \(DecodingFailure.describe(error))", underlying: error)
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
