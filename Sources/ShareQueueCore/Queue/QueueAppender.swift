import ShareQueueSystem

/// Limits and durability for appends.
public struct AppendOptions: Sendable {
    /// Whether an append syncs its records to disk (fdatasync on Linux) before it returns.
    /// Off, a power cut can lose acknowledged records.
    public var synchronize = true
    /// The largest stored record, in bytes of its JSON. At most 16 MiB.
    public var maxRecordBytes = 1 << 20
    /// An append is refused (`.queueFull`) while the pending file would grow past this.
    public var maxPendingBytes: Int64 = 256 << 20
    /// The longest an append waits for the producers' lock, in seconds, before it is
    /// refused with `.busy` naming the lock and, where the system can tell, the
    /// process that holds it. Producers and drains hold it for one write or one
    /// rename, so only a holder that is stopped (or an app suspended) makes an append wait this long.
    public var lockTimeoutSeconds: Double = 10

    /// The defaults: synchronized appends, records up to 1 MiB, 256 MiB pending at most,
    /// and at most 10 seconds' wait for the producers' lock.
    public init() {}
}

/// Appends records to a queue: the extension's side.
///
/// Each append encodes its records first, then takes the producers' lock for
/// one `write` of all their frames, and syncs after releasing it, so producers
/// that append at once share the cost of a flush (``appendIfChanged(_:)`` syncs
/// before releasing it, and an append that removes a key's published entry syncs
/// the `keys` folder under the lock). The cost does not depend on
/// how much is pending: no directory scan, no read of earlier records. A
/// keyed append also removes its key's entry from the `keys` folder (see
/// ``appendIfChanged(_:)``), which usually costs one failed system call. The one
/// exception: a pending file of another user (not the queue owner's, not root's) is
/// first copied into one of this user's own, since its owner could make it unreadable
/// to the host; drains make the pending file as the queue's owner, so this is rare.
/// Safe to share between threads: its appends take turns.
// @unchecked Sendable: the mutable state below (`pending`, `ownEnd`, the id
// generator, the clock cache, the scratch buffers) is touched only by an
// operation holding `serial`. For the same reason its accesses are not checked
// for exclusivity as they run: `serial` already rules out overlapping ones, and the
// check's bookkeeping in the runtime cost about 580 of an append's 7,300 instructions.
public final class QueueAppender: @unchecked Sendable {
    /// The queue this appender writes to.
    public let directory: QueueDirectory
    /// The limits and durability its appends use.
    public let options: AppendOptions

    /// The producers' lock, kept open between appends.
    private let lock: ProducersLock
    /// The pending file as last opened, to reuse while a drainer has not sealed it.
    @exclusivity(unchecked) private var pending: (file: FileDescriptor, status: FileStatus)?
    /// Where this appender's own last write ended in `pending`: if the file
    /// still ends there, its tail is known to be whole.
    @exclusivity(unchecked) private var ownEnd: Int64?
    /// Whether the last append found another producer's write after this appender's own.
    @exclusivity(unchecked) private var followedAnother = false
    @exclusivity(unchecked) private var idGenerator = RecordID.Generator()
    @exclusivity(unchecked) private var clock = Timestamp.Cache()
    /// Where each record is encoded before it is checked and framed, and where
    /// an append's frames are gathered, kept between appends so that a small append allocates neither.
    @exclusivity(unchecked) private var scratch = EncodingBuffers()
    /// Where the end of the pending file is read to check it before an append, kept for the same reason.
    @exclusivity(unchecked) private var tail = [UInt8](repeating: 0, count: tailWindow)
    /// Held by each public operation, so that threads sharing this appender take turns.
    let serial = ThreadLock()

    /// Opens the queue's lock file and directory for appending; takes no lock yet.
    /// - Parameters:
    ///   - directory: The queue to append to.
    ///   - options: Limits and durability for every append.
    /// - Throws: `.permissionDenied`, `.cannotCreate` or `.ioError` when the
    ///   lock file or the directory cannot be opened.
    public init(directory: QueueDirectory, options: AppendOptions = AppendOptions()) throws(ShareQueueError) {
        self.directory = directory
        self.options = options
        lock = try ProducersLock(in: directory, lockFile: try Self.openProducersLock(in: directory))
    }

    /// Opens the producers' lock file of `directory`, creating it if missing.
    private static func openProducersLock(in directory: QueueDirectory) throws(ShareQueueError) -> FileDescriptor {
        do {
            return try directory.folder.open(QueueLayout.appendLock, .lockFile)
        } catch {
            // Any member of a shared queue's group can put such a file there; only a drain, the queue owner's, replaces it.
            if let foreign = directory.foreignFile(QueueLayout.appendLock, openFailure: error) {
                throw ShareQueueError(error.isAccessDenied ? .permissionDenied : .configuration,
                                      "the producers' lock file \(foreign.problem); nothing was appended. The queue's next drain moves it aside and makes a new one",
                                      path: directory.appendLockPath)
            }
            throw ShareQueueError("cannot open the queue's lock file", path: directory.appendLockPath, error, creating: true)
        }
    }

    deinit {
        pending?.file.close()
        lock.release()
    }

    /// Appends one record and returns its id.
    /// - Parameter draft: The record's content and labels.
    /// - Returns: The record's id. Once this returns the record will be delivered.
    /// - Throws: What appending a batch of this one draft throws.
    @discardableResult
    public func append(_ draft: RecordDraft) throws(ShareQueueError) -> String {
        serial.lock()
        defer { serial.unlock() }
        // The batch of one without arrays of drafts, ids or keys: the most frequent append.
        var buffers = scratch.take()
        defer { scratch.keep(buffers) }
        let id = try encode(draft, date: clock.now(), last: true, into: &buffers)
        try write(buffers.frames, forgetting: draft.key.map { [ByteKey($0)] } ?? [])
        return id
    }

    /// Appends records as one atomic batch: after a crash either all of them
    /// are in the queue or none is.
    /// - Parameter drafts: The records, in the order a drain delivers them.
    /// - Returns: the ids, in order. Once this returns they will be delivered.
    /// - Throws: `.invalidArgument` for a draft whose id, source or key breaks its rule,
    ///   `.noInput` for no drafts (or an attachments-only draft without any),
    ///   `.badData` for a URL that is not one, a record over the size limit or one a drain would
    ///   refuse (checked on the very bytes written), `.queueFull` when the queue holds
    ///   `maxPendingBytes`, `.busy` when the producers' lock stays taken past `lockTimeoutSeconds`,
    ///   `.ioError` when the disk fails; the queue is then unchanged, unless the records were written
    ///   and only their sync failed (``ShareQueueError/recordWasWritten``): they may then be delivered.
    public func append(_ drafts: [RecordDraft]) throws(ShareQueueError) -> [String] {
        serial.lock()
        defer { serial.unlock() }
        var buffers = scratch.take()
        defer { scratch.keep(buffers) }
        let ids = try encode(drafts, into: &buffers)
        try write(buffers.frames, forgetting: Set(drafts.compactMap { $0.key.map(ByteKey.init) }))
        return ids
    }

    /// Checks and frames drafts as one atomic append, into `buffers.frames`.
    /// - Returns: the records' ids.
    func encode(_ drafts: [RecordDraft], into buffers: inout EncodingBuffers) throws(ShareQueueError) -> [String] {
        guard !drafts.isEmpty else { throw ShareQueueError(.noInput, "nothing to append") }
        let date = clock.now()
        var ids: [String] = []
        ids.reserveCapacity(drafts.count)
        for index in drafts.indices {
            ids.append(try encode(drafts[index], date: date, last: index == drafts.count - 1, into: &buffers))
            // Sized once from the first record, since records of one append are often
            // alike, but never past what one append may write.
            if index == 0 {
                buffers.frames.reserveCapacity(min(buffers.frames.count * drafts.count, Frame.maximumBatchSize + Frame.overhead))
            }
            // Checked as it grows, so that too large a batch is refused in bounded memory.
            try Self.checkBatchSize(buffers.frames.count, records: drafts.count)
        }
        return ids
    }

    /// Checks one draft and appends its frame to `buffers.frames`.
    /// - Parameter last: Whether it is the last record of its append.
    /// - Returns: the record's id.
    private func encode(_ draft: RecordDraft, date: String, last: Bool, into buffers: inout EncodingBuffers) throws(ShareQueueError) -> String {
        try draft.validate()
        let id = draft.id ?? idGenerator.next()
        buffers.payload.removeAll(keepingCapacity: true)
        draft.appendPayload(id: id, date: date, to: &buffers.payload)
        try Self.checkRecordSize(buffers.payload.count, options: options)
        try Self.checkStored(buffers.payload)
        Frame.append(payload: buffers.payload, to: &buffers.frames, last: last)
        return id
    }

    /// Appends records already encoded, such as dead letters put back, as one atomic batch.
    /// - Parameter keys: The keys of those records, whose published entries they supersede.
    func appendStored(_ payloads: [[UInt8]], forgetting keys: Set<ByteKey> = []) throws(ShareQueueError) {
        serial.lock()
        defer { serial.unlock() }
        try write(try Self.frames(of: payloads, options: options), forgetting: keys)
    }

    /// Writes an append's frames under the lock, then makes them durable.
    /// - Parameter keys: The keys of its records, whose index entries go first:
    ///   an entry must never name older content than the last record of its key.
    private func write(_ frames: [UInt8], forgetting keys: Set<ByteKey> = []) throws(ShareQueueError) {
        let file = try withProducersLock { () throws(ShareQueueError) in
            try forgetPublished(keys)
            return try writeLocked(frames)
        }
        CrashPoint.reached(.appendUnlocked)
        if options.synchronize {
            // Other producers are appending, and the one our unlock woke is ready to write. Let it, before this
            // sync starts a journal commit: syncs share a commit (and the disk's flush) only when their writes
            // come before it begins. On 2 cores, 8 producers then cost the disk 17% fewer flushes, fewer than
            // C that syncs without this (Documentation/Performance.md). A producer alone never yields.
            if followedAnother { Host.yieldProcessor() }
            try synchronize(file)
        }
        CrashPoint.reached(.appendSynced)
    }

    /// Makes what was written to the pending file durable.
    func synchronize(_ file: FileDescriptor) throws(ShareQueueError) {
        do {
            try file.synchronize(.appendRecord)
        } catch {
            var failure = ShareQueueError("the record was written but could not be made durable", path: directory.pendingPath, error)
            failure.recordWasWritten = true
            throw failure
        }
    }

    /// Removes the index entries of `keys` (see ``KeyIndex``); called under the producers' lock.
    /// Usually costs one failed `openat`: no `keys` folder, or one `unlinkat` of a name that is not there.
    func forgetPublished(_ keys: Set<ByteKey>) throws(ShareQueueError) {
        guard !keys.isEmpty, let index = try KeyIndex(in: directory, creating: false) else { return }
        for key in keys {
            do { try index.forget(key.text, durably: options.synchronize) } catch {
                throw ShareQueueError("cannot remove the published entry of the record's key", path: directory.path(of: QueueLayout.keys), error)
            }
        }
    }

    /// Runs `body` holding the producers' lock, waiting for it at most `options.lockTimeoutSeconds`.
    /// - Throws: `.busy` naming the lock and its holder if it stays taken that long.
    func withProducersLock<R>(_ body: () throws(ShareQueueError) -> R) throws(ShareQueueError) -> R {
        try lock.take(seconds: options.lockTimeoutSeconds, consequence: "nothing was appended")
        defer { lock.unlock() }
        CrashPoint.reached(.appendLocked)
        return try body()
    }

    /// Writes `frames` at the end of the pending file; called under the producers' lock.
    func writeLocked(_ frames: [UInt8]) throws(ShareQueueError) -> FileDescriptor {
        var (file, size) = try openPending()
        guard size + Int64(frames.count) <= options.maxPendingBytes else {
            throw ShareQueueError(.queueFull, "the queue is full: \(size) bytes pending, the cap is \(options.maxPendingBytes) bytes; run a drain",
                                  path: directory.pendingPath)
        }
        followedAnother = size > 0 && size != ownEnd
        if followedAnother { size = try repairTail(of: file, size: size) }
        if CrashPoint.isDue(.appendHalfWritten) {
            try? file.writeAll(Array(frames.prefix(frames.count / 2)))
            Host.killSelf()
        }
        do {
            try file.writeAll(frames)
        } catch {
            // Leave no partial record behind; if even this fails, the next append repairs it.
            try? file.truncate(to: size)
            throw writeFailure(error)
        }
        ownEnd = size + Int64(frames.count)
        CrashPoint.reached(.appendWritten)
        return file
    }

    /// A failed write to the pending file, as an append reports it.
    private func writeFailure(_ error: SystemError) -> ShareQueueError {
        ShareQueueError(error.isNoSpace ? "no space left for the record" : "cannot write the record", path: directory.pendingPath, error)
    }

    /// The pending file, reopened if a drainer has sealed the one held.
    /// - Returns: the file and its size now.
    private func openPending() throws(ShareQueueError) -> (FileDescriptor, size: Int64) {
        // The path is spelled out only when the file is opened or an error names it, not on every append.
        func failure(_ error: SystemError) -> ShareQueueError {
            ShareQueueError("cannot open the pending file", path: directory.pendingPath, error, creating: true)
        }
        // One lstat tells both whether a drainer sealed the file held and how long it is.
        let onDisk: FileStatus?
        do { onDisk = try directory.folder.status(of: QueueLayout.pending) } catch { throw failure(error) }
        if let held = pending, let onDisk, onDisk.isSameFile(as: held.status), onDisk.linkCount == 1 { return (held.file, onDisk.size) }
        pending?.file.close()
        pending = nil
        ownEnd = nil
        let path = directory.pendingPath
        if let onDisk, !onDisk.isRegularFile {
            throw ShareQueueError(.configuration, "refusing to append: the pending file is not a regular file", path: path)
        }
        if onDisk == nil {
            // A drain syncs its seal's rename after releasing the producers' lock: until it does, a power cut
            // may keep a new pending file's name and lose the rename, and with it the sealed records.
            do { try directory.folder.synchronize(.pendingReplaced) } catch { throw failure(error) }
        }
        var file: FileDescriptor
        var status: FileStatus
        do throws(SystemError) {
            file = try directory.folder.open(QueueLayout.pending, .appendCreate)
            status = try file.status()
        } catch {
            if case .othersUnusable(let owner) = directory.foreignFile(QueueLayout.pending, openFailure: error) {
                throw ShareQueueError(.permissionDenied, "the pending file belongs to user \(owner), who lets no other user read and write it; "
                                      + "nothing was appended. The queue's next drain takes it, and producers go on", path: path)
            }
            throw failure(error)
        }
        // Made whole and linked into place, the file keeps its temporary name only if its maker was killed in between.
        if status.linkCount > 1 { status = directory.folder.dropCreationLinks(QueueLayout.pending, status) }
        guard status.isRegularFile, status.linkCount == 1 else {
            file.close()
            throw ShareQueueError(.configuration, "refusing to append: the pending file has other names or is not a regular file", path: path)
        }
        // Its owner could make it unreadable to the host once this producer's records were in it.
        if isOthersPending(status) { (file, status) = try replaceOthersPending(file, status) }
        pending = (file, status)
        if onDisk == nil {
            // Made durable before any record goes in, so that no producer's
            // fsync can report success for a file whose name a power cut could lose.
            do { try directory.folder.synchronize(.pendingCreated) } catch { throw failure(error) }
        }
        return (file, status.size)
    }

    /// The bytes read from the end of the pending file to check its last frame: most frames fit.
    private static let tailWindow = 1024

    /// Whether the pending file, `size` bytes long, ends on a whole append: an "END"
    /// trailer, and the header of its frame where the trailer says.
    ///
    /// This runs under the producers' lock for every append after another producer's, so it
    /// reads into `tail`, kept between appends, and one read usually holds the last frame's
    /// header and trailer both; a second read is kept for long frames.
    private func endsOnWholeAppend(_ file: FileDescriptor, size: Int64) throws(SystemError) -> Bool {
        let window = Int(min(size, Int64(Self.tailWindow)))
        guard window >= Frame.overhead else { return false }
        // Read into the end of `tail`, so that the file's last byte is the buffer's.
        let start = Self.tailWindow - window
        var done = 0
        while done < window {
            let n = try file.read(into: &tail, from: start + done, at: size - Int64(window - done))
            if n == 0 { return false }
            done += n
        }
        let length = tail.withUnsafeBytes { Frame.trailerLength(UnsafeRawBufferPointer(rebasing: $0.suffix(Frame.trailerSize))) }
        guard let length, size >= Int64(Frame.overhead + length) else { return false }
        if Frame.overhead + length <= window {
            return tail.withUnsafeBytes { Frame.headerMatches(UnsafeRawBufferPointer(rebasing: $0.suffix(Frame.overhead + length)), length: length) }
        }
        let header = try file.readFully(count: 8, at: size - Int64(Frame.overhead + length))
        return header.withUnsafeBytes { Frame.headerMatches($0, length: length) }
    }

    /// Checks that the file ends on a whole record; if a writer died mid-write,
    /// sets its partial record aside and cuts it off.
    /// - Returns: the size of the file afterwards.
    private func repairTail(of file: FileDescriptor, size: Int64) throws(ShareQueueError) -> Int64 {
        // A long torn tail comes in several pieces, all at the end of the file.
        var torn: [DamagedRegion] = []
        do throws(SystemError) {
            if try endsOnWholeAppend(file, size: size) { return size }
            var reader = SegmentReader(file: file, from: 0)
            while let event = try reader.next() {
                if case .damaged(let region) = event, region.isTornTail { torn.append(region) }
            }
        } catch { throw writeFailure(error) }
        guard let cut = torn.first?.offset else { return size }
        let quarantine = Quarantine(directory: directory)
        try quarantine.add(try quarantine.withinLimit(torn), segment: QueueLayout.pending)
        CrashPoint.reached(.appendRepairQuarantined)
        do { try file.truncate(to: cut) } catch { throw writeFailure(error) }
        return cut
    }
}
