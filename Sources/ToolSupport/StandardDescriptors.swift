#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
import ShareQueueSystem
import ShareQueueCore

extension Host {
    /// Opens /dev/null onto whichever of descriptors 0, 1 and 2 is closed, so
    /// that no file this process opens later becomes standard input, output or
    /// error (a drain once wrote its records into its own lock file that way).
    /// Call it before opening anything.
    /// - Returns: the descriptors that were closed.
    package static func openClosedStandardDescriptors() -> Set<Int32> {
        var closed: Set<Int32> = []
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) < 0 && currentErrno() == EBADF {
            closed.insert(fd)
            // open returns the lowest free descriptor: this one, as those below it are open.
            let null = systemOpen("/dev/null", O_RDWR, 0)
            if null != fd {
                // Without /dev/null nothing could stop a file from landing here: give up before touching any.
                if null >= 0 { _ = systemClose(null) }
                exit(71)
            }
        }
        return closed
    }
}
