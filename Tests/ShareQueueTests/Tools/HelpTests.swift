import Foundation
import Testing

/// Help that answers: examples at the end of `--help`, and a near miss of an
/// option named in the error.
@Suite("Help")
struct HelpTests {
    @Test("--help ends with examples, each a command line of the tool", arguments: ["share-append", "host-drain"])
    func helpEndsWithExamples(tool: String) throws {
        let scratch = TemporaryDirectory()
        let help = try run(tool, ["--help"], in: scratch)
        #expect(help.status == 0)
        let sections = help.output.components(separatedBy: "\nEXAMPLES:\n")
        try #require(sections.count == 2, "\(help.output)")
        #expect(sections[0].contains("\nOPTIONS:\n"))
        let commands = sections[1].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.contains(tool + " ") }
        #expect(commands.count >= 3, "\(sections[1])")
    }

    @Test("An unknown option names the nearest known one, with the usage line and exit 64")
    func unknownOptionSuggestsNearest() throws {
        let scratch = TemporaryDirectory()
        let cases: [(tool: String, typed: String, meant: String)] = [
            ("host-drain", "--stauts", "--status"), ("host-drain", "--formt", "--format"), ("host-drain", "--requeue", "--requeue-dead"),
            ("share-append", "--qiuet", "--quiet"), ("share-append", "--max-record", "--max-record-bytes"), ("share-append", "-dir", "--dir"),
        ]
        for (tool, typed, meant) in cases {
            let result = try run(tool, ["--dir", scratch.queue, typed], in: scratch)
            #expect(result.status == 64)
            let lines = result.stderr.split(separator: "\n").map(String.init)
            #expect(lines.first == "\(tool): error: unknown option '\(typed)'; did you mean '\(meant)'?", "\(result.stderr)")
            #expect(lines.dropFirst().first?.hasPrefix("USAGE: \(tool)") == true, "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // Nothing near: no guess.
        let far = try run("host-drain", ["--zzzzzzzz"], in: scratch)
        #expect(far.status == 64)
        #expect(far.stderr.hasPrefix("host-drain: error: unknown option '--zzzzzzzz'\nUSAGE: host-drain"), "\(far.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.queue))
    }
}
