import ShareQueue
import ShareQueueSystem

/// A SQLite store that takes records exactly once: each batch's rows and the
/// queue position after them are committed in one transaction, and the drain
/// resumes from the stored position, so however often a drain is killed every
/// record lands in `records` once. Records that share a key also update
/// `latest`, which keeps the newest of each (latest date, then latest appended).
package struct StoreSink: DrainSink {
    static let schemaVersion: Int64 = 1
    private static let schema = """
        CREATE TABLE IF NOT EXISTS records (
            id TEXT PRIMARY KEY,
            date TEXT NOT NULL,
            source TEXT NOT NULL,
            kind TEXT NOT NULL,
            text TEXT,
            json TEXT,
            key TEXT,
            meta TEXT,
            attachments TEXT,
            extra TEXT,
            ingested_at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS records_by_key ON records(key) WHERE key IS NOT NULL;
        CREATE TABLE IF NOT EXISTS latest (
            key TEXT PRIMARY KEY,
            id TEXT NOT NULL,
            date TEXT NOT NULL,
            kind TEXT NOT NULL,
            text TEXT,
            json TEXT
        );
        CREATE TABLE IF NOT EXISTS drain_position (
            queue TEXT PRIMARY KEY,
            segment INTEGER NOT NULL,
            offset INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        );
        """

    private let database: SQLiteDatabase
    private let insertRecord: SQLiteStatement
    private let updateLatest: SQLiteStatement
    private let savePosition: SQLiteStatement
    private let loadPosition: SQLiteStatement
    private let countRows: SQLiteStatement
    /// Which queue the stored position belongs to: its identifier, else its path.
    private let queue: String
    /// Where a drain puts the attachments of records it stores: beside the database.
    package let attachmentsFolder: String
    /// The database's path, for a power-cut explorer's trace.
    private let path: String

    package init(path: String, queue directory: QueueDirectory) throws(ShareQueueError) {
        let database = try SQLiteDatabase(path: path)
        let version = try database.prepare("PRAGMA user_version").firstRow(columns: 1)?[0] ?? 0
        guard version <= Self.schemaVersion else {
            throw ShareQueueError(.configuration, "the store has schema \(version), newer than the \(Self.schemaVersion) this version understands", path: path)
        }
        try database.transaction { () throws(ShareQueueError) in
            try database.execute(Self.schema)
            try database.execute("PRAGMA user_version = \(Self.schemaVersion)")
        }
        self.path = path
        Self.traceCommitted(path, delivered: nil)
        self.database = database
        insertRecord = try database.prepare("""
            INSERT INTO records (id, date, source, kind, text, json, key, meta, attachments, extra, ingested_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING
            """)
        updateLatest = try database.prepare("""
            INSERT INTO latest (key, id, date, kind, text, json) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET id = excluded.id, date = excluded.date, kind = excluded.kind,
                text = excluded.text, json = excluded.json
            WHERE excluded.date >= latest.date
            """)
        savePosition = try database.prepare("""
            INSERT INTO drain_position (queue, segment, offset, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT(queue) DO UPDATE SET segment = excluded.segment, offset = excluded.offset, updated_at = excluded.updated_at
            """)
        loadPosition = try database.prepare("SELECT segment, offset FROM drain_position WHERE queue = ?")
        countRows = try database.prepare("SELECT count(*) FROM records")
        queue = directory.identifier ?? directory.path
        attachmentsFolder = FileSystem.absolute(path) + ".attachments"
    }

    package mutating func deliver(_ batch: DrainBatch) throws {
        let now = Timestamp.now()
        try database.transaction { () throws(ShareQueueError) in
            for drained in batch.records {
                let record = drained.record
                let json = record.json.map { String(decoding: $0.compactJSON, as: UTF8.self) }
                try insertRecord.run(
                    .text(record.id), .text(record.date), .text(record.source), .text(record.kind.rawValue),
                    .text(record.text), .text(json), .text(record.key),
                    .text(record.meta.map { Self.jsonText(.object($0.mapValues { .string($0) })) }),
                    .text(record.attachments.map { Self.attachmentsJSON($0) }),
                    .text(record.unknownFields.isEmpty ? nil : Self.jsonText(.object(record.unknownFields))), .text(now))
                // A record seen before (the same id) changes nothing, not even `latest`.
                guard database.changes > 0, let key = record.key else { continue }
                try updateLatest.run(.text(key), .text(record.id), .text(record.date), .text(record.kind.rawValue), .text(record.text), .text(json))
            }
            try savePosition.run(.text(queue), .integer(Int64(batch.end.segment)), .integer(batch.end.offset), .text(now))
        }
        Self.traceCommitted(path, delivered: batch.records.map(\.id))
    }

    /// For a power-cut explorer: the database as SQLite made it durable at a commit
    /// (synchronous=FULL), since its writes do not go through ShareQueueSystem.
    private static func traceCommitted(_ path: String, delivered ids: [String]?) {
        guard let trace = SystemTrace.current else { return }
        trace.image(ofFileAt: path)
        trace.image(ofFileAt: path + "-wal")
        if let ids { trace.mark(["delivered"] + ids) }
    }

    package func deliveredPosition() throws -> DrainPosition? {
        guard let row = try loadPosition.firstRow(.text(queue), columns: 2), row[0] >= 0, row[1] >= 0 else { return nil }
        return DrainPosition(segment: UInt64(row[0]), offset: row[1])
    }

    /// The number of rows in `records`, for `--status`.
    package func rowCount() throws(ShareQueueError) -> Int {
        Int(try countRows.firstRow(columns: 1)?[0] ?? 0)
    }

    /// Every stored record as a JSON line (id, date, source, kind, text, key), in
    /// the order stored: for checking a store.
    package func recordLines() throws(ShareQueueError) -> [String] {
        try database.prepare("""
            SELECT json_object('v', 1, 'id', id, 'date', date, 'source', source, 'kind', kind, 'text', text, 'key', key)
            FROM records ORDER BY rowid
            """).allText()
    }

    private static func jsonText(_ value: JSONValue) -> String { String(decoding: value.compactJSON, as: UTF8.self) }

    private static func attachmentsJSON(_ attachments: [Attachment]) -> String {
        jsonText(.array(attachments.map { attachment in
            var fields: [String: JSONValue] = [
                "name": .string(attachment.name), "size": .number(String(attachment.size)),
                "sha256": .string(attachment.sha256), "type": .string(attachment.type),
            ]
            if let path = attachment.path { fields["path"] = .string(path) }
            return .object(fields)
        }))
    }

}
