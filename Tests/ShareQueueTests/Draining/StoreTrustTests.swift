import Foundation
import Testing
@testable import ShareQueueCore

/// `host-drain --store` writes only into a database that is the store's own, or
/// new: a planted one (triggers, views, another program's tables, another
/// application_id) is refused with 78 before anything is inserted, and the queue
/// keeps every record for a later drain.
@Suite("SQLite store trusts only its own database", .serialized, .runTimeLimit(minutes: 3))
struct StoreTrustTests {
    /// The store's `PRAGMA application_id`, "ShQu" in ASCII.
    static let applicationID = "1399345525"

    /// What is planted in a real store, and a word the refusal must name.
    struct Planting: CustomTestStringConvertible, Sendable {
        let name: String
        let sql: String
        let named: String
        var testDescription: String { name }
    }

    static let plantings: [Planting] = [
        Planting(name: "a trigger that deletes every inserted row",
                 sql: "CREATE TRIGGER wipe AFTER INSERT ON records BEGIN DELETE FROM records WHERE id = new.id; END;", named: "trigger 'wipe'"),
        Planting(name: "a trigger on latest",
                 sql: "CREATE TRIGGER forget AFTER INSERT ON latest BEGIN DELETE FROM records; END;", named: "trigger 'forget'"),
        Planting(name: "a view", sql: "CREATE VIEW recent AS SELECT id FROM records;", named: "view 'recent'"),
        Planting(name: "an extra table", sql: "CREATE TABLE notes (body TEXT);", named: "table 'notes'"),
        Planting(name: "an extra index", sql: "CREATE INDEX records_by_date ON records(date);", named: "index 'records_by_date'"),
        Planting(name: "a records table of another shape",
                 sql: "DROP INDEX records_by_key; ALTER TABLE records RENAME TO old; CREATE TABLE records (id TEXT PRIMARY KEY COLLATE NOCASE, date TEXT NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL, text TEXT, json TEXT, key TEXT, meta TEXT, attachments TEXT, extra TEXT, ingested_at TEXT NOT NULL); INSERT INTO records SELECT * FROM old; DROP TABLE old; CREATE INDEX records_by_key ON records(key) WHERE key IS NOT NULL;",
                 named: "table 'records'"),
        Planting(name: "another application_id", sql: "PRAGMA application_id = 1;", named: "application_id is 1,"),
    ]

    @Test("A store with something planted in it is refused with 78, the queue untouched", arguments: plantings)
    func plantedStoreIsRefused(_ planting: Planting) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        // A real store first, then the planting beside what the store made.
        try queue.append(["--key", "k", "first"])
        #expect(try queue.drain(["--store", db]).status == 0)
        try plant(db, planting.sql)
        try expectRefusal(of: db, queue: queue, naming: planting.named)
        #expect(try sqlite(db, "SELECT text FROM records") == ["first"])
        #expect(try sqlite(db, "SELECT text FROM latest") == ["first"])
    }

    @Test("Another program's database is refused with 78 and left byte for byte")
    func foreignDatabaseIsRefused() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("notes.sqlite")
        try plant(db, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine');")
        let before = try Data(contentsOf: URL(fileURLWithPath: db))
        try expectRefusal(of: db, queue: queue, naming: "table 'notes'")
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
        #expect(try sqlite(db, "SELECT name FROM sqlite_schema") == ["notes"])
    }

    @Test("A planted store is refused by --status too, which writes nothing into any store")
    func statusRefusesAndWritesNothing() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        try queue.append(["one"])
        #expect(try queue.drain(["--store", db]).status == 0)
        try plant(db, "CREATE TRIGGER wipe AFTER INSERT ON records BEGIN DELETE FROM records; END;")
        let status = try queue.drain(["--store", db, "--status"])
        #expect(status.status == 78, "\(status.stderr)")
        #expect(status.stderr.contains(db) && status.stderr.contains("trigger 'wipe'"), "\(status.stderr)")
        // An empty file is a new store: 0 rows, and --status leaves it empty.
        let empty = scratch.file("empty.sqlite")
        _ = FileManager.default.createFile(atPath: empty, contents: nil)
        #expect(try queue.status(["--store", empty])["rows"] as? Int == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
    }

    @Test("--status --store with no database there exits 66 naming it, and makes none", arguments: [[], ["--json"], ["--prometheus"]])
    func statusOfAMissingStore(_ format: [String]) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["one"])
        let typo = scratch.file("typo.db")
        let status = try queue.drain(["--status", "--store", typo] + format)
        #expect(status.status == 66, "\(status.stderr)")
        #expect(status.stderr.contains("host-drain: error: ") && status.stderr.contains(typo), "\(status.stderr)")
        #expect(status.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("typo.db") }.isEmpty)
    }

    @Test("--status --store with a FIFO or a symlink there exits 74 at once, reading nothing", arguments: ["fifo", "symlink"])
    func statusOfAStoreThatIsNoFile(_ kind: String) throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        try queue.append(["one"])
        let store = scratch.file("inbox.sqlite")
        if kind == "fifo" { #expect(mkfifo(store, 0o600) == 0) } else { #expect(symlink("/dev/zero", store) == 0) }
        // A FIFO opened for reading would wait for a writer for ever.
        let status = try RunningTool("host-drain", ["--dir", queue.path, "--status", "--store", store], in: scratch)
        defer { if status.process.isRunning { status.kill() } }
        try waitUntil("--status to finish", seconds: 20) { !status.process.isRunning }
        let result = status.wait()
        #expect(result.status == 74 && result.stderr.contains("not a regular file") && result.stderr.contains(store), "\(result.stderr)")
    }

    @Test("A store written before the application_id was set is accepted, and stamped by the next drain (not by --status)")
    func previousVersionStoreIsStamped() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        try queue.append(["one"])
        #expect(try queue.drain(["--store", db]).status == 0)
        #expect(try sqlite(db, "PRAGMA application_id") == [Self.applicationID])
        try plant(db, "PRAGMA application_id = 0;")
        #expect(try queue.status(["--store", db])["rows"] as? Int == 1)
        #expect(try sqlite(db, "PRAGMA application_id") == ["0"])
        try queue.append(["two"])
        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try sqlite(db, "SELECT text FROM records ORDER BY rowid") == ["one", "two"])
        #expect(try sqlite(db, "PRAGMA application_id") == [Self.applicationID])
    }

    @Test("A new store, an empty file and a store analysed by SQLite are the store's own")
    func ownStoresAreAccepted() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let empty = scratch.file("empty.sqlite")
        _ = FileManager.default.createFile(atPath: empty, contents: nil)
        try queue.append(["one"])
        #expect(try queue.drain(["--store", empty]).status == 0)
        #expect(try sqlite(empty, "PRAGMA application_id") == [Self.applicationID])
        try plant(empty, "ANALYZE;")
        try queue.append(["two"])
        let drain = try queue.drain(["--store", empty])
        #expect(drain.status == 0, "\(drain.stderr)")
        #expect(try sqlite(empty, "SELECT text FROM records ORDER BY rowid") == ["one", "two"])
    }

    @Test("A store the drain makes is its user's alone, whatever the umask: the database, its -wal and its -shm")
    func newStoreIsPrivate() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        try queue.append(["one"])
        // A watcher holds the store open, so that its -wal and -shm files are there to look at.
        let watcher = try RunningTool("/bin/sh", ["-c", "umask 022; exec '\(Executables.path("host-drain"))' --dir '\(queue.path)' --store '\(db)' --watch"], in: scratch)
        defer { watcher.kill() }
        // Looked at only once the drain has made it: the sqlite3 shell would make it otherwise.
        try waitUntil("the record stored") { FileManager.default.fileExists(atPath: db) && (try? sqlite(db, "SELECT text FROM records")) == ["one"] }
        for file in [db, db + "-wal", db + "-shm"] {
            var status = stat()
            #expect(lstat(file, &status) == 0 && status.st_mode & 0o077 == 0, "\(file): \(String(status.st_mode & 0o777, radix: 8))")
        }
    }

    @Test("A trigger planted while a watcher runs is found before its next batch: 78, the record kept")
    func schemaChangedDuringWatch() throws {
        let scratch = TemporaryDirectory()
        let queue = TestQueue(in: scratch)
        let db = scratch.file("inbox.sqlite")
        try queue.append(["one"])
        let watcher = try RunningTool("host-drain", ["--dir", queue.path, "--store", db, "--watch", "--debounce", "10ms"], in: scratch)
        defer { watcher.kill() }
        try waitUntil("the first record in the store") { try sqlite(db, "SELECT count(*) FROM records") == ["1"] }
        try plant(db, "CREATE TRIGGER wipe AFTER INSERT ON records BEGIN DELETE FROM records; END;")
        let two = try queue.append(text: "two")
        try waitUntil("the watcher to refuse the store") { !watcher.process.isRunning }
        let result = watcher.wait()
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("(\(db))") && result.stderr.contains("trigger 'wipe'"), "\(result.stderr)")
        #expect(try sqlite(db, "SELECT text FROM records") == ["one"])
        #expect(try queue.status()["pending"] as? Int == 1)
        let fresh = scratch.file("fresh.sqlite")
        #expect(try queue.drain(["--store", fresh]).status == 0)
        #expect(try sqlite(fresh, "SELECT id FROM records") == two)
    }

    /// Appends four records, drains into `db`, and checks the refusal: 78, a
    /// message naming the database and what is wrong, and every record still queued
    /// (none set aside or dead-lettered), as a drain into a fresh store then shows.
    private func expectRefusal(of db: String, queue: TestQueue, naming what: String) throws {
        let waiting = FileManager.default.fileExists(atPath: queue.path) ? try queue.status()["pending"] as? Int ?? 0 : 0
        let appended = try queue.appendLines(["a", "b", "c"], ["--key", "k"]) + queue.append(text: "d")
        let drain = try queue.drain(["--store", db])
        #expect(drain.status == 78, "\(drain.stderr)")
        #expect(drain.stderr.contains("host-drain: error:") && drain.stderr.contains("(\(db))"), "\(drain.stderr)")
        #expect(drain.stderr.contains(what), "\(drain.stderr)")
        let status = try queue.status()
        #expect(status["pending"] as? Int == waiting + 4)
        #expect(status["deadLetters"] as? Int == 0 && status["quarantined"] as? Int == 0)
        let fresh = queue.scratch.file("fresh.sqlite")
        let later = try queue.drain(["--store", fresh])
        #expect(later.status == 0, "\(later.stderr)")
        #expect(Set(try sqlite(fresh, "SELECT id FROM records")).isSuperset(of: appended))
        #expect(try sqlite(fresh, "SELECT count(*) FROM records") == ["\(waiting + 4)"])
    }

    /// Runs `sql` on `db` with the sqlite3 tool, requiring it to succeed.
    private func plant(_ db: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [db, sql]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && message.isEmpty, "sqlite3: \(message)")
    }
}
