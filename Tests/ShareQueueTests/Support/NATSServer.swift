import Foundation
import Testing

/// A `nats-server` with JetStream, listening on 127.0.0.1 only, that keeps its streams in a
/// folder of the test's, so that it can be stopped and started again with what it stored.
final class NATSServer {
    let store: String
    private let scratch: TemporaryDirectory
    private var process: Process?
    /// The port it listens on: chosen by the server the first time, kept across restarts.
    private(set) var port = -1

    var url: String { "nats://127.0.0.1:\(port)" }

    /// Whether this machine has `nats-server` and the C client's headers and library.
    static let isInstalled: Bool = {
        let scratch = TemporaryDirectory()
        let server = try? run("/usr/bin/env", ["sh", "-c", "command -v nats-server"], in: scratch)
        let client = try? run("/usr/bin/env", ["sh", "-c", "[ -e /usr/include/nats/nats.h ] || pkg-config --exists libnats"], in: scratch)
        return server?.status == 0 && client?.status == 0
    }()

    /// Starts a server whose streams live in `scratch`.
    init(in scratch: TemporaryDirectory) throws {
        self.scratch = scratch
        store = scratch.file("jetstream")
        try start()
    }

    deinit { stop() }

    /// Starts the server (again), and returns once it accepts connections.
    func start() throws {
        let portsFolder = scratch.file("ports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: portsFolder, withIntermediateDirectories: false)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["nats-server", "-js", "-a", "127.0.0.1", "-p", "\(port)", "-sd", store, "--ports_file_dir", portsFolder]
        let log = scratch.file("nats-server.log")
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let logHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        logHandle.seekToEndOfFile()
        server.standardOutput = logHandle
        server.standardError = logHandle
        try server.run()
        process = server
        // The server writes its ports file once it listens.
        var address: String? = nil
        try waitUntil("nats-server to listen (log: \(log))") {
            try #require(server.isRunning, "nats-server exited: \(String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self))")
            guard let name = try FileManager.default.contentsOfDirectory(atPath: portsFolder).first,
                  let data = FileManager.default.contents(atPath: portsFolder + "/" + name), !data.isEmpty,
                  let ports = try? JSONSerialization.jsonObject(with: data) as? [String: [String]] else { return false }
            address = ports["nats"]?.first
            return address != nil
        }
        port = Int(address!.split(separator: ":").last!)!
    }

    /// Stops the server as a service manager would (SIGTERM), and waits until it has exited.
    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
