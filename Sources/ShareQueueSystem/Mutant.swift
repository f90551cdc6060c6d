/// A deliberate defect in the tools, each with a stable name, so that the
/// power-cut explorer can show that it catches every defect of the classes it
/// claims to catch (a left-out sync, a reorder, a write around the traced layer).
///
/// Compiled in only with the package's `TestHooks` trait: then
/// `SHARE_QUEUE_MUTANT=<name>` turns one mutant on in the process that reads it.
/// In any other build ``active`` is a constant nil, so every mutated branch is
/// dead code the compiler removes, and no environment can reach it. The
/// catalogue, with what each mutant is expected to break, is
/// `Sources/ShareQueueStress/PowerCut/MutationCatalogue.swift`; a left-out
/// sync point is a mutant of its own kind (``SyncPoint``).
package enum Mutant: String, CaseIterable, Sendable {
    /// A drain writes and syncs its checkpoint past a batch before its sink takes the batch.
    case checkpointBeforeDelivery = "checkpoint-before-delivery"
    /// As ``checkpointBeforeDelivery``, but only when the drain coalesces keys.
    case coalesceCheckpointBeforeDelivery = "coalesce-checkpoint-before-delivery"
    /// A drain writes its checkpoint past a batch with a raw C call, around the traced layer, before the sink takes the batch.
    case checkpointAroundLayer = "checkpoint-around-layer"
    /// A drain writes a batch to standard output, when it is a file, with a raw C call around the traced layer.
    case standardOutputAroundLayer = "standard-output-around-layer"
    /// Streaming `share-append --lines` appends each chunk without its sync, and prints its ids.
    case linesChunkUnsynced = "lines-chunk-unsynced"
    /// `--requeue-dead` blanks a chunk's letters before it appends their records to the queue.
    case requeueLettersBlankedFirst = "requeue-letters-blanked-first"
    /// A drain removes a delivered segment before it syncs the checkpoint past it.
    case segmentRemovedBeforeCheckpoint = "segment-removed-before-checkpoint"
    /// The store opens its database with `PRAGMA synchronous=OFF`: SQLite never syncs, so a commit is not durable when the drain moves on.
    case storeSynchronousOff = "store-synchronous-off"
    /// The store saves its drain position in a transaction of its own, committed before the transaction of the batch's rows.
    case storePositionFirst = "store-position-first"
    /// The store opens its database through SQLite's default VFS even when traced: its writes go around the layer.
    case storeAroundLayer = "store-around-layer"
    /// A drain that finds dead letters an earlier drain wrote passes their records without making the letters durable.
    case foundLettersUnsynced = "found-letters-unsynced"

    #if SHARE_QUEUE_TEST_HOOKS
    /// The mutant `SHARE_QUEUE_MUTANT` names, read once per process.
    package static let active: Mutant? = Host.environment("SHARE_QUEUE_MUTANT").flatMap(Mutant.init(rawValue:))
    #else
    /// Always nil: this build has no mutants.
    @inline(__always) package static var active: Mutant? { nil }
    #endif
}
