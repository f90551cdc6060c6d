import ShareQueueSystem

/// The queue's `attachments` folder: files copied in by producers and handed
/// on by drains. Every name in it is one this code made, and every operation
/// goes through a descriptor of the folder opened without following a
/// symlink, and opens files without following one either, so that a record or
/// a planted link cannot make a drain read, move or delete anything outside it.
public struct AttachmentStore: Sendable {
    /// The queue whose `attachments` folder this is.
    public let directory: QueueDirectory
    private static let chunkSize = 256 << 10

    /// The attachments folder of `directory`; nothing is created until a file is added.
    /// - Parameter directory: The queue.
    public init(directory: QueueDirectory) { self.directory = directory }

    var folder: String { directory.path(of: QueueLayout.attachments) }

    /// The absolute path of an attachment's copy in the queue.
    func path(of attachment: Attachment) -> String { FileSystem.absolute(folder) + "/" + attachment.file }

    /// The folder, opened; nil if it does not exist.
    /// - Throws: `.configuration` if something other than a directory stands there.
    func openFolder() throws(ShareQueueError) -> FileDescriptor? {
        do { return try FileDescriptor.open(folder, .ownDirectory) } catch {
            if error.isNotFound { return nil }
            throw ShareQueueError("cannot use the attachments folder", path: folder, error)
        }
    }

    /// Copies a file into the queue (temporary name, fsync, rename, fsync of
    /// the folder) and describes it, ready for `RecordDraft.attachments`.
    ///
    /// Takes no lock: the copy has a name of its own. If the append that
    /// should carry it fails, ``remove(_:)`` it; a copy that no record refers to
    /// is removed by a drain once it is a day old.
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
        do { _ = try FileSystem.makeDirectory(folder) } catch {
            throw ShareQueueError("cannot create the attachments folder", path: folder, error, creating: true)
        }
        guard let folderFD = try openFolder() else { throw ShareQueueError(.ioError, "the attachments folder vanished", path: folder) }
        defer { folderFD.close() }
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
                try folderFD.synchronizeDirectory()
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
        try output.synchronize()
        return (size, hasher.finish())
    }

    /// Removes a copy made by `add`, after its record was delivered or its append failed.
    /// Does nothing for a name the queue does not make, or a copy already gone.
    /// - Parameter attachment: An attachment ``add(copyOf:maxBytes:)`` returned.
    public func remove(_ attachment: Attachment) {
        guard attachment.hasSafeFileName, let folderFD = try? openFolder() else { return }
        defer { folderFD.close() }
        try? folderFD.remove(attachment.file)
    }

    /// Checks that an attachment is a file of this folder with the size and
    /// digest its record promises. Returns the reason it is not, or nil.
    func problem(with attachment: Attachment, deliveredTo destination: String?) -> String? {
        guard attachment.hasSafeFileName else { return "attachment file name '\(attachment.file.prefix(100))' is not one the queue makes" }
        do {
            guard let folderFD = try openFolder() else { return "attachment \(attachment.file) is missing" }
            defer { folderFD.close() }
            let file = try folderFD.open(attachment.file, .readOnly)
            defer { file.close() }
            let status = try file.status()
            guard status.isRegularFile else { return "attachment \(attachment.file) is not a regular file" }
            if status.linkCount != 1 {
                // A drain that died after linking the file to its destination left a second name; anything else is foreign.
                guard let destination, let other = try FileSystem.linkStatus(destination + "/" + attachment.file),
                      other.isSameFile(as: status), status.linkCount == 2 else {
                    return "attachment \(attachment.file) has other names"
                }
            }
            guard status.size == attachment.size else { return "attachment \(attachment.file) does not have the size its record gives" }
            var hasher = SHA256()
            var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
            var offset: Int64 = 0
            while true {
                let n = try file.read(into: &chunk, from: 0, at: offset)
                if n == 0 { break }
                hasher.update(chunk[0..<n])
                offset += Int64(n)
            }
            return hasher.finish() == attachment.sha256 ? nil : "attachment \(attachment.file) does not match its sha256"
        } catch let error as SystemError {
            return error.isNotFound ? "attachment \(attachment.file) is missing" : "attachment \(attachment.file) cannot be read: \(error)"
        } catch {
            return "attachment \(attachment.file) cannot be read: \(error)"
        }
    }

    /// Gives a checked attachment a name in `destination`: a hard link, or a
    /// synced copy across file systems. The queue's copy stays until the
    /// record's delivery is recorded. Returns the new absolute path.
    func deliver(_ attachment: Attachment, to destination: String) throws(ShareQueueError) -> String {
        let target = FileSystem.absolute(destination) + "/" + attachment.file
        do throws(SystemError) {
            try FileSystem.makeDirectories(destination)
            guard let folderFD = try? openFolder() else { throw SystemError.missing }
            defer { folderFD.close() }
            do throws(SystemError) {
                try folderFD.link(attachment.file, to: target)
            } catch let error where error.isAlreadyExists {
                // Delivered before by a drain that died; the same bytes are there.
                if let existing = try FileSystem.linkStatus(target), existing.isRegularFile, existing.size == attachment.size { return target }
                throw error
            } catch let error where error.isCrossDevice {
                try copy(attachment.file, from: folderFD, to: target)
            }
            try FileSystem.synchronizeDirectory(destination)
            return target
        } catch {
            throw ShareQueueError(error.isNoSpace ? "no space left to deliver an attachment" : "cannot deliver an attachment", path: target, error)
        }
    }

    private func copy(_ name: String, from folderFD: FileDescriptor, to target: String) throws(SystemError) {
        let temporary = target + ".partial"
        let input = try folderFD.open(name, .readOnly)
        defer { input.close() }
        try? FileSystem.removeFile(temporary)
        let output = try FileDescriptor.open(temporary, .writeCreateExclusive)
        do {
            defer { output.close() }
            var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
            var offset: Int64 = 0
            while true {
                let n = try input.read(into: &chunk, from: 0, at: offset)
                if n == 0 { break }
                try output.writeAll(Array(chunk[0..<n]))
                offset += Int64(n)
            }
            try output.synchronize()
        }
        try FileSystem.rename(temporary, to: target)
    }

    /// The regular files in the folder, with their status.
    private func files() -> [(name: String, status: FileStatus)] {
        guard let folderFD = try? openFolder() else { return [] }
        defer { folderFD.close() }
        return ((try? folderFD.entries()) ?? []).compactMap { name in
            guard let status = try? folderFD.linkStatus(of: name), status.isRegularFile else { return nil }
            return (name, status)
        }
    }

    /// Attachment copies: not dot files, which are copies being made.
    private func attachmentFiles() -> [(name: String, status: FileStatus)] { files().filter { QueueLayout.isAttachment($0.name) } }

    /// The number of files and their bytes, for `--status`.
    func usage() -> (count: Int, bytes: Int64) {
        let found = attachmentFiles()
        return (found.count, found.reduce(0) { $0 + $1.status.size })
    }

    /// Attachment files with one name, older than `age` seconds.
    func staleFiles(olderThan age: Int64) -> [String] {
        let cutoff = Host.millisecondsSince1970() / 1000 - age
        return attachmentFiles().filter { $0.status.modificationSeconds < cutoff && $0.status.linkCount == 1 }.map(\.name)
    }

    /// Removes the named files of the folder.
    func removeFiles(_ names: [String]) {
        guard let folderFD = try? openFolder() else { return }
        defer { folderFD.close() }
        for name in names { try? folderFD.remove(name) }
    }

    /// Removes copies left by producers that died mid-copy, once older than `age` seconds.
    func removeStaleTemporaries(olderThan age: Int64) {
        let cutoff = Host.millisecondsSince1970() / 1000 - age
        removeFiles(files().filter { QueueLayout.isAttachmentTemporary($0.name) && $0.status.modificationSeconds < cutoff }.map(\.name))
    }
}
