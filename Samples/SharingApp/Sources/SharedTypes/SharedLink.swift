import Foundation
import ShareQueue

/// A link the user shared from another app: what the extension appends and the host stores.
///
/// Evolving it safely: the extension and the app update separately, so either
/// may read records the other wrote with an older or newer version of this type.
/// - Add fields only as optionals (`var source: String?`): an older host ignores
///   them (the queue keeps them), and a newer host decodes old records as nil.
/// - Keep ``contentKind``: it is what the records are filed under, not the type's name,
///   so the type may be renamed, but a changed kind no longer matches the records queued.
/// - Never change a field's type or make an optional field required: records already
///   queued would then fail to decode and end up as dead letters. For a new shape,
///   make a new type with a new kind.
public struct SharedLink: SharedContent, Equatable, Sendable {
    public static let contentKind: Record.Kind = "link"

    public var url: URL
    public var title: String
    /// When the user shared it; stored to the millisecond.
    public var sharedAt: Date
    public var tags: [String]
    public var note: String?

    public init(url: URL, title: String, sharedAt: Date, tags: [String] = [], note: String? = nil) {
        self.url = url
        self.title = title
        self.sharedAt = sharedAt
        self.tags = tags
        self.note = note
    }
}
