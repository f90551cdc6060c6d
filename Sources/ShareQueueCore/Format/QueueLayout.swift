/// The names of the files in a queue directory, and the rules that tell them apart.
///
///     format                 "ShareQueue queue format 1", then "queue <UUID>": refuse anything newer
///     format.tmp-<pid>       a format marker being written, linked into place once whole
///     append.lock            half of the producers' lock, the directory being the other; never renamed or removed
///     pending.log            the segment producers append to
///     sealed-<N>.log         segments a drainer has taken, delivered in order of N
///                            (N zero-padded to 12 digits; other spellings are moved aside)
///     drain.lock             one drainer at a time
///     checkpoint             how far delivery has got
///     quarantine.log         damaged records set aside, one JSON object a line
///     quarantine-<segment>   a whole segment kept because its damage could not be copied out
///     dead-letters.log       records a sink refused too often, one JSON object a line
///     dead-letters.requeue   dead letters being put back at the end of the queue
///     dead-letters.waiting   records that wait for another user's folder or copy the drain may not
///                            read, as dead letters; a drain puts each back once it may
///     attempts               refusal counts of records still queued (written as attempts.tmp-<pid>)
///     attachments/           attachment files; `.tmp-<file>` while one is copied in
///     keys/<sha256 of key>   the id and content digest of the last record published with the key;
///                            written as `keys/.tmp-<pid>` and renamed into place
///     <name>.tmp-<pid>       a file or folder of the queue being made whole (mode, group) before
///                            it is linked or renamed to <name>
///     rejected-<ms>-<name>   a file moved aside unread: nothing found in the directory is destroyed
///     rejected-<ms>-<tag>-<name>   the same, where that name was taken (16 hex digits, random)
///
/// Temporary names (`<name>.tmp-<pid>`, `keys/.tmp-<pid>`,
/// `attachments/.tmp-<file>`) are removed on every error path; what a killed
/// process left under them, a drain removes once it is a day old.
///
/// Every name the queue reads or writes is spelled here and nowhere else, so
/// that a producer, a drain and a tool that watches the directory agree on them.
package enum QueueLayout {
    package static let formatMarker = "format"
    package static let appendLock = "append.lock"
    package static let pending = "pending.log"
    package static let drainLock = "drain.lock"
    package static let checkpoint = "checkpoint"
    package static let quarantine = "quarantine.log"
    package static let deadLetters = "dead-letters.log"
    package static let deadLettersRequeue = "dead-letters.requeue"
    package static let deadLettersWaiting = "dead-letters.waiting"
    package static let attempts = "attempts"
    package static let attachments = "attachments"
    package static let keys = "keys"

    /// The files a drain writes in place and checks before it starts: what stands at one of these
    /// names and is no file of the queue's own (`QueueDirectory.foreignFile`) is set aside unread.
    package static let drainsOwnFiles = [checkpoint, quarantine, deadLetters, deadLettersRequeue, deadLettersWaiting, attempts]

    /// The files only a drain writes (the format marker too, which a tool that finds none writes and a
    /// drain replaces with its own): made the queue owner's, which its group may read but not write, so
    /// that no member can rewrite what they hold. A drain sets aside one another user owns, or the group
    /// may write (`QueueDirectory.notDrainsOwn(_:_:)`).
    package static let drainsOnly = [formatMarker, checkpoint, attempts, deadLetters, deadLettersRequeue, deadLettersWaiting]

    /// The files of the drain that not even its group may read: letters that wait hold the ids of
    /// records still to be put back, which a member could otherwise append under her own records first.
    package static let ownerOnly = [deadLettersWaiting]

    /// Who may use the file `name` of the queue directory, or a file being made whole for it
    /// (`<name>.tmp-<pid>`).
    package static func access(of name: String) -> FileAccess {
        func named(_ names: [String]) -> Bool { names.contains { name == $0 || isCreationTemporary(name, of: $0) } }
        return named(ownerOnly) ? .ownerOnly : named(drainsOnly) ? .readByGroup : .shared
    }

    /// Who may use a file of the queue, in a queue shared with a group.
    package enum FileAccess: Sendable {
        /// Its group may read and write it: what producers of every user write.
        case shared
        /// Its group may read it: what only drains write, and `--status` reads.
        case readByGroup
        /// Only its owner may use it.
        case ownerOnly
    }

    /// The folders a drain checks before it starts: what stands there and is no directory is set aside unfollowed.
    package static let folders = [attachments, keys]

    /// Where process `processID` writes a format marker before linking it into place.
    package static func formatMarkerTemporary(processID: Int32) -> String { formatMarker + ".tmp-\(processID)" }

    /// Where process `processID` writes the refusal counts before renaming them into place.
    package static func attemptsTemporary(processID: Int32) -> String { attempts + ".tmp-\(processID)" }

    /// The names of the queue directory that are made whole under a temporary name, then linked or renamed into place.
    package static let madeWhole = [formatMarker, attempts, appendLock, drainLock, pending, checkpoint, quarantine, deadLetters, attachments, keys]

    /// Where process `processID` makes the file or folder `name` whole (its mode and group set) before
    /// it is linked or renamed into place: `<name>.tmp-<pid>`.
    package static func creationTemporary(_ name: String, processID: Int32) -> String { name + ".tmp-\(processID)" }

    /// Whether `name`, in the queue directory, is a file or folder being made whole by some process
    /// (`<name>.tmp-<pid>` for one of ``madeWhole``: a format marker, refusal counts, `pending.log`, ...).
    package static func isTemporary(_ name: String) -> Bool {
        madeWhole.contains { isCreationTemporary(name, of: $0) }
    }

    /// Whether `name` is `<of>.tmp-<pid>`: where some process makes `of` whole.
    package static func isCreationTemporary(_ name: String, of target: String) -> Bool {
        isNumbered(name, after: target + ".tmp-")
    }

    /// Whether `name` is `prefix` followed by the decimal digits of a process id.
    private static func isNumbered(_ name: String, after prefix: String) -> Bool {
        guard name.hasPrefix(prefix) else { return false }
        let digits = name.utf8.dropFirst(prefix.utf8.count)
        return (1...10).contains(digits.count) && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    // MARK: Segments

    private static let sealedPrefix = "sealed-"
    private static let sealedSuffix = ".log"

    /// The largest segment number the queue uses: far beyond any real queue's
    /// life, and far enough from overflow that arithmetic on it is safe.
    package static let maximumSequence: UInt64 = 999_999_999_999_999

    /// The one spelling of segment `sequence`: at least 12 digits, zero-padded.
    package static func sealedName(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return sealedPrefix + String(repeating: "0", count: max(0, 12 - digits.count)) + digits + sealedSuffix
    }

    /// The number of a segment the queue wrote: nil unless `name` is exactly
    /// `sealedName(N)` for an N up to `maximumSequence`.
    package static func sealedSequence(of name: String) -> UInt64? {
        guard looksLikeSegment(name) else { return nil }
        let digits = name.dropFirst(sealedPrefix.count).dropLast(sealedSuffix.count)
        guard digits.count <= 15, let sequence = UInt64(digits), name == sealedName(sequence) else { return nil }
        return sequence
    }

    /// Whether `name` is `sealed-<ASCII digits>.log`, spelled as the queue spells it or not.
    package static func looksLikeSegment(_ name: String) -> Bool {
        guard name.utf8.starts(with: sealedPrefix.utf8), name.utf8.reversed().starts(with: sealedSuffix.utf8.reversed()), name.utf8.count > sealedPrefix.count + sealedSuffix.count else { return false }
        return name.utf8.dropFirst(sealedPrefix.count).dropLast(sealedSuffix.count).allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    // MARK: What is kept aside

    private static let keptSegmentPrefix = "quarantine-"

    /// Where a drain keeps a whole segment whose damage it could not copy out (the disk was full).
    package static func keptSegment(_ segmentName: String) -> String { keptSegmentPrefix + segmentName }

    /// Whether `name` is a segment kept whole by `keptSegment`.
    package static func isKeptSegment(_ name: String) -> Bool { name.utf8.starts(with: keptSegmentPrefix.utf8) }

    /// The name `name` is moved aside to, unread, at `milliseconds` since 1970.
    package static func rejected(_ name: String, atMilliseconds milliseconds: Int64) -> String {
        fitted("\(rejectedPrefix)\(milliseconds)-", name)
    }

    /// The longest file name the systems the queue runs on take, in bytes.
    static let maximumNameLength = 255

    /// `prefix` and as much of the start of `name` as fits in a file name: a planted name
    /// of nearly that length must not make the name it is moved aside to too long.
    private static func fitted(_ prefix: String, _ name: String) -> String {
        var kept = Substring(name)
        while prefix.utf8.count + kept.utf8.count > maximumNameLength { kept = kept.dropLast() }
        return prefix + kept
    }

    private static let rejectedPrefix = "rejected-"

    /// Whether `name` is a file moved aside by `rejected`.
    package static func isRejected(_ name: String) -> Bool { name.utf8.starts(with: rejectedPrefix.utf8) }

    /// The time in milliseconds in `name` if it is a name `target` was moved aside to
    /// (`rejected-<ms>-<target>`, or `rejected-<ms>-<tag>-<target>` with a tag of 16 lower-case
    /// hexadecimal digits); nil for any other name.
    package static func movedAsideMilliseconds(_ name: String, from target: String) -> Int64? {
        let bytes = Array(name.utf8), prefix = Array(rejectedPrefix.utf8), suffix = Array(("-" + target).utf8)
        guard bytes.count > prefix.count + suffix.count, bytes.starts(with: prefix), bytes.suffix(suffix.count).elementsEqual(suffix) else { return nil }
        var time = bytes[prefix.count ..< bytes.count - suffix.count]
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let isHexDigit = { (byte: UInt8) in isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) }
        if time.count > 17, time[time.endIndex - 17] == UInt8(ascii: "-"), time.suffix(16).allSatisfy(isHexDigit) { time = time.dropLast(17) }
        guard (1...18).contains(time.count), time.allSatisfy(isDigit) else { return nil }
        return Int64(String(decoding: time, as: UTF8.self))
    }

    /// The name `name` is moved aside to when the one above is taken: with 16
    /// hexadecimal digits of `tag` (random) after the time.
    package static func rejected(_ name: String, atMilliseconds milliseconds: Int64, tag: UInt64) -> String {
        fitted("\(rejectedPrefix)\(milliseconds)-\(hexTag(tag))-", name)
    }

    /// A random tag as names spell it, where one foreseen may be taken: 16 lower-case hexadecimal digits.
    package static func hexTag(_ tag: UInt64) -> String {
        let digits = String(tag, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    // MARK: In the keys folder

    /// The name of `key`'s entry in the keys folder: SHA-256 of its UTF-8 bytes, 64 lower-case hex digits,
    /// so that any key makes a short, safe file name.
    package static func keyEntry(_ key: String) -> String { SHA256.hex(Array(key.utf8)) }

    /// Where process `processID` writes a key's entry before renaming it into place.
    package static func keyEntryTemporary(processID: Int32) -> String { ".tmp-\(processID)" }

    /// Whether `name`, in the keys folder, is an entry being written by some process.
    package static func isKeyEntryTemporary(_ name: String) -> Bool { isNumbered(name, after: ".tmp-") }

    // MARK: In the attachments folder

    private static let attachmentTemporaryPrefix = ".tmp-"

    /// The name an attachment file has in the folder while it is copied in.
    package static func attachmentTemporary(_ file: String) -> String { attachmentTemporaryPrefix + file }

    /// Whether `name`, in the attachments folder, is a copy that was never finished.
    package static func isAttachmentTemporary(_ name: String) -> Bool { name.utf8.starts(with: attachmentTemporaryPrefix.utf8) }

    /// Whether `name`, in the attachments folder, is an attachment rather than
    /// work in progress: the folder's own names start with a dot.
    package static func isAttachment(_ name: String) -> Bool { name.utf8.first != UInt8(ascii: ".") }
}
