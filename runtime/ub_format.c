#include "ub_format.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_format_tables.h"
#include "ub_ident.h"
#include "ub_intern.h"

/* --- integers ------------------------------------------------------------ */

static const char ub_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t ub_pow10[20] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u,
    100000000u, 1000000000u, 10000000000u, 100000000000u, 1000000000000u,
    10000000000000u, 100000000000000u, 1000000000000000u,
    10000000000000000u, 100000000000000000u, 1000000000000000000u,
    10000000000000000000u,
};

/* Number of decimal digits of v (1 for 0): log10 from the bit length. */
static inline int ub_ndigits(uint64_t v)
{
    int bits = 64 - __builtin_clzll(v | 1);
    int t = (bits * 1233) >> 12; /* 1233/4096 ~ log10(2) */
    return t + (v >= ub_pow10[t]) + (v == 0);
}

/* Exactly len digits of v (zero-padded on the left), written backwards
 * from out + len; no library calls on this hot path. */
static inline void ub_put_digits(char *out, uint64_t v, int len)
{
    char *p = out + len;
    while (v > UINT32_MAX) { /* rare: more than 9 digits */
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        p[0] = ub_digit_pairs[2 * r];
        p[1] = ub_digit_pairs[2 * r + 1];
    }
    uint32_t w = (uint32_t)v;
    while (p - out >= 2) {
        unsigned r = w % 100;
        w /= 100;
        p -= 2;
        p[0] = ub_digit_pairs[2 * r];
        p[1] = ub_digit_pairs[2 * r + 1];
    }
    if (p > out)
        *--p = (char)('0' + w % 10);
}

/* n digits of v with a '.' after the first `point` (0 < point < n),
 * written backwards: no division by a variable power of ten. */
static inline void ub_put_digits_dot(char *out, uint64_t v, int n, int point)
{
    char *p = out + n + 1;
    int frac = n - point;
    if (v > UINT32_MAX) { /* long doubles: plain 64-bit loop */
        for (; frac > 0; frac--) {
            *--p = (char)('0' + v % 10);
            v /= 10;
        }
        *--p = '.';
        ub_put_digits(out, v, point);
        return;
    }
    uint32_t w = (uint32_t)v;
    for (; frac >= 2; frac -= 2) {
        unsigned r = w % 100;
        w /= 100;
        p -= 2;
        p[0] = ub_digit_pairs[2 * r];
        p[1] = ub_digit_pairs[2 * r + 1];
    }
    if (frac) {
        *--p = (char)('0' + w % 10);
        w /= 10;
    }
    *--p = '.';
    ub_put_digits(out, w, point);
}

/* Decimal digits of v, most significant first; returns the count. */
static size_t ub_u64_digits(char *out, uint64_t v)
{
    int n = ub_ndigits(v);
    ub_put_digits(out, v, n);
    return (size_t)n;
}

size_t ub_fmt_u64(char *out, uint64_t v)
{
    return ub_u64_digits(out, v);
}

size_t ub_fmt_i64(char *out, int64_t v)
{
    if (v < 0) {
        out[0] = '-';
        /* Negate in unsigned arithmetic so INT64_MIN is fine. */
        return 1 + ub_u64_digits(out + 1, 0 - (uint64_t)v);
    }
    return ub_u64_digits(out, (uint64_t)v);
}

/* --- shortest round-trip digits (Ryu) ------------------------------------
 *
 * Ulf Adams, "Ryu: fast float-to-string conversion" (PLDI 2018).  The
 * 128-bit core below works for any binary format up to binary64 (the
 * 125-bit tables are precise enough; only significand width and bias
 * differ) and serves double.  binary32 has a 64-bit variant, ub_ryu32,
 * which gives the same digits as this core for every positive float (checked
 * exhaustively when it was written).  Among the shortest digit strings
 * inside the rounding interval both pick the one closest to the exact
 * value, ties to even -- the same answer as double-conversion's
 * ToShortest / ToShortestSingle, which is what OpenUSD prints. */

static inline uint32_t ub_pow5bits(uint32_t e)
{
    return ((e * 1217359u) >> 19) + 1; /* ceil(log2(5^e)), e <= 3528 */
}

static inline uint32_t ub_log10pow2(uint32_t e)
{
    return (e * 78913u) >> 18; /* floor(log10(2^e)), e <= 1650 */
}

static inline uint32_t ub_log10pow5(uint32_t e)
{
    return (e * 732923u) >> 20; /* floor(log10(5^e)), e <= 2620 */
}

static inline uint32_t ub_pow5_factor(uint64_t v)
{
    uint32_t n = 0;
    while (v != 0 && v % 5 == 0) {
        v /= 5;
        n++;
    }
    return n;
}

static inline bool ub_multiple_of_pow5(uint64_t v, uint32_t p)
{
    return ub_pow5_factor(v) >= p;
}

static inline bool ub_multiple_of_pow2(uint64_t v, uint32_t p)
{
    return (v & ((UINT64_C(1) << p) - 1)) == 0;
}

/* (m * mul) >> j for the 128-bit table entry mul, 64 <= j < 128. */
static inline uint64_t ub_mulshift(uint64_t m, const uint64_t *mul,
                                   uint32_t j)
{
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128;
    u128 b0 = (u128)m * mul[0];
    u128 b2 = (u128)m * mul[1];
    return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
#else
    /* Portable 64x64->128 products. */
    uint64_t lo0, hi0, lo2, hi2;
    {
        uint64_t a = m, b = mul[0];
        uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b,
                 bh = b >> 32;
        uint64_t p00 = al * bl, p01 = al * bh, p10 = ah * bl, p11 = ah * bh;
        uint64_t mid = p10 + (p00 >> 32);
        uint64_t mid2 = p01 + (uint32_t)mid;
        hi0 = p11 + (mid >> 32) + (mid2 >> 32);
        lo0 = (mid2 << 32) | (uint32_t)p00;
    }
    {
        uint64_t a = m, b = mul[1];
        uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b,
                 bh = b >> 32;
        uint64_t p00 = al * bl, p01 = al * bh, p10 = ah * bl, p11 = ah * bh;
        uint64_t mid = p10 + (p00 >> 32);
        uint64_t mid2 = p01 + (uint32_t)mid;
        hi2 = p11 + (mid >> 32) + (mid2 >> 32);
        lo2 = (mid2 << 32) | (uint32_t)p00;
    }
    (void)lo0;
    uint64_t sum_lo = hi0 + lo2;
    uint64_t sum_hi = hi2 + (sum_lo < hi0);
    uint32_t s = j - 64;
    return s == 0 ? sum_lo : (sum_hi << (64 - s)) | (sum_lo >> s);
#endif
}

/* The rare exact case of Ryu's digit removal, shared by the binary64 and
 * binary32 paths: an interval end or the value itself is an exact
 * decimal, so trailing zeros must be tracked to round half to even and to
 * honour an inclusive bound.  Returns the digits; *removed counts the
 * digits dropped. */
static uint64_t ub_ryu_trim_exact(uint64_t vr, uint64_t vp, uint64_t vm,
                                  bool vm_tz, bool vr_tz, uint8_t last,
                                  bool accept_bounds, int32_t *removed)
{
    while (vp / 10 > vm / 10) {
        vm_tz &= vm % 10 == 0;
        vr_tz &= last == 0;
        last = (uint8_t)(vr % 10);
        vr /= 10;
        vp /= 10;
        vm /= 10;
        (*removed)++;
    }
    if (vm_tz) {
        while (vm % 10 == 0) {
            vr_tz &= last == 0;
            last = (uint8_t)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            (*removed)++;
        }
    }
    if (vr_tz && last == 5 && vr % 2 == 0)
        last = 4; /* exactly halfway: round to even */
    return vr + ((vr == vm && (!accept_bounds || !vm_tz)) || last >= 5);
}

/* The shortest, closest decimal for the finite nonzero value with raw
 * significand bits `ieee_m` and raw exponent `ieee_e` of a format with
 * `mbits` significand bits and exponent bias `bias`. */
static void ub_ryu(uint64_t ieee_m, uint32_t ieee_e, int mbits, int bias,
                   uint64_t *out_digits, int *out_exp)
{
    int32_t e2;
    uint64_t m2;
    if (ieee_e == 0) {
        e2 = 1 - bias - mbits - 2;
        m2 = ieee_m;
    } else {
        e2 = (int32_t)ieee_e - bias - mbits - 2;
        m2 = (UINT64_C(1) << mbits) | ieee_m;
    }

    /* Integers with no fraction bits: the digits of the integer itself
     * (trailing zeros dropped) are the shortest. */
    if (e2 + 2 <= 0 && e2 + 2 >= -mbits) {
        uint32_t sh = (uint32_t)(-(e2 + 2));
        if ((m2 & ((UINT64_C(1) << sh) - 1)) == 0) {
            uint64_t v = m2 >> sh;
            int e = 0;
            while (v % 10 == 0) {
                v /= 10;
                e++;
            }
            *out_digits = v;
            *out_exp = e;
            return;
        }
    }

    const bool accept_bounds = (m2 & 1) == 0;
    const uint64_t mv = 4 * m2;
    const uint32_t mm_shift = ieee_m != 0 || ieee_e <= 1;

    uint64_t vr, vp, vm;
    int32_t e10;
    bool vm_tz = false, vr_tz = false;
    if (e2 >= 0) {
        const uint32_t q = ub_log10pow2((uint32_t)e2) - (e2 > 3);
        e10 = (int32_t)q;
        const uint32_t k = UB_POW5_INV_BITS + ub_pow5bits(q) - 1;
        const uint32_t i = (uint32_t)(-e2 + (int32_t)q + (int32_t)k);
        vr = ub_mulshift(mv, ub_pow5_inv[q], i);
        vp = ub_mulshift(mv + 2, ub_pow5_inv[q], i);
        vm = ub_mulshift(mv - 1 - mm_shift, ub_pow5_inv[q], i);
        if (q <= 21) {
            /* At most one of vp, vr, vm can be a multiple of 5. */
            if (mv % 5 == 0)
                vr_tz = ub_multiple_of_pow5(mv, q);
            else if (accept_bounds)
                vm_tz = ub_multiple_of_pow5(mv - 1 - mm_shift, q);
            else
                vp -= ub_multiple_of_pow5(mv + 2, q);
        }
    } else {
        const uint32_t q = ub_log10pow5((uint32_t)-e2) - (-e2 > 1);
        e10 = (int32_t)q + e2;
        const int32_t i = -e2 - (int32_t)q;
        const int32_t k = (int32_t)ub_pow5bits((uint32_t)i) - UB_POW5_BITS;
        const uint32_t j = (uint32_t)((int32_t)q - k);
        vr = ub_mulshift(mv, ub_pow5[i], j);
        vp = ub_mulshift(mv + 2, ub_pow5[i], j);
        vm = ub_mulshift(mv - 1 - mm_shift, ub_pow5[i], j);
        if (q <= 1) {
            /* mv = 4 m2 has at least two trailing zero bits. */
            vr_tz = true;
            if (accept_bounds)
                vm_tz = mm_shift == 1;
            else
                --vp;
        } else if (q < 63) {
            vr_tz = ub_multiple_of_pow2(mv, q);
        }
    }

    /* Drop digits while the interval still holds a shorter number. */
    int32_t removed = 0;
    uint8_t last = 0;
    uint64_t output;
    if (vm_tz || vr_tz) {
        output = ub_ryu_trim_exact(vr, vp, vm, vm_tz, vr_tz, last,
                                   accept_bounds, &removed);
    } else {
        bool round_up = false;
        if (vp / 100 > vm / 100) {
            round_up = vr % 100 >= 50;
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        while (vp / 10 > vm / 10) {
            round_up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        output = vr + (vr == vm || round_up);
    }
    *out_digits = output;
    *out_exp = e10 + removed;
}

/* binary32 needs only 64-bit products: the top 64 bits of the tables
 * (61 significant bits) are exact enough for 24-bit significands, so the
 * float path avoids 128-bit multiplies.  Same algorithm as ub_ryu, but the
 * digit just below the result is computed directly instead of widening
 * the interval by one digit (the result then fits 32 bits). */
#define UB_F_INV_BITS (UB_POW5_INV_BITS - 64)
#define UB_F_BITS (UB_POW5_BITS - 64)

static inline uint32_t ub_mulshift32(uint32_t m, uint64_t factor, int32_t shift)
{
    uint64_t bits0 = (uint64_t)m * (uint32_t)factor;
    uint64_t bits1 = (uint64_t)m * (factor >> 32);
    uint64_t sum = (bits0 >> 32) + bits1;
    return (uint32_t)(sum >> (shift - 32));
}

static inline uint32_t ub_mul_pow5inv_div_pow2(uint32_t m, uint32_t q,
                                               int32_t j)
{
    return ub_mulshift32(m, ub_pow5_inv[q][1] + 1, j);
}

static inline uint32_t ub_mul_pow5_div_pow2(uint32_t m, uint32_t i, int32_t j)
{
    return ub_mulshift32(m, ub_pow5[i][1], j);
}

static inline bool ub_multiple_of_pow5_32(uint32_t v, uint32_t p)
{
    uint32_t n = 0;
    while (v != 0 && v % 5 == 0) {
        v /= 5;
        n++;
    }
    return n >= p;
}

static void ub_ryu32(uint32_t ieee_m, uint32_t ieee_e, uint32_t *out_digits,
                     int *out_exp)
{
    int32_t e2;
    uint32_t m2;
    if (ieee_e == 0) {
        e2 = 1 - 127 - 23 - 2;
        m2 = ieee_m;
    } else {
        e2 = (int32_t)ieee_e - 127 - 23 - 2;
        m2 = (UINT32_C(1) << 23) | ieee_m;
    }
    if (e2 + 2 <= 0 && e2 + 2 >= -23) { /* integers: their own digits */
        uint32_t sh = (uint32_t)(-(e2 + 2));
        if ((m2 & ((UINT32_C(1) << sh) - 1)) == 0) {
            uint32_t v = m2 >> sh;
            int e = 0;
            while (v % 10 == 0) {
                v /= 10;
                e++;
            }
            *out_digits = v;
            *out_exp = e;
            return;
        }
    }
    const bool accept_bounds = (m2 & 1) == 0;
    const uint32_t mv = 4 * m2, mp = 4 * m2 + 2;
    const uint32_t mm_shift = ieee_m != 0 || ieee_e <= 1;
    const uint32_t mm = 4 * m2 - 1 - mm_shift;
    uint32_t vr, vp, vm;
    int32_t e10;
    bool vm_tz = false, vr_tz = false;
    uint8_t last = 0;
    if (e2 >= 0) {
        const uint32_t q = ub_log10pow2((uint32_t)e2);
        e10 = (int32_t)q;
        const int32_t k = UB_F_INV_BITS + (int32_t)ub_pow5bits(q) - 1;
        const int32_t i = -e2 + (int32_t)q + k;
        vr = ub_mul_pow5inv_div_pow2(mv, q, i);
        vp = ub_mul_pow5inv_div_pow2(mp, q, i);
        vm = ub_mul_pow5inv_div_pow2(mm, q, i);
        if (q != 0 && (vp - 1) / 10 <= vm / 10) {
            const int32_t l = UB_F_INV_BITS + (int32_t)ub_pow5bits(q - 1) - 1;
            last = (uint8_t)(ub_mul_pow5inv_div_pow2(
                                 mv, q - 1, -e2 + (int32_t)q - 1 + l) %
                             10);
        }
        if (q <= 9) {
            if (mv % 5 == 0)
                vr_tz = ub_multiple_of_pow5_32(mv, q);
            else if (accept_bounds)
                vm_tz = ub_multiple_of_pow5_32(mm, q);
            else
                vp -= ub_multiple_of_pow5_32(mp, q);
        }
    } else {
        const uint32_t q = ub_log10pow5((uint32_t)-e2);
        e10 = (int32_t)q + e2;
        const int32_t i = -e2 - (int32_t)q;
        const int32_t k = (int32_t)ub_pow5bits((uint32_t)i) - UB_F_BITS;
        int32_t j = (int32_t)q - k;
        vr = ub_mul_pow5_div_pow2(mv, (uint32_t)i, j);
        vp = ub_mul_pow5_div_pow2(mp, (uint32_t)i, j);
        vm = ub_mul_pow5_div_pow2(mm, (uint32_t)i, j);
        if (q != 0 && (vp - 1) / 10 <= vm / 10) {
            j = (int32_t)q - 1 -
                ((int32_t)ub_pow5bits((uint32_t)i + 1) - UB_F_BITS);
            last = (uint8_t)(ub_mul_pow5_div_pow2(mv, (uint32_t)i + 1, j) %
                             10);
        }
        if (q <= 1) {
            vr_tz = true;
            if (accept_bounds)
                vm_tz = mm_shift == 1;
            else
                --vp;
        } else if (q < 31) {
            vr_tz = (mv & ((UINT32_C(1) << (q - 1)) - 1)) == 0;
        }
    }
    int32_t removed = 0;
    uint32_t output;
    if (vm_tz || vr_tz) {
        output = (uint32_t)ub_ryu_trim_exact(vr, vp, vm, vm_tz, vr_tz, last,
                                   accept_bounds, &removed);
    } else {
        /* Common case: two digits at a time while the interval allows;
         * only the highest removed digit matters for rounding. */
        while (vp / 100 > vm / 100) {
            last = (uint8_t)(vr % 100 / 10);
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        if (vp / 10 > vm / 10) {
            last = (uint8_t)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        output = vr + (vr == vm || last >= 5);
    }
    *out_digits = output;
    *out_exp = e10 + removed;
}

/* --- short floats ----------------------------------------------------------
 *
 * Scene data is mostly floats written with a few decimals (69.7056), and
 * six significant digits tell floats apart: no two decimals of six digits
 * or fewer round to the same float (FLT_DIG).  So when v rounded to six
 * significant digits reads back as v, that decimal without its trailing
 * zeros is the shortest that does, and the only one that short: the
 * digits Ryu finds, for a multiply and a comparison instead of its search.
 * Both this and ub_put_six gave Ryu's text for every float of the range
 * they serve (9.8 million take this path) when they were written. */

/* floor(log10(2^e)) for e in [-17, 19]: the binary exponents of floats in
 * [1e-5, 1e6). */
static const int8_t ub_log10_pow2_small[37] = {
    -6, -5, -5, -5, -4, -4, -4, -4, -3, -3, -3, -2, -2, -2, -1, -1, -1, 0, 0,
    0,  0,  1,  1,  1,  2,  2,  2,  3,  3,  3,  3,  4,  4,  4,  5,  5,  5};

/* 10^k for k <= 10: exact in double, with at most 24 significant bits. */
static const double ub_pow10_exact[11] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5,
                                          1e6, 1e7, 1e8, 1e9, 1e10};

/* The positive float with these bits rounded to six significant digits,
 * m * 10^-k with m in [10^5, 10^6), when that decimal reads back as the
 * float; false when it does not, or may not (Ryu decides). */
static bool ub_float_six(uint32_t bits, uint32_t *out_m, int *out_k)
{
    float v;
    memcpy(&v, &bits, sizeof v);
    if (!(v >= 1e-5f && v < 1e6f))
        return false;
    uint32_t e = bits >> 23; /* biased; v is normal here */
    /* decimals for six digits, or seven when the estimate of v's decimal
     * exponent is one short */
    int k = 5 - ub_log10_pow2_small[(int)e - 127 + 17];
    if (k > 10)
        return false;
    /* Every step is exact: v has 24 bits and 10^k at most 24, and the
     * difference of two close doubles is exact. */
    double scaled = (double)v * ub_pow10_exact[k];
    uint32_t m = (uint32_t)(scaled + 0.5);
    if (m >= 1000000) {
        if (--k < 0)
            return false;
        scaled = (double)v * ub_pow10_exact[k];
        m = (uint32_t)(scaled + 0.5);
    }
    /* m / 10^k reads back as v when it lies within half a unit in the last
     * place of v, scaled by 10^k: 2^(e - 151) * 10^k.  Below a power of
     * two the floats are twice as dense.  (No decimal of six digits is
     * ever exactly halfway between two floats.) */
    uint64_t half_bits = (uint64_t)(e - 151 + 1023) << 52;
    double half;
    memcpy(&half, &half_bits, sizeof half);
    half *= ub_pow10_exact[k];
    double below = scaled - (double)m; /* > 0: m / 10^k is below v */
    if ((bits & 0x7fffff) == 0 && below > 0)
        half /= 2;
    if (fabs(below) >= half)
        return false;
    *out_m = m;
    *out_k = k;
    return true;
}

/* The shortest digits of the positive float with these bits when they
 * number six or fewer; false when they may not. */
static bool ub_short_float(uint32_t bits, uint32_t *out_digits, int *out_exp)
{
    uint32_t m;
    int k;
    if (!ub_float_six(bits, &m, &k))
        return false;
    while (m % 10 == 0) {
        m /= 10;
        k--;
    }
    *out_digits = m;
    *out_exp = -k;
    return true;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Two digits as the bytes of a little-endian word. */
static inline uint64_t ub_pair_word(uint32_t r)
{
    return (uint64_t)(unsigned char)ub_digit_pairs[2 * r] |
           (uint64_t)(unsigned char)ub_digit_pairs[2 * r + 1] << 8;
}

/* The text ub_layout gives m * 10^-k (m in [10^5, 10^6), k <= 10: always
 * plain decimal), built in a register and stored whole.  Random floats
 * take its cases at random, so it chooses by selection, not by branches;
 * and it writes bytes it never reads back (narrow stores followed by a
 * wide load of them stall).  out has room for UB_FMT_MAX bytes. */
static size_t ub_put_six(char *out, uint32_t m, int k)
{
    /* the six digits, the most significant in the lowest byte */
    uint64_t w = ub_pair_word(m / 10000) | ub_pair_word(m / 100 % 100) << 16 |
                 ub_pair_word(m % 100) << 32;
    /* digits up to the last that is not 0: byte 0 never is */
    uint64_t z = w ^ UINT64_C(0x303030303030);
    uint64_t nonzero = ((z + UINT64_C(0x7f7f7f7f7f7f)) | z) &
                       UINT64_C(0x808080808080);
    int sig = ((63 - __builtin_clzll(nonzero)) >> 3) + 1;
    int point = 6 - k; /* digits before the point: -4 to 6 */
    /* below 1: "0." and zeros before the digits; else the digits, with a
     * point after `point` of them when a digit that is not 0 follows */
    int lead = point <= 0 ? 2 - point : 0;
    int dot = point > 0 && sig > point ? point : 7; /* 7: no point */
    size_t len = point <= 0      ? (size_t)(lead + sig)
                 : sig > point ? (size_t)sig + 1
                               : (size_t)point;
    uint64_t zeros = UINT64_C(0x3030303030302e30); /* "0.000000" */
    memcpy(out, &zeros, 8);
    memcpy(out + lead, &w, 8);
    out[lead + dot] = '.';
    uint64_t tail = w >> (8 * dot);
    memcpy(out + lead + dot + 1, &tail, 8);
    return len;
}
#endif

/* The shortest digits of a positive finite float, by whichever way is
 * quicker. */
static void ub_float_digits(uint32_t bits, uint32_t *digits, int *exp10)
{
    if (!ub_short_float(bits, digits, exp10))
        ub_ryu32(bits & ((UINT32_C(1) << 23) - 1), (bits >> 23) & 0xff,
                 digits, exp10);
}

void ub_shortest_double(double v, uint64_t *digits, int *exp10)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    ub_ryu(bits & ((UINT64_C(1) << 52) - 1), (uint32_t)((bits >> 52) & 0x7ff),
           52, 1023, digits, exp10);
}

void ub_shortest_float(float v, uint32_t *digits, int *exp10)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    ub_float_digits(bits & ~(UINT32_C(1) << 31), digits, exp10);
}

/* Lay out digits * 10^exp10 as double-conversion does with OpenUSD's
 * settings: plain decimal while the decimal exponent is in [-6, 15),
 * otherwise d.ddde[-]x with no padding of the exponent. */
static size_t ub_layout(char *out, bool neg, uint64_t digits, int exp10)
{
    int n = ub_ndigits(digits);
    char *p = out;
    if (neg)
        *p++ = '-';
    int point = exp10 + n; /* digits before the decimal point */
    int exponent = point - 1;
    if (exponent >= -6 && exponent < 15) {
        if (point <= 0) {
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -point; i++)
                *p++ = '0';
            ub_put_digits(p, digits, n);
            p += n;
        } else if (point >= n) {
            ub_put_digits(p, digits, n);
            p += n;
            for (int i = n; i < point; i++)
                *p++ = '0';
        } else {
            ub_put_digits_dot(p, digits, n, point);
            p += n + 1;
        }
    } else {
        if (n > 1) {
            ub_put_digits_dot(p, digits, n, 1);
            p += n + 1;
        } else {
            *p++ = (char)('0' + digits);
        }
        *p++ = 'e';
        if (exponent < 0) {
            *p++ = '-';
            exponent = -exponent;
        }
        p += ub_u64_digits(p, (uint64_t)exponent);
    }
    return (size_t)(p - out);
}

static size_t ub_special(char *out, bool neg, bool is_nan)
{
    if (is_nan) {
        memcpy(out, "nan", 3);
        return 3;
    }
    if (neg) {
        memcpy(out, "-inf", 4);
        return 4;
    }
    memcpy(out, "inf", 3);
    return 3;
}

size_t ub_fmt_double(char *out, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    bool neg = bits >> 63;
    uint32_t e = (uint32_t)((bits >> 52) & 0x7ff);
    uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
    if (e == 0x7ff)
        return ub_special(out, neg, m != 0);
    if (e == 0 && m == 0) {
        char *p = out;
        if (neg)
            *p++ = '-';
        *p++ = '0';
        return (size_t)(p - out);
    }
    uint64_t digits;
    int exp10;
    ub_ryu(m, e, 52, 1023, &digits, &exp10);
    return ub_layout(out, neg, digits, exp10);
}

size_t ub_fmt_float(char *out, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bool neg = bits >> 31;
    uint32_t e = (bits >> 23) & 0xff;
    uint32_t m = bits & ((UINT32_C(1) << 23) - 1);
    if (e == 0xff)
        return ub_special(out, neg, m != 0);
    if (e == 0 && m == 0) {
        char *p = out;
        if (neg)
            *p++ = '-';
        *p++ = '0';
        return (size_t)(p - out);
    }
    uint32_t digits;
    int exp10;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t six;
    int k;
    if (ub_float_six(bits & ~(UINT32_C(1) << 31), &six, &k)) {
        out[0] = '-'; /* kept only when neg */
        return neg + ub_put_six(out + neg, six, k);
    }
    ub_ryu32(m, e, &digits, &exp10); /* not short: no second look */
#else
    ub_float_digits(bits & ~(UINT32_C(1) << 31), &digits, &exp10);
#endif
    return ub_layout(out, neg, digits, exp10);
}

/* --- %g with six significant digits -------------------------------------- */

/* Round the exact decimal digits d[0..n) (value 0.d * 10^point) to six
 * significant digits, half to even as printf does, and lay them out as
 * %g does: fixed for decimal exponents -4..5, else d.ddddde[+-]XX;
 * trailing zeros dropped. */
static size_t ub_layout_g6(char *out, bool neg, char *d, int n, int point)
{
    if (n > 6) {
        bool up;
        if (d[6] > '5') {
            up = true;
        } else if (d[6] < '5') {
            up = false;
        } else {
            bool more = false;
            for (int i = 7; i < n; i++)
                if (d[i] != '0')
                    more = true;
            up = more || ((d[5] - '0') & 1);
        }
        n = 6;
        if (up) {
            int i = 5;
            while (i >= 0 && d[i] == '9')
                d[i--] = '0';
            if (i < 0) {
                d[0] = '1';
                point++;
            } else {
                d[i]++;
            }
        }
    }
    while (n > 1 && d[n - 1] == '0')
        n--;
    char *p = out;
    if (neg)
        *p++ = '-';
    int x = point - 1;
    if (x >= -4 && x < 6) {
        if (point <= 0) {
            *p++ = '0';
            *p++ = '.';
            memset(p, '0', (size_t)-point);
            p += -point;
            memcpy(p, d, (size_t)n);
            p += n;
        } else if (point >= n) {
            memcpy(p, d, (size_t)n);
            p += n;
            memset(p, '0', (size_t)(point - n));
            p += point - n;
        } else {
            memcpy(p, d, (size_t)point);
            p += point;
            *p++ = '.';
            memcpy(p, d + point, (size_t)(n - point));
            p += n - point;
        }
    } else {
        *p++ = d[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, d + 1, (size_t)(n - 1));
            p += n - 1;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        if (x < 0)
            x = -x;
        if (x < 10)
            *p++ = '0';
        p += ub_u64_digits(p, (uint64_t)x);
    }
    return (size_t)(p - out);
}

size_t ub_fmt_half(char *out, uint16_t h)
{
    bool neg = h >> 15;
    unsigned e = (h >> 10) & 0x1f;
    unsigned m = h & 0x3ff;
    if (e == 31) /* iostream would print "-nan", which nothing reads back */
        return ub_special(out, neg, m != 0);
    if (e == 0 && m == 0) {
        char *p = out;
        if (neg)
            *p++ = '-';
        *p++ = '0';
        return (size_t)(p - out);
    }
    /* value = sig * 2^p2 exactly */
    uint32_t sig = e ? (m | 0x400) : m;
    int p2 = (e ? (int)e : 1) - 15 - 10;
    char d[32];
    int n, point;
    if (p2 >= 0) {
        n = (int)ub_u64_digits(d, (uint64_t)sig << p2);
        point = n;
    } else {
        /* sig * 5^-p2 / 10^-p2: sig * 5^24 can pass 2^64, so multiply
         * in base 10^9 limbs. */
        uint32_t limb[3] = {sig, 0, 0};
        for (int i = 0; i < -p2; i++) {
            uint64_t carry = 0;
            for (int k = 0; k < 3; k++) {
                uint64_t t = (uint64_t)limb[k] * 5 + carry;
                limb[k] = (uint32_t)(t % 1000000000u);
                carry = t / 1000000000u;
            }
        }
        char tmp[32];
        int len = 0, top = limb[2] ? 2 : limb[1] ? 1 : 0;
        len = (int)ub_u64_digits(tmp, limb[top]);
        for (int k = top - 1; k >= 0; k--) { /* lower limbs: 9 digits */
            uint32_t x = limb[k];
            for (int j = 8; j >= 0; j--) {
                tmp[len + j] = (char)('0' + x % 10);
                x /= 10;
            }
            len += 9;
        }
        memcpy(d, tmp, (size_t)len);
        n = len;
        point = len + p2;
    }
    return ub_layout_g6(out, neg, d, n, point);
}

size_t ub_fmt_g6(char *out, double v)
{
    /* Timecodes are few (metadata, a handful of samples), so the C
     * library's exact %g is fast enough here. */
    if (isnan(v) || isinf(v)) /* "nan" whatever its sign, as ub_fmt_half */
        return ub_special(out, v < 0, isnan(v));
    char tmp[UB_FMT_MAX + 8];
    int n = snprintf(tmp, sizeof tmp, "%g", v);
    if (n < 0)
        n = 0;
    if (n > UB_FMT_MAX)
        n = UB_FMT_MAX;
    memcpy(out, tmp, (size_t)n);
    return (size_t)n;
}

/* --- append helpers -------------------------------------------------------- */

void ub_put_double(ub_buf *b, double v)
{
    char *w = ub_buf_reserve(b, UB_FMT_MAX);
    if (w)
        b->len += ub_fmt_double(w, v);
}

void ub_put_i64(ub_buf *b, int64_t v)
{
    char *w = ub_buf_reserve(b, UB_FMT_MAX);
    if (w)
        b->len += ub_fmt_i64(w, v);
}

void ub_put_u64(ub_buf *b, uint64_t v)
{
    char *w = ub_buf_reserve(b, UB_FMT_MAX);
    if (w)
        b->len += ub_fmt_u64(w, v);
}

static int ub_hex_digit(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

size_t ub_unescape(char *out, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 >= n) {
            out[o++] = s[i];
            continue;
        }
        char e = s[++i];
        switch (e) {
        case 'a': out[o++] = '\a'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'v': out[o++] = '\v'; break;
        case 'x': {
            unsigned v = 0;
            int nd = 0;
            while (nd < 2 && i + 1 < n &&
                   ub_hex_digit((unsigned char)s[i + 1]) >= 0) {
                v = v * 16 + (unsigned)ub_hex_digit((unsigned char)s[++i]);
                nd++;
            }
            out[o++] = (char)v;
            break;
        }
        case '0': case '1': case '2': case '3':
        case '4': case '5': case '6': case '7': {
            unsigned v = (unsigned)(e - '0');
            int nd = 1;
            while (nd < 3 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7') {
                v = v * 8 + (unsigned)(s[++i] - '0');
                nd++;
            }
            out[o++] = (char)v;
            break;
        }
        default:
            out[o++] = e;
        }
    }
    return o;
}

void ub_put_quoted(ub_buf *b, const char *s, size_t n)
{
    /* OpenUSD stops at an embedded NUL. */
    const char *nul = memchr(s, '\0', n);
    if (nul)
        n = (size_t)(nul - s);
    /* One pass decides the quotes and whether anything needs escaping. */
    bool has_dq = false, has_sq = false, triple = false, plain = true;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = u[i];
        if (c < 32 || c > 126 || c == '\\' || c == '"' || c == '\'') {
            plain = false;
            has_dq |= c == '"';
            has_sq |= c == '\'';
            triple |= c == '\n';
        }
    }
    if (plain) {
        char *w = ub_buf_reserve(b, n + 2);
        if (!w)
            return;
        w[0] = '"';
        memcpy(w + 1, s, n);
        w[n + 1] = '"';
        b->len += n + 2;
        return;
    }
    char q = (has_dq && !has_sq) ? '\'' : '"';
    /* worst case: every byte as \xNN, plus quotes */
    char *w = ub_buf_reserve(b, 4 * n + 6);
    if (!w)
        return;
    char *p = w;
    *p++ = q;
    if (triple) {
        *p++ = q;
        *p++ = q;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = u[i];
        if (c >= 0x80) {
            uint32_t cp;
            size_t len = ub_utf8_seq(u + i, n - i, &cp);
            if (len) { /* as OpenUSD: a well-formed sequence as it is */
                memcpy(p, u + i, (size_t)len);
                p += len;
                i += len - 1;
                continue;
            }
        }
        switch (c) {
        case '\n':
            if (triple) {
                *p++ = '\n';
            } else {
                *p++ = '\\';
                *p++ = 'n';
            }
            break;
        case '\r':
            *p++ = '\\';
            *p++ = 'r';
            break;
        case '\t':
            *p++ = '\\';
            *p++ = 't';
            break;
        case '\\':
            *p++ = '\\';
            *p++ = '\\';
            break;
        default:
            if (c == (unsigned char)q) {
                *p++ = '\\';
                *p++ = q;
            } else if (c < 32 || c > 126) {
                static const char hex[] = "0123456789abcdef";
                *p++ = '\\';
                *p++ = 'x';
                *p++ = hex[c >> 4];
                *p++ = hex[c & 15];
            } else {
                *p++ = (char)c;
            }
        }
    }
    *p++ = q;
    if (triple) {
        *p++ = q;
        *p++ = q;
    }
    b->len += (size_t)(p - w);
}

void ub_put_asset(ub_buf *b, const char *s, size_t n)
{
    const char *nul = memchr(s, '\0', n);
    if (nul)
        n = (size_t)(nul - s);
    bool triple = memchr(s, '@', n) != NULL;
    char *w = ub_buf_reserve(b, 2 * n + 6);
    if (!w)
        return;
    char *p = w;
    int nd = triple ? 3 : 1;
    memset(p, '@', (size_t)nd);
    p += nd;
    for (size_t i = 0; i < n; i++) {
        if (triple && i + 2 < n && s[i] == '@' && s[i + 1] == '@' &&
            s[i + 2] == '@') {
            memcpy(p, "\\@@@", 4);
            p += 4;
            i += 2;
            continue;
        }
        *p++ = s[i];
    }
    memset(p, '@', (size_t)nd);
    p += nd;
    b->len += (size_t)(p - w);
}

void ub_put_path(ub_buf *b, const char *s, size_t n)
{
    char *w = ub_buf_reserve(b, n + 2);
    if (!w)
        return;
    w[0] = '<';
    memcpy(w + 1, s, n);
    w[n + 1] = '>';
    b->len += n + 2;
}

void ub_put_offset(ub_buf *b, ub_offset o)
{
    if (o.offset == 0.0 && o.scale == 1.0)
        return;
    ub_buf_append(b, " (", 2);
    if (o.offset != 0.0) {
        ub_buf_append(b, "offset = ", 9);
        ub_put_double(b, o.offset);
    }
    if (o.scale != 1.0) {
        if (o.offset != 0.0)
            ub_buf_append(b, "; ", 2);
        ub_buf_append(b, "scale = ", 8);
        ub_put_double(b, o.scale);
    }
    ub_buf_putc(b, ')');
}

void ub_put_reference_target(ub_buf *b, const ub_reference *r)
{
    if (r->asset && r->asset[0]) {
        ub_put_asset(b, r->asset, strlen(r->asset));
        if (r->prim_path && r->prim_path[0])
            ub_put_path(b, r->prim_path, strlen(r->prim_path));
    } else {
        /* An internal reference always names a path, even the empty one
         * that means the default prim. */
        const char *p = r->prim_path ? r->prim_path : "";
        ub_put_path(b, p, strlen(p));
    }
}

/* --- values ---------------------------------------------------------------- */

/* Longest text of one numeric component. */
#define UB_COMP_MAX UB_FMT_MAX

/* Write numeric component c of elem into p (room: UB_COMP_MAX). */
static inline size_t ub_fmt_numeric(char *p, const ub_type *t,
                                    const void *elem, unsigned c)
{
    switch (t->scalar) {
    case UB_SC_BOOL:
        *p = ((const uint8_t *)elem)[c] ? '1' : '0';
        return 1;
    case UB_SC_UCHAR:
        return ub_u64_digits(p, ((const uint8_t *)elem)[c]);
    case UB_SC_INT:
        return ub_fmt_i64(p, ((const int32_t *)elem)[c]);
    case UB_SC_UINT:
        return ub_u64_digits(p, ((const uint32_t *)elem)[c]);
    case UB_SC_INT64:
        return ub_fmt_i64(p, ((const int64_t *)elem)[c]);
    case UB_SC_UINT64:
        return ub_u64_digits(p, ((const uint64_t *)elem)[c]);
    case UB_SC_HALF:
        return ub_fmt_half(p, ((const uint16_t *)elem)[c]);
    case UB_SC_FLOAT:
        return ub_fmt_float(p, ((const float *)elem)[c]);
    case UB_SC_DOUBLE:
        if (t->base == UB_TY_TIMECODE)
            return ub_fmt_g6(p, ((const double *)elem)[c]);
        return ub_fmt_double(p, ((const double *)elem)[c]);
    default:
        return 0;
    }
}

void ub_put_component(ub_buf *b, const ub_type *t, const void *elem,
                      unsigned c)
{
    if (t->scalar == UB_SC_STRING) {
        const char *s = ((const char *const *)elem)[c];
        size_t n = s ? ub_str_len(s) : 0;
        if (!s)
            s = "";
        switch (t->base) {
        case UB_TY_ASSET:
            ub_put_asset(b, s, n);
            break;
        case UB_TY_PATH:
            ub_put_path(b, s, n);
            break;
        default:
            ub_put_quoted(b, s, n);
        }
        return;
    }
    char *w = ub_buf_reserve(b, UB_COMP_MAX);
    if (w)
        b->len += ub_fmt_numeric(w, t, elem, c);
}

/* Numeric element into p; room must be enough for its components. */
static size_t ub_fmt_numeric_elem(char *p, const ub_type *t, const void *elem)
{
    unsigned rows = t->rows, cols = t->cols;
    char *s = p;
    if (rows == 1 && cols == 1)
        return ub_fmt_numeric(p, t, elem, 0);
    if (rows > 1) {
        *p++ = '(';
        *p++ = ' ';
    }
    for (unsigned r = 0; r < rows; r++) {
        if (r) {
            *p++ = ',';
            *p++ = ' ';
        }
        *p++ = '(';
        for (unsigned c = 0; c < cols; c++) {
            if (c) {
                *p++ = ',';
                *p++ = ' ';
            }
            p += ub_fmt_numeric(p, t, elem, r * cols + c);
        }
        *p++ = ')';
    }
    if (rows > 1) {
        *p++ = ' ';
        *p++ = ')';
    }
    return (size_t)(p - s);
}

static size_t ub_numeric_elem_max(const ub_type *t)
{
    return (size_t)t->rows * t->cols * (UB_COMP_MAX + 2) + 2 * t->rows + 8;
}

static bool ub_is_numeric(const ub_type *t)
{
    switch (t->scalar) {
    case UB_SC_BOOL:
    case UB_SC_UCHAR:
    case UB_SC_INT:
    case UB_SC_UINT:
    case UB_SC_INT64:
    case UB_SC_UINT64:
    case UB_SC_HALF:
    case UB_SC_FLOAT:
    case UB_SC_DOUBLE:
        return true;
    default:
        return false;
    }
}

void ub_put_element(ub_buf *b, const ub_type *t, const void *elem)
{
    if (ub_is_numeric(t)) {
        char *w = ub_buf_reserve(b, ub_numeric_elem_max(t));
        if (w)
            b->len += ub_fmt_numeric_elem(w, t, elem);
        return;
    }
    if (t->scalar == UB_SC_STRING) {
        ub_put_component(b, t, elem, 0);
        return;
    }
    if (t->scalar == UB_SC_REF) {
        const ub_reference *r = elem;
        ub_put_reference_target(b, r);
        ub_put_offset(b, r->offset);
        return;
    }
    /* Dictionaries and opaque values have no inline text. */
}

/* Mesh data repeats values (a uv or a point shared by several faces), so
 * float arrays keep a small direct-mapped cache of recent texts: a hit
 * costs a copy instead of a shortest-digits search.  It lives on the
 * caller's stack for one value; the output is the same either way. */
#define UB_FC_SLOTS 256
#define UB_FC_TEXT 19 /* longest float text is 17 bytes */

typedef struct ub_float_cache {
    uint64_t valid_words[UB_FC_SLOTS / 64];
    struct {
        uint32_t bits;
        uint8_t len;
        char text[UB_FC_TEXT];
    } slot[UB_FC_SLOTS];
} ub_float_cache;

static inline size_t ub_float_cached(ub_float_cache *fc, char *p, float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    unsigned h = (bits * 2654435761u) >> 24;
    uint64_t bit = UINT64_C(1) << (h & 63);
    if ((fc->valid_words[h >> 6] & bit) && fc->slot[h].bits == bits) {
        memcpy(p, fc->slot[h].text, UB_FC_TEXT);
        return fc->slot[h].len;
    }
    size_t n = ub_fmt_float(p, x);
    if (n <= UB_FC_TEXT) {
        fc->valid_words[h >> 6] |= bit;
        fc->slot[h].bits = bits;
        fc->slot[h].len = (uint8_t)n;
        memcpy(fc->slot[h].text, p, UB_FC_TEXT);
    }
    return n;
}

void ub_put_value(ub_buf *b, const ub_value *v)
{
    if (v->kind == UB_V_BLOCK) {
        ub_buf_append(b, "None", 4);
        return;
    }
    if (v->kind != UB_V_DATA || !ub_value_type(v))
        return;
    const ub_type *t = ub_value_type(v);
    if (!v->is_array) {
        if (v->count)
            ub_put_element(b, t, ub_value_data(v));
        return;
    }
    ub_buf_putc(b, '[');
    size_t esz = ub_type_elem_size(t);
    const char *e = ub_value_data(v);
    if (ub_is_numeric(t)) {
        /* Reserve for a batch of elements at a time: one capacity check
         * per batch instead of per number. */
        size_t emax = ub_numeric_elem_max(t) + 2;
        ub_float_cache fc;
        fc.valid_words[0] = fc.valid_words[1] = fc.valid_words[2] =
            fc.valid_words[3] = 0;
        uint32_t i = 0;
        while (i < v->count) {
            uint32_t batch = v->count - i;
            if (batch > 256)
                batch = 256;
            char *w = ub_buf_reserve(b, emax * batch);
            if (!w)
                return;
            char *p = w;
            if (t->scalar == UB_SC_FLOAT && t->rows == 1) {
                /* float tuples dominate big layers (points, normals,
                 * uvs): a loop with no per-component type dispatch */
                unsigned nc = t->cols;
                const float *f = (const float *)(e + (size_t)i * esz);
                for (uint32_t k = 0; k < batch; k++, i++) {
                    if (i) {
                        *p++ = ',';
                        *p++ = ' ';
                    }
                    if (nc > 1)
                        *p++ = '(';
                    for (unsigned c = 0; c < nc; c++) {
                        if (c) {
                            *p++ = ',';
                            *p++ = ' ';
                        }
                        p += ub_float_cached(&fc, p, *f++);
                    }
                    if (nc > 1)
                        *p++ = ')';
                }
            } else {
                for (uint32_t k = 0; k < batch; k++, i++) {
                    if (i) {
                        *p++ = ',';
                        *p++ = ' ';
                    }
                    p += ub_fmt_numeric_elem(p, t, e + (size_t)i * esz);
                }
            }
            b->len += (size_t)(p - w);
        }
    } else {
        for (uint32_t i = 0; i < v->count; i++) {
            if (i)
                ub_buf_append(b, ", ", 2);
            ub_put_element(b, t, e + (size_t)i * esz);
        }
    }
    ub_buf_putc(b, ']');
}

/* An atom of a value of unknown type: identifiers as written, numbers
 * with a fraction or exponent as doubles (shortest round trip). */
static void ub_put_atom(ub_buf *b, const char *t)
{
    const char *s = t + (*t == '-');
    bool digits = false, frac = false;
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9')
            digits = true;
        else if (*s == '.' || *s == 'e' || *s == 'E' ||
                 ((*s == '+' || *s == '-') && (s[-1] == 'e' || s[-1] == 'E')))
            frac = true;
        else
            break;
    }
    if (*s == '\0' && digits && frac) {
        char *end;
        double d = strtod(t, &end);
        if (*end == '\0') {
            ub_put_double(b, d);
            return;
        }
    }
    ub_buf_puts(b, t);
}

void ub_put_untyped(ub_buf *b, const ub_untyped *u)
{
    switch (u->kind) {
    case UB_U_ATOM:
        ub_put_atom(b, u->text);
        break;
    case UB_U_STRING:
        ub_put_quoted(b, u->text, strlen(u->text));
        break;
    case UB_U_ASSET:
        ub_put_asset(b, u->text, strlen(u->text));
        break;
    case UB_U_PATH:
        ub_put_path(b, u->text, strlen(u->text));
        break;
    case UB_U_TUPLE:
    case UB_U_LIST:
        ub_buf_putc(b, u->kind == UB_U_TUPLE ? '(' : '[');
        for (uint32_t i = 0; i < u->n; i++) {
            if (i)
                ub_buf_puts(b, ", ");
            ub_put_untyped(b, &u->child[i]);
        }
        ub_buf_putc(b, u->kind == UB_U_TUPLE ? ')' : ']');
        break;
    }
}
