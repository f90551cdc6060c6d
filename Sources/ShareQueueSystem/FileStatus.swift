#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// What `fstat` or `lstat` says of a file.
package struct FileStatus {
    /// The device the file is on (`st_dev`).
    package let device: UInt64
    /// The file's number on its device (`st_ino`).
    package let inode: UInt64
    /// The size in bytes (`st_size`).
    package let size: Int64
    /// How many names the file has (`st_nlink`).
    package let linkCount: UInt64
    /// Whether it is a regular file, not a directory, link, FIFO or device.
    package let isRegularFile: Bool
    /// Whether it is a directory.
    package let isDirectory: Bool
    /// Whether it is a symbolic link (only `lstat` and `fstatat` without following can say so).
    package let isSymbolicLink: Bool
    /// When its contents last changed, in seconds since 1970 (`st_mtime`).
    package let modificationSeconds: Int64
    /// When the file or its status last changed, in nanoseconds since 1970 (`st_ctim`):
    /// every write moves it, and unlike `st_mtime` no one can set it.
    package let changeNanoseconds: Int64
    /// The permission bits, with set-group-ID and sticky (`st_mode` without the type).
    package let permissions: UInt16
    /// The user that owns it (`st_uid`).
    package let owner: UInt32
    /// The group it belongs to (`st_gid`).
    package let group: UInt32

    /// The status in C's `struct stat`.
    init(_ s: stat) {
        device = UInt64(bitPattern: Int64(s.st_dev))
        inode = UInt64(s.st_ino)
        size = Int64(s.st_size)
        linkCount = UInt64(s.st_nlink)
        let type = s.st_mode & S_IFMT
        isRegularFile = type == S_IFREG
        isDirectory = type == S_IFDIR
        isSymbolicLink = type == S_IFLNK
        permissions = UInt16(s.st_mode & 0o7777)
        owner = UInt32(s.st_uid)
        group = UInt32(s.st_gid)
        #if canImport(Darwin)
        modificationSeconds = Int64(s.st_mtimespec.tv_sec)
        changeNanoseconds = Int64(s.st_ctimespec.tv_sec) &* 1_000_000_000 &+ Int64(s.st_ctimespec.tv_nsec)
        #else
        modificationSeconds = Int64(s.st_mtim.tv_sec)
        changeNanoseconds = Int64(s.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(s.st_ctim.tv_nsec)
        #endif
    }

    /// Whether both describe the same file: the same device and inode.
    package func isSameFile(as other: FileStatus) -> Bool { device == other.device && inode == other.inode }
}
