/*
 * ub_usdc_write — a ub_layer to OpenUSD's crate binary format (.usdc), the
 * binary every USD application opens.  What is written, version by
 * version, and why: doc/usdc.md ("Writing").
 */
#ifndef UB_USDC_WRITE_H
#define UB_USDC_WRITE_H

#include "ub_buf.h"
#include "ub_diag.h"
#include "ub_layer.h"

/* Append the crate encoding of layer to out.  The file is version 0.8.0
 * unless a value needs a newer one (timecode values 0.9.0, path
 * expressions 0.10.0, layer relocates 0.11.0).  Deterministic: the same
 * layer always gives the same bytes, whether written whole or streamed
 * (below).  Values are stored and sections built on a helper thread too,
 * where the process may use a second CPU (joined before returning;
 * without one, all is done in the caller's thread, to the same bytes).
 * Returns 0, or -1 after adding an error to diags (out of memory, or
 * something crate cannot hold, with the spec path it belongs to); out
 * may then hold a partial encoding. */
int ub_usdc_write(const ub_layer *layer, ub_buf *out, ub_diags *diags);

/* The same, prim by prim as a streaming parse closes them
 * (ub_parse_stream): ub_usdc_stream_prim is its prim_done, and each prim
 * is written when it comes, so the layer is never whole in memory.
 * Errors go to diags as the prims come: give the stream diags of its
 * own, to keep only when the parse returns a `streamed` layer.  After
 * the parse, ub_usdc_stream_end writes the pseudo-root (the layer the
 * parse returned) and the sections, and returns as ub_usdc_write.  When
 * the parse returns a layer that is not `streamed` (it had to read the
 * layer whole), free the stream, drop what it appended to out, and use
 * ub_usdc_write. */
typedef struct ub_usdc_stream ub_usdc_stream;

ub_usdc_stream *ub_usdc_stream_new(ub_buf *out,
                                   ub_diags *diags); /* NULL: no memory */
void ub_usdc_stream_prim(void *ctx, const ub_layer *layer, const ub_prim *prim,
                         unsigned depth);
/* The parse's parse_threads: while the parse keeps every CPU busy, the
 * stream stores what it walks on the parse's thread, not its own. */
void ub_usdc_stream_parse_threads(void *ctx, unsigned n);
/* The share of a split parse's text to give the head (head_percent):
 * the head's thread also walks and stores its prims.  Of 40 to 50%, 45
 * kept the two threads busiest on the prim-heavy bench layer. */
#define UB_USDC_STREAM_HEAD_PERCENT 45
int ub_usdc_stream_end(ub_usdc_stream *s, const ub_layer *layer);
void ub_usdc_stream_free(ub_usdc_stream *s);

#endif
