#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ShareQueue needs a POSIX C library")
#endif

/// An open file descriptor. Blocking calls retry on EINTR; `close` does not.
package struct FileDescriptor {
    package let rawValue: Int32

    /// Takes ownership of an open descriptor.
    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    package static let standardInput = FileDescriptor(rawValue: 0)
    package static let standardOutput = FileDescriptor(rawValue: 1)
    package static let standardError = FileDescriptor(rawValue: 2)

    /// Opens a file. The corresponding C function is `open`.
    package static func open(_ path: String, _ mode: OpenMode, permissions: UInt16 = 0o600) throws(SystemError) -> FileDescriptor {
        while true {
            let fd = systemOpen(path, mode.flags, mode_t(permissions))
            if fd >= 0 {
                // O_NONBLOCK only keeps a FIFO planted at the path from blocking the open.
                if mode.flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, mode.flags & O_APPEND) }
                return FileDescriptor(rawValue: fd)
            }
            let error = SystemError.last("open")
            if error.errno != EINTR { throw error }
        }
    }

    /// Opens a file the user named, following symlinks, for reading.
    package static func openFollowingLinks(_ path: String) throws(SystemError) -> FileDescriptor {
        while true {
            let fd = systemOpen(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFL, 0)
                return FileDescriptor(rawValue: fd)
            }
            let error = SystemError.last("open")
            if error.errno != EINTR { throw error }
        }
    }

    /// Opens one of the queue's own files and checks that it is a regular file
    /// with a single name, so that nothing is written into a FIFO, a device, or
    /// another file hard-linked into the queue.
    package static func openOwnFile(_ path: String, _ mode: OpenMode) throws(SystemError) -> FileDescriptor {
        let file = try open(path, mode)
        do throws(SystemError) {
            let status = try file.status()
            guard status.isRegularFile, status.linkCount == 1 else { throw SystemError.notRegularFile }
            return file
        } catch {
            file.close()
            throw error
        }
    }

    package func close() { _ = systemClose(rawValue) }

    /// Runs `body` and closes the descriptor on every path.
    package func closeAfter<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        defer { close() }
        return try body()
    }

    /// The corresponding C function is `fstat`.
    package func status() throws(SystemError) -> FileStatus {
        var s = stat()
        guard fstat(rawValue, &s) == 0 else { throw SystemError.last("fstat") }
        return FileStatus(s)
    }
}
