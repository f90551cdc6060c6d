import ShareQueue
import ShareQueueCLI

/// Delivers each batch to a shell command, as JSON Lines on its standard
/// input. Exit status 0 means delivered; anything else leaves the batch queued.
struct CommandSink: DrainSink {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let command: String

    mutating func deliver(_ batch: DrainBatch) throws {
        var input: [UInt8] = []
        for record in batch.records { RecordFormat.json.append(record, to: &input) }
        let child = try Host.spawnShell(command)
        var writeError: SystemError? = nil
        do { try child.input.writeAll(input) } catch { writeError = error }
        child.input.close()
        let status = try Host.waitForExit(child.pid)
        guard status == 0 else {
            throw Failure(description: "the command '\(command)' exited with status \(status)")
        }
        // A command that exits 0 without reading all its input has still accepted the batch.
        if let writeError, !writeError.isBrokenPipe { throw writeError }
    }
}
