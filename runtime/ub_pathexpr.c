/*
 * ub_pathexpr — pathExpression values as SdfPathExpression keeps them
 * (see ub_pathexpr.h).  The grammar and the canonical text follow
 * OpenUSD 24.08's pathExpression.cpp, pathPattern.cpp and
 * pathPatternParser.h.  Nothing here recurses: a collection may list
 * thousands of paths, and groups may nest deep.
 */
#include "ub_pathexpr.h"

#include "ub_predexpr.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* SdfPathExpression::Op: a lower value binds tighter. */
enum { PE_COMPL, PE_IMPLIED, PE_UNION, PE_INTER, PE_DIFF };

enum { PE_NOTHING, PE_PATTERN, PE_REF, PE_UNARY, PE_BINARY };

typedef struct pe_comp {
    const char *text; /* "" and no predicate: a stretch ("//") */
    const char *pred; /* the predicate as written, or NULL */
} pe_comp;

/* Nodes are made bottom-up, so a node's operands come before it. */
typedef struct pe_node {
    int kind, op;
    int a, b;           /* operands */
    const char *prefix; /* pattern: a path; ref: a path or "" */
    const char *name;   /* ref: its name ("_": the weaker expression) */
    int comp0, ncomp;   /* pattern: components in pe.comps */
    bool is_prop;
} pe_node;

typedef struct pe {
    const char *s; /* the input */
    size_t i;
    pe_node *nodes;
    int n_nodes, cap_nodes;
    pe_comp *comps;
    int n_comps, cap_comps;
    char **strs; /* every string made here, freed at the end */
    int n_strs, cap_strs;
    bool nomem;
    /* Prim names may carry variant selections ("W{v=a}C"): text the
     * reader anchored inside a variant, read again to be mapped.  OpenUSD
     * keeps expressions parsed and never reads such text back; its text
     * reader refuses it, and so does ours. */
    bool selections;
    /* The input is text this reader wrote (to be anchored or mapped):
     * predicates are kept as they are.  Reading them again is not the
     * identity in OpenUSD (a -0.0 argument writes as "-0", which reads as
     * the integer 0), and OpenUSD anchors and maps the expression it
     * parsed once, never its text. */
    bool preds_canonical;
} pe;

/* --- storage -------------------------------------------------------------- */

static bool pe_grow(void **v, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return true;
    int c = *cap ? *cap * 2 : 16;
    while (c < need)
        c *= 2;
    void *nv = realloc(*v, (size_t)c * size);
    if (!nv)
        return false;
    *v = nv;
    *cap = c;
    return true;
}

static const char *pe_str(pe *p, const char *s, size_t n)
{
    if (!pe_grow((void **)&p->strs, &p->cap_strs, p->n_strs + 1,
                 sizeof *p->strs)) {
        p->nomem = true;
        return NULL;
    }
    char *r = malloc(n + 1);
    if (!r) {
        p->nomem = true;
        return NULL;
    }
    memcpy(r, s, n);
    r[n] = '\0';
    p->strs[p->n_strs++] = r;
    return r;
}

/* a + sep + b */
static const char *pe_cat(pe *p, const char *a, const char *sep,
                          const char *b)
{
    size_t an = strlen(a), sn = strlen(sep), bn = strlen(b);
    char *t = malloc(an + sn + bn + 1);
    if (!t) {
        p->nomem = true;
        return NULL;
    }
    memcpy(t, a, an);
    memcpy(t + an, sep, sn);
    memcpy(t + an + sn, b, bn + 1);
    const char *r = pe_str(p, t, an + sn + bn);
    free(t);
    return r;
}

static int pe_node_new(pe *p, pe_node n)
{
    if (!pe_grow((void **)&p->nodes, &p->cap_nodes, p->n_nodes + 1,
                 sizeof *p->nodes)) {
        p->nomem = true;
        return -1;
    }
    p->nodes[p->n_nodes] = n;
    return p->n_nodes++;
}

/* --- patterns (SdfPathPattern) ---------------------------------------------- */

static bool pe_ident_other(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

static bool pe_ident_first(char c)
{
    return pe_ident_other(c) && !(c >= '0' && c <= '9');
}

/* SdfPath::IsValidIdentifier (namespaced: ':'-separated identifiers) */
static bool pe_is_ident(const char *s, bool namespaced)
{
    bool start = true;
    for (; *s; s++) {
        if (start) {
            if (!pe_ident_first(*s))
                return false;
            start = false;
        } else if (*s == ':' && namespaced) {
            start = true;
        } else if (!pe_ident_other(*s)) {
            return false;
        }
    }
    return !start;
}

/* The length of a variant selection "{set=sel}" at s (0: none). */
static size_t pe_selection_len(const char *s)
{
    if (*s != '{')
        return 0;
    size_t i = 1;
    while (pe_ident_other(s[i]) || s[i] == '-' || s[i] == '|')
        i++;
    if (i == 1 || s[i] != '=')
        return 0;
    i++;
    while (pe_ident_other(s[i]) || s[i] == '-' || s[i] == '|' || s[i] == '.')
        i++;
    return s[i] == '}' ? i + 1 : 0;
}

/* A prim name, or with p->selections a name and its variant selections
 * ("W{v=a}C", "W{v=a}") */
static bool pe_is_prim_name(const pe *p, const char *s)
{
    if (!p->selections || !strchr(s, '{'))
        return pe_is_ident(s, false);
    size_t i = 0;
    bool need_name = true;
    while (s[i]) {
        size_t k = i;
        while (pe_ident_other(s[k]))
            k++;
        if (k > i && !pe_ident_first(s[i]))
            return false;
        if (need_name && k == i)
            return false;
        size_t sel = pe_selection_len(s + k);
        if (!sel)
            return s[k] == '\0';
        i = k + sel;
        need_name = false;
    }
    return true;
}

static bool pe_is_stretch(const pe_comp *c)
{
    return !c->text[0] && !c->pred;
}

static bool pe_trailing_stretch(const pe *p, const pe_node *n)
{
    return !n->is_prop && n->ncomp &&
           pe_is_stretch(&p->comps[n->comp0 + n->ncomp - 1]);
}

static bool pe_leading_stretch(const pe *p, const pe_node *n)
{
    return strcmp(n->prefix, "/") == 0 && n->ncomp &&
           pe_is_stretch(&p->comps[n->comp0]);
}

static void pe_push_comp(pe *p, pe_node *n, const char *text,
                         const char *pred)
{
    if (!pe_grow((void **)&p->comps, &p->cap_comps, p->n_comps + 1,
                 sizeof *p->comps)) {
        p->nomem = true;
        return;
    }
    p->comps[p->n_comps++] = (pe_comp){text, pred};
    n->ncomp++;
}

/* SdfPathPattern::AppendChild ("" without a predicate: a stretch) */
static void pe_append_child(pe *p, pe_node *n, const char *text,
                            const char *pred)
{
    if (n->is_prop || (!text[0] && !pred && pe_trailing_stretch(p, n)))
        return;
    if (!n->prefix[0])
        n->prefix = ".";
    if ((pe_is_prim_name(p, text) || strcmp(text, "..") == 0) && !pred &&
        !n->ncomp) {
        if (strcmp(n->prefix, ".") == 0)
            n->prefix = pe_str(p, text, strlen(text));
        else
            n->prefix = pe_cat(p, n->prefix,
                               strcmp(n->prefix, "/") == 0 ? "" : "/", text);
        if (!n->prefix)
            n->prefix = ".";
        return;
    }
    pe_push_comp(p, n, text, pred);
}

/* SdfPathPattern::AppendProperty */
static void pe_append_prop(pe *p, pe_node *n, const char *text,
                           const char *pred)
{
    if (n->is_prop)
        return;
    if (!n->prefix[0])
        n->prefix = ".";
    if (pe_is_ident(text, true) && !pred && !n->ncomp) {
        n->prefix = pe_cat(p, n->prefix, strcmp(n->prefix, ".") == 0 ? "" : ".",
                           text);
        if (!n->prefix)
            n->prefix = ".";
    } else {
        if (pe_trailing_stretch(p, n))
            pe_push_comp(p, n, "*", NULL);
        pe_push_comp(p, n, text, pred);
    }
    n->is_prop = true;
}

static char pe_c(const pe *p)
{
    return p->s[p->i];
}

static bool pe_at(const pe *p, const char *lit)
{
    return strncmp(p->s + p->i, lit, strlen(lit)) == 0;
}

static bool pe_blank(char c)
{
    return c == ' ' || c == '\t';
}

static void pe_skip_blanks(pe *p)
{
    while (pe_blank(pe_c(p)))
        p->i++;
}

/* '{' predicate '}', in its canonical text (ub_predexpr); NULL when
 * absent or malformed (*bad set). */
static const char *pe_pred(pe *p, bool *bad)
{
    if (pe_c(p) != '{')
        return NULL;
    size_t start = ++p->i;
    int depth = 1;
    char quote = 0;
    for (; pe_c(p); p->i++) {
        char c = pe_c(p);
        if (quote) {
            if (c == '\\' && p->s[p->i + 1])
                p->i++;
            else if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '{') {
            depth++;
        } else if (c == '}' && --depth == 0) {
            break;
        }
    }
    if (pe_c(p) != '}') {
        *bad = true;
        return NULL;
    }
    size_t end = p->i++;
    while (start < end && pe_blank(p->s[start]))
        start++;
    while (end > start && pe_blank(p->s[end - 1]))
        end--;
    if (start == end) {
        *bad = true;
        return NULL;
    }
    if (p->preds_canonical)
        return pe_str(p, p->s + start, end - start);
    char *canon = NULL;
    ub_pathexpr_status st = ub_predexpr_canon(p->s + start, end - start,
                                              &canon);
    if (st != UB_PATHEXPR_OK) {
        p->nomem |= st == UB_PATHEXPR_NOMEM;
        *bad = true;
        return NULL;
    }
    const char *r = pe_str(p, canon, strlen(canon));
    free(canon);
    return r;
}

/* the text of a prim (or property) element: identifier characters, '?',
 * '*', then an optional bracketed class */
static size_t pe_wild_len(const pe *p, size_t i, bool prop)
{
    size_t j = i;
    while (pe_ident_other(p->s[j]) || p->s[j] == '?' || p->s[j] == '*' ||
           (prop && p->s[j] == ':'))
        j++;
    if (j == i)
        return 0;
    for (size_t sel; p->selections && !prop &&
                     (sel = pe_selection_len(p->s + j)) != 0;) {
        j += sel;
        while (pe_ident_other(p->s[j]))
            j++;
    }
    if (p->s[j] == '[') {
        size_t k = j + 1;
        while (pe_ident_other(p->s[k]) || strchr("[]!-?*", p->s[k]) ||
               (prop && p->s[k] == ':')) {
            if (!p->s[k])
                break;
            k++;
        }
        if (k > j + 1)
            j = k;
    }
    return j - i;
}

static bool pe_elem_starts(const pe *p, size_t i, bool prop)
{
    return pe_wild_len(p, i, prop) > 0 || p->s[i] == '{';
}

/* One element: text with an optional predicate, or a predicate. */
static bool pe_elem(pe *p, pe_node *n, bool prop)
{
    size_t len = pe_wild_len(p, p->i, prop);
    const char *text = "";
    if (len) {
        text = pe_str(p, p->s + p->i, len);
        if (!text)
            return false;
        p->i += len;
    }
    bool bad = false;
    const char *pred = pe_pred(p, &bad);
    if (bad || (!len && !pred))
        return false;
    if (prop)
        pe_append_prop(p, n, text, pred);
    else
        pe_append_child(p, n, text, pred);
    return true;
}

/* PathPatternElems */
static bool pe_elems(pe *p, pe_node *n)
{
    if (!pe_elem(p, n, false))
        return false;
    for (;;) {
        size_t sep = pe_at(p, "//") ? 2 : pe_c(p) == '/' ? 1 : 0;
        if (!sep || !pe_elem_starts(p, p->i + sep, false))
            break;
        if (sep == 2)
            pe_append_child(p, n, "", NULL);
        p->i += sep;
        if (!pe_elem(p, n, false))
            return false;
    }
    if (pe_c(p) == '.') {
        p->i++;
        return pe_elem(p, n, true);
    }
    if (pe_at(p, "//")) {
        p->i += 2;
        pe_append_child(p, n, "", NULL);
    }
    return true;
}

/* a path separator: "//" appends a stretch */
static bool pe_sep(pe *p, pe_node *n)
{
    if (pe_at(p, "//")) {
        p->i += 2;
        pe_append_child(p, n, "", NULL);
        return true;
    }
    if (pe_c(p) == '/') {
        p->i++;
        return true;
    }
    return false;
}

static int pe_pattern(pe *p)
{
    pe_node n = {.kind = PE_PATTERN, .prefix = "", .comp0 = p->n_comps};
    if (pe_c(p) == '/') {
        n.prefix = "/";
        pe_sep(p, &n);
        if (pe_elem_starts(p, p->i, false) && !pe_elems(p, &n))
            return -1;
    } else if (pe_at(p, "..")) {
        for (;;) {
            p->i += 2;
            pe_append_child(p, &n, "..", NULL);
            if (!pe_at(p, "/.."))
                break;
            p->i++;
        }
        if (pe_sep(p, &n) && pe_elem_starts(p, p->i, false) &&
            !pe_elems(p, &n))
            return -1;
    } else if (pe_elem_starts(p, p->i, false)) {
        if (!pe_elems(p, &n))
            return -1;
    } else if (pe_c(p) == '.') {
        p->i++;
        n.prefix = ".";
        if (pe_at(p, "//")) {
            p->i += 2;
            pe_append_child(p, &n, "", NULL);
            if (pe_elem_starts(p, p->i, false) && !pe_elems(p, &n))
                return -1;
        }
    } else {
        return -1;
    }
    return p->nomem ? -1 : pe_node_new(p, n);
}

/* --- expression references ("%_", "%/A:name", "%:name") ---------------------- */

static size_t pe_ident_len(const pe *p, size_t i)
{
    if (!pe_ident_first(p->s[i]))
        return 0;
    size_t j = i + 1;
    while (pe_ident_other(p->s[j]))
        j++;
    return j - i;
}

/* identifiers separated by '/', then ':' identifier; the length or 0 */
static size_t pe_ref_path_and_name(const pe *p, size_t i)
{
    size_t j = i, k;
    if (!(k = pe_ident_len(p, j)))
        return 0;
    j += k;
    while (p->s[j] == '/' && (k = pe_ident_len(p, j + 1)))
        j += 1 + k;
    if (p->s[j] != ':' || !(k = pe_ident_len(p, j + 1)))
        return 0;
    return j + 1 + k - i;
}

static int pe_ref(pe *p)
{
    p->i++; /* '%' */
    if (pe_c(p) == '_' && !pe_ident_other(p->s[p->i + 1]) &&
        p->s[p->i + 1] != ':') {
        p->i++;
        return pe_node_new(p, (pe_node){.kind = PE_REF, .prefix = "",
                                        .name = "_"});
    }
    size_t start = p->i, j = p->i, k;
    if (p->s[j] == '/') {
        if (!(k = pe_ref_path_and_name(p, j + 1)))
            return -1;
        j += 1 + k;
    } else {
        while (p->s[j] == '.' && p->s[j + 1] == '.') {
            j += 2;
            if (!(p->s[j] == '/' && p->s[j + 1] == '.' && p->s[j + 2] == '.'))
                break;
            j++;
        }
        if (p->s[j] == '/') {
            if (!(k = pe_ref_path_and_name(p, j + 1)))
                return -1;
            j += 1 + k;
        } else if (p->s[j] == ':' && (k = pe_ident_len(p, j + 1))) {
            j += 1 + k;
        } else {
            return -1;
        }
    }
    p->i = j;
    size_t colon = j;
    while (p->s[colon - 1] != ':')
        colon--;
    const char *path = pe_str(p, p->s + start, colon - 1 - start);
    const char *name = pe_str(p, p->s + colon, j - colon);
    if (!path || !name)
        return -1;
    return pe_node_new(p, (pe_node){.kind = PE_REF, .prefix = path,
                                    .name = name});
}

/* --- building (SdfPathExpression::MakeOp, MakeComplement) -------------------- */

static bool pe_is_nothing(const pe *p, int x)
{
    return p->nodes[x].kind == PE_NOTHING;
}

/* the expression "//" */
static bool pe_is_everything(const pe *p, int x)
{
    const pe_node *n = &p->nodes[x];
    return n->kind == PE_PATTERN && !n->is_prop && n->ncomp == 1 &&
           strcmp(n->prefix, "/") == 0 && pe_is_stretch(&p->comps[n->comp0]);
}

static int pe_nothing(pe *p)
{
    return pe_node_new(p, (pe_node){.kind = PE_NOTHING});
}

static int pe_everything(pe *p)
{
    pe_node n = {.kind = PE_PATTERN, .prefix = "/", .comp0 = p->n_comps};
    pe_push_comp(p, &n, "", NULL);
    return p->nomem ? -1 : pe_node_new(p, n);
}

static int pe_make_compl(pe *p, int x)
{
    if (pe_is_everything(p, x))
        return pe_nothing(p);
    if (pe_is_nothing(p, x))
        return pe_everything(p);
    if (p->nodes[x].kind == PE_UNARY) /* ~~a is a */
        return p->nodes[x].a;
    return pe_node_new(p, (pe_node){.kind = PE_UNARY, .op = PE_COMPL,
                                    .a = x});
}

static int pe_make_op(pe *p, int op, int l, int r)
{
    if (op == PE_DIFF && (pe_is_nothing(p, l) || pe_is_nothing(p, r) ||
                          pe_is_everything(p, l) || pe_is_everything(p, r))) {
        op = PE_INTER;
        if ((r = pe_make_compl(p, r)) < 0)
            return -1;
    }
    if (pe_is_nothing(p, l))
        return op == PE_INTER ? l : r;
    if (pe_is_nothing(p, r))
        return op == PE_INTER ? r : l;
    if (pe_is_everything(p, l))
        return op == PE_INTER ? r : l;
    if (pe_is_everything(p, r))
        return op == PE_INTER ? l : r;
    return pe_node_new(p, (pe_node){.kind = PE_BINARY, .op = op, .a = l,
                                    .b = r});
}

/* --- parsing -------------------------------------------------------------- */

/* The builder's stacks (Sdf_PathExprBuilder): ops and operands, with a
 * group marker (-1) on the op stack for each open '('. */
typedef struct pe_stacks {
    int *ops, n_ops, cap_ops;
    int *xs, n_xs, cap_xs;
} pe_stacks;

static bool pe_push(int **v, int *n, int *cap, int x)
{
    if (!pe_grow((void **)v, cap, *n + 1, sizeof **v))
        return false;
    (*v)[(*n)++] = x;
    return true;
}

static bool pe_reduce(pe *p, pe_stacks *st)
{
    int op = st->ops[--st->n_ops];
    if (st->n_xs < (op == PE_COMPL ? 1 : 2))
        return false;
    int r = st->xs[--st->n_xs], x;
    if (op == PE_COMPL) {
        x = pe_make_compl(p, r);
    } else {
        int l = st->xs[--st->n_xs];
        x = pe_make_op(p, op, l, r);
    }
    return x >= 0 && pe_push(&st->xs, &st->n_xs, &st->cap_xs, x);
}

static bool pe_push_op(pe *p, pe_stacks *st, int op)
{
    while (st->n_ops && st->ops[st->n_ops - 1] >= 0 &&
           st->ops[st->n_ops - 1] <= op)
        if (!pe_reduce(p, st))
            return false;
    return pe_push(&st->ops, &st->n_ops, &st->cap_ops, op);
}

/* reduce back to the innermost group marker (or the bottom) */
static bool pe_finish_group(pe *p, pe_stacks *st)
{
    while (st->n_ops && st->ops[st->n_ops - 1] >= 0)
        if (!pe_reduce(p, st))
            return false;
    return true;
}

static bool pe_factor_starts(const pe *p, size_t i)
{
    char c = p->s[i];
    return c == '~' || c == '%' || c == '(' || c == '/' || c == '.' ||
           pe_elem_starts(p, i, false);
}

/* the operator after a factor, when a factor follows it: its op, or -1
 * (nothing consumed) */
static int pe_operator(pe *p)
{
    size_t save = p->i;
    pe_skip_blanks(p);
    int op = -1;
    switch (pe_c(p)) {
    case '+': op = PE_UNION; break;
    case '&': op = PE_INTER; break;
    case '-': op = PE_DIFF; break;
    default:
        if (p->i > save)
            op = PE_IMPLIED;
    }
    if (op != PE_IMPLIED && op >= 0) {
        p->i++;
        pe_skip_blanks(p);
    }
    size_t at = p->i;
    while (pe_blank(p->s[at]) && op != PE_IMPLIED)
        at++;
    if (op < 0 || !pe_factor_starts(p, at)) {
        p->i = save;
        return -1;
    }
    return op;
}

static int pe_parse(pe *p)
{
    pe_stacks st = {0};
    int depth = 0, result = -1;
    pe_skip_blanks(p);
    if (!pe_c(p)) {
        result = pe_nothing(p);
        goto out;
    }
    for (;;) {
        /* a factor: an optional '~', then an atom */
        size_t save = p->i;
        pe_skip_blanks(p);
        if (pe_c(p) == '~') {
            p->i++;
            pe_skip_blanks(p);
            if (!pe_push_op(p, &st, PE_COMPL))
                goto out;
        } else {
            p->i = save;
        }
        if (pe_c(p) == '(') {
            p->i++;
            pe_skip_blanks(p);
            depth++;
            if (!pe_push(&st.ops, &st.n_ops, &st.cap_ops, -1))
                goto out;
            continue;
        }
        int x = pe_c(p) == '%' ? pe_ref(p) : pe_pattern(p);
        if (x < 0 || !pe_push(&st.xs, &st.n_xs, &st.cap_xs, x))
            goto out;
        /* operators, and the groups they close */
        for (;;) {
            int op = pe_operator(p);
            if (op >= 0) {
                if (!pe_push_op(p, &st, op))
                    goto out;
                break;
            }
            pe_skip_blanks(p);
            if (depth && pe_c(p) == ')') {
                p->i++;
                depth--;
                if (!pe_finish_group(p, &st))
                    goto out;
                st.n_ops--; /* the marker */
                continue;
            }
            if (depth || pe_c(p))
                goto out;
            if (pe_finish_group(p, &st) && st.n_xs == 1)
                result = st.xs[0];
            goto out;
        }
    }
out:
    free(st.ops);
    free(st.xs);
    return p->nomem ? -1 : result;
}

/* --- anchoring and mapping --------------------------------------------------- */

/* Where the variant selection ending path[0..n) ("/W{v=a}") starts, or n
 * when it ends in none (a '}' in a malformed name is no selection). */
static size_t pe_trailing_selection(const char *path, size_t n)
{
    size_t k = n;
    while (k > 0 && path[k - 1] != '{' && path[k - 1] != '/')
        k--;
    if (k == 0 || path[k - 1] != '{' || k - 1 == 0)
        return n;
    return pe_selection_len(path + k - 1) == n - (k - 1) ? k - 1 : n;
}

/* SdfPath::MakeAbsolutePath: rel ("..", ".", "a/b", "../a.x", ".x")
 * against prim path anchor, which may hold variant selections
 * ("/W{v=a}C": its parent is "/W{v=a}", whose child b is "/W{v=a}b" and
 * whose parent is "/W"); NULL when it leaves the root. */
static const char *pe_absolute(pe *p, const char *rel, const char *anchor)
{
    if (!rel[0] || rel[0] == '/')
        return rel;
    size_t an = strlen(anchor), rn = strlen(rel);
    char *b = malloc(an + rn + 2);
    if (!b) {
        p->nomem = true;
        return NULL;
    }
    memcpy(b, anchor, an + 1);
    size_t w = an;
    const char *s = rel;
    bool ok = true;
    while (*s && ok) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.') {
            size_t sel = w > 1 ? pe_trailing_selection(b, w) : w;
            if (w <= 1) {
                ok = false; /* above the root */
            } else if (sel < w) {
                w = sel; /* a selection's parent: the prim it selects in */
            } else {
                /* back to the '/' before the name, or to the end of a
                 * selection it follows ("/W{v=a}C" to "/W{v=a}") */
                size_t k = w;
                while (k > 0 && b[k - 1] != '/' &&
                       !(b[k - 1] == '}' &&
                         pe_trailing_selection(b, k) < k))
                    k--;
                w = k > 1 && b[k - 1] == '/' ? k - 1 : k;
            }
        } else if (n == 1 && s[0] == '.') {
            /* here */
        } else if (s[0] == '.') {
            memcpy(b + w, s, n); /* a property of the anchor */
            w += n;
        } else {
            if (w > 1 && pe_trailing_selection(b, w) == w)
                b[w++] = '/';
            memcpy(b + w, s, n);
            w += n;
        }
        b[w] = '\0';
        s += n;
        if (*s == '/')
            s++;
    }
    const char *r = ok ? pe_str(p, b, w) : NULL;
    free(b);
    return r;
}

/* Anchored at the prim of the anchor (SdfPath::GetPrimPath): a trailing
 * variant selection ("/W{v=a}", where a property authored inside a
 * variant sits) is dropped, selections further up are kept. */
static void pe_make_absolute(pe *p, const char *anchor)
{
    size_t an = strlen(anchor);
    for (size_t sel; an > 1 && (sel = pe_trailing_selection(anchor, an)) < an;)
        an = sel;
    const char *prim = an == strlen(anchor) ? anchor : pe_str(p, anchor, an);
    if (!prim)
        return;
    for (int i = 0; i < p->n_nodes; i++) {
        pe_node *n = &p->nodes[i];
        if ((n->kind != PE_PATTERN && n->kind != PE_REF) || !n->prefix[0])
            continue;
        const char *a = pe_absolute(p, n->prefix, prim);
        if (a) /* else SdfPathPattern::SetPrefix keeps it, with a warning */
            n->prefix = a;
    }
}

/* The expression at root with each pattern and reference (node i) made
 * leaf(i): the node itself, another, or -1 (out of memory); operators are
 * made again where an operand changed (MakeOp and MakeComplement, which
 * simplify).  Operands come before their operators, so one pass in order
 * rebuilds the expression. */
typedef int (*pe_leaf)(pe *p, int i, void *ud);

static int pe_rebuild(pe *p, int root, pe_leaf leaf, void *ud)
{
    int n0 = p->n_nodes;
    int *to = malloc((size_t)(root + 1) * sizeof *to);
    if (!to) {
        p->nomem = true;
        return -1;
    }
    for (int i = 0; i <= root && i < n0; i++) {
        pe_node n = p->nodes[i];
        int x = i;
        switch (n.kind) {
        case PE_PATTERN:
        case PE_REF:
            x = leaf(p, i, ud);
            break;
        case PE_UNARY:
            x = to[n.a] == n.a ? i : pe_make_compl(p, to[n.a]);
            break;
        case PE_BINARY:
            x = to[n.a] == n.a && to[n.b] == n.b
                    ? i
                    : pe_make_op(p, n.op, to[n.a], to[n.b]);
            break;
        }
        if (x < 0) {
            free(to);
            return -1;
        }
        to[i] = x;
    }
    int r = to[root];
    free(to);
    return r;
}

typedef struct pe_map_ud {
    ub_pathexpr_map map;
    void *ud;
} pe_map_ud;

/* UsdStage's _MapPathExpressionToPrim: a pattern starting with "//"
 * searches everything and stays; any other pattern or reference whose
 * path leaves the domain becomes nothing. */
static int pe_map_leaf(pe *p, int i, void *ud)
{
    const pe_map_ud *m = ud;
    pe_node n = p->nodes[i];
    if (n.kind == PE_PATTERN && pe_leading_stretch(p, &n))
        return i;
    if (!n.prefix[0])
        return i; /* a reference to no path */
    const char *to = m->map(m->ud, n.prefix);
    if (!to)
        return pe_nothing(p);
    if (strcmp(to, n.prefix) == 0)
        return i;
    n.prefix = pe_str(p, to, strlen(to));
    return n.prefix ? pe_node_new(p, n) : -1;
}

/* SdfPathExpression::ComposeOver's resolve: a reference named "_" is the
 * weaker expression (its root: *ud). */
static int pe_weaker_leaf(pe *p, int i, void *ud)
{
    const pe_node *n = &p->nodes[i];
    return n->kind == PE_REF && strcmp(n->name, "_") == 0 ? *(int *)ud : i;
}

/* --- text ----------------------------------------------------------------- */

typedef struct pe_out {
    char *b;
    size_t n, cap;
    bool nomem;
} pe_out;

static void pe_put(pe_out *o, const char *s)
{
    size_t n = strlen(s);
    if (o->n + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        while (cap < o->n + n + 1)
            cap *= 2;
        char *nb = realloc(o->b, cap);
        if (!nb) {
            o->nomem = true;
            return;
        }
        o->b = nb;
        o->cap = cap;
    }
    memcpy(o->b + o->n, s, n + 1);
    o->n += n;
}

/* SdfPathPattern::GetText */
static void pe_put_pattern(pe_out *o, const pe *p, const pe_node *n)
{
    size_t start = o->n;
    if (strcmp(n->prefix, ".") == 0) {
        if (!n->ncomp || pe_is_stretch(&p->comps[n->comp0]))
            pe_put(o, ".");
    } else {
        pe_put(o, n->prefix);
    }
    bool abs_root = strcmp(n->prefix, "/") == 0;
    for (int i = 0; i < n->ncomp && !o->nomem; i++) {
        const pe_comp *c = &p->comps[n->comp0 + i];
        if (pe_is_stretch(c)) {
            pe_put(o, i == 0 && abs_root ? "/" : "//");
            continue;
        }
        if (i + 1 == n->ncomp && n->is_prop)
            pe_put(o, ".");
        else if (o->n > start && o->b[o->n - 1] != '/')
            pe_put(o, "/");
        pe_put(o, c->text);
        if (c->pred) {
            pe_put(o, "{");
            pe_put(o, c->pred);
            pe_put(o, "}");
        }
    }
}

/* SdfPathExpression::GetText, walking with a stack of its own */
static void pe_put_expr(pe_out *o, const pe *p, int root)
{
    static const char *const names[] = {"~", " ", " + ", " & ", " - "};
    typedef struct frame {
        int x, arg, paren;
    } frame;
    frame *st = NULL;
    int n = 0, cap = 0;
    if (!pe_grow((void **)&st, &cap, 1, sizeof *st)) {
        o->nomem = true;
        return;
    }
    st[n++] = (frame){root, 0, 0};
    while (n && !o->nomem) {
        frame *f = &st[n - 1];
        const pe_node *x = &p->nodes[f->x];
        if (x->kind == PE_PATTERN) {
            pe_put_pattern(o, p, x);
            n--;
            continue;
        }
        if (x->kind == PE_REF) {
            pe_put(o, "%");
            pe_put(o, x->prefix);
            if (strcmp(x->name, "_") != 0)
                pe_put(o, ":");
            pe_put(o, x->name);
            n--;
            continue;
        }
        if (x->kind == PE_NOTHING) {
            n--;
            continue;
        }
        int last = x->kind == PE_UNARY ? 1 : 2;
        if (f->arg == 0 && n >= 2) {
            const frame *pf = &st[n - 2];
            int pop = p->nodes[pf->x].op;
            /* the parent's arg is 1 while its first operand is written */
            bool rhs = p->nodes[pf->x].kind == PE_BINARY && pf->arg == 2;
            f->paren = pop < x->op || (pop == x->op && rhs);
            if (f->paren)
                pe_put(o, "(");
        }
        if (f->arg == last) {
            if (f->paren)
                pe_put(o, ")");
            n--;
            continue;
        }
        if (x->kind == PE_UNARY ? f->arg == 0 : f->arg == 1)
            pe_put(o, names[x->op]);
        int child = f->arg == 0 ? x->a : x->b;
        f->arg++;
        if (!pe_grow((void **)&st, &cap, n + 1, sizeof *st)) {
            o->nomem = true;
            break;
        }
        st[n++] = (frame){child, 0, 0};
    }
    free(st);
}

/* The canonical text of the expression at root in *out (malloc'd). */
static ub_pathexpr_status pe_text(pe *p, int root, char **out)
{
    pe_out o = {0};
    if (root >= 0 && !p->nomem) {
        pe_put(&o, "");
        pe_put_expr(&o, p, root);
    }
    if (root < 0 || p->nomem || o.nomem) {
        free(o.b);
        return UB_PATHEXPR_NOMEM;
    }
    *out = o.b;
    return UB_PATHEXPR_OK;
}

static void pe_free(pe *p)
{
    for (int i = 0; i < p->n_strs; i++)
        free(p->strs[i]);
    free(p->strs);
    free(p->nodes);
    free(p->comps);
}

ub_pathexpr_status ub_pathexpr_rewrite(const char *text, const char *anchor,
                                       ub_pathexpr_map map, void *ud,
                                       char **out)
{
    *out = NULL;
    pe p = {.s = text,
            .selections = map != NULL,
            .preds_canonical = anchor || map};
    int root = pe_parse(&p);
    ub_pathexpr_status st = UB_PATHEXPR_OK;
    if (root < 0) {
        st = p.nomem ? UB_PATHEXPR_NOMEM : UB_PATHEXPR_SYNTAX;
        goto done;
    }
    if (anchor)
        pe_make_absolute(&p, anchor);
    if (map && !p.nomem) {
        pe_map_ud m = {map, ud};
        root = pe_rebuild(&p, root, pe_map_leaf, &m);
    }
    st = pe_text(&p, root, out);
done:
    pe_free(&p);
    return st;
}

ub_pathexpr_status ub_pathexpr_compose(const char *stronger,
                                       const char *weaker, char **out)
{
    *out = NULL;
    pe p = {.s = stronger, .selections = true, .preds_canonical = true};
    ub_pathexpr_status st = UB_PATHEXPR_OK;
    int root = pe_parse(&p);
    int w = -1;
    if (root >= 0) {
        p.s = weaker;
        p.i = 0;
        w = pe_parse(&p);
    }
    if (root < 0 || w < 0) {
        st = p.nomem ? UB_PATHEXPR_NOMEM : UB_PATHEXPR_SYNTAX;
        goto done;
    }
    /* (an empty expression, "", is nothing: the weaker stands) */
    root = pe_is_nothing(&p, root) ? w : pe_rebuild(&p, root, pe_weaker_leaf,
                                                    &w);
    st = pe_text(&p, root, out);
done:
    pe_free(&p);
    return st;
}

ub_pathexpr_status ub_pathexpr_canon_value(ub_arena *a, ub_strtab *t,
                                           ub_value *v, const char **bad)
{
    if (v->kind != UB_V_DATA || v->type_id != UB_TY_PATH_EXPRESSION)
        return UB_PATHEXPR_OK;
    ub_value w = ub_value_new(a, ub_value_type(v), v->count, v->is_array);
    if (w.kind != UB_V_DATA)
        return UB_PATHEXPR_NOMEM;
    const char *const *from = ub_value_data(v);
    const char **to = ub_value_data(&w);
    for (uint32_t i = 0; i < v->count; i++) {
        char *text = NULL;
        ub_pathexpr_status st =
            ub_pathexpr_rewrite(from[i], NULL, NULL, NULL, &text);
        if (st == UB_PATHEXPR_SYNTAX)
            *bad = from[i];
        if (st != UB_PATHEXPR_OK)
            return st;
        to[i] = ub_intern(t, text, strlen(text));
        free(text);
        if (!to[i])
            return UB_PATHEXPR_NOMEM;
    }
    *v = w;
    return UB_PATHEXPR_OK;
}
