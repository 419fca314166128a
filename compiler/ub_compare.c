#include "ub_compare.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_arena.h"
#include "ub_buf.h"

struct ub_differences {
    size_t n, cap;
    ub_difference *v;
};

ub_differences *ub_differences_new(void)
{
    return calloc(1, sizeof(ub_differences));
}

void ub_differences_free(ub_differences *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free((char *)d->v[i].path);
        free((char *)d->v[i].message);
    }
    free(d->v);
    free(d);
}

size_t ub_differences_count(const ub_differences *d)
{
    return d ? d->n : 0;
}

const ub_difference *ub_differences_at(const ub_differences *d, size_t i)
{
    return d && i < d->n ? &d->v[i] : NULL;
}

/* --- the walk's state ------------------------------------------------------ */

typedef struct ub_cmp {
    const ub_layer *a, *b;
    double tol;
    size_t max;
    long found;
    bool oom;
    ub_differences *out;
    ub_buf path; /* the current object's path, NUL-terminated */
    /* --any-prototype-numbers: b's /Flattened_Prototype_N root prims
     * renamed to the a prims they match (from_b[i] -> to_a[i]) */
    uint32_t n_map;
    const char **from_b, **to_a;
    ub_arena *scratch; /* b's values with their paths renamed */
} ub_cmp;

static bool ub_cmp_stop(const ub_cmp *c)
{
    return c->oom || (c->max && (size_t)c->found >= c->max);
}

static char *ub_cmp_strdup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static void ub_cmp_report(ub_cmp *c, ub_sloc la, ub_sloc lb, const char *fmt,
                          ...) __attribute__((format(printf, 4, 5)));

static void ub_cmp_report(ub_cmp *c, ub_sloc la, ub_sloc lb, const char *fmt,
                          ...)
{
    if (ub_cmp_stop(c))
        return;
    ub_differences *d = c->out;
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        ub_difference *v = realloc(d->v, cap * sizeof *v);
        if (!v) {
            c->oom = true;
            return;
        }
        d->v = v;
        d->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        c->oom = true;
        return;
    }
    char *text;
    if ((size_t)n < sizeof small) {
        text = ub_cmp_strdup(small, (size_t)n);
    } else {
        text = malloc((size_t)n + 1);
        if (text) {
            va_start(ap, fmt);
            vsnprintf(text, (size_t)n + 1, fmt, ap);
            va_end(ap);
        }
    }
    char *path = ub_cmp_strdup(c->path.len ? c->path.data : "",
                               c->path.len);
    if (!text || !path) {
        free(text);
        free(path);
        c->oom = true;
        return;
    }
    d->v[d->n++] = (ub_difference){path, text, ub_strtab_loc(c->a->strtab, la),
                                   ub_strtab_loc(c->b->strtab, lb)};
    c->found++;
}

/* Path stack: push returns the old length to pop back to. */
static size_t ub_cmp_push(ub_cmp *c, const char *sep, const char *name,
                          const char *tail)
{
    size_t old = c->path.len;
    ub_buf_puts(&c->path, sep);
    ub_buf_puts(&c->path, name);
    if (tail)
        ub_buf_puts(&c->path, tail);
    ub_buf_putc(&c->path, '\0');
    c->path.len--; /* keep the terminator out of the length */
    if (c->path.failed)
        c->oom = true;
    return old;
}

static void ub_cmp_pop(ub_cmp *c, size_t old)
{
    c->path.len = old;
    if (c->path.data)
        c->path.data[old] = '\0';
}

/* --- describing values in messages ---------------------------------------- */

/* A string on one line, escaped and shortened: messages are one line each. */
static void ub_desc_string(ub_buf *b, const char *s)
{
    enum { UB_DESC_MAX = 60 };
    size_t n = ub_str_len(s);
    ub_buf_putc(b, '"');
    for (size_t i = 0; i < n && i < UB_DESC_MAX; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            ub_buf_printf(b, "\\%c", ch);
        else if (ch == '\n')
            ub_buf_puts(b, "\\n");
        else if (ch < 0x20 || ch == 0x7f)
            ub_buf_printf(b, "\\x%02x", ch);
        else
            ub_buf_putc(b, (char)ch);
    }
    ub_buf_puts(b, n > UB_DESC_MAX ? "\"..." : "\"");
}

static void ub_desc_elem(ub_buf *b, const ub_value *v, uint32_t i)
{
    const ub_type *t = ub_value_type(v);
    switch (t->scalar) {
    case UB_SC_STRING:
        ub_desc_string(b, ub_value_str(v, i));
        return;
    case UB_SC_REF: {
        const ub_reference *r = (const ub_reference *)ub_value_data(v) + i;
        ub_buf_printf(b, "@%s@<%s> (offset %.17g, scale %.17g)", r->asset,
                      r->prim_path, r->offset.offset, r->offset.scale);
        return;
    }
    case UB_SC_DICT:
        ub_buf_puts(b, "{...}");
        return;
    case UB_SC_OPAQUE:
    case UB_SC_NONE:
        ub_buf_puts(b, "(opaque)");
        return;
    default:
        break;
    }
    unsigned nc = ub_type_ncomp(t);
    if (nc > 1)
        ub_buf_putc(b, '(');
    for (unsigned k = 0; k < nc; k++)
        ub_buf_printf(b, "%s%.17g", k ? ", " : "",
                      ub_value_get_double(v, i, k));
    if (nc > 1)
        ub_buf_putc(b, ')');
}

/* A short description of a whole value ("float3[] of 12 elements"). */
static void ub_desc_value(ub_buf *b, const ub_value *v)
{
    switch ((ub_vkind)v->kind) {
    case UB_V_EMPTY:
        ub_buf_puts(b, "nothing");
        return;
    case UB_V_BLOCK:
        ub_buf_puts(b, "None");
        return;
    case UB_V_DICT:
        ub_buf_printf(b, "a dictionary of %u entries",
                      v->u.dict ? v->u.dict->n : 0);
        return;
    case UB_V_LISTOP:
        ub_buf_puts(b, v->u.listop && v->u.listop->is_explicit
                           ? "an explicit list"
                           : "a list op");
        return;
    case UB_V_UNTYPED:
        ub_buf_puts(b, "a value of unknown type");
        return;
    case UB_V_DATA:
        break;
    }
    if (v->is_array)
        ub_buf_printf(b, "%s[] of %u elements", ub_value_type(v)->name,
                      v->count);
    else if (v->count == 1)
        ub_desc_elem(b, v, 0);
    else
        ub_buf_puts(b, ub_value_type(v)->name);
}

static ub_value ub_elem_view(const ub_value *v, uint32_t i)
{
    return ub_value_wrap(ub_value_type(v), 1, false, ub_value_elem(v, i));
}

static void ub_desc_diff(ub_buf *b, const ub_value *x, const ub_value *y,
                         double tol, const char *name_a, const char *name_b);

static void ub_desc_dict_diff(ub_buf *b, const ub_dict *x, const ub_dict *y,
                              double tol, const char *na, const char *nb)
{
    uint32_t nx = x ? x->n : 0, ny = y ? y->n : 0;
    for (uint32_t i = 0; i < nx; i++) {
        const ub_dict_entry *e = ub_dict_find(y, x->e[i].key);
        if (!e) {
            ub_buf_printf(b, "key '%s' only in %s", x->e[i].key, na);
            return;
        }
        if (!ub_value_close(&x->e[i].value, &e->value, tol)) {
            ub_buf_printf(b, "key '%s': ", x->e[i].key);
            ub_desc_diff(b, &x->e[i].value, &e->value, tol, na, nb);
            return;
        }
    }
    for (uint32_t i = 0; i < ny; i++)
        if (!ub_dict_find(x, y->e[i].key)) {
            ub_buf_printf(b, "key '%s' only in %s", y->e[i].key, nb);
            return;
        }
    ub_buf_puts(b, "dictionaries differ");
}

static const char *const ub_listop_part_names[UB_LO_NPARTS] = {
    "explicit items", "deleted items", "added items", "prepended items",
    "appended items", "reorder items"};

/* Why x and y differ, in a few words. */
static void ub_desc_diff(ub_buf *b, const ub_value *x, const ub_value *y,
                         double tol, const char *na, const char *nb)
{
    if (x->kind != y->kind || x->kind == UB_V_UNTYPED) {
        ub_desc_value(b, x);
        ub_buf_puts(b, " vs ");
        ub_desc_value(b, y);
        return;
    }
    switch ((ub_vkind)x->kind) {
    case UB_V_DICT:
        ub_desc_dict_diff(b, x->u.dict, y->u.dict, tol, na, nb);
        return;
    case UB_V_LISTOP: {
        const ub_listop *lx = x->u.listop, *ly = y->u.listop;
        if (lx->is_explicit != ly->is_explicit) {
            ub_desc_value(b, x);
            ub_buf_puts(b, " vs ");
            ub_desc_value(b, y);
            return;
        }
        for (int p = 0; p < UB_LO_NPARTS; p++) {
            bool ex = ub_listop_part_empty(lx, p),
                 ey = ub_listop_part_empty(ly, p);
            if (ex != ey) {
                ub_buf_printf(b, "%s only in %s", ub_listop_part_names[p],
                              ex ? nb : na);
                return;
            }
            if (!ex && !ub_value_close(ub_listop_get(lx, p),
                                       ub_listop_get(ly, p), tol)) {
                ub_buf_printf(b, "%s: ", ub_listop_part_names[p]);
                ub_desc_diff(b, ub_listop_get(lx, p), ub_listop_get(ly, p),
                             tol, na, nb);
                return;
            }
        }
        ub_buf_puts(b, "list ops differ");
        return;
    }
    case UB_V_DATA:
        break;
    default:
        ub_buf_puts(b, "values differ");
        return;
    }
    if (ub_value_type(x)->base != ub_value_type(y)->base ||
        x->is_array != y->is_array) {
        ub_buf_printf(b, "%s%s vs %s%s", ub_value_type(x)->name,
                      x->is_array ? "[]" : "", ub_value_type(y)->name,
                      y->is_array ? "[]" : "");
        return;
    }
    if (x->count != y->count) {
        ub_buf_printf(b, "%u elements vs %u elements", x->count, y->count);
        return;
    }
    for (uint32_t i = 0; i < x->count; i++) {
        ub_value ex = ub_elem_view(x, i), ey = ub_elem_view(y, i);
        if (ub_value_close(&ex, &ey, tol))
            continue;
        if (x->is_array)
            ub_buf_printf(b, "element %u: ", i);
        if (ub_value_type(x)->scalar == UB_SC_DICT) {
            ub_desc_dict_diff(b, *(ub_dict *const *)ub_value_data(&ex),
                              *(ub_dict *const *)ub_value_data(&ey), tol, na,
                              nb);
            return;
        }
        ub_desc_elem(b, &ex, 0);
        ub_buf_puts(b, " vs ");
        ub_desc_elem(b, &ey, 0);
        return;
    }
    ub_buf_puts(b, "values differ");
}

/* Report `what differs: ...` when x and y are not equal. */
static const ub_value *ub_cmp_renamed(ub_cmp *c, const ub_value *y);
static const char *ub_cmp_rename_path(ub_cmp *c, const char *p);

static void ub_cmp_value(ub_cmp *c, const char *what, const ub_value *x,
                         const ub_value *y, ub_sloc la, ub_sloc lb)
{
    if (ub_cmp_stop(c))
        return;
    y = ub_cmp_renamed(c, y);
    if (ub_value_close(x, y, c->tol))
        return;
    ub_buf d;
    ub_buf_init(&d);
    ub_desc_diff(&d, x, y, c->tol, c->a->path, c->b->path);
    ub_buf_putc(&d, '\0');
    if (d.failed)
        c->oom = true;
    else
        ub_cmp_report(c, la, lb, "%s differs: %s", what, d.data);
    ub_buf_free(&d);
}

/* --- metadata ---------------------------------------------------------------- */

static void ub_cmp_fields(ub_cmp *c, const char *what, const ub_fields *fa,
                          const ub_fields *fb)
{
    ub_sloc none = {0};
    for (uint32_t i = 0; i < fa->n && !ub_cmp_stop(c); i++) {
        const ub_field *x = &fa->v[i];
        const ub_field *y = ub_fields_find(fb, x->key);
        if (!y) {
            ub_cmp_report(c, x->loc, none, "%s '%s' only in %s", what,
                          x->key, c->a->path);
            continue;
        }
        char label[256];
        snprintf(label, sizeof label, "%s '%s'", what, x->key);
        ub_cmp_value(c, label, &x->value, &y->value, x->loc, y->loc);
    }
    for (uint32_t i = 0; i < fb->n && !ub_cmp_stop(c); i++)
        if (!ub_fields_find(fa, fb->v[i].key))
            ub_cmp_report(c, none, fb->v[i].loc, "%s '%s' only in %s", what,
                          fb->v[i].key, c->b->path);
}

/* --- properties -------------------------------------------------------------- */

static const char *ub_variability_name(ub_variability v)
{
    return v == UB_VARYING ? "varying" : "uniform";
}

static void ub_cmp_samples(ub_cmp *c, const ub_prop *x, const ub_prop *y)
{
    const ub_samples *sa = ub_prop_samples(x), *sb = ub_prop_samples(y);
    if (sa->authored != sb->authored) {
        ub_cmp_report(c, sa->loc, sb->loc, "time samples only in %s",
                      sa->authored ? c->a->path : c->b->path);
        return;
    }
    if (sa->n != sb->n) {
        ub_cmp_report(c, sa->loc, sb->loc,
                      "time samples differ: %u samples vs %u", sa->n, sb->n);
        return;
    }
    const ub_type *dbl = ub_type_get(UB_TY_DOUBLE);
    for (uint32_t i = 0; i < sa->n && !ub_cmp_stop(c); i++) {
        double t0 = sa->v[i].time, t1 = sb->v[i].time;
        ub_value ta = ub_value_wrap(dbl, 1, false, &t0);
        ub_value tb = ub_value_wrap(dbl, 1, false, &t1);
        if (!ub_value_close(&ta, &tb, c->tol)) {
            ub_cmp_report(c, sa->loc, sb->loc,
                          "time samples differ: sample %u is at time "
                          "%.17g vs %.17g", i, t0, t1);
            return;
        }
        char label[96];
        snprintf(label, sizeof label, "time sample at %.17g", t0);
        ub_cmp_value(c, label, &sa->v[i].value, &sb->v[i].value, sa->loc,
                     sb->loc);
    }
}

static void ub_cmp_prop(ub_cmp *c, const ub_prop *x, const ub_prop *y)
{
    ub_sloc la = x->loc, lb = y->loc;
    if (x->kind != y->kind) {
        ub_cmp_report(c, la, lb, "an %s vs a %s",
                      x->kind == UB_ATTR ? "attribute" : "relationship",
                      y->kind == UB_ATTR ? "attribute" : "relationship");
        return;
    }
    if (x->custom != y->custom)
        ub_cmp_report(c, la, lb, "custom differs: %s vs %s",
                      x->custom ? "custom" : "not custom",
                      y->custom ? "custom" : "not custom");
    /* OpenUSD reads the legacy `config` as uniform. */
    ub_variability va = x->variability == UB_CONFIG ? UB_UNIFORM
                                                    : x->variability;
    ub_variability vb = y->variability == UB_CONFIG ? UB_UNIFORM
                                                    : y->variability;
    if (x->kind == UB_ATTR && va != vb)
        ub_cmp_report(c, la, lb, "variability differs: %s vs %s",
                      ub_variability_name(va), ub_variability_name(vb));
    const char *xt = ub_prop_type_name(c->a->strtab, x);
    const char *yt = ub_prop_type_name(c->b->strtab, y);
    if (x->kind == UB_ATTR && (xt != yt || x->is_array != y->is_array))
        ub_cmp_report(c, la, lb, "type differs: %s%s vs %s%s",
                      xt ? xt : "(none)", x->is_array ? "[]" : "",
                      yt ? yt : "(none)", y->is_array ? "[]" : "");
    ub_cmp_value(c, "default", &x->default_value, &y->default_value, la, lb);
    if (!ub_cmp_stop(c))
        ub_cmp_samples(c, x, y);
    ub_cmp_value(c, "connections", ub_prop_connections(x),
                 ub_prop_connections(y), la, lb);
    ub_cmp_value(c, "targets", ub_prop_targets(x), ub_prop_targets(y), la, lb);
    if (ub_prop_default_target(x) !=
        ub_cmp_rename_path(c, ub_prop_default_target(y)))
        ub_cmp_report(
            c, la, lb, "default target differs: <%s> vs <%s>",
            ub_prop_default_target(x) ? ub_prop_default_target(x) : "",
            ub_prop_default_target(y) ? ub_prop_default_target(y) : "");
    ub_cmp_fields(c, "metadata", ub_prop_meta(x), ub_prop_meta(y));
}


/* --- prims -------------------------------------------------------------------- */

static const char *ub_specifier_name(ub_specifier s)
{
    return s == UB_DEF ? "def" : s == UB_OVER ? "over" : "class";
}

/* Compare two ordered lists of names: report what only one side has, or
 * the order when both have the same names.  at(list, i) names item i. */
typedef const char *(*ub_name_at_fn)(const void *list, uint32_t i);

static const char *ub_prop_name_at(const void *list, uint32_t i)
{
    return ((const ub_props *)list)->v[i]->name;
}

static const char *ub_child_name_at(const void *list, uint32_t i)
{
    return ((const ub_prims *)list)->v[i]->name;
}

static bool ub_name_in(const void *list, uint32_t n, ub_name_at_fn at,
                       const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (at(list, i) == name)
            return true;
    return false;
}

static int ub_cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const char *const *)a;
    uintptr_t y = (uintptr_t)*(const char *const *)b;
    return x < y ? -1 : x > y;
}

/* Whether two lists of interned names hold the same names, in any order
 * (each list's names are distinct). */
static bool ub_same_name_set(const void *la, const void *lb, uint32_t n,
                             ub_name_at_fn at)
{
    const char **v = malloc(2 * (size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return false; /* said as a difference, never hidden */
    for (uint32_t i = 0; i < n; i++) {
        v[i] = at(la, i);
        v[n + i] = at(lb, i);
    }
    qsort(v, n, sizeof *v, ub_cmp_ptr);
    qsort(v + n, n, sizeof *v, ub_cmp_ptr);
    bool same = memcmp(v, v + n, n * sizeof *v) == 0;
    free(v);
    return same;
}

/* ordered: whether the lists' order means something (children: namespace
 * order) or not (properties: a prim's properties are in name order
 * whatever order a layer lists them in, unless propertyOrder says
 * otherwise, which is compared as metadata; the text writers sort them,
 * and a crate file keeps them as its writer had them). */
static void ub_cmp_names(ub_cmp *c, const char *what, const void *la,
                         uint32_t na, const void *lb, uint32_t nb,
                         ub_name_at_fn at, bool ordered, ub_sloc loc_a,
                         ub_sloc loc_b)
{
    /* Small lists are scanned; large ones are compared in order first,
     * which is the common (equal) case and keeps 100k siblings linear. */
    bool same = na == nb;
    for (uint32_t i = 0; same && i < na; i++)
        same = at(la, i) == at(lb, i);
    if (same || (!ordered && na == nb && ub_same_name_set(la, lb, na, at)))
        return;
    bool reported = false;
    if (na <= 4096 && nb <= 4096) {
        for (uint32_t i = 0; i < na && !ub_cmp_stop(c); i++)
            if (!ub_name_in(lb, nb, at, at(la, i))) {
                ub_cmp_report(c, loc_a, loc_b, "%s '%s' only in %s", what,
                              at(la, i), c->a->path);
                reported = true;
            }
        for (uint32_t i = 0; i < nb && !ub_cmp_stop(c); i++)
            if (!ub_name_in(la, na, at, at(lb, i))) {
                ub_cmp_report(c, loc_a, loc_b, "%s '%s' only in %s", what,
                              at(lb, i), c->b->path);
                reported = true;
            }
    }
    if (!reported) {
        uint32_t i = 0;
        while (i < na && i < nb && at(la, i) == at(lb, i))
            i++;
        ub_cmp_report(c, loc_a, loc_b,
                      "%s order differs at position %u: '%s' vs '%s'", what,
                      i, i < na ? at(la, i) : "(end)",
                      i < nb ? at(lb, i) : "(end)");
    }
}

/* --- prototype numbers ----------------------------------------------------- */

/* UsdStage::Flatten names its prototypes /Flattened_Prototype_N in the
 * order of a hash map (OpenUSD's own order changes from run to run when a
 * stage has more than one).  With any_prototype_numbers, the prototypes of
 * each layer are put in one canonical order -- first reached from the
 * other prims (depth first, in layer order), then from the prototypes so
 * far, breadth first; any never reached after them in layer order -- and
 * b's are compared with a's in that order, every path into them renamed. */

static const char k_proto_prefix[] = "/Flattened_Prototype_";

/* The length of the prototype root at the start of path p ("/Flattened_
 * Prototype_12" of "/Flattened_Prototype_12/geom.x"), or 0. */
static size_t ub_proto_root_len(const char *p)
{
    size_t n = sizeof k_proto_prefix - 1;
    if (!p || strncmp(p, k_proto_prefix, n) != 0 || p[n] < '0' || p[n] > '9')
        return 0;
    while (p[n] >= '0' && p[n] <= '9')
        n++;
    return p[n] == '\0' || strchr("/.{[", p[n]) ? n : 0;
}

static bool ub_is_proto_name(const char *name)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "/%s", name);
    return n > 0 && (size_t)n < sizeof buf && ub_proto_root_len(buf) == (size_t)n;
}

typedef struct ub_protos {
    const ub_prim *v[256]; /* root prototype prims, canonical order */
    uint32_t n, done;
    bool overflow;
} ub_protos;

static void ub_protos_reach(ub_protos *ps, const ub_layer *l, const char *p)
{
    size_t n = ub_proto_root_len(p);
    if (!n || p[n] != '\0')
        return;
    const char *name = ub_intern(l->strtab, p + 1, n - 1);
    const ub_prim *pp = name ? ub_prim_find_child(l, l->root, name) : NULL;
    if (!pp)
        return;
    for (uint32_t i = 0; i < ps->n; i++)
        if (ps->v[i] == pp)
            return;
    if (ps->n == sizeof ps->v / sizeof ps->v[0])
        ps->overflow = true;
    else
        ps->v[ps->n++] = pp;
}

/* The prototypes a prim's references reach, then its children's. */
static void ub_protos_walk(ub_protos *ps, const ub_layer *l, const ub_prim *p,
                           const char *k_refs)
{
    const ub_field *f = ub_fields_find(&p->meta, k_refs);
    if (f && f->value.kind == UB_V_LISTOP)
        for (int part = 0; part < UB_LO_NPARTS; part++) {
            const ub_value *v = ub_listop_get(f->value.u.listop, part);
            if (v->kind != UB_V_DATA || !ub_value_type(v) ||
                v->type_id != UB_TY_REFERENCE)
                continue;
            for (uint32_t i = 0; i < v->count; i++) {
                const ub_reference *r = ub_value_elem(v, i);
                if (r->asset && !*r->asset)
                    ub_protos_reach(ps, l, r->prim_path);
            }
        }
    for (uint32_t i = 0; i < ub_prim_n_variant_sets(p); i++)
        for (uint32_t k = 0; k < ub_prim_variant_sets(p)[i].variants.n; k++)
            ub_protos_walk(ps, l, ub_prim_variant_sets(p)[i].variants.v[k],
                           k_refs);
    for (uint32_t i = 0; i < p->children.n; i++)
        if (p->parent || !ub_is_proto_name(p->children.v[i]->name))
            ub_protos_walk(ps, l, p->children.v[i], k_refs);
}

static void ub_protos_order(ub_protos *ps, const ub_layer *l)
{
    const char *k_refs = ub_intern_cstr(l->strtab, "references");
    if (!k_refs)
        return;
    ub_protos_walk(ps, l, l->root, k_refs);
    for (; ps->done < ps->n; ps->done++)
        ub_protos_walk(ps, l, ps->v[ps->done], k_refs);
    for (uint32_t i = 0; i < l->root->children.n; i++) {
        const ub_prim *p = l->root->children.v[i];
        if (!ub_is_proto_name(p->name))
            continue;
        char path[64];
        snprintf(path, sizeof path, "/%s", p->name);
        ub_protos_reach(ps, l, path);
        for (; ps->done < ps->n; ps->done++)
            ub_protos_walk(ps, l, ps->v[ps->done], k_refs);
    }
}

/* Pair b's prototypes with a's; false when they cannot be paired (then
 * they are compared by name). */
static bool ub_cmp_pair_protos(ub_cmp *c)
{
    ub_protos *pa = calloc(1, sizeof *pa), *pb = calloc(1, sizeof *pb);
    bool ok = pa && pb;
    if (ok) {
        ub_protos_order(pa, c->a);
        ub_protos_order(pb, c->b);
        ok = !pa->overflow && !pb->overflow && pa->n == pb->n && pa->n;
    }
    if (ok) {
        c->from_b = calloc(pa->n, sizeof *c->from_b);
        c->to_a = calloc(pa->n, sizeof *c->to_a);
        c->scratch = ub_arena_new();
        ok = c->from_b && c->to_a && c->scratch;
        if (!ok)
            c->oom = true;
        for (uint32_t i = 0; ok && i < pa->n; i++) {
            c->from_b[i] = pb->v[i]->name;
            c->to_a[i] = pa->v[i]->name;
        }
        if (ok)
            c->n_map = pa->n;
    } else if (!pa || !pb) {
        c->oom = true;
    }
    free(pa);
    free(pb);
    return ok;
}

static bool ub_names_hold(const char *const *v, uint32_t n, const char *s)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == s)
            return true;
    return false;
}

static const char *ub_cmp_rename_name(const ub_cmp *c, const char *name)
{
    for (uint32_t i = 0; i < c->n_map; i++)
        if (c->from_b[i] == name)
            return c->to_a[i];
    return name;
}

/* A path of b with its prototype root renamed to a's. */
static const char *ub_cmp_rename_path(ub_cmp *c, const char *p)
{
    size_t n = c->n_map ? ub_proto_root_len(p) : 0;
    if (!n)
        return p;
    const char *name = ub_intern(c->b->strtab, p + 1, n - 1);
    const char *to = name ? ub_cmp_rename_name(c, name) : NULL;
    if (!to || to == name)
        return p;
    ub_buf b;
    ub_buf_init(&b);
    ub_buf_printf(&b, "/%s%s", to, p + n);
    const char *r = b.failed ? NULL : ub_intern(c->b->strtab, b.data, b.len);
    ub_buf_free(&b);
    if (!r)
        c->oom = true;
    return r ? r : p;
}

static void ub_cmp_rename_in(ub_cmp *c, ub_value *v)
{
    if (v->kind == UB_V_LISTOP) {
        for (int part = 0; part < UB_LO_NPARTS; part++) {
            ub_value *pv = ub_listop_get_mut(v->u.listop, part);
            if (pv)
                ub_cmp_rename_in(c, pv);
        }
    } else if (v->kind == UB_V_DICT && v->u.dict) {
        for (uint32_t i = 0; i < v->u.dict->n; i++)
            ub_cmp_rename_in(c, &v->u.dict->e[i].value);
    } else if (v->kind == UB_V_DATA && ub_value_type(v)) {
        for (uint32_t i = 0; i < v->count; i++) {
            if (v->type_id == UB_TY_PATH) {
                const char **e = ub_value_elem(v, i);
                *e = ub_cmp_rename_path(c, *e);
            } else if (v->type_id == UB_TY_REFERENCE ||
                       v->type_id == UB_TY_PAYLOAD) {
                ub_reference *r = ub_value_elem(v, i);
                if (r->asset && !*r->asset)
                    r->prim_path = ub_cmp_rename_path(c, r->prim_path);
            } else if (ub_value_type(v)->scalar == UB_SC_DICT) {
                ub_value d = {.kind = UB_V_DICT};
                d.u.dict = *(ub_dict **)ub_value_elem(v, i);
                ub_cmp_rename_in(c, &d);
            }
        }
    }
}

static bool ub_value_has_paths(const ub_value *v)
{
    if (v->kind == UB_V_LISTOP)
        return ub_value_type(v) && (v->type_id == UB_TY_PATH ||
                           v->type_id == UB_TY_REFERENCE ||
                           v->type_id == UB_TY_PAYLOAD);
    if (v->kind == UB_V_DICT)
        return true;
    return v->kind == UB_V_DATA && ub_value_type(v) &&
           (v->type_id == UB_TY_PATH ||
            ub_value_type(v)->scalar == UB_SC_DICT);
}

/* y, or a copy of it with b's prototype paths renamed. */
static const ub_value *ub_cmp_renamed(ub_cmp *c, const ub_value *y)
{
    if (!c->n_map || !ub_value_has_paths(y))
        return y;
    ub_value *r = ub_arena_alloc(c->scratch, sizeof *r);
    if (!r) {
        c->oom = true;
        return y;
    }
    *r = ub_value_clone(c->scratch, y);
    if (r->kind != y->kind) {
        c->oom = true;
        return y;
    }
    ub_cmp_rename_in(c, r);
    return r;
}

static const char *ub_renamed_child_at(const void *list, uint32_t i)
{
    return ((const char *const *)list)[i];
}

/* The root prims of both layers, b's prototypes under a's names. */
static void ub_cmp_root_names(ub_cmp *c, const ub_prim *x, const ub_prim *y)
{
    const char **nb = malloc((y->children.n + 1) * sizeof *nb);
    const char **na = malloc((x->children.n + 1) * sizeof *na);
    if (!nb || !na) {
        c->oom = true;
    } else {
        /* prototypes are written in the order of their numbers: b's
         * places of prototypes take a's prototypes in a's order */
        uint32_t k = 0;
        for (uint32_t i = 0; i < x->children.n; i++)
            na[i] = x->children.v[i]->name;
        for (uint32_t i = 0; i < y->children.n; i++) {
            nb[i] = y->children.v[i]->name;
            if (!ub_names_hold(c->from_b, c->n_map, nb[i]))
                continue;
            while (k < x->children.n &&
                   !ub_names_hold(c->to_a, c->n_map, na[k]))
                k++;
            if (k < x->children.n)
                nb[i] = na[k++];
        }
        ub_cmp_names(c, "child prim", na, x->children.n, nb, y->children.n,
                     ub_renamed_child_at, true, x->loc, y->loc);
    }
    free(na);
    free(nb);
}

/* b's root prim that a's root prim `name` is compared with. */
static const ub_prim *ub_cmp_root_child(ub_cmp *c, const ub_prim *y,
                                        const char *name)
{
    for (uint32_t i = 0; i < c->n_map; i++)
        if (c->to_a[i] == name)
            return ub_prim_find_child(c->b, y, c->from_b[i]);
    for (uint32_t i = 0; i < c->n_map; i++)
        if (c->from_b[i] == name)
            return NULL; /* renamed away */
    return ub_prim_find_child(c->b, y, name);
}


static void ub_cmp_prim(ub_cmp *c, const ub_prim *x, const ub_prim *y);

static const ub_prim *ub_find_variant(const ub_variant_set *s,
                                      const char *name)
{
    for (uint32_t i = 0; i < s->variants.n; i++)
        if (s->variants.v[i]->name == name)
            return s->variants.v[i];
    return NULL;
}

/* Variant sets and variants are looked up by name: OpenUSD selects them
 * by name, and their order is carried by the variantSets metadata. */
static void ub_cmp_variant_sets(ub_cmp *c, const ub_prim *x, const ub_prim *y)
{
    for (int side = 0; side < 2; side++) {
        const ub_prim *p = side ? y : x, *q = side ? x : y;
        for (uint32_t i = 0; i < ub_prim_n_variant_sets(p) && !ub_cmp_stop(c);
             i++) {
            const ub_variant_set *s = &ub_prim_variant_sets(p)[i];
            const ub_variant_set *t = ub_variant_set_find(q, s->name);
            if (!t) {
                ub_cmp_report(c, side ? q->loc : s->loc,
                              side ? s->loc : q->loc,
                              "variant set '%s' only in %s", s->name,
                              side ? c->b->path : c->a->path);
                continue;
            }
            for (uint32_t k = 0; k < s->variants.n && !ub_cmp_stop(c); k++) {
                const ub_prim *v = s->variants.v[k];
                const ub_prim *w = ub_find_variant(t, v->name);
                if (!w)
                    ub_cmp_report(c, side ? t->loc : v->loc,
                                  side ? v->loc : t->loc,
                                  "variant '%s' of set '%s' only in %s",
                                  v->name, s->name,
                                  side ? c->b->path : c->a->path);
                else if (!side) {
                    size_t old = c->path.len;
                    ub_buf_printf(&c->path, "{%s=%s}", s->name, v->name);
                    ub_buf_putc(&c->path, '\0');
                    c->path.len--;
                    if (c->path.failed)
                        c->oom = true;
                    ub_cmp_prim(c, v, w);
                    ub_cmp_pop(c, old);
                }
            }
        }
    }
}

static void ub_cmp_prim(ub_cmp *c, const ub_prim *x, const ub_prim *y)
{
    if (ub_cmp_stop(c))
        return;
    ub_sloc la = x->loc, lb = y->loc;
    bool pseudo = x->parent == NULL && ub_prim_variant_set(x) == NULL;
    if (!pseudo && ub_prim_variant_set(x) == NULL &&
        x->specifier != y->specifier)
        ub_cmp_report(c, la, lb, "specifier differs: %s vs %s",
                      ub_specifier_name(x->specifier),
                      ub_specifier_name(y->specifier));
    if (x->type_name != y->type_name)
        ub_cmp_report(c, la, lb, "type name differs: %s vs %s",
                      x->type_name ? x->type_name : "(none)",
                      y->type_name ? y->type_name : "(none)");
    if (!pseudo)
        ub_cmp_fields(c, "metadata", &x->meta, &y->meta);
    ub_cmp_value(c, pseudo ? "rootPrims order" : "nameChildren order",
                 ub_prim_prim_order(x), ub_prim_prim_order(y), la, lb);
    ub_cmp_value(c, "properties order", ub_prim_property_order(x),
                 ub_prim_property_order(y), la, lb);

    ub_cmp_names(c, "property", &x->props, x->props.n, &y->props, y->props.n,
                 ub_prop_name_at, false, la, lb);
    for (uint32_t i = 0; i < x->props.n && !ub_cmp_stop(c); i++) {
        const ub_prop *px = x->props.v[i];
        const ub_prop *py = i < y->props.n && y->props.v[i]->name == px->name
                                ? y->props.v[i]
                                : ub_prop_find(c->b, y, px->name);
        if (!py)
            continue;
        size_t old = ub_cmp_push(c, ".", px->name, NULL);
        ub_cmp_prop(c, px, py);
        ub_cmp_pop(c, old);
    }

    ub_cmp_variant_sets(c, x, y);

    if (pseudo && c->n_map) {
        ub_cmp_root_names(c, x, y);
    } else {
        ub_cmp_names(c, "child prim", &x->children, x->children.n,
                     &y->children, y->children.n, ub_child_name_at, true, la,
                     lb);
    }
    for (uint32_t i = 0; i < x->children.n && !ub_cmp_stop(c); i++) {
        const ub_prim *cx = x->children.v[i];
        const ub_prim *cy =
            i < y->children.n && y->children.v[i]->name == cx->name
                ? y->children.v[i]
                : ub_prim_find_child(c->b, y, cx->name);
        if (pseudo && c->n_map)
            cy = ub_cmp_root_child(c, y, cx->name);
        if (!cy)
            continue;
        size_t old = ub_cmp_push(c, "/", cx->name, NULL);
        ub_cmp_prim(c, cx, cy);
        ub_cmp_pop(c, old);
    }
}

/* --- layers ---------------------------------------------------------------- */

static void ub_cmp_sublayers(ub_cmp *c, const ub_layer *a, const ub_layer *b)
{
    ub_sloc none = {0};
    if (a->has_sublayers != b->has_sublayers) {
        ub_cmp_report(c, none, none, "subLayers only in %s",
                      a->has_sublayers ? a->path : b->path);
        return;
    }
    if (a->n_sublayers != b->n_sublayers) {
        ub_cmp_report(c, none, none, "subLayers differ: %u layers vs %u",
                      a->n_sublayers, b->n_sublayers);
        return;
    }
    const ub_type *dbl2 = ub_type_get(UB_TY_DOUBLE2);
    for (uint32_t i = 0; i < a->n_sublayers && !ub_cmp_stop(c); i++) {
        const ub_sublayer *x = &a->sublayers[i], *y = &b->sublayers[i];
        if (x->asset != y->asset) {
            ub_cmp_report(c, x->loc, y->loc,
                          "subLayers differ: entry %u is @%s@ vs @%s@", i,
                          x->asset, y->asset);
            continue;
        }
        double va[2] = {x->offset.offset, x->offset.scale};
        double vb[2] = {y->offset.offset, y->offset.scale};
        ub_value oa = ub_value_wrap(dbl2, 1, false, va);
        ub_value ob = ub_value_wrap(dbl2, 1, false, vb);
        if (!ub_value_close(&oa, &ob, c->tol))
            ub_cmp_report(c, x->loc, y->loc,
                          "subLayers differ: @%s@ has offset %.17g scale "
                          "%.17g vs offset %.17g scale %.17g",
                          x->asset, va[0], va[1], vb[0], vb[1]);
    }
}

long ub_compare_layers(const ub_layer *a, const ub_layer *b,
                       const ub_compare_opts *opts, ub_differences *out)
{
    if (!a || !b || !out || a->strtab != b->strtab)
        return -1;
    ub_cmp c = {.a = a, .b = b, .out = out};
    if (opts) {
        c.tol = opts->rel_tol;
        c.max = opts->max_differences;
    }
    ub_buf_init(&c.path);
    if (opts && opts->any_prototype_numbers && a->root && b->root)
        ub_cmp_pair_protos(&c);
    ub_cmp_fields(&c, "layer metadata", &a->meta, &b->meta);
    ub_cmp_sublayers(&c, a, b);
    if (a->root && b->root)
        ub_cmp_prim(&c, a->root, b->root);
    ub_buf_free(&c.path);
    free(c.from_b);
    free(c.to_a);
    ub_arena_free(c.scratch);
    return c.oom ? -1 : c.found;
}
