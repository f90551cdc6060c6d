#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
import ShareQueueSystem
import ShareQueueCore

// The stop flag and the write end of the self-pipe, touched by the signal
// handler, which may only use async-signal-safe calls.
nonisolated(unsafe) private var stopRequestedFlag: Int32 = 0
nonisolated(unsafe) private var stopPipeWriteEnd: Int32 = -1
// The read end, once installed; set by one thread, at start-up.
nonisolated(unsafe) private var stopPipeReadEnd: Int32 = -1

/// SIGINT and SIGTERM as a request to stop, for long-running drains: the
/// handler sets a flag and writes to a pipe, so that a process waiting for
/// changes wakes at once.
package enum StopRequest {
    /// Installs the handlers, once. Returns the pipe's read end, readable once a stop is requested.
    package static func install() -> Int32 {
        if stopPipeReadEnd >= 0 { return stopPipeReadEnd }
        guard let fds = try? Host.closeOnExecPipe(nonBlocking: true) else { return -1 }
        stopPipeWriteEnd = fds.write
        let handler: @convention(c) (Int32) -> Void = { _ in
            stopRequestedFlag = 1
            var byte: UInt8 = 1
            _ = systemWrite(stopPipeWriteEnd, &byte, 1)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        // A parent may have started this process with them blocked.
        var stops = sigset_t()
        sigemptyset(&stops)
        sigaddset(&stops, SIGINT)
        sigaddset(&stops, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &stops, nil)
        stopPipeReadEnd = fds.read
        return fds.read
    }

    package static var isRequested: Bool { stopRequestedFlag != 0 }
}
