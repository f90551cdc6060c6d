import ShareQueue
import SharedTypes

/// The host's view of the shared queue, on the main actor as an app's model is.
///
/// A drain runs off the main actor (`try await drainer.drain(into:)`), so the
/// interface stays responsive; cancelling the task that awaits it (as an iOS
/// background task's expiration handler does) stops it after the batch in hand,
/// with that batch delivered and the rest still queued.
@MainActor
final class InboxModel {
    let drainer: QueueDrainer
    let store: HostStore
    /// Kinds from a newer extension this app has set aside, to requeue once it knows them.
    private(set) var setAside: [Record.Kind: Int] = [:]

    init(drainer: QueueDrainer, store: HostStore) {
        self.drainer = drainer
        self.store = store
    }

    /// Drains every type this app knows in one pass.
    /// - Parameter afterBatch: Called on the drain's thread after each batch the store took.
    func refresh(afterBatch: @escaping @Sendable () -> Void = {}) async throws -> DrainSummary {
        let store = self.store
        var inbox = ContentRouter()
        inbox.on(SharedLink.self) { links in
            try store.save(links)
            afterBatch()
        }
        inbox.on(CurrentWallpaper.self) { wallpapers in try store.save(wallpapers) }
        // Kinds this app does not know yet go to the dead letters, counted in inbox.setAside.
        let summary = try await drainer.drain(into: &inbox)
        setAside.merge(inbox.setAside, uniquingKeysWith: +)
        return summary
    }

    /// Drains the links alone, for a queue that holds nothing else: at a record
    /// of another kind it stops, moves nothing, and throws `.configuration` naming the kind.
    func refreshLinks() async throws -> DrainSummary {
        let store = self.store
        return try await drainer.drain(SharedLink.self) { links in try store.save(links) }
    }
}
