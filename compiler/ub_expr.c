#include "ub_expr.h"

#include <stdlib.h>
#include <string.h>

#include "ub_buf.h"
#include "ub_format.h"
#include "ub_ident.h"

bool ub_expr_is(const char *asset)
{
    size_t n = ub_str_len(asset);
    return n >= 2 && asset[0] == '`' && asset[n - 1] == '`';
}

const char *ub_expr_status_text(ub_expr_status s)
{
    switch (s) {
    case UB_EXPR_OK:
        return "ok";
    case UB_EXPR_SYNTAX:
        return "malformed expression";
    case UB_EXPR_UNDEFINED:
        return "undefined variable";
    case UB_EXPR_NOT_STRING:
        return "variable is not a string";
    case UB_EXPR_UNSUPPORTED:
        return "expression functions are not evaluated by usdbake";
    case UB_EXPR_CONTROL:
        return "its result holds a control character, which no asset path "
               "may (OpenUSD cannot write it either)";
    case UB_EXPR_NOMEM:
        return "out of memory";
    }
    return "invalid";
}

static bool ub_ident_char(char c, bool first)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (!first && c >= '0' && c <= '9');
}

/* ${NAME} at s[*i] (just after "${"): appends the value to b.  Inside a
 * quoted string an undefined variable stands for its own name, as in
 * OpenUSD ("./${B}.usda" is "./B.usda"); *undefined then names it. */
static ub_expr_status ub_expr_var(ub_strtab *t, const char *s, size_t n,
                                  size_t *i, const ub_dict *vars, ub_buf *b,
                                  bool quoted, const char **what,
                                  const char **undefined)
{
    size_t start = *i;
    while (*i < n && ub_ident_char(s[*i], *i == start))
        (*i)++;
    if (*i == start || *i >= n || s[*i] != '}')
        return UB_EXPR_SYNTAX;
    const char *name = ub_intern(t, s + start, *i - start);
    (*i)++;
    if (!name)
        return UB_EXPR_NOMEM;
    const ub_dict_entry *e = vars ? ub_dict_find(vars, name) : NULL;
    if (what)
        *what = name;
    if (!e && quoted) {
        if (!*undefined)
            *undefined = name;
        ub_buf_puts(b, name);
        return UB_EXPR_OK;
    }
    if (!e)
        return UB_EXPR_UNDEFINED;
    const ub_value *v = &e->value;
    if (v->kind != UB_V_DATA || v->is_array || v->count != 1 ||
        !ub_value_type(v) ||
        (v->type_id != UB_TY_STRING && v->type_id != UB_TY_TOKEN))
        return UB_EXPR_NOT_STRING;
    ub_buf_puts(b, ub_value_str(v, 0));
    return UB_EXPR_OK;
}

/* Text of a quoted string, unescaped (ub_unescape), onto b. */
static void ub_expr_put_run(ub_buf *b, const char *s, size_t n)
{
    char *w = n ? ub_buf_reserve(b, n) : NULL;
    if (w)
        b->len += ub_unescape(w, s, n);
}

ub_expr_status ub_expr_eval(ub_strtab *t, const char *asset,
                            const ub_dict *vars, const char **out,
                            const char **what)
{
    if (!ub_expr_is(asset))
        return UB_EXPR_SYNTAX;
    const char *s = asset + 1;
    size_t n = ub_str_len(asset) - 2, i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    while (n > i && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    ub_buf b;
    ub_buf_init(&b);
    ub_expr_status st = UB_EXPR_OK;
    const char *undefined = NULL;
    if (i + 1 < n && s[i] == '$' && s[i + 1] == '{') {
        i += 2;
        st = ub_expr_var(t, s, n, &i, vars, &b, false, what, &undefined);
        if (st == UB_EXPR_OK && i != n)
            st = UB_EXPR_UNSUPPORTED;
    } else if (i < n && (s[i] == '"' || s[i] == '\'')) {
        /* As OpenUSD reads it: the grammar takes \` \$ \\ and \<quote>
         * as pairs (so they neither start a variable nor end the string)
         * and any other backslash as a character; each run of text
         * between variables is then unescaped as C would (TfEscapeString:
         * "\q" is "q", "\n" a newline). */
        char q = s[i++];
        bool closed = false;
        size_t run = i; /* the text not yet copied */
        while (st == UB_EXPR_OK && i < n) {
            char c = s[i];
            if (c == q) {
                ub_expr_put_run(&b, s + run, i - run);
                closed = true;
                i++;
                break;
            }
            if (c == '\\' && i + 1 < n &&
                (s[i + 1] == '`' || s[i + 1] == '$' || s[i + 1] == '\\' ||
                 s[i + 1] == q)) {
                i += 2;
            } else if (c == '$' && i + 1 < n && s[i + 1] == '{') {
                ub_expr_put_run(&b, s + run, i - run);
                i += 2;
                st = ub_expr_var(t, s, n, &i, vars, &b, true, what,
                                 &undefined);
                run = i;
            } else {
                i++;
            }
        }
        if (st == UB_EXPR_OK && (!closed || i != n))
            st = closed ? UB_EXPR_UNSUPPORTED : UB_EXPR_SYNTAX;
    } else {
        st = UB_EXPR_UNSUPPORTED;
    }
    if (st == UB_EXPR_OK && b.failed)
        st = UB_EXPR_NOMEM;
    if (st == UB_EXPR_OK && b.len && ub_ident_asset_problem(b.data, b.len))
        st = UB_EXPR_CONTROL; /* (or not UTF-8, which text cannot give) */
    if (st == UB_EXPR_OK) {
        *out = ub_intern(t, b.len ? b.data : "", b.len);
        if (!*out)
            st = UB_EXPR_NOMEM;
    }
    if (st == UB_EXPR_OK && what)
        *what = undefined;
    ub_buf_free(&b);
    return st;
}

void ub_expr_warn_undefined(ub_diags *diags, ub_loc loc, const ub_layer *l,
                            const char *expr, const char *result,
                            const char *var)
{
    ub_diag *d = ub_diag_add(diags, UB_WARNING, loc, "expression-undefined",
                             l ? l->source : NULL, l ? l->source_len : 0,
                             "expression %s names variable '%s', which "
                             "expressionVariables does not define: it "
                             "stands for its own name, giving '%s', as in "
                             "OpenUSD",
                             expr, var, result);
    ub_diag_set_hint(diags, d, "define the variable in the root layer's "
                               "expressionVariables");
}
