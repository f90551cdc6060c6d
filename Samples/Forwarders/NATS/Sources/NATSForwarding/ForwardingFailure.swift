/// Why forwarding a batch failed, as host-drain must hear it: the kind decides the
/// exit status, and so what host-drain does with the batch.
public struct ForwardingFailure: Error, CustomStringConvertible {
    /// What the failure means for the batch.
    public enum Kind: Sendable {
        /// The command line is wrong (64): nothing was read or sent.
        case usage
        /// A record the server will never take (65): host-drain bisects the batch to find
        /// it, counts it, and in the end sets it aside as a dead letter.
        case refused
        /// The server, the connection or the setup failed, not the records (75): the
        /// batch stays queued and nothing is counted against its records.
        case tryAgain
        /// The options do not fit the server's streams, or name a file that cannot be used
        /// (78): nothing was published, and only an operator can set it right, so host-drain
        /// keeps the batch and stops, where a retry would fail the same way.
        case configuration
    }

    /// What the failure means for the batch.
    public let kind: Kind
    /// What failed and why, for people.
    public let message: String

    /// A failure of `kind`, described by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The sysexits status host-drain reads: 64, 65, 75 or 78 (EX_CONFIG).
    public var exitStatus: Int32 {
        switch kind {
        case .usage: 64
        case .refused: 65
        case .tryAgain: 75
        case .configuration: 78
        }
    }

    /// The message.
    public var description: String { message }
}
