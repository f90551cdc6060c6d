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
        let fields = Fields(millisecondsSince1970: ms)
        // Outside the years 1 to 9999 the fields may not fit their widths: the general way, then.
        guard fields.fitWidths else {
            func pad(_ value: Int64, _ width: Int) -> String {
                let digits = String(value)
                return String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
            return "\(pad(fields.year, 4))-\(pad(fields.month, 2))-\(pad(fields.day, 2))T\(pad(fields.secondOfDay / 3600, 2)):\(pad(fields.secondOfDay / 60 % 60, 2)):\(pad(fields.secondOfDay % 60, 2)).\(pad(fields.millis, 3))Z"
        }
        return String(unsafeUninitializedCapacity: Fields.width) { fields.write(into: $0) }
    }

    /// Appends the timestamp of a moment in the years 1 to 9999 to `out`, the bytes of `format(millisecondsSince1970:)`,
    /// without making a string: a typed append writes one for every date it holds.
    package static func append(millisecondsSince1970 ms: Int64, to out: inout [UInt8]) {
        let fields = Fields(millisecondsSince1970: ms)
        guard fields.fitWidths else {
            out.append(contentsOf: format(millisecondsSince1970: ms).utf8)
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Fields.width) { text in
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<fields.write(into: text)]))
        }
    }

    /// A moment's date and time of day, UTC.
    private struct Fields {
        /// The bytes of a timestamp whose fields fit their widths.
        static let width = 24
        let year, month, day, secondOfDay, millis: Int64

        init(millisecondsSince1970 ms: Int64) {
            // Rounded down, so that a moment before 1970 has a positive millisecond and second of the day.
            let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
            millis = ms - seconds * 1000
            let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
            secondOfDay = seconds - days * 86_400
            // Days to civil date (Howard Hinnant's algorithm), valid for the years 1 to 9999.
            let z = days + 719_468
            let era = z / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        }

        /// Whether every field fits its width, as in the years 1 to 9999.
        var fitWidths: Bool { (0...9999).contains(year) && (1...12).contains(month) && (1...31).contains(day) }

        /// Writes the timestamp into `text`, digit by digit; the fields must fit their widths.
        /// - Returns: `width`, the bytes written.
        func write(into text: UnsafeMutableBufferPointer<UInt8>) -> Int {
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
