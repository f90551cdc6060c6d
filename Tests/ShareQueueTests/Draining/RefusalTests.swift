import Foundation
import Testing
@testable import ShareQueueCore

/// What `--exec`'s exit statuses mean: records refused and bisected in the same run,
/// a broken command that counts nothing, and what of it the queue's files keep.
@Suite("Refusals bisected in one run, broken commands, what the files keep", .runTimeLimit(minutes: 3))
struct RefusalTests {
    /// A command that refuses every batch holding a record with "poison" in it (the exit
    /// status says only that the batch was refused: bisecting finds which), appends the
    /// others to `out`, and notes each call in `calls`.
    static func command(out: String, calls: String) -> String {
        "echo call >> '\(calls)'; input=$(cat); case \"$input\" in *poison*) exit 1;; esac; printf '%s\\n' \"$input\" >> '\(out)'"
    }

    static func lines(of path: String) -> [String] {
        (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
    }

    @Test("An honest record behind ten refused ones is delivered in the first run; the ten are dead letters after the fifth")
    func honestRecordBehindTenRefused() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let appended = try queue.appendLines((1...10).map { "poison \($0)" } + ["honest"])
        let command = Self.command(out: out, calls: scratch.file("calls"))
        for run in 1...5 {
            let drain = try queue.drain(["--exec", command, "--max-attempts", "5"])
            if run == 1 { #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == [appended[10]]) }
            if run < 5 {
                #expect(drain.status == 75, "\(drain.stderr)")
                #expect(appended[0..<10].allSatisfy { drain.warned(.recordRefused(id: $0, attempt: run, maxAttempts: 5, reason: anyText)) },
                        "\(drain.stderr)")
                #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
            } else {
                #expect(drain.status == 0, "\(drain.stderr)")
            }
        }
        let letters = try queue.deadLetters()
        #expect(letters.compactMap { ($0["record"] as? [String: Any])?["id"] as? String } == Array(appended[0..<10]))
        #expect(letters.allSatisfy { $0["attempts"] as? Int == 5 })
        #expect(!FileManager.default.fileExists(atPath: queue.file("attempts")))
        #expect(try queue.status()["pending"] as? Int == 0)
        // Offered again until the records before it were set aside: at least once, the same id each time.
        #expect(Set(try ids(in: Data(contentsOf: URL(fileURLWithPath: out)))) == [appended[10]])
    }

    @Test("An honest record behind a thousand refused ones is delivered in the first run, in at most 4·k·log2(n) calls of the command")
    func honestRecordBehindAThousandRefused() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let calls = scratch.file("calls")
        let appended = try queue.appendLines((1...1000).map { "poison \($0)" } + ["honest"])
        let drain = try queue.drain(["--exec", Self.command(out: out, calls: calls), "--batch", "2000"])
        #expect(drain.status == 75, "\(drain.stderr)")
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == [appended[1000]])
        let bound = 4 * 1000 * Int(log2(1001.0).rounded(.up)) + 8
        #expect(Self.lines(of: calls).count <= bound, "\(Self.lines(of: calls).count) calls")
        // The checkpoint stays before the first refused record: the honest one is counted as waiting too, to be offered again.
        #expect(try queue.status()["pending"] as? Int == 1001)
    }

    @Test("Ten refused records among a thousand cost about k·log2(n) calls, not n: the 990 others are delivered in the first run")
    func callsGrowLikeKLogN() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let out = scratch.file("delivered")
        let calls = scratch.file("calls")
        let lines = (0..<1000).map { $0 % 100 == 37 ? "poison \($0)" : "honest \($0)" }
        let appended = try queue.appendLines(lines)
        let drain = try queue.drain(["--exec", Self.command(out: out, calls: calls), "--batch", "1000"])
        #expect(drain.status == 75, "\(drain.stderr)")
        let honest = zip(lines, appended).filter { !$0.0.hasPrefix("poison") }.map(\.1)
        #expect(try ids(in: Data(contentsOf: URL(fileURLWithPath: out))) == honest)
        let bound = 4 * 10 * Int(log2(1000.0).rounded(.up)) + 8
        #expect(Self.lines(of: calls).count <= bound, "\(Self.lines(of: calls).count) calls")
        #expect(drain.stderr.contains("and 9 other records"), "\(drain.stderr)")
    }

    @Test("A broken command (usage, configuration, not executable, not found, an undocumented signal) counts no attempt: after six drains nothing is a dead letter",
          arguments: [("exit 64", 78, "status 64"), ("exit 78", 78, "status 78"), ("exit 126", 78, "status 126"), ("exit 127", 78, "status 127"),
                      ("/nonexistent/forwarder --flag", 78, "status 127"), ("NOT_EXECUTABLE", 78, "status 126"), ("kill -USR1 $$", 75, "SIGUSR1"),
                      ("kill -USR2 $$", 75, "SIGUSR2")])
    func brokenCommandCountsNothing(_ command: String, _ exit: Int32, _ named: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let script = scratch.file("not-executable.sh")
        try "#!/bin/sh\nexit 0\n".write(toFile: script, atomically: true, encoding: .utf8)
        _ = try queue.appendLines(["x", "y"])
        for _ in 1...6 {
            let drain = try queue.drain(["--max-attempts", "5", "--exec", command.replacingOccurrences(of: "NOT_EXECUTABLE", with: script)])
            #expect(drain.status == exit, "\(drain.stderr)")
            #expect(drain.stderr.contains(named) && drain.stderr.contains("broken"), "\(drain.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: queue.file("dead-letters.log")))
        #expect(!FileManager.default.fileExists(atPath: queue.file("attempts")))
        #expect(try queue.status()["pending"] as? Int == 2)
    }

    @Test("A command's line and its standard error reach no file of the queue: the dead letter keeps its kind and status; the host's stderr names the command")
    func commandLineStaysWithTheHost() throws {
        let queue = TestQueue()
        try queue.append(["refused"])
        let command = "SECRET=hunter2; echo \"token $SECRET\" >&2; exit 1"
        var stderr = ""
        for _ in 1...3 { stderr += try queue.drain(["--max-attempts", "3", "--exec", command]).stderr }
        let letters = try queue.deadLetters()
        #expect(letters.count == 1)
        #expect(letters.first?["error"] as? String == "command exited with status 1")
        #expect(stderr.contains("SECRET=hunter2"), "\(stderr)")
        let files = FileManager.default.enumerator(atPath: queue.path)?.allObjects as? [String] ?? []
        for name in files {
            let data = FileManager.default.contents(atPath: queue.file(name)) ?? Data()
            #expect(data.range(of: Data("hunter2".utf8)) == nil, "\(name)")
        }
    }

    @Test("A letter's error is cut at 4096 bytes between characters: no U+FFFD, nothing past the limit")
    func errorCutBetweenCharacters() {
        let error = "refused: " + String(repeating: "x", count: 4040) + String(repeating: "é", count: 40)
        let cut = DeadLetters.cut(error)
        #expect(cut.utf8.count <= 4096 && cut.utf8.count > 4090 && !cut.contains("\u{FFFD}"), "\(cut.utf8.count) bytes")
    }
}
