#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

extension FileDescriptor {
    /// Takes an exclusive lock. With `wait: false` it returns false at once if another holds it.
    /// The corresponding C function is `flock` with `LOCK_EX`.
    package func lockExclusive(wait: Bool = true) throws(SystemError) -> Bool {
        do {
            _ = try retryingOnInterrupt("flock") { flock(rawValue, LOCK_EX | (wait ? 0 : LOCK_NB)) }
            return true
        } catch {
            if error.errno == EWOULDBLOCK { return false }
            throw error
        }
    }

    /// Takes an exclusive lock, waiting at most `seconds` for another holder to let it go.
    ///
    /// A free lock costs one `flock` call. In a tool that allowed it
    /// (``letLockWaitsUseSignals()``), a held one is waited for asleep in
    /// `flock` itself, which the kernel ends the moment the lock is free
    /// and a timer of the waiting thread's own interrupts every 10 ms to look at
    /// the deadline (see `lockExclusiveBlocking(until:shouldStop:)`). Elsewhere (an
    /// app linking the library, not Linux, or a process that handles SIGURG itself), it is
    /// tried again after pauses that grow from 50 µs to 10 ms. Either way a holder
    /// that never lets go (a stopped process) costs a waiter a bounded wait, never
    /// a blocked thread that cannot give up.
    /// - Parameters:
    ///   - seconds: How long to wait; 0 tries once.
    ///   - shouldStop: Asked while waiting; true gives up at once.
    /// - Returns: false if another still held the lock when the time ran out or `shouldStop` said so.
    /// - Throws: The failure of `flock` itself, such as EBADF or ENOLCK.
    ///
    /// The corresponding C function is `flock` with `LOCK_EX | LOCK_NB`.
    package func lockExclusive(waitingUpTo seconds: Double, shouldStop: (() -> Bool)? = nil) throws(SystemError) -> Bool {
        if try lockExclusive(wait: false) { return true }
        // A wait that is not a number is no wait; an infinite one never ends.
        let deadline = Host.monotonicSeconds() + (seconds.isNaN ? 0 : seconds)
        guard deadline > Host.monotonicSeconds() else { return false }
        #if os(Linux)
        if let locked = try lockExclusiveBlocking(until: deadline, shouldStop: shouldStop) { return locked }
        #endif
        var pause = 50
        while true {
            let left = deadline - Host.monotonicSeconds()
            if !(left > 0) || shouldStop?() == true { return false }
            Host.sleep(microseconds: Int(min(Double(pause), left * 1e6 + 1)))
            if try lockExclusive(wait: false) { return true }
            pause = min(pause * 2, 10_000)
        }
    }

    /// Lets this process's lock waits block in `flock`, interrupted by a SIGURG timer
    /// (on Linux; see `lockExclusiveBlocking(until:shouldStop:)`): for the tools alone, which own
    /// their process. A library owns no process-wide state, so without this call it
    /// installs no signal handler and arms no timer, and its waits poll with back-off.
    /// Call it at start, before any thread waits for a lock.
    package static func letLockWaitsUseSignals() { lockWaitsMayUseSignals = true }

    /// Set once, at a tool's start, before any other thread runs.
    nonisolated(unsafe) static var lockWaitsMayUseSignals = false

    /// Releases the lock. The corresponding C function is `flock` with `LOCK_UN`.
    package func unlock() { _ = flock(rawValue, LOCK_UN) }
}
