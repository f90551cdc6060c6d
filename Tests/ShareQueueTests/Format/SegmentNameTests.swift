import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueSystem

/// The checkpoint, the names of sealed segments, and sealing: nothing planted
/// or damaged there may make a drain skip, overwrite or stop on records.
@Suite("Checkpoint and segment names")
struct SegmentNameTests {
    /// A file holding one record appended through another queue, to plant as a segment.
    private func segmentFile(_ text: String, in scratch: TemporaryDirectory) throws -> (path: String, id: String) {
        let other = scratch.file("other-\(UUID().uuidString)")
        let id = try run("share-append", ["--dir", other, text], in: scratch).lines
        #expect(id.count == 1)
        return (other + "/pending.log", id.first ?? "")
    }

    private func writeCheckpoint(_ q: String, _ slots: [UInt8]) throws {
        try Data(slots).write(to: URL(fileURLWithPath: q + "/checkpoint"))
    }

    private func checkpointBytes(_ q: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: q + "/checkpoint") ?? Data())
    }

    private func names(in q: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: q)) ?? []
    }

    // MARK: The checkpoint and the sink's position are checked against the segments

    @Test("A checkpoint at the last segment number is damage: records are delivered again, never sealed out of sight")
    func checkpointAtLastNumber() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines(["a", "b", "c"])
        #expect(appended.count == 3)
        try writeCheckpoint(queue.path, Checkpoint.slot(serial: 5, DrainPosition(segment: 999_999_999_999_999, offset: 0))
                             + Checkpoint.slot(serial: 4, DrainPosition(segment: 0, offset: 0)))
        let first = try queue.drain(["--max", "1"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try ids(in: first.stdout) == [appended[0]])
        #expect(first.warned(.checkpointDoesNotFit(position: DrainPosition(segment: 999_999_999_999_999, offset: 0))), "\(first.stderr)")
        let later = try queue.append(text: "d")
        let second = try queue.drain()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try ids(in: second.stdout) == Array(appended[1...]) + later)
        #expect(!names(in: queue.path).contains { $0.hasPrefix("sealed-") }, "\(names(in: queue.path))")
    }

    @Test("A checkpoint past a sealed segment that is still there is damage: that segment is delivered, not removed")
    func checkpointPastSealedSegment() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let appended = try queue.appendLines(["a", "b"])
        #expect(try ids(in: queue.drain(["--max", "1"]).stdout) == [appended[0]])
        let planted = try segmentFile("z", in: scratch)
        try FileManager.default.copyItem(atPath: planted.path, toPath: queue.file("sealed-000000000005.log"))
        try writeCheckpoint(queue.path, Checkpoint.slot(serial: 9, DrainPosition(segment: 5, offset: 0)) + Checkpoint.slot(serial: 8, .start))
        // --status counts as a drain delivers: everything from the start again.
        let status = try queue.drain(["--status", "--json"])
        let counts = try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any]
        #expect(counts?["pending"] as? Int == 3, "\(status.output)")
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        // Delivered again from the start: at least once, nothing skipped.
        #expect(try ids(in: drain.stdout) == appended + [planted.id])
    }

    @Test("A checkpoint at the largest serial, as another writer may leave it, still moves on: serials start again, and each record after its position comes once")
    func checkpointAtTheLargestSerial() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let appended = try queue.appendLines(["a", "b", "c"])
        #expect(try ids(in: queue.drain(["--max", "1"]).stdout) == [appended[0]])
        let position = DrainPosition(segment: 1, offset: 0)
        try writeCheckpoint(queue.path, Checkpoint.slot(serial: Checkpoint.maximumNumber, position) + Checkpoint.blankSlot)
        var delivered: [String] = []
        for _ in 0..<4 {
            let drain = try queue.drain(["--max", "1"])
            #expect(drain.status == 0, "\(drain.stderr)")
            delivered += try ids(in: drain.stdout)
        }
        #expect(delivered == appended, "\(delivered)")
        // Both slots hold a position now (neither is blank), the serials small again.
        let slots = String(decoding: checkpointBytes(queue.path), as: UTF8.self).split(separator: "\n").map { $0.split(separator: " ") }
        #expect(slots.count == 2 && slots.allSatisfy { $0.count == 4 && (UInt64($0[0]) ?? .max) < 10 }, "\(slots)")
    }

    @Test("A store's position past a sealed segment that is still there is not trusted: nothing is skipped")
    func storePositionPastSealedSegment() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        let appended = try queue.appendLines(["a", "b"])
        #expect(try queue.drain(["--store", db, "--max", "1"]).status == 0)
        let planted = try segmentFile("z", in: scratch)
        try FileManager.default.copyItem(atPath: planted.path, toPath: queue.file("sealed-000000000005.log"))
        _ = try sqlite(db, "UPDATE drain_position SET segment = 5, offset = 0")
        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try sqlite(db, "SELECT id FROM records ORDER BY rowid") == appended + [planted.id])
        #expect(drain.warned(.storedPositionIgnored(position: DrainPosition(segment: 5, offset: 0))), "\(drain.stderr)")
    }

    // MARK: Sealing never replaces a file

    @Test("Sealing onto a name that appeared meanwhile fails safely; the next drain delivers both files")
    func sealingNeverReplaces() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let appended = try queue.appendLines(["a", "b"])
        #expect(try ids(in: queue.drain(["--max", "1"]).stdout) == [appended[0]])
        let pending = try queue.append(text: "c")
        let planted = try segmentFile("z", in: scratch)
        // While segment 1 is delivered, a file appears under the name the pending file is about to get.
        let output = scratch.file("delivered")
        let command = "cat >> '\(output)' && cp '\(planted.path)' '\(queue.path)/sealed-000000000002.log'"
        let first = try queue.drain(["--exec", command])
        #expect(first.status == 75, "\(first.stderr)")
        #expect(first.stderr.contains("sealed-000000000002.log"))
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: output))) == [appended[1]])
        let second = try queue.drain()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try ids(in: second.stdout) == [planted.id] + pending)
    }

    @Test("A rename that must not replace refuses an existing name and leaves both files as they were",
          arguments: [false, true])
    func renameWithoutReplacing(byLinking: Bool) throws {
        let scratch = TemporaryDirectory()
        let from = scratch.file("from"), to = scratch.file("to"), free = scratch.file("free")
        try Data("from".utf8).write(to: URL(fileURLWithPath: from))
        try Data("to".utf8).write(to: URL(fileURLWithPath: to))
        let folder = try FileDescriptor.openDirectory(atPath: scratch.path, creating: false)
        defer { folder.close() }
        func move(_ from: String, _ to: String) throws(SystemError) {
            try folder.renameWithoutReplacing(String(from.split(separator: "/").last!), to: String(to.split(separator: "/").last!), byLinking: byLinking)
        }
        #expect(throws: SystemError.self) { try move(from, to) }
        do { try move(from, to) } catch { #expect(error.isAlreadyExists) }
        #expect(try String(contentsOfFile: from, encoding: .utf8) == "from")
        #expect(try String(contentsOfFile: to, encoding: .utf8) == "to")
        try move(from, free)
        #expect(!FileManager.default.fileExists(atPath: from))
        #expect(try String(contentsOfFile: free, encoding: .utf8) == "from")
        #expect(try FileSystem.linkStatus(free)?.linkCount == 1)
    }

    // MARK: Segment names

    @Test("A segment name the queue does not write is moved aside whole; the drain goes on",
          arguments: ["sealed-7.log", "sealed-0000000000007.log", "sealed-000000000000007.log", "sealed-0000000000000000000007.log",
                      // As long as a name may be: the name it is moved aside to keeps only what fits.
                      "sealed-" + String(repeating: "9", count: 222) + ".log", "sealed-" + String(repeating: "9", count: 244) + ".log"])
    func foreignSegmentName(name: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let queued = try queue.append(text: "queued")
        let planted = try segmentFile("planted", in: scratch)
        try FileManager.default.copyItem(atPath: planted.path, toPath: queue.path + "/" + name)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == queued)
        let aside = names(in: queue.path).filter { $0.hasPrefix("rejected-") && $0.utf8.count <= 255 && name.hasPrefix($0.split(separator: "-", maxSplits: 2)[2]) }
        #expect(aside.count == 1)
        #expect(drain.warned(.fileMovedAside(path: queue.file(name), problem: "is not named as the queue names its segments",
                                             movedTo: queue.file(aside.first ?? ""), handling: .unread)), "\(drain.stderr)")
        #expect(FileManager.default.contents(atPath: queue.path + "/" + (aside.first ?? "")) == FileManager.default.contents(atPath: planted.path))
        #expect(!names(in: queue.path).contains(name))
        let again = try queue.drain()
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.isEmpty)
    }

    @Test("Two names with the same number: the queue's is delivered, the other moved aside, nothing lost")
    func twoNamesOneNumber() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let queued = try queue.append(text: "queued")
        let canonical = try segmentFile("canonical", in: scratch)
        let short = try segmentFile("short", in: scratch)
        try FileManager.default.copyItem(atPath: canonical.path, toPath: queue.file("sealed-000000000007.log"))
        try FileManager.default.copyItem(atPath: short.path, toPath: queue.file("sealed-7.log"))
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == [canonical.id] + queued)
        let aside = names(in: queue.path).filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-sealed-7.log") }
        #expect(aside.count == 1)
        #expect(FileManager.default.contents(atPath: queue.path + "/" + (aside.first ?? "")) == FileManager.default.contents(atPath: short.path))
    }

    @Test("Segment names: one spelling per number, and the listing parses exactly what sealing writes")
    func segmentNameRule() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        for sequence: UInt64 in [0, 1, 7, 999_999_999_999, 1_000_000_000_000, 999_999_999_999_999] {
            #expect(QueueDirectory.sealedSequence(of: directory.sealedName(sequence)) == sequence)
        }
        #expect(directory.sealedName(7) == "sealed-000000000007.log")
        #expect(directory.sealedName(1_000_000_000_000) == "sealed-1000000000000.log")
        for foreign in ["sealed-7.log", "sealed-0000000000007.log", "sealed-000000000000007.log", "sealed-01000000000000.log",
                        "sealed-1000000000000000.log", "sealed-+00000000007.log", "sealed-.log"] {
            #expect(QueueDirectory.sealedSequence(of: foreign) == nil, "\(foreign)")
        }
    }

    // MARK: The checkpoint's slots

    @Test("The checkpoint writes the slot that does not hold the newest serial, whatever the parity")
    func checkpointWritesOlderSlot() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        let newest = Checkpoint.slot(serial: 7, DrainPosition(segment: 3, offset: 10))
        try writeCheckpoint(directory.path, newest + Checkpoint.slot(serial: 3, DrainPosition(segment: 1, offset: 0)))
        let checkpoint = try Checkpoint(directory: directory, onEvent: { _ in })
        #expect(checkpoint.position == DrainPosition(segment: 3, offset: 10))
        try checkpoint.write(DrainPosition(segment: 3, offset: 20))
        #expect(checkpointBytes(directory.path) == newest + Checkpoint.slot(serial: 8, DrainPosition(segment: 3, offset: 20)))
        try checkpoint.write(DrainPosition(segment: 3, offset: 30))
        #expect(checkpointBytes(directory.path) == Checkpoint.slot(serial: 9, DrainPosition(segment: 3, offset: 30))
                + Checkpoint.slot(serial: 8, DrainPosition(segment: 3, offset: 20)))
    }

    @Test("With one slot torn, the checkpoint writes over the torn one, never over the only valid one")
    func checkpointKeepsTheValidSlot() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        let valid = Checkpoint.slot(serial: 4, DrainPosition(segment: 2, offset: 5))
        let torn = Array("5 2 9 ".utf8) + [UInt8](repeating: 0, count: 57) + [0x0A]
        try writeCheckpoint(directory.path, torn + valid)
        let checkpoint = try Checkpoint(directory: directory, onEvent: { _ in })
        #expect(checkpoint.position == DrainPosition(segment: 2, offset: 5))
        try checkpoint.write(DrainPosition(segment: 2, offset: 9))
        #expect(checkpointBytes(directory.path) == Checkpoint.slot(serial: 5, DrainPosition(segment: 2, offset: 9)) + valid)
    }

    @Test("A checkpoint slot is valid only in the exact form a drain writes it")
    func checkpointSlotText() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        // A fresh queue's checkpoint: two blank slots.
        let blank = [UInt8](repeating: 0x20, count: 63) + [0x0A]
        #expect(checkpointBytes(directory.path) == blank + blank)
        // CRC-32C of the ASCII text "1 2 3", in lower-case hex without leading zeros.
        let crc = String(CRC32C.checksum(Array("1 2 3".utf8)), radix: 16)
        let text = Array("1 2 3 \(crc)".utf8)
        #expect(Checkpoint.slot(serial: 1, DrainPosition(segment: 2, offset: 3)) == text + [UInt8](repeating: 0x20, count: 63 - text.count) + [0x0A])
        // The same values in another spelling are not a slot a drain wrote.
        let upper = Array("9 4 4 \(String(CRC32C.checksum(Array("9 4 4".utf8)), radix: 16).uppercased())".utf8)
        let signed = Array("+9 4 4 \(String(CRC32C.checksum(Array("+9 4 4".utf8)), radix: 16))".utf8)
        #expect(upper.contains { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) })
        for spoiled in [upper, signed] {
            try writeCheckpoint(directory.path, spoiled + [UInt8](repeating: 0x20, count: 63 - spoiled.count) + [0x0A]
                                + Checkpoint.slot(serial: 2, DrainPosition(segment: 1, offset: 0)))
            #expect(try Checkpoint.read(directory: directory, onEvent: { _ in }) == DrainPosition(segment: 1, offset: 0),
                    "\(String(decoding: spoiled, as: UTF8.self))")
        }
    }

    @Test("The largest numbers a slot holds read back; larger ones are damage")
    func checkpointLargestNumbers() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        let largest = DrainPosition(segment: QueueDirectory.maximumSequence, offset: Int64(Checkpoint.maximumNumber))
        let blank = [UInt8](repeating: 0x20, count: 63) + [0x0A]
        try writeCheckpoint(directory.path, Checkpoint.slot(serial: Checkpoint.maximumNumber, largest) + blank)
        #expect(try Checkpoint.read(directory: directory, onEvent: { _ in }) == largest)
        // A 19-digit serial, well formed otherwise: past what a slot holds.
        let fields = "1999999999999999999 999999999999999 999999999999999999"
        let full = Array("\(fields) \(String(CRC32C.checksum(Array(fields.utf8)), radix: 16))".utf8)
        let padded = full + [UInt8](repeating: 0x20, count: 63 - full.count) + [0x0A]
        try writeCheckpoint(directory.path, padded + Checkpoint.slot(serial: 2, DrainPosition(segment: 1, offset: 5)))
        let read = try Checkpoint.read(directory: directory, onEvent: { _ in })
        #expect(read == DrainPosition(segment: 1, offset: 5))
    }
}
