import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Delivers each batch to a shell command, as JSON Lines on its standard
/// input. Exit status 0 means delivered; 75 (EX_TEMPFAIL) means try again
/// later; any other status is a refusal, which leaves the batch queued and
/// counts against its records.
///
/// The command runs in a process group of its own, with a deadline: past
/// `timeout`, or when this process is asked to stop, the whole group is ended
/// and the batch stays queued without counting as refused.
struct CommandSink: DrainSink {
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    let command: String
    /// Seconds a command may run; nil for no limit.
    let timeout: Double?
    /// The exit status by which a command asks for its batch later, without refusing it.
    static let temporaryFailure: Int32 = 75
    /// How long an ended command gets between SIGTERM and SIGKILL.
    static let grace = 2.0

    /// A non-zero exit is about the records: the drain bisects to find which.
    var failuresAreRefusals: Bool { true }

    /// The command gets the stored JSON.
    var needsRecords: Bool { false }

    mutating func deliver(_ batch: DrainBatch) throws {
        var input: [UInt8] = []
        for record in batch.records { RecordFormat.json.append(record, to: &input) }
        let child: (pid: Int32, input: FileDescriptor)
        do { child = try Host.spawnShell(command) } catch {
            throw ShareQueueError(.tryAgain, "cannot start the command", path: "/bin/sh", underlying: error)
        }
        let deadline = timeout.map { Host.monotonicSeconds() + $0 }
        let mustEnd = { StopRequest.isRequested || deadline.map { Host.monotonicSeconds() >= $0 } == true }
        // Whether the input went out (or writing failed) before the deadline or a stop.
        var fed = true
        var writeError: SystemError? = nil
        // A command that reads nothing must not block the drain on a full pipe.
        do { fed = try child.input.writeAll(input, unless: mustEnd) } catch { writeError = error }
        child.input.close()
        let status: Int32?
        do {
            status = fed ? try Host.waitForExit(child.pid, unless: mustEnd) : nil
            if status == nil { _ = try Host.endProcessGroup(child.pid, grace: Self.grace) }
        } catch {
            throw ShareQueueError(.tryAgain, "cannot wait for the command", underlying: error)
        }
        guard let status else {
            if StopRequest.isRequested {
                throw ShareQueueError(.tryAgain, "stopped: ended the command '\(command)' before it finished")
            }
            throw ShareQueueError(.tryAgain, "the command '\(command)' did not finish within \(Self.format(timeout ?? 0)) (--exec-timeout); ended it")
        }
        // Stopped (a service manager stopping the whole group, say) is not refused: try again later.
        if status != 0 && (StopRequest.isRequested || Host.wasStopped(status)) {
            throw ShareQueueError(.tryAgain, "the command '\(command)' was stopped before it finished (status \(status))")
        }
        // 75 is sysexits' EX_TEMPFAIL: the command says its destination is unavailable
        // (a server down), not that these records are wrong, so nothing is counted against them.
        if status == Self.temporaryFailure {
            throw ShareQueueError(.tryAgain, "the command '\(command)' asked to try again later (status 75)")
        }
        guard status == 0 else {
            throw Refusal(description: "the command '\(command)' exited with status \(status)")
        }
        // A command that exits 0 without reading all its input has still accepted the batch.
        if let writeError, !writeError.isBrokenPipe {
            throw ShareQueueError(.tryAgain, "cannot write to the command", underlying: writeError)
        }
        SystemTrace.current?.mark(["delivered"] + batch.records.map(\.id))
    }

    /// `90s` as given back to people: whole seconds without a fraction.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
