/// Every place the queue makes something durable, each with a stable name, so
/// that a power-cut explorer can leave one out and show what its loss breaks.
///
/// In a build with the package's `TestHooks` trait, setting
/// `SHARE_QUEUE_SKIP_SYNC=<name>` makes every sync at that point return at once
/// without syncing; in any other build nothing can leave a sync out. A test hook
/// for the package's tools, not API; the verdict on each point is in the format document.
package enum SyncPoint: String, CaseIterable, Sendable {
    /// A directory on the queue's path, after a tool made a directory in it (the queue's own, or a parent).
    case directoryCreated = "directory-created"
    /// The queue directory, after the `attachments` or `keys` folder was made in it.
    case folderCreated = "folder-created"
    /// The format marker's content, before it is linked into place.
    case formatMarkerData = "format-marker-data"
    /// The queue directory, after the format marker is linked into place.
    case formatMarkerLinked = "format-marker-linked"
    /// The checkpoint file's two blank slots, when it is first made.
    case checkpointCreated = "checkpoint-created"
    /// The queue directory, after the checkpoint is first made.
    case checkpointCreatedEntry = "checkpoint-created-entry"
    /// The queue directory, before a producer creates a new pending file: the seal that
    /// renamed the last one away must not be lost under the new file's name.
    case pendingReplaced = "pending-replaced"
    /// The queue directory, after a producer created the pending file.
    case pendingCreated = "pending-created"
    /// A producer's records in the pending file, before their ids are printed.
    case appendRecord = "append-record"
    /// The keys folder, after a producer removed a key's entry before writing a newer record of that key.
    case keyForgotten = "key-forgotten"
    /// A producer's copy of an attachment, before it is renamed into place.
    case attachmentData = "attachment-data"
    /// The attachments folder, after a producer renamed a copy into place.
    case attachmentEntry = "attachment-entry"
    /// The queue directory, after a drain renamed the pending file to a sealed segment.
    case sealed = "sealed"
    /// The checkpoint, at the end of a drain.
    case checkpointAtEnd = "checkpoint-at-end"
    /// The checkpoint, before the queue's copies of delivered attachments are removed.
    case checkpointBeforeAttachmentRemoval = "checkpoint-before-attachment-removal"
    /// The checkpoint, before a fully delivered segment is removed.
    case checkpointBeforeSegmentRemoval = "checkpoint-before-segment-removal"
    /// The queue directory, after a segment whose damage could not be copied out got its kept name.
    case segmentKept = "segment-kept"
    /// The queue directory, after a delivered segment was removed.
    case segmentRemoved = "segment-removed"
    /// Damaged bytes appended to the quarantine file.
    case quarantineData = "quarantine-data"
    /// The queue directory, after the quarantine file was made.
    case quarantineCreated = "quarantine-created"
    /// Dead letters appended to the dead-letter file.
    case deadLetterData = "dead-letter-data"
    /// The queue directory, after the dead-letter file was made: before a checkpoint can move past its first letter.
    case deadLettersCreated = "dead-letters-created"
    /// The refusal counts, written to a temporary name before it replaces the attempts file.
    case attemptsData = "attempts-data"
    /// A drain's copy of an attachment for its destination, before it is renamed into place.
    case deliveredAttachmentData = "delivered-attachment-data"
    /// The destination folder, after a delivered attachment was renamed into place.
    case deliveredAttachmentEntry = "delivered-attachment-entry"
    /// A drain's standard output, when it is a file, after each batch.
    case standardOutput = "standard-output"

    #if SHARE_QUEUE_TEST_HOOKS
    /// The point `SHARE_QUEUE_SKIP_SYNC` names, read once per process.
    package static let skipped: SyncPoint? = Host.environment("SHARE_QUEUE_SKIP_SYNC").flatMap(SyncPoint.init(rawValue:))
    #else
    /// Always nil: this build leaves no sync out.
    @inline(__always) package static var skipped: SyncPoint? { nil }
    #endif
}

extension FileDescriptor {
    /// Makes written data durable (see ``synchronize()``), unless `point` is the one left out.
    package func synchronize(_ point: SyncPoint) throws(SystemError) {
        if SyncPoint.skipped == point { return }
        try synchronize()
    }

    /// Makes this directory's entries durable (see ``synchronizeDirectory()``), unless `point` is the one left out.
    package func synchronizeDirectory(_ point: SyncPoint) throws(SystemError) {
        if SyncPoint.skipped == point { return }
        try synchronizeDirectory()
    }
}
