import Foundation
import Testing
@testable import ShareQueueCore

@Suite("Record ids")
struct RecordIDTests {
    /// The version digit of a UUID string, and its variant bits' digit.
    func version(_ id: String) -> Character { id[id.index(id.startIndex, offsetBy: 14)] }
    func variant(_ id: String) -> Character { id[id.index(id.startIndex, offsetBy: 19)] }

    @Test("Ids made by one appender are version 7, in the order made, within the millisecond too")
    func appendedIDsAreTimeOrdered() throws {
        let scratch = TemporaryDirectory()
        var options = AppendOptions()
        options.synchronize = false
        let appender = try QueueAppender(directory: try QueueDirectory(path: scratch.file("queue")), options: options)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        // 3,000 appends: many share a millisecond, so the order cannot come from the clock alone.
        let ids = try (0..<3000).map { try appender.append(RecordDraft(.text("record \($0)"), source: "test")) }
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { RecordID.isValid($0) && version($0) == "7" && "89AB".contains(variant($0)) })
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
        // The first 48 bits are the Unix time in milliseconds.
        let milliseconds = Int64(ids[0].prefix(8) + ids[0].dropFirst(9).prefix(4), radix: 16) ?? -1
        #expect(milliseconds >= before && milliseconds <= after)
    }

    @Test("Ids keep increasing while the clock stands still or steps back, and past a full counter")
    func idsIncreaseWithoutTheClock() {
        var generator = RecordID.Generator()
        // 5,000 ids in one millisecond overflow the 12-bit counter; then the clock goes back a second.
        let ids = (0..<5000).map { _ in generator.next(milliseconds: 1_800_000_000_000) }
            + (0..<100).map { _ in generator.next(milliseconds: 1_799_999_999_000) }
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
        #expect(ids.allSatisfy { RecordID.isValid($0) && version($0) == "7" && "89AB".contains(variant($0)) })
        #expect(ids[0].hasPrefix("01A3185C-5000-7"))
    }

    @Test("An id's text is that of the same 16 bytes as Foundation writes a UUID")
    func textMatchesFoundation() {
        var values: [(UInt64, UInt64)] = [(0, 0), (~0, ~0), (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210), (0x9A9A_9A9A_9A9A_9A9A, 0xA9A9_A9A9_A9A9_A9A9)]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 { values.append((generator.next(), generator.next())) }
        for (high, low) in values {
            let b = [56, 48, 40, 32, 24, 16, 8, 0].map { UInt8(truncatingIfNeeded: high >> $0) }
                + [56, 48, 40, 32, 24, 16, 8, 0].map { UInt8(truncatingIfNeeded: low >> $0) }
            let uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
            #expect(RecordID.text(of: (high, low)) == uuid.uuidString)
        }
    }
}
