import CNATS
import Synchronization

/// What the server answered to the records published asynchronously: libnats calls
/// ``acknowledgeRecord`` for each answer on its own thread, so the counts are guarded.
public final class AcknowledgementTally: Sendable {
    struct Counts {
        /// Records stored, or already held under their id within the stream's duplicate window.
        var acknowledged = 0
        /// The first refusal for good, and the first failure to try again later.
        var refusal: ForwardingFailure? = nil
        var failure: ForwardingFailure? = nil
    }

    let counts = Mutex(Counts())
    let subject: String
    /// Whether the options name the stream, so that a message suggests naming one only when they do not.
    let namesStream: Bool

    /// A tally for records published to the subject of `options`.
    public init(_ options: ForwarderOptions) {
        subject = options.subject
        namesStream = options.stream != nil
    }

    /// Forgets the counts, for the next batch.
    func reset() { counts.withLock { $0 = Counts() } }

    func record(_ answer: UnsafeMutablePointer<jsPubAck>?, _ error: UnsafeMutablePointer<jsPubAckErr>?, id: String) {
        counts.withLock { counts in
            if answer != nil {
                counts.acknowledged += 1
            } else if let error {
                let problem = classify(error.pointee, id: id)
                if problem.kind == .refused {
                    if counts.refusal == nil { counts.refusal = problem }
                } else if counts.failure == nil {
                    counts.failure = problem
                }
            }
        }
    }

    /// Only a message too large for the stream is the record's fault; a missing stream, a full
    /// one or a lost answer is the server's, and the batch is better kept than dead-lettered.
    func classify(_ error: jsPubAckErr, id: String) -> ForwardingFailure {
        let text = error.ErrText.map { String(cString: $0) } ?? explanation(of: error.Err)
        if error.ErrCode == JSStreamMessageExceedsMaximumErr {
            return ForwardingFailure(.refused, "the stream refused the record \(RecordID.quoted(id)): \(text)")
        }
        if error.Err == NATS_NO_RESPONDERS {
            let hint = namesStream ? "" : " (name the stream that should with --stream NAME, or make one once with --create-stream NAME)"
            return ForwardingFailure(.tryAgain, "no stream captures the subject \(subject)\(hint)")
        }
        return ForwardingFailure(.tryAgain, "the record \(RecordID.quoted(id)) was not stored: \(text)")
    }
}

/// libnats's callback for each asynchronous publish's answer; the closure is the tally.
/// With an acknowledgement handler set, the message is the handler's to destroy.
let acknowledgeRecord: jsPubAckHandler = { _, message, answer, error, closure in
    let tally = Unmanaged<AcknowledgementTally>.fromOpaque(closure!).takeUnretainedValue()
    var id = ""
    if error != nil {
        var value: UnsafePointer<CChar>? = nil
        if natsMsgHeader_Get(message, "Nats-Msg-Id", &value) == NATS_OK, let value { id = String(cString: value) }
    }
    tally.record(answer, error, id: id)
    natsMsg_Destroy(message)
}
