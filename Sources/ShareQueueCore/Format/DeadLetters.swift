/// Records a sink refused too often, set aside with the last error
/// (`dead-letters.log`, one JSON object a line), and the refusal counts of
/// records still queued (`attempts`, one JSON object a line). Ids are written
/// as JSON strings, so any id a record may have is held unambiguously; every
/// read is bounded, whatever size the files declare.
import ShareQueueSystem
struct DeadLetters {
    let directory: QueueDirectory
    /// Hears of damaged lines skipped and files set aside.
    var onEvent: (QueueEvent) -> Void = { _ in }
    var path: String { directory.path(of: QueueLayout.deadLetters) }
    var requeuePath: String { directory.path(of: QueueLayout.deadLettersRequeue) }
    var attemptsPath: String { directory.path(of: QueueLayout.attempts) }

    /// The longest error kept in a letter, in bytes of UTF-8, so that the wrapper around a record stays small.
    static let maximumErrorLength = 4096

    /// `error` cut to at most ``maximumErrorLength`` bytes, between characters: a cut through one
    /// would leave a byte that is no UTF-8, written as U+FFFD, three bytes past the limit.
    static func cut(_ error: String) -> String {
        let bytes = Array(error.utf8)
        var end = min(bytes.count, maximumErrorLength)
        while end < bytes.count && end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
    /// The longest dead letter: the largest record a frame holds, and its wrapper
    /// (date, attempts, and the error with every byte escaped).
    static let maximumLetterLength = Frame.maximumPayloadSize + (64 << 10)
    /// The attempts file counts the few records at the head of the queue; a
    /// larger one is set aside unread and the counts start over.
    static let maximumAttemptsSize = 1 << 20

    /// A record to set aside, with its refusal count and the last error.
    struct Letter {
        let record: DrainedRecord
        let attempts: Int
        let error: String
        /// Whether the record waits for another user's folder or copy that the drain may not read: its
        /// letter goes to `dead-letters.waiting`, which a drain looks through each run and puts back by itself.
        var waiting = false
    }

    /// Appends dead letters in a single write and makes them durable.
    /// - Parameter name: The file: the dead letters, or those that wait (`dead-letters.waiting`).
    func add(_ letters: [Letter], to name: String = QueueLayout.deadLetters) throws(ShareQueueError) {
        let path = directory.path(of: name)
        guard !letters.isEmpty else { return }
        let date = Timestamp.now()
        var lines: [UInt8] = []
        for letter in letters {
            lines += Array("{\"date\":".utf8)
            JSONWriter.appendString(date, to: &lines)
            lines += Array(",\"attempts\":\(letter.attempts),\"error\":".utf8)
            JSONWriter.appendString(Self.cut(letter.error), to: &lines)
            lines += Array(",\"record\":".utf8) + Self.onOneLine(letter.record.storedJSON) + Array("}\n".utf8)
        }
        do {
            try appendToOwn(lines, to: name)
        } catch where error.isFileTooLarge {
            // As large as a file may be (anyone who may write it can make it so): the letters in it
            // are moved aside whole, where a person can look at them and rename them back, and a new file begins.
            do {
                let target = try directory.moveAside(name)
                onEvent(.deadLettersMovedAside(path: path, movedTo: target, cause: "\(error)"))
                try appendToOwn(lines, to: name)
            } catch {
                throw ReadFailure.error("cannot set a refused record aside", path: path, error)
            }
        } catch {
            throw ReadFailure.error("cannot set a refused record aside", path: path, error)
        }
    }

    /// Appends whole lines to the dead-letter file `name`, making it if needed, and makes them durable.
    /// One that a member of a shared queue's group put at the name since the drain's start looked gets
    /// no letter: it is moved aside, and the letters go into a new file (`QueueDirectory.openDrainsOwn`).
    private func appendToOwn(_ lines: [UInt8], to name: String) throws(SystemError) {
        var lines = lines
        // A mode that creates always gives a file.
        guard let file = try directory.openDrainsOwn(name, .appendCreate, onEvent: onEvent) else { throw SystemError.exists }
        let isNew = try file.closeAfter { () throws(SystemError) -> Bool in
            // A write cut short (a full disk, a power cut) may have left a last line
            // without its line break: these letters must not run on from it.
            let size = try file.status().size
            if size > 0, try file.readFully(count: 1, at: size - 1) != [0x0A] { lines.insert(0x0A, at: 0) }
            try file.writeAll(lines)
            try file.synchronize(.deadLetterData)
            return size == 0
        }
        CrashPoint.reached(.drainLettersWritten)
        // A new file's name is durable before a checkpoint can move past the letters in it (an empty
        // one is taken for new: a drain may have made it and stopped before its name was durable).
        if isNew { try directory.folder.synchronize(.deadLettersCreated) }
    }

    /// A stored record as a letter holds it: its `\n` and `\r` bytes as spaces.
    /// A valid record has them only as whitespace between tokens (a string
    /// escapes them), so the record is the same, and its letter stays one line.
    static func onOneLine(_ storedJSON: [UInt8]) -> [UInt8] {
        storedJSON.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
    }

    /// How many dead letters there are, in the three files; damaged lines are not counted.
    /// - Parameter setAside: the files among them that a drain sets aside, which are not read.
    /// - Returns: the letters; how many of them wait for another user's folder or copy; and how many a
    ///   store did not take, its id already stored with other content (by the error their letters keep).
    func count(except setAside: Set<String> = []) throws(ShareQueueError) -> (letters: Int, waiting: Int, idConflicts: Int) {
        var letters = 0, waiting = 0, idConflicts = 0
        for file in [QueueLayout.deadLetters, QueueLayout.deadLettersRequeue, QueueLayout.deadLettersWaiting] where !setAside.contains(file) {
            try forEachLetter(in: file, readingOnly: true) { _, _, wrapper throws(ShareQueueError) in
                letters += 1
                if file == QueueLayout.deadLettersWaiting { waiting += 1 }
                if wrapper.suffix(Self.idConflictWrapperEnd.count).elementsEqual(Self.idConflictWrapperEnd) { idConflicts += 1 }
            }
        }
        return (letters, waiting, idConflicts)
    }

    /// How the wrapper of a letter for a record whose id a store held with other content ends, before its record.
    private static let idConflictWrapperEnd: [UInt8] = {
        var bytes = Array(",\"error\":".utf8)
        JSONWriter.appendString(RecordRefusal.Refused.idTakenReason, to: &bytes)
        return bytes
    }()

    /// Visits the stored JSON of every dead letter in the file `name` (the
    /// dead letters, or those being put back), in order, byte for
    /// byte, reading one line at a time. A line that is too long or not a dead
    /// letter is skipped with a warning.
    /// - Returns: how many lines were skipped.
    @discardableResult
    func forEachRecord(in name: String, from firstOffset: Int64 = 0, _ visit: ([UInt8]) throws(ShareQueueError) -> Void) throws(ShareQueueError) -> Int {
        try forEachLetter(in: name, from: firstOffset) { record, _, _ throws(ShareQueueError) in try visit(record) }
    }

    /// Visits each letter's record and line, as the variant below does, without its wrapper.
    @discardableResult
    func forEachLetter(in name: String, from firstOffset: Int64 = 0, isBoundary: () throws(ShareQueueError) -> Void = {},
                       _ visit: ([UInt8], Range<Int64>) throws(ShareQueueError) -> Void) throws(ShareQueueError) -> Int {
        try forEachLetter(in: name, from: firstOffset, isBoundary: isBoundary) { record, line, _ throws(ShareQueueError) in try visit(record, line) }
    }

    /// What ``forEachRecord(in:from:_:)`` does, giving each record with the bytes of the
    /// file its letter's line takes (without its line break), and the letter's wrapper: its
    /// bytes before `,"record":`. A line of spaces, a letter
    /// a requeue has put back (``blank(_:in:)``), is passed over silently.
    /// A drain acts on what it reads, so a file a member of a shared queue's group put at the name is
    /// moved aside unread (`QueueDirectory.openDrainsOwn`): her letters could make honest records look
    /// set aside already. A missing file has no letters.
    /// - Parameter isBoundary: hears of each line skipped as damaged, as it is met.
    /// - Parameter readingOnly: read as one that only looks does, changing nothing (`QueueStatus`).
    @discardableResult
    func forEachLetter(in name: String, from firstOffset: Int64 = 0, readingOnly: Bool = false, isBoundary: () throws(ShareQueueError) -> Void = {},
                       _ visit: ([UInt8], Range<Int64>, ArraySlice<UInt8>) throws(ShareQueueError) -> Void) throws(ShareQueueError) -> Int {
        var skipped = 0
        let file = directory.path(of: name)
        let opened: FileDescriptor?
        do {
            opened = readingOnly ? try directory.folder.open(name, .readOnly) : try directory.openDrainsOwn(name, .readOnly, onEvent: onEvent)
        } catch {
            if error.isNotFound { return 0 }
            // Not one regular file (a FIFO, another name linked to it): what it may hold is not read, and
            // counts as a line skipped, so that no caller removes it or takes it for a file without letters.
            if error.isUnexpectedFileType { return 1 }
            throw ReadFailure.error("cannot read a file of the queue", path: file, error)
        }
        guard let opened else { return 0 }
        defer { opened.close() }
        try LineReader(maximumLength: Self.maximumLetterLength).forEachLine(in: opened, path: file, from: firstOffset) { piece throws(ShareQueueError) in
            switch piece {
            case .line(let line, let offset):
                if let (record, wrapper) = Self.record(inLetter: line) { return try visit(record, offset..<(offset + Int64(line.count)), line[..<wrapper]) }
                if line.allSatisfy({ $0 == 0x20 }) { return }
                try isBoundary()
                onEvent(.damagedDeadLetterSkipped(path: file, offset: offset, length: Int64(line.count), isTooLong: false))
            case .damaged(let offset, let length):
                try isBoundary()
                onEvent(.damagedDeadLetterSkipped(path: file, offset: offset, length: length, isTooLong: true))
            }
            skipped += 1
        }
        return skipped
    }

    /// The stored record of a dead-letter line, and where its wrapper ends, or nil if the line is not one.
    private static func record(inLetter line: [UInt8]) -> (record: [UInt8], wrapperEnd: Int)? {
        // `add` writes date, attempts and error, then the record, last. The first
        // `,"record":` is the wrapper's: inside the error string quotes are escaped.
        let marker = Array(",\"record\":".utf8)
        guard let found = line.firstRange(of: marker), line.last == UInt8(ascii: "}") else { return nil }
        let record = Array(line[found.upperBound..<(line.count - 1)])
        return (try? RecordSummary(jsonBytes: record)) == nil ? nil : (record, found.lowerBound)
    }

    /// The digests of the records the dead letters hold (the same stored
    /// bytes, not only the same id), read once, so that a drain asks in constant
    /// time whether a record is a dead letter already. A digest, not a hash to be
    /// confirmed by reading the file again: that read, once per record, made a
    /// drain after a crash quadratic in the records it set aside again.
    ///
    /// Only the end of the file is read (``recentLettersSize(of:)``): a drain killed
    /// before its checkpoint set aside at most one batch there, the letters it
    /// could meet again. A letter older than that written twice would be put back
    /// twice, and so delivered twice at worst, never lost.
    /// - Throws: a failure to read that proves nothing (see ``ReadFailure``):
    ///   the drain stops rather than write letters it could not check.
    func storedRecordDigests(options: DrainOptions = DrainOptions()) throws(ShareQueueError) -> Set<StoredDigest> {
        var digests: Set<StoredDigest> = []
        for name in [QueueLayout.deadLetters, QueueLayout.deadLettersWaiting] {
            let size = try directory.status(of: name)?.size ?? 0
            try forEachRecord(in: name, from: max(0, size - Self.recentLettersSize(of: options))) { record in digests.insert(StoredDigest(record)) }
        }
        return digests
    }

    /// Makes the letters files (`dead-letters.log`, `dead-letters.waiting`) durable, and their names: what
    /// an earlier drain killed between its writes and its syncs left, which this one may find and not write again.
    func makeDurable() throws(ShareQueueError) {
        for name in [QueueLayout.deadLetters, QueueLayout.deadLettersWaiting] {
            do throws(SystemError) {
                guard let file = try directory.openDrainsOwn(name, .readOnly, onEvent: onEvent) else { continue }
                try file.closeAfter { () throws(SystemError) in try file.synchronize(.deadLetterData) }
            } catch {
                throw ReadFailure.error("cannot make the dead letters durable", path: directory.path(of: name), error)
            }
        }
        do { try directory.folder.synchronize(.deadLettersCreated) } catch {
            throw ReadFailure.error("cannot make the dead letters durable", path: directory.path, error)
        }
    }

    /// How much of the end of the dead-letter file a drain reads to find letters it may have
    /// written before it was killed: the most one batch's letters can take. Its records' bytes
    /// reach the batch's budget and one record more (of up to 16 MiB) ends it; it holds at most
    /// `batchSize` records and as many records made dead letters unread, and each letter also
    /// holds an error of up to 4 KiB and its date. About 60 MiB with the defaults.
    static func recentLettersSize(of options: DrainOptions) -> Int64 {
        Int64(options.batchBytes) + Int64(Frame.maximumPayloadSize) + 2 * Int64(options.batchSize) * Int64(maximumErrorLength + 256)
    }

    /// A stored record's digest: 16 bytes a letter.
    struct StoredDigest: Hashable {
        let digest: Digest128

        /// The digest of the record as its letter holds it (`onOneLine`), so that a
        /// record stored over several lines matches its own letter.
        init(_ storedJSON: [UInt8]) { digest = Digest128(DeadLetters.onOneLine(storedJSON)) }
    }

    // MARK: Refusal counts

    /// Refusal counts by id, compared as UTF-8 bytes: Swift compares strings
    /// by canonical equivalence, which would merge distinct ids.
    typealias Counts = [ByteKey: Int]

    /// The refusal counts of records still queued, read strictly: a line that is
    /// not exactly `{"id":"…","attempts":N}` counts for nothing, so damage can only
    /// make a record's count start over (it is then refused more times, never fewer).
    /// - Returns: the counts, and whether the file held damage and should be rewritten.
    /// - Throws: a failure to read that proves nothing (see ``ReadFailure``). Counts
    ///   that started over on such a failure would cost only extra attempts, but a
    ///   rewrite would then drop every other record's count, and a clear would
    ///   leave stale ones behind: the drain stops instead, and the file stays as it is.
    func attempts() throws(ShareQueueError) -> (counts: Counts, damaged: Bool) {
        let bytes: [UInt8]
        do throws(SystemError) {
            // A member's counts, raised to make honest records dead letters, are moved aside unread: none.
            guard let file = try directory.openDrainsOwn(QueueLayout.attempts, .readOnly, onEvent: onEvent) else { return ([:], false) }
            defer { file.close() }
            let status = try file.status()
            bytes = try file.readFully(count: Int(min(status.size, Int64(Self.maximumAttemptsSize))) + 1, at: 0)
        } catch {
            if ReadFailure.damage(error) != nil { return ([:], false) }
            throw ReadFailure.error("cannot read the refusal counts", path: attemptsPath, error)
        }
        guard bytes.count <= Self.maximumAttemptsSize else {
            setAsideAttempts()
            return ([:], false)
        }
        var counts: Counts = [:]
        var damaged = 0
        for line in bytes.split(separator: 0x0A) {
            guard case .object(let members)? = try? JSONParser.parse(Array(line)), members.count == 2,
                  case .string(let id)? = members["id"], !id.isEmpty,
                  case .number(let literal)? = members["attempts"], let count = Int(literal), count > 0 else {
                damaged += 1
                continue
            }
            counts[ByteKey(id)] = count
        }
        if damaged > 0 { onEvent(.refusalCountsDamaged(path: attemptsPath, damagedLines: damaged)) }
        return (counts, damaged > 0)
    }

    /// Moves an attempts file over the limit out of the way, unread.
    private func setAsideAttempts() {
        let target: String
        do { target = try directory.moveAside(QueueLayout.attempts) } catch {
            onEvent(.refusalCountsTooLarge(path: attemptsPath, movedTo: nil, cause: "\(error)"))
            return
        }
        onEvent(.refusalCountsTooLarge(path: attemptsPath, movedTo: target, cause: nil))
    }

    /// Replaces the attempts file (temporary file, fsync, rename), or removes it when no count is left.
    func saveAttempts(_ counts: Counts) throws(ShareQueueError) {
        if counts.isEmpty {
            do { try directory.folder.remove(QueueLayout.attempts) } catch {
                throw ReadFailure.error("cannot clear the refusal counts", path: attemptsPath, error)
            }
            return
        }
        var text: [UInt8] = []
        for (id, count) in counts.sorted(by: { ByteKey.precedes($0.key.text, $1.key.text) }) {
            text += Array("{\"id\":".utf8)
            JSONWriter.appendString(id.text, to: &text)
            text += Array(",\"attempts\":\(count)}\n".utf8)
        }
        let folder = directory.folder
        let temporary = QueueLayout.attemptsTemporary(processID: Host.processID)
        do throws(SystemError) {
            if let target = try directory.clearTemporary(temporary) {
                onEvent(.leftoverMovedAside(path: directory.path(of: temporary), movedTo: target))
            }
            let file = try folder.open(temporary, .writeCreateExclusive)
            try file.closeAfter { () throws(SystemError) in
                try file.writeAll(text)
                try file.synchronize(.attemptsData)
            }
            try folder.rename(temporary, to: QueueLayout.attempts)
        } catch {
            try? folder.remove(temporary)
            throw ReadFailure.error("cannot record a refusal", path: attemptsPath, error)
        }
    }

    /// An id as it appears in messages: a JSON string, so that no id can forge a line of its own.
    static func quoted(_ id: String) -> String {
        var bytes: [UInt8] = []
        JSONWriter.appendString(id, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

private extension Array where Element == UInt8 {
    /// The range of the first occurrence of `pattern`.
    func firstRange(of pattern: [UInt8]) -> Range<Int>? {
        guard pattern.count <= count else { return nil }
        for start in 0...(count - pattern.count) where self[start..<(start + pattern.count)].elementsEqual(pattern) {
            return start..<(start + pattern.count)
        }
        return nil
    }
}

extension DeadLetters {
    /// Overwrites the lines `letters` of the file `name` with spaces, their line breaks kept:
    /// a requeue does so once it has put them back, so that one cut short resumes after
    /// them, whatever was delivered meanwhile. Not synced: a power cut that undoes it
    /// makes a letter come back twice at worst, never lost.
    /// - Parameter letters: contiguous lines, in order, separated by line breaks alone.
    func blank(_ letters: [Range<Int64>], in name: String) throws(ShareQueueError) {
        guard !letters.isEmpty else { return }
        do throws(SystemError) {
            let file = try directory.folder.open(name, .readWrite)
            defer { file.close() }
            // Whole lines a write, a piece at a time: a line is never left half blanked by a kill between
            // writes, and what is held does not grow with the lines.
            let pieceBytes: Int64 = 64 << 10
            var start = 0
            while start < letters.count {
                var end = start + 1
                while end < letters.count && letters[end].upperBound - letters[start].lowerBound <= pieceBytes { end += 1 }
                let first = letters[start].lowerBound
                var bytes = [UInt8](repeating: 0x0A, count: Int(letters[end - 1].upperBound - first))
                for line in letters[start..<end] {
                    for index in Int(line.lowerBound - first)..<Int(line.upperBound - first) { bytes[index] = 0x20 }
                }
                try file.write(bytes, at: first)
                start = end
            }
        } catch {
            throw ReadFailure.error("cannot mark dead letters as put back", path: directory.path(of: name), error)
        }
    }
}
