import Foundation
import ShareQueue
import SharedTypes

/// The app's own storage: the links by record id, and the current wallpaper,
/// in one JSON file. A real app would use its database, with the record id as
/// the primary key.
///
/// The drain calls its handlers on a thread of its own, so the store is
/// `Sendable`: a lock guards its contents.
final class HostStore: @unchecked Sendable {
    // @unchecked: `contents` and `newLinks` are only touched while `lock` is held.
    struct Contents: Codable, Equatable {
        var links: [String: SharedLink] = [:]
        var wallpaper: CurrentWallpaper?
    }

    let url: URL
    private let lock = NSLock()
    private var stored = Contents()
    private var added = 0

    init(path: String) throws {
        url = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: path) {
            stored = try Self.decoder().decode(Contents.self, from: Data(contentsOf: url))
        }
    }

    /// What is stored now.
    var contents: Contents { lock.withLock { stored } }
    /// Links this run added; a link delivered again is not new.
    var newLinks: Int { lock.withLock { added } }

    /// Saves one delivered batch of links. They are kept by record id, so a batch
    /// delivered again (a drain stopped before its checkpoint offers it again)
    /// replaces itself instead of adding duplicates.
    func save(_ links: [DrainedValue<SharedLink>]) throws {
        try update { contents in for link in links { contents.links[link.id] = link.value } }
    }

    /// Saves the newest wallpaper of a batch.
    func save(_ wallpapers: [DrainedValue<CurrentWallpaper>]) throws {
        guard let newest = wallpapers.last else { return }
        try update { $0.wallpaper = newest.value }
    }

    private func update(_ change: (inout Contents) -> Void) throws {
        try lock.withLock {
            var updated = stored
            change(&updated)
            guard updated != stored else { return }
            // Written to a temporary file and renamed: a crash leaves the old file or the new one.
            try Self.encoder().encode(updated).write(to: url, options: .atomic)
            added += updated.links.count - stored.links.count
            stored = updated
        }
    }

    private static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970   // the precision the queue keeps
        return encoder
    }

    private static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }
}
