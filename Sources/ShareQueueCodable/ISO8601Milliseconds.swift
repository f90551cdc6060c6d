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

    /// Reads `YYYY-MM-DDTHH:MM:SS`, an optional fraction of a second (1 to 9
    /// digits), and `Z` or an offset `+HH:MM`/`-HH:MM`; nil for anything else.
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(Cursor(bytes: $0)) }
    }

    /// `parse` over the UTF-8 bytes of the text, for a date read where it is stored.
    static func parse(_ bytes: ArraySlice<UInt8>) -> Date? {
        bytes.withUnsafeBufferPointer { parse(Cursor(bytes: $0)) }
    }

    /// Reads a date's bytes in order; a typed drain reads two dates a record, so this makes nothing on the heap.
    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index == bytes.count }

        /// `width` decimal digits as a number, or nil (and nothing read) if they are not all there.
        mutating func number(_ width: Int) -> Int64? {
            guard bytes.count - index >= width else { return nil }
            var value: Int64 = 0
            for offset in index..<(index + width) {
                let digit = bytes[offset] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            index += width
            return value
        }

        /// Moves past `character` if it comes next.
        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        /// Up to 9 digits of a fraction as nanoseconds, or nil if there is no digit.
        mutating func fraction() -> Int64? {
            var nanoseconds: Int64 = 0
            var digits = 0
            while index < bytes.count, digits < 9 {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                nanoseconds = nanoseconds * 10 + Int64(digit)
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanoseconds *= 10 }
            return nanoseconds
        }
    }

    private static func parse(_ start: Cursor) -> Date? {
        var cursor = start
        guard let year = cursor.number(4), cursor.take("-"), let month = cursor.number(2), cursor.take("-"), let day = cursor.number(2),
              cursor.take("T") || cursor.take("t"), let hour = cursor.number(2), cursor.take(":"), let minute = cursor.number(2),
              cursor.take(":"), let second = cursor.number(2),
              year >= 1, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        var nanoseconds: Int64 = 0
        if cursor.take(".") {
            guard let fraction = cursor.fraction() else { return nil }
            nanoseconds = fraction
        }
        var offset: Int64 = 0
        if !(cursor.take("Z") || cursor.take("z")) {
            let sign: Int64
            if cursor.take("+") { sign = 1 } else if cursor.take("-") { sign = -1 } else { return nil }
            guard let hours = cursor.number(2), cursor.take(":"), let minutes = cursor.number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard cursor.atEnd else { return nil }
        let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        if nanoseconds % 1_000_000 == 0 {
            // Whole milliseconds divide exactly as `format` wrote them, so a date read back equals the one written.
            return Date(timeIntervalSince1970: Double(seconds * 1000 + nanoseconds / 1_000_000) / 1000)
        }
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
