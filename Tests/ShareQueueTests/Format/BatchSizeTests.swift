import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueSystem

/// A reader hands out each record in the same time whatever the size of the
/// append it came in. Timed on the reader alone, with small records: in a debug
/// build the cost of each record otherwise hides one that grows with the append.
@Suite("Big appends", .serialized)
struct BatchSizeTests {
    @Test("One append of 160,000 records is read at the rate of 160 appends of 1,000")
    func bigAppendReadsLinearly() throws {
        let scratch = TemporaryDirectory()
        let payloads = (0..<160_000).map { Array("{\"i\":\($0)}".utf8) }
        func timedRead(appends size: Int) throws -> (seconds: Double, records: Int) {
            var bytes: [UInt8] = []
            for (index, payload) in payloads.enumerated() {
                Frame.append(payload: payload, to: &bytes, last: (index + 1) % size == 0)
            }
            let path = scratch.file("segment-\(size)")
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let file = try FileDescriptor.open(path, .readOnly)
            defer { file.close() }
            var reader = SegmentReader(file: file, from: 0)
            var records = 0
            let started = Host.monotonicSeconds()
            while let event = try reader.next() {
                if case .record = event { records += 1 }
            }
            return (Host.monotonicSeconds() - started, records)
        }
        let small = try timedRead(appends: 1000)
        let big = try timedRead(appends: 160_000)
        #expect(small.records == 160_000)
        #expect(big.records == 160_000)
        #expect(big.seconds < 2 * small.seconds, "one append: \(big.seconds) s; 160 appends: \(small.seconds) s")
    }
}
