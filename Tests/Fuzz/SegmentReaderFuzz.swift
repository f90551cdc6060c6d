// Fuzz target "segment": the input is a whole segment file, read from the
// start by SegmentReader the way a drain reads a sealed segment.
//
// Beyond "does not crash", every event must hold up against the bytes:
// events tile the file from 0 to its size with no gap or overlap, every
// record is a whole frame whose checksum holds and whose payload is the one
// in the file, damage is never empty nor keeps more than the limit, a torn
// tail ends at the end of the file, and an append cut short by the end of
// the file delivers none of its records.

import ShareQueueSystem

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSegmentReader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let path = Fuzz.scratch + "/segment.log"
    Fuzz.replaceFile(path, with: input)
    let file: FileDescriptor
    do { file = try FileDescriptor.open(path, .readOnly) } catch { fatalError("cannot open \(path): \(error)") }
    defer { file.close() }

    var reader = SegmentReader(file: file, from: 0)
    var covered: Int64 = 0
    var previousWasContinued = false
    var events = 0
    while true {
        let event: SegmentEvent?
        do { event = try reader.next() } catch { fatalError("reading an in-memory-sized file failed: \(error)") }
        guard let event else { break }
        events += 1
        Fuzz.check(events <= input.count + 1, "more events than bytes")
        switch event {
        case .record(let offset, let end, let payload, let markedContinued):
            Fuzz.check(offset == covered, "record at \(offset), expected \(covered)")
            Fuzz.check(end <= Int64(input.count), "record ends at \(end), past the file's \(input.count) bytes")
            Fuzz.check(end - offset == Int64(payload.count + Frame.overhead), "record \(offset)..<\(end) with a \(payload.count)-byte payload")
            let frame = Array(input[Int(offset)..<Int(end)])
            let inspection = frame.withUnsafeBytes { Frame.inspect($0) }
            guard case .complete(let frameSize, let continued) = inspection, frameSize == frame.count else {
                fatalError("invariant broken: record \(offset)..<\(end) is not a whole frame: \(inspection)")
            }
            Fuzz.check(frame[Frame.headerSize..<(frame.count - Frame.trailerSize)].elementsEqual(payload.array), "record \(offset) payload differs from the file")
            Fuzz.check(markedContinued == continued, "record \(offset) is reported with the wrong trailer")
            previousWasContinued = continued
            covered = end
        case .damaged(let region):
            // An abandoned append is reported from its first frame, none of which was delivered.
            Fuzz.check(region.offset == covered, "damage at \(region.offset), expected \(covered)")
            Fuzz.check(region.length > 0, "empty damaged region at \(region.offset)")
            Fuzz.check(region.end <= Int64(input.count), "damage ends at \(region.end), past the file's \(input.count) bytes")
            Fuzz.check(region.bytes.count <= SegmentReader.damagePieceSize, "damage keeps \(region.bytes.count) bytes")
            Fuzz.check(region.bytes.elementsEqual(input[Int(region.offset)..<Int(region.end)]), "damage at \(region.offset) does not hold the file's bytes")
            Fuzz.check(!region.isTornTail || region.end == Int64(input.count), "torn tail at \(region.offset)..<\(region.end) is not at the end")
            Fuzz.check(!(previousWasContinued && region.isTornTail), "an append cut short by the end of the file delivered some of its records")
            previousWasContinued = false
            covered = region.end
        }
    }
    Fuzz.check(!previousWasContinued, "the file ends on a record whose append is unfinished, and it was delivered")
    Fuzz.check(covered == Int64(input.count), "events cover \(covered) of \(input.count) bytes")
    Fuzz.check(reader.position == Int64(input.count), "reader stopped at \(reader.position) of \(input.count) bytes")
    return 0
}
