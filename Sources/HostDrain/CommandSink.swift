import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Delivers each batch to a shell command, as JSON Lines on its standard
/// input. Exit status 0 means delivered; 75 (EX_TEMPFAIL) means try again
/// later; 64, 78, 126, 127 and signals other than a stop or a crash mean the
/// command itself is broken; any other status is a refusal, which the drain
/// bisects to find the records it refuses (see ``Outcome``).
///
/// The command runs in a process group of its own, with a deadline: past
/// `timeout`, or when this process is asked to stop, the whole group is ended
/// and the batch stays queued without counting as refused.
struct CommandSink: DrainSink {
    /// A batch the command refused: its exit status, which the queue's files keep,
    /// and its command line, which only this process's standard error shows.
    struct Refusal: SinkRefusal {
        let command: String
        let status: Int32

        var recordedReason: String { "command \(CommandSink.statusText(status))" }
        var description: String { "the command '\(command)' \(CommandSink.statusText(status))" }
    }

    /// What an exit status of the command says about its batch.
    enum Outcome: Equatable {
        /// 0: it took the batch.
        case delivered
        /// 75 (EX_TEMPFAIL): its destination is unavailable; the batch waits, uncounted.
        case tryAgain
        /// Ended by SIGHUP, SIGINT or SIGTERM (a service manager stopping the group): the batch waits, uncounted.
        case stopped
        /// The command is wrong, not the records: 64 (usage), 78 (configuration), 126 (not executable)
        /// and 127 (not found) give `configuration` (exit 78); a signal other than a stop or a crash
        /// gives `handlerFailed` (75). The batch waits, uncounted.
        case broken(ShareQueueError.Code)
        /// Any other status, a crash's signals and SIGKILL included: the records are refused.
        case refused
    }

    /// What `status`, as `Host.waitForExit` gives it (128 + a signal's number for a signal), says.
    static func outcome(of status: Int32) -> Outcome {
        switch status {
        case 0: return .delivered
        case temporaryFailure: return .tryAgain
        case 64, 78, 126, 127: return .broken(.configuration)
        case _ where Host.wasStopped(status): return .stopped
        case _ where Host.wasCrashed(status): return .refused
        case 129...(128 + 64): return .broken(.handlerFailed)
        default: return .refused
        }
    }

    /// `exited with status 1`, or `was ended by SIGSEGV (status 139)`.
    static func statusText(_ status: Int32) -> String {
        if let signal = Host.signalName(ofStatus: status) { return "was ended by \(signal) (status \(status))" }
        return "exited with status \(status)"
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
            throw ShareQueueError.handlerFailed("cannot start the command", path: "/bin/sh", underlying: error)
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
            throw ShareQueueError.handlerFailed("cannot wait for the command", underlying: error)
        }
        guard let status else {
            if StopRequest.isRequested {
                throw ShareQueueError.handlerFailed("stopped: ended the command '\(command)' before it finished")
            }
            throw ShareQueueError.handlerFailed("the command '\(command)' did not finish within \(Self.format(timeout ?? 0)) (--exec-timeout); ended it")
        }
        switch Self.outcome(of: status) {
        case .delivered:
            break
        case .stopped:
            throw ShareQueueError.handlerFailed("the command '\(command)' was stopped before it finished (status \(status))")
        case _ where StopRequest.isRequested:
            // Asked to stop, this process ended the command itself: whatever its status, nothing is counted.
            throw ShareQueueError.handlerFailed("the command '\(command)' was stopped before it finished (status \(status))")
        case .tryAgain:
            // The command says its destination is unavailable (a server down), not that these records are wrong.
            throw ShareQueueError.handlerFailed("the command '\(command)' asked to try again later (status 75)")
        case .broken(let code):
            throw ShareQueueError(code, "the command '\(command)' \(Self.statusText(status)), which says the command is broken, not the records: "
                                  + "its batch stays queued and nothing is counted against it")
        case .refused:
            throw Refusal(command: command, status: status)
        }
        // A command that exits 0 without reading all its input has still accepted the batch.
        if let writeError, !writeError.isBrokenPipe {
            throw ShareQueueError.handlerFailed("cannot write to the command", underlying: writeError)
        }
        SystemTrace.current?.mark(["delivered"] + batch.records.map(\.id))
    }

    /// `90s` as given back to people: whole seconds without a fraction.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
