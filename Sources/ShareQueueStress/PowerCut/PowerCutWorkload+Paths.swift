import Foundation
import ShareQueueSystem
import ToolSupport

/// Workloads for the paths that print an id or move a checkpoint beyond the
/// plain append and drain: streaming `--lines`, `--coalesce`, a drain into a file,
/// the typed library and its router, `--max`, a requeue cut short, a group-shared queue.
extension PowerCutWorkload {
    static let paths: [PowerCutWorkload] = [
        PowerCutWorkload(name: "lines-stream", summary: "streaming share-append --lines: a chunk appended when the input goes quiet, its ids printed, then two more lines",
                         setup: { try $0.acknowledged += $0.append(["zero"]) },
                         traced: { try runStreamingLines(&$0, chunks: ["one\n", "two\nthree\n"]) }),
        PowerCutWorkload(name: "coalesce", summary: "host-drain --coalesce delivering the newest record of a key in batches of one, superseded ones skipped",
                         coalesces: true,
                         setup: { context in
                             context.acknowledged += try context.append(["--key", "wallpaper", "beach.jpg"])
                             context.acknowledged += try context.append(["plain one"])
                             context.acknowledged += try context.append(["--key", "wallpaper", "forest.jpg"])
                             context.acknowledged += try context.append(["--key", "status", "busy"])
                         },
                         traced: { context in
                             try context.drain(["--coalesce", "--batch", "1"])
                             try context.append(["--key", "status", "free"])
                             try context.append(["plain two"])
                             try context.drain(["--coalesce", "--batch", "1"])
                         }),
        PowerCutWorkload(name: "standard-output-file", summary: "host-drain >> out.jsonl in batches of two: what the file holds after the cut is what was delivered",
                         outputFile: "out.jsonl",
                         setup: { context in
                             for text in ["one", "two", "three"] { context.acknowledged += try context.append([text]) }
                             try Data().write(to: URL(fileURLWithPath: context.root + "/out.jsonl"))
                         },
                         traced: { context in
                             try context.drainAppendingOutput(to: "out.jsonl", ["--batch", "2"])
                             try context.append(["four"])
                             try context.drainAppendingOutput(to: "out.jsonl", ["--batch", "2"])
                         }),
        PowerCutWorkload(name: "typed-router", summary: "the library: typed appends of two kinds, then a ContentRouter drain, then more of both",
                         typed: true,
                         setup: { try $0.acknowledged += $0.typedAppend(["first link"]) },
                         traced: { context in
                             try context.typedAppend(["a link", "a note", "another link"])
                             try context.typedDrain()
                             try context.typedAppend(["late link", "late note"])
                             try context.typedDrain()
                         }),
        PowerCutWorkload(name: "max", summary: "host-drain --max 2 twice over five records, then an append and a drain of the rest",
                         setup: { context in for text in ["one", "two", "three", "four", "five"] { context.acknowledged += try context.append([text]) } },
                         traced: { context in
                             try context.drain(["--max", "2", "--batch", "1"])
                             try context.drain(["--max", "2"])
                             try context.append(["six"])
                             try context.drain()
                         }),
        PowerCutWorkload(name: "requeue-resumed", summary: "--requeue-dead killed after putting two letters back and before clearing them, then run again, then a drain",
                         setup: { context in
                             for text in ["keep one", "refuse me", "refuse me too"] { context.acknowledged += try context.append([text]) }
                             try context.drain(refusingDrainArguments)
                         },
                         traced: { context in
                             let cut = try context.run("host-drain", ["--dir", context.queue, "--quiet", "--requeue-dead"], extra: ["SHARE_QUEUE_CRASH_AT": "append-synced"])
                             guard cut.wasKilled else { throw PowerCutError("host-drain --requeue-dead told to die after its append exited with \(cut.status)") }
                             let again = try context.run("host-drain", ["--dir", context.queue, "--quiet", "--requeue-dead"])
                             guard again.status == 0 else { throw PowerCutError("host-drain --requeue-dead exited with \(again.status)") }
                             try context.drain()
                         }),
        PowerCutWorkload(name: "group-shared", summary: "from a new group-shared folder (mode 2770): appends, one with an attachment and one keyed, then a drain",
                         groupShared: true,
                         setup: { context in
                             let bytes = (0..<6000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                             try Data(bytes).write(to: URL(fileURLWithPath: context.inputs + "/photo.jpg"))
                             try FileManager.default.createDirectory(atPath: context.queue, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o2770])
                         },
                         traced: { context in
                             try context.append(["one"])
                             try context.append(["--attach", context.inputs + "/photo.jpg", "two, with a photo"])
                             try context.append(["--key", "status", "three"])
                             try context.drain()
                             try context.append(["four"])
                         }),
    ]

    /// `share-append --lines` reading a pipe that stays open: each chunk is written once the
    /// ids of the one before were printed, so that the tool appends it when the input goes quiet.
    private static func runStreamingLines(_ context: inout PowerCutContext, chunks: [String]) throws {
        let child = try Host.spawn(context.tools.path("share-append"), ["--dir", context.queue, "--lines"],
                                   environment: context.environment, pipeInput: true, pipeOutput: true, silenceErrors: true)
        var ended = false
        defer {
            if !ended {
                Host.kill(child.pid)
                _ = try? Host.waitForExit(child.pid)
            }
        }
        let input = child.input!, output = child.output!
        var printed: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var expected = 0
        for text in chunks {
            try input.writeAll(Array(text.utf8))
            expected += text.split(separator: "\n").count
            while PowerCutContext.lines(printed).count < expected {
                let n = try output.read(into: &chunk, from: 0)
                guard n > 0 else { throw PowerCutError("share-append --lines ended before it printed \(expected) ids") }
                printed += chunk[0..<n]
            }
        }
        input.close()
        while true {
            let n = try output.read(into: &chunk, from: 0)
            if n <= 0 { break }
            printed += chunk[0..<n]
        }
        output.close()
        let status = try Host.waitForExit(child.pid)
        ended = true
        guard status == 0 else { throw PowerCutError("share-append --lines exited with \(status)") }
        context.noteAppended(PowerCutContext.lines(printed))
    }
}

extension PowerCutContext {
    /// Runs `host-drain` with its standard output appended to `file` under the root, as `host-drain >> file` would.
    mutating func drainAppendingOutput(to file: String, _ arguments: [String]) throws {
        let command = "queue=\"$1\"; shift; exec \"$0\" --dir \"$queue\" --quiet \"$@\" >> \"$ROOT/\(file)\""
        let outcome = try ToolRunner.run(program: "/bin/sh", ["-c", command, tools.path("host-drain"), queue] + arguments,
                                         environment: environment.merging(["ROOT": root]) { $1 })
        guard outcome.status == 0 else { throw PowerCutError("host-drain >> \(file) exited with \(outcome.status)") }
    }

    /// Appends values of two kinds through the library; returns their ids, now known and acknowledged.
    @discardableResult
    mutating func typedAppend(_ texts: [String]) throws -> [String] {
        let outcome = try run("share-stress", ["power-cut-typed", "append", queue] + texts)
        guard outcome.status == 0 else { throw PowerCutError("the typed append exited with \(outcome.status)") }
        let ids = Self.lines(outcome.output)
        noteAppended(ids)
        return ids
    }

    /// Drains through a `ContentRouter`; returns the ids its handlers received.
    @discardableResult
    func typedDrain() throws -> [String] {
        let outcome = try run("share-stress", ["power-cut-typed", "drain", queue])
        guard outcome.status == 0 else { throw PowerCutError("the router's drain exited with \(outcome.status)") }
        return Self.lines(outcome.output)
    }
}
