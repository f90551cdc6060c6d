import ShareQueueCore

/// What the store's database holds, and the check that a database holds exactly
/// that before the store writes to it or reads from it: a file made elsewhere
/// could hold triggers, views, indexes or tables of another shape that change
/// what a write does (a trigger deleting every row inserted), or belong to
/// another program whose tables the store has no business beside.
enum StoreSchema {
    /// The store's `PRAGMA application_id`: "ShQu" in ASCII. A database with any other
    /// non-zero value belongs to another program; 0 is a new database, or a store
    /// made before the value was set.
    static let applicationID: Int64 = 0x5368_5175
    /// `PRAGMA user_version`: the version of the schema below.
    static let version: Int64 = 1
    /// The statements that make the store. Existing stores are compared with the text
    /// SQLite keeps of them, so any change here, even of spacing, is a new `version`.
    static let statements = """
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

    /// The tables SQLite's own `ANALYZE` adds: statistics for the query planner,
    /// which run nothing, so a store someone analysed is still the store's.
    private static let statistics: Set<SchemaObject> = [
        SchemaObject(type: "table", name: "sqlite_stat1", table: "sqlite_stat1", sql: "CREATE TABLE sqlite_stat1(tbl,idx,stat)"),
        SchemaObject(type: "table", name: "sqlite_stat4", table: "sqlite_stat4", sql: "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)"),
    ]

    /// One entry of a database's schema, as `sqlite_master` lists it.
    struct SchemaObject: Hashable {
        let type: String
        let name: String
        let table: String
        /// The statement that made it; nil for an index SQLite made for a key.
        let sql: String?

        var description: String { "\(type) '\(name)'" + (table == name ? "" : " on \(table)") }
    }

    /// Makes `database` the store's, or refuses it, in one transaction: a new
    /// (empty) database gets the schema; the store's own, or one made before the
    /// `application_id` was set, gets the `application_id` and `version`.
    ///
    /// - Throws: `.configuration`, changing nothing, if the database is not the store's.
    static func adopt(_ database: SQLiteDatabase) throws(ShareQueueError) {
        try database.transaction { () throws(ShareQueueError) in
            if try check(database) { try database.execute(statements) }
            try database.execute("PRAGMA application_id = \(applicationID)")
            try database.execute("PRAGMA user_version = \(version)")
        }
    }

    /// Checks, without writing, that `database` is the store's or new.
    ///
    /// - Returns: Whether the database is new: it holds no schema at all.
    /// - Throws: `.configuration` naming what makes the database not the store's.
    static func check(_ database: SQLiteDatabase) throws(ShareQueueError) -> Bool {
        func refuse(_ cause: String) -> ShareQueueError {
            ShareQueueError(.configuration, "refusing a database that is not the store's own", path: database.path, cause: cause)
        }
        let application = try pragma("application_id", of: database)
        guard application == 0 || application == applicationID else {
            throw refuse("its application_id is \(application), not the store's \(applicationID); it belongs to another program")
        }
        let stored = try pragma("user_version", of: database)
        guard stored <= version else {
            throw ShareQueueError(.configuration, "the store has schema \(stored), newer than the \(version) this version understands", path: database.path)
        }
        let found = try objects(in: database).subtracting(statistics)
        if found.isEmpty { return true }
        let expected = try made()
        for object in found.sorted(by: { ($0.type, $0.name) < ($1.type, $1.name) }) where !expected.contains(object) {
            if expected.contains(where: { $0.type == object.type && $0.name == object.name }) {
                throw refuse("its \(object.description) is not as the store makes it")
            }
            throw refuse("it holds \(object.description), which the store does not make")
        }
        if let missing = expected.subtracting(found).sorted(by: { $0.name < $1.name }).first {
            throw refuse("its \(missing.description) is missing")
        }
        return false
    }

    /// Every object in a database's main schema.
    private static func objects(in database: SQLiteDatabase) throws(ShareQueueError) -> Set<SchemaObject> {
        let rows = try database.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master").rows(columns: 4)
        return Set(rows.map { SchemaObject(type: $0[0] ?? "", name: $0[1] ?? "", table: $0[2] ?? "", sql: $0[3]) })
    }

    /// The objects `statements` make, as SQLite records them: made in a database in memory.
    private static func made() throws(ShareQueueError) -> Set<SchemaObject> {
        let scratch = try SQLiteDatabase(path: ":memory:")
        try scratch.execute(statements)
        return try objects(in: scratch)
    }

    private static func pragma(_ name: String, of database: SQLiteDatabase) throws(ShareQueueError) -> Int64 {
        try database.prepare("PRAGMA \(name)").firstRow(columns: 1)?[0] ?? 0
    }

    /// SQLite's count of changes to the schema, to tell cheaply whether it changed since a check.
    static func changeCount(of database: SQLiteDatabase) throws(ShareQueueError) -> Int64 {
        try pragma("schema_version", of: database)
    }
}
