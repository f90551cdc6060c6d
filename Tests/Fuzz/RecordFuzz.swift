// Fuzz target "record": the input is a stored record's JSON, as a frame's
// payload or a dead letter holds it.
//
// Both ways of reading a record must agree (one rule set, used by both
// sides): what `Record(jsonBytes:)` accepts, `RecordSummary` accepts with the
// same id, date and key; what the summary accepts and the full read refuses
// must have attachments, the one part only the full read checks. A record
// read back from its own encoding is the same record, byte for byte. The
// summary's shortcut for records in the encoder's shape agrees with its full reading.

import ShareQueueSystem

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecord(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let summary = try? RecordSummary(jsonBytes: input)
    let record = try? Record(jsonBytes: input)
    // The one-pass reading of records in the encoder's shape only accelerates the full reading.
    let fullSummary = try? RecordSummary(checkingInFull: input)
    Fuzz.check((summary == nil) == (fullSummary == nil), "RecordSummary's shortcut changed its verdict")
    if let summary, let fullSummary {
        Fuzz.check(summary.idText == fullSummary.idText && summary.dateText == fullSummary.dateText && summary.keyText == fullSummary.keyText
                   && summary.hasAttachments == fullSummary.hasAttachments && summary.spansLines == fullSummary.spansLines,
                   "RecordSummary's shortcut read other fields")
    }
    if let record {
        guard let summary else { fatalError("invariant broken: Record accepts what RecordSummary refuses") }
        Fuzz.check(summary.id == record.id && summary.date == record.date && summary.key == record.key,
                   "Record and RecordSummary read different id, date or key")
        let encoded = record.jsonLine
        let again: Record
        do { again = try Record(jsonBytes: encoded) } catch { fatalError("invariant broken: a record's own encoding is refused: \(error)") }
        Fuzz.check(again.jsonLine == encoded, "a record read back from its encoding encodes differently")
        Fuzz.check(again.id == record.id && again.date == record.date && again.key == record.key, "re-read record differs")
    } else if let summary {
        Fuzz.check(summary.hasAttachments, "RecordSummary accepts what Record refuses, and there are no attachments to blame")
    }
    return 0
}
