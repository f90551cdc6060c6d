import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Runs `share-append`, `host-drain` and this tool's own producer as child
/// processes, from the directory the tools were built into.
struct ToolRunner: Sendable {
    let binDirectory: String

    struct Outcome {
        let status: Int32
        let output: [UInt8]
        var wasKilled: Bool { status == 128 + 9 }
    }

    func path(_ tool: String) -> String { binDirectory + "/" + tool }

    /// Runs a tool to its end, collecting its standard output. `started` gets
    /// the pid as soon as the child runs (for a killer), `finished` before it is reaped.
    /// With `holdingStops`, a SIGTERM sent before the tool is ready waits for it (see `Host.spawn`).
    func run(_ tool: String, _ arguments: [String], input: [UInt8]? = nil, environment: [String: String] = [:],
             holdingStops: Bool = false, started: (Int32) -> Void = { _ in }, finished: (Int32) -> Void = { _ in }) throws -> Outcome {
        try Self.run(program: path(tool), arguments, input: input, environment: environment, holdingStops: holdingStops,
                     started: started, finished: finished)
    }

    /// Runs any program, by its path, as `run` runs a tool.
    static func run(program: String, _ arguments: [String], input: [UInt8]? = nil, environment: [String: String] = [:],
                    holdingStops: Bool = false, started: (Int32) -> Void = { _ in }, finished: (Int32) -> Void = { _ in }) throws -> Outcome {
        let child = try Host.spawn(program, arguments, environment: environment, pipeInput: input != nil, pipeOutput: true,
                                   silenceErrors: true, holdingStops: holdingStops)
        started(child.pid)
        if let input, let pipe = child.input {
            // The tools read all their input before they print, so this cannot deadlock.
            try? pipe.writeAll(input)
            pipe.close()
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let pipe = child.output!
        while true {
            let n = (try? pipe.read(into: &chunk, from: 0)) ?? 0
            if n == 0 { break }
            output += chunk[0..<n]
        }
        pipe.close()
        finished(child.pid)
        return Outcome(status: try Host.waitForExit(child.pid), output: output)
    }
}
