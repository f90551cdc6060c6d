import ShareQueue

// TEMPORARY stand-in, until the library's QueueAppender has appendIfChanged:
// it appends every time. Delete this file once the library has it; the
// package's test then checks that an unchanged publish appends nothing.
extension QueueAppender {
    func appendIfChanged(_ draft: RecordDraft) throws(ShareQueueError) -> (id: String, appended: Bool) {
        (try append(draft), true)
    }
}
