import Foundation
import Testing
@testable import ShareQueueCore
import ShareQueueCodable

/// A typed drain finds a record's members in its stored bytes as every other reading
/// of the record does: escaped names, whitespace, and a repeated member's last value.
@Suite("Stored record layout")
struct StoredLayoutTests {
    let queue = TestQueue()

    /// A record as a foreign producer might store it: spread over lines, its labels' names
    /// escaped, `json` given twice (the last counts) and `meta` with a repeated name.
    private static let foreign = """
        { "v" : 1 , "id" : "r1" , "date" : "2026-01-02T03:04:05.678Z",
          "\\u0073ource" : "old", "source" : "sharing \\"app\\"", "k\\u0069nd" : "PlainLink",
          "json" : {"url":"https://stale","title":"stale"},
          "\\u006Ason" : { "title" : "caf\\u00e9 \\ud83d\\udc4d", "url" : "https://example.com/\\u00e9" },
          "meta" : { "a" : "1", "b" : "2", "a" : "3" }, "extra" : [ "json", {"kind": "x"} ] }
        """

    @Test("The layout finds the last of each member, whatever its name's escapes")
    func layout() throws {
        let bytes = Array(Self.foreign.utf8)
        let drained = DrainedRecord(summary: try RecordSummary(jsonBytes: bytes), storedJSON: bytes, end: DrainPosition(segment: 1, offset: 0))
        let record = try Record(jsonBytes: bytes)
        let layout = drained.layout
        #expect(layout.kindValue == record.kind)
        #expect(layout.sourceText == record.source)
        #expect(layout.labels == record.meta)
        #expect(layout.labels.map(Array.init)?.map(\.name) == ["a", "b"])
        let content = try #require(layout.content)
        #expect(layout.json.value(at: content) == record.jsonValue)
    }

    @Test("A typed drain and a router deliver such a record as the parsed record holds it")
    func throughTheDrain() throws {
        let routedQueue = TestQueue()
        for each in [queue, routedQueue] { try each.appendStored([Array(Self.foreign.utf8)]) }
        let expected = PlainLink(url: URL(string: "https://example.com/é")!, title: "café 👍")
        var values: [DrainedValue<PlainLink>] = []
        let summary = try QueueDrainer(directory: try QueueDirectory(path: queue.path)).drain(PlainLink.self) { values += $0 }
        #expect(summary.delivered == 1)
        #expect(values.map(\.value) == [expected])
        #expect(values.first?.source == "sharing \"app\"")
        #expect(values.first?.meta == ["a": "3", "b": "2"])
        #expect(values.first?.id == "r1")
        let routed = Collected<PlainLink>()
        var router = ContentRouter()
        router.on(PlainLink.self) { routed.add($0.map(\.value)) }
        #expect(try QueueDrainer(directory: try QueueDirectory(path: routedQueue.path)).drain(into: &router).delivered == 1)
        #expect(routed.values == [expected])
    }
}
