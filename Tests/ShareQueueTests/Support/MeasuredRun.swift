import Foundation
import Testing
import ShareQueueSystem
import ToolSupport

/// What one tool run took, measured from outside it: how it ended, what it
/// printed, its seconds and its peak resident memory in bytes.
struct MeasuredRun {
    let status: Int32
    let stdout: Data
    let stderr: String
    let seconds: Double
    let peakMemory: Int64
}

/// Whether /usr/bin/time is there to measure a child's peak memory.
let hasTimeCommand = FileManager.default.isExecutableFile(atPath: "/usr/bin/time")

/// Runs a tool with standard input from the file `input` (else /dev/null),
/// killing its process group after `deadline` seconds (times ``sanitizerAllowance``).
///
/// The peak comes from /usr/bin/time where there is one: a child spawned
/// straight from this (large) test process inherits this process's peak,
/// since Linux keeps it across exec. Without it, the child's rusage is all there is.
func measuredRun(_ tool: String, _ arguments: [String], input: String? = nil, deadline: Double = 120,
                 in scratch: TemporaryDirectory) throws -> MeasuredRun {
    let id = UUID().uuidString
    let (out, err, memory) = (scratch.file("out-\(id)"), scratch.file("err-\(id)"), scratch.file("memory-\(id)"))
    func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    let timer = hasTimeCommand ? ["/usr/bin/time", "-q", "-o", memory, "-f", "%M"] : []
    let command = (timer + [Executables.path(tool)] + arguments).map(quoted).joined(separator: " ")
    let started = Host.monotonicSeconds()
    let child = try Host.spawn("/bin/sh", ["-c", "exec \(command) < \(quoted(input ?? "/dev/null")) > \(quoted(out)) 2> \(quoted(err))"],
                               environment: sanitizerEnvironment, newProcessGroup: true)
    let finished = Finished()
    DispatchQueue.global().asyncAfter(deadline: .now() + deadline * Double(sanitizerAllowance)) { finished.killUnlessDone(child.pid) }
    var (status, peak) = try Host.waitForExitMeasuringMemory(child.pid)
    finished.markDone()
    let seconds = Host.monotonicSeconds() - started
    if hasTimeCommand {
        // time(1) exits with its command's status and writes the peak in kibibytes, last.
        let kibibytes = String(decoding: FileManager.default.contents(atPath: memory) ?? Data(), as: UTF8.self)
            .split(separator: "\n").last.flatMap { Int64($0) }
        #expect(kibibytes != nil, "no memory figure from /usr/bin/time")
        peak = (kibibytes ?? Int64.max / 1024) * 1024
    }
    return MeasuredRun(status: status, stdout: FileManager.default.contents(atPath: out) ?? Data(),
                       stderr: String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self),
                       seconds: seconds, peakMemory: peak)
}

/// Kills a child at its deadline only if it has not been reaped, so that a reused pid is never hit.
private final class Finished: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func markDone() { lock.withLock { done = true } }
    /// Kills the child's whole process group.
    func killUnlessDone(_ pid: Int32) { lock.withLock { if !done { Foundation.kill(-pid, SIGKILL) } } }
}
