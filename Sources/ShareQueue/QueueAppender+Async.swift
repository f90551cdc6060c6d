#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension QueueAppender {
    /// Appends one record without blocking the caller, such as a main actor:
    /// the write and its `fsync` run on another thread. See `append(_:)-(RecordDraft)`.
    /// - Parameter draft: The record's content and labels.
    /// - Returns: The record's id. Once this returns the record will be delivered.
    /// - Throws: What the blocking append throws.
    @discardableResult
    public func append(_ draft: RecordDraft) async throws(ShareQueueError) -> String {
        try await OffThread.run { () -> Result<String, ShareQueueError> in
            do throws(ShareQueueError) { return .success(try self.append(draft)) } catch { return .failure(error) }
        }.get()
    }

    /// Appends one value as a record without blocking the caller; it is encoded
    /// here, written and synced on another thread.
    ///
    /// `try await appender.append(link, source: "share-extension")`
    /// - Parameters:
    ///   - value: The content; its record's kind is its type's ``SharedContent/contentKind``.
    ///   - source: Who produces it, 1 to 256 bytes.
    ///   - key: Records with the same key supersede each other when a drain coalesces keys.
    ///   - meta: The producer's own labels.
    /// - Returns: The record's id. Once this returns the record will be delivered.
    /// - Throws: `.badData` for a value that cannot be encoded, and what the blocking append throws.
    @discardableResult
    public func append<Value: SharedContent>(_ value: Value, source: String, key: String? = nil,
                                             meta: JSONMembers<String>? = nil) async throws(ShareQueueError) -> String {
        try await append(try RecordDraft(encoding: value, source: source, key: key, meta: meta))
    }

    /// Appends one value of a type that is not `SharedContent` as a record of the kind given,
    /// without blocking the caller. See the blocking `append(_:kind:source:key:meta:)`.
    /// - Returns: The record's id. Once this returns the record will be delivered.
    /// - Throws: What the blocking form throws.
    @discardableResult
    public func append<Value: Encodable>(_ value: Value, kind: Record.Kind, source: String, key: String? = nil,
                                         meta: JSONMembers<String>? = nil) async throws(ShareQueueError) -> String {
        try await append(try RecordDraft(encoding: value, kind: kind, source: source, key: key, meta: meta))
    }

    /// Appends one value as a record with files that travel with it, without blocking the
    /// caller: the files are copied into the queue, and the record written and synced, on
    /// another thread. See the blocking `append(_:source:key:meta:attaching:)`.
    /// - Returns: The record's id. Once this returns the record and its files will be delivered.
    /// - Throws: What the blocking form throws; the copies are then removed.
    @discardableResult
    public func append<Value: SharedContent>(_ value: Value, source: String, key: String? = nil, meta: JSONMembers<String>? = nil,
                                             attaching files: [URL]) async throws(ShareQueueError) -> String {
        // Encoded here, so that the value need not be Sendable; the copies and the write on another thread.
        let draft = try RecordDraft(encoding: value, source: source, key: key, meta: meta)
        return try await OffThread.run { () -> Result<String, ShareQueueError> in
            do throws(ShareQueueError) { return .success(try self.append(draft, attaching: files)) } catch { return .failure(error) }
        }.get()
    }

    /// Appends one record per value, as one atomic batch, without blocking the caller.
    /// - Parameters:
    ///   - values: The contents, in the order a drain delivers them.
    ///   - source: Who produces them, 1 to 256 bytes.
    ///   - key: A key for every record, or nil.
    ///   - meta: The producer's own labels, on every record.
    /// - Returns: The ids, in order.
    /// - Throws: What the blocking `append(contentsOf:source:key:meta:)` throws; the queue is then unchanged.
    @discardableResult
    public func append<Values: Sequence>(contentsOf values: Values, source: String, key: String? = nil,
                                         meta: JSONMembers<String>? = nil) async throws(ShareQueueError) -> [String]
    where Values.Element: SharedContent {
        var drafts: [RecordDraft] = []
        for value in values { drafts.append(try RecordDraft(encoding: value, source: source, key: key, meta: meta)) }
        let batch = drafts
        return try await OffThread.run { () -> Result<[String], ShareQueueError> in
            do throws(ShareQueueError) { return .success(try self.append(batch)) } catch { return .failure(error) }
        }.get()
    }

    /// Deprecated: see the blocking form; append an array's elements with
    /// `append(contentsOf:source:key:meta:)`.
    @available(*, deprecated, renamed: "append(contentsOf:source:key:meta:)",
               message: "an array is appended one record per element with append(contentsOf:source:)")
    @discardableResult
    public func append<Element: SharedContent>(_ values: [Element], source: String, key: String? = nil,
                                               meta: JSONMembers<String>? = nil) async throws(ShareQueueError) -> [String] {
        try await append(contentsOf: values, source: source, key: key, meta: meta)
    }

    /// Publishes `value` under `key` without blocking the caller: appends it
    /// only if it differs from the last record appended with that key.
    /// See `appendIfChanged(_:source:key:meta:)`.
    /// - Returns: The new record's id and `appended: true`, or the earlier record's id and `appended: false`.
    @discardableResult
    public func appendIfChanged<Value: SharedContent>(_ value: Value, source: String, key: String,
                                                      meta: JSONMembers<String>? = nil) async throws(ShareQueueError) -> (id: String, appended: Bool) {
        let draft = try RecordDraft(encoding: value, source: source, key: key, meta: meta)
        let published = try await OffThread.run { () -> Result<Published, ShareQueueError> in
            do throws(ShareQueueError) {
                let (id, appended) = try self.appendIfChanged(draft)
                return .success(Published(id: id, appended: appended))
            } catch { return .failure(error) }
        }.get()
        return (published.id, published.appended)
    }
}

// The spellings that filed a value under its type's name, when the type declared no kind.
// Unavailable rather than removed, so that the compiler says what to write instead.
extension QueueAppender {
    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued), or pass kind:")
    @discardableResult
    public func append<Value: Encodable>(_ value: Value, source: String, key: String? = nil,
                                         meta: JSONMembers<String>? = nil) async throws(ShareQueueError) -> String {
        fatalError("unavailable")
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued)")
    @discardableResult
    public func append<Value: Encodable>(_ value: Value, source: String, key: String? = nil, meta: JSONMembers<String>? = nil,
                                         attaching files: [URL]) async throws(ShareQueueError) -> String {
        fatalError("unavailable")
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the element type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued)")
    @discardableResult
    public func append<Values: Sequence>(contentsOf values: Values, source: String, key: String? = nil,
                                         meta: JSONMembers<String>? = nil) async throws(ShareQueueError) -> [String]
    where Values.Element: Encodable {
        fatalError("unavailable")
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued)")
    @discardableResult
    public func appendIfChanged<Value: Encodable>(_ value: Value, source: String, key: String,
                                                  meta: JSONMembers<String>? = nil) async throws(ShareQueueError) -> (id: String, appended: Bool) {
        fatalError("unavailable")
    }
}

/// The outcome of a publish, as one Sendable value.
private struct Published: Sendable {
    let id: String
    let appended: Bool
}
