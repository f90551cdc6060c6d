/// Publishing the current value of a key: appending only what changed.
extension QueueAppender {
    /// Appends `draft` only if its content differs from that of the last record
    /// appended with its key, so that publishing an unchanged value wakes no host.
    ///
    /// Content is the kind, the text or compact JSON bytes, and the attachments'
    /// SHA-256 digests in order; the id, date, source and meta do not count. The
    /// check reads one small file in the queue's `keys` folder under the
    /// producers' lock, whatever is pending, so producers publishing to the same
    /// key at once neither both append the same content nor skip a change. It
    /// compares with what was appended, delivered or not: drains leave the
    /// folder alone. A plain `append(_:)` with the key makes the next publish append.
    ///
    /// With ``AppendOptions/synchronize`` on, the record is made durable while the
    /// lock is held, before the key's entry names it, so an append that publishes
    /// does not share a flush with other producers. With it off, a power cut may keep
    /// the entry and lose the record, and the next publish of that content appends nothing.
    /// - Parameter draft: The record's content and labels; it must have a key.
    /// - Returns: The new record's id and `appended: true`, or, if nothing
    ///   changed, the earlier record's id and `appended: false`.
    /// - Throws: `.invalidArgument` for a draft without a key, and what `append(_:)` throws.
    @discardableResult
    public func appendIfChanged(_ draft: RecordDraft) throws(ShareQueueError) -> (id: String, appended: Bool) {
        serial.lock()
        defer { serial.unlock() }
        guard let key = draft.key else {
            throw ShareQueueError(.invalidArgument, "appending only what changed needs a key: the last record of that key is what it compares with")
        }
        var buffers = EncodingBuffers()
        let ids = try encode([draft], into: &buffers)
        let frames = buffers.frames
        let stored = draft.storedContent
        let content = KeyIndex.contentDigest(kind: stored.kind, text: stored.text, json: stored.json, attachments: draft.attachments)
        return try withProducersLock { () throws(ShareQueueError) in
            let index = try KeyIndex(in: directory, creating: true)
            if let earlier = index?.entry(of: key), earlier.content == content { return (earlier.id, false) }
            // Forgotten first, so that a crash after the write leaves no entry naming older content.
            try forgetPublished([ByteKey(key)])
            let file = try writeLocked(frames)
            // Durable before the entry names it: an entry must never claim a record a power cut could lose.
            if options.synchronize { try synchronize(file) }
            index?.write(KeyIndex.Entry(id: ids[0], content: content), of: key)
            return (ids[0], true)
        }
    }
}
