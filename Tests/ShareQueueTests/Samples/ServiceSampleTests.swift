import Foundation
import Testing

/// The service samples README points to are checked, not just shipped: the
/// systemd units by `systemd-analyze verify`, the launchd agent by a plist
/// parser, and each runs the tool the way README says.
@Suite("Service samples")
struct ServiceSampleTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Samples").path

    /// Runs a program to its end and returns its status and what it printed on either stream.
    static func output(_ program: String, _ arguments: [String], in scratch: TemporaryDirectory) throws -> (status: Int32, text: String) {
        let result = try run(program, arguments, in: scratch)
        return (result.status, result.output + result.stderr)
    }

    @Test("The systemd units verify without a warning, with host-drain where ExecStart= says", OptionalProgram.needs("systemd-analyze"))
    func systemdUnits() throws {
        guard let systemdAnalyze = OptionalProgram.required("systemd-analyze") else { return }
        let scratch = TemporaryDirectory()
        let names = ["share-queue-drain.service", "share-queue-drain.timer", "share-queue-drain.path", "share-queue-watch.service"]
        for name in names {
            // The built tool where the sample expects the installed one, so that verify checks it can run.
            let text = try String(contentsOfFile: Self.samples + "/" + name, encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/host-drain", with: Executables.path("host-drain"))
            try text.write(toFile: scratch.file(name), atomically: true, encoding: .utf8)
        }
        let verify = try Self.output(systemdAnalyze, ["verify"] + names.map(scratch.file), in: scratch)
        #expect(verify.status == 0, "\(verify.text)")
        #expect(verify.text.isEmpty, "\(verify.text)")
        let path = try String(contentsOfFile: scratch.file("share-queue-drain.path"), encoding: .utf8)
        #expect(path.contains("PathModified=%h/.local/share/ShareQueue/default/pending.log"))
        #expect(path.contains("Unit=share-queue-drain.service"))
    }

    @Test("The launchd agent is a property list that runs host-drain on the queue's pending file and every minute", OptionalProgram.needs("python3"))
    func launchdAgent() throws {
        let scratch = TemporaryDirectory()
        let plist = Self.samples + "/com.example.share-queue-drain.plist"
        // Python's plistlib, the parser the sample is checked with; its summary comes back as JSON.
        let script = """
            import json, plistlib, sys
            agent = plistlib.load(open(sys.argv[1], "rb"))
            print(json.dumps({"label": agent["Label"], "program": agent["ProgramArguments"],
                              "watch": agent["WatchPaths"], "interval": agent["StartInterval"],
                              "queue": agent["EnvironmentVariables"]["SHARE_QUEUE_DIR"]}))
            """
        guard let python = OptionalProgram.required("python3") else { return }
        let parsed = try run(python, ["-c", script, plist], in: scratch)
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let agent = try #require(try JSONSerialization.jsonObject(with: parsed.stdout) as? [String: Any])
        #expect(agent["label"] as? String == "com.example.share-queue-drain")
        let program = agent["program"] as? [String] ?? []
        #expect(program.first == "/usr/local/bin/host-drain")
        #expect(program.contains("--store"))
        let queue = agent["queue"] as? String ?? ""
        #expect(agent["watch"] as? [String] == [queue + "/pending.log"])
        #expect(agent["interval"] as? Int == 60)
        // Every option it passes is one host-drain knows.
        let help = try run("host-drain", ["--help"], in: scratch).output
        for option in program where option.hasPrefix("-") { #expect(help.contains(option), "\(option)") }
    }
}
