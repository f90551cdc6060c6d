import Foundation
import Testing

/// The benchmark's store floor (`Floor/store-floor.c`): plain C that inserts the
/// store's rows into the store's schema, which `--store` is quoted against.
@Suite("The benchmark's store floor", .serialized, .runTimeLimit(minutes: 5), OptionalProgram.needs("readelf", "sqlite3"))
struct StoreFloorTests {
    @Test("bench --only store builds the floor needing libc and libsqlite3 alone; it inserts exactly the rows it is given, into the schema a store has")
    func storeFloor() throws {
        let scratch = TemporaryDirectory()
        let bench = scratch.file("bench")
        let result = try run("share-stress", ["bench", "--quick", "--only", "store", "--json", "--dir", bench], in: scratch)
        #expect(result.status == 0, "\(result.stderr)")
        let figures = try jsonObjects(result.stdout)
        #expect(figures.count == 2 && figures.allSatisfy { ($0["name"] as? String ?? "").contains("--store") && $0["floor"] is Double })

        guard let readelf = OptionalProgram.required("readelf") else { return }
        let needed = try run(readelf, ["-d", bench + "/store-floor"], in: scratch).lines.filter { $0.contains("(NEEDED)") }
        #expect(needed.count == 2 && needed.contains { $0.contains("[libc.so.") } && needed.contains { $0.contains("[libsqlite3.so.") }, "\(needed)")

        // The last runs of each, into a store holding the first queue's 20,000 rows: the second queue's as many again.
        let store = bench + "/store-run.sqlite", floorDatabase = bench + "/store-floor.sqlite"
        let storeSchema = try sqlite(store, ".schema")
        let floorSchema = try sqlite(floorDatabase, ".schema")
        #expect(!storeSchema.isEmpty && storeSchema == floorSchema)
        for database in [store, floorDatabase] {
            #expect(try sqlite(database, "SELECT count(*), count(DISTINCT id) FROM records; PRAGMA application_id") == ["40000|40000", "1399345525"])
        }

        // Rows by hand: a text holding U+0000, NULLs, and a key whose newest date wins in `latest`.
        let rows: [[String?]] = [
            ["0190a1b2-0000-7000-8000-000000000001", "2026-01-02T00:00:00.000Z", "test", "text", "a\u{0}b", nil, "k", nil, nil, nil],
            ["0190a1b2-0000-7000-8000-000000000002", "2026-01-01T00:00:00.000Z", "test", "text", "older", nil, "k", nil, nil, nil],
            ["0190a1b2-0000-7000-8000-000000000003", "2026-01-03T00:00:00.000Z", "test", "url", "https://example.com/", nil, nil,
             "{\"app\":\"x\"}", nil, "{\"extra\":1}"],
        ]
        var file: [UInt8] = []
        for column in rows.joined() {
            guard let column else { file += [0xFF, 0xFF, 0xFF, 0xFF]; continue }
            file += (0..<4).map { UInt8(truncatingIfNeeded: column.utf8.count >> ($0 * 8)) } + Array(column.utf8)
        }
        let rowsFile = scratch.file("rows")
        try Data(file).write(to: URL(fileURLWithPath: rowsFile))
        let database = scratch.file("floor.sqlite")
        let inserted = try run(bench + "/store-floor", [rowsFile, database, "queue", "2"], in: scratch)
        #expect(inserted.status == 0, "\(inserted.stderr)")
        #expect(inserted.output.split(separator: " ").first == "3")
        #expect(try sqlite(database, ".schema") == storeSchema)
        #expect(try sqlite(database, "SELECT id, length(CAST(text AS BLOB)), key IS NULL, meta, extra FROM records ORDER BY rowid") == [
            "0190a1b2-0000-7000-8000-000000000001|3|0||", "0190a1b2-0000-7000-8000-000000000002|5|0||",
            "0190a1b2-0000-7000-8000-000000000003|20|1|{\"app\":\"x\"}|{\"extra\":1}",
        ])
        #expect(try sqlite(database, "SELECT key, id FROM latest; SELECT queue, offset FROM drain_position") == [
            "k|0190a1b2-0000-7000-8000-000000000001", "queue|3",
        ])
    }
}
