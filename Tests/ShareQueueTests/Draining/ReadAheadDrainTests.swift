import Foundation
import Testing
@testable import ShareQueueCore

/// host-drain reads a segment of a megabyte or more ahead of its sink, on a thread of its own:
/// what it delivers, sets aside and leaves queued is what a drain that reads as it goes leaves.
@Suite("Draining a large segment", .serialized)
struct ReadAheadDrainTests {
    /// A queue holding 12,000 records, about 2 MB, with garbage between two appends.
    static func largeQueue() throws -> (TestQueue, [String]) {
        let queue = TestQueue()
        var ids: [String] = []
        for append in 0..<12 {
            let drafts = (0..<1000).map { RecordDraft(.text("record \(append)-\($0) " + String(repeating: "y", count: 100)), source: "test") }
            ids += try queue.appendThroughLibrary(drafts)
            if append == 5 { try queue.plant(Array("garbage between appends".utf8)) }
        }
        #expect(Int64(queue.bytes().count) >= SegmentReadAhead.worthwhileBytes)
        return (queue, ids)
    }

    @Test("A limited drain delivers the first records of a large segment, the next the rest, and the damage is set aside once")
    func limitedDrainsDeliverEachOnce() throws {
        let (queue, appended) = try Self.largeQueue()
        let first = try queue.drain(["--max", "5500"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try ids(in: first.stdout) == Array(appended[..<5500]))
        let rest = try queue.drain()
        #expect(rest.status == 0, "\(rest.stderr)")
        #expect(try ids(in: rest.stdout) == Array(appended[5500...]))
        let quarantined = try queue.quarantine()
        #expect(quarantined.count == 1)
        #expect(quarantined.first?["length"] as? Int == "garbage between appends".utf8.count)
    }

    @Test("A command that fails in the middle of a large segment leaves the rest queued, and a later drain delivers it")
    func failingSinkLeavesTheRest() throws {
        let (queue, appended) = try Self.largeQueue()
        let out = queue.scratch.file("delivered.jsonl")
        let count = queue.scratch.file("batches")
        // The third batch is answered 75: try again later.
        let command = "n=$(cat \(count) 2>/dev/null || echo 0); n=$((n+1)); echo $n > \(count); [ $n -eq 3 ] && exit 75; cat >> \(out)"
        let failed = try queue.drain(["--exec", command])
        #expect(failed.status == 75, "\(failed.stderr)")
        let delivered = try ids(in: (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data())
        #expect(delivered == Array(appended[..<2000]))
        let rest = try queue.drain()
        #expect(rest.status == 0, "\(rest.stderr)")
        #expect(try ids(in: rest.stdout) == Array(appended[2000...]))
    }

    @Test("An I/O error reading a large segment is 74 and names it; nothing is lost")
    func readErrorKeepsTheRest() throws {
        let (queue, appended) = try Self.largeQueue()
        // The segment takes 9 reads of 256 KiB: the error comes after the first batch is delivered.
        let failed = try queue.drain(environment: ["SHARE_QUEUE_FAULT": "pread:EIO:name=sealed-:after=8"])
        #expect(failed.status == 74, "\(failed.stderr)")
        #expect(failed.stderr.contains("sealed-"), "\(failed.stderr)")
        let before = try ids(in: failed.stdout)
        #expect(before.count >= 5000)
        #expect(before == Array(appended[..<before.count]))
        let rest = try queue.drain()
        #expect(rest.status == 0, "\(rest.stderr)")
        #expect(try ids(in: rest.stdout) == Array(appended[before.count...]))
    }
}
