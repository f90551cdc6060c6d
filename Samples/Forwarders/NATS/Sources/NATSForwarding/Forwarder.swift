/// forward-nats's work: one batch from standard input into JetStream.
public enum Forwarder {
    /// Connects, creates the stream if asked, publishes every line of standard input as it
    /// is read, and waits for every acknowledgement. A record the stream already held under
    /// its id is acknowledged as a duplicate, and counts as stored.
    /// - Throws: ``ForwardingFailure``, whose kind says what host-drain should do with the batch.
    public static func forwardStandardInput(_ options: ForwarderOptions) throws(ForwardingFailure) {
        let tally = AcknowledgementTally(subject: options.subject)
        let connection = try JetStreamConnection(options, acknowledgements: tally)
        if let stream = options.createStream { try connection.createStreamIfMissing(stream) }
        let publisher = RecordPublisher(connection, tally: tally)
        var input = StandardInputLines()
        try input.forEach { (line) throws(ForwardingFailure) in
            guard !line.isEmpty else { return }
            try publisher.publish(line, id: try RecordID.of(line))
        }
        // Cut short, the batch is not all here: what was sent stays deduplicated, the rest comes again.
        if input.endedMidLine { throw ForwardingFailure(.tryAgain, "standard input ended in the middle of a record") }
        try publisher.waitForAcknowledgements()
    }
}
