/// What an append checks before it writes: sizes, and the drain's own rules on the very bytes.
extension QueueAppender {
    /// The frames of one append: each record framed, all but the last marked
    /// as continued, so that a reader delivers the batch whole or not at all.
    static func frames(of payloads: [[UInt8]], options: AppendOptions) throws(ShareQueueError) -> [UInt8] {
        var frames: [UInt8] = []
        for (index, payload) in payloads.enumerated() {
            try checkRecordSize(payload.count, options: options)
            Frame.append(payload: payload, to: &frames, last: index == payloads.count - 1)
        }
        try checkBatchSize(frames.count, records: payloads.count)
        return frames
    }

    static func checkRecordSize(_ length: Int, options: AppendOptions) throws(ShareQueueError) {
        let limit = min(options.maxRecordBytes, Frame.maximumPayloadSize)
        guard length <= limit else { throw ShareQueueError(.badData, "the record is \(length) bytes, above the limit of \(limit) bytes") }
    }

    /// The drain's own check, on the bytes to be written: what an append acknowledges, a drain delivers.
    static func checkStored(_ payload: [UInt8]) throws(ShareQueueError) {
        do { try Record.checkStored(payload) } catch {
            throw ShareQueueError(.badData, "a drain would refuse this record", underlying: error)
        }
    }

    /// Refuses an append of several records once their frames pass the limit (`bytes` may be those of the first records only).
    static func checkBatchSize(_ bytes: Int, records: Int) throws(ShareQueueError) {
        if records > 1 && bytes > Frame.maximumBatchSize {
            throw ShareQueueError(.badData, "the \(records) records are more than \(Frame.maximumBatchSize) bytes together, the limit for one atomic append; append them in parts")
        }
    }

    /// Checks drafts as `append` would, without touching any queue: for a
    /// producer that must refuse bad input before it opens (or creates) one.
    package static func check(_ drafts: [RecordDraft], options: AppendOptions = AppendOptions()) throws(ShareQueueError) {
        guard !drafts.isEmpty else { throw ShareQueueError(.noInput, "nothing to append") }
        var check = AppendCheck(options: options)
        for draft in drafts { try check.add(draft) }
    }
}
