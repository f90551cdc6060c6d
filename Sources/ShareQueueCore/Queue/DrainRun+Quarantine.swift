/// Copying damaged data out to the quarantine file.
extension DrainRun {
    /// Copies damaged data to the quarantine file. A drain that dies after this
    /// and before the checkpoint copies it again next time: the quarantine may
    /// hold it twice, never zero times.
    mutating func setAside(_ damage: [(region: DamagedRegion, segment: String)]) throws {
        var start = 0
        while start < damage.count {
            // One write for each run of regions of the same segment: all of them, in practice.
            let segment = damage[start].segment
            var stop = start
            while stop < damage.count && damage[stop].segment == segment { stop += 1 }
            var regions = damage[start..<stop].map(\.region)
            if segmentHasOtherNames { for index in regions.indices { regions[index].bytes = [] } }
            // Limited before joining, so that a record set aside keeps its bytes and damage next to it may not.
            regions = DamagedRegion.merged(try Quarantine(directory: directory).withinLimit(regions))
            if let failure = Self.copyToQuarantine(regions, segment: segment, in: directory) {
                // Recording progress needs no space; copying damage out does. Keep the segment instead.
                guard failure.systemError?.isNoSpace == true else { throw failure }
                keepSegmentForDamage = true
            }
            for region in regions {
                drainer.warn("set aside \(region.length) bytes at offset \(region.offset) of \(segment): \(region.reason)")
            }
            start = stop
        }
        CrashPoint.reached(.drainQuarantined)
    }

    /// Appends to the quarantine file; returns the failure instead of throwing it.
    static func copyToQuarantine(_ regions: [DamagedRegion], segment: String, in directory: QueueDirectory) -> ShareQueueError? {
        do {
            try Quarantine(directory: directory).add(regions, segment: segment)
            return nil
        } catch {
            return error
        }
    }
}
