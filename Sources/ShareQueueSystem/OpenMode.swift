#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// How a file is opened. Every mode refuses to follow a symlink at the last
/// path component and closes on exec, because the shared directory is written
/// by other, possibly hostile, programs.
package enum OpenMode {
    case readOnly
    case readWrite
    case appendCreate
    case lockFile
    case writeCreateExclusive
    case directory
    /// A directory inside the queue: a symlink there is refused.
    case ownDirectory

    /// Whether opening this way may create the file.
    package var creates: Bool {
        switch self {
        case .appendCreate, .lockFile, .writeCreateExclusive: true
        case .readOnly, .readWrite, .directory, .ownDirectory: false
        }
    }

    var flags: Int32 {
        let common = O_NOFOLLOW | O_CLOEXEC
        switch self {
        case .readOnly: return O_RDONLY | common | O_NONBLOCK
        case .readWrite: return O_RDWR | common | O_NONBLOCK
        case .appendCreate: return O_RDWR | O_APPEND | O_CREAT | common | O_NONBLOCK
        case .lockFile: return O_RDWR | O_CREAT | common | O_NONBLOCK
        case .writeCreateExclusive: return O_WRONLY | O_CREAT | O_EXCL | common
        case .directory: return O_RDONLY | O_DIRECTORY | O_CLOEXEC
        case .ownDirectory: return O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW
        }
    }
}
