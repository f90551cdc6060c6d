import Foundation
@testable import ShareQueueCore
import ShareQueueSystem
import Testing

/// A drain replaces a producers' lock file that other users' producers could not use (moved
/// aside, made anew). An appender an app keeps open across that must lock the new file: a lock
/// on the old one keeps no seal out, and an append beside a seal can be lost with its segment.
@Suite("A lock file replaced under a long-lived appender", .runTimeLimit(minutes: 2))
struct ReplacedLockFileTests {
    @Test("An appender opened before the producers' lock file was replaced waits for the new one's holder, then appends: nothing is lost")
    func appenderLocksTheReplacement() throws {
        let queue = TestQueue()
        var options = AppendOptions()
        options.lockTimeoutSeconds = 0.3
        options.synchronize = false
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path), options: options)
        let first = try appender.append(RecordDraft(.text("before"), source: "s"))
        try FileManager.default.moveItem(atPath: queue.path + "/append.lock", toPath: queue.path + "/rejected-1-append.lock")
        let drainsLock = try FileDescriptor.open(queue.path + "/append.lock", .lockFile)
        defer { drainsLock.close() }
        #expect(try drainsLock.lockExclusive(wait: false))
        do {
            _ = try appender.append(RecordDraft(.text("during"), source: "s"))
            Issue.record("appended while another process held the lock file at the lock's name")
        } catch ShareQueueError.busy {
        } catch {
            Issue.record("\(error)")
        }
        drainsLock.unlock()
        let last = try appender.append(RecordDraft(.text("after"), source: "s"))
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == [first, last])
    }
}
