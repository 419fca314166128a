/*
 * ub_stack — layer stacks: the root layer and its subLayers, recursively,
 * each with its cumulative offset into the root's time frame; and
 * flattening a stack into one layer as OpenUSD's
 * `usdcat --flattenLayerStack` (UsdFlattenLayerStack) does.
 */
#ifndef UB_STACK_H
#define UB_STACK_H

#include <stdbool.h>
#include <stddef.h>

#include "ub_diag.h"
#include "ub_layer.h"
#include "ub_loader.h"
#include "ub_metadef.h"
#include "ub_value.h"

/* The layers of a stack, strongest first (the root, then each sublayer
 * followed by its own sublayers, depth first, as PcpLayerStack orders
 * them).  A layer may appear more than once (named twice); cycles are cut
 * and reported. */
typedef struct ub_stack {
    size_t n, cap;
    ub_layer **layers;   /* owned by the loader */
    ub_offset *offsets;  /* cumulative: layer time -> root time */
    /* Errors reported while building that OpenUSD works around (a missing
     * sublayer, a cycle, an invalid offset): the stack is still usable,
     * as OpenUSD's is.  Other errors (a layer that does not parse) are
     * not counted here. */
    size_t n_recovered;
    /* metadata fields plugins declare (the loader's), kept by flattening */
    const ub_meta_field *fields;
    size_t n_fields;
    ub_loader *ld; /* what read the layers (and anchors their asset
                      paths) */
} ub_stack;

/* Build the stack rooted at `root` (already loaded through ld), loading
 * sublayers through ld.  Missing sublayers, cycles and invalid offsets are
 * reported in diags as errors and counted in n_recovered; the stack is
 * still built from what could be loaded (as OpenUSD does), so callers
 * decide whether they are fatal.  A negative offset scale is a warning
 * (OpenUSD applies it).  Returns 0, or -1 when out of memory. */
int ub_stack_build(ub_stack *s, ub_loader *ld, ub_layer *root,
                   ub_diags *diags);
void ub_stack_free(ub_stack *s);

/* Flatten the stack into a new layer (interned in the root's table) whose
 * path is out_path (used only as its identity; asset paths in the output
 * are anchored to the layers that named them, as OpenUSD does).  Returns
 * NULL when out of memory; warnings about ignored specs go to diags.
 * What the merge does not change -- values (numeric and token arrays,
 * list ops with nothing to fix, a sole spec's dictionaries), the field
 * lists and properties of specs only one layer has -- is shared with the
 * stack's layers instead of being copied: free the result before the
 * layers (the loader), and change neither while the other is in use.
 * The result keeps no name index (ub_layer_unindexed): a lookup by name
 * in it scans. */
ub_layer *ub_stack_flatten(const ub_stack *s, const char *out_path,
                           ub_diags *diags);

/* Merge the weaker opinion *weak of a metadata field under the stronger
 * *strong as flattening does: an empty strong takes a copy of weak;
 * dictionaries merge key by key (the stronger key wins); list ops compose
 * (added items become appended ones, reorders are dropped, as OpenUSD
 * does when two list ops do not compose as they are); anything else: the
 * stronger opinion stands.  *strong must live in arena a (it may be
 * changed in place); what is taken from weak is copied into a.  Returns 0,
 * or -1 when out of memory. */
int ub_stack_merge_opinion(ub_arena *a, ub_value *strong,
                           const ub_value *weak);

/* Whether OpenUSD (with its standard schema plugins) registers metadata
 * field `key` for a spec of this kind; flattening drops the others, as
 * OpenUSD does. */
bool ub_stack_field_registered(ub_spec_kind kind, const char *key);
/* The same, fields[0..n) (plugins' SdfMetadata) registered as well. */
bool ub_stack_field_registered_with(const ub_meta_field *fields, size_t n,
                                    ub_spec_kind kind, const char *key);

#endif
