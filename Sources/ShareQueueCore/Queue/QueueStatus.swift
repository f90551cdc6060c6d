import ShareQueueSystem

/// What is waiting in a queue, read without draining or locking it.
public struct QueueStatus: Sendable, Equatable {
    /// Records not yet delivered.
    public var pending = 0
    /// Bytes of segment files not yet delivered, frames included.
    public var pendingBytes: Int64 = 0
    /// The earliest `date` among the pending records, as written; the first record's when
    /// no date is a time, or none but one more than 5 minutes ahead of the clock that read
    /// it (Format.md §12.2). A date is its producer's word, so a record with a date far
    /// ahead, or with none, cannot hide how long the others have waited.
    public var oldest: String? = nil
    /// Entries in the quarantine file.
    public var quarantined = 0
    /// Bytes of the quarantine file and of segments kept whole beside it.
    public var quarantinedBytes: Int64 = 0
    /// Sealed segments waiting, left by a drain that stopped early or failed.
    public var sealedSegments = 0
    /// Records refused too often, waiting in the dead-letter file, and those of ``waitingLetters``.
    public var deadLetters = 0
    /// Of the dead letters, those that wait for another user's folder or copy that a drain may not
    /// read (a folder moved aside from `attachments`, say): a drain puts them back by itself once it may.
    public var waitingLetters = 0
    /// Of the dead letters, those a store did not take because it already held their id with other
    /// content (``QueueEvent/DeadLetterCause/idStoredWithOtherContent``), as their letters say.
    public var idConflictLetters = 0
    /// Files moved aside unread as `rejected-…`: found where the queue's own should
    /// be (the dead letters, say, with a second name), kept for a person to look at.
    public var rejectedFiles = 0
    /// Files in the queue's attachments folder.
    public var attachments = 0
    /// Bytes of the files in the queue's attachments folder.
    public var attachmentBytes: Int64 = 0
    /// When a drain last recorded progress (delivered, set aside or
    /// dead-lettered records), in seconds since 1970; nil before the first.
    public var lastDrainSeconds: Int64? = nil
}

/// Reads pending records without changing anything, and without taking a lock.
///
/// Meant for showing a queue (how much waits, what the next records are);
/// only a drain takes records out. What it reads can change as it reads.
public struct QueueInspector: Sendable {
    /// The queue it reads.
    public let directory: QueueDirectory
    /// Hears of damaged lines skipped in the dead letters, and of files not read because
    /// a drain sets them aside unread (see ``QueueEvent``); by default it does nothing.
    public var onEvent: @Sendable (QueueEvent) -> Void = { _ in }

    /// Receives each event's ``QueueEvent/description``, the text it received before events
    /// were values. Setting it sets ``onEvent``; reading it gives what was last set here.
    @available(*, deprecated, message: "set onEvent, which receives each event as a value; its description is the text warn received")
    public var warn: @Sendable (String) -> Void {
        get { textHandler }
        set {
            textHandler = newValue
            onEvent = { newValue($0.description) }
        }
    }
    private var textHandler: @Sendable (String) -> Void = { _ in }

    /// An inspector of `directory`.
    /// - Parameter directory: The queue to read.
    public init(directory: QueueDirectory) { self.directory = directory }

    /// Visits every pending record in delivery order: sealed segments from the
    /// checkpoint on, then the pending file. A record still being written at
    /// the end of the pending file is not visited, nor is a damaged one, nor one
    /// in a segment a drain sets aside unread (one that is not a regular file, or
    /// another user's that this user may not read), which ``onEvent`` hears of.
    /// - Parameter visit: Called with each record; throwing stops the walk.
    /// - Throws: `.handlerFailed` with what `visit` throws as its `underlying`, unchanged
    ///   (a ``ShareQueueError`` as it is); `.ioError` when the queue cannot be read.
    public func forEachPending(_ visit: (DrainedRecord) throws -> Void) throws(ShareQueueError) {
        _ = try walk(includingUnsealed: true, visit)
    }

    /// Visits the records of the sealed segments only, or of every segment, for a drain:
    /// a segment it cannot open stops the walk, so that what the drain decides from it
    /// (which attachments no record names, which record of a key is the newest) never
    /// leaves out a segment that may be renamed back.
    func forEachPending(includingUnsealed: Bool, _ visit: (DrainedRecord) throws -> Void) throws(ShareQueueError) {
        _ = try walk(includingUnsealed: includingUnsealed, passingOverForeign: false, visit)
    }

    /// Counts what waits in the queue and in its side files.
    ///
    /// Anyone sharing the queue can put something at one of its names: what a drain would
    /// set aside unread at its next start (a symlink, a FIFO, a directory, a second hard link,
    /// another user's file this user may not read) is not read or followed here either, and
    /// counts for nothing, with an event through ``onEvent``.
    /// - Returns: The pending records and bytes, the oldest record's date, and
    ///   the quarantined entries, dead letters and attachments, and when a
    ///   drain last recorded progress.
    /// - Throws: `.ioError` when the queue cannot be read.
    public func status() throws(ShareQueueError) -> QueueStatus {
        try status(atMilliseconds: Host.millisecondsSince1970())
    }

    /// ``status()`` with dates read at `nowMilliseconds` since 1970, so that one who reports
    /// ages judges the dates with the same reading of the clock (see `DateInstant.asRead(at:)`).
    package func status(atMilliseconds nowMilliseconds: Int64) throws(ShareQueueError) -> QueueStatus {
        var setAside: Set<String> = []
        for name in QueueLayout.drainsOwnFiles {
            guard let foreign = try directory.foreignFileToRead(name) else { continue }
            if foreign == .ownersAlone {
                onEvent(.waitingLettersNotCounted(path: directory.path(of: name)))
            } else {
                notRead(name, foreign.problem)
            }
            setAside.insert(name)
        }
        for name in QueueLayout.folders {
            if let folder = try directory.status(of: name), !folder.isDirectory { notRead(name, "is not a directory") }
        }
        // What would keep producers of other users out, which only a drain repairs. A marker this user may not read is named already.
        for name in [QueueLayout.formatMarker, QueueLayout.appendLock, QueueLayout.drainLock, QueueLayout.pending]
        where name != QueueLayout.formatMarker || directory.markerNotRead == nil {
            if let problem = directory.unusableByProducers(name) { onEvent(.fileUnusableByProducers(path: directory.path(of: name), problem: problem)) }
        }
        var status = try walk(includingUnsealed: true, now: DateInstant(millisecondsSince1970: nowMilliseconds)) { _ in }
        let quarantine = Quarantine(directory: directory)
        let readsQuarantine = !setAside.contains(QueueLayout.quarantine)
        status.quarantined = try quarantine.count(readingFile: readsQuarantine)
        status.quarantinedBytes = try quarantine.bytes(readingFile: readsQuarantine)
        status.lastDrainSeconds = try Checkpoint.lastWrittenSeconds(directory: directory)
        (status.deadLetters, status.waitingLetters, status.idConflictLetters) = try DeadLetters(directory: directory, onEvent: onEvent).count(except: setAside)
        status.rejectedFiles = try directory.countNames(where: QueueLayout.isRejected)
        do {
            (status.attachments, status.attachmentBytes) = try AttachmentStore(directory: directory).usage()
        } catch where error.systemError?.isAccessDenied == true {
            // Another member of a shared queue can close the folder to this user: the rest is still worth showing.
            onEvent(.attachmentsNotCounted(path: directory.path(of: QueueLayout.attachments)))
        }
        for name in (try? AttachmentStore(directory: directory).movedAsideFolders()) ?? [] {
            guard !directory.folder.mayReadAndSearch(name) else { continue }
            onEvent(.movedAsideFolderUnreadable(path: directory.path(of: name), owner: (try? directory.folder.status(of: name))?.owner))
        }
        return status
    }

    /// Says that the file `name` is not read, and why.
    private func notRead(_ name: String, _ problem: String) {
        onEvent(.fileNotRead(path: directory.path(of: name), problem: problem))
    }

    /// Visits the pending records and counts them, their dates read at `now` (by default
    /// as they are, for a walk whose count nobody reads).
    private func walk(includingUnsealed: Bool, passingOverForeign: Bool = true, now: DateInstant = .unparsed,
                      _ visit: (DrainedRecord) throws -> Void) throws(ShareQueueError) -> QueueStatus {
        var status = QueueStatus()
        var earliest = DateInstant.unparsed
        let segments = try segmentsToRead()
        status.sealedSegments = segments.count - 1
        for (name, sequence, offset) in segments where includingUnsealed || sequence != UInt64.max {
            do {
                let file: FileDescriptor
                do { file = try directory.folder.open(name, .readOnly) } catch {
                    if error.isNotFound { continue }  // delivered meanwhile
                    // What a drain sets aside unread (see `DrainRun.deliverSegment`) holds no record it delivers.
                    guard passingOverForeign, let foreign = directory.foreignFile(name, openFailure: error) else { throw error }
                    notRead(name, foreign.problem)
                    continue
                }
                defer { file.close() }
                let fileStatus = try file.status()
                guard fileStatus.isRegularFile else { notRead(name, QueueDirectory.ForeignFile.notOneRegularFile.problem); continue }
                let start = offset <= fileStatus.size ? offset : 0
                status.pendingBytes += fileStatus.size - start
                var reader = SegmentReader(file: file, from: start)
                while let event = try reader.next() {
                    // A record that breaks the rules is damage, which a drain sets aside: not pending.
                    guard case .record(_, let end, let payload, _) = event, let summary = try? RecordSummary(stored: payload) else { continue }
                    let position = DrainPosition(segment: sequence, offset: end)
                    var drained = DrainedRecord(summary: summary, stored: payload, end: position)
                    // As a drain does: a record with attachments is read in full, whose rules include theirs,
                    // and shown re-encoded, without a `path` a writer may have stored.
                    if summary.hasAttachments {
                        guard let record = try? Record(jsonBytes: payload.array) else { continue }
                        drained = DrainedRecord(record: record, stored: payload, end: position)
                    }
                    status.pending += 1
                    // The earliest date that parses, not the first record's: a record put first with a date far
                    // ahead, or with none, would otherwise hide how long every other one has waited.
                    let instant = DateInstant(summary.date).asRead(at: now)
                    if status.oldest == nil || instant.isParsed && (!earliest.isParsed || instant < earliest) {
                        status.oldest = summary.date
                        earliest = instant
                    }
                    do { try visit(drained) } catch let error as ShareQueueError { throw error } catch {
                        // The caller's own failure, not the queue's: kept as it was thrown.
                        throw ShareQueueError.handlerFailed("the visit of the pending records failed at record \(DeadLetters.quoted(drained.id))", underlying: error)
                    }
                }
            } catch {
                throw ReadFailure.error("cannot read a segment", path: directory.path(of: name), error)
            }
        }
        return status
    }

    /// The bytes of segment files not yet delivered, frames included, from the
    /// files' sizes alone: what `status()` counts as `pendingBytes`, without reading a record.
    /// - Throws: `.ioError` when the queue cannot be read.
    package func undeliveredBytes() throws(ShareQueueError) -> Int64 {
        var bytes: Int64 = 0
        for (name, _, offset) in try segmentsToRead() {
            guard let file = try directory.status(of: name), file.isRegularFile else { continue }
            bytes += file.size - (offset <= file.size ? offset : 0)
        }
        return bytes
    }

    /// What a drain would read now: the sealed segments from the checkpoint on,
    /// each with the offset it starts at, then the pending file (sequence `UInt64.max`).
    private func segmentsToRead() throws(ShareQueueError) -> [(name: String, sequence: UInt64, offset: Int64)] {
        let all = try directory.sealedSegments()
        var position = try Checkpoint.read(directory: directory, onEvent: { _ in })
        // As a drain would: a checkpoint no drain can have written hides nothing.
        if !position.isPlausible(withSealed: all) { position = .start }
        // The pending file has no sequence number yet: after every sealed one.
        return all.filter { $0 >= position.segment }.map { (directory.sealedName($0), $0, $0 == position.segment ? position.offset : 0) }
            + [(QueueLayout.pending, UInt64.max, 0)]
    }
}
