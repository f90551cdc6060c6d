import Foundation
import Testing

/// A limit on how long each test of a suite runs, counted from when its body
/// starts; past it, the whole test run ends with a message naming the test.
/// Under a sanitizer the limit grows by ``sanitizerAllowance``, as every bound does.
///
/// Swift Testing's own `.timeLimit` does not serve these tests, for two reasons:
/// - It starts counting when a test is scheduled, and every test is scheduled
///   at once. These tests are synchronous: each holds one of the few threads
///   that run tests (one a core) until it returns. A short test waiting for a
///   thread behind long ones ran out of time before it began.
/// - It records an issue but cannot stop a synchronous test that hangs, so a
///   hang still held the run until CI's own limit.
struct RunTimeLimit: SuiteTrait, TestTrait, TestScoping {
    let minutes: Int

    init(minutes: Int) { self.minutes = minutes * sanitizerAllowance }

    /// Each test of the suite gets the whole limit, not the suite.
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        let message = "error: the test \"\(test.displayName ?? test.name)\" (\(test.sourceLocation)) ran for more than "
            + "\(minutes) minutes: it is taken to hang, and the test run ends here\n"
        let watchdog = DispatchSource.makeTimerSource(queue: .global())
        watchdog.schedule(deadline: .now() + .seconds(minutes * 60))
        watchdog.setEventHandler {
            FileHandle.standardError.write(Data(message.utf8))
            _exit(1)
        }
        watchdog.resume()
        defer { watchdog.cancel() }
        try await function()
    }
}

extension Trait where Self == RunTimeLimit {
    /// Ends the test run if a test of the suite runs for more than `minutes` once started.
    static func runTimeLimit(minutes: Int) -> Self { RunTimeLimit(minutes: minutes) }
}
