import Foundation
import Testing

/// Real users for tests across the trust boundary: producers and a host of
/// their own uids sharing one group, and an outsider. They are made once (with
/// `groupadd` and `useradd`), which needs root; CI runs as root.
enum TestUsers {
    static let group = "sqshare"
    static let producer = "sqprod1"
    static let secondProducer = "sqprod2"
    static let thirdProducer = "sqprod3"
    static let host = "sqhost"
    /// A user outside the group.
    static let outsider = "sqother"

    /// Whether the tests that need these users can run: as root. Under CI they
    /// must, so there the tests run and fail rather than being skipped.
    static let canRun: Bool = getuid() == 0 || ProcessInfo.processInfo.environment["CI"] != nil
    static let skipReason: Comment = "needs root, to create users and run the tools as them (CI runs as root)"

    /// Makes the users once; records an issue if that fails.
    static let ready: Bool = {
        guard getuid() == 0 else { return false }
        var made = shell("getent group \(group) > /dev/null || groupadd \(group)")
        for (user, inGroup) in [(producer, true), (secondProducer, true), (thirdProducer, true), (host, true), (outsider, false)] {
            let groups = inGroup ? "--groups \(group) " : ""
            made = made && shell("id \(user) > /dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin --gid nogroup \(groups)\(user)")
        }
        return made
    }()

    /// The tools, copied once to a folder every user can reach, whatever the checkout's permissions.
    static let tools: String = {
        let folder = NSTemporaryDirectory() + "/sharequeue-user-tools-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        for tool in ["share-append", "host-drain"] {
            try? copyExecutable(Executables.path(tool), to: folder + "/" + tool)
        }
        return folder
    }()

    /// Checks that the users are there, recording why not.
    static func require() -> Bool {
        if ready { return true }
        Issue.record("could not create the test users (\(skipReason))")
        return false
    }

    static func uid(_ user: String) -> uid_t { getpwnam(user)!.pointee.pw_uid }
    static func gid(_ group: String) -> gid_t { getgrnam(group)!.pointee.gr_gid }

    /// Runs one of the tools as `user` (root when nil), with its groups and the
    /// umask given, so that nothing the files get comes from the test's own settings.
    static func run(as user: String?, _ tool: String, _ arguments: [String], umask: String = "077",
                    environment: [String: String] = [:], stdin: String? = nil, in scratch: TemporaryDirectory) throws -> ProcessResult {
        let settings = environment.isEmpty ? [] : ["/usr/bin/env"] + environment.map { "\($0.key)=\($0.value)" }
        let program = settings + [tools + "/" + tool] + arguments
        let shell = ["/bin/sh", "-c", "umask \(umask); exec \"$@\"", "sh"] + program
        guard let user else { return try ShareQueueTests.run(shell[0], Array(shell.dropFirst()), stdin: stdin, in: scratch) }
        return try ShareQueueTests.run("/usr/bin/setpriv", ["--reuid=\(user)", "--regid=nogroup", "--init-groups"] + shell, stdin: stdin, in: scratch)
    }

    /// A setgid directory of the group, mode 2770, owned by the host, in `scratch` (made searchable by all): a queue shared on purpose.
    static func sharedQueue(in scratch: TemporaryDirectory) throws -> String {
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.path)
        let queue = scratch.file("queue")
        try FileManager.default.createDirectory(atPath: queue, withIntermediateDirectories: false)
        chown(queue, host, group)
        #expect(chmod(queue, 0o2770) == 0)
        return queue
    }

    /// Runs a shell command as `user`, with the groups that user has: what a member can do to a queue by hand.
    static func shell(as user: String, _ command: String, in scratch: TemporaryDirectory) throws -> ProcessResult {
        try ShareQueueTests.run("/usr/bin/setpriv", ["--reuid=\(user)", "--regid=nogroup", "--init-groups", "/bin/sh", "-c", command], in: scratch)
    }

    /// Gives `path` (itself, not what a symlink there leads to) to `user` and `group`.
    static func chown(_ path: String, _ user: String, _ group: String? = nil) {
        _ = lchown(path, uid(user), group.map(gid) ?? gid_t.max)
    }

    private static func shell(_ command: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
