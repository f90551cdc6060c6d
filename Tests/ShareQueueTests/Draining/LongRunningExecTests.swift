import Foundation
import Testing

/// `--exec CMD --long-running`: one command for the whole drain, batch after batch over its
/// standard input, each answered on its standard output. The command here is a shell script
/// that speaks the protocol as README shows it, and on a record with "poison" in it dies,
/// refuses, hangs, answers nonsense or asks to try again, as each test tells it.
@Suite("Long-running --exec commands", .runTimeLimit(minutes: 3))
struct LongRunningExecTests {
    /// The sink: appends each batch it takes to `$1`, and notes each start of its own in `$1.starts`.
    static let script = """
        out=$1 mode=$2 arg=$3
        echo $$ >> "$out.starts"
        IFS= read -r greeting || exit 0
        [ "$greeting" = "sharequeue-sink 1" ] || exit 64
        echo "sharequeue-sink 1"
        while read -r word count bytes; do
            [ "$word" = batch ] || exit 64
            : > "$out.batch"
            poisoned=""
            i=0
            while [ "$i" -lt "$count" ]; do
                IFS= read -r line || exit 0
                case $line in
                *poison*)
                    poisoned=1
                    case $mode in
                    exit-on-poison) exit "$arg" ;;
                    hang-on-poison) sleep 1000 & echo $! > "$out.sleeper.tmp"; mv "$out.sleeper.tmp" "$out.sleeper"; wait; exit 0 ;;
                    esac ;;
                esac
                printf '%s\\n' "$line" >> "$out.batch"
                i=$((i + 1))
            done
            if [ -n "$poisoned" ]; then
                case $mode in
                refuse-poison) echo "refused a poisoned record"; continue ;;
                retry-on-poison) echo "retry the server is away"; continue ;;
                malformed-on-poison) echo "ok"; continue ;;
                esac
            fi
            cat "$out.batch" >> "$out"
            echo delivered
            [ "$mode" = exit-after-first ] && exit 0
        done
        exit 0
        """

    /// A queue with 25 records, "poison" at the 13th and the 22nd (indices 12 and 21), and the script beside it.
    struct Setup {
        let scratch = TemporaryDirectory()
        let queue: TestQueue
        let appended: [String]
        let lines = (0..<25).map { $0 == 12 || $0 == 21 ? "poison \($0)" : "honest \($0)" }
        var out: String { scratch.file("delivered") }

        init() throws {
            queue = TestQueue(in: scratch)
            appended = try queue.appendLines(lines)
            try LongRunningExecTests.script.write(toFile: scratch.file("sink.sh"), atomically: true, encoding: .utf8)
        }

        func command(_ mode: String, _ argument: String = "") -> String {
            "sh '\(scratch.file("sink.sh"))' '\(out)' \(mode) \(argument)"
        }

        /// Drains in batches of 10 through the script.
        func drain(_ mode: String, _ argument: String = "", _ extra: [String] = []) throws -> ProcessResult {
            try queue.drain(["--batch", "10", "--long-running", "--exec", command(mode, argument)] + extra)
        }

        /// The ids the sink took, in order.
        func delivered() throws -> [String] {
            guard let data = FileManager.default.contents(atPath: out) else { return [] }
            return try ids(in: data)
        }

        var starts: Int { RefusalTests.lines(of: out + ".starts").count }
        var honest: [String] { zip(lines, appended).filter { $0.0.hasPrefix("honest") }.map(\.1) }
        func pending() throws -> Int { try #require(try queue.status()["pending"] as? Int) }
        func attempts() -> Bool { FileManager.default.fileExists(atPath: queue.file("attempts")) }
    }

    @Test("One command takes every batch: started once, each record delivered once, and it exits when its input ends")
    func oneCommandForTheDrain() throws {
        let setup = try Setup()
        let drain = try setup.drain("take-all")
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try setup.delivered() == setup.appended)
        #expect(setup.starts == 1)
        #expect(try setup.pending() == 0)
        #expect(drain.stderr.contains("delivered 25 records in 3 batches"), "\(drain.stderr)")
        let pid = try #require(Int32(RefusalTests.lines(of: setup.out + ".starts")[0]))
        #expect(!ExecTimeoutTests.isRunning(pid))
    }

    @Test("Without --batch a long-running command takes batches of 5000, as standard output and the store do; a command of --exec alone, 1000")
    func defaultBatches() throws {
        let setup = try Setup()
        let more = try setup.queue.appendLines((0..<5975).map { "more \($0)" })
        let drain = try setup.queue.drain(["--long-running", "--exec", setup.command("take-all")])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(drain.stderr.contains("delivered 6000 records in 2 batches"), "\(drain.stderr)")
        #expect(try setup.delivered() == setup.appended + more)

        _ = try setup.queue.appendLines((0..<2000).map { "later \($0)" })
        let perBatch = try setup.queue.drain(["--exec", "cat > /dev/null"])
        #expect(perBatch.status == 0, "\(perBatch.stderr)")
        #expect(perBatch.stderr.contains("delivered 2000 records in 2 batches"), "\(perBatch.stderr)")
    }

    @Test("An answer of refused is bisected with the same command: the 23 honest records are delivered in one run, each refused record counts one attempt")
    func refusedAnswerIsBisected() throws {
        let setup = try Setup()
        let drain = try setup.drain("refuse-poison")
        #expect(drain.status == 75, "\(drain.stderr)")
        #expect(try setup.delivered() == setup.honest)
        #expect(setup.starts == 1)
        // The checkpoint stays before the first refused record (index 12).
        #expect(try setup.pending() == 13)
        #expect(setup.attempts())
        #expect(drain.stderr.contains("refused the batch: a poisoned record"), "\(drain.stderr)")

        // At the limit they are dead letters, which keep only that the command refused them.
        let last = try setup.drain("refuse-poison", "", ["--max-attempts", "2"])
        #expect(last.status == 0, "\(last.stderr)")
        let letters = try setup.queue.deadLetters()
        #expect(letters.compactMap { ($0["record"] as? [String: Any])?["id"] as? String } == [setup.appended[12], setup.appended[21]])
        #expect(letters.allSatisfy { $0["error"] as? String == "command answered refused" })
        #expect(try setup.pending() == 0)
    }

    @Test("A command that dies in the middle of a batch with status 1 refuses it: bisected, started again for each offer, the honest records delivered")
    func deathIsARefusal() throws {
        let setup = try Setup()
        let drain = try setup.drain("exit-on-poison", "1")
        #expect(drain.status == 75, "\(drain.stderr)")
        #expect(try setup.delivered() == setup.honest)
        #expect(setup.starts > 1)
        #expect(try setup.pending() == 13)
        #expect(setup.attempts())
        #expect(drain.stderr.contains("exited with status 1"), "\(drain.stderr)")
    }

    @Test("A command that dies in the middle of a batch with 75, or answers retry, leaves that batch and the rest queued, uncounted",
          arguments: [("exit-on-poison", "75"), ("retry-on-poison", "")])
    func tryAgainKeepsTheBatch(_ mode: String, _ argument: String) throws {
        let setup = try Setup()
        let drain = try setup.drain(mode, argument)
        #expect(drain.status == 75, "\(drain.stderr)")
        #expect(try setup.delivered() == Array(setup.appended[0..<10]))
        #expect(try setup.pending() == 15)
        #expect(!setup.attempts())
        #expect(drain.stderr.contains("try again later"), "\(drain.stderr)")
    }

    @Test("A command that dies with 64, 78, 126 or 127 in the middle of a batch is broken: exit 78, the batch and the rest queued, nothing counted",
          arguments: ["64", "78", "126", "127"])
    func brokenDeath(_ status: String) throws {
        let setup = try Setup()
        let drain = try setup.drain("exit-on-poison", status)
        #expect(drain.status == 78, "\(drain.stderr)")
        #expect(try setup.delivered() == Array(setup.appended[0..<10]))
        #expect(try setup.pending() == 15)
        #expect(!setup.attempts())
        #expect(drain.stderr.contains("status \(status)") && drain.stderr.contains("broken"), "\(drain.stderr)")
    }

    @Test("A command that hangs on a batch is ended, group and all, at --exec-timeout: the batch stays queued, uncounted")
    func hangIsEndedAtTheTimeout() throws {
        let setup = try Setup()
        let drain = try RunningTool("host-drain", ["--dir", setup.queue.path, "--batch", "10", "--long-running", "--exec-timeout", "1s",
                                                   "--exec", setup.command("hang-on-poison")], in: setup.scratch)
        defer { drain.kill() }
        let sleeper = try ExecTimeoutTests.readPID(setup.out + ".sleeper")
        let result = try ExecTimeoutTests.finish(drain, within: 15)
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("within 1s"), "\(result.stderr)")
        try waitUntil("the command's group to end", seconds: 5) { !ExecTimeoutTests.isRunning(sleeper) }
        #expect(try setup.delivered() == Array(setup.appended[0..<10]))
        #expect(try setup.pending() == 15)
        #expect(!setup.attempts())
    }

    @Test("An answer that is not the protocol's says the command is broken: exit 78, the batch and the rest queued, nothing counted")
    func malformedAnswer() throws {
        let setup = try Setup()
        let drain = try setup.drain("malformed-on-poison")
        #expect(drain.status == 78, "\(drain.stderr)")
        #expect(drain.stderr.contains("'ok'") && drain.stderr.contains("broken"), "\(drain.stderr)")
        #expect(try setup.delivered() == Array(setup.appended[0..<10]))
        #expect(try setup.pending() == 15)
        #expect(!setup.attempts())
        #expect(!FileManager.default.fileExists(atPath: setup.queue.file("dead-letters.log")))
    }

    @Test("A command that answers one batch and exits 0 leaves the next one unanswered: exit 78, that batch and the rest queued")
    func exitAfterFirstBatch() throws {
        let setup = try Setup()
        let drain = try setup.drain("exit-after-first")
        #expect(drain.status == 78, "\(drain.stderr)")
        #expect(drain.stderr.contains("without answering"), "\(drain.stderr)")
        #expect(try setup.delivered() == Array(setup.appended[0..<10]))
        #expect(try setup.pending() == 15)
        #expect(!setup.attempts())
    }

    @Test("A command that does not answer the greeting takes no batch: broken (78), or try again (75) for status 75",
          arguments: [("echo hello; cat > /dev/null", Int32(78)), ("exit 0", 78), ("exit 75", 75), ("exit 127", 78), ("/nonexistent/sink", 78)])
    func noGreeting(_ command: String, _ status: Int32) throws {
        let queue = TestQueue()
        _ = try queue.appendLines(["a", "b"])
        let drain = try queue.drain(["--long-running", "--exec", command])
        #expect(drain.status == status, "\(drain.stderr)")
        #expect(try queue.status()["pending"] as? Int == 2)
        #expect(!FileManager.default.fileExists(atPath: queue.file("attempts")))
    }

    @Test("Under --watch one command takes the batches of every drain, and SIGTERM ends it with the watcher")
    func oneCommandForTheWatch() throws {
        let setup = try Setup()
        let drain = try RunningTool("host-drain", ["--dir", setup.queue.path, "--watch", "--long-running", "--exec", setup.command("take-all")], in: setup.scratch)
        defer { drain.kill() }
        try waitUntil("the queued records delivered") { try setup.delivered().count == 25 }
        let more = try setup.queue.appendLines(["later 1", "later 2"])
        try waitUntil("the later records delivered") { try setup.delivered().count == 27 }
        kill(drain.pid, SIGTERM)
        let result = try ExecTimeoutTests.finish(drain, within: 15)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try setup.delivered() == setup.appended + more)
        #expect(setup.starts == 1)
        let pid = try #require(Int32(RefusalTests.lines(of: setup.out + ".starts")[0]))
        try waitUntil("the command to end") { !ExecTimeoutTests.isRunning(pid) }
    }

    @Test("--long-running without --exec is a usage error")
    func needsExec() throws {
        let queue = TestQueue()
        _ = try queue.appendLines(["a"])
        #expect(try queue.drain(["--long-running"]).status == 64)
        #expect(try queue.status()["pending"] as? Int == 1)
    }
}
