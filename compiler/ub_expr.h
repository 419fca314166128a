/*
 * ub_expr — asset-path variable expressions (`"./${NAME}.usda"`), the
 * subset OpenUSD's SdfVariableExpression offers that asset paths use:
 * a quoted string with ${VAR} substitutions, or a bare ${VAR}.  Variables
 * come from the root layer's `expressionVariables` (string values); one
 * not defined stands for its name inside a string, and is an error bare.
 * Functions (if, and, contains, ...) are not evaluated: the caller is told
 * so and keeps the path as written.
 */
#ifndef UB_EXPR_H
#define UB_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_layer.h"
#include "ub_value.h"

/* Whether an asset path is an expression (enclosed in backquotes). */
bool ub_expr_is(const char *asset);

typedef enum ub_expr_status {
    UB_EXPR_OK = 0,
    UB_EXPR_SYNTAX,      /* malformed */
    UB_EXPR_UNDEFINED,   /* names a variable that is not defined */
    UB_EXPR_NOT_STRING,  /* a variable that is not a string */
    UB_EXPR_UNSUPPORTED, /* a function or literal usdbake does not evaluate */
    UB_EXPR_CONTROL,     /* the result holds a control character (a
                            variable's newline): no asset path can */
    UB_EXPR_NOMEM,
} ub_expr_status;

/* Evaluate expression `asset` (with its backquotes) against vars (a
 * dictionary; NULL: none).  On UB_EXPR_OK *out is the interned result,
 * and *what (when given) names a variable vars lacks that a quoted string
 * used by its name, as OpenUSD does, or is NULL.  On failure, *what names
 * the variable or construct at fault, interned. */
ub_expr_status ub_expr_eval(ub_strtab *t, const char *asset,
                            const ub_dict *vars, const char **out,
                            const char **what);

/* The warning for such a variable (ub_expr_eval's *what on success):
 * expression expr gave result. */
void ub_expr_warn_undefined(ub_diags *diags, ub_loc loc, const ub_layer *l,
                            const char *expr, const char *result,
                            const char *var);

const char *ub_expr_status_text(ub_expr_status s);

#endif
