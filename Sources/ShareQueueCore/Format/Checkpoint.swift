/// The checkpoint file: where delivery has got to.
///
/// Two 64-byte slots, each holding `<serial> <segment> <offset> <crc>` padded
/// with spaces and ending in a newline; the valid slot with the higher serial
/// wins, and a write goes to the other one. Writing in place means a drain
/// needs no free space to record progress, so it still works when the queue's
/// file system is full (which is when draining matters most), and a torn write
/// can only spoil the slot that did not hold the newest position.
///
/// A write is not synced at once: a checkpoint that a power cut takes back only
/// makes a drain deliver again, since every position is written after the sink
/// took (and synced) what it covers. It is synced where going back would cost
/// more than a second delivery: before a drain removes attachment files it
/// delivered, before it removes a delivered segment (whose number a checkpoint
/// taken back would let a new segment have), and when the drain ends.
import ShareQueueSystem
final class Checkpoint {
    static let slotSize = 64
    static let blankSlot = [UInt8](repeating: 0x20, count: slotSize - 1) + [0x0A]

    private let path: String
    private let file: FileDescriptor
    private var serial: UInt64
    /// The slot that holds `serial`, or nil while neither slot is valid.
    private var newestSlot: Int?
    /// The position the file holds now.
    private(set) var position: DrainPosition
    /// Whether a power cut could take back the last position written: it is not synced yet.
    private(set) var mayBeUndone = false

    /// Opens the checkpoint for a drain, creating it (with both slots allocated) if needed. One a member
    /// of a shared queue's group put at the name is moved aside unread, and a new one starts at the
    /// beginning (`QueueDirectory.openDrainsOwn`): her position would skip records no sink took.
    init(directory: QueueDirectory, onEvent: (QueueEvent) -> Void) throws(ShareQueueError) {
        path = directory.checkpointPath
        do {
            // A mode that creates always gives a file.
            guard let opened = try directory.openDrainsOwn(QueueLayout.checkpoint, .readWriteCreate, onEvent: onEvent) else { throw SystemError.exists }
            file = opened
        } catch {
            throw ReadFailure.error("cannot open the checkpoint", path: path, error)
        }
        do throws(SystemError) {
            let bytes = try file.readFully(count: 2 * Self.slotSize, at: 0)
            (serial, position, newestSlot) = Self.parse(bytes, path: path, onEvent: onEvent)
            if bytes.count < 2 * Self.slotSize {
                // Write both slots now, while there is room, so later writes allocate nothing.
                let blank = Self.blankSlot + Self.blankSlot
                try file.write(blank, at: 0)
                if let newestSlot { try file.write(Self.slot(serial: serial, position), at: Int64(newestSlot * Self.slotSize)) }
                try file.synchronize(.checkpointCreated)
                try directory.folder.synchronize(.checkpointCreatedEntry)
            }
        } catch {
            file.close()
            throw ReadFailure.error(error.isNoSpace ? "no space left to create the checkpoint" : "cannot prepare the checkpoint", path: path, error)
        }
    }

    deinit { file.close() }

    /// Records `position` in the slot that does not hold the newest one, so
    /// that a torn write leaves the newest intact; ``synchronize(_:)`` makes it durable.
    func write(_ position: DrainPosition) throws(ShareQueueError) {
        let target = newestSlot == 0 ? 1 : 0
        // Past the largest serial a slot holds (another writer may leave one there), serials start
        // again: 1 in the other slot, then 2 in the newest's. Until the second write the old slot
        // wins, which delivers again, never skips.
        let restarting = serial >= Self.maximumNumber
        let next = restarting ? 1 : serial + 1
        do throws(SystemError) {
            try file.write(Self.slot(serial: next, position), at: Int64(target * Self.slotSize))
            if restarting { try file.write(Self.slot(serial: 2, position), at: Int64((1 - target) * Self.slotSize)) }
        } catch {
            throw ReadFailure.error("cannot record the checkpoint", path: path, error)
        }
        serial = restarting ? 2 : next
        newestSlot = restarting ? 1 - target : target
        self.position = position
        mayBeUndone = true
    }

    #if SHARE_QUEUE_TEST_HOOKS
    /// Writes and syncs `position` with C calls the trace does not see: a mutant's write around the layer.
    func writeAroundLayer(_ position: DrainPosition) throws(ShareQueueError) {
        let target = newestSlot == 0 ? 1 : 0
        let next = serial + 1
        do throws(SystemError) {
            try file.writeAroundLayer(Self.slot(serial: next, position), at: Int64(target * Self.slotSize))
        } catch {
            throw ReadFailure.error("cannot record the checkpoint", path: path, error)
        }
        serial = next
        newestSlot = target
        self.position = position
    }
    #endif

    /// Makes the last position written durable, if it may not be yet.
    func synchronize(_ point: SyncPoint) throws(ShareQueueError) {
        guard mayBeUndone else { return }
        do { try file.synchronize(point) } catch {
            throw ReadFailure.error("cannot make the checkpoint durable", path: path, error)
        }
        // A point left out (a test build's hook) leaves the position undone, so that the next sync still syncs.
        mayBeUndone = SyncPoint.skipped == point
    }

    /// The position the file holds now, which another drain may have written since this one
    /// opened it: read through this drain's own descriptor, so a file put at the name meanwhile is
    /// not read. A slot that does not parse counts as none, as when the file was opened.
    func positionOnDisk() throws(ShareQueueError) -> DrainPosition {
        do {
            return Self.parse(try file.readFully(count: 2 * Self.slotSize, at: 0), path: path, onEvent: { _ in }).position
        } catch {
            throw ReadFailure.error("cannot read the checkpoint", path: path, error)
        }
    }

    /// The stored position, read without changing anything. A missing file is
    /// the start; a damaged one is reported and also read as the start, so that
    /// records are delivered again rather than lost. So is a file that is no
    /// checkpoint of the queue's own (``QueueDirectory/foreignFileToRead(_:)``),
    /// since a drain sets it aside and starts over.
    static func read(directory: QueueDirectory, onEvent: (QueueEvent) -> Void) throws(ShareQueueError) -> DrainPosition {
        let path = directory.checkpointPath
        guard try directory.foreignFileToRead(QueueLayout.checkpoint) == nil else { return .start }
        do {
            let file = try directory.folder.open(QueueLayout.checkpoint, .readOnly)
            defer { file.close() }
            // Swapped since it was looked at: read nothing from a FIFO or a device.
            guard try file.status().isRegularFile else { return .start }
            return parse(try file.readFully(count: 2 * slotSize, at: 0), path: path, onEvent: onEvent).position
        } catch {
            if ReadFailure.damage(error) != nil { return .start }
            throw ReadFailure.error("cannot read the checkpoint", path: path, error)
        }
    }

    /// When a drain last recorded a position, in seconds since 1970: the file's
    /// modification time, since only a drain writes a slot. Nil while no slot
    /// holds a position (the queue was made but never drained) or there is no file.
    /// Nil too for a file that is no checkpoint of the queue's own, as ``read(directory:onEvent:)`` has it.
    static func lastWrittenSeconds(directory: QueueDirectory) throws(ShareQueueError) -> Int64? {
        let path = directory.checkpointPath
        guard try directory.foreignFileToRead(QueueLayout.checkpoint) == nil else { return nil }
        do {
            let file = try directory.folder.open(QueueLayout.checkpoint, .readOnly)
            defer { file.close() }
            let status = try file.status()
            guard status.isRegularFile else { return nil }
            let slot = parse(try file.readFully(count: 2 * slotSize, at: 0), path: path, onEvent: { _ in }).slot
            return slot == nil ? nil : status.modificationSeconds
        } catch {
            if ReadFailure.damage(error) != nil { return nil }
            throw ShareQueueError("cannot read the checkpoint", path: path, error)
        }
    }

    /// A slot's bytes: `<serial> <segment> <offset>` in decimal, a space, the
    /// CRC-32C of that text in lower-case hex without leading zeros, spaces up
    /// to 63 bytes, a newline.
    /// The largest serial and offset a slot holds: 18 digits each, so that a
    /// slot's words (at most 18 + 15 + 18 + 8 characters and three spaces) always fit.
    static let maximumNumber: UInt64 = 999_999_999_999_999_999

    static func slot(serial: UInt64, _ position: DrainPosition) -> [UInt8] {
        let fields = "\(serial) \(position.segment) \(position.offset)"
        let crc = CRC32C.checksum(Array(fields.utf8))
        var text = Array("\(fields) \(String(crc, radix: 16))".utf8)
        text += [UInt8](repeating: 0x20, count: max(0, slotSize - 1 - text.count))
        return text + [0x0A]
    }

    private static func parse(_ bytes: [UInt8], path: String, onEvent: (QueueEvent) -> Void) -> (serial: UInt64, position: DrainPosition, slot: Int?) {
        var best: (serial: UInt64, position: DrainPosition, slot: Int?)? = nil
        for index in 0..<2 where (index + 1) * slotSize <= bytes.count {
            if let found = parseSlot(Array(bytes[(index * slotSize)..<((index + 1) * slotSize)])), found.serial > (best?.serial ?? 0) {
                best = (found.serial, found.position, index)
            }
        }
        if let best { return best }
        if bytes.contains(where: { $0 != 0x20 && $0 != 0x0A }) {
            onEvent(.checkpointDamaged(path: path))
        }
        return (0, .start, nil)
    }

    /// A slot is valid only if it is exactly what `slot(serial:_:)` writes for
    /// the values it holds: one spelling, so no two readers can disagree.
    private static func parseSlot(_ slot: [UInt8]) -> (serial: UInt64, position: DrainPosition)? {
        guard slot.last == 0x0A else { return nil }
        let words = slot.dropLast().split(separator: 0x20)
        guard words.count == 4, let serial = number(words[0]), serial > 0, serial <= maximumNumber,
              let segment = number(words[1]), segment <= QueueLayout.maximumSequence,
              let offset = number(words[2]), offset <= maximumNumber else { return nil }
        let position = DrainPosition(segment: segment, offset: Int64(offset))
        return Self.slot(serial: serial, position) == slot ? (serial, position) : nil
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> UInt64? {
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return UInt64(String(decoding: digits, as: UTF8.self))
    }
}
