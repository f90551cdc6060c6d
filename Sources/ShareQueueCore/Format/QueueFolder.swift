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
    /// Whether this is the queue directory, whose files' names say who may use them (`QueueLayout.access(of:)`),
    /// rather than `attachments` or `keys`, whose files producers of every user write.
    let isQueueDirectory: Bool

    private init(path: String, descriptor: FileDescriptor, sharing: FileSharing, isQueueDirectory: Bool) {
        self.path = path
        self.descriptor = descriptor
        self.sharing = sharing
        self.isQueueDirectory = isQueueDirectory
    }

    /// The permissions a new file `name` (or a temporary name of one) is given here.
    func filePermissions(of name: String) -> UInt16 {
        sharing.filePermissions(isQueueDirectory ? QueueLayout.access(of: name) : .shared)
    }

    deinit { descriptor.close() }

    /// Opens the queue directory at `path`, creating it and its parents (0700) if
    /// missing; the sharing rule is read off the directory (see ``FileSharing``).
    /// - Throws: what `FileDescriptor.openDirectory(atPath:creating:)` throws.
    static func openQueue(atPath path: String, creating: Bool = true) throws(SystemError) -> QueueFolder {
        let descriptor = try FileDescriptor.openDirectory(atPath: path, creating: creating)
        do {
            return QueueFolder(path: path, descriptor: descriptor, sharing: FileSharing(directory: try descriptor.status()), isQueueDirectory: true)
        } catch {
            descriptor.close()
            throw error
        }
    }

    /// The path of `name` in this folder, for messages.
    func path(of name: String) -> String { path + "/" + name }

    /// Opens `name`, never following a symlink. A mode that creates makes a missing file whole
    /// first (see ``createWhole(_:)``), so that no other user ever finds it with the wrong mode;
    /// `writeCreateExclusive`, which makes a temporary name of the caller's own, is given the sharing rule at once.
    func open(_ name: String, _ mode: OpenMode) throws(SystemError) -> FileDescriptor {
        guard let existing = mode.existing else {
            let file = try descriptor.open(name, mode, permissions: filePermissions(of: name))
            if mode.creates { sharing.adopt(file, permissions: filePermissions(of: name)) }
            return file
        }
        // Twice at most: the name can vanish between the link and the open only if another process removed it.
        for _ in 0..<2 {
            do { return try descriptor.open(name, existing) } catch where error.isNotFound {}
            guard let made = try createWhole(name) else { continue }
            // A lock file's content is never read, and a member of the group who may remove its name can do so
            // a moment after any open as well as just before it: the file just made locks as well as one opened
            // by name. Opened by name, a member removing it between each link and open stopped every process.
            if mode == .lockFile { return made }
            made.close()
        }
        return try descriptor.open(name, existing)
    }

    /// Makes the empty file `name` whole under the name `<name>.tmp-<pid>` (its owner, group and
    /// mode those of the sharing rule), then links it to `name`, never over a file there, and removes
    /// the temporary name: Maildir's way, so that no process killed at any step leaves a file at
    /// `name` with the mode its umask gave, which other users could not open.
    /// - Returns: this process's file, still open for writing, if it got the name; nil if another's
    ///   was there first, which is then the one to use.
    func createWhole(_ name: String) throws(SystemError) -> FileDescriptor? {
        let temporary = QueueLayout.creationTemporary(name, processID: Host.processID)
        _ = try clearTemporary(temporary)
        let file = try descriptor.open(temporary, .writeCreateExclusive, permissions: filePermissions(of: name))
        do throws(SystemError) {
            CrashPoint.reached(.createTemporary)
            sharing.adopt(file, permissions: filePermissions(of: name))
            CrashPoint.reached(.createShared)
            do { try descriptor.link(temporary, to: name) } catch where error.isAlreadyExists {
                file.close()
                try? descriptor.remove(temporary)
                return nil
            }
            CrashPoint.reached(.createLinked)
            try descriptor.remove(temporary)
            return file
        } catch {
            file.close()
            try? descriptor.remove(temporary)
            throw error
        }
    }

    /// Makes the folder `name` whole under `<name>.tmp-<pid>` (owner, group and mode of the sharing
    /// rule), then renames it to `name`, never over anything there.
    /// - Returns: whether this process's folder got the name: false if something was there first.
    func createFolderWhole(_ name: String) throws(SystemError) -> Bool {
        let temporary = QueueLayout.creationTemporary(name, processID: Host.processID)
        _ = try clearTemporary(temporary)
        guard try descriptor.makeDirectory(temporary, permissions: sharing.folderPermissions) else { throw SystemError.exists }
        do throws(SystemError) {
            CrashPoint.reached(.createTemporary)
            let made = try descriptor.open(temporary, .ownDirectory)
            sharing.adopt(made)
            made.close()
            CrashPoint.reached(.createShared)
            do { try descriptor.renameWithoutReplacing(temporary, to: name) } catch where error.isAlreadyExists || error.isNotEmpty {
                // Linking a folder is impossible, so a system that cannot rename without replacing says so here too.
                try? descriptor.removeDirectory(temporary)
                return false
            }
            CrashPoint.reached(.createLinked)
            return true
        } catch {
            try? descriptor.removeDirectory(temporary)
            throw error
        }
    }

    /// Clears the name of a temporary file or folder this process is about to create: a leftover of
    /// an earlier process with the same id is removed, and what cannot be (a folder, which anyone
    /// sharing the queue can make at every such name) is moved aside.
    /// - Returns: the name it was moved to, if it was.
    func clearTemporary(_ name: String) throws(SystemError) -> String? {
        do {
            _ = try descriptor.removeIfPresent(name)
            return nil
        } catch {
            return try moveAside(name)
        }
    }

    /// Removes the temporary names (`<name>.tmp-<pid>`) that are still links to the file `name`, whose
    /// status is `status`: a process killed between linking the file into place and removing its
    /// temporary name left them, and with them the file would count as having other names.
    /// - Returns: the file's status afterwards.
    func dropCreationLinks(_ name: String, _ status: FileStatus) -> FileStatus {
        guard status.isRegularFile, status.linkCount > 1,
              let names = try? entries(where: { QueueLayout.isCreationTemporary($0, of: name) }) else { return status }
        for other in names {
            if let found = try? self.status(of: other), found.isSameFile(as: status) { try? remove(other) }
        }
        return (try? self.status(of: name)) ?? status
    }

    /// Moves the entry `name` aside, unread, as `rejected-<ms>-<name>`, never over another entry,
    /// so that nothing found in the folder is destroyed.
    /// - Returns: the name it has now.
    func moveAside(_ name: String) throws(SystemError) -> String {
        let milliseconds = Host.millisecondsSince1970()
        var target = QueueLayout.rejected(name, atMilliseconds: milliseconds)
        var taken = 0
        while true {
            do {
                try renameWithoutReplacing(name, to: target)
                return target
            } catch where error.isAlreadyExists {
                // Names planted ahead, to stop every drain, give way to one no one can foresee.
                taken += 1
                guard taken < 8 else { throw error }
                target = QueueLayout.rejected(name, atMilliseconds: milliseconds, tag: UInt64.random(in: .min ... .max))
            } catch {
                // A directory cannot be linked, so where the file system cannot rename without
                // replacing either, rename plainly: the target's name holds the time, and a
                // planted file must never stop every drain.
                try rename(name, to: target)
                return target
            }
        }
    }

    /// Opens one of the queue's own files and checks that it is a regular file
    /// with a single name, so that nothing is written into a FIFO, a device, or
    /// another file hard-linked into the queue.
    func openOwnFile(_ name: String, _ mode: OpenMode) throws(SystemError) -> FileDescriptor {
        let file = try open(name, mode)
        do throws(SystemError) {
            var status = try file.status()
            if status.linkCount > 1 { status = dropCreationLinks(name, status) }
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
        if creating, try descriptor.linkStatus(of: name) == nil, try createFolderWhole(name) {
            // Durable before anything in it is: a record durable without its attachments' folder is lost.
            try descriptor.synchronizeDirectory(.folderCreated)
        }
        do {
            return QueueFolder(path: path(of: name), descriptor: try descriptor.open(name, .ownDirectory), sharing: sharing, isQueueDirectory: false)
        } catch where error.isNotFound {
            return nil
        }
    }

    /// The status of `name` itself, not following a symlink; nil if there is none.
    func status(of name: String) throws(SystemError) -> FileStatus? { try descriptor.linkStatus(of: name) }

    /// Whether this process may read and write `name`, as the system would decide at an open.
    func mayReadAndWrite(_ name: String) -> Bool { descriptor.mayReadAndWrite(name) }

    /// Whether this process may list and search the folder `name`, as the system would decide.
    func mayReadAndSearch(_ name: String) -> Bool { descriptor.mayReadAndSearch(name) }

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

    /// The names in the folder that `keep` accepts, without "." and "..": only they are held. At most
    /// `limit` of them, chosen at random when there are more.
    func entries(where keep: (String) -> Bool, limit: Int = .max) throws(SystemError) -> [String] {
        var kept = BoundedSample<String>(limit: limit)
        try descriptor.forEachEntry { name in if keep(name) { kept.offer(name) } }
        return kept.items
    }

    /// Makes the folder's entries (creations, renames, removals) durable.
    func synchronize(_ point: SyncPoint) throws(SystemError) { try descriptor.synchronizeDirectory(point) }
}
