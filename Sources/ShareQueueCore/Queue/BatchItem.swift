/// One thing a batch holds, in queue order.
enum BatchItem {
    case record(DrainedRecord)
    case damaged(DamagedRegion, segment: String, end: DrainPosition)
    case superseded(DrainedRecord)
    /// A record the drain itself set aside as a dead letter, unread (see ``DrainOptions/maxAttachmentBytes``).
    case deadLettered(DrainedRecord)

    var end: DrainPosition {
        switch self {
        case .record(let drained), .superseded(let drained), .deadLettered(let drained): return drained.end
        case .damaged(_, _, let end): return end
        }
    }

    var isRecord: Bool { if case .record = self { true } else { false } }
    var isDamaged: Bool { if case .damaged = self { true } else { false } }
}
