#define _GNU_SOURCE /* mremap */
#include "ub_arena.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ub_pages.h"

/* Chunks grow geometrically so that a 100 MB layer needs few mallocs, yet a
 * tiny layer does not pin megabytes.  A new chunk is as big as what the
 * arena holds (ub_arena_chunk_size), not twice the last one: a streaming
 * reader releases as it goes, and a size that only ever doubled reached
 * the maximum on a small layer, reserving address space a `ulimit -v` or
 * a farm node without overcommit refuses. */
#define UB_ARENA_FIRST_CHUNK (16u * 1024u)
#define UB_ARENA_MAX_CHUNK (64u * 1024u * 1024u)

#if !UB_ASAN && defined(MAP_ANONYMOUS)
#define UB_SCRATCH_MMAP 1
#else
#define UB_SCRATCH_MMAP 0
#endif

typedef struct ub_chunk {
    struct ub_chunk *prev;
    size_t size, used;
    size_t populated; /* data[0, populated) is known to be present */
    size_t dropped;   /* data[0, dropped) was handed back
                         (ub_arena_drop_before) */
    /* bytes [hole_lo, hole_hi) from the chunk's start are no longer its
     * mapping's (0, 0: none): the pages a drop unmapped or gave away */
    size_t hole_lo, hole_hi;
    alignas(max_align_t) unsigned char data[];
} ub_chunk;

struct ub_arena {
    ub_chunk *head;
    ub_chunk *spare; /* the biggest chunk a release gave back, kept for
                        reuse: a reader releasing and allocating across a
                        chunk boundary must not malloc and free each time */
    size_t total;
    ub_pages *pages; /* where dropped pages go (ub_arena_set_pages) */
    ub_pages_lead *lead; /* where the next pages are said (ub_arena_set_lead) */
};

/* A chunk of about `want` bytes that holds at least `need` (its size
 * set), or NULL.  From UB_SCRATCH_HUGE it is pages of its own, in huge
 * pages (ub_scratch_alloc), and a whole number of them: the system aligns
 * only such a mapping to huge pages, and the part-pages at either end of
 * another are small ones.  A parse's model lives in these, and on the
 * machines the benchmarks run on the first write to a small page costs
 * many times a huge page's, a byte (doc/design.md). */
static ub_chunk *ub_chunk_alloc(size_t want, size_t need)
{
    const size_t huge = UB_SCRATCH_HUGE;
    if (want > SIZE_MAX - sizeof(ub_chunk) - huge)
        return NULL;
    size_t bytes = sizeof(ub_chunk) + want;
    ub_chunk *c;
    if (bytes >= huge) {
        /* a chunk size (a power of two) less its head, else rounded up */
        if (want % huge == 0 && want - sizeof(ub_chunk) >= need)
            bytes = want;
        else
            bytes = (bytes + huge - 1) / huge * huge;
        c = ub_scratch_alloc(bytes);
    } else {
        c = malloc(bytes);
    }
    if (c) {
        c->size = bytes - sizeof *c;
        c->hole_lo = c->hole_hi = 0;
    }
    return c;
}

/* Whether chunk c is pages of its own, not malloc's. */
static bool ub_chunk_mapped(const ub_chunk *c)
{
    return sizeof *c + c->size >= UB_SCRATCH_HUGE && UB_SCRATCH_MMAP;
}

/* Unmap the whole pages [lo, hi) of a mapped chunk, those the pool pp
 * takes (NULL: none) given to it first. */
static void ub_chunk_unmap(ub_pages *pp, uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo)
        return;
    size_t given = ub_pages_give(pp, (void *)lo, hi - lo);
    if (given < hi - lo)
        munmap((void *)(lo + given), hi - lo - given);
}

/* Free chunk c; a mapped one's pages go to the pool pp as far as it takes
 * them (NULL: none), the rest unmapped -- all but its hole, which may be
 * someone else's mapping by now. */
static void ub_chunk_free(ub_pages *pp, ub_chunk *c)
{
    if (!c)
        return;
    if (!ub_chunk_mapped(c)) {
        free(c); /* (ub_scratch_alloc's too, where it is malloc's) */
        return;
    }
    uintptr_t at = (uintptr_t)c;
    size_t bytes = sizeof *c + c->size;
    size_t lo = bytes, hi = bytes; /* [0, lo) and [hi, bytes) are mapped */
    if (c->hole_hi) {
        lo = c->hole_lo;
        hi = c->hole_hi;
    }
    ub_chunk_unmap(pp, at + hi, at + bytes);
    ub_chunk_unmap(pp, at, at + lo); /* (the head last: c is in it) */
}

ub_arena *ub_arena_new(void)
{
    return calloc(1, sizeof(ub_arena));
}

void ub_arena_free(ub_arena *a)
{
    if (!a)
        return;
    for (ub_chunk *c = a->head; c;) {
        ub_chunk *prev = c->prev;
        ub_chunk_free(NULL, c);
        c = prev;
    }
    ub_chunk_free(NULL, a->spare);
    free(a);
}

/* The alignment a block of `size` bytes needs: whatever type it holds has
 * an alignment that divides its size, so the largest power of two not above
 * the size (capped at max_align_t's) is always enough.  Millions of 8-byte
 * values then take 8 bytes, not 16.  A size that is a multiple of 8 but
 * not of 16 holds nothing that needs 16 (a type needing 16 has a size
 * that is a multiple of 16), so it gets 8: a 24-byte list op or a 56-byte
 * reference would otherwise each pad the next block by 8.  (Records whose
 * size is a multiple of 16 pass their alignment: ub_arena_alloc_align.) */
static size_t ub_arena_align_for(size_t size)
{
    if (size % 16 == 8)
        return 8;
    size_t align = alignof(max_align_t);
    while (align > 1 && align > size)
        align >>= 1;
    return align;
}

/* The size of a new chunk: the bytes handed out and not released, to the
 * next power of two, within the bounds above; so chunks double while an
 * arena only grows. */
static size_t ub_arena_chunk_size(const ub_arena *a)
{
    size_t n = UB_ARENA_FIRST_CHUNK;
    while (n < a->total && n < UB_ARENA_MAX_CHUNK)
        n *= 2;
    return n;
}

/* Pages of a big chunk are made present a step ahead of the allocations,
 * one madvise for many pages.  A first touch one page at a time is a page
 * fault each; on a virtual machine those faults were a fifth of the CPU
 * time of `convert` on the 20 MB prim bench layer.  Small chunks (a clip
 * layer, a string table shard) are left alone: the step ahead would be
 * most of what they ever use. */
#define UB_POPULATE_MIN_CHUNK ((size_t)1 << 20)
#define UB_POPULATE_STEP ((size_t)256 * 1024)
/* How far past its present pages an arena with a lead says it will write
 * (ub_arena_set_lead): a huge page. */
#define UB_ARENA_LEAD ((size_t)2 << 20)

static void ub_chunk_populate(ub_arena *a, ub_chunk *c)
{
    if (c->size < UB_POPULATE_MIN_CHUNK) {
        c->populated = c->size;
        return;
    }
    c->populated = ub_populate_ahead(c->data, c->populated, c->used, c->size);
    if (a->lead) {
        size_t n = c->size - c->populated;
        ub_pages_lead_set(a->lead, c->data + c->populated,
                          n < UB_ARENA_LEAD ? n : UB_ARENA_LEAD);
    }
}

size_t ub_populate_to(size_t present, size_t end, size_t size)
{
    size_t to = (end + UB_POPULATE_STEP) & ~(UB_POPULATE_STEP - 1);
    if (to > size)
        to = size;
    return to > present ? to : present;
}

size_t ub_populate_ahead(void *base, size_t present, size_t end,
                         size_t size)
{
    size_t to = ub_populate_to(present, end, size);
    if (to <= present)
        return present;
    ub_populate((char *)base + present, to - present);
    return to;
}

void ub_populate(void *p, size_t n)
{
#if defined(MADV_POPULATE_WRITE)
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t mask = pg > 0 ? (uintptr_t)pg - 1 : 4095;
    uintptr_t lo = ((uintptr_t)p + mask) & ~mask;
    uintptr_t hi = ((uintptr_t)p + n) & ~mask;
    /* a hint: an old kernel refuses it, and the pages fault in */
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

static void *ub_arena_alloc_at(ub_arena *a, size_t size, size_t align)
{
    if (size == 0)
        size = 1;
    ub_chunk *c = a->head;
    size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
    if (!c || at > c->size || c->size - at < size) {
        size_t want = ub_arena_chunk_size(a);
        if (want < size)
            want = size;
        /* (a chunk's size is its bytes less its head, ub_chunk_alloc) */
        if (a->spare && a->spare->size >= size &&
            sizeof(ub_chunk) + a->spare->size >= want) {
            c = a->spare;
            a->spare = NULL;
        } else {
            c = ub_chunk_alloc(want, size);
            if (!c)
                return NULL;
        }
        c->used = 0;
        c->populated = 0;
        c->dropped = 0;
        c->prev = a->head;
        a->head = c;
        at = 0;
    }
    void *p = c->data + at;
    c->used = at + size;
    a->total += size;
    if (c->used > c->populated)
        ub_chunk_populate(a, c);
    return p;
}

void *ub_arena_alloc(ub_arena *a, size_t size)
{
    return ub_arena_alloc_at(a, size, ub_arena_align_for(size));
}

void *ub_arena_alloc_align(ub_arena *a, size_t size, size_t align)
{
    return ub_arena_alloc_at(a, size, align);
}

void *ub_arena_zalloc_align(ub_arena *a, size_t size, size_t align)
{
    void *p = ub_arena_alloc_at(a, size, align);
    if (p)
        memset(p, 0, size);
    return p;
}

void *ub_arena_alloc_bytes(ub_arena *a, size_t size)
{
    return ub_arena_alloc_at(a, size, 1);
}

void *ub_arena_zalloc(ub_arena *a, size_t size)
{
    void *p = ub_arena_alloc(a, size);
    if (p)
        memset(p, 0, size);
    return p;
}

char *ub_arena_strndup(ub_arena *a, const char *s, size_t n)
{
    char *p = ub_arena_alloc_bytes(a, n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *ub_arena_strdup(ub_arena *a, const char *s)
{
    return ub_arena_strndup(a, s, strlen(s));
}

void *ub_arena_grow_align(ub_arena *a, void *old, size_t old_n,
                          size_t new_cap, size_t elem_size, size_t align)
{
    if (new_cap && elem_size > SIZE_MAX / new_cap)
        return NULL;
    void *p = ub_arena_alloc_at(a, new_cap * elem_size, align);
    if (p && old_n)
        memcpy(p, old, old_n * elem_size);
    return p;
}

void *ub_arena_grow(ub_arena *a, void *old, size_t old_n, size_t new_cap,
                    size_t elem_size)
{
    size_t size = new_cap && elem_size <= SIZE_MAX / new_cap
                      ? new_cap * elem_size
                      : 0;
    return ub_arena_grow_align(a, old, old_n, new_cap, elem_size,
                               ub_arena_align_for(size));
}

int ub_arena_reserve(ub_arena *a, void **v, uint32_t n, uint32_t *cap,
                     uint32_t more, size_t elem_size, size_t align)
{
    if (more <= *cap - n)
        return 0;
    if (more > UINT32_MAX - n)
        return -1;
    void *nv = ub_arena_grow_align(a, *v, n, (size_t)n + more, elem_size,
                                   align);
    if (!nv)
        return -1;
    *v = nv;
    *cap = n + more;
    return 0;
}

size_t ub_arena_bytes(const ub_arena *a)
{
    return a->total;
}

void ub_arena_footprint(const ub_arena *a, size_t *used, size_t *reserved)
{
    *used = *reserved = 0;
    for (const ub_chunk *c = a->head; c; c = c->prev) {
        *used += c->used;
        *reserved += c->size;
    }
}

void ub_arena_adopt(ub_arena *dst, ub_arena *src)
{
    if (!src->head)
        return;
    /* src's chunks go below dst's head, which keeps taking allocations */
    ub_chunk *oldest = src->head;
    while (oldest->prev)
        oldest = oldest->prev;
    if (dst->head) {
        oldest->prev = dst->head->prev;
        dst->head->prev = src->head;
    } else {
        dst->head = src->head;
    }
    dst->total += src->total;
    src->head = NULL;
    src->total = 0;
}

ub_arena_mark ub_arena_get_mark(const ub_arena *a)
{
    return (ub_arena_mark){a->head, a->head ? a->head->used : 0, a->total};
}

void ub_arena_release(ub_arena *a, ub_arena_mark m)
{
    while (a->head && a->head != m.chunk) {
        ub_chunk *c = a->head;
        a->head = c->prev;
        if (c->hole_hi) {
            ub_chunk_free(NULL, c); /* (never reused: part of it is gone) */
        } else if (!a->spare || c->size > a->spare->size) {
            ub_chunk_free(NULL, a->spare);
            a->spare = c;
        } else {
            ub_chunk_free(NULL, c);
        }
    }
    if (a->head)
        a->head->used = m.used;
    a->total = m.total;
}

/* ub_arena_drop_before hands pages back this many bytes at a time. */
#define UB_DROP_STEP ((size_t)256 * 1024)

void ub_arena_set_pages(ub_arena *a, ub_pages *pp)
{
    a->pages = pp;
}

void ub_arena_set_lead(ub_arena *a, ub_pages_lead *l)
{
    if (a->lead)
        ub_pages_lead_set(a->lead, NULL, 0);
    a->lead = l;
}

void ub_arena_drop_before(ub_arena *a, const void *p)
{
    const unsigned char *at = p;
    ub_chunk *c = a->head;
    while (c && !(at >= c->data && at < c->data + c->size))
        c = c->prev;
    if (!c)
        return;
    while (c->prev) {
        ub_chunk *old = c->prev;
        c->prev = old->prev;
        a->total -= old->used < a->total ? old->used : a->total;
        ub_chunk_free(a->pages, old);
    }
#if defined(__linux__) && defined(MADV_DONTNEED)
    /* in steps: each madvise is a TLB shootdown on every CPU */
    size_t upto = (size_t)(at - c->data);
    if (upto <= c->dropped || upto - c->dropped < UB_DROP_STEP)
        return;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t mask = pg > 0 ? (uintptr_t)pg - 1 : 4095;
    /* whole pages only: the chunk's header and p's page stay */
    uintptr_t lo = ((uintptr_t)(c->data + c->dropped) + mask) & ~mask;
    uintptr_t hi = (uintptr_t)at & ~mask;
    if (a->pages && ub_chunk_mapped(c)) {
        /* unmapped, so that the pages can go to the pool: the hole goes
         * on from the last (p's page then is dead too) */
        uintptr_t base = (uintptr_t)c;
        if (c->hole_hi)
            lo = base + c->hole_hi;
        if (hi > lo) {
            ub_chunk_unmap(a->pages, lo, hi);
            if (!c->hole_hi)
                c->hole_lo = lo - base;
            c->hole_hi = hi - base;
        }
    } else if (hi > lo) {
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
    c->dropped = upto;
#endif
}

void ub_huge_hint(void *p, size_t n)
{
#if defined(MADV_HUGEPAGE)
    if (n >= UB_SCRATCH_HUGE && !UB_ASAN)
        (void)madvise(p, n, MADV_HUGEPAGE); /* a hint: failure is fine */
#else
    (void)p;
    (void)n;
#endif
}

void *ub_scratch_alloc(size_t n)
{
#if UB_SCRATCH_MMAP
    if (n >= UB_SCRATCH_PAGES) {
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        ub_huge_hint(p, n);
        return p;
    }
#endif
    return malloc(n ? n : 1);
}

void ub_scratch_free(void *p, size_t n)
{
#if UB_SCRATCH_MMAP
    if (p && n >= UB_SCRATCH_PAGES) {
        munmap(p, n);
        return;
    }
#endif
    (void)n;
    free(p);
}

#if UB_SCRATCH_MMAP && defined(MREMAP_MAYMOVE) && defined(MREMAP_FIXED)
/* Move the pages of n bytes (whole pages) at from, which may be several
 * mappings, to the same place in the mapping at to: by mremap, piece by
 * piece where one call cannot take them all (before Linux 6.17 one call
 * moves one mapping), else by copying. */
static void ub_move_pages(char *from, char *to, size_t n, size_t page)
{
    if (mremap(from, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, to) != MAP_FAILED)
        return;
    if (n > page) {
        size_t half = n / page / 2 * page;
        ub_move_pages(from, to, half, page);
        ub_move_pages(from + half, to + half, n - half, page);
        return;
    }
    memcpy(to, from, n);
    munmap(from, n);
}
#endif

void *ub_remap_grow(void *p, size_t n, size_t new_n)
{
#if UB_SCRATCH_MMAP && defined(MREMAP_MAYMOVE) && defined(MREMAP_FIXED)
    void *q = mremap(p, n, new_n, MREMAP_MAYMOVE);
    if (q != MAP_FAILED)
        return q;
    /* several mappings (pages from a pool were moved in: ub_pages.h),
     * which mremap does not resize: a new block, the pages moved over */
    q = mmap(NULL, new_n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (q == MAP_FAILED)
        return NULL;
    ub_huge_hint(q, new_n); /* (the pages moved in keep their own) */
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    ub_move_pages(p, q, (n + page - 1) / page * page, page);
    return q;
#else
    (void)p;
    (void)n;
    (void)new_n;
    return NULL;
#endif
}

void *ub_scratch_resize(void *p, size_t n, size_t new_n)
{
#if UB_SCRATCH_MMAP && defined(MREMAP_MAYMOVE)
    if (p && n >= UB_SCRATCH_PAGES && new_n >= UB_SCRATCH_PAGES) {
        void *q = ub_remap_grow(p, n, new_n);
        if (q == NULL)
            return NULL;
        if (n < UB_SCRATCH_HUGE)
            ub_huge_hint(q, new_n); /* (a bigger block keeps its hint) */
        return q;
    }
#endif
#if UB_SCRATCH_MMAP
    if (n >= UB_SCRATCH_PAGES || new_n >= UB_SCRATCH_PAGES) {
        void *q = ub_scratch_alloc(new_n);
        if (!q)
            return NULL;
        if (p)
            memcpy(q, p, n < new_n ? n : new_n);
        ub_scratch_free(p, n);
        return q;
    }
#endif
    (void)n;
    return realloc(p, new_n ? new_n : 1);
}

#if UB_SCRATCH_MMAP
/* n rounded up to whole pages: the parts of a block of pages of its own
 * that can be unmapped alone. */
static size_t ub_page_round(size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t mask = pg > 0 ? (size_t)pg - 1 : 4095;
    return n > SIZE_MAX - mask ? n : (n + mask) & ~mask;
}
#endif

size_t ub_scratch_shrink(void *p, size_t n, size_t new_n)
{
#if UB_SCRATCH_MMAP
    /* whole pages only, and never below the size that says "own pages" */
    size_t keep = ub_page_round(new_n);
    if (p && n >= UB_SCRATCH_PAGES && new_n >= UB_SCRATCH_PAGES &&
        keep < n && munmap((char *)p + keep, n - keep) == 0)
        return keep;
#endif
    (void)p;
    (void)new_n;
    return n;
}

/* ub_scratch_alloc's n bytes, made present at once from UB_SCRATCH_PAGES:
 * for a block written all over (a table, a temporary filled whole). */
static void *ub_scratch_present(size_t n)
{
    void *p = ub_scratch_alloc(n);
    if (p && n >= UB_SCRATCH_PAGES)
        ub_populate(p, n);
    return p;
}

#if UB_SCRATCH_MMAP && defined(MREMAP_MAYMOVE)
#define UB_KEPT 1
#else
#define UB_KEPT 0
#endif

/* The smallest kept block that holds n bytes, or SIZE_MAX. */
static size_t ub_kept_fit(const ub_kept *k, size_t n)
{
    size_t fit = SIZE_MAX;
    for (size_t i = 0; i < k->count; i++)
        if (k->b[i].n >= n && (fit == SIZE_MAX || k->b[i].n < k->b[fit].n))
            fit = i;
    return fit;
}

#if UB_KEPT
static void ub_kept_drop(ub_kept *k, size_t i)
{
    k->b[i] = k->b[--k->count];
}
#endif

void *ub_kept_alloc(ub_kept *k, size_t n)
{
#if UB_KEPT
    size_t want = ub_page_round(n);
    if (n >= UB_SCRATCH_PAGES && k->count) {
        size_t fit = ub_kept_fit(k, want), big = 0;
        for (size_t i = 1; i < k->count; i++)
            if (k->b[i].n > k->b[big].n)
                big = i;
        if (fit != SIZE_MAX) {
            char *p = k->b[fit].p;
            size_t rest = k->b[fit].n - want;
            if (rest >= UB_SCRATCH_PAGES) {
                k->b[fit].p = p + want; /* the rest stays kept */
                k->b[fit].n = rest;
            } else {
                if (rest)
                    munmap(p + want, rest);
                ub_kept_drop(k, fit);
            }
            return p;
        }
        /* none holds n: the biggest grows, its pages moved, the new ones
         * made present */
        size_t had = k->b[big].n;
        void *q = ub_remap_grow(k->b[big].p, had, want);
        if (q) {
            ub_kept_drop(k, big);
            ub_huge_hint(q, want);
            ub_populate((char *)q + had, want - had);
            return q;
        }
    }
#else
    (void)k;
#endif
    return ub_scratch_present(n);
}

void ub_kept_free(ub_kept *k, void *p, size_t n)
{
#if UB_KEPT
    if (p && n >= UB_SCRATCH_PAGES) {
        n = ub_page_round(n);
        size_t small = 0;
        for (size_t i = 1; i < k->count; i++)
            if (k->b[i].n < k->b[small].n)
                small = i;
        if (k->count == UB_KEPT_MAX) {
            if (k->b[small].n >= n) {
                munmap(p, n);
                return;
            }
            munmap(k->b[small].p, k->b[small].n);
            ub_kept_drop(k, small);
        }
        k->b[k->count++] = (struct ub_kept_block){p, n};
        return;
    }
#else
    (void)k;
#endif
    ub_scratch_free(p, n);
}

void ub_kept_trim(ub_kept *k, size_t n)
{
    size_t fit = ub_kept_fit(k, n);
    for (size_t i = 0; i < k->count; i++)
        if (i != fit)
            ub_scratch_free(k->b[i].p, k->b[i].n);
    if (fit != SIZE_MAX)
        k->b[0] = k->b[fit];
    k->count = fit != SIZE_MAX;
}

void ub_kept_release(ub_kept *k)
{
    for (size_t i = 0; i < k->count; i++)
        ub_scratch_free(k->b[i].p, k->b[i].n);
    k->count = 0;
}

void *ub_table_alloc(size_t n, size_t size)
{
    return ub_table_alloc_from(NULL, n, size);
}

#if UB_SCRATCH_MMAP
/* Make the n bytes at p, a table's pages not present yet, present and
 * zero: the pool's pages first, zeroed here, a memset at memory speed
 * where fresh ones each cost a fault and a clear (fresh pages: zero). */
static void ub_table_zero_new(struct ub_pages *pp, char *p, size_t n)
{
    size_t filled = ub_pages_fill(pp, p, n);
    memset(p, 0, filled);
    ub_populate(p + filled, n - filled);
}
#endif

void *ub_table_alloc_from(struct ub_pages *pp, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
#if UB_SCRATCH_MMAP
    size_t bytes = n * size;
    if (bytes >= UB_SCRATCH_PAGES) {
        char *p = ub_scratch_alloc(bytes);
        if (p)
            ub_table_zero_new(pp, p, bytes);
        return p;
    }
#else
    (void)pp;
#endif
    return calloc(n, size);
}

void *ub_table_grow_from(struct ub_pages *pp, void *p, size_t n,
                         size_t new_n, size_t size)
{
    if (size && new_n > SIZE_MAX / size)
        return NULL;
    size_t old = n * size;
#if UB_SCRATCH_MMAP
    size_t bytes = new_n * size;
    if (old >= UB_SCRATCH_PAGES) {
        /* the old pages move with the block (ub_scratch_resize); the
         * new part is made as ub_table_alloc_from makes a whole table */
        char *q = ub_scratch_resize(p, old, bytes);
        if (q)
            ub_table_zero_new(pp, q + old, bytes - old);
        return q;
    }
#endif
    char *q = ub_table_alloc_from(pp, new_n, size);
    if (!q)
        return NULL;
    memcpy(q, p, old);
    ub_table_free(p, n, size);
    return q;
}

void ub_table_free(void *p, size_t n, size_t size)
{
    /* (a table is a scratch block: its own pages from UB_SCRATCH_PAGES,
     * else calloc's, which ub_scratch_free frees) */
    ub_scratch_free(p, n * size);
}
