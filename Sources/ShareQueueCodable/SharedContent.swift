import ShareQueueCore
import ShareQueueSystem

/// A content type that names its records' kind, so that the name survives
/// renaming the type and a host can tell the types apart.
///
/// Any `Encodable` value can be appended and any `Decodable` one drained; a
/// type that conforms here stores ``contentKind`` as the record's kind, any
/// other its type name. Values are stored as compact JSON with object members
/// sorted by name, so that equal values are equal bytes: numbers exactly, `Date` as
/// ISO-8601 UTC with milliseconds (`2026-11-29T14:52:20.123Z`; rounded to the
/// millisecond), `URL` as its absolute string, `UUID` as its upper-case
/// string, `Data` as Base64 with padding, `Decimal` as a JSON number, and
/// `JSONValue` as itself.
///
/// Declare it for every type an extension shares: `static let contentKind: Record.Kind = "link"`.
/// A type without it is filed under its name, and renaming the type then leaves
/// the records already queued under the old name to no handler: a typed drain
/// stops at them, and a ``ContentRouter`` sets them aside.
public protocol SharedContent: Codable {
    /// The kind of this type's records: 1 to 256 bytes without control characters,
    /// not `text`, `url` or `file`. Keep it when the type changes, or older records stop matching.
    static var contentKind: Record.Kind { get }
}

extension Record.Kind {
    /// The kind of records holding values of `type`: its `SharedContent.contentKind`,
    /// or else its name as Swift writes it without the module, such as `SharedLink`.
    /// That name leaves out enclosing types and modules (`A.Item` and `B.Item` are both
    /// `Item`), so that it is the same in every build; types that share a name must
    /// conform to `SharedContent` with kinds of their own, or their records mix.
    public init<Value>(for type: Value.Type) {
        // Asked at every call, not kept: a conformance may be isolated to an actor, and so hold
        // on one thread and not on another; and `contentKind` may be computed.
        if let content = type as? any SharedContent.Type {
            self = content.contentKind
        } else {
            self = TypeNames.kind(of: type)
        }
    }
}

/// The names of the last few types asked about as kinds, each spelled once.
///
/// Spelling a type's name demangles it (7,000 instructions, a quarter of an append), and a
/// typed append of a type that does not conform to `SharedContent` asks at every record,
/// most often about a type it asked about just before. (A dictionary's hashing would cost
/// more than the search.)
private enum TypeNames {
    static func kind<Value>(of type: Value.Type) -> Record.Kind {
        let identity = ObjectIdentifier(type)
        if let found = lock.withLock({ recent.first { $0.type == identity }?.kind }) { return found }
        let kind = Record.Kind(rawValue: String(describing: type))
        lock.withLock {
            if recent.count == 8 { recent.removeLast() }
            recent.insert((identity, kind), at: 0)
        }
        return kind
    }

    private static let lock = ThreadLock()
    /// Newest first, at most 8.
    // Guarded by `lock`.
    nonisolated(unsafe) private static var recent: [(type: ObjectIdentifier, kind: Record.Kind)] = []
}
