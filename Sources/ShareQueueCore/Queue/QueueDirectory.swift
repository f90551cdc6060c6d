import ShareQueueSystem

/// The shared directory that holds one queue.
///
/// Both sides open the same directory: on iOS, a folder in the App Group's
/// shared container. Opening it creates the queue if it is new and refuses a
/// queue in a newer format without touching it. `QueueLayout` names its files;
/// `Documentation/Format.md` specifies every one.
public struct QueueDirectory: Sendable {
    /// The on-disk format this version reads and writes.
    public static let formatVersion = 1
    static let formatPrefix = "ShareQueue queue format "

    /// The directory's path, as given to ``init(path:)``.
    public let path: String
    /// A UUID made when the queue was created, so that a host's store can tell
    /// this queue from a new one made later at the same path; nil for a queue
    /// whose marker has none.
    public private(set) var identifier: String? = nil
    /// Opened by a tool that only looks: why the format marker is one that a tool making the queue
    /// would move aside and write anew (another user's it may not read, or no regular file), for a
    /// warning. The queue is then read as this version's format, as it would be after that.
    package private(set) var markerNotRead: String? = nil
    /// Why the format marker is one no drain of the queue's can have written alone (another user's, or one
    /// others may write), whose format is then not obeyed, or nil: a drain sets such a marker aside and writes its own.
    package private(set) var untrustedMarker: String? = nil
    /// Whether the marker said what a tool of this version writes: this format, and an identifier.
    private var markerAsWritten = false
    /// The status of the marker read, so that only that very one is replaced without being set aside.
    private var markerRead: FileStatus? = nil

    /// The directory, open: every file of the queue is opened, renamed and
    /// removed relative to it, never through `path`, so that a swap of the
    /// directory with a symlink, at any instant, cannot lead a tool elsewhere.
    let folder: QueueFolder

    /// Opens the queue at `path`, creating the directory (mode 0700, parents
    /// included) and its format marker if they are missing.
    ///
    /// The directory is opened once, one component at a time: a symlink as its
    /// last component is refused, and one above it is followed only if root or
    /// the user running the process owns it.
    /// - Parameter path: The queue's directory, such as a folder in the App Group container.
    /// - Throws: `.configuration` if the queue has a newer or unknown format
    ///   (it is then left untouched) or the path is a symlink or leads through
    ///   another user's, `.permissionDenied` or `.cannotCreate` for a directory
    ///   that cannot be used, naming the path.
    public init(path: String) throws(ShareQueueError) {
        try self.init(path: path, creating: true)
    }

    /// Opens the queue at `path`, as ``init(path:)`` does; without `creating`, a directory
    /// or format marker that is missing is `.noInput`, and nothing is written: for what
    /// only looks at a queue, where a mistyped path must not become an empty queue.
    package init(path: String, creating: Bool) throws(ShareQueueError) {
        self.path = path
        do { folder = try QueueFolder.openQueue(atPath: path, creating: creating) } catch {
            if !creating && error.isNotFound { throw ShareQueueError(.noInput, "there is no queue here", path: path) }
            // A file in the way is a directory that cannot be created (73), not a planted file (78).
            let code: ShareQueueError.Code = error.isResourceShortage ? .resourceShortage
                : error.isAccessDenied ? .permissionDenied
                : error.isNotDirectory ? .cannotCreate
                : error.isUnexpectedFileType ? .configuration : .cannotCreate
            throw ShareQueueError(code, "cannot open the queue directory", path: path, underlying: error)
        }
        try checkFormat(creating: creating)
    }

    var formatPath: String { path(of: QueueLayout.formatMarker) }
    var appendLockPath: String { path(of: QueueLayout.appendLock) }
    var pendingPath: String { path(of: QueueLayout.pending) }
    var drainLockPath: String { path(of: QueueLayout.drainLock) }
    var checkpointPath: String { path(of: QueueLayout.checkpoint) }
    var quarantinePath: String { path(of: QueueLayout.quarantine) }

    /// The path of the file `name` of this queue, for messages: files are opened through ``folder``.
    func path(of name: String) -> String { path + "/" + name }

    /// Moves the file `name` aside, unread, as `rejected-<ms>-<name>`, never
    /// over another file, so that nothing found in the directory is destroyed.
    /// - Returns: the path it has now.
    func moveAside(_ name: String) throws(SystemError) -> String {
        path(of: try folder.moveAside(name))
    }

    /// Why the entry `name`, whose status is `status`, is no file of the queue's own, or nil if it is one.
    ///
    /// Any member of a shared queue's group can plant something at a name the queue's tools write,
    /// to stop every one of them: what is not a regular file with one name (a directory, a symlink,
    /// a FIFO, a hard link), or another user's file that this process may not read and write.
    func foreignFile(_ name: String, _ status: FileStatus) -> ForeignFile? {
        if !status.isRegularFile || status.linkCount != 1 { return .notOneRegularFile }
        if status.owner != Host.effectiveUserID && !folder.mayReadAndWrite(name) { return .othersUnusable(owner: status.owner) }
        if let problem = notDrainsOwn(name, status) { return .notDrainsOwn(problem) }
        return nil
    }

    /// Why the regular file `name`, one that only drains write (`QueueLayout.drainsOnly`), whose status is
    /// `status`, may hold what a member of the group wrote rather than a drain: it belongs to a user other
    /// than the queue's owner, root and this process, or users other than its owner may write it. Nil if
    /// a drain may have written it alone, and for a name producers write too.
    ///
    /// In a queue shared with a group, any member can replace such a file with her own, or write into one
    /// the group may write: a checkpoint moved past records a sink has not taken skips them, refusal
    /// counts raised make honest records dead letters. A drain sets the file aside and starts as if there
    /// were none, which delivers again, never loses.
    func notDrainsOwn(_ name: String, _ status: FileStatus) -> String? {
        guard status.isRegularFile, QueueLayout.drainsOnly.contains(name) else { return nil }
        if !folder.sharing.isTrusted(owner: status.owner) {
            return "belongs to user \(status.owner), not to the queue's owner, so no drain of the queue's wrote it"
        }
        if status.permissions & 0o022 != 0 {
            return "may be written by users other than its owner (mode \(String(status.permissions, radix: 8))), so no drain can vouch for what it holds"
        }
        return nil
    }

    /// Opens `name`, one of the files only drains write, for a drain that acts on what it holds. The
    /// opened file itself is checked (``notDrainsOwn(_:_:)``), not only what stood at the name when
    /// the drain began: a member of a shared queue's group may rename her own file there at any time.
    /// Such a file is moved aside unread, said with `onEvent`, and with a mode that creates, a new one
    /// is opened in its place; without, there is none, as when a drain starts over.
    /// - Returns: the file; nil if there is none (or it was moved aside) and `mode` does not create.
    /// - Throws: EEXIST if a file no drain wrote stands at the name once more; what opening throws
    ///   (`notRegularFile` for anything but a regular file with one name).
    func openDrainsOwn(_ name: String, _ mode: OpenMode, onEvent: (QueueEvent) -> Void) throws(SystemError) -> FileDescriptor? {
        var movedAside = false
        while true {
            let file: FileDescriptor
            do { file = try folder.openOwnFile(name, mode) } catch where error.isNotFound && !mode.creates { return nil }
            let status: FileStatus
            do { status = try file.status() } catch { file.close(); throw error }
            guard let problem = notDrainsOwn(name, status) else { return file }
            file.close()
            if movedAside { throw SystemError.exists }
            movedAside = true
            let target: String
            // Removed since it was opened: gone, as moving it aside would have it.
            do { target = try moveAside(name) } catch where error.isNotFound { continue }
            onEvent(.fileMovedAside(path: path(of: name), problem: problem, movedTo: target, handling: mode.creates ? .replaced : .unread))
            if !mode.creates { return nil }
        }
    }

    /// Why the entry `name`, looked at without following a symlink, is no file of the queue's own
    /// (see ``foreignFile(_:_:)``); nil if it is one, or if there is none.
    func foreignFile(_ name: String) throws(ShareQueueError) -> ForeignFile? {
        guard let status = try status(of: name) else { return nil }
        return foreignFile(name, folder.dropCreationLinks(name, status))
    }

    /// Why opening `name` failed with `error` because of what stands there (see ``foreignFile(_:_:)``),
    /// or nil if the failure is the system's: something that is no regular file, or another user's
    /// file that this process may not open.
    func foreignFile(_ name: String, openFailure error: SystemError) -> ForeignFile? {
        if error.isUnexpectedFileType { return .notOneRegularFile }
        guard error.isAccessDenied, let owner = try? status(of: name)?.owner, owner != Host.effectiveUserID else { return nil }
        return .othersUnusable(owner: owner)
    }

    /// What ``foreignFile(_:)`` finds, for a reader that changes nothing: another user's file that
    /// this process may read is read, since one that only looks may run as another user than the drains.
    func foreignFileToRead(_ name: String) throws(ShareQueueError) -> ForeignFile? {
        guard let status = try status(of: name), let foreign = foreignFile(name, status) else { return nil }
        if case .othersUnusable = foreign, folder.mayRead(name) { return notDrainsOwn(name, status).map(ForeignFile.notDrainsOwn) }
        // The drain's own that only it may read (letters that wait): not set aside, only not read here.
        if case .othersUnusable(let owner) = foreign, QueueLayout.access(of: name) == .ownerOnly,
           owner == folder.sharing.directoryOwner || owner == 0, notDrainsOwn(name, status) == nil { return .ownersAlone }
        return foreign
    }

    /// Why the empty `pending.log`, whose status is `status`, is one that some producer of another user
    /// could not append to, or nil if every producer can: it has other names, or in a queue shared with a
    /// group it is not that group's to read and write, or in a queue of one user it is another user's.
    /// Only a drain, which owns the queue, can repair this (it moves the file aside): a producer cannot.
    func unusablePending(_ status: FileStatus) -> String? {
        guard status.isRegularFile, status.size == 0 else { return nil }
        if status.linkCount != 1 { return "is empty and has other names" }
        if let problem = notShared(status) { return "is empty and " + problem }
        if folder.sharing.group == nil, let owner = try? folder.descriptor.status().owner, status.owner != owner {
            return "is empty and belongs to user \(status.owner), not to the queue's owner"
        }
        return nil
    }

    /// Why a regular file whose status is `status` is one that, in a queue shared with a group, some
    /// member's producers could not read (`access` 0o040) or read and write (0o060): it is not the group's,
    /// or lacks those of the group bits files get. Nil if they can, and in a queue the group may not write.
    func notShared(_ status: FileStatus, access: UInt16 = 0o060) -> String? {
        let sharing = folder.sharing
        // Only a directory the group may write has producers of other users.
        guard let group = sharing.group, sharing.filePermissions & 0o020 != 0 else { return nil }
        let bits = sharing.filePermissions & access
        guard status.group != group || status.permissions & bits != bits else { return nil }
        return "not the group's to \(bits & 0o020 == 0 ? "read" : "read and write") (mode \(String(status.permissions, radix: 8)), group \(status.group)"
            + (status.owner == Host.effectiveUserID ? ")" : ", user \(status.owner))")
    }

    /// Why the entry `name` (the format marker, a lock file or the pending file) is one that producers of
    /// other users cannot use, with what becomes of it, for a look at the queue; nil if they can, or it is missing.
    func unusableByProducers(_ name: String) -> String? {
        guard let status = try? folder.status(of: name) else { return nil }
        let remedy = name == QueueLayout.pending ? "until a drain takes it (one that may not read it sets it aside unread, with the records in it)"
            : "until a drain moves it aside and makes \(name == QueueLayout.formatMarker ? "a new marker" : "a new one")"
        if !status.isRegularFile { return "is not a regular file: producers cannot use it \(remedy)" }
        if name == QueueLayout.pending, status.linkCount != 1 { return "has other names: producers refuse to append to it \(remedy)" }
        guard let problem = notShared(status, access: name == QueueLayout.formatMarker ? 0o040 : 0o060) else { return nil }
        return "is \(problem): producers of other users cannot use it \(remedy)"
    }

    /// Why the folder `name` (`attachments` or `keys`), whose status is `status`, is one that producers
    /// of another user, or the host, could not use, or nil if it is the queue's own: this process (the
    /// drain) may not list and search it; in a queue shared with a group, it is not that group's to
    /// write; in a queue of one user, the queue's owner does not own it.
    func unusableFolder(_ name: String, _ status: FileStatus) -> String? {
        guard status.isDirectory else { return nil }
        let sharing = folder.sharing
        if sharing.group == nil, let owner = try? folder.descriptor.status().owner, status.owner != owner {
            return "belongs to user \(status.owner), not to the queue's owner"
        }
        if !folder.mayReadAndSearch(name) { return "is not one this drain may list and search" }
        if let group = sharing.group {
            let groupBits = sharing.folderPermissions & 0o070
            if status.group != group || status.permissions & groupBits != groupBits {
                return "is not the group's to write (mode \(String(status.permissions, radix: 8)), group \(status.group))"
            }
        }
        return nil
    }

    /// What ``foreignFile(_:_:)`` found.
    enum ForeignFile: Equatable {
        case notOneRegularFile
        case othersUnusable(owner: UInt32)
        /// A file only drains write that one of them may not have written (see ``notDrainsOwn(_:_:)``).
        case notDrainsOwn(String)
        /// A file of the queue's owner that only the owner may read: found by a look only, never set aside.
        case ownersAlone

        /// The problem, as a drain's or a status's warning gives it.
        var problem: String {
            switch self {
            case .notOneRegularFile: "is not a regular file with one name"
            case .othersUnusable(let owner): "belongs to user \(owner), and this user may not read and write it"
            case .notDrainsOwn(let problem): problem
            case .ownersAlone: "is the queue owner's alone to read"
            }
        }
    }

    /// Clears the name of a temporary file this process is about to create: a leftover of
    /// an earlier process with the same id is removed, and what cannot be (a directory, which
    /// anyone sharing the queue can make at every such name) is moved aside.
    /// - Returns: where it was moved, if it was.
    func clearTemporary(_ name: String) throws(SystemError) -> String? {
        try folder.clearTemporary(name).map(path(of:))
    }

    /// The largest segment number the queue uses (`QueueLayout`'s rule).
    static var maximumSequence: UInt64 { QueueLayout.maximumSequence }

    /// The number of a segment the queue wrote (`QueueLayout`'s rule).
    static func sealedSequence(of name: String) -> UInt64? { QueueLayout.sealedSequence(of: name) }

    func sealedName(_ sequence: UInt64) -> String { QueueLayout.sealedName(sequence) }

    func sealedPath(_ sequence: UInt64) -> String { path(of: sealedName(sequence)) }

    /// The status of the entry `name` itself, not following a symlink; nil if there is none.
    func status(of name: String) throws(ShareQueueError) -> FileStatus? {
        do { return try folder.status(of: name) } catch { throw ReadFailure.error("cannot examine a file", path: path(of: name), error) }
    }

    /// The `attachments` or `keys` folder, opened without following a symlink; nil if it is missing.
    func subfolder(_ name: String, creating: Bool) throws(ShareQueueError) -> QueueFolder? {
        do { return try folder.subfolder(name, creating: creating) } catch {
            throw ShareQueueError("cannot use the queue's \(name) folder", path: path(of: name), error, creating: creating)
        }
    }

    /// The names in the queue directory that `keep` accepts, without "." and "..": only they are held,
    /// since any member of a shared queue's group can fill the directory with names.
    func names(where keep: (String) -> Bool) throws(ShareQueueError) -> [String] {
        do { return try folder.entries(where: keep) } catch { throw ReadFailure.error("cannot list the queue directory", path: path, error) }
    }

    /// How many names in the queue directory `counted` accepts, none of them held.
    func countNames(where counted: (String) -> Bool) throws(ShareQueueError) -> Int {
        var count = 0
        do { try folder.descriptor.forEachEntry { name in if counted(name) { count += 1 } } } catch {
            throw ReadFailure.error("cannot list the queue directory", path: path, error)
        }
        return count
    }

    /// The sealed segments waiting for delivery, oldest first.
    func sealedSegments() throws(ShareQueueError) -> [UInt64] {
        try segmentListing().sealed
    }

    /// The directory's segment names, read once: the queue's sealed segments,
    /// oldest first, and the names that look like segments but are not spelled
    /// as the queue spells them (`sealed-7.log`), which a drain moves aside.
    /// Each listed number has exactly one name, so a drain opens what it found.
    func segmentListing() throws(ShareQueueError) -> (sealed: [UInt64], foreign: [String]) {
        let names = try names(where: QueueLayout.looksLikeSegment)
        var sealed: [UInt64] = []
        var foreign: [String] = []
        for name in names {
            if let sequence = QueueLayout.sealedSequence(of: name) { sealed.append(sequence) } else { foreign.append(name) }
        }
        return (sealed.sorted(), foreign.sorted())
    }

    /// Reads the format marker, writing it first if the queue is new. A marker
    /// is created by linking a finished temporary file into place, so two
    /// processes starting a queue at once cannot leave a half-written one.
    private mutating func checkFormat(creating: Bool) throws(ShareQueueError) {
        for _ in 0..<2 {
            if let marker = try readFormatMarker(creating: creating) {
                // Read as bytes, line by line, skipping empty lines: the marker is ASCII, and every
                // process that opens a queue reads it, so it is parsed without Strings.
                var rest = marker[...]
                func nextLine() -> ArraySlice<UInt8> {
                    while rest.first == UInt8(ascii: "\n") { rest = rest.dropFirst() }
                    let end = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
                    defer { rest = rest[end...] }
                    return rest[..<end]
                }
                let text = nextLine()
                // Digits only: `format 0`, `format -1` or `format +1` are no format this or any version wrote.
                let digits = text.dropFirst(Self.formatPrefix.utf8.count)
                let version: Int? = text.starts(with: Self.formatPrefix.utf8) && (1...9).contains(digits.count)
                    && digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) && digits.first != UInt8(ascii: "0")
                    ? digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } : nil
                // A marker no drain of the queue's can have written alone is not obeyed: any member could make it
                // say anything, to stop every tool. Read as this version's, as a drain will make it.
                if untrustedMarker == nil, version == nil, folder.sharing.groupMayRename {
                    // Its owner's, but any member may have renamed another of the owner's files (the checkpoint) to this name.
                    untrustedMarker = "says no format, and any member of the queue's group may have put another of its files at this name"
                }
                if untrustedMarker == nil {
                    guard let version else {
                        throw ShareQueueError(.damaged, "the queue's format marker is not one ShareQueue wrote; refusing to touch the queue", path: formatPath)
                    }
                    guard version <= Self.formatVersion else {
                        throw ShareQueueError(.configuration, "the queue has format \(version), newer than the \(Self.formatVersion) this version understands; refusing to touch it", path: path)
                    }
                }
                let second = nextLine()
                markerAsWritten = false
                if second.starts(with: "queue ".utf8) {
                    let candidate = String(decoding: second.dropFirst(6), as: UTF8.self)
                    if RecordID.isValid(candidate) { identifier = candidate }
                    markerAsWritten = identifier != nil && version == Self.formatVersion
                }
                // One that says what this version writes (a producer's, made when there was none) is worth no warning.
                if let untrustedMarker, !markerAsWritten {
                    markerNotRead = "\(formatPath) \(untrustedMarker); read as format \(Self.formatVersion) whatever it says, as a drain will make it: it sets the marker aside and writes another"
                }
                return
            }
            guard creating else { throw ShareQueueError(.noInput, "there is no queue here: the directory has no format marker", path: formatPath) }
            try initialize()
        }
        throw ShareQueueError(.ioError, "the format marker vanished while the queue was opened", path: formatPath)
    }

    /// The format marker's first bytes, or nil if there is none. With `creating`, a marker that
    /// is no regular file, or another user's that this process may not read, is moved aside, as if there were none:
    /// in a queue shared with a group, any member can make it so, which would stop every
    /// tool of everyone else for good (a new marker names a new queue, which costs a store
    /// its position, never a record). Without, such a marker reads as this version's (see ``markerNotRead``).
    private mutating func readFormatMarker(creating: Bool) throws(ShareQueueError) -> [UInt8]? {
        // Looked at first, so that only this very marker is moved aside, never one another tool has just written.
        let seen = try? folder.status(of: QueueLayout.formatMarker)
        // nil: not a regular file.
        let bytes: [UInt8]?
        do throws(SystemError) {
            let fd = try folder.open(QueueLayout.formatMarker, .readOnly)
            defer { fd.close() }
            let status = try fd.status()
            bytes = status.isRegularFile ? try fd.readFully(count: 256, at: 0) : nil
            untrustedMarker = notDrainsOwn(QueueLayout.formatMarker, status)
            markerRead = status
        } catch {
            if error.isNotFound { return nil }
            if let foreign = foreignFile(QueueLayout.formatMarker, openFailure: error),
               let marker = try setAsideMarker(seen, creating: creating, foreign.problem) { return marker }
            // Part of opening the queue: access refused is 77 here, as for the directory.
            throw ShareQueueError("cannot read the queue's format marker", path: formatPath, error)
        }
        guard let bytes else {
            if let marker = try setAsideMarker(seen, creating: creating, ForeignFile.notOneRegularFile.problem) { return marker }
            throw ShareQueueError(.configuration, "the format marker is not a regular file", path: formatPath)
        }
        return bytes
    }

    /// A marker that no tool wrote (`problem` says why): one that makes the queue moves it aside, so that
    /// none is there, and one that only looks reads the queue as this version's, as it will be then.
    /// - Returns: the marker to read instead (none, or this version's), or nil if another tool replaced it meanwhile.
    private mutating func setAsideMarker(_ seen: FileStatus?, creating: Bool, _ problem: String) throws(ShareQueueError) -> [UInt8]?? {
        if creating { return try moveAsideMarker(seen) ? .some(nil) : nil }
        markerNotRead = "\(formatPath) \(problem); read as format \(Self.formatVersion), as a drain will make it: it sets the marker aside and writes another"
        return Array((Self.formatPrefix + "\(Self.formatVersion)\n").utf8)
    }

    /// Moves aside the format marker a look found (`seen`), if it is still the one there.
    /// - Returns: whether no marker is there now: moved aside, or gone already.
    private func moveAsideMarker(_ seen: FileStatus?) throws(ShareQueueError) -> Bool {
        do {
            guard let seen, let now = try folder.status(of: QueueLayout.formatMarker) else { return true }
            guard now.isSameFile(as: seen) else { return false }
            _ = try moveAside(QueueLayout.formatMarker)
            return true
        } catch where error.isNotFound {
            return true
        } catch {
            throw ShareQueueError("cannot set aside the queue's format marker", path: formatPath, error)
        }
    }

    /// Creates the files every queue has, the format marker last. The lock
    /// files and the checkpoint are made now, while there is room, so that a
    /// drain needs no new space even when the file system is full.
    private func initialize() throws(ShareQueueError) {
        // What stands where these go and is no file of the queue's (see `foreignFile`) would stop every
        // tool before the queue is first used, so it is moved aside.
        // Another user's lock file, though, only while the queue holds no records: on a queue in use (its
        // marker lost) it may be held by a process of its owner, and two lock files would let a producer's
        // write and a drain's seal, or two drains, run at once. (A checkpoint moved aside costs deliveries again.)
        let hasPending: Bool
        do { hasPending = try folder.status(of: QueueLayout.pending) != nil } catch {
            throw ShareQueueError("cannot look at the queue's files", path: pendingPath, error)
        }
        let inUse = try hasPending ? true : !sealedSegments().isEmpty
        for name in [QueueLayout.appendLock, QueueLayout.drainLock, QueueLayout.checkpoint] {
            let status: FileStatus?
            do { status = try folder.status(of: name) } catch { throw ShareQueueError("cannot look at the queue's files", path: path(of: name), error) }
            // Its maker's temporary name dropped first: a tool making it now has linked it and not yet removed that.
            guard let status, let foreign = foreignFile(name, folder.dropCreationLinks(name, status)),
                  foreign == .notOneRegularFile || !inUse || name == QueueLayout.checkpoint else { continue }
            // The queue owner's or root's checkpoint is theirs to keep from the group: a producer that may not write it leaves it.
            if case .othersUnusable(let owner) = foreign, owner == folder.sharing.directoryOwner || owner == 0 { continue }
            do { _ = try moveAside(name) } catch { throw ShareQueueError("cannot set aside a file the queue did not write", path: path(of: name), error) }
        }
        for lock in [QueueLayout.appendLock, QueueLayout.drainLock] {
            do { try folder.open(lock, .lockFile).close() } catch {
                // Another user's, left in place above: the marker is still written, so that a drain, which moves
                // such a lock file aside when it takes the lock, is not stopped here; a producer stops at the lock.
                if inUse, foreignFile(lock, openFailure: error) != nil { continue }
                throw ShareQueueError("cannot create a lock file", path: path(of: lock), error, creating: true)
            }
        }
        // Only by a drain's user: a checkpoint another user made, a drain would set aside.
        if mayWriteDrainsFiles { _ = try Checkpoint(directory: self, onEvent: { _ in }) }
        try writeFormatMarker()
    }

    /// Whether the files only drains write, made by this process, are ones a drain trusts: it runs as the
    /// queue's owner, or as root (which gives them to the owner).
    var mayWriteDrainsFiles: Bool {
        Host.effectiveUserID == 0 || Host.effectiveUserID == folder.sharing.directoryOwner
    }

    /// Replaces a format marker that no drain of the queue's can have written alone (``untrustedMarker``,
    /// as found now) with this drain's own, which keeps the identifier the queue was read with, so that a
    /// store keeps its position. One that said what this version writes (a producer's, made when none was
    /// there) is replaced in one rename; anything else is set aside first. Under the drain lock, by a drain
    /// of the queue's owner or root.
    /// - Returns: why the marker was set aside, and where it went; nil if none was, or it was the queue's own.
    func replaceUntrustedMarker() throws(ShareQueueError) -> (problem: String, movedTo: String)? {
        guard mayWriteDrainsFiles, let seen = try status(of: QueueLayout.formatMarker), seen.isRegularFile,
              let problem = notDrainsOwn(QueueLayout.formatMarker, seen)
                ?? (markerRead.map(seen.isSameFile) == true ? untrustedMarker : nil) else { return nil }
        if markerAsWritten, untrustedMarker != nil, let markerRead, seen.isSameFile(as: markerRead) {
            try writeFormatMarker(identifier: identifier, replacing: true)
            return nil
        }
        let target: String
        do { target = try moveAside(QueueLayout.formatMarker) } catch {
            throw ShareQueueError("cannot set aside the queue's format marker", path: formatPath, error)
        }
        try writeFormatMarker(identifier: identifier)
        return (problem, target)
    }

    /// Writes a format marker under a temporary name and links it into place, never over another
    /// (a tool that wrote one first wins), or with `replacing`, renames it over the one there.
    private func writeFormatMarker(identifier: String? = nil, replacing: Bool = false) throws(ShareQueueError) {
        let temporary = QueueLayout.formatMarkerTemporary(processID: Host.processID)
        do throws(SystemError) {
            _ = try clearTemporary(temporary)
            let fd = try folder.open(temporary, .writeCreateExclusive)
            try fd.closeAfter { () throws(SystemError) in
                try fd.writeAll(Array((Self.formatPrefix + "\(Self.formatVersion)\nqueue \(identifier ?? RecordID.random())\n").utf8))
                try fd.synchronize(.formatMarkerData)
            }
            if replacing {
                try folder.rename(temporary, to: QueueLayout.formatMarker)
            } else {
                try folder.link(temporary, to: QueueLayout.formatMarker)
                try folder.remove(temporary)
            }
            try folder.synchronize(.formatMarkerLinked)
        } catch {
            try? folder.remove(temporary)
            if error.isAlreadyExists { return }
            throw ShareQueueError("cannot write the queue's format marker", path: path, error, creating: true)
        }
    }
}

extension QueueDirectory {
    /// The documented per-user default: `$XDG_DATA_HOME/ShareQueue/<group>` (or
    /// `~/.local/share/ShareQueue/<group>`) on Linux, `~/Library/Application
    /// Support/ShareQueue/<group>` on Apple platforms (on iOS, inside the app's own
    /// sandbox); the group is `default` unless given.
    /// The tools' default, not an app's: an app uses its App Group container.
    package static func defaultPath(group: String?) throws(ShareQueueError) -> String {
        let name = group ?? "default"
        guard !name.isEmpty, name != ".", name != "..", name.utf8.count <= 255,
              name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)) }) else {
            throw ShareQueueError(.invalidArgument, "a group must be letters, digits, '.', '_' or '-', like an App Group identifier: '\(name)'")
        }
        #if canImport(Darwin)
        guard let home = try pathVariable("HOME"), !home.isEmpty else {
            throw ShareQueueError(.configuration, "HOME is not set, so there is no default queue directory; pass --dir or set SHARE_QUEUE_DIR")
        }
        return home + "/Library/Application Support/ShareQueue/" + name
        #else
        if let data = try pathVariable("XDG_DATA_HOME"), data.hasPrefix("/") {
            return data + "/ShareQueue/" + name
        }
        guard let home = try pathVariable("HOME"), home.hasPrefix("/") else {
            throw ShareQueueError(.configuration, "neither XDG_DATA_HOME nor HOME is set, so there is no default queue directory; pass --dir or set SHARE_QUEUE_DIR")
        }
        return home + "/.local/share/ShareQueue/" + name
        #endif
    }

    /// The value of the environment variable `name`, which holds a path, or nil if it is not set.
    /// - Throws: `.badData` if the value is not UTF-8: as text its bytes would be replaced, and the
    ///   path would name another directory, which a tool would then create and use.
    package static func pathVariable(_ name: String) throws(ShareQueueError) -> String? {
        guard let value = Host.environmentBytes(name) else { return nil }
        guard let text = String(validating: value, as: UTF8.self) else {
            throw ShareQueueError(.badData, "\(name) is not valid UTF-8; give the queue's directory with --dir in UTF-8")
        }
        return text
    }
}
