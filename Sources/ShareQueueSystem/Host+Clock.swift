#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

extension Host {
    /// Wall-clock time as milliseconds since 1970. The corresponding C function is `clock_gettime` with `CLOCK_REALTIME`.
    package static func millisecondsSince1970() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }

    /// Monotonic seconds, for timeouts. The corresponding C function is `clock_gettime` with `CLOCK_MONOTONIC`.
    package static func monotonicSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Sleeps until the monotonic clock reads `seconds`, to within the system's
    /// timer: processes that wait for the same moment start together. The
    /// corresponding C function is `nanosleep`, for the time that remains.
    package static func sleep(untilMonotonic seconds: Double) {
        while true {
            let left = seconds - monotonicSeconds()
            guard left > 0 else { return }
            var request = timespec(tv_sec: Int(left), tv_nsec: Int((left - Double(Int(left))) * 1e9))
            var remaining = timespec()
            _ = nanosleep(&request, &remaining)
        }
    }

    /// Lets another thread that is ready to run on this processor run first; returns at once
    /// when none is. The corresponding C function is `sched_yield`.
    package static func yieldProcessor() { _ = sched_yield() }

    /// Sleeps for `milliseconds`, however many signals arrive meanwhile. The corresponding C function is `nanosleep`.
    package static func sleep(milliseconds: Int) { sleep(microseconds: milliseconds * 1000) }

    /// Sleeps for `microseconds`, however many signals arrive meanwhile. The corresponding C function is `nanosleep`.
    package static func sleep(microseconds: Int) {
        var request = timespec(tv_sec: microseconds / 1_000_000, tv_nsec: (microseconds % 1_000_000) * 1000)
        var remaining = timespec()
        // Interrupted, it sleeps only for what remains; any other failure (EINVAL) cannot be helped.
        _ = try? retryingOnInterrupt("nanosleep") {
            defer { request = remaining }
            return nanosleep(&request, &remaining)
        }
    }
}
