import Foundation
import Testing
import ShareQueueSystem
import ToolSupport

/// The progress line: on a terminal once a run takes over a second, never on
/// a file unless asked, and `--no-progress` silences it.
@Suite("Progress line", .serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a terminal"))
struct ProgressLineTests {
    /// Runs `command` through sh with standard error on a pseudo-terminal, and returns what the terminal showed.
    static func onTerminal(_ command: String, in scratch: TemporaryDirectory) throws -> String {
        let result = try run("/usr/bin/script", ["-qfec", command, "/dev/null"], in: scratch)
        #expect(result.status == 0, "\(result.output)")
        return result.output
    }

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// A drain that takes over a second: three batches of ten, each taking 0.4 s in the command.
    static func slowDrain(_ scratch: TemporaryDirectory, _ extra: String = "") throws -> String {
        let queue = TestQueue(in: scratch)
        #expect(try queue.appendLines((1...30).map { "record \($0)" }).count == 30)
        return "\(quoted(Executables.path("host-drain"))) --dir \(quoted(queue.path)) --batch 10 --exec 'cat >/dev/null; sleep 0.4' \(extra)"
    }

    @Test("A drain over a second shows the updating line on a terminal, with done of the total, rate and time left")
    func drainOnTerminal() throws {
        let scratch = TemporaryDirectory()
        let screen = try Self.onTerminal(try Self.slowDrain(scratch), in: scratch)
        #expect(screen.contains("\rhost-drain: 30 of ~30 records (100%)"), "\(screen.debugDescription)")
        #expect(screen.contains("records/s, 0s left"), "\(screen.debugDescription)")
        #expect(screen.contains("host-drain: delivered 30 records"), "\(screen.debugDescription)")
    }

    @Test("--no-progress silences it on a terminal")
    func drainSilenced() throws {
        let scratch = TemporaryDirectory()
        let screen = try Self.onTerminal(try Self.slowDrain(scratch, "--no-progress"), in: scratch)
        #expect(screen.contains("host-drain: delivered 30 records"))
        #expect(!screen.contains("records/s"), "\(screen.debugDescription)")
    }

    @Test("Never on a file, unless --progress forces it", arguments: [false, true])
    func drainToFile(_ forced: Bool) throws {
        let scratch = TemporaryDirectory()
        let errors = scratch.file("errors")
        let drain = try run("/bin/sh", ["-c", try Self.slowDrain(scratch, forced ? "--progress" : "") + " 2> \(Self.quoted(errors))"], in: scratch)
        #expect(drain.status == 0)
        let text = String(decoding: FileManager.default.contents(atPath: errors) ?? Data(), as: UTF8.self)
        #expect(text.contains("host-drain: delivered 30 records"))
        #expect(text.contains("\rhost-drain: 30 of ~30 records") == forced, "\(text.debugDescription)")
    }

    @Test("A bulk append from a pipe over a second shows records done and the rate, no total")
    func appendOnTerminal() throws {
        let scratch = TemporaryDirectory()
        let fifo = scratch.file("input")
        #expect(mkfifo(fifo, 0o600) == 0)
        let command = "\(Self.quoted(Executables.path("share-append"))) --dir \(Self.quoted(scratch.queue)) --lines --chunk-bytes 4096 < \(Self.quoted(fifo)) > /dev/null"
        // The run lasts over a second because its input does: half now, half after 1.2 s.
        let feeder = Thread {
            guard let writer = FileHandle(forWritingAtPath: fifo) else { return }
            writer.write(Data((1...100).map { "early \($0)\n" }.joined().utf8))
            Thread.sleep(forTimeInterval: 1.2)
            writer.write(Data((1...100).map { "late \($0)\n" }.joined().utf8))
            writer.closeFile()
        }
        feeder.start()
        let screen = try Self.onTerminal(command, in: scratch)
        #expect(screen.contains("\rshare-append: "), "\(screen.debugDescription)")
        #expect(screen.contains(" records, "), "\(screen.debugDescription)")
        #expect(screen.contains("records/s"), "\(screen.debugDescription)")
        #expect(!screen.contains("left"), "\(screen.debugDescription)")
    }
}
