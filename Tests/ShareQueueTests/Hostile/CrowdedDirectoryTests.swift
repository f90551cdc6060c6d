import Foundation
import Testing
@testable import ShareQueueCore
import ToolSupport

/// Any member of a shared queue's group can fill its directory with names: a drain's work
/// must grow with them once, not once for each record it reads.
@Suite("A crowded queue directory", .serialized)
struct CrowdedDirectoryTests {
    /// A queue of `records` records, each naming an attachment that is in no folder, beside `names` empty files,
    /// and the bytes of those records' frames.
    private static func queue(_ name: String, in scratch: TemporaryDirectory, records: Int, names: Int) throws -> (TestQueue, Int) {
        let queue = TestQueue(in: scratch, name: name)
        _ = try queue.append(["the first record"])
        let payloads = (0..<records).map { index in
            let file = #"{"name":"a.bin","file":"missing-\#(index).bin","size":1,"sha256":"\#(String(repeating: "0", count: 64))","type":"application/octet-stream"}"#
            return Array(#"{"v":1,"id":"missing-\#(index)","date":"2026-12-07T00:00:00.000Z","source":"s","kind":"file","attachments":[\#(file)]}"#.utf8)
        }
        try queue.appendStored(payloads)
        for index in 0..<names {
            #expect(FileManager.default.createFile(atPath: queue.file("planted-name-\(index)"), contents: nil))
        }
        return (queue, payloads.reduce(0) { $0 + $1.count + Frame.overhead })
    }

    /// Makes an empty file at `path` that was last changed two days ago: one a drain's cleanup may remove.
    private static func plantOldFile(_ path: String) {
        let twoDaysAgo = timeval(tv_sec: time(nil) - 2 * 86_400, tv_usec: 0)
        let file = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        #expect(file >= 0)
        close(file)
        #expect(utimes(path, [twoDaysAgo, twoDaysAgo]) == 0)
    }

    @Test("Records whose copies are missing cost a drain one listing of a crowded directory, not one each")
    func missingCopiesListTheDirectoryOnce() throws {
        let scratch = TemporaryDirectory()
        let (bare, recordBytes) = try Self.queue("bare", in: scratch, records: 1000, names: 0)
        let (crowded, _) = try Self.queue("crowded", in: scratch, records: 1000, names: 20_000)
        let alone = try bare.measuredDrain(["-q"])
        let among = try crowded.measuredDrain(["-q"])
        for drain in [alone, among] {
            #expect(drain.status == 0, "\(drain.stderr)")
            #expect(try ids(in: drain.stdout).count == 1)
        }
        // Every such record set aside whole, none delivered or lost.
        for queue in [bare, crowded] {
            #expect(try queue.quarantine().reduce(0) { $0 + ($1["length"] as? Int ?? 0) } == recordBytes)
        }
        // Listing 20,000 names for each of 1,000 records takes seconds more; once, a few milliseconds.
        #expect(among.seconds < 3 * alone.seconds + 1, "among 20,000 names: \(among.seconds) s; alone: \(alone.seconds) s")
    }

    @Test("Names planted by the hundred thousand, in the queue directory and in its attachments folder, cost --status and a drain no memory of their own",
          arguments: [("", ""), ("attachments", ""), ("", "quarantine-")])
    func plantedNamesCostNoMemory(_ folder: String, prefix: String) throws {
        let scratch = TemporaryDirectory()
        let bare = TestQueue(in: scratch, name: "bare")
        let crowded = TestQueue(in: scratch, name: "crowded")
        _ = try bare.append(["alone"])
        let appended = try crowded.append(["among the names"])
        let planted = crowded.file(folder)
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true)
        // Long names, none of them the queue's but as the prefix makes them (a kept segment's, which
        // --status sums): 100,000 of them are about 23 MB as a list of strings.
        for index in 0..<100_000 {
            let file = open(planted + "/" + prefix + String(format: "%08d", index) + String(repeating: "n", count: 192), O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            #expect(file >= 0)
            close(file)
        }
        for arguments in [["--status"], ["-q"]] {
            let alone = try bare.measuredDrain(arguments)
            let among = try crowded.measuredDrain(arguments)
            #expect(among.status == 0, "\(among.stderr)")
            #expect(among.peakMemory < alone.peakMemory + (8 << 20) * Int64(sanitizerAllowance), "\(arguments): \(among.peakMemory) bytes among the names, \(alone.peakMemory) alone")
            if arguments == ["-q"] { #expect(try ids(in: among.stdout) == appended.lines) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted).count { $0.hasSuffix("nnnn") } == 100_000)
    }

    @Test("Dead letters that name 100,000 attachment files cost a drain that removes stale copies no memory of their own; the copy a letter names stays")
    func deadLettersNamingManyFiles() throws {
        let scratch = TemporaryDirectory()
        var peaks: [Int64] = []
        for lettersNameMany in [false, true] {
            let queue = TestQueue(in: scratch, name: lettersNameMany ? "named" : "bare")
            let appended = try queue.append(["x"])
            let folder = queue.file("attachments")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for name in ["orphan-old.bin", "named-old.bin"] {
                try Data("old".utf8).write(to: URL(fileURLWithPath: folder + "/" + name))
                try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-2 * 86_400)], ofItemAtPath: folder + "/" + name)
            }
            // 100 letters of 1,000 attachments each, with names as long as a record may give; the first names the old copy.
            var letters = ""
            for letter in 0..<(lettersNameMany ? 100 : 1) {
                let files = (0..<1000).map { index in
                    let file = letter == 0 && index == 0 ? "named-old.bin" : String(format: "%03d-%03d-", letter, index) + String(repeating: "f", count: 72)
                    return #"{"name":"a","file":"\#(file)","size":3,"sha256":"\#(String(repeating: "0", count: 64))","type":"application/octet-stream"}"#
                }
                let record = #"{"v":1,"id":"letter-\#(letter)","date":"2026-12-07T00:00:00.000Z","source":"s","kind":"file","attachments":[\#(files.joined(separator: ","))]}"#
                letters += #"{"date":"2026-12-07T00:00:00.000Z","attempts":5,"error":"refused","record":\#(record)}"# + "\n"
            }
            #expect(FileManager.default.createFile(atPath: queue.file("dead-letters.log"), contents: Data(letters.utf8), attributes: [.posixPermissions: 0o600]))
            let drain = try queue.measuredDrain(["-q"])
            #expect(drain.status == 0, "\(drain.stderr)")
            #expect(try ids(in: drain.stdout) == appended.lines)
            let left = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(Set(left) == ["named-old.bin"], "\(left) \(drain.stderr)")
            peaks.append(drain.peakMemory)
        }
        #expect(peaks[1] < peaks[0] + (8 << 20) * Int64(sanitizerAllowance), "\(peaks[1]) bytes with 100,000 names in dead letters, \(peaks[0]) with 1,000")
    }

    @Test("Old copies that nothing names, planted by the ten thousand, are removed 10,000 a drain, the rest by the next")
    func staleCopiesGoTenThousandADrain() throws {
        let queue = TestQueue()
        let folder = queue.file("attachments")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 0..<10_500 { Self.plantOldFile(folder + "/" + String(format: "old-%05d.bin", index)) }
        for left in [500, 0] {
            #expect(try queue.drain(["-q"]).status == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == left)
        }
    }

    @Test("Old copies that nothing names are removed, however many old copies that dead letters name stand beside them")
    func namedCopiesHoldNoOthersBack() throws {
        let queue = TestQueue()
        let folder = queue.file("attachments")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var letters = ""
        for index in 0..<10_550 {
            let name = String(format: index < 10_500 ? "named-%05d.bin" : "orphan-%05d.bin", index)
            Self.plantOldFile(folder + "/" + name)
            guard index < 10_500 else { continue }
            let attachment = #"{"name":"a","file":"\#(name)","size":0,"sha256":"\#(String(repeating: "0", count: 64))","type":"application/octet-stream"}"#
            letters += #"{"date":"2026-12-07T00:00:00.000Z","attempts":5,"error":"refused","record":{"v":1,"id":"l\#(index)","date":"2026-12-07T00:00:00.000Z","source":"s","kind":"file","attachments":[\#(attachment)]}}"# + "\n"
        }
        #expect(FileManager.default.createFile(atPath: queue.file("dead-letters.log"), contents: Data(letters.utf8), attributes: [.posixPermissions: 0o600]))
        // Each drain looks at 10,000 of the 10,550 old copies, chosen at random: one that the same 10,000 would
        // pass over every time, it reaches in a few drains (that one is passed over ten times: 1 in 10^13).
        var drains = 0
        while try FileManager.default.contentsOfDirectory(atPath: folder).contains(where: { $0.hasPrefix("orphan-") }) && drains < 10 {
            #expect(try queue.drain(["-q"]).status == 0)
            drains += 1
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(left.count == 10_500 && left.allSatisfy { $0.hasPrefix("named-") }, "\(left.count) left after \(drains) drains")
    }

    @Test("Old temporary names are removed, however many new ones stand beside them")
    func newTemporariesHoldNoOldOnesBack() throws {
        let queue = TestQueue()
        _ = try queue.append(["x"])
        for index in 0..<12_000 {
            try FileManager.default.createDirectory(atPath: queue.file("attachments.tmp-\(index)"), withIntermediateDirectories: false)
        }
        for index in 0..<50 { Self.plantOldFile(queue.file("format.tmp-\(100_000 + index)")) }
        #expect(try queue.drain(["-q"]).status == 0)
        let left = queue.names()
        #expect(!left.contains { $0.hasPrefix("format.tmp-") })
        #expect(left.count { $0.hasPrefix("attachments.tmp-") } == 12_000)
    }
}
