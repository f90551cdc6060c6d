import ShareQueueCore

/// A queue's status in the Prometheus text exposition format (version 0.0.4),
/// for node_exporter's textfile collector or any scraper of that format.
///
/// Every metric is a gauge named `sharequeue_…` in base units (bytes, seconds),
/// with one label, `queue`, the queue directory's path, so that one file can
/// hold the metrics of several queues. Built from ``QueueStatus`` alone: it
/// reads nothing that `--status` does not.
struct QueueMetrics {
    /// The queue directory's absolute path, byte for byte: the `queue` label.
    let queue: [UInt8]
    let status: QueueStatus
    /// The time the ages are measured at, in milliseconds since 1970.
    let nowMilliseconds: Int64
    /// Rows in the `--store` database, when one was named.
    var storeRows: Int? = nil

    /// One metric family: its name, its help text, and its value as the format spells it.
    private typealias Family = (name: String, help: String, value: String)

    /// The exposition: for each metric, `# HELP`, `# TYPE` and one sample, each line ending in a newline.
    var text: String {
        let label = "{queue=\"\(Self.escapedLabelValue(queue))\"}"
        return families.map { family in
            "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) gauge\n\(family.name)\(label) \(family.value)\n"
        }.joined()
    }

    private var families: [Family] {
        var families: [Family] = [
            ("sharequeue_pending_records", "Records waiting to be delivered.", String(status.pending)),
            ("sharequeue_pending_bytes", "Bytes of segment files not yet delivered, frames included.", String(status.pendingBytes)),
        ]
        if let age = oldestPendingAgeMilliseconds {
            families.append(("sharequeue_oldest_pending_age_seconds",
                             "Seconds since the earliest date among the pending records; 0 when none is pending.", Self.seconds(age)))
        }
        families += [
            ("sharequeue_sealed_segments", "Sealed segments waiting, left by a drain that stopped early or failed.", String(status.sealedSegments)),
            ("sharequeue_quarantined_regions", "Damaged regions set aside in the quarantine file, and segments kept whole beside it.",
             String(status.quarantined)),
            ("sharequeue_quarantined_bytes", "Bytes of the quarantine file and of the segments kept whole beside it.",
             String(status.quarantinedBytes)),
            ("sharequeue_dead_letters", "Records refused too often, waiting in the dead-letter file.", String(status.deadLetters)),
            ("sharequeue_waiting_letters", "Dead letters that wait for another user's folder or copy the drain may not read; a drain puts them back once it may.", String(status.waitingLetters)),
            ("sharequeue_id_conflict_letters", "Dead letters a store did not take because it already held their id with other content.",
             String(status.idConflictLetters)),
            ("sharequeue_rejected_files", "Files moved aside unread as rejected-*, found where the queue's own should be.", String(status.rejectedFiles)),
            ("sharequeue_attachment_files", "Files in the queue's attachments folder.", String(status.attachments)),
            ("sharequeue_attachment_bytes", "Bytes of the files in the queue's attachments folder.", String(status.attachmentBytes)),
        ]
        if let last = status.lastDrainSeconds {
            families.append(("sharequeue_last_drain_timestamp_seconds",
                             "When a drain last recorded progress (the checkpoint's modification time), in seconds since 1970.", String(last)))
        }
        if let storeRows {
            families.append(("sharequeue_store_rows", "Records in the SQLite store named with --store.", String(storeRows)))
        }
        return families
    }

    /// 0 with nothing pending; nil when no pending record's date is a time
    /// (a producer may write any string there), so that no made-up age is shown.
    private var oldestPendingAgeMilliseconds: Int64? {
        guard let oldest = status.oldest else { return 0 }
        // Judged as the status judged it, with the same reading of the clock: a date from the future is none.
        guard let date = DateInstant(oldest).asRead(at: DateInstant(millisecondsSince1970: nowMilliseconds)).millisecondsSince1970 else { return nil }
        // A producer's clock ahead of the host's is not a negative wait.
        return max(0, nowMilliseconds - date)
    }

    /// Milliseconds as seconds with three decimals, in the plain notation the format's parsers all take.
    private static func seconds(_ milliseconds: Int64) -> String {
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// A path as a label value, as the format writes it. A label value is UTF-8 text, and a path
    /// is bytes: valid UTF-8 stays as it is, `\` becomes `\\` and each byte that is not UTF-8
    /// `\xNN` (two lower-case hex digits), so that two paths never share a label, as they would if
    /// bad bytes were replaced with U+FFFD. Then backslash, double quote and line feed are escaped
    /// as the format has it: the path `/q\` followed by the byte 0xFF is written `/q\\\\\\xff`.
    static func escapedLabelValue(_ path: [UInt8]) -> String {
        var escaped = ""
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = path.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let encoded):
                offset += encoded.count
                switch Unicode.UTF8.decode(encoded) {
                case "\\": escaped += "\\\\\\\\"
                case "\"": escaped += "\\\""
                case "\n": escaped += "\\n"
                case let scalar: escaped.unicodeScalars.append(scalar)
                }
            case .error(let length):
                for byte in path[offset..<(offset + length)] {
                    let hex = String(byte, radix: 16)
                    escaped += "\\\\x" + (hex.count == 1 ? "0" : "") + hex
                }
                offset += length
            case .emptyInput:
                return escaped
            }
        }
    }
}
