/*
 * ub_time — the one implementation of time mapping between layers.
 *
 * A layer offset (ub_offset, in ub_value.h) maps time t of the layer it is
 * authored on to t * scale + offset in the layer that names it.  Offsets
 * compose along nested subLayers, references and payloads; a layer's
 * timeCodesPerSecond adds a scale of (naming layer's rate / its rate).
 * Everything here follows OpenUSD 24.08 (SdfLayerOffset, PcpLayerStack,
 * Usd_ApplyLayerOffsetToValue), checked against the conformance corpus.
 *
 * Who uses it: the layer-stack flattener (ub_stack), composition and clips,
 * and `usdbake check` (which maps ub_offset_status to its own check IDs and
 * severities: this module never makes diagnostics itself).
 */
#ifndef UB_TIME_H
#define UB_TIME_H

#include <stdbool.h>

#include "ub_diag.h"
#include "ub_layer.h"
#include "ub_value.h"

/* --- offsets ------------------------------------------------------------- */

/* t mapped through o: t * o.scale + o.offset. */
static inline double ub_offset_apply(ub_offset o, double t)
{
    return t * o.scale + o.offset;
}

/* The offset mapping t to outer(inner(t)).  For a layer B sublayered by A
 * with offset `inner`, where A itself sits at `outer` in the root's frame,
 * B's time t lands at ub_offset_apply(ub_offset_compose(outer, inner), t).
 * Not commutative. */
ub_offset ub_offset_compose(ub_offset outer, ub_offset inner);

/* Identity within OpenUSD's tolerance (1e-6 on offset and scale), which is
 * how OpenUSD decides that no mapping is needed at all. */
bool ub_offset_is_identity(ub_offset o);

/* The inverse mapping (root frame -> layer frame).  A scale of 0 gives an
 * infinite scale, as in OpenUSD; validate first. */
ub_offset ub_offset_inverse(ub_offset o);

/* What is wrong with an authored offset.  The order is the order checks
 * are made in (one status per offset). */
typedef enum ub_offset_status {
    UB_OFFSET_OK = 0,
    UB_OFFSET_NONFINITE,      /* offset or scale is inf or nan */
    UB_OFFSET_SCALE_ZERO,     /* collapses all time to one instant; also
                                 a scale so close to 0 that the inverse
                                 offset overflows */
    UB_OFFSET_SCALE_NEGATIVE, /* reverses time */
} ub_offset_status;

ub_offset_status ub_offset_validate(ub_offset o);

/* Whether OpenUSD discards an offset with this status and composes with
 * the identity instead (PcpErrorInvalidSublayerOffset / ...ReferenceOffset:
 * "Using no offset instead").  OpenUSD 24.08 rejects a non-finite offset
 * or scale and a scale whose inverse is not finite (0); it APPLIES a
 * negative scale (time reversal).  So NONFINITE and SCALE_ZERO are
 * ignored, SCALE_NEGATIVE is kept: callers that want to flag negative
 * scales (check, flatten) report it as a warning, not as a dropped offset. */
bool ub_offset_status_ignored(ub_offset_status s);

/* A short English description ("scale is 0"), for messages. */
const char *ub_offset_status_text(ub_offset_status s);

/* --- frame rates --------------------------------------------------------- */

/* A layer's timeCodesPerSecond as OpenUSD computes it: the authored
 * `timeCodesPerSecond`, else the authored `framesPerSecond`, else 24. */
double ub_layer_tcps(const ub_layer *layer);

/* Whether the layer authors timeCodesPerSecond / framesPerSecond (both
 * read from its metadata; NULL-safe: false). */
bool ub_layer_has_tcps(const ub_layer *layer);
bool ub_layer_has_fps(const ub_layer *layer);

/* Whether a rate (timeCodesPerSecond, framesPerSecond) can scale times:
 * finite, above 0, and with a finite inverse.  OpenUSD divides by it
 * unchecked. */
bool ub_rate_ok(double rate);

/* The message of tcps-invalid or fps-invalid, for a rate that is not
 * ub_rate_ok authored as `key`, into buf (n bytes); and their hint. */
void ub_rate_problem(char *buf, size_t n, const char *key, double rate);
extern const char ub_rate_hint[];

/* An arc from a layer at one rate to a layer at another scales times by
 * their ratio, which is of no use when either rate is not ub_rate_ok:
 * report that of `layer` (its tcps-invalid, at the field it comes from)
 * as an error, once however many arcs run into it. */
void ub_layer_report_rate(const ub_layer *layer, ub_diags *diags);

/* The cumulative offset of a sublayer, as PcpLayerStack computes it:
 *   1. the authored offset is validated; if ub_offset_status_ignored(),
 *      the identity is used instead;
 *   2. its scale is multiplied by parent_tcps / sub_tcps when they differ
 *      (a 12 tcps layer under a 24 tcps one runs twice as long);
 *   3. the result is composed under `parent` (the naming layer's own
 *      cumulative offset): compose(parent, scaled).
 * So for a root at 24 tcps naming an 8 tcps layer with offset 10, scale 2,
 * time 10 lands at 10 * 3 * 2 + 10 = 70.  *status (optional) receives the
 * authored offset's status so the caller can report it. */
ub_offset ub_sublayer_offset(ub_offset parent, ub_offset authored,
                             double parent_tcps, double sub_tcps,
                             ub_offset_status *status);

/* --- remapping values ---------------------------------------------------- */

/* Map the time-valued parts of v through o, IN PLACE (clone into the
 * output arena first; v's storage must be writable): timecode and
 * timecode[] data, and timecode / timecode[] entries at any depth of a
 * dictionary (including dictionary[] elements).  Nothing else is touched:
 * a double holding a frame number stays as it is.  Returns whether
 * anything was changed. */
bool ub_value_apply_offset(ub_value *v, ub_offset o);

/* Map time samples through o, IN PLACE (s->v and its values must be the
 * caller's own copy): every sample time is mapped and timecode-valued
 * sample values are remapped too.  Samples stay sorted (a negative scale
 * reverses them).  When two samples land on the same time after mapping,
 * the one with the greater original time wins, as in OpenUSD (its map
 * assigns in original order).  `a` is unused (kept for the API); returns
 * 0. */
int ub_samples_apply_offset(ub_arena *a, ub_samples *s, ub_offset o);

#endif
