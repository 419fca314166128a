/*
 * ub_stitch — joining layers: a file-per-frame simulation stitched into a
 * value-clip set (OpenUSD's usdstitchclips, UsdUtilsStitchClips), the
 * manifest of a clip set (UsdClipsAPI::GenerateClipManifestFromLayers),
 * and several layers merged into one (usdstitch, UsdUtilsStitchLayers).
 *
 * Inputs are read by worker threads (as many as the CPUs the process may
 * use) through a loader each, so every format the loader reads is
 * accepted; they are merged one by one, in the order given, on the
 * calling thread, and each input is freed once merged: memory holds the
 * output plus a few inputs in flight, and the output does not depend on
 * the number of threads.
 *
 * The merge is UsdUtilsStitchLayers': the first input is strongest; a
 * field missing in the stronger layer is taken from the weaker one;
 * dictionaries merge key by key and list ops compose; time samples are
 * the union (the stronger sample wins at one time); startTimeCode is the
 * minimum, endTimeCode the maximum; a weaker `def` or `class` replaces a
 * stronger `over`; children and properties are the stronger layer's in its
 * order followed by the weaker layer's new ones.
 */
#ifndef UB_STITCH_H
#define UB_STITCH_H

#include <stdbool.h>
#include <stddef.h>

#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_layer.h"

typedef struct ub_stitch_opts {
    const char *clip_path;   /* the clip prim, absolute ("/World/model") */
    const char *clip_set;    /* NULL: "default" */
    const char *out_path;    /* the result layer's file: names the topology
                                and manifest layers and anchors the asset
                                paths written */
    /* Explicit metadata: the result's start/endTimeCode (default: the
     * first and last clip time). */
    bool has_start, has_end;
    double start, end;
    /* Template metadata instead of explicit (templateAssetPath etc.);
     * start, end and stride are then required. */
    const char *template_path;
    double stride;
    bool has_active_offset;
    double active_offset;
    bool interpolate_missing; /* interpolateMissingClipValues = true */
    const char *comment;      /* the result layer's comment, or NULL */
    unsigned threads;         /* 0: the CPUs this process may use */
} ub_stitch_opts;

/* The three layers usdstitchclips writes. */
typedef struct ub_stitch_out {
    ub_layer *result;   /* clip metadata over the topology (out_path) */
    ub_layer *topology; /* every frame's specs without time samples */
    ub_layer *manifest; /* the attributes the clips animate */
    const char *topology_path, *manifest_path; /* file names (interned) */
} ub_stitch_out;

/* Stitch frames[0..n) into a clip set at opts->clip_path.  A frame's time
 * is its startTimeCode/endTimeCode (or startFrame/endFrame), as OpenUSD
 * reads it; a frame with neither takes the last number in its file name
 * ("splash.0101.usda": 101) where OpenUSD would silently use 0, and is an
 * error when its name has none.  Errors (a frame that does not load, an
 * attribute whose type differs between frames, a clip path no frame has, a
 * frame without a time) go to diags; then returns -1 and out is empty.
 * Returns 0 with out filled (free with ub_stitch_out_free). */
int ub_stitch_clips(ub_strtab *t, const char *const *frames, size_t n,
                    const ub_stitch_opts *opts, ub_stitch_out *out,
                    ub_diags *diags);
void ub_stitch_out_free(ub_stitch_out *out);

/* The manifest of clips[0..n) for the clip prim clip_path, as
 * UsdClipsAPI::GenerateClipManifestFromLayers makes it: every attribute
 * with time samples in any clip, declared with its type and variability
 * (over prims, no values).  write_blocks: a value block at the start time
 * of every clip that has no samples for an attribute (24.08's
 * writeBlocksForClipsWithMissingValues).  NULL after errors in diags. */
ub_layer *ub_stitch_manifest(ub_strtab *t, const char *const *clips, size_t n,
                             const char *clip_path, bool write_blocks,
                             const char *out_path, unsigned threads,
                             ub_diags *diags);

/* layers[0..n) merged into one, the first strongest, as usdstitch does.
 * NULL after errors in diags. */
ub_layer *ub_stitch_layers(ub_strtab *t, const char *const *layers, size_t n,
                           const char *out_path, unsigned threads,
                           ub_diags *diags);

/* Merge src under dst (dst stronger), as UsdUtilsStitchLayers does; with
 * samples false, time samples are left out (a clip set's topology).
 * Values are copied into dst's arena, so src may be freed afterwards.
 * With check_types, an attribute whose type name differs between dst and
 * src is an error (located in src).  Returns 0, or -1 after an error or
 * when out of memory. */
int ub_stitch_merge(ub_layer *dst, const ub_layer *src, bool samples,
                    bool check_types, ub_diags *diags);

#endif
