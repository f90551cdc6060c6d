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

    /// A content type as an extension's first version names it, without a content kind.
    struct Bookmark: Codable, Equatable { var title: String }
    /// The same type renamed in a later version.
    struct SavedBookmark: Codable, Equatable { var title: String }
    /// The renamed type, keeping its records' kind by declaring it.
    struct KeptBookmark: SharedContent, Equatable {
        static let contentKind: Record.Kind = "Bookmark"
        var title: String
    }

    @Test("Renaming a type without a content kind orphans its queued records; declaring the old kind keeps them")
    func rename() throws {
        let directory = try QueueDirectory(path: queue.path)
        try QueueAppender(directory: directory).append(Bookmark(title: "a"), source: "s")
        #expect(Record.Kind(for: Bookmark.self) == "Bookmark")
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
