#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ShareQueue needs a POSIX C library")
#endif

extension FileDescriptor {
    /// Takes an exclusive `flock`. With `wait: false` it returns false at once if another holds it.
    package func lockExclusive(wait: Bool = true) throws(SystemError) -> Bool {
        while true {
            if flock(rawValue, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0 { return true }
            let error = SystemError.last("flock")
            if error.errno == EINTR { continue }
            if error.errno == EWOULDBLOCK { return false }
            throw error
        }
    }

    package func unlock() { _ = flock(rawValue, LOCK_UN) }

    /// Runs `body` under an exclusive lock and unlocks on every path.
    package func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        _ = try lockExclusive()
        defer { unlock() }
        return try body()
    }
}
