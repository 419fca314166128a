/*
 * ub_spill — baked clip samples kept on disk until the writer wants them.
 *
 * Clips are read one at a time, so an attribute's samples arrive clip by
 * clip, while the text writes each attribute's samples in one go.  The
 * spill formats each part as it arrives (ub_usda_write_sample, on any of
 * the bake's threads) and keeps it in an unlinked temporary file, and hands the writer an attribute's parts, in
 * time order, when it reaches that attribute: memory holds one clip, not
 * the shot.  `flatten` to usda uses it.
 */
#ifndef UB_SPILL_H
#define UB_SPILL_H

#include "ub_buf.h"
#include "ub_clips.h"
#include "ub_layer.h"

typedef struct ub_spill ub_spill;

/* Returns NULL after printing why. */
ub_spill *ub_spill_new(void);
void ub_spill_free(ub_spill *s);
/* The sink (ub_clip_sink) that keeps parts here, formatted by
 * ub_usda_write_sample. */
ub_clip_sink ub_spill_sink(ub_spill *s);
/* After the last part: index what was kept. */
void ub_spill_finish(ub_spill *s);
/* A ub_usda_samples_fn: appends attr's parts to out (draining it as it
 * goes).  Returns 0 (nothing for an attribute it has no parts of), or -1
 * after printing why -- except when out has failed (out of memory, or
 * its sink, which reported it): then the caller says why. */
int ub_spill_samples(void *spill, const ub_prop *attr, unsigned indent,
                     ub_buf *out);

#endif
