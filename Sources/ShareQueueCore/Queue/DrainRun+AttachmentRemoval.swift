/// Which of the queue's attachment copies a drain may remove: a file goes with the last
/// record that names it, and never while a dead letter names it.
extension DrainRun {
    /// Removes the queue's copies of `files`, whose record the checkpoint at `position` now
    /// shows done, except those a later record or a dead letter names too.
    mutating func removeUnnamed(_ files: [Attachment], checkpoint position: DrainPosition) throws {
        guard !files.isEmpty else { return }
        if laterReferences == nil { try countReferences(after: position) }
        guard !keepsEveryAttachment else { return }
        let unnamed = files.filter { laterReferences?.counts[ByteKey($0.file)] ?? 0 <= 0 && !filesOfDeadLetters.contains(ByteKey($0.file)) }
        guard !unnamed.isEmpty else { return }
        // A checkpoint that a power cut took back would offer these records again without their files.
        try checkpoint.synchronize(.checkpointBeforeAttachmentRemoval)
        unnamed.forEach(attachments.remove)
    }

    /// A record now done no longer names its files, if it was one of those counted in `laterReferences`.
    mutating func forgetReferences(of files: [Attachment], endingAt end: DrainPosition) {
        guard let from = laterReferences?.from, end > from else { return }
        for file in files { laterReferences?.counts[ByteKey(file.file), default: 0] -= 1 }
    }

    /// Counts, once a drain, the records past `position` (the checkpoint) that name each
    /// attachment file, and notes the files the dead letters name; a letter that cannot be
    /// read might name any file, so then every file stays.
    private mutating func countReferences(after position: DrainPosition) throws {
        let references = try attachmentReferences()
        laterReferences = (position, references?.pending ?? [:])
        filesOfDeadLetters.formUnion(references?.deadLetters ?? [])
        if references == nil { keepsEveryAttachment = true }
    }

    /// What names the queue's attachment files, of those in `files` (all of them if nil): how many pending
    /// records name each, and which files dead letters name; nil if a dead letter cannot be read (it might name any).
    func attachmentReferences(to files: Set<ByteKey>? = nil) throws -> (pending: [ByteKey: Int], deadLetters: Set<ByteKey>)? {
        // Only the files asked about are held: the records and letters may name millions.
        func asked(_ attachment: Attachment) -> ByteKey? {
            let key = ByteKey(attachment.file)
            guard let files else { return key }
            return files.contains(key) ? key : nil
        }
        var pending: [ByteKey: Int] = [:]
        try QueueInspector(directory: directory).forEachPending(includingUnsealed: true) { drained in
            if drained.hasAttachments { drained.record.attachments?.compactMap(asked).forEach { pending[$0, default: 0] += 1 } }
        }
        var deadLetters: Set<ByteKey> = []
        let letters = DeadLetters(directory: directory, onEvent: drainer.onEvent)
        for file in [QueueLayout.deadLetters, QueueLayout.deadLettersRequeue, QueueLayout.deadLettersWaiting] {
            let unreadable = try letters.forEachRecord(in: file) { payload in
                (try? Record(jsonBytes: payload))?.attachments?.compactMap(asked).forEach { deadLetters.insert($0) }
            }
            if unreadable > 0 { return nil }
        }
        return (pending, deadLetters)
    }
}
