// The system's SQLite, as the host-side store uses it.
#include <sqlite3.h>
