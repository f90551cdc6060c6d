import Foundation
import Testing
@testable import ShareQueueCore
import ToolSupport

/// Any member of a shared queue's group can fill its directory with names: a drain's work
/// must grow with them once, not once for each record it reads.
@Suite("A crowded queue directory", .serialized)
struct CrowdedDirectoryTests {
    /// A queue of `records` records, each naming an attachment that is in no folder, beside `names` empty files.
    private static func queue(_ name: String, in scratch: TemporaryDirectory, records: Int, names: Int) throws -> TestQueue {
        let queue = TestQueue(in: scratch, name: name)
        _ = try queue.append(["the first record"])
        try queue.appendStored((0..<records).map { index in
            let file = #"{"name":"a.bin","file":"missing-\#(index).bin","size":1,"sha256":"\#(String(repeating: "0", count: 64))","type":"application/octet-stream"}"#
            return Array(#"{"v":1,"id":"missing-\#(index)","date":"2026-12-07T00:00:00.000Z","source":"s","kind":"file","attachments":[\#(file)]}"#.utf8)
        })
        for index in 0..<names {
            #expect(FileManager.default.createFile(atPath: queue.file("planted-name-\(index)"), contents: nil))
        }
        return queue
    }

    @Test("Records whose copies are missing cost a drain one listing of a crowded directory, not one each")
    func missingCopiesListTheDirectoryOnce() throws {
        let scratch = TemporaryDirectory()
        let bare = try Self.queue("bare", in: scratch, records: 1000, names: 0)
        let crowded = try Self.queue("crowded", in: scratch, records: 1000, names: 20_000)
        let alone = try bare.measuredDrain(["-q"])
        let among = try crowded.measuredDrain(["-q"])
        for drain in [alone, among] {
            #expect(drain.status == 0, "\(drain.stderr)")
            #expect(try ids(in: drain.stdout).count == 1)
        }
        // Each record set aside, none delivered or lost.
        for queue in [bare, crowded] {
            let setAside = try queue.quarantine().reduce(0) { $0 + (($1["reason"] as? String)?.contains("missing") == true ? 1 : 0) }
            #expect(setAside >= 1)
        }
        // Listing 20,000 names for each of 1,000 records takes seconds more; once, a few milliseconds.
        #expect(among.seconds < 3 * alone.seconds + 1, "among 20,000 names: \(among.seconds) s; alone: \(alone.seconds) s")
    }
}
