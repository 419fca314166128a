/*
 * ub_predexpr — the predicates of pathExpression values ("{isa:Mesh}"),
 * SdfPredicateExpression as OpenUSD 24.08 reads and writes them: function
 * calls (bare "f", colon "f:1,a", parenthesised "f(1, k=2)") joined by
 * "not", "and", "or" and juxtaposition (an implied and, binding tighter
 * than "and").  OpenUSD keeps a predicate parsed, so it writes it back in
 * its own spelling: arguments typed (integer, double, bool written 1/0,
 * string quoted as usda quotes), one space around operators, parentheses
 * only where precedence needs them.
 */
#ifndef UB_PREDEXPR_H
#define UB_PREDEXPR_H

#include <stddef.h>

#include "ub_pathexpr.h"

/* The canonical text of the predicate text[0..n) (what is between the
 * braces, blanks around it allowed) in *out, malloc'd.  UB_PATHEXPR_SYNTAX
 * when OpenUSD's grammar does not read it all. */
ub_pathexpr_status ub_predexpr_canon(const char *text, size_t n, char **out);

#endif
