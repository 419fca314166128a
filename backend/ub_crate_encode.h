/*
 * ub_crate_encode — the two encodings OpenUSD's crate (usdc) format stacks
 * under its sections and integer arrays: the compressed integer coding
 * (differences, a most common difference, 2-bit width codes) and LZ4 in
 * OpenUSD's chunked framing (a chunk-count byte, then the LZ4 blocks).
 * doc/usdc.md describes both.
 */
#ifndef UB_CRATE_ENCODE_H
#define UB_CRATE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "ub_buf.h"

/* The largest input of one LZ4 block in the chunked framing. */
#define UB_CRATE_LZ4_CHUNK ((size_t)0x7E000000)

/* Append the integer coding of n 32-bit (or 64-bit) integers to out,
 * without LZ4: the most common difference (4 or 8 bytes), the 2-bit codes
 * (common, 8/16/32-bit for 32-bit input; common, 16/32/64-bit for 64-bit),
 * then the differences that are not the common one.  Signedness does not
 * change the bytes: pass unsigned values as their bit patterns.  Nothing is
 * appended for n == 0. */
void ub_crate_code_ints32(const uint32_t *v, size_t n, ub_buf *out);
void ub_crate_code_ints64(const uint64_t *v, size_t n, ub_buf *out);

/* How to compress: LZ4's fast mode, or LZ4 HC at a level (smaller, slower
 * to write; read the same), for inputs up to hc_upto bytes (init: no
 * limit) and fast mode above.  An HC compressor keeps its state (a few
 * hundred KiB, set up once) between calls. */
typedef struct ub_crate_lz4c {
    int hc;      /* 0: fast mode; else the HC level */
    size_t hc_upto;
    void *state; /* HC state, made on first use */
    ub_buf coded; /* the integer coding before compression */
} ub_crate_lz4c;

void ub_crate_lz4c_init(ub_crate_lz4c *c, int hc);
void ub_crate_lz4c_free(ub_crate_lz4c *c);

/* Append n bytes compressed with LZ4 in OpenUSD's framing: a first byte 0
 * and one LZ4 block when n fits one chunk, else the number of chunks and
 * each chunk as an int32 size and its block.  c NULL: fast mode. */
void ub_crate_lz4_compress(const void *src, size_t n, ub_crate_lz4c *c,
                           ub_buf *out);

/* One chunk of the many-chunk framing: its int32 size and the LZ4 block
 * of src[0..n), 0 < n <= UB_CRATE_LZ4_CHUNK, appended to out.  Readers
 * take chunks of any size, so a big input may be cut where the caller
 * likes and its chunks made apart (on two threads), then put behind the
 * count byte in order. */
void ub_crate_lz4_chunk(const void *src, size_t n, ub_crate_lz4c *c,
                        ub_buf *out);

/* Integer coding then LZ4, preceded by the compressed size as a uint64:
 * what crate stores for a compressed integer array and for the integer
 * lists of its structural sections.  c NULL: fast mode. */
void ub_crate_put_ints32(const uint32_t *v, size_t n, ub_crate_lz4c *c,
                         ub_buf *out);
void ub_crate_put_ints64(const uint64_t *v, size_t n, ub_crate_lz4c *c,
                         ub_buf *out);

#endif
