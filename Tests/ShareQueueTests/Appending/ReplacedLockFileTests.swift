import Foundation
@testable import ShareQueueCore
import ShareQueueSystem
import Testing

/// A drain replaces a producers' lock file that other users' producers could not use (moved
/// aside, made anew). An appender an app keeps open across that must still be kept out while the
/// drain seals: a lock on the old file alone would keep no seal out, and an append beside a seal
/// could be lost with its segment. The queue directory's own lock, which no one can replace, does it.
@Suite("A lock file replaced under a long-lived appender", .runTimeLimit(minutes: 2))
struct ReplacedLockFileTests {
    @Test("An appender opened before the producers' lock file was replaced waits for a drain that holds the producers' lock, then appends: nothing is lost")
    func appenderWaitsForTheDrain() throws {
        let queue = TestQueue()
        var options = AppendOptions()
        options.lockTimeoutSeconds = 0.3
        options.synchronize = false
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path), options: options)
        let first = try appender.append(RecordDraft(.text("before"), source: "s"))
        try FileManager.default.moveItem(atPath: queue.path + "/append.lock", toPath: queue.path + "/rejected-1-append.lock")
        // What a drain holds while it seals: the directory, opened anew, and the new lock file.
        let drainsFolder = try FileDescriptor.openDirectory(atPath: queue.path, creating: false)
        let drainsLock = try FileDescriptor.open(queue.path + "/append.lock", .lockFile)
        defer { drainsLock.close(); drainsFolder.close() }
        #expect(try drainsFolder.lockExclusive(wait: false))
        #expect(try drainsLock.lockExclusive(wait: false))
        do {
            _ = try appender.append(RecordDraft(.text("during"), source: "s"))
            Issue.record("appended while a drain held the producers' lock")
        } catch ShareQueueError.busy {
        } catch {
            Issue.record("\(error)")
        }
        drainsFolder.unlock()
        drainsLock.unlock()
        let last = try appender.append(RecordDraft(.text("after"), source: "s"))
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == [first, last])
    }
}

/// A member of a shared queue's group can unlink `append.lock`, or put a file of her own in its place,
/// at any moment: the producers' lock must not be a file she can take away.
@Suite("A member who removes the producers' lock file", .serialized, .runTimeLimit(minutes: 4))
struct RemovedLockFileTests {
    /// Removes the files at `paths` over and over, as fast as the system lets, from a thread of the
    /// test's own until ``stop()``: a member of the group needs no more than write access to the
    /// directory for it, and a loop in C is as fast. A tool that made a file and opened it by name
    /// after is caught in between within a few hundred runs.
    final class Remover: @unchecked Sendable {
        private let stopped = Locked(false)
        private let finished = DispatchSemaphore(value: 0)

        init(_ paths: [String]) {
            Thread { [self] in
                while !stopped.value { for path in paths { unlink(path) } }
                finished.signal()
            }.start()
        }

        func stop() {
            stopped.value = true
            finished.wait()
        }
    }

    @Test("Two honest producers of two users append while a member removes append.lock over and over: every acknowledged record is delivered",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func removedLockLosesNothing() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: scratch.path)
        let tools = TestUsers.tools
        // The host's empty pending file removed first: each producer then appends to its own, or copies the other's.
        let script = """
        cd '\(scratch.path)'
        as() { u=$1; m=$2; shift 2; setpriv --reuid=$u --regid=nogroup --init-groups /bin/sh -c "umask $m; exec \\"\\$@\\"" sh "$@"; }
        as \(TestUsers.host) 077 '\(tools)/host-drain' --dir '\(queue)' -q > /dev/null || exit 1
        rm -f '\(queue)/pending.log'
        as \(TestUsers.secondProducer) 022 /bin/sh -c 'cd "$1"; while [ ! -e "$2" ]; do rm -f append.lock; done' sh '\(queue)' '\(scratch.file("done"))' &
        for user in \(TestUsers.producer):077 \(TestUsers.thirdProducer):002; do
          as ${user%:*} ${user#*:} /bin/sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i+1)); "$1" --dir "$2" --lock-timeout 5 "$3-$i" || echo "status $?" >&2; done' sh '\(tools)/share-append' '\(queue)' ${user%:*} > acked.${user%:*} 2> failed.${user%:*} &
          producers="$producers $!"
        done
        wait $producers
        : > done
        wait
        """
        // The member's loop shows that she may; the test's own, as fast as one in C, catches producers
        // between making the file and opening it.
        let remover = Remover([queue + "/append.lock"])
        let run: ProcessResult
        do {
            defer { remover.stop() }
            run = try ShareQueueTests.run("/bin/sh", ["-c", script], in: scratch)
        }
        #expect(run.status == 0, "\(run.stderr)")
        // Producers that truly take turns have no reason to fail.
        for user in [TestUsers.producer, TestUsers.thirdProducer] {
            let failures = try String(contentsOfFile: scratch.file("failed.\(user)"), encoding: .utf8)
            #expect(failures == "", "\(user): \(failures)")
        }
        let acknowledged = try [TestUsers.producer, TestUsers.thirdProducer].flatMap { user in
            try String(contentsOfFile: scratch.file("acked.\(user)"), encoding: .utf8).split(separator: "\n").map(String.init)
        }
        let drain = try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue, "--wait", "5"], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        let delivered = Set(try ids(in: drain.stdout))
        let lost = acknowledged.filter { !delivered.contains($0) }
        #expect(lost.isEmpty, "\(lost.count) of \(acknowledged.count) acknowledged records lost")
    }

    @Test("Drains and producers run while both lock files are removed over and over: each one's own lock file is its lock, and none fails")
    func removedLockFilesStopNoOne() throws {
        let queue = TestQueue()
        var acknowledged: [String] = []
        var delivered: [String] = []
        var failures: [String] = []
        do {
            let remover = Remover([queue.file("append.lock"), queue.file("drain.lock")])
            defer { remover.stop() }
            // The first append makes the queue, with both lock files.
            for round in 0..<100 {
                let append = try queue.append(["--no-sync", "record \(round)"])
                if append.status == 0 { acknowledged += append.lines } else { failures.append("append: \(append.status) \(append.stderr)") }
                let drain = try queue.drain(["--wait", "5"])
                if drain.status == 0 { delivered += try ids(in: drain.stdout) } else { failures.append("drain: \(drain.status) \(drain.stderr)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failed: \(failures.first ?? "")")
        #expect(delivered == acknowledged)
        #expect(acknowledged.count == 100)
    }
}

/// Tools that start on a new queue at once each make its files, and one may find another's file
/// linked into place and still with its maker's temporary name.
@Suite("A lock file being made while another tool starts", .runTimeLimit(minutes: 2))
struct LockFileBeingMadeTests {
    @Test("A new queue's lock file found linked into place but still with its maker's temporary name is taken as the queue's, not moved aside from under its maker")
    func lockFileWithItsMakersName() throws {
        let queue = TestQueue()
        try FileManager.default.createDirectory(atPath: queue.path, withIntermediateDirectories: true)
        // Stopped after the link and before its temporary name is removed: the file has two names.
        let maker = try StoppedLockHolderTests.stoppedTool("share-append", at: "create-linked", ["--dir", queue.path, "first"], in: queue.scratch)
        defer { maker.kill(); _ = maker.wait() }
        #expect(queue.names().contains { $0.hasPrefix("append.lock.tmp-") }, "\(queue.names())")
        let second = try queue.append(["second"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!queue.names().contains { $0.hasPrefix("rejected-") }, "\(queue.names())")
        kill(maker.pid, SIGCONT)
        let first = maker.wait()
        #expect(first.status == 0, "\(first.stderr)")
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(Set(try ids(in: drain.stdout)) == Set(first.lines + second.lines))
        #expect(first.lines.count == 1 && second.lines.count == 1)
    }
}
