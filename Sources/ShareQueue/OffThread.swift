import ShareQueueSystem
import Dispatch

/// Runs blocking queue work (file locks, reads, `fsync`) on a global dispatch
/// queue, off the caller's executor and off the cooperative thread pool, and
/// resumes the caller with its result.
enum OffThread {
    static func run<Output: Sendable>(_ work: @escaping @Sendable () -> Output) async -> Output {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async { continuation.resume(returning: work()) }
        }
    }
}

/// Set once when the task running a drain is cancelled; asked after every batch.
final class CancellationFlag: Sendable {
    private let raised = Locked(false)

    /// Whether the task was cancelled.
    var isSet: Bool { raised.value }

    /// Marks the task as cancelled.
    func raise() { raised.value = true }
}
