import Foundation
import Testing

/// The man pages under Samples/man are what `--help-man` prints now, so they
/// cannot drift from the option tables, and groff formats them without a warning.
@Suite("Man pages")
struct ManPageTests {
    static let tools = ["share-append", "host-drain", "share-stress"]
    static let manDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Samples/man").path

    @Test("The shipped page is the one --help-man prints, with every section and option", arguments: tools)
    func shippedPageIsGenerated(tool: String) throws {
        let scratch = TemporaryDirectory()
        let generated = try run(tool, ["--help-man"], in: scratch)
        #expect(generated.status == 0, "\(generated.stderr)")
        let shipped = try String(contentsOfFile: Self.manDirectory + "/\(tool).1", encoding: .utf8)
        #expect(generated.output == shipped, "Samples/man/\(tool).1 is stale: regenerate it with `\(tool) --help-man`")
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"] {
            #expect(generated.output.contains("\n.SH \"\(section)\"\n") || generated.output.contains("\n.SH \(section)\n"), "\(section)")
        }
        // Every option --help lists is in the page.
        let help = try run(tool, ["--help"], in: scratch).output
        let options = help.split(separator: "\n").filter { $0.hasPrefix("  -") }
        #expect(!options.isEmpty)
        for line in options {
            let long = line.split(separator: " ").map { $0.trimmingCharacters(in: .punctuationCharacters.subtracting(["-"])) }.first { $0.hasPrefix("--") }
            let name = try #require(long)
            #expect(generated.output.contains(name.replacingOccurrences(of: "-", with: "\\-")), "\(name)")
        }
    }

    @Test("man -l renders each page at 80 columns without a warning", OptionalProgram.needs("man", "groff"), arguments: tools)
    func rendersWithoutWarnings(tool: String) throws {
        guard let man = OptionalProgram.required("man"), let groff = OptionalProgram.required("groff") else { return }
        let scratch = TemporaryDirectory()
        let page = Self.manDirectory + "/\(tool).1"
        let rendered = try run(man, ["-l", "--warnings=w", page],
                               environment: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat", "MAN_KEEP_FORMATTING": "", "LANG": "C.UTF-8"], in: scratch)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(rendered.stderr.isEmpty, "\(rendered.stderr)")
        #expect(rendered.output.contains("EXIT STATUS"))
        let strict = try run(groff, ["-man", "-ww", "-z", page], in: scratch)
        #expect(strict.status == 0)
        #expect(strict.stderr.isEmpty, "\(strict.stderr)")
    }
}
