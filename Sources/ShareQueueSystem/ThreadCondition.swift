#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// A lock with a condition that threads of this process wait on while they hold it,
/// over a ``ThreadLock``'s mutex and a `pthread_cond_t` at a fixed address for its lifetime.
/// The corresponding C functions are `pthread_mutex_lock`, `pthread_cond_wait` and `pthread_cond_broadcast`.
package final class ThreadCondition: @unchecked Sendable {
    // @unchecked: the lock is the synchronization; the condition is only ever used through the pthread calls.
    private let lock = ThreadLock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// A new lock, not held, that no thread waits on.
    package init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Runs `body` holding the lock, released on every path.
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock(body)
    }

    /// Releases the lock until another thread calls ``broadcast()``, then takes it again.
    /// Only from inside ``withLock(_:)``; a wait may also end for no reason, so a caller waits in a loop on what it needs.
    package func wait() { pthread_cond_wait(condition, lock.mutex) }

    /// Wakes every thread that waits.
    package func broadcast() { pthread_cond_broadcast(condition) }
}
