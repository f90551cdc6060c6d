#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ShareQueue needs a POSIX C library")
#endif

/// What `fstat` or `lstat` says of a file.
package struct FileStatus {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    package let linkCount: UInt64
    package let isRegularFile: Bool
    package let isDirectory: Bool
    package let modificationSeconds: Int64

    init(_ s: stat) {
        device = UInt64(bitPattern: Int64(s.st_dev))
        inode = UInt64(s.st_ino)
        size = Int64(s.st_size)
        linkCount = UInt64(s.st_nlink)
        let type = s.st_mode & S_IFMT
        isRegularFile = type == S_IFREG
        isDirectory = type == S_IFDIR
        #if canImport(Darwin)
        modificationSeconds = Int64(s.st_mtimespec.tv_sec)
        #else
        modificationSeconds = Int64(s.st_mtim.tv_sec)
        #endif
    }

    package func isSameFile(as other: FileStatus) -> Bool { device == other.device && inode == other.inode }
}
