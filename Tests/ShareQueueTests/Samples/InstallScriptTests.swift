import Foundation
import Testing

/// `Samples/install.sh`, README's install command, run into a temporary
/// DESTDIR with the tools this test run built (`--from`, so that it needs no
/// release build): the tools themselves, man and each shell (each where it is
/// installed, and always under CI) find what it put there, and uninstall takes
/// exactly that away again.
@Suite("Install script")
struct InstallScriptTests {
    static let script = ServiceSampleTests.samples + "/install.sh"
    static let tools = ["share-append", "host-drain", "share-stress"]
    /// A prefix with a space, so that every path in the script is seen to be quoted.
    static let prefix = "/opt/share queue"

    /// Every file under the prefix install must make, relative to it.
    static let expected: Set<String> = Set(tools.flatMap { tool in
        ["bin/\(tool)", "share/man/man1/\(tool).1", "share/bash-completion/completions/\(tool)",
         "share/zsh/site-functions/_\(tool)", "share/fish/vendor_completions.d/\(tool).fish"]
    })

    /// The regular files and links under `root`, relative to it.
    static func files(under root: String) -> Set<String> {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: Set<String> = []
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), isDirectory.boolValue { continue }
            found.insert(path)
        }
        return found
    }

    static func installer(_ arguments: [String], stage: String, in scratch: TemporaryDirectory) throws -> ProcessResult {
        try run("/bin/sh", [script] + arguments, environment: ["DESTDIR": stage, "PREFIX": prefix], in: scratch)
    }

    @Test("install puts the tools, pages and completions where each is looked for; uninstall removes exactly those")
    func installAndUninstall() throws {
        let scratch = TemporaryDirectory()
        let stage = scratch.file("stage")
        let root = stage + Self.prefix
        // Something already there that is not ours must survive both.
        try FileManager.default.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: root + "/bin/other-tool", contents: Data("#!/bin/sh\n".utf8)))

        let install = try Self.installer(["install", "--from", Executables.directory.path], stage: stage, in: scratch)
        #expect(install.status == 0, "\(install.stderr)")
        #expect(Set(install.lines) == Set(Self.expected.map { "installed \(root)/\($0)" }))
        #expect(Self.files(under: root) == Self.expected.union(["bin/other-tool"]))
        // Run again over itself, as an upgrade does.
        #expect(try Self.installer(["--from=" + Executables.directory.path], stage: stage, in: scratch).status == 0)

        for tool in Self.tools {
            let installed = try run(root + "/bin/" + tool, ["--version"], in: scratch)
            #expect(installed.status == 0, "\(installed.stderr)")
            #expect(installed.output == (try run(tool, ["--version"], in: scratch)).output)
            #expect(try String(contentsOfFile: root + "/share/man/man1/\(tool).1", encoding: .utf8)
                == (try run(tool, ["--help-man"], in: scratch)).output)
        }

        let uninstall = try Self.installer(["uninstall"], stage: stage, in: scratch)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Set(uninstall.lines) == Set(Self.expected.map { "removed \(root)/\($0)" }))
        #expect(Self.files(under: stage) == ["\(Self.prefix.dropFirst())/bin/other-tool"])
        let again = try Self.installer(["uninstall"], stage: stage, in: scratch)
        #expect(again.status == 0 && again.stdout.isEmpty, "\(again.stderr)")
    }

    /// A fresh install of the tools this run built under the prefix, in a stage of `scratch`; returns the prefix's path there.
    static func installed(in scratch: TemporaryDirectory) throws -> String {
        let stage = scratch.file("stage")
        let install = try installer(["install", "--from", Executables.directory.path], stage: stage, in: scratch)
        #expect(install.status == 0, "\(install.stderr)")
        return stage + prefix
    }

    @Test("man renders each installed page, and finds it by name", OptionalProgram.needs("man", "groff"))
    func manFindsThePages() throws {
        let scratch = TemporaryDirectory()
        try Self.manFindsThePages(try Self.installed(in: scratch), in: scratch)
    }

    @Test("bash-completion's loader finds the installed bash completion", OptionalProgram.needs("bash"),
          .enabled(if: OptionalProgram.isCI || FileManager.default.fileExists(atPath: "/usr/share/bash-completion/bash_completion"),
                   "not run: bash-completion is not installed (CI requires it; .ci/run installs it)"))
    func bashLoadsTheCompletion() throws {
        let scratch = TemporaryDirectory()
        try Self.bashLoadsTheCompletion(try Self.installed(in: scratch), in: scratch)
    }

    @Test("zsh's compinit finds the installed zsh completions", OptionalProgram.needs("zsh"))
    func zshFindsTheCompletion() throws {
        let scratch = TemporaryDirectory()
        try Self.zshFindsTheCompletion(try Self.installed(in: scratch), in: scratch)
    }

    @Test("fish finds the installed fish completions", OptionalProgram.needs("fish"))
    func fishFindsTheCompletion() throws {
        let scratch = TemporaryDirectory()
        try Self.fishFindsTheCompletion(try Self.installed(in: scratch), in: scratch)
    }

    /// `man -l` renders each installed page, and `man -M` finds it by name where man looks.
    static func manFindsThePages(_ root: String, in scratch: TemporaryDirectory) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/man") else {
            Issue.record("man is needed to check the installed pages (.ci/run installs man-db)")
            return
        }
        let environment = ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat", "LANG": "C.UTF-8"]
        for tool in tools {
            let byPath = try run("/usr/bin/man", ["-l", "--warnings=w", root + "/share/man/man1/\(tool).1"], environment: environment, in: scratch)
            #expect(byPath.status == 0 && byPath.stderr.isEmpty, "\(byPath.stderr)")
            #expect(byPath.output.contains("SYNOPSIS") && byPath.output.contains(tool))
            let byName = try run("/usr/bin/man", ["-M", root + "/share/man", tool], environment: environment, in: scratch)
            #expect(byName.status == 0, "\(byName.stderr)")
            #expect(byName.output == byPath.output)
        }
    }

    /// bash-completion's own loader finds the installed file when the prefix's
    /// share folder is on XDG_DATA_DIRS (as /usr/local/share is by default), and
    /// what it loads completes options.
    static func bashLoadsTheCompletion(_ root: String, in scratch: TemporaryDirectory) throws {
        let loader = "/usr/share/bash-completion/bash_completion"
        guard let bash = CompletionTests.shell("bash") else { return }
        guard FileManager.default.fileExists(atPath: loader) else {
            Issue.record("bash-completion is needed to check where the bash completion is installed (.ci/run installs it)")
            return
        }
        let program = """
            source "$1" || exit 3
            # bash-completion 2.12 calls its loader _comp_load; earlier ones, __load_completion.
            if declare -F _comp_load > /dev/null; then _comp_load host-drain; else __load_completion host-drain; fi || exit 4
            spec=$(complete -p host-drain) || exit 5
            function=${spec#*-F }; function=${function%% *}
            COMP_WORDS=(host-drain --st); COMP_CWORD=1; COMP_LINE="host-drain --st"; COMP_POINT=${#COMP_LINE}
            "$function" host-drain --st host-drain
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try run(bash, ["--norc", "--noprofile", "-c", program, "bash", loader],
                             environment: ["XDG_DATA_DIRS": root + "/share", "BASH_COMPLETION_USER_DIR": scratch.file("none")], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.sorted() == ["--status", "--store"], "\(result.stderr)")
    }

    /// zsh's compinit, with the prefix's site-functions on fpath, registers each tool's function.
    static func zshFindsTheCompletion(_ root: String, in scratch: TemporaryDirectory) throws {
        guard let zsh = CompletionTests.shell("zsh") else { return }
        let program = """
            fpath=("$1" $fpath)
            autoload -Uz compinit && compinit -u -D || exit 3
            for tool in share-append host-drain share-stress; do print -r -- "$tool $_comps[$tool]"; done
            """
        let result = try run(zsh, ["-f", "-c", program, "zsh", root + "/share/zsh/site-functions"], in: scratch)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.lines == tools.map { "\($0) _\($0)" })
    }

    /// fish, with the prefix's share folder on XDG_DATA_DIRS, loads the vendor
    /// completion on first use (of a command it finds on the PATH).
    static func fishFindsTheCompletion(_ root: String, in scratch: TemporaryDirectory) throws {
        guard let fish = CompletionTests.shell("fish") else { return }
        let environment = ["XDG_DATA_DIRS": root + "/share", "XDG_CONFIG_HOME": scratch.file("config"), "HOME": scratch.path,
                           "PATH": root + "/bin:/usr/bin:/bin"]
        let result = try run(fish, ["-c", "complete -C 'host-drain --st'"], environment: environment, in: scratch)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.lines.map { String($0.split(separator: "\t")[0]) }.sorted() == ["--status", "--store"])
    }

    @Test("A relative DESTDIR and --from are the caller's, not the package's")
    func relativePaths() throws {
        let scratch = TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: scratch.file("built"), withDestinationPath: Executables.directory.path)
        let install = try run("/usr/bin/env", ["-C", scratch.path, "DESTDIR=stage", "PREFIX=/usr", "sh", Self.script, "--from", "built"], in: scratch)
        #expect(install.status == 0, "\(install.stderr)")
        #expect(Self.files(under: scratch.file("stage/usr")) == Set(Self.expected))
        let uninstall = try run("/usr/bin/env", ["-C", scratch.path, "DESTDIR=stage", "PREFIX=/usr", "sh", Self.script, "uninstall"], in: scratch)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Self.files(under: scratch.file("stage")).isEmpty)
    }

    @Test("Folders install makes are 0755 under any umask; a folder at a file's name stops it with 73, and uninstall removes the rest and names it")
    func foldersAndUmask() throws {
        let scratch = TemporaryDirectory()
        let stage = scratch.file("stage")
        let root = stage + Self.prefix
        let install = try run("/bin/sh", ["-c", "umask 000; exec sh \"$0\" --from \"$1\"", Self.script, Executables.directory.path],
                              environment: ["DESTDIR": stage, "PREFIX": Self.prefix], in: scratch)
        #expect(install.status == 0, "\(install.stderr)")
        for folder in ["", "/bin", "/share/man/man1", "/share/fish/vendor_completions.d"] {
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: root + folder)[.posixPermissions] as? Int)
            #expect(mode == 0o755, "\(folder): \(String(mode, radix: 8))")
        }
        // A folder where a tool goes: not moved into, not called installed.
        #expect(unlink(root + "/bin/host-drain") == 0)
        try FileManager.default.createDirectory(atPath: root + "/bin/host-drain", withIntermediateDirectories: false)
        let blocked = try Self.installer(["--from", Executables.directory.path], stage: stage, in: scratch)
        #expect(blocked.status == 73 && blocked.stderr.contains("a folder is in the way: \(root)/bin/host-drain"), "\(blocked.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/bin/host-drain").isEmpty)
        #expect(!blocked.lines.contains("installed \(root)/bin/host-drain"))
        let uninstall = try Self.installer(["uninstall"], stage: stage, in: scratch)
        #expect(uninstall.status == 73 && uninstall.stderr.contains("cannot remove \(root)/bin/host-drain"), "\(uninstall.stderr)")
        #expect(Self.files(under: stage).isEmpty)
        // Nothing of a copy is left, under any name.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/bin") == ["host-drain"])
    }

    @Test("A folder on the way that anyone may write, without the sticky bit, or that another user owns, is refused before anything is put there")
    func foldersOthersMayChange() throws {
        let scratch = TemporaryDirectory()
        let stage = scratch.file("stage")
        try FileManager.default.createDirectory(atPath: stage + Self.prefix + "/bin", withIntermediateDirectories: true)
        #expect(chmod(stage, 0o777) == 0)
        let open = try Self.installer(["--from", Executables.directory.path], stage: stage, in: scratch)
        #expect(open.status == 73 && open.stderr.contains("another user may change \(stage)"), "\(open.stderr)")
        #expect(Self.files(under: stage).isEmpty)
        // Sticky, as /tmp is: others may not rename what is not theirs.
        #expect(chmod(stage, 0o1777) == 0)
        #expect(try Self.installer(["--from", Executables.directory.path], stage: stage, in: scratch).status == 0)
        guard TestUsers.canRun, TestUsers.require() else { return }
        // Writable by a group other than root's.
        #expect(chmod(stage, 0o775) == 0)
        TestUsers.chown(stage, "root", TestUsers.group)
        let grouped = try Self.installer(["--from", Executables.directory.path], stage: stage, in: scratch)
        #expect(grouped.status == 73 && grouped.stderr.contains("another user may change \(stage);"), "\(grouped.stderr)")
        #expect(chmod(stage, 0o755) == 0)
        TestUsers.chown(stage, "root", "root")
        TestUsers.chown(stage + Self.prefix + "/bin", TestUsers.outsider)
        let owned = try Self.installer(["--from", Executables.directory.path], stage: stage, in: scratch)
        #expect(owned.status == 73 && owned.stderr.contains("another user may change \(stage + Self.prefix)/bin"), "\(owned.stderr)")
        // Root's own folder and symlink, but inside another user's folder: what the symlink leads to is checked too.
        let theirs = scratch.file("theirs")
        try FileManager.default.createDirectory(atPath: theirs + "/real", withIntermediateDirectories: true)
        TestUsers.chown(theirs, TestUsers.outsider)
        try FileManager.default.createSymbolicLink(atPath: scratch.file("linked"), withDestinationPath: theirs + "/real")
        let linked = try Self.installer(["--from", Executables.directory.path], stage: scratch.file("linked"), in: scratch)
        // Named as the system resolves it, which may spell the scratch folder otherwise.
        #expect(linked.status == 73 && linked.stderr.contains("/theirs; not installing there"), "\(linked.stderr)")
        #expect(Self.files(under: theirs).isEmpty)
    }

    @Test("A user installs into a prefix of their own, as for ~/.local, and nothing is made outside it", .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func installAsAUser() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.path)
        let home = scratch.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        TestUsers.chown(home, TestUsers.producer)
        let rootBefore = try FileManager.default.contentsOfDirectory(atPath: "/")
        let install = try run("/usr/bin/setpriv", ["--reuid=\(TestUsers.producer)", "--regid=nogroup", "--init-groups", "/bin/sh", Self.script,
                                                   "--from", Executables.directory.path], environment: ["PREFIX": home + "/.local"], in: scratch)
        #expect(install.status == 0, "\(install.stderr)")
        #expect(Self.files(under: home + "/.local") == Self.expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "/").filter { !rootBefore.contains($0) }.isEmpty)
    }

    @Test("A wrong argument, a relative PREFIX, or a folder without the tools changes nothing")
    func badInput() throws {
        let scratch = TemporaryDirectory()
        let stage = scratch.file("stage")
        #expect(try Self.installer(["instal"], stage: stage, in: scratch).status == 64)
        #expect(try Self.installer(["--from"], stage: stage, in: scratch).status == 64)
        let relative = try run("/bin/sh", [Self.script, "--from", Executables.directory.path], environment: ["DESTDIR": stage, "PREFIX": "usr/local"], in: scratch)
        #expect(relative.status == 64 && relative.stderr.contains("absolute"), "\(relative.stderr)")
        let empty = try Self.installer(["--from", scratch.path], stage: stage, in: scratch)
        #expect(empty.status == 66 && empty.stderr.contains("no built share-append"), "\(empty.stderr)")
        #expect(!FileManager.default.fileExists(atPath: stage))
        let help = try Self.installer(["--help"], stage: stage, in: scratch)
        #expect(help.status == 0 && help.output.contains("PREFIX") && help.output.contains("uninstall"))
    }
}
