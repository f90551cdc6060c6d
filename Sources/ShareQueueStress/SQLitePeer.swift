import CSQLite
import ShareQueueCore

/// SQLite used as a queue, the peer the benchmark quotes beside ShareQueue's figures:
/// WAL mode, one table `queue (seq INTEGER PRIMARY KEY, body TEXT)`, through the C API with
/// every statement prepared once and reused. An append is one transaction; a drain reads
/// a batch in `seq` order, hands it to a sink, and deletes it, one transaction per batch.
final class SQLitePeer {
    /// `PRAGMA synchronous`: FULL syncs the log at every commit; NORMAL only at checkpoints.
    enum Synchronous: String { case full = "FULL", normal = "NORMAL" }

    private var handle: OpaquePointer?
    private var statements: [OpaquePointer] = []
    private let begin: OpaquePointer, commit: OpaquePointer, insert: OpaquePointer, select: OpaquePointer, delete: OpaquePointer
    let path: String

    init(path: String, synchronous: Synchronous) throws(ShareQueueError) {
        self.path = path
        var opened: OpaquePointer?
        let result = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        handle = opened
        guard result == SQLITE_OK else {
            sqlite3_close(opened)
            throw ShareQueueError(.ioError, "cannot open the SQLite peer", path: path)
        }
        sqlite3_busy_timeout(handle, 10_000)
        for sql in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=\(synchronous.rawValue)",
                    "CREATE TABLE IF NOT EXISTS queue (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)"] {
            try Self.check(sqlite3_exec(opened, sql, nil, nil, nil), sql, opened, path)
        }
        func prepare(_ sql: String) throws(ShareQueueError) -> OpaquePointer {
            var statement: OpaquePointer?
            try Self.check(sqlite3_prepare_v2(opened, sql, -1, &statement, nil), sql, opened, path)
            return statement!
        }
        begin = try prepare("BEGIN IMMEDIATE")
        commit = try prepare("COMMIT")
        insert = try prepare("INSERT INTO queue (body) VALUES (?)")
        select = try prepare("SELECT seq, body FROM queue ORDER BY seq LIMIT ?")
        delete = try prepare("DELETE FROM queue WHERE seq <= ?")
        statements = [begin, commit, insert, select, delete]
    }

    deinit {
        for statement in statements { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    private static func check(_ result: Int32, _ what: String, _ handle: OpaquePointer?, _ path: String) throws(ShareQueueError) {
        guard result == SQLITE_OK || result == SQLITE_DONE || result == SQLITE_ROW else {
            throw ShareQueueError(.ioError, "the SQLite peer failed: \(what)", path: path, cause: String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// Runs a statement that returns no rows, then resets it for its next use.
    private func step(_ statement: OpaquePointer, _ what: String) throws(ShareQueueError) {
        let result = sqlite3_step(statement)
        sqlite3_reset(statement)
        try Self.check(result, what, handle, path)
    }

    /// Appends `body` in a transaction of its own, or in the caller's when `inTransaction`.
    func append(_ body: [UInt8], inTransaction: Bool = false) throws(ShareQueueError) {
        if !inTransaction { try step(begin, "BEGIN") }
        // Bound by byte length (text may hold U+0000) and without a copy, so stepped while the bytes are in reach.
        let (bound, stepped) = body.withUnsafeBufferPointer { bytes in
            let bound = sqlite3_bind_text64(insert, 1, bytes.baseAddress, sqlite3_uint64(bytes.count), nil, UInt8(SQLITE_UTF8))
            let stepped = bound == SQLITE_OK ? sqlite3_step(insert) : bound
            sqlite3_reset(insert)
            return (bound, stepped)
        }
        try Self.check(bound, "bind", handle, path)
        try Self.check(stepped, "INSERT", handle, path)
        if !inTransaction { try step(commit, "COMMIT") }
    }

    /// Appends `count` copies of `body` in one transaction (to fill a queue for a drain).
    func fill(_ body: [UInt8], count: Int) throws(ShareQueueError) {
        try step(begin, "BEGIN")
        for _ in 0..<count { try append(body, inTransaction: true) }
        try step(commit, "COMMIT")
    }

    /// Takes up to `batch` rows in `seq` order: hands each body to `row`, then `delivered`
    /// once for the batch, deletes the rows, and commits. Returns how many rows it took.
    func drainBatch(_ batch: Int, row: (UnsafeBufferPointer<UInt8>) -> Void,
                    delivered: () throws(ShareQueueError) -> Void) throws(ShareQueueError) -> Int {
        try step(begin, "BEGIN")
        var committed = false
        // A failed batch leaves its rows queued, as a failed drain leaves its records.
        defer { if !committed { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) } }
        try Self.check(sqlite3_bind_int64(select, 1, sqlite3_int64(batch)), "bind", handle, path)
        var taken = 0
        var last: sqlite3_int64 = 0
        var result = sqlite3_step(select)
        while result == SQLITE_ROW {
            last = sqlite3_column_int64(select, 0)
            // Text first, then its length, as SQLite documents.
            let text = sqlite3_column_text(select, 1)
            row(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(select, 1))))
            taken += 1
            result = sqlite3_step(select)
        }
        sqlite3_reset(select)
        try Self.check(result, "SELECT", handle, path)
        if taken > 0 {
            try delivered()
            try Self.check(sqlite3_bind_int64(delete, 1, last), "bind", handle, path)
            try step(delete, "DELETE")
        }
        try step(commit, "COMMIT")
        committed = true
        return taken
    }
}
