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

/* The default level, "auto": zstd level 19 for layers whose encoding is
 * at most UB_USDB_AUTO_SMALL bytes (compressing them costs milliseconds,
 * and most layers are small), level 3 for bigger ones, where higher levels
 * gain about 1% of size for much convert time (measurements in
 * doc/binary-format.md). */
#define UB_USDB_LEVEL_DEFAULT (-1)
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
