import Foundation
import Glibc
import Testing
@testable import ShareQueueCore

/// A process that another thread spawns holds a copy of every descriptor until it
/// calls exec, and keeps for good each one not marked close-on-exec. So a lock
/// must be let go of, not just closed, and every descriptor must be close-on-exec
/// from the call that makes it: a child must not keep a queue's lock taken, its
/// folder open, or a pipe's end from reaching end of file.
@Suite("Descriptors a child process could inherit", .runTimeLimit(minutes: 3))
struct InheritedDescriptorTests {
    /// Sink that copies, as a spawn does, each descriptor open on the queue's drain.lock while it delivers.
    struct CopyingSink: DrainSink {
        let lockPath: String
        var copies: [Int32] = []

        mutating func deliver(_ batch: DrainBatch) throws {
            var lock = stat()
            guard stat(lockPath, &lock) == 0 else { throw POSIXError(.ENOENT) }
            // Listed first, so that a copy made meanwhile is not listed and copied again.
            let onLock = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init).filter {
                var open = stat()
                return fstat($0, &open) == 0 && open.st_dev == lock.st_dev && open.st_ino == lock.st_ino
            }
            for descriptor in onLock {
                let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
                if copy >= 0 { copies.append(copy) }
            }
        }
    }

    @Test("A drain lets go of drain.lock when it returns, though a copy of its descriptor is still open",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
    func releasedDespiteCopies() throws {
        let queue = TestQueue()
        let directory = try QueueDirectory(path: queue.path)
        try QueueAppender(directory: directory).append(RecordDraft(.text("one"), source: "s"))
        var sink = CopyingSink(lockPath: queue.file("drain.lock"))
        defer { sink.copies.forEach { _ = close($0) } }
        #expect(try QueueDrainer(directory: directory).drain(into: &sink).delivered == 1)
        try #require(sink.copies.count == 1, "the drain held drain.lock open once while it delivered")

        // No wait: the lock must be free the moment the first drain returned.
        try QueueAppender(directory: directory).append(RecordDraft(.text("two"), source: "s"))
        var second = CopyingSink(lockPath: queue.file("drain.lock"))
        defer { second.copies.forEach { _ = close($0) } }
        #expect(try QueueDrainer(directory: directory).drain(into: &second).delivered == 1)
        #expect(try QueueDrainer(directory: directory).requeueDeadLetters() == 0)
        #expect(try QueueDrainer(directory: directory).drain(into: &second).delivered == 0)
    }

    /// The system calls that make a descriptor, and so must say close-on-exec.
    static let makers: Set<String> = [
        "open", "openat", "openat2", "creat", "dup", "dup2", "dup3", "pipe", "pipe2", "socket", "socketpair",
        "accept", "accept4", "inotify_init", "inotify_init1", "eventfd", "eventfd2", "epoll_create", "epoll_create1",
        "memfd_create", "timerfd_create", "signalfd", "signalfd4", "fanotify_init", "perf_event_open", "userfaultfd",
    ]

    /// The calls in an `strace -f` log, by the traced tool's own process, that make a descriptor
    /// without close-on-exec, or copy one with `F_DUPFD`.
    static func inheritable(_ log: String) -> [Substring] {
        let lines = log.split(separator: "\n")
        guard let tool = lines.first?.split(separator: " ").first else { return [] }
        return lines.filter { line in
            let words = line.split(separator: " ", maxSplits: 1)
            guard words.count == 2, words[0] == tool, let open = words[1].firstIndex(of: "(") else { return false }
            let call = String(words[1][..<open])
            let makes = makers.contains(call) || (call == "fcntl" && words[1].contains("F_DUPFD"))
            // The Swift runtime reads its own map once as it starts, before anything could run beside it;
            // so does a sanitizer's runtime with the files it reads its options from.
            let startup = ["\"/proc/self/maps\""] + sanitizerStartupFiles
            return makes && !line.contains("CLOEXEC") && !line.contains("= -1 ") && !startup.contains { line.contains($0) }
        }
    }

    @Test("Every descriptor the tools make is close-on-exec from the call that makes it: appending, attaching, draining to a command and to a store, status, requeue",
          OptionalProgram.needs("strace"))
    func closeOnExecFromBirth() throws {
        guard let strace = OptionalProgram.required("strace") else { return }
        let queue = TestQueue()
        let attachment = queue.scratch.file("photo.jpg")
        try Data("not really a JPEG".utf8).write(to: URL(fileURLWithPath: attachment))
        let runs: [(String, [String])] = [
            ("share-append", ["--dir", queue.path, "one"]),
            ("share-append", ["--dir", queue.path, "--attach", attachment, "two"]),
            ("host-drain", ["--dir", queue.path, "--exec", "cat >/dev/null"]),
            ("share-append", ["--dir", queue.path, "--lines"]),
            ("host-drain", ["--dir", queue.path, "--store", queue.scratch.file("store.sqlite")]),
            ("host-drain", ["--dir", queue.path, "--status", "--json"]),
            ("host-drain", ["--dir", queue.path, "--requeue-dead"]),
        ]
        for (number, (tool, arguments)) in runs.enumerated() {
            let log = queue.scratch.file("trace-\(number)")
            let traced = try run(strace, ["-f", "-o", log, "-e", "trace=%file,%desc,%net,%process", Executables.path(tool)] + arguments,
                                 stdin: "three\nfour\n", environment: tracedEnvironment, in: queue.scratch)
            #expect(traced.status == 0, "\(tool) \(arguments): \(traced.stderr)")
            let calls = try String(contentsOfFile: log, encoding: .utf8)
            #expect(calls.contains("execve("), "no trace of \(tool)")
            #expect(Self.inheritable(calls).isEmpty, "\(tool) \(arguments):\n\(Self.inheritable(calls).joined(separator: "\n"))")
        }
    }
}
