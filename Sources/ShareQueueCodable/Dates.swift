#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueueCore

// The queue stores dates as ISO-8601 text; an app reads them as `Date`, by the grammar
// "newest" is judged by (`DateInstant`, Format.md §12.2).

extension DrainedRecord {
    /// When the producer appended the record; nil for a date that does not parse
    /// (Format.md §12.2), which a producer other than this library may write.
    public var date: Date? { ISO8601Milliseconds.parse(dateText) }
}

extension Record {
    /// `Record.date` as a `Date`; nil if it does not parse (Format.md §12.2).
    public var dateValue: Date? { ISO8601Milliseconds.parse(date) }
}

extension QueueStatus {
    /// The date of the oldest pending record, as a `Date`; nil if nothing waits or it does not parse.
    public var oldestDate: Date? { oldest.flatMap(ISO8601Milliseconds.parse) }
    /// When a drain last recorded progress; nil before the first.
    public var lastDrainDate: Date? { lastDrainSeconds.map { Date(timeIntervalSince1970: Double($0)) } }
}
