/// forward-nats's work: one batch from standard input into JetStream, or, for
/// `host-drain --long-running`, batch after batch on one connection.
public enum Forwarder {
    /// Connects, checks the stream the options name (or makes it, with `--create-stream`),
    /// publishes every line of standard input as it is read, and waits for every
    /// acknowledgement. A record the stream already held under its id is acknowledged as a
    /// duplicate, and counts as stored.
    /// - Throws: ``ForwardingFailure``, whose kind says what host-drain should do with the batch.
    public static func forwardStandardInput(_ options: ForwarderOptions) throws(ForwardingFailure) {
        let requirement = StreamRequirement(options)
        try requirement?.checkName()
        try options.checkFiles()
        var input = StandardInputLines()
        if options.createsStream { try expectNoRecords(&input, options) }
        // host-drain --long-running greets first; any other first line is a record of a batch.
        let first = options.createsStream ? nil : try input.withNextLine { Array($0) }
        let tally = AcknowledgementTally(options)
        let connection = try JetStreamConnection(options, acknowledgements: tally)
        if let requirement { try connection.prepareStream(requirement) }
        if options.createsStream { return }
        let publisher = RecordPublisher(connection, tally: tally)
        do throws(ForwardingFailure) {
            if let first, SinkProtocol.isGreeting(first) {
                try forwardBatches(&input, publisher)
                return
            }
            if let first, !first.isEmpty {
                try first.withUnsafeBufferPointer { (line) throws(ForwardingFailure) in try publisher.publish(line) }
            }
            try input.forEach { (line) throws(ForwardingFailure) in
                guard !line.isEmpty else { return }
                try publisher.publish(line)
            }
            // Cut short, the batch is not all here: what was sent stays deduplicated, the rest comes again.
            if input.endedMidLine { throw ForwardingFailure(.tryAgain, "standard input ended in the middle of a record") }
            try publisher.waitForAcknowledgements()
        } catch let failure where failure.kind == .tryAgain {
            // A stream deleted under a batch must stop the drain, not be retried into nothing.
            if let requirement { try connection.checkStreamRemains(requirement) }
            throw failure
        }
    }

    /// Greets host-drain back, then forwards batch after batch on one connection, answering
    /// each once every record of it is acknowledged, until standard input ends. A record the
    /// server refuses for good makes the answer `refused`, and host-drain bisects the batch
    /// with this same process; any other failure ends it (75, 78), leaving the batch queued.
    static func forwardBatches(_ input: inout StandardInputLines, _ publisher: RecordPublisher) throws(ForwardingFailure) {
        printOutput(SinkProtocol.greeting + "\n")
        while let count = try input.withNextLine({ (line) throws(ForwardingFailure) in try SinkProtocol.recordCount(line) }) {
            publisher.startBatch()
            var refusal: ForwardingFailure? = nil
            for _ in 0..<count {
                let read: Void? = try input.withNextLine { (line) throws(ForwardingFailure) in
                    // The batch is refused already: the rest is read, to keep to the framing, and not sent.
                    guard refusal == nil else { return }
                    do throws(ForwardingFailure) { try publisher.publish(line) } catch where error.kind == .refused { refusal = error }
                }
                if read == nil { throw ForwardingFailure(.tryAgain, "standard input ended in the middle of a batch") }
            }
            do throws(ForwardingFailure) { try publisher.waitForAcknowledgements() } catch where error.kind == .refused { refusal = refusal ?? error }
            printOutput(SinkProtocol.answer(refusing: refusal))
        }
    }

    /// `--create-stream` is a step run once by hand; in host-drain's command it would make a
    /// deleted stream anew, empty, on the next batch, and no one would hear of what it lost.
    private static func expectNoRecords(_ input: inout StandardInputLines, _ options: ForwarderOptions) throws(ForwardingFailure) {
        guard !StandardInputLines.isTerminal else { return }
        try input.forEach { (line) throws(ForwardingFailure) in
            guard line.isEmpty else {
                throw ForwardingFailure(.usage, "--create-stream makes the stream and forwards nothing, yet records came on standard input: run it once by hand, and in the command host-drain runs name the stream with --stream \(options.stream ?? "NAME")")
            }
        }
    }
}
