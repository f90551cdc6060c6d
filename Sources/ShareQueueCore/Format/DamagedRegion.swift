/// A stretch of a segment that is not a whole, undamaged record.
struct DamagedRegion: Sendable {
    let offset: Int64
    var length: Int64
    let reason: String
    /// The region's bytes as they are in the file: all of them, until a drain
    /// empties them for a segment that has other names or a quarantine file at its limit.
    var bytes: [UInt8]
    /// An incomplete append at the very end of the file: a writer died mid-write.
    let isTornTail: Bool
    /// Whether it holds a whole, well-framed record (one that broke a record rule or failed an
    /// attachment check): its bytes are kept whatever the quarantine file's limit.
    var holdsRecord = false

    var end: Int64 { offset + length }

    /// Joins each region to the one before it when they touch and are of one
    /// kind, up to `SegmentReader.damagePieceSize` bytes (regions emptied of their
    /// bytes without a bound), so that a run of small damaged records costs one
    /// quarantine entry, not one each. The joined region keeps the reason of its first bytes.
    static func merged(_ regions: [DamagedRegion]) -> [DamagedRegion] {
        var result: [DamagedRegion] = []
        for region in regions {
            // Joined in place: a copy of the last region held meanwhile would copy its bytes at each join.
            if let last = result.indices.last, result[last].joins(region) {
                result[last].bytes += region.bytes
                result[last].length += region.length
                if region.holdsRecord { result[last].holdsRecord = true }
            } else {
                result.append(region)
            }
        }
        return result
    }

    /// Whether `next` goes on from this region, and is of its kind.
    private func joins(_ next: DamagedRegion) -> Bool {
        guard end == next.offset, isTornTail == next.isTornTail else { return false }
        // Regions that keep all their bytes join up to a piece's size; regions that keep none and
        // say the same, without a bound, since they cost a line whatever their length.
        let bothWhole = bytes.count == Int(length) && next.bytes.count == Int(next.length)
        let bothEmpty = bytes.isEmpty && next.bytes.isEmpty && reason == next.reason
        return (bothWhole && bytes.count + next.bytes.count <= SegmentReader.damagePieceSize) || bothEmpty
    }
}
