#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// Process-wide facilities: the environment, the process itself, time and randomness.
package enum Host {
    /// The value of the environment variable `name`, or nil if it is not set. The corresponding C function is `getenv`.
    package static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    /// The bytes of the environment variable `name`, or nil if it is not set: for a path, whose
    /// bytes need not be UTF-8.
    package static func environmentBytes(_ name: String) -> [UInt8]? {
        guard let value = getenv(name) else { return nil }
        return Array(UnsafeRawBufferPointer(start: value, count: strlen(value)))
    }

    /// Ignores SIGPIPE: a write to a closed pipe then fails with EPIPE instead of
    /// killing the process. The corresponding C function is `signal`.
    package static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    /// Ignores SIGXFSZ: a write past the file size limit (`ulimit -f`) then fails
    /// with EFBIG, which can be reported with the file's path, instead of killing
    /// the process without a word. The corresponding C function is `signal`.
    package static func ignoreFileSizeLimitSignal() { signal(SIGXFSZ, SIG_IGN) }

    /// Ends the process with exit status `code`. The corresponding C function is `exit`.
    package static func exit(_ code: Int32) -> Never {
        #if canImport(Glibc)
        Glibc.exit(code)
        #elseif canImport(Musl)
        Musl.exit(code)
        #else
        Darwin.exit(code)
        #endif
    }

    /// This process's id. The corresponding C function is `getpid`.
    package static var processID: Int32 { getpid() }

    /// The user this process acts as, whose files it may change. The corresponding C function is `geteuid`.
    package static var effectiveUserID: UInt32 { UInt32(geteuid()) }

    /// Stops the calling process with SIGSTOP, as a debugger or a suspended app
    /// would, until another sends it SIGCONT. The corresponding C function is `kill`.
    package static func stopSelf() { _ = systemKill(getpid(), SIGSTOP) }

    /// Kills the calling process with SIGKILL, as a crash would. The corresponding C function is `kill`.
    package static func killSelf() -> Never {
        _ = systemKill(getpid(), SIGKILL)
        Host.exit(137)
    }
}
