import Foundation
import Testing
@testable import ShareQueueCore

/// The instant a record's date denotes: what "newest" compares for `--coalesce` and `latest`.
@Suite("Date instants")
struct DateInstantTests {
    func instant(_ date: String) -> DateInstant { DateInstant(date) }

    @Test("Offsets are applied", arguments: [
        ("2026-11-29T10:00:00.000+02:00", "2026-11-29T08:00:00.000Z"),
        ("2026-11-29T04:30:00-05:30", "2026-11-29T10:00:00Z"),
        ("2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00Z"),
        ("2024-02-29T23:00:00-01:00", "2024-03-01T00:00:00Z"),
        ("2026-11-29T10:00:00-00:00", "2026-11-29T10:00:00Z"),
    ])
    func offsetsApplied(_ pair: (String, String)) {
        #expect(instant(pair.0) == instant(pair.1))
        #expect(instant(pair.0).isParsed)
    }

    @Test("Ten o'clock at +02:00 is older than nine o'clock UTC")
    func offsetOrder() {
        #expect(instant("2026-11-29T10:00:00.000+02:00") < instant("2026-11-29T09:00:00.000Z"))
        #expect(instant("2026-11-29T09:00:00.000-02:00") > instant("2026-11-29T10:00:00.000Z"))
    }

    @Test("Fractions compare by value, whatever their number of digits")
    func fractionDigits() {
        #expect(instant("2026-11-29T10:00:00.000Z") < instant("2026-11-29T10:00:00.0001Z"))
        #expect(instant("2026-11-29T10:00:00.5Z") == instant("2026-11-29T10:00:00.500000Z"))
        #expect(instant("2026-11-29T10:00:00Z") == instant("2026-11-29T10:00:00.000Z"))
        #expect(instant("2026-11-29T10:00:00.999Z") < instant("2026-11-29T10:00:01Z"))
        // Past 18 digits, still exact.
        #expect(instant("2026-11-29T10:00:00.0000000000000000001Z") > instant("2026-11-29T10:00:00.000Z"))
        #expect(instant("2026-11-29T10:00:00.10000000000000000001Z") > instant("2026-11-29T10:00:00.1Z"))
        #expect(instant("2026-11-29T10:00:00.1000000000000000000100Z") == instant("2026-11-29T10:00:00.10000000000000000001Z"))
        #expect(instant("2026-11-29T10:00:00.100000000000000000011Z") > instant("2026-11-29T10:00:00.10000000000000000001Z"))
        #expect(instant("2026-11-29T10:00:00.99999999999999999999999Z") < instant("2026-11-29T10:00:01Z"))
    }

    @Test("A date that does not parse is older than every date that does, and equal to any other such", arguments: [
        "not a date", "", "2026-11-29", "2026-11-29T10:00:00", "2026-11-29 10:00:00Z", "2026-11-29T10:00Z",
        "2026-11-29T10:00:00.Z", "2026-11-29T10:00:00+0200", "2026-11-29T10:00:00+02", "2026-11-29T10:00:00.000Z ",
        "2026-11-29T10:00:00.000Z\n", " 2026-11-29T10:00:00Z", "2026-02-30T10:00:00Z", "2023-02-29T10:00:00Z",
        "1900-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-11-00T00:00:00Z",
        "2026-11-29T24:00:00Z", "2026-11-29T10:60:00Z", "2026-11-29T10:00:61Z", "2026-11-29T10:00:00+24:00",
        "2026-11-29T10:00:00+02:60", "+2026-11-29T10:00:00Z", "12026-11-29T10:00:00Z", "２０２６-11-29T10:00:00Z",
        "2026-11-29T10:00:00.000\u{0}Z", "2026-11-29T10:00:00,5Z", "2026-11-29t10:00:00Z", "2026-11-29T10:00:00z",
        "2016-12-31T23:59:60Z", "2016-12-31T23:59:60.5Z",
    ])
    func unparsedIsOldest(_ date: String) {
        #expect(!instant(date).isParsed)
        #expect(instant(date) == .unparsed)
        #expect(instant(date) == instant("not a date"))
        #expect(instant(date) < instant("0000-01-01T00:00:00Z"))
        #expect(instant(date) < instant("1970-01-01T00:00:00Z"))
    }

    @Test("Calendar edges: leap days, the first and last years")
    func calendarEdges() {
        #expect(instant("2024-02-29T00:00:00Z").isParsed)
        #expect(instant("2000-02-29T00:00:00Z").isParsed)
        #expect(instant("0000-01-01T00:00:00Z") < instant("0000-01-01T00:00:00.000000000000000000001Z"))
        #expect(instant("9999-12-31T23:59:59.999Z") > instant("2026-11-29T10:00:00Z"))
        #expect(instant("0000-01-01T00:00:00+23:59") < instant("0000-01-01T00:00:00Z"))
        #expect(instant("1969-12-31T23:59:59.999Z") < instant("1970-01-01T00:00:00Z"))
    }

    @Test("Agrees with the timestamps this package writes, over the years 1 to 9999")
    func agreesWithTimestamps() {
        var generator = SystemRandomNumberGenerator()
        let first = Int64(-62_135_596_800_000), last = Int64(253_402_300_799_999)
        var moments = (0..<2000).map { _ in Int64.random(in: first...last, using: &generator) }
        moments += [first, last, 0, -1, 1, 951_782_400_000, 4_107_542_400_000]
        for moment in moments {
            let date = Timestamp.format(millisecondsSince1970: moment)
            #expect(instant(date).isParsed, "\(date)")
            if moment < last { #expect(instant(date) < instant(Timestamp.format(millisecondsSince1970: moment + 1)), "\(date)") }
        }
        let sorted = moments.sorted()
        #expect(sorted.map { instant(Timestamp.format(millisecondsSince1970: $0)) } == moments.map { instant(Timestamp.format(millisecondsSince1970: $0)) }.sorted())
        // Against Foundation's own reading, with an offset.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for moment in moments.prefix(200) where moment > 0 {
            let date = Timestamp.format(millisecondsSince1970: moment)
            let parsed = formatter.date(from: date)!
            formatter.timeZone = TimeZone(secondsFromGMT: -(5 * 3600 + 1800))
            let shifted = formatter.string(from: parsed)
            formatter.timeZone = TimeZone(secondsFromGMT: 0)
            #expect(shifted.hasSuffix("-05:30"))
            #expect(instant(shifted) == instant(date), "\(shifted) vs \(date)")
        }
    }
}
