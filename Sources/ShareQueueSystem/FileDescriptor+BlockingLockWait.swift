#if os(Linux)
import CLinuxSystem
import Glibc

extension FileDescriptor {
    /// Waits for an exclusive `flock` asleep in the kernel, which wakes the waiter
    /// the moment the holder lets go, and still gives up at `deadline`.
    ///
    /// `flock` alone waits without a bound, and a holder stopped while it holds the
    /// lock would keep its waiter forever. Polling with `LOCK_NB` instead leaves the
    /// lock free while its waiters sleep (for the timer's slack at least, 50 µs), and
    /// handing the wait to another thread costs two wake-ups: eight producers
    /// appending at once, each holding the lock for a few microseconds, ran at 0.7
    /// of the rate they reach blocked in `flock`. So the calling thread blocks in
    /// `flock`, and a timer of its own sends it SIGURG every 10 ms, which ends the
    /// call with EINTR (see `sharequeue_take_interrupting_signal` in CLinuxSystem):
    /// the wait then looks at the deadline and `shouldStop`, and blocks again. A
    /// tick that comes before the call blocks is followed by the next. SIGURG is let
    /// through the thread's signal mask meanwhile: a process may inherit one that blocks it.
    /// The timer is the thread's own for good (see `sharequeue_thread_timer`): made at its
    /// first wait, armed and disarmed at each, so that a wait costs two calls for it, not four.
    /// - Returns: true once the lock is held, false if the deadline passed or
    ///   `shouldStop` said so first, nil if no timer could be made or the process
    ///   handles SIGURG itself, so that the caller waits another way.
    /// - Throws: The failure of `flock` itself, such as ENOLCK.
    ///
    /// The corresponding C functions are `sigaction` (once), `pthread_sigmask`,
    /// `timer_create` (once a thread), `timer_settime`, and `flock` with `LOCK_EX`.
    func lockExclusiveBlocking(until deadline: Double, shouldStop: (() -> Bool)?) throws(SystemError) -> Bool? {
        guard Self.lockWaitsMayUseSignals, Self.signalEndsWaits else { return nil }
        var timer: timer_t? = nil
        guard sharequeue_thread_timer(&timer) == 0 else { return nil }
        var saved = sigset_t()
        guard sharequeue_allow_interrupting_signal(&saved) == 0 else { return nil }
        // Most threads never block SIGURG: their mask is left alone, which costs no second call.
        defer { if sigismember(&saved, SIGURG) == 1 { pthread_sigmask(SIG_SETMASK, &saved, nil) } }
        let tick = 0.01
        // Set back as it was when the wait ends: disarmed, or ticking for a wait that this one runs inside.
        var previous = itimerspec()
        guard sharequeue_arm_timer(timer, max(0.000_001, min(tick, deadline - Host.monotonicSeconds())), tick, &previous) == 0 else { return nil }
        defer { timer_settime(timer, 0, &previous, nil) }
        while true {
            if flock(rawValue, LOCK_EX) == 0 { return true }
            let error = SystemError.last("flock")
            guard error.errno == EINTR else { throw error }
            if !(Host.monotonicSeconds() < deadline) || shouldStop?() == true { return false }
        }
    }

    /// Whether SIGURG ends a blocked `flock` here: set up once, at the first wait.
    private static let signalEndsWaits = sharequeue_take_interrupting_signal() == 1
}
#endif
