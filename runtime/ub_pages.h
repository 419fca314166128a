/*
 * ub_pages — new pages kept off the busy thread's path: pages one part of
 * a process is done with, moved to memory another part is about to write
 * (a pool), and pages one thread will write next, made present by another
 * that has time (a lead).
 *
 * On the virtual machines usdbake is measured on, a page the process has
 * not written yet costs a fault and a clear, often a fault on the host
 * too: 64 MiB took 12-220 ms to make present, where moving 64 MiB of
 * pages already present into another mapping (mremap) and writing them
 * took 3-6 ms.  A streamed convert frees its tail's model as it writes
 * it out while the writer's arrays grow by as much: the pool carries the
 * one's pages to the other.
 *
 * Pages given are moved out of the giver's mapping at once (the range is
 * then unmapped there), so the pool alone owns them; pages taken are
 * moved into the taker's mapping, replacing what was there.  Their bytes
 * are whatever the giver left: a taker writes before it reads.  Any
 * thread may give or take.  Under AddressSanitizer, or where mremap is
 * missing, the pool takes nothing and gives nothing.
 */
#ifndef UB_PAGES_H
#define UB_PAGES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ub_pages ub_pages;

/* A pool that holds at most max bytes; NULL when out of memory. */
ub_pages *ub_pages_new(size_t max);
/* Unmap what the pool holds, and free it (NULL: nothing). */
void ub_pages_free(ub_pages *pp);
/* Unmap what the pool holds; it stays usable, and empty. */
void ub_pages_release(ub_pages *pp);

/* Take the whole pages at the start of [p, p + n), p page-aligned (else
 * none) -- anonymous private memory of the caller's, no longer used -- up
 * to what the pool has room for: they are unmapped at p.  Returns the bytes taken from p (a whole
 * number of pages, 0 when pp is NULL); the caller gives back the rest as
 * it would have. */
size_t ub_pages_give(ub_pages *pp, void *p, size_t n);

/* Put pool pages at [p, p + n): p and n whole pages, inside an
 * anonymous private writable mapping of the caller's whose pages there
 * are not present yet.  Returns the bytes filled from p (0 when pp is
 * NULL or empty); their contents are undefined. */
size_t ub_pages_fill(ub_pages *pp, void *p, size_t n);

/* The bytes the pool has filled in over its life (0 for NULL). */
size_t ub_pages_filled(ub_pages *pp);

/* ub_populate_ahead (ub_arena.h) with the pool's pages first: the next
 * step of the block at base (size bytes, present of them present, the
 * first `written` of them holding data, which may be more) up to past
 * end, filled from pp as far as it has pages, the rest made present.
 * Returns the new count of bytes present. */
size_t ub_pages_ahead(ub_pages *pp, void *base, size_t present,
                      size_t written, size_t end, size_t size);

/* Pages one thread is about to write, for another with time to spare to
 * make present first: the writer says where (ub_pages_lead_set), the
 * helper makes them present a step at a time (ub_pages_lead_help).  A
 * range gone stale meanwhile does no harm: making the process's own
 * memory present changes no byte of it. */
typedef struct ub_pages_lead {
    atomic_uintptr_t lo, hi;
} ub_pages_lead;

void ub_pages_lead_init(ub_pages_lead *l);
/* (The writer.)  Its next n bytes at p (NULL, 0: none now). */
void ub_pages_lead_set(ub_pages_lead *l, const void *p, size_t n);
/* (The helper.)  Make the next step of l's range present; *done is the
 * helper's own mark, 0 at first.  false: nothing to do until the writer
 * moves on. */
bool ub_pages_lead_help(ub_pages_lead *l, uintptr_t *done);

#endif
