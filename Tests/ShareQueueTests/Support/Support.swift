import Foundation
import Testing

/// A fresh directory for one test, removed when the test is done with it.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/sharequeue-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    /// A queue directory inside this one that does not exist yet.
    var queue: String { path + "/queue" }
}

/// What a finished process left.
struct ProcessResult {
    let status: Int32
    let stdout: Data
    let stderr: String

    var output: String { String(decoding: stdout, as: UTF8.self) }
    var lines: [String] { output.split(separator: "\n").map(String.init) }
}

/// Finds the package's executables beside the test bundle.
enum Executables {
    static let directory: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // On macOS the tests run inside an .xctest bundle.
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("share-append").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        if !FileManager.default.fileExists(atPath: dir.appendingPathComponent("share-append").path) {
            dir = Bundle.main.bundleURL.deletingLastPathComponent()
        }
        return dir
    }()

    /// The release build beside the tests' own (`.build/release`), which CI builds before the tests: its tools are static executables.
    static let releaseDirectory = directory.deletingLastPathComponent().appendingPathComponent("release")

    /// Runs a test of the released tools where they are built, and always in CI;
    /// never under a sanitizer, whose build has its own scratch folder with no release
    /// build beside it, and whose runtime the release tools would not hold anyway.
    static let needsRelease = ConditionTrait.enabled(
        if: Sanitizer.current == nil && (OptionalProgram.isCI || FileManager.default.fileExists(atPath: releaseDirectory.appendingPathComponent("host-drain").path)),
        Comment(rawValue: Sanitizer.current == nil ? "no release build: swift build -c release"
                    : "the release tools hold no sanitizer; the run without one tests them"))

    /// One of the package's tools by name, or any program by its absolute path.
    static func path(_ name: String) -> String { name.hasPrefix("/") ? name : directory.appendingPathComponent(name).path }
}

/// A running tool, started with standard output and error going to files so
/// that nothing blocks on a full pipe.
final class RunningTool {
    let process = Process()
    private let outPath: String
    private let errPath: String

    init(_ tool: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
         in scratch: TemporaryDirectory, outputFile: String? = nil) throws {
        let id = UUID().uuidString
        outPath = outputFile ?? scratch.file("out-\(id)")
        errPath = scratch.file("err-\(id)")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: Executables.path(tool))
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "SHARE_QUEUE_DIR")
        env.merge(environment) { $1 }
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        if let stdin {
            let inPath = scratch.file("in-\(id)")
            _ = FileManager.default.createFile(atPath: inPath, contents: stdin)
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    func kill() { Foundation.kill(process.processIdentifier, SIGKILL) }

    func wait() -> ProcessResult {
        process.waitUntilExit()
        let stdout = FileManager.default.contents(atPath: outPath) ?? Data()
        let stderr = String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return ProcessResult(status: status, stdout: stdout, stderr: stderr)
    }
}

/// Runs a tool to completion.
@discardableResult
func run(_ tool: String, _ arguments: [String], stdin: String? = nil, stdinData: Data? = nil,
         environment: [String: String] = [:], in scratch: TemporaryDirectory) throws -> ProcessResult {
    try RunningTool(tool, arguments, stdin: stdinData ?? stdin.map { Data($0.utf8) }, environment: environment, in: scratch).wait()
}

/// Copies an executable with cp(1), in a process of its own. Copied here, the
/// copy's descriptor, open for writing, is inherited by any child another test
/// starts meanwhile, and until that child exits, running the copy fails with
/// ETXTBSY ("Text file busy").
func copyExecutable(_ path: String, to copy: String) throws {
    let scratch = TemporaryDirectory()
    let copied = try run("/bin/cp", [path, copy], in: scratch)
    guard copied.status == 0 else { throw CopyFailed(description: "cp \(path) \(copy): \(copied.stderr)") }
}

struct CopyFailed: Error, CustomStringConvertible {
    let description: String
}

/// Waits until `condition` holds, checking every 10 ms, failing after `seconds`.
func waitUntil(_ what: String, seconds: Double = 30, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        if Date() > deadline { throw WaitTimeout(what: what) }
        usleep(10_000)
    }
}

struct WaitTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Every file in a directory with its bytes, to show that something changed nothing.
func snapshot(_ path: String) -> [String: Data] {
    var files: [String: Data] = [:]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
        files[name] = FileManager.default.contents(atPath: path + "/" + name) ?? Data()
    }
    return files
}

/// The `id` of every JSON line.
func ids(in jsonLines: Data) throws -> [String] {
    try String(decoding: jsonLines, as: UTF8.self).split(separator: "\n").map { line in
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
        return object["id"] as! String
    }
}

func jsonObjects(_ jsonLines: Data) throws -> [[String: Any]] {
    try String(decoding: jsonLines, as: UTF8.self).split(separator: "\n").map { line in
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
    }
}

/// Runs a query with the `sqlite3` command-line tool and returns its output lines.
func sqlite(_ database: String, _ query: String) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [database, query]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// Appends `count` numbered records through share-append, one process each, and returns their ids.
func appendEach(_ count: Int, prefix: String, queue: String, in scratch: TemporaryDirectory, extra: [String] = []) throws -> [String] {
    try (1...count).flatMap { i in try run("share-append", ["--dir", queue] + extra + ["\(prefix) \(i)"], in: scratch).lines }
}
