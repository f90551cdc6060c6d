import ShareQueue

/// The wallpaper the extension last saw: a keyed value, where only the newest
/// record matters, published only when it changes.
///
/// It holds no time of its own: "publish if changed" compares the content, and
/// a timestamp would make every publish a change. The record's date says when.
public struct CurrentWallpaper: SharedContent, Equatable, Sendable {
    public static let contentKind: Record.Kind = "current-wallpaper"

    public var name: String
    /// The image's SHA-256 in hex, if the extension read the image.
    public var imageSHA256: String?

    public init(name: String, imageSHA256: String? = nil) {
        self.name = name
        self.imageSHA256 = imageSHA256
    }
}
