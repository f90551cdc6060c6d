import Foundation
import Testing

/// A member of a shared queue's group owns a file at one of the queue's names, and changes its mode,
/// replaces it, or holds its lock: honest producers of other users and the host must lose no record
/// they acknowledged, and be kept out no longer than until the host's next drain.
@Suite("Files a member owns in a shared queue", .serialized)
struct MemberOwnedFileTests {
    private let member = TestUsers.secondProducer
    private let honest = [TestUsers.producer, TestUsers.thirdProducer]

    /// Runs `command` in `queue` as the member, and requires that it worked.
    private func asMember(_ command: String, in queue: String, _ scratch: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try TestUsers.shell(as: member, "cd '\(queue)' && \(command)", in: scratch)
        try #require(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
    }

    private func append(as user: String, _ text: String, to queue: String, _ scratch: TemporaryDirectory) throws -> ProcessResult {
        try TestUsers.run(as: user, "share-append", ["--dir", queue, "--lock-timeout", "1", text], in: scratch)
    }

    private func drain(_ queue: String, _ scratch: TemporaryDirectory, _ extra: [String] = ["--wait", "1"]) throws -> ProcessResult {
        try TestUsers.run(as: TestUsers.host, "host-drain", ["--dir", queue] + extra, in: scratch)
    }

    private func owner(_ path: String) -> uid_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_uid : nil
    }

    @Test("After a drain the pending file is the host's, the group's to read and write: a member cannot change its mode",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func drainMakesThePendingFile() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        #expect(try append(as: TestUsers.producer, "first", to: queue, scratch).status == 0)
        #expect(try drain(queue, scratch).status == 0)
        var status = stat()
        #expect(lstat(queue + "/pending.log", &status) == 0)
        #expect(status.st_uid == TestUsers.uid(TestUsers.host) && status.st_gid == TestUsers.gid(TestUsers.group), "\(status.st_uid)")
        #expect(status.st_mode & 0o7777 == 0o660 && status.st_size == 0, "\(String(status.st_mode, radix: 8))")
        let chmod = try TestUsers.shell(as: member, "chmod 600 '\(queue)/pending.log'", in: scratch)
        #expect(chmod.status != 0)
    }

    @Test("A member who owns the pending file and makes it unreadable once honest producers appended: every honest record is delivered",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["600", "000", "200"])
    func membersPendingFileLosesNoHonestRecord(_ mode: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        var delivered = try ids(in: try drain(queue, scratch).stdout)
        // The member is the first to append after the drain, into a pending file of its own.
        try asMember("rm -f pending.log", in: queue, scratch)
        let first = try append(as: member, "member's", to: queue, scratch)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(owner(queue + "/pending.log") == TestUsers.uid(member))
        var acknowledged: [String] = []
        for user in honest {
            let appended = try append(as: user, "from \(user)", to: queue, scratch)
            #expect(appended.status == 0, "\(user): \(appended.stderr)")
            acknowledged += appended.lines
        }
        // No honest record is in a file the member owns: its change of mode fails, or changes its own file alone.
        #expect(owner(queue + "/pending.log") != TestUsers.uid(member))
        _ = try TestUsers.shell(as: member, "cd '\(queue)' && chmod \(mode) pending.log", in: scratch)
        let host = try drain(queue, scratch)
        #expect(host.status == 0, "\(host.stderr)")
        delivered += try ids(in: host.stdout)
        #expect(delivered == first.lines + acknowledged, "\(host.stderr)")
    }

    @Test("A pending file with the member's records alone, that other producers may not write: they exit 77 saying so, --status warns, and after one drain they go on",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["600", "640"])
    func membersUnwritablePending(_ mode: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        #expect(try drain(queue, scratch).status == 0)
        try asMember("rm -f pending.log", in: queue, scratch)
        let own = try append(as: member, "member's", to: queue, scratch)
        #expect(own.status == 0, "\(own.stderr)")
        try asMember("chmod \(mode) pending.log", in: queue, scratch)

        let status = try drain(queue, scratch, ["--status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stderr.contains(queue + "/pending.log is not the group's to read and write"), "\(status.stderr)")
        #expect(status.stderr.contains("user \(TestUsers.uid(member))"), "\(status.stderr)")
        let refused = try append(as: TestUsers.producer, "refused", to: queue, scratch)
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(refused.stderr.contains("belongs to user \(TestUsers.uid(member))") && refused.stderr.contains("next drain"), "\(refused.stderr)")

        let host = try drain(queue, scratch)
        #expect(host.status == 0, "\(host.stderr)")
        // The member's own record is delivered if the host may read it; else its file is kept aside, and the drain says so.
        #expect(try ids(in: host.stdout) == (mode == "640" ? own.lines : []), "\(host.stderr)")
        if mode == "600" {
            #expect(host.stderr.contains("belongs to user \(TestUsers.uid(member))") && host.stderr.contains("NOT delivered"), "\(host.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: queue).contains { $0.hasPrefix("rejected-") && $0.contains("-sealed-") })
        }
        let appended = try append(as: TestUsers.producer, "after", to: queue, scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        #expect(try ids(in: try drain(queue, scratch).stdout) == appended.lines)
    }

    @Test("The format marker and lock files a member made, removed, replaced or changed the mode of keep no producer out past the host's next drain",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason),
          arguments: ["rm -f format append.lock && (umask 077; : > append.lock)", "chmod 600 format append.lock", "chmod 600 append.lock",
                      "chmod 640 append.lock", "chmod 600 drain.lock", "rm -f format drain.lock && (umask 077; : > drain.lock)",
                      "chmod 600 format", "chmod 600 format append.lock drain.lock"])
    func membersLockFilesAreRepaired(_ plant: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        // The member makes the queue, so that its marker and lock files are the member's.
        let made = try append(as: member, "member's", to: queue, scratch)
        #expect(made.status == 0, "\(made.stderr)")
        var acknowledged = made.lines
        let before = try append(as: TestUsers.producer, "before", to: queue, scratch)
        #expect(before.status == 0, "\(before.stderr)")
        acknowledged += before.lines
        try asMember(plant, in: queue, scratch)

        // Without a marker there is no queue to look at (66).
        if !plant.contains("rm -f format") {
            let status = try drain(queue, scratch, ["--status"])
            #expect(status.status == 0, "\(status.stderr)")
            let named = plant.split(separator: " ").dropFirst(2).map { queue + "/" + $0 }
            for path in named { #expect(status.stderr.contains(path + " "), "\(path): \(status.stderr)") }
        }
        // Until the drain, a producer may be kept out, with 77.
        let waiting = try append(as: TestUsers.producer, "waiting", to: queue, scratch)
        #expect(waiting.status == 0 || waiting.status == 77, "\(waiting.stderr)")
        acknowledged += waiting.lines

        let host = try drain(queue, scratch)
        #expect(host.status == 0, "\(host.stderr)")
        var delivered = try ids(in: host.stdout)
        for user in honest + [TestUsers.host] {
            let appended = try append(as: user, "after \(user)", to: queue, scratch)
            #expect(appended.status == 0, "\(user): \(appended.stderr)")
            acknowledged += appended.lines
        }
        let last = try drain(queue, scratch)
        #expect(last.status == 0, "\(last.stderr)")
        delivered += try ids(in: last.stdout)
        #expect(delivered == acknowledged, "\(host.stderr)")
        // The files at the queue's names are the host's now, and the group's.
        for name in ["append.lock", "drain.lock", "format"] {
            var file = stat()
            #expect(lstat(queue + "/" + name, &file) == 0)
            #expect(file.st_mode & 0o060 != 0 && file.st_gid == TestUsers.gid(TestUsers.group), "\(name): \(String(file.st_mode, radix: 8))")
        }
    }

    @Test("A drain run as root, which may open any file, still moves aside the lock files and quarantine file a member closed to others",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func rootDrainRepairsClosedFiles() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        let made = try append(as: member, "member's", to: queue, scratch)
        #expect(made.status == 0, "\(made.stderr)")
        try asMember("echo '{}' > quarantine.log && chmod 600 append.lock drain.lock quarantine.log", in: queue, scratch)
        let drain = try TestUsers.run(as: nil, "host-drain", ["--dir", queue], in: scratch)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == made.lines)
        let aside = try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("rejected-") }
        for name in ["append.lock", "drain.lock", "quarantine.log"] {
            #expect(drain.stderr.contains(queue + "/" + name + " is not the group's to read and write"), "\(name): \(drain.stderr)")
            #expect(aside.contains { $0.hasSuffix("-" + name) }, "\(name): \(aside)")
        }
        let appended = try append(as: TestUsers.producer, "after", to: queue, scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
    }

    @Test("A member holding either half of the producers' lock, append.lock or the queue directory: producers exit 75 naming the process, its user and what to do",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason), arguments: ["/append.lock", ""])
    func membersHeldAppendLock(_ name: String) throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        #expect(try append(as: TestUsers.producer, "first", to: queue, scratch).status == 0)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        holder.arguments = ["--reuid=\(member)", "--regid=nogroup", "--init-groups", "/usr/bin/flock", "-x", queue + name, "sleep", "5"]
        try holder.run()
        defer { holder.terminate(); holder.waitUntilExit() }
        var refused = try append(as: TestUsers.producer, "refused", to: queue, scratch)
        for _ in 0..<50 where refused.status == 0 {
            // Until the holder has its lock.
            usleep(100_000)
            refused = try append(as: TestUsers.producer, "refused", to: queue, scratch)
        }
        #expect(refused.status == 75, "\(refused.stderr)")
        #expect(refused.stderr.contains("of user \(TestUsers.uid(member))"), "\(refused.stderr)")
        #expect(refused.stderr.contains("kill -CONT") && refused.stderr.contains("end it"), "\(refused.stderr)")
    }

    @Test("A member holding append.lock while an honest producer waits for it: another producer's message names the member, not the one that waits",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func waiterIsNotBlamed() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        #expect(try append(as: TestUsers.producer, "first", to: queue, scratch).status == 0)
        func started(_ arguments: [String]) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        let holder = try started(["--reuid=\(member)", "--regid=nogroup", "--init-groups", "/usr/bin/flock", "-x", queue + "/append.lock", "sleep", "30"])
        defer { holder.terminate(); holder.waitUntilExit() }
        try waitUntil("the member to hold append.lock") { Self.lockHolders().contains(holder.processIdentifier) }
        let waiter = try started(["--reuid=\(honest[0])", "--regid=nogroup", "--init-groups", TestUsers.tools + "/share-append", "--dir", queue, "--lock-timeout", "20", "waits"])
        defer { waiter.terminate(); waiter.waitUntilExit() }
        try waitUntil("the honest producer to wait for the lock") { Self.blockedWaiters().contains(waiter.processIdentifier) }
        let refused = try TestUsers.run(as: honest[1], "share-append", ["--dir", queue, "--lock-timeout", "1", "refused"], in: scratch)
        #expect(refused.status == 75, "\(refused.stderr)")
        #expect(refused.stderr.contains("of user \(TestUsers.uid(member))"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("process \(waiter.processIdentifier)"), "\(refused.stderr)")
    }

    /// The processes /proc/locks shows holding a lock.
    private static func lockHolders() -> [Int32] {
        locksLines().filter { !$0.contains("->") }.compactMap { Int32($0.split(separator: " ").dropFirst(4).first ?? "") }
    }

    /// The processes /proc/locks shows blocked in a lock request (its "->" lines).
    private static func blockedWaiters() -> [Int32] {
        locksLines().filter { $0.contains("->") }.compactMap { line in
            Int32(line.split(separator: " ").drop { $0 != "->" }.dropFirst(4).first ?? "")
        }
    }

    private static func locksLines() -> [String] {
        ((try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("FIFOs a member puts at append.lock and drain.lock are moved aside by the host's next drain, which makes the lock files anew",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func membersFIFOLocksAreReplaced() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let queue = try TestUsers.sharedQueue(in: scratch)
        var acknowledged = try append(as: TestUsers.producer, "before", to: queue, scratch).lines
        try asMember("rm -f append.lock drain.lock && mkfifo -m 660 append.lock drain.lock", in: queue, scratch)
        let host = try drain(queue, scratch)
        #expect(host.status == 0, "\(host.stderr)")
        var delivered = try ids(in: host.stdout)
        for name in ["append.lock", "drain.lock"] {
            var status = stat()
            #expect(lstat(queue + "/" + name, &status) == 0 && status.st_mode & S_IFMT == S_IFREG, "\(name): \(host.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).filter { $0.hasPrefix("rejected-") }.count == 2, "\(host.stderr)")
        acknowledged += try append(as: TestUsers.producer, "after", to: queue, scratch).lines
        delivered += try ids(in: try drain(queue, scratch).stdout)
        #expect(delivered == acknowledged)
    }
}
