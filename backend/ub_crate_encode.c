#include "ub_crate_encode.h"

#include <lz4.h>
#include <lz4hc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Element i of an array of 4- or 8-byte integers, as the signed value of
 * that width (widened to 64 bits). */
static inline int64_t ub_int_at(const void *v, size_t i, int width)
{
    if (width == 4)
        return (int32_t)((const uint32_t *)v)[i];
    return (int64_t)((const uint64_t *)v)[i];
}

/* The difference cur - prev, wrapping at the integers' width. */
static inline int64_t ub_int_diff(int64_t cur, int64_t prev, int width)
{
    uint64_t d = (uint64_t)cur - (uint64_t)prev;
    if (width == 4)
        return (int32_t)(uint32_t)d;
    return (int64_t)d;
}

/* A walk over the differences of an array of integers (the first from
 * 0), as the coding stores them; every pass below is one. */
typedef struct ub_dwalk {
    const void *v;
    size_t i, n;
    int64_t prev;
    int width;
} ub_dwalk;

static inline ub_dwalk ub_dwalk_start(const void *v, size_t n, int width)
{
    return (ub_dwalk){v, 0, n, 0, width};
}

/* The next difference into *d; false at the end.  (Inlined: with the
 * width a constant the passes stay tight loops.) */
static inline __attribute__((always_inline)) bool ub_dwalk_next(ub_dwalk *w,
                                                                int64_t *d)
{
    if (w->i == w->n)
        return false;
    int64_t cur = ub_int_at(w->v, w->i++, w->width);
    *d = ub_int_diff(cur, w->prev, w->width);
    w->prev = cur;
    return true;
}

/* The most common difference; the largest of those tied (whatever the
 * order counts grow in).  Small differences (most of them: indices move
 * by little) are counted in a direct table; the others, only when one
 * of them could be the most common, by the passes below (at worst an
 * open addressing table of (difference, count) grown with the number of
 * distinct ones, not sized by the array: a structural array of a million
 * indices would otherwise cost tens of MB). */
#define UB_DIRECT 1024 /* differences in [-UB_DIRECT, UB_DIRECT) */
#define UB_BUCKET_BITS 6 /* far differences counted in 64 buckets */
#define UB_BUCKETS (1 << UB_BUCKET_BITS)

struct ub_mc_slot {
    int64_t key;
    size_t count;
};

static size_t ub_mc_home(int64_t d, size_t cap)
{
    uint64_t h = (uint64_t)d * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

/* Count d in *t (*cap slots, *used of them full), growing it at 3/4.
 * Returns d's count, or 0 when out of memory. */
static size_t ub_mc_count(struct ub_mc_slot **t, size_t *cap, size_t *used,
                          int64_t d)
{
    size_t j = ub_mc_home(d, *cap);
    while ((*t)[j].count && (*t)[j].key != d)
        j = (j + 1) & (*cap - 1);
    if (!(*t)[j].count) {
        if ((*used + 1) * 4 > *cap * 3) {
            size_t nc = *cap * 2;
            struct ub_mc_slot *nt = calloc(nc, sizeof *nt);
            if (!nt)
                return 0;
            for (size_t k = 0; k < *cap; k++) {
                if (!(*t)[k].count)
                    continue;
                size_t m = ub_mc_home((*t)[k].key, nc);
                while (nt[m].count)
                    m = (m + 1) & (nc - 1);
                nt[m] = (*t)[k];
            }
            free(*t);
            *t = nt;
            *cap = nc;
            j = ub_mc_home(d, nc);
            while (nt[j].count)
                j = (j + 1) & (nc - 1);
        }
        (*used)++;
        (*t)[j].key = d;
    }
    return ++(*t)[j].count;
}

/* Whether difference d with count c beats the best so far: more often,
 * or as often and larger. */
static bool ub_mc_better(int64_t d, size_t c, int64_t best, size_t best_count)
{
    return c > best_count || (c == best_count && d > best);
}

#define UB_MG_MAX 8 /* candidates the heavy-hitters pass keeps at most */

/* (Inlined into the coding, which is made once per width: with the width
 * a constant, the loops over the integers are tight.) */
static inline __attribute__((always_inline)) int64_t
ub_most_common(const void *v, size_t n, int width, bool *oom)
{
    /* One pass counts each small difference in a slot of its own and
     * each far one in one of UB_BUCKETS slots by its hash: no far value
     * comes more often than its bucket, so that mostly (the field sets'
     * terminators, all far and all different) no other pass need look
     * for one that might be the most common.  Differences go to LANES
     * counters in turn, summed after: one difference mostly follows
     * itself, and each count then waited for the one before (both: the
     * coding of the prim-heavy bench layer's arrays 32.5 -> 23.7 ms). */
    enum { SPAN = 2 * UB_DIRECT, SLOTS = SPAN + UB_BUCKETS, LANES = 4 };
    uint32_t *count = calloc((size_t)SLOTS * LANES, sizeof *count);
    if (!count) {
        *oom = true;
        return 0;
    }
    size_t lane = 0;
    int64_t d;
    ub_dwalk dw = ub_dwalk_start(v, n, width);
    while (ub_dwalk_next(&dw, &d)) {
        uint64_t at = (uint64_t)d + UB_DIRECT; /* (one compare, both ends) */
        size_t bucket = (size_t)(((uint64_t)d * 0x9E3779B97F4A7C15ull) >>
                                 (64 - UB_BUCKET_BITS));
        size_t slot = at < SPAN ? (size_t)at : SPAN + bucket;
        count[slot * LANES + lane]++;
        lane = (lane + 1) % LANES;
    }
    int64_t best = 0;
    size_t best_count = 0, far = 0, far_most = 0;
    for (size_t slot = 0; slot < SLOTS; slot++) {
        size_t c = 0;
        for (size_t l = 0; l < LANES; l++)
            c += count[slot * LANES + l];
        if (slot >= SPAN) {
            far += c;
            far_most = c > far_most ? c : far_most;
        } else if (c && c >= best_count) {
            best = (int64_t)slot - UB_DIRECT;
            best_count = c;
        }
    }
    free(count);
    /* A far difference matters only if it comes best_count times or more:
     * none can when no bucket holds that many. */
    if (far == 0 || far_most < best_count)
        return best;
    /* Else, when few could (k = far / best_count of them at most), a
     * heavy-hitters pass (Misra-Gries: k counters keep every value seen
     * more than far / (k + 1) times) names them and a second pass counts
     * them exactly: counting each far difference in a hash table cost
     * more than the rest of the coding. */
    size_t k = best_count ? far / best_count : SIZE_MAX;
    if (k <= UB_MG_MAX) {
        int64_t cand[UB_MG_MAX + 1];
        size_t cnt[UB_MG_MAX + 1], nc = 0;
        k = k ? k : 1;
        dw = ub_dwalk_start(v, n, width);
        while (ub_dwalk_next(&dw, &d)) {
            if (d >= -UB_DIRECT && d < UB_DIRECT)
                continue;
            size_t j = 0;
            while (j < nc && cand[j] != d)
                j++;
            if (j < nc) {
                cnt[j]++;
            } else if (nc < k) {
                cand[nc] = d;
                cnt[nc++] = 1;
            } else { /* one less of each; drop those at zero */
                size_t m = 0;
                for (j = 0; j < nc; j++)
                    if (--cnt[j]) {
                        cand[m] = cand[j];
                        cnt[m++] = cnt[j];
                    }
                nc = m;
            }
        }
        for (size_t j = 0; j < nc; j++)
            cnt[j] = 0;
        dw = ub_dwalk_start(v, n, width);
        while (nc && ub_dwalk_next(&dw, &d)) {
            for (size_t j = 0; j < nc; j++)
                if (cand[j] == d)
                    cnt[j]++;
        }
        for (size_t j = 0; j < nc; j++)
            if (ub_mc_better(cand[j], cnt[j], best, best_count)) {
                best = cand[j];
                best_count = cnt[j];
            }
        return best;
    }
    size_t cap = 64, used = 0;
    struct ub_mc_slot *t = calloc(cap, sizeof *t);
    if (!t) {
        *oom = true;
        return 0;
    }
    dw = ub_dwalk_start(v, n, width);
    while (ub_dwalk_next(&dw, &d)) {
        if (d >= -UB_DIRECT && d < UB_DIRECT)
            continue;
        size_t c = ub_mc_count(&t, &cap, &used, d);
        if (!c) {
            free(t);
            *oom = true;
            return 0;
        }
        if (ub_mc_better(d, c, best, best_count)) {
            best = d;
            best_count = c;
        }
    }
    free(t);
    return best;
}

/* The low `bytes` bytes (1, 2, 4 or 8) of d, little-endian (two's
 * complement). */
static char *ub_put_le(char *p, int64_t d, size_t bytes)
{
    uint64_t u = (uint64_t)d;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* one store: the integer coding is most of the writer's integer work */
    switch (bytes) {
    case 1: *p = (char)u; break;
    case 2: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
    default: memcpy(p, &u, 8); break;
    }
#else
    for (size_t k = 0; k < bytes; k++)
        p[k] = (char)(u >> (8 * k));
#endif
    return p + bytes;
}

static inline __attribute__((always_inline)) void
ub_code_ints(const void *v, size_t n, int width, ub_buf *out)
{
    if (n == 0)
        return;
    bool oom = false;
    int64_t common = ub_most_common(v, n, width, &oom);
    size_t ncodes = (n * 2 + 7) / 8;
    /* (each difference is stored whole, and the cursor moves by its
     * coded width: the room for n whole ones is enough) */
    size_t bound = (size_t)width + ncodes + n * (size_t)width;
    char *p = oom ? NULL : ub_buf_reserve_written(out, bound);
    if (!p) {
        out->failed = true;
        return;
    }
    /* The common value is stored at the integers' width. */
    ub_put_le(p, common, (size_t)width);
    unsigned char *codes = (unsigned char *)p + width;
    char *ints = (char *)codes + ncodes;
    /* small / medium limits: int8 / int16 for 32-bit, int16 / int32 for
     * 64-bit input. */
    int64_t small = width == 4 ? INT8_MAX : INT16_MAX;
    int64_t medium = width == 4 ? INT16_MAX : INT32_MAX;
    /* the bytes a code stands for: 0, then 1/2/4 (32-bit input) or
     * 2/4/8 (64-bit) */
    const size_t step[4] = {0, (size_t)width / 4, (size_t)width / 2,
                            (size_t)width};
    /* Each code goes into a byte held in a register, stored once four
     * are in (or-ing each into memory made every integer wait for the
     * one before), and each difference is stored whole, without a
     * branch on its width: 7% off the coding of the prim-heavy bench
     * layer's index lists. */
    unsigned acc = 0;
    int64_t d;
    ub_dwalk dw = ub_dwalk_start(v, n, width);
    for (size_t i = 0; ub_dwalk_next(&dw, &d); i++) {
        /* the code is the difference's width: 1, 2 or 3 for 1/2/4 bytes
         * (32-bit input) or 2/4/8 bytes (64-bit input) */
        unsigned code = d == common                          ? 0
                        : d >= -small - 1 && d <= small      ? 1
                        : d >= -medium - 1 && d <= medium    ? 2
                                                             : 3;
        ub_put_le(ints, d, (size_t)width); /* little-endian: the low
                                                bytes first */
        ints += step[code];
        acc |= code << (2 * (i % 4));
        if (i % 4 == 3) {
            codes[i / 4] = (unsigned char)acc;
            acc = 0;
        }
    }
    if (n % 4)
        codes[n / 4] = (unsigned char)acc;
    out->len = (size_t)(ints - out->data);
}

void ub_crate_code_ints32(const uint32_t *v, size_t n, ub_buf *out)
{
    ub_code_ints(v, n, 4, out);
}

void ub_crate_code_ints64(const uint64_t *v, size_t n, ub_buf *out)
{
    ub_code_ints(v, n, 8, out);
}

static void ub_code_ints_w(const void *v, size_t n, int width, ub_buf *out)
{
    if (width == 4)
        ub_crate_code_ints32(v, n, out);
    else
        ub_crate_code_ints64(v, n, out);
}

void ub_crate_lz4c_init(ub_crate_lz4c *c, int hc)
{
    c->hc = hc;
    c->hc_upto = SIZE_MAX;
    c->state = NULL;
    ub_buf_init(&c->coded);
}

void ub_crate_lz4c_free(ub_crate_lz4c *c)
{
    free(c->state);
    ub_buf_free(&c->coded);
    c->state = NULL;
}

/* One LZ4 block of n bytes at dst (room for LZ4_compressBound(n));
 * returns its size, 0 on failure. */
static int ub_lz4_block(const char *src, size_t n, char *dst,
                        ub_crate_lz4c *c)
{
    int bound = LZ4_compressBound((int)n);
    if (c && c->hc > 0 && n <= c->hc_upto) {
        if (!c->state)
            c->state = malloc((size_t)LZ4_sizeofStateHC());
        if (c->state)
            return LZ4_compress_HC_extStateHC(c->state, src, dst, (int)n,
                                              bound, c->hc);
    }
    return LZ4_compress_default(src, dst, (int)n, bound);
}

void ub_crate_lz4_compress(const void *src, size_t n, ub_crate_lz4c *c,
                           ub_buf *out)
{
    const char *s = src;
    if (n <= UB_CRATE_LZ4_CHUNK) {
        char *p = ub_buf_reserve_written(
            out, 1 + (size_t)LZ4_compressBound((int)n));
        if (!p)
            return;
        p[0] = 0;
        int k = ub_lz4_block(s, n, p + 1, c);
        if (k <= 0 && n) {
            out->failed = true;
            return;
        }
        out->len += 1 + (size_t)k;
        return;
    }
    size_t chunks = (n + UB_CRATE_LZ4_CHUNK - 1) / UB_CRATE_LZ4_CHUNK;
    if (chunks > 127) { /* the count is one signed byte */
        out->failed = true;
        return;
    }
    ub_buf_putc(out, (char)chunks);
    for (size_t off = 0; off < n && !out->failed; off += UB_CRATE_LZ4_CHUNK) {
        size_t len = n - off;
        if (len > UB_CRATE_LZ4_CHUNK)
            len = UB_CRATE_LZ4_CHUNK;
        ub_crate_lz4_chunk(s + off, len, c, out);
    }
}

void ub_crate_lz4_chunk(const void *src, size_t n, ub_crate_lz4c *c,
                        ub_buf *out)
{
    if (n == 0 || n > UB_CRATE_LZ4_CHUNK) {
        out->failed = true;
        return;
    }
    char *p =
        ub_buf_reserve_written(out, 4 + (size_t)LZ4_compressBound((int)n));
    if (!p)
        return;
    int32_t k = ub_lz4_block(src, n, p + 4, c);
    if (k <= 0) {
        out->failed = true;
        return;
    }
    memcpy(p, &k, 4);
    out->len += 4 + (size_t)k;
}

/* uint64 size, then LZ4 of the integer coding. */
static void ub_put_ints(const void *v, size_t n, int width, ub_crate_lz4c *c,
                        ub_buf *out)
{
    ub_buf local, *coded = c ? &c->coded : &local;
    if (c)
        c->coded.len = 0;
    else
        ub_buf_init(&local);
    ub_code_ints_w(v, n, width, coded);
    size_t at = out->len;
    uint64_t size = 0;
    ub_buf_append(out, &size, 8);
    if (coded->failed) {
        out->failed = true;
    } else if (!out->failed) {
        ub_crate_lz4_compress(coded->data, coded->len, c, out);
        size = out->len - at - 8;
        if (!out->failed)
            memcpy(out->data + at, &size, 8);
    }
    if (!c)
        ub_buf_free(&local);
}

void ub_crate_put_ints32(const uint32_t *v, size_t n, ub_crate_lz4c *c,
                         ub_buf *out)
{
    ub_put_ints(v, n, 4, c, out);
}

void ub_crate_put_ints64(const uint64_t *v, size_t n, ub_crate_lz4c *c,
                         ub_buf *out)
{
    ub_put_ints(v, n, 8, c, out);
}
