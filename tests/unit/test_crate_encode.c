/* Unit tests of the crate encoders: the integer coding gives the bytes
 * OpenUSD 24.08 wrote for the same integers (taken from .usdc files that
 * `usdcat in.usda -o out.usdc` wrote, their LZ4 undone here), the crate
 * reader's decoder (runtime/ub_crate_codec.h) gives back what they encode,
 * and the LZ4 framing gives back its input. */
#include <CUnit/Basic.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_crate_codec.h"
#include "ub_crate_encode.h"
#include "ub_test.h"

/* An int[] of 20 values as OpenUSD stored it: count, compressed size,
 * then OpenUSD's LZ4 framing of the coded integers. */
static const int32_t ints32[20] = {5,    6,    7,      8,      9, 10, 1000,
                                   1001, -70000, -70000, 3, 3, 3,   4,
                                   5,    6,    2147483647, -2147483647 - 1,
                                   0,    1};
static const char usd_ints32[] =
    "00f00401000000012077013305de03a7eafeff007311130080f9ffff7f00000080";
/* And an int64[] of 16. */
static const int64_t ints64[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100000,
                                   10000000000LL, -5, INT64_MAX, 0, 1};
static const char usd_ints64[] =
    "002401000100f208e03f96860100605d0a5402000000fb1bf4abfdffffff041f00908"
    "00100000000000080";

static size_t unhex(const char *hex, unsigned char *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned x;
        sscanf(hex + 2 * i, "%2x", &x);
        out[i] = (unsigned char)x;
    }
    return n;
}

/* OpenUSD's framed bytes -> the coded integers (one chunk: a 0 byte, then
 * one LZ4 block). */
static int usd_coded(const char *hex, unsigned char *coded, int cap)
{
    unsigned char framed[256];
    size_t n = unhex(hex, framed);
    CU_ASSERT_EQUAL_FATAL(framed[0], 0);
    return LZ4_decompress_safe((const char *)framed + 1, (char *)coded,
                               (int)n - 1, cap);
}

/* The coding of n ints of width 4 or 8 equals OpenUSD's (hex). */
static void check_as_openusd(const void *ints, size_t n, int width,
                             const char *hex)
{
    unsigned char want[256];
    int m = usd_coded(hex, want, sizeof want);
    CU_ASSERT_FATAL(m > 0);
    ub_buf b;
    ub_buf_init(&b);
    if (width == 4)
        ub_crate_code_ints32(ints, n, &b);
    else
        ub_crate_code_ints64(ints, n, &b);
    CU_ASSERT_EQUAL(b.len, (size_t)m);
    CU_ASSERT(b.len == (size_t)m && memcmp(b.data, want, b.len) == 0);
    ub_buf_free(&b);
}

static void test_ints32_as_openusd(void)
{
    check_as_openusd(ints32, 20, 4, usd_ints32);
    /* common difference 1 (the most frequent one), stored first */
    ub_buf b;
    ub_buf_init(&b);
    ub_crate_code_ints32((const uint32_t *)ints32, 20, &b);
    int32_t common;
    memcpy(&common, b.data, 4);
    CU_ASSERT_EQUAL(common, 1);
    ub_buf_free(&b);
}

static void test_ints64_as_openusd(void)
{
    check_as_openusd(ints64, 16, 8, usd_ints64);
}

/* Signedness does not change the bytes. */
static void test_unsigned_same_bytes(void)
{
    uint32_t u[5] = {0xffffffffu, 0, 0x80000000u, 7, 7};
    int32_t s[5];
    memcpy(s, u, sizeof u);
    ub_buf a, b;
    ub_buf_init(&a);
    ub_buf_init(&b);
    ub_crate_code_ints32(u, 5, &a);
    ub_crate_code_ints32((const uint32_t *)s, 5, &b);
    CU_ASSERT_EQUAL(a.len, b.len);
    CU_ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    /* 4 bytes of common value, 2 code bytes, at most 4 bytes per value */
    CU_ASSERT(a.len >= 4 + 2 && a.len <= 4 + 2 + 5 * 4);
    ub_buf_free(&a);
    ub_buf_free(&b);
}

/* Ties between most common differences go to the largest. */
static void test_common_tie(void)
{
    uint32_t v[4] = {2, 4, 1, 0}; /* differences 2, 2, -3, -1 */
    uint32_t w[4] = {5, 5, 5, 6}; /* differences 5, 0, 0, 1 */
    uint32_t t[2] = {3, 10};      /* differences 3, 7: a tie */
    ub_buf b;
    ub_buf_init(&b);
    int32_t c;
    ub_crate_code_ints32(v, 4, &b);
    memcpy(&c, b.data, 4);
    CU_ASSERT_EQUAL(c, 2);
    b.len = 0;
    ub_crate_code_ints32(w, 4, &b);
    memcpy(&c, b.data, 4);
    CU_ASSERT_EQUAL(c, 0);
    b.len = 0;
    ub_crate_code_ints32(t, 2, &b);
    memcpy(&c, b.data, 4);
    CU_ASSERT_EQUAL(c, 7);
    /* codes: 3 is an 8-bit difference (01), 7 the common one (00) */
    CU_ASSERT_EQUAL((unsigned char)b.data[4], 0x01);
    CU_ASSERT_EQUAL((signed char)b.data[5], 3);
    CU_ASSERT_EQUAL(b.len, 6u);
    ub_buf_free(&b);
}

static int ub_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The most common difference of v by sorting them all: the reference. */
static int32_t ub_ref_common(const uint32_t *v, size_t n)
{
    int64_t *d = malloc(n * sizeof *d);
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        d[i] = (int32_t)(v[i] - prev);
        prev = v[i];
    }
    qsort(d, n, sizeof *d, ub_cmp_i64);
    int64_t best = 0;
    size_t best_count = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && d[j] == d[i])
            j++;
        if (j - i >= best_count) { /* ascending: ties go to the larger */
            best = d[i];
            best_count = j - i;
        }
        i = j;
    }
    free(d);
    return (int32_t)best;
}

/* Differences far from zero (past +-1024) are counted apart; whichever
 * way (all distinct like field set terminators, a few repeating, many
 * repeating), the most common difference is the one a plain count
 * finds, ties to the largest. */
static void test_common_far(void)
{
    uint32_t seed = 12345;
    ub_buf b;
    ub_buf_init(&b);
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)(round * 7) % 1500;
        uint32_t *v = malloc(n * sizeof *v);
        uint32_t x = 0;
        unsigned far_kinds = 1 + (unsigned)round % 12;
        unsigned far_pct = (unsigned)round % 100;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 8) % 100;
            if (r < far_pct) {
                seed = seed * 1103515245u + 12345u;
                unsigned kind = (seed >> 9) % far_kinds;
                /* kind 0: a fresh far value each time (all distinct) */
                x = kind == 0 ? (seed >> 3) | 0x40000000u
                              : x + 5000u * kind - 20000u;
            } else {
                x += (seed >> 12) % 5;
            }
            v[i] = x;
        }
        b.len = 0;
        ub_crate_code_ints32(v, n, &b);
        int32_t c;
        memcpy(&c, b.data, 4);
        CU_ASSERT_EQUAL(c, ub_ref_common(v, n));
        free(v);
    }
    ub_buf_free(&b);
}

static void test_empty(void)
{
    ub_buf b;
    ub_buf_init(&b);
    ub_crate_code_ints32(NULL, 0, &b);
    CU_ASSERT_EQUAL(b.len, 0u);
    /* size, then the framing of nothing */
    ub_crate_put_ints32(NULL, 0, NULL, &b);
    uint64_t size;
    memcpy(&size, b.data, 8);
    CU_ASSERT_EQUAL(size, b.len - 8);
    CU_ASSERT_EQUAL(b.data[8], 0);
    ub_buf_free(&b);
}

/* The framing decompresses to its input, with LZ4 and LZ4 HC. */
static void test_lz4_framing(void)
{
    char src[10000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (char)((i * 7) % 13 + (i / 1000));
    for (int hc = 0; hc <= 9; hc += 9) {
        ub_buf b;
        ub_buf_init(&b);
        ub_crate_lz4c c;
        ub_crate_lz4c_init(&c, hc);
        ub_crate_lz4_compress(src, sizeof src, &c, &b);
        ub_crate_lz4c_free(&c);
        CU_ASSERT_FATAL(b.len > 1);
        CU_ASSERT_EQUAL(b.data[0], 0);
        CU_ASSERT(b.len < sizeof src / 4);
        char back[sizeof src];
        int n = LZ4_decompress_safe(b.data + 1, back, (int)b.len - 1,
                                    sizeof back);
        CU_ASSERT_EQUAL(n, (int)sizeof src);
        CU_ASSERT(memcmp(back, src, sizeof src) == 0);
        ub_buf_free(&b);
    }
}

/* Chunks made apart (as by two threads) and put behind their count in
 * order frame the whole input: the reader's decoder gives it back. */
static void test_lz4_chunks(void)
{
    char src[30000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (char)((i * 7) % 13 + (i / 1000));
    ub_crate_lz4c c;
    ub_crate_lz4c_init(&c, 3);
    ub_buf first, second, whole;
    ub_buf_init(&first);
    ub_buf_init(&second);
    ub_buf_init(&whole);
    ub_crate_lz4_chunk(src, 12345, &c, &first);
    ub_crate_lz4_chunk(src + 12345, sizeof src - 12345, &c, &second);
    ub_buf_putc(&whole, 2);
    ub_buf_append(&whole, first.data, first.len);
    ub_buf_append(&whole, second.data, second.len);
    int32_t k;
    memcpy(&k, first.data, 4);
    CU_ASSERT_EQUAL((size_t)k + 4, first.len);
    char back[sizeof src];
    const char *why = NULL;
    CU_ASSERT_EQUAL(ub_crate_lz4(whole.data, whole.len, back, sizeof back,
                                 &why), 0);
    CU_ASSERT(memcmp(back, src, sizeof src) == 0);
    /* a chunk of nothing (or past the framing's limit) is refused */
    ub_buf none;
    ub_buf_init(&none);
    ub_crate_lz4_chunk(src, 0, &c, &none);
    CU_ASSERT(none.failed);
    ub_crate_lz4c_free(&c);
    ub_buf_free(&first);
    ub_buf_free(&second);
    ub_buf_free(&whole);
    ub_buf_free(&none);
}

/* put_ints: uint64 size of what follows, then framed coded integers. */
static void test_put_ints(void)
{
    ub_buf b;
    ub_buf_init(&b);
    ub_crate_lz4c c;
    ub_crate_lz4c_init(&c, 9);
    ub_crate_put_ints32((const uint32_t *)ints32, 20, &c, &b);
    ub_crate_lz4c_free(&c);
    uint64_t size;
    memcpy(&size, b.data, 8);
    CU_ASSERT_EQUAL(size, b.len - 8);
    unsigned char coded[256], want[256];
    int n = LZ4_decompress_safe(b.data + 9, (char *)coded, (int)b.len - 9,
                                sizeof coded);
    int m = usd_coded(usd_ints32, want, sizeof want);
    CU_ASSERT_EQUAL(n, m);
    CU_ASSERT(n == m && memcmp(coded, want, (size_t)n) == 0);
    ub_buf_free(&b);
}

/* What the writer encodes, the crate reader's decoder gives back: runs,
 * jumps of every width, extremes, at both widths and many lengths. */
static void test_round_trip(void)
{
    enum { N = 3000 };
    static uint32_t v32[N], back32[N];
    static uint64_t v64[N], back64[N];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t k = x % 7;
        uint64_t step = k == 0 ? 1 : k == 1 ? x % 200 : k == 2 ? x % 40000
                        : k == 3 ? x : k == 4 ? 0 : k == 5 ? (uint64_t)-1
                                                        : x >> 40;
        v64[i] = (i ? v64[i - 1] : 0) + step;
        v32[i] = (uint32_t)v64[i];
    }
    v32[7] = 0x80000000u, v32[8] = 0x7fffffffu;
    v64[7] = 0x8000000000000000ull, v64[8] = 0x7fffffffffffffffull;
    size_t lens[] = {0, 1, 2, 3, 4, 5, 15, 16, 17, 255, 1024, N};
    ub_crate_lz4c c;
    ub_crate_lz4c_init(&c, 9);
    for (size_t t = 0; t < sizeof lens / sizeof *lens; t++) {
        size_t n = lens[t];
        const char *why = NULL;
        ub_buf b;
        ub_buf_init(&b);
        ub_crate_put_ints32(v32, n, &c, &b);
        CU_ASSERT_FATAL(!b.failed && b.len >= 8);
        CU_ASSERT_EQUAL(ub_crate_ints(b.data + 8, b.len - 8, n, 4, back32,
                                      &why), 0);
        CU_ASSERT(memcmp(back32, v32, n * 4) == 0);
        b.len = 0;
        ub_crate_put_ints64(v64, n, NULL, &b);
        CU_ASSERT_EQUAL(ub_crate_ints(b.data + 8, b.len - 8, n, 8, back64,
                                      &why), 0);
        CU_ASSERT(memcmp(back64, v64, n * 8) == 0);
        if (why)
            fprintf(stderr, "\n%zu ints: %s\n", n, why);
        ub_buf_free(&b);
    }
    ub_crate_lz4c_free(&c);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("crate encoders", NULL, NULL);
    CU_add_test(s, "int32 coding as OpenUSD's", test_ints32_as_openusd);
    CU_add_test(s, "int64 coding as OpenUSD's", test_ints64_as_openusd);
    CU_add_test(s, "unsigned and signed alike", test_unsigned_same_bytes);
    CU_add_test(s, "most common difference, ties", test_common_tie);
    CU_add_test(s, "most common difference, far ones", test_common_far);
    CU_add_test(s, "no integers", test_empty);
    CU_add_test(s, "LZ4 framing round trip", test_lz4_framing);
    CU_add_test(s, "LZ4 chunks made apart", test_lz4_chunks);
    CU_add_test(s, "compressed integers with their size", test_put_ints);
    CU_add_test(s, "round trip through the reader's decoder",
                test_round_trip);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
