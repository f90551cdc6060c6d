#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
import ShareQueueSystem
import ShareQueueCore

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
        self.pendingPath = directory + "/" + QueueLayout.pending
        self.stopFD = stopFD
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
        _ = systemClose(notifier)
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
    /// Reads all queued inotify events; true if one was a write to the pending file, or if
    /// the kernel's queue of events overflowed: a flood of writes to other files may then have
    /// pushed out the one to the pending file.
    private func pendingFileWasWritten() -> Bool {
        var written = false
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { systemRead(notifier, $0.baseAddress, $0.count) }
            if n <= 0 { return written }
            var offset = 0
            while offset + 16 <= n {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 { written = true }
                let nameLength = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + nameLength)].prefix { $0 != 0 }
                if String(decoding: nameBytes, as: UTF8.self) == QueueLayout.pending { written = true }
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
