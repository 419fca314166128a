/* Pinning a test to one CPU, for the writers whose bytes must not depend
 * on how many CPUs ran them: on one, ub_cpus() is 1 and they do all
 * their work on the calling thread.  The including file defines
 * _GNU_SOURCE before its first include (sched_setaffinity). */
#ifndef PIN_CPU_H
#define PIN_CPU_H

#include <CUnit/Basic.h>
#include <sched.h>

/* Pin this thread to the first CPU it may use; *was: the affinity to
 * give back with sched_setaffinity(0, sizeof *was, was). */
static inline void pin_one(cpu_set_t *was)
{
    CU_ASSERT_FATAL(sched_getaffinity(0, sizeof *was, was) == 0);
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, was))
        first++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CU_ASSERT_FATAL(sched_setaffinity(0, sizeof one, &one) == 0);
}

#endif
