import Foundation
import Testing
import ShareQueueCore

/// A kernel without `renameat2`, or a file system without `RENAME_NOREPLACE`
/// (made so with `SHARE_QUEUE_FAULT`): every rename that must not replace a
/// file links and unlinks instead, through the real tools, and nothing is lost.
@Suite("Renames without renameat2", .runTimeLimit(minutes: 2))
struct RenameFallbackTests {
    /// The call that renames without replacing, as `SHARE_QUEUE_FAULT` names it.
    static var exclusiveRename: String {
        #if canImport(Darwin)
        "renameatx_np"
        #else
        "renameat2"
        #endif
    }

    @Test("Appends, seals, a foreign segment name moved aside and a requeue of damaged dead letters all work, each record delivered once",
          arguments: ["ENOSYS", "EINVAL"])
    func linkingInstead(errno: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let fault = ["SHARE_QUEUE_FAULT": "\(Self.exclusiveRename):\(errno)"]
        var appended: [String] = []
        for i in 1...3 {
            let append = try queue.append(["record \(i)"], environment: fault)
            #expect(append.status == 0, "\(append.stderr)")
            appended += append.lines
        }
        // A name that looks like a segment but is not the queue's: moved aside, unread.
        let foreign = Data("not the queue's segment\n".utf8)
        try foreign.write(to: URL(fileURLWithPath: queue.file("sealed-7.log")))

        // Sealing renames the pending file to a segment.
        let drain = try queue.drain([], environment: fault)
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
        let aside = queue.names().filter { $0.hasPrefix("rejected-") && $0.hasSuffix("-sealed-7.log") }
        #expect(aside.count == 1, "\(queue.names())")
        #expect(queue.bytes(aside.first ?? "") == foreign)
        #expect(!queue.names().contains("sealed-7.log"))
        #expect(!queue.names().contains { $0.hasPrefix("sealed-") }, "a segment kept a second name: \(queue.names())")

        // A dead letter, and a line that is not one: the requeue moves the file aside once it has put the letter back.
        let refused = try queue.append(["refused"], environment: fault).lines
        #expect(try queue.drain(["--max-attempts", "1", "--exec", "exit 4"], environment: fault).status == 0)
        try queue.plant(Array("not a dead letter\n".utf8), after: "dead-letters.log")
        let requeue = try queue.drain(["--requeue-dead"], environment: fault)
        #expect(requeue.status == 0, "\(requeue.stderr)")
        let damaged = queue.names().filter { $0.hasPrefix("rejected-") && $0.contains("dead-letters") }
        #expect(damaged.count == 1, "\(queue.names())")
        #expect(requeue.warned(.damagedRequeueMovedAside(path: queue.file("dead-letters.requeue"), damagedLines: 1, movedTo: queue.file(damaged.first ?? ""))),
                "\(requeue.stderr)")
        #expect(String(decoding: queue.bytes(damaged.first ?? ""), as: UTF8.self).contains("not a dead letter"))

        let last = try queue.drain([], environment: fault)
        #expect(last.status == 0, "\(last.stderr)")
        #expect(try ids(in: last.stdout) == refused)
        #expect(try ids(in: queue.drain().stdout).isEmpty)
    }

    @Test("The fault reaches the call: another error from it stops the seal with 74, and a drain without it delivers every record once")
    func otherErrorsStop() throws {
        let queue = TestQueue()
        let appended = try queue.appendLines(["one", "two"])
        let failed = try queue.drain([], environment: ["SHARE_QUEUE_FAULT": "\(Self.exclusiveRename):EIO"])
        #expect(failed.status == 74, "\(failed.stderr)")
        #expect(failed.stderr.contains("cannot seal the pending file"), "\(failed.stderr)")
        #expect(failed.stdout.isEmpty)
        let drain = try queue.drain()
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try ids(in: drain.stdout) == appended)
    }
}
