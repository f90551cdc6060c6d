/// The refused records a drain keeps queued while it goes on delivering the records after them.
///
/// A refused record under `maxAttempts` counts one attempt a run and stays queued; the
/// drain delivers the rest of its batch and the batches after it in the same run, but the
/// checkpoint stays just before the first such record, so that the next run offers it again.
/// The records after it that this run delivered are offered again too: at least once.
struct HeldRefusals {
    /// The first held record, for the error that ends the run.
    struct First {
        let id: String
        let attempts: Int
        /// The sink's reason, as the host may see it (a command line included).
        let reason: String
    }

    /// Where the checkpoint stays for the rest of the run; nil while nothing is held.
    private(set) var checkpoint: DrainPosition?
    private(set) var first: First?
    /// How many records this run holds.
    private(set) var count = 0

    var isEmpty: Bool { checkpoint == nil }

    /// Holds a record refused `attempts` times; the first one held fixes the checkpoint at `position`,
    /// where it is when the record is met, just before it.
    mutating func hold(id: String, attempts: Int, reason: String, checkpointAt position: DrainPosition) {
        if checkpoint == nil {
            checkpoint = position
            first = First(id: id, attempts: attempts, reason: reason)
        }
        count += 1
    }

    /// The error that ends a run that held records: what it delivered is delivered, and the held ones wait for the next run.
    func error(maxAttempts: Int, delivered: Int) -> ShareQueueError? {
        guard let first else { return nil }
        let others = count > 1 ? " and \(count - 1) other record\(count == 2 ? "" : "s")" : ""
        return ShareQueueError(.sinkRefused, "the sink refused record \(DeadLetters.quoted(first.id)) (attempt \(first.attempts) of \(maxAttempts))\(others); "
                               + "delivered \(delivered) others, and the checkpoint stays before it, so the next run offers it and the records after it again",
                               cause: first.reason)
    }
}
