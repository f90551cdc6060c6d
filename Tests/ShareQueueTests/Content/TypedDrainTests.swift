import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// Draining one content type: what it takes, what it refuses, and that nothing is lost.
@Suite("Typed drains")
struct TypedDrainTests {
    let queue = TestQueue()
    var directory: QueueDirectory { get throws { try QueueDirectory(path: queue.path) } }

    private func link(_ number: Int) -> PlainLink { PlainLink(url: URL(string: "https://example.com/\(number)")!, title: "link \(number)") }

    @Test("Asked to, a typed drain sets records of another kind aside at once, and they come back for a host that knows them")
    func otherKinds() throws {
        let appender = try QueueAppender(directory: try directory)
        try appender.append(link(1), source: "s")
        try appender.append(NoteV1(title: "n", body: "b"), source: "s")
        try appender.append(RecordDraft(.text("plain text"), source: "s"))
        try appender.append(link(2), source: "s")
        var links: [PlainLink] = []
        let summary = try QueueDrainer(directory: try directory).drain(PlainLink.self, otherKinds: .setAside) { links += $0.map(\.value) }
        #expect(links == [link(1), link(2)])
        #expect(summary.delivered == 2)
        #expect(summary.deadLettered == 2)
        #expect(try queue.deadLetters().count == 2)
        // A host that knows notes puts the letters back and takes its own; the text is refused again.
        #expect(try QueueDrainer(directory: try directory).requeueDeadLetters() == 2)
        var notes: [NoteV1] = []
        let second = try QueueDrainer(directory: try directory).drain(NoteV1.self, otherKinds: .setAside) { notes += $0.map(\.value) }
        #expect(notes == [NoteV1(title: "n", body: "b")])
        #expect(second.delivered == 1 && second.deadLettered == 1)
        #expect(try queue.deadLetters().count == 1)
    }

    @Test("A record's date is read by the grammar a coalescing drain reads it by: one a drain dates, a typed drain takes")
    func datesByOneGrammar() throws {
        let dates = ["2026-11-29T10:00:00.000Z", "0000-03-01T00:00:00Z", "2026-11-29T10:00:00.1234567891Z", "2026-11-29T12:00:00+02:00",
                     "2026-11-29t10:00:00.000z", "2016-12-31T23:59:60Z", "2026-11-29T10:00:00", "yesterday"]
        let content = Array(#"{"title":"t","url":"https://x"}"#.utf8)
        try queue.appendStored(dates.enumerated().map { index, date in
            Record.encode(id: "00000000-0000-4000-8000-00000000000\(index)", date: date, source: "foreign", kind: Record.Kind(for: PlainLink.self),
                          text: nil, jsonBytes: content, key: nil, meta: nil)
        })
        var options = DrainOptions()
        options.maxAttempts = 1
        var taken: [Date] = []
        let summary = try QueueDrainer(directory: try directory, options: options).drain(PlainLink.self) { taken += $0.map(\.date) }
        let expected: [Double] = [1_795_946_400, -62_162_035_200, 1_795_946_400.1234567891, 1_795_946_400]
        #expect(taken.count == expected.count)
        for (date, seconds) in zip(taken, expected) { #expect(abs(date.timeIntervalSince1970 - seconds) < 1e-6, "\(date.timeIntervalSince1970)") }
        #expect(summary.deadLettered == 4)
        #expect(dates.map { DateInstant($0).isParsed } == [true, true, true, true, false, false, false, false])
    }

    @Test("A record of the kind that does not decode is refused, counted, and dead-lettered at the limit; the rest are delivered")
    func undecodable() throws {
        let appender = try QueueAppender(directory: try directory)
        try appender.append(link(1), source: "s")
        let broken = try JSONText(validating: Array(#"{"url":"https://x","title":42}"#.utf8))
        let brokenID = try appender.append(RecordDraft(.value(broken, kind: Record.Kind(for: PlainLink.self)), source: "s"))
        try appender.append(link(3), source: "s")
        var options = DrainOptions()
        options.maxAttempts = 3
        let drainer = try QueueDrainer(directory: try directory, options: options)
        var links: [PlainLink] = []
        for attempt in 1...2 {
            do {
                try drainer.drain(PlainLink.self) { links += $0.map(\.value) }
                Issue.record("attempt \(attempt) took the broken record")
            } catch let error as ShareQueueError where error.code == .sinkRefused {
                #expect(error.message.contains("attempt \(attempt) of 3"), "\(error.message)")
            } catch {
                Issue.record("not a refusal: \(error)")
            }
        }
        // The record before it was delivered once; the one after is delivered in each run, the
        // checkpoint staying before the refused record until it is set aside (at least once).
        #expect(links == [link(1), link(3), link(3)])
        let summary = try drainer.drain(PlainLink.self) { links += $0.map(\.value) }
        #expect(links == [link(1), link(3), link(3), link(3)])
        #expect(summary.deadLettered == 1)
        let letters = try queue.deadLetters()
        #expect(letters.count == 1)
        #expect((letters.first?["record"] as? [String: Any])?["id"] as? String == brokenID)
        #expect((letters.first?["error"] as? String)?.contains("at .title") == true)
    }

    @Test("When the host's own code fails, the batch stays queued and nothing is dead-lettered")
    func bodyFails() throws {
        struct SaveFailed: Error {}
        let appender = try QueueAppender(directory: try directory)
        try appender.append(contentsOf: (1...5).map(link), source: "s")
        let drainer = try QueueDrainer(directory: try directory)
        for _ in 1...6 {
            #expect(throws: SaveFailed.self) { try drainer.drain(PlainLink.self) { _ in throw SaveFailed() } }
        }
        var links: [PlainLink] = []
        let summary = try drainer.drain(PlainLink.self) { links += $0.map(\.value) }
        #expect(links == (1...5).map(link))
        #expect(summary.deadLettered == 0)
        #expect(try queue.deadLetters().isEmpty)
    }

    @Test("Each value comes with its record's id, date, source, key and labels")
    func labels() throws {
        let before = Date()
        let id = try QueueAppender(directory: try directory).append(link(1), source: "share-extension", key: "k", meta: ["app": "1.2"])
        var values: [DrainedValue<PlainLink>] = []
        try QueueDrainer(directory: try directory).drain(PlainLink.self) { values += $0 }
        let value = try #require(values.first)
        #expect(value.id == id)
        #expect(value.source == "share-extension")
        #expect(value.key == "k")
        #expect(value.meta == ["app": "1.2"])
        #expect(abs(value.date.timeIntervalSince(before)) < 60)
    }

    @Test("A sink may refuse records by id, for good or counted; one it does not hold is a failure")
    func refusalsByID() throws {
        struct Refusing: DrainSink {
            var refuse: (DrainBatch) -> RecordRefusal?
            var delivered: [String] = []
            mutating func deliver(_ batch: DrainBatch) throws {
                if let refusal = refuse(batch) { throw refusal }
                delivered += batch.records.map(\.id)
            }
        }
        let ids = try QueueAppender(directory: try directory).append((1...6).map { RecordDraft(.text("\($0)"), source: "s") })
        var sink = Refusing { batch in
            let refused = batch.records.filter { ["2", "4"].contains($0.record.text) }
            return refused.isEmpty ? nil : RecordRefusal(refused.map { .init(id: $0.id, reason: "no", isFinal: true) })
        }
        let summary = try QueueDrainer(directory: try directory).drain(into: &sink)
        #expect(sink.delivered == [ids[0], ids[2], ids[4], ids[5]])
        #expect(summary.deadLettered == 2 && summary.delivered == 4)
        // A refusal naming no record of the batch leaves everything queued.
        try QueueAppender(directory: try directory).append(RecordDraft(.text("7"), source: "s"))
        var stranger = Refusing { _ in RecordRefusal(id: "not-in-the-batch", reason: "no") }
        #expect(throws: ShareQueueError.self) { try QueueDrainer(directory: try directory).drain(into: &stranger) }
        #expect(try queue.drain().lines.count == 1)
    }

    @Test("Dead-lettering many records costs one write per batch, not one scan per record")
    func manyOtherKinds() throws {
        let appender = try QueueAppender(directory: try directory)
        try appender.append(contentsOf: (1...3000).map { NoteV1(title: "\($0)", body: "") }, source: "s")
        try appender.append(link(1), source: "s")
        var links: [PlainLink] = []
        let summary = try QueueDrainer(directory: try directory).drain(PlainLink.self, otherKinds: .setAside) { links += $0.map(\.value) }
        #expect(links == [link(1)])
        #expect(summary.deadLettered == 3000)
        #expect(try queue.deadLetters().count == 3000)
        #expect(try QueueDrainer(directory: try directory).requeueDeadLetters() == 3000)
        var notes = 0
        try QueueDrainer(directory: try directory).drain(NoteV1.self) { notes += $0.count }
        #expect(notes == 3000)
    }

    @Test("A value travels with its files, and the host finds them where the drain put them")
    func withAttachments() throws {
        let photo = queue.scratch.file("photo.jpg")
        try Data("not really a JPEG".utf8).write(to: URL(fileURLWithPath: photo))
        try QueueAppender(directory: try directory).append(link(1), source: "s", attaching: [URL(fileURLWithPath: photo)])
        var options = DrainOptions()
        options.attachmentsDestination = queue.scratch.file("received")
        var values: [DrainedValue<PlainLink>] = []
        try QueueDrainer(directory: try directory, options: options).drain(PlainLink.self) { values += $0 }
        let received = try #require(values.first?.attachments.first)
        #expect(values.first?.value == link(1))
        #expect(received.name == "photo.jpg")
        #expect(try #require(received.path).hasPrefix(queue.scratch.file("received") + "/"))
        #expect(try String(contentsOf: try #require(received.url), encoding: .utf8) == "not really a JPEG")
    }

    @Test("Without a destination, a typed drain delivers attachments beside the queue, as files no later drain removes")
    func attachmentsTheAppOwns() throws {
        let photo = queue.scratch.file("photo.jpg")
        try Data("pixels".utf8).write(to: URL(fileURLWithPath: photo))
        let appender = try QueueAppender(directory: try directory)
        try appender.append(link(1), source: "s", attaching: [URL(fileURLWithPath: photo)])
        try appender.append(link(2), source: "s")
        var values: [DrainedValue<PlainLink>] = []
        try QueueDrainer(directory: try directory).drain(PlainLink.self) { values += $0 }
        #expect(values.count == 2 && values[1].attachments.isEmpty)
        let path = try #require(values.first?.attachments.first?.path)
        let folder = try directory.defaultAttachmentsDestination
        #expect(folder == queue.path + ".attachments")
        #expect(path.hasPrefix(folder + "/"), "\(path)")
        // The queue's own copy is gone once the batch committed; the app's copy stays, however old, through later drains.
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.path + "/attachments").isEmpty)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3 * 86_400)], ofItemAtPath: path)
        for _ in 1...2 {
            try appender.append(link(3), source: "s")
            try QueueDrainer(directory: try directory).drain(PlainLink.self) { _ in }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "pixels")
    }

    @Test("An append attaching files leaves no copy behind when one of them cannot be copied")
    func attachingCleansUp() throws {
        let photo = queue.scratch.file("photo.jpg")
        try Data("pixels".utf8).write(to: URL(fileURLWithPath: photo))
        let appender = try QueueAppender(directory: try directory)
        let missing = URL(fileURLWithPath: queue.scratch.file("missing.jpg"))
        #expect(throws: ShareQueueError.self) {
            try appender.append(link(1), source: "s", attaching: [URL(fileURLWithPath: photo), missing])
        }
        let remote = #expect(throws: ShareQueueError.self) {
            try appender.append(link(1), source: "s", attaching: [URL(fileURLWithPath: photo), URL(string: "https://example.com/a.jpg")!])
        }
        #expect(remote?.code == .invalidArgument)
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.path + "/attachments").isEmpty)
        #expect(try queue.drain().lines.isEmpty)
    }

    @Test("A drainer is made with try, as an appender is: options no drain can follow are refused")
    func drainerOptions() throws {
        for change in [{ (options: inout DrainOptions) in options.batchSize = 0 }, { $0.maxAttempts = 0 }, { $0.waitSeconds = -1 },
                       { $0.waitSeconds = .infinity }, { $0.batchBytes = 0 }, { $0.maxRecords = -1 }] {
            var options = DrainOptions()
            change(&options)
            let failure = #expect(throws: ShareQueueError.self) { try QueueDrainer(directory: try directory, options: options) }
            #expect(failure?.code == .invalidArgument)
        }
        #expect(try QueueDirectory(url: URL(fileURLWithPath: queue.path)).path == queue.path)
        #expect(throws: ShareQueueError.self) { try QueueDirectory(url: URL(string: "https://example.com/queue")!) }
    }

    @Test("A dead letter put back is the newest record of its key: publishing the newer value appends it again")
    func requeueForgetsPublished() throws {
        struct RefuseAll: DrainSink {
            func deliver(_ batch: DrainBatch) throws {
                throw RecordRefusal(batch.records.map { .init(id: $0.id, reason: "not now", isFinal: true) })
            }
        }
        let appender = try QueueAppender(directory: try directory)
        func publish(_ title: String) throws -> Bool {
            let draft = try RecordDraft(encoding: PlainLink(url: URL(string: "https://x")!, title: title), source: "s", key: "current")
            let published = try appender.appendIfChanged(draft)
            return published.appended
        }
        #expect(try publish("older"))
        var refuseAll = RefuseAll()
        #expect(try QueueDrainer(directory: try directory).drain(into: &refuseAll).deadLettered == 1)
        #expect(try publish("newer"))
        try QueueDrainer(directory: try directory).drain(PlainLink.self) { _ in }
        #expect(try QueueDrainer(directory: try directory).requeueDeadLetters() == 1)
        // The queue's last record of the key is the older value now, so the newer one is a change.
        #expect(try publish("newer"))
        var titles: [String] = []
        try QueueDrainer(directory: try directory).drain(PlainLink.self) { titles += $0.map(\.value.title) }
        #expect(titles == ["older", "newer"])
    }
}
