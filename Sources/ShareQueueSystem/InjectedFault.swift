#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// System calls made to fail on purpose, so that tests can see what a tool
/// does when the system fails it at a given file: the way `CrashPoint` makes
/// it die at a given step. A test hook for the package's tools and tests, not API,
/// compiled in only with the package's `TestHooks` trait.
///
/// Setting `SHARE_QUEUE_FAULT=<call>:<errno>[:name=<text>][:after=<n>][:count=<n>]`
/// makes the C function `call` (`openat`, `open`, `read`, `pread`, `write`,
/// `pwrite`, `fsync`, `fstat`, or `renameat2` and `renameatx_np`, the renames
/// that never replace) fail with `errno` (`EIO`, `EACCES`, `EAGAIN`, `ENOMEM`,
/// `EINTR`, `EMFILE`, `EFBIG`...; `ENOSYS` or `EINVAL` for a system that cannot rename so):
/// - `name=<text>`: only for a file whose name holds `text`, or one opened in
///   a folder whose name does (`name=attachments` is every attachment);
///   for `openat`, the name being opened; for a rename, the name renamed;
/// - `after=<n>`: once `n` such calls have succeeded;
/// - `count=<n>`: `n` times, then never again (unset: every time). A bounded
///   run of `EINTR` is a signal storm that the retries outlast.
///
/// Unset, every wrapped call costs one test of ``isActive``, read once.
package enum InjectedFault {
    /// Whether `SHARE_QUEUE_FAULT` names a fault this process injects.
    package static let isActive = FaultPlan.current != nil

    /// Whether the call `call` on `descriptor` must fail now; if so, errno is
    /// set as the call would have set it. `name` is the name an `openat` in
    /// the folder `descriptor` opens.
    @inline(__always)
    static func fails(_ call: StaticString, descriptor: Int32, name: String? = nil) -> Bool {
        guard isActive, let plan = FaultPlan.current else { return false }
        return plan.fails("\(call)", descriptor: descriptor, name: name)
    }

    /// Notes that `descriptor` was opened as `name` in the folder `folder`, so
    /// that calls on it can be told apart by name.
    @inline(__always)
    static func opened(_ descriptor: Int32, name: String, in folder: Int32) {
        guard isActive, let plan = FaultPlan.current else { return }
        plan.opened(descriptor, name: name, in: folder)
    }

    /// Forgets `descriptor`, which is closed: its number will be given again.
    @inline(__always)
    static func closed(_ descriptor: Int32) {
        guard isActive, let plan = FaultPlan.current else { return }
        plan.closed(descriptor)
    }
}

/// The parsed `SHARE_QUEUE_FAULT`, read once per process. Its counts and names change under
/// `lock`: a drain reads a large segment on a thread of its own while it writes on another.
private final class FaultPlan: @unchecked Sendable {
    private let lock = ThreadLock()
    let call: String
    let errno: Int32
    let name: String?
    var successesLeft: Int
    var failuresLeft: Int?
    /// Descriptors opened under a name that holds `name`, or inside a folder that was.
    var named: Set<Int32> = []

    init(call: String, errno: Int32, name: String?, after: Int, count: Int?) {
        self.call = call
        self.errno = errno
        self.name = name
        self.successesLeft = after
        self.failuresLeft = count
    }

    func fails(_ made: String, descriptor: Int32, name opening: String?) -> Bool {
        guard made == call else { return false }
        lock.lock()
        defer { lock.unlock() }
        if name != nil {
            let matches = named.contains(descriptor) || opening.map(isNamed) == true
            guard matches else { return false }
        }
        if successesLeft > 0 { successesLeft -= 1; return false }
        if let left = failuresLeft {
            guard left > 0 else { return false }
            failuresLeft = left - 1
        }
        setErrno(errno)
        return true
    }

    func opened(_ descriptor: Int32, name opened: String, in folder: Int32) {
        guard name != nil else { return }
        lock.lock()
        defer { lock.unlock() }
        if named.contains(folder) || isNamed(opened) { named.insert(descriptor) } else { named.remove(descriptor) }
    }

    func closed(_ descriptor: Int32) { lock.withLock { _ = named.remove(descriptor) } }

    private func isNamed(_ candidate: String) -> Bool { name.map { candidate.contains($0) } ?? true }

    private static let errnos: [String: Int32] = [
        "EIO": EIO, "EACCES": EACCES, "EPERM": EPERM, "EAGAIN": EAGAIN, "ENOMEM": ENOMEM, "EINTR": EINTR,
        "EMFILE": EMFILE, "ENFILE": ENFILE, "ENOSPC": ENOSPC, "EDQUOT": EDQUOT, "ENOBUFS": ENOBUFS, "EROFS": EROFS,
        "ENOSYS": ENOSYS, "EINVAL": EINVAL, "ENOTSUP": ENOTSUP, "EFBIG": EFBIG, "EEXIST": EEXIST,
    ]

    #if SHARE_QUEUE_TEST_HOOKS
    static let current: FaultPlan? = {
        guard let text = Host.environment("SHARE_QUEUE_FAULT"), !text.isEmpty else { return nil }
        let parts = text.split(separator: ":").map(String.init)
        guard parts.count >= 2, let errno = errnos[parts[1]] else { return nil }
        var name: String?
        var after = 0
        var count: Int?
        for option in parts.dropFirst(2) {
            if option.hasPrefix("name=") { name = String(option.dropFirst(5)) }
            if option.hasPrefix("after=") { after = Int(option.dropFirst(6)) ?? 0 }
            if option.hasPrefix("count=") { count = Int(option.dropFirst(6)) }
        }
        return FaultPlan(call: parts[0], errno: errno, name: name, after: max(0, after), count: count)
    }()
    #else
    /// Always nil: a build without the `TestHooks` trait fails no call on purpose.
    @inline(__always) static var current: FaultPlan? { nil }
    #endif
}
