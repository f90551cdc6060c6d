import ShareQueueSystem

/// The queue's `attachments` folder: files copied in by producers and handed
/// on by drains. Every name in it is one this code made, and every operation
/// goes through a descriptor of the folder opened without following a
/// symlink, and opens files without following one either, so that a record or
/// a planted link cannot make a drain read, move or delete anything outside it.
public struct AttachmentStore: Sendable {
    /// The queue whose `attachments` folder this is.
    public let directory: QueueDirectory
    static let chunkSize = 256 << 10

    /// The attachments folder of `directory`; nothing is created until a file is added.
    /// - Parameter directory: The queue.
    public init(directory: QueueDirectory) { self.directory = directory }

    var folder: String { directory.path(of: QueueLayout.attachments) }

    /// The absolute path of an attachment's copy in the queue, which a host that
    /// leaves attachments in the queue reads.
    func path(of attachment: Attachment) -> String { FileSystem.absolute(folder) + "/" + attachment.file }

    /// The folder, opened without following a symlink; nil if it does not exist.
    /// - Throws: `.configuration` if something other than a directory stands there.
    func openFolder(creating: Bool = false) throws(ShareQueueError) -> QueueFolder? {
        try directory.subfolder(QueueLayout.attachments, creating: creating)
    }

    /// Copies a file into the queue (temporary name, fsync, rename, fsync of
    /// the folder) and describes it, ready for `RecordDraft.attachments`.
    ///
    /// Takes no lock: the copy has a name of its own. If the append that
    /// should carry it fails, ``remove(_:)`` it, unless the error says the record was written
    /// (``ShareQueueError/recordWasWritten``); a copy that no record refers to
    /// is removed by a drain once it is a day old. The copy is for the records of
    /// one append: a drain may remove it once the records it has read that name it
    /// are delivered, so a record appended later makes a copy of its own.
    /// - Parameters:
    ///   - source: The path of the file to copy; a symlink is followed.
    ///   - maxBytes: The largest file accepted.
    /// - Returns: The attachment, describing the copy.
    /// - Throws: `.badData` for a file over `maxBytes` or not a regular file,
    ///   `.ioError` (or `.permissionDenied`) when it cannot be read or copied;
    ///   the copy is then removed, so a failed copy leaves nothing behind.
    public func add(copyOf source: String, maxBytes: Int64) throws(ShareQueueError) -> Attachment {
        let input: FileDescriptor
        do { input = try FileDescriptor.openFollowingLinks(source) } catch {
            throw ShareQueueError("cannot read the attachment", path: source, error)
        }
        defer { input.close() }
        let status: FileStatus
        do { status = try input.status() } catch { throw ShareQueueError("cannot read the attachment", path: source, error) }
        guard status.isRegularFile else { throw ShareQueueError(.badData, "an attachment must be a regular file", path: source) }
        guard let folderFD = try openFolder(creating: true) else { throw ShareQueueError(.ioError, "the attachments folder vanished", path: folder) }
        // Split at the byte '/': a '/' followed by a combining mark is one Character, and still a folder's end.
        let name = String(decoding: source.utf8.split(separator: UInt8(ascii: "/")).last ?? source.utf8[...], as: UTF8.self)
        let file = RecordID.random() + (MediaType.safeExtension(of: name).map { "." + $0 } ?? "")
        let temporary = QueueLayout.attachmentTemporary(file)
        // nil: the file is over `maxBytes`.
        let copied: (size: Int64, sha256: String)?
        do throws(SystemError) {
            let output = try folderFD.open(temporary, .writeCreateExclusive)
            copied = try output.closeAfter { () throws(SystemError) in try Self.copy(input, to: output, upTo: maxBytes) }
            if copied != nil {
                try folderFD.rename(temporary, to: file)
                try folderFD.synchronize(.attachmentEntry)
            }
        } catch {
            try? folderFD.remove(temporary)
            throw ShareQueueError(error.isNoSpace ? "no space left to copy the attachment" : "cannot copy the attachment", path: folder + "/" + temporary, error)
        }
        guard let copied else {
            try? folderFD.remove(temporary)
            throw ShareQueueError(.badData, "the attachment is over the limit of \(maxBytes) bytes", path: source)
        }
        return Attachment(name: name, file: file, size: copied.size, sha256: copied.sha256, type: MediaType.guess(fileName: name))
    }

    /// Copies `input` to `output` and makes it durable; nil, with the copy
    /// unfinished, as soon as it passes `maxBytes`.
    private static func copy(_ input: FileDescriptor, to output: FileDescriptor, upTo maxBytes: Int64) throws(SystemError) -> (size: Int64, sha256: String)? {
        var hasher = SHA256()
        var size: Int64 = 0
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let n = try input.read(into: &chunk, from: 0)
            if n == 0 { break }
            size += Int64(n)
            guard size <= maxBytes else { return nil }
            hasher.update(chunk[0..<n])
            try output.writeAll(Array(chunk[0..<n]))
        }
        try output.synchronize(.attachmentData)
        return (size, hasher.finish())
    }

    /// Removes a copy made by `add`, after its record was delivered or its append failed.
    /// Does nothing for a name the queue does not make, or a copy already gone.
    /// - Parameter attachment: An attachment ``add(copyOf:maxBytes:)`` returned.
    public func remove(_ attachment: Attachment) {
        guard attachment.hasSafeFileName, let folderFD = try? openFolder() else { return }
        try? folderFD.remove(attachment.file)
    }

    /// Checks that an attachment is a file of this folder with the size and
    /// digest its record promises, reading it whole unless `checked` knows it as it is.
    /// - Returns: the damage found, or nil if the file is as promised.
    /// - Throws: a failure that proves nothing about the file (see ``ReadFailure``): the record is then kept.
    func problem(with attachment: Attachment, checked: CheckedFiles? = nil) throws(ShareQueueError) -> String? {
        try readChecked(attachment, checked: checked, needsBytes: false) { _ throws(SystemError) in }
    }

    /// Why a drain does not read a record's attachments to check them, or nil if it does:
    /// there are more than ``Attachment/maximumPerRecord``, they add up to more than
    /// `options.maxAttachmentBytes`, each entry counted, or one is
    /// mostly holes (unless `options.readsSparseAttachments`). Either costs a producer little
    /// and a drain a read of every byte: one file named many times, sparse files as large as a disk.
    /// Another user's copy that bars it is not among these: see ``othersUnreadable(_:)``.
    func unread(_ files: [Attachment], options: DrainOptions) -> String? {
        let total = Attachment.totalBytes(files), limit = options.maxAttachmentBytes
        if files.count > Attachment.maximumPerRecord {
            return "it has \(files.count) attachments, over the \(Attachment.maximumPerRecord) a record may have"
        }
        if total > limit {
            return "its \(files.count) attachment\(files.count == 1 ? " is" : "s are") \(total == .max ? "more than \(Int64.max)" : String(total)) bytes, over the drain's limit of \(limit) (--max-attachment-bytes)"
        }
        if !options.readsSparseAttachments, let sparse = files.first(where: isMostlyHoles) {
            return "attachment \(sparse.file) is mostly holes of a sparse file, which no producer here writes (--sparse-attachments reads it)"
        }
        return nil
    }

    /// Why a record's copies cannot be read by this drain, where another user owns a copy and
    /// may not let it: in a queue shared with a group, any member
    /// can do so, and the record would stop every drain at it. The record waits among the dead
    /// letters, and a drain puts it back once its owner lets the drain read it (see
    /// `QueueDrainer.putBackWaitingLetters`). Nil otherwise: a copy's own check says what else it is.
    func othersUnreadable(_ files: [Attachment]) -> String? {
        guard !files.isEmpty else { return nil }
        // A folder this drain may not read bars no record for good: the check keeps the record queued,
        // and the next drain moves the folder aside and brings its copies back (see `restoreMissing`).
        guard let folder = try? openFolder() else { return nil }
        for attachment in files where attachment.hasSafeFileName {
            guard let status = try? folder.status(of: attachment.file), status.owner != Host.effectiveUserID else { continue }
            do { try folder.open(attachment.file, .readOnly).close() } catch where error.isAccessDenied {
                return "attachment \(attachment.file) belongs to user \(status.owner) and this drain may not read it"
            } catch {}
        }
        return nil
    }

    /// Whether more than half of an attachment's copy is holes of a sparse file. A producer
    /// here writes every byte of a copy, so such a file was made otherwise, at no cost in disk
    /// to whoever made it, while checking its digest costs a drain a read of every byte.
    /// Files a file system compresses have holes only where whole blocks are zeros.
    /// A copy that cannot be opened or measured is not mostly holes: its check says what it is.
    private func isMostlyHoles(_ attachment: Attachment) -> Bool {
        guard attachment.hasSafeFileName, attachment.size > 0, let folderFD = try? openFolder(),
              let file = try? folderFD.open(attachment.file, .readOnly) else { return false }
        defer { file.close() }
        guard let status = try? file.status(), status.isRegularFile, status.size == attachment.size else { return false }
        return Self.isMostlyHoles(file, status)
    }

    /// Whether more than half of the regular file `file`, whose status is `status`, is holes.
    static func isMostlyHoles(_ file: FileDescriptor, _ status: FileStatus) -> Bool {
        // Holes and data alternate: one pair of calls a stretch, and none past half.
        var holes: Int64 = 0
        var offset: Int64 = 0
        while offset < status.size {
            guard let hole = try? file.nextHole(from: offset), hole < status.size,
                  let data = try? file.nextData(from: hole) ?? status.size else { return false }
            holes += min(data, status.size) - hole
            if holes > status.size / 2 { return true }
            offset = data
        }
        return false
    }

    /// What delivering an attachment came to.
    enum Delivery {
        /// The host's copy is at `path`: made by this delivery (`created` is then its name in the
        /// destination and its status), or one it had already.
        case delivered(path: String, created: (name: String, status: FileStatus)?)
        /// The queue's copy is not what its record promises.
        case damaged(String)
    }

    /// Gives a checked attachment a name in `destination`, a copy that belongs
    /// to the host: written under a temporary name, checked against the record's
    /// size and digest as it is written, synced, then renamed into place. Never a
    /// hard link, which would share the file with whoever can still write the
    /// queue's copy, and never over a file the host has (see ``deliveredName(for:in:)``).
    /// The queue's copy stays until the record's delivery is recorded.
    /// - Returns: the new absolute path, or the damage found in the queue's copy.
    /// - Throws: a failure that proves nothing about the attachment, such as a full disk.
    /// A copy `checked` knows to hold these bytes already, at one of the names a delivery tries, is
    /// used as it is: records naming one file cost one copy, not one each.
    func deliver(_ attachment: Attachment, to destination: String, checked: CheckedFiles? = nil) throws(ShareQueueError) -> Delivery {
        let target = FileSystem.absolute(destination) + "/" + attachment.file
        func failure(_ error: SystemError) -> ShareQueueError {
            ShareQueueError(error.isNoSpace ? "no space left to deliver an attachment" : "cannot deliver an attachment", path: target, error)
        }
        let folder: FileDescriptor
        do { folder = try FileDescriptor.openDirectory(atPath: destination, creating: true) } catch { throw failure(error) }
        defer { folder.close() }
        if let checked, attachment.hasSafeFileName, let name = Self.knownCopy(of: attachment, in: folder, checked: checked) {
            return .delivered(path: FileSystem.absolute(destination) + "/" + name, created: nil)
        }
        let output: FileDescriptor
        var temporary = Self.temporaryName(of: attachment)
        do throws(SystemError) {
            // What cannot be removed there (a directory, in a destination others can write) gives way
            // to a name no one can foresee, rather than stop every drain.
            do { try folder.remove(temporary) } catch { temporary = Self.temporaryName(of: attachment, tag: UInt64.random(in: .min ... .max)) }
            output = try folder.open(temporary, .writeCreateExclusive)
        } catch { throw failure(error) }
        var written: SystemError?
        let problem: String?
        do {
            defer { output.close() }
            problem = try readChecked(attachment, checked: checked, needsBytes: true) { chunk throws(SystemError) in
                do throws(SystemError) { try output.writeAll(Array(chunk)) } catch {
                    written = error
                    throw error
                }
            }
            if problem == nil { try output.synchronize(.deliveredAttachmentData) }
        } catch let error as ShareQueueError {
            try? folder.remove(temporary)
            throw written.map(failure) ?? error
        } catch {
            try? folder.remove(temporary)
            throw failure(error as? SystemError ?? SystemError(call: "fsync", errno: 5))
        }
        if let problem {
            try? folder.remove(temporary)
            return .damaged(problem)
        }
        CrashPoint.reached(.attachmentCopied)
        let name: (name: String, created: Bool)?
        do throws(SystemError) {
            name = try Self.deliveredName(for: attachment, from: temporary, in: folder, checked: checked)
            try folder.synchronizeDirectory(.deliveredAttachmentEntry)
        } catch {
            try? folder.remove(temporary)
            throw failure(error)
        }
        guard let name else {
            try? folder.remove(temporary)
            return .damaged("attachment \(attachment.file): the destination has \(Self.deliveredNames) files of its names, none of them the host's own with these bytes")
        }
        CrashPoint.reached(.attachmentDelivered)
        let created = name.created ? (try? folder.linkStatus(of: name.name)).map { (name.name, $0) } : nil
        return .delivered(path: FileSystem.absolute(destination) + "/" + name.name, created: created)
    }

    /// Removes a copy ``deliver(_:to:checked:)`` made in `destination` as `name`, for a record then set
    /// aside, if the name still holds that very file: in a destination others can write, it may have been swapped.
    func removeDelivered(_ name: String, made: FileStatus, from destination: String) {
        guard let folder = try? FileDescriptor.openDirectory(atPath: destination, creating: false) else { return }
        defer { folder.close() }
        if let now = try? folder.linkStatus(of: name), now.isSameFile(as: made) { try? folder.remove(name) }
    }

    /// The name a delivered copy is written under, `.<file>.partial` (`.<file>.<tag>.partial` where
    /// something that cannot be removed stands there): no file a drain delivers begins with a dot,
    /// so clearing the name first never removes one the host received.
    private static func temporaryName(of attachment: Attachment, tag: UInt64? = nil) -> String {
        "." + attachment.file + (tag.map { "." + QueueLayout.hexTag($0) } ?? "") + ".partial"
    }

    /// How many names a delivered attachment tries: `<file>`, then `<stem>-2<extension>` up to this.
    static let deliveredNames = 100

    /// Renames the checked copy `temporary` in `folder` into place without replacing anything,
    /// and returns its name. A record may name the file of one delivered before, or the host may have
    /// changed what a drain cut short delivered: `<file>` is then used if it holds these very bytes
    /// (a redelivery), and otherwise the first of `<stem>-2<extension>`, `<stem>-3<extension>`...
    /// that is free or holds them, the stem and extension parted at the last dot.
    /// - Returns: the name, and whether the copy was given it (rather than found there); nil if all
    ///   ``deliveredNames`` names hold other bytes.
    private static func deliveredName(for attachment: Attachment, from temporary: String, in folder: FileDescriptor,
                                      checked: CheckedFiles?) throws(SystemError) -> (name: String, created: Bool)? {
        for name in deliveredNames(of: attachment.file) {
            do {
                try folder.renameWithoutReplacing(temporary, to: name)
                if let checked, let status = try? folder.linkStatus(of: name) { checked.record(attachment.sha256, of: status) }
                return (name, true)
            } catch where error.isAlreadyExists {
                if try holds(attachment, at: name, in: folder, checked: checked) {
                    try? folder.remove(temporary)
                    return (name, false)
                }
            }
        }
        return nil
    }

    /// The names a delivery of `file` tries, in order: `<file>`, then `<stem>-2<extension>`...
    private static func deliveredNames(of file: String) -> [String] {
        let dot = file.lastIndex(of: ".").flatMap { $0 == file.startIndex ? nil : $0 } ?? file.endIndex
        return (1...deliveredNames).map { $0 == 1 ? file : "\(file[..<dot])-\($0)\(file[dot...])" }
    }

    /// The first of the names a delivery tries, up to one that is free, that `checked` knows to
    /// hold the bytes `attachment` promises, unchanged since; nil if none.
    private static func knownCopy(of attachment: Attachment, in folder: FileDescriptor, checked: CheckedFiles) -> String? {
        for name in deliveredNames(of: attachment.file) {
            guard let status = try? folder.linkStatus(of: name) else { return nil }
            if isHosts(status), status.size == attachment.size, checked.digest(of: status) == attachment.sha256 { return name }
        }
        return nil
    }

    /// Whether a file in a destination is one this drain could have delivered, the host's own: a regular
    /// file with one name that this user owns. In a destination others can write, a file of theirs with
    /// the very bytes would otherwise be handed over, and theirs to change later.
    private static func isHosts(_ status: FileStatus) -> Bool {
        status.isRegularFile && status.linkCount == 1 && status.owner == Host.effectiveUserID
    }

    /// Whether `name` in `folder` is the host's regular file with the size and digest `attachment` promises;
    /// false too for one this process may not read.
    private static func holds(_ attachment: Attachment, at name: String, in folder: FileDescriptor, checked: CheckedFiles?) throws(SystemError) -> Bool {
        let file: FileDescriptor
        do { file = try folder.open(name, .readOnly) } catch where error.isUnexpectedFileType || error.isAccessDenied { return false }
        defer { file.close() }
        let status = try file.status()
        guard isHosts(status), status.size == attachment.size else { return false }
        if let known = checked?.digest(of: status) { return known == attachment.sha256 }
        guard let digest = try digest(of: file, size: attachment.size, { _ throws(SystemError) in }) else { return false }
        checked?.record(digest, of: file, before: status)
        return digest == attachment.sha256
    }

    /// The SHA-256 of a file that should hold `size` bytes, read in order and each piece handed to `use`;
    /// nil if it holds another number of bytes.
    static func digest(of file: FileDescriptor, size: Int64, _ use: (ArraySlice<UInt8>) throws(SystemError) -> Void) throws(SystemError) -> String? {
        var hasher = SHA256()
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var offset: Int64 = 0
        while true {
            let n = try file.read(into: &chunk, from: 0, at: offset)
            if n == 0 { break }
            offset += Int64(n)
            // A file that grows while it is read stops here, a chunk past what was promised.
            guard offset <= size else { return nil }
            hasher.update(chunk[0..<n])
            try use(chunk[0..<n])
        }
        return offset == size ? hasher.finish() : nil
    }

    /// Reads an attachment's copy in order, handing each piece to `use`, and
    /// checks it against its record: a regular file of the folder, with the size and digest promised.
    /// A copy `checked` knows as it is now is not read when its digest settles the check: when
    /// `needsBytes` is false, or when the digest is not the one promised.
    /// - Returns: the damage found, or nil.
    /// - Throws: a failure of reading, or of `use`, that proves nothing about the file.
    private func readChecked(_ attachment: Attachment, checked: CheckedFiles?, needsBytes: Bool,
                             _ use: (ArraySlice<UInt8>) throws(SystemError) -> Void) throws(ShareQueueError) -> String? {
        guard attachment.hasSafeFileName else { return "attachment file name '\(attachment.file.prefix(100))' is not one the queue makes" }
        // A folder that is not a directory says nothing of this record: a drain moves it aside, and the record waits.
        guard let folderFD = try openFolder() else { return "attachment \(attachment.file) is missing" }
        do throws(SystemError) {
            let file = try folderFD.open(attachment.file, .readOnly)
            defer { file.close() }
            let status = try file.status()
            guard status.isRegularFile else { return "attachment \(attachment.file) is not a regular file" }
            let wrongSize = "attachment \(attachment.file) does not have the size its record gives"
            let wrongDigest = "attachment \(attachment.file) does not match its sha256"
            guard status.size == attachment.size else { return wrongSize }
            if let known = checked?.digest(of: status), !needsBytes || known != attachment.sha256 {
                return known == attachment.sha256 ? nil : wrongDigest
            }
            guard let digest = try Self.digest(of: file, size: attachment.size, use) else { return wrongSize }
            checked?.record(digest, of: file, before: status)
            return digest == attachment.sha256 ? nil : wrongDigest
        } catch {
            if let damage = ReadFailure.damage(error) { return "attachment \(attachment.file) \(damage)" }
            throw ReadFailure.error("cannot read an attachment", path: folder + "/" + attachment.file, error)
        }
    }

    /// Hands each regular file in the folder whose name `wanted` accepts to `body`, with its status, as the
    /// folder is listed: any producer can fill it with names, so none is held here. A name removed while
    /// the folder is listed is not one of them.
    /// - Throws: a failure that proves nothing (see ``ReadFailure``).
    private func forEachFile(named wanted: (String) -> Bool, _ body: (String, FileStatus) -> Void) throws(ShareQueueError) {
        do throws(SystemError) {
            guard let folderFD = try directory.folder.subfolder(QueueLayout.attachments, creating: false) else { return }
            try folderFD.descriptor.forEachEntry { name throws(SystemError) in
                guard wanted(name), let status = try folderFD.status(of: name), status.isRegularFile else { return }
                body(name, status)
            }
        } catch {
            // Not a directory there: the drain moves it aside; it holds no attachments.
            if error.isUnexpectedFileType { return }
            throw ReadFailure.error("cannot list the attachments", path: folder, error)
        }
    }

    /// The number of files and their bytes, for `--status`.
    func usage() throws(ShareQueueError) -> (count: Int, bytes: Int64) {
        var count = 0, bytes: Int64 = 0
        // Attachment copies: not dot files, which are copies being made.
        try forEachFile(named: QueueLayout.isAttachment) { _, status in
            count += 1
            bytes += status.size
        }
        return (count, bytes)
    }

    /// Attachment files with one name, older than `age` seconds, at most `limit` of them, chosen at random
    /// when there are more; none when the folder cannot be listed, so that cleanup keeps what it cannot see.
    func staleFiles(olderThan age: Int64, limit: Int) -> [String] {
        let cutoff = Host.millisecondsSince1970() / 1000 - age
        var stale = BoundedSample<String>(limit: limit)
        do {
            try forEachFile(named: QueueLayout.isAttachment) { name, status in
                if status.modificationSeconds < cutoff && status.linkCount == 1 { stale.offer(name) }
            }
        } catch {
            return []
        }
        return stale.items
    }

    /// Removes the named files of the folder.
    func removeFiles(_ names: [String]) {
        guard let folderFD = try? openFolder() else { return }
        for name in names { try? folderFD.remove(name) }
    }

    /// Removes copies left by producers that died mid-copy, once older than `age` seconds, at most `limit` of them.
    func removeStaleTemporaries(olderThan age: Int64, limit: Int) {
        let cutoff = Host.millisecondsSince1970() / 1000 - age
        var stale = BoundedSample<String>(limit: limit)
        try? forEachFile(named: QueueLayout.isAttachmentTemporary) { name, status in
            if status.modificationSeconds < cutoff { stale.offer(name) }
        }
        removeFiles(stale.items)
    }
}
