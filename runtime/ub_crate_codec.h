/*
 * ub_crate_codec — the two encodings inside OpenUSD crate files that are
 * not plain little-endian data:
 *
 *  - chunked LZ4 (the framing of OpenUSD's TfFastCompression): a first
 *    byte n; n == 0 means one raw LZ4 block follows; otherwise n chunks
 *    follow, each an int32 compressed size and an LZ4 block;
 *  - the integer coding of index lists and int arrays: after LZ4, the
 *    most common difference between neighbours (4 or 8 bytes), then 2-bit
 *    codes (common / 8-bit / 16-bit / full width difference for 32-bit
 *    ints; 16 / 32 / 64 for 64-bit ints), four per byte, then the
 *    differences themselves.
 *
 * Every function checks every length against the bytes it was given and
 * reports a short static reason instead of reading past them.
 */
#ifndef UB_CRATE_CODEC_H
#define UB_CRATE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Decompress src[0..n) into out, which must come out exactly `want` bytes
 * long.  0, or -1 with *why set. */
int ub_crate_lz4(const void *src, size_t n, void *out, size_t want,
                 const char **why);

/* The fewest bytes the integer coding of count ints of `width` bytes (4 or
 * 8) takes before LZ4, and the most. */
size_t ub_crate_ints_min_size(size_t count, unsigned width);
size_t ub_crate_ints_max_size(size_t count, unsigned width);

/* Whether n compressed bytes can possibly hold count ints (LZ4 expands at
 * most about 255 times): a bound for allocations by a damaged count. */
int ub_crate_ints_plausible(size_t n, size_t count, unsigned width);

/* Decode count ints of width 4 or 8 bytes from enc[0..n), the coding
 * after LZ4, into out (uint32_t or uint64_t).  0, or -1 with *why. */
int ub_crate_ints_decode(const void *enc, size_t n, size_t count,
                         unsigned width, void *out, const char **why);

/* LZ4 then the integer coding: src[0..n) holds count compressed ints.
 * 0; -1 with *why when the data is bad; UB_CRATE_NOMEM (and *why) when
 * memory ran out, which says nothing about the data. */
#define UB_CRATE_NOMEM (-2)
int ub_crate_ints(const void *src, size_t n, size_t count, unsigned width,
                  void *out, const char **why);

#endif
