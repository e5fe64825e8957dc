// The system SQLite, used only by trellis-bench as the peer it is measured against (Debian: libsqlite3-dev).
#include <sqlite3.h>
