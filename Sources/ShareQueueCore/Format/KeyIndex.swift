import ShareQueueSystem

/// The queue's `keys` folder: for each key published with
/// ``QueueAppender/appendIfChanged(_:)``, the id and content digest of the last
/// record appended with that key, one small file per key.
///
/// Read and written only under the producers' lock. Drains never touch it, but
/// to remove an entry's temporary file that a killed producer left a day ago, so
/// it outlives the records it names. It is distrusted like every file in the
/// shared directory: an entry that is not a small regular file holding one
/// well-formed line counts as no entry, which costs at worst a duplicate
/// record, never a lost one. So does an entry that cannot be read at all (too
/// many open files, an I/O error): the publish appends rather than fail.
struct KeyIndex {
    /// What an entry says: the last record appended with the key, and its content digest.
    struct Entry: Equatable {
        var id: String
        var content: String
    }

    /// The largest entry a reader accepts, in bytes; a real one is about 110.
    static let maximumEntryBytes = 1024

    /// The open `keys` folder.
    private let folder: QueueFolder

    /// Opens the keys folder of `directory`, creating it if `creating` says so.
    /// Nil when it is missing, or something else than a directory stands there
    /// (a symlink is never followed): the queue then has no entry to trust or
    /// remove, and a drain moves that thing aside.
    /// - Throws: when the folder is there but cannot be opened (too many open
    ///   files, say): an entry in it might name older content than the record
    ///   about to be appended, so the append must not go ahead.
    init?(in directory: QueueDirectory, creating: Bool) throws(ShareQueueError) {
        let found: QueueFolder?
        do { found = try directory.folder.subfolder(QueueLayout.keys, creating: creating) } catch {
            if error.isUnexpectedFileType { return nil }
            throw ShareQueueError("cannot use the queue's keys folder", path: directory.path(of: QueueLayout.keys), error, creating: creating)
        }
        guard let found else { return nil }
        folder = found
    }

    /// The entry of `key`, or nil if there is none that can be trusted.
    func entry(of key: String) -> Entry? {
        // Opened without following a link and without blocking on a FIFO; read at most a small bound.
        guard let file = try? folder.open(QueueLayout.keyEntry(key), .readOnly) else { return nil }
        defer { file.close() }
        guard let status = try? file.status(), status.isRegularFile, status.size <= Int64(Self.maximumEntryBytes),
              let bytes = try? file.readFully(count: Self.maximumEntryBytes + 1, at: 0) else { return nil }
        return Self.parse(bytes)
    }

    /// Removes the entry of `key`, so that it cannot name content older than a
    /// record about to be written; with `durably`, a removal is made durable first.
    /// - Throws: when a regular file stays in place (something a reader would trust).
    func forget(_ key: String, durably: Bool) throws(SystemError) {
        let name = QueueLayout.keyEntry(key)
        let removed: Bool
        do { removed = try folder.removeIfPresent(name) } catch {
            // A directory or the like cannot be removed this way, but no reader trusts it either.
            if let status = try folder.status(of: name), status.isRegularFile { throw error }
            return
        }
        if removed && durably { try folder.synchronize(.keyForgotten) }
    }

    /// Makes `entry` the entry of `key`: written to a temporary name, then renamed
    /// into place. Best effort: the record is already appended, and a missing
    /// entry only means that the next publish appends again.
    func write(_ entry: Entry, of key: String) {
        let temporary = QueueLayout.keyEntryTemporary(processID: Host.processID)
        try? folder.remove(temporary)
        guard let file = try? folder.open(temporary, .writeCreateExclusive) else { return }
        let written = (try? file.writeAll(Self.encode(entry))) != nil
        file.close()
        if !written || (try? folder.rename(temporary, to: QueueLayout.keyEntry(key))) == nil {
            try? folder.remove(temporary)
        }
    }

    // MARK: Coding

    /// An entry's one line: `{"id":"<id>","content":"<digest>"}` and a line feed.
    static func encode(_ entry: Entry) -> [UInt8] {
        Array("{\"id\":\"\(entry.id)\",\"content\":\"\(entry.content)\"}\n".utf8)
    }

    /// The entry in `bytes`: one JSON object with a string `id` that is a record
    /// id and a string `content` of 64 lower-case hex digits, other fields
    /// ignored, at most `maximumEntryBytes`; nil for anything else.
    static func parse(_ bytes: [UInt8]) -> Entry? {
        guard bytes.count <= maximumEntryBytes, case .object(let fields)? = try? JSONParser.parse(bytes),
              case .string(let id)? = fields["id"], RecordID.isValid(id),
              case .string(let content)? = fields["content"], isDigest(content) else { return nil }
        return Entry(id: id, content: content)
    }

    private static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The content digest of a record: SHA-256, in lower-case hex, of
    ///
    ///     <kind> LF <"text", "json" or "-"> LF <decimal byte length of the value> LF <the value's bytes>
    ///     <decimal number of attachments> LF, then each attachment's sha256 field and LF, in order
    ///
    /// where the value is the text (UTF-8) or the compact JSON bytes, and empty for "-".
    /// Only what a host would see as the content counts: not the id, date, source, key or meta.
    static func contentDigest(kind: Record.Kind, text: String?, json: [UInt8]?, attachments: [Attachment]?) -> String {
        let (field, value): (String, [UInt8]) = if let text { ("text", Array(text.utf8)) } else if let json { ("json", json) } else { ("-", []) }
        var hasher = SHA256()
        hasher.update(Array("\(kind.rawValue)\n\(field)\n\(value.count)\n".utf8))
        hasher.update(value)
        let list = attachments ?? []
        hasher.update(Array("\(list.count)\n".utf8))
        for attachment in list { hasher.update(Array((attachment.sha256 + "\n").utf8)) }
        return hasher.finish()
    }
}
