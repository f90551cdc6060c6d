import ShareQueue

/// Delivers each batch to a shell command, as JSON Lines on its standard
/// input. Exit status 0 means delivered; any other status is a refusal, which
/// leaves the batch queued and counts against its records.
struct CommandSink: DrainSink {
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    let command: String

    /// A non-zero exit is about the records: the drain bisects to find which.
    var failuresAreRefusals: Bool { true }

    /// The command gets the stored JSON.
    var needsRecords: Bool { false }

    mutating func deliver(_ batch: DrainBatch) throws {
        var input: [UInt8] = []
        for record in batch.records { RecordFormat.json.append(record, to: &input) }
        let child: (pid: Int32, input: FileDescriptor)
        do { child = try Host.spawnShell(command) } catch {
            throw ShareQueueError(.tryAgain, "cannot start the command", path: "/bin/sh", cause: error.description)
        }
        var writeError: SystemError? = nil
        do { try child.input.writeAll(input) } catch { writeError = error }
        child.input.close()
        let status: Int32
        do { status = try Host.waitForExit(child.pid) } catch {
            throw ShareQueueError(.tryAgain, "cannot wait for the command", cause: error.description)
        }
        // Stopped (a service manager stopping the whole group, say) is not refused: try again later.
        if status != 0 && (StopRequest.isRequested || Host.wasStopped(status)) {
            throw ShareQueueError(.tryAgain, "the command '\(command)' was stopped before it finished (status \(status))")
        }
        guard status == 0 else {
            throw Refusal(description: "the command '\(command)' exited with status \(status)")
        }
        // A command that exits 0 without reading all its input has still accepted the batch.
        if let writeError, !writeError.isBrokenPipe {
            throw ShareQueueError(.tryAgain, "cannot write to the command", cause: writeError.description)
        }
    }
}
