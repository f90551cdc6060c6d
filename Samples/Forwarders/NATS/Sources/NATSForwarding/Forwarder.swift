/// forward-nats's work: one batch from standard input into JetStream.
public enum Forwarder {
    /// What a batch came to.
    public struct Summary: Sendable {
        /// Records acknowledged by the stream.
        public let acknowledged: Int
        /// Of those, records the stream already held under their id.
        public let duplicates: Int
    }

    /// Connects, creates the stream if asked, publishes every line of standard input as it
    /// is read, and waits for every acknowledgement.
    /// - Throws: ``ForwardingFailure``, whose kind says what host-drain should do with the batch.
    public static func forwardStandardInput(_ options: ForwarderOptions) throws(ForwardingFailure) -> Summary {
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
        let duplicates = try publisher.waitForAcknowledgements()
        return Summary(acknowledged: publisher.published, duplicates: duplicates)
    }
}
