import ShareQueue
import SharedTypes

/// Takes every kind of record this app knows from one queue. A typed drain
/// takes one type and dead-letters every other kind, so a queue holding
/// several types is drained once, decoding each record by its kind.
struct Inbox: DrainSink {
    var store: HostStore

    mutating func deliver(_ batch: DrainBatch) throws {
        var links: [(id: String, link: SharedLink)] = []
        var wallpaper: CurrentWallpaper?
        var refused: [RecordRefusal.Refused] = []
        for drained in batch.records {
            do {
                switch drained.record.kind {
                case SharedLink.contentKind:
                    links.append((drained.id, try drained.decode(SharedLink.self)))
                case CurrentWallpaper.contentKind:
                    wallpaper = try drained.decode(CurrentWallpaper.self)
                default:
                    // A kind from a newer extension: a dead letter now, requeued once the app knows it.
                    refused.append(.init(id: drained.id, reason: "a kind this app does not know: \(drained.record.kind)", isFinal: true))
                }
            } catch {
                // It does not decode: refused, and a dead letter after DrainOptions.maxAttempts drains.
                refused.append(.init(id: drained.id, reason: "\(error)"))
            }
        }
        // Refuse before saving anything: the drain sets the refused records
        // aside and offers the rest of the batch again.
        if !refused.isEmpty { throw RecordRefusal(refused) }
        // Throwing here keeps the batch queued for the next drain.
        try store.save(links: links, wallpaper: wallpaper)
    }
}
