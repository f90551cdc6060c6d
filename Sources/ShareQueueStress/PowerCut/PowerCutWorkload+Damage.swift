import Foundation
import ShareQueueCore

/// Workloads whose setup damages an acknowledged record on purpose: the drains must set
/// it aside, in `quarantine.log` or with its segment kept whole, and deliver every other.
extension PowerCutWorkload {
    static let damage: [PowerCutWorkload] = [
        PowerCutWorkload(name: "sealed-damage", summary: "a drain setting aside a record damaged in a sealed segment and delivering the rest, then another append and drain",
                         setup: { try sealWithDamage(&$0) },
                         traced: { context in
                             try context.drain()
                             try context.append(["after the damage"])
                             try context.drain()
                         }),
        PowerCutWorkload(name: "full-disk-keep", summary: "a drain on a full disk keeping a sealed segment with damage whole under its kept name, then another append and drain",
                         setup: { try sealWithDamage(&$0) },
                         traced: { context in
                             // Only the quarantine file cannot grow: the segment's records are still delivered.
                             try context.drain(extra: ["SHARE_QUEUE_FAULT": "write:ENOSPC:name=\(QueueLayout.quarantine)"])
                             try context.append(["after the full disk"])
                             try context.drain()
                         }),
    ]

    /// Appends four records, seals them with a drain that dies once it sealed, and flips bytes in the middle of the
    /// third one's text in the sealed segment: an acknowledged record a bad disk damaged.
    private static func sealWithDamage(_ context: inout PowerCutContext) throws {
        let text = "damaged " + String(repeating: "abcdefgh", count: 32)
        var damaged: [String] = []
        for words in [["one"], ["two"], [text], ["four"]] {
            let ids = try context.append(words)
            context.acknowledged += ids
            if words == [text] { damaged = ids }
        }
        context.damaged = damaged
        let sealing = try context.run("host-drain", ["--dir", context.queue, "--quiet"], extra: ["SHARE_QUEUE_CRASH_AT": "drain-sealed"])
        guard sealing.wasKilled else { throw PowerCutError("a drain told to die once it sealed exited with \(sealing.status)") }
        let segment = URL(fileURLWithPath: context.queue + "/" + QueueLayout.sealedName(1))
        var bytes = Array(try Data(contentsOf: segment))
        guard let start = PowerCutRecovery.firstOffset(of: Array(text.utf8), in: bytes) else {
            throw PowerCutError("the sealed segment does not hold the record to damage")
        }
        // Still text (no byte 00 or FF), so only the checksum tells.
        for offset in (start + text.utf8.count / 2)..<(start + text.utf8.count / 2 + 4) { bytes[offset] ^= 0x01 }
        try Data(bytes).write(to: segment)
    }
}
