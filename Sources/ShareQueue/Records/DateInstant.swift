/// The instant a record's `date` denotes: what "newest" compares when a drain
/// coalesces records of one key and when the store keeps the latest of each.
///
/// A date is read as RFC 3339's `date-time`: `YYYY-MM-DD`, `T`, `HH:MM:SS`, an
/// optional `.` and fraction of one or more digits, then `Z` or an offset
/// `+HH:MM` / `-HH:MM` (`T` and `Z` in either case). Fields are in range (months
/// 01-12, days as the month has them in the Gregorian calendar, hours 00-23,
/// minutes 00-59, seconds 00-60, where 60, a leap second, is counted as second 00
/// of the next minute, as POSIX time counts it). The offset is applied, and
/// instants compare exactly, whatever the number of fraction digits
/// (`10:00:00.000Z` is older than `10:00:00.0001Z`, and `.5` equals `.500`).
///
/// A date that does not parse this way is older than every date that does, and
/// two such dates are equal: the caller's tie rule (the record appended last)
/// decides between them.
///
/// Pure arithmetic over bytes, with no calendar and no allocation for a fraction
/// of up to 18 digits, since it runs once per record when a drain coalesces.
package struct DateInstant: Comparable, Sendable {
    /// Whole seconds since 1970-01-01T00:00:00Z; `Int64.min` for a date that does not parse.
    private let seconds: Int64
    /// The fraction's first 18 digits, in units of 10⁻¹⁸ s.
    private let fraction: UInt64
    /// The fraction's digits after the 18th (ASCII), without trailing zeros: empty for any real clock.
    private let finerDigits: [UInt8]

    /// What every date that does not parse denotes: before every date that does.
    package static let unparsed = DateInstant(seconds: .min, fraction: 0, finerDigits: [])

    private init(seconds: Int64, fraction: UInt64, finerDigits: [UInt8]) {
        self.seconds = seconds
        self.fraction = fraction
        self.finerDigits = finerDigits
    }

    /// The instant `date` denotes, or `unparsed`.
    package init(_ date: String) {
        var text = date
        self = text.withUTF8 { DateInstant(utf8: $0) ?? .unparsed }
    }

    /// Whether the date parsed.
    package var isParsed: Bool { seconds != .min }

    package static func < (a: DateInstant, b: DateInstant) -> Bool {
        if a.seconds != b.seconds { return a.seconds < b.seconds }
        if a.fraction != b.fraction { return a.fraction < b.fraction }
        // Digits without trailing zeros: a shorter run that is a prefix is the smaller number.
        return a.finerDigits.lexicographicallyPrecedes(b.finerDigits)
    }

    private init?(utf8 text: UnsafeBufferPointer<UInt8>) {
        var at = 0
        func number(_ width: Int) -> Int64? {
            guard at + width <= text.count else { return nil }
            var value: Int64 = 0
            for byte in text[at..<(at + width)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            at += width
            return value
        }
        func take(_ byte: UInt8, or other: UInt8? = nil) -> UInt8? {
            guard at < text.count, text[at] == byte || text[at] == other else { return nil }
            at += 1
            return text[at - 1]
        }
        let colon = UInt8(ascii: ":"), dash = UInt8(ascii: "-")
        guard let year = number(4), take(dash) != nil, let month = number(2), take(dash) != nil, let day = number(2),
              take(UInt8(ascii: "T"), or: UInt8(ascii: "t")) != nil,
              let hour = number(2), take(colon) != nil, let minute = number(2), take(colon) != nil, let second = number(2),
              (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day),
              hour <= 23, minute <= 59, second <= 60 else { return nil }

        var fraction: UInt64 = 0
        var fractionDigits = 0
        var finerDigits: [UInt8] = []
        if take(UInt8(ascii: ".")) != nil {
            let start = at
            while at < text.count, (0x30...0x39).contains(text[at]) {
                if fractionDigits < 18 {
                    fraction = fraction * 10 + UInt64(text[at] - 0x30)
                    fractionDigits += 1
                } else {
                    finerDigits.append(text[at])
                }
                at += 1
            }
            guard at > start else { return nil }
            for _ in fractionDigits..<18 { fraction *= 10 }
            while finerDigits.last == UInt8(ascii: "0") { finerDigits.removeLast() }
        }

        var offsetSeconds: Int64 = 0
        if take(UInt8(ascii: "Z"), or: UInt8(ascii: "z")) == nil {
            guard let sign = take(UInt8(ascii: "+"), or: dash), let offsetHours = number(2), take(colon) != nil,
                  let offsetMinutes = number(2), offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (sign == dash ? -1 : 1)
        }
        guard at == text.count else { return nil }

        let days = Self.daysSince1970(year: year, month: month, day: day)
        self.init(seconds: days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds,
                  fraction: fraction, finerDigits: finerDigits)
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
