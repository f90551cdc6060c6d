import ShareQueueSystem

/// A folder of the queue, open: the queue directory itself, `attachments` or `keys`.
///
/// It is opened once, without following a symlink, and every name in it is
/// looked up relative to that descriptor (`openat`, `renameat`, `unlinkat`,
/// `fstatat`), never through a path. So a folder swapped for a symlink, at any
/// instant, cannot lead a tool to read, write, rename or delete anything
/// outside the tree it opened. What it creates follows the queue's ``FileSharing``.
final class QueueFolder: Sendable {
    /// The folder's path, as opened: for messages only, never to open anything.
    let path: String
    let descriptor: FileDescriptor
    let sharing: FileSharing

    private init(path: String, descriptor: FileDescriptor, sharing: FileSharing) {
        self.path = path
        self.descriptor = descriptor
        self.sharing = sharing
    }

    deinit { descriptor.close() }

    /// Opens the queue directory at `path`, creating it and its parents (0700) if
    /// missing; the sharing rule is read off the directory (see ``FileSharing``).
    /// - Throws: what `FileDescriptor.openDirectory(atPath:creating:)` throws.
    static func openQueue(atPath path: String, creating: Bool = true) throws(SystemError) -> QueueFolder {
        let descriptor = try FileDescriptor.openDirectory(atPath: path, creating: creating)
        do {
            return QueueFolder(path: path, descriptor: descriptor, sharing: FileSharing(directory: try descriptor.status()))
        } catch {
            descriptor.close()
            throw error
        }
    }

    /// The path of `name` in this folder, for messages.
    func path(of name: String) -> String { path + "/" + name }

    /// Opens `name`, never following a symlink; a file this creates is given the sharing rule.
    func open(_ name: String, _ mode: OpenMode) throws(SystemError) -> FileDescriptor {
        let file = try descriptor.open(name, mode, permissions: sharing.filePermissions)
        if mode.creates { sharing.adopt(file) }
        return file
    }

    /// Opens one of the queue's own files and checks that it is a regular file
    /// with a single name, so that nothing is written into a FIFO, a device, or
    /// another file hard-linked into the queue.
    func openOwnFile(_ name: String, _ mode: OpenMode) throws(SystemError) -> FileDescriptor {
        let file = try open(name, mode)
        do throws(SystemError) {
            let status = try file.status()
            guard status.isRegularFile, status.linkCount == 1 else { throw SystemError.notRegularFile }
            return file
        } catch {
            file.close()
            throw error
        }
    }

    /// The folder `name` in this one, opened without following a symlink; nil if there is none.
    /// With `creating`, it is made first (with the sharing rule) if missing.
    /// - Throws: a symlink or anything else that is not a directory stands there, or the system failed.
    func subfolder(_ name: String, creating: Bool) throws(SystemError) -> QueueFolder? {
        if creating, try descriptor.makeDirectory(name, permissions: sharing.folderPermissions) {
            // Durable before anything in it is: a record durable without its attachments' folder is lost.
            try descriptor.synchronizeDirectory(.folderCreated)
            let made = try descriptor.open(name, .ownDirectory)
            sharing.adopt(made)
            return QueueFolder(path: path(of: name), descriptor: made, sharing: sharing)
        }
        do {
            return QueueFolder(path: path(of: name), descriptor: try descriptor.open(name, .ownDirectory), sharing: sharing)
        } catch where error.isNotFound {
            return nil
        }
    }

    /// The status of `name` itself, not following a symlink; nil if there is none.
    func status(of name: String) throws(SystemError) -> FileStatus? { try descriptor.linkStatus(of: name) }

    /// Whether this process may read and write `name`, as the system would decide at an open.
    func mayReadAndWrite(_ name: String) -> Bool { descriptor.mayReadAndWrite(name) }

    /// Whether this process may read `name`, as the system would decide at an open.
    func mayRead(_ name: String) -> Bool { descriptor.mayRead(name) }

    /// Removes `name`; a name already gone is not an error.
    func remove(_ name: String) throws(SystemError) { try descriptor.remove(name) }

    /// Removes `name`, saying whether there was one.
    func removeIfPresent(_ name: String) throws(SystemError) -> Bool { try descriptor.removeIfPresent(name) }

    /// Renames `name` to `newName`, replacing what `newName` names.
    func rename(_ name: String, to newName: String) throws(SystemError) { try descriptor.rename(name, to: newName) }

    /// Renames `name` to `newName`, or fails with EEXIST if `newName` exists.
    func renameWithoutReplacing(_ name: String, to newName: String) throws(SystemError) {
        try descriptor.renameWithoutReplacing(name, to: newName)
    }

    /// Gives the file `name` the second name `newName`; fails with EEXIST if `newName` exists.
    func link(_ name: String, to newName: String) throws(SystemError) { try descriptor.link(name, to: newName) }

    /// The names in the folder, without "." and "..".
    func entries() throws(SystemError) -> [String] { try descriptor.entries() }

    /// Makes the folder's entries (creations, renames, removals) durable.
    func synchronize(_ point: SyncPoint) throws(SystemError) { try descriptor.synchronizeDirectory(point) }
}
