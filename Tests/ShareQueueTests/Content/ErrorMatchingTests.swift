import Foundation
import Testing
import ShareQueue

/// What each failure says, provoked through the library and matched as an app matches it
/// (`catch ShareQueueError.queueFull`), with only `import ShareQueue`; and an app's own
/// handler error, which every drain rethrows as it is, its batch kept queued.
@Suite("Error codes")
struct ErrorMatchingTests {
    let queue = TestQueue()

    struct StoreOffline: Error, Equatable { let attempt: Int }

    /// A sink of the app's own, which throws its own error.
    struct FailingSink: DrainSink, Sendable {
        var failsPosition = false
        mutating func deliver(_ batch: DrainBatch) throws { throw StoreOffline(attempt: 1) }
        func deliveredPosition() throws -> DrainPosition? {
            if failsPosition { throw StoreOffline(attempt: 2) }
            return nil
        }
    }

    func appendLinks(_ count: Int) throws -> QueueDirectory {
        let directory = try QueueDirectory(path: queue.path)
        let appender = try QueueAppender(directory: directory)
        for index in 1...count { try appender.append(PlainLink(url: URL(string: "https://x/\(index)")!, title: "\(index)"), source: "s") }
        return directory
    }

    /// The code of what `body` throws, or nil if it throws nothing or no `ShareQueueError`.
    static func code(_ body: () throws -> Void) -> ShareQueueError.Code? {
        do { try body() } catch let error as ShareQueueError { return error.code } catch { return nil }
        return nil
    }

    @Test("An append that waits out the producers' lock another process holds throws .busy, saying how long it waited")
    func busy() throws {
        let holder = try StoppedLockHolderTests.stoppedTool("share-append", at: "append-locked", ["--dir", queue.path, "held"], in: queue.scratch)
        defer { holder.kill(); _ = holder.wait() }
        var options = AppendOptions()
        options.lockTimeoutSeconds = 0.2
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path), options: options)
        var matched = false
        do {
            try appender.append(RecordDraft(.text("waits"), source: "s"))
            Issue.record("appended while another process held the lock")
        } catch ShareQueueError.queueFull {
            Issue.record("a held lock is no full queue")
        } catch ShareQueueError.busy {
            matched = true
        } catch {
            Issue.record("not matched: \(error)")
        }
        #expect(matched)
        let error = #expect(throws: ShareQueueError.self) { try appender.append(RecordDraft(.text("waits"), source: "s")) }
        #expect(error?.waited == .milliseconds(200))
        // The first half of the producers' lock it meets is the queue directory's (Format.md §9.1).
        #expect(error?.path == queue.path, "\(String(describing: error))")
        #expect(error?.message.contains("producers' lock") == true, "\(String(describing: error))")
    }

    @Test("An append past maxPendingBytes throws .queueFull, not .busy, and appends nothing")
    func queueFull() throws {
        var options = AppendOptions()
        options.maxPendingBytes = 400
        options.synchronize = false
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path), options: options)
        var appended = 0
        var stop: (any Error)? = nil
        while stop == nil && appended < 100 {
            do {
                try appender.append(RecordDraft(.text("a record of some length"), source: "s"))
                appended += 1
            } catch {
                stop = error
            }
        }
        let code: ShareQueueError.Code? = (stop as? ShareQueueError)?.code
        #expect(code != ShareQueueError.busy, "a full queue is no held lock")
        let full = code == ShareQueueError.queueFull
        #expect(full && appended > 0)
        #expect(try QueueInspector(directory: try QueueDirectory(path: queue.path)).status().pending == appended)
    }

    @Test("A typed drain rethrows its handler's own error as it is, caught by its type, and keeps the batch queued")
    func typedHandlerError() throws {
        let directory = try appendLinks(2)
        let drainer = try QueueDrainer(directory: directory)
        var caught: StoreOffline? = nil
        do {
            try drainer.drain(PlainLink.self) { _ in throw StoreOffline(attempt: 3) }
        } catch ShareQueueError.handlerFailed {
            Issue.record("the handler's error came back wrapped")
        } catch let error as StoreOffline {
            caught = error
        } catch {
            Issue.record("not matched: \(error)")
        }
        #expect(caught == StoreOffline(attempt: 3))
        var delivered: [PlainLink] = []
        try drainer.drain(PlainLink.self) { delivered += $0.map(\.value) }
        #expect(delivered.map(\.title) == ["1", "2"])
    }

    @Test("Every drain rethrows the app's own error as it is and keeps the batch queued: into a sink, its position, a router, each async form with a sync or async body or handler, and a loop over batches")
    func everyDrainRethrows() async throws {
        let directory = try appendLinks(1)
        let drainer = try QueueDrainer(directory: directory)
        var sink = FailingSink()
        #expect(throws: StoreOffline(attempt: 1)) { try drainer.drain(into: &sink) }
        var position = FailingSink(failsPosition: true)
        #expect(throws: StoreOffline(attempt: 2)) { try drainer.drain(into: &position) }
        var router = ContentRouter()
        router.on(PlainLink.self) { _ in throw StoreOffline(attempt: 4) }
        #expect(throws: StoreOffline(attempt: 4)) { try drainer.drain(into: &router) }
        await #expect(throws: StoreOffline(attempt: 1)) { try await drainer.drain(into: &sink) }
        await #expect(throws: StoreOffline(attempt: 4)) { try await drainer.drain(into: &router) }
        await #expect(throws: StoreOffline(attempt: 5)) {
            try await drainer.drain(PlainLink.self) { _ in throw StoreOffline(attempt: 5) }
        }
        await #expect(throws: StoreOffline(attempt: 7)) {
            try await drainer.drain(PlainLink.self) { _ in
                await Task.yield()
                throw StoreOffline(attempt: 7)
            }
        }
        var asyncRouter = ContentRouter()
        asyncRouter.on(PlainLink.self) { _ in
            await Task.yield()
            throw StoreOffline(attempt: 8)
        }
        await #expect(throws: StoreOffline(attempt: 8)) { try await drainer.drain(into: &asyncRouter) }
        await #expect(throws: StoreOffline(attempt: 9)) {
            for try await _ in drainer.batches(of: PlainLink.self) { throw StoreOffline(attempt: 9) }
        }
        // Nothing was taken: the record is there still, and no dead letter was made.
        let status = try QueueInspector(directory: directory).status()
        #expect(status.pending == 1 && status.deadLetters == 0)
    }

    @Test("A visitor's own error comes back in .handlerFailed, as it was thrown")
    func visitorError() throws {
        let directory = try appendLinks(1)
        do {
            try QueueInspector(directory: directory).forEachPending { _ in throw StoreOffline(attempt: 6) }
            Issue.record("the visitor's error was lost")
        } catch ShareQueueError.handlerFailed {
            // Matched; the error is checked below.
        } catch {
            Issue.record("not matched: \(error)")
        }
        let error = #expect(throws: ShareQueueError.self) {
            try QueueInspector(directory: directory).forEachPending { _ in throw StoreOffline(attempt: 6) }
        }
        #expect(error?.underlying as? StoreOffline == StoreOffline(attempt: 6))
    }

    @Test("Records a sink refuses under maxAttempts stay queued with .sinkRefused, the others delivered")
    func sinkRefused() throws {
        struct RefusesFirst: DrainSink {
            var delivered: [String] = []
            var refused: String? = nil
            mutating func deliver(_ batch: DrainBatch) throws {
                if refused == nil, let first = batch.records.first {
                    refused = first.id
                    throw RecordRefusal(id: first.id, reason: "not now")
                }
                delivered += batch.records.map(\.id).filter { $0 != refused }
            }
        }
        let directory = try appendLinks(3)
        var sink = RefusesFirst()
        var matched = false
        do { _ = try QueueDrainer(directory: directory).drain(into: &sink) } catch ShareQueueError.sinkRefused { matched = true } catch {
            Issue.record("not matched: \(error)")
        }
        #expect(matched)
        #expect(sink.delivered.count == 2)
    }

    @Test("A queue in a newer format is .configuration, a format marker no version wrote .damaged; both left untouched")
    func configurationAndDamage() throws {
        _ = try QueueDirectory(path: queue.path)
        let marker = queue.file("format")
        let cases: [(String, ShareQueueError.Code)] = [("ShareQueue queue format 2\n", .configuration), ("not a marker\n", .damaged)]
        for (text, expected) in cases {
            try Data(text.utf8).write(to: URL(fileURLWithPath: marker))
            let code: ShareQueueError.Code? = Self.code { _ = try QueueDirectory(path: queue.path) }
            #expect(code == expected)
            #expect(String(decoding: FileManager.default.contents(atPath: marker) ?? Data(), as: UTF8.self) == text)
        }
    }

    @Test("A bad argument, bad data, nothing to append and a directory that cannot be made each have their code")
    func inputCodes() throws {
        let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
        let emptySource: ShareQueueError.Code? = Self.code { try appender.append(RecordDraft(.text("x"), source: "")) }
        #expect(emptySource == .invalidArgument)
        let notURL: ShareQueueError.Code? = Self.code { try appender.append(RecordDraft(.url("not a url"), source: "s")) }
        #expect(notURL == .badData)
        let nothing: ShareQueueError.Code? = Self.code { try appender.append([RecordDraft]()) }
        #expect(nothing == .noInput)
        let file = queue.scratch.file("a-file")
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        let underFile: ShareQueueError.Code? = Self.code { _ = try QueueDirectory(path: file + "/queue") }
        #expect(underFile == .cannotCreate)
    }

    @Test("Access the system refuses is .permissionDenied")
    func permissionDenied() async {
        await #expect(processExitsWith: .success) {
            let scratch = TemporaryDirectory()
            let closed = scratch.file("closed")
            try FileManager.default.createDirectory(atPath: closed, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            // Root may go anywhere: this process acts as nobody first, as no app is root, and is root
            // again afterwards to clean up.
            let asRoot = geteuid() == 0
            if asRoot {
                guard setegid(65534) == 0, seteuid(65534) == 0 else { exit(3) }
            } else {
                chmod(closed, 0)
            }
            let code: ShareQueueError.Code? = ErrorMatchingTests.code { _ = try QueueDirectory(path: closed + "/queue") }
            if asRoot { _ = seteuid(0); _ = setegid(0) } else { chmod(closed, 0o700) }
            exit(code == ShareQueueError.permissionDenied ? 0 : 2)
        }
    }

    @Test("A write the disk fails is .ioError; a descriptor shortage .resourceShortage; a name taken meanwhile .nameTaken")
    func systemFailures() async {
        await #expect(processExitsWith: .success) {
            setenv("SHARE_QUEUE_FAULT", "write:EIO:name=pending.log", 1)
            let queue = TestQueue()
            let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
            let code: ShareQueueError.Code? = ErrorMatchingTests.code { try appender.append(RecordDraft(.text("x"), source: "s")) }
            exit(code == ShareQueueError.ioError ? 0 : 2)
        }
        await #expect(processExitsWith: .success) {
            setenv("SHARE_QUEUE_FAULT", "openat:EMFILE:name=pending.log", 1)
            let queue = TestQueue()
            let appender = try QueueAppender(directory: try QueueDirectory(path: queue.path))
            let code: ShareQueueError.Code? = ErrorMatchingTests.code { try appender.append(RecordDraft(.text("x"), source: "s")) }
            exit(code == ShareQueueError.resourceShortage ? 0 : 2)
        }
        await #expect(processExitsWith: .success) {
            // Another process's file at the next segment's name, as the drain seals the pending one.
            setenv("SHARE_QUEUE_FAULT", "renameat2:EEXIST:name=pending.log", 1)
            let queue = TestQueue()
            let directory = try QueueDirectory(path: queue.path)
            try QueueAppender(directory: directory).append(RecordDraft(.text("x"), source: "s"))
            var sink = FailingSink()
            let code: ShareQueueError.Code? = ErrorMatchingTests.code { try QueueDrainer(directory: directory).drain(into: &sink) }
            exit(code == ShareQueueError.nameTaken ? 0 : 2)
        }
    }

    @Test("The pattern works on an untyped error too, and matches nothing else")
    func untyped() {
        let error: any Error = ShareQueueError(.badData, "bad")
        var code = ""
        switch error {
        case ShareQueueError.busy: code = "busy"
        case ShareQueueError.badData: code = "badData"
        default: code = "other"
        }
        #expect(code == "badData")
        #expect(!(ShareQueueError.badData ~= (StoreOffline(attempt: 0) as any Error)))
        #expect(ShareQueueError.queueFull != ShareQueueError.busy)
        #expect("\(ShareQueueError.queueFull)" == "queueFull")
    }
}
