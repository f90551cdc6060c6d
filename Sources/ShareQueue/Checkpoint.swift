/// The checkpoint file: where delivery has got to.
///
/// Two 64-byte slots, written in place in turn, each holding
/// `<serial> <segment> <offset> <crc>` padded with spaces and ending in a
/// newline; the valid slot with the higher serial wins. Writing in place means
/// a drain needs no free space to record progress, so it still works when the
/// queue's file system is full (which is when draining matters most), and a
/// torn write can only spoil the older slot.
final class Checkpoint {
    static let slotSize = 64
    private static let blankSlot = [UInt8](repeating: 0x20, count: slotSize - 1) + [0x0A]

    private let path: String
    private let file: FileDescriptor
    private var serial: UInt64
    /// The position the file holds now.
    private(set) var position: DrainPosition

    /// Opens the checkpoint for a drain, creating it (with both slots allocated) if needed.
    init(directory: QueueDirectory, warn: (String) -> Void) throws(ShareQueueError) {
        path = directory.checkpointPath
        do {
            file = try FileDescriptor.openOwnFile(path, .lockFile)
        } catch {
            throw ShareQueueError("cannot open the checkpoint", path: path, error, creating: true)
        }
        do throws(SystemError) {
            let bytes = try file.readFully(count: 2 * Self.slotSize, at: 0)
            (serial, position) = Self.parse(bytes, path: path, warn: warn)
            if bytes.count < 2 * Self.slotSize {
                // Write both slots now, while there is room, so later writes allocate nothing.
                let blank = Self.blankSlot + Self.blankSlot
                try file.write(blank, at: 0)
                if serial > 0 { try file.write(Self.slot(serial: serial, position), at: Int64(serial % 2) * Int64(Self.slotSize)) }
                try file.synchronize()
                try FileSystem.synchronizeDirectory(directory.path)
            }
        } catch {
            file.close()
            throw ShareQueueError(error.isNoSpace ? "no space left to create the checkpoint" : "cannot prepare the checkpoint", path: path, error)
        }
    }

    deinit { file.close() }

    /// Records `position` durably in the older slot.
    func write(_ position: DrainPosition) throws(ShareQueueError) {
        let next = serial + 1
        do throws(SystemError) {
            try file.write(Self.slot(serial: next, position), at: Int64(next % 2) * Int64(Self.slotSize))
            try file.synchronize()
        } catch {
            throw ShareQueueError("cannot record the checkpoint", path: path, error)
        }
        serial = next
        self.position = position
    }

    /// The stored position, read without changing anything. A missing file is
    /// the start; a damaged one is reported and also read as the start, so that
    /// records are delivered again rather than lost.
    static func read(directory: QueueDirectory, warn: (String) -> Void) throws(ShareQueueError) -> DrainPosition {
        let path = directory.checkpointPath
        do {
            let file = try FileDescriptor.open(path, .readOnly)
            defer { file.close() }
            return parse(try file.readFully(count: 2 * slotSize, at: 0), path: path, warn: warn).position
        } catch {
            if error.isNotFound { return .start }
            throw ShareQueueError("cannot read the checkpoint", path: path, error)
        }
    }

    static func slot(serial: UInt64, _ position: DrainPosition) -> [UInt8] {
        let fields = "\(serial) \(position.segment) \(position.offset)"
        let crc = CRC32C.checksum(Array(fields.utf8))
        var text = Array("\(fields) \(String(crc, radix: 16))".utf8)
        text += [UInt8](repeating: 0x20, count: slotSize - 1 - text.count)
        return text + [0x0A]
    }

    private static func parse(_ bytes: [UInt8], path: String, warn: (String) -> Void) -> (serial: UInt64, position: DrainPosition) {
        var best: (serial: UInt64, position: DrainPosition)? = nil
        var offset = 0
        while offset + slotSize <= bytes.count {
            if let found = parseSlot(Array(bytes[offset..<(offset + slotSize)])), found.serial > (best?.serial ?? 0) { best = found }
            offset += slotSize
        }
        if let best { return best }
        if bytes.contains(where: { $0 != 0x20 && $0 != 0x0A }) {
            warn("the checkpoint (\(path)) is damaged; delivering from the oldest sealed segment again")
        }
        return (0, .start)
    }

    private static func parseSlot(_ slot: [UInt8]) -> (serial: UInt64, position: DrainPosition)? {
        guard let text = String(validating: slot, as: UTF8.self) else { return nil }
        let words = text.split(separator: " ").map { $0.trimmingCharacters(in: "\n") }.filter { !$0.isEmpty }
        guard words.count == 4, let serial = UInt64(words[0]), serial > 0, serial < UInt64.max / 2,
              let segment = UInt64(words[1]), segment <= QueueDirectory.maximumSequence,
              let offset = Int64(words[2]), offset >= 0,
              UInt32(words[3], radix: 16) == CRC32C.checksum(Array("\(words[0]) \(words[1]) \(words[2])".utf8)) else { return nil }
        return (serial, DrainPosition(segment: segment, offset: offset))
    }
}

private extension Substring {
    func trimmingCharacters(in set: Character) -> String { String(filter { $0 != set }) }
}
