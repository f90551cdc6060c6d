#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// A record of every change this process makes to files through this layer,
/// so that a power-cut explorer can rebuild each state a crash may leave.
///
/// Compiled in only with the package's `TestHooks` trait, and inert unless
/// `SHARE_QUEUE_TRACE` names a file: then each create, write,
/// truncate, sync, rename, link, unlink and mkdir appends one line to it (one
/// `write` with `O_APPEND`, so the lines of several processes interleave whole),
/// naming files by absolute path. A descriptor is mapped to the path it was
/// opened at while it is open; since another process may rename the file
/// meanwhile, what goes through a descriptor also names its inode number.
/// Off, each wrapper pays one check of ``current``.
/// Lines: `<op> <pid> <fields...>`, paths percent-encoded, data in hex; ops are
/// `create PATH INODE`, `mkdir PATH`, `write PATH INODE OFFSET HEX`, `truncate PATH INODE SIZE`,
/// `sync PATH INODE`, `rename FROM TO`, `link FROM TO`, `unlink PATH` and
/// `mark WORD...` (a tool's own events). Another library's file changes, such as
/// a SQLite store's through its VFS, are recorded by path and inode with the same lines.
/// A test hook for the package's tools, not API.
package final class SystemTrace: @unchecked Sendable {
    /// The recorder of this process, or nil when `SHARE_QUEUE_TRACE` is not set.
    #if SHARE_QUEUE_TEST_HOOKS
    package static let current: SystemTrace? = {
        guard let path = getenv("SHARE_QUEUE_TRACE").map({ String(cString: $0) }), !path.isEmpty else { return nil }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        return fd >= 0 ? SystemTrace(fd: fd) : nil
    }()
    #else
    /// Always nil: a build without the `TestHooks` trait traces nothing.
    @inline(__always) package static var current: SystemTrace? { nil }
    #endif

    private let fd: Int32
    /// Where each open descriptor was opened; guarded by `mutex`: a drain may have threads.
    private var paths: [Int32: String] = [:]
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    private init(fd: Int32) {
        self.fd = fd
        pthread_mutex_init(mutex, nil)
        // Standard output redirected to a file is where a drain delivers: its writes and syncs are traced as any file's.
        if let path = Self.regularFilePath(of: 1) { paths[1] = path }
    }

    /// The path the open regular file `fd` was opened at, or nil for anything else (a pipe, a terminal).
    private static func regularFilePath(of fd: Int32) -> String? {
        var s = stat()
        guard fstat(fd, &s) == 0, s.st_mode & S_IFMT == S_IFREG else { return nil }
        #if canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        guard fcntl(fd, F_GETPATH, &buffer) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count)
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #endif
    }

    /// The path `fd` was opened at, if it is one of the files this layer opened.
    package func path(of fd: Int32) -> String? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return paths[fd]
    }

    /// The path of `name` in the directory `directory`, if that directory is known.
    func path(of name: String, in directory: Int32) -> String? {
        path(of: directory).map { Self.join($0, name) }
    }

    /// Whether `name` exists in `directory` now: asked before an open with `flags`, which creates it only with `O_CREAT`.
    func exists(_ name: String, in directory: Int32, flags: Int32) -> Bool {
        guard flags & O_CREAT != 0 else { return true }
        var s = stat()
        return fstatat(directory, name, &s, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// Notes that `fd` is open at `path`, and records its creation if `created`.
    func opened(_ fd: Int32, at path: String, created: Bool) {
        pthread_mutex_lock(mutex)
        paths[fd] = path
        pthread_mutex_unlock(mutex)
        if created { append(["create", Self.encode(path), Self.inode(fd)]) }
    }

    /// Forgets `fd`, which is being closed.
    func closed(_ fd: Int32) {
        pthread_mutex_lock(mutex)
        paths[fd] = nil
        pthread_mutex_unlock(mutex)
    }

    /// Records `count` bytes written from `bytes` to `fd`: at `offset`, or, when nil,
    /// just before the descriptor's position now (where a write, appending or not, put them).
    func wrote(_ fd: Int32, _ bytes: UnsafeRawPointer, count: Int, at offset: Int64?) {
        guard count > 0, let path = path(of: fd) else { return }
        let start = offset ?? (Int64(lseek(fd, 0, SEEK_CUR)) - Int64(count))
        append(["write", Self.encode(path), Self.inode(fd), String(start), Self.hex(UnsafeRawBufferPointer(start: bytes, count: count))])
    }

    /// Records `fd` cut to `size` bytes.
    func truncated(_ fd: Int32, to size: Int64) {
        if let path = path(of: fd) { append(["truncate", Self.encode(path), Self.inode(fd), String(size)]) }
    }

    /// Records a sync of `fd`, a file or a directory.
    func synchronized(_ fd: Int32) {
        if let path = path(of: fd) { append(["sync", Self.encode(path), Self.inode(fd)]) }
    }

    /// Records an operation on one name (`unlink`, `mkdir`, `create`) by its path.
    func changed(_ op: String, _ path: String) { append([op, Self.encode(path)]) }

    /// Records an operation from one name to another (`rename`, `link`) by their paths.
    func changed(_ op: String, _ from: String, _ to: String) { append([op, Self.encode(from), Self.encode(to)]) }

    /// Records an operation on names in `directory` (`unlink`, `mkdir`, or with `newName`, `rename` and `link`).
    func changed(_ op: String, in directory: Int32, _ name: String, _ newName: String? = nil) {
        guard let from = path(of: name, in: directory) else { return }
        if let newName { changed(op, from, Self.join(path(of: directory) ?? "", newName)) } else { changed(op, from) }
    }

    /// Records a tool's own event, such as the ids it is about to print, so the
    /// explorer knows what was acknowledged before each operation.
    package func mark(_ words: [String]) { append(["mark"] + words.map(Self.encode)) }

    /// The inode number of the file at `path` now (symlinks followed), for a file
    /// another library writes, which the trace then names by path and inode; 0 if there is none.
    /// The corresponding C function is `stat`.
    package static func inode(ofFileAt path: String) -> UInt64 {
        var s = stat()
        return stat(path, &s) == 0 ? UInt64(s.st_ino) : 0
    }

    /// Records the creation of the file at `path`, made by another library, naming its inode now.
    package func created(fileAt path: String) {
        let absolute = Self.absolute(path)
        append(["create", Self.encode(absolute), String(Self.inode(ofFileAt: absolute))])
    }

    /// Records `bytes` written at `offset` into the file `inode` at `path`, by another library.
    package func wrote(fileAt path: String, inode: UInt64, _ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        guard !bytes.isEmpty else { return }
        append(["write", Self.encode(path), String(inode), String(offset), Self.hex(bytes)])
    }

    /// Records the file `inode` at `path` cut (or grown) to `size` bytes by another library.
    package func truncated(fileAt path: String, inode: UInt64, to size: Int64) {
        append(["truncate", Self.encode(path), String(inode), String(size)])
    }

    /// Records a sync of the file `inode` at `path`, or of the directory at `path`, by another library.
    package func synchronized(fileAt path: String, inode: UInt64) {
        append(["sync", Self.encode(path), String(inode)])
    }

    /// Records the sync of the directory that holds `path`, by another library.
    package func synchronized(directoryOf path: String) {
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let absolute = Self.absolute(directory)
        synchronized(fileAt: absolute, inode: Self.inode(ofFileAt: absolute))
    }

    /// Records the removal of the name `path`, by another library.
    package func removed(fileAt path: String) { changed("unlink", Self.absolute(path)) }

    /// Writes one line, whole, with one `write`.
    private func append(_ fields: [String]) {
        let line = Array((fields[0] + " \(getpid()) " + fields.dropFirst().joined(separator: " ") + "\n").utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// The inode number of the open file `fd`, as a field.
    private static func inode(_ fd: Int32) -> String {
        var s = stat()
        return fstat(fd, &s) == 0 ? String(s.st_ino) : "0"
    }

    /// `path` made absolute against the working directory.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : join(FileSystem.currentDirectory(), path)
    }

    /// `name` (one component or a relative path) in the directory `directory`, with "." and ".." resolved.
    static func join(_ directory: String, _ name: String) -> String {
        var parts = directory.split(separator: "/").map(String.init)
        for part in name.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(String(part)) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Bytes outside letters, digits and `._-/+=,:@` as `%XX`, so that a field never holds a space or newline.
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "/"), UInt8(ascii: "+"), UInt8(ascii: "="),
                 UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "@"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + hex(byte)
            }
        }
        return out
    }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func hex(_ byte: UInt8) -> String {
        String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
    }

    private static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
