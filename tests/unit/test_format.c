/* Unit tests of ub_format: numbers print as OpenUSD prints them (shortest
 * round trip for double and float, %g for half), strings, assets and
 * values are quoted as OpenUSD quotes them. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_format.h"
#include "ub_intern.h"
#include "ub_test.h"

static ub_strtab *strtab;

static char buf[UB_FMT_MAX + 1];

static const char *D(double v)
{
    buf[ub_fmt_double(buf, v)] = '\0';
    return buf;
}

static const char *F(float v)
{
    buf[ub_fmt_float(buf, v)] = '\0';
    return buf;
}

static const char *H(float v)
{
    buf[ub_fmt_half(buf, ub_float_to_half(v))] = '\0';
    return buf;
}

static void test_double_known(void)
{
    CU_ASSERT_STRING_EQUAL(D(0.0), "0");
    CU_ASSERT_STRING_EQUAL(D(-0.0), "-0");
    CU_ASSERT_STRING_EQUAL(D(1.0), "1");
    CU_ASSERT_STRING_EQUAL(D(-1.0), "-1");
    CU_ASSERT_STRING_EQUAL(D(0.1), "0.1");
    CU_ASSERT_STRING_EQUAL(D(1.0 / 3.0), "0.3333333333333333");
    CU_ASSERT_STRING_EQUAL(D(2.0 / 3.0), "0.6666666666666666");
    CU_ASSERT_STRING_EQUAL(D(3.14159), "3.14159");
    CU_ASSERT_STRING_EQUAL(D(-3.12345678910111), "-3.12345678910111");
    CU_ASSERT_STRING_EQUAL(D(10000000000.0), "10000000000");
    CU_ASSERT_STRING_EQUAL(D(-0.000001), "-0.000001");
    CU_ASSERT_STRING_EQUAL(D(1e-7), "1e-7");
    CU_ASSERT_STRING_EQUAL(D(1.5e-7), "1.5e-7");
    CU_ASSERT_STRING_EQUAL(D(1.25e-6), "0.00000125");
    CU_ASSERT_STRING_EQUAL(D(1e14), "100000000000000");
    CU_ASSERT_STRING_EQUAL(D(123456789012345.0), "123456789012345");
    CU_ASSERT_STRING_EQUAL(D(1e15), "1e15");
    CU_ASSERT_STRING_EQUAL(D(1234567890123456.0), "1.234567890123456e15");
    CU_ASSERT_STRING_EQUAL(D(1e21), "1e21");
    CU_ASSERT_STRING_EQUAL(D(1e22), "1e22");
    CU_ASSERT_STRING_EQUAL(D(1e23), "1e23");
    CU_ASSERT_STRING_EQUAL(D(9007199254740993.0), "9.007199254740992e15");
    CU_ASSERT_STRING_EQUAL(D(1.9999999999999996), "1.9999999999999996");
    CU_ASSERT_STRING_EQUAL(D(5e-324), "5e-324");
    CU_ASSERT_STRING_EQUAL(D(2.2250738585072014e-308),
                           "2.2250738585072014e-308");
    CU_ASSERT_STRING_EQUAL(D(1.7976931348623157e308),
                           "1.7976931348623157e308");
    CU_ASSERT_STRING_EQUAL(D(INFINITY), "inf");
    CU_ASSERT_STRING_EQUAL(D(-INFINITY), "-inf");
    CU_ASSERT_STRING_EQUAL(D(NAN), "nan");
    CU_ASSERT_STRING_EQUAL(D(-NAN), "nan");
    CU_ASSERT_STRING_EQUAL(D(0.5), "0.5");
    CU_ASSERT_STRING_EQUAL(D(24.0), "24");
    CU_ASSERT_STRING_EQUAL(D(1011.43), "1011.43");
    CU_ASSERT_STRING_EQUAL(D(7800000000.0), "7800000000");
}

static void test_float_known(void)
{
    CU_ASSERT_STRING_EQUAL(F(0.1f), "0.1");
    CU_ASSERT_STRING_EQUAL(F(0.0f), "0");
    CU_ASSERT_STRING_EQUAL(F(-0.0f), "-0");
    CU_ASSERT_STRING_EQUAL(F(3.14159f), "3.14159");
    CU_ASSERT_STRING_EQUAL(F(-4.12345f), "-4.12345");
    CU_ASSERT_STRING_EQUAL(F(1.0f / 3.0f), "0.33333334");
    CU_ASSERT_STRING_EQUAL(F(10000000000.0f), "10000000000");
    CU_ASSERT_STRING_EQUAL(F(7800000000.0f), "7800000000");
    CU_ASSERT_STRING_EQUAL(F(-0.000001f), "-0.000001");
    CU_ASSERT_STRING_EQUAL(F(1e-7f), "1e-7");
    CU_ASSERT_STRING_EQUAL(F(1e21f), "1e21");
    CU_ASSERT_STRING_EQUAL(F(16777216.0f), "16777216");
    CU_ASSERT_STRING_EQUAL(F(16777217.0f), "16777216");
    CU_ASSERT_STRING_EQUAL(F(1e-45f), "1e-45");
    CU_ASSERT_STRING_EQUAL(F(3.4028235e38f), "3.4028235e38");
    CU_ASSERT_STRING_EQUAL(F(1.17549435e-38f), "1.1754944e-38");
    CU_ASSERT_STRING_EQUAL(F(INFINITY), "inf");
    CU_ASSERT_STRING_EQUAL(F(-INFINITY), "-inf");
    CU_ASSERT_STRING_EQUAL(F(NAN), "nan");
    CU_ASSERT_STRING_EQUAL(F(1011.43f), "1011.43");
    CU_ASSERT_STRING_EQUAL(F(0.707f), "0.707");
}

static void test_half_known(void)
{
    /* From the corpus: OpenUSD prints halves as iostream prints floats. */
    CU_ASSERT_STRING_EQUAL(H(1.807f), "1.80664");
    CU_ASSERT_STRING_EQUAL(H(-4.12345f), "-4.125");
    CU_ASSERT_STRING_EQUAL(H(0.123f), "0.122986");
    CU_ASSERT_STRING_EQUAL(H(1011.43f), "1011.5");
    CU_ASSERT_STRING_EQUAL(H(10.415f), "10.4141");
    CU_ASSERT_STRING_EQUAL(H(0.707f), "0.707031");
    CU_ASSERT_STRING_EQUAL(H(0.0f), "0");
    CU_ASSERT_STRING_EQUAL(H(1.0f), "1");
    CU_ASSERT_STRING_EQUAL(H(65504.0f), "65504");
    CU_ASSERT_STRING_EQUAL(H(1e10f), "inf");
    CU_ASSERT_STRING_EQUAL(H(-1e10f), "-inf");
    CU_ASSERT_STRING_EQUAL(H(-0.000001f), "-1.01328e-06");
    CU_ASSERT_STRING_EQUAL(H(5.9604645e-08f), "5.96046e-08");
}

/* Every half prints exactly as the C library prints the float with %g
 * (OpenUSD streams a half as a float). */
static void test_half_exhaustive(void)
{
    int bad = 0;
    for (unsigned h = 0; h < 65536; h++) {
        char want[64];
        float f = ub_half_to_float((uint16_t)h);
        /* every NaN prints as "nan": "-nan" would not read back */
        snprintf(want, sizeof want, "%g", isnan(f) ? (double)NAN : (double)f);
        char got[UB_FMT_MAX + 1];
        got[ub_fmt_half(got, (uint16_t)h)] = '\0';
        if (strcmp(got, want) != 0 && bad++ < 5)
            fprintf(stderr, "half %#06x: got %s want %s\n", h, got, want);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_ints(void)
{
    char b[UB_FMT_MAX + 1];
    b[ub_fmt_i64(b, 0)] = '\0';
    CU_ASSERT_STRING_EQUAL(b, "0");
    b[ub_fmt_i64(b, INT64_MIN)] = '\0';
    CU_ASSERT_STRING_EQUAL(b, "-9223372036854775808");
    b[ub_fmt_i64(b, INT64_MAX)] = '\0';
    CU_ASSERT_STRING_EQUAL(b, "9223372036854775807");
    b[ub_fmt_i64(b, INT32_MIN)] = '\0';
    CU_ASSERT_STRING_EQUAL(b, "-2147483648");
    b[ub_fmt_u64(b, UINT64_MAX)] = '\0';
    CU_ASSERT_STRING_EQUAL(b, "18446744073709551615");
    b[ub_fmt_u64(b, 4294967295u)] = '\0';
    CU_ASSERT_STRING_EQUAL(b, "4294967295");
    b[ub_fmt_i64(b, -10)] = '\0';
    CU_ASSERT_STRING_EQUAL(b, "-10");
}

/* xorshift: deterministic, so a failure reproduces. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* The significant digits of text s (a number as ub_fmt prints it, or
 * %e's), without leading or trailing zeros. */
static void digits_of(const char *s, char *out)
{
    int n = 0;
    for (; *s && *s != 'e'; s++)
        if ((*s >= '0' && *s <= '9') && (n || *s != '0'))
            out[n++] = *s;
    while (n > 0 && out[n - 1] == '0')
        n--;
    out[n] = '\0';
}

/* How many significant digits s has. */
static int sig_digits(const char *s)
{
    char d[64];
    digits_of(s, d);
    return (int)strlen(d);
}

/* Does some decimal with k significant digits round-trip to x?  The
 * candidates are the k-digit numbers just below and above x. */
static bool shorter_exists_double(double x, int k)
{
    if (k < 1)
        return false;
    char s[64];
    snprintf(s, sizeof s, "%.*e", k - 1, x);
    /* s = d.ddd e X; try s and its neighbours in the last digit */
    char *e = strchr(s, 'e');
    int ex = atoi(e + 1);
    char dig[32];
    int n = 0;
    for (char *p = s; p < e; p++)
        if (*p >= '0' && *p <= '9')
            dig[n++] = *p;
    dig[n] = '\0';
    long long m = atoll(dig);
    for (int d = -1; d <= 1; d++) {
        char t[64];
        snprintf(t, sizeof t, "%s%llde%d", x < 0 ? "-" : "",
                 (long long)llabs(m) + d, ex - (k - 1));
        if (strtod(t, NULL) == x)
            return true;
    }
    return false;
}

static bool shorter_exists_float(float x, int k)
{
    if (k < 1)
        return false;
    char s[64];
    snprintf(s, sizeof s, "%.*e", k - 1, (double)x);
    char *e = strchr(s, 'e');
    int ex = atoi(e + 1);
    char dig[32];
    int n = 0;
    for (char *p = s; p < e; p++)
        if (*p >= '0' && *p <= '9')
            dig[n++] = *p;
    dig[n] = '\0';
    long long m = atoll(dig);
    for (int d = -1; d <= 1; d++) {
        char t[64];
        snprintf(t, sizeof t, "%s%llde%d", x < 0 ? "-" : "",
                 (long long)llabs(m) + d, ex - (k - 1));
        if (strtof(t, NULL) == x)
            return true;
    }
    return false;
}

static void test_double_roundtrip(void)
{
    int bad_rt = 0, bad_short = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = rnd();
        double x;
        if (i % 4 == 0) /* values of everyday magnitude */
            x = (double)(int64_t)(bits >> 11) / (double)(1u << (bits & 31));
        else
            memcpy(&x, &bits, sizeof x);
        if (!isfinite(x))
            continue;
        const char *s = D(x);
        if (strtod(s, NULL) != x && bad_rt++ < 5)
            fprintf(stderr, "double %a printed %s\n", x, s);
        if (x != 0 && shorter_exists_double(x, sig_digits(s) - 1) &&
            bad_short++ < 5)
            fprintf(stderr, "double %a: %s is not shortest\n", x, s);
    }
    CU_ASSERT_EQUAL(bad_rt, 0);
    CU_ASSERT_EQUAL(bad_short, 0);
}

static void test_float_roundtrip(void)
{
    int bad_rt = 0, bad_short = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t bits = (uint32_t)rnd();
        float x;
        if (i % 4 == 0)
            x = (float)(int32_t)(bits >> 8) / (float)(1u << (bits & 15));
        else
            memcpy(&x, &bits, sizeof x);
        if (!isfinite(x))
            continue;
        const char *s = F(x);
        if (strtof(s, NULL) != x && bad_rt++ < 5)
            fprintf(stderr, "float %a printed %s\n", (double)x, s);
        if (x != 0 && shorter_exists_float(x, sig_digits(s) - 1) &&
            bad_short++ < 5)
            fprintf(stderr, "float %a: %s is not shortest\n", (double)x, s);
    }
    CU_ASSERT_EQUAL(bad_rt, 0);
    CU_ASSERT_EQUAL(bad_short, 0);
}

/* The shortest digits are also the closest: compare with the C library's
 * correctly rounded %.*e at the same length. */
static void test_double_closest(void)
{
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = rnd();
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x) || x == 0)
            continue;
        uint64_t digits;
        int e10;
        ub_shortest_double(fabs(x), &digits, &e10);
        char ours[32];
        int n = snprintf(ours, sizeof ours, "%llu",
                         (unsigned long long)digits);
        char lib[64];
        snprintf(lib, sizeof lib, "%.*e", n - 1, fabs(x));
        char libd[32];
        int k = 0;
        for (char *p = lib; *p && *p != 'e'; p++)
            if (*p != '.')
                libd[k++] = *p;
        libd[k] = '\0';
        /* The library's closest n-digit number may fall outside the
         * rounding interval (then ours differs legitimately), so only
         * count differences where the library's string round-trips. */
        if (strcmp(ours, libd) != 0 && strtod(lib, NULL) == fabs(x) &&
            bad++ < 5)
            fprintf(stderr, "double %a: ours %s lib %s\n", x, ours, lib);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Same for float: the shortest digits are the closest to the value. */
static void test_float_closest(void)
{
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t bits = (uint32_t)rnd();
        float x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x) || x == 0)
            continue;
        uint32_t digits;
        int e10;
        ub_shortest_float(fabsf(x), &digits, &e10);
        char ours[32];
        int n = snprintf(ours, sizeof ours, "%u", digits);
        char lib[64];
        snprintf(lib, sizeof lib, "%.*e", n - 1, (double)fabsf(x));
        char libd[32];
        int k = 0;
        for (char *p = lib; *p && *p != 'e'; p++)
            if (*p != '.')
                libd[k++] = *p;
        libd[k] = '\0';
        if (strcmp(ours, libd) != 0 && strtof(lib, NULL) == fabsf(x) &&
            bad++ < 5)
            fprintf(stderr, "float %a: ours %s lib %s\n", (double)x, ours,
                    lib);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Floats with six significant digits or fewer, most of scene data, take a
 * path of their own (rounded to six digits, checked, laid out without
 * branches).  Sweep the range it serves, [1e-5, 1e6), and decimals of one
 * to seven digits across it: each prints as a plain decimal that reads
 * back, no shorter decimal does, and of the decimals as short it is the
 * closest (the C library's correctly rounded one, where that reads
 * back). */
static void test_float_short_decimals(void)
{
    float lo_f = 1e-5f, hi_f = 1e6f;
    uint32_t lo, hi;
    memcpy(&lo, &lo_f, sizeof lo);
    memcpy(&hi, &hi_f, sizeof hi);
    int bad = 0, short_ones = 0;
    for (int i = 0; i < 200000; i++) {
        float x;
        if (i % 2) {
            uint32_t bits = lo + (uint32_t)((uint64_t)(hi - lo) * i / 200000);
            memcpy(&x, &bits, sizeof x);
        } else {
            static const double p10[] = {1,   1e1, 1e2, 1e3, 1e4, 1e5,
                                         1e6, 1e7, 1e8, 1e9, 1e10, 1e11};
            uint64_t r = rnd();
            int len = 1 + (int)(r % 7);
            double m = (double)((r >> 8) % (uint64_t)p10[len]);
            x = (float)(m / p10[(r >> 40) % 12]);
            if (i % 6 == 0 && x != 0) { /* a neighbour: not short */
                uint32_t bits;
                memcpy(&bits, &x, sizeof bits);
                bits += (r >> 60) & 1 ? 1 : -1;
                memcpy(&x, &bits, sizeof x);
            }
        }
        if (i % 3 == 0)
            x = -x;
        const char *s = F(x);
        char ours[32], lib[64], libd[32];
        digits_of(s, ours);
        int n = (int)strlen(ours);
        short_ones += n <= 6;
        bool plain = fabsf(x) < 1e-5f || fabsf(x) >= 1e6f || !strchr(s, 'e');
        bool back = strtof(s, NULL) == x;
        bool shortest = x == 0 || !shorter_exists_float(x, n - 1);
        snprintf(lib, sizeof lib, "%.*e", n > 0 ? n - 1 : 0, (double)x);
        digits_of(lib, libd);
        bool closest = strcmp(ours, libd) == 0 || strtof(lib, NULL) != x;
        if (!(plain && back && shortest && closest) && bad++ < 5)
            fprintf(stderr, "float %a printed %s (library: %s)\n",
                    (double)x, s, lib);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(short_ones > 50000); /* the path was taken */
}

/* Big float arrays (where the writer reuses texts of repeated values)
 * print exactly as their elements one by one. */
static void test_float_array_repeats(void)
{
    ub_arena *a = ub_arena_new();
    ub_value v = ub_value_new(a, ub_type_get(UB_TY_TEXCOORD2F), 5000, true);
    float *f = ub_value_data(&v);
    for (int i = 0; i < 10000; i++) {
        uint32_t r = (uint32_t)rnd();
        if (i % 3 == 0) { /* fresh values, many hash collisions */
            memcpy(&f[i], &r, 4);
            if (!isfinite(f[i]))
                f[i] = -0.0f;
        } else { /* repeats of a few values */
            f[i] = (float)(r % 37) / 8.0f - 2.0f;
        }
    }
    ub_buf got, want;
    ub_buf_init(&got);
    ub_buf_init(&want);
    ub_put_value(&got, &v);
    ub_buf_putc(&want, '[');
    for (int i = 0; i < 5000; i++) {
        char t[2 * UB_FMT_MAX + 8];
        size_t n = 0;
        if (i) {
            t[n++] = ',';
            t[n++] = ' ';
        }
        t[n++] = '(';
        n += ub_fmt_float(t + n, f[2 * i]);
        t[n++] = ',';
        t[n++] = ' ';
        n += ub_fmt_float(t + n, f[2 * i + 1]);
        t[n++] = ')';
        ub_buf_append(&want, t, n);
    }
    ub_buf_putc(&want, ']');
    CU_ASSERT_EQUAL(got.len, want.len);
    CU_ASSERT(got.len == want.len && memcmp(got.data, want.data, got.len) == 0);
    ub_buf_free(&got);
    ub_buf_free(&want);
    ub_arena_free(a);
}

static const char *V(ub_buf *b)
{
    ub_buf_putc(b, '\0');
    b->len = 0;
    return b->data;
}

static void test_quoting(void)
{
    ub_buf b;
    ub_buf_init(&b);
#define Q(s) (ub_put_quoted(&b, s, strlen(s)), V(&b))
    CU_ASSERT_STRING_EQUAL(Q(""), "\"\"");
    CU_ASSERT_STRING_EQUAL(Q("foo"), "\"foo\"");
    CU_ASSERT_STRING_EQUAL(Q("fo\\\"o"), "'fo\\\\\"o'");
    CU_ASSERT_STRING_EQUAL(Q("fo'o"), "\"fo'o\"");
    CU_ASSERT_STRING_EQUAL(Q("fo'o''o\\\"o"), "\"fo'o''o\\\\\\\"o\"");
    CU_ASSERT_STRING_EQUAL(Q("a\nb"), "\"\"\"a\nb\"\"\"");
    CU_ASSERT_STRING_EQUAL(Q("a\"\nb"), "'''a\"\nb'''");
    CU_ASSERT_STRING_EQUAL(Q("t\tr\r"), "\"t\\tr\\r\"");
    CU_ASSERT_STRING_EQUAL(Q("\x01\x7f"), "\"\\x01\\x7f\"");
    CU_ASSERT_STRING_EQUAL(Q("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
    CU_ASSERT_STRING_EQUAL(Q("bad\xc3("), "\"bad\\xc3(\"");
#undef Q
#define A(s) (ub_put_asset(&b, s, strlen(s)), V(&b))
    CU_ASSERT_STRING_EQUAL(A("a/b.usda"), "@a/b.usda@");
    CU_ASSERT_STRING_EQUAL(A(""), "@@");
    CU_ASSERT_STRING_EQUAL(A("a@b"), "@@@a@b@@@");
    CU_ASSERT_STRING_EQUAL(A("a@@@b"), "@@@a\\@@@b@@@");
#undef A
    ub_buf_free(&b);
}

static void test_values(void)
{
    ub_arena *a = ub_arena_new();
    ub_buf b;
    ub_buf_init(&b);

    ub_value v = ub_value_new(a, ub_type_get(UB_TY_FLOAT3), 2, true);
    float *f = ub_value_data(&v);
    float fv[] = {-1.707f, 1.707f, 10.303f, 2.23f, 4.45f, 1e-7f};
    memcpy(f, fv, sizeof fv);
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b),
                           "[(-1.707, 1.707, 10.303), (2.23, 4.45, 1e-7)]");

    v = ub_value_new(a, ub_type_get(UB_TY_MATRIX2D), 1, false);
    double *d = ub_value_data(&v);
    d[0] = 1, d[1] = 0.5, d[2] = 0, d[3] = -1;
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "( (1, 0.5), (0, -1) )");

    v = ub_value_new(a, ub_type_get(UB_TY_BOOL), 3, true);
    ((uint8_t *)ub_value_data(&v))[1] = 1;
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "[0, 1, 0]");

    v = ub_value_new(a, ub_type_get(UB_TY_UCHAR), 1, false);
    ((uint8_t *)ub_value_data(&v))[0] = 255;
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "255");

    v = ub_value_new(a, ub_type_get(UB_TY_TIMECODE), 1, false);
    ((double *)ub_value_data(&v))[0] = 1234567.0;
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "1.23457e+06");
    ((double *)ub_value_data(&v))[0] = -NAN;
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "nan");
    ((double *)ub_value_data(&v))[0] = -INFINITY;
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "-inf");

    v = ub_value_new(a, ub_type_get(UB_TY_TOKEN), 2, true);
    ((const char **)ub_value_data(&v))[0] = ub_intern_cstr(strtab, "a");
    ((const char **)ub_value_data(&v))[1] = ub_intern_cstr(strtab, "b c");
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "[\"a\", \"b c\"]");

    v = ub_value_new(a, ub_type_get(UB_TY_ASSET), 1, false);
    ((const char **)ub_value_data(&v))[0] = ub_intern_cstr(strtab, "x.usda");
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "@x.usda@");

    v = ub_value_new(a, ub_type_get(UB_TY_INT), 0, true);
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "[]");

    v = ub_value_block();
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "None");

    v = ub_value_new(a, ub_type_get(UB_TY_REFERENCE), 2, true);
    ub_reference *r = ub_value_data(&v);
    r[0] = (ub_reference){.asset = ub_intern_cstr(strtab, "a.usda"),
                          .prim_path = ub_intern_cstr(strtab, "/A"),
                          .offset = {10, 1}};
    r[1] = (ub_reference){.asset = ub_intern_cstr(strtab, ""),
                          .prim_path = ub_intern_cstr(strtab, ""),
                          .offset = {0, 0.5}};
    ub_put_value(&b, &v);
    CU_ASSERT_STRING_EQUAL(V(&b), "[@a.usda@</A> (offset = 10), <> (scale = 0.5)]");

    ub_buf_free(&b);
    ub_arena_free(a);
}

int main(void)
{
    strtab = ub_strtab_new();
    if (!strtab || CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("format", NULL, NULL);
    CU_add_test(s, "double: known values", test_double_known);
    CU_add_test(s, "float: known values", test_float_known);
    CU_add_test(s, "half: known values", test_half_known);
    CU_add_test(s, "half: all 65536 as %g", test_half_exhaustive);
    CU_add_test(s, "integers at their limits", test_ints);
    CU_add_test(s, "double: round trip and shortest", test_double_roundtrip);
    CU_add_test(s, "float: round trip and shortest", test_float_roundtrip);
    CU_add_test(s, "double: closest of the shortest", test_double_closest);
    CU_add_test(s, "float: closest of the shortest", test_float_closest);
    CU_add_test(s, "float: decimals of six digits or fewer",
                test_float_short_decimals);
    CU_add_test(s, "float arrays with repeated values",
                test_float_array_repeats);
    CU_add_test(s, "strings and asset paths", test_quoting);
    CU_add_test(s, "values", test_values);
    unsigned failed = ub_test_run_all();
    ub_strtab_free(strtab);
    return failed ? 1 : 0;
}
