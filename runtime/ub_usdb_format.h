/*
 * ub_usdb_format — constants and byte-level helpers of the .usdb format
 * (doc/binary-format.md), shared by the writer (backend/) and the reader
 * (runtime/).  Private: not installed.
 */
#ifndef UB_USDB_FORMAT_H
#define UB_USDB_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ub_layer.h"

#define UB_USDB_MAGIC "\x89USDB\r\n\x1a"
#define UB_USDB_MAGIC_LEN 8
#define UB_USDB_TAIL_MAGIC "UBEN"
#define UB_USDB_MAJOR 1
#define UB_USDB_MINOR 0
#define UB_USDB_HEADER_LEN 12
#define UB_USDB_TRAILER_LEN 20
#define UB_USDB_CHUNK_TARGET ((size_t)1 << 18)
#define UB_USDB_MAX_DEPTH UB_MAX_NESTING

#define UB_USDB_TAG(a, b, c, d)                                       \
    ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 |       \
     (uint32_t)(d) << 24)
#define UB_USDB_TAG_SKEL UB_USDB_TAG('S', 'K', 'E', 'L')
#define UB_USDB_TAG_DATA UB_USDB_TAG('D', 'A', 'T', 'A')

enum { UB_USDB_CODEC_STORED = 0, UB_USDB_CODEC_ZSTD = 1 };
enum { UB_USDB_REC_VALUE = 'V', UB_USDB_REC_SERIES = 'S' };
enum {
    UB_USDB_LAYOUT_RAW = 0,
    UB_USDB_LAYOUT_SPLIT = 1,
    UB_USDB_LAYOUT_DELTA = 2,
    UB_USDB_LAYOUT_COLUMNS = 3, /* float/double: a mode per column */
    UB_USDB_LAYOUT_SMALL = 4,   /* float/double under 64 bytes */
};
#define UB_USDB_SMALL_RAW 255 /* a SMALL component given by its bits */
enum { UB_USDB_COL_PLANES = 0, UB_USDB_COL_DECIMAL = 1 };
#define UB_USDB_DEC_MAX 15 /* decimal digits tried for a decimal column */

/* Exact powers of ten; a decimal column's value is k / 10^d computed in
 * binary64 (then rounded to float for float columns), identically by the
 * writer's check and the reader. */
static const double ub_usdb_pow10[UB_USDB_DEC_MAX + 1] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
    1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
};
static inline double ub_usdb_decimal(int64_t k, unsigned d)
{
    return (double)k / ub_usdb_pow10[d];
}
enum { UB_USDB_TIMES_RAW = 0, UB_USDB_TIMES_ARITH = 1 };
enum { UB_USDB_SERIES_RECS = 0, UB_USDB_SERIES_PACKED = 1 };
/* Numeric blocks smaller than this are stored raw: splitting gains
 * nothing on a few bytes. */
#define UB_USDB_SPLIT_MIN 64
/* Blocks from this size get their layout chosen by trial compression. */
#define UB_USDB_TRIAL_MIN 1024
#define UB_USDB_TRIAL_SAMPLE 16384

static inline uint64_t ub_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static inline uint32_t ub_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static inline uint16_t ub_le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline void ub_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void ub_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void ub_put_le16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

#endif
