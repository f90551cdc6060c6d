/// A stretch of a segment that is not a whole, undamaged record.
struct DamagedRegion: Sendable {
    let offset: Int64
    let length: Int64
    let reason: String
    /// The region's bytes, cut at `SegmentReader.keptDamageLimit`.
    let bytes: [UInt8]
    /// An incomplete record at the very end of the file: a writer died mid-write.
    let isTornTail: Bool
}

/// What a segment reader finds next.
enum SegmentEvent {
    case record(offset: Int64, payload: [UInt8])
    case damaged(DamagedRegion)
}

/// Reads frames from a segment file in order, in memory bounded by the largest
/// frame rather than by the file. Damage is reported as a region and reading
/// resumes at the next header magic, so a bad record never costs the others.
struct SegmentReader {
    static let keptDamageLimit = Frame.maximumPayloadSize + Frame.overhead
    private static let chunkSize = 256 << 10

    private let file: FileDescriptor
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEndOfFile = false
    /// The file offset of the next byte not yet reported.
    private(set) var position: Int64

    init(file: FileDescriptor, from offset: Int64) {
        self.file = file
        self.position = offset
        self.buffer = [UInt8](repeating: 0, count: Self.chunkSize)
    }

    /// The next record or damaged region, or nil at the end of the file.
    mutating func next() throws(SystemError) -> SegmentEvent? {
        while true {
            if end - start < Frame.headerSize && !atEndOfFile { try fill(atLeast: Frame.headerSize); continue }
            if end == start { return nil }
            let inspection = buffer.withUnsafeBytes { Frame.inspect(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            switch inspection {
            case .complete(let size):
                let payload = Array(buffer[(start + Frame.headerSize)..<(start + size - Frame.trailerSize)])
                let offset = position
                consume(size)
                return .record(offset: offset, payload: payload)
            case .incomplete where !atEndOfFile:
                try fill(atLeast: neededForFrame())
            case .incomplete:
                return .damaged(try skipDamage(reason: "incomplete record at end of file", mayBeTorn: true))
            case .damaged(let reason):
                return .damaged(try skipDamage(reason: reason, mayBeTorn: false))
            }
        }
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
