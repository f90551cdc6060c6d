/// Something a drain or a look at a queue met and dealt with on its own, and reports:
/// a damaged record set aside, a file moved out of the way, a record refused or made a dead letter.
///
/// None of these is an error: the queue stays intact and the drain goes on. An app hears of them
/// through ``QueueDrainer/onEvent`` and ``QueueInspector/onEvent``, to log them or to act on one
/// (a dead letter to look at, a planted file to remove), by its case and fields rather than its
/// words. ``description`` gives the English that `host-drain` prints for each:
///
/// ```swift
/// drainer.onEvent = { event in
///     if case .recordDeadLettered(let id, _, let reason) = event {
///         print("record \(id) is a dead letter, for a person to look at: \(reason)")
///     } else {
///         print(event)                                // in the words host-drain prints
///     }
/// }
/// ```
///
/// Paths are the queue's path with a file's name added, as the queue was opened; record ids are
/// as the records hold them. Later versions may add cases, so a `switch` over an event needs a `default`.
public enum QueueEvent: Sendable, Equatable, CustomStringConvertible {
    // MARK: Damage

    /// Damaged bytes of a segment were copied to the quarantine file and passed over: a torn
    /// write, a checksum mismatch, a record that breaks the rules.
    /// - Parameters:
    ///   - segment: The segment's file name, such as `sealed-000000000002.log`.
    ///   - offset: Where the damaged bytes start in it.
    ///   - length: How many bytes were set aside.
    ///   - reason: What is wrong with them, such as `checksum mismatch`.
    case damageSetAside(segment: String, offset: Int64, length: Int64, reason: String)
    /// A segment's damage could not be copied to the quarantine file (the disk or the file is full),
    /// so the whole segment is kept under a second name.
    case segmentKeptWhole(path: String, keptAs: String)
    /// Neither slot of the checkpoint holds a position: delivery starts again from the oldest sealed segment.
    case checkpointDamaged(path: String)
    /// The checkpoint names a position no drain can have written among the sealed segments
    /// there are: delivery starts again from the oldest.
    case checkpointDoesNotFit(position: DrainPosition)
    /// The checkpoint points past the end of the segment at `path`, which is delivered from its start.
    case checkpointPastEnd(path: String)
    /// The position a sink stores itself (``DrainSink/deliveredPosition()``) does not fit the queue's segments, and is ignored.
    case storedPositionIgnored(position: DrainPosition)

    // MARK: Files moved aside

    /// Something at one of the queue's names that is not the queue's own file (a symlink, a
    /// FIFO, a second hard link, another user's file) was renamed out of the way, to `movedTo`,
    /// so that it stops no drain. A person may look at it there.
    /// - Parameters:
    ///   - path: Where it was.
    ///   - problem: What is wrong with it, such as `is not a regular file with one name`.
    ///   - movedTo: Its new path, a `rejected-…` name in the queue directory.
    ///   - handling: How it was moved: unread, unfollowed, or with what it holds left in place.
    case fileMovedAside(path: String, problem: String, movedTo: String, handling: Handling)
    /// A temporary file an earlier process left could not be removed, and was moved aside to `movedTo`.
    case leftoverMovedAside(path: String, movedTo: String)
    /// A file of a queue ``QueueInspector/status()`` read does not count, being one a drain
    /// sets aside unread; `problem` says why.
    case fileNotRead(path: String, problem: String)
    /// A file at one of the queue's names (the format marker, a lock file, the pending file) is
    /// one that producers of other users cannot use, as ``QueueInspector/status()`` found it;
    /// `problem` says why, and what a drain does about it.
    case fileUnusableByProducers(path: String, problem: String)
    /// A drain that sealed the pending file could not make a new one of its own; the next producer makes it.
    /// - Parameter cause: The error, in words.
    case pendingNotMade(cause: String)
    /// The attachments folder may not be listed by this user, so ``QueueStatus/attachments`` leaves its files out.
    case attachmentsNotCounted(path: String)
    /// The dead letters that wait (`path`) are the queue owner's alone to read, since they hold the ids of records
    /// still to be put back: ``QueueInspector/status()`` run by another user does not count them.
    case waitingLettersNotCounted(path: String)
    /// A record's attachment was missing from the attachments folder at `folder`, and its copy
    /// was brought back from `source`, a folder a drain had moved aside.
    case attachmentRestored(file: String, recordID: String, folder: String, source: String)
    /// A folder a drain moved aside from the attachments folder may not be read by this user:
    /// a record whose copy it holds waits among the dead letters until its owner or root lets
    /// the drain read it.
    /// - Parameter owner: The folder's owner's user id, where it could be seen.
    case movedAsideFolderUnreadable(path: String, owner: UInt32?)

    // MARK: Refusals and dead letters

    /// The sink refused the record `id`, which stays queued and is offered again on a later run.
    /// - Parameters:
    ///   - id: The record's id.
    ///   - attempt: How many times it has been refused, this one included.
    ///   - maxAttempts: The refusals that make it a dead letter (``DrainOptions/maxAttempts``).
    ///   - reason: Why, as the sink said.
    case recordRefused(id: String, attempt: Int, maxAttempts: Int, reason: String)
    /// The record `id` was moved to the dead letters, where
    /// ``QueueDrainer/requeueDeadLetters()`` can put it back.
    case recordDeadLettered(id: String, cause: DeadLetterCause, reason: String)
    /// A line of the dead letters at `path` is no dead letter, and was passed over; a requeue keeps it aside.
    /// - Parameters:
    ///   - path: The file.
    ///   - offset: Where the line starts.
    ///   - length: The line's length in bytes.
    ///   - isTooLong: Whether it is longer than any dead letter may be, and was not read.
    case damagedDeadLetterSkipped(path: String, offset: Int64, length: Int64, isTooLong: Bool)
    /// The dead letters are as large as a file may be, and were moved aside whole to `movedTo`;
    /// a new file begins. A requeue puts back only what is at the dead letters' own name.
    /// - Parameter cause: The system's error, in words.
    case deadLettersMovedAside(path: String, movedTo: String, cause: String)
    /// A requeue of dead letters that was cut short was finished, putting back `recordsPutBack` more records.
    case requeueFinished(recordsPutBack: Int)
    /// The record `id`, a dead letter that waited for another user's folder or copy, may now be
    /// read: it was put back at the end of the queue.
    case waitingRecordPutBack(id: String)
    /// The dead letters that wait for another user's folder or copy could not be looked at again:
    /// the drain delivers what is queued, and a later drain looks again.
    /// - Parameter cause: The error, in words.
    case waitingLettersNotPutBack(cause: String)
    /// A requeue of dead letters that was cut short could not be finished: the drain delivers
    /// what is queued, and a later run resumes the requeue.
    /// - Parameter cause: The error that stopped it, in words.
    case requeueNotFinished(cause: String)
    /// Lines of the dead letters being put back were damaged; the file was moved aside to `movedTo` after the others were put back.
    case damagedRequeueMovedAside(path: String, damagedLines: Int, movedTo: String)
    /// Lines of the refusal counts were damaged, and those records' counts start over.
    case refusalCountsDamaged(path: String, damagedLines: Int)
    /// The refusal counts are larger than such a file may be: they were moved aside unread to
    /// `movedTo`, or, if that failed, left (nil, with the error in `cause`); every count starts over.
    case refusalCountsTooLarge(path: String, movedTo: String?, cause: String?)

    // MARK: Limits

    /// Every segment number has been used, up to the one given: what is pending stays queued.
    case noSegmentNumberLeft(after: UInt64)

    /// How a drain moved a file aside (``QueueEvent/fileMovedAside(path:problem:movedTo:handling:)``).
    public enum Handling: Sendable, Equatable {
        /// Renamed without being read.
        case unread
        /// Renamed without being followed: a symlink, or no directory where one belongs.
        case unfollowed
        /// A folder other users could not use, renamed whole: what it holds stays in it, for its owner.
        case contentsLeftForOwner
        /// Renamed without being read, and a new one made in its place: a lock file.
        case replaced
        /// Renamed without being followed, and a new one made in its place: a lock file.
        case unfollowedAndReplaced
        /// Another user's sealed segment this user may not read, renamed unread: the records in it
        /// are not delivered, and it is kept for its owner or root to read.
        case segmentKeptForOwner

        /// How ``QueueEvent/description`` says it.
        var words: String {
            switch self {
            case .unread: "without reading it"
            case .unfollowed: "without following it"
            case .contentsLeftForOwner: "without reading it; what it holds stays there, for its owner"
            case .replaced: "and made a new one"
            case .unfollowedAndReplaced: "without following it; made a new one"
            case .segmentKeptForOwner:
                "without reading it. The records in it are NOT delivered: "
                    + "producers write into no other user's pending file, so only what its owner appended or copied there can be in it; "
                    + "it is kept there for that owner or root to read"
            }
        }
    }

    /// Why a record became a dead letter (``QueueEvent/recordDeadLettered(id:cause:reason:)``).
    public enum DeadLetterCause: Sendable, Equatable {
        /// The sink refused it as final (``RecordRefusal/Refused/isFinal``), such as a kind no handler takes.
        case refusedForGood
        /// The sink refused it this many times, ``DrainOptions/maxAttempts``.
        case refusedTooOften(attempts: Int)
        /// It was not read: its attachments are too many, too large or mostly holes for the drain's
        /// limits, or another user's copy bars it.
        case unread
        /// Its copy is in a folder, or is a file, that another user keeps this user from reading.
        /// It comes back by itself once a drain may read it.
        case waitsForAnotherUser
        /// The sink already holds a record with its id and other content: the store keeps the
        /// first record of each id, and ids are chosen by producers, so this one was not stored.
        /// A record the sink holds with the same content is delivered again silently, not set aside.
        case idStoredWithOtherContent
    }

    /// The event in words, on one line, as `host-drain` prints it after `host-drain: warning: `.
    public var description: String {
        switch self {
        case .damageSetAside(let segment, let offset, let length, let reason):
            "set aside \(length) bytes at offset \(offset) of \(segment): \(reason)"
        case .segmentKeptWhole(let path, let kept):
            "kept \(path) whole as \(kept): its damaged data could not be copied to the quarantine file"
        case .checkpointDamaged(let path):
            "the checkpoint (\(path)) is damaged; delivering from the oldest sealed segment again"
        case .checkpointDoesNotFit(let position):
            "the checkpoint (\(position)) does not fit the sealed segments there are; delivering from the oldest sealed segment again"
        case .checkpointPastEnd(let path):
            "the checkpoint points past the end of \(path); delivering it from the start"
        case .storedPositionIgnored(let position):
            "the sink's stored position (\(position)) does not fit this queue's segments; ignoring it"
        case .fileMovedAside(let path, let problem, let target, let handling):
            "\(path) \(problem); moved it aside to \(target) \(handling.words)"
        case .leftoverMovedAside(let path, let target):
            "\(path) could not be removed; moved it aside to \(target)"
        case .fileNotRead(let path, let problem):
            "\(path) \(problem); nothing in it is counted: a drain sets such a file aside unread"
        case .fileUnusableByProducers(let path, let problem):
            "\(path) \(problem)"
        case .pendingNotMade(let cause):
            "\(cause); the next producer makes the pending file instead"
        case .attachmentsNotCounted(let path):
            "\(path) may not be listed by this user; its files are not counted"
        case .waitingLettersNotCounted(let path):
            "\(path) is the queue owner's alone to read; the letters in it are not counted"
        case .attachmentRestored(let file, let id, let folder, let source):
            "attachment \(file) of record \(DeadLetters.quoted(id)) was not in \(folder); "
                + "brought back the copy in \(source), the folder a drain moved it aside to"
        case .movedAsideFolderUnreadable(let path, let owner):
            "\(path), a folder a drain moved aside from the attachments folder\(owner.map { " (user \($0)'s)" } ?? ""), may not be read by this user: "
                + "a record whose copy it holds waits among the dead letters until its owner or root lets the drain read it (chmod 2770, or g+rx)"
        case .recordRefused(let id, let attempt, let maxAttempts, let reason):
            "record \(DeadLetters.quoted(id)) was refused (attempt \(attempt) of \(maxAttempts)); it stays queued: \(reason)"
        case .recordDeadLettered(let id, .refusedForGood, let reason):
            "record \(DeadLetters.quoted(id)) was refused for good; moved it to the dead letters: \(reason)"
        case .recordDeadLettered(let id, .refusedTooOften(let attempts), let reason):
            "record \(DeadLetters.quoted(id)) was refused \(attempts) times; moved it to the dead letters: \(reason)"
        case .recordDeadLettered(let id, .unread, let reason):
            "record \(DeadLetters.quoted(id)) moved to the dead letters unread: \(reason)"
        case .recordDeadLettered(let id, .idStoredWithOtherContent, let reason):
            "record \(DeadLetters.quoted(id)) was not stored; moved it to the dead letters: \(reason) "
                + "(a producer may give a record any id: compare the two)"
        case .recordDeadLettered(let id, .waitsForAnotherUser, let reason):
            "record \(DeadLetters.quoted(id)) waits among the dead letters: \(reason)"
        case .damagedDeadLetterSkipped(let path, let offset, let length, let isTooLong):
            isTooLong
                ? "skipped a damaged line of \(length) bytes at offset \(offset) of \(path) (a dead letter is at most \(DeadLetters.maximumLetterLength) bytes)"
                : "skipped a damaged dead letter of \(length) bytes in \(path)"
        case .deadLettersMovedAside(let path, let target, let cause):
            "\(path) is as large as a file may be here (\(cause)); moved it aside to \(target), out of --requeue-dead's reach until it is renamed back"
        case .requeueFinished(let count):
            "finished a requeue of dead letters that was cut short: put \(count) more back"
        case .waitingRecordPutBack(let id):
            "record \(DeadLetters.quoted(id)) no longer waits for another user's folder or copy; put it back at the end of the queue"
        case .waitingLettersNotPutBack(let cause):
            "cannot put back the dead letters that wait for another user's folder or copy (\(cause)); delivering what is queued; a later drain looks again"
        case .requeueNotFinished(let cause):
            "cannot finish a requeue of dead letters that was cut short (\(cause)); delivering what is queued, "
                + "letters it had put back among it; the requeue resumes on a later run with those it had not"
        case .damagedRequeueMovedAside(let path, let lines, let target):
            "\(path) held \(lines) damaged line\(lines == 1 ? "" : "s"); moved the file aside to \(target)"
        case .refusalCountsDamaged(let path, let lines):
            "skipped \(lines) damaged line\(lines == 1 ? "" : "s") of \(path); those refusal counts start over"
        case .refusalCountsTooLarge(let path, let target?, _):
            "\(path) is over \(DeadLetters.maximumAttemptsSize) bytes; moved it aside to \(target) without reading it; refusal counts start over"
        case .refusalCountsTooLarge(let path, nil, let cause):
            "\(path) is over \(DeadLetters.maximumAttemptsSize) bytes and cannot be moved aside (\(cause ?? "unknown")); refusal counts start over"
        case .noSegmentNumberLeft(let last):
            "no segment number is left after \(last); the pending records stay queued for the next drain"
        }
    }
}
