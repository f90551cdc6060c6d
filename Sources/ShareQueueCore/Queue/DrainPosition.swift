/// How far delivery has got: every record before `offset` in sealed segment
/// `segment`, and in every earlier segment, has been delivered or set aside.
///
/// A sink that stores records transactionally can store this position in the
/// same transaction and hand it back through `DrainSink.deliveredPosition()`,
/// which makes delivery exactly once.
public struct DrainPosition: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The sealed segment's number; 0 before the first.
    public let segment: UInt64
    /// Bytes of that segment delivered or set aside.
    public let offset: Int64

    /// A position at `offset` bytes into sealed segment `segment`.
    /// - Parameters:
    ///   - segment: The sealed segment's number.
    ///   - offset: Bytes into that segment.
    public init(segment: UInt64, offset: Int64) {
        self.segment = segment
        self.offset = offset
    }

    /// The position before any record: nothing delivered yet.
    public static let start = DrainPosition(segment: 0, offset: 0)

    /// Whether `a` comes before `b` in the queue.
    public static func < (a: DrainPosition, b: DrainPosition) -> Bool {
        (a.segment, a.offset) < (b.segment, b.offset)
    }

    /// `segment <N> offset <bytes>`, the text of the checkpoint file.
    public var description: String { "segment \(segment) offset \(offset)" }

    /// Reads a position back from its ``description``.
    /// - Parameter text: `segment <N> offset <bytes>`, as ``description`` writes it.
    /// - Returns: nil if `text` is not a position so written.
    public init?(_ text: String) {
        let words = text.split(separator: " ")
        guard words.count == 4, words[0] == "segment", words[2] == "offset",
              let segment = UInt64(words[1]), let offset = Int64(words[3]), offset >= 0 else { return nil }
        self.init(segment: segment, offset: offset)
    }
}

extension DrainPosition {
    /// Whether a drain can have recorded this position, given the sealed
    /// segments there are now (oldest first). A drain removes each segment
    /// before it reads the next, so none is left below a true position; and a
    /// true position leaves a number for the next segment, or is in the last
    /// one. Anything else is damage, or belongs to another queue: trusting it
    /// would skip records, so a drain delivers from the start instead.
    func isPlausible(withSealed sealed: [UInt64]) -> Bool {
        if offset < 0 { return false }
        if let oldest = sealed.first, oldest < segment { return false }
        return segment < QueueLayout.maximumSequence || sealed.last == segment
    }
}
