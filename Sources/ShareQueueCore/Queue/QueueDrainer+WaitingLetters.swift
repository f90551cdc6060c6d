import ShareQueueSystem

/// Putting back, without being asked, the dead letters that wait for another user (Format §13).
///
/// A record whose copy is in a folder, or is a file, that another user owns and the drain may not read
/// is no damage, and must not hold the records after it: the drain moves it to the dead letters marked
/// as waiting, and each later drain looks again.
extension QueueDrainer {
    /// Puts back at the end of the queue each letter of `dead-letters.waiting` that no longer needs to wait:
    /// its copies are in `attachments`, readable, or were brought back from a folder moved aside (or are
    /// missing from every folder, all readable: the drain then sets the record aside). Each is appended again
    /// as `--requeue-dead` appends a letter, then its line overwritten with spaces; a file left with no letter
    /// is removed. Runs under the drain lock before anything is delivered, so that the same drain delivers them.
    ///
    /// A drain killed between the append and the overwrite puts the letter back twice: delivered twice at
    /// worst, never lost. Letters that still wait cost a look at their copies each drain, never an append.
    /// - Returns: how many were put back.
    /// - Throws: a failure that proves nothing (see ``ReadFailure``), or one of the append.
    func putBackWaitingLetters() throws(ShareQueueError) -> Int {
        let name = QueueLayout.deadLettersWaiting
        // Anything but the drain's own regular file there was moved aside at its start.
        guard let status = try directory.status(of: name), status.isRegularFile else { return 0 }
        let letters = DeadLetters(directory: directory, onEvent: onEvent)
        let store = AttachmentStore(directory: directory), checked = CheckedFiles(), options = options, onEvent = onEvent, directory = directory
        var appender: QueueAppender?
        var count = 0, left = 0
        let skipped = try letters.forEachLetter(in: name) { payload, line throws(ShareQueueError) in
            guard let record = try? Record(jsonBytes: payload) else { left += 1; return }
            let waiting = try store.waitingReason(record.attachments ?? [], of: record.id, options: options, checked: checked) { copy in
                onEvent(AttachmentStore.restoredEvent(copy, of: record.id, in: directory))
            }
            guard waiting == nil else { left += 1; return }
            if appender == nil {
                // Put back as it was taken, whatever limit its producer used.
                var appendOptions = AppendOptions()
                appendOptions.maxRecordBytes = Frame.maximumPayloadSize
                appendOptions.lockTimeoutSeconds = max(options.waitSeconds, QueueLock.minimumSealWait)
                appender = try QueueAppender(directory: directory, options: appendOptions)
            }
            // A letter put back is its key's newest record: the key's published entry no longer names it.
            try appender!.appendStored([payload], forgetting: record.key.map { [ByteKey($0)] } ?? [])
            try letters.blank([line], in: name)
            onEvent(.waitingRecordPutBack(id: record.id))
            count += 1
        }
        // Only drains write the file, under the drain lock this one holds: with no letter left, it goes.
        if left == 0 && skipped == 0 { try? directory.folder.remove(name) }
        return count
    }
}
