#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ShareQueue needs a POSIX C library")
#endif

/// Process-wide facilities: the environment, the process itself, time and randomness.
package enum Host {
    package static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    /// A write to a closed pipe then fails with EPIPE instead of killing the process.
    package static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    package static func exit(_ code: Int32) -> Never {
        #if canImport(Glibc)
        Glibc.exit(code)
        #elseif canImport(Musl)
        Musl.exit(code)
        #else
        Darwin.exit(code)
        #endif
    }

    package static var processID: Int32 { getpid() }

    /// Kills the calling process with SIGKILL, as a crash would.
    package static func killSelf() -> Never {
        _ = systemKill(getpid(), SIGKILL)
        Host.exit(137)
    }
}
