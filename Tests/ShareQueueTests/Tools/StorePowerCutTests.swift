import Foundation
import Testing

/// `share-stress power-cut` on the store workload: SQLite's own writes and syncs
/// are traced through the store's VFS, so the crash states hold the database,
/// its log and their directory entries as SQLite left them.
@Suite("Power cuts in the store", .serialized, .runTimeLimit(minutes: 5))
struct StorePowerCutTests {
    /// One JSON report per workload.
    func explore(_ arguments: [String], in scratch: TemporaryDirectory) throws -> (status: Int32, reports: [[String: Any]], text: String) {
        let result = try run("share-stress", ["power-cut", "--json", "--dir", scratch.file("runs"), "--workload", "store"] + arguments, in: scratch)
        let reports = try result.lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        return (result.status, reports, result.output + result.stderr)
    }

    @Test("The store recovers from a sample of its crash states under each mode", arguments: ["posix", "ext4-ordered", "apfs"])
    func store(_ mode: String) throws {
        let (status, reports, text) = try explore(["--states", "300", "--seed", "7", "--mode", mode], in: TemporaryDirectory())
        #expect(status == 0, "\(text)")
        let report = try #require(reports.first, "\(text)")
        #expect((report["violations"] as? [Any])?.isEmpty == true, "\(text)")
        #expect((report["distinct"] as? Int ?? 0) > 1, "\(text)")
    }

    @Test("The explorer catches a store that does not sync, or commits its position before its rows", arguments: [
        ("store-synchronous-off", 300, 1), ("store-position-first", 300, 1),
    ])
    func mutant(_ name: String, states: Int, seed: Int) throws {
        let (status, reports, text) = try explore(["--states", String(states), "--seed", String(seed), "--mutant", name], in: TemporaryDirectory())
        #expect(status == 1, "\(text)")
        let violations = try #require(reports.first?["violations"] as? [[String: Any]], "\(text)")
        #expect(!violations.isEmpty, "\(text)")
    }

    @Test("A traced drain into the store records SQLite's writes and syncs of its log")
    func tracedLog() throws {
        let scratch = TemporaryDirectory()
        let trace = scratch.file("trace")
        try run("share-append", ["--dir", scratch.queue, "one"], in: scratch)
        let drained = try run("host-drain", ["--dir", scratch.queue, "--quiet", "--store", scratch.file("store.sqlite")],
                              environment: ["SHARE_QUEUE_TRACE": trace], in: scratch)
        #expect(drained.status == 0, "\(drained.stderr)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        func count(_ op: String, endingIn name: String) -> Int {
            lines.filter { $0.hasPrefix(op + " ") && $0.split(separator: " ").dropFirst(2).first?.hasSuffix("/" + name) == true }.count
        }
        #expect(count("write", endingIn: "store.sqlite-wal") > 0)
        #expect(count("sync", endingIn: "store.sqlite-wal") > 0)
        #expect(count("create", endingIn: "store.sqlite-wal") > 0)
        #expect(count("write", endingIn: "store.sqlite-shm") == 0)
        #expect(!lines.contains { $0.hasPrefix("image ") })
    }
}
