#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ShareQueue needs a POSIX C library")
#endif

/// A failed system call: its name and `errno`.
package struct SystemError: Error, CustomStringConvertible, Sendable {
    package let call: String
    package let errno: Int32

    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    package var description: String {
        errno == Self.notRegularFileCode ? "not a regular file with a single name" : String(cString: strerror(errno))
    }

    /// Not an errno: what `openOwnFile` reports for a FIFO, device, symlink or hard link at a queue file's path.
    private static let notRegularFileCode: Int32 = -1
    package static let notRegularFile = SystemError(call: "open", errno: notRegularFileCode)
    package static let missing = SystemError(call: "open", errno: ENOENT)

    package var isNotFound: Bool { errno == ENOENT }
    package var isAccessDenied: Bool { errno == EACCES || errno == EPERM }
    package var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    package var isBrokenPipe: Bool { errno == EPIPE }
    /// A symlink, or anything else that is not what was asked for, stood at the path.
    package var isUnexpectedFileType: Bool {
        errno == ELOOP || errno == ENOTDIR || errno == EISDIR || errno == ENXIO || errno == Self.notRegularFileCode
    }
    package var isAlreadyExists: Bool { errno == EEXIST }
    package var isCrossDevice: Bool { errno == EXDEV }

    package static func last(_ call: String) -> SystemError { SystemError(call: call, errno: currentErrno()) }
}
