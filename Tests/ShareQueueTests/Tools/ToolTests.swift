import Foundation
import Testing

/// `share-append` and `host-drain` as separate processes, as a user runs them.
@Suite("Tools")
struct ToolTests {
    @Test("Text, lines, JSON and URLs come out as appended, in order, with their ids")
    func roundTrip() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        var expected: [String] = []
        let one = try queue.append(["hello", "world"])
        #expect(one.status == 0)
        expected += one.lines
        let lines = try run("share-append", ["--dir", queue.path, "--lines", "--source", "notes", "--meta", "app=mail", "--meta", "n=2"],
                            stdin: "first\r\nsecond\n\n  third  \n", in: scratch)
        #expect(lines.status == 0)
        #expect(lines.lines.count == 3)
        expected += lines.lines
        let json = try queue.append(["--json", "--key", "wallpaper"], stdin: "{ \"big\": 12345678901234567890, \"x\": [1.50] }\n")
        #expect(json.status == 0)
        expected += json.lines
        let url = try queue.append(["--url", "--id", "3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9"], stdin: "https://example.com/a?b=c\n")
        #expect(url.lines == ["3B1A7A47-62E9-44DE-8AFC-C39F9309E7F9"])
        expected += url.lines
        let stdinText = try run("share-append", ["--dir", queue.path], stdin: "multi\nline\n", in: scratch)
        expected += stdinText.lines

        let drain = try queue.drain()
        #expect(drain.status == 0)
        let records = try jsonObjects(drain.stdout)
        #expect(records.map { $0["id"] as! String } == expected)
        #expect(records.map { $0["text"] as? String } == ["hello world", "first", "second", "  third  ", nil, "https://example.com/a?b=c", "multi\nline"])
        #expect(records[1]["source"] as? String == "notes")
        #expect(records[1]["meta"] as? [String: String] == ["app": "mail", "n": "2"])
        #expect(records[4]["key"] as? String == "wallpaper")
        #expect(drain.output.contains("{\"big\":12345678901234567890,\"x\":[1.50]}"))
        for record in records {
            #expect(record["v"] as? Int == 1)
            let date = record["date"] as! String
            #expect(date.count == 24 && date.hasSuffix("Z"), "date \(date)")
        }
        #expect(drain.stderr.contains("delivered 7 records"))

        let again = try queue.drain()
        #expect(again.status == 0)
        #expect(again.stdout.isEmpty)
    }

    @Test("--lines keeps order within one atomic batch")
    func linesOrder() throws {
        let scratch = TemporaryDirectory()
        let input = (1...500).map { "line \($0)" }.joined(separator: "\n")
        let append = try run("share-append", ["--dir", scratch.queue, "--lines"], stdin: input, in: scratch)
        #expect(append.status == 0)
        let drain = try run("host-drain", ["--dir", scratch.queue, "--batch", "7"], in: scratch)
        let records = try jsonObjects(drain.stdout)
        #expect(records.map { $0["text"] as! String } == (1...500).map { "line \($0)" })
        #expect(records.map { $0["id"] as! String } == append.lines)
        #expect(Set(records.map { $0["date"] as! String }).count == 1)
    }

    @Test("Status and peek show what waits without draining it")
    func statusAndPeek() throws {
        let queue = TestQueue()
        try queue.append(["--lines"], stdin: "a\nb\nc\n")
        let status = try queue.drain(["--status", "--json"])
        #expect(status.status == 0)
        let object = try JSONSerialization.jsonObject(with: status.stdout) as! [String: Any]
        #expect(object["pending"] as? Int == 3)
        #expect((object["pendingBytes"] as? Int ?? 0) > 60)
        #expect(object["quarantined"] as? Int == 0)
        #expect((object["oldest"] as? String)?.hasSuffix("Z") == true)
        let text = try queue.drain(["--status"])
        #expect(text.output.contains("pending: 3 records"))
        let peek = try queue.drain(["--peek", "--format", "text"])
        #expect(peek.status == 0)
        #expect(peek.output.contains("    b\n"))
        let drain = try queue.drain(["-q"])
        #expect(try jsonObjects(drain.stdout).count == 3)
        #expect(drain.stderr.isEmpty)
        #expect(try queue.status()["pending"] as? Int == 0)
    }

    @Test("The text format shows a JSON record's value as compact JSON")
    func textFormatOfJSON() throws {
        let queue = TestQueue()
        _ = try queue.append(["--json"], stdin: " { \"a\" : [ 1.50, \"\\u00e9\" ] } ")
        let drain = try queue.drain(["--format", "text"])
        #expect(drain.status == 0)
        #expect(drain.output.contains("  json  "))
        #expect(drain.output.contains("\n    {\"a\":[1.50,\"\u{E9}\"]}\n"), "\(drain.output)")
    }

    @Test("--peek refuses what shapes a delivery, rather than show other records than a drain delivers, and what it does not use, and changes nothing",
          arguments: [["--coalesce"], ["--max", "1"], ["--store", "inbox.sqlite"], ["--attachments-to", "received"], ["--batch", "10"],
                      ["--max-attempts", "2"], ["--max-attachment-bytes", "10"], ["--sparse-attachments"], ["--wait", "1"], ["--quiet"],
                      ["--progress"], ["--no-progress"], ["--debounce", "1s"]])
    func peekRefusesDeliveryOptions(_ option: [String]) throws {
        let queue = TestQueue()
        _ = try queue.append(["--key", "k", "one"])
        let before = snapshot(queue.path)
        let result = try queue.drain(["--peek"] + option)
        #expect(result.status == 64 && result.stderr.contains(option[0]), "\(result.stderr)")
        #expect(result.stdout.isEmpty && snapshot(queue.path) == before)
    }

    @Test("--status refuses what only a drain or --peek uses, rather than ignore it, and changes nothing",
          arguments: [["--format", "text"], ["--format", "json"], ["--max", "1"], ["--batch", "10"], ["--coalesce"], ["--attachments-to", "received"],
                      ["--max-attempts", "2"], ["--max-attachment-bytes", "10"], ["--sparse-attachments"], ["--wait", "1"], ["--quiet"],
                      ["--progress"], ["--no-progress"], ["--exec", "cat"], ["--exec-timeout", "1s"], ["--debounce", "1s"]])
    func statusRefusesOtherOptions(_ option: [String]) throws {
        let queue = TestQueue()
        _ = try queue.append(["one"])
        let before = snapshot(queue.path)
        for format in [[], ["--json"], ["--prometheus"]] {
            let result = try queue.drain(["--status"] + format + option)
            #expect(result.status == 64 && result.stderr.contains(option[0]), "\(result.stderr)")
            #expect(result.stderr.contains("USAGE: host-drain"), "\(result.stderr)")
            #expect(result.stdout.isEmpty && snapshot(queue.path) == before)
        }
    }

    @Test("--format text names each attachment where the drain put it, tells meta from the key, and writes control characters and invisible ones as escapes")
    func textFormat() throws {
        let queue = TestQueue()
        let note = queue.scratch.file("note.txt")
        try Data("a note".utf8).write(to: URL(fileURLWithPath: note))
        let received = queue.scratch.file("received")
        #expect(try queue.append(["--key", "k\nx", "--meta", "key=fake", "--attach", note,
                                  "red \u{1B}[31m\ttab\nsecond \u{202E}reversed\u{2028}\u{200B}\u{E0001} é 😀"]).status == 0)
        let drain = try queue.drain(["--format", "text", "--attachments-to", received])
        #expect(drain.status == 0, "\(drain.stderr)")
        let lines = drain.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 5 && lines[0].hasSuffix("  key=k\\nx  meta.key=fake"), "\(lines)")
        #expect(lines[1] == "    red \\u001b[31m\ttab" && lines[2] == "    second \\u202ereversed\\u2028\\u200b\\udb40\\udc01 é 😀", "\(lines)")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: received).first)
        #expect(lines[3] == "    attachment: note.txt  6 bytes  \(received)/\(file)", "\(lines)")
    }

    @Test("--status and a drain's warnings print no control character a record holds: a date, a meta name, an attachment's file name")
    func noControlCharactersFromTheQueue() throws {
        let queue = TestQueue()
        let escape = #"\u001b]0;title\u0007\r\nhost-drain: delivered 9 records"#
        // Each its own append: the date shows in --status, the other two are set aside with a warning.
        try queue.appendStored([Array(#"{"v":1,"id":"a","date":"2026-01-02T03:04:05.678Z\#(escape)","source":"s","kind":"text","text":"t"}"#.utf8)])
        try queue.appendStored([Array(#"{"v":1,"id":"b","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"text","text":"t","meta":{"\#(escape)":1}}"#.utf8)])
        try queue.appendStored([Array(#"{"v":1,"id":"c","date":"2026-01-02T03:04:05.678Z","source":"s","kind":"file","attachments":[{"name":"n","file":"\#(escape)","size":1,"sha256":"\#(String(repeating: "0", count: 64))","type":"text/plain"}]}"#.utf8)])
        func controls(_ text: String) -> [Unicode.Scalar] { text.unicodeScalars.filter { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F } }
        let status = try queue.drain(["--status"])
        #expect(status.status == 0 && controls(status.output).isEmpty && status.output.contains("\\u001b]0;title"), "\(status.output)")
        let drain = try queue.drain()
        #expect(drain.stderr.contains("\\u001b]0;title") && controls(drain.stderr).isEmpty, "\(drain.stderr)")
        #expect(!drain.stderr.contains("\nhost-drain: delivered 9"), "\(drain.stderr)")
    }

    @Test("--max stops after N records and the next run goes on from there")
    func maxRecords() throws {
        let queue = TestQueue()
        let appended = try queue.append(["--lines"], stdin: (1...10).map(String.init).joined(separator: "\n")).lines
        let first = try queue.drain(["--max", "4", "--batch", "3"])
        #expect(try ids(in: first.stdout) == Array(appended[0..<4]))
        try queue.append(["eleven"])
        let second = try queue.drain()
        let rest = try ids(in: second.stdout)
        #expect(rest.count == 7)
        #expect(Array(rest[0..<6]) == Array(appended[4...]))
    }

    @Test("--exec delivers each batch as JSON Lines on the command's input")
    func execSink() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let appended = try queue.appendLines((1...25).map { "r\($0)" })
        let drain = try queue.drain(["--exec", "cat >> '\(out)'; echo batch >> '\(out).batches'", "--batch", "10"])
        #expect(drain.status == 0)
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == appended)
        #expect(try String(contentsOfFile: out + ".batches", encoding: .utf8) == "batch\nbatch\nbatch\n")
    }

    @Test("By default a batch is 5000 records to standard output and into a store, 1000 for each --exec command")
    func defaultBatchSizes() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let lines = (1...12_000).map { "r\($0)" }
        for (arguments, batches) in [([String](), 3), (["--store", scratch.file("store.sqlite")], 3), (["--exec", "cat >/dev/null"], 12)] {
            _ = try queue.appendLines(lines, ["--no-sync"])
            let drain = try queue.drain(arguments)
            #expect(drain.status == 0)
            #expect(drain.stderr.contains("delivered 12000 records in \(batches) batches"), "\(arguments): \(drain.stderr)")
        }
    }

    @Test("A failing --exec command leaves everything it did not take, and exits 75")
    func failingSink() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let appended = try queue.appendLines((1...30).map { "r\($0)" })
        // Takes the first batch, refuses the second.
        let command = "if [ -e '\(out)' ]; then exit 3; fi; cat > '\(out)'"
        let failed = try queue.drain(["--exec", command, "--batch", "10"])
        #expect(failed.status == 75)
        #expect(failed.stderr.contains("host-drain: error:"))
        #expect(failed.stderr.contains("status 3"))
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == Array(appended[0..<10]))
        let rest = try queue.drain()
        #expect(try ids(in: rest.stdout) == Array(appended[10...]))
    }

    @Test("A closed pipe on standard output leaves the records queued, exit 75")
    func closedPipe() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines((1...5).map { "r\($0)" })
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Executables.path("host-drain"))
        process.arguments = ["--dir", queue.path, "-q"]
        process.standardOutput = pipe.fileHandleForWriting
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 75)
        let drain = try queue.drain()
        #expect(try ids(in: drain.stdout) == appended)
    }

    @Test("A full disk under the sink's output leaves the records queued, exit 75")
    func fullSinkDisk() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines(["a", "b", "c"])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Executables.path("host-drain"))
        process.arguments = ["--dir", queue.path]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 75)
        #expect(message.contains("No space left on device"), "\(message)")
        let drain = try queue.drain()
        #expect(try ids(in: drain.stdout) == appended)
    }

    @Test("One drainer at a time: a second exits 75, or waits with --wait")
    func oneDrainer() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["one"])
        let started = scratch.file("started")
        let release = scratch.file("release")
        let slow = try RunningTool("host-drain", ["--dir", queue.path, "--exec", "touch '\(started)'; cat > /dev/null; while [ ! -e '\(release)' ]; do sleep 0.02; done"], in: scratch)
        defer { slow.kill() }
        try waitUntil("the slow sink to start") { FileManager.default.fileExists(atPath: started) }
        let busy = try queue.drain()
        #expect(busy.status == 75)
        #expect(busy.stderr.contains("another drain is running"))
        let waited = try queue.drain(["--wait", "0.2"])
        #expect(waited.status == 75)
        let waiter = try RunningTool("host-drain", ["--dir", queue.path, "--wait", "30"], in: scratch)
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        #expect(slow.wait().status == 0)
        let result = waiter.wait()
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
    }

    @Test("Help and version go to standard output with exit 0")
    func helpAndVersion() throws {
        let scratch = TemporaryDirectory()
        for tool in ["share-append", "host-drain"] {
            let help = try run(tool, ["--help"], in: scratch)
            #expect(help.status == 0)
            #expect(help.output.hasPrefix("OVERVIEW:"))
            #expect(help.output.contains("USAGE: \(tool)"))
            #expect(help.output.contains("--dir <DIR>"))
            #expect(try run(tool, ["-h"], in: scratch).status == 0)
            let version = try run(tool, ["--version"], in: scratch)
            #expect(version.status == 0)
            #expect(version.output.hasPrefix("\(tool) "))
        }
    }

    @Test("The directory comes from --dir, else SHARE_QUEUE_DIR, else the per-user default with --group")
    func directoryChoice() throws {
        let scratch = TemporaryDirectory()
        let fromEnvironment = scratch.file("env-queue")
        try run("share-append", ["from env"], environment: ["SHARE_QUEUE_DIR": fromEnvironment], in: scratch)
        #expect(FileManager.default.fileExists(atPath: fromEnvironment + "/pending.log"))
        let data = scratch.file("xdg")
        try run("share-append", ["--group", "group.com.example.app", "grouped"], environment: ["XDG_DATA_HOME": data], in: scratch)
        let groupDir = data + "/ShareQueue/group.com.example.app"
        #expect(FileManager.default.fileExists(atPath: groupDir + "/pending.log"))
        let attributes = try FileManager.default.attributesOfItem(atPath: groupDir)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        try run("share-append", ["plain"], environment: ["XDG_DATA_HOME": data], in: scratch)
        #expect(FileManager.default.fileExists(atPath: data + "/ShareQueue/default/pending.log"))
        let drained = try run("host-drain", ["--group", "group.com.example.app"], environment: ["XDG_DATA_HOME": data], in: scratch)
        #expect(try jsonObjects(drained.stdout).map { $0["text"] as! String } == ["grouped"])
        let both = try run("share-append", ["--dir", scratch.queue, "--group", "g", "x"], in: scratch)
        #expect(both.status == 64)
        let empty = try run("share-append", ["x"], environment: ["SHARE_QUEUE_DIR": ""], in: scratch)
        #expect(empty.status == 78)
        let noHome = try run("share-append", ["x"], environment: ["HOME": "", "XDG_DATA_HOME": ""], in: scratch)
        #expect(noHome.status == 78)
        #expect(noHome.stderr.contains("--dir"))
    }

    @Test("A directory variable that is not valid UTF-8 is refused with 65, as --dir is: read as text, it would name another directory",
          arguments: ["SHARE_QUEUE_DIR=\"$Q/inbox$(printf '\\377')\"", "XDG_DATA_HOME=\"$Q/data$(printf '\\376')\"",
                      "XDG_DATA_HOME= HOME=\"$Q/home$(printf '\\375')\""])
    func directoryVariableNotUTF8(_ assignment: String) throws {
        let scratch = TemporaryDirectory()
        for (tool, arguments) in [("share-append", ["x"]), ("host-drain", [])] {
            // A shell sets the variable: a Swift String cannot hold the byte.
            let result = try run("/bin/sh", ["-c", "Q='\(scratch.path)'; \(assignment) exec \"$0\" \"$@\"", Executables.path(tool)] + arguments, in: scratch)
            #expect(result.status == 65, "\(tool): \(result.stderr)")
            #expect(result.stderr.contains("not valid UTF-8"), "\(result.stderr)")
        }
        // Nothing was made, under any name.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { !$0.hasPrefix("out-") && !$0.hasPrefix("err-") }.isEmpty)
    }
}
