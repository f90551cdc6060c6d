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
        switch errno {
        case Self.notRegularFileCode: "not a regular file with a single name"
        case Self.symlinkRefusedCode: "it is a symlink, which is never followed there: give the directory's own path"
        case Self.untrustedSymlinkCode: "a directory on the way is a symlink that another user owns, which is never followed"
        case EFBIG: "File too large: past the file size limit of this process (ulimit -f) or of the file system"
        default: String(cString: strerror(errno))
        }
    }

    // Not errnos: refusals of this layer's own, as negative numbers no system call sets.
    private static let notRegularFileCode: Int32 = -1
    private static let symlinkRefusedCode: Int32 = -2
    private static let untrustedSymlinkCode: Int32 = -3
    /// What `QueueFolder.openOwnFile` reports for a FIFO, device, symlink or hard link at a queue file's path.
    package static let notRegularFile = SystemError(call: "open", errno: notRegularFileCode)
    /// What `openDirectory(atPath:)` reports for a symlink as the directory's own name.
    package static let symlinkRefused = SystemError(call: "openat", errno: symlinkRefusedCode)
    /// What `openDirectory(atPath:)` reports for a symlink above the directory that neither root nor this user owns.
    package static let untrustedSymlink = SystemError(call: "openat", errno: untrustedSymlinkCode)
    /// What a file that is not there gives: ENOENT.
    package static let missing = SystemError(call: "open", errno: ENOENT)
    /// What a name that is taken gives: EEXIST.
    package static let exists = SystemError(call: "mkdirat", errno: EEXIST)

    /// Nothing is at the path (ENOENT).
    package var isNotFound: Bool { errno == ENOENT }
    /// The system refused access (EACCES, EPERM).
    package var isAccessDenied: Bool { errno == EACCES || errno == EPERM }
    /// The disk, or the user's quota, is full (ENOSPC, EDQUOT).
    package var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    /// A resource ran short that comes back by itself, with no one acting:
    /// descriptors (EMFILE, ENFILE), memory (ENOMEM, ENOBUFS), or a call that
    /// would block or that signals kept interrupting (EAGAIN, EINTR). Not a
    /// full disk: that stays full until someone frees space.
    package var isResourceShortage: Bool {
        [EMFILE, ENFILE, ENOMEM, ENOBUFS, EAGAIN, EWOULDBLOCK, EINTR].contains(errno)
    }
    /// The reader of a pipe is gone (EPIPE).
    package var isBrokenPipe: Bool { errno == EPIPE }
    /// A symlink, or anything else that is not what was asked for, stood at the path.
    package var isUnexpectedFileType: Bool {
        errno == ELOOP || errno == ENOTDIR || errno == EISDIR || errno == ENXIO || errno == Self.notRegularFileCode
            || errno == Self.symlinkRefusedCode || errno == Self.untrustedSymlinkCode
    }
    /// Something other than a directory stands where one was needed (ENOTDIR).
    package var isNotDirectory: Bool { errno == ENOTDIR }
    /// A folder to be replaced holds something (ENOTEMPTY, or EEXIST as some systems say it).
    package var isNotEmpty: Bool { errno == ENOTEMPTY }
    /// Something already has the name (EEXIST).
    package var isAlreadyExists: Bool { errno == EEXIST }
    /// The device failed (EIO).
    package var isInputOutput: Bool { errno == EIO }
    /// A file would grow past the largest size its file system or this process allows (EFBIG).
    package var isFileTooLarge: Bool { errno == EFBIG }
    /// A link or rename would cross file systems (EXDEV).
    package var isCrossDevice: Bool { errno == EXDEV }

    /// The failure `call` just reported through `errno`.
    package static func last(_ call: String) -> SystemError { SystemError(call: call, errno: currentErrno()) }
}
