#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// Path operations that do not need an open descriptor.
package enum FileSystem {
    /// The status of the entry at `path` itself (a symlink is not followed), or nil if there is none.
    /// The corresponding C function is `lstat`.
    package static func linkStatus(_ path: String) throws(SystemError) -> FileStatus? {
        var s = stat()
        if lstat(path, &s) == 0 { return FileStatus(s) }
        let error = SystemError.last("lstat")
        if error.isNotFound { return nil }
        throw error
    }

    /// The status of what `path` leads to, following symlinks, or nil if nothing is there.
    /// The corresponding C function is `stat`.
    package static func status(_ path: String) throws(SystemError) -> FileStatus? {
        var s = stat()
        if stat(path, &s) == 0 { return FileStatus(s) }
        let error = SystemError.last("stat")
        if error.isNotFound { return nil }
        throw error
    }

    /// Renames `from` to `to`, replacing what `to` names. The corresponding C function is `rename`.
    package static func rename(_ from: String, to: String) throws(SystemError) {
        if systemRename(from, to) != 0 { throw SystemError.last("rename") }
        SystemTrace.current?.changed("rename", SystemTrace.absolute(from), SystemTrace.absolute(to))
    }

    /// The working directory, as text: bytes that are not UTF-8 become U+FFFD.
    /// The corresponding C function is `getcwd`.
    package static func currentDirectory() -> String {
        String(decoding: currentDirectoryBytes(), as: UTF8.self)
    }

    /// The working directory's path, byte for byte: a name that is not UTF-8 keeps its bytes.
    /// The corresponding C function is `getcwd`.
    package static func currentDirectoryBytes() -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return [UInt8(ascii: ".")] }
        return buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    }

    /// `path` made absolute against the working directory.
    package static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : currentDirectory() + "/" + path
    }

    /// `path` made absolute against the working directory, byte for byte, as ``currentDirectoryBytes()`` gives it.
    package static func absoluteBytes(_ path: String) -> [UInt8] {
        path.hasPrefix("/") ? Array(path.utf8) : currentDirectoryBytes() + Array("/\(path)".utf8)
    }

    /// `mkdir -p` with mode 0700; fails with ENOTDIR where something else stands in the way.
    /// The corresponding C function is `mkdir`, once for each component.
    package static func makeDirectories(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if try !makeDirectory(prefix), let existing = try status(prefix), !existing.isDirectory {
                throw SystemError(call: "mkdir", errno: ENOTDIR)
            }
        }
    }

    /// Removes a file; a file that is already gone is not an error. The corresponding C function is `unlink`.
    package static func removeFile(_ path: String) throws(SystemError) {
        if unlink(path) != 0 {
            let error = SystemError.last("unlink")
            if !error.isNotFound { throw error }
        } else {
            SystemTrace.current?.changed("unlink", SystemTrace.absolute(path))
        }
    }

    /// Creates one directory; returns false if something already stands there. The corresponding C function is `mkdir`.
    package static func makeDirectory(_ path: String, permissions: UInt16 = 0o700) throws(SystemError) -> Bool {
        if mkdir(path, mode_t(permissions)) == 0 {
            SystemTrace.current?.changed("mkdir", SystemTrace.absolute(path))
            return true
        }
        let error = SystemError.last("mkdir")
        if error.isAlreadyExists { return false }
        throw error
    }

    /// Makes the entries of a directory (creations, renames, removals) durable.
    /// The corresponding C functions are `open` and `fsync`.
    package static func synchronizeDirectory(_ path: String) throws(SystemError) {
        let fd = try FileDescriptor.open(path, .directory)
        defer { fd.close() }
        try fd.synchronizeDirectory()
    }

    /// Writes every file system's changed data to disk and waits for it: what a
    /// benchmark runs after its setup, so that a measured run does not pay for
    /// the setup's writes. The corresponding C function is `sync`.
    package static func synchronizeAll() { sync() }

    /// The names in a directory, without "." and "..". The corresponding C functions are `opendir` and `readdir`.
    package static func entries(of path: String) throws(SystemError) -> [String] {
        let directory = try FileDescriptor.open(path, .directory)
        defer { directory.close() }
        return try directory.entries()
    }

    /// Gives `from` the second name `to`; fails with EEXIST if `to` exists. The corresponding C function is `link`.
    package static func link(_ from: String, to: String) throws(SystemError) {
        if systemLink(from, to) != 0 { throw SystemError.last("link") }
        SystemTrace.current?.changed("link", SystemTrace.absolute(from), SystemTrace.absolute(to))
    }
}
