/// Reading a record's date back as a moment, for the age of what waits.
///
/// A record's `date` is not checked when it is stored (a foreign producer may
/// write any string), so the reading is strict and answers nil for anything
/// that is not an RFC 3339 date and time, rather than guessing.
extension Timestamp {
    /// The moment `text` names, in milliseconds since 1970, or nil when it is
    /// not `YYYY-MM-DDTHH:MM:SS`, an optional fraction of a second, and `Z` or
    /// an offset `+HH:MM` / `-HH:MM` (the form ``now()`` writes is one of these).
    package static func millisecondsSince1970(parsing text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var at = 0
        func digits(_ count: Int) -> Int64? {
            guard at + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[at..<(at + count)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            at += count
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard at < bytes.count, characters.utf8.contains(bytes[at]) else { return false }
            at += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2), expect("Tt"),
              let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61 else { return nil }
        var milliseconds: Int64 = 0
        if expect(".") {
            // Any number of digits; those past the millisecond are dropped.
            var scale: Int64 = 100
            let start = at
            while let digit = digits(1) {
                milliseconds += digit * scale
                scale /= 10
            }
            guard at > start else { return nil }
        }
        var offsetMinutes: Int64 = 0
        if !expect("Zz") {
            let sign: Int64
            if expect("+") { sign = 1 } else if expect("-") { sign = -1 } else { return nil }
            guard let offsetHours = digits(2), expect(":"), let offsetRest = digits(2), offsetHours < 24, offsetRest < 60 else { return nil }
            offsetMinutes = sign * (offsetHours * 60 + offsetRest)
        }
        guard at == bytes.count else { return nil }
        let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + (minute - offsetMinutes) * 60 + second
        return seconds * 1000 + milliseconds
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Civil date to days since 1970-01-01 (Howard Hinnant's algorithm, the
    /// inverse of the one ``format(millisecondsSince1970:)`` uses).
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
