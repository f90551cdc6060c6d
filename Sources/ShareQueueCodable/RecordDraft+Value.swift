#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueueCore

extension RecordDraft {
    /// A draft holding `value` as JSON, of its type's ``SharedContent/contentKind``.
    /// - Parameters:
    ///   - value: The content; its encodings are those `SharedContent` describes.
    ///   - source: Who produces it, 1 to 256 bytes.
    ///   - key: Records with the same key supersede each other when a drain coalesces keys.
    ///   - meta: The producer's own labels.
    ///   - id: A UUID string of the caller's own, so that a retried append keeps its id; nil makes a new one.
    ///   - attachments: Files already copied into the queue with `AttachmentStore.add(copyOf:maxBytes:)`.
    /// - Throws: `.badData` when the value cannot be encoded (a `Double` that is
    ///   not finite, say); the encoder's error is the cause.
    public init<Value: SharedContent>(encoding value: Value, source: String, key: String? = nil, meta: JSONMembers<String>? = nil,
                                      id: String? = nil, attachments: [Attachment]? = nil) throws(ShareQueueError) {
        try self.init(encoding: value, kind: Value.contentKind, source: source, key: key, meta: meta, id: id, attachments: attachments)
    }

    /// A draft holding `value` as JSON, of the kind given: for a value whose type is not
    /// `SharedContent`. A drain takes it with `drain(_:kind:otherKinds:_:)` and the same kind.
    /// - Parameters:
    ///   - value: The content; its encodings are those `SharedContent` describes.
    ///   - kind: The record's kind: 1 to 256 bytes without control characters, not `text`, `url` or `file`.
    ///   - source: Who produces it, 1 to 256 bytes.
    ///   - key: Records with the same key supersede each other when a drain coalesces keys.
    ///   - meta: The producer's own labels.
    ///   - id: A UUID string of the caller's own, so that a retried append keeps its id; nil makes a new one.
    ///   - attachments: Files already copied into the queue with `AttachmentStore.add(copyOf:maxBytes:)`.
    /// - Throws: `.badData` when the value cannot be encoded; the encoder's error is the cause.
    ///   An append of the draft throws `.invalidArgument` for a kind outside those rules.
    public init<Value: Encodable>(encoding value: Value, kind: Record.Kind, source: String, key: String? = nil, meta: JSONMembers<String>? = nil,
                                  id: String? = nil, attachments: [Attachment]? = nil) throws(ShareQueueError) {
        let bytes: [UInt8]
        do { bytes = try ContentEncoder.encode(value) } catch {
            throw ShareQueueError(.badData, "cannot encode the \(Value.self) value", underlying: error)
        }
        self.init(.value(JSONText(encoded: bytes), kind: kind), source: source, key: key, meta: meta, id: id, attachments: attachments)
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued), or pass kind:")
    public init<Value: Encodable>(encoding value: Value, source: String, key: String? = nil, meta: JSONMembers<String>? = nil,
                                  id: String? = nil, attachments: [Attachment]? = nil) throws(ShareQueueError) {
        fatalError("unavailable")
    }
}

extension QueueAppender {
    /// Appends one value as a record of its type's kind and returns its id.
    ///
    /// `try appender.append(link, source: "share-extension")`
    /// - Parameters:
    ///   - value: The content; its record's kind is its type's ``SharedContent/contentKind``.
    ///   - source: Who produces it, 1 to 256 bytes.
    ///   - key: Records with the same key supersede each other when a drain coalesces keys.
    ///   - meta: The producer's own labels.
    /// - Returns: The record's id. Once this returns the record will be delivered.
    /// - Throws: `.badData` for a value that cannot be encoded, and what `append(_:)` throws.
    @discardableResult
    public func append<Value: SharedContent>(_ value: Value, source: String, key: String? = nil,
                                             meta: JSONMembers<String>? = nil) throws(ShareQueueError) -> String {
        try append(RecordDraft(encoding: value, source: source, key: key, meta: meta))
    }

    /// Appends one value of a type that is not `SharedContent` as a record of the kind
    /// given, and returns its id; a drain takes it with `drain(_:kind:otherKinds:_:)`.
    ///
    /// `try appender.append(bookmark, kind: "bookmark", source: "share-extension")`
    /// - Parameters:
    ///   - value: The content.
    ///   - kind: The record's kind: 1 to 256 bytes without control characters, not `text`, `url` or `file`.
    ///   - source: Who produces it, 1 to 256 bytes.
    ///   - key: Records with the same key supersede each other when a drain coalesces keys.
    ///   - meta: The producer's own labels.
    /// - Returns: The record's id. Once this returns the record will be delivered.
    /// - Throws: `.badData` for a value that cannot be encoded, `.invalidArgument` for a kind
    ///   outside those rules, and what `append(_:)` throws.
    @discardableResult
    public func append<Value: Encodable>(_ value: Value, kind: Record.Kind, source: String, key: String? = nil,
                                         meta: JSONMembers<String>? = nil) throws(ShareQueueError) -> String {
        try append(RecordDraft(encoding: value, kind: kind, source: source, key: key, meta: meta))
    }

    /// Appends one value as a record with files that travel with it, and returns its id.
    ///
    /// `try appender.append(photo, source: "share-extension", attaching: [imageURL])`
    ///
    /// Each file is copied into the queue (and synced) before the record is appended; if
    /// a copy or the append fails, the copies made are removed, unless the error says the
    /// record was written (`ShareQueueError.recordWasWritten`). The host receives them as
    /// files of its own in ``DrainedValue/attachments``. The originals are left as they are.
    /// - Parameters:
    ///   - value: The content; its record's kind is its type's ``SharedContent/contentKind``.
    ///   - source: Who produces it, 1 to 256 bytes.
    ///   - key: Records with the same key supersede each other when a drain coalesces keys.
    ///   - meta: The producer's own labels.
    ///   - files: File URLs of the files to attach (a symlink is followed), each at most
    ///     `Attachment.defaultMaxBytes`, at most `Attachment.maximumPerRecord` of them.
    /// - Returns: The record's id. Once this returns the record and its files will be delivered.
    /// - Throws: `.invalidArgument` for a URL that is not a file URL or too many files,
    ///   `.badData` for a file over the limit or not a regular file, `.ioError` (or
    ///   `.permissionDenied`) for one that cannot be read or copied, and what `append(_:)` throws.
    @discardableResult
    public func append<Value: SharedContent>(_ value: Value, source: String, key: String? = nil, meta: JSONMembers<String>? = nil,
                                             attaching files: [URL]) throws(ShareQueueError) -> String {
        try append(RecordDraft(encoding: value, source: source, key: key, meta: meta), attaching: files)
    }

    /// Copies `files` into the queue and appends `draft` with them; removes the copies if that fails.
    package func append(_ draft: RecordDraft, attaching files: [URL]) throws(ShareQueueError) -> String {
        guard files.count <= Attachment.maximumPerRecord else {
            throw ShareQueueError(.invalidArgument, "cannot attach \(files.count) files to one record: at most \(Attachment.maximumPerRecord)")
        }
        let store = AttachmentStore(directory: directory)
        var copies: [Attachment] = []
        do throws(ShareQueueError) {
            for file in files {
                guard file.isFileURL else { throw ShareQueueError(.invalidArgument, "an attachment must be a file URL: \(file)") }
                copies.append(try store.add(copyOf: file.path(percentEncoded: false), maxBytes: Attachment.defaultMaxBytes))
            }
            var attached = draft
            attached.attachments = (attached.attachments ?? []) + copies
            return try append(attached)
        } catch {
            if !error.recordWasWritten { copies.forEach(store.remove) }
            throw error
        }
    }

    /// Appends values as one atomic batch, one record each: after a crash either all of
    /// them are in the queue or none is.
    ///
    /// `try appender.append(contentsOf: links, source: "share-extension")`
    /// - Parameters:
    ///   - values: The contents, in the order a drain delivers them; each record's kind is
    ///     their type's ``SharedContent/contentKind``.
    ///   - source: Who produces them, 1 to 256 bytes.
    ///   - key: A key for every record, or nil.
    ///   - meta: The producer's own labels, on every record.
    /// - Returns: The ids, in order. Once this returns they will be delivered.
    /// - Throws: What `append(_:source:key:meta:)` throws; the queue is then unchanged.
    @discardableResult
    public func append<Values: Sequence>(contentsOf values: Values, source: String, key: String? = nil,
                                         meta: JSONMembers<String>? = nil) throws(ShareQueueError) -> [String]
    where Values.Element: SharedContent {
        var drafts: [RecordDraft] = []
        for value in values { drafts.append(try RecordDraft(encoding: value, source: source, key: key, meta: meta)) }
        return try append(drafts)
    }

    /// Appends `value` under `key` only if it differs from the last record
    /// appended with that key, so that publishing an unchanged value wakes no host.
    ///
    /// `try appender.appendIfChanged(wallpaper, source: "share-extension", key: "wallpaper")`
    /// - Parameters:
    ///   - value: The current value; its record's kind is its type's ``SharedContent/contentKind``.
    ///   - source: Who produces it, 1 to 256 bytes.
    ///   - key: What the value is the current value of.
    ///   - meta: The producer's own labels.
    /// - Returns: The new record's id and `appended: true`, or, if nothing changed,
    ///   the earlier record's id and `appended: false`.
    /// - Throws: `.badData` for a value that cannot be encoded, and what `appendIfChanged(_:)` throws.
    @discardableResult
    public func appendIfChanged<Value: SharedContent>(_ value: Value, source: String, key: String,
                                                      meta: JSONMembers<String>? = nil) throws(ShareQueueError) -> (id: String, appended: Bool) {
        try appendIfChanged(RecordDraft(encoding: value, source: source, key: key, meta: meta))
    }

    /// Deprecated, and kept only so that an array is never appended as one value, one record
    /// of kind `Array<…>` that no drain of the element type takes. Append its elements with
    /// `append(contentsOf:source:key:meta:)`; to append a list as one record, wrap it in a
    /// content type of its own.
    @available(*, deprecated, renamed: "append(contentsOf:source:key:meta:)",
               message: "an array is appended one record per element with append(contentsOf:source:)")
    @discardableResult
    public func append<Element: SharedContent>(_ values: [Element], source: String, key: String? = nil,
                                               meta: JSONMembers<String>? = nil) throws(ShareQueueError) -> [String] {
        try append(contentsOf: values, source: source, key: key, meta: meta)
    }
}

// The spellings that filed a value under its type's name, when the type declared no kind.
// Unavailable rather than removed, so that the compiler says what to write instead.
extension QueueAppender {
    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued), or pass kind:")
    @discardableResult
    public func append<Value: Encodable>(_ value: Value, source: String, key: String? = nil,
                                         meta: JSONMembers<String>? = nil) throws(ShareQueueError) -> String {
        fatalError("unavailable")
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued)")
    @discardableResult
    public func append<Value: Encodable>(_ value: Value, source: String, key: String? = nil, meta: JSONMembers<String>? = nil,
                                         attaching files: [URL]) throws(ShareQueueError) -> String {
        fatalError("unavailable")
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the element type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued)")
    @discardableResult
    public func append<Values: Sequence>(contentsOf values: Values, source: String, key: String? = nil,
                                         meta: JSONMembers<String>? = nil) throws(ShareQueueError) -> [String]
    where Values.Element: Encodable {
        fatalError("unavailable")
    }

    /// Unavailable: a record's kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued)")
    @discardableResult
    public func appendIfChanged<Value: Encodable>(_ value: Value, source: String, key: String,
                                                  meta: JSONMembers<String>? = nil) throws(ShareQueueError) -> (id: String, appended: Bool) {
        fatalError("unavailable")
    }
}
