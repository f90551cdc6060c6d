import Foundation
import Testing

/// The benchmark's format floor (`floor format` in `Floor/floor.c`): plain C making the
/// system calls the format asks of every append, so that the 8 durable producers'
/// figure can be split into what the format costs and what the implementation adds.
@Suite("The benchmark's format floor", .serialized, .runTimeLimit(minutes: 5), OptionalProgram.needs("strace"))
struct FormatFloorTests {
    @Test("bench --only durable quotes 8 producers against the format floor, which under the lock looks at pending.log, reads its tail only after another process's write, and writes")
    func formatFloor() throws {
        let scratch = TemporaryDirectory()
        let bench = scratch.file("bench")
        let result = try run("share-stress", ["bench", "--quick", "--only", "durable", "--json", "--dir", bench], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        let names = try jsonObjects(result.stdout).filter { $0["floor"] is Double }.compactMap { $0["name"] as? String }
        #expect(names.contains("durable append, 8 producers (vs format floor, 8 processes)"))
        #expect(names.contains("format floor, 8 processes (vs floor, 8 processes)"))

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
            // A write a record, and the line the run prints.
            #expect(calls["flock"] == 100 && calls["fdatasync"] == 50 && calls["write"] == 51 && calls["newfstatat", default: 0] >= 50, "\(calls)")
        }
        #expect(runs[1]["newfstatat"] == runs[0]["newfstatat"] && runs[1]["pread64", default: 0] == runs[0]["pread64", default: 0] + 1, "\(runs)")
        let pending = try FileManager.default.attributesOfItem(atPath: folder + "/pending.log")[.size] as? Int
        #expect(pending == 100 * 128)
    }
}
