#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
#if os(Linux)
import CLinuxSystem
#endif

extension Host {
    /// A new pipe whose two ends are close-on-exec, and non-blocking if asked.
    ///
    /// Where the system has `pipe2`, the ends are made so in the same call: a
    /// process spawned by another thread in between would otherwise inherit them, and
    /// a reader would wait for an end of file that never came while that process lived.
    /// - Throws: `pipe`'s errno (EMFILE, ENFILE).
    package static func closeOnExecPipe(nonBlocking: Bool = false) throws(SystemError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        #if os(Linux)
        guard sharequeue_pipe2(&fds, O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)) == 0 else { throw SystemError.last("pipe2") }
        #else
        guard pipe(&fds) == 0 else { throw SystemError.last("pipe") }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if nonBlocking { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }
        }
        #endif
        return (fds[0], fds[1])
    }
}
