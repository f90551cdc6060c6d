#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// A descriptor of a directory: names looked up in it, not through a path.
extension FileDescriptor {
    /// Whether this process, by its effective user and groups, may read and write
    /// the entry `name` in this directory. The corresponding C function is `faccessat` with `AT_EACCESS`.
    package func mayReadAndWrite(_ name: String) -> Bool {
        faccessat(rawValue, name, R_OK | W_OK, AT_EACCESS) == 0
    }

    /// Whether this process, by its effective user and groups, may read the entry `name`
    /// in this directory. The corresponding C function is `faccessat` with `AT_EACCESS`.
    package func mayRead(_ name: String) -> Bool {
        faccessat(rawValue, name, R_OK, AT_EACCESS) == 0
    }

    /// The status of the entry `name` in this directory, not following a
    /// symlink, or nil if there is none. Cheaper than `lstat` on a full path:
    /// only the last component is looked up. The corresponding C function is `fstatat`.
    package func linkStatus(of name: String) throws(SystemError) -> FileStatus? {
        var s = stat()
        // Through `withCString`, which copies a short name to the stack, not to a new array: producers call this per append.
        if name.withCString({ fstatat(rawValue, $0, &s, AT_SYMLINK_NOFOLLOW) }) == 0 { return FileStatus(s) }
        let error = SystemError.last("fstatat")
        if error.isNotFound { return nil }
        throw error
    }

    /// Opens `name` in this directory, never following a symlink there. The corresponding C function is `openat`.
    package func open(_ name: String, _ mode: OpenMode, permissions: UInt16 = 0o600) throws(SystemError) -> FileDescriptor {
        let existed = SystemTrace.current?.exists(name, in: rawValue, flags: mode.flags)
        let fd = try retryingOnInterrupt("openat") {
            InjectedFault.fails("openat", descriptor: rawValue, name: name) ? -1 : openat(rawValue, name, mode.flags, mode_t(permissions))
        }
        InjectedFault.opened(fd, name: name, in: rawValue)
        if let trace = SystemTrace.current, let path = trace.path(of: name, in: rawValue) { trace.opened(fd, at: path, created: existed == false) }
        if mode.flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, mode.flags & O_APPEND) }
        return FileDescriptor(rawValue: fd)
    }

    /// Removes `name` from this directory; a name already gone is not an error. The corresponding C function is `unlinkat`.
    package func remove(_ name: String) throws(SystemError) {
        if unlinkat(rawValue, name, 0) != 0 {
            let error = SystemError.last("unlinkat")
            if !error.isNotFound { throw error }
        } else {
            SystemTrace.current?.changed("unlink", in: rawValue, name)
        }
    }

    /// Removes `name` from this directory, saying whether there was one: a name already gone is not an error.
    /// The corresponding C function is `unlinkat`.
    package func removeIfPresent(_ name: String) throws(SystemError) -> Bool {
        if unlinkat(rawValue, name, 0) == 0 {
            SystemTrace.current?.changed("unlink", in: rawValue, name)
            return true
        }
        let error = SystemError.last("unlinkat")
        if error.isNotFound { return false }
        throw error
    }

    /// Removes the empty directory `name` from this directory; a name already gone is not an error.
    /// The corresponding C function is `unlinkat` with `AT_REMOVEDIR`.
    package func removeDirectory(_ name: String) throws(SystemError) {
        if unlinkat(rawValue, name, AT_REMOVEDIR) != 0 {
            let error = SystemError.last("unlinkat")
            if !error.isNotFound { throw error }
        } else {
            SystemTrace.current?.changed("unlink", in: rawValue, name)
        }
    }

    /// Whether this process, by its effective user and groups, may list and search the folder `name`
    /// in this directory. The corresponding C function is `faccessat` with `AT_EACCESS`.
    package func mayReadAndSearch(_ name: String) -> Bool {
        faccessat(rawValue, name, R_OK | X_OK, AT_EACCESS) == 0
    }

    /// Creates the directory `name` in this directory with `permissions` (less the umask); returns
    /// false if something (of any type) already has the name. The corresponding C function is `mkdirat`.
    package func makeDirectory(_ name: String, permissions: UInt16 = 0o700) throws(SystemError) -> Bool {
        if mkdirat(rawValue, name, mode_t(permissions)) == 0 {
            SystemTrace.current?.changed("mkdir", in: rawValue, name)
            return true
        }
        let error = SystemError.last("mkdirat")
        if error.isAlreadyExists { return false }
        throw error
    }

    /// Renames `name` to `newName`, both in this directory. The corresponding C function is `renameat`.
    package func rename(_ name: String, to newName: String) throws(SystemError) {
        if renameat(rawValue, name, rawValue, newName) != 0 { throw SystemError.last("renameat") }
        SystemTrace.current?.changed("rename", in: rawValue, name, newName)
    }

    /// Gives the file `name` of this directory a second name, `newName`, in the same directory;
    /// fails with EEXIST if `newName` exists. The corresponding C function is `linkat`.
    package func link(_ name: String, to newName: String) throws(SystemError) {
        if linkat(rawValue, name, rawValue, newName, 0) != 0 { throw SystemError.last("linkat") }
        SystemTrace.current?.changed("link", in: rawValue, name, newName)
    }

    /// Renames `name` to `newName`, both in this directory, or fails with EEXIST
    /// and changes nothing if `newName` exists. Where the file system cannot
    /// rename that way, it links and unlinks instead, which never replaces either;
    /// a crash between the two leaves both names, never neither.
    /// The corresponding C functions are `renameat2` with `RENAME_NOREPLACE`
    /// (Linux) and `renameatx_np` with `RENAME_EXCL` (Darwin), else `linkat` and `unlinkat`.
    /// - Parameter byLinking: Whether to link and unlink even where the system can rename without replacing.
    package func renameWithoutReplacing(_ name: String, to newName: String, byLinking: Bool = false) throws(SystemError) {
        if let error = byLinking ? SystemError(call: "renameat2", errno: ENOSYS) : renameExclusively(rawValue, name, newName) {
            // EINVAL: this file system does not take the flag; ENOSYS: a kernel without the call.
            guard error.errno == EINVAL || error.errno == ENOSYS || error.errno == ENOTSUP else { throw error }
            try link(name, to: newName)
            do { try remove(name) } catch {
                try? remove(newName)
                throw error
            }
        } else {
            SystemTrace.current?.changed("rename", in: rawValue, name, newName)
        }
    }

    /// The names in this directory, without "." and "..".
    package func entries() throws(SystemError) -> [String] {
        var names: [String] = []
        try forEachEntry { names.append($0) }
        return names
    }

    /// Hands each name in this directory, without "." and "..", to `body` as it is read, so that a listing
    /// of a directory anyone may fill holds only the names its caller keeps. The corresponding C functions
    /// are `fdopendir` and `readdir`.
    package func forEachEntry(_ body: (String) throws(SystemError) -> Void) throws(SystemError) {
        // Close-on-exec from the start: a process another thread spawns meanwhile must not inherit the folder.
        let copy = fcntl(rawValue, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw SystemError.last("fcntl") }
        guard let dir = fdopendir(copy) else {
            let error = SystemError.last("fdopendir")
            _ = systemClose(copy)
            throw error
        }
        defer { closedir(dir) }
        rewinddir(dir)
        // The name is read where it lies: readdir's entry is only as long as its
        // name needs, so copying the whole struct (`entry.pointee`) reads past the
        // end of the C library's buffer when the entry is the last one in it.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(dir) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { try body(name) }
        }
    }

    /// Makes this directory's entries durable. The corresponding C function is
    /// `fsync`, then on Darwin `fcntl` with `F_FULLFSYNC`: a plain `fsync` there
    /// leaves the entries in the drive's cache, where a power cut takes them.
    package func synchronizeDirectory() throws(SystemError) {
        if fsync(rawValue) != 0 {
            let error = SystemError.last("fsync")
            if error.errno != EINVAL { throw error }
        }
        #if canImport(Darwin)
        // Flushes the drive's cache, entries included; a file system that cannot is left with the fsync.
        _ = fcntl(rawValue, F_FULLFSYNC)
        #endif
        SystemTrace.current?.synchronized(rawValue)
    }
}
