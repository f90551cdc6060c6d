// Fuzz target "checkpoint": the input is the checkpoint file, read the way a
// drain or `host-drain --status` reads it.
//
// Whatever the file holds, the position read is one the queue can use, and
// a damaged file reads as the start. Then, as a round trip, a slot written
// for a position taken from the input, beside a blank slot, reads back as
// exactly that position.

import ShareQueueSystem

private let directory: QueueDirectory = {
    do { return try QueueDirectory(path: Fuzz.scratch + "/checkpoint-queue") } catch { fatalError("cannot make the queue: \(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCheckpoint(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    Fuzz.replaceFile(directory.checkpointPath, with: input)
    let position: DrainPosition
    do { position = try Checkpoint.read(directory: directory, onEvent: { _ in }) } catch { fatalError("reading a plain file failed: \(error)") }
    Fuzz.check(position.segment <= QueueDirectory.maximumSequence, "segment \(position.segment) is past the largest")
    Fuzz.check(position.offset >= 0, "negative offset \(position.offset)")

    // Round trip: numbers from the input's first 24 bytes, cut into the ranges a slot holds.
    var words = [UInt64](repeating: 0, count: 3)
    for (i, byte) in input.prefix(24).enumerated() { words[i / 8] |= UInt64(byte) << (8 * UInt64(i % 8)) }
    let serial = words[0] % Checkpoint.maximumNumber + 1
    let written = DrainPosition(segment: words[1] % (QueueDirectory.maximumSequence + 1), offset: Int64(words[2] % (Checkpoint.maximumNumber + 1)))
    let blank = [UInt8](repeating: 0x20, count: Checkpoint.slotSize - 1) + [0x0A]
    let slot = Checkpoint.slot(serial: serial, written)
    Fuzz.check(slot.count == Checkpoint.slotSize, "a slot for \(serial) \(written) is \(slot.count) bytes")
    Fuzz.replaceFile(directory.checkpointPath, with: serial % 2 == 0 ? slot + blank : blank + slot)
    let read: DrainPosition
    do { read = try Checkpoint.read(directory: directory, onEvent: { _ in }) } catch { fatalError("reading a plain file failed: \(error)") }
    Fuzz.check(read == written, "wrote \(written) with serial \(serial), read \(read)")
    return 0
}
