/*
 * ub_parse — usda text to ub_layer.  The scanner (lexer.l) and grammar
 * (parser.y) call the actions below, which build the layer as the text is
 * read: values go straight into typed arrays of their declared type, names
 * are interned, and every rule OpenUSD 24.08 enforces while reading a layer
 * is enforced here with a located message.
 */
#include "ub_parse.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "ub_cpus.h"
#include "ub_format.h"
#include "ub_pages.h"
#include "ub_parse_int.h"
#include "ub_pathexpr.h"
#include "parser.h"
#include "ub_parse_act.h"
#include "ub_ident.h"
#include "ub_metadef.h"

int ub_yyparse(ub_pctx *ctx);

_Static_assert(UB_IDENT_NKEYWORDS == TOK_VARYING - TOK_ADD + 1,
               "keyword table (runtime/ub_metadef.c) out of step with "
               "parser.y");

#define UB_MAX_ERRORS 20

static ub_loc ub_mkloc(const ub_pctx *c, ub_tokloc l)
{
    return (ub_loc){c->path, l.line, l.col};
}
/* The same as a record stores it. */
static ub_sloc ub_mksloc(const ub_pctx *c, ub_tokloc l)
{
    return ub_sloc_make(c->file_id, l.line, l.col);
}

static void ub_split_give_up(ub_pctx *c);

/* An error at l, or NULL when none is reported: a piece of a split
 * parse reports none of its own (the whole layer is read again in one
 * piece, and that reports it). */
static ub_diag *ub_perrv(ub_pctx *c, ub_tokloc l, const char *fmt,
                         va_list ap)
{
    if (c->split_role != UB_SPLIT_NONE) {
        ub_split_give_up(c);
        return NULL;
    }
    c->nerrors++;
    if (c->nerrors > UB_MAX_ERRORS)
        return NULL;
    return ub_diag_addv(c->diags, UB_ERROR, ub_mkloc(c, l), NULL, c->src,
                        c->src_len, fmt, ap);
}

void ub_perr(ub_pctx *c, ub_tokloc l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ub_perrv(c, l, fmt, ap);
    va_end(ap);
}

/* The same with a hint (a fixed text). */
static void ub_perr_hint(ub_pctx *c, ub_tokloc l, const char *hint,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ub_diag *d = ub_perrv(c, l, fmt, ap);
    va_end(ap);
    if (d)
        ub_diag_set_hint(c->diags, d, "%s", hint);
}

/* A warning at l with a hint (a fixed text); false when a piece of a
 * split parse gives up instead, so that the whole layer is read again in
 * one piece and its warnings come in order. */
static bool ub_pwarn_hint(ub_pctx *c, ub_tokloc l, const char *hint,
                          const char *fmt, ...)
{
    if (c->split_role != UB_SPLIT_NONE) {
        ub_split_give_up(c);
        return false;
    }
    va_list ap;
    va_start(ap, fmt);
    ub_diag *w = ub_diag_addv(c->diags, UB_WARNING, ub_mkloc(c, l), NULL,
                              c->src, c->src_len, fmt, ap);
    va_end(ap);
    if (w)
        ub_diag_set_hint(c->diags, w, "%s", hint);
    return true;
}

/* Input nested deeper than UB_MAX_NESTING: reported once, and the parse
 * stops there (the scanner ends the input; the syntax error that makes is
 * not reported). */
static void ub_too_deep(ub_pctx *c, ub_tokloc l, const char *what)
{
    ub_perr(c, l, "%s nested more than %d levels deep: usdbake reads at most "
            "%d levels", what, UB_MAX_NESTING, UB_MAX_NESTING);
    c->stopped = true;
    c->lex_hook = UB_LEX_STOP;
}

/* Entering a prim or variant body; false (after reporting it) when that
 * is one level too many. */
static bool ub_depth_enter(ub_pctx *c, ub_tokloc l)
{
    c->depth++;
    if (c->split_role == UB_SPLIT_TAIL &&
        c->depth - (int)(c->nph - 1) > c->tail_max_depth)
        c->tail_max_depth = c->depth - (int)(c->nph - 1);
    if (c->depth <= UB_MAX_NESTING)
        return true;
    ub_too_deep(c, l, "prims and variants");
    return false;
}

static void ub_oom(ub_pctx *c)
{
    longjmp(*(jmp_buf *)c->oom, 1);
}

static const char *ub_in(ub_pctx *c, const char *s, size_t n)
{
    const char *r = ub_intern(c->strtab, s, n);
    if (!r)
        ub_oom(c);
    return r;
}

static void *ub_alloc(ub_pctx *c, size_t n)
{
    void *p = ub_arena_alloc(c->arena, n ? n : 1);
    if (!p)
        ub_oom(c);
    return p;
}

/* A record (or array of them) aligned as its type is (ub_arena.h). */
static void *ub_alloc_rec(ub_pctx *c, size_t n, size_t align)
{
    void *p = ub_arena_alloc_align(c->arena, n ? n : 1, align);
    if (!p)
        ub_oom(c);
    return p;
}

/* --- numbers --------------------------------------------------------------- */

static const double ub_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Decimal text to the nearest double.  Clinger's fast path: when the
 * digits fit in 53 bits and the power of ten is exact, one IEEE multiply or
 * divide is correctly rounded.  Everything else goes to strtod. */
double ub_parse_double(const char *s, size_t n)
{
    const char *p = s, *end = s + n;
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    uint64_t m = 0;
    int digits = 0, exp10 = 0;
    while (p < end && *p == '0')
        p++;
    for (; p < end && (unsigned)(*p - '0') < 10; p++) {
        if (digits < 19)
            m = m * 10 + (uint64_t)(*p - '0');
        else
            exp10++;
        digits += digits || *p != '0';
    }
    if (p < end && *p == '.') {
        p++;
        if (!digits)
            while (p < end && *p == '0') {
                p++;
                exp10--;
            }
        for (; p < end && (unsigned)(*p - '0') < 10; p++) {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                exp10--;
            }
            digits++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '-' || *p == '+'))
            eneg = *p++ == '-';
        int e = 0;
        for (; p < end && (unsigned)(*p - '0') < 10; p++)
            if (e < 100000)
                e = e * 10 + (*p - '0');
        exp10 += eneg ? -e : e;
    }
    if (digits <= 19 && m <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
        double d = (double)m;
        d = exp10 < 0 ? d / ub_pow10[-exp10] : d * ub_pow10[exp10];
        return neg ? -d : d;
    }
    if (m == 0)
        return neg ? -0.0 : 0.0;
    char small[128];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf)
        return neg ? -0.0 : 0.0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    double d = strtod(buf, NULL);
    if (buf != small)
        free(buf);
    return d;
}

/* --- strings and identifiers ---------------------------------------------- */

/* A string whose text (escapes evaluated) holds a NUL byte ends
 * there: OpenUSD's text writer drops the rest, and crate, which keeps its
 * strings NUL-separated, cannot hold it (OpenUSD's crate writer shifts
 * every later token by one and writes a corrupt file).  Said, since no
 * sane layer has one. */
static size_t ub_nul_cut(ub_pctx *c, const char *s, size_t n, ub_tokloc l)
{
    const char *nul = memchr(s, '\0', n);
    if (!nul)
        return n;
    size_t dropped = n - (size_t)(nul - s) - 1;
    ub_pwarn_hint(c, l,
                  "usdcat drops them as well; a NUL byte in a layer is a "
                  "sign of a damaged file",
                  "a NUL byte ends this string: the %zu byte%s after it %s "
                  "dropped",
                  dropped, dropped == 1 ? "" : "s",
                  dropped == 1 ? "is" : "are");
    return (size_t)(nul - s);
}

/* A string a NUL byte cut short, and where its token began. */
struct ub_nul_cut {
    const char *s;
    ub_tokloc at;
};

static bool ub_tokloc_before(ub_tokloc a, ub_tokloc b)
{
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* Whether s, read at or after `from`, is a string a NUL byte cut short.
 * OpenUSD validates a name with the NUL in it, and refuses it; the
 * interned s has lost it.  (A damaged layer is the only one with a cut
 * string: the list is short.) */
static bool ub_parse_nul_cut(const ub_pctx *c, const char *s, ub_tokloc from)
{
    for (uint32_t i = 0; i < c->nnuls; i++)
        if (c->nuls[i].s == s && !ub_tokloc_before(c->nuls[i].at, from))
            return true;
    return false;
}

/* Whether name s, read at l, is one a NUL byte cut short: then said as an
 * error naming `what` ("a prim name"). */
static bool ub_nul_in_name(ub_pctx *c, const char *s, ub_tokloc l,
                           const char *what)
{
    if (!ub_parse_nul_cut(c, s, l))
        return false;
    ub_perr(c, l, "%s may not hold a NUL byte", what);
    return true;
}

const char *ub_parse_intern(ub_pctx *c, const char *s, size_t n)
{
    /* the table's own hash: a miss goes on to the table with it */
    uint64_t h = ub_hash_bytes(s, n);
    struct ub_icache *slot = &c->icache[(h >> 32) & (UB_ICACHE - 1)];
    if (slot->s && slot->hash == (uint32_t)h && slot->len == n &&
        memcmp(slot->s, s, n) == 0)
        return slot->s;
    const char *r = ub_intern_hashed(c->strtab, h, s, n);
    *slot = (struct ub_icache){r, (uint32_t)h, (uint32_t)n};
    return r;
}

/* Escapes as OpenUSD evaluates them (ub_unescape). */
const char *ub_parse_unescape(ub_pctx *c, const char *s, size_t n,
                              ub_tokloc l, bool *had_nul)
{
    char small[512];
    bool esc = memchr(s, '\\', n) != NULL;
    bool heap = esc && n >= sizeof small;
    char *out = heap ? malloc(n) : esc ? small : NULL;
    if (heap && !out)
        ub_oom(c);
    size_t o = esc ? ub_unescape(out, s, n) : n;
    const char *text = esc ? out : s;
    size_t keep = o;
    if (had_nul) {
        const char *nul = memchr(text, '\0', o);
        *had_nul = nul != NULL;
        if (nul)
            keep = (size_t)(nul - text);
    } else {
        keep = ub_nul_cut(c, text, o, l);
    }
    const char *r = ub_parse_intern(c, text, keep);
    if (heap)
        free(out);
    if (!r)
        ub_oom(c);
    if (keep < o && !had_nul) {
        if (c->nnuls == c->capnuls) {
            uint32_t cap = c->capnuls ? c->capnuls * 2 : 8;
            struct ub_nul_cut *nv = realloc(c->nuls, cap * sizeof *nv);
            if (!nv)
                ub_oom(c);
            c->nuls = nv;
            c->capnuls = cap;
        }
        c->nuls[c->nnuls++] = (struct ub_nul_cut){r, l};
    }
    return r;
}

/* --- paths ------------------------------------------------------------------ */

/* The prim path components of a prim, variant selections stripped (relative
 * paths never point into variants). */
static uint32_t ub_anchor(const ub_prim *p, const char **comp, uint32_t *len)
{
    uint32_t n = 0;
    for (const ub_prim *q = p; q && q->parent; q = q->parent)
        if (!ub_prim_variant_set(q))
            n++;
    if (n > UB_PATH_MAX_COMPS)
        return UINT32_MAX;
    uint32_t i = n;
    for (const ub_prim *q = p; q && q->parent; q = q->parent) {
        if (ub_prim_variant_set(q))
            continue;
        i--;
        comp[i] = q->name;
        len[i] = (uint32_t)ub_str_len(q->name);
    }
    return n;
}

/* Whether p lies inside a variant: OpenUSD anchors a relative path there
 * at a path through the variant selection (</X{v=a}Y>).  A variant's own
 * paths are anchored at its prim (</X>), as ub_anchor does. */
static bool ub_in_variant(const ub_prim *p)
{
    if (p && ub_prim_variant_set(p))
        p = p->parent;
    for (; p && p->parent; p = p->parent)
        if (ub_prim_variant_set(p))
            return true;
    return false;
}

/* Whether path i of c->paths is relative on a prim inside a variant,
 * where OpenUSD anchors it through the variant selection: for `what`
 * (target, inherit or specializes paths) that is an error, said here. */
static bool ub_relative_in_variant(ub_pctx *c, uint32_t i, const char *what)
{
    if (c->paths.v[i][0] == '/' || !ub_in_variant(c->prim))
        return false;
    ub_perr(c, c->paths.loc[i], "%s cannot contain variant selections: <%s> "
            "is relative, and inside a variant it is made absolute through "
            "the variant's selection; write it absolute", what,
            c->paths.v[i]);
    return true;
}

/* Text of a path from components (joined by '/', except after a variant
 * selection) and a property part. */
static const char *ub_path_text(ub_pctx *c, bool absolute, const char **comp,
                                const uint32_t *len, uint32_t n,
                                const char *prop, size_t prop_len)
{
    size_t total = 1 + prop_len;
    for (uint32_t i = 0; i < n; i++)
        total += len[i] + 1;
    char small[512];
    small[0] = 0;
    bool heap = total >= sizeof small;
    char *b = heap ? malloc(total + 1) : small;
    if (!b)
        ub_oom(c);
    size_t o = 0;
    if (absolute)
        b[o++] = '/';
    for (uint32_t i = 0; i < n; i++) {
        /* (a prim named "" is an error, but the parse goes on with it) */
        if (i > 0 && (!len[i - 1] || comp[i - 1][len[i - 1] - 1] != '}'))
            b[o++] = '/';
        memcpy(b + o, comp[i], len[i]);
        o += len[i];
    }
    if (prop_len) {
        /* a property of a relative path's ancestor: <../.x> */
        if (n && len[n - 1] == 2 && comp[n - 1][0] == '.' &&
            comp[n - 1][1] == '.')
            b[o++] = '/';
        memcpy(b + o, prop, prop_len);
        o += prop_len;
    }
    const char *r = ub_intern(c->strtab, b, o);
    if (heap)
        free(b);
    if (!r)
        ub_oom(c);
    return r;
}

/* s made absolute: a relative s against the prim path whose components
 * are bc[0..bm) (lengths bl), or, when bc is NULL, against prim anchor. */
static const char *ub_path_abs_in(ub_pctx *c, const char *s, ub_pathinfo *pi,
                                  const ub_prim *anchor, const char **bc,
                                  const uint32_t *bl, uint32_t bm,
                                  unsigned level)
{
    size_t n = ub_str_len(s);
    if (!ub_ident_path_split(s, n, pi))
        return NULL;
    const char **comp = c->pcomp;
    uint32_t *len = c->plen;
    uint32_t m = 0;
    const char *r = NULL;
    bool relative = !pi->absolute;
    if (relative) {
        /* a split parse's tail does not know the path of the levels it
         * did not open */
        if (c->split_role == UB_SPLIT_TAIL)
            ub_split_give_up(c);
        if (bc) {
            memcpy(comp, bc, bm * sizeof *comp);
            memcpy(len, bl, bm * sizeof *len);
            m = bm;
        } else {
            m = ub_anchor(anchor, comp, len);
            if (m == UINT32_MAX)
                goto out;
        }
    }
    for (uint32_t i = 0; i < pi->n; i++) {
        if (pi->len[i] == 2 && pi->comp[i][0] == '.' && pi->comp[i][1] == '.') {
            if (m == 0)
                goto out;
            m--;
        } else {
            comp[m] = pi->comp[i];
            len[m] = pi->len[i];
            m++;
        }
    }
    if (m == 0 && pi->has_prop)
        goto out; /* "/.prop" is no path */
    const char *prop = pi->prop;
    size_t prop_len = prop ? pi->prop_len : 0;
    const char *lb = relative && prop ? memchr(prop, '[', prop_len) : NULL;
    if (!lb) {
        r = ub_path_text(c, true, comp, len, m, prop, prop_len);
    } else {
        /* Sdf makes a relative path's target absolute too, against the
         * path's own prim: in /X/K, <.r[../Y].a> is </X/K.r[/X/Y].a> and
         * <Z.r[Y]> is </X/K/Z.r[/X/K/Z/Y]>.  (An absolute path's targets
         * stay as written, as Sdf leaves them.)  The recursion takes the
         * scratch components: these are kept apart. */
        if (level >= UB_PATH_MAX_TARGETS) /* (the split refused those) */
            goto out;
        const char **pc = ub_alloc(c, (m ? m : 1) * sizeof *pc);
        uint32_t *pl = ub_alloc(c, (m ? m : 1) * sizeof *pl);
        memcpy(pc, comp, m * sizeof *pc);
        memcpy(pl, len, m * sizeof *pl);
        size_t a = (size_t)(lb - prop) + 1;
        /* (the split saw them match) */
        size_t b = ub_ident_close_bracket(prop, prop_len, a - 1);
        ub_pathinfo **ti = &c->target_pi[level];
        if (!*ti && !(*ti = malloc(sizeof **ti))) /* 12 KiB, once a level */
            ub_oom(c);
        const char *t = ub_path_abs_in(c, ub_in(c, prop + a, b - a), *ti,
                                       NULL, pc, pl, m, level + 1);
        if (!t)
            goto out;
        size_t tn = ub_str_len(t);
        char *q = ub_alloc(c, a + tn + (prop_len - b));
        memcpy(q, prop, a);
        memcpy(q + a, t, tn);
        memcpy(q + a + tn, prop + b, prop_len - b);
        r = ub_path_text(c, true, pc, pl, m, q, a + tn + (prop_len - b));
    }
    pi->absolute = true;
out:
    return r;
}

/* path made absolute against the current prim (as Sdf does for targets,
 * connections, inherits, specializes and prim relocates).  Returns NULL
 * when the text is no path or climbs above the root. */
static const char *ub_path_abs(ub_pctx *c, const char *s, ub_pathinfo *pi,
                               const ub_prim *anchor)
{
    return ub_path_abs_in(c, s, pi, anchor, NULL, NULL, 0, 0);
}

/* The path as authored, in canonical text (relative stays relative). */
static const char *ub_path_canon(ub_pctx *c, const char *s, ub_pathinfo *pi)
{
    size_t n = ub_str_len(s);
    if (!ub_ident_path_split(s, n, pi))
        return NULL;
    if (!pi->absolute && pi->n == 0 && !pi->prop)
        return ub_in(c, ".", 1); /* the path relative to itself */
    return ub_path_text(c, pi->absolute, pi->comp, pi->len, pi->n, pi->prop,
                        pi->prop ? pi->prop_len : 0);
}

/* --- values ------------------------------------------------------------------ */

static const char *ub_num_text(ub_pctx *c, const ub_num *n)
{
    char b[40];
    if (n->kind == UB_NUM_U64)
        snprintf(b, sizeof b, "%llu", (unsigned long long)n->v.u);
    else if (n->kind == UB_NUM_I64)
        snprintf(b, sizeof b, "%lld", (long long)n->v.i);
    else if (isnan(n->v.d))
        snprintf(b, sizeof b, "nan");
    else if (isinf(n->v.d))
        snprintf(b, sizeof b, "%sinf", n->v.d < 0 ? "-" : "");
    else
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(b, sizeof b, "%.*g", prec, n->v.d);
            if (strtod(b, NULL) == n->v.d)
                break;
        }
    return ub_in(c, b, strlen(b));
}

static void ub_vb_begin(ub_pctx *c, const ub_type *t, const char *type_name,
                        bool array)
{
    ub_vb *v = &c->vb;
    v->type = t;
    v->type_name = type_name;
    v->want_array = array;
    v->failed = false;
    v->saw_list = false;
    v->len = 0;
    v->nelem = 0;
    v->comp = v->row_comp = v->rows_done = 0;
    v->list_depth = v->tuple_depth = 0;
    v->nnodes = 0;
    v->nframes = 0;
    if (t) {
        v->rows = t->rows;
        v->cols = t->cols;
        v->ncomp = ub_type_ncomp(t);
        v->csize = ub_scalar_size(t->scalar);
        v->depth_needed = t->rows > 1 ? 2 : t->cols > 1 ? 1 : 0;
    }
}

static void ub_vb_fail(ub_pctx *c, ub_tokloc l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ub_vb_fail(ub_pctx *c, ub_tokloc l, const char *fmt, ...)
{
    if (c->vb.failed)
        return; /* one message per value */
    c->vb.failed = true;
    va_list ap;
    va_start(ap, fmt);
    ub_perrv(c, l, fmt, ap);
    va_end(ap);
}

static const char *ub_vb_tname(const ub_vb *v, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", v->type_name, v->want_array ? "[]" : "");
    return buf;
}

/* --- untyped trees --- */

static void ub_vb_node(ub_pctx *c, ub_untyped_kind k, const char *text)
{
    ub_vb *v = &c->vb;
    if (v->nnodes == v->capnodes) {
        uint32_t cap = v->capnodes ? v->capnodes * 2 : 64;
        ub_untyped *nn = realloc(v->nodes, cap * sizeof *nn);
        if (!nn)
            ub_oom(c);
        v->nodes = nn;
        v->capnodes = cap;
    }
    v->nodes[v->nnodes++] = (ub_untyped){.kind = k, .text = text};
}

static void ub_vb_uopen(ub_pctx *c, ub_untyped_kind k, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (v->nframes == (int)(sizeof v->frames / sizeof *v->frames)) {
        ub_vb_fail(c, l, "value nested too deeply");
        return;
    }
    v->frames[v->nframes++] = (ub_untyped_frame){k, v->nnodes};
}

static void ub_vb_uclose(ub_pctx *c)
{
    ub_vb *v = &c->vb;
    if (v->nframes == 0)
        return;
    ub_untyped_frame f = v->frames[--v->nframes];
    uint32_t n = v->nnodes - f.start;
    ub_untyped *kids = ub_alloc(c, n * sizeof *kids);
    if (n) /* an empty list before any node: v->nodes is still NULL */
        memcpy(kids, v->nodes + f.start, n * sizeof *kids);
    v->nnodes = f.start;
    ub_vb_node(c, f.kind, NULL);
    v->nodes[v->nnodes - 1].n = n;
    v->nodes[v->nnodes - 1].child = kids;
}

/* --- typed values --- */

static inline void *ub_vb_slot(ub_pctx *c)
{
    ub_vb *v = &c->vb;
    if (v->len + v->csize > v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4096;
        unsigned char *nb = realloc(v->buf, cap);
        if (!nb)
            ub_oom(c);
        v->buf = nb;
        v->cap = cap;
    }
    void *p = v->buf + v->len;
    v->len += v->csize;
    return p;
}

/* Room for n more bytes of components. */
static void ub_vb_reserve(ub_pctx *c, size_t n)
{
    ub_vb *v = &c->vb;
    if (v->len + n <= v->cap)
        return;
    size_t cap = v->cap ? v->cap : 4096;
    while (cap < v->len + n)
        cap *= 2;
    unsigned char *nb = realloc(v->buf, cap);
    if (!nb)
        ub_oom(c);
    v->buf = nb;
    v->cap = cap;
}

/* Where the next component goes, after checking that an atom is allowed
 * here; NULL when it is not (an error was reported). */
static void *ub_vb_atom_slot(ub_pctx *c, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (v->failed)
        return NULL;
    char tb[80];
    if (v->want_array && v->list_depth == 0) {
        ub_vb_fail(c, l, "type '%s' is an array: expected a list '[...]'",
                   ub_vb_tname(v, tb, sizeof tb));
        return NULL;
    }
    if (v->tuple_depth != (int)v->depth_needed) {
        if (v->depth_needed == 0)
            ub_vb_fail(c, l, "a value of type '%s' is a single value, not a "
                       "tuple", v->type_name);
        else if (v->depth_needed == 1)
            ub_vb_fail(c, l, "a value of type '%s' is a tuple of %u values: "
                       "expected '('", v->type_name, v->cols);
        else
            ub_vb_fail(c, l, "a value of type '%s' is %u tuples of %u values: "
                       "expected '('", v->type_name, v->rows, v->cols);
        return NULL;
    }
    if (v->depth_needed == 1 && v->comp >= v->cols) {
        ub_vb_fail(c, l, "too many values in a tuple of type '%s' (expected "
                   "%u)", v->type_name, v->cols);
        return NULL;
    }
    if (v->depth_needed == 2 && v->row_comp >= v->cols) {
        ub_vb_fail(c, l, "too many values in a row of type '%s' (expected "
                   "%u)", v->type_name, v->cols);
        return NULL;
    }
    if (!v->want_array && v->nelem >= 1) {
        ub_vb_fail(c, l, "type '%s' holds one value", v->type_name);
        return NULL;
    }
    if (v->csize == 0) {
        ub_vb_fail(c, l, "attributes of type '%s' cannot have an authored "
                   "value", v->type_name);
        return NULL;
    }
    v->comp++;
    v->row_comp++;
    if (v->depth_needed == 0)
        v->nelem++;
    return ub_vb_slot(c);
}

static bool ub_bool_text(const char *s, bool *out)
{
    static const char *const t[] = {"true", "yes", "1"};
    static const char *const f[] = {"false", "no", "0"};
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(s, t[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(s, f[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

static bool ub_special_float(const char *s, double *d)
{
    if (strcmp(s, "inf") == 0)
        *d = INFINITY;
    else if (strcmp(s, "-inf") == 0)
        *d = -INFINITY;
    else if (strcmp(s, "nan") == 0)
        *d = NAN;
    else
        return false;
    return true;
}

static void ub_vb_bad(ub_pctx *c, ub_tokloc l, const char *what,
                      const char *found)
{
    char tb[80];
    ub_vb_fail(c, l, "invalid value for type '%s': expected %s, found %s",
               ub_vb_tname(&c->vb, tb, sizeof tb), what, found);
}

static const char *ub_scalar_what(ub_scalar s, const ub_type *t)
{
    switch (s) {
    case UB_SC_BOOL: return "a boolean (true, false, 1 or 0)";
    case UB_SC_UCHAR: case UB_SC_INT: case UB_SC_UINT: case UB_SC_INT64:
    case UB_SC_UINT64: return "an integer";
    case UB_SC_HALF: case UB_SC_FLOAT: case UB_SC_DOUBLE:
        return "a number";
    case UB_SC_STRING:
        return t->id == UB_TY_ASSET ? "an asset path (@...@)"
                                    : "a quoted string";
    default: return "no value (this type cannot be authored)";
    }
}

/* Store integer x into an integer slot of scalar kind s with a range
 * check. */
static bool ub_put_int(ub_scalar s, void *p, bool neg, uint64_t mag)
{
    switch (s) {
    case UB_SC_UCHAR:
        if (neg || mag > 255) return false;
        *(uint8_t *)p = (uint8_t)mag;
        return true;
    case UB_SC_INT: {
        if (neg ? mag > 2147483648u : mag > 2147483647u) return false;
        int32_t x = neg ? (int32_t)(0 - (int64_t)mag) : (int32_t)mag;
        memcpy(p, &x, 4);
        return true;
    }
    case UB_SC_UINT: {
        if ((neg && mag) || mag > 4294967295u) return false;
        uint32_t x = (uint32_t)mag;
        memcpy(p, &x, 4);
        return true;
    }
    case UB_SC_INT64: {
        if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
            return false;
        int64_t x = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN
                                                         : -(int64_t)mag)
                        : (int64_t)mag;
        memcpy(p, &x, 8);
        return true;
    }
    case UB_SC_UINT64:
        if (neg && mag) return false;
        memcpy(p, &mag, 8);
        return true;
    default:
        return false;
    }
}

void ub_vb_num(ub_pctx *c, const ub_num *n, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (!v->type) {
        ub_vb_node(c, UB_U_ATOM, ub_num_text(c, n));
        return;
    }
    void *p = ub_vb_atom_slot(c, l);
    if (!p)
        return;
    ub_scalar s = v->type->scalar;
    if (s == UB_SC_FLOAT) {
        /* OpenUSD reads every number as double and narrows it */
        float f = (float)ub_num_to_double(n);
        memcpy(p, &f, 4);
        return;
    }
    if (s == UB_SC_DOUBLE) {
        double d = ub_num_to_double(n);
        memcpy(p, &d, 8);
        return;
    }
    if (s == UB_SC_HALF) {
        uint16_t h = ub_float_to_half((float)ub_num_to_double(n));
        memcpy(p, &h, 2);
        return;
    }
    if (s == UB_SC_BOOL) {
        *(uint8_t *)p = ub_num_to_double(n) != 0.0;
        return;
    }
    bool ok = false;
    if (s >= UB_SC_UCHAR && s <= UB_SC_UINT64) {
        if (n->kind == UB_NUM_U64) {
            ok = ub_put_int(s, p, false, n->v.u);
        } else if (n->kind == UB_NUM_I64) {
            ok = ub_put_int(s, p, n->v.i < 0,
                            n->v.i < 0 ? 0 - (uint64_t)n->v.i : (uint64_t)n->v.i);
        } else if (isfinite(n->v.d)) {
            double t = trunc(n->v.d);
            if (fabs(t) < 18446744073709551616.0)
                ok = ub_put_int(s, p, t < 0, (uint64_t)fabs(t));
        }
        if (!ok) {
            char tb[80];
            ub_vb_fail(c, l, "number %s is out of range for type '%s'",
                       ub_num_text(c, n), ub_vb_tname(v, tb, sizeof tb));
        }
        return;
    }
    char fb[64];
    snprintf(fb, sizeof fb, "the number %s", ub_num_text(c, n));
    ub_vb_bad(c, l, ub_scalar_what(s, v->type), fb);
}

/* A whole-number text that does not fit where ub_scan_num keeps it. */
static void ub_num_from_text(ub_num *out, const char *b, size_t n)
{
    bool neg = b[0] == '-';
    uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : UINT64_MAX;
    size_t i = neg;
    for (; i < n; i++) {
        unsigned d = (unsigned)(b[i] - '0');
        if (u > (lim - d) / 10)
            break;
        u = u * 10 + d;
    }
    if (i < n) {
        out->kind = UB_NUM_DBL;
        out->v.d = ub_parse_double(b, n);
    } else if (neg) {
        out->kind = UB_NUM_I64;
        out->v.i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    } else {
        out->kind = UB_NUM_U64;
        out->v.u = u;
    }
}

/* The number (lexer.l's NUM pattern) at p, read as the scanner reads a
 * lone number: integers exact, "-0" as double, the rest correctly rounded.
 * Digits are read once, in the same pass that checks the syntax, so that
 * the scanner can read a whole run of numbers into values as it finds the
 * run's end (ub_lex_run): the common short decimals never reach
 * ub_parse_double.  Returns the text after the number; NULL when there is
 * no number at p, or when the number (or the exponent it may have) runs
 * into end, where the scanner's buffered text stops and the number may go
 * on.  end NULL: p is inside a token's text, which goes on with a
 * non-digit ('(', ',', ')', a blank or its NUL), so no end check at all. */
const char *ub_num_scan(const char *p, const char *end, ub_num *out)
{
    /* Every text read here goes on with a character that is not part of
     * a number: a token's NUL, or the NUL the scanner keeps after its
     * buffered text.  So the loops test characters, never end. */
    const char *b = p;
    bool neg = *p == '-';
    p += neg;
    const char *digits = p;
    uint64_t m = 0;
    int exp10 = 0;
    bool integral = true, overflow = false;
    unsigned d;
    for (; (d = (unsigned)(*p - '0')) < 10; p++) {
        if (m < 100000000000000000ull)
            m = m * 10 + d;
        else
            overflow = true;
    }
    bool whole = p > digits;
    if (*p == '.') {
        integral = false;
        const char *frac = ++p;
        for (; (d = (unsigned)(*p - '0')) < 10; p++) {
            if (m < 100000000000000000ull) {
                m = m * 10 + d;
                exp10--;
            } else if (d) {
                overflow = true;
            }
        }
        if (!whole && p == frac)
            return NULL;
    } else if (!whole) {
        return NULL;
    }
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1;
        if (*e == '-' || *e == '+')
            e++;
        const char *ed = e;
        while ((unsigned)(*e - '0') < 10)
            e++;
        if (end && e >= end)
            return NULL;
        if (e > ed) { /* rare: let the general reader do it */
            integral = false;
            overflow = true;
            p = e;
        }
    }
    if (end && p >= end)
        return NULL;
    if (integral) {
        if (neg && m == 0 && !overflow) {
            out->kind = UB_NUM_DBL;
            out->v.d = -0.0;
        } else if (!overflow) {
            out->kind = neg ? UB_NUM_I64 : UB_NUM_U64;
            if (neg)
                out->v.i = -(int64_t)m;
            else
                out->v.u = m;
        } else {
            /* 18 digits and more: as the scanner reads them */
            ub_num_from_text(out, b, (size_t)(p - b));
        }
        return p;
    }
    out->kind = UB_NUM_DBL;
    if (!overflow && m <= (1ull << 53) && exp10 >= -22) {
        double v = (double)m / ub_pow10[-exp10];
        out->v.d = neg ? -v : v;
    } else {
        out->v.d = ub_parse_double(b, (size_t)(p - b));
    }
    return p;
}

/* A number inside a run token's text, which the scanner has checked. */
static const char *ub_scan_num(const char *p, ub_num *out)
{
    return ub_num_scan(p, NULL, out);
}

/* n as one component of a float, double, half or int array, at dst (the
 * fast paths' one conversion); false, storing nothing, for an int that is
 * not a non-negative int32 (the caller reads it the general way). */
static inline bool ub_vb_put_comp(ub_scalar sc, unsigned char *dst,
                                  const ub_num *n)
{
    if (sc == UB_SC_INT) {
        if (n->kind != UB_NUM_U64 || n->v.u > INT32_MAX)
            return false;
        int32_t x = (int32_t)n->v.u;
        memcpy(dst, &x, 4);
        return true;
    }
    double d = ub_num_to_double(n);
    if (sc == UB_SC_FLOAT) {
        float f = (float)d;
        memcpy(dst, &f, 4);
    } else if (sc == UB_SC_DOUBLE) {
        memcpy(dst, &d, 8);
    } else {
        uint16_t h = ub_float_to_half((float)d);
        memcpy(dst, &h, 2);
    }
    return true;
}

/* The fast paths' shortcut: a run token's numbers as the scanner read
 * them (ub_lex_run), stored as the array's float, double, half or int
 * components, arity to an element.  False, having stored nothing, when
 * the scanner kept no numbers for this text, its tuples are not all of
 * arity numbers, or an int does not fit (the text path then says where). */
static bool ub_vb_prescanned(ub_pctx *c, ub_span sp, unsigned arity)
{
    int r = sp.p == c->nl_buf[0] ? 0 : sp.p == c->nl_buf[1] ? 1 : -1;
    if (r < 0 || c->nl_arity[r] != arity)
        return false;
    ub_vb *v = &c->vb;
    ub_scalar sc = v->type->scalar;
    const ub_num *n = c->nl_nums[r];
    size_t nn = c->nl_n[r];
    size_t esize = v->csize; /* per number: a component */
    ub_vb_reserve(c, nn * esize);
    unsigned char *dst = v->buf + v->len;
    for (size_t i = 0; i < nn; i++, dst += esize)
        if (!ub_vb_put_comp(sc, dst, &n[i]))
            return false; /* nothing counted yet: len is unchanged */
    v->len += nn * esize;
    v->nelem += nn / arity;
    return true;
}

/* A number-list token ("1, 2.5, -3"): each number as the scanner would
 * have read it alone, at its own column. */
void ub_vb_numlist(ub_pctx *c, ub_span sp, ub_tokloc l)
{
    const char *p = sp.p, *end = sp.p + sp.n;
    ub_vb *v = &c->vb;
    /* fast path: numbers straight into a float, double or int array */
    if (v->type && !v->failed && v->depth_needed == 0 && v->want_array &&
        v->list_depth == 1 && v->tuple_depth == 0 &&
        (v->type->scalar == UB_SC_FLOAT || v->type->scalar == UB_SC_DOUBLE ||
         v->type->scalar == UB_SC_INT)) {
        ub_scalar sc = v->type->scalar;
        if (ub_vb_prescanned(c, sp, 1))
            return;
        while (p < end) {
            while (*p == ' ' || *p == '\t' || *p == ',')
                p++;
            const char *b = p;
            ub_num n;
            p = ub_scan_num(p, &n);
            ub_vb_reserve(c, v->csize);
            if (!ub_vb_put_comp(sc, v->buf + v->len, &n)) {
                ub_vb_num(c, &n, (ub_tokloc){l.line, l.col + (uint32_t)(b - sp.p)});
                continue;
            }
            v->len += v->csize;
            v->nelem++;
        }
        return;
    }
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
            p++;
        const char *b = p;
        ub_num n;
        p = ub_scan_num(p, &n);
        ub_vb_num(c, &n, (ub_tokloc){l.line, l.col + (uint32_t)(b - sp.p)});
    }
}

/* A tuples token ("(1, 2), (3, 4)"): the same events as its parts. */
void ub_vb_tuples(ub_pctx *c, ub_span sp, ub_tokloc l, bool single)
{
    const char *p = sp.p, *end = sp.p + sp.n;
    ub_vb *v = &c->vb;
    /* fast path: float / double / half vectors in an array */
    if (!single && v->type && !v->failed && v->depth_needed == 1 &&
        v->want_array && v->list_depth == 1 && v->tuple_depth == 0 &&
        (v->type->scalar == UB_SC_FLOAT || v->type->scalar == UB_SC_DOUBLE ||
         v->type->scalar == UB_SC_HALF)) {
        ub_scalar sc = v->type->scalar;
        unsigned cols = v->cols;
        if (ub_vb_prescanned(c, sp, cols))
            return;
        while (p < end) {
            while (*p != '(')
                p++;
            const char *tb = p++;
            ub_num n[4];
            unsigned k = 0;
            for (;;) {
                while (*p == ' ' || *p == '\t' || *p == ',')
                    p++;
                if (*p == ')')
                    break;
                if (k < 4)
                    p = ub_scan_num(p, &n[k]);
                else
                    p = ub_scan_num(p, &n[3]);
                k++;
            }
            p++;
            if (k != cols) {
                /* let the general path say what is wrong */
                ub_vb_tuples(c, (ub_span){tb, (size_t)(p - tb)},
                             (ub_tokloc){l.line, l.col + (uint32_t)(tb - sp.p)},
                             true);
                return;
            }
            size_t need = cols * v->csize;
            ub_vb_reserve(c, need);
            for (unsigned i = 0; i < cols; i++)
                (void)ub_vb_put_comp(sc, v->buf + v->len + i * v->csize,
                                     &n[i]); /* no ints here */
            v->len += need;
            v->nelem++;
            while (p < end && *p != '(')
                p++;
        }
        return;
    }
    int depth = 0, top = 0;
    while (p < end) {
        ub_tokloc at = {l.line, l.col + (uint32_t)(p - sp.p)};
        if (*p == '(') {
            if (depth++ == 0 && top++ == 1 && single) {
                /* "x = (1, 2), (3, 4)": OpenUSD stops at the comma */
                const char *q = p - 1;
                while (q > sp.p && *q != ',')
                    q--;
                ub_perr(c, (ub_tokloc){l.line, l.col + (uint32_t)(q - sp.p)},
                        "syntax error: unexpected ',' after a value");
                return;
            }
            ub_vb_tuple_open(c, at);
            p++;
        } else if (*p == ')') {
            depth--;
            ub_vb_tuple_close(c, at);
            p++;
        } else if (*p == ' ' || *p == '\t' || *p == ',') {
            p++;
        } else {
            ub_num n;
            const char *b = p;
            p = ub_scan_num(p, &n);
            ub_vb_num(c, &n, (ub_tokloc){l.line, l.col + (uint32_t)(b - sp.p)});
        }
    }
}

/* An identifier or string where a value is expected. */
/* A pathExpression as SdfPathExpression writes it back; one it cannot
 * parse makes OpenUSD refuse the whole layer. */
static const char *ub_path_expr_text(ub_pctx *c, const char *s,
                                     ub_tokloc l)
{
    char *t = NULL;
    ub_pathexpr_status st = ub_pathexpr_rewrite(s, NULL, NULL, NULL, &t);
    if (st == UB_PATHEXPR_NOMEM)
        ub_oom(c);
    if (st == UB_PATHEXPR_SYNTAX) {
        ub_vb_fail(c, l, "invalid pathExpression \"%.200s\"", s);
        return s;
    }
    const char *r = ub_intern(c->strtab, t, strlen(t));
    free(t);
    if (!r)
        ub_oom(c);
    return r;
}

static void ub_vb_word(ub_pctx *c, const char *s, ub_tokloc l, bool quoted)
{
    ub_vb *v = &c->vb;
    if (!v->type) {
        ub_vb_node(c, quoted ? UB_U_STRING : UB_U_ATOM, s);
        return;
    }
    void *p = ub_vb_atom_slot(c, l);
    if (!p)
        return;
    ub_scalar sc = v->type->scalar;
    double d;
    bool b;
    switch (sc) {
    case UB_SC_BOOL:
        if (ub_bool_text(s, &b)) {
            *(uint8_t *)p = b;
            return;
        }
        break;
    case UB_SC_FLOAT:
        if (ub_special_float(s, &d)) {
            float f = (float)d;
            memcpy(p, &f, 4);
            return;
        }
        break;
    case UB_SC_DOUBLE:
        if (ub_special_float(s, &d)) {
            memcpy(p, &d, 8);
            return;
        }
        break;
    case UB_SC_HALF:
        if (ub_special_float(s, &d)) {
            uint16_t h = ub_float_to_half((float)d);
            memcpy(p, &h, 2);
            return;
        }
        break;
    case UB_SC_STRING:
        if (quoted && v->type->id == UB_TY_PATH_EXPRESSION)
            s = ub_path_expr_text(c, s, l);
        if (quoted) {
            memcpy(p, &s, sizeof s);
            return;
        }
        break;
    default:
        break;
    }
    char fb[128];
    snprintf(fb, sizeof fb, quoted ? "the string \"%.60s\"" : "'%.60s'", s);
    ub_vb_bad(c, l, ub_scalar_what(sc, v->type), fb);
}

void ub_vb_str(ub_pctx *c, const char *s, ub_tokloc l)
{
    ub_vb_word(c, s, l, true);
}

void ub_vb_ident(ub_pctx *c, const char *s, ub_tokloc l)
{
    ub_vb_word(c, s, l, false);
}

void ub_vb_asset(ub_pctx *c, const char *s, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (!v->type) {
        ub_vb_node(c, UB_U_ASSET, s);
        return;
    }
    void *p = ub_vb_atom_slot(c, l);
    if (!p)
        return;
    if (v->type->id == UB_TY_ASSET) {
        memcpy(p, &s, sizeof s);
        return;
    }
    char fb[128];
    snprintf(fb, sizeof fb, "the asset path @%.60s@", s);
    ub_vb_bad(c, l, ub_scalar_what(v->type->scalar, v->type), fb);
}

void ub_vb_path(ub_pctx *c, const char *s, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (!v->type) {
        /* OpenUSD reads a path kept as written (a relationship's sample,
         * an unknown type's value) as a path, and one it cannot parse
         * as the empty path, with a warning; so does this reader: the
         * text would keep what no path holds (`<a\x3eb>` is "a>b", which
         * prints as text that reads as something else, or not at all). */
        if (!ub_ident_path_value_ok(s)) {
            ub_pwarn_hint(c, l, "OpenUSD 24.08 reads it as <> too, with a "
                                "warning",
                          "<%.60s> is no well-formed path: it reads as the "
                          "empty path <>", s);
            s = ub_in(c, "", 0);
        }
        ub_vb_node(c, UB_U_PATH, s);
        return;
    }
    char fb[128];
    snprintf(fb, sizeof fb, "the path <%.60s>", s);
    ub_vb_bad(c, l, ub_scalar_what(v->type->scalar, v->type), fb);
}

void ub_vb_list_open(ub_pctx *c, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (!v->type) {
        ub_vb_uopen(c, UB_U_LIST, l);
        return;
    }
    char tb[80];
    if (v->list_depth > 0)
        ub_vb_fail(c, l, "nested lists are not allowed: a value of type "
                   "'%s' is a flat list", ub_vb_tname(v, tb, sizeof tb));
    else if (!v->want_array)
        ub_vb_fail(c, l, "type '%s' is not an array: write '%s[]' to give "
                   "a list", v->type_name, v->type_name);
    v->list_depth++;
    v->saw_list = true;
}

void ub_vb_list_close(ub_pctx *c, ub_tokloc l)
{
    (void)l;
    if (!c->vb.type) {
        ub_vb_uclose(c);
        return;
    }
    c->vb.list_depth--;
}

void ub_vb_empty_list(ub_pctx *c, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (!v->type) {
        ub_vb_uopen(c, UB_U_LIST, l);
        ub_vb_uclose(c);
        return;
    }
    if (!v->want_array)
        ub_vb_fail(c, l, "type '%s' is not an array: write '%s[]' to give "
                   "a list", v->type_name, v->type_name);
    v->saw_list = true;
}

void ub_vb_tuple_open(ub_pctx *c, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (!v->type) {
        ub_vb_uopen(c, UB_U_TUPLE, l);
        return;
    }
    if (v->failed)
        return;
    char tb[80];
    if (v->want_array && v->list_depth == 0) {
        ub_vb_fail(c, l, "type '%s' is an array: expected a list '[...]'",
                   ub_vb_tname(v, tb, sizeof tb));
        return;
    }
    if (v->depth_needed == 0) {
        ub_vb_fail(c, l, "a value of type '%s' is a single value, not a "
                   "tuple", v->type_name);
        return;
    }
    if (v->tuple_depth >= (int)v->depth_needed) {
        ub_vb_fail(c, l, "tuple nested too deeply for type '%s'",
                   v->type_name);
        return;
    }
    if (v->tuple_depth == 0 && !v->want_array && v->nelem >= 1) {
        ub_vb_fail(c, l, "type '%s' holds one value", v->type_name);
        return;
    }
    v->tuple_depth++;
    if (v->tuple_depth == 1) {
        v->comp = 0;
        v->rows_done = 0;
    }
    v->row_comp = 0;
}

void ub_vb_tuple_close(ub_pctx *c, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    if (!v->type) {
        ub_vb_uclose(c);
        return;
    }
    if (v->failed)
        return;
    if (v->depth_needed == 2 && v->tuple_depth == 2) {
        if (v->row_comp != v->cols) {
            ub_vb_fail(c, l, "tuple dimensions error for type '%s': a row "
                       "has %u values, expected %u", v->type_name,
                       v->row_comp, v->cols);
            return;
        }
        v->rows_done++;
    } else if (v->depth_needed == 2) {
        if (v->rows_done != v->rows || v->comp != v->ncomp) {
            ub_vb_fail(c, l, "tuple dimensions error for type '%s': expected "
                       "%u rows of %u values", v->type_name, v->rows,
                       v->cols);
            return;
        }
        v->nelem++;
    } else {
        if (v->comp != v->cols) {
            ub_vb_fail(c, l, "tuple dimensions error for type '%s': expected "
                       "%u values, found %u", v->type_name, v->cols,
                       v->comp);
            return;
        }
        v->nelem++;
    }
    v->tuple_depth--;
}

/* The value read since ub_vb_begin (EMPTY after an error). */
static ub_value ub_vb_finish(ub_pctx *c, ub_tokloc l)
{
    ub_vb *v = &c->vb;
    ub_value r = {0};
    if (v->failed)
        return r;
    if (!v->type) {
        if (v->nnodes != 1)
            return r;
        ub_untyped *u = ub_alloc(c, sizeof *u);
        *u = v->nodes[0];
        r.kind = UB_V_UNTYPED;
        r.u.untyped = u;
        return r;
    }
    if (v->want_array && !v->saw_list) {
        char tb[80];
        ub_vb_fail(c, l, "type '%s' is an array: expected a list '[...]'",
                   ub_vb_tname(v, tb, sizeof tb));
        return r;
    }
    if (!v->want_array && v->nelem != 1)
        return r;
    /* not ub_value_new: no need to clear what is overwritten at once */
    r = (ub_value){.kind = UB_V_DATA, .is_array = v->want_array,
                   .type_id = ub_type_id_of(v->type), .count = v->nelem};
    if (ub_value_is_inline(&r)) {
        ub_value_set_data(&r, v->buf);
    } else {
        r.u.out_of_line = ub_alloc(c, v->len);
        memcpy(r.u.out_of_line, v->buf, v->len);
    }
    return r;
}

/* --- type names ------------------------------------------------------------- */


/* The value type called `name`, and the name to store for it; NULL when
 * unknown (the name is then kept as authored). */
static const ub_type *ub_lookup_type_slow(ub_pctx *c, const char *name,
                                          const char **stored);

/* Type names repeat on every line: remember them by interned pointer. */
static const ub_type *ub_lookup_type(ub_pctx *c, const char *name,
                                     const char **stored)
{
    size_t h = ((uintptr_t)name >> 3) % UB_TYPE_CACHE;
    if (c->tcache[h].name == name) {
        *stored = c->tcache[h].stored;
        return c->tcache[h].type;
    }
    const ub_type *t = ub_lookup_type_slow(c, name, stored);
    c->tcache[h].name = name;
    c->tcache[h].stored = *stored;
    c->tcache[h].type = t;
    return t;
}

static const ub_type *ub_lookup_type_slow(ub_pctx *c, const char *name,
                                          const char **stored)
{
    bool renamed;
    const ub_type *t = ub_type_of_attr_name(name, ub_str_len(name), &renamed);
    *stored = renamed ? ub_in(c, t->name, strlen(t->name)) : name;
    return t;
}

/* --- metadata fields ---------------------------------------------------------- */

static const ub_metadef *ub_field_lookup_slow(const ub_pctx *c,
                                              const char *key, int spec);

/* Metadata keys repeat too: cache the lookup by (interned key, spec). */
static const ub_metadef *ub_field_lookup(ub_pctx *c, const char *key,
                                         int spec)
{
    size_t h = (((uintptr_t)key >> 3) * 4 + (size_t)spec) % UB_FIELD_CACHE;
    if (c->fcache[h].key == key && c->fcache[h].spec == spec)
        return c->fcache[h].def;
    const ub_metadef *f = ub_field_lookup_slow(c, key, spec);
    c->fcache[h].key = key;
    c->fcache[h].spec = spec;
    c->fcache[h].def = f;
    return f;
}

static const ub_metadef *ub_field_lookup_slow(const ub_pctx *c,
                                              const char *key, int spec)
{
    unsigned bit = UB_MD_ON(spec);
    const ub_metadef *f = ub_metadef_find(key, (ub_spec_kind)spec);
    if (f)
        return f;
    for (size_t i = 0; i < c->n_xdefs; i++)
        if ((c->xdefs[i].specs & bit) && c->xdefs[i].key == key)
            return &c->xdefs[i];
    return NULL;
}

/* A plugin's field as the parser reads it (kind UB_MD_UNKNOWN when its type
 * is none usdbake knows: then it is read as unknown metadata). */
static ub_metadef ub_field_from_plugin(const ub_meta_field *f)
{
    ub_metadef d = {.key = f->name, .kind = UB_MD_UNKNOWN};
    /* the spec bits: layers, prims, attributes, relationships (variants
     * are read as prims) */
    d.specs = f->applies_to & (UB_APPLIES_LAYERS | UB_APPLIES_PRIMS |
                               UB_APPLIES_ATTRIBUTES |
                               UB_APPLIES_RELATIONSHIPS);
    if (f->applies_to & UB_APPLIES_VARIANTS)
        d.specs |= UB_MD_ON(UB_SPEC_PRIM);
    const char *t = f->type_name ? f->type_name : "";
    size_t n = strlen(t);
    if (strcmp(t, "dictionary") == 0) {
        d.kind = UB_MD_DICT;
    } else if (n > 6 && strcmp(t + n - 6, "listop") == 0) {
        const ub_type *ty = ub_type_by_name(t, n - 6);
        if (ty && (ty->id == UB_TY_INT || ty->id == UB_TY_INT64 ||
                   ty->id == UB_TY_UINT || ty->id == UB_TY_UINT64 ||
                   ty->id == UB_TY_STRING || ty->id == UB_TY_TOKEN)) {
            d.kind = UB_MD_LISTOP;
            d.type = ty->id;
        }
    } else {
        bool arr = n > 2 && strcmp(t + n - 2, "[]") == 0;
        const ub_type *ty = ub_type_by_name(t, arr ? n - 2 : n);
        if (ty && ty->id < UB_TY_PATH) {
            d.kind = UB_MD_TYPED;
            d.type = ty->id;
            d.array = arr;
        }
    }
    return d;
}

/* The keywords, interned once per parse (c->kw, by token). */
static void ub_intern_keywords(ub_pctx *c)
{
    for (size_t i = 0; i < UB_IDENT_NKEYWORDS; i++)
        c->kw[i] = ub_in(c, ub_ident_keywords[i],
                         strlen(ub_ident_keywords[i]));
}

/* The plugins' fields of the parse options, for ub_field_lookup. */
static void ub_fields_from_plugins(ub_pctx *c, const ub_meta_field *f,
                                   size_t n)
{
    c->xdefs = n ? malloc(n * sizeof *c->xdefs) : NULL;
    if (n && !c->xdefs)
        ub_oom(c);
    for (size_t i = 0; i < n; i++) {
        ub_metadef d = ub_field_from_plugin(&f[i]);
        if (d.kind != UB_MD_UNKNOWN)
            c->xdefs[c->n_xdefs++] = d;
    }
}

/* --- actions: layer and metadata ---------------------------------------------- */

void ub_act_magic(ub_pctx *c, const char *text, ub_tokloc l)
{
    size_t n = ub_str_len(text);
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    bool usda = n >= 6 && memcmp(text, "#usda ", 6) == 0;
    bool sdf = n >= 11 && memcmp(text, "#sdf 1.4.32", 11) == 0;
    c->cookie_seen = true;
    if (!usda && !sdf) {
        ub_perr(c, l, "not a usda layer: the first line must be '#usda 1.0'"
                " (found '%.40s')", text);
        return;
    }
    /* OpenUSD reads any version (its line need only end in "1.0"), with
     * a warning that the layer may mean something else */
    if (!usda || (n >= 9 && memcmp(text + n - 3, "1.0", 3) == 0))
        return;
    ub_pwarn_hint(c, l, "OpenUSD 24.08 reads it as 1.0 too, with a warning",
                  "usda version '%.*s' is not 1.0, the version read here: "
                  "the layer is read as 1.0, and may mean something else",
                  (int)(n - 6 > 40 ? 40 : n - 6), text + 6);
}

const char *ub_act_join(ub_pctx *c, const char *a, char sep, const char *b)
{
    size_t na = ub_str_len(a), nb = ub_str_len(b);
    char *t = malloc(na + nb + 1);
    if (!t)
        ub_oom(c);
    memcpy(t, a, na);
    t[na] = sep;
    memcpy(t + na + 1, b, nb);
    const char *r = ub_intern(c->strtab, t, na + nb + 1);
    free(t);
    if (!r)
        ub_oom(c);
    return r;
}

double ub_act_ident_number(ub_pctx *c, const char *id, ub_tokloc l)
{
    double d;
    if (ub_special_float(id, &d))
        return d;
    ub_perr(c, l, "expected a time (a number, inf, -inf or nan), found '%s'",
            id);
    return 0.0;
}

static ub_tokloc ub_tl(const ub_pctx *c, ub_sloc s)
{
    ub_loc l = ub_layer_loc(c->layer, s);
    return (ub_tokloc){l.line, l.col};
}

/* Metadata is gathered in a malloc'd scratch list and copied into the
 * arena at its exact size once its owner is done: growing each small list
 * in the arena would leave every outgrown copy behind (a third of a
 * prim-heavy layer's memory). */
static void ub_meta_flush(ub_pctx *c)
{
    if (!c->ms_owner && !c->ms_owner_prop)
        return;
    if (c->ms_dirty) {
        ub_fields *t = c->ms_owner;
        if (!t && !(t = ub_prop_meta_get(c->arena, c->ms_owner_prop)))
            ub_oom(c);
        ub_field *v = ub_alloc_rec(c, c->ms.n * sizeof *v, alignof(ub_field));
        memcpy(v, c->ms.v, c->ms.n * sizeof *v);
        t->v = v;
        t->n = t->cap = c->ms.n;
    }
    c->ms_owner = NULL;
    c->ms_owner_prop = NULL;
    c->ms_dirty = false;
}

/* Whether the scratch holds the list of the metadata being read. */
static bool ub_meta_in_scratch(const ub_pctx *c)
{
    return c->meta ? c->ms_owner == c->meta
                   : !c->ms_owner && c->ms_owner_prop == c->meta_prop;
}

/* The list of the metadata being read, as stored. */
static const ub_fields *ub_meta_stored(const ub_pctx *c)
{
    return c->meta ? c->meta : ub_prop_meta(c->meta_prop);
}

/* The list of the metadata being read, for reading. */
static const ub_fields *ub_meta_r(ub_pctx *c)
{
    return ub_meta_in_scratch(c) ? &c->ms : ub_meta_stored(c);
}

/* A prim's property pointers are gathered the same way, except that the
 * prim's own list points at the scratch while it is read, so that the
 * layer's lookups (ub_prop_find_or_new) see it: doubling each list in the
 * arena would leave every outgrown copy behind.  The owner is the
 * innermost open prim or none: every prim's begin and end gives the list
 * back to the arena at its exact size. */
static void ub_props_flush(ub_pctx *c)
{
    ub_prim *p = c->ps_owner;
    if (!p)
        return;
    c->ps_owner = NULL;
    if (p->props.v != c->ps) /* replaced meanwhile: nothing to give back */
        return;
    uint32_t n = p->props.n;
    ub_prop **v = NULL;
    if (n) {
        v = ub_alloc_rec(c, n * sizeof *v, alignof(ub_prop *));
        memcpy(v, c->ps, n * sizeof *v);
    }
    p->props.v = v;
    p->props.cap = n;
}

/* Room in prim's list for one more property, in the scratch. */
static void ub_props_room(ub_pctx *c, ub_prim *prim)
{
    uint32_t n = prim->props.n;
    bool take = c->ps_owner != prim;
    if (take)
        ub_props_flush(c);
    if (n + 1 > c->ps_cap) {
        uint32_t cap = c->ps_cap * 2 > n + 16 ? c->ps_cap * 2 : n + 16;
        ub_prop **nv = realloc(c->ps, cap * sizeof *nv);
        if (!nv)
            ub_oom(c);
        c->ps = nv;
        c->ps_cap = cap;
    }
    if (take) {
        if (n)
            memcpy(c->ps, prim->props.v, n * sizeof *c->ps);
        c->ps_owner = prim;
    }
    prim->props.v = c->ps;
    prim->props.cap = c->ps_cap;
}

static ub_field *ub_meta_find(ub_pctx *c, const char *key)
{
    return ub_fields_find(ub_meta_r(c), key);
}

static void ub_set_meta(ub_pctx *c, const char *key, ub_value v, ub_tokloc l)
{
    if (!ub_meta_in_scratch(c)) {
        ub_meta_flush(c);
        const ub_fields *cur = ub_meta_stored(c);
        uint32_t n = cur->n;
        if (n + 1 > c->ms_cap) {
            uint32_t cap = n + 16;
            ub_field *nv = realloc(c->ms.v, cap * sizeof *nv);
            if (!nv)
                ub_oom(c);
            c->ms.v = nv;
            c->ms_cap = cap;
        }
        if (n)
            memcpy(c->ms.v, cur->v, n * sizeof *c->ms.v);
        c->ms.n = n;
        c->ms_owner = c->meta;
        c->ms_owner_prop = c->meta ? NULL : c->meta_prop;
    }
    if (c->ms.n + 1 > c->ms_cap) {
        uint32_t cap = c->ms_cap * 2;
        ub_field *nv = realloc(c->ms.v, cap * sizeof *nv);
        if (!nv)
            ub_oom(c);
        c->ms.v = nv;
        c->ms_cap = cap;
    }
    /* room for one more: ub_fields_set never grows it in the arena */
    c->ms.cap = c->ms.n + 1;
    if (!ub_fields_set(c->arena, &c->ms, key, v, ub_mksloc(c, l)))
        ub_oom(c);
    c->ms_dirty = true;
}

static ub_value ub_str_value(ub_pctx *c, ub_type_id t, const char *s)
{
    ub_value v = ub_value_new(c->arena, ub_type_get(t), 1, false);
    if (v.kind != UB_V_DATA)
        ub_oom(c);
    memcpy(ub_value_data(&v), &s, sizeof s);
    return v;
}

void ub_act_comment(ub_pctx *c, const char *s, ub_tokloc l)
{
    ub_set_meta(c, ub_in(c, "comment", 7),
                ub_str_value(c, UB_TY_STRING, s), l);
}

void ub_act_doc(ub_pctx *c, const char *s, ub_tokloc l)
{
    ub_set_meta(c, c->kw[TOK_DOC - TOK_ADD], ub_str_value(c, UB_TY_STRING, s),
                l);
}

void ub_act_token_meta(ub_pctx *c, const char *key, const char *value,
                       ub_tokloc kl, ub_tokloc vl)
{
    (void)vl;
    ub_set_meta(c, key,
                ub_str_value(c, UB_TY_TOKEN, value ? value : ub_in(c, "", 0)),
                kl);
}

void ub_act_permission(ub_pctx *c, const char *id, ub_tokloc kl,
                       ub_tokloc vl)
{
    if (strcmp(id, "public") != 0 && strcmp(id, "private") != 0) {
        ub_perr(c, vl, "'%s' is not a valid permission: expected public or "
                "private", id);
        return;
    }
    ub_set_meta(c, c->kw[TOK_PERMISSION - TOK_ADD],
                ub_str_value(c, UB_TY_TOKEN, id), kl);
}

void ub_act_display_unit(ub_pctx *c, const char *id, ub_tokloc l)
{
    if (ub_metadef_display_unit_ok(id)) {
        ub_set_meta(c, c->kw[TOK_DISPLAYUNIT - TOK_ADD],
                    ub_str_value(c, UB_TY_TOKEN, id), l);
        return;
    }
    ub_perr(c, l, "'%s' is not a valid display unit: expected one of mm, "
            "cm, dm, m, km, in, ft, yd, mi, deg, rad, default", id);
}

void ub_act_meta_begin(ub_pctx *c, const char *key, ub_tokloc l, int part)
{
    const ub_metadef *f = ub_field_lookup(c, key, c->spec);
    if (!f && ub_metadef_not_metadata(key, (ub_spec_kind)c->spec))
        ub_perr(c, l, "'%s' is not metadata: it cannot be set with '%s = "
                "...' here", key, key);
    c->meta_key = key;
    c->meta_loc = l;
    c->meta_part = part;
    c->meta_done = false;
    c->last_dict = NULL;
    c->meta_kind = f ? f->kind : UB_MD_UNKNOWN;
    c->meta_def = f;
    if (!f) {
        ub_vb_begin(c, NULL, NULL, false);
        return;
    }
    if (part != UB_LO_EXPLICIT && f->kind != UB_MD_LISTOP) {
        ub_perr(c, l, "metadata field '%s' is not a list: list edits (%s) "
                "do not apply to it", key,
                c->kw[(part == UB_LO_DELETE    ? TOK_DELETE
                       : part == UB_LO_ADD     ? TOK_ADD
                       : part == UB_LO_PREPEND ? TOK_PREPEND
                       : part == UB_LO_APPEND  ? TOK_APPEND
                                               : TOK_REORDER) -
                      TOK_ADD]);
        c->meta_kind = UB_MD_UNKNOWN;
        ub_vb_begin(c, NULL, NULL, false);
        c->vb.failed = true;
        return;
    }
    if (f->kind == UB_MD_DICT) {
        ub_vb_begin(c, NULL, NULL, false); /* only `{ ... }` will do */
        return;
    }
    const ub_type *t = ub_type_get(f->type);
    ub_vb_begin(c, t, t->name, f->kind == UB_MD_LISTOP || f->array);
}

static void ub_listop_set(ub_pctx *c, ub_value *slot, const ub_type *t,
                          int part, ub_value items, ub_tokloc l,
                          const char *field)
{
    if (items.kind == UB_V_DATA && ub_value_items_dup(&items)) {
        ub_perr(c, l, "duplicate items in the list for '%s'", field);
        return;
    }
    if (slot->kind != UB_V_LISTOP) {
        ub_listop *lo = ub_listop_new(c->arena);
        if (!lo)
            ub_oom(c);
        *slot = (ub_value){.kind = UB_V_LISTOP, .type_id = ub_type_id_of(t)};
        slot->u.listop = lo;
    }
    ub_listop *lo = slot->u.listop;
    if (part == UB_LO_EXPLICIT) {
        memset(lo->has, 0, sizeof lo->has);
        lo->is_explicit = true;
    } else {
        if (lo->is_explicit)
            lo->has[UB_LO_EXPLICIT] = false;
        lo->is_explicit = false;
    }
    lo->has[part] = true;
    if (ub_listop_assign(c->arena, lo, part, items, ub_mksloc(c, l)) != 0)
        ub_oom(c);
}

/* Store a list-op part into metadata field key. */
static void ub_meta_listop(ub_pctx *c, const char *key, const ub_type *t,
                           int part, ub_value items, ub_tokloc l)
{
    ub_field *f = ub_meta_find(c, key);
    ub_value v = f ? f->value : (ub_value){0};
    if (v.kind != UB_V_LISTOP)
        v = (ub_value){0};
    ub_listop_set(c, &v, t, part, items, l, key);
    if (v.kind == UB_V_LISTOP)
        ub_set_meta(c, key, v, l);
}

void ub_act_meta_none(ub_pctx *c, ub_tokloc l)
{
    c->meta_done = true;
    if (c->meta_kind == UB_MD_LISTOP) {
        ub_value empty = ub_value_new(c->arena, c->vb.type, 0, true);
        ub_meta_listop(c, c->meta_key, c->vb.type, c->meta_part, empty, l);
        return;
    }
    if (c->meta_kind != UB_MD_UNKNOWN) {
        /* OpenUSD refuses the layer: None is a value only for list ops
         * and for fields it does not know */
        char tb[80], what[100] = "a dictionary '{ ... }'";
        if (c->meta_kind != UB_MD_DICT)
            snprintf(what, sizeof what, "a value of type '%s'",
                     ub_vb_tname(&c->vb, tb, sizeof tb));
        ub_perr(c, l, "invalid value for field '%s': expected %s, found "
                "None; to leave the field unset, leave it out", c->meta_key,
                what);
        return;
    }
    if (c->meta_part != UB_LO_EXPLICIT) {
        /* an unknown list op set to None: an empty list */
        ub_untyped *u = ub_alloc(c, sizeof *u);
        *u = (ub_untyped){.kind = UB_U_LIST};
        ub_value empty = {.kind = UB_V_UNTYPED};
        empty.u.untyped = u;
        ub_value v = {0};
        ub_field *f = ub_meta_find(c, c->meta_key);
        if (f && f->value.kind == UB_V_LISTOP)
            v = f->value;
        ub_listop_set(c, &v, NULL, c->meta_part, empty, l, c->meta_key);
        ub_set_meta(c, c->meta_key, v, c->meta_loc);
        return;
    }
    ub_set_meta(c, c->meta_key, ub_value_block(), c->meta_loc);
}

void ub_act_meta_dict(ub_pctx *c)
{
    c->meta_done = true;
    if (c->meta_kind != UB_MD_DICT && c->meta_kind != UB_MD_UNKNOWN) {
        /* (the field's type: the value builder has read the dictionary's
         * own values since) */
        const ub_metadef *f =
            ub_field_lookup(c, c->meta_key, c->spec);
        const ub_type *t = f ? ub_type_get(f->type) : NULL;
        const char *want = !t ? "a value"
                           : f->kind == UB_MD_LISTOP || f->array
                               ? "a list '[...]'"
                               : ub_scalar_what(t->scalar, t);
        ub_perr(c, c->meta_loc, "invalid value for field '%s': expected %s, "
                "found a dictionary", c->meta_key, want);
        return;
    }
    if (!c->last_dict)
        return;
    ub_value v = {.kind = UB_V_DICT};
    v.u.dict = c->last_dict;
    ub_set_meta(c, c->meta_key, v, c->meta_loc);
}

void ub_act_meta_end(ub_pctx *c)
{
    if (c->meta_done)
        return;
    if (c->meta_kind == UB_MD_DICT) {
        ub_perr(c, c->meta_loc, "invalid value for field '%s': expected a "
                "dictionary '{ ... }'", c->meta_key);
        return;
    }
    ub_value v = ub_vb_finish(c, c->meta_loc);
    if (v.kind == UB_V_EMPTY)
        return;
    if (c->meta_kind == UB_MD_LISTOP) {
        ub_meta_listop(c, c->meta_key, c->vb.type, c->meta_part, v,
                       c->meta_loc);
        return;
    }
    const char *why = c->meta_kind == UB_MD_TYPED
                          ? ub_metadef_value_fault(c->meta_def, &v)
                          : NULL;
    if (why) {
        ub_perr(c, c->meta_loc, "invalid value for field '%s': %s",
                c->meta_key, why);
        return;
    }
    if (c->meta_kind == UB_MD_TYPED && c->spec == UB_SPEC_PRIM &&
        v.kind == UB_V_DATA && v.type_id == UB_TY_TOKEN &&
        strcmp(c->meta_key, "typeName") == 0) {
        /* the prim's type, as the one after its specifier (the later one
         * wins; "" for none), as OpenUSD reads it; a variant's is
         * dropped, as OpenUSD's output drops it */
        if (!ub_prim_variant_set(c->prim)) {
            const char *t = ub_value_str(&v, 0);
            c->prim->type_name = t[0] ? t : NULL;
        }
        return;
    }
    if (c->meta_part != UB_LO_EXPLICIT) {
        ub_value lv = {0};
        ub_field *f = ub_meta_find(c, c->meta_key);
        if (f && f->value.kind == UB_V_LISTOP)
            lv = f->value;
        ub_listop_set(c, &lv, NULL, c->meta_part, v, c->meta_loc,
                      c->meta_key);
        ub_set_meta(c, c->meta_key, lv, c->meta_loc);
        return;
    }
    ub_set_meta(c, c->meta_key, v, c->meta_loc);
}

/* Duplicate elements in a list op part (OpenUSD rejects them). */
/* --- actions: lists ------------------------------------------------------------ */

void ub_act_push_path(ub_pctx *c, const char *s, ub_tokloc l)
{
    ub_plist *p = &c->paths;
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 16;
        const char **v = realloc(p->v, cap * sizeof *v);
        ub_tokloc *lv = realloc(p->loc, cap * sizeof *lv);
        if (v)
            p->v = v;
        if (lv)
            p->loc = lv;
        if (!v || !lv)
            ub_oom(c);
        p->cap = cap;
    }
    p->v[p->n] = s;
    p->loc[p->n] = l;
    p->n++;
}

void ub_act_none_list(ub_pctx *c, ub_tokloc l)
{
    c->none_list = true;
    c->none_loc = l;
}

static const char *ub_part_word(int part)
{
    static const char *const w[] = {"explicit", "delete", "add", "prepend",
                                    "append", "reorder"};
    return w[part];
}

/* An empty list or None is only meaningful as an explicit list. */
static bool ub_empty_ok(ub_pctx *c, uint32_t n, int part, const char *what,
                        ub_tokloc l)
{
    bool none = c->none_list;
    ub_tokloc at = none ? c->none_loc : l;
    c->none_list = false;
    if (n == 0 && part != UB_LO_EXPLICIT) {
        ub_perr(c, at, "setting %s to None or an empty list is only allowed "
                "for an explicit list, not with '%s'", what,
                ub_part_word(part));
        return false;
    }
    return true;
}

/* ctx->paths as a DATA array of type t. */
static ub_value ub_paths_value(ub_pctx *c, ub_type_id t, uint32_t n)
{
    ub_value v = ub_value_new(c->arena, ub_type_get(t), n, true);
    if (v.kind != UB_V_DATA)
        ub_oom(c);
    if (n)
        memcpy(ub_value_data(&v), c->paths.v, n * sizeof *c->paths.v);
    return v;
}

void ub_act_paths(ub_pctx *c, const char *key, int part, ub_tokloc l)
{
    bool inh = strcmp(key, "inherits") == 0;
    const char *what = inh ? "inherit paths" : "specializes paths";
    uint32_t n = c->paths.n;
    c->paths.n = 0;
    if (!ub_empty_ok(c, n, part, what, l))
        return;
    ub_pathinfo pi;
    for (uint32_t i = 0; i < n; i++) {
        /* made absolute first, as OpenUSD does: <.> is the prim itself,
         * and a path that climbs to </> names no prim */
        const char *abs = ub_path_abs(c, c->paths.v[i], &pi, c->prim);
        bool root = abs && strcmp(abs, "/") == 0;
        if (!abs || pi.has_prop || root) {
            ub_perr(c, c->paths.loc[i], "%s must be prim paths: <%s> is "
                    "not one%s", inh ? "Inherit paths" : "Specializes paths",
                    c->paths.v[i],
                    root ? " (it is the pseudo-root </>)"
                    : abs ? "" : " (or leaves the root)");
            return;
        }
        if (pi.variant_sel) {
            ub_perr(c, c->paths.loc[i], "%s cannot contain variant "
                    "selections: <%s>", what, c->paths.v[i]);
            return;
        }
        if (ub_relative_in_variant(c, i, what))
            return;
        c->paths.v[i] = abs;
    }
    ub_meta_listop(c, key, ub_type_get(UB_TY_PATH), part,
                   ub_paths_value(c, UB_TY_PATH, n), l);
}

void ub_act_variant_sets(ub_pctx *c, int part, ub_tokloc l)
{
    uint32_t n = c->paths.n;
    c->paths.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ub_nul_in_name(c, c->paths.v[i], c->paths.loc[i],
                           "a variant set name"))
            return;
        if (!ub_ident_variant_ok(c->paths.v[i], ub_str_len(c->paths.v[i]))) {
            ub_perr(c, c->paths.loc[i], "\"%s\" is not a valid variant set "
                    "name (letters, digits, '_', '|', '-', optionally after "
                    "a leading '.')", c->paths.v[i]);
            return;
        }
    }
    ub_meta_listop(c, c->kw[TOK_VARIANTSETS - TOK_ADD],
                   ub_type_get(UB_TY_STRING), part,
                   ub_paths_value(c, UB_TY_STRING, n), l);
}

static void ub_stream_late(ub_pctx *c);

void ub_act_name_order(ub_pctx *c, int props, ub_tokloc l)
{
    ub_stream_late(c);
    /* stored unchecked, as OpenUSD does: an order may name anything */
    uint32_t n = c->paths.n;
    c->paths.n = 0;
    (void)l;
    if (c->split_role == UB_SPLIT_TAIL && !c->prim->parent)
        ub_split_give_up(c); /* an order on a level the tail did not open */
    ub_value v = ub_paths_value(c, UB_TY_TOKEN, n);
    ub_prim_ext *x = ub_prim_ext_get(c->arena, c->prim);
    if (!x)
        ub_oom(c);
    if (props)
        x->property_order = v;
    else
        x->prim_order = v;
}

void ub_act_offset(ub_pctx *c, int which, const ub_num *n, ub_tokloc l)
{
    double d = ub_num_to_double(n);
    if (!ub_offset_num_reads(d)) {
        /* OpenUSD reads a number past a double's range as inf, and writes
         * it as `inf`, which its reader (and ours) then refuses in a layer
         * offset ("-inf" reads): said here, as usdcat does not say it. */
        if (!ub_pwarn_hint(c, l,
                           "write a finite number (OpenUSD reads it as inf "
                           "too, and writes text it cannot read)",
                           "this %s is too large for a double and reads as "
                           "inf, which usda cannot read back in a layer "
                           "offset",
                           which == 0 ? "offset" : "scale"))
            return;
    }
    if (which == 0) {
        c->cur_offset.offset = d;
        c->cur_has_offset = true;
    } else {
        c->cur_offset.scale = d;
        c->cur_has_scale = true;
    }
}

static void ub_offset_reset(ub_pctx *c)
{
    c->cur_offset = UB_OFFSET_IDENTITY;
    c->cur_has_offset = c->cur_has_scale = false;
}

void ub_act_sublayer(ub_pctx *c, const char *asset, ub_tokloc l)
{
    ub_sublayer *s = ub_layer_add_sublayer(c->layer, asset, ub_mksloc(c, l));
    if (!s)
        ub_oom(c);
    s->offset = c->cur_offset;
    s->has_offset = c->cur_has_offset;
    s->has_scale = c->cur_has_scale;
    ub_offset_reset(c);
}

void ub_act_sublayers_done(ub_pctx *c, ub_tokloc l)
{
    /* OpenUSD writes no subLayers for an empty list: an empty one is not
     * kept (ub_layer_add_sublayer marks the non-empty case) */
    (void)l;
    (void)c;
}

void ub_act_ref(ub_pctx *c, const char *asset, const char *path,
                ub_tokloc al, ub_tokloc pl)
{
    ub_reference r = {.asset = asset ? asset : ub_in(c, "", 0),
                      .prim_path = ub_in(c, "", 0),
                      .offset = c->cur_offset,
                      .has_offset = c->cur_has_offset,
                      .has_scale = c->cur_has_scale,
                      .custom_data = c->cur_ref_dict,
                      .loc = ub_mksloc(c, al)};
    ub_offset_reset(c);
    c->cur_ref_dict = NULL;
    if (asset && ub_str_len(asset) == 0) {
        ub_perr(c, al, "the asset path of a reference or payload must not be "
                "empty; for an internal reference, remove the '@' delimiters");
        goto refused;
    }
    if (asset && path && ub_str_len(path) == 0) {
        /* (an internal reference to <> is kept, as OpenUSD keeps it) */
        ub_perr(c, pl, "<> is not a valid prim path; to reference the "
                "layer's default prim, write the asset path alone");
        goto refused;
    }
    if (path) {
        ub_pathinfo pi;
        const char *canon = ub_str_len(path) ? ub_path_canon(c, path, &pi)
                                             : path;
        if (!canon || (ub_str_len(path) && (pi.has_prop || pi.n == 0))) {
            ub_perr(c, pl, "<%s> is not a valid prim path", path);
            goto refused;
        }
        if (ub_str_len(path) && pi.variant_sel) {
            ub_perr(c, pl, "reference and payload paths cannot contain "
                    "variant selections: <%s>", path);
            goto refused;
        }
        if (ub_str_len(path) && !pi.absolute) {
            ub_perr(c, pl, "the prim path of a reference or payload must be "
                    "empty or absolute: <%s>", path);
            goto refused;
        }
        r.prim_path = canon;
    }
    ub_rlist *rl = &c->refs;
    if (rl->n == rl->cap) {
        uint32_t cap = rl->cap ? rl->cap * 2 : 8;
        ub_reference *v = realloc(rl->v, cap * sizeof *v);
        if (!v)
            ub_oom(c);
        rl->v = v;
        rl->cap = cap;
    }
    rl->v[rl->n++] = r;
    return;
refused:
    c->refs_refused = true; /* (said: the list's emptiness is not) */
}

void ub_act_refs(ub_pctx *c, ub_type_id t, int part, ub_tokloc l)
{
    uint32_t n = c->refs.n;
    c->refs.n = 0;
    bool refused = c->refs_refused;
    c->refs_refused = false;
    if ((n == 0 && refused) ||
        !ub_empty_ok(c, n, part, t == UB_TY_PAYLOAD ? "payload" : "references",
                     l))
        return;
    const ub_type *ty = ub_type_get(t);
    ub_value v = ub_value_new(c->arena, ty, n, true);
    if (v.kind != UB_V_DATA)
        ub_oom(c);
    if (n)
        memcpy(ub_value_data(&v), c->refs.v, n * sizeof *c->refs.v);
    ub_meta_listop(c, c->kw[(t == UB_TY_PAYLOAD ? TOK_PAYLOAD : TOK_REFERENCES) -
                            TOK_ADD],
                   ty, part, v, l);
}

void ub_act_dict_target(ub_pctx *c)
{
    c->last_dict = NULL;
}

void ub_act_ref_custom_data(ub_pctx *c)
{
    c->cur_ref_dict = c->last_dict;
}

void ub_act_relocates(ub_pctx *c, ub_tokloc l)
{
    /* stored as a PATH array source0, target0, source1, ... (absolute;
     * "" for <>), as the writer reads it */
    uint32_t n = c->paths.n & ~1u;
    c->paths.n = 0;
    ub_pathinfo pi;
    for (uint32_t i = 0; i < n; i += 2) {
        const char *src = c->paths.v[i], *dst = c->paths.v[i + 1];
        /* a prim path as authored, as OpenUSD's reader checks it: "." and
         * ".." are prim paths, "/" is not */
        const char *as = ub_path_abs(c, src, &pi, c->prim);
        if (!as || pi.has_prop || pi.variant_sel ||
            (pi.n == 0 && src[0] == '/')) {
            ub_perr(c, c->paths.loc[i], "'%s' is not a valid relocates path: "
                    "expected a prim path", src);
            return;
        }
        const char *ad = ub_str_len(dst) ? ub_path_abs(c, dst, &pi, c->prim)
                                         : dst;
        if (!ad || (ub_str_len(dst) &&
                    (pi.has_prop || pi.variant_sel ||
                     (pi.n == 0 && dst[0] == '/')))) {
            ub_perr(c, c->paths.loc[i + 1], "'%s' is not a valid relocates "
                    "path: expected a prim path (or <> to delete)", dst);
            return;
        }
        for (int k = 0; k < 2 && c->prim == c->layer->root; k++) {
            if (strcmp(k ? ad : as, "/") != 0)
                continue;
            /* "." in the layer's own relocates: OpenUSD keeps the root and
             * writes it as </>, which no reader takes back (a prim's own
             * relocates write it relative, as "..") */
            if (!ub_pwarn_hint(c, c->paths.loc[i + k],
                               "name a prim (OpenUSD reads this too, and "
                               "writes text it cannot read)",
                               "'%s' here is the pseudo-root, which is "
                               "written back as </> and cannot be read again "
                               "as a relocates path",
                               k ? dst : src))
                return;
        }
        c->paths.v[i] = as;
        c->paths.v[i + 1] = ad;
    }
    ub_set_meta(c, c->kw[TOK_RELOCATES - TOK_ADD],
                ub_paths_value(c, UB_TY_PATH, n), l);
}

void ub_act_string_dict(ub_pctx *c, const char *key, ub_tokloc l)
{
    uint32_t n = c->paths.n;
    c->paths.n = 0;
    ub_dict *d = ub_dict_new(c->arena);
    if (!d)
        ub_oom(c);
    for (uint32_t i = 0; i + 1 < n; i += 2) {
        if (ub_str_len(c->paths.v[i]) == 0) {
            ub_perr(c, c->paths.loc[i], "keys of '%s' must not be empty",
                    key);
            return;
        }
        if (!ub_dict_set(c->arena, d, c->paths.v[i],
                         ub_str_value(c, UB_TY_STRING, c->paths.v[i + 1]),
                         ub_mksloc(c, c->paths.loc[i])))
            ub_oom(c);
    }
    ub_value v = {.kind = UB_V_DICT};
    v.u.dict = d;
    ub_set_meta(c, key, v, l);
}

void ub_act_variants_begin(ub_pctx *c, ub_tokloc l)
{
    c->variants_loc = l;
    c->last_dict = NULL;
}

void ub_act_variants(ub_pctx *c)
{
    ub_dict *in = c->last_dict;
    if (!in)
        return;
    const char *key = c->kw[TOK_VARIANTS - TOK_ADD];
    ub_field *f = ub_meta_find(c, key);
    ub_dict *d = f && f->value.kind == UB_V_DICT ? f->value.u.dict : NULL;
    if (!d && !(d = ub_dict_new(c->arena)))
        ub_oom(c);
    for (uint32_t i = 0; i < in->n; i++) {
        const ub_dict_entry *e = &in->e[i];
        if (e->value.kind != UB_V_DATA || e->value.is_array ||
            e->value.type_id != UB_TY_STRING) {
            ub_perr(c, ub_tl(c, e->loc), "variant selection '%s' must be a "
                    "string (string %s = \"...\")", e->key, e->key);
            return;
        }
        const char *sel = ub_value_str(&e->value, 0);
        size_t sl = ub_str_len(sel);
        /* a selection may also be a variable expression, "`...`" (more
         * than the two backquotes), resolved when the stage composes */
        bool expr = sl > 2 && sel[0] == '`' && sel[sl - 1] == '`';
        if (ub_parse_nul_cut(c, sel, ub_tl(c, e->loc))) {
            ub_perr(c, ub_tl(c, e->loc), "variant selection '%s' may not "
                    "hold a NUL byte", e->key);
            return;
        }
        if (!expr && !ub_ident_variant_ok(sel, sl)) {
            ub_perr(c, ub_tl(c, e->loc), "\"%s\" is not a valid variant name "
                    "(letters, digits, '_', '|', '-', optionally after a "
                    "leading '.') nor a variable expression (\"`...`\")",
                    sel);
            return;
        }
        if (!ub_dict_set(c->arena, d, e->key, e->value, e->loc))
            ub_oom(c);
    }
    ub_value v = {.kind = UB_V_DICT};
    v.u.dict = d;
    ub_set_meta(c, key, v, c->variants_loc);
}

/* --- actions: prims and variants ------------------------------------------------ */

/* Streaming hands over prims outside variants only: a variant's body is
 * written inside its owner's text, so it stays whole until the owner is. */
static bool ub_outside_variants(const ub_prim *p)
{
    for (; p; p = p->parent)
        if (ub_prim_variant_set(p))
            return false;
    return true;
}

/* Whether the prim beginning under parent is streamed.  After an error
 * nothing is streamed or released any more: the layer is dropped anyway,
 * and marks must stay paired with the prims that took them. */
static bool ub_streams(const ub_pctx *c, const ub_prim *parent)
{
    return c->stream && c->nerrors == 0 && ub_outside_variants(parent);
}

/* A statement whose text comes before a prim's children (a property, a
 * reorder) authored after one of them: a stream has already written that
 * part of the prim, so it must be told. */
static void ub_stream_late(ub_pctx *c)
{
    const ub_prim *p = c->prim;
    if (c->stream && p->children.n && ub_outside_variants(p) &&
        c->stream->prim_reopened)
        c->stream->prim_reopened(c->stream->ctx, p);
}

void ub_act_prim_begin(ub_pctx *c, int spec, const char *type,
                       const char *name, ub_tokloc l)
{
    ub_prim *parent = c->prim, *dup;
    ub_depth_enter(c, l);
    bool streamed = ub_streams(c, parent);
    if (streamed)
        ub_meta_flush(c); /* the parent's metadata must outlive the mark */
    ub_props_flush(c); /* so must its properties; and p becomes the owner */
    ub_prim *p = ub_prim_find_or_new(c->layer, parent, name,
                                     (ub_specifier)spec, ub_mksloc(c, l), &dup);
    if (!p)
        ub_oom(c);
    if (streamed) {
        if (c->nmarks == c->capmarks) {
            uint32_t cap = c->capmarks ? c->capmarks * 2 : 16;
            ub_arena_mark *m = realloc(c->marks, cap * sizeof *m);
            if (!m)
                ub_oom(c);
            c->marks = m;
            c->capmarks = cap;
        }
        /* p itself stays: as a stub it answers duplicate checks */
        c->marks[c->nmarks++] = ub_arena_get_mark(c->arena);
    }
    if (ub_nul_in_name(c, name, l, "a prim name")) {
        /* (said) */
    } else if (!ub_ident_ok(name, ub_str_len(name))) {
        ub_perr(c, l, "\"%s\" is not a valid prim name: expected an "
                "identifier", name);
    } else if (dup)
        ub_perr(c, l, "duplicate prim '%s' (first defined on line %u)",
                ub_prim_path(c->layer, dup), ub_layer_loc(c->layer, dup->loc).line);
    p->type_name = type;
    c->prim = p;
    c->spec = UB_SPEC_PRIM;
    c->meta = &p->meta;
}

/* Levels below the pseudo-root: 1 for a root prim. */
static unsigned ub_prim_depth(const ub_prim *p)
{
    unsigned depth = 0;
    for (const ub_prim *q = p; q->parent; q = q->parent)
        depth++;
    return depth;
}

/* Hand a closed prim to the stream, then give its memory back. */
static void ub_stream_prim(ub_pctx *c, ub_prim *p)
{
    ub_meta_flush(c);
    unsigned depth = ub_prim_depth(p);
    c->stream->prim_done(c->stream->ctx, c->layer, p, depth);
    ub_prim_drop_body(c->layer, p);
    ub_arena_release(c->arena, c->marks[--c->nmarks]);
}

void ub_act_prim_end(ub_pctx *c)
{
    ub_prim *p = c->prim;
    c->depth--;
    if (!ub_prim_variant_set(p) && ub_streams(c, p->parent) && c->nmarks) {
        ub_stream_prim(c, p);
        c->ps_owner = NULL; /* p's list went with its body: nothing to keep */
    } else {
        ub_props_flush(c);
    }
    if (ub_prim_variant_set(p)) {
        /* back to the enclosing variant set */
        c->vset_owner = p->parent;
        c->vset_name = ub_prim_variant_set(p);
    }
    c->prim = p->parent ? p->parent : p;
    c->spec = c->prim->parent ? UB_SPEC_PRIM : UB_SPEC_LAYER;
    c->meta = c->prim->parent ? &c->prim->meta : &c->layer->meta;
}

void ub_act_variant_set_begin(ub_pctx *c, const char *name, ub_tokloc l)
{
    const ub_variant_set *had = ub_variant_set_find(c->prim, name);
    if (ub_nul_in_name(c, name, l, "a variant set name")) {
        /* (said) */
    } else if (!ub_ident_variant_ok(name, ub_str_len(name))) {
        ub_perr(c, l, "\"%s\" is not a valid variant set name (letters, "
                "digits, '_', '|', '-', optionally after a leading '.')",
                name);
    } else if (had) {
        /* OpenUSD takes it silently, and means two things by it */
        ub_perr_hint(c, l,
                     "OpenUSD lists only the last block's variants, yet "
                     "composes the variants of every block; give the set "
                     "one block",
                     "duplicate variant set '%s' in <%s> (first defined on "
                     "line %u)", name, ub_prim_path(c->layer, c->prim),
                     ub_layer_loc(c->layer, had->loc).line);
    }
    if (!ub_variant_set_get(c->layer, c->prim, name, ub_mksloc(c, l)))
        ub_oom(c);
    c->vset_owner = c->prim;
    c->vset_name = name;
    c->vset_loc = l;
}

void ub_act_variant_set_end(ub_pctx *c)
{
    c->vset_owner = NULL;
    c->vset_name = NULL;
}

void ub_act_variant_begin(ub_pctx *c, const char *name, ub_tokloc l)
{
    ub_prim *owner = c->vset_owner;
    ub_depth_enter(c, l);
    if (ub_nul_in_name(c, name, l, "a variant name")) {
        /* (said) */
    } else if (!ub_ident_variant_ok(name, ub_str_len(name))) {
        ub_perr(c, l, "\"%s\" is not a valid variant name (letters, digits, "
                "'_', '|', '-', optionally after a leading '.')", name);
    } else if (!name[0])
        /* OpenUSD's reader takes it, then puts the variant where its set
         * is (both are </P{set=}>): the set vanishes from its output, and
         * a crate file of it holds two specs at one path */
        ub_perr(c, l, "a variant may not be named \"\": its path would be "
                "its variant set's own");
    ub_variant_set *set = ub_variant_set_get(c->layer, owner, c->vset_name,
                                             ub_mksloc(c, c->vset_loc));
    if (!set)
        ub_oom(c);
    ub_prim *v = NULL;
    for (uint32_t i = 0; i < set->variants.n; i++)
        if (set->variants.v[i]->name == name)
            v = set->variants.v[i];
    if (v && name[0])
        ub_perr_hint(c, l,
                     "OpenUSD lists the variant twice and keeps the "
                     "properties and children of the second only",
                     "duplicate variant '%s' in variant set '%s' of <%s> "
                     "(first defined on line %u)", name, c->vset_name,
                     ub_prim_path(c->layer, owner),
                     ub_layer_loc(c->layer, v->loc).line);
    if (!v && !(v = ub_variant_new(c->layer, owner, set, name,
                                   ub_mksloc(c, l))))
        ub_oom(c);
    c->prim = v;
    c->spec = UB_SPEC_PRIM;
    c->meta = &v->meta;
}

/* --- actions: properties ------------------------------------------------------- */

void ub_act_attr_type(ub_pctx *c, const char *name, bool array, ub_tokloc l)
{
    const char *stored;
    c->decl_type = ub_lookup_type(c, name, &stored);
    c->decl_name = stored;
    c->decl_array = array;
    if (c->decl_type && array && !ub_type_has_array(c->decl_type))
        ub_perr(c, l, "type '%s' has no array form", name);
}

void ub_act_attr_variability(ub_pctx *c, int var)
{
    c->decl_var = var;
}

static const char *ub_var_word(int v)
{
    return v == UB_UNIFORM ? "uniform" : v == UB_CONFIG ? "config" : "varying";
}

void ub_act_attr_begin(ub_pctx *c, bool custom, const char *name,
                       ub_tokloc l, int part)
{
    ub_prim *prim = c->prim;
    bool created;
    ub_stream_late(c);
    ub_props_room(c, prim);
    ub_prop *p = ub_prop_find_or_new(c->layer, prim, name, UB_ATTR,
                                     ub_mksloc(c, l), &created);
    if (!p)
        ub_oom(c);
    c->paths.n = 0;
    c->none_list = false;
    c->prop_part = part;
    if (!created) {
        if (p->kind != UB_ATTR) {
            ub_perr(c, l, "'%s' is already declared as a relationship "
                    "(line %u)", name, ub_layer_loc(c->layer, p->loc).line);
        } else if (ub_prop_type_name(c->strtab, p) != c->decl_name ||
                   p->is_array != c->decl_array) {
            ub_perr(c, l, "attribute '%s' already has type '%s%s' (line %u), "
                    "cannot change to '%s%s'", name,
                    ub_prop_type_spelling(p),
                    p->is_array ? "[]" : "", ub_layer_loc(c->layer, p->loc).line, c->decl_name,
                    c->decl_array ? "[]" : "");
        } else if ((p->variability == UB_VARYING) !=
                   (c->decl_var == UB_VARYING)) {
            ub_perr(c, l, "attribute '%s' already has variability '%s' "
                    "(line %u), cannot change to '%s'", name,
                    ub_var_word(p->variability), ub_layer_loc(c->layer, p->loc).line,
                    ub_var_word(c->decl_var));
        }
    } else {
        if (ub_prop_set_decl(c->arena, c->strtab, p, c->decl_type,
                             c->decl_name) != 0)
            ub_oom(c);
        p->is_array = c->decl_array;
        p->variability = (ub_variability)c->decl_var;
    }
    if (custom)
        p->custom = true;
    c->prop = p;
    c->spec = UB_SPEC_ATTR;
    c->meta = NULL;
    c->meta_prop = p;
    /* the name is only for messages: its text will do */
    ub_vb_begin(c, ub_prop_type(p), ub_prop_type_spelling(p), p->is_array);
}

void ub_act_prop_end(ub_pctx *c)
{
    c->prop = NULL;
    c->spec = UB_SPEC_PRIM;
    c->meta = &c->prim->meta;
}

/* A default pathExpression's relative paths made absolute against the
 * prim (its variant selections included), in SdfPathExpression's own
 * text, as OpenUSD's text reader keeps it (time samples stay as written
 * there).  Text that is no expression is kept. */
static void ub_anchor_path_exprs(ub_pctx *c, ub_value *v)
{
    if (c->split_role == UB_SPLIT_TAIL) {
        /* the tail of a split parse does not know its prims' ancestors:
         * the whole layer is read again in one piece */
        ub_split_give_up(c);
        return;
    }
    const char *anchor = ub_prim_path(c->layer, c->prim);
    if (!anchor)
        ub_oom(c);
    const char **s = ub_value_data(v);
    for (uint32_t i = 0; i < v->count; i++) {
        char *t = NULL;
        ub_pathexpr_status st = ub_pathexpr_rewrite(s[i], anchor, NULL,
                                                    NULL, &t);
        if (st == UB_PATHEXPR_NOMEM)
            ub_oom(c);
        if (st == UB_PATHEXPR_OK) {
            const char *r = ub_intern(c->strtab, t, strlen(t));
            free(t);
            if (!r)
                ub_oom(c);
            s[i] = r;
        }
    }
}

void ub_act_default(ub_pctx *c, bool none, ub_tokloc l)
{
    ub_prop *p = c->prop;
    if (none) {
        p->default_value = ub_value_block();
        return;
    }
    ub_value v = ub_vb_finish(c, l);
    if (v.kind == UB_V_DATA && v.type_id == UB_TY_PATH_EXPRESSION)
        ub_anchor_path_exprs(c, &v);
    if (v.kind != UB_V_EMPTY)
        p->default_value = v;
}

/* Targets and connections: absolute prim or property paths (a
 * relational attribute's too, not a target path), no variant
 * selections. */
static bool ub_prop_paths(ub_pctx *c, uint32_t n, bool connections)
{
    ub_pathinfo pi;
    for (uint32_t i = 0; i < n; i++) {
        const char *abs = ub_path_abs(c, c->paths.v[i], &pi, c->prim);
        bool root = abs && strcmp(abs, "/") == 0;
        if (!abs || root || (pi.is_target && !pi.variant_sel)) {
            const char *v = c->paths.v[i];
            const char *why = "";
            if (root)
                why = " (it is the pseudo-root </>)";
            else if (abs && pi.is_target)
                why = " (it names a target of a property)";
            else if (!abs && !ub_ident_path_split(v, ub_str_len(v), &pi))
                why = " (it is no path: expected names joined by '/', a "
                      "property as '.name')";
            else if (!abs)
                why = " (it leaves the root)";
            ub_perr(c, c->paths.loc[i], "%s paths must be absolute prim or "
                    "property paths: <%s> is not one%s",
                    connections ? "connection" : "relationship target", v,
                    why);
            return false;
        }
        if (pi.variant_sel) { /* (said first, as OpenUSD says it) */
            /* OpenUSD 24.08 refuses the layer for both (its connection
             * reader warns that it strips them, then fails on the path) */
            ub_perr(c, c->paths.loc[i], "%s paths cannot contain variant "
                    "selections: <%s>; expected a prim or property path "
                    "without {set=variant}",
                    connections ? "connection" : "relationship target",
                    c->paths.v[i]);
            return false;
        }
        /* (a connection's selection is stripped, with OpenUSD's warning:
         * the path read is the one made here) */
        if (!connections &&
            ub_relative_in_variant(c, i, "relationship target paths"))
            return false;
        c->paths.v[i] = abs;
    }
    return true;
}

/* p's out-of-line fields, for setting one (rel: only targets or
 * default_target). */
static ub_prop_ext *ub_pext_of(ub_pctx *c, ub_prop *p, bool rel)
{
    ub_prop_ext *x = rel ? ub_prop_rel_ext_get(c->arena, p)
                         : ub_prop_ext_get(c->arena, p);
    if (!x)
        ub_oom(c);
    return x;
}
#define ub_pext(c, p) ub_pext_of(c, p, false)

void ub_act_connections(ub_pctx *c, ub_tokloc l)
{
    uint32_t n = c->paths.n;
    c->paths.n = 0;
    ub_prop *p = c->prop;
    if (ub_empty_ok(c, n, c->prop_part, "connection paths", l) &&
        ub_prop_paths(c, n, true))
        ub_listop_set(c, &ub_pext(c, p)->connections, ub_type_get(UB_TY_PATH),
                      c->prop_part, ub_paths_value(c, UB_TY_PATH, n), l,
                      "connectionPaths");
    ub_act_prop_end(c);
}

void ub_act_samples_begin(ub_pctx *c, ub_tokloc l)
{
    if (!c->prop)
        return;
    ub_prop_ext *x = ub_pext(c, c->prop);
    x->samples.authored = true;
    x->samples.loc = ub_mksloc(c, l);
}

void ub_act_sample_begin(ub_pctx *c, double t)
{
    c->sample_time = t;
    ub_prop *p = c->prop;
    if (p->kind == UB_ATTR)
        ub_vb_begin(c, ub_prop_type(p), ub_prop_type_spelling(p),
                    p->is_array);
    else
        ub_vb_begin(c, NULL, NULL, false);
}

void ub_act_sample(ub_pctx *c, bool none, ub_tokloc l)
{
    ub_value v = none ? ub_value_block() : ub_vb_finish(c, l);
    if (v.kind == UB_V_EMPTY)
        return;
    /* A default of an unknown type is kept as its text, as OpenUSD keeps
     * it; a sample is not (OpenUSD: "Unrecognized type name"), and a
     * relationship's sample is a path. */
    const ub_prop *p = c->prop;
    if (!none && p->kind == UB_ATTR && !ub_prop_type(p)) {
        ub_perr(c, l, "unknown attribute type '%s': time samples need a "
                "value type OpenUSD knows (only None may be written)",
                ub_prop_type_spelling(p));
        return;
    }
    if (!none && p->kind == UB_REL &&
        (v.kind != UB_V_UNTYPED || v.u.untyped->kind != UB_U_PATH)) {
        ub_perr(c, l, "a relationship's time samples are paths <...> or "
                "None");
        return;
    }
    if (ub_samples_set(c->arena, &ub_pext(c, c->prop)->samples, c->sample_time,
                       v) != 0)
        ub_oom(c);
}

void ub_act_rel_begin(ub_pctx *c, int kind, const char *name, ub_tokloc l,
                      int part)
{
    ub_prim *prim = c->prim;
    bool created;
    ub_stream_late(c);
    ub_props_room(c, prim);
    ub_prop *p = ub_prop_find_or_new(c->layer, prim, name, UB_REL,
                                     ub_mksloc(c, l), &created);
    if (!p)
        ub_oom(c);
    c->paths.n = 0;
    c->none_list = false;
    c->prop_part = part;
    if (!created && p->kind != UB_REL)
        ub_perr(c, l, "'%s' is already declared as an attribute (line %u)",
                name, ub_layer_loc(c->layer, p->loc).line);
    if (kind & 1)
        p->custom = true;
    if (kind & 2)
        p->varying_keyword = true;
    c->prop = p;
    c->spec = UB_SPEC_REL;
    c->meta = NULL;
    c->meta_prop = p;
}

void ub_act_targets(ub_pctx *c)
{
    uint32_t n = c->paths.n;
    c->paths.n = 0;
    ub_prop *p = c->prop;
    ub_tokloc l = n ? c->paths.loc[0] : c->none_loc;
    if (!ub_empty_ok(c, n, c->prop_part, "relationship targets", l) ||
        !ub_prop_paths(c, n, false))
        return;
    ub_listop_set(c, &ub_pext_of(c, p, true)->targets, ub_type_get(UB_TY_PATH),
                  c->prop_part, ub_paths_value(c, UB_TY_PATH, n), l,
                  "targetPaths");
}

/* A relationship's default is a path value, which Sdf keeps as written:
 * unlike its targets, a relative one is not made absolute, and <> is the
 * empty path. */
void ub_act_rel_default(ub_pctx *c, const char *path, ub_tokloc l)
{
    ub_pathinfo pi;
    const char *canon = ub_str_len(path) ? ub_path_canon(c, path, &pi) : path;
    if (!canon) {
        ub_perr(c, l, "<%s> is not a valid path", path);
    } else {
        ub_pext_of(c, c->prop, true)->default_target = canon;
    }
    ub_act_prop_end(c);
}

/* --- actions: dictionaries -------------------------------------------------------- */

/* ub_dict_set on a frame's malloc'd entries. */
static void ub_frame_set(ub_pctx *c, ub_dict *d, const char *key,
                         ub_value value, ub_sloc loc)
{
    ub_dict_entry *e = ub_dict_find(d, key);
    if (!e) {
        if (d->n == d->cap) {
            uint32_t cap = d->cap ? d->cap * 2 : 8;
            ub_dict_entry *ne = realloc(d->e, cap * sizeof *ne);
            if (!ne)
                ub_oom(c);
            d->e = ne;
            d->cap = cap;
        }
        e = &d->e[d->n++];
        e->key = key;
    }
    e->value = value;
    e->loc = loc;
}

void ub_act_dict_open(ub_pctx *c, ub_tokloc l)
{
    if (c->ndict == c->capdict) {
        int cap = c->capdict ? c->capdict * 2 : 16;
        ub_dictframe *nd = realloc(c->dstack, (size_t)cap * sizeof *nd);
        if (!nd)
            ub_oom(c);
        memset(nd + c->capdict, 0, (size_t)(cap - c->capdict) * sizeof *nd);
        c->dstack = nd;
        c->capdict = cap;
    }
    if (c->ndict >= UB_MAX_NESTING)
        ub_too_deep(c, l, "dictionaries");
    ub_dictframe *f = &c->dstack[c->ndict++];
    f->d.n = 0;
    if (c->ndict == 1) {
        f->key = NULL;
    } else {
        f->key = c->elem_key;
        f->key_loc = c->elem_loc;
    }
}

void ub_act_dict_close(ub_pctx *c)
{
    const ub_dictframe *f = &c->dstack[--c->ndict];
    ub_dict *d = ub_dict_new(c->arena);
    if (!d)
        ub_oom(c);
    if (f->d.n) {
        d->e = ub_alloc_rec(c, f->d.n * sizeof *d->e, alignof(ub_dict_entry));
        memcpy(d->e, f->d.e, f->d.n * sizeof *d->e);
        d->n = d->cap = f->d.n;
    }
    if (c->ndict == 0) {
        c->last_dict = d;
        return;
    }
    ub_value v = {.kind = UB_V_DICT};
    v.u.dict = d;
    ub_frame_set(c, &c->dstack[c->ndict - 1].d, f->key, v,
                 ub_mksloc(c, f->key_loc));
}

void ub_act_dict_elem_begin(ub_pctx *c, const char *type, bool array,
                            const char *key, ub_tokloc tl, ub_tokloc kl)
{
    const char *stored;
    const ub_type *t = ub_lookup_type(c, type, &stored);
    c->elem_key = key;
    c->elem_loc = kl;
    if (!t) {
        ub_perr(c, tl, "unknown value type '%s' in a dictionary", type);
        ub_vb_begin(c, NULL, NULL, false);
        c->vb.failed = true;
        return;
    }
    ub_vb_begin(c, t, stored, array);
}

void ub_act_dict_elem(ub_pctx *c)
{
    ub_value v = ub_vb_finish(c, c->elem_loc);
    if (v.kind == UB_V_EMPTY)
        return;
    ub_frame_set(c, &c->dstack[c->ndict - 1].d, c->elem_key, v,
                 ub_mksloc(c, c->elem_loc));
}

void ub_act_dict_nested(ub_pctx *c, const char *key, ub_tokloc l)
{
    c->elem_key = key;
    c->elem_loc = l;
}

/* --- errors and entry point ------------------------------------------------------ */

/* The text of the token at l, for messages (up to max bytes). */
static size_t ub_token_text(const ub_pctx *c, ub_tokloc l, const char **out)
{
    const char *s = c->src, *end = c->src + c->src_len;
    uint32_t line = 1;
    while (line < l.line && s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl)
            return 0;
        s = nl + 1;
        line++;
    }
    s += l.col - 1;
    if (s >= end)
        return 0;
    const char *e = s;
    if (end - s >= 6 && memcmp(s, "@@@", 3) == 0) {
        /* "@@@...@@@" as the lexer takes it: "\@@@" inside, and up to
         * two '@' before the closing three; on one line, up to 60 bytes */
        e += 3;
        while (e < end && *e != '\n' && *e != '\r' && e - s < 60) {
            if (end - e >= 4 && memcmp(e, "\\@@@", 4) == 0) {
                e += 4;
                continue;
            }
            size_t run = 0;
            while (e + run < end && e[run] == '@')
                run++;
            if (run >= 3) {
                e += run < 5 ? run : 5;
                break;
            }
            e += run ? run : 1;
        }
    } else if (*e == '"' || *e == '\'' || *e == '<' || *e == '@') {
        char close = *e == '<' ? '>' : *e;
        e++;
        while (e < end && *e != close && *e != '\n' && e - s < 60)
            e++;
        if (e < end && *e == close)
            e++;
    } else if (*e == '\n' || *e == '\r') {
        return 0;
    } else {
        while (e < end && e - s < 60 &&
               (*e == '_' || *e == ':' || *e == '.' || *e == '-' ||
                (*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'z') ||
                (*e >= 'A' && *e <= 'Z') || (unsigned char)*e >= 0x80))
            e++;
        if (e == s)
            e++;
    }
    *out = s;
    return (size_t)(e - s);
}

void ub_act_syntax_error(ub_pctx *c, ub_tokloc l, bool lexical,
                         const char *got, const char *expected)
{
    if (c->stopped)
        return;
    const char *t = NULL;
    size_t n = ub_token_text(c, l, &t);
    if (lexical && c->lex_error) {
        ub_perr(c, l, "%s: '%.*s'", c->lex_error, (int)n, t ? t : "");
        return;
    }
    if (lexical) {
        unsigned char ch = t && n ? (unsigned char)t[0] : 0;
        if (ch >= 0x20 && ch < 0x7f)
            ub_perr(c, l, "unexpected character '%c'%s%s", ch,
                    expected ? ", expected " : "", expected ? expected : "");
        else
            ub_perr(c, l, "unexpected byte 0x%02x%s%s", ch,
                    expected ? ", expected " : "", expected ? expected : "");
        return;
    }
    /* keywords and punctuation are named by their text already */
    bool show = n && got[0] != '\'' && strcmp(got, "newline") != 0 &&
                strcmp(got, "end of file") != 0;
    ub_perr(c, l, "syntax error: unexpected %s%s%.*s%s%s%s", got,
            show ? " '" : "", show ? (int)n : 0, show ? t : "",
            show ? "'" : "", expected ? ", expected " : "",
            expected ? expected : "");
}

/* Mapped text is given back in steps of this many bytes (a multiple of any
 * page size): small enough that little read text stays resident next to
 * the model, big enough that madvise is rare. */
#define UB_DROP_STEP (256u * 1024u)

/* Text shorter than this keeps its pages until the caller unmaps it.  Each
 * drop is a TLB shootdown on every CPU the process runs on; a bake reads
 * hundreds of small clips, and unmapping one frees its pages anyway. */
#define UB_DROP_MIN (4u * UB_DROP_STEP)

static void ub_split_progress(ub_pctx *c);

/* Give the pages of mapped text [from, to) back to the kernel (from is a
 * multiple of UB_DROP_STEP, counted from the page-aligned start of the
 * mapping).  Always safe: the mapping is private and read-only, so a later
 * read faults the file back in. */
static void ub_src_drop(const char *src, size_t from, size_t to)
{
#if defined(__linux__) && defined(MADV_DONTNEED)
    if (to > from)
        (void)madvise((void *)(uintptr_t)(src + from), to - from,
                      MADV_DONTNEED);
#else
    (void)src, (void)from, (void)to;
#endif
}

/* n bytes of the text from at into buf: through read_text when the
 * caller gave it, else (or when it fails) copied from the text. */
static void ub_copy_text(const ub_pctx *c, char *buf, size_t n, size_t at)
{
    if (n && (!c->read_text || c->read_text(c->read_ctx, buf, n, at) != 0))
        memcpy(buf, c->src + at, n);
}

/* The scanner's next block.  Mapped pages it has copied into its own
 * buffer are dropped step by step (none are present when it reads
 * through read_text), and the caller hears how far reading has come. */
void ub_parse_take_text(ub_pctx *c, char *buf, size_t n)
{
    ub_copy_text(c, buf, n, c->src_pos);
    c->src_pos += n;
    size_t upto = c->src_pos / UB_DROP_STEP * UB_DROP_STEP;
    if (c->src_mapped && !c->read_text && upto > c->src_dropped) {
        ub_src_drop(c->src, c->src_dropped, upto);
        c->src_dropped = upto;
    }
    if (c->split)
        ub_split_progress(c);
    else if (c->progress)
        c->progress(c->progress_ctx, c->src_pos);
}

/* Free a parse context's scratch memory (not its layer). */
static void ub_pctx_free(ub_pctx *c)
{
    ub_lex_destroy(c);
    free(c->vb.buf);
    free(c->vb.nodes);
    free(c->paths.v);
    free(c->paths.loc);
    free(c->refs.v);
    for (int i = 0; i < c->capdict; i++)
        free(c->dstack[i].d.e);
    free(c->dstack);
    free(c->ms.v);
    free(c->ps);
    free(c->marks);
    free(c->ph);
    free(c->xdefs);
    free(c->nuls);
    for (unsigned i = 0; i < UB_PATH_MAX_TARGETS; i++)
        free(c->target_pi[i]);
    free(c);
}

static void ub_split_start(ub_pctx *c, struct ub_split *sp);
static void ub_split_join(struct ub_split *sp, bool cancel);

/* The reader a parse takes its text through: only a mapped text's, since
 * an unmapped one is in memory already. */
static ub_read_text_fn *ub_text_reader(const ub_parse_opts *o)
{
    return o && o->mapped ? o->read_text : NULL;
}

static ub_layer *ub_parse_text(ub_strtab *t, const char *path,
                               const char *text, size_t len,
                               const ub_parse_opts *o, struct ub_split *sp,
                               ub_diags *diags)
{
    ub_pctx *volatile c = calloc(1, sizeof *c);
    if (!c) {
        /* said, like every other shortage: a layer that fails without a
         * word looks damaged to whoever opened it */
        ub_diag_add_oom(diags, (ub_loc){path, 0, 0},
                        "out of memory while reading the layer");
        return NULL;
    }
    c->src_mapped = o && o->mapped && len >= UB_DROP_MIN;
    c->read_text = ub_text_reader(o);
    c->read_ctx = o ? o->read_ctx : NULL;
    c->stream = o && o->stream && o->stream->prim_done ? o->stream : NULL;
    c->progress = o ? o->progress : NULL;
    c->progress_ctx = o ? o->progress_ctx : NULL;
    jmp_buf jb;
    c->oom = &jb;
    c->strtab = t;
    c->diags = diags;
    c->src = text;
    c->src_len = len;
    c->layer = ub_layer_new(t, path);
    ub_layer *volatile result = NULL;
    if (!c->layer)
        goto oom;
    c->layer->streamed = c->stream != NULL;
    c->path = c->layer->path;
    c->file_id = ub_strtab_file_id(t, c->path);
    c->arena = c->layer->arena;
    c->layer->source = text;
    c->layer->source_len = len;
    c->prim = c->layer->root;
    c->meta = &c->layer->meta;
    c->spec = UB_SPEC_LAYER;
    c->cur_offset = UB_OFFSET_IDENTITY;
    if (setjmp(jb) != 0)
        goto oom;
    ub_intern_keywords(c);
    if (o)
        ub_fields_from_plugins(c, o->fields, o->n_fields);
    if (ub_lex_init(c) != 0)
        goto oom;
    c->src_end = len;
    if (sp)
        ub_split_start(c, sp);
    if (len == 0 || text[0] != '#') {
        ub_perr(c, (ub_tokloc){1, 1}, "not a usda layer: the first line must "
                "be '#usda 1.0'");
    } else {
        int rc = ub_yyparse(c);
        if (rc != 0 && c->nerrors == 0)
            ub_perr(c, (ub_tokloc){c->line, c->col}, "cannot parse layer");
    }
    ub_meta_flush(c);
    ub_props_flush(c);
    if (c->nerrors == 0)
        result = c->layer;
    goto done;
oom:
    ub_diag_add_oom(diags, (ub_loc){path, 0, 0},
                    "out of memory while reading the layer");
done:
    if (sp)
        ub_split_join(sp, true);
    /* The last step of read text, and any text a split parse's head and
     * tail both touched: the model holds no pointer into it. */
    if (c->src_mapped)
        ub_src_drop(text, 0, len);
    if (!result)
        ub_layer_free(c->layer);
    ub_pctx_free(c);
    return result;
}

/* --- split parse ------------------------------------------------------------------ *
 *
 * A big layer is read by two threads.  The head parses text[0..at) as
 * usual; the tail parses text[at..len) from a statement start inside some
 * prim (or at the root), not knowing which: it starts in the `tail` rule
 * with a placeholder for that prim, and each `}` too many opens a
 * placeholder for the next enclosing level.  Its line count starts where
 * the head's ends, so every location is already right.  At `at` the head
 * waits for the tail; if the tail succeeded and the head stands at a
 * statement start whose enclosing prims match the placeholders, the
 * placeholders' contents (children, properties, variant sets) are grafted
 * onto them (TOK_SPLIT).  Anything
 * else -- a tail that gave up, a split inside a string or variant, a
 * name on both sides -- and the head reads on from `at` alone, as a
 * serial parse would.  An error in the head before that point makes the
 * whole layer parse again serially, so diagnostics are always a serial
 * parse's.  Nothing depends on timing: the head always waits for the
 * tail's verdict.
 */

typedef struct ub_split {
    /* set before the tail starts */
    ub_strtab *strtab;
    const char *path; /* the head layer's path: every loc shares it */
    const char *src;
    size_t len, at;
    bool mapped;
    ub_read_text_fn *read_text;
    void *read_ctx;
    pthread_t thread;
    bool started, joined;
    atomic_bool cancel; /* the head gave up: the tail may stop */
    atomic_size_t tail_read; /* bytes the tail has read, for progress */
    atomic_size_t head_read; /* and the head, for the tail (tail_pace) */
    /* the tail's thread is done parsing (set last, by it), and whether
     * the head has told the stream so */
    atomic_bool tail_ended;
    bool told_ended;
    /* the pages the tail's model takes next, which the head makes present
     * while it waits for the tail (ub_split_join) */
    ub_pages_lead tail_lead;
    size_t reported;    /* the head's last progress report */
    /* the tail's result, read after the join */
    ub_layer *tail;     /* NULL when the tail gave up */
    ub_prim **ph;       /* its levels, innermost first; the last is the root */
    uint32_t nph;
    int tail_max_depth; /* see ub_pctx */
    ub_diags *tail_diags;
    uint32_t line0;     /* the line number at `at` */
    int outcome;        /* UB_PARSE_* */
    const ub_meta_field *fields; /* the plugins' (ub_parse_opts) */
    size_t n_fields;
    const ub_parse_stream *stream; /* told when the tail starts and ends */
} ub_split;

/* Tell the stream how many threads the parse keeps busy now. */
static void ub_split_tell(const ub_split *sp, unsigned threads)
{
    if (sp->stream && sp->stream->parse_threads)
        sp->stream->parse_threads(sp->stream->ctx, threads);
}

static void ub_split_give_up(ub_pctx *c)
{
    c->nerrors++;
    c->lex_hook = UB_LEX_STOP;
}

/* The head tells the stream that one thread parses now, once the tail's
 * has ended (it checks as it takes each block of text): a head that
 * still has text to read then leaves its stream's work to the CPU the
 * tail has freed (ub_parse_stream.parse_threads). */
static void ub_split_tell_ended(ub_split *sp)
{
    if (!sp->told_ended) {
        sp->told_ended = true;
        ub_split_tell(sp, 1);
    }
}

/* The head reports both threads' reading; the tail only counts its own. */
static void ub_split_progress(ub_pctx *c)
{
    ub_split *sp = c->split;
    if (c->split_role == UB_SPLIT_TAIL) {
        size_t done = c->src_pos - sp->at;
        atomic_store_explicit(&sp->tail_read, done, memory_order_relaxed);
        /* ahead: a larger share of its text read than the head has of
         * its own, the two having started together */
        size_t head = atomic_load_explicit(&sp->head_read,
                                           memory_order_relaxed);
        if (sp->stream && sp->stream->tail_pace)
            sp->stream->tail_pace(sp->stream->ctx,
                                  (double)done * (double)sp->at >
                                      (double)head *
                                          (double)(sp->len - sp->at));
        return;
    }
    if (c->split_role == UB_SPLIT_HEAD) {
        atomic_store_explicit(&sp->head_read, c->src_pos,
                              memory_order_relaxed);
        if (atomic_load_explicit(&sp->tail_ended, memory_order_acquire))
            ub_split_tell_ended(sp);
    }
    if (c->progress) {
        size_t tail = c->split_role == UB_SPLIT_HEAD
                          ? atomic_load_explicit(&sp->tail_read,
                                                 memory_order_relaxed)
                          : 0;
        /* a head reading on after the split reads the tail's text again:
         * the bar waits for it rather than going back */
        if (c->src_pos + tail > sp->reported)
            sp->reported = c->src_pos + tail;
        c->progress(c->progress_ctx, sp->reported);
    }
}

bool ub_split_cancelled(const ub_pctx *c)
{
    return atomic_load_explicit(&c->split->cancel, memory_order_relaxed);
}

/* Line ends before text[at], counted as the scanner counts them. */
/* Line ends in s[0..n) as the scanner counts them ("\r\n" is one); s[n],
 * when `more`, is the byte after them (a '\r' at the end of the text is a
 * line end). */
static uint32_t ub_count_line_ends(const char *s, size_t n, bool more)
{
    uint32_t k = 0;
    const char *end = s + n;
    for (const char *p = s; (p = memchr(p, '\n', (size_t)(end - p))) != NULL;
         p++)
        k++;
    for (const char *p = s; (p = memchr(p, '\r', (size_t)(end - p))) != NULL;
         p++)
        if ((p + 1 == end && !more) || p[1] != '\n')
            k++;
    return k;
}

/* The line ends before offset at, in steps of UB_DROP_STEP: read through
 * read_text into a buffer of the tail's own (the head reads those pages
 * itself: touching them here cost the tail as much as the head), else
 * from the text, mapped pages dropped again as they are counted (the
 * head reads them later: they should not all be resident meanwhile). */
static uint32_t ub_lines_before(const ub_pctx *c, size_t at)
{
    char *buf = c->read_text ? malloc(UB_DROP_STEP + 1) : NULL;
    uint32_t n = 0;
    for (size_t from = 0; from < at; from += UB_DROP_STEP) {
        size_t step = at - from > UB_DROP_STEP ? UB_DROP_STEP : at - from;
        bool more = from + step < at;
        if (buf) {
            ub_copy_text(c, buf, step + more, from);
            n += ub_count_line_ends(buf, step, more);
            continue;
        }
        n += ub_count_line_ends(c->src + from, step, more);
        if (c->src_mapped && more)
            ub_src_drop(c->src, from, from + step);
    }
    free(buf);
    return n;
}

static void ub_tail_push(ub_pctx *c, ub_prim *p)
{
    if (c->nph == c->capph) {
        uint32_t cap = c->capph ? c->capph * 2 : 8;
        ub_prim **v = realloc(c->ph, cap * sizeof *v);
        if (!v)
            ub_oom(c);
        c->ph = v;
        c->capph = cap;
    }
    c->ph[c->nph++] = p;
}

void ub_act_tail_close(ub_pctx *c)
{
    if (c->tail_nl_missing) {
        ub_split_give_up(c); /* `} }` on one line: no prim body allows it */
        return;
    }
    ub_prim *p = ub_alloc_rec(c, sizeof *p, alignof(ub_prim));
    *p = (ub_prim){.name = c->prim->name, .specifier = UB_OVER};
    ub_tail_push(c, p);
    c->prim = p;
    c->prop = NULL;
    c->spec = UB_SPEC_PRIM;
    c->meta = &p->meta;
}

/* The tail thread. */
static void *ub_split_tail(void *arg)
{
    ub_split *sp = arg;
    ub_pctx *volatile c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    jmp_buf jb;
    c->oom = &jb;
    c->strtab = sp->strtab;
    c->diags = sp->tail_diags;
    c->src = sp->src;
    c->src_len = c->src_end = sp->len;
    c->src_pos = sp->at;
    c->src_mapped = sp->mapped;
    c->read_text = sp->read_text;
    c->read_ctx = sp->read_ctx;
    c->src_dropped = sp->at / UB_DROP_STEP * UB_DROP_STEP;
    c->split = sp;
    c->split_role = UB_SPLIT_TAIL;
    c->lex_hook = UB_LEX_START_TAIL;
    c->layer = ub_layer_new(sp->strtab, sp->path);
    if (!c->layer)
        goto done;
    c->path = sp->path;
    c->file_id = ub_strtab_file_id(sp->strtab, c->path);
    c->arena = c->layer->arena;
    ub_arena_set_lead(c->arena, &sp->tail_lead);
    c->prim = c->layer->root; /* the innermost level */
    c->meta = &c->prim->meta;
    c->spec = UB_SPEC_PRIM;
    c->cur_offset = UB_OFFSET_IDENTITY;
    if (setjmp(jb) != 0)
        goto done;
    ub_tail_push(c, c->prim);
    ub_intern_keywords(c);
    ub_fields_from_plugins(c, sp->fields, sp->n_fields);
    sp->line0 = 1 + ub_lines_before(c, sp->at);
    if (ub_lex_init(c) != 0)
        goto done;
    c->line = sp->line0;
    if (ub_yyparse(c) != 0 || c->nerrors || ub_diags_errors(c->diags))
        goto done;
    ub_meta_flush(c);
    ub_props_flush(c);
    ub_arena_set_lead(c->layer->arena, NULL); /* (the head's from here) */
    sp->tail = c->layer;
    sp->ph = c->ph;
    sp->nph = c->nph;
    sp->tail_max_depth = c->tail_max_depth;
    c->layer = NULL;
    c->ph = NULL;
done:
    ub_layer_free(c->layer);
    ub_pctx_free(c);
    atomic_store_explicit(&sp->tail_ended, true, memory_order_release);
    return NULL;
}

static void ub_split_start(ub_pctx *c, ub_split *sp)
{
    sp->path = c->path;
    sp->tail_diags = ub_diags_new();
    if (!sp->tail_diags)
        return;
    ub_strtab_set_concurrent(sp->strtab, true);
    if (pthread_create(&sp->thread, NULL, ub_split_tail, sp) != 0) {
        ub_strtab_set_concurrent(sp->strtab, false);
        return; /* a serial parse, then */
    }
    sp->started = true;
    ub_split_tell(sp, 2);
    c->split = sp;
    c->split_role = UB_SPLIT_HEAD;
    c->src_end = sp->at;
}

/* The head has read its part and waits for the tail: until the tail
 * ends, it makes the pages the tail's model takes next present.  When
 * new pages are dear, a quarter of the tail's time went to them, and the
 * tail ended up to ~250 ms after the head (when the head had less than
 * half the text: UB_USDC_STREAM_HEAD_PERCENT). */
static void ub_split_help(ub_split *sp)
{
    uintptr_t done = 0;
    while (!atomic_load_explicit(&sp->tail_ended, memory_order_acquire))
        if (!ub_pages_lead_help(&sp->tail_lead, &done))
            nanosleep(&(struct timespec){0, 200 * 1000}, NULL);
}

static void ub_split_join(ub_split *sp, bool cancel)
{
    if (!sp->started || sp->joined)
        return;
    if (cancel)
        atomic_store(&sp->cancel, true);
    else
        ub_split_help(sp);
    pthread_join(sp->thread, NULL);
    sp->joined = true;
    ub_strtab_set_concurrent(sp->strtab, false);
    ub_split_tell_ended(sp);
}

/* The head goes on alone from `at`: from here on it is a serial parse. */
static void ub_split_read_on(ub_pctx *c)
{
    c->src_end = c->src_len;
    c->split_role = UB_SPLIT_NONE;
    c->split->outcome = UB_PARSE_SPLIT_READ_ON;
}

int ub_split_eof(ub_pctx *c, bool at_statement)
{
    if (c->split_role == UB_SPLIT_TAIL) {
        /* a newline at the end lets the last root prim end without one,
         * as the root level allows; then the tail's own end (parser.y) */
        if (c->tail_eof_nl)
            return c->tail_end_sent ? 0 : (c->tail_end_sent = true,
                                           TOK_TAIL_END);
        c->tail_eof_nl = true;
        return TOK_NL;
    }
    if (c->split_role != UB_SPLIT_HEAD)
        return 0;
    ub_split *sp = c->split;
    ub_split_join(sp, false);
    if (at_statement && sp->tail && c->nerrors == 0 && c->line == sp->line0 &&
        c->col == 1)
        return TOK_SPLIT; /* the grammar decides (ub_act_split) */
    ub_split_read_on(c);
    return UB_SPLIT_READ_ON;
}

void ub_lex_comment_eof(ub_pctx *c)
{
    if (c->split_role == UB_SPLIT_HEAD)
        return; /* only its half ends here: it reads on */
    ub_pwarn_hint(c, c->comment_at,
                  "usdcat takes the rest of the layer for comment too",
                  "unterminated comment: this '/*' is never closed by '*/', "
                  "so the rest of the layer is comment");
}

/* Whether the tail's levels fit the prims open in the head: the same
 * number, none a variant, the last the root, no name on both sides. */
static bool ub_split_fits(ub_pctx *c, ub_split *sp, ub_prim **into)
{
    ub_prim *r = c->prim;
    /* grafted, the tail's prims would nest too deeply: read on, and find
     * it as one thread does */
    if (c->depth + sp->tail_max_depth > UB_MAX_NESTING)
        return false;
    for (uint32_t k = 0; k < sp->nph; k++, r = r->parent) {
        const ub_prim *x = sp->ph[k];
        bool last = k + 1 == sp->nph;
        if (!r || ub_prim_variant_set(r) || !r->parent != last)
            return false;
        if (x->meta.n || ub_prim_prim_order(x)->kind != UB_V_EMPTY ||
            ub_prim_property_order(x)->kind != UB_V_EMPTY ||
            (last && (x->props.n || ub_prim_n_variant_sets(x))))
            return false;
        for (uint32_t i = 0; i < ub_prim_n_variant_sets(x); i++)
            if (ub_variant_set_find(r, ub_prim_variant_sets(x)[i].name))
                return false; /* serially, one set gets both parts */
        for (uint32_t i = 0; i < x->children.n; i++)
            if (ub_prim_find_child(c->layer, r, x->children.v[i]->name))
                return false;
        for (uint32_t i = 0; i < x->props.n; i++)
            if (ub_prop_find(c->layer, r, x->props.v[i]->name))
                return false;
        into[k] = r;
    }
    return true;
}

/* A grafted prim and what it holds, children first, to the stream: the
 * tail's prims close after every prim the head handed over. */
static void ub_stream_subtree(ub_pctx *c, ub_prim *p, unsigned depth)
{
    for (uint32_t i = 0; i < p->children.n; i++)
        ub_stream_subtree(c, p->children.v[i], depth + 1);
    c->stream->prim_done(c->stream->ctx, c->layer, p, depth);
    ub_prim_drop_body(c->layer, p);
}

/* A streaming parse whose tail was grafted: the prims open at the split
 * (into[k], innermost first, the last the pseudo-root) now end.  Each
 * gets its grafted children (those from n_before[k] on), then closes.
 * The tail's properties of a prim whose children went out already come
 * late, as in a serial parse.
 * tail: the tail's arena, kept apart (NULL: it is the layer's), when
 * nothing of the open prims lies in it but their grafted children.  The
 * tail allocated its prims in the order they are handed over here, so
 * once a child has gone out, everything the tail allocated before that
 * child is dead but the stubs of the children before it: those are
 * copied out, and the memory below the child given back as the rest of
 * the tail is handed over.  Without this the layer's whole second half
 * stayed in memory until the end, next to all a writer had built. */
static void ub_stream_grafted(ub_pctx *c, ub_prim *const *into,
                              const uint32_t *n_before, const bool *late,
                              uint32_t n, ub_arena *tail)
{
    for (uint32_t k = 0; k < n; k++) {
        ub_prim *r = into[k];
        if (late[k] && c->stream->prim_reopened)
            c->stream->prim_reopened(c->stream->ctx, r);
        unsigned depth = ub_prim_depth(r);
        for (uint32_t i = n_before[k]; i < r->children.n; i++) {
            ub_prim *child = r->children.v[i];
            ub_stream_subtree(c, child, depth + 1);
            if (!tail)
                continue;
            ub_prim *stub = ub_prim_stub_copy(c->layer, child);
            if (!stub) {
                ub_arena_adopt(c->layer->arena, tail); /* keep it all */
                ub_arena_free(tail);
                tail = NULL;
                continue;
            }
            r->children.v[i] = stub;
            /* (what this child allocated before its own record, if
             * anything, goes with the next child's turn) */
            ub_arena_drop_before(tail, child);
        }
        if (r->parent) {
            c->stream->prim_done(c->stream->ctx, c->layer, r, depth);
            ub_prim_drop_body(c->layer, r);
        }
    }
    ub_arena_free(tail); /* nothing in the layer points into it now */
    c->nmarks = 0; /* each open prim's: released with the layer */
    c->ps_owner = NULL;
}

bool ub_act_split(ub_pctx *c)
{
    ub_split *sp = c->split;
    ub_prim **into = malloc(sp->nph * sizeof *into);
    uint32_t *n_before = malloc(sp->nph * sizeof *n_before);
    bool *late = malloc(sp->nph * sizeof *late);
    if (!into || !n_before || !late) {
        free(into);
        free(n_before);
        free(late);
        ub_oom(c);
    }
    if (c->prop || !ub_split_fits(c, sp, into)) {
        free(into);
        free(n_before);
        free(late);
        ub_split_read_on(c);
        ub_lex_restart(c);
        return false;
    }
    ub_meta_flush(c);
    ub_props_flush(c);
    bool streamed = ub_streams(c, c->prim);
    /* streamed, the tail's memory is given back as its prims go out when
     * the open prims get nothing from it but children (see
     * ub_stream_grafted) */
    bool apart = streamed;
    for (uint32_t k = 0; k < sp->nph; k++) {
        n_before[k] = into[k]->children.n;
        late[k] = n_before[k] && sp->ph[k]->props.n;
        if (sp->ph[k]->props.n || ub_prim_n_variant_sets(sp->ph[k]))
            apart = false;
    }
    ub_layer *tail = sp->tail;
    sp->tail = NULL;
    /* the parse is over: names are never looked up again, and the index
     * would keep naming the stubs the tail's memory held */
    if (apart)
        ub_layer_unindexed(c->layer);
    ub_arena *tail_arena = NULL;
    int rc = ub_layer_graft(c->layer, tail, sp->ph, into, sp->nph,
                            apart ? &tail_arena : NULL);
    if (tail_arena && c->stream)
        ub_arena_set_pages(tail_arena, c->stream->pages);
    if (rc == 0 && streamed)
        ub_stream_grafted(c, into, n_before, late, sp->nph, tail_arena);
    else if (tail_arena) {
        ub_arena_adopt(c->layer->arena, tail_arena);
        ub_arena_free(tail_arena);
    }
    free(into);
    free(n_before);
    free(late);
    if (rc != 0)
        ub_oom(c);
    ub_diags_take(c->diags, sp->tail_diags);
    sp->outcome = UB_PARSE_SPLIT_GRAFTED;
    return true;
}

/* Layers smaller than this are read by one thread: starting a thread and
 * grafting would eat the gain. */
#define UB_SPLIT_MIN (8u * 1024u * 1024u)

size_t ub_parse_split_point(const char *text, size_t len, size_t from)
{
    static const char *const kw[] = {"def", "over", "class"};
    size_t i = from ? from - 1 : 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            break;
        size_t s = (size_t)(nl - text) + 1, p = s;
        while (p < len && (text[p] == ' ' || text[p] == '\t'))
            p++;
        for (size_t k = 0; k < 3; k++) {
            size_t n = strlen(kw[k]);
            if (len - p > n && memcmp(text + p, kw[k], n) == 0 &&
                (text[p + n] == ' ' || text[p + n] == '\t'))
                return s;
        }
        i = s;
    }
    return len;
}

static ub_layer *ub_parse_whole(ub_strtab *t, const char *path,
                                const char *text, size_t len,
                                ub_parse_opts *opts, ub_diags *diags);

ub_layer *ub_parse_usda_opts(ub_strtab *t, const char *path,
                             const char *text, size_t len,
                             ub_parse_opts *opts, ub_diags *diags)
{
    ub_parse_opts defaults = {0}; /* no options: exactly the default ones */
    if (!opts)
        opts = &defaults;
    opts->outcome = UB_PARSE_SERIAL;
    ub_layer *l = ub_parse_whole(t, path, text, len, opts, diags);
    if (l && opts->progress)
        opts->progress(opts->progress_ctx, len);
    return l;
}

/* Where a split parse cuts the text it would: half of it, or the
 * stream's share. */
static size_t ub_head_len(const ub_parse_opts *opts, size_t len)
{
    unsigned pct = opts->stream ? opts->stream->head_percent : 0;
    if (!pct || pct >= 100)
        return len / 2;
    return (size_t)((double)len * pct / 100.0);
}

static ub_layer *ub_parse_whole(ub_strtab *t, const char *path,
                                const char *text, size_t len,
                                ub_parse_opts *opts, ub_diags *diags)
{
    /* streams are serial unless they take a half late (two_threads) */
    int mode = opts->stream && !opts->stream->two_threads ? -1 : opts->split;
    size_t at = len;
    if (mode > 0)
        at = ub_parse_split_point(text, len, opts->split_at);
    else if (mode == 0 && len >= UB_SPLIT_MIN &&
             ub_cpus() >= 2)
        at = ub_parse_split_point(text, len, ub_head_len(opts, len));
    ub_diags *d1 = at < len ? ub_diags_new() : NULL;
    if (!d1)
        return ub_parse_text(t, path, text, len, opts, NULL, diags);
    ub_split sp = {.strtab = t, .src = text, .len = len, .at = at,
                   .mapped = opts->mapped,
                   .read_text = ub_text_reader(opts),
                   .read_ctx = opts->read_ctx, .fields = opts->fields,
                   .n_fields = opts->n_fields, .stream = opts->stream};
    atomic_init(&sp.cancel, false);
    atomic_init(&sp.tail_read, 0);
    atomic_init(&sp.head_read, 0);
    ub_pages_lead_init(&sp.tail_lead);
    ub_layer *l = ub_parse_text(t, path, text, len, opts, &sp, d1);
    if (sp.started && !l && sp.outcome != UB_PARSE_SPLIT_READ_ON) {
        /* the head met an error: its diagnostics are the serial ones only
         * once it reads the whole layer alone */
        ub_diags_free(d1);
        d1 = NULL;
        sp.outcome = UB_PARSE_SPLIT_REPARSED;
        /* A stream has had the head's prims that closed: it does not get
         * them again, it gets the layer whole (not `streamed`). */
        ub_parse_opts whole = *opts;
        whole.stream = NULL;
        l = ub_parse_text(t, path, text, len, &whole, NULL, diags);
    }
    if (d1) {
        ub_diags_take(diags, d1);
        ub_diags_free(d1);
    }
    ub_layer_free(sp.tail); /* a tail not grafted */
    free(sp.ph);
    ub_diags_free(sp.tail_diags);
    opts->outcome = sp.outcome;
    return l;
}

ub_layer *ub_parse_usda(ub_strtab *t, const char *path, const char *text,
                        size_t len, ub_diags *diags)
{
    return ub_parse_usda_opts(t, path, text, len, NULL, diags);
}

ub_layer *ub_parse_usda_mapped(ub_strtab *t, const char *path,
                               const char *text, size_t len, ub_diags *diags)
{
    ub_parse_opts o = {.mapped = true};
    return ub_parse_usda_opts(t, path, text, len, &o, diags);
}

int ub_parse_is_usda(const char *text, size_t len)
{
    return (len >= 6 && memcmp(text, "#usda ", 6) == 0) ||
           (len >= 5 && memcmp(text, "#sdf ", 5) == 0);
}
