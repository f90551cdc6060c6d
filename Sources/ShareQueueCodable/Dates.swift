#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueueCore

// The queue stores dates as ISO-8601 text; an app reads them as `Date`.

extension DrainedRecord {
    /// When the producer appended the record, to the millisecond; nil for a date
    /// that is not ISO-8601, which a producer other than this library may write.
    public var date: Date? { ISO8601Milliseconds.parse(dateText) }
}

extension Record {
    /// `Record.date` as a `Date`, to the millisecond; nil if it is not ISO-8601.
    public var dateValue: Date? { ISO8601Milliseconds.parse(date) }
}

extension QueueStatus {
    /// The date of the oldest pending record, as a `Date`; nil if nothing waits or it is not ISO-8601.
    public var oldestDate: Date? { oldest.flatMap(ISO8601Milliseconds.parse) }
    /// When a drain last recorded progress; nil before the first.
    public var lastDrainDate: Date? { lastDrainSeconds.map { Date(timeIntervalSince1970: Double($0)) } }
}
