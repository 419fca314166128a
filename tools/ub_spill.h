/*
 * ub_spill — baked clip samples kept on disk until the writer wants them.
 *
 * Clips are read one at a time, so an attribute's samples arrive clip by
 * clip, while a writer writes each attribute's samples in one go.  The
 * spill keeps each part as it arrives in an unlinked temporary file, and
 * hands the writer an attribute's parts, in time order, when it reaches
 * that attribute: memory holds one clip, not the shot.  `flatten` to usda
 * keeps the parts as text (ub_usda_write_sample, on any of the bake's
 * threads); to usdc and usdb as values, read back into the writer's
 * memory an attribute at a time.
 */
#ifndef UB_SPILL_H
#define UB_SPILL_H

#include "ub_buf.h"
#include "ub_clips.h"
#include "ub_layer.h"

typedef struct ub_spill ub_spill;

/* What a spill keeps: text for ub_spill_samples, values for
 * ub_spill_values. */
typedef enum ub_spill_form { UB_SPILL_TEXT, UB_SPILL_VALUES } ub_spill_form;

/* Returns NULL after printing why. */
ub_spill *ub_spill_new(ub_spill_form form);
/* Whether the spill printed an error: the bake or the write it failed
 * stops with nothing more for the caller to say. */
bool ub_spill_said(const ub_spill *s);
void ub_spill_free(ub_spill *s);
/* The sink (ub_clip_sink) that keeps parts here, in the spill's form. */
ub_clip_sink ub_spill_sink(ub_spill *s);
/* After the last part: index what was kept. */
void ub_spill_finish(ub_spill *s);
/* A ub_usda_samples_fn: appends attr's parts to out (draining it as it
 * goes).  Returns 0 (nothing for an attribute it has no parts of), or -1
 * after printing why -- except when out has failed (out of memory, or
 * its sink, which reported it): then the caller says why. */
int ub_spill_samples(void *spill, const ub_prop *attr, unsigned indent,
                     ub_buf *out);
/* A ub_samples_fn (UB_SPILL_VALUES): attr's samples into *out, their
 * values in a, as the bake would have set them in the layer (in time
 * order, a later part's sample replacing one at the same time).  Returns
 * 0 (no samples for an attribute it has no parts of), or -1 after
 * printing why. */
int ub_spill_values(void *spill, const ub_prop *attr, ub_arena *a,
                    ub_samples *out);

#endif
