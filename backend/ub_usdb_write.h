/*
 * ub_usdb_write — a ub_layer to the usdbake binary format, .usdb
 * (doc/binary-format.md).  The reader is in the runtime library
 * (runtime/ub_usdb.h), which links without the compiler.
 */
#ifndef UB_USDB_WRITE_H
#define UB_USDB_WRITE_H

#include "ub_buf.h"
#include "ub_diag.h"
#include "ub_layer.h"

/* The default level, "auto", by the size of the layer's encoding: zstd
 * level 19 up to UB_USDB_AUTO_TINY bytes (most layers: it costs
 * milliseconds there, and saves about 1% over level 9 on the corpus'
 * small layers); level 9 up to UB_USDB_AUTO_SMALL, where level 19 took
 * seconds (0.6 s on a 1 MB prim-heavy layer, 3 s on 8 MB) and 1.6-2x the
 * memory, and came out no smaller than 9 or up to 10% bigger; level 3
 * above, where convert speed rules (measurements in
 * doc/binary-format.md). */
#define UB_USDB_LEVEL_DEFAULT (-1)
#define UB_USDB_AUTO_TINY ((size_t)64 << 10)
#define UB_USDB_AUTO_SMALL ((size_t)4 << 20)
#define UB_USDB_LEVEL_MIN 0 /* no compression: every section stored */
#define UB_USDB_LEVEL_MAX 22

/* Append the .usdb encoding of layer to out, compressing with zstd at
 * `level` (UB_USDB_LEVEL_MIN..MAX; 0 stores sections uncompressed;
 * UB_USDB_LEVEL_DEFAULT chooses by size).  Deterministic: the same layer and
 * level always give the same bytes.  Records are deduplicated and
 * compressed on one helper thread while the tree is encoded (joined
 * before returning; without one, all is done in the caller's thread, to
 * the same bytes); the layer must not change meanwhile.  Returns 0, or -1
 * after adding an error to diags (out of memory, nesting deeper than the
 * format allows). */
int ub_usdb_write(const ub_layer *layer, int level, ub_buf *out,
                  ub_diags *diags);
/* The same, with the samples of attributes whose timeSamples are authored
 * but empty asked of fn (ub_samples_fn; NULL: as ub_usdb_write).  When fn
 * fails, so does the write, with no error of its own. */
int ub_usdb_write_with(const ub_layer *layer, int level, ub_samples_fn fn,
                       void *ctx, ub_buf *out, ub_diags *diags);

/* The same bytes, written while the layer is read: pass
 * ub_usdb_stream_prim and ub_usdb_stream_reopened as the callbacks of a
 * streaming parse (ub_parse_stream, ub_loader_set_stream) with the stream
 * as their context, then call ub_usdb_stream_end with the layer the parse
 * returned.  Memory: the writer's tables and the encoded tree, not the
 * layer's model.  ub_usdb_stream_end returns 0; -1 after adding an error
 * to diags; or 1 when the layer could not be streamed (something that
 * belongs before a prim's children came after one of them) and the
 * caller must write it whole with ub_usdb_write.  Free the stream with
 * ub_usdb_stream_free in any case. */
typedef struct ub_usdb_stream ub_usdb_stream;

ub_usdb_stream *ub_usdb_stream_new(int level, ub_diags *diags);
void ub_usdb_stream_free(ub_usdb_stream *s);
void ub_usdb_stream_prim(void *stream, const ub_layer *layer,
                         const ub_prim *prim, unsigned depth);
void ub_usdb_stream_reopened(void *stream, const ub_prim *prim);
int ub_usdb_stream_end(ub_usdb_stream *s, const ub_layer *layer,
                       ub_buf *out);
/* The share of a split parse's text to give the head (head_percent).
 * The head's walk is cheap, and the tail's thread builds and keeps the
 * model of its half where the head reuses the memory of each prim: at
 * half, the head waited ~0.1 s for the tail on the prim-heavy bench
 * layer, and 55% had the two end together until the tail stopped
 * mapping the head's half to count its lines (~50 ms less for the tail):
 * then 51% was 26 ms faster than 55% by bench/ab (95%: 19-32), and 60%
 * 54 ms slower; the array-heavy layer either way. */
#define UB_USDB_STREAM_HEAD_PERCENT 51

#endif
