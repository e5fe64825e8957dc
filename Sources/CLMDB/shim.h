// The system LMDB, used only by trellis-bench as its third engine (Debian: liblmdb-dev).
#include <lmdb.h>
