/* CUnit tests for ub_buf: growth across the size from which a buffer
 * lives in pages of its own, and handing its bytes over; and for the
 * blocks of pages kept for reuse (ub_kept). */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ub_arena.h"
#include "ub_buf.h"
#include "mem_probe.h"
#include "ub_test.h"

/* The byte at offset i of the pattern the tests write. */
static char pat(size_t i)
{
    return (char)((i * 2654435761u) >> 13);
}

static bool holds_pattern(const ub_buf *b, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (b->data[i] != pat(i))
            return false;
    return true;
}

static void test_grow_keeps_bytes(void)
{
    /* small appends, from a malloc block through several of its own
     * pages' growths (1 MiB and up) */
    ub_buf b;
    ub_buf_init(&b);
    const size_t total = (size_t)9 << 20;
    char chunk[1000];
    for (size_t at = 0; at < total; at += sizeof chunk) {
        for (size_t i = 0; i < sizeof chunk; i++)
            chunk[i] = pat(at + i);
        ub_buf_append(&b, chunk, sizeof chunk);
    }
    CU_ASSERT_FALSE(b.failed);
    CU_ASSERT_EQUAL(b.len, (total + 999) / 1000 * 1000);
    CU_ASSERT(b.cap >= b.len);
    CU_ASSERT(holds_pattern(&b, 0, b.len));
    ub_buf_free(&b);
    CU_ASSERT_PTR_NULL(b.data);
    CU_ASSERT_EQUAL(b.len, 0);
}

static void test_reserve_bound_write_less(void)
{
    /* a writer reserves a bound (a compressed size) and writes less;
     * what it wrote, and what it appends next, stay in place */
    ub_buf b;
    ub_buf_init(&b);
    size_t len = 0;
    for (int round = 0; round < 12; round++) {
        size_t bound = (size_t)3 << 20, wrote = 70001 + (size_t)round;
        char *w = ub_buf_reserve(&b, bound);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT(b.cap - b.len >= bound);
        for (size_t i = 0; i < wrote; i++)
            w[i] = pat(len + i);
        b.len += wrote;
        len += wrote;
    }
    CU_ASSERT_EQUAL(b.len, len);
    CU_ASSERT(holds_pattern(&b, 0, len));
    ub_buf_putc(&b, 'x');
    CU_ASSERT_EQUAL(b.data[len], 'x');
    ub_buf_free(&b);
}

/* A bound the writer fills at once (ub_buf_reserve_written) is made
 * present before it writes, in a malloc block and in a buffer of pages of
 * its own under 2 MiB alike: a page faulted in one by one costs ~17 us on
 * the machines the benchmarks run on, against ~1 us made present in one
 * call.  In huge pages it is not: they fault in 2 MiB at a time, and a
 * bound is mostly not written (the pages past the step ahead stay out). */
static void test_reserve_written_present(void)
{
    if (UB_ASAN)
        return; /* (the sanitizer's blocks are its own) */
    const struct {
        size_t before, n;
        bool present;
    } c[] = {
        {0, (size_t)512 << 10, true},          /* a malloc block */
        {0, (size_t)1 << 20, true},            /* 1 MiB of pages */
        {(size_t)2 << 20, (size_t)6 << 20, false},    /* 8 MiB, huge */
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        ub_buf b;
        ub_buf_init(&b);
        for (size_t i = 0; i < c[k].before; i++)
            ub_buf_putc(&b, pat(i));
        size_t n = c[k].n;
        char *w = ub_buf_reserve_written(&b, n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        if (c[k].present) {
            CU_ASSERT(ub_test_resident(w, n));
        } else { /* the bound's last MiB, well past a huge page of step */
            CU_ASSERT_FALSE(ub_test_resident(w + n - ((size_t)1 << 20),
                                             (size_t)1 << 20));
            CU_ASSERT(ub_test_resident(w, (size_t)64 << 10));
        }
        memset(w, 'y', 100);
        b.len += 100;
        CU_ASSERT(holds_pattern(&b, 0, c[k].before));
        ub_buf_free(&b);
    }
}

/* A buffer of 2 MiB and more asks for huge pages (ub_huge_hint), through
 * each way it grows: its first pages of its own, and mremap. */
static void test_big_buffer_huge_hinted(void)
{
    if (UB_ASAN)
        return;
    ub_buf b;
    ub_buf_init(&b);
    for (size_t want = (size_t)1 << 20; want <= ((size_t)16 << 20);
         want *= 2) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(ub_buf_reserve(&b, want - b.len));
        memset(b.data + b.len, 'z', want - b.len);
        b.len = want;
        int hinted = ub_test_huge_hinted(b.data);
        if (hinted >= 0)
            CU_ASSERT_EQUAL(hinted, b.cap >= ((size_t)2 << 20));
    }
    ub_buf_free(&b);
    void *p = ub_scratch_alloc((size_t)4 << 20);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    int hinted = ub_test_huge_hinted(p);
    if (hinted >= 0)
        CU_ASSERT_EQUAL(hinted, 1);
    ub_scratch_free(p, (size_t)4 << 20);
}

/* Blocks kept for reuse (ub_kept) come back with their pages present
 * and their bytes as they were: the smallest that holds what is asked,
 * the rest of it kept; when none holds it, the biggest grown. */
static void test_kept_reuse(void)
{
    const size_t mb = (size_t)1 << 20;
    ub_kept k = {0};
    char *a = ub_scratch_alloc(4 * mb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    memset(a, 'a', 4 * mb);
    ub_kept_free(&k, a, 4 * mb);
    ub_kept_free(&k, ub_scratch_alloc((size_t)1000), 1000); /* freed */
    if (UB_ASAN) { /* nothing is kept: blocks are malloc's */
        CU_ASSERT_EQUAL(k.count, 0);
        char *p = ub_kept_alloc(&k, 3 * mb);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        memset(p, 1, 3 * mb);
        ub_kept_free(&k, p, 3 * mb);
        ub_kept_release(&k);
        return;
    }
    CU_ASSERT_EQUAL(k.count, 1);
    /* the first MiB of the block, then the next two; a MiB stays kept */
    char *p = ub_kept_alloc(&k, mb);
    char *q = ub_kept_alloc(&k, 2 * mb - 100);
    CU_ASSERT_PTR_EQUAL(p, a);
    CU_ASSERT_PTR_EQUAL(q, a + mb);
    CU_ASSERT(ub_test_resident(p, mb) && ub_test_resident(q, 2 * mb));
    CU_ASSERT(p[0] == 'a' && q[2 * mb - 101] == 'a');
    CU_ASSERT_EQUAL(k.count, 1);
    /* smallest that holds it: of 1, 3 and 2 MiB, 1.5 MiB takes the 2 */
    char *three = ub_scratch_alloc(3 * mb), *two = ub_scratch_alloc(2 * mb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(three);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    ub_kept_free(&k, three, 3 * mb);
    ub_kept_free(&k, two, 2 * mb);
    CU_ASSERT_PTR_EQUAL(ub_kept_alloc(&k, 3 * mb / 2), two);
    ub_scratch_free(two, 3 * mb / 2);
    CU_ASSERT_EQUAL(k.count, 3); /* 1 MiB of a, 3 MiB, half a MiB of two */
    /* none holds 5 MiB: the biggest (3) grows, its bytes kept */
    memset(three, 't', 3 * mb);
    char *five = ub_kept_alloc(&k, 5 * mb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(five);
    CU_ASSERT(five[0] == 't' && five[3 * mb - 1] == 't');
    CU_ASSERT(ub_test_resident(five, 5 * mb));
    CU_ASSERT_EQUAL(k.count, 2);
    ub_kept_free(&k, five, 5 * mb);
    ub_scratch_free(p, mb);
    ub_scratch_free(q, 2 * mb - 100);
    ub_kept_release(&k);
    CU_ASSERT_EQUAL(k.count, 0);
}

/* With every place taken, a bigger block displaces the smallest and a
 * smaller one goes back to the system. */
static void test_kept_full(void)
{
    if (UB_ASAN)
        return;
    const size_t unit = UB_SCRATCH_PAGES;
    ub_kept k = {0};
    for (size_t i = 0; i < UB_KEPT_MAX; i++)
        ub_kept_free(&k, ub_scratch_alloc((i + 2) * unit), (i + 2) * unit);
    CU_ASSERT_EQUAL(k.count, UB_KEPT_MAX);
    ub_kept_free(&k, ub_scratch_alloc(unit), unit);
    CU_ASSERT_EQUAL(k.count, UB_KEPT_MAX);
    size_t smallest = SIZE_MAX;
    for (size_t i = 0; i < k.count; i++)
        if (k.b[i].n < smallest)
            smallest = k.b[i].n;
    CU_ASSERT_EQUAL(smallest, 2 * unit);
    char *big = ub_scratch_alloc(40 * unit);
    ub_kept_free(&k, big, 40 * unit);
    smallest = SIZE_MAX;
    bool has_big = false;
    for (size_t i = 0; i < k.count; i++) {
        if (k.b[i].n < smallest)
            smallest = k.b[i].n;
        has_big = has_big || k.b[i].p == big;
    }
    CU_ASSERT_EQUAL(smallest, 3 * unit);
    CU_ASSERT(has_big);
    ub_kept_release(&k);
}

/* A trim keeps the smallest block that holds what is asked, and nothing
 * when none does. */
static void test_kept_trim(void)
{
    if (UB_ASAN)
        return;
    const size_t mb = (size_t)1 << 20;
    ub_kept k = {0};
    char *two = NULL;
    for (size_t i = 3; i >= 1; i--) {
        char *p = ub_scratch_alloc(i * mb);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        if (i == 2)
            two = p;
        ub_kept_free(&k, p, i * mb);
    }
    CU_ASSERT_EQUAL(k.count, 3);
    ub_kept_trim(&k, 3 * mb / 2);
    CU_ASSERT_EQUAL(k.count, 1);
    CU_ASSERT_PTR_EQUAL(k.b[0].p, two);
    CU_ASSERT_PTR_EQUAL(ub_kept_alloc(&k, mb), two);
    ub_kept_free(&k, two, mb);
    ub_kept_trim(&k, 4 * mb);
    CU_ASSERT_EQUAL(k.count, 0);
    ub_kept_release(&k);
}

static void test_take(void)
{
    /* small and big: the caller frees what it takes with free() (under
     * AddressSanitizer a mismatch would be reported), the buffer is left
     * empty and usable */
    const size_t sizes[] = {0, 5, (size_t)2 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        ub_buf b;
        ub_buf_init(&b);
        for (size_t i = 0; i < sizes[k]; i++)
            ub_buf_putc(&b, pat(i));
        char *d = ub_buf_take(&b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        CU_ASSERT_EQUAL(b.len, 0);
        CU_ASSERT_PTR_NULL(b.data);
        bool same = true;
        for (size_t i = 0; i < sizes[k]; i++)
            same = same && d[i] == pat(i);
        CU_ASSERT(same);
        free(d);
        ub_buf_puts(&b, "again");
        CU_ASSERT_EQUAL(b.len, 5);
        CU_ASSERT_EQUAL(memcmp(b.data, "again", 5), 0);
        ub_buf_free(&b);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("buf", NULL, NULL);
    CU_add_test(s, "growth keeps the bytes", test_grow_keeps_bytes);
    CU_add_test(s, "reserve a bound, write less", test_reserve_bound_write_less);
    CU_add_test(s, "a bound to fill is made present, below huge pages",
                test_reserve_written_present);
    CU_add_test(s, "big buffers ask for huge pages",
                test_big_buffer_huge_hinted);
    CU_add_test(s, "take", test_take);
    CU_add_test(s, "kept blocks are reused", test_kept_reuse);
    CU_add_test(s, "kept blocks when all places are taken", test_kept_full);
    CU_add_test(s, "kept blocks trimmed", test_kept_trim);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
