import Foundation
import ShareQueue
import SharedTypes

/// The host's view of the shared queue, on the main actor as an app's model is.
///
/// A drain reads the queue on a thread of its own, so the interface stays responsive,
/// and calls this model's handlers here, on the main actor: they change the model's
/// state directly, and `await` what should not run on the main actor. Cancelling the
/// task that awaits a drain (as an iOS background task's expiration handler does)
/// stops it after the batch in hand, with that batch delivered and the rest still queued.
@MainActor
final class InboxModel {
    let drainer: QueueDrainer
    private(set) var store: HostStore
    /// Kinds from a newer extension this app has set aside, to requeue once it knows them.
    private(set) var setAside: [Record.Kind: Int] = [:]
    /// Called after each batch the store took.
    var afterBatch: () -> Void = {}

    init(drainer: QueueDrainer, store: HostStore) {
        self.drainer = drainer
        self.store = store
    }

    /// Drains every type this app knows in one pass.
    /// - Throws: The store's own error as it threw it, with the batch queued, or a `ShareQueueError`.
    func refresh() async throws -> DrainSummary {
        var inbox = ContentRouter()
        inbox.on(SharedLink.self) { links in try await self.take(links) }
        inbox.on(CurrentWallpaper.self) { wallpapers in try self.store.save(wallpapers) }
        // This app shares its queue with no other: a kind it does not know would be a newer
        // extension's, so it sets such records aside (counted in inbox.setAside) rather than stop.
        inbox.otherwise = .setAside
        let summary = try await drainer.drain(into: &inbox)
        setAside.merge(inbox.setAside, uniquingKeysWith: +)
        return summary
    }

    /// Drains the links alone, for a queue that holds nothing else: at a record
    /// of another kind it stops, moves nothing, and throws `.configuration` naming the kind.
    func refreshLinks() async throws -> DrainSummary {
        try await drainer.drain(SharedLink.self) { links in try await self.take(links) }
    }

    /// Drains on every change notice while the app runs, until the store holds `links`
    /// links or the task is cancelled.
    func drainWhileRunning(_ queue: QueueDirectory, untilLinks links: Int) async throws -> DrainSummary {
        var total = DrainSummary()
        for await _ in try queue.changes() {
            do {
                let summary = try await refresh()
                total.delivered += summary.delivered
                total.superseded += summary.superseded
                total.deadLettered += summary.deadLettered
            } catch ShareQueueError.busy {
                // Another drain holds the queue: nothing was lost; the next notice retries.
            } catch where !(error is ShareQueueError) {
                // The store's own error, as it threw it: the batch stays queued; the next notice retries.
            }
            if store.contents.links.count >= links { break }
        }
        return total
    }

    /// Keeps a batch of links and the files that came with them.
    private func take(_ links: [DrainedValue<SharedLink>]) async throws {
        // Moving files is the store's disk work: done off the main actor, then saved here.
        let files = try await Self.keepFiles(of: links, in: store.filesFolder)
        try store.save(links, files: files)
        afterBatch()
    }

    nonisolated private static func keepFiles(of links: [DrainedValue<SharedLink>], in folder: URL) async throws -> [String: [String]] {
        try HostStore.keepFiles(of: links, in: folder)
    }
}
