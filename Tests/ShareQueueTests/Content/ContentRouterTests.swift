import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// Draining several content types in one pass, and single-type drains that never send other types away.
@Suite("Content router")
struct ContentRouterTests {
    let queue = TestQueue()
    var directory: QueueDirectory { get throws { try QueueDirectory(path: queue.path) } }

    private func link(_ number: Int) -> PlainLink { PlainLink(url: URL(string: "https://example.com/\(number)")!, title: "link \(number)") }
    private func note(_ number: Int) -> NoteV1 { NoteV1(title: "note \(number)", body: "") }

    /// Links and notes, interleaved, with one record of a kind nobody handles.
    private func appendMixed() throws {
        let appender = try QueueAppender(directory: try directory)
        try appender.append(link(1), source: "s")
        try appender.append(note(1), source: "s")
        try appender.append(RecordDraft(.text("plain text"), source: "s"))
        try appender.append(link(2), source: "s")
        try appender.append(note(2), source: "s")
    }

    @Test("Two single-type drains one after the other move nothing: each stops at the other's kind and names it")
    func noBouncing() throws {
        try appendMixed()
        // A process another test forks at the same moment holds a copy of the drain lock until its exec.
        var options = DrainOptions()
        options.waitSeconds = 5
        let drainer = try QueueDrainer(directory: try directory, options: options)
        for _ in 1...2 {
            var links = 0
            let linkFailure = #expect(throws: ShareQueueError.self) { try drainer.drain(PlainLink.self) { links += $0.count } }
            #expect(linkFailure?.code == .configuration)
            #expect((linkFailure?.underlying as? UnhandledKind)?.kind == "note")
            #expect(linkFailure?.message.contains("'note'") == true, "\(linkFailure?.message ?? "")")
            var notes = 0
            let noteFailure = #expect(throws: ShareQueueError.self) { try drainer.drain(NoteV1.self) { notes += $0.count } }
            #expect((noteFailure?.underlying as? UnhandledKind)?.kind == "PlainLink")
            // Both stopped before their batch: nothing delivered, nothing set aside.
            #expect(links == 0 && notes == 0)
            #expect(try queue.deadLetters().isEmpty)
        }
        // All five records are still there, in order, for a drain that takes them.
        let result = try queue.drain()
        #expect(result.lines.count == 5)
    }

    @Test("One pass delivers each kind to its handler in queue order and sets the unknown kind aside, recoverably")
    func routes() throws {
        try appendMixed()
        let links = Collected<PlainLink>(), notes = Collected<NoteV1>()
        var inbox = ContentRouter()
        inbox.on(PlainLink.self) { links.add($0.map(\.value)) }
        inbox.on(NoteV1.self) { notes.add($0.map(\.value)) }
        inbox.otherwise = .setAside
        // Three lock-taking calls in a row: a process another test spawns at that moment
        // can hold a copy of the drain lock's descriptor until it execs, so wait a little.
        var options = DrainOptions()
        options.waitSeconds = 5
        let drainer = try QueueDrainer(directory: try directory, options: options)
        let events = Collected<QueueEvent>()
        drainer.onEvent = { events.add([$0]) }
        let summary = try drainer.drain(into: &inbox)
        #expect(links.values == [link(1), link(2)])
        #expect(notes.values == [note(1), note(2)])
        #expect(summary.delivered == 4 && summary.deadLettered == 1)
        #expect(inbox.setAside == [.text: 1])
        // The one event: the text record made a dead letter, refused for good by the router.
        guard events.values.count == 1, case .recordDeadLettered(_, .refusedForGood, let reason) = events.values[0] else {
            Issue.record("\(events.values)")
            return
        }
        #expect(reason.contains("no handler takes records of kind 'text'"), "\(reason)")
        // Put back, it is set aside again by the same host, and never delivered twice.
        #expect(try drainer.requeueDeadLetters() == 1)
        var again = inbox
        #expect(try drainer.drain(into: &again).deadLettered == 1)
        #expect(again.setAside == [.text: 2])
        #expect(links.values.count == 2)
    }

    @Test("By default, as under .fail, a router stops at an unknown kind and leaves it and all after it queued")
    func failsOnUnknown() throws {
        try appendMixed()
        var inbox = ContentRouter()
        inbox.on(PlainLink.self) { _ in }
        inbox.on(NoteV1.self) { _ in }
        #expect(inbox.otherwise == .fail)
        let failure = #expect(throws: ShareQueueError.self) { try QueueDrainer(directory: try directory).drain(into: &inbox) }
        #expect((failure?.underlying as? UnhandledKind)?.kind == .text)
        #expect(try queue.deadLetters().isEmpty)
        #expect(try queue.drain().lines.count == 5)
    }

    @Test("A handler that throws keeps the whole batch queued, and the drain rethrows its own error as it is")
    func handlerFails() throws {
        struct StoreOffline: Error, Equatable { let attempt: Int }
        try appendMixed()
        var inbox = ContentRouter()
        inbox.on(PlainLink.self) { _ in }
        inbox.on(NoteV1.self) { _ in throw StoreOffline(attempt: 7) }
        inbox.otherwise = .setAside
        #expect(throws: StoreOffline(attempt: 7)) { try QueueDrainer(directory: try directory).drain(into: &inbox) }
        // The text record, of no handled kind, is not set aside: its batch was not delivered, so it stays queued with it.
        #expect(try queue.deadLetters().isEmpty)
        #expect(try queue.drain().lines.count == 5)
    }

    struct StoreOffline: Error {}

    @Test("A record a router sets aside is a dead letter only once its batch commits, and after a requeue is delivered once")
    func setAsideAtCommit() throws {
        let appender = try QueueAppender(directory: try directory)
        try appender.append(link(1), source: "s")
        let noteID = try appender.append(note(1), source: "s")
        try appender.append(link(2), source: "s")
        var options = DrainOptions()
        options.waitSeconds = 5
        let drainer = try QueueDrainer(directory: try directory, options: options)

        var failing = ContentRouter()
        failing.on(PlainLink.self) { _ in throw StoreOffline() }
        failing.otherwise = .setAside
        #expect(throws: StoreOffline.self) { try drainer.drain(into: &failing) }
        #expect(try queue.deadLetters().isEmpty)
        var pending: [String] = []
        try QueueInspector(directory: try directory).forEachPending { pending.append($0.id) }
        #expect(pending.count == 3 && pending.contains(noteID))

        let links = Collected<PlainLink>()
        var working = ContentRouter()
        working.on(PlainLink.self) { links.add($0.map(\.value)) }
        working.otherwise = .setAside
        #expect(try drainer.drain(into: &working).deadLettered == 1)
        #expect(try queue.deadLetters().map { ($0["record"] as? [String: Any])?["id"] as? String } == [noteID])
        #expect(links.values == [link(1), link(2)])
        #expect(try queue.status()["deadLetters"] as? Int == 1)

        #expect(try drainer.requeueDeadLetters() == 1)
        let notes = Collected<String>()
        var knowing = ContentRouter()
        knowing.on(PlainLink.self) { links.add($0.map(\.value)) }
        knowing.on(NoteV1.self) { notes.add($0.map(\.id)) }
        #expect(try drainer.drain(into: &knowing).delivered == 1)
        #expect(notes.values == [noteID])
        #expect(try queue.deadLetters().isEmpty && links.values.count == 2)
    }

    @Test("A requeue after a batch whose handler threw puts nothing back: a host that learns the kind receives the record once")
    func requeueAfterFailedBatch() throws {
        let appender = try QueueAppender(directory: try directory)
        try appender.append(link(1), source: "s")
        let noteID = try appender.append(note(1), source: "s")
        var options = DrainOptions()
        options.waitSeconds = 5
        let drainer = try QueueDrainer(directory: try directory, options: options)
        var failing = ContentRouter()
        failing.on(PlainLink.self) { _ in throw StoreOffline() }
        failing.otherwise = .setAside
        #expect(throws: StoreOffline.self) { try drainer.drain(into: &failing) }
        #expect(try drainer.requeueDeadLetters() == 0)
        let notes = Collected<String>()
        var knowing = ContentRouter()
        knowing.on(PlainLink.self) { _ in }
        knowing.on(NoteV1.self) { notes.add($0.map(\.id)) }
        let summary = try drainer.drain(into: &knowing)
        #expect(summary.delivered == 2 && summary.deadLettered == 0)
        #expect(notes.values == [noteID])
    }

    @Test("A blocking drain's handlers capture and change local state, on the calling thread")
    func handlersChangeLocalState() throws {
        try appendMixed()
        var links: [PlainLink] = []
        var notes = 0
        var inbox = ContentRouter()
        inbox.on(PlainLink.self) { links += $0.map(\.value) }
        inbox.on(NoteV1.self) { notes += $0.count }
        inbox.otherwise = .setAside
        let thread = Thread.current
        var sameThread = true
        inbox.on(NoteV1.self) { batch in
            notes += batch.count
            sameThread = sameThread && Thread.current == thread
        }
        let summary = try QueueDrainer(directory: try directory).drain(into: &inbox)
        #expect(links == [link(1), link(2)] && notes == 2 && sameThread)
        #expect(summary.delivered == 4 && inbox.setAside == [.text: 1])
    }

    @Test("A record of a handled kind that does not decode is refused and counted; the others are delivered")
    func undecodable() throws {
        let appender = try QueueAppender(directory: try directory)
        try appender.append(link(1), source: "s")
        let broken = try JSONText(validating: Array(#"{"title":42}"#.utf8))
        try appender.append(RecordDraft(.value(broken, kind: "note"), source: "s"))
        try appender.append(note(2), source: "s")
        var options = DrainOptions()
        options.maxAttempts = 1
        let links = Collected<PlainLink>(), notes = Collected<NoteV1>()
        var inbox = ContentRouter()
        inbox.on(PlainLink.self) { links.add($0.map(\.value)) }
        inbox.on(NoteV1.self) { notes.add($0.map(\.value)) }
        let summary = try QueueDrainer(directory: try directory, options: options).drain(into: &inbox)
        #expect(links.values == [link(1)] && notes.values == [note(2)])
        #expect(summary.deadLettered == 1)
        #expect(inbox.setAside.isEmpty)
    }
}

/// Values collected by handlers that may run on any thread.
final class Collected<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `stored` holds `lock`.
    private let lock = NSLock()
    private var stored: [Value] = []

    func add(_ values: [Value]) { lock.withLock { stored += values } }
    var values: [Value] { lock.withLock { stored } }
}
