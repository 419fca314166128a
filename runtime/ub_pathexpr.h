/*
 * ub_pathexpr — pathExpression values (SdfPathExpression) as OpenUSD
 * 24.08 keeps them: parsed, their relative paths anchored, their paths
 * mapped through composition, and written back in its canonical text
 * (operators " + ", " & ", " - ", " ", "~"; parentheses only where
 * precedence needs them; a union with "//" is "//", and so on).
 *
 * Predicates ("{isa:Mesh}") are read and rewritten by ub_predexpr.
 */
#ifndef UB_PATHEXPR_H
#define UB_PATHEXPR_H

#include "ub_arena.h"
#include "ub_intern.h"
#include "ub_value.h"

/* Maps a path (a pattern's prefix or an expression reference's path; may
 * be a property path, or relative when it was never anchored) into the
 * output's namespace: the mapped path, or NULL when it falls outside (the
 * pattern then matches nothing, as UsdStage makes it). */
typedef const char *(*ub_pathexpr_map)(void *ud, const char *path);

typedef enum ub_pathexpr_status {
    UB_PATHEXPR_OK = 0,
    UB_PATHEXPR_SYNTAX,  /* not a path expression: keep the text */
    UB_PATHEXPR_NOMEM,
} ub_pathexpr_status;

/* The canonical text of expression `text` in *out (malloc'd), its
 * relative paths made absolute against prim path `anchor` when anchor is
 * not NULL (SdfPathExpression::MakeAbsolute, as the text reader does for
 * a default value; the anchor may hold variant selections, a trailing one
 * is dropped as SdfPath::GetPrimPath drops it), then every pattern not
 * starting with "//" and every reference path mapped through `map` when
 * it is not NULL.  Text to be anchored or mapped is text this reader
 * made: its paths may hold the variant selections anchoring put there,
 * and its predicates are kept as they are, not read again. */
ub_pathexpr_status ub_pathexpr_rewrite(const char *text, const char *anchor,
                                       ub_pathexpr_map map, void *ud,
                                       char **out);

/* SdfPathExpression::ComposeOver: the canonical text, in *out (malloc'd),
 * of `stronger` with each reference to the weaker expression ("%_")
 * replaced by `weaker`, or of `weaker` when `stronger` is empty.  Both
 * are text this reader made (anchored, mapped). */
ub_pathexpr_status ub_pathexpr_compose(const char *stronger,
                                       const char *weaker, char **out);

/* Each pathExpression of v (a value of that type; any other passes) made
 * its canonical text, copied to arena a and interned in t, as the binary
 * readers keep what they read (OpenUSD writes that text back).  On
 * UB_PATHEXPR_SYNTAX, *bad is the text that does not parse and v is left
 * as it was. */
ub_pathexpr_status ub_pathexpr_canon_value(ub_arena *a, ub_strtab *t,
                                           ub_value *v, const char **bad);

#endif
