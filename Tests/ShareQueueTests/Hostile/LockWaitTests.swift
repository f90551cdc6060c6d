import Foundation
import ShareQueueSystem
import Testing

/// Waiting for a queue lock: woken the moment the holder lets go, yet never for
/// longer than the wait allows, and the lock then held like any other.
@Suite("Waiting for a lock", .serialized, .runTimeLimit(minutes: 2))
struct LockWaitTests {
    /// These tests are of the wait the tools choose (see `letLockWaitsUseSignals`); a library left alone polls.
    init() { FileDescriptor.letLockWaitsUseSignals() }

    /// Two open descriptions of one new lock file.
    static func twoDescriptions(_ scratch: TemporaryDirectory) throws -> (FileDescriptor, FileDescriptor) {
        let path = scratch.path + "/test.lock"
        return (try FileDescriptor.open(path, .lockFile), try FileDescriptor.open(path, .lockFile))
    }

    @Test("A waiter takes the lock within moments of its holder letting go, however long it waited")
    func wokenAtOnce() throws {
        let scratch = TemporaryDirectory()
        let (holder, waiter) = try Self.twoDescriptions(scratch)
        defer { holder.close(); waiter.close() }
        var delays: [Double] = []
        for _ in 0..<5 {
            #expect(try holder.lockExclusive(wait: false))
            let released = Locked(0.0)
            let letGo = Thread {
                // Long enough for a polling waiter's pauses to have grown to their longest.
                Thread.sleep(forTimeInterval: 0.15)
                released.value = Host.monotonicSeconds()
                holder.unlock()
            }
            letGo.start()
            #expect(try waiter.lockExclusive(waitingUpTo: 10))
            delays.append(Host.monotonicSeconds() - released.value)
            waiter.unlock()
        }
        // A waiter that polled would take it up to 10 ms late, 5 ms in the middle; one woken by the kernel, about 0.1 ms.
        let median = delays.sorted()[delays.count / 2]
        #expect(median < 0.0015, "from the holder's unlock to the waiter's lock: \(delays)")
    }

    @Test("A lock waited for is held by the waiter's descriptor: another cannot take it, unlocking it lets go, and it is closed on exec")
    func heldLikeAnyOther() throws {
        let scratch = TemporaryDirectory()
        let (holder, waiter) = try Self.twoDescriptions(scratch)
        let other = try FileDescriptor.open(scratch.path + "/test.lock", .lockFile)
        defer { holder.close(); waiter.close(); other.close() }
        #expect(try holder.lockExclusive(wait: false))
        let letGo = Thread {
            Thread.sleep(forTimeInterval: 0.05)
            holder.unlock()
        }
        letGo.start()
        #expect(try waiter.lockExclusive(waitingUpTo: 10))
        #expect(waiter.lockHolder() == Host.processID)
        #expect(try !other.lockExclusive(wait: false))
        #expect(fcntl(waiter.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        waiter.unlock()
        #expect(try other.lockExclusive(wait: false))
        other.unlock()
        // And closing lets go of it, as it does after a plain flock.
        #expect(try holder.lockExclusive(wait: false))
        let again = Thread {
            Thread.sleep(forTimeInterval: 0.05)
            holder.unlock()
        }
        again.start()
        let closing = try FileDescriptor.open(scratch.path + "/test.lock", .lockFile)
        #expect(try closing.lockExclusive(waitingUpTo: 10))
        closing.close()
        #expect(try other.lockExclusive(wait: false))
        other.unlock()
    }

    @Test("A thread keeps one timer for all its waits for a busy lock, and the timer ends with the thread",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/timers"), "the system lists a process's timers in /proc"))
    func oneTimerAThread() throws {
        let scratch = TemporaryDirectory()
        let (holder, waiter) = try Self.twoDescriptions(scratch)
        defer { holder.close(); waiter.close() }
        let thread = Locked<String?>(nil)
        let timersDuringWaits = Locked<[String]>([])
        let waiting = Thread {
            let tid = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last.map(String.init) ?? "?"
            thread.value = tid
            for _ in 0..<3 {
                guard (try? holder.lockExclusive(wait: false)) == true else { return }
                let letGo = Thread {
                    // Held until the waiter has its timer, so that the first wait surely blocks, however slow the machine.
                    for _ in 0..<10_000 where Self.timerCount(of: tid) != "1" { usleep(1000) }
                    holder.unlock()
                }
                letGo.start()
                guard (try? waiter.lockExclusive(waitingUpTo: 10)) == true else { return }
                waiter.unlock()
                timersDuringWaits.value.append(Self.timerCount(of: tid))
            }
        }
        waiting.start()
        try waitUntil("the three waits") { timersDuringWaits.value.count == 3 }
        // One timer, made at the first wait and kept: three calls fewer for every wait after it.
        #expect(timersDuringWaits.value == ["1", "1", "1"])
        let tid = try #require(thread.value)
        try waitUntil("the thread's timer to go with it") { Self.timerCount(of: tid) == "0" }
    }

    @Test("A wait whose shouldStop itself waits for another busy lock, on the same thread, still gives up at its deadline")
    func nestedWaitKeepsItsBound() throws {
        let scratch = TemporaryDirectory()
        let (outerHolder, outer) = try Self.twoDescriptions(scratch)
        let innerPath = scratch.path + "/inner.lock"
        let innerHolder = try FileDescriptor.open(innerPath, .lockFile), inner = try FileDescriptor.open(innerPath, .lockFile)
        defer { outerHolder.close(); outer.close(); innerHolder.close(); inner.close() }
        #expect(try outerHolder.lockExclusive(wait: false))
        // The outer lock is let go only long after the outer wait should have given up.
        let lateRelease = Thread {
            Thread.sleep(forTimeInterval: 5)
            outerHolder.unlock()
        }
        lateRelease.start()
        var askedOnce = false
        let start = Host.monotonicSeconds()
        let locked = try outer.lockExclusive(waitingUpTo: 0.3, shouldStop: {
            guard !askedOnce else { return false }
            askedOnce = true
            // Asked while the outer wait's timer runs: wait for a second lock, busy for 20 ms.
            guard (try? innerHolder.lockExclusive(wait: false)) == true else { return false }
            let letGo = Thread {
                Thread.sleep(forTimeInterval: 0.02)
                innerHolder.unlock()
            }
            letGo.start()
            if (try? inner.lockExclusive(waitingUpTo: 10)) == true { inner.unlock() }
            return false
        })
        let waited = Host.monotonicSeconds() - start
        #expect(askedOnce)
        #expect(!locked && waited < 2, "locked: \(locked) after \(waited) s")
    }

    /// How many POSIX timers of this process signal the thread `tid`, as /proc tells.
    static func timerCount(of tid: String) -> String {
        let timers = (try? String(contentsOfFile: "/proc/self/timers", encoding: .utf8)) ?? ""
        return String(timers.split(separator: "\n").filter { $0 == "notify: signal/tid.\(tid)" }.count)
    }

    @Test("A waiter gives up on a stopped holder at its deadline, and once the holder is gone the lock is free: the wait given up holds nothing")
    func givenUpHoldsNothing() throws {
        let queue = TestQueue()
        try queue.append(text: "first")
        let holder = try StoppedLockHolderTests.stoppedTool("share-append", at: "append-locked", ["--dir", queue.path, "held"], in: queue.scratch)
        defer { holder.kill(); _ = holder.wait() }
        let lock = try FileDescriptor.open(queue.file("append.lock"), .lockFile)
        defer { lock.close() }
        for _ in 0..<3 {
            let start = Host.monotonicSeconds()
            #expect(try !lock.lockExclusive(waitingUpTo: 0.3))
            let waited = Host.monotonicSeconds() - start
            #expect(waited >= 0.3 && waited < 2, "waited \(waited) s")
        }
        #expect(try !lock.lockExclusive(waitingUpTo: 0.2, shouldStop: { true }))
        holder.kill()
        _ = holder.wait()
        // The waits given up end with the lock let go, so producers and drains go on.
        let other = try FileDescriptor.open(queue.file("append.lock"), .lockFile)
        defer { other.close() }
        try waitUntil("the lock to be free") {
            guard try other.lockExclusive(wait: false) else { return false }
            other.unlock()
            return true
        }
        let appended = try queue.append(["--lock-timeout", "2", "after"])
        #expect(appended.status == 0, "\(appended.stderr)")
        #expect(try queue.drain().status == 0)
    }
}
