/// A stretch of a segment that is not a whole, undamaged record.
struct DamagedRegion: Sendable {
    let offset: Int64
    let length: Int64
    let reason: String
    /// The region's bytes, cut at `SegmentReader.keptDamageLimit`.
    var bytes: [UInt8]
    /// An incomplete append at the very end of the file: a writer died mid-write.
    let isTornTail: Bool

    var end: Int64 { offset + length }
}

/// What a segment reader finds next.
enum SegmentEvent {
    /// A record: its frame starts at `offset` and ends at `end`.
    case record(offset: Int64, end: Int64, payload: [UInt8])
    case damaged(DamagedRegion)
}

/// Reads frames from a segment file in order, in memory bounded by the largest
/// frame or batch rather than by the file. The records of one append are
/// reported only once its last frame is read, so a batch is delivered whole or
/// not at all. Damage is reported as a region and reading resumes at the next
/// header magic, so a bad record never costs the others.
struct SegmentReader {
    static let keptDamageLimit = Frame.maximumPayloadSize + Frame.overhead
    private static let chunkSize = 256 << 10

    private let file: FileDescriptor
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEndOfFile = false
    /// The file offset of the next byte not yet examined.
    private(set) var position: Int64
    /// Records of an append whose last frame has not been read yet.
    private var batch: [(offset: Int64, end: Int64, payload: [UInt8])] = []
    private var batchBytes = 0
    /// Records of a finished append, waiting to be handed out.
    private var ready: [SegmentEvent] = []

    init(file: FileDescriptor, from offset: Int64) {
        self.file = file
        self.position = offset
        self.buffer = [UInt8](repeating: 0, count: Self.chunkSize)
    }

    /// The next record or damaged region, or nil at the end of the file.
    mutating func next() throws(SystemError) -> SegmentEvent? {
        if !ready.isEmpty { return ready.removeFirst() }
        while true {
            if end - start < Frame.headerSize && !atEndOfFile { try fill(atLeast: Frame.headerSize); continue }
            if end == start {
                // The file ends inside an append: a writer died before its last frame.
                return batch.isEmpty ? nil : .damaged(abandonBatch(joining: nil))
            }
            let inspection = buffer.withUnsafeBytes { Frame.inspect(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            switch inspection {
            case .complete(let size, let continued):
                let payload = Array(buffer[(start + Frame.headerSize)..<(start + size - Frame.trailerSize)])
                let offset = position
                consume(size)
                if batch.isEmpty && !continued { return .record(offset: offset, end: position, payload: payload) }
                batch.append((offset, position, payload))
                batchBytes += size
                if batchBytes > Frame.maximumBatchSize {
                    return .damaged(abandonBatch(joining: nil, reason: "an append of several records is over \(Frame.maximumBatchSize) bytes"))
                }
                if !continued {
                    ready = batch.map { .record(offset: $0.offset, end: $0.end, payload: $0.payload) }
                    batch = []
                    batchBytes = 0
                    return ready.removeFirst()
                }
            case .incomplete where !atEndOfFile:
                try fill(atLeast: neededForFrame())
            case .incomplete:
                return try interruptBatch(with: skipDamage(reason: "incomplete record at end of file", mayBeTorn: true))
            case .damaged(let reason):
                return try interruptBatch(with: skipDamage(reason: reason, mayBeTorn: false))
            }
        }
    }

    /// Damage met inside an append. At the end of the file it is a writer that
    /// died mid-append: none of the append is delivered. Elsewhere it is
    /// corruption: the append's intact records before it are still delivered.
    private mutating func interruptBatch(with damage: DamagedRegion) -> SegmentEvent {
        if batch.isEmpty { return .damaged(damage) }
        if damage.isTornTail { return .damaged(abandonBatch(joining: damage)) }
        ready = batch.map { .record(offset: $0.offset, end: $0.end, payload: $0.payload) } + [.damaged(damage)]
        batch = []
        batchBytes = 0
        return ready.removeFirst()
    }

    /// One region for an unfinished append and the damage (if any) that cut it short.
    private mutating func abandonBatch(joining damage: DamagedRegion?, reason: String? = nil) -> DamagedRegion {
        let first = batch[0].offset
        var bytes: [UInt8] = []
        for record in batch where bytes.count < Self.keptDamageLimit {
            bytes += record.payload
        }
        let last = damage?.end ?? position
        let region = DamagedRegion(
            offset: first, length: last - first,
            reason: reason ?? "unfinished append of several records: " + (damage?.reason ?? "the file ends before its last record"),
            bytes: Array((bytes + (damage?.bytes ?? [])).prefix(Self.keptDamageLimit)),
            isTornTail: damage?.isTornTail ?? (end == start && atEndOfFile))
        batch = []
        batchBytes = 0
        return region
    }

    /// Bytes needed from `start` to judge the frame there.
    private func neededForFrame() -> Int {
        guard end - start >= Frame.headerSize else { return Frame.headerSize }
        let length = Int(buffer[start + 4]) | Int(buffer[start + 5]) << 8 | Int(buffer[start + 6]) << 16 | Int(buffer[start + 7]) << 24
        return Frame.overhead + length
    }

    /// Reports the region from `position` to the next header magic (or the end
    /// of the file) and moves past it.
    private mutating func skipDamage(reason: String, mayBeTorn: Bool) throws(SystemError) -> DamagedRegion {
        let offset = position
        var kept: [UInt8] = []
        var length: Int64 = 0
        var searchFrom = start + 1
        while true {
            let found = buffer.withUnsafeBytes { Frame.nextHeader(in: UnsafeRawBufferPointer(rebasing: $0[0..<end]), from: searchFrom) }
            if let found {
                keep(start..<found, into: &kept, length: &length)
                consume(found - start)
                let cut = mayBeTorn ? "record cut short by the next record" : reason
                return DamagedRegion(offset: offset, length: length, reason: cut, bytes: kept, isTornTail: false)
            }
            if atEndOfFile {
                keep(start..<end, into: &kept, length: &length)
                consume(end - start)
                return DamagedRegion(offset: offset, length: length, reason: reason, bytes: kept, isTornTail: mayBeTorn)
            }
            // Keep the last three bytes: they may begin a header magic.
            let keepFrom = max(start, end - 3)
            keep(start..<keepFrom, into: &kept, length: &length)
            consume(keepFrom - start)
            try fill(atLeast: end - start + Self.chunkSize)
            searchFrom = start
        }
    }

    private func keep(_ range: Range<Int>, into kept: inout [UInt8], length: inout Int64) {
        let room = max(0, Self.keptDamageLimit - kept.count)
        kept.append(contentsOf: buffer[range.lowerBound..<(range.lowerBound + min(room, range.count))])
        length += Int64(range.count)
    }

    private mutating func consume(_ count: Int) {
        start += count
        position += Int64(count)
    }

    /// Reads until at least `count` bytes follow `start`, or the file ends.
    private mutating func fill(atLeast count: Int) throws(SystemError) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            buffer.append(contentsOf: repeatElement(0, count: start))
            end -= start
            start = 0
        }
        if buffer.count < count { buffer += [UInt8](repeating: 0, count: count - buffer.count) }
        while end < count && !atEndOfFile {
            let n = try file.read(into: &buffer, from: end, at: position + Int64(end))
            if n == 0 { atEndOfFile = true } else { end += n }
        }
    }
}
