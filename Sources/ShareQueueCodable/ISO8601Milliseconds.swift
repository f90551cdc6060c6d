#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShareQueue

/// Dates as ISO-8601 UTC with milliseconds, `2026-11-29T14:52:20.123Z`, by
/// arithmetic: no calendar, locale or formatter.
enum ISO8601Milliseconds {
    /// The first and last millisecond this writes: the years 1 to 9999.
    static let range: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// `date` rounded to the nearest millisecond; nil outside the years 1 to 9999.
    static func format(_ date: Date) -> String? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds >= Double(range.lowerBound), milliseconds <= Double(range.upperBound) else { return nil }
        return Timestamp.format(millisecondsSince1970: Int64(milliseconds))
    }

    /// Reads `YYYY-MM-DDTHH:MM:SS`, an optional fraction of a second (1 to 9
    /// digits), and `Z` or an offset `+HH:MM`/`-HH:MM`; nil for anything else.
    static func parse(_ text: String) -> Date? {
        var bytes = Array(text.utf8)[...]
        func number(_ width: Int) -> Int64? {
            guard bytes.count >= width else { return nil }
            var value: Int64 = 0
            for byte in bytes.prefix(width) {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            bytes = bytes.dropFirst(width)
            return value
        }
        func take(_ character: Character) -> Bool {
            guard bytes.first == character.asciiValue else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
              take("T") || take("t"), let hour = number(2), take(":"), let minute = number(2), take(":"), let second = number(2),
              year >= 1, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        var nanoseconds: Int64 = 0
        if take(".") {
            var digits = 0
            while let byte = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < 9 {
                nanoseconds = nanoseconds * 10 + Int64(byte - UInt8(ascii: "0"))
                digits += 1
                bytes = bytes.dropFirst()
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanoseconds *= 10 }
        }
        var offset: Int64 = 0
        if !(take("Z") || take("z")) {
            let sign: Int64
            if take("+") { sign = 1 } else if take("-") { sign = -1 } else { return nil }
            guard let hours = number(2), take(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard bytes.isEmpty else { return nil }
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
