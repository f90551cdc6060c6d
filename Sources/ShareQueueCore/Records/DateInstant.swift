/// The instant a record's `date` denotes: what "newest" compares when a drain
/// coalesces records of one key and when the store keeps the latest of each.
///
/// A date is read as Format.md §12.2 has it: `YYYY-MM-DD`, `T`, `HH:MM:SS`, an
/// optional `.` and fraction of one or more digits, then `Z` or an offset
/// `+HH:MM` / `-HH:MM`, with `T` and `Z` upper-case. Fields are in range (months
/// 01-12, days as the month has them in the proleptic Gregorian calendar, hours 00-23,
/// minutes and seconds 00-59: no leap second). The offset is applied, and
/// instants compare exactly, whatever the number of fraction digits
/// (`10:00:00.000Z` is older than `10:00:00.0001Z`, and `.5` equals `.500`).
/// The same grammar reads a typed record's `date` and a `Date` in content, so that
/// a date is either a date everywhere or nowhere.
///
/// A date that does not parse this way is older than every date that does, and
/// two such dates are equal: the caller's tie rule (the record appended last)
/// decides between them. So is a date more than ``allowedLead`` after the moment
/// it is read (``asRead(at:)``): a producer's date is its word, and a date from
/// the future would otherwise stay "newest" until the future came.
///
/// Pure arithmetic over bytes, with no calendar and no allocation for a fraction
/// of up to 18 digits, since it runs once per record when a drain coalesces.
package struct DateInstant: Comparable, Sendable {
    /// Whole seconds since 1970-01-01T00:00:00Z; `Int64.min` for a date that does not parse.
    private let seconds: Int64
    /// The fraction's first 18 digits, in units of 10⁻¹⁸ s.
    private let fraction: UInt64
    /// The fraction's digits after the 18th (ASCII), without trailing zeros; nil when
    /// there are none, as for any real clock, so that an instant holds no reference.
    private let finerDigits: [UInt8]?

    /// What every date that does not parse denotes: before every date that does.
    package static let unparsed = DateInstant(seconds: .min, fraction: 0, finerDigits: nil)

    private init(seconds: Int64, fraction: UInt64, finerDigits: [UInt8]?) {
        self.seconds = seconds
        self.fraction = fraction
        self.finerDigits = finerDigits
    }

    /// The instant `date` denotes, or `unparsed`.
    package init(_ date: String) {
        // A native string's bytes are contiguous: read in place, copied only for a bridged one.
        let parsed = date.utf8.withContiguousStorageIfAvailable { DateInstant(utf8: $0) }
            ?? Array(date.utf8).withUnsafeBufferPointer { DateInstant(utf8: $0) }
        self = parsed ?? .unparsed
    }

    /// How far a date may be after the clock of whoever reads it and still count:
    /// 5 minutes, for a producer's clock a correction has since set back.
    package static let allowedLeadSeconds: Int64 = 300

    /// The instant `millisecondsSince1970` milliseconds after 1970: a clock's reading.
    package init(millisecondsSince1970 milliseconds: Int64) {
        // Rounded down, so that the fraction is never negative.
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        self.init(seconds: seconds, fraction: UInt64(milliseconds - seconds * 1000) * 1_000_000_000_000_000, finerDigits: nil)
    }

    /// The instant as "newest" and the age of what waits count it when read at `now`
    /// (Format.md §12.2): itself, or `unparsed` when it is more than ``allowedLeadSeconds``
    /// after `now`, so that a date from the future is older than every date that counts.
    package func asRead(at now: DateInstant) -> DateInstant {
        guard isParsed, now.isParsed else { return self }
        // `seconds` of a date is at most that of 9999-12-31, so the sum cannot overflow.
        let limit = DateInstant(seconds: now.seconds + Self.allowedLeadSeconds, fraction: now.fraction, finerDigits: now.finerDigits)
        return limit < self ? .unparsed : self
    }

    /// Whether the date parsed.
    package var isParsed: Bool { seconds != .min }

    /// Whole seconds since 1970 (`Int64.min` for a date that does not parse), and the
    /// fraction's first 18 digits in units of 10⁻¹⁸ s: what a `Date` is made from.
    package var secondsSince1970: (whole: Int64, attoseconds: UInt64) { (seconds, fraction) }

    /// The instant in whole milliseconds since 1970 (finer digits dropped), or nil for a
    /// date that does not parse: the age of what waits, as monitoring shows it.
    package var millisecondsSince1970: Int64? {
        isParsed ? seconds * 1000 + Int64(fraction / 1_000_000_000_000_000) : nil
    }

    package static func < (a: DateInstant, b: DateInstant) -> Bool {
        if a.seconds != b.seconds { return a.seconds < b.seconds }
        if a.fraction != b.fraction { return a.fraction < b.fraction }
        // Digits without trailing zeros: a shorter run that is a prefix is the smaller number.
        guard let finer = b.finerDigits else { return false }
        return (a.finerDigits ?? []).lexicographicallyPrecedes(finer)
    }

    /// The instant the UTF-8 bytes of a date denote, or nil if they do not parse.
    package init?(utf8 text: UnsafeBufferPointer<UInt8>) {
        // `YYYY-MM-DDTHH:MM:SS` has fixed places: read them where they stand.
        guard text.count >= 20, text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"),
              text[10] == UInt8(ascii: "T"), text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
              let year = Self.number(text, at: 0, width: 4), let month = Self.number(text, at: 5, width: 2),
              let day = Self.number(text, at: 8, width: 2), let hour = Self.number(text, at: 11, width: 2),
              let minute = Self.number(text, at: 14, width: 2), let second = Self.number(text, at: 17, width: 2),
              (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day),
              hour <= 23, minute <= 59, second <= 59 else { return nil }
        var at = 19

        var fraction: UInt64 = 0
        var finerDigits: [UInt8]? = nil
        if text[at] == UInt8(ascii: ".") {
            at += 1
            let start = at
            while at < text.count, text[at] &- 0x30 < 10 {
                if at - start < 18 { fraction = fraction &* 10 &+ UInt64(text[at] &- 0x30) }
                at += 1
            }
            guard at > start else { return nil }
            for _ in min(at - start, 18)..<18 { fraction &*= 10 }
            var end = at
            while end > start + 18, text[end - 1] == UInt8(ascii: "0") { end -= 1 }
            if end > start + 18 { finerDigits = Array(text[(start + 18)..<end]) }
        }

        var offsetSeconds: Int64 = 0
        if at + 1 == text.count, text[at] == UInt8(ascii: "Z") {
            at += 1
        } else {
            // `+HH:MM` or `-HH:MM`, and nothing after it.
            guard at + 6 == text.count, text[at] == UInt8(ascii: "+") || text[at] == UInt8(ascii: "-"), text[at + 3] == UInt8(ascii: ":"),
                  let offsetHours = Self.number(text, at: at + 1, width: 2), let offsetMinutes = Self.number(text, at: at + 4, width: 2),
                  offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (text[at] == UInt8(ascii: "-") ? -1 : 1)
        }

        let days = Self.daysSince1970(year: year, month: month, day: day)
        self.init(seconds: days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds,
                  fraction: fraction, finerDigits: finerDigits)
    }

    /// The decimal number in `width` ASCII digits at `start`, or nil if any is not a digit.
    @inline(__always)
    private static func number(_ text: UnsafeBufferPointer<UInt8>, at start: Int, width: Int) -> Int64? {
        var value: Int64 = 0
        for index in start..<(start + width) {
            let digit = text[index] &- 0x30
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
        }
        return value
    }

    private static func days(inMonth month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
    /// (Howard Hinnant's `days_from_civil`, as `Timestamp` uses its inverse).
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
