import Foundation
import Testing

/// A queue directory shared with another user, who can swap it or its folders
/// for symlinks: root's tools must never read, write, rename or delete
/// anything outside the tree they opened.
@Suite("Trust boundary", .serialized)
struct TrustBoundaryTests {
    /// A directory root owns, with files that a drain would take for a queue's
    /// own: a checkpoint, a sealed segment and a day-old attachment.
    private func victim(in scratch: TemporaryDirectory, _ name: String = "victim") throws -> String {
        let path = scratch.file(name)
        try FileManager.default.createDirectory(atPath: path + "/attachments", withIntermediateDirectories: true)
        try Data("root's own checkpoint".utf8).write(to: URL(fileURLWithPath: path + "/checkpoint"))
        try Data("root's own segment".utf8).write(to: URL(fileURLWithPath: path + "/sealed-000000000001.log"))
        try Data("root's report".utf8).write(to: URL(fileURLWithPath: path + "/attachments/report.txt"))
        let old = Date().addingTimeInterval(-3 * 86_400)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path + "/attachments/report.txt")
        return path
    }

    /// Every file under `path`, with its bytes.
    private func tree(_ path: String) -> [String: Data] {
        var files: [String: Data] = [:]
        for name in FileManager.default.subpaths(atPath: path) ?? [] {
            files[name] = FileManager.default.contents(atPath: path + "/" + name) ?? Data()
        }
        return files
    }

    /// A folder the producer owns, inside a scratch directory every test user can reach.
    private func producersFolder(_ scratch: TemporaryDirectory) throws -> String {
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.path)
        let folder = scratch.file("shared")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        TestUsers.chown(folder, TestUsers.producer)
        return folder
    }

    @Test("A queue directory that is the producer's symlink to root's directory is refused, and root's files are untouched",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func symlinkedQueueDirectory() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let target = try victim(in: scratch)
        let folder = try producersFolder(scratch)
        let queue = folder + "/queue"
        try FileManager.default.createSymbolicLink(atPath: queue, withDestinationPath: target)
        TestUsers.chown(queue, TestUsers.producer)
        let before = tree(target)
        for arguments in [["--dir", queue], ["--dir", queue, "--status"], ["--dir", queue, "--requeue-dead"]] {
            let drain = try TestUsers.run(as: nil, "host-drain", arguments, in: scratch)
            #expect(drain.status == 78, "\(arguments): \(drain.stderr)")
            #expect(drain.stderr.contains(queue) && drain.stderr.contains("symlink"), "\(drain.stderr)")
        }
        let append = try TestUsers.run(as: nil, "share-append", ["--dir", queue, "shared by root"], in: scratch)
        #expect(append.status == 78, "\(append.stderr)")
        #expect(tree(target) == before)
    }

    @Test("A symlink above the queue is followed only if root or the user running the tool owns it",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason))
    func symlinkAboveTheQueue() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let target = try victim(in: scratch)
        let folder = try producersFolder(scratch)
        let link = folder + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        TestUsers.chown(link, TestUsers.producer)
        let before = tree(target)
        let drain = try TestUsers.run(as: nil, "host-drain", ["--dir", link + "/queue"], in: scratch)
        #expect(drain.status == 78, "\(drain.stderr)")
        #expect(drain.stderr.contains("another user"), "\(drain.stderr)")
        #expect(tree(target) == before)
        #expect(!FileManager.default.fileExists(atPath: target + "/queue"))

        // Root's own link is followed for root, and the producer's own for the producer.
        let real = scratch.file("real")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: scratch.file("roots-link"), withDestinationPath: real)
        let appended = try TestUsers.run(as: nil, "share-append", ["--dir", scratch.file("roots-link") + "/queue", "through root's link"], in: scratch)
        #expect(appended.status == 0, "\(appended.stderr)")
        #expect(FileManager.default.fileExists(atPath: real + "/queue/pending.log"))
        let own = folder + "/own"
        try FileManager.default.createDirectory(atPath: folder + "/mine", withIntermediateDirectories: false)
        TestUsers.chown(folder + "/mine", TestUsers.producer)
        try FileManager.default.createSymbolicLink(atPath: own, withDestinationPath: folder + "/mine")
        TestUsers.chown(own, TestUsers.producer)
        let producers = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", own + "/queue", "through my link"], in: scratch)
        #expect(producers.status == 0, "\(producers.stderr)")
    }

    /// The ids of the keyed records in a drain's output.
    private func publishedIDs(_ output: Data) throws -> [String] {
        try String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["key"] == nil ? nil : object?["id"] as? String
        }
    }

    /// Swaps two names again and again (`renameat2` with `RENAME_EXCHANGE`) until stopped.
    private final class Swapper {
        let process = Process()
        private let stop: String

        init(_ first: String, _ second: String, in scratch: TemporaryDirectory) throws {
            stop = scratch.file("stop-swapping-\(UUID().uuidString)")
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", """
                import ctypes, os, sys
                libc = ctypes.CDLL(None, use_errno=True)
                a, b, stop = (x.encode() for x in sys.argv[1:4])
                while not os.path.exists(stop):
                    libc.renameat2(-100, a, -100, b, 2)
                """, first, second, stop]
            try process.run()
        }

        /// Stops swapping, and puts `first` back to what it was if it was left swapped.
        func finish(first: String, second: String, firstIsDirectory: Bool) {
            _ = FileManager.default.createFile(atPath: stop, contents: nil)
            process.waitUntilExit()
            var status = stat()
            if lstat(first, &status) == 0, ((status.st_mode & S_IFMT) == S_IFDIR) != firstIsDirectory {
                rename(first, first + ".swap")
                rename(second, first)
                rename(first + ".swap", second)
            }
        }
    }

    @Test("A queue directory swapped with a symlink to root's directory during root's drains: nothing outside is touched, nothing is lost",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason), OptionalProgram.needs("/usr/bin/python3"))
    func directorySwappedDuringDrains() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let target = try victim(in: scratch)
        let folder = try producersFolder(scratch)
        let queue = folder + "/queue"
        var appended: [String] = []
        for round in 0..<3 {
            let result = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "--lines"],
                                           stdin: (0..<10).map { "round \(round) line \($0)" }.joined(separator: "\n"), in: scratch)
            #expect(result.status == 0, "\(result.stderr)")
            appended += result.lines
        }
        let evil = folder + "/evil"
        try FileManager.default.createSymbolicLink(atPath: evil, withDestinationPath: target)
        let before = tree(target)
        var delivered: [String] = []
        let swapper = try Swapper(queue, evil, in: scratch)
        for _ in 0..<10 {
            let drain = try TestUsers.run(as: nil, "host-drain", ["--dir", queue, "--batch", "3"], in: scratch)
            #expect([0, 78].contains(drain.status), "\(drain.stderr)")
            delivered += try ids(in: drain.stdout)
        }
        swapper.finish(first: queue, second: evil, firstIsDirectory: true)
        let last = try TestUsers.run(as: nil, "host-drain", ["--dir", queue], in: scratch)
        #expect(last.status == 0, "\(last.stderr)")
        delivered += try ids(in: last.stdout)
        #expect(tree(target) == before)
        #expect(Set(delivered) == Set(appended))
    }

    @Test("The attachments and keys folders swapped with symlinks to root's directory: root's drains and appends stay inside",
          .enabled(if: TestUsers.canRun, TestUsers.skipReason), OptionalProgram.needs("/usr/bin/python3"))
    func foldersSwappedDuringUse() throws {
        guard TestUsers.require() else { return }
        let scratch = TemporaryDirectory()
        let target = try victim(in: scratch)
        let folder = try producersFolder(scratch)
        let queue = folder + "/queue"
        let photo = scratch.file("photo.jpg")
        try Data(repeating: 7, count: 10_000).write(to: URL(fileURLWithPath: photo))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: photo)
        var appended: [String] = []
        for index in 0..<6 {
            let result = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "--attach", photo, "photo \(index)"], in: scratch)
            #expect(result.status == 0, "\(result.stderr)")
            appended += result.lines
        }
        let before = tree(target)
        let evilAttachments = queue + "/evil-attachments"
        try FileManager.default.createSymbolicLink(atPath: evilAttachments, withDestinationPath: target + "/attachments")
        let swapper = try Swapper(queue + "/attachments", evilAttachments, in: scratch)
        var delivered: [String] = []
        for _ in 0..<10 {
            let drain = try TestUsers.run(as: nil, "host-drain", ["--dir", queue, "--batch", "1", "--attachments-to", scratch.file("received")], in: scratch)
            #expect([0, 65, 74, 75, 78].contains(drain.status), "\(drain.stderr)")
            delivered += try ids(in: drain.stdout)
        }
        swapper.finish(first: queue + "/attachments", second: evilAttachments, firstIsDirectory: true)
        #expect(tree(target) == before)

        // The keys folder, while root publishes keyed values.
        _ = try TestUsers.run(as: TestUsers.producer, "share-append", ["--dir", queue, "--key", "k", "--if-changed", "v0"], in: scratch)
        let evilKeys = queue + "/evil-keys"
        try FileManager.default.createSymbolicLink(atPath: evilKeys, withDestinationPath: target)
        let keySwapper = try Swapper(queue + "/keys", evilKeys, in: scratch)
        for index in 1...10 {
            // Refused (78) while the folder is a symlink: an entry in it could not be trusted or removed.
            let publish = try TestUsers.run(as: nil, "share-append", ["--dir", queue, "--key", "k", "--if-changed", "v\(index)"], in: scratch)
            #expect([0, 78].contains(publish.status), "\(publish.stderr)")
        }
        keySwapper.finish(first: queue + "/keys", second: evilKeys, firstIsDirectory: true)
        #expect(tree(target) == before)
        let last = try TestUsers.run(as: nil, "host-drain", ["--dir", queue], in: scratch)
        #expect(last.status == 0, "\(last.stderr)")
        delivered += try ids(in: last.stdout)
        // The owner of a queue can always spoil its own attachments; what matters is that nothing comes from elsewhere.
        #expect(try Set(delivered).isSubset(of: Set(appended + publishedIDs(last.stdout))))
    }

    @Test("A file outside the queue hard-linked in as a lock file or the pending file keeps its owner and permissions through root's tools",
          .enabled(if: geteuid() == 0, "needs root"))
    func hardLinkedFilesKeepTheirOwner() throws {
        let scratch = TemporaryDirectory()
        for name in ["append.lock", "drain.lock", "pending.log"] {
            let outside = scratch.file("outside-\(name)")
            try Data("root's own file".utf8).write(to: URL(fileURLWithPath: outside))
            #expect(chown(outside, 0, 0) == 0 && chmod(outside, 0o644) == 0)
            // The queue belongs to another user, so that root's tools give what they create to that user.
            let queue = scratch.file("queue-\(name)")
            try FileManager.default.createDirectory(atPath: queue, withIntermediateDirectories: false)
            #expect(chown(queue, 65_534, 65_534) == 0 && chmod(queue, 0o770) == 0)
            #expect(link(outside, queue + "/" + name) == 0)
            // Both run through; only a pending file with another name is refused, unwritten.
            let append = try run("share-append", ["--dir", queue, "shared"], in: scratch)
            #expect(append.status == (name == "pending.log" ? 78 : 0), "\(name): \(append.stderr)")
            let drain = try run("host-drain", ["--dir", queue], in: scratch)
            #expect(drain.status == 0, "\(name): \(drain.stderr)")
            var status = stat()
            #expect(stat(outside, &status) == 0)
            #expect(status.st_uid == 0 && status.st_gid == 0, "\(name): owner \(status.st_uid):\(status.st_gid)")
            #expect(status.st_mode & 0o7777 == 0o644, "\(name): mode \(String(status.st_mode & 0o7777, radix: 8))")
            #expect(FileManager.default.contents(atPath: outside) == Data("root's own file".utf8))
        }
    }
}
