import Foundation
import Testing
@testable import ShareQueueCore

/// Two limits read off stored bytes, byte for byte: an attachment's `size` (digits only,
/// however many) and a dead letter's `error` (cut at 4096 bytes between characters).
@Suite("Stored limits")
struct StoredLimitTests {
    @Test("An attachment's size is digits only, however many; past Int64.max it reads as Int64.max",
          arguments: [("0", Int64(0)), ("007", 7), ("9223372036854775807", .max), ("9223372036854775808", .max),
                      ("99999999999999999999", .max), ("", nil), ("-0", nil), ("+1", nil), ("1e3", nil), ("1.0", nil), ("٣", nil)] as [(String, Int64?)])
    func attachmentSize(_ stored: String, _ expected: Int64?) {
        #expect(Attachment.size(stored: stored) == expected)
    }

    @Test("An error is cut at 4096 bytes, never inside a character: two, three and four bytes long, straddling the limit",
          arguments: ["é", "€", "😀"])
    func errorCut(_ character: String) {
        for before in 4090...4096 {
            let error = String(repeating: "x", count: before) + String(repeating: character, count: 4)
            let cut = DeadLetters.cut(error)
            #expect(cut.utf8.count <= 4096 && cut.utf8.count > 4096 - character.utf8.count, "\(before): \(cut.utf8.count)")
            #expect(error.hasPrefix(cut) && !cut.contains("\u{FFFD}"))
        }
        #expect(DeadLetters.cut("short") == "short")
    }
}
