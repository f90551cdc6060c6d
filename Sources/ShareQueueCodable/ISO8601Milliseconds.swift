#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueueCore

/// Dates as ISO-8601 UTC with milliseconds, `2026-11-29T14:52:20.123Z`, by
/// arithmetic: no calendar, locale or formatter.
enum ISO8601Milliseconds {
    /// The first and last millisecond this writes: the years 1 to 9999.
    static let range: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// `date` rounded to the nearest millisecond; nil outside the years 1 to 9999.
    static func format(_ date: Date) -> String? {
        milliseconds(date).map { Timestamp.format(millisecondsSince1970: $0) }
    }

    /// `date` in milliseconds since 1970, rounded to the nearest, as `format` writes it; nil outside the years 1 to 9999.
    static func milliseconds(_ date: Date) -> Int64? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds >= Double(range.lowerBound), milliseconds <= Double(range.upperBound) else { return nil }
        return Int64(milliseconds)
    }

    /// Reads a date as a record's `date` is read (`DateInstant`, Format.md §12.2): `YYYY-MM-DDTHH:MM:SS`,
    /// an optional fraction of a second of any number of digits, and `Z` or an offset `+HH:MM`/`-HH:MM`;
    /// nil for anything else.
    static func parse(_ text: String) -> Date? { date(DateInstant(text)) }

    /// `parse` over the UTF-8 bytes of the text, for a date read where it is stored.
    static func parse(_ bytes: ArraySlice<UInt8>) -> Date? {
        bytes.withUnsafeBufferPointer { DateInstant(utf8: $0) }.flatMap(date)
    }

    private static func date(_ instant: DateInstant) -> Date? {
        guard instant.isParsed else { return nil }
        let (seconds, attoseconds) = instant.secondsSince1970
        let attosecondsPerMillisecond: UInt64 = 1_000_000_000_000_000
        if attoseconds % attosecondsPerMillisecond == 0 {
            // Whole milliseconds divide exactly as `format` wrote them, so a date read back equals the one written.
            return Date(timeIntervalSince1970: Double(seconds * 1000 + Int64(attoseconds / attosecondsPerMillisecond)) / 1000)
        }
        return Date(timeIntervalSince1970: Double(seconds) + Double(attoseconds) / 1e18)
    }
}
