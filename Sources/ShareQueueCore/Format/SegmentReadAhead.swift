import ShareQueueSystem

/// Reads a sealed segment, and checks and summarizes each record in it (``RecordReading``),
/// on a thread of its own, ahead of the drain that readies and delivers them: with two
/// cores, a drain reads and checks the next records while its sink writes, syncs, stores or
/// waits for a command.
///
/// It hands out what ``SegmentReader`` finds, in the same order, each record with its
/// summary when asked for. (Records built in full are built by the drain's thread: their
/// strings, allocated on one thread and freed on the other, cost more than building them.)
/// What waits for the drain is at most ``aheadBytes``, each event counted as its bytes, its
/// frame's and what holding it takes, so that a segment of empty frames is read no further
/// ahead than one of records; the reading thread holds at most one piece more, and one frame
/// or piece of damage. Only reading happens on that thread: nothing there changes a file or
/// anything the drain holds. Events change threads a piece at a time, moved, never copied.
final class SegmentReadAhead: @unchecked Sendable {
    // @unchecked: what the two threads share is touched only while `condition` is held; the
    // reader belongs to the thread that reads, `taken` to the drain's.

    /// An event, with its record's reading for a record.
    struct Read: Sendable {
        let event: SegmentEvent
        let reading: RecordReading?

        /// `event` of the segment numbered `segment`, with its record's reading if it is a record,
        /// for a sink that reads records (`buildingRecords`) or not; nil reads none.
        init(_ event: SegmentEvent, segment: UInt64, buildingRecords: Bool?) {
            self.event = event
            guard case .record(_, let end, let payload, _) = event, let buildingRecords else {
                reading = nil
                return
            }
            reading = RecordReading(payload, end: DrainPosition(segment: segment, offset: end), buildingRecords: buildingRecords)
        }
    }

    /// How many bytes of events, counted as ``Piece/add(_:)`` counts them, may wait, read, for the drain:
    /// more than a batch of JSON Lines takes (5000 records, about 1 MiB), so that reading goes on
    /// while the drain's thread syncs the batch before.
    static let aheadBytes = 2 << 20
    /// The least a segment must hold past where reading starts for reading ahead to be worth a thread.
    static let worthwhileBytes: Int64 = 1 << 20
    /// A piece ends at this many events or bytes.
    private static let pieceEvents = 1024
    private static let pieceBytes = 64 << 10

    private let condition = ThreadCondition()
    /// Pieces read and not yet taken.
    private var pieces: [Piece] = []
    private var piecesBytes = 0
    /// Once reading has ended: the position after the segment's last byte, or why it could not be read.
    private var ending: Result<Int64, SystemError>?
    private var stopping = false
    /// Whether the reading thread waits for the drain to take what it read.
    private var waitsForRoom = false
    private var worker: WorkerThread?

    /// The piece the drain takes events from.
    private var taken: Piece?

    /// Starts reading `file`, the segment numbered `segment`, from `offset` on a thread of its own,
    /// and summarizing its records if `summarizing`.
    /// - Throws: `SystemError` when the system makes no more threads.
    init(file: FileDescriptor, segment: UInt64, from offset: Int64, summarizing: Bool) throws(SystemError) {
        let reader = SegmentReader(file: file, from: offset)
        // The thread holds this reader until it ends, which `stop()` waits for.
        worker = try WorkerThread { self.read(reader, segment: segment, summarizing: summarizing) }
    }

    deinit {
        taken?.discard()
        for piece in pieces { piece.discard() }
    }

    /// The next event and its record's reading, or nil at the end of the segment,
    /// where ``positionAtEnd`` says where reading ended.
    /// - Throws: `SystemError` when reading failed; every event read before it was handed out first.
    func next() throws(SystemError) -> Read? {
        if let read = taken?.take() { return read }
        taken?.discard()
        taken = nil
        let next: Result<Piece, SystemError>? = condition.withLock {
            while pieces.isEmpty && ending == nil { condition.wait() }
            guard !pieces.isEmpty else { return ending.map { $0.map { _ in Piece() } } }
            let piece = pieces.removeFirst()
            piecesBytes -= piece.bytes
            condition.broadcast()
            return .success(piece)
        }
        taken = try next?.get()
        return taken?.take()
    }

    /// The position just after the segment's last byte, once ``next()`` has returned nil.
    var positionAtEnd: Int64? {
        condition.withLock { if case .success(let position)? = ending { position } else { nil } }
    }

    /// Whether the reading thread has read ``aheadBytes`` and waits for the drain to take some.
    var isWaitingForRoom: Bool { condition.withLock { waitsForRoom } }

    /// Stops reading, and waits until the reading thread has let go of the file: called
    /// before the file is closed, on every path.
    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
        worker?.join()
        worker = nil
    }

    /// The reading thread: reads events into pieces and hands each over, waiting while
    /// `aheadBytes` wait already, until the segment ends, reading fails, or the drain stops it.
    private func read(_ reader: consuming SegmentReader, segment: UInt64, summarizing: Bool) {
        var reader = reader
        var piece = Piece()
        while true {
            let next: SegmentEvent?
            do { next = try reader.next() } catch {
                hand(piece, ending: .failure(error))
                return
            }
            guard let event = next else {
                hand(piece, ending: .success(reader.position))
                return
            }
            if piece.count == Self.pieceEvents || piece.bytes >= Self.pieceBytes {
                guard hand(piece, ending: nil) else { return }
                piece = Piece()
            }
            piece.add(Read(event, segment: segment, buildingRecords: summarizing ? false : nil))
        }
    }

    /// Hands `handed` to the drain once there is room, and the ending if reading ended.
    /// - Returns: false when the drain has stopped reading.
    @discardableResult
    private func hand(_ handed: Piece, ending: Result<Int64, SystemError>?) -> Bool {
        condition.withLock {
            while piecesBytes >= Self.aheadBytes && !stopping {
                waitsForRoom = true
                condition.wait()
            }
            waitsForRoom = false
            guard !stopping else {
                handed.discard()
                return false
            }
            if handed.count > 0 {
                pieces.append(handed)
                piecesBytes += handed.bytes
            } else {
                handed.discard()
            }
            if let ending { self.ending = ending }
            condition.broadcast()
            return true
        }
    }

    /// Events read one after another, in memory of their own, from which they are moved
    /// out one by one: no reference count changes as they change threads.
    private struct Piece: @unchecked Sendable {
        // @unchecked: a piece belongs to one thread at a time, handed over under the lock.
        private let storage = UnsafeMutablePointer<Read>.allocate(capacity: SegmentReadAhead.pieceEvents)
        private(set) var count = 0
        private var next = 0
        private(set) var bytes = 0
        /// About what a record's reading holds apart from its bytes: a drained record, or a reason's text.
        private static let readingBytes = 128

        /// Adds `read`, counting its bytes, its frame's, and the memory that holds it and what its reading made.
        mutating func add(_ read: consuming Read) {
            switch read.event {
            case .record(_, _, let payload, _): bytes += payload.count + Frame.overhead
            case .damaged(let region): bytes += region.bytes.count
            }
            bytes += MemoryLayout<Read>.stride + Self.readingBytes
            (storage + count).initialize(to: read)
            count += 1
        }

        /// The next event, moved out, or nil once all are taken.
        mutating func take() -> Read? {
            guard next < count else { return nil }
            next += 1
            return (storage + next - 1).move()
        }

        /// Destroys the events not taken, and the memory.
        func discard() {
            (storage + next).deinitialize(count: count - next)
            storage.deallocate()
        }
    }
}
