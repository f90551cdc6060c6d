#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// A thread of this process that runs one piece of work, and that its starter joins.
/// The corresponding C functions are `pthread_create` and `pthread_join`.
package final class WorkerThread: @unchecked Sendable {
    // @unchecked: `thread` is set by `init` and read only by `join`, on the thread that started it.
    #if canImport(Glibc)
    private var thread = pthread_t()
    #else
    private var thread: pthread_t?  // A pointer on Darwin and musl.
    #endif
    private var joined = false

    /// Its stack: as much as a process's first thread gets by default on Linux, so that deep
    /// JSON read there fits as it does there (other threads get 512 KiB on Apple's systems).
    private static let stackSize = 8 << 20

    /// Starts `work` on a new thread.
    /// - Throws: `SystemError` when the system makes no more threads (`EAGAIN`).
    package init(_ work: @escaping @Sendable () -> Void) throws(SystemError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, Self.stackSize)
        let box = Unmanaged.passRetained(WorkBox(work))
        let result = pthread_create(&thread, &attributes, { context in
            #if canImport(Darwin)
            let box = Unmanaged<WorkBox>.fromOpaque(context).takeRetainedValue()
            #else
            let box = Unmanaged<WorkBox>.fromOpaque(context!).takeRetainedValue()
            #endif
            box.work()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            joined = true
            throw SystemError(call: "pthread_create", errno: result)
        }
    }

    /// Waits for the work to end. Called once, by the thread that started it.
    package func join() {
        guard !joined else { return }
        joined = true
        #if canImport(Glibc)
        pthread_join(thread, nil)
        #else
        if let thread { pthread_join(thread, nil) }
        #endif
    }

    /// A thread never joined is detached: the system reclaims it, and its stack, when its work ends.
    deinit {
        guard !joined else { return }
        #if canImport(Glibc)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
    }

    private final class WorkBox {
        let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }
}
