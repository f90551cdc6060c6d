#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueue

/// A value taken out of the queue by a typed drain, with its record's labels.
public struct DrainedValue<Value> {
    /// The content, decoded.
    public let value: Value
    /// The record's id, stable across redeliveries: what a consumer deduplicates on.
    public let id: String
    /// When the producer appended it, to the millisecond.
    public let date: Date
    /// Who produced it, such as the extension's name.
    public let source: String
    /// The record's key, if it has one.
    public let key: String?
    /// The producer's own labels.
    public let meta: JSONMembers<String>?
    /// Files that travel with the record, with the paths the drain gave them.
    public let attachments: [Attachment]?
}

extension DrainedValue: Sendable where Value: Sendable {}

extension QueueDrainer {
    /// Drains the records of `type`'s kind, decoded, into `body`, a batch at a time.
    ///
    /// `try drainer.drain(SharedLink.self) { links in try save(links) }`
    ///
    /// A batch `body` returns from is delivered; if it throws, that batch and
    /// everything after it stay queued (the drain throws `.tryAgain` with the
    /// error as its cause), so save idempotently, by ``ShareQueueCodable/DrainedValue/id``. A record
    /// of another kind is moved to the dead letters at once, since this host cannot
    /// take it; a record of this kind that does not decode is refused, and becomes a
    /// dead letter after `maxAttempts` drains. Both stay recoverable with
    /// `requeueDeadLetters()`, for example by a newer host that knows them.
    /// - Parameters:
    ///   - type: The content type; its records are those of kind ``Record/Kind/init(for:)``.
    ///   - body: Receives each batch's values in queue order.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: What `drain(into:)` throws.
    @discardableResult
    public func drain<Value: Decodable>(_ type: Value.Type, _ body: ([DrainedValue<Value>]) throws -> Void) throws(ShareQueueError) -> DrainSummary {
        let result: Result<DrainSummary, ShareQueueError> = withoutActuallyEscaping(body) { body in
            var sink = ValueSink<Value>(kind: Record.Kind(for: type), body: body)
            do throws(ShareQueueError) { return .success(try drain(into: &sink)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

/// Decodes each batch's records of one kind and hands the values on; refuses the rest.
struct ValueSink<Value: Decodable>: DrainSink {
    let kind: Record.Kind
    let body: ([DrainedValue<Value>]) throws -> Void

    func deliver(_ batch: DrainBatch) throws {
        var values: [DrainedValue<Value>] = []
        values.reserveCapacity(batch.records.count)
        var refused: [RecordRefusal.Refused] = []
        for drained in batch.records {
            let record = drained.record
            guard record.kind == kind else {
                refused.append(.init(id: record.id, reason: "a record of kind \(record.kind), not \(kind)", isFinal: true))
                continue
            }
            guard let date = ISO8601Milliseconds.parse(record.date) else {
                refused.append(.init(id: record.id, reason: "its date is not ISO-8601: '\(record.date.prefix(100))'"))
                continue
            }
            do {
                let value = try record.decode(Value.self)
                values.append(DrainedValue(value: value, id: record.id, date: date, source: record.source, key: record.key,
                                           meta: record.meta, attachments: record.attachments))
            } catch {
                refused.append(.init(id: record.id, reason: error.message))
            }
        }
        if !refused.isEmpty { throw RecordRefusal(refused) }
        try body(values)
    }
}
