/*
 * ub_clips — value clips, as OpenUSD 24.08 resolves them (Usd_ClipSet,
 * Usd_Clip): which clip is active at a stage time, how stage times map to
 * a clip's own times (the `times` mapping, its jump discontinuities), which
 * time samples a clip set has for an attribute, and the value at each.
 *
 * Composing the clip metadata (which prim and layer a set is anchored to,
 * dictionaries merged over layers and arcs, layer offsets applied to
 * `active` and `times`) is the composer's job (ub_compose); this module
 * takes one composed clip-info dictionary.
 */
#ifndef UB_CLIPS_H
#define UB_CLIPS_H

#include <stdbool.h>
#include <stdint.h>

#include "ub_diag.h"
#include "ub_layer.h"
#include "ub_loader.h"
#include "ub_value.h"

/* One entry of `times`: stage time -> clip time.  A jump discontinuity
 * (two entries with one stage time) is kept as OpenUSD does: the first
 * entry moved one SafeStep earlier and flagged. */
typedef struct ub_clip_tmap {
    double ext, in;
    bool jump;
} ub_clip_tmap;

typedef struct ub_clip {
    double start, end;     /* active over [start, end) in stage time */
    double authored_start; /* as written in `active` */
    ub_layer *layer;       /* NULL when the asset could not be read */
} ub_clip;

typedef struct ub_clip_set {
    const char *name;
    /* where the set is anchored (filled in by the composer) */
    const void *anchor_stack;
    const char *source_prim_path;
    uint32_t source_li;
    const ub_layer *source_layer;
    const char *clip_prim_path;
    uint32_t n_clips;
    ub_clip *clips;        /* by start time */
    uint32_t n_times;      /* with a sentinel copy at each end, or 0 */
    ub_clip_tmap *times;
    ub_layer *manifest;    /* NULL: generated from the clips */
    bool interpolate_missing;
} ub_clip_set;

/* OpenUSD's UsdTimeCode::SafeStep(): what a jump moves a time by. */
#define UB_CLIP_SAFE_STEP (2.220446049250313e-16 * 1e6 * 10.0 * 2.0)

/* Set up cs from a composed clip-info dictionary (assetPaths, active,
 * times, primPath, manifestAssetPath, interpolateMissingClipValues, or the
 * template keys), reading clip layers through ld relative to
 * source_layer.  `offset` maps the source layer's times to stage times: it
 * is applied to the active and times of a template-derived set (explicit
 * ones arrive mapped).  Returns 1 when the set is usable, 0 when it is
 * incomplete or invalid (then a warning naming the problem is in diags,
 * as OpenUSD drops such a set), -1 when out of memory. */
int ub_clip_set_init(ub_clip_set *cs, ub_loader *ld, const char *name,
                     const ub_dict *info, const ub_layer *source_layer,
                     ub_offset offset, ub_loc loc, ub_diags *diags);
void ub_clip_set_free(ub_clip_set *cs);

/* Stage time -> the clip's own time, and the index of the clip active at
 * a stage time. */
double ub_clip_set_to_internal(const ub_clip_set *cs, double ext);
uint32_t ub_clip_set_active(const ub_clip_set *cs, double t);

/* Whether the set provides values for attribute `attr` of the prim at
 * `clip_prim` (a path in the clips' namespace): the manifest (given or
 * generated) declares it varying. */
bool ub_clip_set_has_attr(const ub_clip_set *cs, const char *clip_prim,
                          const char *attr);

/* The attribute's time samples in stage time, as UsdStage::Flatten bakes
 * them: every clip's samples mapped out through `times` (within the time
 * it is active), every `times` entry and every clip's start; the value at
 * each from the active clip (interpolated in the clip where it has no
 * sample there; the manifest's default, else a block, where the clip has
 * none).  (*from)[i] is the layer sample i's value came from (NULL for a
 * block), for anchoring asset paths.  Returns 0, or -1 when out of
 * memory. */
int ub_clip_set_samples(const ub_clip_set *cs, const char *clip_prim,
                        const char *attr, ub_arena *a, ub_samples *out,
                        const ub_layer ***from);

#endif
