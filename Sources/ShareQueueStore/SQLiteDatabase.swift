import CSQLite
import ShareQueueCore
import ShareQueueSystem

/// A connection to a SQLite database: just what the store needs, with every
/// failure reported as a `ShareQueueError` that names the database and SQLite's message.
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    let path: String

    /// Makes a database that does not exist yet as an empty file only its owner may read and write
    /// (an empty file is an empty database): SQLite would make it with the process's umask, often
    /// readable by every local user, and its -wal and -shm files take its mode. What exists
    /// is left as it is; what cannot be made here SQLite fails to open, and says why.
    private static func createForOwner(_ path: String) {
        (try? FileDescriptor.open(path, .writeCreateExclusive, permissions: 0o600))?.close()
    }

    /// Opens a database defensively (see `defend()`), with full syncs and a busy timeout.
    /// Nothing is written: `useWriteAheadLog()` switches to WAL once the caller trusts the file.
    ///
    /// - Parameters:
    ///   - path: The database; created if missing, unless `readOnly`.
    ///   - readOnly: Whether to open it for reading only, never creating it.
    /// - Throws: `.cannotCreate` if it cannot be opened or created, `.configuration` if SQLite
    ///   cannot open it defensively, or SQLite's failure.
    init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5000) throws(ShareQueueError) {
        self.path = path
        if !readOnly && path != ":memory:" { Self.createForOwner(path) }
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let flags = access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        // Traced, through the VFS that records SQLite's own file changes; else through the default VFS.
        let result = TracedVFS.name.map { sqlite3_open_v2(path, &handle, flags, $0) } ?? sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            let shortage = Self.resourceShortage(handle, code: result)
            sqlite3_close(handle)
            handle = nil
            if let shortage { throw ShareQueueError(.resourceShortage, "cannot open the store", path: path, cause: "\(message) (\(shortage))") }
            throw ShareQueueError(result == SQLITE_CANTOPEN ? .cannotCreate : .ioError, "cannot open the store", path: path, cause: message)
        }
        do throws(ShareQueueError) {
            let timeout = sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
            guard timeout == SQLITE_OK else { throw failure("cannot set the store's busy timeout", code: timeout) }
            try defend()
        } catch {
            sqlite3_close_v2(handle)
            handle = nil
            throw error
        }
        // FULL: a commit is durable before the checkpoint file moves past it.
        if Mutant.active == .storeSynchronousOff {
            try execute("PRAGMA synchronous=OFF")
        } else {
            try execute("PRAGMA synchronous=FULL")
        }
        // On Darwin, F_FULLFSYNC, as the queue's own files get; ignored elsewhere.
        try execute("PRAGMA fullfsync=ON")
        // A bigger page cache: ingesting is mostly updating the index of ids,
        // whose pages would otherwise be read again and again.
        try execute("PRAGMA cache_size=-8192")
    }

    /// Lets nothing in the file's schema run or change behind the store's back,
    /// as SQLite advises for a database from an untrusted source: defensive mode
    /// (no writing to the schema or to shadow tables), functions in the schema
    /// limited to innocuous ones (`PRAGMA trusted_schema=OFF`), and no trigger
    /// fires and no view can be used. The store's schema has neither.
    private func defend() throws(ShareQueueError) {
        let settings: [(option: Int32, value: Int32)] = [
            (SQLITE_DBCONFIG_DEFENSIVE, 1), (SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0),
            (SQLITE_DBCONFIG_ENABLE_TRIGGER, 0), (SQLITE_DBCONFIG_ENABLE_VIEW, 0),
        ]
        for setting in settings {
            var now: Int32 = -1
            let result = sharequeue_sqlite3_db_config_int(handle, setting.option, setting.value, &now)
            // An older SQLite refuses a setting it does not know: opening without it would not be defensive.
            guard result == SQLITE_OK, now == setting.value else {
                throw ShareQueueError(.configuration, "cannot open the store defensively", path: path,
                                      cause: "SQLite \(String(cString: sqlite3_libversion())) refused setting \(setting.option); the store needs SQLite 3.31 or later")
            }
        }
    }

    /// Switches the database to WAL mode, which writes to it: only once it is known to be the store's.
    func useWriteAheadLog() throws(ShareQueueError) {
        try execute("PRAGMA journal_mode=WAL")
    }

    // close_v2: the connection goes once the last of its statements is finalized, whichever goes first.
    deinit { sqlite3_close_v2(handle) }

    /// What ran short, when SQLite's last failure came from a resource that comes back by
    /// itself (descriptors, memory): a passing failure, to try again, not the store's.
    /// SQLite's own message for it ("unable to open database file") does not say.
    private static func resourceShortage(_ handle: OpaquePointer?, code: Int32) -> String? {
        if code & 0xFF == SQLITE_NOMEM { return "out of memory" }
        guard let handle else { return nil }
        let error = SystemError(call: "sqlite3", errno: sqlite3_system_errno(handle))
        return error.isResourceShortage ? error.description : nil
    }

    func failure(_ what: String, code: Int32? = nil) -> ShareQueueError {
        let result = code ?? sqlite3_errcode(handle)
        if let shortage = Self.resourceShortage(handle, code: result) {
            return ShareQueueError(.resourceShortage, what, path: path, cause: "\(String(cString: sqlite3_errmsg(handle))) (\(shortage))")
        }
        let errorCode: ShareQueueError.Code
        switch result & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: errorCode = .busy
        case SQLITE_FULL, SQLITE_IOERR: errorCode = .ioError
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH: errorCode = .permissionDenied
        case SQLITE_CORRUPT, SQLITE_NOTADB: errorCode = .damaged
        default: errorCode = .ioError
        }
        return ShareQueueError(errorCode, what, path: path, cause: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(ShareQueueError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw failure("the store failed: \(sql.prefix(40))", code: result) }
    }

    func prepare(_ sql: String) throws(ShareQueueError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else { throw failure("the store cannot prepare: \(sql.prefix(40))", code: result) }
        return SQLiteStatement(statement, database: self)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int32 { sqlite3_changes(handle) }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed if it
    /// returns, rolled back if it throws.
    func transaction(_ body: () throws(ShareQueueError) -> Void) throws(ShareQueueError) {
        _ = try decidedTransaction({ () throws(ShareQueueError) -> Bool in
            try body()
            return true
        })
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed if it returns true,
    /// rolled back if it returns false or throws.
    /// - Returns: Whether the transaction was committed.
    func decidedTransaction(_ body: () throws(ShareQueueError) -> Bool) throws(ShareQueueError) -> Bool {
        try execute("BEGIN IMMEDIATE")
        do {
            guard try body() else {
                try execute("ROLLBACK")
                return false
            }
            try execute("COMMIT")
            return true
        } catch {
            // A failed statement may have rolled the transaction back already, so ROLLBACK
            // may fail; what matters is that no transaction is left open.
            let rollback = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            if rollback != SQLITE_OK && sqlite3_get_autocommit(handle) == 0 {
                throw failure("the store cannot roll back after: \(error.message)", code: rollback)
            }
            throw error
        }
    }
}

/// A prepared statement, reset for reuse after every run.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private unowned let database: SQLiteDatabase
    /// SQLite copies bound text at once (SQLITE_TRANSIENT), so Swift strings can be passed directly.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// The texts of one `run`, in one buffer kept from run to run.
    private var texts: [UInt8] = []

    fileprivate init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    enum Value {
        case text(String?)
        /// Text as UTF-8 bytes, or NULL.
        case bytes(ArraySlice<UInt8>?)
        /// Text as the UTF-8 bytes at these offsets of the buffer a `run(reading:)` is given, or NULL.
        case span(Range<Int>?)
        case integer(Int64)
    }

    /// Binds `values` to a statement reset for a new run. Text is bound with
    /// its byte length, never as a C string: U+0000 is a character like any other.
    private func bind(_ values: [Value]) throws(ShareQueueError) {
        var result = sqlite3_reset(statement)
        if result == SQLITE_OK { result = sqlite3_clear_bindings(statement) }
        for (index, value) in values.enumerated() where result == SQLITE_OK {
            let position = Int32(index + 1)
            switch value {
            case .text(var text?):
                result = text.withUTF8 { bytes in
                    // A nil pointer would bind NULL, not an empty string.
                    guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement, position, "", 0, Self.transient) }
                    return sqlite3_bind_text64(statement, position, base, sqlite3_uint64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
                }
            case .bytes(let bytes?):
                result = bytes.withUnsafeBufferPointer { bytes in
                    guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement, position, "", 0, Self.transient) }
                    return sqlite3_bind_text64(statement, position, base, sqlite3_uint64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
                }
            case .text(nil), .bytes(nil), .span(nil): result = sqlite3_bind_null(statement, position)
            case .integer(let number): result = sqlite3_bind_int64(statement, position, number)
            // A query has no buffer to read spans from.
            case .span: result = SQLITE_MISUSE
            }
        }
        guard result == SQLITE_OK else { throw database.failure("the store cannot bind a value", code: result) }
    }

    /// Runs a statement that returns no rows, with a value for each of its parameters.
    func run(_ values: Value...) throws(ShareQueueError) {
        try run(values, spans: UnsafeBufferPointer(start: nil, count: 0))
    }

    /// Runs a statement that returns no rows, whose `.span` values are bytes of `buffer`:
    /// a store binds a record's labels straight from its stored JSON, with no copy.
    func run(reading buffer: UnsafeBufferPointer<UInt8>, _ values: Value...) throws(ShareQueueError) {
        try run(values, spans: buffer)
    }

    /// SQLite reads every text in place for this one step (SQLITE_STATIC), rather than
    /// copying each into memory of its own: `.span` values from `spans`, and `.text` and
    /// `.bytes` values gathered into one buffer kept from run to run. Every parameter is
    /// bound again on each run, so no step ever reads a pointer left from an earlier one.
    private func run(_ values: [Value], spans: UnsafeBufferPointer<UInt8>) throws(ShareQueueError) {
        // Taken out of the object for the run, so that its uses are not each checked for exclusive access.
        var texts: [UInt8] = []
        swap(&texts, &self.texts)
        defer { swap(&texts, &self.texts) }
        texts.removeAll(keepingCapacity: true)
        for value in values {
            switch value {
            case .text(var text?): text.withUTF8 { texts.append(contentsOf: $0) }
            case .bytes(let bytes?): texts.append(contentsOf: bytes)
            case .text(nil), .bytes(nil), .span, .integer: break
            }
        }
        try texts.withUnsafeBufferPointer { (texts) throws(ShareQueueError) in try run(values, texts: texts, spans: spans) }
    }

    /// Binds `values`, `.text` and `.bytes` from `texts` in turn and `.span` from `spans`, and steps once.
    private func run(_ values: [Value], texts: UnsafeBufferPointer<UInt8>, spans: UnsafeBufferPointer<UInt8>) throws(ShareQueueError) {
        guard values.count == Int(sqlite3_bind_parameter_count(statement)) else {
            throw database.failure("the store gave a statement \(values.count) values for \(sqlite3_bind_parameter_count(statement)) parameters", code: SQLITE_MISUSE)
        }
        var result = sqlite3_reset(statement)
        guard result == SQLITE_OK else { throw database.failure("the store failed to write", code: result) }
        var start = 0
        for (index, value) in values.enumerated() where result == SQLITE_OK {
            let position = Int32(index + 1)
            switch value {
            case .text(nil), .bytes(nil), .span(nil): result = sqlite3_bind_null(statement, position)
            case .integer(let number): result = sqlite3_bind_int64(statement, position, number)
            case .text(let text?): result = bindInPlace(position, texts, from: &start, count: text.utf8.count)
            case .bytes(let bytes?): result = bindInPlace(position, texts, from: &start, count: bytes.count)
            case .span(let span?):
                guard span.lowerBound >= 0, span.upperBound <= spans.count else {
                    throw database.failure("the store gave a statement a text outside its buffer", code: SQLITE_MISUSE)
                }
                var from = span.lowerBound
                result = bindInPlace(position, spans, from: &from, count: span.count)
            }
        }
        if result == SQLITE_OK { result = sqlite3_step(statement) }
        // After a failed step, reset repeats the step's error: the step's code is the one to report.
        let reset = sqlite3_reset(statement)
        guard result == SQLITE_DONE else { throw database.failure("the store failed to write", code: result) }
        guard reset == SQLITE_OK else { throw database.failure("the store failed to write", code: reset) }
    }

    /// Binds the `count` bytes of `buffer` at `start` as text that SQLite reads in place (the nil
    /// destructor is SQLITE_STATIC), and moves `start` past them. An empty text is copied: a nil
    /// pointer would bind NULL, and a literal's pointer lasts only for the call.
    private func bindInPlace(_ position: Int32, _ buffer: UnsafeBufferPointer<UInt8>, from start: inout Int, count: Int) -> Int32 {
        guard count > 0 else { return sqlite3_bind_text(statement, position, "", 0, Self.transient) }
        defer { start += count }
        return sqlite3_bind_text64(statement, position, buffer.baseAddress! + start, sqlite3_uint64(count), nil, UInt8(SQLITE_UTF8))
    }

    /// Runs a query and returns the first column of every row as text.
    func allText(_ values: Value...) throws(ShareQueueError) -> [String] {
        try bind(values)
        defer { sqlite3_reset(statement) }
        var rows: [String] = []
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return rows }
            guard result == SQLITE_ROW else { throw database.failure("the store failed to read", code: result) }
            rows.append(columnText(0))
        }
    }

    /// Runs a query and returns its rows' first `columns` columns as text, nil for NULL.
    func rows(_ values: Value..., columns: Int32) throws(ShareQueueError) -> [[String?]] {
        try bind(values)
        defer { sqlite3_reset(statement) }
        var rows: [[String?]] = []
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return rows }
            guard result == SQLITE_ROW else { throw database.failure("the store failed to read", code: result) }
            rows.append((0..<columns).map { sqlite3_column_type(statement, $0) == SQLITE_NULL ? nil : columnText($0) })
        }
    }

    /// Runs a query and returns the first row's integer columns, or nil if there is no row.
    func firstRow(_ values: Value..., columns: Int32) throws(ShareQueueError) -> [Int64]? {
        try firstRow(values, columns: columns)
    }

    /// Runs a query with a value for each of its parameters, in an array, and returns the first row's integer columns, or nil.
    func firstRow(_ values: [Value], columns: Int32) throws(ShareQueueError) -> [Int64]? {
        try bind(values)
        defer { sqlite3_reset(statement) }
        let result = sqlite3_step(statement)
        if result == SQLITE_DONE { return nil }
        guard result == SQLITE_ROW else { throw database.failure("the store failed to read", code: result) }
        return (0..<columns).map { sqlite3_column_int64(statement, $0) }
    }

    /// A column of the current row as text, all its bytes (U+0000 included).
    private func columnText(_ column: Int32) -> String {
        // Text first, then its length, as SQLite documents: the length is of the text just made.
        guard let text = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }
}
