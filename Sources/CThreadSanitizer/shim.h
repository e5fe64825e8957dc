// ThreadSanitizer's happens-before annotations, for locks it cannot see (Synchronization.Mutex waits with futex
// calls its runtime does not intercept). The entry points are weak: in a process without the runtime they are null
// and the calls do nothing.
#ifndef TRELLIS_THREAD_SANITIZER_H
#define TRELLIS_THREAD_SANITIZER_H

void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

static inline void trellis_tsan_acquire(void *address) {
    if (__tsan_acquire) __tsan_acquire(address);
}

static inline void trellis_tsan_release(void *address) {
    if (__tsan_release) __tsan_release(address);
}

/// Whether the process runs with ThreadSanitizer's runtime.
static inline int trellis_tsan_active(void) {
    return __tsan_acquire ? 1 : 0;
}

#endif
