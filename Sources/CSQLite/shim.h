// The system's SQLite, as the host-side store uses it.
#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: this is its form for
// the settings that take an int and report the value now in force.
static inline int sharequeue_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *now) {
    return sqlite3_db_config(db, op, value, now);
}
