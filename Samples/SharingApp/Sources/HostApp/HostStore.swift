import Foundation
import SharedTypes

/// The app's own storage: the links by record id, and the current wallpaper,
/// in one JSON file. A real app would use its database, with the record id as
/// the primary key.
struct HostStore {
    struct Contents: Codable, Equatable {
        var links: [String: SharedLink] = [:]
        var wallpaper: CurrentWallpaper?
    }

    let url: URL
    private(set) var contents = Contents()
    /// Links this run added; a link delivered again is not new.
    private(set) var newLinks = 0

    init(path: String) throws {
        url = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: path) {
            contents = try Self.decoder().decode(Contents.self, from: Data(contentsOf: url))
        }
    }

    /// Saves one delivered batch. Links are kept by record id, so a batch
    /// delivered again (a drain stopped before its checkpoint offers it again)
    /// replaces itself instead of adding duplicates.
    mutating func save(links: [(id: String, link: SharedLink)], wallpaper: CurrentWallpaper? = nil) throws {
        var updated = contents
        for (id, link) in links { updated.links[id] = link }
        if let wallpaper { updated.wallpaper = wallpaper }
        guard updated != contents else { return }
        // Written to a temporary file and renamed: a crash leaves the old file or the new one.
        try Self.encoder().encode(updated).write(to: url, options: .atomic)
        newLinks += updated.links.count - contents.links.count
        contents = updated
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
