#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// A mutual-exclusion lock between threads of this process, over a
/// `pthread_mutex_t` that lives at a fixed address for the lock's lifetime.
/// The corresponding C functions are `pthread_mutex_lock` and `pthread_mutex_unlock`.
package final class ThreadLock: @unchecked Sendable {
    // @unchecked: the mutex is the synchronization; it is only ever used through the pthread calls.
    /// The mutex itself, for a condition that waits on it (``ThreadCondition``).
    let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A new, unlocked lock.
    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Waits for the lock and takes it.
    package func lock() { pthread_mutex_lock(mutex) }

    /// Releases the lock this thread holds.
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the lock, released on every path.
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value shared between threads, read and written under a lock.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `stored` is only touched while `lock` is held.
    private let lock = ThreadLock()
    private var stored: Value

    /// A lock around `value`.
    package init(_ value: Value) { stored = value }

    /// The value, read under the lock.
    package var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
