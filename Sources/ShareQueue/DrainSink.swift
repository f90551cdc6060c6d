/// A record taken out of the queue, with the exact bytes that were stored.
public struct DrainedRecord: Sendable {
    public let record: Record
    /// The stored JSON object, byte for byte as the producer wrote it.
    public let storedJSON: [UInt8]

    /// One line of JSON for this record: the stored bytes when they are
    /// already a single line, so a drain passes them through unchanged.
    public var jsonLine: [UInt8] {
        storedJSON.contains(where: { $0 == 0x0A || $0 == 0x0D }) ? record.jsonLine : storedJSON
    }
}

/// Records delivered together, and the queue position just after them.
public struct DrainBatch: Sendable {
    public let records: [DrainedRecord]
    public let end: DrainPosition
}

/// Where a drain delivers records: standard output, a command, a database.
public protocol DrainSink {
    /// Takes a batch. Returning means the batch is delivered and the drain
    /// will not offer it again; throwing leaves it, and everything after it, queued.
    mutating func deliver(_ batch: DrainBatch) throws

    /// The position this sink has itself recorded, for a sink that stores it
    /// atomically with the records. The default, nil, trusts the checkpoint file.
    func deliveredPosition() throws -> DrainPosition?
}

extension DrainSink {
    public func deliveredPosition() throws -> DrainPosition? { nil }
}

/// What one drain did.
public struct DrainSummary: Sendable, Equatable {
    public var delivered = 0
    public var batches = 0
    public var quarantined = 0
    /// True when `maxRecords` stopped the drain before the queue was empty.
    public var stoppedAtLimit = false

    public init() {}
}
