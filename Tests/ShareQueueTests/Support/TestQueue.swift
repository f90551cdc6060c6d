import Foundation
import Testing
@testable import ShareQueueCore

/// A queue directory for one test, with the ways tests fill it, damage it and
/// read it: through the tools, as a user runs them, or through the library.
final class TestQueue {
    /// The test's temporary directory: the queue, and every other file the test makes.
    let scratch: TemporaryDirectory
    let path: String

    /// A queue that does not exist yet, at `name` in `scratch`.
    init(in scratch: TemporaryDirectory = TemporaryDirectory(), name: String = "queue") {
        self.scratch = scratch
        path = scratch.file(name)
    }

    /// A queue that does not exist yet, at any path (on a small file system, say).
    init(at path: String, in scratch: TemporaryDirectory) {
        self.scratch = scratch
        self.path = path
    }

    /// A file inside the queue directory.
    func file(_ name: String) -> String { path + "/" + name }

    var pendingPath: String { file("pending.log") }

    /// The name of every file in the queue directory.
    func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] }

    // MARK: Appending

    /// Runs share-append on this queue.
    @discardableResult
    func append(_ arguments: [String], stdin: String? = nil, stdinData: Data? = nil,
                environment: [String: String] = [:]) throws -> ProcessResult {
        try run("share-append", ["--dir", path] + arguments, stdin: stdin, stdinData: stdinData, environment: environment, in: scratch)
    }

    /// Appends `lines` as one batch with `share-append --lines`; returns their ids.
    @discardableResult
    func appendLines(_ lines: [String], _ arguments: [String] = []) throws -> [String] {
        try append(["--lines"] + arguments, stdin: lines.joined(separator: "\n") + "\n").lines
    }

    /// Appends one record through share-append; returns its ids.
    @discardableResult
    func append(text: String) throws -> [String] { try append([text]).lines }

    /// Appends records through the library in one batch, without syncing (as
    /// `synchronize` says); returns their ids.
    @discardableResult
    func appendThroughLibrary(_ drafts: [RecordDraft], synchronize: Bool = false) throws -> [String] {
        var options = AppendOptions()
        options.synchronize = synchronize
        return try QueueAppender(directory: try QueueDirectory(path: path), options: options).append(drafts)
    }

    /// Stores payloads as a foreign producer would: framed straight into the queue, unchecked.
    func appendStored(_ payloads: [[UInt8]]) throws {
        try QueueAppender(directory: try QueueDirectory(path: path)).appendStored(payloads)
    }

    /// Stores a text record with any id, as a foreign producer would.
    func plantRecord(id: String, text: String) throws {
        try appendStored([Record.encode(id: id, date: "2026-01-02T03:04:05.678Z", source: "foreign", kind: .text,
                                        text: text, jsonBytes: nil, key: nil, meta: nil)])
    }

    /// Adds `bytes` at the end of a file of the queue, as a writer that died or a hostile one would.
    func plant(_ bytes: [UInt8], after name: String = "pending.log") throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file(name)))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }

    /// The bytes of a file of the queue (empty if there is none).
    func bytes(_ name: String = "pending.log") -> Data { FileManager.default.contents(atPath: file(name)) ?? Data() }

    // MARK: Draining

    /// Runs host-drain on this queue.
    @discardableResult
    func drain(_ arguments: [String] = [], environment: [String: String] = [:]) throws -> ProcessResult {
        try run("host-drain", ["--dir", path] + arguments, environment: environment, in: scratch)
    }

    /// What `host-drain --status --json` reports (with `arguments` before those).
    func status(_ arguments: [String] = []) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: try drain(arguments + ["--status", "--json"]).stdout) as? [String: Any])
    }

    /// The quarantine file's entries, in order.
    func quarantine() throws -> [[String: Any]] { try jsonObjects(bytes("quarantine.log")) }

    /// The dead letters' entries, in order.
    func deadLetters() throws -> [[String: Any]] { try jsonObjects(bytes("dead-letters.log")) }

    /// Runs host-drain on this queue, measuring its time and peak memory (see `measuredRun`).
    func measuredDrain(_ arguments: [String], deadline: Double = 120) throws -> MeasuredRun {
        try measuredRun("host-drain", ["--dir", path] + arguments, deadline: deadline, in: scratch)
    }
}
