// Shared by every fuzz target. A target is compiled into one module with the
// library's sources (see run.sh), so it reaches internal entry points directly.

import ShareQueueSystem

/// Helpers for one fuzz process: a scratch directory and a way to fail loudly.
enum Fuzz {
    /// A directory of this process's own, under `SHAREQUEUE_FUZZ_DIR` (run.sh
    /// makes one in /dev/shm when it can, so the file I/O per input stays cheap).
    static let scratch: String = {
        let base = Host.environment("SHAREQUEUE_FUZZ_DIR") ?? "/tmp"
        let path = base + "/fuzz-\(Host.processID)"
        do { try FileSystem.makeDirectories(path) } catch { fatalError("cannot make \(path): \(error)") }
        return path
    }()

    /// Puts exactly `bytes` at `path`, replacing whatever was there.
    static func replaceFile(_ path: String, with bytes: [UInt8]) {
        try? FileSystem.removeFile(path)
        do {
            let file = try FileDescriptor.open(path, .writeCreateExclusive)
            try file.closeAfter { () throws(SystemError) in try file.writeAll(bytes) }
        } catch {
            fatalError("cannot write \(path): \(error)")
        }
    }

    /// Stops the run with `message` when an invariant does not hold. The trap
    /// is what libFuzzer reports as a finding, with the input saved beside it.
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("invariant broken: " + message()) }
    }
}
