import CNATS

/// Publishes records to one subject without waiting for each answer, then waits for all:
/// acknowledgements come back in batches while later records are still being sent.
public final class RecordPublisher {
    let connection: JetStreamConnection
    let tally: AcknowledgementTally
    /// Records handed to the client so far.
    public private(set) var published = 0
    /// The id of the record being published, NUL-ended; kept from record to record.
    private var id: [UInt8] = []

    /// A publisher over `connection`, whose acknowledgements `tally` counts.
    public init(_ connection: JetStreamConnection, tally: AcknowledgementTally) {
        self.connection = connection
        self.tally = tally
    }

    /// Starts counting anew, for the next batch of a long-running forwarder: the last one's
    /// answers have all come, since it waited for them.
    public func startBatch() {
        published = 0
        tally.reset()
    }

    /// Publishes `record` with the header `Nats-Msg-Id` set to its id.
    /// - Throws: ``ForwardingFailure``: `.refused` for a line that is not a record with an id a
    ///   header can carry, or a record larger than the server takes; `.tryAgain` when the
    ///   connection is gone or too many answers are late.
    public func publish(_ record: UnsafeBufferPointer<UInt8>) throws(ForwardingFailure) {
        try RecordID.read(record, into: &id)
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        let status = id.withUnsafeBufferPointer { id in
            id.withMemoryRebound(to: CChar.self) { id in
                options.MsgId = id.baseAddress
                return js_PublishAsync(connection.context, connection.options.subject, record.baseAddress, Int32(record.count), &options)
            }
        }
        if status == NATS_MAX_PAYLOAD {
            let limit = natsConnection_GetMaxPayload(connection.connection)
            throw ForwardingFailure(.refused, "the record \(RecordID.quoted(RecordID.text(id))) is \(record.count) bytes; the server takes at most \(limit)")
        }
        try check(status, "cannot publish the record \(RecordID.quoted(RecordID.text(id))) to \(connection.options.subject)")
        published += 1
    }

    /// Waits, up to the timeout, until every record published has its answer.
    /// - Throws: ``ForwardingFailure``: `.refused` when the stream refused a record for good
    ///   (it wins, so that host-drain finds that record), else `.tryAgain` for any other
    ///   failure or an answer that did not come.
    public func waitForAcknowledgements() throws(ForwardingFailure) {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = JetStreamConnection.milliseconds(connection.options.timeout)
        let waited = js_PublishAsyncComplete(connection.context, &options)
        let counts = tally.counts.withLock { $0 }
        if let refusal = counts.refusal { throw refusal }
        if let failure = counts.failure { throw failure }
        if waited == NATS_TIMEOUT {
            throw ForwardingFailure(.tryAgain, "\(published - counts.acknowledged) of \(published) acknowledgements did not come within the timeout")
        }
        try check(waited, "cannot wait for the acknowledgements")
        guard counts.acknowledged == published else {
            throw ForwardingFailure(.tryAgain, "only \(counts.acknowledged) of \(published) records were acknowledged")
        }
    }
}
