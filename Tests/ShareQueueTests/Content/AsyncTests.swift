import Foundation
import Testing
import ShareQueue

/// The async forms: draining and appending off the caller's executor, cancellation, and sharing one appender.
@Suite("Async draining and appending")
struct AsyncTests {
    let queue = TestQueue()

    private func link(_ number: Int) -> PlainLink { Self.link(number) }
    private static func link(_ number: Int) -> PlainLink { PlainLink(url: URL(string: "https://example.com/\(number)")!, title: "link \(number)") }

    /// A host's model on the main actor, as an app keeps it: no lock, no Sendable box.
    @MainActor final class InboxModel {
        let drainer: QueueDrainer
        private(set) var links: [PlainLink] = []
        private(set) var notes: [NoteV1] = []
        private(set) var handlerRuns = 0

        init(drainer: QueueDrainer) { self.drainer = drainer }

        func refresh() async throws {
            var inbox = ContentRouter()
            inbox.on(PlainLink.self) { batch in
                // Checked by the runtime too: the handler is formed, and runs, on the main actor.
                MainActor.preconditionIsolated("a handler runs in its caller's isolation")
                self.handlerRuns += 1
                self.links += batch.map(\.value)
            }
            inbox.on(NoteV1.self) { batch in
                await Task.yield()
                MainActor.preconditionIsolated("an async handler runs in its caller's isolation")
                self.handlerRuns += 1
                self.notes += batch.map(\.value)
            }
            try await drainer.drain(into: &inbox)
        }
    }

    @Test("A main-actor model drains several types with await into itself; its handlers, async or not, run on the main actor")
    func mainActorModel() async throws {
        let directory = try QueueDirectory(path: queue.path)
        let appender = try QueueAppender(directory: directory)
        try await appender.append(link(1), source: "s")
        try await appender.append(NoteV1(title: "n", body: ""), source: "s")
        try await appender.append(link(2), source: "s")
        let model = await InboxModel(drainer: try QueueDrainer(directory: directory))
        try await model.refresh()
        #expect(await model.links == [link(1), link(2)])
        #expect(await model.notes == [NoteV1(title: "n", body: "")])
        #expect(await model.handlerRuns == 2)
    }

    @Test("An async typed drain's body captures and changes local state, awaits, and commits each batch only once it returns")
    func asyncTypedBody() async throws {
        let directory = try QueueDirectory(path: queue.path)
        try await QueueAppender(directory: directory).append(contentsOf: (1...6).map(link), source: "s")
        var options = DrainOptions()
        options.batchSize = 2
        let drainer = try QueueDrainer(directory: directory, options: options)
        struct Full: Error {}
        var taken: [PlainLink] = []
        // The body's own error comes back as it was thrown, not wrapped.
        await #expect(throws: Full.self) {
            try await drainer.drain(PlainLink.self) { batch in
                await Task.yield()
                if taken.count == 4 { throw Full() }
                taken += batch.map(\.value)
            }
        }
        #expect(taken == (1...4).map(link))
        // The batch whose body threw is still queued, with the one after it.
        var rest: [PlainLink] = []
        let summary = try await drainer.drain(PlainLink.self) { batch in rest += batch.map(\.value) }
        #expect(summary.delivered == 2 && rest == [link(5), link(6)])
    }

    @Test("A handler sees its task's cancellation; the drain stops after that batch and the rest stay queued")
    func cancellation() async throws {
        let directory = try QueueDirectory(path: queue.path)
        try await QueueAppender(directory: directory).append(contentsOf: (1...10).map(link), source: "s")
        var options = DrainOptions()
        options.batchSize = 2
        let drainer = try QueueDrainer(directory: directory, options: options)
        let task = Task { () async throws -> ([PlainLink], [Bool], DrainSummary) in
            var delivered: [PlainLink] = []
            var seen: [Bool] = []
            let summary = try await drainer.drain(PlainLink.self) { batch in
                seen.append(Task.isCancelled)
                delivered += batch.map(\.value)
                // As a background task's expiration handler would, from inside the first batch.
                withUnsafeCurrentTask { $0?.cancel() }
                seen.append(Task.isCancelled)
            }
            return (delivered, seen, summary)
        }
        let (delivered, seen, summary) = try await task.value
        #expect(summary.stoppedOnRequest)
        #expect(summary.delivered == 2 && delivered == [link(1), link(2)])
        #expect(seen == [false, true])
        // The rest are delivered by the next drain, once each.
        var rest: [PlainLink] = []
        let second = try await drainer.drain(PlainLink.self) { rest += $0.map(\.value) }
        #expect(second.delivered == 8 && rest == (3...10).map(link))
    }

    @Test("A router with an async handler is refused by the blocking drain before it reads anything")
    func blockingDrainRefusesAsyncHandlers() throws {
        let directory = try QueueDirectory(path: queue.path)
        try QueueAppender(directory: directory).append(link(1), source: "s")
        var inbox = ContentRouter()
        inbox.on(PlainLink.self) { _ in await Task.yield() }
        let failure = #expect(throws: ShareQueueError.self) { try QueueDrainer(directory: directory).drain(into: &inbox) }
        #expect(failure?.code == .configuration)
        #expect(failure?.message.contains("'PlainLink'") == true, "\(failure?.message ?? "")")
        #expect(try queue.drain().lines.count == 1)
    }

    @Test("A main-actor caller's typed drain runs its body on the main actor, with or without await in it")
    @MainActor func typedBodyOnMainActor() async throws {
        let directory = try QueueDirectory(path: queue.path)
        try await QueueAppender(directory: directory).append(contentsOf: (1...3).map(link), source: "s")
        var options = DrainOptions()
        options.batchSize = 1
        let drainer = try QueueDrainer(directory: directory, options: options)
        var batches = 0
        try await drainer.drain(PlainLink.self) { _ in
            MainActor.preconditionIsolated("a synchronous body runs in its caller's isolation")
            batches += 1
        }
        try await QueueAppender(directory: directory).append(link(4), source: "s")
        try await drainer.drain(PlainLink.self) { _ in
            await Task.yield()
            MainActor.preconditionIsolated("an async body runs in its caller's isolation")
            batches += 1
        }
        #expect(batches == 4)
    }

    /// A drainer of batches of `size`, over `count` links.
    private func linkBatches(_ count: Int, size: Int) async throws -> QueueDrainer {
        let directory = try QueueDirectory(path: queue.path)
        try await QueueAppender(directory: directory).append(contentsOf: (1...count).map(link), source: "s")
        var options = DrainOptions()
        options.batchSize = size
        // A loop left with break lets go of the drain lock a moment later, on the drain's thread.
        options.waitSeconds = 5
        return try QueueDrainer(directory: directory, options: options)
    }

    @Test("A loop over batches commits each batch when it asks for the next; the batch it breaks out of stays queued")
    func batchesBreak() async throws {
        let drainer = try await linkBatches(6, size: 2)
        var seen: [PlainLink] = []
        for try await batch in drainer.batches(of: PlainLink.self) {
            seen += batch.map(\.value)
            if seen.count == 4 { break }
        }
        #expect(seen == (1...4).map(link))
        var rest: [PlainLink] = []
        for try await batch in drainer.batches(of: PlainLink.self) { rest += batch.map(\.value) }
        #expect(rest == (3...6).map(link))
        #expect(try queue.drain().lines.isEmpty)
    }

    @Test("A loop over batches that throws leaves the batch it held queued")
    func batchesThrow() async throws {
        struct Offline: Error {}
        let drainer = try await linkBatches(4, size: 2)
        await #expect(throws: Offline.self) {
            for try await batch in drainer.batches(of: PlainLink.self) where batch.contains(where: { $0.value == self.link(3) }) {
                throw Offline()
            }
        }
        var rest: [PlainLink] = []
        for try await batch in drainer.batches(of: PlainLink.self) { rest += batch.map(\.value) }
        #expect(rest == [link(3), link(4)])
    }

    @Test("A loop over batches whose task is cancelled throws CancellationError and leaves the batch it held queued")
    func batchesCancelled() async throws {
        let drainer = try await linkBatches(6, size: 2)
        let task = Task { () async throws -> [PlainLink] in
            var seen: [PlainLink] = []
            for try await batch in drainer.batches(of: PlainLink.self) {
                seen += batch.map(\.value)
                if seen.count == 4 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return seen
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        // The first batch was committed when the loop asked for the second; the second stays.
        var rest: [PlainLink] = []
        try await drainer.drain(PlainLink.self) { rest += $0.map(\.value) }
        #expect(rest == (3...6).map(link))
    }

    @Test("A loop over batches throws what the drain throws, such as a kind it does not take")
    func batchesFail() async throws {
        let drainer = try await linkBatches(2, size: 10)
        try await QueueAppender(directory: try QueueDirectory(path: queue.path)).append(NoteV1(title: "n", body: ""), source: "s")
        var seen = 0
        let failure = await #expect(throws: ShareQueueError.self) {
            for try await batch in drainer.batches(of: PlainLink.self) { seen += batch.count }
        }
        #expect(failure?.code == .configuration && seen == 0)
        var links = 0
        for try await batch in drainer.batches(of: PlainLink.self, otherKinds: .setAside) { links += batch.count }
        #expect(links == 2)
    }

    @Test("A task cancelled before the drain starts delivers nothing")
    func cancelledBeforeStart() async throws {
        let directory = try QueueDirectory(path: queue.path)
        try await QueueAppender(directory: directory).append(link(1), source: "s")
        let drainer = try QueueDrainer(directory: directory)
        let task = Task { () async throws -> DrainSummary in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await drainer.drain(PlainLink.self) { _ in }
        }
        let summary = try await task.value
        #expect(summary.stoppedOnRequest && summary.delivered == 0)
        #expect(try queue.drain().lines.count == 1)
    }

    @Test("Tasks share one appender: every append lands once, with its own id")
    func sharedAppender() async throws {
        let directory = try QueueDirectory(path: queue.path)
        let appender = try QueueAppender(directory: directory)
        let ids = try await withThrowingTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var ids: [String] = []
                    for number in 0..<50 { ids.append(try await appender.append(Self.link(task * 100 + number), source: "s")) }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(ids).count == 400)
        let drained = try queue.drain()
        #expect(drained.lines.count == 400)
    }

    @Test("Threads share one appender: every append lands once, with its own id")
    func sharedAppenderThreads() throws {
        let directory = try QueueDirectory(path: queue.path)
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: directory, options: options)
        let ids = Collected<String>()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var mine: [String] = []
            for number in 0..<1000 {
                // A thread whose append fails records nothing; the count below then falls short.
                if let id = try? appender.append(RecordDraft(.text("\(thread)-\(number)"), source: "s")) { mine.append(id) }
            }
            ids.add(mine)
        }
        #expect(Set(ids.values).count == 8000)
        let drained = try queue.drain()
        #expect(drained.lines.count == 8000)
    }

    @Test("A typed publish appends only what changed, blocking or not")
    func typedAppendIfChanged() async throws {
        let directory = try QueueDirectory(path: queue.path)
        let appender = try QueueAppender(directory: directory)
        // The blocking form, as a synchronous caller writes it.
        let first = try { () throws in try appender.appendIfChanged(link(1), source: "s", key: "current") }()
        let same = try await appender.appendIfChanged(link(1), source: "s", key: "current")
        let changed = try await appender.appendIfChanged(link(2), source: "s", key: "current")
        #expect(first.appended && !same.appended && changed.appended)
        #expect(same.id == first.id)
        var values: [DrainedValue<PlainLink>] = []
        try await QueueDrainer(directory: directory).drain(PlainLink.self) { values += $0 }
        #expect(values.map(\.value) == [link(1), link(2)])
        #expect(values.allSatisfy { $0.key == "current" })
    }
}
