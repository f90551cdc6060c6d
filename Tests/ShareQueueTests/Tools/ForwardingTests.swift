import Foundation
import Testing

/// README's forwarding recipe, run for real: host-drain hands its batches to
/// curl, which posts them to a local HTTP server that fails its first requests
/// and hangs up in the middle of a body. Every record arrives at least once.
@Suite("Forwarding to a server")
struct ForwardingTests {
    /// The folder that holds the test server, beside this package's tests.
    static let servers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Forwarding").path

    @Test("The curl recipe delivers every record through a server that fails and drops connections", OptionalProgram.needs("curl", "python3"))
    func curlThroughAFlakyServer() throws {
        guard let python = OptionalProgram.required("python3"), OptionalProgram.required("curl") != nil else { return }
        let scratch = TemporaryDirectory()
        let portFile = scratch.file("port")
        let bodies = scratch.file("bodies")
        let server = Process()
        server.executableURL = URL(fileURLWithPath: python)
        server.arguments = [Self.servers + "/flaky-http-server.py", portFile, bodies]
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        try waitUntil("the server's port") {
            try #require(server.isRunning, "the test server exited")
            return FileManager.default.fileExists(atPath: portFile)
        }
        let port = try String(contentsOfFile: portFile, encoding: .utf8)

        let appended = try run("share-append", ["--dir", scratch.queue, "--lines"],
                               stdin: (1...40).map { "shared link \($0)" }.joined(separator: "\n"), in: scratch).lines
        #expect(appended.count == 40)
        // The recipe from README, with the server's address.
        let command = "curl --fail -sS -H 'Content-Type: application/x-ndjson' --data-binary @- http://127.0.0.1:\(port)/ || exit 75"
        var runs = 0
        var statuses: [Int32] = []
        while runs < 20 {
            runs += 1
            let drain = try run("host-drain", ["--dir", scratch.queue, "-q", "--batch", "10", "--exec", command], in: scratch)
            statuses.append(drain.status)
            if drain.status == 0 { break }
            #expect(drain.status == 75, "\(drain.stderr)")
        }
        #expect(statuses.last == 0, "statuses \(statuses)")
        // Three failed requests, each a failed run: the queue kept every batch.
        #expect(statuses.filter { $0 == 75 }.count == 3)
        let received = try ids(in: FileManager.default.contents(atPath: bodies) ?? Data())
        #expect(Set(received) == Set(appended))
        #expect(received.count == appended.count)
        #expect(!FileManager.default.fileExists(atPath: scratch.queue + "/dead-letters.log"))
    }
}
