/*
 * ub_usda — the canonical usda text writer: what OpenUSD 24.08's usdcat
 * prints for the same layer, byte for byte where we can.
 */
#ifndef UB_USDA_H
#define UB_USDA_H

#include "ub_buf.h"
#include "ub_layer.h"

/* Append the canonical text of layer to out.  Returns 0, or -1 when out of
 * memory (out->failed is then set).  Deterministic: the same layer always
 * gives the same bytes. */
int ub_usda_write(const ub_layer *layer, ub_buf *out);

/* The same, for a layer whose attributes may have their time samples kept
 * elsewhere (baked clips, ub_compose_flatten_to): for an attribute with
 * authored but empty samples, fn writes the sample lines (as
 * ub_usda_write_sample does) after `.timeSamples = {` and returns 0, or -1
 * on failure.  fn may drain out (ub_buf_drain). */
typedef int (*ub_usda_samples_fn)(void *ctx, const ub_prop *attr,
                                  unsigned indent, ub_buf *out);
int ub_usda_write_with(const ub_layer *layer, ub_buf *out,
                       ub_usda_samples_fn fn, void *ctx);
/* One line of `.timeSamples = { ... }` of an attribute written at indent
 * (its statement's indent; the line is one deeper). */
void ub_usda_write_sample(ub_buf *out, unsigned indent, double time,
                          const ub_value *v);

/* The same text, written while the layer is read: pass
 * ub_usda_stream_prim and ub_usda_stream_reopened as the callbacks of a
 * streaming parse (ub_parse_opts.stream, ub_loader_set_stream) with the
 * stream as their context, then call ub_usda_stream_end with the layer the
 * parse returned.  Memory: the prims still open, not the layer.  The bytes
 * equal ub_usda_write's for the same layer. */
typedef struct ub_usda_stream ub_usda_stream;

ub_usda_stream *ub_usda_stream_new(ub_buf *out);
void ub_usda_stream_free(ub_usda_stream *s);
void ub_usda_stream_prim(void *stream, const ub_layer *layer,
                         const ub_prim *prim, unsigned depth);
void ub_usda_stream_reopened(void *stream, const ub_prim *prim);
/* Returns 0; -1 when out of memory (out->failed); or 1 when the text
 * could not be streamed -- something that belongs before a prim's
 * children (a property, a reorder statement) was authored after one of
 * them -- and the caller must start over, rewinding what went to out,
 * with a whole-layer parse. */
int ub_usda_stream_end(ub_usda_stream *s, const ub_layer *layer);

#endif
