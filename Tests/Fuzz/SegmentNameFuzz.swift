// Fuzz target "names": the input is a file name met in the queue directory.
//
// Names found must be names opened: a name read as sealed segment N is the
// very name the drain opens for N, and every N's name reads back as N.

import ShareQueueSystem

private let directory: QueueDirectory = {
    do { return try QueueDirectory(path: Fuzz.scratch + "/names-queue") } catch { fatalError("cannot make the queue: \(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSegmentName(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let name = String(decoding: input, as: UTF8.self)
    if let sequence = QueueDirectory.sealedSequence(of: name) {
        Fuzz.check(sequence <= QueueDirectory.maximumSequence, "\(name) reads as \(sequence), past the largest")
        Fuzz.check(directory.sealedName(sequence) == name, "\(name) reads as \(sequence), whose file is \(directory.sealedName(sequence))")
    }
    var number: UInt64 = 0
    for (i, byte) in input.prefix(8).enumerated() { number |= UInt64(byte) << (8 * UInt64(i)) }
    let sequence = number % (QueueDirectory.maximumSequence + 1)
    Fuzz.check(QueueDirectory.sealedSequence(of: directory.sealedName(sequence)) == sequence, "the name of \(sequence) does not read back")
    return 0
}
