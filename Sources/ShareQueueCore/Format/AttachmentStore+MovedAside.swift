import ShareQueueSystem

/// Bringing back copies from the `attachments` folders a drain moved aside (Format §2.5, §7.3).
///
/// A drain moves aside, unread, an `attachments` folder that other users' producers could not use;
/// the acknowledged records whose copies it held are no damage, so a copy missing from the folder
/// is looked for in the folders moved aside, and copied back when found with its record's bytes.
extension AttachmentStore {
    /// How many folders moved aside from `attachments` a drain looks in for a missing copy, of each
    /// owner, newest first.
    static let movedAsideFoldersSearched = 8

    /// The folders among `entries` (the queue directory's directories, each with its owner) that were
    /// moved aside from `attachments`, newest first by the time in their names (of equal times, in the
    /// order of their names' bytes): of each owner at most ``movedAsideFoldersSearched``, and none whose
    /// name is dated more than ``DateInstant/allowedLeadSeconds`` after `now` (milliseconds since 1970).
    ///
    /// A drain names a folder it moves aside by its own clock, so a name dated ahead of it is one a
    /// member made, to stay first for good. The bound is per owner because a member can make folders
    /// only of her own: however many she plants, she pushes out only her own folders, never another
    /// user's, whose copies she could not have removed (one she can remove, she could anyway).
    static func movedAsideFolders(among entries: [(name: String, owner: UInt32)], now: Int64) -> [String] {
        let latest = now + DateInstant.allowedLeadSeconds * 1000
        let found = entries.compactMap { entry in
            QueueLayout.movedAsideMilliseconds(entry.name, from: QueueLayout.attachments).flatMap { $0 <= latest ? (entry, time: $0) : nil }
        }
        let newestFirst = found.sorted { $0.time != $1.time ? $0.time > $1.time : Array($0.0.name.utf8).lexicographicallyPrecedes(Array($1.0.name.utf8)) }
        var taken: [UInt32: Int] = [:]
        return newestFirst.filter { folder in
            taken[folder.0.owner, default: 0] += 1
            return taken[folder.0.owner]! <= movedAsideFoldersSearched
        }.map(\.0.name)
    }

    /// The folders moved aside from `attachments` that a drain looks in, as ``movedAsideFolders(among:now:)``
    /// chooses them from the queue directory as it is now; what is no directory there is none of them.
    func movedAsideFolders() throws(ShareQueueError) -> [String] {
        var entries: [(name: String, owner: UInt32)] = []
        for name in try directory.names(where: { QueueLayout.movedAsideMilliseconds($0, from: QueueLayout.attachments) != nil }) {
            let status: FileStatus?
            do { status = try directory.folder.status(of: name) } catch {
                throw ReadFailure.error("cannot look at a folder moved aside", path: directory.path(of: name), error)
            }
            if let status, status.isDirectory { entries.append((name, status.owner)) }
        }
        return Self.movedAsideFolders(among: entries, now: Host.millisecondsSince1970())
    }

    /// A copy brought back into `attachments`: its name, and the folder moved aside it was copied from.
    struct RestoredCopy {
        let file: String
        let source: String
    }

    /// What a drain reports for a copy it brought back.
    static func restoredEvent(_ copy: RestoredCopy, of id: String, in directory: QueueDirectory) -> QueueEvent {
        .attachmentRestored(file: copy.file, recordID: id, folder: directory.path(of: QueueLayout.attachments), source: directory.path(of: copy.source))
    }

    /// Why a record must wait for another user before a drain can check its copies, or nil if it need not:
    /// a missing copy may be in a folder moved aside that the drain may not read, or a copy in `attachments`
    /// is another user's that the drain may not read (``othersUnreadable(_:)``). Such a record is no damage,
    /// and must not hold the records after it: it waits among the dead letters, and a drain puts it back by
    /// itself once it may read what it needs (Format §13). Missing copies are brought back first, as
    /// ``restoreMissing(_:of:options:checked:)`` does, each handed to `restored`.
    /// - Throws: a failure that proves nothing, as ``ReadFailure`` says.
    func waitingReason(_ files: [Attachment], of id: String, options: DrainOptions, checked: CheckedFiles,
                       restored: (RestoredCopy) -> Void) throws(ShareQueueError) -> String? {
        do {
            for copy in try restoreMissing(files, of: id, options: options, checked: checked) { restored(copy) }
        } catch where error.code == .recordHeld {
            return error.message
        }
        // A record the drain does not read for its size is a plain dead letter: no one else bars it.
        guard unread(files, options: options) == nil else { return nil }
        return othersUnreadable(files)
    }

    /// Brings back each copy that `files` names and `attachments` lacks, from the newest of the folders
    /// moved aside from it that holds a regular file of that name with the record's `size` and `sha256`.
    /// The file is copied, never moved (the folder may be another user's, where this drain may remove
    /// nothing), as a producer copies one in: to `.tmp-<file>`, checked as it is written, synced, renamed
    /// into place without replacing anything, and the folder synced. Nothing is looked for for a
    /// record over the drain's limits, whose files a drain does not read.
    /// - Parameters:
    ///   - files: The record's attachments.
    ///   - id: The record's id, for messages.
    ///   - options: The drain's limits.
    ///   - checked: The copies this drain has read whole; a copy brought back is recorded there.
    /// - Returns: The copies brought back.
    /// - Throws: `.recordHeld` when a missing copy is in none of the folders this drain may read and one
    ///   it may not read (another user's) may hold it, or the `attachments` folder itself changed into one
    ///   it may not read: the record is no damage, and waits among the dead letters until that is repaired
    ///   (see `QueueDrainer.putBackWaitingLetters`). Otherwise a failure that proves nothing, as ``ReadFailure`` says.
    func restoreMissing(_ files: [Attachment], of id: String, options: DrainOptions, checked: CheckedFiles) throws(ShareQueueError) -> [RestoredCopy] {
        guard !files.isEmpty, files.count <= Attachment.maximumPerRecord, Attachment.totalBytes(files) <= options.maxAttachmentBytes else { return [] }
        var missing: [Attachment] = []
        var seen: Set<ByteKey> = []
        do throws(SystemError) {
            let current = try directory.folder.subfolder(QueueLayout.attachments, creating: false)
            for attachment in files where attachment.hasSafeFileName && seen.insert(ByteKey(attachment.file)).inserted {
                if try current?.status(of: attachment.file) == nil { missing.append(attachment) }
            }
        } catch {
            // Not a directory there: its check says so, and the next drain moves it aside.
            if error.isUnexpectedFileType { return [] }
            if error.isAccessDenied {
                throw ShareQueueError(.recordHeld, "the attachments folder changed, since this drain began, into one it may not read; "
                                      + "a later drain moves it aside, and puts the record back once it may read its copies",
                                      path: folder, underlying: error)
            }
            throw ReadFailure.error("cannot look for an attachment", path: folder, error)
        }
        guard !missing.isEmpty else { return [] }
        let queueDirectory: FileStatus
        do { queueDirectory = try directory.folder.descriptor.status() } catch {
            throw ReadFailure.error("cannot look at the queue directory", path: directory.path, error)
        }
        let folders = try checked.movedAsideFolders(directory: queueDirectory) { () throws(ShareQueueError) in try movedAsideFolders() }
        var restored: [RestoredCopy] = []
        for attachment in missing {
            if let source = try restore(attachment, of: id, from: folders, options: options, checked: checked) {
                restored.append(RestoredCopy(file: attachment.file, source: source))
            }
        }
        return restored
    }

    /// Brings back one copy from the first of `folders` that holds it intact (see ``restoreMissing(_:of:options:checked:)``).
    /// - Returns: the name of the folder it was copied from; nil if none holds it.
    private func restore(_ attachment: Attachment, of id: String, from folders: [String], options: DrainOptions,
                         checked: CheckedFiles) throws(ShareQueueError) -> String? {
        var barred: (name: String, error: SystemError)?
        for name in folders {
            let file: FileDescriptor
            do throws(SystemError) {
                guard let source = try directory.folder.subfolder(name, creating: false) else { continue }
                file = try source.open(attachment.file, .readOnly)
            } catch {
                if error.isAccessDenied {
                    if barred == nil { barred = (name, error) }
                    continue
                }
                // Nothing of that name, or no directory or no regular file there: not this one.
                if error.isNotFound || error.isUnexpectedFileType { continue }
                throw ReadFailure.error("cannot look for an attachment in a folder moved aside", path: directory.path(of: name) + "/" + attachment.file, error)
            }
            defer { file.close() }
            if try copyBack(attachment, from: file, in: name, options: options, checked: checked) { return name }
        }
        guard let barred else { return nil }
        let owner = (try? directory.folder.status(of: barred.name))?.map { " (user \($0.owner))" } ?? ""
        throw ShareQueueError(.recordHeld, "its attachment \(attachment.file) is not in the attachments folder, and the drain may not read "
                              + "\(directory.path(of: barred.name)), a folder a drain moved aside, which may hold it; once its owner\(owner) or root "
                              + "lets the drain read it (chmod 2770, or g+rx), a drain brings the copy back and puts the record back",
                              path: directory.path(of: barred.name), underlying: barred.error)
    }

    /// Copies `file`, found in the folder `source` moved aside, back into `attachments` if it holds
    /// the bytes `attachment` promises.
    /// - Returns: whether the copy is back (or another got its name meanwhile, whose check says what it is).
    private func copyBack(_ attachment: Attachment, from file: FileDescriptor, in source: String, options: DrainOptions,
                          checked: CheckedFiles) throws(ShareQueueError) -> Bool {
        let sourcePath = directory.path(of: source) + "/" + attachment.file
        let status: FileStatus
        do { status = try file.status() } catch { throw ReadFailure.error("cannot read an attachment in a folder moved aside", path: sourcePath, error) }
        guard status.isRegularFile, status.size == attachment.size else { return false }
        // A file of holes costs its maker nothing and this drain a write of every byte.
        if !options.readsSparseAttachments && attachment.size > 0 && Self.isMostlyHoles(file, status) { return false }
        if let known = checked.digest(of: status), known != attachment.sha256 { return false }
        guard let target = try openFolder(creating: true) else { throw ShareQueueError(.ioError, "the attachments folder vanished", path: folder) }
        var temporary = QueueLayout.attachmentTemporary(attachment.file)
        do throws(SystemError) {
            // What cannot be removed there (a folder another user made) gives way to a name no one can foresee.
            do { try target.remove(temporary) } catch {
                temporary = QueueLayout.attachmentTemporary(attachment.file + "." + QueueLayout.hexTag(UInt64.random(in: .min ... .max)))
            }
            let output = try target.open(temporary, .writeCreateExclusive)
            let digest = try output.closeAfter { () throws(SystemError) -> String? in
                let digest = try Self.digest(of: file, size: attachment.size) { chunk throws(SystemError) in try output.writeAll(Array(chunk)) }
                if digest == attachment.sha256 { try output.synchronize(.attachmentData) }
                return digest
            }
            guard digest == attachment.sha256 else {
                try? target.remove(temporary)
                return false
            }
            do { try target.renameWithoutReplacing(temporary, to: attachment.file) } catch where error.isAlreadyExists {
                try? target.remove(temporary)
                return true
            }
            try target.synchronize(.attachmentEntry)
            if let placed = try? target.status(of: attachment.file) { checked.record(attachment.sha256, of: placed) }
            return true
        } catch {
            try? target.remove(temporary)
            throw ReadFailure.error(error.isNoSpace ? "no space left to bring back an attachment's copy" : "cannot bring back an attachment's copy",
                                    path: folder + "/" + temporary, error)
        }
    }
}
