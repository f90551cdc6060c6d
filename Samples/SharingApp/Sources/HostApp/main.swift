import Foundation
import ShareQueue
import SharedTypes

// The host app, as a command-line program:
//   HostApp --dir DIR --store FILE [--links-only] [--batch-size N] [--expire-after-batches N]
// It drains the queue into its own store and prints a one-line summary.
//
// On iOS the app drains at launch and in a background task, and cancels the
// drain's task from the task's expiration handler: iOS kills a suspended app
// that holds a file lock in a shared container (0xdead10cc), and a drain holds
// the queue's drain lock until it returns. Cancelled, it finishes the batch in
// hand, records its checkpoint and returns. `--expire-after-batches` stands in
// for that expiration handler here.

let usage = "usage: HostApp --dir DIR --store FILE [--links-only] [--batch-size N] [--expire-after-batches N]"

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("HostApp: error: \(message)\n".utf8))
    if status == 64 { FileHandle.standardError.write(Data((usage + "\n").utf8)) }
    exit(status)
}

var dir: String?
var storePath: String?
var linksOnly = false
var batchSize: Int?
var expireAfterBatches: Int?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--dir": dir = arguments.popFirst()
    case "--store": storePath = arguments.popFirst()
    case "--links-only": linksOnly = true
    case "--batch-size": batchSize = arguments.popFirst().flatMap { Int($0) }
    case "--expire-after-batches": expireAfterBatches = arguments.popFirst().flatMap { Int($0) }
    default: fail("unexpected argument '\(argument)'", status: 64)
    }
}
guard let dir, let storePath else { fail("--dir and --store are required", status: 64) }

/// The running drain's task, for the stand-in expiration handler to cancel.
final class Expiration: @unchecked Sendable {
    // @unchecked: `task` and `batches` are only touched while `lock` is held.
    private let lock = NSLock()
    private var task: Task<DrainSummary, any Error>?
    private var batches = 0
    let limit: Int?

    init(limit: Int?) { self.limit = limit }

    func start(_ task: Task<DrainSummary, any Error>) { lock.withLock { self.task = task } }

    /// Counts a batch; at the limit, expires as iOS would: the drain's task is cancelled.
    func batchDone() {
        lock.withLock {
            batches += 1
            if let limit, batches >= limit { task?.cancel() }
        }
    }
}

do {
    let queue = try QueueDirectory(path: dir)
    let store = try HostStore(path: storePath)
    // The wallpaper is keyed, so only its newest record matters: coalescing
    // delivers that one and counts the older ones as superseded.
    var options = DrainOptions()
    options.coalesceKeys = true
    if let batchSize { options.batchSize = batchSize }
    let drainer = QueueDrainer(directory: queue, options: options)
    drainer.warn = { FileHandle.standardError.write(Data("HostApp: \($0)\n".utf8)) }
    let model = InboxModel(drainer: drainer, store: store)
    let expiration = Expiration(limit: expireAfterBatches)
    // On iOS: let task = Task { ... }; the background task's expiration handler calls task.cancel().
    let task = Task { @MainActor () async throws -> DrainSummary in
        linksOnly ? try await model.refreshLinks() : try await model.refresh(afterBatch: expiration.batchDone)
    }
    expiration.start(task)
    let summary = try await task.value
    let contents = store.contents
    print("HostApp: \(summary.delivered) delivered, \(store.newLinks) new links, \(contents.links.count) stored, "
        + "wallpaper \(contents.wallpaper?.name ?? "none"), \(summary.superseded) superseded, \(summary.deadLettered) dead-lettered"
        + (summary.stoppedOnRequest ? ", stopped" : ""))
} catch let error as ShareQueueError {
    fail("\(error)", status: error.exitStatus)
} catch {
    fail("the store: \(error)", status: 74)
}
