import Dispatch
import ShareQueueSystem

extension QueueDirectory {
    /// Notices that records may have arrived, for a host that drains while it runs.
    ///
    /// ```swift
    /// for await _ in try queue.changes() {
    ///     try await drainer.drain(into: &inbox)
    /// }
    /// ```
    ///
    /// The first notice comes at once, so that a loop that drains on every notice also
    /// drains what arrived before it began to watch. After that, an append to the queue,
    /// from this process or another, brings a notice at once after a quiet spell; during
    /// a burst of appends notices come at most once per `minimumInterval`, and while the
    /// consumer is busy at most one waits for it. A notice carries nothing: it means
    /// "something may have arrived since the last notice", and the consumer drains. The
    /// watch sees writes to the queue's pending file, which appends make; a drain's own
    /// bookkeeping brings no notice. It watches the directory at ``path``: a directory
    /// removed or moved away meanwhile brings no more notices.
    ///
    /// The watch waits in the kernel (inotify on Linux, kqueue on the Apple platforms)
    /// through a dispatch source: it holds no thread, cooperative or other, while it
    /// waits. It ends when the task iterating the sequence is cancelled, or when the
    /// sequence is dropped; its descriptors are closed before iteration ends. A notice
    /// reaches only a running process: drain at launch and on becoming active too.
    /// - Parameter minimumInterval: The least time between two notices during a burst; 100 ms by default.
    /// - Returns: The notices, for one consumer.
    /// - Throws: `.resourceShortage` when descriptors or the user's inotify instances run out
    ///   (EMFILE, ENFILE), and `.permissionDenied` or `.ioError` for a directory that
    ///   cannot be watched otherwise (ENOSPC when the user's inotify watches run out), naming it.
    public func changes(minimumInterval: Duration = .milliseconds(100)) throws(ShareQueueError) -> QueueChanges {
        let watcher = try changeWatcher()
        let seconds = Double(minimumInterval.components.seconds) + Double(minimumInterval.components.attoseconds) / 1e18
        return QueueChanges(feed: ChangeFeed(watcher: watcher, minimumInterval: max(0, seconds)))
    }
}

/// A notice that records may have been appended to a queue since the previous notice.
///
/// It carries nothing: the queue on disk is the truth, and a host that gets one drains.
public struct QueueChange: Sendable, Hashable {}

/// The change notices of one queue, from ``QueueDirectory/changes(minimumInterval:)``.
///
/// One task iterates it. Cancelling that task ends the sequence; the watch's descriptors
/// are closed before `next()` returns nil.
public struct QueueChanges: AsyncSequence, Sendable {
    /// A notice.
    public typealias Element = QueueChange

    let feed: ChangeFeed

    /// The iterator over the notices.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let feed: ChangeFeed
        var notices: AsyncStream<QueueChange>.AsyncIterator

        /// Waits for the next notice.
        /// - Returns: The notice, or nil once the task is cancelled and the watch is released.
        public mutating func next() async -> QueueChange? {
            if let notice = await notices.next() { return notice }
            feed.stop()
            await feed.released()
            return nil
        }
    }

    /// The iterator over the notices; make one only.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(feed: feed, notices: feed.notices.makeAsyncIterator())
    }
}

/// A watch of one queue that feeds an `AsyncStream` of notices from a dispatch source.
///
/// Whoever holds it keeps the watch alive: once the sequence and its iterator are gone,
/// the source is cancelled and the watcher closed.
final class ChangeFeed: Sendable {
    let notices: AsyncStream<QueueChange>
    private let pump: ChangePump
    private let source: CancellableSource

    init(watcher: ChangeWatcher, minimumInterval: Double) {
        let queue = DispatchQueue(label: "ShareQueue.changes")
        let (notices, continuation) = AsyncStream.makeStream(of: QueueChange.self, bufferingPolicy: .bufferingNewest(1))
        let pump = ChangePump(watcher: watcher, queue: queue, continuation: continuation, minimumInterval: minimumInterval)
        let source: any DispatchSourceProtocol
        if let descriptor = watcher.descriptor {
            source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        } else {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now(), repeating: .milliseconds(ChangeWatcher.pollingMilliseconds))
            source = timer
        }
        source.setEventHandler { pump.takeChanges() }
        source.setCancelHandler { pump.close() }
        let cancellable = CancellableSource(source)
        // The consuming task cancelled: the stream calls this, and `next()` then waits for `released()`.
        continuation.onTermination = { _ in cancellable.cancel() }
        self.notices = notices
        self.pump = pump
        self.source = cancellable
        continuation.yield(QueueChange())
        source.resume()
    }

    deinit { source.cancel() }

    /// Ends the watch; the watcher is closed on the feed's queue soon after.
    func stop() { source.cancel() }

    /// Returns once the watcher is closed.
    func released() async { await pump.released() }
}

/// A dispatch source, to cancel from any thread.
private final class CancellableSource: @unchecked Sendable {
    // @unchecked: the source is only cancelled once made, and `cancel` is thread-safe.
    private let source: any DispatchSourceProtocol

    init(_ source: any DispatchSourceProtocol) { self.source = source }

    /// Cancels the source; its cancel handler runs on its queue. Later calls do nothing.
    func cancel() { source.cancel() }
}

/// The watcher and the pacing of notices, touched on the feed's serial queue.
private final class ChangePump: @unchecked Sendable {
    // @unchecked: `watcher`, `lastNotice` and `noticeScheduled` are only touched on `queue`, a
    // serial queue; `isReleased` and `waiters` only while `lock` is held.
    private let watcher: ChangeWatcher
    private let queue: DispatchQueue
    private let continuation: AsyncStream<QueueChange>.Continuation
    private let minimumInterval: Double
    private var lastNotice = -Double.infinity
    private var noticeScheduled = false
    private let lock = ThreadLock()
    private var isReleased = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(watcher: ChangeWatcher, queue: DispatchQueue, continuation: AsyncStream<QueueChange>.Continuation, minimumInterval: Double) {
        self.watcher = watcher
        self.queue = queue
        self.continuation = continuation
        self.minimumInterval = minimumInterval
    }

    /// Takes the watcher's events; a change brings a notice now, or once `minimumInterval`
    /// has passed since the last one.
    func takeChanges() {
        guard watcher.takeChanges(), !noticeScheduled else { return }
        let wait = lastNotice + minimumInterval - Host.monotonicSeconds()
        guard wait > 0 else { return notify() }
        noticeScheduled = true
        queue.asyncAfter(deadline: .now() + wait) { [self] in
            noticeScheduled = false
            notify()
        }
    }

    private func notify() {
        lastNotice = Host.monotonicSeconds()
        continuation.yield(QueueChange())
    }

    /// Closes the watcher and ends the notices; called once, as the source's cancel handler.
    func close() {
        watcher.close()
        continuation.finish()
        let waiting = lock.withLock {
            isReleased = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Returns once ``close()`` has run.
    func released() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = lock.withLock {
                if !isReleased { waiters.append(waiter) }
                return isReleased
            }
            if done { waiter.resume() }
        }
    }
}
