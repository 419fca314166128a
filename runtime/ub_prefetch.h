/*
 * ub_prefetch — ask for a cache line before it is read.
 *
 * The writers look records up at random in tables that outgrow the cache,
 * and fetch what a record names a few records ahead of reading it.  GCC
 * (12, -O2) takes a function whose only effect is __builtin_prefetch for
 * one without effects and deletes its calls, inlined or not: helpers of
 * both writers fetched nothing in release builds that way.  An asm
 * statement is an effect GCC keeps, so the fetch happens wherever the
 * call is, in a helper or not.
 */
#ifndef UB_PREFETCH_H
#define UB_PREFETCH_H

/* Fetch the cache line holding p for reading (a hint: p may be any
 * address, NULL or unmapped too -- a prefetch never faults). */
static inline void ub_prefetch(const void *p)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__ volatile("prefetcht0 (%0)" : : "r"(p));
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__ volatile("prfm pldl1keep, [%0]" : : "r"(p));
#else
    __builtin_prefetch(p);
#endif
}

#endif
