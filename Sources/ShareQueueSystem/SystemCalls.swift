// The C calls that this layer's wrappers are named after, under names a
// wrapper's own (`open`, `read`, `close`...) does not shadow; and errno.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ShareQueue needs a POSIX C library")
#endif

/// The corresponding C function is `open`.
package func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
/// The corresponding C function is `close`.
package func systemClose(_ fd: Int32) -> Int32 { close(fd) }
/// The corresponding C function is `write`.
package func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
/// The corresponding C function is `read`.
package func systemRead(_ fd: Int32, _ p: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, p, n) }
/// The corresponding C function is `kill`.
package func systemKill(_ pid: Int32, _ signal: Int32) -> Int32 { kill(pid, signal) }
/// The corresponding C function is `rename`.
package func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
/// The corresponding C function is `link`.
package func systemLink(_ from: String, _ to: String) -> Int32 { link(from, to) }

/// The error number the last failed C call set: C's `errno`.
package func currentErrno() -> Int32 {
    #if canImport(Glibc)
    return Glibc.errno
    #elseif canImport(Musl)
    return Musl.errno
    #else
    return Darwin.errno
    #endif
}

/// Sets C's `errno`, as a failing C call would.
package func setErrno(_ value: Int32) {
    #if canImport(Glibc)
    Glibc.errno = value
    #elseif canImport(Musl)
    Musl.errno = value
    #else
    Darwin.errno = value
    #endif
}

/// The most times in a row one call is retried after a signal interrupted it.
/// A storm that outlasts them is reported as EINTR, a failure that passes,
/// rather than spinning for as long as it lasts.
package let maximumInterruptions = 1000

/// Calls `body` again for as long as it fails with EINTR (a signal arrived),
/// up to ``maximumInterruptions`` times in a row: `body` returns what the C
/// call returned, negative on failure with errno set.
/// - Throws: the failure, named `call`.
@inline(__always)
package func retryingOnInterrupt<Result: FixedWidthInteger>(_ call: String, _ body: () -> Result) throws(SystemError) -> Result {
    var interruptions = 0
    while true {
        let result = body()
        if result >= 0 { return result }
        let error = SystemError.last(call)
        interruptions += 1
        if error.errno != EINTR || interruptions > maximumInterruptions { throw error }
    }
}
