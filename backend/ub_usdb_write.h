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

#endif
