#include "ub_crate_codec.h"

#include "ub_arena.h"

#include <lz4.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Decompress the framing in src[0..n) into at most cap bytes of out;
 * *got is how many came out. */
static int ub_lz4_frame(const void *src, size_t n, void *out, size_t cap,
                        size_t *got, const char **why)
{
    const unsigned char *p = src, *end = p + n;
    char *o = out;
    *got = 0;
    if (n < 1) {
        *why = "compressed data is empty";
        return -1;
    }
    int chunks = (signed char)*p++;
    if (chunks < 0) {
        *why = "bad LZ4 chunk count";
        return -1;
    }
    if (chunks == 0) {
        size_t in = (size_t)(end - p);
        if (in > INT32_MAX || cap > INT32_MAX) {
            *why = "LZ4 block too large";
            return -1;
        }
        int g = LZ4_decompress_safe((const char *)p, o, (int)in, (int)cap);
        if (g < 0) {
            *why = "LZ4 data is corrupt";
            return -1;
        }
        *got = (size_t)g;
        return 0;
    }
    size_t done = 0;
    for (int i = 0; i < chunks; i++) {
        int32_t csz;
        if ((size_t)(end - p) < sizeof csz) {
            *why = "LZ4 chunk header past the end";
            return -1;
        }
        memcpy(&csz, p, sizeof csz);
        p += sizeof csz;
        if (csz < 0 || (size_t)csz > (size_t)(end - p)) {
            *why = "LZ4 chunk size past the end";
            return -1;
        }
        size_t room = cap - done;
        if (room > (size_t)LZ4_MAX_INPUT_SIZE)
            room = (size_t)LZ4_MAX_INPUT_SIZE;
        int g = LZ4_decompress_safe((const char *)p, o + done, csz,
                                    (int)room);
        if (g < 0) {
            *why = "LZ4 data is corrupt";
            return -1;
        }
        done += (size_t)g;
        p += csz;
    }
    *got = done;
    return 0;
}

int ub_crate_lz4(const void *src, size_t n, void *out, size_t want,
                 const char **why)
{
    size_t got;
    if (ub_lz4_frame(src, n, out, want, &got, why) != 0)
        return -1;
    if (got != want) {
        *why = "decompresses to the wrong size";
        return -1;
    }
    return 0;
}

size_t ub_crate_ints_min_size(size_t count, unsigned width)
{
    return count ? width + (count * 2 + 7) / 8 : 0;
}

size_t ub_crate_ints_max_size(size_t count, unsigned width)
{
    return count ? width + (count * 2 + 7) / 8 + count * width : 0;
}

int ub_crate_ints_plausible(size_t n, size_t count, unsigned width)
{
    /* 2 bits per int at least; LZ4 never expands more than 255:1 */
    if (count > SIZE_MAX / 4)
        return 0;
    return ub_crate_ints_min_size(count, width) <= n * 255 + 64;
}

int ub_crate_ints_decode(const void *enc, size_t n, size_t count,
                         unsigned width, void *out, const char **why)
{
    if (count == 0)
        return 0;
    const unsigned char *p = enc, *end = p + n;
    size_t ncodes = (count * 2 + 7) / 8;
    if (n < width + ncodes) {
        *why = "integer codes past the end";
        return -1;
    }
    int64_t common;
    if (width == 4) {
        int32_t c32;
        memcpy(&c32, p, 4);
        common = c32;
    } else {
        memcpy(&common, p, 8);
    }
    const unsigned char *codes = p + width, *v = codes + ncodes;
    /* the running value wraps at the int's width, as OpenUSD's does */
    uint64_t prev = 0;
    for (size_t i = 0; i < count; i++) {
        unsigned code = (codes[i / 4] >> (2 * (i % 4))) & 3;
        int64_t d;
        size_t sz = code == 0 ? 0 : (size_t)(width / 4) << (code - 1);
        if (code == 3)
            sz = width;
        if ((size_t)(end - v) < sz) {
            *why = "integer data past the end";
            return -1;
        }
        if (sz == 0) {
            d = common;
        } else {
            /* little-endian, sign-extended from sz bytes */
            uint64_t u = 0;
            memcpy(&u, v, sz);
            if (sz < 8) {
                uint64_t sign = 1ull << (8 * sz - 1);
                u = (u ^ sign) - sign;
            }
            d = (int64_t)u;
        }
        v += sz;
        prev += (uint64_t)d;
        if (width == 4) {
            uint32_t x = (uint32_t)prev;
            prev = x;
            memcpy((char *)out + i * 4, &x, 4);
        } else {
            memcpy((char *)out + i * 8, &prev, 8);
        }
    }
    return 0;
}

int ub_crate_ints(const void *src, size_t n, size_t count, unsigned width,
                  void *out, const char **why)
{
    if (count == 0)
        return 0;
    if (!ub_crate_ints_plausible(n, count, width)) {
        *why = "more integers than the compressed bytes can hold";
        return -1;
    }
    /* the encoded size is not stored: decompress into the largest it can
     * be and let the decoder check what it reads */
    size_t max = ub_crate_ints_max_size(count, width);
    unsigned char *buf = ub_scratch_alloc(max);
    if (!buf) {
        *why = "out of memory";
        return UB_CRATE_NOMEM;
    }
    size_t got = 0;
    int rc = ub_lz4_frame(src, n, buf, max, &got, why);
    if (rc == 0)
        rc = ub_crate_ints_decode(buf, got, count, width, out, why);
    ub_scratch_free(buf, max);
    return rc;
}
