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

    /// Releases the lock. The corresponding C function is `flock` with `LOCK_UN`.
    package func unlock() { _ = flock(rawValue, LOCK_UN) }

    /// Runs `body` under an exclusive lock and unlocks on every path. The corresponding C function is `flock`.
    package func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        _ = try lockExclusive()
        defer { unlock() }
        return try body()
    }
}
