#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// A lock with a condition that threads of this process wait on while they hold it,
/// over a `pthread_mutex_t` and a `pthread_cond_t` at fixed addresses for its lifetime.
/// The corresponding C functions are `pthread_mutex_lock`, `pthread_cond_wait` and `pthread_cond_broadcast`.
package final class ThreadCondition: @unchecked Sendable {
    // @unchecked: the mutex is the synchronization; both are only ever used through the pthread calls.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// A new lock, not held, that no thread waits on.
    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock, released on every path.
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Releases the lock until another thread calls ``broadcast()``, then takes it again.
    /// Only from inside ``withLock(_:)``; a wait may also end for no reason, so a caller waits in a loop on what it needs.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes every thread that waits.
    package func broadcast() { pthread_cond_broadcast(condition) }
}
