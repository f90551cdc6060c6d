/// The file where damaged records are set aside: one JSON object a line with
/// the segment, the offset, the length, the reason and the bytes (Base64), so
/// that nothing is destroyed even when it cannot be delivered.
struct Quarantine {
    let directory: QueueDirectory

    /// Appends one entry in a single write and makes it durable.
    func add(_ region: DamagedRegion, segment: String) throws(ShareQueueError) {
        var line: [UInt8] = Array("{\"date\":".utf8)
        JSONWriter.appendString(Timestamp.now(), to: &line)
        line += Array(",\"segment\":".utf8)
        JSONWriter.appendString(segment, to: &line)
        line += Array(",\"offset\":\(region.offset),\"length\":\(region.length),\"reason\":".utf8)
        JSONWriter.appendString(region.reason, to: &line)
        line += Array(",\"tornTail\":\(region.isTornTail),\"keptBytes\":\(region.bytes.count),\"data\":\"\(Base64.encode(region.bytes))\"}\n".utf8)
        let path = directory.quarantinePath
        do {
            let fd = try FileDescriptor.openOwnFile(path, .appendCreate)
            try fd.closeAfter { () throws(SystemError) in
                try fd.writeAll(line)
                try fd.synchronize()
            }
        } catch {
            throw ShareQueueError("cannot set a damaged record aside", path: path, error)
        }
    }

    /// How many entries the quarantine file holds, and whole segments kept for lack of space.
    func count() throws(ShareQueueError) -> Int {
        let kept = (try? FileSystem.entries(of: directory.path))?.filter { $0.hasPrefix(Self.keptSegmentPrefix) }.count ?? 0
        return try entryCount() + kept
    }

    /// Where a drain keeps a whole segment whose damage it could not copy out (the disk was full).
    static let keptSegmentPrefix = "quarantine-"

    private func entryCount() throws(ShareQueueError) -> Int {
        let path = directory.quarantinePath
        do {
            let fd = try FileDescriptor.open(path, .readOnly)
            defer { fd.close() }
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
            if error.isNotFound { return 0 }
            throw ShareQueueError("cannot read the quarantine file", path: path, error)
        }
    }
}
