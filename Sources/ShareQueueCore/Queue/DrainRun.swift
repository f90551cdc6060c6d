import ShareQueueSystem

/// The state of one drain while it runs.
struct DrainRun {
    let drainer: QueueDrainer
    let checkpoint: Checkpoint
    /// Whether the sink reads whole records, or only their stored JSON.
    let buildRecords: Bool
    var summary = DrainSummary()
    /// Items read, from `firstUncommitted` on not yet covered by the checkpoint
    /// (an index, so that a commit costs what it covers, not what remains).
    var uncommitted: [BatchItem] = []
    var firstUncommitted = 0
    /// Records dead-lettered in this batch, whose attachments must stay.
    var deadLettered: Set<ByteKey> = []
    /// Dead letters waiting for the commit that passes their records, each with the event that says so:
    /// a record becomes a dead letter only when its batch is settled, so never while it is still queued.
    var lettersAtCommit: [(letter: DeadLetters.Letter, event: QueueEvent)] = []
    /// The position the checkpoint last recorded in this run, or the one the run began from:
    /// it moves no further once a refused record is held.
    var committedPosition: DrainPosition
    /// The SHA-256 digests of the records the dead-letter file holds, read when this drain first sets one aside.
    var knownDeadLetters: Set<DeadLetters.StoredDigest>?
    /// Where the newest record of each key ends, with `coalesceKeys`; keys by the digest of their bytes,
    /// since the drain holds one for every key in the queue, and no rule bounds a key's length there.
    var newestOfKey: [Digest128: DrainPosition] = [:]
    /// The attachment files those newest records name: a superseded record that shares one leaves it in place.
    var filesOfNewest: Set<ByteKey> = []
    /// How many records past `from` name each attachment file, counted when this drain first
    /// removes one (`from` being the checkpoint then): a file is removed only with the last record that names it.
    var laterReferences: (from: DrainPosition, counts: [ByteKey: Int])?
    /// The attachment files that dead letters name, this drain's and, once counted, those of the file.
    var filesOfDeadLetters: Set<ByteKey> = []
    /// Set when a dead letter could not be read while counting: it might name any file, so none is removed.
    var keepsEveryAttachment = false
    /// Set while reading a segment that has other names: its bytes are not copied anywhere.
    var segmentHasOtherNames = false
    /// The attachment copies this drain has read whole, and the copies it has delivered.
    let checkedFiles = CheckedFiles()
    /// The refusal counts, read from `attempts` when first needed and saved after each batch that changed them.
    var attemptCounts: DeadLetters.Counts?
    /// Whether `attemptCounts` differ from the file (or the file held damage to rewrite).
    var attemptsChanged = false
    /// The records this drain's sink refused and that stay queued: from the first of them on the
    /// checkpoint stays where it is for the rest of the run, though the records after it are delivered.
    var held = HeldRefusals()
    var directory: QueueDirectory { drainer.directory }
    var options: DrainOptions { drainer.options }
    var attachments: AttachmentStore { AttachmentStore(directory: directory) }

    init(drainer: QueueDrainer, checkpoint: Checkpoint, buildRecords: Bool) {
        self.drainer = drainer
        self.checkpoint = checkpoint
        self.buildRecords = buildRecords
        committedPosition = checkpoint.position
    }

    var budgetLeft: Int { options.maxRecords.map { $0 - summary.delivered } ?? Int.max }

    mutating func deliverAll<Sink: DrainSink>(into sink: inout Sink) throws {
        let listing = try directory.segmentListing()
        for name in listing.foreign { try moveAsideForeignSegment(name) }
        let sealed = listing.sealed
        var position = checkpoint.position
        if !position.isPlausible(withSealed: sealed) {
            // Delivering again is recoverable; skipping is not. Recorded, so that it is reported once.
            drainer.onEvent(.checkpointDoesNotFit(position: position))
            position = .start
            try checkpoint.write(position)
        }
        var lastSequence = max(position.segment, sealed.last ?? 0)
        if let stored = try sink.deliveredPosition(), stored > position {
            // A position past every segment this queue has made belongs to another queue.
            if stored.segment <= lastSequence && stored.isPlausible(withSealed: sealed) {
                position = stored
            } else {
                drainer.onEvent(.storedPositionIgnored(position: stored))
            }
            // Its segment may be one this queue made and removed, with the checkpoint since lost: a new
            // segment of that number would fit the position and be read from its middle.
            if stored.segment < QueueLayout.maximumSequence { lastSequence = max(lastSequence, stored.segment) }
        }
        committedPosition = position
        if directory.folder.sharing.groupMayRename {
            // Any member of the group can hide the checkpoint and bring it back later: a number given again
            // meanwhile (the count starts over without a checkpoint, or goes on from a segment of hers that a
            // refusing sink holds in the queue) would let the old position skip the records of a new segment
            // of that number. So the next is numbered from the clock, past any number a checkpoint hidden
            // earlier can name (Format.md §4).
            lastSequence = max(lastSequence, min(UInt64(max(Host.millisecondsSince1970(), 0)), QueueLayout.maximumSequence / 2))
        }
        var segments = sealed
        if options.coalesceKeys {
            // Seal first and look only at sealed segments: a record appended
            // after the look must not be mistaken for an older one.
            if budgetLeft > 0, try seal(as: lastSequence + 1) {
                lastSequence += 1
                segments.append(lastSequence)
            }
            try findNewestOfEachKey()
        }
        // No segment is below a plausible position: every one is read, none skipped.
        for sequence in segments {
            let start = sequence == position.segment ? position.offset : 0
            guard try deliverSegment(sequence, from: start, into: &sink) else { return }
        }
        guard budgetLeft > 0 else { summary.stoppedAtLimit = true; return }
        if !options.coalesceKeys, try seal(as: lastSequence + 1) {
            _ = try deliverSegment(lastSequence + 1, from: 0, into: &sink)
        }
    }
}
