import ShareQueue
import ShareQueueSystem

/// The durable SQLite queue that ShareQueue's benchmark compares against:
/// WAL, `synchronous=FULL`, one transaction per record.
package enum SQLiteBenchmark {
    /// Inserts `count` rows of `payload`, each in its own transaction; returns the seconds taken.
    package static func durableInserts(path: String, count: Int, payload: String) throws(ShareQueueError) -> Double {
        let database = try SQLiteDatabase(path: path)
        try database.execute("CREATE TABLE IF NOT EXISTS queue (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        let insert = try database.prepare("INSERT INTO queue (body) VALUES (?)")
        let start = Host.monotonicSeconds()
        for _ in 0..<count {
            try database.transaction { () throws(ShareQueueError) in try insert.run(.text(payload)) }
        }
        return Host.monotonicSeconds() - start
    }
}
