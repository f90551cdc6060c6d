import Foundation
import Testing
import ShareQueueCore

/// Each kind of bad input: a clear error, its sysexits code, and a queue left
/// exactly as it was.
@Suite("Bad input")
struct BadInputTests {
    /// A queue holding two records, to show that a refused append changes nothing.
    static func populatedQueue(_ scratch: TemporaryDirectory) throws -> TestQueue {
        let queue = TestQueue(in: scratch)
        let result = try queue.append(["--lines"], stdin: "kept one\nkept two\n")
        #expect(result.status == 0)
        return queue
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let arguments: [String]
        let stdin: [UInt8]
        let status: Int32
        let message: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "invalid UTF-8 on stdin", arguments: [], stdin: [0x61, 0xFF, 0x62], status: 65, message: "not valid UTF-8"),
        Case(name: "invalid UTF-8 in one of several lines", arguments: ["--lines"], stdin: Array("ok\n".utf8) + [0xC3, 0x28], status: 65, message: "line 2"),
        Case(name: "broken JSON", arguments: ["--json"], stdin: Array("{\"a\":".utf8), status: 65, message: "invalid JSON"),
        Case(name: "broken JSON on one line of a batch", arguments: ["--json", "--lines"], stdin: Array("{}\n[1,]\n".utf8), status: 65, message: "line 2"),
        Case(name: "not a URL", arguments: ["--url"], stdin: Array("not a url\n".utf8), status: 65, message: "not a URL"),
        Case(name: "oversize record", arguments: ["--max-record-bytes", "1000"], stdin: Array(repeating: 0x61, count: 2000), status: 65, message: "above the limit"),
        Case(name: "empty stdin", arguments: [], stdin: [], status: 66, message: "empty"),
        Case(name: "only blank lines", arguments: ["--lines"], stdin: Array("\n\n\r\n".utf8), status: 66, message: "no non-empty line"),
        Case(name: "empty text argument", arguments: [""], stdin: [], status: 66, message: "empty"),
        Case(name: "unknown flag", arguments: ["--frobnicate"], stdin: Array("x".utf8), status: 64, message: "unknown option '--frobnicate'"),
        Case(name: "missing option value", arguments: ["--source"], stdin: Array("x".utf8), status: 64, message: "needs a value"),
        Case(name: "bad meta", arguments: ["--meta", "novalue", "x"], stdin: [], status: 64, message: "KEY=VALUE"),
        Case(name: "bad id", arguments: ["--id", "123", "x"], stdin: [], status: 64, message: "UUID"),
        Case(name: "id with several records", arguments: ["--id", "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9", "--lines"], stdin: Array("a\nb\n".utf8), status: 64, message: "--id"),
        Case(name: "json and url together", arguments: ["--json", "--url", "x"], stdin: [], status: 64, message: "not both"),
        Case(name: "bad number", arguments: ["--max-record-bytes", "lots", "x"], stdin: [], status: 64, message: "whole number"),
        Case(name: "bad URL argument", arguments: ["--url", "no scheme"], stdin: [], status: 65, message: "not a URL"),
        Case(name: "empty source", arguments: ["--source", "", "x"], stdin: [], status: 64, message: "source"),
        Case(name: "oversize argument", arguments: ["--max-record-bytes", "200", String(repeating: "y", count: 300)], stdin: [], status: 65, message: "above the limit"),
        Case(name: "missing attachment", arguments: ["--attach", "/nonexistent/photo.jpg"], stdin: [], status: 66, message: "does not exist"),
        Case(name: "JSON on stdin with an attachment", arguments: ["--json", "--attach", "/etc/passwd"], stdin: Array("{\"a\":".utf8), status: 64, message: "--json takes its value as TEXT"),
        Case(name: "a URL on stdin with an attachment", arguments: ["--url", "--attach", "/etc/passwd"], stdin: Array("https://swift.org".utf8), status: 64, message: "--url takes its value as TEXT"),
        Case(name: "attachment that is a directory", arguments: ["--attach", "/tmp"], stdin: [], status: 65, message: "regular file"),
        Case(name: "attachment over the limit", arguments: ["--attach", "/etc/passwd", "--max-attachment-bytes", "1"], stdin: [], status: 65, message: "over the limit"),
        Case(name: "attachment with --lines", arguments: ["--attach", "/etc/passwd", "--lines"], stdin: Array("a\n".utf8), status: 64, message: "--lines"),
    ]

    @Test("share-append refuses bad input and changes nothing", arguments: cases, [true, false])
    func refused(_ input: Case, queueExists: Bool) throws {
        let scratch = TemporaryDirectory()
        let q = queueExists ? try Self.populatedQueue(scratch).path : scratch.queue
        let before = snapshot(q)
        let result = try run("share-append", ["--dir", q] + input.arguments, stdinData: Data(input.stdin), in: scratch)
        #expect(result.status == input.status, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("share-append: error: "))
        #expect(result.stderr.contains(input.message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(snapshot(q) == before)
        // A queue that did not exist is not created for bad input.
        #expect(queueExists || !FileManager.default.fileExists(atPath: q))
    }

    @Test("Invalid UTF-8 in an argument is refused, not replaced")
    func invalidArgument() throws {
        let scratch = TemporaryDirectory()
        let queue = try Self.populatedQueue(scratch)
        let before = snapshot(queue.path)
        // Foundation's Process would re-encode the argument, so the shell passes the raw bytes.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "\"$0\" --dir \"$1\" \"$(printf 'a\\377b')\"", Executables.path("share-append"), queue.path]
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 65)
        #expect(snapshot(queue.path) == before)
    }

    @Test("A queue over its pending-bytes cap refuses appends with 75 until drained")
    func queueFull() throws {
        let scratch = TemporaryDirectory()
        let queue = try Self.populatedQueue(scratch)
        let before = snapshot(queue.path)
        let full = try queue.append(["--max-pending-bytes", "400", String(repeating: "y", count: 100)])
        #expect(full.status == 75)
        #expect(full.stderr.contains("the queue is full"))
        #expect(snapshot(queue.path) == before)
        try queue.drain(["-q"])
        let after = try queue.append(["--max-pending-bytes", "400", String(repeating: "y", count: 100)])
        #expect(after.status == 0)
    }

    @Test("host-drain refuses unknown flags and arguments with 64", arguments: [["--frobnicate"], ["extra"], ["--format", "xml"], ["--batch", "0"], ["--json"], ["--wait", "soon"],
                                                                             ["--watch", "--max", "2"]])
    func drainUsage(_ arguments: [String]) throws {
        let scratch = TemporaryDirectory()
        let queue = try Self.populatedQueue(scratch)
        let before = snapshot(queue.path)
        let result = try run("host-drain", ["--dir", queue.path] + arguments, in: scratch)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("host-drain: error: "))
        #expect(result.stderr.contains("USAGE: host-drain"))
        #expect(snapshot(queue.path) == before)
    }

    @Test("A directory that cannot be made is an error naming it, exit 73")
    func impossibleDirectory() throws {
        let scratch = TemporaryDirectory()
        let file = scratch.file("plain-file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        for tool in ["share-append", "host-drain"] {
            let result = try run(tool, ["--dir", file + "/queue"] + (tool == "share-append" ? ["x"] : []), in: scratch)
            #expect(result.status == 73, "\(tool): \(result.stderr)")
            #expect(result.stderr.contains(file + "/queue"))
            let notDirectory = try run(tool, ["--dir", file] + (tool == "share-append" ? ["x"] : []), in: scratch)
            #expect(notDirectory.status == 73)
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "x")
    }

    @Test("An unwritable directory is refused with 77 and left alone", OptionalProgram.needs(getuid() == 0 ? ["/usr/bin/setpriv"] : []))
    func unwritableDirectory() throws {
        let scratch = TemporaryDirectory()
        let queue = try Self.populatedQueue(scratch)
        let before = snapshot(queue.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: queue.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: queue.path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: queue.file("append.lock"))
        // Root ignores permissions, so run the tool as nobody when the tests run as root,
        // from a copy that nobody can reach whatever the checkout's permissions are.
        var command = [Executables.path("share-append"), "--dir", queue.path, "x"]
        if getuid() == 0 {
            let copy = scratch.file("share-append")
            try copyExecutable(command[0], to: copy)
            command[0] = copy
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.path)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: queue.path)
            // Root ignores permissions: setpriv (util-linux) drops them.
            guard OptionalProgram.required("/usr/bin/setpriv") != nil else { return }
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        }
        let result = try run(command[0], Array(command.dropFirst()), in: scratch)
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains(queue.path))
        #expect(snapshot(queue.path) == before)
    }

    @Test("A queue with a newer format is refused with 78 and never touched")
    func newerFormat() throws {
        let scratch = TemporaryDirectory()
        let queue = try Self.populatedQueue(scratch)
        try Data("ShareQueue queue format 2\n".utf8).write(to: URL(fileURLWithPath: queue.file("format")))
        let before = snapshot(queue.path)
        let append = try queue.append(["x"])
        #expect(append.status == 78)
        #expect(append.stderr.contains("newer"))
        for arguments in [[], ["--status"], ["--peek"]] {
            let drain = try run("host-drain", ["--dir", queue.path] + arguments, in: scratch)
            #expect(drain.status == 78)
            #expect(drain.stdout.isEmpty)
        }
        #expect(snapshot(queue.path) == before)
    }

    @Test("A symlink planted as the pending file is refused, and a drain moves it aside unread")
    func hostileSymlink() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["first"])
        try queue.drain(["-q"])
        let victim = scratch.file("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        // In place of the empty pending file the drain made.
        try FileManager.default.removeItem(atPath: queue.pendingPath)
        try FileManager.default.createSymbolicLink(atPath: queue.pendingPath, withDestinationPath: victim)
        let append = try queue.append(["x"])
        #expect(append.status == 78)
        #expect(append.stderr.contains("pending.log"))
        let drain = try queue.drain()
        #expect(drain.status == 0)
        #expect(drain.stdout.isEmpty)
        #expect(drain.warned(.fileMovedAside(path: queue.pendingPath, problem: anyText, movedTo: queue.file("rejected-") + anyText, handling: .unread)),
                "\(drain.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        let retry = try queue.append(["second"])
        #expect(retry.status == 0)
        let final = try queue.drain()
        #expect(try jsonObjects(final.stdout).map { $0["text"] as! String } == ["second"])
    }

    @Test("A symlink or FIFO planted as a sealed segment is moved aside without being read")
    func hostileSegment() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["real"])
        let victim = scratch.file("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: queue.file("sealed-000000000001.log"), withDestinationPath: victim)
        #expect(mkfifo(queue.file("sealed-000000000002.log"), 0o600) == 0)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try jsonObjects(drain.stdout).map { $0["text"] as! String } == ["real"])
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(FileManager.default.fileExists(atPath: victim))
    }
}
