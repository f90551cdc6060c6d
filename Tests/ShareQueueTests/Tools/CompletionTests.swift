import Foundation
import Testing

/// The scripts `--generate-completion-script SHELL` prints, loaded in the real
/// shells and asked what they offer.
@Suite("Shell completions")
struct CompletionTests {
    /// A scratch directory with one folder and one file, to tell directory completion from file completion.
    static func scratchWithEntries() -> TemporaryDirectory {
        let scratch = TemporaryDirectory()
        try? FileManager.default.createDirectory(atPath: scratch.file("tree/sub"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: scratch.file("tree/notes.txt"), contents: Data())
        return scratch
    }

    /// The shell's path, or nil after recording that it is missing (a test
    /// that needs zsh or fish is skipped without it, except on CI).
    static func shell(_ name: String) -> String? { OptionalProgram.required(name) }

    /// The tool's completion script for `shell`, written to a file.
    static func script(_ tool: String, _ shell: String, in scratch: TemporaryDirectory) throws -> String {
        let result = try run(tool, ["--generate-completion-script", shell], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        let path = scratch.file("\(tool).\(shell)")
        try result.stdout.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// What bash's completion function offers for `words`, the last being the word under the cursor.
    static func bashOffers(_ bash: String, _ tool: String, _ words: [String], in scratch: TemporaryDirectory) throws -> [String] {
        let script = try script(tool, "bash", in: scratch)
        let program = """
            source "$1"; shift
            spec=$(complete -p "$1") || exit 3
            function=${spec#*-F }; function=${function%% *}
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            "$function" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try run(bash, ["--norc", "--noprofile", "-c", program, "bash", script, tool] + words, in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        return result.lines.sorted()
    }

    @Test("bash offers options, --format's values, and only directories for --dir")
    func bash() throws {
        guard let bash = Self.shell("bash") else { return }
        let scratch = Self.scratchWithEntries()
        let tree = scratch.file("tree")
        let status = try Self.bashOffers(bash, "host-drain", ["--st"], in: scratch)
        #expect(status == ["--status", "--store"])
        #expect(try Self.bashOffers(bash, "host-drain", ["--format", ""], in: scratch) == ["json", "text"])
        #expect(try Self.bashOffers(bash, "host-drain", ["--dir", tree + "/"], in: scratch) == [tree + "/sub"])
        #expect(try Self.bashOffers(bash, "host-drain", ["--dir", "=", tree + "/"], in: scratch) == [tree + "/sub"])
        #expect(try Self.bashOffers(bash, "share-append", ["--attach", tree + "/"], in: scratch) == [tree + "/notes.txt", tree + "/sub"])
        let all = try Self.bashOffers(bash, "share-append", ["-"], in: scratch)
        #expect(all.contains("--max-record-bytes") && all.contains("-q") && all.contains("--dir"))
        #expect(try Self.bashOffers(bash, "share-stress", ["--crash"], in: scratch) == ["--crash-points"])
        // A value the tool cannot guess gets no options offered in its place.
        #expect(try Self.bashOffers(bash, "host-drain", ["--batch", ""], in: scratch) == [])
    }

    /// What fish offers for `line`, the candidates without their descriptions.
    static func fishOffers(_ fish: String, _ tool: String, _ line: String, in scratch: TemporaryDirectory) throws -> [String] {
        let script = try script(tool, "fish", in: scratch)
        let result = try run(fish, ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, line], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        return result.lines.map { String($0.split(separator: "\t", omittingEmptySubsequences: false)[0]) }.sorted()
    }

    @Test("fish offers options with their help, --format's values, and only directories for --dir", OptionalProgram.needs("fish"))
    func fish() throws {
        guard let fish = Self.shell("fish") else { return }
        let scratch = Self.scratchWithEntries()
        let tree = scratch.file("tree")
        #expect(try Self.fishOffers(fish, "host-drain", "host-drain --st", in: scratch) == ["--status", "--store"])
        #expect(try Self.fishOffers(fish, "host-drain", "host-drain --format ", in: scratch) == ["json", "text"])
        #expect(try Self.fishOffers(fish, "host-drain", "host-drain --dir \(tree)/", in: scratch) == [tree + "/sub/"])
        #expect(try Self.fishOffers(fish, "share-append", "share-append --attach \(tree)/", in: scratch) == [tree + "/notes.txt", tree + "/sub/"])
        #expect(try Self.fishOffers(fish, "share-stress", "share-stress --crash", in: scratch) == ["--crash-points"])
        let script = try Self.script("host-drain", "fish", in: scratch)
        let described = try run(fish, ["--no-config", "-c", "source $argv[1]; complete -C 'host-drain --peek'", script], in: scratch)
        #expect(described.output == "--peek\tPrint the pending records without draining them; it takes only --dir or --group, and --format.\n")
    }

    /// The completion zsh registers for `tool` after `compinit` and sourcing the
    /// script, and the `_arguments` specs of its function, one a line.
    static func zshSpecs(_ zsh: String, _ tool: String, in scratch: TemporaryDirectory) throws -> (function: String, specs: [String]) {
        let script = try script(tool, "zsh", in: scratch)
        let program = """
            autoload -Uz compinit && compinit -u -D || exit 3
            source $1 || exit 4
            print -r -- $_comps[$2]
            # The words of the one _arguments call, as zsh parsed them.
            local body=${functions[$_comps[$2]]}
            local -a words=(${(z)body})
            print -rl -- ${(Q)words[(r)_arguments,-1]}
            """
        let result = try run(zsh, ["-f", "-c", program, "zsh", script, tool], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        return (result.lines.first ?? "", Array(result.lines.dropFirst()))
    }

    @Test("zsh loads the script, registers it, and hands _arguments every option with its value's completion", OptionalProgram.needs("zsh"))
    func zsh() throws {
        guard let zsh = Self.shell("zsh") else { return }
        let scratch = TemporaryDirectory()
        let drain = try Self.zshSpecs(zsh, "host-drain", in: scratch)
        #expect(drain.function == "_host-drain")
        #expect(drain.specs.contains { $0.hasPrefix("--dir[The queue directory.") && $0.hasSuffix(":DIR:_files -/") })
        #expect(drain.specs.contains { $0.hasPrefix("--format[") && $0.hasSuffix(":json|text:(json text)") })
        #expect(drain.specs.contains { $0.hasPrefix("--status[") })
        #expect(drain.specs.contains { $0.hasPrefix("(--quiet -q){--quiet,-q}[") })
        let append = try Self.zshSpecs(zsh, "share-append", in: scratch)
        #expect(append.specs.contains { $0.hasPrefix("*--attach[") && $0.hasSuffix(":FILE:_files") })
        #expect(append.specs.contains { $0.hasPrefix("*--meta[") })
        // Every option --help lists is in the specs.
        let help = try run("share-append", ["--help"], in: scratch).output
        for line in help.split(separator: "\n") where line.hasPrefix("  -") {
            let name = String(line.split(separator: " ").first { $0.hasPrefix("--") } ?? "").trimmingCharacters(in: [","])
            #expect(append.specs.contains { $0.contains(name) }, "\(name)")
        }
    }

    /// What zsh offers for `line`, typed at an interactive prompt with the
    /// tool's script loaded (Tests/Completions/zsh-offers.zsh drives it in a pseudo-terminal).
    static func zshOffers(_ zsh: String, _ tool: String, _ line: String, in scratch: TemporaryDirectory) throws -> Set<String> {
        let script = try script(tool, "zsh", in: scratch)
        let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Completions/zsh-offers.zsh").path
        let result = try run("/usr/bin/env", ["-C", scratch.path, "timeout", "20", zsh, "-f", driver, script, line], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        return Set(result.lines)
    }

    @Test("zsh offers the options, the --format values and only directories for --dir", OptionalProgram.needs("zsh"))
    func zshOffersAtThePrompt() throws {
        guard let zsh = Self.shell("zsh") else { return }
        let scratch = Self.scratchWithEntries()
        #expect(try Self.zshOffers(zsh, "host-drain", "host-drain --st", in: scratch) == ["--status", "--store"])
        #expect(try Self.zshOffers(zsh, "host-drain", "host-drain --format ", in: scratch) == ["json", "text"])
        #expect(try Self.zshOffers(zsh, "host-drain", "host-drain --dir tree/", in: scratch) == ["sub"])
        #expect(try Self.zshOffers(zsh, "share-append", "share-append --attach tree/", in: scratch) == ["sub", "notes.txt"])
    }
}
