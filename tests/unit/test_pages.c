/* CUnit tests for ub_pages, the pool that moves present pages from memory
 * one part of a process is done with to memory another is about to write,
 * and for what takes part in it: arenas that give their dropped pages,
 * blocks that grow after pool pages were moved into them, tables and
 * buffers that take pool pages; and a lead, the pages a thread says it
 * writes next, which another makes present.  Under AddressSanitizer the
 * pool takes nothing, which is checked instead. */
#define _GNU_SOURCE /* mincore */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ub_arena.h"
#include "ub_buf.h"
#include "ub_idtab.h"
#include "ub_pages.h"
#include "ub_test.h"

#define MIB ((size_t)1 << 20)

static size_t page_size(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pg : 4096;
}

/* Whether [p, p + n) is mapped, every page of it. */
static bool mapped(const void *p, size_t n)
{
    size_t pg = page_size();
    unsigned char v[1024];
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(pg - 1);
    for (uintptr_t at = lo; at < (uintptr_t)p + n; at += pg * 1024) {
        size_t len = (uintptr_t)p + n - at;
        if (len > pg * 1024)
            len = pg * 1024;
        if (mincore((void *)at, len, v) != 0)
            return false;
    }
    return true;
}

/* Block p of n bytes holds the pattern of seed: its own pages, moved. */
static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 131 + seed);
}

static bool has_pattern(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 131 + seed))
            return false;
    return true;
}

static void test_give_and_fill(void)
{
    ub_pages *pp = ub_pages_new(4 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    unsigned char *a = ub_scratch_alloc(MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    fill_pattern(a, MIB, 7);
    size_t given = ub_pages_give(pp, a, MIB);
    unsigned char *b = ub_scratch_alloc(2 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
#if UB_ASAN
    CU_ASSERT_EQUAL(given, 0);
    CU_ASSERT(mapped(a, MIB) && has_pattern(a, MIB, 7)); /* still a's */
    CU_ASSERT_EQUAL(ub_pages_fill(pp, b, 2 * MIB), 0);
    ub_scratch_free(a, MIB);
#else
    CU_ASSERT_EQUAL(given, MIB);
    CU_ASSERT_FALSE(mapped(a, MIB)); /* the pool's alone now */
    /* what it has, no more; the pages given, bytes and all */
    CU_ASSERT_EQUAL(ub_pages_fill(pp, b, 2 * MIB), MIB);
    CU_ASSERT(has_pattern(b, MIB, 7));
    CU_ASSERT_EQUAL(ub_pages_fill(pp, b + MIB, MIB), 0);
    memset(b + MIB, 1, MIB); /* the rest of the block still its own */
#endif
    ub_scratch_free(b, 2 * MIB);
    /* no pool: nothing taken, nothing given */
    unsigned char c[64];
    CU_ASSERT_EQUAL(ub_pages_give(NULL, c, sizeof c), 0);
    CU_ASSERT_EQUAL(ub_pages_fill(NULL, c, sizeof c), 0);
    ub_pages_free(pp);
}

static void test_pool_keeps_at_most_max(void)
{
    ub_pages *pp = ub_pages_new(2 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    unsigned char *a = ub_scratch_alloc(3 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    fill_pattern(a, 3 * MIB, 3);
    size_t given = ub_pages_give(pp, a, 3 * MIB);
#if !UB_ASAN
    CU_ASSERT_EQUAL(given, 2 * MIB);
    /* the rest is the giver's, as it was */
    CU_ASSERT(mapped(a + 2 * MIB, MIB));
    CU_ASSERT(has_pattern(a + 2 * MIB, MIB, 3)); /* (2 MiB * 131: 0 mod 256) */
    CU_ASSERT_EQUAL(ub_pages_give(pp, a + 2 * MIB, MIB), 0); /* full */
    munmap(a + 2 * MIB, MIB);
    /* emptied, it takes again */
    ub_pages_release(pp);
    unsigned char *b = ub_scratch_alloc(MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(ub_pages_fill(pp, b, MIB), 0);
    CU_ASSERT_EQUAL(ub_pages_give(pp, b, MIB), MIB);
#else
    CU_ASSERT_EQUAL(given, 0);
    ub_scratch_free(a, 3 * MIB);
#endif
    ub_pages_free(pp); /* (unmaps what it holds) */
}

/* A block pool pages were moved into is several mappings, which mremap
 * does not grow: ub_remap_grow must still keep every byte. */
static void test_grow_after_fill(void)
{
#if !UB_ASAN
    ub_pages *pp = ub_pages_new(4 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    unsigned char *a = ub_scratch_alloc(MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(ub_pages_give(pp, a, MIB), MIB);
    unsigned char *b = ub_scratch_alloc(4 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    memset(b, 9, MIB);
    CU_ASSERT_EQUAL(ub_pages_fill(pp, b + MIB, MIB), MIB);
    fill_pattern(b, 4 * MIB, 11);
    unsigned char *g = ub_remap_grow(b, 4 * MIB, 16 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT(has_pattern(g, 4 * MIB, 11));
    memset(g + 4 * MIB, 5, 12 * MIB); /* the new part is writable */
    ub_scratch_free(g, 16 * MIB);
    ub_pages_free(pp);
#endif
}

/* Bytes a block holds past the pages it counts as present (copied in
 * when the block was made, or written into a bound) are never replaced
 * by pool pages. */
static void test_ahead_keeps_written(void)
{
    ub_pages *pp = ub_pages_new(8 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    unsigned char *a = ub_scratch_alloc(4 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    fill_pattern(a, 4 * MIB, 1);
    size_t given = ub_pages_give(pp, a, 4 * MIB);
    if (!given)
        ub_scratch_free(a, 4 * MIB);
    unsigned char *b = ub_scratch_alloc(8 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    size_t written = 3 * MIB + 100;
    fill_pattern(b, written, 2);
    size_t present = ub_pages_ahead(pp, b, 0, written, 5 * MIB, 8 * MIB);
    CU_ASSERT(present >= 5 * MIB);
    CU_ASSERT(has_pattern(b, written, 2));
    memset(b + written, 0, present - written);
    ub_scratch_free(b, 8 * MIB);
    /* a buffer whose writer wrote into a bound past its present pages */
    ub_buf buf;
    ub_buf_init(&buf);
    buf.pages = pp;
    ub_buf_reserve(&buf, 3 * MIB);
    char *w = ub_buf_reserve_written(&buf, 6 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    fill_pattern((unsigned char *)w, 6 * MIB, 4);
    buf.len = 6 * MIB;
    ub_buf_append(&buf, "tail", 4);
    CU_ASSERT(has_pattern((unsigned char *)buf.data, 6 * MIB, 4));
    CU_ASSERT_EQUAL(memcmp(buf.data + 6 * MIB, "tail", 4), 0);
    ub_buf_free(&buf);
    ub_pages_free(pp);
}

/* A table takes pool pages and is zero all the same. */
static void test_table_zeroed(void)
{
    ub_pages *pp = ub_pages_new(4 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    unsigned char *a = ub_scratch_alloc(2 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    memset(a, 0xab, 2 * MIB);
    if (!ub_pages_give(pp, a, 2 * MIB))
        ub_scratch_free(a, 2 * MIB);
    size_t n = (4 * MIB) / sizeof(ub_idslot);
    ub_idslot *t = ub_table_alloc_from(pp, n, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    bool zero = true;
    for (size_t i = 0; i < n; i++)
        zero &= t[i].h == 0 && t[i].id1 == 0;
    CU_ASSERT(zero);
    ub_table_free(t, n, sizeof *t);
    ub_pages_free(pp);
}

/* A table that grows keeps its pages and takes its new part's from its
 * pool (ub_table_grow_from), zeroed: from the first table of pages of
 * its own (64 KiB) on, every page of a table of 2 MiB comes from the
 * pool, which holds enough, and the pool is given nothing back.  The
 * table keeps what was in it. */
static void test_table_grow_takes(void)
{
    ub_pages *pp = ub_pages_new(8 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    unsigned char *a = ub_scratch_alloc(4 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    memset(a, 0xab, 4 * MIB);
    size_t given = ub_pages_give(pp, a, 4 * MIB);
    if (given < 4 * MIB)
        ub_scratch_free(a + given, 4 * MIB - given);
    ub_idtab t = {.pages = pp};
    CU_ASSERT_FATAL(ub_idtab_grow(&t));
    t.s[5] = (ub_idslot){.h = 5, .id1 = 42};
    t.n = 1;
    while (t.cap * sizeof *t.s < 2 * MIB)
        CU_ASSERT_FATAL(ub_idtab_grow(&t));
    /* (the slot stayed with each growth: h & (cap - 1) is still 5) */
    CU_ASSERT(t.s[5].h == 5 && t.s[5].id1 == 42);
    bool zero = true;
    for (size_t i = 0; i < t.cap; i++)
        zero &= i == 5 || (t.s[i].h == 0 && t.s[i].id1 == 0);
    CU_ASSERT(zero);
    size_t by_growth = ub_pages_filled(pp);
    unsigned char *b = ub_scratch_alloc(4 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    size_t filled = ub_pages_fill(pp, b, 4 * MIB);
#if UB_ASAN
    CU_ASSERT_EQUAL(given, 0);
    CU_ASSERT_EQUAL(by_growth, 0);
    CU_ASSERT_EQUAL(filled, 0);
#else
    CU_ASSERT_EQUAL(given, 4 * MIB);
    CU_ASSERT_EQUAL(by_growth, 2 * MIB);
    CU_ASSERT_EQUAL(filled, 2 * MIB); /* what was left: nothing given */
#endif
    memset(b, 0, 4 * MIB);
    ub_scratch_free(b, 4 * MIB);
    ub_idtab_free(&t);
    ub_pages_free(pp);
}

/* An arena with a pool gives it the pages it drops, and freeing the arena
 * afterwards leaves alone a mapping made where those pages were. */
static void test_arena_gives(void)
{
    ub_pages *pp = ub_pages_new(64 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pp);
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    ub_arena_set_pages(a, pp);
    enum { N = 40000 };
    char *mid = NULL, *last = NULL; /* (mid: in last's chunk, 1 MB below) */
    for (unsigned i = 0; i < N; i++) {
        last = ub_arena_alloc(a, 512);
        CU_ASSERT_PTR_NOT_NULL_FATAL(last);
        memset(last, (int)(i % 251), 512);
        if (i == N - 2048)
            mid = last;
    }
    ub_arena_drop_before(a, last);
    unsigned char *b = ub_scratch_alloc(32 * MIB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    size_t filled = ub_pages_fill(pp, b, 32 * MIB);
#if UB_ASAN
    CU_ASSERT_EQUAL(filled, 0);
    (void)mid;
#else
    CU_ASSERT(filled >= 8 * MIB); /* most of 20 MB dropped */
    /* a mapping where a dropped page of the chunk still in use was, then
     * the arena freed */
    size_t pg = page_size();
    char *hole = (char *)(((uintptr_t)mid + 2 * pg) & ~(uintptr_t)(pg - 1));
    CU_ASSERT_FALSE(mapped(hole, pg));
    char *m = mmap(hole, pg, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CU_ASSERT_EQUAL_FATAL(m, hole);
    m[0] = 1;
#endif
    CU_ASSERT_EQUAL(last[0], (char)((N - 1) % 251)); /* the live one stays */
    CU_ASSERT(memcmp(last, last + 1, 511) == 0);
    ub_arena_free(a);
#if !UB_ASAN
    CU_ASSERT(mapped(m, pg));
    CU_ASSERT_EQUAL(m[0], 1);
    munmap(m, pg);
#endif
    memset(b, 0, 32 * MIB);
    ub_scratch_free(b, 32 * MIB);
    ub_pages_free(pp);
}

/* The pages of [p, p + n) that are present. */
static size_t resident(const void *p, size_t n)
{
    size_t pg = page_size(), count = 0;
    unsigned char v[256];
    for (size_t at = 0; at < n; at += pg * 256) {
        size_t len = n - at < pg * 256 ? n - at : pg * 256;
        if (mincore((char *)p + at, len, v) != 0)
            return 0;
        for (size_t i = 0; i < (len + pg - 1) / pg; i++)
            count += v[i] & 1;
    }
    return count * pg;
}

/* A helper makes present what the writer says it writes next, a step at
 * a time, and stops there until the writer moves on. */
static void test_lead(void)
{
    unsigned char *p = mmap(NULL, 4 * MIB, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(p != MAP_FAILED);
    (void)madvise(p, 4 * MIB, MADV_NOHUGEPAGE); /* (counted a page at a time) */
    ub_pages_lead l;
    ub_pages_lead_init(&l);
    uintptr_t done = 0;
    CU_ASSERT_FALSE(ub_pages_lead_help(&l, &done)); /* nothing said */
    ub_pages_lead_set(&l, p, MIB);
    unsigned steps = 0;
    while (ub_pages_lead_help(&l, &done))
        steps++;
    CU_ASSERT(steps > 1); /* (in steps) */
    CU_ASSERT_EQUAL(resident(p, MIB), MIB);
    CU_ASSERT_EQUAL(resident(p + MIB, 3 * MIB), 0);
    ub_pages_lead_set(&l, p + MIB, MIB);
    while (ub_pages_lead_help(&l, &done))
        ;
    CU_ASSERT_EQUAL(resident(p, 2 * MIB), 2 * MIB);
    CU_ASSERT_EQUAL(resident(p + 2 * MIB, 2 * MIB), 0);
    ub_pages_lead_set(&l, NULL, 0);
    CU_ASSERT_FALSE(ub_pages_lead_help(&l, &done));
    munmap(p, 4 * MIB);
    /* an arena with a lead says where its big chunks fill next, until it
     * is told to stop */
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    ub_arena_set_lead(a, &l);
    for (unsigned i = 0; i < 1024; i++)
        CU_ASSERT_PTR_NOT_NULL_FATAL(ub_arena_alloc(a, 4096));
    done = 0;
    CU_ASSERT(ub_pages_lead_help(&l, &done));
    ub_arena_set_lead(a, NULL);
    CU_ASSERT_FALSE(ub_pages_lead_help(&l, &done));
    ub_arena_free(a);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("pages", NULL, NULL);
    CU_add_test(s, "given pages fill another block", test_give_and_fill);
    CU_add_test(s, "a pool keeps at most its max", test_pool_keeps_at_most_max);
    CU_add_test(s, "a filled block grows whole", test_grow_after_fill);
    CU_add_test(s, "written bytes are never replaced",
                test_ahead_keeps_written);
    CU_add_test(s, "a table from pool pages is zero", test_table_zeroed);
    CU_add_test(s, "a table that grows takes pool pages for its new part",
                test_table_grow_takes);
    CU_add_test(s, "an arena gives what it drops", test_arena_gives);
    CU_add_test(s, "a helper makes the next pages present", test_lead);
    return ub_test_run_all() ? 1 : 0;
}
