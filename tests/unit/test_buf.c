/* CUnit tests for ub_buf: growth across the size from which a buffer
 * lives in pages of its own, and handing its bytes over. */
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
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
