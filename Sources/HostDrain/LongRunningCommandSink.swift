import ShareQueueCore
import ShareQueueSystem
import ToolSupport

/// Delivers batches to one command that stays running for the whole drain
/// (`--exec CMD --long-running`): it takes batch after batch on its standard input and
/// answers each on its standard output, as ``SinkProtocol`` says, so that a forwarder
/// starts and connects once rather than once a batch.
///
/// Its failures follow ``CommandSink``'s: a batch not answered stays queued; a command
/// that ends before answering is judged by its exit status as a command of `--exec` is
/// (0, which leaves its batch unanswered, says it is broken); an answer that is not the
/// protocol's says it is broken (exit 78); `refused` is a refusal, which the drain
/// bisects by offering the halves to the same command; `--exec-timeout` bounds each
/// batch, and the greeting. A command that ended is started again for the next offer.
final class LongRunningCommandSink: DrainSink {
    /// A batch the command answered `refused`: the queue's files keep only that, the host's
    /// standard error the command line and its message.
    struct Refusal: SinkRefusal {
        let command: String
        let message: String

        var recordedReason: String { "command answered refused" }
        var description: String { "the command '\(command)' refused the batch" + (message.isEmpty ? "" : ": \(message)") }
    }

    let command: String
    /// Seconds a batch, or the greeting, may take; nil for no limit.
    let timeout: Double?
    private var child: Host.Child?
    /// What the command wrote past its last answer.
    private var unread: [UInt8] = []
    /// The batch's records as JSON Lines, then the whole request; kept to spare allocations.
    private var lines: [UInt8] = []
    private var request: [UInt8] = []

    init(command: String, timeout: Double?) {
        self.command = command
        self.timeout = timeout
    }

    /// A non-zero exit, or a `refused` answer, is about the records: the drain bisects to find which.
    var failuresAreRefusals: Bool { true }

    /// The command gets the stored JSON.
    var needsRecords: Bool { false }

    func deliver(_ batch: DrainBatch) throws {
        let mustEnd = deadline()
        if child == nil { try start(mustEnd) }
        lines.removeAll(keepingCapacity: true)
        for record in batch.records { RecordFormat.json.append(record, to: &lines) }
        request.removeAll(keepingCapacity: true)
        request += SinkProtocol.batchHeader(count: batch.records.count, bytes: lines.count)
        request += lines
        switch try exchange(request, mustEnd) {
        case .line(let line, beforeRequestTaken: true):
            try end()
            throw broken("answered \(SinkProtocol.shown(line[...])) before it read the whole batch")
        case .line(let line, beforeRequestTaken: false):
            switch SinkProtocol.answer(line) {
            case .delivered:
                SystemTrace.current?.mark(["delivered"] + batch.records.map(\.id))
            case .refused(let message):
                throw Refusal(command: command, message: message)
            case .retry(let message):
                // The command stays running: it may take the batch when it is offered again.
                throw ShareQueueError.handlerFailed("the command '\(command)' asked to try again later" + (message.isEmpty ? "" : ": \(message)"))
            case .malformed(let shown):
                try end()
                throw broken("answered \(shown), which is not delivered, refused or retry")
            }
        case .tooLong:
            try end()
            throw broken("wrote more than \(SinkProtocol.longestAnswer) bytes without a newline")
        case .gaveUp:
            try end()
            throw ended(while: "answered the batch")
        case .endOfOutput:
            let status = try reap(mustEnd)
            switch CommandSink.outcome(of: status) {
            case _ where StopRequest.isRequested:
                throw ShareQueueError.handlerFailed("the command '\(command)' was stopped before it answered (status \(status))")
            case .delivered:
                throw broken("exited with status 0 without answering the batch")
            case .stopped:
                throw ShareQueueError.handlerFailed("the command '\(command)' was stopped before it answered (status \(status))")
            case .tryAgain:
                throw ShareQueueError.handlerFailed("the command '\(command)' asked to try again later (status 75)")
            case .broken(let code):
                throw ShareQueueError(code, "the command '\(command)' \(CommandSink.statusText(status)), which says the command is broken, not the records: "
                                      + "its batch stays queued and nothing is counted against it")
            case .refused:
                // The next offer (a half, when the drain bisects) starts the command again.
                throw CommandSink.Refusal(command: command, status: status)
            }
        }
    }

    /// Ends the command after the drain: closes its standard input, the protocol's end, and
    /// gives it `CommandSink.grace` seconds to exit before its group is ended.
    /// - Returns: a warning for a command that did not exit 0 then; its batches were all answered.
    func finish() -> String? {
        guard let child else { return nil }
        child.input?.close()
        let giveUpAt = Host.monotonicSeconds() + CommandSink.grace
        var status: Int32?
        do {
            status = try Host.waitForExit(child.pid) { Host.monotonicSeconds() >= giveUpAt }
            if status == nil { status = try Host.endProcessGroup(child.pid, grace: CommandSink.grace) }
        } catch {
            return "cannot wait for the command '\(command)' to exit: \(error)"
        }
        child.output?.close()
        self.child = nil
        guard let status, status != 0 else { return nil }
        return "the command '\(command)' \(CommandSink.statusText(status)) once its input ended; every batch it answered is delivered"
    }

    // MARK: The command's life

    /// When a batch must end: past the timeout, or at a stop request.
    private func deadline() -> () -> Bool {
        let end = timeout.map { Host.monotonicSeconds() + $0 }
        return { StopRequest.isRequested || end.map { Host.monotonicSeconds() >= $0 } == true }
    }

    /// Starts the command and greets it; it must answer with the greeting.
    private func start(_ mustEnd: () -> Bool) throws {
        do {
            child = try Host.spawn("/bin/sh", ["-c", command], pipeInput: true, pipeOutput: true, newProcessGroup: true)
        } catch {
            throw ShareQueueError.handlerFailed("cannot start the command", path: "/bin/sh", underlying: error)
        }
        unread.removeAll()
        if let input = child?.input { Host.enlargePipe(input, to: 1 << 20) }
        let doesNotSpeak = "; it does not speak the long-running sink protocol (--long-running), which begins with the line '\(SinkProtocol.greeting)'"
        switch try exchange(SinkProtocol.greetingLine, mustEnd) {
        case .line(let line, _) where SinkProtocol.isGreeting(line):
            return
        case .line(let line, _):
            try end()
            throw broken("answered \(SinkProtocol.shown(line[...])) to the greeting" + doesNotSpeak)
        case .tooLong:
            try end()
            throw broken("wrote more than \(SinkProtocol.longestAnswer) bytes without a newline when greeted" + doesNotSpeak)
        case .gaveUp:
            try end()
            throw ended(while: "answered the greeting")
        case .endOfOutput:
            let status = try reap(mustEnd)
            switch CommandSink.outcome(of: status) {
            case .tryAgain:
                throw ShareQueueError.handlerFailed("the command '\(command)' asked to try again later (status 75) before it took a batch")
            case .stopped:
                throw ShareQueueError.handlerFailed("the command '\(command)' was stopped before it took a batch (status \(status))")
            case .broken(let code):
                throw ShareQueueError(code, "the command '\(command)' \(CommandSink.statusText(status)) before it took a batch, which says the command is broken: "
                                      + "the batch stays queued and nothing is counted against it")
            case .delivered, .refused:
                // No record was offered, so none is refused: the command is what is wrong.
                throw broken("\(CommandSink.statusText(status)) without answering the greeting" + doesNotSpeak)
            }
        }
    }

    private func exchange(_ bytes: [UInt8], _ mustEnd: () -> Bool) throws -> Host.ChildAnswer {
        guard let child, let input = child.input, let output = child.output else { preconditionFailure("no command running") }
        do {
            return try Host.exchange(bytes, input: input, output: output, unread: &unread, longest: SinkProtocol.longestAnswer, unless: mustEnd)
        } catch {
            try end()
            throw ShareQueueError.handlerFailed("cannot write to the command or read its answer", underlying: error)
        }
    }

    /// Waits for a command whose output ended, until `mustEnd`, then ends its group; forgets it.
    private func reap(_ mustEnd: () -> Bool) throws -> Int32 {
        guard let child else { preconditionFailure("no command running") }
        child.input?.close()
        child.output?.close()
        self.child = nil
        do {
            if let status = try Host.waitForExit(child.pid, unless: mustEnd) { return status }
            return try Host.endProcessGroup(child.pid, grace: CommandSink.grace)
        } catch {
            throw ShareQueueError.handlerFailed("cannot wait for the command", underlying: error)
        }
    }

    /// Ends the command's whole group now, and forgets it.
    private func end() throws {
        guard let child else { return }
        child.input?.close()
        child.output?.close()
        self.child = nil
        do { _ = try Host.endProcessGroup(child.pid, grace: CommandSink.grace) } catch {
            throw ShareQueueError.handlerFailed("cannot wait for the command", underlying: error)
        }
    }

    /// The error of a command that does not keep to the protocol: it is broken, not the records.
    private func broken(_ what: String) -> ShareQueueError {
        ShareQueueError(.configuration, "the command '\(command)' \(what): it is broken, not the records; its batch stays queued and nothing is counted against it")
    }

    /// The error of a command ended at a stop request or at the timeout.
    private func ended(while what: String) -> ShareQueueError {
        if StopRequest.isRequested { return .handlerFailed("stopped: ended the command '\(command)' before it \(what)") }
        return .handlerFailed("the command '\(command)' had not \(what) within \(CommandSink.format(timeout ?? 0)) (--exec-timeout); ended it")
    }
}
