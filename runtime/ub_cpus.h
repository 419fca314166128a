/*
 * ub_cpus — how many threads this process may usefully run at once.
 *
 * Every part that spreads work over threads (the split parse, clip
 * reading, stitching, the crate writer) asks here, so that all of them
 * honour the same limits: the CPU affinity the process was started with
 * (taskset, a scheduler's pinning) and a cgroup v2 CPU quota (a
 * container's --cpus), whichever is smaller.
 */
#ifndef UB_CPUS_H
#define UB_CPUS_H

/* At least 1. */
unsigned ub_cpus(void);

#endif
