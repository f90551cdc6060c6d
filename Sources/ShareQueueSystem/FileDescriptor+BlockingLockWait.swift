#if os(Linux)
import CLinuxSystem
import Glibc

extension FileDescriptor {
    /// Waits for an exclusive `flock` asleep in the kernel, which wakes the waiter
    /// the moment the holder lets go, and still gives up at `deadline`.
    ///
    /// `flock` alone waits without a bound, and a holder stopped while it holds the
    /// lock would keep its waiter forever. Polling with `LOCK_NB` instead leaves the
    /// lock free while its waiters sleep (for the timer's slack at least, 50 µs):
    /// eight producers appending at once, each holding the lock for a few
    /// microseconds, spent more time in such pauses than in writing. So the
    /// blocking `flock` runs on a thread kept for such waits (``LockWaiter``), on a
    /// second open file description of the same file, and the caller waits for
    /// that thread until the deadline. Once that thread has the lock, this
    /// descriptor's number is made to refer to the description that holds it
    /// (`dup3`), so that unlocking or closing this descriptor releases it, as after
    /// a plain `flock`.
    /// - Returns: true once the lock is held, false if the deadline passed or
    ///   `shouldStop` said so first, nil if the file could not be opened a second
    ///   time (no `/proc`) or no thread started, so that the caller waits another way.
    /// - Throws: The failure of `flock` itself, such as ENOLCK.
    ///
    /// The corresponding C functions are `open` (of `/proc/self/fd/N`), `flock` with
    /// `LOCK_EX` on another thread, and `dup3`.
    func lockExclusiveBlocking(until deadline: Double, shouldStop: (() -> Bool)?) throws(SystemError) -> Bool? {
        let second = systemOpen("/proc/self/fd/\(rawValue)", O_RDONLY | O_CLOEXEC, 0)
        guard second >= 0 else { return nil }
        guard let waiter = LockWaiter.available() else {
            _ = systemClose(second)
            return nil
        }
        guard try waiter.lock(second, until: deadline, shouldStop: shouldStop) else { return false }
        var moved: Int32
        // Close-on-exec kept, so that no child (an --exec sink) inherits the lock.
        repeat { moved = sharequeue_dup3(second, rawValue, O_CLOEXEC) } while moved < 0 && (errno == EINTR || errno == EBUSY)
        let error = SystemError.last("dup3")
        if moved < 0 { _ = flock(second, LOCK_UN) }
        _ = systemClose(second)
        if moved < 0 { throw error }
        return true
    }
}

/// A thread that takes `flock`s for others, one at a time, kept between waits.
///
/// A waiter that gives up leaves the thread blocked in its `flock` until the lock
/// comes free; the thread then lets it go at once, closes that description and
/// rejoins the idle ones. Threads are started as needed and never ended.
// @unchecked: `state` is only read and written holding `mutex`; `idle` only holding `idleMutex`.
private final class LockWaiter: @unchecked Sendable {
    private enum State {
        /// Among the idle ones, waiting for a request.
        case idle
        /// Asked to lock this description.
        case requested(Int32)
        /// Its `flock` returned: 0, or the errno.
        case done(Int32)
        /// Its waiter gave up on this description, which the thread closes.
        case abandoned(Int32)
    }

    private var state = State.idle
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled on every change of `state`.
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    private nonisolated(unsafe) static var idle: [LockWaiter] = []
    private nonisolated(unsafe) static let idleMutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        // A child forked while another thread held the mutex would find it taken for
        // ever, and none of the threads exists in a child: so a fork waits for the
        // mutex, and the child starts with it free and no idle thread.
        pthread_atfork({ pthread_mutex_lock(LockWaiter.idleMutex) }, { pthread_mutex_unlock(LockWaiter.idleMutex) }, {
            LockWaiter.idle = []
            pthread_mutex_unlock(LockWaiter.idleMutex)
        })
        return mutex
    }()

    private init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        changed.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Timed waits read the monotonic clock, which no one sets back.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// An idle thread, or a new one; nil if none could be started.
    static func available() -> LockWaiter? {
        pthread_mutex_lock(idleMutex)
        let reused = idle.popLast()
        pthread_mutex_unlock(idleMutex)
        if let reused { return reused }
        let waiter = LockWaiter()
        return waiter.start() ? waiter : nil
    }

    private func rejoinIdle() {
        pthread_mutex_lock(Self.idleMutex)
        Self.idle.append(self)
        pthread_mutex_unlock(Self.idleMutex)
    }

    /// Starts the thread, which holds this object for ever.
    private func start() -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        // It runs a few calls: a small stack is less to map.
        pthread_attr_setstacksize(&attributes, 128 << 10)
        let context = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let started = pthread_create(&thread, &attributes, { context in
            Unmanaged<LockWaiter>.fromOpaque(context!).takeUnretainedValue().serve()
        }, context.toOpaque())
        if started != 0 { context.release() }
        return started == 0
    }

    /// The thread's work: each requested `flock` in turn, its outcome handed to the
    /// waiter, or, if the waiter gave up, the lock let go and the description closed.
    private func serve() -> Never {
        pthread_mutex_lock(mutex)
        while true {
            guard case .requested(let descriptor) = state else {
                pthread_cond_wait(changed, mutex)
                continue
            }
            pthread_mutex_unlock(mutex)
            var result: Int32
            repeat { result = flock(descriptor, LOCK_EX) } while result != 0 && errno == EINTR
            let error = result == 0 ? 0 : errno
            pthread_mutex_lock(mutex)
            if case .abandoned = state {
                if result == 0 { _ = flock(descriptor, LOCK_UN) }
                _ = systemClose(descriptor)
                state = .idle
                rejoinIdle()
            } else {
                state = .done(error)
                pthread_cond_broadcast(changed)
            }
        }
    }

    /// Has the thread lock `descriptor` and waits for it until `deadline`, asking `shouldStop` every 10 ms.
    /// - Returns: true if the thread took the lock (the description is then the
    ///   caller's to close), false if the wait was given up (the thread's to close).
    /// - Throws: `flock`'s failure; the description is then closed.
    func lock(_ descriptor: Int32, until deadline: Double, shouldStop: (() -> Bool)?) throws(SystemError) -> Bool {
        pthread_mutex_lock(mutex)
        state = .requested(descriptor)
        pthread_cond_broadcast(changed)
        while case .requested = state {
            let now = Host.monotonicSeconds()
            if !(now < deadline) || shouldStop?() == true {
                state = .abandoned(descriptor)
                break
            }
            let until = min(deadline, now + 0.01)
            var time = timespec(tv_sec: Int(until), tv_nsec: Int((until - until.rounded(.down)) * 1e9))
            _ = pthread_cond_timedwait(changed, mutex, &time)
        }
        let final = state
        if case .done = final { state = .idle }
        pthread_mutex_unlock(mutex)
        guard case .done(let error) = final else { return false }
        rejoinIdle()
        guard error == 0 else {
            _ = systemClose(descriptor)
            throw SystemError(call: "flock", errno: error)
        }
        return true
    }
}
#endif
