import ShareQueueSystem

/// Takes records out of a queue and hands them to a sink: the host's side.
///
/// One drainer runs at a time. It seals the pending file by renaming it under
/// the producers' lock, which takes a moment, and then delivers from the sealed
/// file without holding that lock, so producers never wait for a sink. After
/// each batch it records a checkpoint; a sealed file is removed only once all
/// of it has been delivered or set aside. A drainer killed at any point resumes
/// from the checkpoint, so a record is delivered at least once, and exactly
/// once to a sink that stores the position itself.
///
/// Safe to share between threads and tasks; two drains at once, from this
/// process or another, take turns on the drain lock.
// @unchecked Sendable: `directory` and `options` are immutable and Sendable;
// `onEvent` and the deprecated `warn`, the mutable properties, are each kept behind a lock.
public final class QueueDrainer: @unchecked Sendable {
    /// The queue this drainer takes records from.
    public let directory: QueueDirectory
    /// How it batches, what it does with keys and attachments, and when it stops.
    public let options: DrainOptions
    /// Hears of what a drain meets and deals with on its own: damaged records set aside,
    /// files moved out of the way, records refused or made dead letters (see ``QueueEvent``).
    /// It is called on the thread the drain runs on, as each happens; by default it does nothing.
    public var onEvent: @Sendable (QueueEvent) -> Void {
        get { eventHandler.value }
        set { eventHandler.value = newValue }
    }
    private let eventHandler = Locked<@Sendable (QueueEvent) -> Void>({ _ in })

    /// Receives each event's ``QueueEvent/description``, the text it received before events
    /// were values. Setting it sets ``onEvent``; reading it gives what was last set here.
    @available(*, deprecated, message: "set onEvent, which receives each event as a value; its description is the text warn received")
    public var warn: @Sendable (String) -> Void {
        get { textHandler.value }
        set {
            textHandler.value = newValue
            onEvent = { newValue($0.description) }
        }
    }
    private let textHandler = Locked<@Sendable (String) -> Void>({ _ in })
    /// Files a drain removes once they are this old and nothing refers to them (a day).
    static let staleAge: Int64 = 86_400
    /// The most files left behind that a drain looks at, of each kind, chosen at random: any producer can
    /// make old ones by the hundred thousand, and a drain holds the names of those it looks at.
    static let staleFilesPerDrain = 10_000

    /// A drainer for `directory`; nothing is locked or read until `drain(into:)`.
    ///
    /// It throws, as `QueueAppender.init` does, so that both are made with `try`: here for
    /// options no drain can follow.
    /// - Parameters:
    ///   - directory: The queue to drain.
    ///   - options: How to batch, and when to stop.
    /// - Throws: `.invalidArgument` for a `batchSize`, `batchBytes` or `maxAttempts` under 1,
    ///   a negative `maxRecords` or `maxAttachmentBytes`, a `waitSeconds` that is negative or
    ///   not finite.
    public init(directory: QueueDirectory, options: DrainOptions = DrainOptions()) throws(ShareQueueError) {
        if let problem = options.problem {
            throw ShareQueueError(.invalidArgument, "cannot drain with these options: \(problem)", path: directory.path)
        }
        self.directory = directory
        self.options = options
    }

    /// Drains the queue into `sink`: every sealed segment from the checkpoint on,
    /// then what is pending, batch by batch, until the queue is empty, the
    /// record limit is reached or `shouldStop` says so.
    /// - Parameter sink: Where the records go; a batch it returns from is delivered.
    /// - Returns: What was delivered, set aside and dead-lettered.
    /// - Throws: The sink's own error, as it threw it, when it fails to take a batch: that batch
    ///   and everything after it stay queued. Otherwise a ``ShareQueueError``: `.busy` if another
    ///   drainer held the drain lock throughout `DrainOptions.waitSeconds`, `.sinkRefused` when
    ///   records the sink refused stay queued (the others were delivered), `.ioError` when reading
    ///   or writing the queue's own files fails, and others as they come.
    public func drain<Sink: DrainSink>(into sink: inout Sink) throws -> DrainSummary {
        let drainLock = try takeDrainLock()
        defer { QueueLock.release(drainLock) }
        CrashPoint.reached(.drainLocked)
        try setAsideForeignFiles()
        CrashPoint.reached(.drainFilesChecked)
        // A requeue cut short is finished first: a drain before it resumed delivered what it had
        // put back, which it then put back again, so that its letters came twice. Anything else at
        // that name is no requeue's, and was moved aside above.
        if try directory.status(of: QueueLayout.deadLettersRequeue) != nil {
            // But what is queued comes first: a requeue that cannot finish (a full disk or queue, a
            // pending file to be moved aside) must not stop every drain, and with it what producers acknowledged.
            do {
                let count = try putBackDeadLetters(resumingOnly: true)
                onEvent(.requeueFinished(recordsPutBack: count))
            } catch {
                onEvent(.requeueNotFinished(cause: "\(error)"))
            }
        }
        // Letters that waited for another user's folder or copy come back once this drain may read it. What is
        // queued comes first: a failure to put them back is said, and a later drain looks again.
        do { _ = try putBackWaitingLetters() } catch {
            onEvent(.waitingLettersNotPutBack(cause: "\(error)"))
        }
        var run = DrainRun(drainer: self, checkpoint: try Checkpoint(directory: directory, onEvent: onEvent), buildRecords: sink.needsRecords)
        // The sink's own errors are marked, so that they are not mistaken for the queue's.
        var marked = SinkErrorMarking(sink)
        defer { sink = marked.sink }
        // Positions are synced at the end, not per batch (see `Checkpoint`); after a failure too, where nothing can be reported.
        defer { try? run.checkpoint.synchronize(.checkpointAtEnd) }
        do {
            try run.deliverAll(into: &marked)
            try run.checkpoint.synchronize(.checkpointAtEnd)
        } catch let error as SinkErrorMarking<Sink>.Failure {
            // The app's own error, as it threw it: it catches it by its type. What the sink did not take stays queued.
            throw error.underlying
        } catch let refusal as RecordRefusal {
            // Left unsettled when a stop was asked for: nothing is set aside, and it is the sink's doing, not the disk's.
            throw ShareQueueError(.sinkRefused, "the sink refused records as the drain was stopping; they and the rest stay queued", underlying: refusal)
        } catch {
            // The queue's own failures: what they prove is ReadFailure's to say.
            throw ReadFailure.error("cannot read or write the queue's files", path: directory.path, error)
        }
        makeOwnPending()
        // Records refused under the limit stay queued: the run delivered the rest, and says so in this error.
        if let held = run.held.error(maxAttempts: options.maxAttempts, delivered: run.summary.delivered) { throw held }
        if !run.summary.stoppedAtLimit && !run.summary.stoppedOnRequest { run.removeStaleFiles() }
        return run.summary
    }

    /// Puts every dead letter back at the end of the queue, with its id and date.
    /// Lines that are not dead letters are kept aside as a `rejected-*` file.
    /// - Returns: how many records were put back.
    public func requeueDeadLetters() throws(ShareQueueError) -> Int {
        let drainLock = try takeDrainLock()
        defer { QueueLock.release(drainLock) }
        // A requeue cut short is finished first, then the letters made since are put back.
        let resumed = try putBackDeadLetters(resumingOnly: true)
        return try resumed + putBackDeadLetters(resumingOnly: false)
    }

    /// What ``requeueDeadLetters()`` does, under the drain lock; `resumingOnly` finishes a
    /// requeue cut short, if there is one, and starts none.
    private func putBackDeadLetters(resumingOnly: Bool) throws(ShareQueueError) -> Int {
        let letters = DeadLetters(directory: directory, onEvent: onEvent)
        // What stands where letters are, or where letters being put back would be, and is no file of theirs, is moved
        // out of the way unread, as a drain's start does: one this drain may read but not write would be put back
        // whole and then fail to be marked so.
        for name in [QueueLayout.deadLettersRequeue, QueueLayout.deadLetters] {
            if let foreign = try directory.foreignFile(name) { try moveAsideForeign(name, foreign.problem) }
        }
        // Renamed first, so that a crash cannot leave a letter both queued and waiting.
        let resuming = try directory.status(of: QueueLayout.deadLettersRequeue) != nil
        if !resuming {
            guard !resumingOnly, try directory.status(of: QueueLayout.deadLetters) != nil else { return 0 }
            do { try directory.folder.rename(QueueLayout.deadLetters, to: QueueLayout.deadLettersRequeue) } catch {
                throw ShareQueueError("cannot take the dead letters", path: letters.path, error)
            }
        }
        // A requeue that died after appending left the file: skip what it already put back, known
        // by its bytes, not its id, which any producer can give another record (the letters show it).
        // Only then: a pending copy of a letter's bytes may be any producer's, appended to take the
        // letter's place and spoiled once it has, so a fresh requeue puts every letter back.
        var queued: Set<DeadLetters.StoredDigest> = []
        if resuming { try QueueInspector(directory: directory).forEachPending(includingUnsealed: true) { queued.insert(DeadLetters.StoredDigest($0.storedJSON)) } }
        // Records are put back as they were taken, whatever limit the producer used, in atomic appends of at most 16 MiB.
        var options = AppendOptions()
        options.maxRecordBytes = Frame.maximumPayloadSize
        options.lockTimeoutSeconds = max(self.options.waitSeconds, QueueLock.minimumSealWait)
        let appender = try QueueAppender(directory: directory, options: options)
        var chunk: [[UInt8]] = []
        var chunkKeys: Set<ByteKey> = []
        var chunkBytes = 0
        // The lines of the chunk's letters, and of those skipped as already queued, all blanked once it is in.
        var chunkLines: [Range<Int64>] = []
        var count = 0
        func appendChunk() throws(ShareQueueError) {
            if Mutant.active == .requeueLettersBlankedFirst { try letters.blank(chunkLines, in: QueueLayout.deadLettersRequeue) }
            if !chunk.isEmpty { try appender.appendStored(chunk, forgetting: chunkKeys) }
            if Mutant.active != .requeueLettersBlankedFirst { try letters.blank(chunkLines, in: QueueLayout.deadLettersRequeue) }
            chunk = []
            chunkKeys = []
            chunkBytes = 0
            chunkLines = []
        }
        // Read a letter at a time: the file may be far larger than memory. A damaged line ends a
        // chunk, so that blanking a chunk's lines (and the line breaks between them) leaves it alone.
        let skipped = try letters.forEachLetter(in: QueueLayout.deadLettersRequeue, isBoundary: appendChunk) { payload, line throws(ShareQueueError) in
            // The lines blanked at once span at most an append's bytes, letters skipped among them included.
            if let first = chunkLines.first, line.upperBound - first.lowerBound > Int64(Frame.maximumBatchSize) { try appendChunk() }
            if queued.contains(DeadLetters.StoredDigest(payload)) {
                chunkLines.append(line)
                return
            }
            let summary = try? RecordSummary(jsonBytes: payload)
            if !chunk.isEmpty && chunkBytes + payload.count + Frame.overhead > Frame.maximumBatchSize { try appendChunk() }
            chunk.append(payload)
            chunkLines.append(line)
            // A letter put back is now its key's newest record: the key's published entry no longer names it.
            if let key = summary?.key { chunkKeys.insert(ByteKey(key)) }
            chunkBytes += payload.count + Frame.overhead
            count += 1
        }
        try appendChunk()
        if skipped > 0 {
            // What could not be read as letters is not destroyed.
            let target: String
            do { target = try directory.moveAside(QueueLayout.deadLettersRequeue) } catch {
                throw ShareQueueError("cannot set aside the damaged dead letters", path: letters.requeuePath, error)
            }
            onEvent(.damagedRequeueMovedAside(path: letters.requeuePath, damagedLines: skipped, movedTo: target))
        } else {
            try? directory.folder.remove(QueueLayout.deadLettersRequeue)
        }
        return count
    }

    /// Moves anything but a regular file with one name away from the paths
    /// of the files a drain writes, so that a planted symlink, FIFO or hard
    /// link cannot stop every drain, nor a file another user of a shared queue
    /// made that this drain may not read and write; the checkpoint then starts
    /// over, which delivers again rather than loses.
    private func setAsideForeignFiles() throws(ShareQueueError) {
        // A marker a member wrote, or could write into, stops no producer (they read it as this version's), but only
        // this drain's own puts an end to it. A member's checkpoint or counts are set aside below (`notDrainsOwn`).
        if let replaced = try directory.replaceUntrustedMarker() {
            onEvent(.fileMovedAside(path: directory.formatPath, problem: replaced.problem, movedTo: replaced.movedTo, handling: .replaced))
        }
        for name in QueueLayout.drainsOwnFiles {
            if let foreign = try directory.foreignFile(name) {
                try moveAsideForeign(name, foreign.problem)
            } else if name == QueueLayout.quarantine, let status = try directory.status(of: name), status.owner != Host.effectiveUserID,
                      let problem = directory.notShared(status) {
                // Producers write torn tails there too: one its owner closed to them stops every producer that finds one.
                try moveAsideForeign(name, "is " + problem + ", so that producers of other users could not write to it")
            }
        }
        // The attachments and keys folders must be directories of the queue's own, not links to somewhere else.
        for name in QueueLayout.folders {
            guard let status = try directory.status(of: name) else { continue }
            if !status.isDirectory {
                try moveAsideForeign(name, "is not a directory", handling: .unfollowed)
            } else if let problem = directory.unusableFolder(name, status) {
                // Producers of other users (or this drain) could not use it, and only the queue's owner can repair that.
                try moveAsideForeign(name, problem, handling: .contentsLeftForOwner)
            }
        }
    }

    /// Makes the pending file anew, this drain's own, once a seal took the last one: producers of other
    /// users then append to the queue owner's file, which no member of the group can make unreadable to
    /// the host, rather than each copying another producer's (see `QueueAppender.replaceOthersPending`).
    /// Made whole and synced as a producer makes it, under the producers' lock, since a producer that
    /// finds it syncs nothing before its records go in. A failure costs nothing: a producer makes it then.
    private func makeOwnPending() {
        do { guard try directory.status(of: QueueLayout.pending) == nil else { return } } catch { return }
        do throws(ShareQueueError) {
            let lock = try takeProducersLock(seconds: QueueLock.minimumSealWait, consequence: "the next producer makes the pending file")
            defer { lock.release() }
            guard try directory.status(of: QueueLayout.pending) == nil else { return }
            do throws(SystemError) {
                // As a producer does: the last seal's rename is durable before the new name can be.
                try directory.folder.synchronize(.pendingReplaced)
                try directory.folder.open(QueueLayout.pending, .appendCreate).close()
                try directory.folder.synchronize(.pendingCreated)
            } catch {
                throw ShareQueueError("cannot make the pending file", path: directory.pendingPath, error, creating: true)
            }
        } catch {
            onEvent(.pendingNotMade(cause: "\(error)"))
        }
    }

    /// Moves the file `name`, which is not what the queue wrote, out of the
    /// way without following or reading it, and says why.
    func moveAsideForeign(_ name: String, _ problem: String, handling: QueueEvent.Handling = .unread) throws(ShareQueueError) {
        let path = directory.path(of: name)
        let target: String
        do { target = try directory.moveAside(name) } catch {
            throw ShareQueueError("cannot set aside a file the queue did not write", path: path, error)
        }
        onEvent(.fileMovedAside(path: path, problem: problem, movedTo: target, handling: handling))
    }

    /// Opens one of the queue's lock files, creating it if missing. Something else there (a
    /// symlink, a directory) no process can lock, so it is moved aside and a file made in its
    /// place, under the producers' lock when `guarded`, so that two drains cannot each make one.
    /// So is, in a queue shared with a group, another user's file that this drain may not open, or
    /// that the group may not read and write (which a drain run as root can still open): any member
    /// can put one in place of the queue's, or change the mode of one it made, to keep everyone else out.
    func openLockFile(_ name: String, failure: String, guarded: Bool = false) throws(ShareQueueError) -> FileDescriptor {
        let problem: String
        do {
            let file = try directory.folder.open(name, .lockFile)
            let status = try? file.status()
            if let status, !status.isRegularFile {
                // A FIFO opened for reading and writing opens at once, and locks as a file does: still no file of the queue's.
                file.close()
                problem = "is not a regular file"
            } else {
                // Its own is as the sharing rule made it, or as near as the system let it: not another's doing.
                guard let status, status.owner != Host.effectiveUserID, let notShared = directory.notShared(status) else { return file }
                file.close()
                problem = "is " + notShared + ", so that producers of other users could not take it"
            }
        } catch where directory.foreignFile(name, openFailure: error) != nil {
            problem = ""
        } catch {
            throw ShareQueueError(failure, path: directory.path(of: name), error, creating: true)
        }
        // Held until the new file is open, not to the end of the `if`.
        let producers = guarded ? try takeProducersLock(seconds: max(options.waitSeconds, QueueLock.minimumSealWait), consequence: "nothing was drained") : nil
        defer { producers?.release() }
        // Looked at again: another drain may have made the file meanwhile.
        if let status = try directory.status(of: name), !status.isRegularFile {
            try moveAsideForeign(name, "is not a regular file", handling: .unfollowedAndReplaced)
        } else if let status = try directory.status(of: name), status.owner != Host.effectiveUserID, !directory.folder.mayReadAndWrite(name) {
            try moveAsideForeign(name, "belongs to user \(status.owner) and this drain may not open it", handling: .replaced)
        } else if let status = try directory.status(of: name), !problem.isEmpty, directory.notShared(status) != nil {
            try moveAsideForeign(name, problem, handling: .replaced)
        }
        do { return try directory.folder.open(name, .lockFile) } catch {
            throw ShareQueueError(failure, path: directory.path(of: name), error, creating: true)
        }
    }

    /// Opens the producers' lock, `append.lock` repaired as ``openLockFile(_:failure:guarded:)`` repairs it, and takes it.
    /// - Returns: the lock, held; the caller releases it.
    /// - Throws: `.busy` naming the lock and its holder if it stays taken for `seconds`.
    func takeProducersLock(seconds: Double, consequence: String) throws(ShareQueueError) -> ProducersLock {
        let lock = try ProducersLock(in: directory, lockFile: try openLockFile(QueueLayout.appendLock, failure: "cannot open the queue's lock file"))
        do { try lock.take(seconds: seconds, shouldStop: options.shouldStop, consequence: consequence) } catch {
            lock.release()
            throw error
        }
        return lock
    }

    /// Takes the drain lock, waiting for another drainer at most `options.waitSeconds`.
    /// - Throws: `.busy` naming the lock and, where the system can tell, the other drainer.
    private func takeDrainLock() throws(ShareQueueError) -> FileDescriptor {
        let path = directory.drainLockPath
        let file = try openLockFile(QueueLayout.drainLock, failure: "cannot take the drain lock", guarded: true)
        do {
            try QueueLock.take(file, path: path, seconds: options.waitSeconds, shouldStop: options.shouldStop,
                               busy: "another drain is running", consequence: "nothing was drained")
        } catch {
            file.close()
            throw error
        }
        return file
    }
}
