#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

extension FileDescriptor {
    /// Writes all of `bytes`, continuing after short writes. The corresponding C function is `write`.
    package func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        var done = 0
        while done < bytes.count { done += try writeSome(bytes, from: done) }
    }

    /// Writes all of `bytes` to a pipe without ever blocking for long: the
    /// descriptor is made non-blocking, and while the pipe is full `giveUp` is
    /// asked every 20 ms. Returns false if it gave up before all was written.
    /// The corresponding C functions are `write` and `poll`.
    package func writeAll(_ bytes: [UInt8], unless giveUp: () -> Bool) throws(SystemError) -> Bool {
        _ = fcntl(rawValue, F_SETFL, fcntl(rawValue, F_GETFL) | O_NONBLOCK)
        var done = 0
        while done < bytes.count {
            do {
                done += try writeSome(bytes, from: done)
            } catch {
                guard error.errno == EAGAIN || error.errno == EWOULDBLOCK else { throw error }
                if giveUp() { return false }
                var fds = [pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)]
                _ = poll(&fds, 1, 20)
            }
        }
        return true
    }

    /// Writes all of `bytes` to a pipe or terminal that this process shares with others (standard
    /// output), so without making it non-blocking: a pipe's buffer at a time, each once `poll`
    /// says it can be taken, and `giveUp` is asked every 100 ms while the reader does not read.
    /// Returns false if it gave up before all was written. The corresponding C functions are `poll` and `write`.
    package func writeAllShared(_ bytes: [UInt8], unless giveUp: () -> Bool) throws(SystemError) -> Bool {
        var done = 0
        while done < bytes.count {
            var fds = [pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)]
            if poll(&fds, 1, 100) <= 0 {
                if giveUp() { return false }
                continue
            }
            // At most what a pipe takes at once once it has room, so that the write does not wait for the reader.
            let end = min(bytes.count, done + Int(PIPE_BUF))
            done += try writeSome(bytes, from: done, to: end)
        }
        return true
    }

    /// Writes what a non-blocking pipe takes now of `bytes` from index `start` on, and returns how
    /// many: 0 when it takes nothing yet. The corresponding C function is `write`.
    /// - Throws: EPIPE once its reader has gone, as any other failure.
    package func writeAvailable(_ bytes: [UInt8], from start: Int) throws(SystemError) -> Int {
        do { return try writeSome(bytes, from: start) } catch where error.errno == EAGAIN || error.errno == EWOULDBLOCK { return 0 }
    }

    /// Writes some of `bytes` from index `start` on (up to `end`, or to their end), and returns how many; never
    /// none, which would loop forever. The corresponding C function is `write`.
    private func writeSome(_ bytes: [UInt8], from start: Int, to end: Int? = nil) throws(SystemError) -> Int {
        let n = try retryingOnInterrupt("write") {
            if InjectedFault.fails("write", descriptor: rawValue) { return -1 }
            return bytes.withUnsafeBytes { raw in systemWrite(rawValue, raw.baseAddress! + start, (end ?? raw.count) - start) }
        }
        if n == 0 { throw SystemError(call: "write", errno: EIO) }
        if let trace = SystemTrace.current { bytes.withUnsafeBytes { trace.wrote(rawValue, $0.baseAddress! + start, count: n, at: nil) } }
        return n
    }

    /// Whether input is ready to read, or comes within `milliseconds`: false when a pipe or a
    /// terminal stays quiet that long. An end of input, an error, or an interrupted wait count as ready,
    /// so that a reader goes on to `read` and learns which. The corresponding C function is `poll`.
    package func hasInput(within milliseconds: Int32) -> Bool {
        var fds = [pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)]
        return poll(&fds, 1, milliseconds) != 0
    }

    /// Reads into `array` from index `start` to its end, at the current position (a pipe's).
    /// The corresponding C function is `read`.
    package func read(into array: inout [UInt8], from start: Int) throws(SystemError) -> Int {
        try retryingOnInterrupt("read") {
            if InjectedFault.fails("read", descriptor: rawValue) { return -1 }
            return array.withUnsafeMutableBytes { raw in systemRead(rawValue, raw.baseAddress! + start, raw.count - start) }
        }
    }

    /// Reads into `array` from index `start` to its end, at file offset `offset`.
    /// The corresponding C function is `pread`.
    package func read(into array: inout [UInt8], from start: Int, at offset: Int64) throws(SystemError) -> Int {
        try retryingOnInterrupt("pread") {
            if InjectedFault.fails("pread", descriptor: rawValue) { return -1 }
            return array.withUnsafeMutableBytes { raw in pread(rawValue, raw.baseAddress! + start, raw.count - start, off_t(offset)) }
        }
    }

    /// Reads exactly `count` bytes at `offset`, or fewer only at the end of the file.
    /// The corresponding C function is `pread`.
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
        #if os(Linux)
        let seekData: Int32 = 3  // SEEK_DATA on Linux; glibc declares it only with _GNU_SOURCE
        #else
        let seekData = SEEK_DATA
        #endif
        let found = lseek(rawValue, off_t(offset), seekData)
        if found >= 0 { return Int64(found) }
        let error = SystemError.last("lseek")
        if error.errno == ENXIO { return nil }
        if error.errno == EINVAL { return offset }  // SEEK_DATA not supported here
        throw error
    }

    /// The first offset at or after `offset` that is in a hole of a sparse file, the end of
    /// the file counting as one. A file system that does not track holes reports the end.
    /// The corresponding C function is `lseek` with `SEEK_HOLE`.
    package func nextHole(from offset: Int64) throws(SystemError) -> Int64 {
        #if os(Linux)
        let seekHole: Int32 = 4  // SEEK_HOLE on Linux; glibc declares it only with _GNU_SOURCE
        #else
        let seekHole = SEEK_HOLE
        #endif
        let found = lseek(rawValue, off_t(offset), seekHole)
        if found >= 0 { return Int64(found) }
        throw SystemError.last("lseek")
    }

    /// Writes all of `bytes` at `offset`, continuing after short writes. The corresponding C function is `pwrite`.
    package func write(_ bytes: [UInt8], at offset: Int64) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = try retryingOnInterrupt("pwrite") {
                if InjectedFault.fails("pwrite", descriptor: rawValue) { return -1 }
                return bytes.withUnsafeBytes { raw in pwrite(rawValue, raw.baseAddress! + done, raw.count - done, off_t(offset + Int64(done))) }
            }
            if n == 0 { throw SystemError(call: "pwrite", errno: EIO) }
            if let trace = SystemTrace.current { bytes.withUnsafeBytes { trace.wrote(rawValue, $0.baseAddress! + done, count: n, at: offset + Int64(done)) } }
            done += n
        }
    }

    /// Makes written data durable. A failure is final: the caller must not
    /// retry and claim durability (see PostgreSQL's fsync incident).
    /// The corresponding C function is `fdatasync` on Linux, which also flushes
    /// a changed file size; `fsync` (after `fcntl` with `F_FULLFSYNC`) elsewhere.
    package func synchronize() throws(SystemError) {
        if InjectedFault.fails("fsync", descriptor: rawValue) { throw SystemError.last("fsync") }
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
        SystemTrace.current?.synchronized(rawValue)
    }

    /// Where the next write goes, when this is a regular file written at its end (as standard
    /// output redirected to a file is); nil for anything else. The corresponding C functions are `fstat` and `lseek`.
    package func endOfFileWrittenAt() -> Int64? {
        guard let status = try? status(), status.isRegularFile else { return nil }
        let offset = lseek(rawValue, 0, SEEK_CUR)
        return offset >= 0 && Int64(offset) == status.size ? Int64(offset) : nil
    }

    /// Cuts the file back to `size` bytes and goes on writing there: what a failed write left after it
    /// is gone. The corresponding C functions are `ftruncate` and `lseek`.
    package func cutBack(to size: Int64) {
        guard (try? truncate(to: size)) != nil else { return }
        _ = lseek(rawValue, off_t(size), SEEK_SET)
    }

    #if SHARE_QUEUE_TEST_HOOKS
    /// Writes `bytes` at `offset` and syncs them, with no trace: what a call around this layer
    /// would do, for the mutants that show the explorer notices one. The corresponding C functions are `pwrite` and `fsync`.
    package func writeAroundLayer(_ bytes: [UInt8], at offset: Int64) throws(SystemError) {
        let n = try retryingOnInterrupt("pwrite") { bytes.withUnsafeBytes { pwrite(rawValue, $0.baseAddress, $0.count, off_t(offset)) } }
        guard n == bytes.count else { throw SystemError(call: "pwrite", errno: EIO) }
        _ = try retryingOnInterrupt("fsync") { fsync(rawValue) }
    }

    /// Appends `bytes` with no trace, as ``writeAroundLayer(_:at:)``. The corresponding C function is `write`.
    package func appendAroundLayer(_ bytes: [UInt8]) throws(SystemError) {
        let n = try retryingOnInterrupt("write") { bytes.withUnsafeBytes { systemWrite(rawValue, $0.baseAddress!, $0.count) } }
        guard n == bytes.count else { throw SystemError(call: "write", errno: EIO) }
    }
    #endif

    /// Cuts the file to `size` bytes. The corresponding C function is `ftruncate`.
    package func truncate(to size: Int64) throws(SystemError) {
        _ = try retryingOnInterrupt("ftruncate") { ftruncate(rawValue, off_t(size)) }
        SystemTrace.current?.truncated(rawValue, to: size)
    }
}
