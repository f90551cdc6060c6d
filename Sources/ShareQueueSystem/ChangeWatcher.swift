#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// Watches one file of a directory for writes: inotify on Linux, kqueue on the
/// Apple platforms and the BSDs, and a look at the file's inode and size every
/// 100 ms elsewhere. Never a busy loop.
///
/// One owner at a time, on one thread at a time. A tool waits on its own thread with
/// ``wait(milliseconds:stopFD:isStopRequested:)``; the library waits for ``descriptor``
/// to be readable with a dispatch source and then asks ``takeChanges()``.
package final class ChangeWatcher {
    /// Why ``wait(milliseconds:stopFD:isStopRequested:)`` returned.
    package enum Wake { case changed, timedOut, stopRequested }

    /// How often the file is looked at where the system offers no way to watch it.
    package static let pollingMilliseconds = 100

    private let directory: String
    private let fileName: String
    private var isClosed = false
    #if os(Linux)
    private let notifier: Int32
    #elseif canImport(Darwin)
    private let queue: Int32
    private let directoryFD: Int32
    private var fileFD: Int32 = -1
    private var registeredStopFD: Int32 = -1
    #endif
    #if !os(Linux)
    private var lastSeen: (inode: UInt64, size: Int64)? = nil
    #endif

    /// Starts watching the file `fileName` of `directory`, which need not exist yet.
    /// - Parameters:
    ///   - directory: The directory's path.
    ///   - fileName: The name of the file whose writes count as changes; writes to other files do not.
    /// - Throws: What `inotify_init1` and `inotify_add_watch` (on Linux), or `kqueue`, `open`
    ///   and `kevent` (on Darwin) set: EMFILE when the user's inotify instances run out, say.
    package init(directory: String, fileName: String) throws(SystemError) {
        self.directory = directory
        self.fileName = fileName
        #if os(Linux)
        notifier = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard notifier >= 0 else { throw SystemError.last("inotify_init1") }
        guard inotify_add_watch(notifier, directory, UInt32(IN_MODIFY)) >= 0 else {
            let error = SystemError.last("inotify_add_watch")
            _ = systemClose(notifier)
            throw error
        }
        #elseif canImport(Darwin)
        queue = kqueue()
        guard queue >= 0 else { throw SystemError.last("kqueue") }
        directoryFD = systemOpen(directory, O_RDONLY | O_CLOEXEC, 0)
        guard directoryFD >= 0 else {
            let error = SystemError.last("open")
            _ = systemClose(queue)
            throw error
        }
        var change = kevent(ident: UInt(directoryFD), filter: Int16(EVFILT_VNODE), flags: UInt16(EV_ADD | EV_CLEAR),
                            fflags: UInt32(NOTE_WRITE), data: 0, udata: nil)
        guard kevent(queue, &change, 1, nil, 0, nil) >= 0 else {
            let error = SystemError.last("kevent")
            _ = systemClose(directoryFD)
            _ = systemClose(queue)
            throw error
        }
        watchFile()
        lastSeen = currentFile()
        #else
        lastSeen = currentFile()
        #endif
    }

    deinit { close() }

    /// Releases the watcher's descriptors; later calls do nothing.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        #if os(Linux)
        _ = systemClose(notifier)
        #elseif canImport(Darwin)
        if fileFD >= 0 { _ = systemClose(fileFD) }
        _ = systemClose(directoryFD)
        _ = systemClose(queue)
        #endif
    }

    /// A descriptor that is readable while events wait to be taken with ``takeChanges()``
    /// (the inotify or kqueue descriptor), or nil where the file is looked at every
    /// ``pollingMilliseconds`` instead.
    package var descriptor: Int32? {
        #if os(Linux)
        return notifier
        #elseif canImport(Darwin)
        return queue
        #else
        return nil
        #endif
    }

    /// Takes the events that wait, without blocking.
    /// - Returns: Whether the file was written (or replaced) since the last call.
    package func takeChanges() -> Bool {
        guard !isClosed else { return false }
        #if os(Linux)
        return fileWasWritten()
        #elseif canImport(Darwin)
        var events = [kevent](repeating: kevent(), count: 8)
        var now = timespec(tv_sec: 0, tv_nsec: 0)
        while kevent(queue, nil, 0, &events, Int32(events.count), &now) == Int32(events.count) {}
        // The file may have been sealed and made anew: watch whichever is there now.
        watchFile()
        return fileChanged()
        #else
        return fileChanged()
        #endif
    }

    /// Sleeps for `milliseconds` unless a stop is requested; changes meanwhile
    /// stay queued for the next ``wait(milliseconds:stopFD:isStopRequested:)``.
    /// - Parameters:
    ///   - stopFD: A descriptor that becomes readable once a stop is requested, or -1.
    ///   - isStopRequested: Whether a stop was requested.
    /// - Returns: False if a stop was requested.
    package func pause(milliseconds: Int, stopFD: Int32, isStopRequested: () -> Bool) -> Bool {
        let deadline = Host.monotonicSeconds() + Double(milliseconds) / 1000
        while !isStopRequested() {
            let left = Int((deadline - Host.monotonicSeconds()) * 1000)
            if left <= 0 { return true }
            var fds = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, Int32(clamping: left))
        }
        return false
    }

    /// Waits until the file is written, a stop is requested, or `milliseconds` pass.
    /// - Parameters:
    ///   - stopFD: A descriptor that becomes readable once a stop is requested, or -1.
    ///   - isStopRequested: Whether a stop was requested.
    package func wait(milliseconds: Int, stopFD: Int32, isStopRequested: () -> Bool) -> Wake {
        if isStopRequested() { return .stopRequested }
        // Other files of the directory change too (a drain's own checkpoint): those are not a reason to wake.
        let deadline = Host.monotonicSeconds() + Double(milliseconds) / 1000
        while true {
            let left = Int((deadline - Host.monotonicSeconds()) * 1000)
            if left <= 0 { return .timedOut }
            waitForEvents(milliseconds: left, stopFD: stopFD)
            if isStopRequested() { return .stopRequested }
            if takeChanges() { return .changed }
        }
    }

    /// Sleeps in the kernel until an event waits, `stopFD` is readable, or `milliseconds` pass.
    private func waitForEvents(milliseconds: Int, stopFD: Int32) {
        #if os(Linux)
        var fds = [pollfd(fd: notifier, events: Int16(POLLIN), revents: 0), pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, nfds_t(fds.count), Int32(clamping: milliseconds))
        #elseif canImport(Darwin)
        if stopFD >= 0 && stopFD != registeredStopFD {
            var change = kevent(ident: UInt(stopFD), filter: Int16(EVFILT_READ), flags: UInt16(EV_ADD), fflags: 0, data: 0, udata: nil)
            if kevent(queue, &change, 1, nil, 0, nil) >= 0 { registeredStopFD = stopFD }
        }
        var timeout = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var events = [kevent](repeating: kevent(), count: 4)
        _ = kevent(queue, nil, 0, &events, Int32(events.count), &timeout)
        #else
        var fds = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, Int32(min(milliseconds, Self.pollingMilliseconds)))
        #endif
    }

    #if os(Linux)
    /// Reads all queued inotify events; true if one was a write to the file, or if the
    /// kernel's queue of events overflowed: a flood of writes to other files may then
    /// have pushed out the one to the file.
    private func fileWasWritten() -> Bool {
        var written = false
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { systemRead(notifier, $0.baseAddress, $0.count) }
            if n <= 0 { return written }
            var offset = 0
            while offset + 16 <= n {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 { written = true }
                let nameLength = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + nameLength)].prefix { $0 != 0 }
                if nameBytes.elementsEqual(fileName.utf8) { written = true }
                offset += 16 + nameLength
            }
        }
    }
    #else
    /// The file's inode and size now, or nil if there is none.
    private func currentFile() -> (inode: UInt64, size: Int64)? {
        (try? FileSystem.linkStatus(directory + "/" + fileName)).flatMap { $0 }.map { ($0.inode, $0.size) }
    }

    /// Whether the file is another file, or another size, than last time.
    private func fileChanged() -> Bool {
        let now = currentFile()
        defer { lastSeen = now }
        guard let now else { return false }
        guard let last = lastSeen else { return true }
        return last != now
    }
    #endif

    #if canImport(Darwin)
    /// Watches the file that stands at the name now, if one does.
    private func watchFile() {
        if fileFD >= 0 { _ = systemClose(fileFD) }
        fileFD = systemOpen(directory + "/" + fileName, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0)
        guard fileFD >= 0 else { return }
        var change = kevent(ident: UInt(fileFD), filter: Int16(EVFILT_VNODE), flags: UInt16(EV_ADD | EV_CLEAR),
                            fflags: UInt32(NOTE_WRITE | NOTE_EXTEND | NOTE_DELETE | NOTE_RENAME), data: 0, udata: nil)
        _ = kevent(queue, &change, 1, nil, 0, nil)
    }
    #endif
}
