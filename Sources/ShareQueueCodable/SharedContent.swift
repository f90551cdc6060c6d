import ShareQueueCore

/// A content type an extension shares and its host drains: a `Codable` value that
/// declares the kind its records are filed under.
///
/// ```swift
/// struct SharedLink: SharedContent, Equatable, Sendable {
///     static let contentKind: Record.Kind = "link"
///     var url: URL
///     var title: String
///     var sharedAt: Date
///     var tags: [String]
///     var note: String?
/// }
/// ```
///
/// The typed appends, drains, ``ContentRouter`` and `batches(of:)` take only such types,
/// so that every record's kind is one the code names: renaming the type leaves its
/// records' kind as it was, and two types of one name in different modules keep apart.
/// Keep `contentKind` when the type changes, or the records already queued stop matching.
/// A value of a type that is not `SharedContent` goes in and out with an explicit kind:
/// `append(_:kind:source:key:meta:)` and `drain(_:kind:otherKinds:_:)`.
///
/// Values are stored as compact JSON with object members sorted by name, so that equal
/// values are equal bytes: numbers exactly, `Date` as ISO-8601 UTC with milliseconds
/// (`2026-11-29T14:52:20.123Z`; rounded to the millisecond), `URL` as its absolute
/// string, `UUID` as its upper-case string, `Data` as Base64 with padding, and `Decimal` as a
/// JSON number.
public protocol SharedContent: Codable {
    /// The kind of this type's records: 1 to 256 bytes without control characters,
    /// not `text`, `url` or `file`. Keep it when the type changes, or older records stop matching.
    static var contentKind: Record.Kind { get }
}

extension Record.Kind {
    /// The kind of records holding values of `type`: its ``SharedContent/contentKind``.
    public init<Value: SharedContent>(for type: Value.Type) {
        self = type.contentKind
    }

    /// Unavailable: a kind is declared, never taken from a type's name.
    @available(*, unavailable, message: "conform the type to SharedContent and declare its contentKind (its name, such as \"Bookmark\", keeps the records already queued)")
    public init<Value>(for type: Value.Type) {
        self.init(rawValue: String(describing: type))
    }
}
