import Foundation
import ShareQueue
import SharedTypes

/// The app's own storage: the links by record id, the files that came with them, and
/// the current wallpaper, in one JSON file. A real app would use its database, with the
/// record id as the primary key.
///
/// A plain value: the model that owns it lives on the main actor, and the drain calls
/// the model's handlers there, so nothing here needs a lock.
struct HostStore {
    struct Contents: Codable, Equatable {
        var links: [String: SharedLink] = [:]
        /// The files kept for each link, by record id: names in ``filesFolder``.
        var files: [String: [String]] = [:]
        var wallpaper: CurrentWallpaper?
    }

    let url: URL
    /// Where the app keeps the files that came with links: `<store>.files`.
    let filesFolder: URL
    private(set) var contents = Contents()
    /// Links this run added; a link delivered again is not new.
    private(set) var newLinks = 0

    init(path: String) throws {
        url = URL(fileURLWithPath: path)
        filesFolder = URL(fileURLWithPath: path + ".files")
        if FileManager.default.fileExists(atPath: path) {
            contents = try Self.decoder().decode(Contents.self, from: Data(contentsOf: url))
        }
    }

    /// Saves one delivered batch of links, with the names of the files kept for them. They
    /// are kept by record id, so a batch delivered again (a drain stopped before its
    /// checkpoint offers it again) replaces itself instead of adding duplicates.
    mutating func save(_ links: [DrainedValue<SharedLink>], files: [String: [String]]) throws {
        try update { contents in
            for link in links { contents.links[link.id] = link.value }
            contents.files.merge(files) { _, new in new }
        }
    }

    /// Saves the newest wallpaper of a batch.
    mutating func save(_ wallpapers: [DrainedValue<CurrentWallpaper>]) throws {
        guard let newest = wallpapers.last else { return }
        try update { $0.wallpaper = newest.value }
    }

    private mutating func update(_ change: (inout Contents) -> Void) throws {
        var updated = contents
        change(&updated)
        guard updated != contents else { return }
        // Written to a temporary file and renamed: a crash leaves the old file or the new one.
        try Self.encoder().encode(updated).write(to: url, options: .atomic)
        newLinks += updated.links.count - contents.links.count
        contents = updated
    }

    /// Moves the files delivered with `links` into `folder`, as `<record id>-<name>`, and
    /// returns their names by record id. The drain delivered them as files of the app's
    /// own, beside the queue; once moved, they are the store's.
    static func keepFiles(of links: [DrainedValue<SharedLink>], in folder: URL) throws -> [String: [String]] {
        var kept: [String: [String]] = [:]
        for link in links where !link.attachments.isEmpty {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for attachment in link.attachments {
                guard let delivered = attachment.url else { continue }
                let name = link.id + "-" + attachment.name
                let target = folder.appendingPathComponent(name)
                // A batch delivered again brings the file again: the newer copy replaces the one kept.
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.moveItem(at: delivered, to: target)
                kept[link.id, default: []].append(name)
            }
        }
        return kept
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
