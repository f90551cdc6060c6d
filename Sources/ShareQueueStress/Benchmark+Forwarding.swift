import Foundation
import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Forwarding to NATS JetStream through the sample forwarder (`Samples/Forwarders/NATS`),
/// against its floor: the same payloads published by the C client alone
/// (`Floor/publish-floor.c`, built with the C compiler and linked with libnats), into a
/// local `nats-server -js` started for the run.
extension Benchmark {
    /// host-drain's `--batch` defaults with `--exec`, a process a batch and `--long-running`.
    static let execBatch = 1000
    static let longRunningBatch = 5000

    /// The sample package, beside this file in the checkout.
    static let forwarderPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Samples/Forwarders/NATS").standardized.path

    func forwarding() throws -> [Figure] {
        guard let server = CFloor.executable(named: "nats-server"), FileManager.default.fileExists(atPath: "/usr/include/nats/nats.h") else {
            progress("forwarding: skipped, nats-server or libnats is missing (apt-get install nats-server libnats-dev)")
            return []
        }
        let bin = try forwarderPrograms()
        let floor = try CFloor.buildForwardingFloor(into: directory)
        progress("forwarding: the NATS floor: \(floor.description)")
        let nats = try NATSBenchServer(server, folder: scratch("nats"))
        defer { nats.stop() }

        let records = sizes.forwardedRecords
        let source = try freshQueue("forward-source")
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: source, options: options)
        // About 170 bytes stored, as bench.sh's lines: a shared link.
        for start in stride(from: 0, to: records, by: 1000) {
            _ = try appender.append((start..<min(records, start + 1000)).map {
                RecordDraft(.text("shared link \($0) https://example.com/articles/\($0)?ref=share"), source: "bench")
            })
        }
        let payloads = scratch("forward-payloads")
        let peek = try tools.run("host-drain", ["--dir", source.path, "--peek"])
        guard peek.status == 0 else { throw ShareQueueError(.ioError, "host-drain --peek exited with \(peek.status)") }
        try Data(peek.output).write(to: URL(fileURLWithPath: payloads))

        // Five rounds, each the floor then both modes, into fresh streams; each figure is the
        // round whose ratio is the median. Three moved by half either way on a busy machine.
        var longRunning: [(value: Double, floor: Double)] = [], perBatch: [(value: Double, floor: Double)] = []
        for round in 0..<5 {
            func stream(_ name: String) throws -> String {
                let subject = "\(name).\(round)"
                let made = try ToolRunner.run(program: bin + "/forward-nats", ["--server", nats.url, "--subject", subject,
                                                                              "--create-stream", "\(name.uppercased())\(round)"], input: [])
                guard made.status == 0 else { throw ShareQueueError(.ioError, "forward-nats --create-stream exited with \(made.status)") }
                return subject
            }
            let floorSubject = try stream("floor"), longSubject = try stream("long"), batchSubject = try stream("batch")
            let start = Host.monotonicSeconds()
            let published = try ToolRunner.run(program: floor.program, [nats.url, floorSubject, payloads])
            guard published.status == 0 else { throw ShareQueueError(.ioError, "the NATS floor exited with \(published.status)") }
            let floorRate = Double(records) / (Host.monotonicSeconds() - start)
            let forwarder = "'\(bin)/forward-nats' --server \(nats.url) --subject "
            let longRate = try forwardRate(source, as: "forward-long", ["--long-running", "--exec", forwarder + longSubject])
            let batchRate = try forwardRate(source, as: "forward-batch", ["--exec", forwarder + batchSubject])
            for (subject, stream) in [(floorSubject, "FLOOR"), (longSubject, "LONG"), (batchSubject, "BATCH")] {
                let count = try ToolRunner.run(program: bin + "/nats-stream-dump", ["--server", nats.url, "--stream", "\(stream)\(round)", "--count"])
                let held = String(decoding: count.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard count.status == 0, held == String(records) else {
                    throw ShareQueueError(.ioError, "the stream of \(subject) holds \(held) messages, not \(records)")
                }
            }
            longRunning.append((longRate, floorRate))
            perBatch.append((batchRate, floorRate))
        }
        let long = medianPair(longRunning), batch = medianPair(perBatch)
        return [
            Figure(name: "NATS, --long-running, --batch \(Self.longRunningBatch) (vs C client)", unit: "records/s",
                   value: long.value, floor: long.floor, target: ">= 0.9"),
            Figure(name: "NATS, a process a batch, --batch \(Self.execBatch) (vs C client)", unit: "records/s",
                   value: batch.value, floor: batch.floor, target: "-"),
        ]
    }

    /// Records per second of host-drain forwarding a copy of `source` with `arguments`, at its default batch.
    private func forwardRate(_ source: QueueDirectory, as name: String, _ arguments: [String]) throws -> Double {
        let queue = try copyQueue(source.path, as: name)
        let seconds = try timed("host-drain", ["--dir", queue, "-q"] + arguments)
        return Double(sizes.forwardedRecords) / seconds
    }

    /// The sample's release programs, built now unless they are there.
    private func forwarderPrograms() throws -> String {
        let bin = Self.forwarderPackage + "/.build/release"
        if FileManager.default.isExecutableFile(atPath: bin + "/forward-nats") && FileManager.default.isExecutableFile(atPath: bin + "/nats-stream-dump") {
            return bin
        }
        progress("forwarding: building the NATS sample (swift build -c release --package-path \(Self.forwarderPackage))")
        guard let swift = CFloor.executable(named: "swift") else { throw ShareQueueError(.configuration, "no swift to build the NATS sample with") }
        let built = try ToolRunner.run(program: swift, ["build", "-c", "release", "--package-path", Self.forwarderPackage])
        guard built.status == 0 else {
            throw ShareQueueError(.ioError, "the NATS sample did not build: run swift build -c release --package-path \(Self.forwarderPackage)")
        }
        return bin
    }
}

/// A `nats-server -js` on 127.0.0.1, on a port it chooses, keeping its streams in a folder of the run's.
private struct NATSBenchServer {
    let pid: Int32
    let url: String

    init(_ program: String, folder: String) throws {
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let child = try Host.spawn(program, ["-js", "-a", "127.0.0.1", "-p", "-1", "-sd", folder + "/store", "--ports_file_dir", folder],
                                   silenceErrors: true)
        pid = child.pid
        // The server writes its ports file once it listens.
        let deadline = Host.monotonicSeconds() + 30
        var address: String? = nil
        while address == nil {
            if let name = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.first(where: { $0.hasSuffix(".ports") }),
               let data = FileManager.default.contents(atPath: folder + "/" + name),
               let ports = try? JSONSerialization.jsonObject(with: data) as? [String: [String]] {
                address = ports["nats"]?.first
            }
            if address == nil {
                guard Host.monotonicSeconds() < deadline else {
                    Host.kill(pid)
                    _ = try? Host.waitForExit(pid)
                    throw ShareQueueError(.ioError, "nats-server did not listen within 30 s")
                }
                Host.sleep(milliseconds: 10)
            }
        }
        url = address!
    }

    func stop() {
        Host.kill(pid)
        _ = try? Host.waitForExit(pid)
    }
}
