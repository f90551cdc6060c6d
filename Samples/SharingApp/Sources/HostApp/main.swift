import Foundation
import ShareQueue
import SharedTypes

// The host app, as a command-line program:
//   HostApp --dir DIR --store FILE [--links-only] [--batch-size N] [--expire-after-batches N] [--watch-until-links N]
// It drains the queue into its own store and prints a one-line summary.
//
// On iOS the app drains at launch, on becoming active, on every change notice while it
// runs, and in a background task, and cancels the drain's task from the background task's
// expiration handler: iOS kills a suspended app that holds a file lock in a shared
// container (0xdead10cc), and a drain holds the queue's drain lock until it returns.
// Cancelled, it finishes the batch in hand, records its checkpoint and returns.
// `--expire-after-batches` stands in for that expiration handler here, and
// `--watch-until-links` for an app that runs while the extension shares.

let usage = "usage: HostApp --dir DIR --store FILE [--links-only] [--batch-size N] [--expire-after-batches N] [--watch-until-links N]"

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
var watchUntilLinks: Int?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--dir": dir = arguments.popFirst()
    case "--store": storePath = arguments.popFirst()
    case "--links-only": linksOnly = true
    case "--batch-size": batchSize = arguments.popFirst().flatMap { Int($0) }
    case "--expire-after-batches": expireAfterBatches = arguments.popFirst().flatMap { Int($0) }
    case "--watch-until-links": watchUntilLinks = arguments.popFirst().flatMap { Int($0) }
    default: fail("unexpected argument '\(argument)'", status: 64)
    }
}
guard let dir, let storePath else { fail("--dir and --store are required", status: 64) }

do {
    let queue = try QueueDirectory(path: dir)
    // The wallpaper is keyed, so only its newest record matters: coalescing
    // delivers that one and counts the older ones as superseded.
    var options = DrainOptions()
    options.coalesceKeys = true
    if let batchSize { options.batchSize = batchSize }
    let drainer = try QueueDrainer(directory: queue, options: options)
    // What the drain deals with on its own (damage set aside, a record made a dead letter) comes as
    // events: logged here in their own words; an app may match a case, such as `.recordDeadLettered`.
    drainer.onEvent = { event in FileHandle.standardError.write(Data("HostApp: \(event)\n".utf8)) }
    let model = InboxModel(drainer: drainer, store: try HostStore(path: storePath))
    // On iOS: let drain = Task { ... }; the background task's expiration handler calls drain.cancel().
    var drain: Task<DrainSummary, any Error>?
    var batches = 0
    model.afterBatch = {
        batches += 1
        if let expireAfterBatches, batches >= expireAfterBatches { drain?.cancel() }
    }
    let task = Task { () async throws -> DrainSummary in
        if let watchUntilLinks { return try await model.drainWhileRunning(queue, untilLinks: watchUntilLinks) }
        return linksOnly ? try await model.refreshLinks() : try await model.refresh()
    }
    drain = task
    let summary = try await task.value
    let contents = model.store.contents
    print("HostApp: \(summary.delivered) delivered, \(model.store.newLinks) new links, \(contents.links.count) stored, "
        + "wallpaper \(contents.wallpaper?.name ?? "none"), \(summary.superseded) superseded, \(summary.deadLettered) dead-lettered"
        + (summary.stoppedOnRequest ? ", stopped" : ""))
} catch let error as ShareQueueError {
    fail("\(error)", status: error.exitStatus)
} catch {
    fail("the store: \(error)", status: 74)
}
