/// ISO-8601 UTC timestamps with milliseconds, `2026-11-29T14:52:20.123Z`,
/// formatted by arithmetic so that an append needs no calendar or locale.
import ShareQueueSystem
package enum Timestamp {
    package static func now() -> String { format(millisecondsSince1970: Host.millisecondsSince1970()) }

    /// `now()` for a caller that asks often: formats only when the millisecond changes.
    struct Cache {
        private var last: (milliseconds: Int64, text: String) = (-1, "")

        mutating func now() -> String {
            let milliseconds = Host.millisecondsSince1970()
            if milliseconds != last.milliseconds { last = (milliseconds, Timestamp.format(millisecondsSince1970: milliseconds)) }
            return last.text
        }
    }

    /// The timestamp of a moment in the years 1 to 9999.
    package static func format(millisecondsSince1970 ms: Int64) -> String {
        // Rounded down, so that a moment before 1970 has a positive millisecond and second of the day.
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = ms - seconds * 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Days to civil date (Howard Hinnant's algorithm), valid for the years 1 to 9999.
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        // Outside the years 1 to 9999 the fields may not fit their widths: the general way, then.
        guard (0...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else {
            func pad(_ value: Int64, _ width: Int) -> String {
                let digits = String(value)
                return String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millis, 3))Z"
        }
        // Every field fits its width: written straight into the string, digit by digit.
        return String(unsafeUninitializedCapacity: 24) { text in
            var at = 0
            func put(_ value: Int64, _ width: Int) {
                var rest = value
                for i in stride(from: width - 1, through: 0, by: -1) {
                    text[at + i] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                at += width
            }
            func put(_ separator: Unicode.Scalar) {
                text[at] = UInt8(ascii: separator)
                at += 1
            }
            put(year, 4); put("-"); put(month, 2); put("-"); put(day, 2); put("T")
            put(secondOfDay / 3600, 2); put(":"); put(secondOfDay / 60 % 60, 2); put(":"); put(secondOfDay % 60, 2); put(".")
            put(millis, 3); put("Z")
            return at
        }
    }
}
