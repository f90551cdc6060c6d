/// What a segment reader finds next.
import ShareQueueSystem
enum SegmentEvent {
    /// A record: its frame starts at `offset` and ends at `end`; `continued`
    /// when the frame is not the last of its append (a `MOR` trailer).
    case record(offset: Int64, end: Int64, payload: StoredBytes, continued: Bool)
    case damaged(DamagedRegion)
}

/// Reads frames from a segment file in order, in memory bounded by the largest
/// frame or batch rather than by the file. The records of one append are
/// reported only once its last frame is read, so a batch is delivered whole or
/// not at all. Damage is reported as a region and reading resumes at the next
/// header magic, so a bad record never costs the others.
///
/// Damaged stretches with no record between them are one region, reported in
/// consecutive pieces of at most `damagePieceSize` bytes, each holding all its
/// bytes: time is linear in the file and memory does not depend on how much of
/// it is damaged.
struct SegmentReader {
    /// The most bytes one reported piece of damage holds.
    static let damagePieceSize = 1 << 20
    private static let chunkSize = 256 << 10

    private let file: FileDescriptor
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEndOfFile = false
    /// The file offset of the next byte not yet examined.
    private(set) var position: Int64
    /// A frame of an append whose last frame has not been read yet.
    /// A struct, not a tuple, so that letting go of them needs no generic call each.
    private struct HeldFrame {
        let offset: Int64
        let end: Int64
        var payload: StoredBytes
        let continued: Bool
    }
    /// Frames of an append whose last frame has not been read yet.
    private var batch: [HeldFrame] = []
    private var batchBytes = 0
    /// Events found but not handed out yet, from `readyIndex` on (an index,
    /// not `removeFirst`, so that handing out a big batch stays linear).
    private var ready: [SegmentEvent] = []
    private var readyIndex = 0
    /// Damage read but not reported yet: it grows until a record follows, the
    /// file ends, or it fills a piece.
    private var damage: DamagedRegion? = nil
    /// The reason of damage whose last few bytes were kept, unjudged, because they may
    /// begin a header magic: only a whole magic ends damage (§6.2), so until one they
    /// and what follows them are that damage, never a frame of their own.
    private var damageGoesOn: String? = nil
    /// Where the records read are copied, many to an allocation (see ``RecordArena``).
    private var arena = RecordArena(capacity: RecordArena.size)

    init(file: FileDescriptor, from offset: Int64) {
        self.file = file
        self.position = offset
        self.buffer = [UInt8](repeating: 0, count: Self.chunkSize)
    }

    /// The next record or damaged region, or nil at the end of the file.
    mutating func next() throws(SystemError) -> SegmentEvent? {
        while true {
            if readyIndex < ready.count { return takeReady() }
            if end - start < Frame.headerSize && !atEndOfFile { try fill(atLeast: Frame.headerSize); continue }
            if end == start {
                // The file ends inside an append: a writer died before its last frame.
                if !batch.isEmpty { abandonBatch(reason: "unfinished append of several records: the file ends before its last record", tornTail: true) }
                reportDamage()
                if readyIndex < ready.count { continue }
                return nil
            }
            if let reason = damageGoesOn {
                damageGoesOn = nil
                let magicHere = end - start >= Frame.headerMagic.count && buffer[start..<(start + Frame.headerMagic.count)].elementsEqual(Frame.headerMagic)
                if !magicHere { try skipDamage(reason: reason); continue }
            }
            let inspection = buffer.withUnsafeBytes { Frame.inspect(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            switch inspection {
            case .complete(let size, let continued):
                reportDamage()
                let payload = store(from: start + Frame.headerSize, count: size - Frame.overhead)
                let offset = position
                consume(size)
                if batch.isEmpty && !continued {
                    let record = SegmentEvent.record(offset: offset, end: position, payload: payload, continued: false)
                    // Handed out at once, unless damage found before it waits its turn.
                    if readyIndex == ready.count { return record }
                    ready.append(record)
                    continue
                }
                batch.append(HeldFrame(offset: offset, end: position, payload: payload, continued: continued))
                batchBytes += size
                if batchBytes > Frame.maximumBatchSize {
                    abandonBatch(reason: "an append of several records is over \(Frame.maximumBatchSize) bytes", tornTail: false)
                } else if !continued {
                    releaseBatch()
                }
            case .incomplete where !atEndOfFile:
                switch try largeFrameTrailer() {
                case .doesNotMatch:
                    try skipDamage(reason: "record trailer does not match its header")
                case .matches where payloadReadSoFarHoldsFF():
                    // Judged as the whole frame would be (its trailer holds), without reading it:
                    // headers planted inside one another's payloads then cost no read each.
                    try skipDamage(reason: Frame.payloadHoldsFFReason)
                case .matches where payloadLeftHoldsHole():
                    // Zeros by the file system's word, which no record holds: set aside past the
                    // part read with the hole unread, rather than reading and checking up to 16 MiB of zeros.
                    try skipDamage(reason: Self.payloadHoleReason)
                default:
                    try fill(atLeast: neededForFrame())
                }
            case .incomplete:
                // All the rest of the file is in the buffer.
                let later = buffer.withUnsafeBytes { Frame.nextHeader(in: UnsafeRawBufferPointer(rebasing: $0[0..<end]), from: start + 1) }
                if later != nil {
                    try skipDamage(reason: "record cut short by the next record")
                    continue
                }
                // A torn tail: the append it belongs to, if any, is not delivered.
                let reason = "incomplete record at end of file"
                if batch.isEmpty {
                    reportDamage()
                    addDamage(buffer[start..<end], at: position, reason: reason, tornTail: true)
                } else {
                    let joined = "unfinished append of several records: " + reason
                    abandonBatch(reason: joined, tornTail: true)
                    addDamage(buffer[start..<end], at: position, reason: joined, tornTail: true)
                }
                consume(end - start)
                reportDamage()
            case .damaged(let reason):
                try skipDamage(reason: reason)
            }
        }
    }

    private mutating func takeReady() -> SegmentEvent {
        // Moved out, an empty record left in its place: a record's bytes change hands without a reference count each.
        var event = SegmentEvent.record(offset: 0, end: 0, payload: .empty, continued: false)
        swap(&event, &ready[readyIndex])
        readyIndex += 1
        if readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
        }
        return event
    }

    /// Hands out the records of the append being read.
    private mutating func releaseBatch() {
        for index in batch.indices {
            var payload = StoredBytes.empty
            swap(&payload, &batch[index].payload)
            ready.append(.record(offset: batch[index].offset, end: batch[index].end, payload: payload, continued: batch[index].continued))
        }
        batch.removeAll(keepingCapacity: true)
        batchBytes = 0
    }

    /// Turns the append being read into damage: its frames, byte for byte.
    private mutating func abandonBatch(reason: String, tornTail: Bool) {
        reportDamage()
        var frame: [UInt8] = []
        for index in batch.indices {
            frame.removeAll(keepingCapacity: true)
            batch[index].payload.withUnsafeBytes { Frame.append(payload: $0, to: &frame, last: !batch[index].continued) }
            batch[index].payload = .empty  // What is in the damage now need not be held twice.
            addDamage(frame[...], at: batch[index].offset, reason: reason, tornTail: tornTail)
        }
        batch = []
        batchBytes = 0
    }

    /// Damage at `start`. In the middle of the file the append being read is
    /// corruption's victim, not a torn write: its intact records are still
    /// delivered. The bytes up to the next header magic join the damage.
    private mutating func skipDamage(reason: String) throws(SystemError) {
        releaseBatch()
        let found = buffer.withUnsafeBytes { Frame.nextHeader(in: UnsafeRawBufferPointer(rebasing: $0[0..<end]), from: start + 1) }
        // Without a magic in the buffer, keep the last three bytes: they may begin one.
        let stop = found ?? (atEndOfFile ? end : max(start + 1, end - 3))
        addDamage(buffer[start..<stop], at: position, reason: reason, tornTail: false)
        consume(stop - start)
        if found == nil && !atEndOfFile {
            try skipHole(reason: reason)
            if end > start { damageGoesOn = reason }
        }
    }

    /// The reason given for a hole set aside unread.
    static let holeReason = "a hole in a sparse file: bytes never written, which read as zeros"

    /// Past damage, a hole of a sparse file holds zeros by the file system's word, and zeros
    /// begin no frame: the hole is set aside as one region without its bytes, unread, so that a
    /// segment of holes as large as a disk, which costs its writer nothing, costs a drain one
    /// `lseek` instead of hours of reading zeros. Damage that is read keeps its bytes.
    private mutating func skipHole(reason: String) throws(SystemError) {
        let next = position + Int64(end - start)
        let size = try file.status().size
        guard next < size else { return }
        let hole = (try file.nextData(from: next) ?? size) - next
        guard hole > 0 else { return }
        // The few bytes kept because they might begin a header: before zeros they begin none.
        addDamage(buffer[start..<end], at: position, reason: reason, tornTail: false)
        consume(end - start)
        reportDamage()
        ready.append(.damaged(DamagedRegion(offset: position, length: hole, reason: Self.holeReason, bytes: [], isTornTail: false)))
        position += hole
        start = 0
        end = 0
    }

    /// Adds bytes that follow the open damage to it, reporting each piece that fills up.
    private mutating func addDamage(_ bytes: ArraySlice<UInt8>, at offset: Int64, reason: String, tornTail: Bool) {
        if damage?.isTornTail != nil && damage?.isTornTail != tornTail { reportDamage() }
        var rest = bytes
        var at = offset
        while !rest.isEmpty {
            if damage == nil { damage = DamagedRegion(offset: at, length: 0, reason: reason, bytes: [], isTornTail: tornTail) }
            let taken = rest.prefix(Self.damagePieceSize - damage!.bytes.count)
            damage?.bytes.append(contentsOf: taken)
            damage?.length += Int64(taken.count)
            rest = rest.dropFirst(taken.count)
            at += Int64(taken.count)
            if damage!.bytes.count == Self.damagePieceSize { reportDamage() }
        }
    }

    /// Hands out the open damage, if any.
    private mutating func reportDamage() {
        guard let region = damage else { return }
        ready.append(.damaged(region))
        damage = nil
    }

    /// Bytes needed from `start` to judge the frame there.
    private func neededForFrame() -> Int {
        guard end - start >= Frame.headerSize else { return Frame.headerSize }
        return Frame.overhead + declaredLength()
    }

    private func declaredLength() -> Int {
        Int(buffer[start + 4]) | Int(buffer[start + 5]) << 8 | Int(buffer[start + 6]) << 16 | Int(buffer[start + 7]) << 24
    }

    /// The trailer where a large frame's header says it is, read on its own so
    /// that a header declaring a large length does not make the reader read and
    /// hold that much when the trailer already rules the frame out. (Smaller
    /// frames fit a quarter of the buffer, so reading them moves few bytes.)
    private func largeFrameTrailer() throws(SystemError) -> TrailerCheck {
        guard end - start >= Frame.headerSize, neededForFrame() > Self.chunkSize / 4 else { return .notChecked }
        let length = declaredLength()
        let trailer = try file.readFully(count: Frame.trailerSize, at: position + Int64(Frame.headerSize + length))
        guard trailer.count == Frame.trailerSize else { return .notChecked }  // The file ends first: judged once read.
        let lengthMatches = Int(trailer[0]) | Int(trailer[1]) << 8 | Int(trailer[2]) << 16 | Int(trailer[3]) << 24 == length
        let magic = trailer[4...]
        let isTrailer = magic.elementsEqual(Frame.trailerMagic) || magic.elementsEqual(Frame.continuedTrailerMagic)
        return lengthMatches && isTrailer ? .matches : .doesNotMatch
    }

    private enum TrailerCheck { case notChecked, matches, doesNotMatch }

    /// Whether the part of the payload already in the buffer holds the byte FF.
    private func payloadReadSoFarHoldsFF() -> Bool {
        let stop = min(end, start + Frame.headerSize + declaredLength())
        guard stop > start + Frame.headerSize else { return false }
        return buffer.withUnsafeBytes { Frame.containsFF(UnsafeRawBufferPointer(rebasing: $0[(start + Frame.headerSize)..<stop])) }
    }

    /// The reason given for a large frame whose payload holds a hole.
    static let payloadHoleReason = "the payload holds a hole of a sparse file, zeros, which no record has"

    /// Whether the part of a large frame's payload not yet read holds a hole of a sparse file:
    /// one `lseek`, and a read of the byte where it says the hole begins. That byte must be 00,
    /// which no JSON text holds: so even a file system that reported a hole where there is data
    /// could not make a record be set aside. One that cannot tell has no holes.
    private func payloadLeftHoldsHole() -> Bool {
        let from = position + Int64(end - start), payloadEnd = position + Int64(Frame.headerSize + declaredLength())
        guard from < payloadEnd, let hole = try? file.nextHole(from: from), hole < payloadEnd else { return false }
        return (try? file.readFully(count: 1, at: hole)) == [0]
    }

    /// The `count` bytes of the buffer at `offset`, copied into the arena, or into a new one when they do not fit.
    private mutating func store(from offset: Int, count: Int) -> StoredBytes {
        let range = offset..<(offset + count)
        if let stored = buffer.withUnsafeBytes({ [arena] in arena.append(UnsafeRawBufferPointer(rebasing: $0[range])) }) { return stored }
        // The arena is left to the records it holds; a record larger than an arena gets one of its own.
        arena = RecordArena(capacity: max(RecordArena.size, count))
        return buffer.withUnsafeBytes { [arena] in arena.append(UnsafeRawBufferPointer(rebasing: $0[range]))! }
    }

    private mutating func consume(_ count: Int) {
        start += count
        position += Int64(count)
    }

    /// Reads until at least `count` bytes follow `start`, or the file ends.
    /// What is left is moved to the front only when `count` bytes would not
    /// fit after it, so that a byte is moved rarely, not once per read.
    private mutating func fill(atLeast count: Int) throws(SystemError) {
        if start == end || start + count > buffer.count {
            let left = end - start
            if left > 0 && start > 0 {
                let from = start
                buffer.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: $0.baseAddress! + from, count: left) }
            }
            start = 0
            end = left
        }
        if buffer.count < count {
            // Only as far as the file goes: a length planted in a header costs no memory the file does not hold.
            let fileBytes = Int(clamping: try file.status().size - position)
            let wanted = min(count, fileBytes)
            if buffer.count < wanted { buffer.append(contentsOf: repeatElement(0, count: wanted - buffer.count)) }
        }
        while end - start < count && !atEndOfFile {
            let n = try file.read(into: &buffer, from: end, at: position + Int64(end - start))
            if n == 0 { atEndOfFile = true } else { end += n }
        }
    }
}
