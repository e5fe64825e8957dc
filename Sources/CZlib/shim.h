// The system zlib, seen by Swift as the CZlib module (Debian: zlib1g-dev).
#include <zlib.h>
