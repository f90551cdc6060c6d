import Foundation
import Testing
@testable import ShareQueueCore

/// A drain's errors say what failed: the queue's own I/O, or the sink.
@Suite("Drain errors", .serialized)
struct DrainErrorTests {
    /// A sink that fails with an error of its own.
    struct FailingSink: DrainSink {
        struct Broken: Error, CustomStringConvertible { var description: String { "the line to the server is down" } }
        mutating func deliver(_ batch: DrainBatch) throws { throw Broken() }
    }

    @Test("A sink's own error comes back from the drain as it was thrown, and the batch stays queued")
    func sinkError() throws {
        let scratch = TemporaryDirectory()
        let directory = try QueueDirectory(path: scratch.queue)
        try QueueAppender(directory: directory).append(RecordDraft(.text("x"), source: "test"))
        var sink = FailingSink()
        do {
            _ = try QueueDrainer(directory: directory).drain(into: &sink)
            Issue.record("the drain did not fail")
        } catch let error as FailingSink.Broken {
            #expect(error.description == "the line to the server is down")
        }
        #expect(try QueueInspector(directory: directory).status().pending == 1)
    }

    /// A sealed segment whose reads fail with EIO: the memory of a process,
    /// bind-mounted over the segment's name (reading its unmapped first page fails).
    @Test("A read error in a sealed segment exits 74 with the path, not 75 'the sink failed'",
          .enabled(if: canMountTmpfs, "needs root to bind-mount"))
    func readError() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines(["a", "b"])
        let segment = queue.file("sealed-000000000001.log")
        #expect(FileManager.default.createFile(atPath: segment, contents: nil))
        #expect(mount("/proc/\(getpid())/mem", segment, nil, UInt(MS_BIND), nil) == 0)
        var mounted = true
        defer { if mounted { umount2(segment, Int32(MNT_DETACH)) } }
        let result = try queue.drain()
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains(segment), "\(result.stderr)")
        #expect(result.stderr.contains("Input/output error"), "\(result.stderr)")
        #expect(!result.stderr.contains("sink"), "\(result.stderr)")
        umount2(segment, Int32(MNT_DETACH))
        mounted = false
        let drain = try queue.drain()
        #expect(try ids(in: drain.stdout) == appended)
    }
}
