#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// A failed system call: its name and `errno`.
package struct SystemError: Error, CustomStringConvertible, Sendable {
    /// The name of the C function that failed: "open".
    package let call: String
    /// The error number it set.
    package let errno: Int32

    /// An error of `call` with `errno`.
    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The error number in words. The corresponding C function is `strerror`.
    package var description: String {
        errno == Self.notRegularFileCode ? "not a regular file with a single name" : String(cString: strerror(errno))
    }

    /// Not an errno: what `openOwnFile` reports for a FIFO, device, symlink or hard link at a queue file's path.
    private static let notRegularFileCode: Int32 = -1
    package static let notRegularFile = SystemError(call: "open", errno: notRegularFileCode)
    /// What a file that is not there gives: ENOENT.
    package static let missing = SystemError(call: "open", errno: ENOENT)

    /// Nothing is at the path (ENOENT).
    package var isNotFound: Bool { errno == ENOENT }
    /// The system refused access (EACCES, EPERM).
    package var isAccessDenied: Bool { errno == EACCES || errno == EPERM }
    /// The disk, or the user's quota, is full (ENOSPC, EDQUOT).
    package var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    /// The reader of a pipe is gone (EPIPE).
    package var isBrokenPipe: Bool { errno == EPIPE }
    /// A symlink, or anything else that is not what was asked for, stood at the path.
    package var isUnexpectedFileType: Bool {
        errno == ELOOP || errno == ENOTDIR || errno == EISDIR || errno == ENXIO || errno == Self.notRegularFileCode
    }
    /// Something already has the name (EEXIST).
    package var isAlreadyExists: Bool { errno == EEXIST }
    /// A link or rename would cross file systems (EXDEV).
    package var isCrossDevice: Bool { errno == EXDEV }

    /// The failure `call` just reported through `errno`.
    package static func last(_ call: String) -> SystemError { SystemError(call: call, errno: currentErrno()) }
}
