// The only file that imports the C library. Everything else talks to the
// system through the thin, typed wrappers below, so the platform differences
// (Glibc, Musl, Darwin) stay in one place.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("ShareQueue needs a POSIX C library")
#endif

/// A failed system call: its name and `errno`.
package struct SystemError: Error, CustomStringConvertible {
    package let call: String
    package let errno: Int32

    package var description: String {
        errno == Self.notRegularFileCode ? "not a regular file with a single name" : String(cString: strerror(errno))
    }

    /// Not an errno: what `openOwnFile` reports for a FIFO, device, symlink or hard link at a queue file's path.
    private static let notRegularFileCode: Int32 = -1
    package static let notRegularFile = SystemError(call: "open", errno: notRegularFileCode)
    package static let missing = SystemError(call: "open", errno: ENOENT)

    package var isNotFound: Bool { errno == ENOENT }
    package var isAccessDenied: Bool { errno == EACCES || errno == EPERM }
    package var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    package var isBrokenPipe: Bool { errno == EPIPE }
    /// A symlink, or anything else that is not what was asked for, stood at the path.
    package var isUnexpectedFileType: Bool {
        errno == ELOOP || errno == ENOTDIR || errno == EISDIR || errno == ENXIO || errno == Self.notRegularFileCode
    }
    package var isAlreadyExists: Bool { errno == EEXIST }
    package var isCrossDevice: Bool { errno == EXDEV }

    package static func last(_ call: String) -> SystemError { SystemError(call: call, errno: currentErrno()) }
}

private func currentErrno() -> Int32 {
    #if canImport(Glibc)
    return Glibc.errno
    #elseif canImport(Musl)
    return Musl.errno
    #else
    return Darwin.errno
    #endif
}

/// What `fstat` or `lstat` says of a file.
package struct FileStatus {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    package let linkCount: UInt64
    package let isRegularFile: Bool
    package let isDirectory: Bool
    package let modificationSeconds: Int64

    fileprivate init(_ s: stat) {
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

    fileprivate var flags: Int32 {
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

/// An open file descriptor. Blocking calls retry on EINTR; `close` does not.
package struct FileDescriptor {
    package let rawValue: Int32

    package static let standardInput = FileDescriptor(rawValue: 0)
    package static let standardOutput = FileDescriptor(rawValue: 1)
    package static let standardError = FileDescriptor(rawValue: 2)

    /// Opens a file. The corresponding C function is `open`.
    package static func open(_ path: String, _ mode: OpenMode, permissions: UInt16 = 0o600) throws(SystemError) -> FileDescriptor {
        while true {
            let fd = Glibc_open(path, mode.flags, mode_t(permissions))
            if fd >= 0 {
                // O_NONBLOCK only keeps a FIFO planted at the path from blocking the open.
                if mode.flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, mode.flags & O_APPEND) }
                return FileDescriptor(rawValue: fd)
            }
            let error = SystemError.last("open")
            if error.errno != EINTR { throw error }
        }
    }

    /// Opens a file the user named, following symlinks, for reading.
    package static func openFollowingLinks(_ path: String) throws(SystemError) -> FileDescriptor {
        while true {
            let fd = Glibc_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFL, 0)
                return FileDescriptor(rawValue: fd)
            }
            let error = SystemError.last("open")
            if error.errno != EINTR { throw error }
        }
    }

    /// Opens one of the queue's own files and checks that it is a regular file
    /// with a single name, so that nothing is written into a FIFO, a device, or
    /// another file hard-linked into the queue.
    package static func openOwnFile(_ path: String, _ mode: OpenMode) throws(SystemError) -> FileDescriptor {
        let file = try open(path, mode)
        do throws(SystemError) {
            let status = try file.status()
            guard status.isRegularFile, status.linkCount == 1 else { throw SystemError.notRegularFile }
            return file
        } catch {
            file.close()
            throw error
        }
    }

    package func close() { _ = Glibc_close(rawValue) }

    /// Runs `body` and closes the descriptor on every path.
    package func closeAfter<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        defer { close() }
        return try body()
    }

    /// Writes all of `bytes`, continuing after short writes. The corresponding C function is `write`.
    package func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in Glibc_write(rawValue, raw.baseAddress! + done, raw.count - done) }
            if n > 0 { done += n; continue }
            let error = n == 0 ? SystemError(call: "write", errno: EIO) : SystemError.last("write")
            if error.errno == EINTR { continue }
            throw error
        }
    }

    /// Writes all of `bytes` to a pipe without ever blocking for long: the
    /// descriptor is made non-blocking, and while the pipe is full `giveUp` is
    /// asked every 20 ms. Returns false if it gave up before all was written.
    package func writeAll(_ bytes: [UInt8], unless giveUp: () -> Bool) throws(SystemError) -> Bool {
        _ = fcntl(rawValue, F_SETFL, fcntl(rawValue, F_GETFL) | O_NONBLOCK)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in Glibc_write(rawValue, raw.baseAddress! + done, raw.count - done) }
            if n > 0 { done += n; continue }
            let error = n == 0 ? SystemError(call: "write", errno: EIO) : SystemError.last("write")
            if error.errno == EINTR { continue }
            guard error.errno == EAGAIN || error.errno == EWOULDBLOCK else { throw error }
            if giveUp() { return false }
            var fds = [pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)]
            _ = poll(&fds, 1, 20)
        }
        return true
    }

    /// Reads into `array` from index `start` to its end, at the current position (a pipe's).
    package func read(into array: inout [UInt8], from start: Int) throws(SystemError) -> Int {
        while true {
            let n = array.withUnsafeMutableBytes { raw in Glibc_read(rawValue, raw.baseAddress! + start, raw.count - start) }
            if n >= 0 { return n }
            let error = SystemError.last("read")
            if error.errno != EINTR { throw error }
        }
    }

    /// Reads into `array` from index `start` to its end, at file offset `offset`.
    package func read(into array: inout [UInt8], from start: Int, at offset: Int64) throws(SystemError) -> Int {
        while true {
            let n = array.withUnsafeMutableBytes { raw in
                pread(rawValue, raw.baseAddress! + start, raw.count - start, off_t(offset))
            }
            if n >= 0 { return n }
            let error = SystemError.last("pread")
            if error.errno != EINTR { throw error }
        }
    }

    /// Reads exactly `count` bytes at `offset`, or fewer only at the end of the file.
    package func readFully(count: Int, at offset: Int64) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = try read(into: &bytes, from: done, at: offset + Int64(done))
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(count - done)
        return bytes
    }

    /// The first offset at or after `offset` that is not in a hole of a sparse
    /// file, or nil past the last data: so that a reader skips holes instead of
    /// reading gigabytes of zeros. A file system that does not track holes
    /// reports every offset before the end as data. The corresponding C function
    /// is `lseek` with `SEEK_DATA`.
    package func nextData(from offset: Int64) throws(SystemError) -> Int64? {
        #if canImport(Darwin)
        let seekData = SEEK_DATA
        #else
        let seekData: Int32 = 3  // SEEK_DATA on Linux; glibc declares it only with _GNU_SOURCE
        #endif
        let found = lseek(rawValue, off_t(offset), seekData)
        if found >= 0 { return Int64(found) }
        let error = SystemError.last("lseek")
        if error.errno == ENXIO { return nil }
        if error.errno == EINVAL { return offset }  // SEEK_DATA not supported here
        throw error
    }

    /// Writes all of `bytes`, continuing after short writes. The corresponding C function is `write`.at `offset`. The corresponding C function is `pwrite`.
    package func write(_ bytes: [UInt8], at offset: Int64) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in pwrite(rawValue, raw.baseAddress! + done, raw.count - done, off_t(offset + Int64(done))) }
            if n > 0 { done += n; continue }
            let error = n == 0 ? SystemError(call: "pwrite", errno: EIO) : SystemError.last("pwrite")
            if error.errno == EINTR { continue }
            throw error
        }
    }

    /// The status of the entry `name` in this directory, not following a
    /// symlink, or nil if there is none. Cheaper than `lstat` on a full path:
    /// only the last component is looked up. The corresponding C function is `fstatat`.
    package func linkStatus(of name: String) throws(SystemError) -> FileStatus? {
        var s = stat()
        if fstatat(rawValue, name, &s, AT_SYMLINK_NOFOLLOW) == 0 { return FileStatus(s) }
        let error = SystemError.last("fstatat")
        if error.isNotFound { return nil }
        throw error
    }

    /// Opens `name` in this directory, never following a symlink there. The corresponding C function is `openat`.
    package func open(_ name: String, _ mode: OpenMode, permissions: UInt16 = 0o600) throws(SystemError) -> FileDescriptor {
        while true {
            let fd = openat(rawValue, name, mode.flags, mode_t(permissions))
            if fd >= 0 {
                if mode.flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, mode.flags & O_APPEND) }
                return FileDescriptor(rawValue: fd)
            }
            let error = SystemError.last("openat")
            if error.errno != EINTR { throw error }
        }
    }

    /// Removes `name` from this directory; a name already gone is not an error. The corresponding C function is `unlinkat`.
    package func remove(_ name: String) throws(SystemError) {
        if unlinkat(rawValue, name, 0) != 0 {
            let error = SystemError.last("unlinkat")
            if !error.isNotFound { throw error }
        }
    }

    /// Renames `name` to `newName`, both in this directory. The corresponding C function is `renameat`.
    package func rename(_ name: String, to newName: String) throws(SystemError) {
        if renameat(rawValue, name, rawValue, newName) != 0 { throw SystemError.last("renameat") }
    }

    /// Gives the file `name` of this directory a second name, `path`. The corresponding C function is `linkat`.
    package func link(_ name: String, to path: String) throws(SystemError) {
        if linkat(rawValue, name, AT_FDCWD, path, 0) != 0 { throw SystemError.last("linkat") }
    }

    /// The names in this directory, without "." and "..".
    package func entries() throws(SystemError) -> [String] {
        let copy = dup(rawValue)
        guard copy >= 0, let dir = fdopendir(copy) else { throw SystemError.last("fdopendir") }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Makes this directory's entries durable.
    package func synchronizeDirectory() throws(SystemError) {
        if fsync(rawValue) != 0 {
            let error = SystemError.last("fsync")
            if error.errno != EINVAL { throw error }
        }
    }

    /// The corresponding C function is `fstat`.
    package func status() throws(SystemError) -> FileStatus {
        var s = stat()
        guard fstat(rawValue, &s) == 0 else { throw SystemError.last("fstat") }
        return FileStatus(s)
    }

    /// Takes an exclusive `flock`. With `wait: false` it returns false at once if another holds it.
    package func lockExclusive(wait: Bool = true) throws(SystemError) -> Bool {
        while true {
            if flock(rawValue, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0 { return true }
            let error = SystemError.last("flock")
            if error.errno == EINTR { continue }
            if error.errno == EWOULDBLOCK { return false }
            throw error
        }
    }

    package func unlock() { _ = flock(rawValue, LOCK_UN) }

    /// Runs `body` under an exclusive lock and unlocks on every path.
    package func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        _ = try lockExclusive()
        defer { unlock() }
        return try body()
    }

    /// Makes written data durable. `fdatasync` on Linux, which also flushes a
    /// changed file size; `fsync` elsewhere. A failure is final: the caller
    /// must not retry and claim durability (see PostgreSQL's fsync incident).
    package func synchronize() throws(SystemError) {
        #if canImport(Darwin)
        // On Darwin only F_FULLFSYNC makes the drive flush its cache too.
        let result = fcntl(rawValue, F_FULLFSYNC) == 0 ? 0 : fsync(rawValue)
        #else
        let result = fdatasync(rawValue)
        #endif
        if result != 0 {
            let error = SystemError.last("fsync")
            // Pipes and terminals have nothing to flush.
            if error.errno == EINVAL || error.errno == ENOTSUP || error.errno == EROFS { return }
            throw error
        }
    }

    /// The corresponding C function is `ftruncate`.
    package func truncate(to size: Int64) throws(SystemError) {
        while ftruncate(rawValue, off_t(size)) != 0 {
            let error = SystemError.last("ftruncate")
            if error.errno != EINTR { throw error }
        }
    }
}

// Names for the C calls that the wrappers shadow.
private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func Glibc_close(_ fd: Int32) -> Int32 { close(fd) }
private func Glibc_write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
private func Glibc_read(_ fd: Int32, _ p: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, p, n) }
private func Glibc_kill(_ pid: Int32, _ signal: Int32) -> Int32 { kill(pid, signal) }
private func Glibc_rename(_ from: String, _ to: String) -> Int32 { rename(from, to) }

/// Path operations that do not need an open descriptor.
package enum FileSystem {
    /// The status of the entry at `path` itself (a symlink is not followed), or nil if there is none.
    package static func linkStatus(_ path: String) throws(SystemError) -> FileStatus? {
        var s = stat()
        if lstat(path, &s) == 0 { return FileStatus(s) }
        let error = SystemError.last("lstat")
        if error.isNotFound { return nil }
        throw error
    }

    /// `linkStatus`, for callers that report failures as `ShareQueueError`.
    package static func linkStatusOrThrow(_ path: String) throws(ShareQueueError) -> FileStatus? {
        do { return try linkStatus(path) } catch { throw ShareQueueError("cannot examine a file", path: path, error) }
    }

    /// The status of what `path` leads to, following symlinks, or nil if nothing is there.
    package static func status(_ path: String) throws(SystemError) -> FileStatus? {
        var s = stat()
        if stat(path, &s) == 0 { return FileStatus(s) }
        let error = SystemError.last("stat")
        if error.isNotFound { return nil }
        throw error
    }

    package static func rename(_ from: String, to: String) throws(SystemError) {
        if Glibc_rename(from, to) != 0 { throw SystemError.last("rename") }
    }

    /// The working directory. The corresponding C function is `getcwd`.
    package static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` made absolute against the working directory.
    package static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : currentDirectory() + "/" + path
    }

    /// `mkdir -p` with mode 0700; fails with ENOTDIR where something else stands in the way.
    package static func makeDirectories(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if try !makeDirectory(prefix), let existing = try status(prefix), !existing.isDirectory {
                throw SystemError(call: "mkdir", errno: ENOTDIR)
            }
        }
    }

    /// Removes a file; a file that is already gone is not an error.
    package static func removeFile(_ path: String) throws(SystemError) {
        if unlink(path) != 0 {
            let error = SystemError.last("unlink")
            if !error.isNotFound { throw error }
        }
    }

    /// Creates one directory; returns false if something already stands there.
    package static func makeDirectory(_ path: String, permissions: UInt16 = 0o700) throws(SystemError) -> Bool {
        if mkdir(path, mode_t(permissions)) == 0 { return true }
        let error = SystemError.last("mkdir")
        if error.isAlreadyExists { return false }
        throw error
    }

    /// Makes the entries of a directory (creations, renames, removals) durable.
    package static func synchronizeDirectory(_ path: String) throws(SystemError) {
        let fd = try FileDescriptor.open(path, .directory)
        defer { fd.close() }
        if fsync(fd.rawValue) != 0 {
            let error = SystemError.last("fsync")
            if error.errno != EINVAL { throw error }
        }
    }

    /// The names in a directory, without "." and "..".
    package static func entries(of path: String) throws(SystemError) -> [String] {
        let directory = try FileDescriptor.open(path, .directory)
        defer { directory.close() }
        return try directory.entries()
    }
}

/// Process-wide facilities: environment, time, signals, child processes.
package enum Host {
    package static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    /// Cryptographically random bytes from the kernel.
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        #if canImport(Darwin)
        bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress, $0.count) }
        #else
        var filled = 0
        if let urandom = try? FileDescriptor.openFollowingLinks("/dev/urandom") {
            while filled < count, let n = try? urandom.read(into: &bytes, from: filled), n > 0 { filled += n }
            urandom.close()
        }
        if filled < count {
            // No /dev/urandom (a bare chroot): the standard library's generator, a system call per 8 bytes.
            var generator = SystemRandomNumberGenerator()
            for index in filled..<count { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        }
        #endif
        return bytes
    }

    /// Wall-clock time as milliseconds since 1970.
    package static func millisecondsSince1970() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }

    /// Monotonic seconds, for timeouts.
    package static func monotonicSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    package static func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && currentErrno() == EINTR { request = remaining }
    }

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
            let null = Glibc_open("/dev/null", O_RDWR, 0)
            if null != fd {
                // Without /dev/null nothing could stop a file from landing here: give up before touching any.
                if null >= 0 { _ = Glibc_close(null) }
                exit(71)
            }
        }
        return closed
    }

    /// A write to a closed pipe then fails with EPIPE instead of killing the process.
    package static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    package static func exit(_ code: Int32) -> Never {
        #if canImport(Glibc)
        Glibc.exit(code)
        #elseif canImport(Musl)
        Musl.exit(code)
        #else
        Darwin.exit(code)
        #endif
    }

    package static var processID: Int32 { getpid() }

    /// Kills the calling process with SIGKILL, as a crash would.
    package static func killSelf() -> Never {
        _ = Glibc_kill(getpid(), SIGKILL)
        Host.exit(137)
    }

    /// A started child process and the pipe ends this process holds.
    package struct Child {
        package let pid: Int32
        /// The write end of the child's standard input, if it was piped.
        package let input: FileDescriptor?
        /// The read end of the child's standard output, if it was piped.
        package let output: FileDescriptor?
    }

    /// Starts a program. Standard input is a new pipe or /dev/null, standard
    /// output a new pipe or this process's, standard error this process's or /dev/null.
    /// - Parameter environment: variables to set on top of this process's own.
    /// The child starts with default signal handling (this process ignores
    /// SIGPIPE), and with `newProcessGroup` in a group of its own, so that a
    /// Ctrl-C meant for this process does not kill it mid-batch.
    package static func spawn(_ path: String, _ arguments: [String], environment: [String: String] = [:],
                              pipeInput: Bool = false, pipeOutput: Bool = false, silenceErrors: Bool = false,
                              newProcessGroup: Bool = false) throws(SystemError) -> Child {
        func makePipe() throws(SystemError) -> (read: Int32, write: Int32) {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw SystemError.last("pipe") }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return (fds[0], fds[1])
        }
        let inputPipe = pipeInput ? try makePipe() : nil
        let outputPipe: (read: Int32, write: Int32)?
        do { outputPipe = pipeOutput ? try makePipe() : nil } catch {
            if let inputPipe { _ = Glibc_close(inputPipe.read); _ = Glibc_close(inputPipe.write) }
            throw error
        }

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let inputPipe {
            posix_spawn_file_actions_adddup2(&actions, inputPipe.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let outputPipe { posix_spawn_file_actions_adddup2(&actions, outputPipe.write, 1) }
        if silenceErrors { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }

        var variables: [String] = []
        #if canImport(Darwin)
        let current: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = _NSGetEnviron().pointee
        #else
        let current: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        #endif
        var index = 0
        while let pointer = current?[index] {
            let variable = String(cString: pointer)
            let name = variable.split(separator: "=", maxSplits: 1).first.map(String.init) ?? variable
            if environment[name] == nil { variables.append(variable) }
            index += 1
        }
        variables += environment.map { "\($0.key)=\($0.value)" }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }

        #if canImport(Darwin)
        var attributes: posix_spawnattr_t? = nil
        #else
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF) | Int32(POSIX_SPAWN_SETSIGMASK)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        if let inputPipe { _ = Glibc_close(inputPipe.read) }
        if let outputPipe { _ = Glibc_close(outputPipe.write) }
        guard result == 0 else {
            if let inputPipe { _ = Glibc_close(inputPipe.write) }
            if let outputPipe { _ = Glibc_close(outputPipe.read) }
            throw SystemError(call: "posix_spawn", errno: result)
        }
        return Child(pid: pid, input: inputPipe.map { FileDescriptor(rawValue: $0.write) },
                     output: outputPipe.map { FileDescriptor(rawValue: $0.read) })
    }

    /// Starts `/bin/sh -c command` with a new pipe as its standard input.
    package static func spawnShell(_ command: String) throws(SystemError) -> (pid: Int32, input: FileDescriptor) {
        let child = try spawn("/bin/sh", ["-c", command], pipeInput: true, newProcessGroup: true)
        return (child.pid, child.input!)
    }

    /// Sends SIGKILL to a process.
    package static func kill(_ pid: Int32) { _ = Glibc_kill(pid, SIGKILL) }

    /// Waits for a child; returns its status as `waitForExit` does and its peak resident memory in bytes.
    package static func waitForExitMeasuringMemory(_ pid: Int32) throws(SystemError) -> (status: Int32, peakMemory: Int64) {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            let error = SystemError.last("wait4")
            if error.errno != EINTR { throw error }
        }
        let low = status & 0x7f
        #if canImport(Darwin)
        let peak = Int64(usage.ru_maxrss)          // bytes on Darwin
        #else
        let peak = Int64(usage.ru_maxrss) * 1024   // kilobytes on Linux
        #endif
        return (low == 0 ? (status >> 8) & 0xff : 128 + low, peak)
    }

    /// Whether a status from `waitForExit` is a process ended by a signal that
    /// asks it to stop (SIGHUP, SIGINT, SIGTERM), as a service manager stopping
    /// a whole group sends. SIGKILL is not among them: the kernel's out-of-memory
    /// killer sends it, and a record that always gets its command killed must
    /// still be found and set aside.
    package static func wasStopped(_ status: Int32) -> Bool {
        [SIGHUP, SIGINT, SIGTERM].contains { status == 128 + $0 }
    }

    /// Waits for a child and returns its exit status, or 128 + the signal that ended it.
    package static func waitForExit(_ pid: Int32) throws(SystemError) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            let error = SystemError.last("waitpid")
            if error.errno != EINTR { throw error }
        }
        return exitCode(status)
    }

    private static func exitCode(_ status: Int32) -> Int32 {
        let low = status & 0x7f
        if low == 0 { return (status >> 8) & 0xff }
        return 128 + low
    }

    /// Waits for a child as `waitForExit` does, but returns nil as soon as
    /// `giveUp` says so (checked every 20 ms), leaving the child running.
    package static func waitForExit(_ pid: Int32, unless giveUp: () -> Bool) throws(SystemError) -> Int32? {
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return exitCode(status) }
            if result < 0 {
                let error = SystemError.last("waitpid")
                if error.errno != EINTR { throw error }
                continue
            }
            if giveUp() { return nil }
            sleep(milliseconds: 20)
        }
    }

    /// Ends the process group that the child `pid` leads (started with
    /// `newProcessGroup`): SIGTERM to the group, then, if the child has not
    /// exited within `grace` seconds, or others of its group are left, SIGKILL to the group.
    /// - Returns: the child's status, as `waitForExit` gives it.
    package static func endProcessGroup(_ pid: Int32, grace: Double) throws(SystemError) -> Int32 {
        _ = Glibc_kill(-pid, SIGTERM)
        let deadline = monotonicSeconds() + grace
        var status = try waitForExit(pid) { monotonicSeconds() >= deadline }
        // While any process of the group lives, its id is not reused, so this reaches only the group.
        _ = Glibc_kill(-pid, SIGKILL)
        if status == nil { status = try waitForExit(pid) }
        return status ?? 128 + SIGKILL
    }
}

extension FileSystem {
    /// Gives `from` the second name `to`; fails with EEXIST if `to` exists. The corresponding C function is `link`.
    package static func link(_ from: String, to: String) throws(SystemError) {
        if Glibc_link(from, to) != 0 { throw SystemError.last("link") }
    }
}

private func Glibc_link(_ from: String, _ to: String) -> Int32 { link(from, to) }

extension FileSystem {
    /// Renames `from` to `to`, or fails with EEXIST and changes nothing if `to`
    /// exists. Where the file system cannot rename that way, it links and unlinks
    /// instead (`renameByLinking`), which never replaces either.
    /// The corresponding C functions are `renameat2` with `RENAME_NOREPLACE`
    /// (Linux) and `renamex_np` with `RENAME_EXCL` (Darwin).
    package static func renameWithoutReplacing(_ from: String, to: String) throws(SystemError) {
        #if canImport(Darwin)
        if renamex_np(from, to, UInt32(RENAME_EXCL)) == 0 { return }
        let error = SystemError.last("renamex_np")
        guard error.errno == ENOTSUP || error.errno == EINVAL else { throw error }
        #elseif os(Linux)
        if let renameat2 = linuxRenameat2 {
            if renameat2(AT_FDCWD, from, AT_FDCWD, to, linuxRenameNoReplace) == 0 { return }
            let error = SystemError.last("renameat2")
            // EINVAL: this file system does not take the flag; ENOSYS: a kernel older than 3.15.
            guard error.errno == EINVAL || error.errno == ENOSYS else { throw error }
        }
        #endif
        try renameByLinking(from, to: to)
    }

    /// Gives `from` the name `to`, failing with EEXIST if `to` exists, then
    /// removes the name `from`. A crash between the two leaves both names, never neither.
    package static func renameByLinking(_ from: String, to: String) throws(SystemError) {
        try link(from, to: to)
        do { try removeFile(from) } catch {
            try? removeFile(to)
            throw error
        }
    }
}

#if os(Linux)
/// `RENAME_NOREPLACE` from <stdio.h> (and <linux/fs.h>).
private let linuxRenameNoReplace: UInt32 = 1

/// `renameat2`, which the C library's Swift module does not declare (it is a
/// GNU extension): looked up once, nil where the C library lacks it.
private let linuxRenameat2: (@convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32)? = {
    guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "renameat2") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32).self)
}()
#endif

// The stop flag and the write end of the self-pipe, touched by the signal
// handler, which may only use async-signal-safe calls.
nonisolated(unsafe) private var stopRequestedFlag: Int32 = 0
nonisolated(unsafe) private var stopPipeWriteEnd: Int32 = -1

/// SIGINT and SIGTERM as a request to stop, for long-running drains: the
/// handler sets a flag and writes to a pipe, so that a process waiting for
/// changes wakes at once.
package enum StopRequest {
    /// Installs the handlers. Returns the pipe's read end, readable once a stop is requested.
    package static func install() -> Int32 {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return -1 }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        stopPipeWriteEnd = fds[1]
        let handler: @convention(c) (Int32) -> Void = { _ in
            stopRequestedFlag = 1
            var byte: UInt8 = 1
            _ = write(stopPipeWriteEnd, &byte, 1)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        // A parent may have started this process with them blocked.
        var stops = sigset_t()
        sigemptyset(&stops)
        sigaddset(&stops, SIGINT)
        sigaddset(&stops, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &stops, nil)
        return fds[0]
    }

    package static var isRequested: Bool { stopRequestedFlag != 0 }
}

/// Waits for records to be appended to a queue: inotify on Linux, kqueue on
/// macOS and the BSDs, and a check of the pending file's size every 100 ms
/// elsewhere. Never a busy loop.
package final class ChangeWatcher {
    package enum Wake { case changed, timedOut, stopRequested }

    private let directory: String
    private let pendingPath: String
    private let stopFD: Int32
    #if os(Linux)
    private let notifier: Int32
    #elseif canImport(Darwin)
    private let queue: Int32
    private var pendingFD: Int32 = -1
    private let directoryFD: Int32
    #else
    private var lastSeen: (inode: UInt64, size: Int64)? = nil
    #endif

    package init(directory: String, stopFD: Int32) throws(SystemError) {
        self.directory = directory
        self.pendingPath = directory + "/pending.log"
        self.stopFD = stopFD
        #if os(Linux)
        notifier = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard notifier >= 0 else { throw SystemError.last("inotify_init1") }
        guard inotify_add_watch(notifier, directory, UInt32(IN_MODIFY)) >= 0 else {
            let error = SystemError.last("inotify_add_watch")
            _ = Glibc_close(notifier)
            throw error
        }
        #elseif canImport(Darwin)
        queue = kqueue()
        guard queue >= 0 else { throw SystemError.last("kqueue") }
        guard stopFD >= 0 else { throw SystemError(call: "pipe", errno: EBADF) }
        directoryFD = Darwin.open(directory, O_RDONLY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw SystemError.last("open") }
        var changes = [
            kevent(ident: UInt(directoryFD), filter: Int16(EVFILT_VNODE), flags: UInt16(EV_ADD | EV_CLEAR),
                   fflags: UInt32(NOTE_WRITE), data: 0, udata: nil),
            kevent(ident: UInt(stopFD), filter: Int16(EVFILT_READ), flags: UInt16(EV_ADD), fflags: 0, data: 0, udata: nil),
        ]
        guard kevent(queue, &changes, Int32(changes.count), nil, 0, nil) >= 0 else { throw SystemError.last("kevent") }
        watchPendingFile()
        #endif
    }

    deinit {
        #if os(Linux)
        _ = Glibc_close(notifier)
        #elseif canImport(Darwin)
        if pendingFD >= 0 { Darwin.close(pendingFD) }
        Darwin.close(directoryFD)
        Darwin.close(queue)
        #endif
    }

    /// Sleeps for `milliseconds` unless a stop is requested; changes meanwhile
    /// stay queued for the next `wait`. Returns false if a stop was requested.
    package func pause(milliseconds: Int) -> Bool {
        let deadline = Host.monotonicSeconds() + Double(milliseconds) / 1000
        while !StopRequest.isRequested {
            let left = Int((deadline - Host.monotonicSeconds()) * 1000)
            if left <= 0 { return true }
            var fds = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, Int32(clamping: left))
        }
        return false
    }

    /// Waits until the pending file is written, a stop is requested, or `milliseconds` pass.
    package func wait(milliseconds: Int) -> Wake {
        if StopRequest.isRequested { return .stopRequested }
        #if os(Linux)
        // Other files of the queue change too (a drain's own checkpoint): those are not a reason to wake.
        let deadline = Host.monotonicSeconds() + Double(milliseconds) / 1000
        while true {
            let left = Int((deadline - Host.monotonicSeconds()) * 1000)
            if left <= 0 { return .timedOut }
            var fds = [pollfd(fd: notifier, events: Int16(POLLIN), revents: 0), pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, nfds_t(fds.count), Int32(clamping: left))
            if StopRequest.isRequested { return .stopRequested }
            if pendingFileWasWritten() { return .changed }
        }
        #elseif canImport(Darwin)
        // The directory changes for many reasons (a drain's own checkpoint):
        // only a pending file that grew or is new is a reason to wake.
        let deadline = Host.monotonicSeconds() + Double(milliseconds) / 1000
        while true {
            let left = Int((deadline - Host.monotonicSeconds()) * 1000)
            if left <= 0 { return .timedOut }
            var timeout = timespec(tv_sec: left / 1000, tv_nsec: (left % 1000) * 1_000_000)
            var events = [kevent](repeating: kevent(), count: 4)
            _ = kevent(queue, nil, 0, &events, Int32(events.count), &timeout)
            if StopRequest.isRequested { return .stopRequested }
            // The pending file may have been sealed and made anew: watch whichever is there now.
            watchPendingFile()
            if pendingFileChanged() { return .changed }
        }
        #else
        var remaining = milliseconds
        while remaining > 0 {
            var fds = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, Int32(min(remaining, 100)))
            if StopRequest.isRequested { return .stopRequested }
            let now = (try? FileSystem.linkStatus(pendingPath)).flatMap { $0 }.map { ($0.inode, $0.size) }
            if let now, lastSeen == nil || lastSeen! != now { lastSeen = now; return .changed }
            remaining -= 100
        }
        return .timedOut
        #endif
    }

    #if os(Linux)
    /// Reads all queued inotify events; true if one was a write to the pending file.
    private func pendingFileWasWritten() -> Bool {
        var written = false
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc_read(notifier, $0.baseAddress, $0.count) }
            if n <= 0 { return written }
            var offset = 0
            while offset + 16 <= n {
                let nameLength = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + nameLength)].prefix { $0 != 0 }
                if String(decoding: nameBytes, as: UTF8.self) == "pending.log" { written = true }
                offset += 16 + nameLength
            }
        }
    }
    #elseif canImport(Darwin)
    private var lastSeen: (inode: UInt64, size: Int64)? = nil

    /// Whether the pending file is another file, or another size, than last time.
    private func pendingFileChanged() -> Bool {
        let now = (try? FileSystem.linkStatus(pendingPath)).flatMap { $0 }.map { ($0.inode, $0.size) }
        defer { lastSeen = now }
        guard let now else { return false }
        guard let last = lastSeen else { return true }
        return last != now
    }

    private func watchPendingFile() {
        if pendingFD >= 0 { Darwin.close(pendingFD) }
        pendingFD = Darwin.open(pendingPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard pendingFD >= 0 else { return }
        var change = kevent(ident: UInt(pendingFD), filter: Int16(EVFILT_VNODE), flags: UInt16(EV_ADD | EV_CLEAR),
                            fflags: UInt32(NOTE_WRITE | NOTE_EXTEND | NOTE_DELETE | NOTE_RENAME), data: 0, udata: nil)
        _ = kevent(queue, &change, 1, nil, 0, nil)
    }
    #endif
}
