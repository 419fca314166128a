/*
 * ub_crate — the reader of OpenUSD's binary crate layers (.usdc, and .usd
 * files that are crate), every version OpenUSD 24.08 reads (0.0.1 to
 * 0.11.0).  Links with libusdbake-runtime alone.
 *
 * A crate file is read into the same ub_layer the usda parser builds:
 * field keys in their text-format spellings, list ops, references,
 * relocates and sublayers in the shapes ub_layer.h documents, values
 * typed as the attribute declares them.  So every pass and writer works on
 * it unchanged, and `usdbake cat x.usdc` prints what `usdcat x.usdc` does.
 *
 * Damaged files (truncated, an offset or count outside the file, a
 * section that decompresses to the wrong size, an index out of range, a
 * value that contains itself) give an error naming the file and the
 * section or spec path, never a crash or an allocation the file's size
 * does not justify.  See doc/usdc.md, "Reading".
 */
#ifndef UB_CRATE_H
#define UB_CRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_layer.h"

/* Whether data begins with the crate identifier "PXR-USDC". */
bool ub_crate_sniff(const void *data, size_t len);

/* The layer in data[0..len) (not kept: the layer copies what it needs),
 * named `path` in messages and as its layer path; strings are interned in
 * t.  NULL after appending an error to diags. */
ub_layer *ub_crate_read(const void *data, size_t len, const char *path,
                        ub_strtab *t, ub_diags *diags);

/* Streaming, for a command that writes each prim once (cat): every prim
 * not inside a variant goes to prim_done as soon as it is built, children
 * before their parent, depth 1 for root prims, its own children already
 * handed over and stubs (ub_prim_drop_body); after prim_done returns it
 * becomes a stub too and its memory -- values, arrays, time samples --
 * is reused.  So memory holds the file, its structural tables and one
 * open chain of prims, not the layer.  prim_done is the callback of the
 * text reader's streaming parse (ub_parse_stream), never called once the
 * file proved damaged.  The layer returned has `streamed` set: the
 * pseudo-root keeps the layer metadata, sublayers, rootPrims order and the
 * stubs of the root prims. */
typedef struct ub_crate_stream {
    /* NULL: the layer is built whole, as by ub_crate_read (and only
     * `mapped` below applies) */
    void (*prim_done)(void *ctx, const ub_layer *layer, const ub_prim *prim,
                      unsigned depth);
    void *ctx;
    /* data is a private read-only mapping of the file starting on a page:
     * pages already read are given back (madvise MADV_DONTNEED; touched
     * again they are read again), so the file is not held whole either */
    bool mapped;
    /* A layer built whole (no prim_done) may be built by two threads, as
     * the text reader's split parse reads a big layer: a second thread
     * builds the tail of one list of prim children, the list met from the
     * pseudo-root down whose tail holds about half the file's paths, and
     * its prims join the layer at the end; and a big file's integer
     * lists are decoded by the second thread while the first reads its
     * tokens.  The layer, and any error, are the ones one thread gives.
     * 0: when the file is big and the process has two CPUs (ub_cpus);
     * > 0: whatever its size (tests); < 0: never. */
    int split;
    bool *split_done; /* NULL, or set: whether two threads built it */
} ub_crate_stream;

ub_layer *ub_crate_read_stream(const void *data, size_t len,
                               const char *path, ub_strtab *t,
                               const ub_crate_stream *stream,
                               ub_diags *diags);

#endif
