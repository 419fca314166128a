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

#include "ub_buf.h"
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
    const char *asset;     /* as authored (resolved from the set's source
                              layer); NULL when no such file exists */
} ub_clip;

/* An attribute the clips declare (the manifest generated when none is
 * given): the first clip with samples for it says whether it varies. */
typedef struct ub_clip_decl {
    const char *prim, *attr; /* interned */
    bool varying;
    uint32_t seq;            /* the order found in */
} ub_clip_decl;

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
    /* times[].ext never decreases, so lookups may bisect (a jump's
     * SafeStep can undo that only for stage times closer than it) */
    bool times_sorted;
    ub_layer *manifest;    /* NULL: generated from the clips (decls) */
    uint32_t n_decls;      /* sorted by (prim, attr) pointers */
    ub_clip_decl *decls;
    bool interpolate_missing;
    ub_loc loc;            /* where the clip metadata is authored */
    uint32_t bake_id;      /* its number in a ub_clip_bake, plus one */
    uint32_t *refs;        /* copies sharing clips, times and decls */
} ub_clip_set;

/* The most frames a clip template may step through.  OpenUSD steps
 * through all of them, whatever their number (an endless loop for an
 * infinite templateEndTime); here a template past this is refused, by
 * check with an error and by the bake with a warning. */
#define UB_CLIP_TEMPLATE_MAX_FRAMES 1000000

/* Frame numbers of template file names are ints (as OpenUSD's are): a
 * template time must lie within this of 0. */
#define UB_CLIP_TEMPLATE_MAX_TIME 2e9

/* OpenUSD's UsdTimeCode::SafeStep(): what a jump moves a time by. */
#define UB_CLIP_SAFE_STEP (2.220446049250313e-16 * 1e6 * 10.0 * 2.0)

/* Whether a layer's clip-info dictionary anchors its clip set there (as
 * Usd anchors it at the strongest site with asset paths): it holds
 * `asset[] assetPaths` or `string templateAssetPath`, of those types. */
bool ub_clip_info_anchors(const ub_dict *info);

/* Set up cs from a composed clip-info dictionary (assetPaths, active,
 * times, primPath, manifestAssetPath, interpolateMissingClipValues, or the
 * template keys), resolving clip layers through ld relative to
 * source_layer (without a manifest, each clip is read once, transiently,
 * for the attributes it declares).  `offset` maps the source layer's times to stage times: it
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

/* Calls fn(ctx, name) for each attribute ub_clip_set_has_attr says the set
 * provides for the prim at `clip_prim`, in the manifest's order (or the
 * generated one's).  Stops early, returning fn's result, when that is not
 * 0; else returns 0. */
int ub_clip_set_each_attr(const ub_clip_set *cs, const char *clip_prim,
                          int (*fn)(void *ctx, const char *name), void *ctx);

/* --- baking: every clip read once, one at a time ------------------------ */

/* A bake collects the clip sets of a stage and the attributes whose
 * samples come from them, then reads each clip layer once (transiently:
 * it is released when its samples are taken) and hands each attribute its
 * samples clip by clip.  The samples are UsdStage::Flatten's: every clip's
 * samples mapped out through `times` (within the time it is active), every
 * `times` entry and every clip's start; the value at each from the active
 * clip (interpolated in the clip where it has no sample there; the
 * manifest's default, else a block, where the clip has none). */
typedef struct ub_clip_bake ub_clip_bake;

/* threads: how many threads read clips (0: as many as the process may
 * run -- its CPU affinity, capped by a cgroup CPU quota); the result is
 * the same whatever the number.  diags (may be NULL) gets the bake's
 * warnings. */
ub_clip_bake *ub_clip_bake_new(ub_loader *ld, unsigned threads,
                               ub_diags *diags);
void ub_clip_bake_free(ub_clip_bake *b);
/* Keep (a share of) a set initialised by ub_clip_set_init: its clips are
 * read by the bake even when no attribute takes samples from them, so a
 * broken clip is reported as when clips were read eagerly.  Returns 0 or
 * -1 (out of memory). */
int ub_clip_bake_keep(ub_clip_bake *b, ub_clip_set *cs);
/* Attribute `attr` of clip prim `clip_prim` of a kept set gives `out` its
 * samples; depth is the depth of out's prim (1 for a root prim), for a
 * sink that writes text.  out's samples are marked authored here (a is
 * the arena out lives in). */
int ub_clip_bake_defer(ub_clip_bake *b, const ub_clip_set *cs,
                       const char *clip_prim, const char *attr, ub_prop *out,
                       ub_arena *a, unsigned depth);

/* Called for each value taken from a layer (asset paths are anchored to
 * `from`, the clip or manifest layer) before it goes to the sink. */
typedef void (*ub_clip_fixup_fn)(void *ctx, const ub_clip_set *cs,
                                 const ub_layer *from, ub_value *v);
/* What a sink keeps of one part besides its text. */
typedef struct ub_clip_part {
    ub_prop *out;
    unsigned depth; /* of out's prim */
    double t0;      /* the part's first time */
    size_t len;     /* bytes of its text */
} ub_clip_part;

/* Takes an attribute's samples one part at a time: the samples of one
 * clip, in time order, all later or all earlier than another part's
 * (parts may come in any order).  format writes a part as text into
 * `text`; the bake calls it on any of its threads, several at once, so it
 * may change nothing else.  keep then receives a clip layer's parts with
 * their texts one after the other in `text`, on the calling thread, in an
 * order that does not depend on the number of threads.  Both return 0,
 * or -1 to stop the bake. */
typedef struct ub_clip_sink {
    int (*format)(const void *ctx, unsigned depth, const ub_samples *part,
                  ub_buf *text);
    int (*keep)(void *ctx, const ub_clip_part *parts, size_t n,
                const char *text, size_t len);
    void *ctx;
} ub_clip_sink;
/* Run the bake.  sink NULL: the samples are copied into each out prop,
 * allocated in `a` (the output layer's arena).  Errors reading clips go to
 * the loader's diagnostics.  Returns 0, or -1 when out of memory or when
 * the sink failed. */
int ub_clip_bake_run(ub_clip_bake *b, ub_arena *a, ub_clip_fixup_fn fixup,
                     void *fixup_ctx, const ub_clip_sink *sink);

#endif
