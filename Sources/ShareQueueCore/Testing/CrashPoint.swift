import ShareQueueSystem

/// The steps where a crash matters. Setting `SHARE_QUEUE_CRASH_AT=<point>[:<n>]`
/// makes the process kill itself with SIGKILL the n-th time (default: the
/// first) it reaches that point, so tests can crash at every step in turn, the
/// way SQLite and LevelDB are tested. `SHARE_QUEUE_STOP_AT=<point>[:<n>]` instead
/// stops the process there with SIGSTOP, holding whatever it holds, as a
/// debugger or a suspended app would, until it is continued or killed. Unset,
/// each point costs one comparison.
/// A test hook for the package's tools and tests, not API, compiled in only with
/// the package's `TestHooks` trait: in any other build no variable is read.
package enum CrashPoint: String, CaseIterable, Sendable {
    /// A producer holds the lock and has written nothing.
    case appendLocked = "append-locked"
    /// A producer found a torn tail and set it aside, but has not cut it off yet.
    case appendRepairQuarantined = "append-repair-quarantined"
    /// A producer has written the first half of its frames.
    case appendHalfWritten = "append-half-written"
    /// A producer has written its frames and still holds the lock; nothing is synced.
    case appendWritten = "append-written"
    /// A producer has released the lock but not synced.
    case appendUnlocked = "append-unlocked"
    /// A producer has synced but not reported its ids.
    case appendSynced = "append-synced"
    /// A drainer holds the drain lock and has done nothing else.
    case drainLocked = "drain-locked"
    /// A drainer has set aside the files no drain wrote, and has opened none of its own yet.
    case drainFilesChecked = "drain-files-checked"
    /// A drainer has renamed the pending file and still holds the producers' lock; the directory is not synced.
    case drainSealed = "drain-sealed"
    /// A drainer has renamed the pending file and released the producers' lock; the directory is not synced yet.
    case drainSealUnlocked = "drain-seal-unlocked"
    /// A sink has taken a batch; the checkpoint does not show it yet.
    case drainDelivered = "drain-delivered"
    /// Damaged data is in the quarantine file; the checkpoint does not show it yet.
    case drainQuarantined = "drain-quarantined"
    /// A drain has written dead letters and synced them; a new letters file's name may not be durable yet.
    case drainLettersWritten = "drain-letters-written"
    /// The checkpoint shows a batch; the next batch has not started.
    case drainCheckpointed = "drain-checkpointed"
    /// A sealed segment is fully delivered and about to be removed.
    case drainBeforeRemove = "drain-before-remove"
    /// A drain has copied an attachment to its destination under a temporary name, synced.
    case attachmentCopied = "attachment-copied"
    /// A drain has renamed an attachment's copy into its destination; the sink has not taken its record.
    case attachmentDelivered = "attachment-delivered"

    /// A file or folder of the queue exists under its temporary name, its mode and group not yet set.
    case createTemporary = "create-temporary"
    /// A file or folder of the queue is whole under its temporary name (mode and group set), not yet at its own.
    case createShared = "create-shared"
    /// A file of the queue has its own name and still its temporary one (a folder: has been renamed into place).
    case createLinked = "create-linked"

    /// Whether `share-stress --crash-points` reaches this point: its records carry no attachments, its
    /// drains refuse none, and it creates the queue's files before the points it crashes at.
    package var isReachedByStress: Bool {
        ![.drainLettersWritten, .attachmentCopied, .attachmentDelivered, .createTemporary, .createShared, .createLinked].contains(self)
    }

    /// Whether this process should crash now; counts the visit.
    static func isDue(_ point: CrashPoint) -> Bool {
        guard let plan = CrashPlan.current, !plan.stops else { return false }
        return plan.visit(point)
    }

    /// Kills the process with SIGKILL if this is the visit `SHARE_QUEUE_CRASH_AT` names,
    /// or stops it with SIGSTOP if it is the one `SHARE_QUEUE_STOP_AT` names.
    static func reached(_ point: CrashPoint) {
        guard let plan = CrashPlan.current, plan.visit(point) else { return }
        if plan.stops { Host.stopSelf() } else { Host.killSelf() }
    }
}

/// The parsed `SHARE_QUEUE_CRASH_AT` (or `SHARE_QUEUE_STOP_AT`), read once per process.
// @unchecked Sendable: `visits` is unguarded; only the crash tests set the variables,
// and the tools they run reach crash points from one thread. Without them there is no plan.
private final class CrashPlan: @unchecked Sendable {
    let point: CrashPoint
    let dueVisit: Int
    /// Whether the plan stops the process rather than kills it.
    let stops: Bool
    var visits = 0

    init(point: CrashPoint, visit: Int, stops: Bool) {
        self.point = point
        self.dueVisit = visit
        self.stops = stops
    }

    /// Counts a visit of `point`; true if it is the one the plan names.
    func visit(_ point: CrashPoint) -> Bool {
        guard point == self.point else { return false }
        visits += 1
        return visits == dueVisit
    }

    #if SHARE_QUEUE_TEST_HOOKS
    static let current: CrashPlan? = {
        let crash = Host.environment("SHARE_QUEUE_CRASH_AT").flatMap { $0.isEmpty ? nil : $0 }
        guard let text = crash ?? Host.environment("SHARE_QUEUE_STOP_AT"), !text.isEmpty else { return nil }
        let parts = text.split(separator: ":", maxSplits: 1)
        guard let point = CrashPoint(rawValue: String(parts[0])) else { return nil }
        let visit = parts.count == 2 ? Int(parts[1]) ?? 1 : 1
        return CrashPlan(point: point, visit: max(1, visit), stops: crash == nil)
    }()
    #else
    /// Always nil: a build without the `TestHooks` trait crashes and stops nowhere.
    @inline(__always) static var current: CrashPlan? { nil }
    #endif
}
