// Hints to the processor that Swift has no spelling for.
#ifndef TRELLIS_HINTS_H
#define TRELLIS_HINTS_H

/// Starts bringing the cache line at `address` in for a write, without waiting for it (a hint: no fault, no effect on
/// what the program computes).
static inline void trellis_prefetch_for_write(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

/// Starts bringing the cache line at `address` in for a read, without waiting for it.
static inline void trellis_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
