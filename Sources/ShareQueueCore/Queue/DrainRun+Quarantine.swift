import ShareQueueSystem

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
                // Recording progress needs no space; copying damage out does. Keep the segment instead:
                // so too when quarantine.log is as large as a file may be, which anyone who may write it can make it.
                guard failure.systemError?.isNoSpace == true || failure.systemError?.isFileTooLarge == true else { throw failure }
                try keepWhole(segment)
            }
            for region in regions {
                drainer.onEvent(.damageSetAside(segment: segment, offset: region.offset, length: region.length, reason: region.reason))
            }
            start = stop
        }
        CrashPoint.reached(.drainQuarantined)
    }

    /// Gives `segment` its kept name (``QueueLayout/keptSegment(_:)``) at once, as a second
    /// name, before the checkpoint passes damage that could not be copied out: a run that
    /// stops before the segment's end forgets that it had to keep it, and the run after
    /// removes the segment once it is delivered. Something else at the kept name is moved aside.
    func keepWhole(_ segment: String) throws {
        let kept = QueueLayout.keptSegment(segment)
        func failure(_ error: SystemError) -> ShareQueueError {
            ShareQueueError("cannot keep a damaged segment", path: directory.path(of: segment), error)
        }
        let existing: FileStatus?, own: FileStatus?
        do { (existing, own) = (try directory.folder.status(of: kept), try directory.folder.status(of: segment)) } catch { throw failure(error) }
        // Kept by an earlier run that stopped before the segment's end: the same file.
        let alreadyKept = existing.flatMap { existing in own.map { existing.isSameFile(as: $0) } } ?? false
        if existing != nil && !alreadyKept { try drainer.moveAsideForeign(kept, "is not the segment it names") }
        do {
            if !alreadyKept { try directory.folder.link(segment, to: kept) }
            try directory.folder.synchronize(.segmentKept)
        } catch { throw failure(error) }
        // Said now, not at the segment's end, which this run may not reach.
        if !alreadyKept {
            drainer.onEvent(.segmentKeptWhole(path: directory.path(of: segment), keptAs: directory.path(of: kept)))
        }
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
