import ShareQueueSystem

/// The producers' lock: an exclusive `flock` on the queue directory itself, then on `append.lock`.
///
/// Any member of a shared queue's group may unlink `append.lock`, or put a file of her own in its
/// place, at any moment: two producers would then each hold "the lock" on a file of its own, and
/// write, copy or seal at once. The directory is the one thing at the queue no member can remove
/// or replace while a tool has it open, so it is what keeps writers out of each other's way. The
/// lock on `append.lock` is taken after it for writers of format revision 9 and before, which take
/// only that one: mixed with them, the queue is as safe as those writers made it.
struct ProducersLock {
    /// The queue directory, opened anew for this lock alone: a `flock` belongs to an open file,
    /// so two locks in one process (an appender and a drain) must not share one descriptor.
    private let folder: FileDescriptor
    private let file: FileDescriptor
    private let queuePath: String
    private let lockPath: String

    /// Opens the queue directory once more and `lockFile`, which the caller opened (and repaired); takes no lock yet.
    /// - Throws: The system's error if the directory cannot be opened; `lockFile` is then closed.
    init(in directory: QueueDirectory, lockFile: FileDescriptor) throws(ShareQueueError) {
        do { folder = try directory.folder.descriptor.open(".", .directory) } catch {
            lockFile.close()
            throw ShareQueueError("cannot open the queue directory to lock it", path: directory.path, error)
        }
        file = lockFile
        queuePath = directory.path
        lockPath = directory.appendLockPath
    }

    /// Lets go of both locks and closes both files (see ``QueueLock/release(_:)`` for why in that order).
    func release() {
        QueueLock.release(file)
        QueueLock.release(folder)
    }

    /// Takes both locks, the directory's first, waiting at most `seconds` in all.
    ///
    /// It never waits for `append.lock` while it holds the directory: every other waiter would then
    /// name this process as the holder, and not the one that holds the lock file. So when the lock
    /// file is taken it lets the directory go, waits for the lock file alone, and starts again.
    /// - Throws: `.busy` naming the lock and its holder when the time runs out (neither lock is then
    ///   held), or the failure of `flock` itself.
    func take(seconds: Double, shouldStop: (() -> Bool)? = nil, consequence: String) throws(ShareQueueError) {
        let deadline = Host.monotonicSeconds() + seconds
        // The whole wait the first time, so that a message says the wait that was asked for.
        var wait = seconds
        while true {
            try QueueLock.take(folder, path: queuePath, seconds: wait, shouldStop: shouldStop,
                               busy: "the producers' lock is taken", consequence: consequence)
            let locked: Bool
            do { locked = try file.lockExclusive(wait: false) } catch {
                folder.unlock()
                throw ShareQueueError("cannot take a lock", path: lockPath, error)
            }
            if locked { return }
            folder.unlock()
            try QueueLock.take(file, path: lockPath, seconds: max(deadline - Host.monotonicSeconds(), 0), shouldStop: shouldStop,
                               busy: "the producers' lock is taken", consequence: consequence)
            file.unlock()
            wait = max(deadline - Host.monotonicSeconds(), 0)
        }
    }

    /// Lets go of both locks, and keeps the files open for the next ``take(seconds:shouldStop:consequence:)``.
    func unlock() {
        file.unlock()
        folder.unlock()
    }
}
