// Linux thread placement for Trellis, through system calls (the Glibc module does not export the GNU extensions
// sched_getcpu and sched_setaffinity).
#include <sys/syscall.h>
#include <unistd.h>
#include <string.h>

/// The CPU the calling thread runs on, or -1.
static inline int trellis_current_cpu(void) {
    unsigned cpu = 0;
    return syscall(SYS_getcpu, &cpu, (void *)0, (void *)0) == 0 ? (int)cpu : -1;
}

/// Lets the calling thread run on every CPU it may run on but `cpu`; returns 0 when it did, -1 when it could not
/// (the thread may run on `cpu` alone, or the calls failed), leaving the thread as it was.
static inline int trellis_avoid_cpu(int cpu) {
    unsigned long mask[16];
    memset(mask, 0, sizeof mask);
    long bytes = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    if (bytes <= 0 || cpu < 0 || cpu >= (int)(8 * sizeof mask)) return -1;
    unsigned long bit = 1UL << (cpu % (8 * sizeof(unsigned long)));
    unsigned long *word = &mask[cpu / (8 * sizeof(unsigned long))];
    if (!(*word & bit)) return -1;
    *word &= ~bit;
    int others = 0;
    for (unsigned i = 0; i < sizeof mask / sizeof mask[0]; i++) others |= mask[i] != 0;
    if (!others) return -1;
    return syscall(SYS_sched_setaffinity, 0, (size_t)bytes, mask) == 0 ? 0 : -1;
}
