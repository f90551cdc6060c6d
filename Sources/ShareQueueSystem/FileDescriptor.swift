#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// An open file descriptor. Blocking calls retry on EINTR; `close` does not.
package struct FileDescriptor: Sendable {
    package let rawValue: Int32

    /// Takes ownership of an open descriptor.
    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Standard input, descriptor 0.
    package static let standardInput = FileDescriptor(rawValue: 0)
    /// Standard output, descriptor 1.
    package static let standardOutput = FileDescriptor(rawValue: 1)
    /// Standard error, descriptor 2.
    package static let standardError = FileDescriptor(rawValue: 2)

    /// Opens a file. The corresponding C function is `open`.
    package static func open(_ path: String, _ mode: OpenMode, permissions: UInt16 = 0o600) throws(SystemError) -> FileDescriptor {
        let existed = SystemTrace.current?.exists(path, in: AT_FDCWD, flags: mode.flags)
        let fd = try retryingOnInterrupt("open") {
            InjectedFault.fails("open", descriptor: AT_FDCWD, name: path) ? -1 : systemOpen(path, mode.flags, mode_t(permissions))
        }
        InjectedFault.opened(fd, name: path, in: AT_FDCWD)
        SystemTrace.current?.opened(fd, at: SystemTrace.absolute(path), created: existed == false)
        // O_NONBLOCK only keeps a FIFO planted at the path from blocking the open.
        if mode.flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, mode.flags & O_APPEND) }
        return FileDescriptor(rawValue: fd)
    }

    /// Opens a file the user named, following symlinks, for reading. The corresponding C function is `open`.
    package static func openFollowingLinks(_ path: String) throws(SystemError) -> FileDescriptor {
        // O_NONBLOCK, cleared once open, keeps a FIFO from blocking the open.
        let fd = try retryingOnInterrupt("open") { systemOpen(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0) }
        _ = fcntl(fd, F_SETFL, 0)
        return FileDescriptor(rawValue: fd)
    }

    /// Closes the descriptor; not retried on EINTR, since the descriptor is gone
    /// either way on Linux. The corresponding C function is `close`.
    package func close() {
        InjectedFault.closed(rawValue)
        SystemTrace.current?.closed(rawValue)
        _ = systemClose(rawValue)
    }

    /// Runs `body` and closes the descriptor on every path.
    package func closeAfter<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        defer { close() }
        return try body()
    }

    /// The status of the open file. The corresponding C function is `fstat`.
    package func status() throws(SystemError) -> FileStatus {
        var s = stat()
        guard !InjectedFault.fails("fstat", descriptor: rawValue), fstat(rawValue, &s) == 0 else { throw SystemError.last("fstat") }
        return FileStatus(s)
    }
}
