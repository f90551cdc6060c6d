import Foundation
import Testing
import ShareQueue

/// What an app reads and names, with only `import ShareQueue`: dates, kinds, and what renaming a type does.
@Suite("App surface")
struct AppSurfaceTests {
    let queue = TestQueue()

    /// Collects the records a drain hands over, as a host's own sink would.
    struct RecordingSink: DrainSink {
        var records: [DrainedRecord] = []
        mutating func deliver(_ batch: DrainBatch) throws { records += batch.records }
    }

    @Test("Dates come out as Date: a drained record's, a record's and the status's")
    func dates() throws {
        let directory = try QueueDirectory(path: queue.path)
        let before = Date()
        try QueueAppender(directory: directory).append(PlainLink(url: URL(string: "https://x")!, title: "x"), source: "s", key: "k")
        let status = try QueueInspector(directory: directory).status()
        #expect(abs(try #require(status.oldestDate).timeIntervalSince(before)) < 60)
        var sink = RecordingSink()
        _ = try QueueDrainer(directory: directory).drain(into: &sink)
        let drained = try #require(sink.records.first)
        #expect(drained.key == "k")
        #expect(abs(try #require(drained.date).timeIntervalSince(before)) < 60)
        #expect(drained.record.dateValue == drained.date)
        #expect(try QueueInspector(directory: directory).status().lastDrainDate != nil)
    }

    /// A type an extension's first version shared without a content kind, when a record's kind
    /// was its type's name; the records it queued are of kind `Bookmark`.
    struct Bookmark: Codable, Equatable { var title: String }
    /// The type renamed in a later version, under a kind of its own.
    struct SavedBookmark: SharedContent, Equatable {
        static let contentKind: Record.Kind = "bookmark"
        var title: String
    }
    /// The renamed type, keeping the records already queued by declaring the old name as its kind.
    struct KeptBookmark: SharedContent, Equatable {
        static let contentKind: Record.Kind = "Bookmark"
        var title: String
    }

    @Test("Records queued under a type's name reach a type that declares that name as its kind; one with another kind stops at them")
    func rename() throws {
        let directory = try QueueDirectory(path: queue.path)
        // What the previous version appended for a Bookmark: a record of kind "Bookmark".
        try QueueAppender(directory: directory).append(Bookmark(title: "a"), kind: "Bookmark", source: "s")
        // The renamed type's drain meets a kind it does not take, and says so; nothing moves.
        let failure = #expect(throws: ShareQueueError.self) { try QueueDrainer(directory: directory).drain(SavedBookmark.self) { _ in } }
        #expect((failure?.underlying as? UnhandledKind)?.kind == "Bookmark")
        var titles: [String] = []
        try QueueDrainer(directory: directory).drain(KeptBookmark.self) { titles += $0.map(\.value.title) }
        #expect(titles == ["a"])
    }

    @Test("A batch appended with contentsOf is one record per element, blocking or awaited, never one record of kind Array")
    func arrays() async throws {
        let directory = try QueueDirectory(path: queue.path)
        let appender = try QueueAppender(directory: directory)
        let links = (1...3).map { PlainLink(url: URL(string: "https://example.com/\($0)")!, title: "\($0)") }
        let blocking = try { () throws in try appender.append(contentsOf: links, source: "s") }()
        let awaited = try await appender.append(contentsOf: links, source: "s", key: "k")
        #expect(blocking.count == 3 && awaited.count == 3)
        var kinds: [Record.Kind] = []
        try QueueInspector(directory: directory).forEachPending { kinds.append($0.record.kind) }
        #expect(kinds == Array(repeating: Record.Kind(for: PlainLink.self), count: 6))
    }
}
