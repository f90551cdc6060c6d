import Testing
@testable import ShareQueueCore

/// A record's date read back as a moment in milliseconds, for the age of the oldest
/// pending record: exactly what the formatter writes, offsets, and nothing else (Format.md 12.2).
@Suite("Reading dates back")
struct DateMillisecondsTests {
    private func milliseconds(_ text: String) -> Int64? { DateInstant(text).millisecondsSince1970 }

    @Test("Every moment the formatter writes reads back to itself",
          arguments: [Int64(0), 1, 999, 86_399_999, 951_782_400_001, 1_795_963_940_123, -1, -62_135_596_800_000, 253_402_300_799_999])
    func roundTrip(moment: Int64) {
        #expect(milliseconds(Timestamp.format(millisecondsSince1970: moment)) == moment)
    }

    @Test("Offsets and fractions of any length are read")
    func otherSpellings() {
        let moment: Int64 = 1_795_963_940_123  // 2026-11-29T14:52:20.123Z
        #expect(milliseconds("2026-11-29T15:52:20.123+01:00") == moment)
        #expect(milliseconds("2026-11-29T09:22:20.123-05:30") == moment)
        #expect(milliseconds("2026-11-29T14:52:20.123456789Z") == moment)
        #expect(milliseconds("2026-11-29T14:52:20Z") == moment - 123)
        #expect(milliseconds("2026-11-29T14:52:20.1Z") == moment - 23)
    }

    @Test("Anything else is no moment at all", arguments: [
        "", "yesterday", "2026-11-29", "2026-11-29T14:52:20", "2026-11-29T14:52:20.Z", "2026-11-29 14:52:20Z",
        "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-31T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T14:60:00Z",
        "2026-11-29T14:52:20+0100", "2026-11-29T14:52:20.123Z ", "+2026-11-29T14:52:20Z", "２026-11-29T14:52:20Z",
        "2026-11-29t14:52:20.123z", "2026-11-29T14:52:20.123z", "2026-12-31T23:59:60Z",
    ])
    func refused(text: String) {
        #expect(milliseconds(text) == nil)
    }
}
