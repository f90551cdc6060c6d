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
    /// Appending to a file that must exist already.
    case append
    /// Reading and writing a file, made if missing.
    case readWriteCreate
    /// A lock file: opened to be locked, its content never read or written.
    case lockFile
    case writeCreateExclusive
    case directory
    /// A directory inside the queue: a symlink there is refused.
    case ownDirectory

    /// Whether opening this way may create the file.
    package var creates: Bool {
        switch self {
        case .appendCreate, .readWriteCreate, .lockFile, .writeCreateExclusive: true
        case .readOnly, .readWrite, .append, .directory, .ownDirectory: false
        }
    }

    /// The same mode without creating: what opens a file once it was made whole under
    /// another name and linked into place. Nil for modes that do not create, or that
    /// create only a name of the caller's own (`writeCreateExclusive`).
    package var existing: OpenMode? {
        switch self {
        case .appendCreate: .append
        case .readWriteCreate, .lockFile: .readWrite
        case .readOnly, .readWrite, .append, .writeCreateExclusive, .directory, .ownDirectory: nil
        }
    }

    var flags: Int32 {
        let common = O_NOFOLLOW | O_CLOEXEC
        switch self {
        case .readOnly: return O_RDONLY | common | O_NONBLOCK
        case .readWrite: return O_RDWR | common | O_NONBLOCK
        case .appendCreate: return O_RDWR | O_APPEND | O_CREAT | common | O_NONBLOCK
        case .append: return O_RDWR | O_APPEND | common | O_NONBLOCK
        case .readWriteCreate, .lockFile: return O_RDWR | O_CREAT | common | O_NONBLOCK
        case .writeCreateExclusive: return O_WRONLY | O_CREAT | O_EXCL | common
        case .directory: return O_RDONLY | O_DIRECTORY | O_CLOEXEC
        case .ownDirectory: return O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW
        }
    }
}
