#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "ub_cpus.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A cgroup v2 quota ("max" or "QUOTA PERIOD" in cpu.max), rounded up to
 * whole CPUs; 0 when there is none.  Read each time: it is one small
 * file, asked for once per command, and a global cache would be mutable
 * state shared by threads. */
static unsigned ub_cgroup_cpus(void)
{
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (!f)
        return 0;
    char quota[32];
    unsigned long period;
    unsigned n = 0;
    if (fscanf(f, "%31s %lu", quota, &period) == 2 &&
        strcmp(quota, "max") != 0 && period > 0) {
        unsigned long q = strtoul(quota, NULL, 10);
        unsigned long c = (q + period - 1) / period;
        if (c >= 1 && c <= 1u << 20)
            n = (unsigned)c;
    }
    fclose(f);
    return n;
}

unsigned ub_cpus(void)
{
    unsigned n = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = (unsigned)CPU_COUNT(&set);
#endif
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (unsigned)c : 1;
    }
    unsigned q = ub_cgroup_cpus();
    return q && q < n ? q : n;
}
