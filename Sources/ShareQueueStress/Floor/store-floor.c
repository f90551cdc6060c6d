/*
 * store-floor: the least work any SQLite store of ShareQueue's records must do,
 * so that the benchmark can quote `host-drain --store` as a ratio to it,
 * measured in the same run. It inserts the rows the store would insert into the
 * store's schema, with the store's settings, through SQLite's C API:
 *
 *   store-floor ROWS DATABASE QUEUE BATCH
 *
 * ROWS is a file the benchmark writes from the records the store ingests: for
 * each row, its ten columns id, date, source, kind, text, json, key, meta,
 * attachments, extra, each a 4-byte little-endian length (0xFFFFFFFF for NULL)
 * and that many bytes. DATABASE is opened (or made) as the store opens it:
 * defensively, synchronous=FULL, WAL, the same schema, application_id and
 * user_version. Then, timed: BATCH rows per BEGIN IMMEDIATE ... COMMIT, each
 * row one prepared insert (and, for a row with a key, the `latest` upkeep),
 * and the position of QUEUE saved once per transaction, as the store does.
 * It prints one line: the rows inserted and the seconds they took.
 *
 * `share-stress bench` compiles it with the C compiler (-O2 -lsqlite3) and
 * checks that it needs libc and libsqlite3 alone.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* As StoreSchema.statements: any difference shows in `sqlite3 DATABASE .schema`. */
static const char *schema =
    "CREATE TABLE IF NOT EXISTS records (\n"
    "    id TEXT PRIMARY KEY,\n"
    "    date TEXT NOT NULL,\n"
    "    source TEXT NOT NULL,\n"
    "    kind TEXT NOT NULL,\n"
    "    text TEXT,\n"
    "    json TEXT,\n"
    "    key TEXT,\n"
    "    meta TEXT,\n"
    "    attachments TEXT,\n"
    "    extra TEXT,\n"
    "    ingested_at TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS records_by_key ON records(key) WHERE key IS NOT NULL;\n"
    "CREATE TABLE IF NOT EXISTS latest (\n"
    "    key TEXT PRIMARY KEY,\n"
    "    id TEXT NOT NULL,\n"
    "    date TEXT NOT NULL,\n"
    "    kind TEXT NOT NULL,\n"
    "    text TEXT,\n"
    "    json TEXT\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS drain_position (\n"
    "    queue TEXT PRIMARY KEY,\n"
    "    segment INTEGER NOT NULL,\n"
    "    offset INTEGER NOT NULL,\n"
    "    updated_at TEXT NOT NULL\n"
    ");";

enum { columns = 10, id = 0, date = 1, kind = 3, text = 4, json = 5, key = 6 };

/* One column of a row: bytes inside the loaded file, or NULL. */
struct value {
    const unsigned char *bytes;
    long length;
};

static sqlite3 *db;

static int fail(const char *what) {
    fprintf(stderr, "store-floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "cannot read the rows");
    return 74;
}

static int run(const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

static double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* The store's timestamp, once per transaction, e.g. 2026-12-01T14:05:39.123Z. */
static void timestamp(char out[32]) {
    struct timespec now;
    struct tm parts;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &parts);
    size_t length = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &parts);
    snprintf(out + length, 32 - length, ".%03ldZ", now.tv_nsec / 1000000);
}

/* Reads the next column at *at, returning 0 past the end of the file or of its bytes. */
static int next_value(const unsigned char **at, const unsigned char *end, struct value *value) {
    if (end - *at < 4) return 0;
    const unsigned char *p = *at;
    unsigned long length = p[0] | p[1] << 8 | p[2] << 16 | (unsigned long)p[3] << 24;
    *at += 4;
    if (length == 0xFFFFFFFFul) {
        value->bytes = NULL;
        value->length = 0;
        return 1;
    }
    if ((unsigned long)(end - *at) < length) return 0;
    value->bytes = *at;
    value->length = (long)length;
    *at += length;
    return 1;
}

/* Text bound with its byte length (never as a C string), or NULL; SQLITE_STATIC: the file stays loaded. */
static int bind(sqlite3_stmt *statement, int position, struct value value) {
    if (!value.bytes) return sqlite3_bind_null(statement, position);
    return sqlite3_bind_text64(statement, position, (const char *)value.bytes, (sqlite3_uint64)value.length, SQLITE_STATIC, SQLITE_UTF8);
}

static int step(sqlite3_stmt *statement) {
    int result = sqlite3_step(statement);
    sqlite3_reset(statement);
    return result == SQLITE_DONE ? SQLITE_OK : result;
}

int main(int argc, char **argv) {
    if (argc != 5 || atol(argv[4]) < 1) {
        fprintf(stderr, "usage: store-floor ROWS DATABASE QUEUE BATCH\n");
        return 64;
    }
    long batch = atol(argv[4]);

    /* The rows, loaded whole before anything is timed. */
    FILE *file = fopen(argv[1], "rb");
    if (!file || fseek(file, 0, SEEK_END) != 0) return fail("open the rows");
    long size = ftell(file);
    unsigned char *rows = malloc(size > 0 ? (size_t)size : 1);
    rewind(file);
    if (!rows || size < 0 || fread(rows, 1, (size_t)size, file) != (size_t)size) return fail("read the rows");
    fclose(file);

    /* Opened as SQLiteDatabase opens the store, and made the store's as StoreSchema.adopt makes it. */
    if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK)
        return fail("open");
    int settings[][2] = { { SQLITE_DBCONFIG_DEFENSIVE, 1 }, { SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0 },
                          { SQLITE_DBCONFIG_ENABLE_TRIGGER, 0 }, { SQLITE_DBCONFIG_ENABLE_VIEW, 0 } };
    for (int i = 0; i < 4; i++) {
        if (sqlite3_db_config(db, settings[i][0], settings[i][1], NULL) != SQLITE_OK) return fail("configure");
    }
    if (sqlite3_busy_timeout(db, 5000) != SQLITE_OK || run("PRAGMA synchronous=FULL") != SQLITE_OK || run("PRAGMA fullfsync=ON") != SQLITE_OK
        || run("PRAGMA cache_size=-8192") != SQLITE_OK)
        return fail("set pragmas");
    if (run("BEGIN IMMEDIATE") != SQLITE_OK || run(schema) != SQLITE_OK || run("PRAGMA application_id = 1399345525") != SQLITE_OK
        || run("PRAGMA user_version = 1") != SQLITE_OK || run("COMMIT") != SQLITE_OK || run("PRAGMA journal_mode=WAL") != SQLITE_OK)
        return fail("make the schema");

    /* StoreSink's statements, word for word. */
    sqlite3_stmt *insert, *latest_date, *update_latest, *save_position;
    if (sqlite3_prepare_v2(db,
            "INSERT INTO records (id, date, source, kind, text, json, key, meta, attachments, extra, ingested_at)\n"
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING", -1, &insert, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db,
            "INSERT INTO latest (key, id, date, kind, text, json) VALUES (?, ?, ?, ?, ?, ?)\n"
            "ON CONFLICT(key) DO UPDATE SET id = excluded.id, date = excluded.date, kind = excluded.kind,\n"
            "    text = excluded.text, json = excluded.json", -1, &update_latest, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "SELECT date FROM latest WHERE key = ?", -1, &latest_date, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db,
            "INSERT INTO drain_position (queue, segment, offset, updated_at) VALUES (?, ?, ?, ?)\n"
            "ON CONFLICT(queue) DO UPDATE SET segment = excluded.segment, offset = excluded.offset, updated_at = excluded.updated_at",
            -1, &save_position, NULL) != SQLITE_OK)
        return fail("prepare");

    /* Timed: the transactions alone. Reading a row's lengths from memory is a few instructions a column. */
    const unsigned char *at = rows, *end = rows + size;
    long inserted = 0;
    char now[32];
    double start = seconds_now();
    while (at < end) {
        timestamp(now);
        if (run("BEGIN IMMEDIATE") != SQLITE_OK) return fail("begin");
        for (long n = 0; n < batch && at < end; n++) {
            struct value row[columns];
            for (int c = 0; c < columns; c++) {
                if (!next_value(&at, end, &row[c])) return fail("a row is cut short");
            }
            int result = SQLITE_OK;
            for (int c = 0; c < columns && result == SQLITE_OK; c++) result = bind(insert, c + 1, row[c]);
            if (result != SQLITE_OK || sqlite3_bind_text(insert, 11, now, -1, SQLITE_STATIC) != SQLITE_OK || step(insert) != SQLITE_OK)
                return fail("insert");
            inserted++;
            /* A row seen before changes nothing; a keyed one keeps `latest` newest. Dates are compared as
             * text, which orders them as instants when they share one form, as the benchmark's do. */
            if (sqlite3_changes(db) == 0 || !row[key].bytes) continue;
            if (bind(latest_date, 1, row[key]) != SQLITE_OK) return fail("bind");
            int found = sqlite3_step(latest_date);
            int older = 0;
            if (found == SQLITE_ROW) {
                const unsigned char *stored = sqlite3_column_text(latest_date, 0);
                long stored_length = sqlite3_column_bytes(latest_date, 0);
                long shorter = stored_length < row[date].length ? stored_length : row[date].length;
                int order = memcmp(row[date].bytes, stored, (size_t)shorter);
                older = order < 0 || (order == 0 && row[date].length < stored_length);
            } else if (found != SQLITE_DONE) {
                return fail("read latest");
            }
            sqlite3_reset(latest_date);
            if (older) continue;
            int fields[] = { key, id, date, kind, text, json };
            for (int c = 0; c < 6 && result == SQLITE_OK; c++) result = bind(update_latest, c + 1, row[fields[c]]);
            if (result != SQLITE_OK || step(update_latest) != SQLITE_OK) return fail("update latest");
        }
        if (sqlite3_bind_text(save_position, 1, argv[3], -1, SQLITE_STATIC) != SQLITE_OK || sqlite3_bind_int64(save_position, 2, 1) != SQLITE_OK
            || sqlite3_bind_int64(save_position, 3, inserted) != SQLITE_OK || sqlite3_bind_text(save_position, 4, now, -1, SQLITE_STATIC) != SQLITE_OK
            || step(save_position) != SQLITE_OK)
            return fail("save the position");
        if (run("COMMIT") != SQLITE_OK) return fail("commit");
    }
    double seconds = seconds_now() - start;
    /* Untimed: closing folds the log into the database, as host-drain's close does. */
    sqlite3_finalize(insert);
    sqlite3_finalize(latest_date);
    sqlite3_finalize(update_latest);
    sqlite3_finalize(save_position);
    if (sqlite3_close(db) != SQLITE_OK) return fail("close");
    printf("%ld %.6f\n", inserted, seconds);
    return 0;
}
