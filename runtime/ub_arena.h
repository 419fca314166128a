/*
 * ub_arena — bump allocator that owns everything of one layer (or one
 * pass).  Nodes, arrays and strings are never freed one by one; the whole
 * arena goes in one call, which is what makes the AST cheap to build and
 * impossible to leak piecemeal.
 */
#ifndef UB_ARENA_H
#define UB_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct ub_arena ub_arena;

ub_arena *ub_arena_new(void);
void ub_arena_free(ub_arena *a);

/* Memory aligned for any type that fits `size` bytes, except that a size
 * that is an odd multiple of 8 is aligned to 8 only (a type that needs 16,
 * such as long double, has a size that is a multiple of 16); NULL only
 * when the system is out of memory.  ub_arena_zalloc clears it. */
void *ub_arena_alloc(ub_arena *a, size_t size);
void *ub_arena_zalloc(ub_arena *a, size_t size);
/* Memory aligned to align (a power of two, at most max_align_t's), for
 * the model's records: their alignment is their type's (8), whatever
 * their size, where ub_arena_alloc would give a 64-byte property or an
 * array of 32-byte fields 16 and pad the block before it.  Pass
 * alignof(T). */
void *ub_arena_alloc_align(ub_arena *a, size_t size, size_t align);
void *ub_arena_zalloc_align(ub_arena *a, size_t size, size_t align);
/* Memory with no alignment, for text and bytes read one at a time (or
 * with memcpy): a string of 17 bytes then takes 17, not 32. */
void *ub_arena_alloc_bytes(ub_arena *a, size_t size);
/* Copy of n bytes, NUL-terminated (the terminator is not counted in n). */
char *ub_arena_strndup(ub_arena *a, const char *s, size_t n);
char *ub_arena_strdup(ub_arena *a, const char *s);
/* Grow an arena array: returns a block of new_cap elements holding the first
 * old_n of *old; the old block simply stays in the arena. */
void *ub_arena_grow(ub_arena *a, void *old, size_t old_n, size_t new_cap,
                    size_t elem_size);
/* The same aligned to align (ub_arena_alloc_align). */
void *ub_arena_grow_align(ub_arena *a, void *old, size_t old_n,
                          size_t new_cap, size_t elem_size, size_t align);
/* Room for `more` elements beyond the n used of the arena array *v, whose
 * room is *cap, at exactly that size: for a builder that knows how many
 * it will add, so the list leaves no slack and no outgrown copies.  0, or
 * -1 when out of memory or past UINT32_MAX elements (*v unchanged). */
int ub_arena_reserve(ub_arena *a, void **v, uint32_t n, uint32_t *cap,
                     uint32_t more, size_t elem_size, size_t align);

/* Bytes handed out so far (for benchmarks and memory reports). */
size_t ub_arena_bytes(const ub_arena *a);
/* For memory reports: the bytes the arena's chunks span up to their last
 * allocation (what was handed out plus alignment padding), and the bytes
 * its chunks hold in all (the rest of a chunk is never touched). */
void ub_arena_footprint(const ub_arena *a, size_t *used, size_t *reserved);

/* Move everything src holds into dst (dst frees it from now on), leaving
 * src empty but usable: for data built in another arena, e.g. by another
 * thread, that joins dst's owner.  Allocation continues in dst's current
 * chunk. */
void ub_arena_adopt(ub_arena *dst, ub_arena *src);

/* Stack discipline for a streaming reader: everything allocated after a
 * mark is handed back by releasing it, so a layer read prim by prim needs
 * memory for one open subtree, not the whole file.  Marks must be released
 * innermost first; memory from after the mark must no longer be used. */
typedef struct ub_arena_mark {
    void *chunk;   /* private */
    size_t used, total;
} ub_arena_mark;

ub_arena_mark ub_arena_get_mark(const ub_arena *a);
void ub_arena_release(ub_arena *a, ub_arena_mark m);

/* For an arena done with allocating whose allocations die in the order
 * they were made (a model handed over prim by prim): give back the memory
 * of everything allocated before p, an address inside one of a's chunks
 * (nothing, when it is in none).  Older chunks are freed, and the whole
 * pages of p's chunk below p are handed back to the system -- or, with a
 * pool (ub_arena_set_pages), as many as it takes to the pool. */
void ub_arena_drop_before(ub_arena *a, const void *p);
/* Where ub_arena_drop_before puts the pages it gives back (NULL: back to
 * the system): the pool takes what it has room for (ub_pages.h). */
struct ub_pages;
void ub_arena_set_pages(ub_arena *a, struct ub_pages *pp);
/* Say in l (NULL: nowhere) which pages a's allocations will write next,
 * for another thread to make present first (ub_pages_lead_help): the
 * owner's faults on new pages go to a thread that has time.  Set back to
 * NULL before l goes. */
struct ub_pages_lead;
void ub_arena_set_lead(ub_arena *a, struct ub_pages_lead *l);

/* Zeroed memory for n elements of size bytes: for a big table probed at
 * random (a writer's hash tables), where a TLB miss per probe is most of
 * the cost.  From 64 KiB up it is pages of its own, made present at once
 * (a table is written all over as it fills: its pages would fault in one
 * by one), and from 2 MiB up it asks for huge pages where the system has
 * them; below that it is calloc.  NULL when out of memory (or n * size
 * overflows).  Give it back with ub_table_free and the same n and size. */
void *ub_table_alloc(size_t n, size_t size);
/* The same, its pages taken from the pool pp first (ub_pages.h; NULL:
 * none), zeroed. */
struct ub_pages;
void *ub_table_alloc_from(struct ub_pages *pp, size_t n, size_t size);
/* Grow ub_table_alloc_from's table of n elements at p to new_n (> n),
 * its first n kept and the rest zeroed, its new pages taken from the
 * pool pp first (NULL: none).  A big table grows where it is, so that
 * only the new part's pages are new: the old pages are not given up for
 * as many new ones, each written a first time (on the benchmark
 * machines 1.3-3 ms a MB, pool pages or fresh ones).  NULL when out of
 * memory (p is then kept). */
void *ub_table_grow_from(struct ub_pages *pp, void *p, size_t n,
                         size_t new_n, size_t size);
void ub_table_free(void *p, size_t n, size_t size);

/* Memory for a temporary of n bytes (not zeroed) that goes back to the
 * system when freed, whatever malloc's heap holds around it: from 64 KiB
 * up its own pages (huge pages asked for from 2 MiB: ub_huge_hint),
 * below that malloc.  A reader that decodes big
 * temporaries between the tables it keeps would otherwise leave them as
 * holes in the heap that are never given back, and a freed big malloc
 * block raises malloc's own threshold for the next ones.  NULL when out
 * of memory.  Give it back with ub_scratch_free and the same n. */
void *ub_scratch_alloc(size_t n);
void ub_scratch_free(void *p, size_t n);
/* The size from which a scratch block is pages of its own (not under
 * AddressSanitizer: UB_ASAN). */
#define UB_SCRATCH_PAGES ((size_t)64 << 10)
/* Resize ub_scratch_alloc's n bytes at p (NULL, 0: none yet) to new_n,
 * the first of them kept: for a growable array, whose block then grows
 * by mremap -- the pages move -- where realloc copies them into fresh
 * ones, faulting in twice the array's memory.  NULL when out of memory
 * (p is then kept). */
void *ub_scratch_resize(void *p, size_t n, size_t new_n);
/* Keep only the first new_n of ub_scratch_alloc's n bytes at p (the
 * pages after them go back where they are its own): returns the size to
 * free it with from now on. */
size_t ub_scratch_shrink(void *p, size_t n, size_t new_n);

/* Blocks of pages kept for reuse, by one thread.  A fresh page costs a
 * fault and a clear -- ~1.5 ms a MB on the virtual machines the
 * benchmarks ran on, whether made present ahead or not -- and a kept one
 * nothing: for a phase that frees big blocks and then makes others of like
 * sizes (a writer's end, where its lookup tables go and its sections'
 * temporaries come).  Under AddressSanitizer (UB_ASAN), where big blocks
 * are malloc's, nothing is kept. */
#define UB_KEPT_MAX 16
typedef struct ub_kept {
    struct ub_kept_block {
        void *p;
        size_t n;
    } b[UB_KEPT_MAX];
    size_t count;
} ub_kept;

/* n bytes, not zeroed, their pages present: the smallest kept block that
 * holds them (what is left of it kept), else the biggest grown to n, else
 * new pages.  NULL when out of memory.  Give them back with
 * ub_scratch_free or ub_kept_free and the same n. */
void *ub_kept_alloc(ub_kept *k, size_t n);
/* Keep ub_scratch_alloc's or ub_kept_alloc's n bytes at p (NULL: none)
 * for reuse; a block too small to be pages of its own is freed, and when
 * all places are taken the smallest block goes. */
void ub_kept_free(ub_kept *k, void *p, size_t n);
/* Keep only the smallest block that holds n bytes (none when none does),
 * the others given back: for what is left to make, one at a time. */
void ub_kept_trim(ub_kept *k, size_t n);
/* Give every kept block back to the system (k is then empty). */
void ub_kept_release(ub_kept *k);

/* 1 in a build under AddressSanitizer, which sees into malloc's blocks
 * only: there (the sanitizer builds, the fuzzers) blocks that would be
 * pages of their own -- big temporaries, big buffers -- are malloc's,
 * bounds and leaks checked. */
#if defined(__SANITIZE_ADDRESS__)
#define UB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UB_ASAN 1
#endif
#endif
#if !defined(UB_ASAN)
#define UB_ASAN 0
#endif

/* The size from which a block of pages of its own asks for huge pages:
 * one huge page. */
#define UB_SCRATCH_HUGE ((size_t)2 << 20)
/* Ask for huge pages for the n bytes of pages of its own at p, from
 * UB_SCRATCH_HUGE (a hint; not under AddressSanitizer).  ub_scratch_alloc,
 * ub_scratch_resize, big buffers, tables and arena chunks ask.  On the
 * virtual machines the benchmarks run on, the first write to a 4 KiB page
 * costs ~5 us even when it was made present (ub_populate), ~17 us when not:
 * 14 MB took 16-25 ms to write the first time in 4 KiB pages, under 1 ms in
 * huge pages (at most a huge page more resident a block). */
void ub_huge_hint(void *p, size_t n);

/* A block of n bytes at p that is about to be written: make the whole
 * pages inside it present now, with one system call.  A first touch is a
 * page fault per 4 KiB page, ~11 us each on the virtual machines the
 * benchmarks ran on; this costs under 1 us a page.  A hint: where the
 * system cannot, the pages fault in as they are touched. */
void ub_populate(void *p, size_t n);

/* A block of size bytes at base, filled front to back, whose first
 * `present` bytes are made present: make them present up to a step
 * (256 KiB) past end, rounded to steps -- one call a step rather than a
 * fault a page.  Returns how far they are present now. */
size_t ub_populate_ahead(void *base, size_t present, size_t end,
                         size_t size);
/* How far ub_populate_ahead makes the pages present: a step past end,
 * rounded to steps, within size; present when that is no further. */
size_t ub_populate_to(size_t present, size_t end, size_t size);

/* Grow a block of pages of its own (mmap's, n bytes at p) to new_n, as
 * mremap(MREMAP_MAYMOVE) does, also when it has become several mappings
 * (ub_pages_fill); NULL when out of memory (p then kept).  Only where
 * blocks are pages of their own (not under AddressSanitizer). */
void *ub_remap_grow(void *p, size_t n, size_t new_n);

#endif
