/* ub_pages: a pool of present pages, moved between mappings by mremap. */
#define _GNU_SOURCE /* mremap */
#include "ub_pages.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ub_arena.h"

#if !UB_ASAN && defined(MAP_ANONYMOUS) && defined(MREMAP_FIXED) &&         \
    defined(MREMAP_MAYMOVE)
#define UB_PAGES_MOVE 1
#else
#define UB_PAGES_MOVE 0
#endif

/* A run of pages the pool holds: a mapping of its own. */
typedef struct ub_page_run {
    char *p;
    size_t n;
} ub_page_run;

struct ub_pages {
    pthread_mutex_t mu;
    size_t max, held, page;
    ub_page_run *runs; /* taken from the end: the runs given last */
    size_t nruns, cap;
    size_t filled; /* (ub_pages_filled) */
};

ub_pages *ub_pages_new(size_t max)
{
    ub_pages *pp = calloc(1, sizeof *pp);
    if (!pp)
        return NULL;
    if (pthread_mutex_init(&pp->mu, NULL) != 0) {
        free(pp);
        return NULL;
    }
    long pg = sysconf(_SC_PAGESIZE);
    pp->page = pg > 0 ? (size_t)pg : 4096;
    pp->max = max / pp->page * pp->page;
    return pp;
}

void ub_pages_release(ub_pages *pp)
{
    if (!pp)
        return;
    pthread_mutex_lock(&pp->mu);
    for (size_t i = 0; i < pp->nruns; i++)
        munmap(pp->runs[i].p, pp->runs[i].n);
    pp->nruns = 0;
    pp->held = 0;
    pthread_mutex_unlock(&pp->mu);
}

void ub_pages_free(ub_pages *pp)
{
    if (!pp)
        return;
    ub_pages_release(pp);
    pthread_mutex_destroy(&pp->mu);
    free(pp->runs);
    free(pp);
}

size_t ub_pages_give(ub_pages *pp, void *p, size_t n)
{
#if UB_PAGES_MOVE
    if (!pp || (uintptr_t)p % pp->page)
        return 0;
    size_t len = n / pp->page * pp->page;
    pthread_mutex_lock(&pp->mu);
    if (len > pp->max - pp->held)
        len = pp->max - pp->held;
    if (!len)
        goto none;
    if (pp->nruns == pp->cap) {
        size_t cap = pp->cap ? pp->cap * 2 : 64;
        ub_page_run *r = realloc(pp->runs, cap * sizeof *r);
        if (!r)
            goto none;
        pp->runs = r;
        pp->cap = cap;
    }
    /* a place of the pool's own, then the pages moved there: mremap to
     * the same size would leave them where they are */
    void *to = mmap(NULL, len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (to == MAP_FAILED)
        goto none;
    if (mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to) == MAP_FAILED) {
        munmap(to, len);
        goto none;
    }
    pp->runs[pp->nruns++] = (ub_page_run){to, len};
    pp->held += len;
    pthread_mutex_unlock(&pp->mu);
    return len;
none:
    pthread_mutex_unlock(&pp->mu);
#else
    (void)pp;
    (void)p;
    (void)n;
#endif
    return 0;
}

size_t ub_pages_fill(ub_pages *pp, void *p, size_t n)
{
    size_t done = 0;
#if UB_PAGES_MOVE
    if (!pp || (uintptr_t)p % pp->page)
        return 0;
    n = n / pp->page * pp->page;
    pthread_mutex_lock(&pp->mu);
    while (done < n && pp->nruns) {
        ub_page_run *r = &pp->runs[pp->nruns - 1];
        size_t take = r->n < n - done ? r->n : n - done;
        char *from = r->p + r->n - take;
        if (mremap(from, take, take, MREMAP_MAYMOVE | MREMAP_FIXED,
                   (char *)p + done) == MAP_FAILED)
            break;
        r->n -= take;
        pp->held -= take;
        if (!r->n)
            pp->nruns--;
        done += take;
    }
    pp->filled += done;
    pthread_mutex_unlock(&pp->mu);
#else
    (void)pp;
    (void)p;
    (void)n;
#endif
    return done;
}

size_t ub_pages_filled(ub_pages *pp)
{
    if (!pp)
        return 0;
    pthread_mutex_lock(&pp->mu);
    size_t n = pp->filled;
    pthread_mutex_unlock(&pp->mu);
    return n;
}

size_t ub_pages_ahead(ub_pages *pp, void *base, size_t present,
                      size_t written, size_t end, size_t size)
{
    /* bytes written past present (copied in when the block was made, or
     * written into a bound) are in pages already there, which no pool
     * page may replace: the fill starts past them, at a page boundary */
    if (written > present)
        present = written;
    if (pp) {
        size_t to = ub_populate_to(present, end, size);
        if (to > present)
            present += ub_pages_fill(pp, (char *)base + present, to - present);
    }
    return ub_populate_ahead(base, present, end, size);
}

void ub_pages_lead_init(ub_pages_lead *l)
{
    atomic_init(&l->lo, 0);
    atomic_init(&l->hi, 0);
}

void ub_pages_lead_set(ub_pages_lead *l, const void *p, size_t n)
{
    /* lo first, then hi: a helper reading between sees an empty or a
     * short range, never one past what the writer meant */
    atomic_store_explicit(&l->hi, 0, memory_order_relaxed);
    atomic_store_explicit(&l->lo, (uintptr_t)p, memory_order_relaxed);
    atomic_store_explicit(&l->hi, p ? (uintptr_t)p + n : 0,
                          memory_order_release);
}

/* A helper's step: small enough that it never runs far ahead of what
 * the writer said, big enough that one call is worth its system call. */
#define UB_LEAD_STEP ((size_t)256 << 10)

bool ub_pages_lead_help(ub_pages_lead *l, uintptr_t *done)
{
    uintptr_t hi = atomic_load_explicit(&l->hi, memory_order_acquire);
    uintptr_t lo = atomic_load_explicit(&l->lo, memory_order_relaxed);
    if (!lo || hi <= lo)
        return false;
    if (*done == hi)
        return false; /* (done up to there already) */
    uintptr_t from = *done >= lo && *done < hi ? *done : lo;
    uintptr_t to = hi - from > UB_LEAD_STEP ? from + UB_LEAD_STEP : hi;
    ub_populate((void *)from, to - from);
    *done = to;
    return true;
}
