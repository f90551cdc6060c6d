import Foundation
import Testing

/// Tools started with standard input, output or error closed: the first file
/// a tool opens must never become one of them.
@Suite("Closed standard descriptors")
struct StandardDescriptorTests {
    /// Runs a tool through `/bin/sh` with the descriptors `closed` closed, its
    /// other standard descriptors going to files (standard input from /dev/null).
    static func runClosing(_ closed: [Int], _ tool: String, _ arguments: [String], in scratch: TemporaryDirectory) throws -> ProcessResult {
        let id = UUID().uuidString
        let outPath = scratch.file("out-\(id)")
        let errPath = scratch.file("err-\(id)")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let closing = closed.map { "\($0)>&-" }.joined(separator: " ")
        process.arguments = ["-c", "exec \"$0\" \"$@\" \(closing)", Executables.path(tool)] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        try process.run()
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus, stdout: FileManager.default.contents(atPath: outPath) ?? Data(),
                             stderr: String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self))
    }

    /// Whether any file of the queue holds `text`: a message or an id written where it does not belong.
    static func queueFilesContain(_ text: String, _ queue: String) -> Bool {
        snapshot(queue).values.contains { $0.range(of: Data(text.utf8)) != nil }
    }

    static let closedSets: [[Int]] = [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]

    @Test("host-drain never drains into a closed standard output, and never writes messages into the queue", arguments: closedSets)
    func drain(closing closed: [Int]) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let appended = try queue.appendLines(["a", "b"])
        #expect(appended.count == 2)
        let before = snapshot(queue.path)
        let result = try Self.runClosing(closed, "host-drain", ["--dir", queue.path], in: scratch)
        if closed.contains(1) {
            #expect(result.status == 74)
            #expect(snapshot(queue.path) == before, "the queue changed")
            if !closed.contains(2) { #expect(result.stderr.contains("standard output")) }
            let drain = try queue.drain()
            #expect(try ids(in: drain.stdout) == appended)
        } else {
            #expect(result.status == 0)
            #expect(try ids(in: result.stdout) == appended)
        }
        #expect(!Self.queueFilesContain("host-drain", queue.path))
        #expect(!Self.queueFilesContain("delivered", queue.path))
    }

    @Test("share-append refuses before appending when it cannot print the ids; -q needs no standard output", arguments: closedSets)
    func append(closing closed: [Int]) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let result = try Self.runClosing(closed, "share-append", ["--dir", queue.path, "hello"], in: scratch)
        let drain = try queue.drain()
        if closed.contains(1) {
            #expect(result.status == 74)
            if !closed.contains(2) { #expect(result.stderr.contains("standard output")) }
            #expect(drain.stdout.isEmpty, "appended although the ids could not be printed")
        } else {
            #expect(result.status == 0)
            #expect(try ids(in: drain.stdout) == result.lines)
        }
        #expect(drain.status == 0)
        let quiet = try Self.runClosing(closed, "share-append", ["--dir", queue.path, "-q", "quiet"], in: scratch)
        #expect(quiet.status == 0)
        let quietDrain = try queue.drain()
        #expect(try jsonObjects(quietDrain.stdout).map { $0["text"] as? String } == ["quiet"])
        #expect(!Self.queueFilesContain("share-append:", queue.path))
    }

    @Test("share-append reads a closed standard input as empty")
    func closedInput() throws {
        let scratch = TemporaryDirectory()
        let result = try Self.runClosing([0], "share-append", ["--dir", scratch.queue, "--lines"], in: scratch)
        #expect(result.status == 66)
    }

    @Test("share-stress runs with closed standard descriptors", arguments: closedSets)
    func stress(closing closed: [Int]) throws {
        let scratch = TemporaryDirectory()
        let work = scratch.file("stress")
        let result = try Self.runClosing(closed, "share-stress", ["--dir", work, "--producers", "1", "--records", "3"], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: work)) ?? [] {
            let path = work + "/" + name
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                #expect(!Self.queueFilesContain("share-stress", path))
            }
        }
    }
}
