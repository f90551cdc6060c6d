import Foundation
import Testing

/// The benchmark's format floor (`floor format` in `Floor/floor.c`): plain C making the
/// system calls the format asks of every append, so that the 8 durable producers'
/// figure can be split into what the format costs and what the implementation adds.
@Suite("The benchmark's format floor", .serialized, .runTimeLimit(minutes: 5), OptionalProgram.needs("strace"))
struct FormatFloorTests {
    @Test("bench --only durable quotes 8 producers against the format floor, which under the lock looks at pending.log, reads its tail only after another process's write, and writes records as long as the library's; floor group syncs what no later sync covered")
    func formatFloor() throws {
        let scratch = TemporaryDirectory()
        let bench = scratch.file("bench")
        let result = try run("share-stress", ["bench", "--quick", "--only", "durable", "--json", "--dir", bench], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        let names = try jsonObjects(result.stdout).filter { $0["floor"] is Double }.compactMap { $0["name"] as? String }
        // The format floor stores records as long as the library's: the header, JSON and trailer of the bench's record.
        #expect(names.contains { $0.hasPrefix("durable append, 8 producers (vs format floor, ") && $0.hasSuffix(" B)") && !$0.contains("128 B") }, "\(names)")
        #expect(names.contains { $0.hasPrefix("format floor, 8 x ") && $0.hasSuffix(" B (vs floor, 8 x 128 B)") }, "\(names)")
        #expect(names.contains("format floor, group commit (vs without, 8 processes)"))

        guard let strace = OptionalProgram.required("strace") else { return }
        let folder = scratch.file("format")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Two processes one after the other: the second's first append follows the first's
        // whole run, so it reads the tail once; every other append follows its own.
        // (Start-up calls of the C library count alike in both.)
        var runs: [[String: Int]] = []
        for _ in 0..<2 {
            let traced = try run(strace, ["-f", "-c", "-U", "name,calls", "-e", "trace=flock,newfstatat,pread64,write,fdatasync",
                                          bench + "/floor", "format", folder, "50", "0"], in: scratch)
            #expect(traced.status == 0, "\(traced.stderr)")
            runs.append(Dictionary(traced.stderr.split(separator: "\n").compactMap { line -> (String, Int)? in
                let words = line.split(separator: " ")
                return words.count == 2 ? Int(words[1]).map { (String(words[0]), $0) } : nil
            }, uniquingKeysWith: { first, _ in first }))
        }
        for calls in runs {
            // A write a record, and the line the run prints; both halves of the producers' lock taken and let go.
            #expect(calls["flock"] == 200 && calls["fdatasync"] == 50 && calls["write"] == 51 && calls["newfstatat", default: 0] >= 50, "\(calls)")
        }
        #expect(runs[1]["newfstatat"] == runs[0]["newfstatat"] && runs[1]["pread64", default: 0] == runs[0]["pread64", default: 0] + 1, "\(runs)")
        let pending = try FileManager.default.attributesOfItem(atPath: folder + "/pending.log")[.size] as? Int
        #expect(pending == 100 * 128)

        // floor group makes records of the length asked, and a process alone still syncs
        // every one: no sync but its own began after its write.
        let group = scratch.file("group")
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: true)
        let traced = try run(strace, ["-f", "-c", "-U", "name,calls", "-e", "trace=flock,fdatasync,pwrite64",
                                      bench + "/floor", "group", group, "50", "0", "179"], in: scratch)
        #expect(traced.status == 0, "\(traced.stderr)")
        let groupCalls = Dictionary(traced.stderr.split(separator: "\n").compactMap { line -> (String, Int)? in
            let words = line.split(separator: " ")
            return words.count == 2 ? Int(words[1]).map { (String(words[0]), $0) } : nil
        }, uniquingKeysWith: { first, _ in first })
        // Per record: the producers' lock's two halves and their release; the sync lock shared,
        // exclusive and released; one fdatasync; the mark of when it began.
        #expect(groupCalls["flock"] == 350 && groupCalls["fdatasync"] == 50 && groupCalls["pwrite64"] == 50, "\(groupCalls)")
        let grouped = try FileManager.default.attributesOfItem(atPath: group + "/pending.log")[.size] as? Int
        #expect(grouped == 50 * 179)
        #expect(try run(bench + "/floor", ["group", group, "1", "0", "4097"], in: scratch).status == 64)
    }
}
