/*
 * ub_compose — stage composition and flattening, as OpenUSD's
 * `usdcat --flatten` (UsdStage::Flatten) does.
 *
 * For every prim of the composed stage a prim index is built: a graph of
 * nodes, each a site (a layer stack and a prim path in it) reached through
 * an arc (root, inherit, variant, reference, payload, specialize), with the
 * path mapping from its namespace to the stage's and its time offset.  Its
 * opinions, strongest first, are each node's layers in strength order (the
 * LIVRPS order of Pcp); values, metadata and property lists are resolved
 * from them and written into one new layer.
 *
 * Not supported (reported as errors, never silently ignored): relocates
 * authored on prims (the legacy form; layer relocates are composed).
 */
#ifndef UB_COMPOSE_H
#define UB_COMPOSE_H

#include <stdbool.h>

#include "ub_clips.h"
#include "ub_diag.h"
#include "ub_layer.h"
#include "ub_loader.h"
#include "ub_schema.h"
#include "ub_value.h"

/* Arc types, weakest last (LIVRPS without relocates). */
typedef enum ub_arc {
    UB_ARC_ROOT = 0,
    UB_ARC_INHERIT,
    UB_ARC_VARIANT,
    UB_ARC_REFERENCE,
    UB_ARC_PAYLOAD,
    UB_ARC_SPECIALIZE,
    UB_ARC_RELOCATE, /* ranks between variants and references */
} ub_arc;

/* --- paths (text, interned in t) ------------------------------------------ */

/* path with every "{set=sel}" removed: "/A{v=x}B" -> "/A/B". */
const char *ub_path_strip_variants(ub_strtab *t, const char *path);
/* Whether `path` is `prefix` or lies under it ("/A/B" under "/A"). */
bool ub_path_has_prefix(const char *path, const char *prefix);
/* `path` with its prefix `from` replaced by `to` (NULL when it has no such
 * prefix). */
const char *ub_path_replace_prefix(ub_strtab *t, const char *path,
                                   const char *from, const char *to);
/* The prim (or variant) at `path` in layer, or NULL: "/A{v=x}B". */
ub_prim *ub_layer_find_prim(const ub_layer *layer, const char *path);

/* --- flattening ----------------------------------------------------------- */

/* Compose the stage whose root layer is `root` (loaded through ld) and
 * flatten it into a new layer named out_path.  Returns NULL after
 * appending the reason to diags (a broken input, an unsupported construct)
 * or when out of memory (then diags has no new error).  Composition errors
 * OpenUSD works around (a missing reference, an arc cycle) are reported in
 * diags as errors and counted in *n_recovered. */
ub_layer *ub_compose_flatten(ub_loader *ld, ub_layer *root,
                             const char *out_path, ub_diags *diags,
                             size_t *n_recovered);
/* The same, with the schemas of `schemas` (OpenUSD's and a studio's own,
 * see ub_schema.h) deciding builtin properties' type names and
 * variability; ub_compose_flatten uses OpenUSD's alone. */
ub_layer *ub_compose_flatten_schemas(ub_loader *ld, ub_layer *root,
                                     const ub_schema_reg *schemas,
                                     const char *out_path, ub_diags *diags,
                                     size_t *n_recovered);
/* How ub_compose_flatten_to bakes value clips. */
typedef struct ub_flatten_opts {
    /* NULL: the samples go into the layer.  Otherwise they go to sink
     * (see ub_clip_bake_run) and the attributes they belong to are in the
     * layer with authored but empty time samples, for a writer to fill in
     * from what the sink kept (ub_usda_write_with). */
    const ub_clip_sink *sink;
    unsigned threads; /* threads reading clips; 0: as many as there are
                         CPUs for the process */
} ub_flatten_opts;

/* ub_compose_flatten with options (NULL: the defaults).  Clip layers are
 * read one at a time (a few ahead with threads) either way. */
ub_layer *ub_compose_flatten_to(ub_loader *ld, ub_layer *root,
                                const ub_schema_reg *schemas,
                                const char *out_path, ub_diags *diags,
                                size_t *n_recovered,
                                const ub_flatten_opts *opts);

#endif
