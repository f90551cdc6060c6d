import Foundation
import ShareQueue
import SharedTypes

// The host app, as a command-line program:
//   HostApp --dir DIR --store FILE [--links-only]
// It drains the queue into its own store and prints a one-line summary.
//
// On iOS the app drains at launch and in a background task (beginBackgroundTask,
// or a BGTaskScheduler task) and sets DrainOptions.shouldStop from the task's
// expiration handler: iOS kills a suspended app that holds a file lock in a
// shared container (0xdead10cc), and a drain holds the queue's drain lock until
// it returns. Asked to stop, it finishes the batch, records its checkpoint and returns.

let usage = "usage: HostApp --dir DIR --store FILE [--links-only]"

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("HostApp: error: \(message)\n".utf8))
    if status == 64 { FileHandle.standardError.write(Data((usage + "\n").utf8)) }
    exit(status)
}

var dir: String?
var storePath: String?
var linksOnly = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--dir": dir = arguments.popFirst()
    case "--store": storePath = arguments.popFirst()
    case "--links-only": linksOnly = true
    default: fail("unexpected argument '\(argument)'", status: 64)
    }
}
guard let dir, let storePath else { fail("--dir and --store are required", status: 64) }

do {
    let queue = try QueueDirectory(path: dir)
    var store = try HostStore(path: storePath)
    let summary: DrainSummary
    if linksOnly {
        // A queue that holds links only: the typed drain decodes them. Any other
        // kind would become a dead letter, so use it only for a queue of one type.
        let drainer = QueueDrainer(directory: queue)
        drainer.warn = { FileHandle.standardError.write(Data("HostApp: \($0)\n".utf8)) }
        summary = try drainer.drain(SharedLink.self) { links in
            try store.save(links: links.map { ($0.id, $0.value) })
        }
    } else {
        // Several types in one queue: one general drain, decoding by kind. The
        // wallpaper is keyed, so only its newest record matters: coalescing
        // delivers that one and counts the older ones as superseded.
        var options = DrainOptions()
        options.coalesceKeys = true
        let drainer = QueueDrainer(directory: queue, options: options)
        drainer.warn = { FileHandle.standardError.write(Data("HostApp: \($0)\n".utf8)) }
        var inbox = Inbox(store: store)
        summary = try drainer.drain(into: &inbox)
        store = inbox.store
    }
    print("HostApp: \(summary.delivered) delivered, \(store.newLinks) new links, \(store.contents.links.count) stored, "
        + "wallpaper \(store.contents.wallpaper?.name ?? "none"), \(summary.superseded) superseded, \(summary.deadLettered) dead-lettered")
} catch let error as ShareQueueError {
    fail("\(error)", status: error.exitStatus)
} catch {
    fail("the store: \(error)", status: 74)
}
