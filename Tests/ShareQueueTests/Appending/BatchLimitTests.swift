import Foundation
import Testing
@testable import ShareQueueCore

/// One append of many records through the library: over the batch limit it is refused, never a crash.
@Suite("The batch limit through the library")
struct BatchLimitTests {
    @Test("A large first record and many small ones are refused as too large a batch, in bounded memory")
    func largeFirstRecord() async throws {
        // A trap here would end the whole test process: the append runs in its own.
        await #expect(processExitsWith: .success) {
            let queue = TestQueue()
            var options = AppendOptions()
            options.synchronize = false
            let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path), options: options)
            let large = RecordDraft(.text(String(repeating: "x", count: 1_000_000)), source: "s")
            let drafts = [large] + Array(repeating: RecordDraft(.text("small"), source: "s"), count: 300_000)
            do throws(ShareQueueError) {
                _ = try appender.append(drafts)
                exit(1)
            } catch {
                exit(error.code == .badData && error.message.contains("append them in parts") ? 0 : 2)
            }
        }
    }
}
