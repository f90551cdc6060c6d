import Foundation
import Testing

/// `share-stress power-cut`: every crash state a power cut may leave, under
/// conservative POSIX rules, recovered with the real tools; bounded to fit in `swift test`.
@Suite("Power cuts", .serialized, .runTimeLimit(minutes: 5))
struct PowerCutTests {
    static let workloads = ["append", "batch", "attachments", "torn-tail", "if-changed", "drain", "attachment-delivery", "store", "dead-letter", "dead-letter-killed", "requeue-dead", "seal-race", "watch",
                            "lines-stream", "coalesce", "standard-output-file", "typed-router", "max", "requeue-resumed", "group-shared", "sealed-damage", "full-disk-keep"]

    /// One JSON report per workload.
    func explore(_ arguments: [String], in scratch: TemporaryDirectory) throws -> (status: Int32, reports: [[String: Any]], text: String) {
        let result = try run("share-stress", ["power-cut", "--json", "--dir", scratch.file("runs")] + arguments, in: scratch)
        let reports = try result.lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        return (result.status, reports, result.output + result.stderr)
    }

    @Test("Every workload recovers from a sample of its crash states with nothing acknowledged lost", arguments: workloads)
    func workload(_ name: String) throws {
        let scratch = TemporaryDirectory()
        let (status, reports, text) = try explore(["--workload", name, "--states", "400", "--seed", "7"], in: scratch)
        #expect(status == 0, "\(text)")
        #expect(reports.count == 1)
        let report = try #require(reports.first)
        #expect(report["workload"] as? String == name)
        #expect((report["violations"] as? [Any])?.isEmpty == true, "\(text)")
        #expect((report["states"] as? Int ?? 0) > 0)
        #expect((report["distinct"] as? Int ?? 0) > 1)
    }

    /// A state a missing sync (or a mutant) leaves, replayed: seed and number are those of the run that found it.
    /// - Returns: each violation's problems.
    @discardableResult
    func expectCaught(_ point: String, workload: String, states: Int, seed: Int, state: Int?, mode: String = "posix", in scratch: TemporaryDirectory,
                      option: String = "--skip-sync") throws -> [String] {
        let replay = state.map { ["--state", String($0)] } ?? []
        let (status, reports, text) = try explore(["--workload", workload, "--states", String(states), "--seed", String(seed), "--mode", mode, option, point] + replay, in: scratch)
        #expect(status == 1, "\(text)")
        let violations = try #require(reports.first?["violations"] as? [[String: Any]], "\(text)")
        #expect(!violations.isEmpty, "\(text)")
        if let state { #expect(violations.map { $0["state"] as? Int } == [state], "\(text)") }
        return violations.flatMap { $0["problems"] as? [String] ?? [] }
    }

    @Test("Without the sync of the directory above a new queue, the first printed id is lost with the queue")
    func queueDirectoryCreation() throws {
        try expectCaught("directory-created", workload: "append", states: 1000, seed: 1, state: nil, in: TemporaryDirectory())
    }

    @Test("Without the sync after the attachments folder is made, a record's attachment is lost and the record with it")
    func attachmentsFolderCreation() throws {
        try expectCaught("folder-created", workload: "attachments", states: 2000, seed: 1, state: nil, in: TemporaryDirectory())
    }

    @Test("Under APFS rules every workload recovers: directories are synced with F_FULLFSYNC too")
    func apfs() throws {
        let scratch = TemporaryDirectory()
        let (status, reports, text) = try explore(["--workload", "attachment-delivery,append", "--states", "400", "--seed", "5", "--mode", "apfs"], in: scratch)
        #expect(status == 0, "\(text)")
        #expect(reports.count == 2)
        for report in reports { #expect((report["violations"] as? [Any])?.isEmpty == true, "\(text)") }
    }

    @Test("Without the checkpoint's sync before a drain removes the queue's copies of delivered attachments, ext4 can keep a removal and lose the checkpoint: a delivered record comes back without its copy and is set aside as damage")
    func checkpointBeforeAttachmentRemovalOnExt4() throws {
        let problems = try expectCaught("checkpoint-before-attachment-removal", workload: "attachment-delivery", states: 400, seed: 7, state: 25,
                                        mode: "ext4-ordered", in: TemporaryDirectory())
        #expect(problems.contains { $0.contains("was acknowledged intact but is set aside as damage") }, "\(problems)")
    }

    @Test("Under ext4 data=ordered rules, a drain delivering attachments recovers with no record set aside as damage")
    func attachmentDeliveryOnExt4() throws {
        let (status, reports, text) = try explore(["--workload", "attachment-delivery", "--states", "400", "--seed", "7", "--mode", "ext4-ordered"], in: TemporaryDirectory())
        #expect(status == 0, "\(text)")
        let report = try #require(reports.first, "\(text)")
        #expect((report["violations"] as? [Any])?.isEmpty == true, "\(text)")
        #expect((report["distinct"] as? Int ?? 0) > 1)
    }

    @Test("Without the sync after the dead-letter file is made, a checkpoint past a dead letter can outlive the letter")
    func deadLetterFileCreation() throws {
        try expectCaught("dead-letters-created", workload: "dead-letter", states: 2000, seed: 1, state: nil, in: TemporaryDirectory())
    }

    @Test("Without the sync before a producer makes a new pending file, a drain's seal not yet synced can be lost under its name, and the sealed records with it")
    func pendingReplaced() throws {
        try expectCaught("pending-replaced", workload: "seal-race", states: 2000, seed: 1, state: nil, in: TemporaryDirectory())
    }

    @Test("The explorer catches the loss of sync points the queue needs", arguments: [
        ("append-record", "append"), ("pending-created", "append"), ("format-marker-data", "append"), ("attachment-entry", "attachments"),
        ("key-forgotten", "if-changed"), ("dead-letter-data", "dead-letter"), ("delivered-attachment-entry", "attachment-delivery"),
        ("quarantine-data", "sealed-damage"), ("quarantine-created", "sealed-damage"), ("segment-kept", "full-disk-keep"),
    ])
    func neededSyncPoints(_ point: String, _ workload: String) throws {
        try expectCaught(point, workload: workload, states: 1000, seed: 7, state: nil, in: TemporaryDirectory())
    }

    /// Only 72 of the 8,941 states of if-changed under APFS rules show this loss, all in its last cuts; a random
    /// sample of 2,000 missed them with the first seed here. Each is one choice away from keeping everything.
    @Test("A left-out sync that only a few states of a large run show is caught whatever the seed: the states next to keeping everything are explored first",
          arguments: [588_011_307, 1, 2])
    func fewStatesShowTheLoss(_ seed: Int) throws {
        try expectCaught("key-forgotten", workload: "if-changed", states: 300, seed: seed, state: nil, mode: "apfs", in: TemporaryDirectory())
    }

    @Test("Without the sync of standard output, a drain into a file can move its checkpoint past lines a power cut takes back")
    func standardOutputFile() throws {
        try expectCaught("standard-output", workload: "standard-output-file", states: 1000, seed: 7, state: nil, in: TemporaryDirectory())
    }

    @Test("The explorer catches each reorder of the mutation catalogue on the workload that runs it", arguments: [
        ("checkpoint-before-delivery", "drain"), ("checkpoint-before-delivery", "typed-router"), ("coalesce-checkpoint-before-delivery", "coalesce"),
        ("lines-chunk-unsynced", "lines-stream"), ("requeue-letters-blanked-first", "requeue-resumed"), ("found-letters-unsynced", "dead-letter-killed"),
    ])
    func mutantsCaught(_ mutant: String, _ workload: String) throws {
        try expectCaught(mutant, workload: workload, states: 1000, seed: 7, state: nil, in: TemporaryDirectory(), option: "--mutant")
    }

    @Test("A write around the traced layer is reported before any state is explored: the trace must account for every change", arguments: [
        ("checkpoint-around-layer", "drain", "q/checkpoint"), ("standard-output-around-layer", "standard-output-file", "out.jsonl"),
    ])
    func writeAroundTheLayer(_ mutant: String, _ workload: String, _ file: String) throws {
        let (status, reports, text) = try explore(["--workload", workload, "--states", "100", "--seed", "7", "--mutant", mutant], in: TemporaryDirectory())
        #expect(status == 1, "\(text)")
        let violations = try #require(reports.first?["violations"] as? [[String: Any]], "\(text)")
        #expect(violations.count == 1 && violations.first?["state"] as? Int == -1, "\(text)")
        let problem = (violations.first?["problems"] as? [String])?.first ?? ""
        #expect(problem.contains("the trace does not account") && problem.contains(file), "\(text)")
    }

    @Test("A drain's whole catalogue entry: a harmless defect is run on its workloads and found harmless, with its reason")
    func catalogueEntry() throws {
        let scratch = TemporaryDirectory()
        let result = try run("share-stress", ["power-cut", "--json", "--dir", scratch.file("runs"), "--mutants", "--only",
                                              "without-sealed,checkpoint-before-delivery", "--states", "300", "--seed", "7"], in: scratch)
        #expect(result.status == 0, "\(result.output + result.stderr)")
        let objects = try result.lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(objects.count == 3, "\(result.output)")
        #expect(objects.first { $0["mutant"] as? String == "without-sealed" }?["caught"] as? Bool == false)
        #expect((objects.first { $0["mutant"] as? String == "without-sealed" }?["reason"] as? String)?.isEmpty == false)
        #expect(objects.first { $0["mutant"] as? String == "checkpoint-before-delivery" }?["caught"] as? Bool == true)
        #expect(objects.last?["caught"] as? Int == 1 && objects.last?["harmless"] as? Int == 1, "\(result.output)")
    }

    @Test("--list names every workload the tests explore and a catalogue of at least 25 defects")
    func list() throws {
        let result = try run("share-stress", ["power-cut", "--list"], in: TemporaryDirectory())
        #expect(result.status == 0, "\(result.stderr)")
        for name in Self.workloads { #expect(result.lines.contains { $0.hasPrefix("  \(name) ") }, "\(name) is not listed") }
        let catalogue = result.lines.drop { !$0.hasPrefix("mutation catalogue") }.dropFirst()
        #expect(catalogue.count >= 25, "\(result.output)")
    }
}
