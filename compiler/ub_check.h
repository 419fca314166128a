/*
 * ub_check — the validation pass behind `usdbake check`.
 *
 * Starting from root layers, the pass reads (through ub_loader) every
 * layer the roots reach: their whole sublayer stacks, the layers named by
 * references and payloads, and the clip and manifest layers named by value
 * clip metadata (template asset paths expanded over their frame range).
 * Composition is not needed: each check looks at authored scene
 * description, so a broken shot is diagnosed even when it cannot be
 * composed.  Time mapping comes from ub_time, the one implementation
 * shared with flattening, so check and flatten never disagree about what
 * an offset means.
 *
 * Every finding is a ub_diag with a stable check ID (doc/checks.md lists
 * them with an example, why it matters and the fix), the location of the
 * offending text, the quoted source line and a hint.  The pass never
 * prints.
 */
#ifndef UB_CHECK_H
#define UB_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "ub_diag.h"
#include "ub_loader.h"

/* The checks, in the order doc/checks.md lists them. */
typedef enum ub_check_kind {
    /* layer offsets (subLayers, references, payloads) */
    UB_CHK_OFFSET_SCALE_ZERO,
    UB_CHK_OFFSET_SCALE_NEGATIVE,
    UB_CHK_OFFSET_NOT_FINITE,
    /* time metadata */
    UB_CHK_TCPS_INVALID,
    UB_CHK_FPS_INVALID,
    UB_CHK_TIME_RANGE_REVERSED,
    UB_CHK_TIME_NOT_FINITE,
    UB_CHK_TCPS_MISMATCH,
    UB_CHK_TIME_FRACTIONAL,
    /* structure */
    UB_CHK_SUBLAYER_MISSING,
    UB_CHK_REFERENCE_MISSING,
    UB_CHK_PAYLOAD_MISSING,
    UB_CHK_SUBLAYER_CYCLE,
    UB_CHK_ARC_CYCLE,
    UB_CHK_DEFAULT_PRIM_MISSING,
    UB_CHK_REFERENCE_NO_DEFAULT_PRIM,
    UB_CHK_REFERENCE_PRIM_MISSING,
    /* value clips */
    UB_CHK_CLIP_ASSET_MISSING,
    UB_CHK_CLIP_MANIFEST_MISSING,
    UB_CHK_CLIP_ACTIVE_INDEX,
    UB_CHK_CLIP_ACTIVE_DUPLICATE,
    UB_CHK_CLIP_TIMES_TRIPLE,
    UB_CHK_CLIP_TEMPLATE_OFFSET,
    UB_CHK_CLIP_TEMPLATE_PATTERN,
    UB_CHK_CLIP_TEMPLATE_STRIDE,
    UB_CHK_CLIP_TEMPLATE_RANGE,
    UB_CHK_CLIP_TEMPLATE_GAP,
    UB_CHK_CLIP_EXPLICIT_AND_TEMPLATE,
    UB_CHK_CLIP_PRIM_PATH,
    UB_CHK_CLIP_INCOMPLETE,
    UB_CHK_CLIP_FIELD_TYPE,
    UB_CHK_CLIP_NO_MANIFEST,
    UB_CHK_CLIP_TCPS_MISMATCH,
    UB_CHK_CLIP_PRIM_MISSING,
    UB_CHK_CLIP_FIELD_UNKNOWN,
    UB_CHK_CLIP_UNSORTED,
    UB_CHK_COUNT
} ub_check_kind;

typedef struct ub_check_info {
    ub_check_kind kind;
    const char *id;       /* stable: "offset-scale-zero" */
    ub_severity severity; /* UB_ERROR or UB_WARNING (default-prim-missing
                             is a warning where nothing uses the prim) */
    const char *summary;  /* one line, for --list */
} ub_check_info;

const ub_check_info *ub_check_info_get(ub_check_kind kind);
/* The check named id, or NULL when there is none. */
const ub_check_info *ub_check_find(const char *id);

typedef struct ub_check_options {
    bool werror;                   /* report warnings as errors */
    bool disabled[UB_CHK_COUNT];   /* silenced checks */
} ub_check_options;

/* Check the layers reached from roots[0..n_roots) (asset paths as given on
 * the command line, resolved from the current directory).  t is the string
 * table ld was created with.  Layers are read
 * through ld, which reports its own reading and parsing errors to the
 * diagnostics it was created with; the checks' findings go to diags (which
 * may be the same).  opt may be NULL (every check, default severities).
 * Returns 0, or -1 when out of memory (after adding a diagnostic). */
int ub_check_run(ub_loader *ld, ub_strtab *t, const char *const *roots,
                 size_t n_roots, const ub_check_options *opt,
                 ub_diags *diags);

#endif
