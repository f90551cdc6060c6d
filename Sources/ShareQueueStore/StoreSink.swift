import ShareQueueCore
import ShareQueueSystem

/// A SQLite store that takes records exactly once: each batch's rows and the
/// queue position after them are committed in one transaction, and the drain
/// resumes from the stored position, so however often a drain is killed every
/// record lands in `records` once. Records that share a key also update
/// `latest`, which keeps the newest of each: the latest instant its date
/// denotes as read when it was stored, at its `ingested_at` (see
/// `DateInstant.asRead(at:)`), then the latest appended.
///
/// The first record stored under an id keeps it. A record delivered again with the same
/// content changes nothing; one whose id the store holds with other content is refused
/// for good (``RecordRefusal/Refused/init(idTakenBy:)``): producers choose ids, and a member
/// of a shared queue's group can give her record the id of one still queued, so that it would
/// otherwise take the honest record's place without a word.
package struct StoreSink: DrainSink {
    private let database: SQLiteDatabase
    private let insertRecord: SQLiteStatement
    /// Whether the row stored under an id has the content of another row for that id.
    private let matchesStored: SQLiteStatement
    private let updateLatest: SQLiteStatement
    private let latestDate: SQLiteStatement
    private let savePosition: SQLiteStatement
    private let loadPosition: SQLiteStatement
    /// SQLite's count of schema changes when the schema was last checked: a change
    /// made since (by another process) is checked again before the next write.
    private var checkedSchema: Int64
    /// Which queue the stored position belongs to: its identifier, else its path.
    private let queue: String
    /// Where a drain puts the attachments of records it stores: beside the database.
    package let attachmentsFolder: String

    package init(path: String, queue directory: QueueDirectory) throws(ShareQueueError) {
        let database = try SQLiteDatabase(path: path)
        // Nothing is written, not even the journal mode, before the file is known to be the store's.
        try StoreSchema.adopt(database)
        try database.useWriteAheadLog()
        checkedSchema = try StoreSchema.changeCount(of: database)
        self.database = database
        insertRecord = try database.prepare("""
            INSERT INTO records (id, date, source, kind, text, json, key, meta, attachments, extra, ingested_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING
            """)
        // The content is every column but `date` and `ingested_at`, and the attachments without their `path`:
        // an append retried under its `--id` is the same record made again, at its own time; where a copy was
        // handed over is the drain's doing (a name taken in the folder gives another), not the record's.
        matchesStored = try database.prepare("""
            SELECT source IS ?3 AND kind IS ?4 AND text IS ?5 AND json IS ?6 AND key IS ?7 AND meta IS ?8
                AND extra IS ?10 AND \(Self.withoutPaths("attachments")) IS \(Self.withoutPaths("?9"))
            FROM records WHERE id = ?1
            """)
        updateLatest = try database.prepare("""
            INSERT INTO latest (key, id, date, kind, text, json) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET id = excluded.id, date = excluded.date, kind = excluded.kind,
                text = excluded.text, json = excluded.json
            """)
        // The stored latest is judged as it was when stored: against its own `ingested_at`.
        latestDate = try database.prepare("""
            SELECT latest.date, records.ingested_at FROM latest LEFT JOIN records ON records.id = latest.id WHERE latest.key = ?
            """)
        savePosition = try database.prepare("""
            INSERT INTO drain_position (queue, segment, offset, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT(queue) DO UPDATE SET segment = excluded.segment, offset = excluded.offset, updated_at = excluded.updated_at
            """)
        loadPosition = try database.prepare("SELECT segment, offset FROM drain_position WHERE queue = ?")
        queue = directory.identifier ?? directory.path
        attachmentsFolder = FileSystem.absolute(path) + ".attachments"
    }

    package mutating func deliver(_ batch: DrainBatch) throws {
        let milliseconds = Host.millisecondsSince1970()
        let now = Timestamp.format(millisecondsSince1970: milliseconds)
        let readAt = DateInstant(millisecondsSince1970: milliseconds)
        if Mutant.active == .storePositionFirst { try database.transaction { () throws(ShareQueueError) in try saveEnd(of: batch, at: now) } }
        var conflicts: [RecordRefusal.Refused] = []
        let committed = try database.decidedTransaction({ () throws(ShareQueueError) -> Bool in
            let schema = try StoreSchema.changeCount(of: database)
            if schema != checkedSchema {
                _ = try StoreSchema.check(database)
                checkedSchema = schema
            }
            for drained in batch.records {
                let row = StoreRow(drained)
                // Every column is a slice of the row's bytes, which SQLite reads in place.
                try row.bytes.withUnsafeBufferPointer { (bytes) throws(ShareQueueError) in
                    try insertRecord.run(
                        reading: bytes, .span(row.id.indices), .span(row.date.indices), .span(row.source.indices), .span(row.kind.indices),
                        .span(row.text?.indices), .span(row.json?.indices), .span(row.key?.indices), .span(row.meta?.indices),
                        .span(row.attachments?.indices), .span(row.extra?.indices), .text(now))
                    // A record seen before (the same id and content) changes nothing, not even `latest`. Only
                    // then is the stored row read: a batch of new records costs one insert each, as before.
                    guard database.changes > 0 else {
                        if try !stored(matches: row) { conflicts.append(RecordRefusal.Refused(idTakenBy: drained)) }
                        return
                    }
                    guard let key = row.key else { return }
                    // Newest by the instant the date denotes as read when stored, as --coalesce decides;
                    // ties go to the later record.
                    let date = DateInstant(String(decoding: row.date, as: UTF8.self)).asRead(at: readAt)
                    if let stored = try latestDate.rows(.bytes(key), columns: 2).first, date < Self.instant(ofLatest: stored, readAt: readAt) { return }
                    try updateLatest.run(
                        reading: bytes, .span(key.indices), .span(row.id.indices), .span(row.date.indices), .span(row.kind.indices),
                        .span(row.text?.indices), .span(row.json?.indices))
                }
            }
            // Nothing of a batch with a conflict is kept: the drain sets those records aside and offers the others again.
            guard conflicts.isEmpty else { return false }
            if Mutant.active != .storePositionFirst { try saveEnd(of: batch, at: now) }
            return true
        })
        guard committed else { throw RecordRefusal(conflicts) }
        Self.traceCommitted(batch)
    }

    /// Whether the row stored under `row`'s id has `row`'s content (``matchesStored``).
    private func stored(matches row: StoreRow) throws(ShareQueueError) -> Bool {
        guard let same = try matchesStored.firstRow(row.columns.map { .bytes($0) }, columns: 1) else {
            // No row: the insert that did nothing met no id, which the schema cannot give; taken as a conflict, never as stored.
            return false
        }
        return same[0] == 1
    }

    /// SQL for the attachments `column` holds without their `path`s, NULL for NULL; anything but JSON as it is.
    private static func withoutPaths(_ column: String) -> String {
        "(CASE WHEN json_valid(\(column)) THEN (SELECT json_group_array(json_remove(value, '$.path')) FROM json_each(\(column))) ELSE \(column) END)"
    }

    /// The instant the row of `latest` (its `date` and its record's `ingested_at`) counts as:
    /// its date as read when it was stored, or as read now if its record is gone from `records`.
    private static func instant(ofLatest row: [String?], readAt: DateInstant) -> DateInstant {
        let ingested = row[1].map(DateInstant.init).flatMap { $0.isParsed ? $0 : nil } ?? readAt
        return DateInstant(row[0] ?? "").asRead(at: ingested)
    }

    /// Saves the position after `batch`, inside the transaction of its rows, or,
    /// under the mutant `store-position-first`, in a transaction of its own committed first.
    private func saveEnd(of batch: DrainBatch, at now: String) throws(ShareQueueError) {
        try savePosition.run(.text(queue), .integer(Int64(batch.end.segment)), .integer(batch.end.offset), .text(now))
    }

    /// For a power-cut explorer: marks the batch delivered once its commit returned (SQLite's
    /// own writes and syncs are traced by ``TracedVFS``). The ids are made only when traced:
    /// a drain that is not would spend a string on each record.
    private static func traceCommitted(_ batch: DrainBatch) {
        guard let trace = SystemTrace.current else { return }
        trace.mark(["delivered"] + batch.records.map(\.id))
    }

    /// The store reads each record's labels from its stored bytes where it can (see `StoreRow`),
    /// so the drain need not build every record; it still checks every one in full.
    package var needsRecords: Bool { false }

    package func deliveredPosition() throws -> DrainPosition? {
        guard let row = try loadPosition.firstRow(.text(queue), columns: 2), row[0] >= 0, row[1] >= 0 else { return nil }
        return DrainPosition(segment: UInt64(row[0]), offset: row[1])
    }

    /// The number of rows in `records` of the store at `path`, for `--status`:
    /// read only, so that a status neither creates nor changes a store. A new
    /// (empty) database has none.
    ///
    /// - Throws: `.noInput` if there is no database at `path` (a mistyped path must
    ///   not look like an empty store), `.configuration` if the database is not the
    ///   store's, or SQLite's failure.
    package static func rowCount(path: String) throws(ShareQueueError) -> Int {
        guard let file = try FileSystem.linkStatusOrThrow(path) else {
            throw ShareQueueError(.noInput, "there is no store here; --status counts the records of an existing one and makes none", path: path)
        }
        // Opened for reading, a FIFO would wait for a writer for ever; a symlink is never followed to a store.
        guard file.isRegularFile else { throw ShareQueueError(.ioError, "cannot read the store: it is not a regular file", path: path) }
        let database = try SQLiteDatabase(path: path, readOnly: true)
        if try StoreSchema.check(database) { return 0 }
        return Int(try database.prepare("SELECT count(*) FROM records").firstRow(columns: 1)?[0] ?? 0)
    }

    /// Every stored record as a JSON line (id, date, source, kind, text, key), in
    /// the order stored: for checking a store.
    package func recordLines() throws(ShareQueueError) -> [String] {
        try database.prepare("""
            SELECT json_object('v', 1, 'id', id, 'date', date, 'source', source, 'kind', kind, 'text', text, 'key', key)
            FROM records ORDER BY rowid
            """).allText()
    }
}
