import Foundation
import Testing
import ShareQueue

/// The async forms: draining and appending off the caller's executor, cancellation, and sharing one appender.
@Suite("Async draining and appending")
struct AsyncTests {
    let queue = TestQueue()

    private func link(_ number: Int) -> PlainLink { Self.link(number) }
    private static func link(_ number: Int) -> PlainLink { PlainLink(url: URL(string: "https://example.com/\(number)")!, title: "link \(number)") }

    /// A host's model on the main actor, as an app keeps it.
    @MainActor final class InboxModel {
        let drainer: QueueDrainer
        private(set) var links: [PlainLink] = []
        private(set) var notes: [NoteV1] = []
        private(set) var handledOnMain = false

        init(drainer: QueueDrainer) { self.drainer = drainer }

        func refresh() async throws {
            let links = Collected<PlainLink>(), notes = Collected<NoteV1>(), onMain = Collected<Bool>()
            var inbox = ContentRouter()
            inbox.on(PlainLink.self) { links.add($0.map(\.value)); onMain.add([Thread.isMainThread]) }
            inbox.on(NoteV1.self) { notes.add($0.map(\.value)) }
            try await drainer.drain(into: &inbox)
            self.links += links.values
            self.notes += notes.values
            handledOnMain = onMain.values.contains(true)
        }
    }

    @Test("A main-actor model drains several types with await; the handlers run off the main thread")
    func mainActorModel() async throws {
        let directory = try QueueDirectory(path: queue.path)
        let appender = try QueueAppender(directory: directory)
        try await appender.append(link(1), source: "s")
        try await appender.append(NoteV1(title: "n", body: ""), source: "s")
        try await appender.append(link(2), source: "s")
        let model = await InboxModel(drainer: QueueDrainer(directory: directory))
        try await model.refresh()
        #expect(await model.links == [link(1), link(2)])
        #expect(await model.notes == [NoteV1(title: "n", body: "")])
        #expect(await model.handledOnMain == false)
    }

    @Test("Cancelling the task stops the drain after the batch in hand; the rest stay queued")
    func cancellation() async throws {
        let directory = try QueueDirectory(path: queue.path)
        try await QueueAppender(directory: directory).append(contentsOf: (1...10).map(link), source: "s")
        var options = DrainOptions()
        options.batchSize = 2
        let drainer = QueueDrainer(directory: directory, options: options)
        let delivered = Collected<PlainLink>()
        let running = Collected<Task<DrainSummary, any Error>>()
        // The handler waits until the task is known, then cancels it from inside the first batch.
        let known = DispatchSemaphore(value: 0)
        var inbox = ContentRouter()
        inbox.on(PlainLink.self) { values in
            known.wait()
            known.signal()
            delivered.add(values.map(\.value))
            running.values.first?.cancel()
        }
        let router = inbox
        let task = Task { () async throws -> DrainSummary in
            var inbox = router
            return try await drainer.drain(into: &inbox)
        }
        running.add([task])
        known.signal()
        let summary = try await task.value
        #expect(summary.stoppedOnRequest)
        #expect(summary.delivered == 2 && delivered.values == [link(1), link(2)])
        // The rest are delivered by the next drain, once each.
        let rest = try await drainer.drain(PlainLink.self) { delivered.add($0.map(\.value)) }
        #expect(rest.delivered == 8 && delivered.values == (1...10).map(link))
    }

    @Test("A task cancelled before the drain starts delivers nothing")
    func cancelledBeforeStart() async throws {
        let directory = try QueueDirectory(path: queue.path)
        try await QueueAppender(directory: directory).append(link(1), source: "s")
        let drainer = QueueDrainer(directory: directory)
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
        let values = Collected<DrainedValue<PlainLink>>()
        try await QueueDrainer(directory: directory).drain(PlainLink.self) { values.add($0) }
        #expect(values.values.map(\.value) == [link(1), link(2)])
        #expect(values.values.allSatisfy { $0.key == "current" })
    }
}
