import Foundation
import Testing
@testable import ShareQueueCore

/// `share-stress` itself, bounded to fit in `swift test`.
@Suite("Stress and crash points", .serialized, .runTimeLimit(minutes: 5))
struct StressTests {
    @Test("Every crash point: producers and drainers die there, fresh processes recover, nothing is lost")
    func crashPoints() throws {
        let scratch = TemporaryDirectory()
        let result = try run("share-stress", ["--crash-points", "--json", "--dir", scratch.file("runs")], in: scratch)
        #expect(result.status == 0, "\(result.output)\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: result.stdout) as! [String: Any]
        let points = object["points"] as! [[String: Any]]
        #expect(points.map { $0["name"] as! String } == CrashPoint.allCases.filter(\.isReachedByStress).map(\.rawValue))
        for point in points {
            #expect(point["ok"] as? Bool == true, "\(point)")
            #expect((point["runs"] as? Int ?? 0) >= 1)
        }
    }

    @Test("Concurrent producers and drainers under random SIGKILLs lose nothing", arguments: [false, true])
    func killedAtRandom(library: Bool) throws {
        let scratch = TemporaryDirectory()
        let arguments = ["--producers", "4", "--records", library ? "300" : "120", "--drainers", "2", "--kill", "--json",
                         "--dir", scratch.file("run")] + (library ? ["--library"] : [])
        let result = try run("share-stress", arguments, in: scratch)
        #expect(result.status == 0, "\(result.output)\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: result.stdout) as! [String: Any]
        #expect(report["lost"] as? Int == 0)
        #expect(report["corrupt"] as? Int == 0)
        #expect(report["outOfOrder"] as? Int == 0)
        #expect(report["passed"] as? Bool == true)
        #expect((report["acknowledged"] as? Int ?? 0) > 100 / sanitizerAllowance)
        #expect((report["kills"] as? Int ?? 0) > 0)
        #expect((report["delivered"] as? Int ?? 0) >= (report["acknowledged"] as? Int ?? 0))
        for key in ["duplicates", "seconds", "unacknowledgedDelivered", "quarantined"] { #expect(report[key] != nil) }
    }

    @Test("A store fed by cron-style drains and by killed and restarted watchers holds every acknowledged record exactly once",
          arguments: [[String](), ["--watch"]])
    func storeExactlyOnceUnderKills(_ extra: [String]) throws {
        let scratch = TemporaryDirectory()
        let result = try run("share-stress", ["--producers", "4", "--records", "100", "--drainers", "2", "--kill", "--store", "--json",
                                              "--dir", scratch.file("run")] + extra, in: scratch)
        #expect(result.status == 0, "\(result.output)\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: result.stdout) as! [String: Any]
        #expect(report["lost"] as? Int == 0)
        #expect(report["duplicates"] as? Int == 0)
        #expect(report["corrupt"] as? Int == 0)
        #expect((report["acknowledged"] as? Int ?? 0) > 100 / sanitizerAllowance)
        #expect((report["kills"] as? Int ?? 0) > 0)
    }

    @Test("share-stress fails, exit 1, when records are lost")
    func detectsLoss() throws {
        let scratch = TemporaryDirectory()
        // A drainer whose every run dies after its sink took a batch but whose output is thrown away
        // cannot lose anything; deleting the queue behind the tools' back must be caught instead.
        let directory = scratch.file("run")
        let saboteur = Process()
        saboteur.executableURL = URL(fileURLWithPath: "/bin/sh")
        saboteur.arguments = ["-c", "while :; do rm -f \"$0\"/queue/pending.log \"$0\"/queue/sealed-*.log; sleep 0.005; done", directory]
        try saboteur.run()
        defer { saboteur.terminate() }
        let result = try run("share-stress", ["--producers", "2", "--records", "100", "--drainers", "0", "--dir", directory, "--json"], in: scratch)
        #expect(result.status == 1)
        let report = try JSONSerialization.jsonObject(with: result.stdout) as! [String: Any]
        #expect((report["lost"] as? Int ?? 0) > 0)
        #expect(report["passed"] as? Bool == false)
    }
}
