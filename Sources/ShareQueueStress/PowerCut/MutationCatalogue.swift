import ShareQueueSystem

/// Every defect the power-cut explorer claims to catch, each a change compiled
/// only into a build with the `TestHooks` trait: each sync point left out
/// (``SyncPoint``), and each reorder or write around the traced layer (``Mutant``).
///
/// A defect is expected caught, under each file system's rules, unless a reason
/// says why it breaks no invariant there; the reasons are those of Format.md §16.3.
/// `share-stress power-cut --mutants` runs the catalogue and fails on any entry
/// whose verdict differs from what is written here.
struct MutationCatalogue {
    struct Entry {
        enum Change {
            case skipSync(SyncPoint)
            case mutant(Mutant)
        }

        let change: Change
        /// The workloads that run the changed code, tried in turn until one catches it.
        let workloads: [String]
        /// The modes under which the defect breaks no invariant, each with the reason.
        var harmless: [CrashMode: String] = [:]

        var name: String {
            switch change {
            case .skipSync(let point): "without-" + point.rawValue
            case .mutant(let mutant): mutant.rawValue
            }
        }
    }

    // The reasons, as Format.md §16.3 gives them.
    static let journalCommitsEntries = "ext4 journals every entry change in order, and the file sync that follows it (before any id is printed) commits it too"
    static let journalKeepsOrder = "ext4 journals the seal's rename before the new pending.log is made: no state keeps the new name without the rename"
    static let markerRewritten = "no id is printed before `pending-created` syncs the same directory; a lost marker is written again"
    static let blankCheckpointIsStart = "a missing or blank checkpoint reads as the start: a second delivery, never a lost record"
    static let sealRenameRecovers = "a lost seal leaves the records in pending.log, which the checkpoint (by segment number) cannot skip"
    static let checkpointTakenBack = "a checkpoint a power cut takes back costs second deliveries only; a store keeps its own position"
    static let segmentNumbersNotReused = "a drain numbers new segments past every number the checkpoint, the segments and a sink's position show (§4, §10.3)"
    static let removedSegmentIsBehind = "a removed segment that comes back lies before the checkpoint, synced before the removal"
    static let journalCommitsFoundLetters = "the killed drain synced the letter's data, and ext4 commits its file's name with the journal at any later sync"
    static let attemptsTakenBack = "a count a power cut takes back makes a record refused more times before it is dead-lettered"

    static func harmlessEverywhere(_ reason: String) -> [CrashMode: String] {
        Dictionary(uniqueKeysWithValues: CrashMode.allCases.map { ($0, reason) })
    }

    static let entries: [Entry] = [
        Entry(change: .skipSync(.directoryCreated), workloads: ["append"], harmless: [.ext4Ordered: journalCommitsEntries]),
        Entry(change: .skipSync(.folderCreated), workloads: ["attachments"], harmless: [.ext4Ordered: journalCommitsEntries]),
        Entry(change: .skipSync(.formatMarkerData), workloads: ["append"]),
        Entry(change: .skipSync(.formatMarkerLinked), workloads: ["append", "group-shared"], harmless: harmlessEverywhere(markerRewritten)),
        Entry(change: .skipSync(.checkpointCreated), workloads: ["drain", "standard-output-file"], harmless: harmlessEverywhere(blankCheckpointIsStart)),
        Entry(change: .skipSync(.checkpointCreatedEntry), workloads: ["drain", "standard-output-file"], harmless: harmlessEverywhere(blankCheckpointIsStart)),
        Entry(change: .skipSync(.pendingReplaced), workloads: ["seal-race"], harmless: [.ext4Ordered: journalKeepsOrder]),
        Entry(change: .skipSync(.pendingCreated), workloads: ["append"], harmless: [.ext4Ordered: journalCommitsEntries]),
        Entry(change: .skipSync(.appendRecord), workloads: ["append", "typed-router"]),
        Entry(change: .skipSync(.keyForgotten), workloads: ["if-changed"]),
        Entry(change: .skipSync(.attachmentData), workloads: ["attachments"]),
        Entry(change: .skipSync(.attachmentEntry), workloads: ["attachments"], harmless: [.ext4Ordered: journalCommitsEntries]),
        Entry(change: .skipSync(.sealed), workloads: ["drain", "seal-race", "max"], harmless: harmlessEverywhere(sealRenameRecovers)),
        Entry(change: .skipSync(.checkpointAtEnd), workloads: ["drain", "max", "coalesce", "typed-router"], harmless: harmlessEverywhere(checkpointTakenBack)),
        Entry(change: .skipSync(.checkpointBeforeAttachmentRemoval), workloads: ["attachment-delivery"]),
        Entry(change: .skipSync(.checkpointBeforeSegmentRemoval), workloads: ["drain", "max"], harmless: harmlessEverywhere(segmentNumbersNotReused)),
        Entry(change: .skipSync(.segmentKept), workloads: ["full-disk-keep"]),
        Entry(change: .skipSync(.segmentRemoved), workloads: ["drain"], harmless: harmlessEverywhere(removedSegmentIsBehind)),
        Entry(change: .skipSync(.quarantineData), workloads: ["sealed-damage"]),
        Entry(change: .skipSync(.quarantineCreated), workloads: ["sealed-damage"], harmless: [.ext4Ordered: journalCommitsEntries]),
        Entry(change: .skipSync(.deadLetterData), workloads: ["dead-letter"]),
        Entry(change: .skipSync(.deadLettersCreated), workloads: ["dead-letter"], harmless: [.ext4Ordered: journalCommitsEntries]),
        Entry(change: .skipSync(.attemptsData), workloads: ["dead-letter"], harmless: harmlessEverywhere(attemptsTakenBack)),
        Entry(change: .skipSync(.deliveredAttachmentData), workloads: ["attachment-delivery"]),
        Entry(change: .skipSync(.deliveredAttachmentEntry), workloads: ["attachment-delivery"]),
        Entry(change: .skipSync(.standardOutput), workloads: ["standard-output-file"]),
        Entry(change: .mutant(.checkpointBeforeDelivery), workloads: ["drain", "typed-router"]),
        Entry(change: .mutant(.coalesceCheckpointBeforeDelivery), workloads: ["coalesce"]),
        Entry(change: .mutant(.checkpointAroundLayer), workloads: ["drain"]),
        Entry(change: .mutant(.standardOutputAroundLayer), workloads: ["standard-output-file"]),
        Entry(change: .mutant(.linesChunkUnsynced), workloads: ["lines-stream"]),
        Entry(change: .mutant(.requeueLettersBlankedFirst), workloads: ["requeue-resumed"]),
        Entry(change: .mutant(.segmentRemovedBeforeCheckpoint), workloads: ["drain", "max"], harmless: harmlessEverywhere(segmentNumbersNotReused)),
        Entry(change: .mutant(.storeSynchronousOff), workloads: ["store"]),
        Entry(change: .mutant(.storePositionFirst), workloads: ["store"]),
        Entry(change: .mutant(.storeAroundLayer), workloads: ["store"]),
        Entry(change: .mutant(.foundLettersUnsynced), workloads: ["dead-letter-killed"], harmless: [.ext4Ordered: journalCommitsFoundLetters]),
    ]
}
