import Foundation
import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// A workload the power-cut explorer cuts: an untraced setup (durable before
/// the cut can fall), a traced part run with the real tools, and what a user
/// runs next on the state a cut leaves.
struct PowerCutWorkload: Sendable {
    let name: String
    let summary: String
    /// Whether the drains after the cut ingest into the store, as the workload's own did.
    var usesStore = false
    /// The recovering producer's arguments (after `--dir`); its printed id must be delivered.
    var recoveryAppend: [String] = ["after the cut"]
    /// Whether the recovering drain delivers attachments, whose copies must match their sources.
    var deliversAttachments = false
    /// The key the recovering producer publishes with --if-changed: the newest record of that key must then hold its value.
    var publishedKey: String?
    /// Whether the drains coalesce keys: then a keyed record counts as delivered when a later one of its key was.
    var coalesces = false
    /// A file under the root that the workload's drains write their standard output to: what
    /// it holds in a crash state is what was delivered, whatever the drains reported.
    var outputFile: String?
    /// Whether the queue folder is group-shared (mode 2770), in every crash state too.
    var groupShared = false
    /// Whether the recovery drains through the library's `ContentRouter`, as the workload's own did.
    var typed = false
    let setup: @Sendable (inout PowerCutContext) throws -> Void
    let traced: @Sendable (inout PowerCutContext) throws -> Void

    static let all: [PowerCutWorkload] = [
        PowerCutWorkload(name: "append", summary: "one share-append into a directory with no queue yet",
                         setup: { _ in }, traced: { try $0.append(["one"]) }),
        PowerCutWorkload(name: "batch", summary: "an atomic batch of 24 records (about 6 KiB, so torn at 512-byte and 4 KiB boundaries) after one record",
                         setup: { try $0.acknowledged += $0.append(["zero"]) },
                         traced: { context in
                             let lines = (1...24).map { "line \($0) " + String(repeating: "abcdefgh", count: 24) }.joined(separator: "\n")
                             try context.append(["--lines", "--atomic"], input: Array(lines.utf8))
                         }),
        PowerCutWorkload(name: "no-sync", summary: "six --no-sync appends, whose ids promise nothing, then a synced one, which must survive",
                         setup: { try $0.acknowledged += $0.append(["zero"]) },
                         traced: { context in
                             for n in 1...6 { try context.append(["--no-sync", "unsynced \(n) " + String(repeating: "x", count: 100 * n)]) }
                             try context.append(["synced"])
                         }),
        PowerCutWorkload(name: "attachments", summary: "a record with a 6000-byte attachment, delivered with --attachments-to",
                         deliversAttachments: true,
                         setup: { context in
                             let bytes = (0..<6000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                             try Data(bytes).write(to: URL(fileURLWithPath: context.inputs + "/photo.jpg"))
                             context.acknowledged += try context.append(["zero"])
                         },
                         traced: { context in try context.append(["--attach", context.inputs + "/photo.jpg", "with a photo"]) }),
        PowerCutWorkload(name: "torn-tail", summary: "a producer killed mid-write, then the next producer cuts its torn tail",
                         setup: { context in
                             context.acknowledged += try context.append(["first"])
                             let torn = try context.run("share-append", ["--dir", context.queue, "--lines"], input: Array("torn one\ntorn two\n".utf8),
                                                        extra: ["SHARE_QUEUE_CRASH_AT": "append-half-written"])
                             guard torn.wasKilled else { throw PowerCutError("a producer told to die mid-write exited with \(torn.status)") }
                         },
                         traced: { try $0.append(["after the torn tail"]) }),
        PowerCutWorkload(name: "if-changed", summary: "--if-changed publishing two values and one again, then a plain append of the key",
                         recoveryAppend: ["--if-changed", "--key", "wallpaper", "forest.jpg"], publishedKey: "wallpaper",
                         setup: { _ in },
                         traced: { context in
                             try context.append(["--if-changed", "--key", "wallpaper", "beach.jpg"])
                             try context.append(["--if-changed", "--key", "wallpaper", "forest.jpg"])
                             try context.append(["--if-changed", "--key", "wallpaper", "forest.jpg"])
                             try context.append(["--key", "wallpaper", "beach.jpg"])
                         }),
        PowerCutWorkload(name: "drain", summary: "a drain that seals, delivers in batches of two, checkpoints and removes a segment, then another append and drain",
                         setup: { context in for text in ["one", "two", "three", "four", "five"] { context.acknowledged += try context.append([text]) } },
                         traced: { context in
                             try context.drain(["--batch", "2"])
                             try context.append(["six"])
                             try context.drain(["--batch", "2"])
                         }),
        PowerCutWorkload(name: "attachment-delivery", summary: "a drain copying attachments out with --attachments-to, then removing the queue's copies",
                         deliversAttachments: true,
                         setup: { context in
                             let bytes = (0..<6000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                             try Data(bytes).write(to: URL(fileURLWithPath: context.inputs + "/photo.jpg"))
                             context.acknowledged += try context.append(["--attach", context.inputs + "/photo.jpg", "with a photo"])
                         },
                         traced: { context in
                             try context.drain(["--attachments-to", context.root + "/delivered"])
                             try context.append(["--attach", context.inputs + "/photo.jpg", "another photo"])
                             try context.drain(["--attachments-to", context.root + "/delivered"])
                         }),
        PowerCutWorkload(name: "store", summary: "from no queue: appends (one with an attachment, two with one key) and --store drains, the queue and the store both made on the way",
                         usesStore: true,
                         setup: { context in
                             let bytes = (0..<6000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                             try Data(bytes).write(to: URL(fileURLWithPath: context.inputs + "/photo.jpg"))
                         },
                         traced: { context in
                             try context.append(["one"])
                             try context.append(["--attach", context.inputs + "/photo.jpg", "two, with a photo"])
                             try context.append(["--key", "wallpaper", "beach.jpg"])
                             try context.drain(["--store", context.store])
                             try context.append(["three"])
                             try context.append(["--key", "wallpaper", "forest.jpg"])
                             try context.drain(["--store", context.store])
                         }),
        PowerCutWorkload(name: "dead-letter", summary: "a drain whose command refuses one record, which is dead-lettered",
                         setup: { context in for text in ["keep one", "refuse me", "keep two"] { context.acknowledged += try context.append([text]) } },
                         traced: { try $0.drain(refusingDrainArguments) }),
        PowerCutWorkload(name: "dead-letter-killed", summary: "a drain killed once it wrote a dead letter, before it synced the new file's name, then a drain that finds the letter written",
                         setup: { context in for text in ["keep one", "refuse me", "keep two"] { context.acknowledged += try context.append([text]) } },
                         traced: { context in
                             let killed = try context.run("host-drain", ["--dir", context.queue, "--quiet"] + refusingDrainArguments,
                                                          extra: ["SHARE_QUEUE_CRASH_AT": CrashPoint.drainLettersWritten.rawValue])
                             guard killed.wasKilled else { throw PowerCutError("host-drain did not die at \(CrashPoint.drainLettersWritten.rawValue) (exit \(killed.status))") }
                             try context.drain(refusingDrainArguments)
                         }),
        PowerCutWorkload(name: "requeue-dead", summary: "--requeue-dead putting a dead letter back, then a drain",
                         setup: { context in
                             for text in ["keep one", "refuse me"] { context.acknowledged += try context.append([text]) }
                             try context.drain(refusingDrainArguments)
                         },
                         traced: { context in
                             let outcome = try context.run("host-drain", ["--dir", context.queue, "--quiet", "--requeue-dead"])
                             guard outcome.status == 0 else { throw PowerCutError("host-drain --requeue-dead exited with \(outcome.status)") }
                             try context.drain()
                         }),
        PowerCutWorkload(name: "seal-race", summary: "a producer appending after a drain's seal and before the drain syncs the rename",
                         setup: { try $0.acknowledged += $0.append(["sealed"]) },
                         traced: { try runSealRace(&$0) }),
        PowerCutWorkload(name: "watch", summary: "host-drain --watch delivering two appends as they arrive",
                         setup: { try $0.acknowledged += $0.append(["zero"]) },
                         traced: { try runWatch(&$0) }),
    ] + paths + damage

    /// A drain whose command refuses the batch holding "refuse me", once: a dead letter at the first refusal.
    static let refusingDrainArguments = ["--batch", "1", "--max-attempts", "1", "--exec", "if grep -q 'refuse me'; then exit 1; fi"]

    /// A drain stopped just after its seal released the producers' lock, before it synced the
    /// rename; a producer appends, making a new pending file; the drain then goes on.
    private static func runSealRace(_ context: inout PowerCutContext) throws {
        var environment = context.environment
        environment["SHARE_QUEUE_STOP_AT"] = "drain-seal-unlocked"
        let child = try Host.spawn(context.tools.path("host-drain"), ["--dir", context.queue, "--quiet"],
                                   environment: environment, pipeOutput: true, silenceErrors: true)
        var ended = false
        defer {
            if !ended {
                Host.kill(child.pid)
                _ = try? Host.waitForExit(child.pid)
            }
        }
        let deadline = Date().addingTimeInterval(PowerCutContext.deadline)
        while !isStopped(child.pid) {
            guard Date() < deadline else { throw PowerCutError("the drain did not stop after its seal") }
            usleep(1000)
        }
        try context.append(["after the seal"])
        _ = kill(child.pid, SIGCONT)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while let pipe = child.output, let n = try? pipe.read(into: &chunk, from: 0), n > 0 {}
        child.output?.close()
        let status = try Host.waitForExit(child.pid)
        ended = true
        guard status == 0 else { throw PowerCutError("the drain exited with \(status)") }
    }

    /// Whether process `pid` is stopped (state T in /proc).
    private static func isStopped(_ pid: Int32) -> Bool {
        (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") T") ?? false
    }

    /// `host-drain --watch` started, two producers, and the watch stopped with SIGTERM once it printed both.
    private static func runWatch(_ context: inout PowerCutContext) throws {
        let child = try Host.spawn(context.tools.path("host-drain"), ["--dir", context.queue, "--quiet", "--watch", "--debounce", "10ms"],
                                   environment: context.environment, pipeOutput: true, silenceErrors: true)
        var output: [UInt8] = []
        var ended = false
        defer {
            if !ended {
                Host.kill(child.pid)
                _ = try? Host.waitForExit(child.pid)
            }
        }
        try context.append(["watched one"])
        try context.append(["watched two"])
        let pipe = child.output!
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(PowerCutContext.deadline)
        while PowerCutContext.ids(inJSONLines: output).count < 3 && Date() < deadline {
            let n = (try? pipe.read(into: &chunk, from: 0)) ?? 0
            if n <= 0 { break }
            output += chunk[0..<n]
        }
        _ = kill(child.pid, SIGTERM)
        while true {
            let n = (try? pipe.read(into: &chunk, from: 0)) ?? 0
            if n <= 0 { break }
            output += chunk[0..<n]
        }
        pipe.close()
        let status = try Host.waitForExit(child.pid)
        ended = true
        guard status == 0 else { throw PowerCutError("host-drain --watch exited with \(status)") }
    }
}
