/// The file where damaged records are set aside: one JSON object a line with
/// the segment, the offset, the length, the reason and the bytes (Base64), so
/// that nothing is destroyed even when it cannot be delivered.
import ShareQueueSystem
struct Quarantine {
    let directory: QueueDirectory

    /// The size past which the file keeps no more bytes of damage that holds no whole record,
    /// only where it was and why: a producer could otherwise fill the disk with a sparse segment of zeros.
    static let keptBytesLimit: Int64 = 64 << 20

    /// `regions` as the file can keep them: damage that holds no whole record loses its bytes
    /// (`keptBytes` 0) where its Base64 would take the file past ``keptBytesLimit``. A record set
    /// aside whole (it broke a record rule, or failed an attachment check) always keeps its bytes.
    func withinLimit(_ regions: [DamagedRegion]) throws(ShareQueueError) -> [DamagedRegion] {
        var size = (try directory.status(of: QueueLayout.quarantine))?.size ?? 0
        var kept = regions
        for index in kept.indices {
            let entry = Int64(kept[index].bytes.count + 2) / 3 * 4 + 512
            if size + entry > Self.keptBytesLimit && !kept[index].holdsRecord { kept[index].bytes = [] } else { size += entry }
        }
        return kept
    }

    /// Appends one entry in a single write and makes it durable.
    func add(_ region: DamagedRegion, segment: String) throws(ShareQueueError) {
        try add([region], segment: segment)
    }

    /// Appends one entry per region, each in a single write (so that a line
    /// never mixes with another writer's), and makes them durable with one fsync.
    func add(_ regions: [DamagedRegion], segment: String) throws(ShareQueueError) {
        guard !regions.isEmpty else { return }
        let path = directory.quarantinePath
        do {
            let existed = try directory.folder.status(of: QueueLayout.quarantine) != nil
            let fd = try directory.folder.openOwnFile(QueueLayout.quarantine, .appendCreate)
            try fd.closeAfter { () throws(SystemError) in
                // A producer cutting a torn tail and a drain may both be adding entries: only a writer
                // that holds the file's lock may cut back what it wrote, or it could cut the other's line.
                let alone = (try? fd.lockExclusive(wait: false)) == true
                defer { if alone { fd.unlock() } }
                let size = try fd.status().size
                do throws(SystemError) {
                    for region in regions { try fd.writeAll(Self.entry(region, segment: segment)) }
                } catch {
                    // No part of a line stays behind (a full disk, a file size limit): the next drain writes it whole.
                    if alone { try? fd.truncate(to: size) }
                    throw error
                }
                try fd.synchronize(.quarantineData)
            }
            // A new file's name is durable before a checkpoint can move past what it holds.
            if !existed { try directory.folder.synchronize(.quarantineCreated) }
        } catch {
            // Producers set torn tails aside too: the tools' usual kinds (access refused is 77).
            throw ShareQueueError("cannot set a damaged record aside", path: path, error)
        }
    }

    /// One line of the quarantine file.
    private static func entry(_ region: DamagedRegion, segment: String) -> [UInt8] {
        var line: [UInt8] = Array("{\"date\":".utf8)
        line.reserveCapacity(256 + segment.utf8.count + region.reason.utf8.count + (region.bytes.count + 2) / 3 * 4)
        JSONWriter.appendString(Timestamp.now(), to: &line)
        line += Array(",\"segment\":".utf8)
        JSONWriter.appendString(segment, to: &line)
        line += Array(",\"offset\":\(region.offset),\"length\":\(region.length),\"reason\":".utf8)
        JSONWriter.appendString(region.reason, to: &line)
        line += Array(",\"tornTail\":\(region.isTornTail),\"keptBytes\":\(region.bytes.count),\"data\":\"".utf8)
        Base64.append(region.bytes, to: &line)
        line += Array("\"}\n".utf8)
        return line
    }

    /// How many entries the quarantine file holds, and whole segments kept for lack of space.
    /// - Parameter readingFile: false to count the kept segments alone, where the file is one a drain sets aside.
    func count(readingFile: Bool = true) throws(ShareQueueError) -> Int {
        let kept = try directory.countNames(where: QueueLayout.isKeptSegment)
        return try (readingFile ? entryCount() : 0) + kept
    }

    /// The bytes the quarantine file and the kept segments take: the damaged
    /// bytes as they are stored here (Base64 in JSON lines), from the files' sizes alone.
    /// - Parameter readingFile: false to count the kept segments alone, as ``count(readingFile:)``.
    func bytes(readingFile: Bool = true) throws(ShareQueueError) -> Int64 {
        var total: Int64 = 0
        if readingFile, let file = try directory.status(of: QueueLayout.quarantine), file.isRegularFile { total += file.size }
        // Each kept segment as it is listed: a member of a shared queue's group could plant any number of such names.
        var failure: ShareQueueError?
        try? directory.folder.descriptor.forEachEntry { name in
            guard failure == nil, QueueLayout.isKeptSegment(name) else { return }
            do throws(ShareQueueError) { if let file = try directory.status(of: name), file.isRegularFile { total += file.size } } catch { failure = error }
        }
        if let failure { throw failure }
        return total
    }

    private func entryCount() throws(ShareQueueError) -> Int {
        let path = directory.quarantinePath
        do {
            let fd = try directory.folder.open(QueueLayout.quarantine, .readOnly)
            defer { fd.close() }
            // Nothing but a regular file is read: a FIFO, a device or a directory holds no entry of the queue's.
            guard try fd.status().isRegularFile else { return 0 }
            var lines = 0
            var offset: Int64 = 0
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            // Holes of a sparse file hold no line breaks: skip them rather than read zeros.
            while let data = try fd.nextData(from: offset) {
                offset = data
                let n = try fd.read(into: &chunk, from: 0, at: offset)
                if n == 0 { return lines }
                lines += chunk[0..<n].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                offset += Int64(n)
            }
            return lines
        } catch {
            if ReadFailure.damage(error) != nil { return 0 }
            throw ReadFailure.error("cannot read the quarantine file", path: path, error)
        }
    }
}
