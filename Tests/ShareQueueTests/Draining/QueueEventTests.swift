import Foundation
import Testing
import ShareQueueCore

/// Each event's words, checked here once: the tools print them as they are, and every other
/// test asserts on the event, a value, rather than on its English.
@Suite("Queue events")
struct QueueEventTests {
    static let words: [(QueueEvent, String)] = [
        (.damageSetAside(segment: "sealed-000000000002.log", offset: 64, length: 31, reason: "checksum mismatch"),
         "set aside 31 bytes at offset 64 of sealed-000000000002.log: checksum mismatch"),
        (.segmentKeptWhole(path: "/q/sealed-000000000002.log", keptAs: "/q/kept-sealed-000000000002.log"),
         "kept /q/sealed-000000000002.log whole as /q/kept-sealed-000000000002.log: its damaged data could not be copied to the quarantine file"),
        (.checkpointDamaged(path: "/q/checkpoint"),
         "the checkpoint (/q/checkpoint) is damaged; delivering from the oldest sealed segment again"),
        (.checkpointDoesNotFit(position: DrainPosition(segment: 9, offset: 120)),
         "the checkpoint (segment 9 offset 120) does not fit the sealed segments there are; delivering from the oldest sealed segment again"),
        (.checkpointPastEnd(path: "/q/sealed-000000000001.log"),
         "the checkpoint points past the end of /q/sealed-000000000001.log; delivering it from the start"),
        (.storedPositionIgnored(position: DrainPosition(segment: 3, offset: 0)),
         "the sink's stored position (segment 3 offset 0) does not fit this queue's segments; ignoring it"),
        (.fileMovedAside(path: "/q/attempts", problem: "is not a regular file with one name", movedTo: "/q/rejected-1-attempts", handling: .unread),
         "/q/attempts is not a regular file with one name; moved it aside to /q/rejected-1-attempts without reading it"),
        (.fileMovedAside(path: "/q/keys", problem: "is not a directory", movedTo: "/q/rejected-1-keys", handling: .unfollowed),
         "/q/keys is not a directory; moved it aside to /q/rejected-1-keys without following it"),
        (.fileMovedAside(path: "/q/attachments", problem: "is not one this drain may list and search", movedTo: "/q/rejected-1-attachments",
                         handling: .contentsLeftForOwner),
         "/q/attachments is not one this drain may list and search; moved it aside to /q/rejected-1-attachments without reading it; "
            + "what it holds stays there, for its owner"),
        (.leftoverMovedAside(path: "/q/attempts.tmp-7", movedTo: "/q/rejected-1-attempts.tmp-7"),
         "/q/attempts.tmp-7 could not be removed; moved it aside to /q/rejected-1-attempts.tmp-7"),
        (.fileNotRead(path: "/q/quarantine.log", problem: "is not a regular file with one name"),
         "/q/quarantine.log is not a regular file with one name; nothing in it is counted: a drain sets such a file aside unread"),
        (.fileMovedAside(path: "/q/append.lock", problem: "belongs to user 1001 and this drain may not open it", movedTo: "/q/rejected-1-append.lock", handling: .replaced),
         "/q/append.lock belongs to user 1001 and this drain may not open it; moved it aside to /q/rejected-1-append.lock and made a new one"),
        (.fileMovedAside(path: "/q/drain.lock", problem: "is not a regular file", movedTo: "/q/rejected-1-drain.lock", handling: .unfollowedAndReplaced),
         "/q/drain.lock is not a regular file; moved it aside to /q/rejected-1-drain.lock without following it; made a new one"),
        (.fileMovedAside(path: "/q/sealed-000000000001.log", problem: "belongs to user 1001 and this drain may not read it",
                         movedTo: "/q/rejected-1-sealed-000000000001.log", handling: .segmentKeptForOwner),
         "/q/sealed-000000000001.log belongs to user 1001 and this drain may not read it; moved it aside to /q/rejected-1-sealed-000000000001.log "
            + "without reading it. The records in it are NOT delivered: producers write into no other user's pending file, "
            + "so only what its owner appended or copied there can be in it; it is kept there for that owner or root to read"),
        (.fileUnusableByProducers(path: "/q/append.lock", problem: "is user 1001's, mode 0600"),
         "/q/append.lock is user 1001's, mode 0600"),
        (.pendingNotMade(cause: "the producers' lock is taken"),
         "the producers' lock is taken; the next producer makes the pending file instead"),
        (.attachmentsNotCounted(path: "/q/attachments"),
         "/q/attachments may not be listed by this user; its files are not counted"),
        (.waitingLettersNotCounted(path: "/q/dead-letters.waiting"),
         "/q/dead-letters.waiting is the queue owner's alone to read; the letters in it are not counted"),
        (.attachmentRestored(file: "a.jpg", recordID: "id 1", folder: "/q/attachments", source: "/q/rejected-5-attachments"),
         "attachment a.jpg of record \"id 1\" was not in /q/attachments; brought back the copy in /q/rejected-5-attachments, the folder a drain moved it aside to"),
        (.movedAsideFolderUnreadable(path: "/q/rejected-5-attachments", owner: 1001),
         "/q/rejected-5-attachments, a folder a drain moved aside from the attachments folder (user 1001's), may not be read by this user: "
            + "a record whose copy it holds waits among the dead letters until its owner or root lets the drain read it (chmod 2770, or g+rx)"),
        (.movedAsideFolderUnreadable(path: "/q/rejected-5-attachments", owner: nil),
         "/q/rejected-5-attachments, a folder a drain moved aside from the attachments folder, may not be read by this user: "
            + "a record whose copy it holds waits among the dead letters until its owner or root lets the drain read it (chmod 2770, or g+rx)"),
        (.recordRefused(id: "r\n1", attempt: 2, maxAttempts: 5, reason: "command exited with status 1"),
         "record \"r\\n1\" was refused (attempt 2 of 5); it stays queued: command exited with status 1"),
        (.recordDeadLettered(id: "r1", cause: .refusedForGood, reason: "no handler takes records of kind 'text'"),
         "record \"r1\" was refused for good; moved it to the dead letters: no handler takes records of kind 'text'"),
        (.recordDeadLettered(id: "r1", cause: .refusedTooOften(attempts: 5), reason: "broken"),
         "record \"r1\" was refused 5 times; moved it to the dead letters: broken"),
        (.recordDeadLettered(id: "r1", cause: .unread, reason: "over the limit"),
         "record \"r1\" moved to the dead letters unread: over the limit"),
        (.recordDeadLettered(id: "r1", cause: .idStoredWithOtherContent, reason: "id already stored with different content"),
         "record \"r1\" was not stored; moved it to the dead letters: id already stored with different content "
            + "(a producer may give a record any id: compare the two)"),
        (.recordDeadLettered(id: "r1", cause: .waitsForAnotherUser, reason: "its copy is in a folder this user may not read"),
         "record \"r1\" waits among the dead letters: its copy is in a folder this user may not read"),
        (.damagedDeadLetterSkipped(path: "/q/dead-letters.log", offset: 10, length: 7, isTooLong: false),
         "skipped a damaged dead letter of 7 bytes in /q/dead-letters.log"),
        (.damagedDeadLetterSkipped(path: "/q/dead-letters.log", offset: 10, length: 68_719_476_736, isTooLong: true),
         "skipped a damaged line of 68719476736 bytes at offset 10 of /q/dead-letters.log (a dead letter is at most 16842752 bytes)"),
        (.deadLettersMovedAside(path: "/q/dead-letters.log", movedTo: "/q/rejected-1-dead-letters.log", cause: "write: File too large"),
         "/q/dead-letters.log is as large as a file may be here (write: File too large); moved it aside to /q/rejected-1-dead-letters.log, "
            + "out of --requeue-dead's reach until it is renamed back"),
        (.requeueFinished(recordsPutBack: 1),
         "finished a requeue of dead letters that was cut short: put 1 more back"),
        (.waitingRecordPutBack(id: "r1"),
         "record \"r1\" no longer waits for another user's folder or copy; put it back at the end of the queue"),
        (.waitingLettersNotPutBack(cause: "the queue is full"),
         "cannot put back the dead letters that wait for another user's folder or copy (the queue is full); delivering what is queued; a later drain looks again"),
        (.requeueNotFinished(cause: "the queue is full"),
         "cannot finish a requeue of dead letters that was cut short (the queue is full); delivering what is queued, "
            + "letters it had put back among it; the requeue resumes on a later run with those it had not"),
        (.damagedRequeueMovedAside(path: "/q/dead-letters.requeue", damagedLines: 1, movedTo: "/q/rejected-1-dead-letters.requeue"),
         "/q/dead-letters.requeue held 1 damaged line; moved the file aside to /q/rejected-1-dead-letters.requeue"),
        (.damagedRequeueMovedAside(path: "/q/dead-letters.requeue", damagedLines: 2, movedTo: "/q/r"),
         "/q/dead-letters.requeue held 2 damaged lines; moved the file aside to /q/r"),
        (.refusalCountsDamaged(path: "/q/attempts", damagedLines: 1),
         "skipped 1 damaged line of /q/attempts; those refusal counts start over"),
        (.refusalCountsDamaged(path: "/q/attempts", damagedLines: 3),
         "skipped 3 damaged lines of /q/attempts; those refusal counts start over"),
        (.refusalCountsTooLarge(path: "/q/attempts", movedTo: "/q/rejected-1-attempts", cause: nil),
         "/q/attempts is over 1048576 bytes; moved it aside to /q/rejected-1-attempts without reading it; refusal counts start over"),
        (.refusalCountsTooLarge(path: "/q/attempts", movedTo: nil, cause: "renameat2: Permission denied"),
         "/q/attempts is over 1048576 bytes and cannot be moved aside (renameat2: Permission denied); refusal counts start over"),
        (.noSegmentNumberLeft(after: 999_999_999_999_999),
         "no segment number is left after 999999999999999; the pending records stay queued for the next drain"),
    ]

    @Test("Each event's description is the line the tools print for it", arguments: 0..<words.count)
    func description(index: Int) {
        let (event, text) = Self.words[index]
        #expect(event.description == text)
        #expect("\(event)" == text)
    }

    /// A queue holding a record that breaks the rules (an id of 129 bytes) between two good ones.
    private func queueWithDamage() throws -> (queue: TestQueue, good: [String]) {
        let queue = TestQueue()
        let before = try queue.append(text: "before")
        try queue.plantRecord(id: String(repeating: "x", count: 129), text: "damaged")
        return (queue, before + (try queue.append(text: "after")))
    }

    @Test("A drain reports each region it sets aside as an event whose fields are its quarantine entry's, and nothing else")
    func drainReportsDamage() throws {
        let (queue, good) = try queueWithDamage()
        let drainer = try QueueDrainer(directory: QueueDirectory(path: queue.path))
        let events = Collected<QueueEvent>()
        drainer.onEvent = { events.add([$0]) }
        var sink = RuleAgreementTests.RecordIDs()
        let summary = try drainer.drain(into: &sink)
        #expect(sink.ids == good && summary.quarantined == 1)
        let expected = try queue.setAsideEvents()
        #expect(expected.count == 1)
        #expect(events.values == expected)
    }

    @available(*, deprecated, message: "tests the deprecated warn")
    @Test("The deprecated warn still hears each event, in the words of its description")
    func deprecatedWarnHearsDescriptions() throws {
        let (queue, good) = try queueWithDamage()
        let drainer = try QueueDrainer(directory: QueueDirectory(path: queue.path))
        let texts = Collected<String>()
        drainer.warn = { texts.add([$0]) }
        var sink = RuleAgreementTests.RecordIDs()
        _ = try drainer.drain(into: &sink)
        #expect(sink.ids == good)
        #expect(texts.values == (try queue.setAsideEvents()).map(\.description))
        #expect(texts.values.count == 1)
    }

    @Test("A look at a queue reports a planted file it does not read as an event naming the file and its problem")
    func statusReportsFilesNotRead() throws {
        let queue = TestQueue()
        _ = try queue.append(text: "waiting")
        #expect(mkfifo(queue.file("quarantine.log"), 0o600) == 0)
        var inspector = QueueInspector(directory: try QueueDirectory(path: queue.path))
        let events = Collected<QueueEvent>()
        inspector.onEvent = { events.add([$0]) }
        #expect(try inspector.status().pending == 1)
        #expect(events.values == [.fileNotRead(path: queue.file("quarantine.log"), problem: "is not a regular file with one name")])
    }

    @Test("A test's check of a tool's warning matches the whole line of that event, a field given as any text standing for any")
    func warningLinesMatch() {
        let event = QueueEvent.recordRefused(id: "r\n1", attempt: 2, maxAttempts: 5, reason: "command exited with status 1")
        let printed = ProcessResult(status: 0, stdout: Data(), stderr: "host-drain: delivered 1 record in 1 batch\n"
                                    + "host-drain: warning: record \"r\\n1\" was refused (attempt 2 of 5); it stays queued: command exited with status 1\n")
        #expect(printed.warned(event))
        #expect(printed.warned(.recordRefused(id: "r\n1", attempt: 2, maxAttempts: 5, reason: anyText)))
        #expect(printed.warned(.recordRefused(id: anyText, attempt: 2, maxAttempts: 5, reason: "command exited with status 1")))
        #expect(!printed.warned(.recordRefused(id: "r\n1", attempt: 3, maxAttempts: 5, reason: anyText)))
        #expect(!printed.warned(.recordRefused(id: "r1", attempt: 2, maxAttempts: 5, reason: anyText)))
        #expect(!printed.warned(.recordRefused(id: "r\n1", attempt: 2, maxAttempts: 5, reason: "command exited")))
        #expect(!printed.warned(event, tool: "share-append"))
        #expect(printed.warningCount == 1)
    }

    @Test("Every case of the event has its words checked above")
    func everyCase() {
        // A new case makes this switch fail to compile until it is added here and given its words above.
        func name(_ event: QueueEvent) -> String {
            switch event {
            case .damageSetAside: "damageSetAside"
            case .segmentKeptWhole: "segmentKeptWhole"
            case .checkpointDamaged: "checkpointDamaged"
            case .checkpointDoesNotFit: "checkpointDoesNotFit"
            case .checkpointPastEnd: "checkpointPastEnd"
            case .storedPositionIgnored: "storedPositionIgnored"
            case .fileMovedAside: "fileMovedAside"
            case .leftoverMovedAside: "leftoverMovedAside"
            case .fileNotRead: "fileNotRead"
            case .fileUnusableByProducers: "fileUnusableByProducers"
            case .pendingNotMade: "pendingNotMade"
            case .attachmentsNotCounted: "attachmentsNotCounted"
            case .waitingLettersNotCounted: "waitingLettersNotCounted"
            case .attachmentRestored: "attachmentRestored"
            case .movedAsideFolderUnreadable: "movedAsideFolderUnreadable"
            case .recordRefused: "recordRefused"
            case .recordDeadLettered: "recordDeadLettered"
            case .damagedDeadLetterSkipped: "damagedDeadLetterSkipped"
            case .deadLettersMovedAside: "deadLettersMovedAside"
            case .requeueFinished: "requeueFinished"
            case .waitingRecordPutBack: "waitingRecordPutBack"
            case .waitingLettersNotPutBack: "waitingLettersNotPutBack"
            case .requeueNotFinished: "requeueNotFinished"
            case .damagedRequeueMovedAside: "damagedRequeueMovedAside"
            case .refusalCountsDamaged: "refusalCountsDamaged"
            case .refusalCountsTooLarge: "refusalCountsTooLarge"
            case .noSegmentNumberLeft: "noSegmentNumberLeft"
            }
        }
        #expect(Set(Self.words.map { name($0.0) }).count == 27)
    }
}
