/* What a test can see of memory the library got from the system: whether
 * its pages are resident. */
#ifndef UB_MEM_PROBE_H
#define UB_MEM_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Whether every whole page inside p[0..n) is resident (mincore), as
 * memory made present ahead is and memory never touched is not. */
static inline bool ub_test_resident(const void *p, size_t n)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + pg - 1) & ~(pg - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(pg - 1);
    if (hi <= lo)
        return true;
    size_t pages = (hi - lo) / pg;
    unsigned char *in = malloc(pages);
    bool all = in && mincore((void *)lo, hi - lo, in) == 0;
    for (size_t i = 0; all && i < pages; i++)
        all = in[i] & 1;
    free(in);
    return all;
}

#endif
