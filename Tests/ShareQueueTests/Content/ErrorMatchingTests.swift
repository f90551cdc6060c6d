import Foundation
import Testing
import ShareQueue

/// Catching a failure by its kind, and finding a handler's own error in it, with only `import ShareQueue`.
@Suite("Error matching")
struct ErrorMatchingTests {
    let queue = TestQueue()

    struct StoreOffline: Error, Equatable {}

    @Test("catch ShareQueueError.tryAgain matches a failed handler, and its error comes back with its type")
    func tryAgain() throws {
        let directory = try QueueDirectory(path: queue.path)
        try QueueAppender(directory: directory).append(PlainLink(url: URL(string: "https://x")!, title: "x"), source: "s")
        var matched = false
        let drainer = try QueueDrainer(directory: directory)
        do {
            try drainer.drain(PlainLink.self) { _ in throw StoreOffline() }
        } catch ShareQueueError.configuration {
            Issue.record("matched the wrong kind")
        } catch ShareQueueError.tryAgain {
            matched = true
        } catch {
            Issue.record("not matched: \(error)")
        }
        #expect(matched)
        // The handler's own error, as it was thrown.
        do {
            try drainer.drain(PlainLink.self) { _ in throw StoreOffline() }
        } catch {
            #expect(error.underlying as? StoreOffline == StoreOffline())
        }
    }

    @Test("The pattern works on an untyped error too")
    func untyped() {
        let error: any Error = ShareQueueError(.badData, "bad")
        var kind = ""
        switch error {
        case ShareQueueError.tryAgain: kind = "tryAgain"
        case ShareQueueError.badData: kind = "badData"
        default: kind = "other"
        }
        #expect(kind == "badData")
        #expect(!(ShareQueueError.badData ~= (StoreOffline() as any Error)))
    }
}
