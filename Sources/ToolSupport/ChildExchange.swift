#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
import ShareQueueSystem

/// Writing a request to a child that stays running and reading its one-line answer.
extension Host {
    /// What a child gave back for a request.
    package enum ChildAnswer: Equatable {
        /// A line, without its newline; `beforeRequestTaken` when it came while part of the
        /// request was still unwritten, so that the child answered before reading it all.
        case line([UInt8], beforeRequestTaken: Bool)
        /// Its standard output ended (it closed it, or exited) before a whole line came.
        case endOfOutput
        /// More than the longest answer allowed came without a newline.
        case tooLong
        /// `giveUp` said so first.
        case gaveUp
    }

    /// Asks that a pipe hold up to `bytes`, so that a request that large goes in with one write
    /// and the writer is not woken again for each 64 KiB the reader takes (Linux's
    /// `F_SETPIPE_SZ`, up to `/proc/sys/fs/pipe-max-size`, 1 MiB by default). Elsewhere, or when
    /// refused, the pipe keeps its size, which only costs more wake-ups.
    /// The corresponding C function is `fcntl`.
    package static func enlargePipe(_ descriptor: FileDescriptor, to bytes: Int32) {
        #if os(Linux)
        // F_SETPIPE_SZ, which Glibc declares only for _GNU_SOURCE.
        _ = fcntl(descriptor.rawValue, 1031, bytes)
        #endif
    }

    /// Writes `request` to a child's standard input while reading its standard output, up
    /// to the first newline, and never blocks for long: both ends are non-blocking and
    /// waited on together with `poll`, so a child that writes while it reads cannot block
    /// on a full pipe while this process blocks on the other, and `giveUp` is asked at
    /// least every 20 ms. A child that stopped reading (EPIPE) is still heard to the end of its output.
    /// - Parameters:
    ///   - unread: What the child wrote past its last answer; kept for the next one.
    ///   - longest: The most bytes an answer may take before its newline.
    /// - Throws: a write or read failure other than EPIPE and EAGAIN.
    /// The corresponding C functions are `poll`, `write` and `read`.
    package static func exchange(_ request: [UInt8], input: FileDescriptor, output: FileDescriptor, unread: inout [UInt8],
                                 longest: Int, unless giveUp: () -> Bool) throws(SystemError) -> ChildAnswer {
        for descriptor in [input.rawValue, output.rawValue] {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        var written = 0
        var writing = !request.isEmpty
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var scanned = 0
        while true {
            if let newline = unread[scanned...].firstIndex(of: 0x0A) {
                let line = Array(unread[..<newline])
                unread.removeSubrange(...newline)
                return .line(line, beforeRequestTaken: written < request.count)
            }
            scanned = unread.count
            if unread.count > longest { return .tooLong }
            if giveUp() { return .gaveUp }
            var fds = [pollfd(fd: output.rawValue, events: Int16(POLLIN), revents: 0)]
            if writing { fds.append(pollfd(fd: input.rawValue, events: Int16(POLLOUT), revents: 0)) }
            let ready = try retryingOnInterrupt("poll") { poll(&fds, nfds_t(fds.count), 20) }
            if ready == 0 { continue }
            if writing && fds[1].revents != 0 {
                do {
                    written += try input.writeAvailable(request, from: written)
                    writing = written < request.count
                } catch where error.errno == EPIPE {
                    // The child closed its input or exited: what it wrote says which.
                    writing = false
                }
            }
            if fds[0].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { raw in read(output.rawValue, raw.baseAddress!, raw.count) }
                if count == 0 {
                    // What is left without a newline is no answer.
                    return .endOfOutput
                } else if count > 0 {
                    unread += chunk[..<count]
                } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    throw SystemError.last("read")
                }
            }
        }
    }
}
