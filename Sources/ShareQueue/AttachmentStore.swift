/// The queue's `attachments` folder: files copied in by producers and handed
/// on by drains. Every name in it is one this code made, and every file is
/// opened without following symlinks, so a record cannot make a drain read,
/// move or delete anything outside the folder.
public struct AttachmentStore: Sendable {
    public let directory: QueueDirectory
    static let temporaryPrefix = ".tmp-"
    private static let chunkSize = 256 << 10

    public init(directory: QueueDirectory) { self.directory = directory }

    var folder: String { directory.path + "/attachments" }
    func path(of attachment: Attachment) -> String { folder + "/" + attachment.file }

    /// Copies a file into the queue (temporary name, fsync, rename, fsync of
    /// the folder) and describes it, ready for `RecordDraft.attachments`.
    /// - Throws: `.badData` for a file over `maxBytes` or not a regular file;
    ///   the copy is then removed, so a failed copy leaves nothing behind.
    public func add(copyOf source: String, maxBytes: Int64) throws(ShareQueueError) -> Attachment {
        let input: FileDescriptor
        do { input = try FileDescriptor.openFollowingLinks(source) } catch {
            throw ShareQueueError("cannot read the attachment", path: source, error)
        }
        defer { input.close() }
        do {
            guard try input.status().isRegularFile else { throw ShareQueueError(.badData, "an attachment must be a regular file", path: source) }
        } catch let error as SystemError {
            throw ShareQueueError("cannot read the attachment", path: source, error)
        } catch {
            throw error as! ShareQueueError
        }
        try makeFolder()
        let name = String(source.split(separator: "/").last ?? Substring(source))
        let file = RecordID.random() + (MediaType.safeExtension(of: name).map { "." + $0 } ?? "")
        let temporary = folder + "/" + Self.temporaryPrefix + file
        do {
            let output = try FileDescriptor.open(temporary, .writeCreateExclusive)
            var hasher = SHA256()
            var size: Int64 = 0
            do {
                defer { output.close() }
                var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
                while true {
                    let n = try input.read(into: &chunk, from: 0)
                    if n == 0 { break }
                    size += Int64(n)
                    guard size <= maxBytes else {
                        throw ShareQueueError(.badData, "the attachment is over the limit of \(maxBytes) bytes", path: source)
                    }
                    hasher.update(chunk[0..<n])
                    try output.writeAll(Array(chunk[0..<n]))
                }
                try output.synchronize()
            }
            try FileSystem.rename(temporary, to: folder + "/" + file)
            try FileSystem.synchronizeDirectory(folder)
            return Attachment(name: name, file: file, size: size, sha256: hasher.finish(), type: MediaType.guess(fileName: name))
        } catch let error as SystemError {
            try? FileSystem.removeFile(temporary)
            throw ShareQueueError(error.isNoSpace ? "no space left to copy the attachment" : "cannot copy the attachment", path: temporary, error)
        } catch {
            try? FileSystem.removeFile(temporary)
            throw error as! ShareQueueError
        }
    }

    /// Removes a copy made by `add`, after its record was delivered or its append failed.
    public func remove(_ attachment: Attachment) {
        guard attachment.hasSafeFileName else { return }
        try? FileSystem.removeFile(path(of: attachment))
    }

    private func makeFolder() throws(ShareQueueError) {
        do { _ = try FileSystem.makeDirectory(folder) } catch {
            throw ShareQueueError("cannot create the attachments folder", path: folder, error, creating: true)
        }
    }

    /// Checks that an attachment is a file of this folder with the size and
    /// digest its record promises. Returns the reason it is not, or nil.
    func problem(with attachment: Attachment, deliveredTo destination: String?) -> String? {
        guard attachment.hasSafeFileName else { return "attachment file name '\(attachment.file.prefix(100))' is not one the queue makes" }
        let path = path(of: attachment)
        do {
            let file = try FileDescriptor.open(path, .readOnly)
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
            guard status.size == attachment.size else { return "attachment \(attachment.file) is \(status.size) bytes, not \(attachment.size)" }
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
        } catch {
            return error.isNotFound ? "attachment \(attachment.file) is missing" : "attachment \(attachment.file) cannot be read: \(error)"
        }
    }

    /// Gives a checked attachment a name in `destination`: a hard link, or a
    /// synced copy across file systems. The queue's copy stays until the
    /// record's delivery is recorded. Returns the new absolute path.
    func deliver(_ attachment: Attachment, to destination: String) throws(ShareQueueError) -> String {
        let source = path(of: attachment)
        let target = destination + "/" + attachment.file
        do throws(SystemError) {
            _ = try FileSystem.makeDirectory(destination)
            do throws(SystemError) {
                try FileSystem.link(source, to: target)
            } catch let error where error.isAlreadyExists {
                // Delivered before by a drain that died; the same bytes are there.
                if let existing = try FileSystem.linkStatus(target), existing.isRegularFile, existing.size == attachment.size { return target }
                throw error
            } catch let error where error.isCrossDevice {
                try copy(source, to: target)
            }
            try FileSystem.synchronizeDirectory(destination)
            return target
        } catch {
            throw ShareQueueError(error.isNoSpace ? "no space left to deliver an attachment" : "cannot deliver an attachment", path: target, error)
        }
    }

    private func copy(_ source: String, to target: String) throws(SystemError) {
        let temporary = target + ".partial"
        let input = try FileDescriptor.open(source, .readOnly)
        defer { input.close() }
        try? FileSystem.removeFile(temporary)
        let output = try FileDescriptor.open(temporary, .writeCreateExclusive)
        do {
            defer { output.close() }
            var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
            while true {
                let n = try input.read(into: &chunk, from: 0)
                if n == 0 { break }
                try output.writeAll(Array(chunk[0..<n]))
            }
            try output.synchronize()
        }
        try FileSystem.rename(temporary, to: target)
    }

    /// The number of files and their bytes, for `--status`.
    func usage() -> (count: Int, bytes: Int64) {
        guard let names = try? FileSystem.entries(of: folder) else { return (0, 0) }
        var count = 0
        var bytes: Int64 = 0
        for name in names where !name.hasPrefix(".") {
            guard let status = try? FileSystem.linkStatus(folder + "/" + name), status.isRegularFile else { continue }
            count += 1
            bytes += status.size
        }
        return (count, bytes)
    }

    /// Attachment files (not temporaries) older than `age` seconds.
    func staleFiles(olderThan age: Int64) -> [String] {
        guard let names = try? FileSystem.entries(of: folder) else { return [] }
        let cutoff = Host.millisecondsSince1970() / 1000 - age
        return names.filter { name in
            guard !name.hasPrefix("."), let status = try? FileSystem.linkStatus(folder + "/" + name) else { return false }
            return status.isRegularFile && status.modificationSeconds < cutoff
        }
    }

    /// Removes copies left by producers that died mid-copy, once older than `age` seconds.
    func removeStaleTemporaries(olderThan age: Int64) {
        guard let names = try? FileSystem.entries(of: folder) else { return }
        let cutoff = Host.millisecondsSince1970() / 1000 - age
        for name in names where name.hasPrefix(Self.temporaryPrefix) {
            let path = folder + "/" + name
            if let status = try? FileSystem.linkStatus(path), status.isRegularFile, status.modificationSeconds < cutoff {
                try? FileSystem.removeFile(path)
            }
        }
    }
}
