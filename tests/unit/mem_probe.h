/* What a test can see of memory the library got from the system: whether
 * its pages are resident, and whether it asked for huge pages. */
#ifndef UB_MEM_PROBE_H
#define UB_MEM_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Whether the mapping holding p asks for huge pages (the "hg" of its
 * VmFlags in /proc/self/smaps): 1, 0, or -1 when that cannot be told. */
static inline int ub_test_huge_hinted(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    bool in = false;
    int got = -1;
    while (got < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0)
            got = strstr(line, " hg") != NULL;
    }
    fclose(f);
    return got;
}

#endif
