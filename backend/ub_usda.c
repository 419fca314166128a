/*
 * The canonical usda writer.  Layout, ordering and quoting follow OpenUSD
 * 24.08's text file format writer so that `usdbake cat` and `usdcat` give
 * the same bytes:
 *
 * - layer metadata: the bare comment first, then fields sorted by their
 *   schema field name in plain byte order; layer relocates last;
 * - prim, property and variant metadata: comment first, then fields sorted
 *   by field name in "dictionary" order (case-insensitive, digit runs
 *   compared as numbers) -- which is why "inherits" (inheritPaths) sorts
 *   before "instanceable" and "variants" (variantSelection) before
 *   "variantSets" (variantSetNames);
 * - properties sorted by name in dictionary order (an attribute before a
 *   relationship of the same name); prims in authored order; variant sets
 *   in the order of an explicit (or `add`) variantSets list, then as
 *   authored; variants sorted by name; dictionary keys in byte order.
 *
 * Value text (numbers, strings, assets, paths) comes from ub_format.
 */
#include "ub_usda.h"

#include <stdlib.h>
#include <string.h>

#include "ub_format.h"
#include "ub_ident.h"

/* Appends with the capacity check inlined: the writer appends millions
 * of short pieces, so the common case must not be a function call. */
static inline void ub_app(ub_buf *b, const void *p, size_t n)
{
    if (b->data && b->cap - b->len >= n) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    } else {
        ub_buf_append(b, p, n);
    }
}

static inline void ub_pc(ub_buf *b, char c)
{
    if (b->data && b->len < b->cap)
        b->data[b->len++] = c;
    else
        ub_buf_putc(b, c);
}

static inline void ub_ps(ub_buf *b, const char *s)
{
    ub_app(b, s, strlen(s));
}

#define UB_IND "                                                                "

static void ub_ind(ub_buf *b, unsigned n)
{
    size_t len = (size_t)n * 4;
    while (len > sizeof UB_IND - 1) {
        ub_app(b, UB_IND, sizeof UB_IND - 1);
        len -= sizeof UB_IND - 1;
    }
    ub_app(b, UB_IND, len);
}

/* Append a string literal (only literals: the length is its sizeof). */
#define PUTS(b, lit) ub_app((b), "" lit, sizeof(lit) - 1)

static void ub_put_q(ub_buf *b, const char *s)
{
    ub_put_quoted(b, s, strlen(s));
}

/* --- orders ---------------------------------------------------------------- */

static bool ub_isdigit(unsigned c)
{
    return c - '0' < 10u;
}

static bool ub_isalpha(unsigned c)
{
    return ((c & ~0x20u) - 'A') < 26u;
}

/* OpenUSD's TfDictionaryLessThan: letters compare case-insensitively
 * ('_' before letters), runs of digits compare by value, and only when
 * everything else ties do case and leading zeros decide. */
static bool ub_dict_less(const char *ls, const char *rs)
{
    size_t lsize = strlen(ls), rsize = strlen(rs);
    const char *lcur = ls, *rcur = rs;
    const char *lend = ls + lsize, *rend = rs + rsize;
    size_t m = lsize < rsize ? lsize : rsize;
    const char *cur_end = lcur + m;
    while (lcur != cur_end && *lcur == *rcur)
        lcur++, rcur++;
    if (lcur == cur_end && lsize == rsize)
        return false;
    while (lcur != cur_end) {
        unsigned char l = (unsigned char)*lcur, r = (unsigned char)*rcur;
        bool both_ascii = l < 0x80 && r < 0x80;
        bool differs_nocase = (l & ~0x20) != (r & ~0x20);
        bool letter_zone = l >= 0x40 && r >= 0x40;
        if (both_ascii && differs_nocase && letter_zone)
            return ((l + 5) & 31) < ((r + 5) & 31);
        if (ub_isdigit(l) || ub_isdigit(r)) {
            if (ub_isdigit(l) && ub_isdigit(r)) {
                const char *lds = lcur, *rds = rcur, *lde = lcur, *rde = rcur;
                while (lds != ls && ub_isdigit((unsigned char)lds[-1]))
                    lds--;
                while (rds != rs && ub_isdigit((unsigned char)rds[-1]))
                    rds--;
                while (lde != lend && ub_isdigit((unsigned char)*lde))
                    lde++;
                while (rde != rend && ub_isdigit((unsigned char)*rde))
                    rde++;
                while (lds != lde && *lds == '0')
                    lds++;
                while (rds != rde && *rds == '0')
                    rds++;
                while (lds != lde && rds != rde && *lds == *rds)
                    lds++, rds++;
                if ((lds == lde) != (rds == rde))
                    return lds == lde;
                if (lds != lde && rds != rde) {
                    size_t dl = (size_t)(lde - lds), dr = (size_t)(rde - rds);
                    if (dl != dr)
                        return dl < dr;
                    return *lds < *rds;
                }
                lcur = lde;
                rcur = rde;
                size_t la = (size_t)(lend - lcur), ra = (size_t)(rend - rcur);
                cur_end = lcur + (la < ra ? la : ra);
            } else {
                if (lcur == ls)
                    return l < r;
                unsigned char prev = (unsigned char)lcur[-1];
                return ub_isdigit(prev) ? ub_isdigit(r) : ub_isdigit(l);
            }
        } else if (!ub_isalpha(l) || !ub_isalpha(r)) {
            return l < r;
        } else {
            lcur++, rcur++;
        }
        while (lcur != cur_end && *lcur == *rcur)
            lcur++, rcur++;
    }
    if (lcur != lend || rcur != rend)
        return lcur == lend;
    /* Equal but for case or leading zeros: the first difference decides. */
    lcur = ls;
    rcur = rs;
    while (*lcur && *lcur == *rcur)
        lcur++, rcur++;
    unsigned char l = (unsigned char)*lcur, r = (unsigned char)*rcur;
    return (r == '0') | ((l != '0') & (l < r));
}

/* The schema field a text-format metadata keyword is stored under; the
 * sort orders are over field names. */
static const char *ub_field_name(const char *key)
{
    switch (key[0]) { /* sorting calls this a lot: test the first byte */
    case 'd':
        return strcmp(key, "doc") == 0 ? "documentation" : key;
    case 'i':
        return strcmp(key, "inherits") == 0 ? "inheritPaths" : key;
    case 'v':
        if (strcmp(key, "variants") == 0)
            return "variantSelection";
        return strcmp(key, "variantSets") == 0 ? "variantSetNames" : key;
    default:
        return key;
    }
}

static int ub_cmp_field_dict(const void *a, const void *b)
{
    const ub_field *fa = *(const ub_field *const *)a;
    const ub_field *fb = *(const ub_field *const *)b;
    const char *na = ub_field_name(fa->key), *nb = ub_field_name(fb->key);
    if (ub_dict_less(na, nb))
        return -1;
    if (ub_dict_less(nb, na))
        return 1;
    return 0;
}

static int ub_cmp_field_bytes(const void *a, const void *b)
{
    const ub_field *fa = *(const ub_field *const *)a;
    const ub_field *fb = *(const ub_field *const *)b;
    return strcmp(ub_field_name(fa->key), ub_field_name(fb->key));
}

static int ub_cmp_prop(const void *a, const void *b)
{
    const ub_prop *pa = *(const ub_prop *const *)a;
    const ub_prop *pb = *(const ub_prop *const *)b;
    if (ub_dict_less(pa->name, pb->name))
        return -1;
    if (ub_dict_less(pb->name, pa->name))
        return 1;
    return (int)pa->kind - (int)pb->kind;
}

static int ub_cmp_prim_name(const void *a, const void *b)
{
    const ub_prim *pa = *(const ub_prim *const *)a;
    const ub_prim *pb = *(const ub_prim *const *)b;
    return strcmp(pa->name, pb->name);
}

static int ub_cmp_dict_entry(const void *a, const void *b)
{
    const ub_dict_entry *ea = *(const ub_dict_entry *const *)a;
    const ub_dict_entry *eb = *(const ub_dict_entry *const *)b;
    return strcmp(ea->key, eb->key);
}

/* qsort of a pointer array, skipped when it is already strictly in order
 * (the usual case: layers written by a canonical writer come sorted).
 * Strictly: with no ties, every sort agrees on the result. */
static void ub_sort_ptrs(const void **v, size_t n,
                         int (*cmp)(const void *, const void *))
{
    size_t i = 1;
    while (i < n && cmp(&v[i - 1], &v[i]) < 0)
        i++;
    if (i < n)
        qsort(v, n, sizeof *v, cmp);
}


/* String element i; "" when a model left it unset. */
static const char *ub_sv(const ub_value *v, uint32_t i)
{
    /* The readers give the special fields their shapes; this keeps a
     * value of another type (a damaged binary) from being read as
     * pointers. */
    if (v->kind != UB_V_DATA || !ub_value_type(v) ||
        ub_value_type(v)->scalar != UB_SC_STRING ||
        i >= v->count)
        return "";
    const char *s = ub_value_str(v, i);
    return s ? s : "";
}

/* A single string-like value (string, token, ...). */
static bool ub_is_str1(const ub_value *v)
{
    return v->kind == UB_V_DATA && ub_value_type(v) && v->count == 1 &&
           ub_value_type(v)->scalar == UB_SC_STRING;
}

/* --- the writer ----------------------------------------------------------- */

typedef struct ub_w {
    ub_buf *b;
    bool oom;
    ub_usda_samples_fn samples_fn; /* samples kept outside the layer */
    void *samples_ctx;
} ub_w;

/* A scratch array of pointers; small ones live on the stack. */
typedef struct ub_ptrs {
    const void **v;
    const void *small[32];
    bool heap;
} ub_ptrs;

static const void **ub_ptrs_get(ub_w *w, ub_ptrs *p, size_t n)
{
    p->heap = n > 32;
    p->v = p->heap ? malloc(n * sizeof *p->v) : p->small;
    if (!p->v)
        w->oom = true;
    return p->v;
}

static void ub_ptrs_free(ub_ptrs *p)
{
    if (p->heap)
        free(p->v);
}

static void ub_write_dict(ub_w *w, unsigned indent, const ub_dict *d,
                          bool string_values_only);
static void ub_write_prim(ub_w *w, const ub_prim *prim, unsigned indent);
static size_t ub_path_of(const ub_prim *p, char *out, size_t cap);

static bool ub_is_identifier(const char *s)
{
    if (!(ub_isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!(ub_isalpha((unsigned char)*s) || ub_isdigit((unsigned char)*s) ||
              *s == '_'))
            return false;
    return true;
}

/* A value as a metadata field prints it (after "key = "); bools print as
 * true/false here, unlike inside attribute values and dictionaries. */
static void ub_write_field_value(ub_w *w, const ub_value *v)
{
    if (v->kind == UB_V_DATA && !v->is_array && v->type_id == UB_TY_BOOL &&
        v->count == 1) {
        if (*(const uint8_t *)ub_value_data(v))
            PUTS(w->b, "true");
        else
            PUTS(w->b, "false");
        return;
    }
    if (v->kind == UB_V_UNTYPED) {
        ub_put_untyped(w->b, v->u.untyped);
        return;
    }
    ub_put_value(w->b, v);
}

/* Layer offset inline: " (offset = 1; scale = 2)", or the multi-line
 * form inside a reference's parentheses.  Only non-default parts print. */
/* The layer offset inside a reference's multi-line parentheses: one
 * line per non-default part (the inline form is ub_put_offset). */
static void ub_write_offset_lines(ub_w *w, unsigned indent, ub_offset o)
{
    ub_buf *b = w->b;
    if (o.offset != 0.0) {
        ub_ind(b, indent);
        PUTS(b, "offset = ");
        ub_put_double(b, o.offset);
        ub_pc(b, '\n');
    }
    if (o.scale != 1.0) {
        ub_ind(b, indent);
        PUTS(b, "scale = ");
        ub_put_double(b, o.scale);
        ub_pc(b, '\n');
    }
}

static bool ub_dict_nonempty(const ub_dict *d)
{
    return d && d->n > 0;
}

/* One list op item.  Paths, references and payloads go one per line. */
static void ub_write_listop_item(ub_w *w, unsigned indent, const ub_type *t,
                                 const void *elem)
{
    ub_buf *b = w->b;
    if (t->scalar != UB_SC_REF) {
        ub_ind(b, indent);
        ub_put_element(b, t, elem);
        return;
    }
    const ub_reference *r = elem;
    bool multi = t->id == UB_TY_REFERENCE && ub_dict_nonempty(r->custom_data);
    ub_ind(b, indent);
    ub_put_reference_target(b, r);
    if (!multi) {
        ub_put_offset(b, r->offset);
        return;
    }
    PUTS(b, " (\n");
    ub_write_offset_lines(w, indent + 1, r->offset);
    ub_ind(b, indent + 1);
    PUTS(b, "customData = ");
    ub_write_dict(w, indent + 1, r->custom_data, false);
    ub_ind(b, indent);
    ub_pc(b, ')');
}

static bool ub_item_per_line(const ub_type *t)
{
    return t && (t->id == UB_TY_PATH || t->scalar == UB_SC_REF);
}

/* "[op ]name = items" for one part of a list op. */
static void ub_write_listop_list(ub_w *w, unsigned indent, const char *name,
                                 const char *op, const ub_value *items)
{
    ub_buf *b = w->b;
    ub_ind(b, indent);
    if (op) {
        ub_ps(b, op);
        ub_pc(b, ' ');
    }
    ub_ps(b, name);
    PUTS(b, " = ");
    if (items->kind == UB_V_UNTYPED) {
        const ub_untyped *u = items->u.untyped;
        if (u->kind != UB_U_LIST)
            ub_pc(b, '[');
        ub_put_untyped(b, u);
        if (u->kind != UB_U_LIST)
            ub_pc(b, ']');
        ub_pc(b, '\n');
        return;
    }
    uint32_t n = items->kind == UB_V_DATA ? items->count : 0;
    if (n == 0) {
        PUTS(b, "None\n");
        return;
    }
    const ub_type *t = ub_value_type(items);
    size_t esz = ub_type_elem_size(t);
    const char *e = ub_value_data(items);
    bool per_line = ub_item_per_line(t);
    bool needs_brackets = true;
    if (t->id == UB_TY_PATH || t->id == UB_TY_PAYLOAD)
        needs_brackets = false;
    else if (t->id == UB_TY_REFERENCE)
        needs_brackets = ub_dict_nonempty(((const ub_reference *)e)->custom_data);
    if (n == 1 && !needs_brackets) {
        ub_write_listop_item(w, 0, t, e);
        ub_pc(b, '\n');
        return;
    }
    ub_ps(b, per_line ? "[\n" : "[");
    for (uint32_t i = 0; i < n; i++) {
        ub_write_listop_item(w, per_line ? indent + 1 : 0, t,
                             e + (size_t)i * esz);
        if (i + 1 < n) {
            if (per_line)
                PUTS(b, ",\n");
            else
                PUTS(b, ", ");
        } else if (per_line) {
            ub_pc(b, '\n');
        }
    }
    if (per_line)
        ub_ind(b, indent);
    PUTS(b, "]\n");
}

static const char *const ub_listop_ops[UB_LO_NPARTS] = {
    NULL, "delete", "add", "prepend", "append", "reorder",
};

/* An edit that prints.  A list op of an unknown field holds its items
 * as one value of unknown type (OpenUSD keeps the recorded text), which
 * prints even when it is "[]"; its None is no items at all, and prints
 * nothing, as an empty part of any list op (the field stays: OpenUSD
 * writes the spec's parentheses for it). */
static bool ub_part_nonempty(const ub_listop *lo, int p)
{
    if (!lo->has[p])
        return false;
    const ub_value *v = ub_listop_get(lo, p);
    if (v->kind == UB_V_UNTYPED)
        return v->u.untyped && !(v->u.untyped->kind == UB_U_LIST &&
                                 v->u.untyped->n == 0);
    return v->kind == UB_V_DATA && v->count > 0;
}

static void ub_write_listop(ub_w *w, unsigned indent, const char *name,
                            const ub_listop *lo)
{
    if (lo->is_explicit) {
        ub_write_listop_list(w, indent, name, NULL,
                             ub_listop_get(lo, UB_LO_EXPLICIT));
        return;
    }
    for (int p = UB_LO_DELETE; p < UB_LO_NPARTS; p++)
        if (ub_part_nonempty(lo, p))
            ub_write_listop_list(w, indent, name, ub_listop_ops[p],
                                 ub_listop_get(lo, p));
}

/* Whether a dictionary key cannot go between double quotes as it is: a
 * quote or backslash would end or escape early, a line break would break
 * the string.  (Other control bytes read back as they are.) */
static bool ub_key_needs_escape(const char *key)
{
    return strpbrk(key, "\"\\\n\r") != NULL;
}

/* The dictionary body from "{": entries sorted by key, one per line, at
 * indent + 1; the closing brace at indent, then a newline. */
static void ub_write_dict(ub_w *w, unsigned indent, const ub_dict *d,
                          bool string_values_only)
{
    ub_buf *b = w->b;
    PUTS(b, "{\n");
    uint32_t n = d ? d->n : 0;
    ub_ptrs sp;
    const void **v = n ? ub_ptrs_get(w, &sp, n) : NULL;
    if (n && !v)
        return;
    for (uint32_t i = 0; i < n; i++)
        v[i] = &d->e[i];
    ub_sort_ptrs(v, n, ub_cmp_dict_entry);
    for (uint32_t i = 0; i < n; i++) {
        const ub_dict_entry *e = v[i];
        const ub_value *val = &e->value;
        if (string_values_only) {
            ub_ind(b, indent + 1);
            ub_put_q(b, e->key);
            PUTS(b, ": ");
            if (ub_is_str1(val))
                ub_put_q(b, ub_sv(val, 0));
            else
                ub_put_value(b, val);
            if (i + 1 < n)
                PUTS(b, ", ");
            ub_pc(b, '\n');
            continue;
        }
        bool ident = ub_is_identifier(e->key);
        ub_ind(b, indent + 1);
        if (val->kind == UB_V_DICT ||
            (val->kind == UB_V_DATA && ub_value_type(val) &&
             ub_value_type(val)->scalar == UB_SC_DICT)) {
            PUTS(b, "dictionary ");
        } else if (val->kind == UB_V_DATA && ub_value_type(val)) {
            /* OpenUSD names a dictionary value by its C++ type, which has
             * no role: color3f and point3f values come back as float3. */
            const ub_type *bt = ub_type_get(ub_value_type(val)->base);
            ub_ps(b, (bt ? bt : ub_value_type(val))->name);
            if (val->is_array)
                PUTS(b, "[]");
            ub_pc(b, ' ');
        } else if (val->kind == UB_V_LISTOP && ub_value_type(val)) {
            ub_ps(b, ub_value_type(val)->name);
            ub_pc(b, ' ');
        }
        if (ident) {
            ub_ps(b, e->key);
        } else if (ub_key_needs_escape(e->key)) {
            /* OpenUSD writes these bare too, and then cannot read its own
             * output: escaped, the layer reads back as itself */
            ub_put_q(b, e->key);
        } else { /* as OpenUSD: the key in double quotes, as it is */
            ub_pc(b, '"');
            ub_ps(b, e->key);
            ub_pc(b, '"');
        }
        PUTS(b, " = ");
        if (val->kind == UB_V_DICT) {
            ub_write_dict(w, indent + 1, val->u.dict, false);
            continue;
        }
        if (val->kind == UB_V_DATA && ub_value_type(val) &&
            ub_value_type(val)->scalar == UB_SC_DICT) {
            ub_write_dict(w, indent + 1,
                          val->count ? *(ub_dict *const *)ub_value_data(val)
                                     : NULL,
                          false);
            continue;
        }
        if (val->kind == UB_V_UNTYPED)
            ub_put_untyped(b, val->u.untyped);
        else
            ub_put_value(b, val);
        ub_pc(b, '\n');
    }
    if (n)
        ub_ptrs_free(&sp);
    ub_ind(b, indent);
    PUTS(b, "}\n");
}

/* `relocates = { <a>: <b>, ... }` -- pairs stored as a path array. */
typedef struct ub_reloc {
    const char *src, *dst;
} ub_reloc;

/* SdfPath order for the relocates map: absolute before relative, then
 * element by element, an ancestor before its descendants. */
static int ub_cmp_path(const char *a, const char *b)
{
    bool aa = a[0] == '/', ba = b[0] == '/';
    if (aa != ba)
        return aa ? -1 : 1;
    if (!a[0] || !b[0])
        return a[0] ? 1 : (b[0] ? -1 : 0);
    while (*a == '/')
        a++;
    while (*b == '/')
        b++;
    for (;;) {
        size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
        if (la == 0 || lb == 0)
            return la == lb ? 0 : (la == 0 ? -1 : 1);
        size_t m = la < lb ? la : lb;
        int c = memcmp(a, b, m);
        if (c)
            return c;
        if (la != lb)
            return la < lb ? -1 : 1;
        a += la;
        b += lb;
        if (!*a || !*b)
            return *a ? 1 : (*b ? -1 : 0);
        a++;
        b++;
    }
}

static int ub_cmp_reloc(const void *x, const void *y)
{
    return ub_cmp_path(((const ub_reloc *)x)->src, ((const ub_reloc *)y)->src);
}

/* path relative to anchor (both absolute prim paths), as SdfPath's
 * MakeRelativePath spells it; written into out. */
static void ub_relative_path(ub_buf *out, const char *path, const char *anchor)
{
    if (path[0] != '/') {
        ub_ps(out, path);
        return;
    }
    /* common prefix by elements */
    const char *p = path + 1, *a = anchor + 1;
    const char *pcommon = p;
    const char *acommon = a;
    if (strcmp(anchor, "/") == 0) {
        ub_ps(out, path + 1);
        return;
    }
    for (;;) {
        size_t lp = strcspn(p, "/"), la = strcspn(a, "/");
        if (la == 0 || lp != la || memcmp(p, a, lp) != 0)
            break;
        p += lp;
        a += la;
        if (*p == '/')
            p++;
        if (*a == '/')
            a++;
        pcommon = p;
        acommon = a;
        if (!*a)
            break;
    }
    /* one ".." per remaining anchor element */
    unsigned ups = 0;
    for (const char *s = acommon; *s;) {
        size_t l = strcspn(s, "/");
        if (l)
            ups++;
        s += l;
        if (*s == '/')
            s++;
    }
    bool first = true;
    for (unsigned i = 0; i < ups; i++) {
        if (!first)
            ub_pc(out, '/');
        PUTS(out, "..");
        first = false;
    }
    if (*pcommon) {
        if (!first)
            ub_pc(out, '/');
        ub_ps(out, pcommon);
    } else if (first) {
        ub_pc(out, '.');
    }
}

static void ub_write_relocates(ub_w *w, unsigned indent, const ub_value *v,
                               const char *anchor)
{
    ub_buf *b = w->b;
    ub_ind(b, indent);
    PUTS(b, "relocates = {\n");
    uint32_t n = (v->kind == UB_V_DATA && ub_value_type(v) &&
                  ub_value_type(v)->scalar == UB_SC_STRING) ? v->count / 2 : 0;
    ub_reloc *r = n ? malloc(n * sizeof *r) : NULL;
    if (n && !r) {
        w->oom = true;
        return;
    }
    ub_buf scratch;
    ub_buf_init(&scratch);
    size_t *offs = NULL;
    if (anchor && n) {
        /* A prim's relocates are a map, sorted, and written relative to
         * the prim; the layer's are a list, in authored order. */
        offs = malloc(2 * n * sizeof *offs);
        if (!offs) {
            free(r);
            w->oom = true;
            return;
        }
        for (uint32_t i = 0; i < 2 * n; i++) {
            const char *s = ub_sv(v, i);
            offs[i] = scratch.len;
            if (s[0])
                ub_relative_path(&scratch, s, anchor);
            ub_pc(&scratch, '\0');
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (offs && !scratch.failed) {
            r[i].src = scratch.data + offs[2 * i];
            r[i].dst = scratch.data + offs[2 * i + 1];
        } else {
            r[i].src = ub_sv(v, 2 * i);
            r[i].dst = ub_sv(v, 2 * i + 1);
        }
    }
    if (anchor && n > 1)
        qsort(r, n, sizeof *r, ub_cmp_reloc);
    for (uint32_t i = 0; i < n; i++) {
        ub_ind(b, indent + 1);
        ub_put_path(b, r[i].src, strlen(r[i].src));
        PUTS(b, ": ");
        ub_put_path(b, r[i].dst, strlen(r[i].dst));
        if (i + 1 < n)
            PUTS(b, ", ");
        ub_pc(b, '\n');
    }
    ub_ind(b, indent);
    PUTS(b, "}\n");
    free(offs);
    free(r);
    ub_buf_free(&scratch);
}

/* ["a", "b"] -- or just "a" for one name. */
static void ub_write_name_vector(ub_buf *b, const ub_value *v)
{
    uint32_t n = v->kind == UB_V_DATA ? v->count : 0;
    if (n > 1)
        ub_pc(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            PUTS(b, ", ");
        ub_put_q(b, ub_sv(v, i));
    }
    if (n > 1)
        ub_pc(b, ']');
}

/* Write a token value bare (permission, symmetryFunction, displayUnit). */
static void ub_put_bare(ub_buf *b, const ub_value *v)
{
    if (v->kind == UB_V_DATA && v->count >= 1 && ub_value_type(v) &&
        ub_value_type(v)->scalar == UB_SC_STRING) {
        ub_ps(b, ub_sv(v, 0));
    } else if (v->kind == UB_V_UNTYPED) {
        ub_put_untyped(b, v->u.untyped);
    } else {
        ub_put_value(b, v);
    }
}

/* A generic metadata field: "key = value" at indent, list ops one
 * statement per part, dictionaries multi-line. */
static void ub_write_simple_field(ub_w *w, unsigned indent, const ub_field *f)
{
    ub_buf *b = w->b;
    const ub_value *v = &f->value;
    if (v->kind == UB_V_LISTOP) {
        ub_write_listop(w, indent, f->key, v->u.listop);
        return;
    }
    ub_ind(b, indent);
    ub_ps(b, f->key);
    PUTS(b, " = ");
    if (v->kind == UB_V_DICT) {
        ub_write_dict(w, indent, v->u.dict, false);
        return;
    }
    ub_write_field_value(w, v);
    ub_pc(b, '\n');
}

static bool ub_key_is(const ub_field *f, const char *s)
{
    return strcmp(f->key, s) == 0;
}

/* Field by key text (ub_fields_find wants the interned pointer). */
static const ub_field *ub_find(const ub_fields *meta, const char *key)
{
    for (uint32_t i = 0; i < meta->n; i++)
        if (ub_key_is(&meta->v[i], key))
            return &meta->v[i];
    return NULL;
}

/* Collect the fields of `meta` other than the comment, sorted; returns
 * the count, the comment through *comment. */
static uint32_t ub_sorted_fields(ub_w *w, const ub_fields *meta,
                                 ub_ptrs *sp, bool byte_order,
                                 const ub_field **comment,
                                 const char *skip)
{
    *comment = NULL;
    uint32_t n = 0;
    const void **v = ub_ptrs_get(w, sp, meta->n ? meta->n : 1);
    if (!v)
        return 0;
    for (uint32_t i = 0; i < meta->n; i++) {
        const ub_field *f = &meta->v[i];
        if (f->value.kind == UB_V_EMPTY)
            continue;
        if (ub_key_is(f, "comment")) {
            *comment = f;
            continue;
        }
        if (skip && ub_key_is(f, skip))
            continue;
        v[n++] = f;
    }
    ub_sort_ptrs(v, n, byte_order ? ub_cmp_field_bytes : ub_cmp_field_dict);
    return n;
}

static bool ub_comment_nonempty(const ub_field *c)
{
    return c && ub_is_str1(&c->value) && ub_sv(&c->value, 0)[0];
}

static const char *ub_comment_text(const ub_field *c)
{
    return ub_sv(&c->value, 0);
}

/* Fields shared by prims, attributes and relationships with a special
 * form.  Returns false when f is not one of them. */
static bool ub_write_common_field(ub_w *w, unsigned indent, const ub_field *f)
{
    ub_buf *b = w->b;
    if (ub_key_is(f, "doc")) {
        ub_ind(b, indent);
        PUTS(b, "doc = ");
        if (ub_is_str1(&f->value))
            ub_put_q(b, ub_sv(&f->value, 0));
        else
            ub_write_field_value(w, &f->value);
        ub_pc(b, '\n');
        return true;
    }
    if (ub_key_is(f, "permission") || ub_key_is(f, "symmetryFunction")) {
        ub_ind(b, indent);
        ub_ps(b, f->key);
        PUTS(b, " = ");
        ub_put_bare(b, &f->value);
        ub_pc(b, '\n');
        return true;
    }
    return false;
}

/* Prim (and variant) metadata: " (\n ... )" when there is any. */
static void ub_write_prim_meta(ub_w *w, const ub_prim *prim, unsigned indent)
{
    ub_buf *b = w->b;
    const ub_field *comment;
    ub_ptrs sp;
    uint32_t n = ub_sorted_fields(w, &prim->meta, &sp, false, &comment, NULL);
    if (!sp.v)
        return;
    bool has_comment = ub_comment_nonempty(comment);
    if (!has_comment && n == 0) {
        ub_ptrs_free(&sp);
        return;
    }
    PUTS(b, " (\n");
    if (has_comment) {
        ub_ind(b, indent + 1);
        ub_put_q(b, ub_comment_text(comment));
        ub_pc(b, '\n');
    }
    for (uint32_t i = 0; i < n; i++) {
        const ub_field *f = sp.v[i];
        const ub_value *v = &f->value;
        if (ub_write_common_field(w, indent + 1, f))
            continue;
        if (ub_key_is(f, "variantSets") && v->kind == UB_V_LISTOP) {
            const ub_listop *lo = v->u.listop;
            for (int p = 0; p < UB_LO_NPARTS; p++) {
                if (lo->is_explicit ? p != UB_LO_EXPLICIT
                                    : (p == UB_LO_EXPLICIT ||
                                       !ub_part_nonempty(lo, p)))
                    continue;
                ub_ind(b, indent + 1);
                if (p != UB_LO_EXPLICIT) {
                    ub_ps(b, ub_listop_ops[p]);
                    ub_pc(b, ' ');
                }
                PUTS(b, "variantSets = ");
                ub_write_name_vector(b, ub_listop_get(lo, p));
                ub_pc(b, '\n');
            }
            continue;
        }
        if (ub_key_is(f, "relocates")) {
            /* written relative to the prim's path */
            size_t pn = ub_path_of(prim, NULL, 0);
            char *path = malloc(pn + 2);
            if (!path) {
                w->oom = true;
                continue;
            }
            ub_path_of(prim, path, pn + 1);
            if (pn == 0)
                path[pn++] = '/';
            path[pn] = '\0';
            /* The reader makes them absolute against the prim's path
             * without its variant selections (</X{v=a}Y> reads as </X/Y>),
             * so they are made relative against that path again. */
            ub_ident_strip_variants(path, path, pn);
            ub_write_relocates(w, indent + 1, v, path);
            free(path);
            continue;
        }
        if ((ub_key_is(f, "prefixSubstitutions") ||
             ub_key_is(f, "suffixSubstitutions")) && v->kind == UB_V_DICT) {
            ub_ind(b, indent + 1);
            ub_ps(b, f->key);
            PUTS(b, " = ");
            ub_write_dict(w, indent + 1, v->u.dict, true);
            continue;
        }
        if (ub_key_is(f, "variants") && v->kind == UB_V_DICT) {
            if (v->u.dict && v->u.dict->n) {
                ub_ind(b, indent + 1);
                PUTS(b, "variants = ");
                ub_write_dict(w, indent + 1, v->u.dict, false);
            }
            continue;
        }
        ub_write_simple_field(w, indent + 1, f);
    }
    ub_ind(b, indent);
    ub_pc(b, ')');
    ub_ptrs_free(&sp);
}

/* The property metadata block after the declaration line. */
static void ub_write_prop_meta(ub_w *w, const ub_prop *prop, unsigned indent,
                               const ub_field *comment, ub_ptrs *sp,
                               uint32_t n)
{
    ub_buf *b = w->b;
    bool has_comment = ub_comment_nonempty(comment);
    if (!has_comment && n == 0)
        return;
    PUTS(b, " (\n");
    if (has_comment) {
        ub_ind(b, indent + 1);
        ub_put_q(b, ub_comment_text(comment));
        ub_pc(b, '\n');
    }
    for (uint32_t i = 0; i < n; i++) {
        const ub_field *f = sp->v[i];
        if (ub_write_common_field(w, indent + 1, f))
            continue;
        if (prop->kind == UB_ATTR && ub_key_is(f, "displayUnit")) {
            ub_ind(b, indent + 1);
            PUTS(b, "displayUnit = ");
            ub_put_bare(b, &f->value);
            ub_pc(b, '\n');
            continue;
        }
        ub_write_simple_field(w, indent + 1, f);
    }
    ub_ind(b, indent);
    ub_pc(b, ')');
}

static void ub_put_type_name(ub_buf *b, const ub_prop *p)
{
    /* the type name, not type->name: legacy names such as "Transform"
     * keep their spelling while storing as their base type */
    const char *tn = ub_prop_type_spelling(p);
    if (tn)
        ub_ps(b, tn);
    if (p->is_array)
        PUTS(b, "[]");
}

void ub_usda_write_sample(ub_buf *b, unsigned indent, double time,
                          const ub_value *v)
{
    ub_ind(b, indent + 1);
    ub_put_double(b, time);
    PUTS(b, ": ");
    if (v->kind == UB_V_UNTYPED)
        ub_put_untyped(b, v->u.untyped);
    else
        ub_put_value(b, v);
    PUTS(b, ",\n");
}

static void ub_write_samples(ub_w *w, unsigned indent, const ub_samples *s)
{
    ub_buf *b = w->b;
    for (uint32_t i = 0; i < s->n; i++)
        ub_usda_write_sample(b, indent, s->v[i].time, &s->v[i].value);
    ub_ind(b, indent);
    PUTS(b, "}\n");
}

static void ub_write_connect(ub_w *w, unsigned indent, const ub_prop *p,
                             const char *op, const ub_value *items)
{
    ub_buf *b = w->b;
    ub_ind(b, indent);
    if (op) {
        ub_ps(b, op);
        ub_pc(b, ' ');
    }
    if (p->variability != UB_VARYING)
        PUTS(b, "uniform ");
    ub_put_type_name(b, p);
    ub_pc(b, ' ');
    ub_ps(b, p->name);
    PUTS(b, ".connect = ");
    uint32_t n = items->kind == UB_V_DATA ? items->count : 0;
    if (n == 0) {
        PUTS(b, "None\n");
    } else if (n == 1) {
        const char *s = ub_sv(items, 0);
        ub_put_path(b, s, strlen(s));
        ub_pc(b, '\n');
    } else {
        PUTS(b, "[\n");
        for (uint32_t i = 0; i < n; i++) {
            const char *s = ub_sv(items, i);
            ub_ind(b, indent + 1);
            ub_put_path(b, s, strlen(s));
            PUTS(b, ",\n");
        }
        ub_ind(b, indent);
        PUTS(b, "]\n");
    }
}

static void ub_write_attribute(ub_w *w, const ub_prop *p, unsigned indent)
{
    ub_buf *b = w->b;
    const ub_field *comment;
    ub_ptrs sp;
    uint32_t n =
        ub_sorted_fields(w, ub_prop_meta(p), &sp, false, &comment, NULL);
    if (!sp.v)
        return;
    bool has_info = ub_comment_nonempty(comment) || n > 0;
    bool has_default = p->default_value.kind != UB_V_EMPTY;
    bool has_conn = ub_prop_connections(p)->kind == UB_V_LISTOP;
    bool has_samples = ub_prop_samples(p)->authored;
    if (has_info || has_default || p->custom || (!has_conn && !has_samples)) {
        ub_ind(b, indent);
        if (p->custom)
            PUTS(b, "custom ");
        if (p->variability != UB_VARYING)
            PUTS(b, "uniform ");
        ub_put_type_name(b, p);
        ub_pc(b, ' ');
        ub_ps(b, p->name);
        if (has_default) {
            PUTS(b, " = ");
            if (p->default_value.kind == UB_V_UNTYPED)
                ub_put_untyped(b, p->default_value.u.untyped);
            else
                ub_put_value(b, &p->default_value);
        }
        ub_write_prop_meta(w, p, indent, comment, &sp, n);
        ub_pc(b, '\n');
    }
    ub_ptrs_free(&sp);
    if (has_samples) {
        ub_ind(b, indent);
        if (p->variability != UB_VARYING)
            PUTS(b, "uniform ");
        ub_put_type_name(b, p);
        ub_pc(b, ' ');
        ub_ps(b, p->name);
        PUTS(b, ".timeSamples = {\n");
        if (!ub_prop_samples(p)->n && w->samples_fn &&
            w->samples_fn(w->samples_ctx, p, indent, b) != 0)
            w->oom = true;
        ub_write_samples(w, indent, ub_prop_samples(p));
    }
    if (has_conn) {
        const ub_listop *lo = ub_prop_connections(p)->u.listop;
        if (lo->is_explicit) {
            ub_write_connect(w, indent, p, NULL,
                             ub_listop_get(lo, UB_LO_EXPLICIT));
        } else {
            for (int k = UB_LO_DELETE; k < UB_LO_NPARTS; k++)
                if (ub_part_nonempty(lo, k))
                    ub_write_connect(w, indent, p, ub_listop_ops[k],
                                     ub_listop_get(lo, k));
        }
    }
}

/* " = target", " = [\n targets,\n ]" for relationship target lists. */
static void ub_write_targets(ub_w *w, unsigned indent, const ub_value *items)
{
    ub_buf *b = w->b;
    uint32_t n = items->kind == UB_V_DATA ? items->count : 0;
    if (n > 1) {
        PUTS(b, " = [\n");
        for (uint32_t i = 0; i < n; i++) {
            const char *s = ub_sv(items, i);
            ub_ind(b, indent + 1);
            ub_put_path(b, s, strlen(s));
            PUTS(b, ",\n");
        }
        ub_ind(b, indent);
        ub_pc(b, ']');
    } else {
        PUTS(b, " = ");
        if (n == 1) {
            const char *s = ub_sv(items, 0);
            ub_put_path(b, s, strlen(s));
        }
    }
}

static void ub_write_relationship(ub_w *w, const ub_prop *p, unsigned indent)
{
    ub_buf *b = w->b;
    const ub_field *comment;
    ub_ptrs sp;
    uint32_t n =
        ub_sorted_fields(w, ub_prop_meta(p), &sp, false, &comment, NULL);
    if (!sp.v)
        return;
    bool has_info = ub_comment_nonempty(comment) || n > 0;
    const ub_listop *lo = ub_prop_targets(p)->kind == UB_V_LISTOP
                              ? ub_prop_targets(p)->u.listop
                              : NULL;
    bool explicit_targets = lo && lo->is_explicit;
    bool target_ops = false;
    if (lo && !lo->is_explicit)
        for (int k = UB_LO_DELETE; k < UB_LO_NPARTS; k++)
            target_ops |= ub_part_nonempty(lo, k);
    const char *varying = p->varying_keyword ? "varying " : "";
    if (has_info || explicit_targets || (!target_ops && !p->custom)) {
        ub_ind(b, indent);
        if (p->custom)
            PUTS(b, "custom ");
        ub_ps(b, varying);
        PUTS(b, "rel ");
        ub_ps(b, p->name);
        if (explicit_targets) {
            const ub_value *t = ub_listop_get(lo, UB_LO_EXPLICIT);
            if (t->kind != UB_V_DATA || t->count == 0)
                PUTS(b, " = None");
            else
                ub_write_targets(w, indent, t);
        }
        ub_write_prop_meta(w, p, indent, comment, &sp, n);
        ub_pc(b, '\n');
    } else if (p->custom) {
        ub_ind(b, indent);
        PUTS(b, "custom ");
        ub_ps(b, varying);
        PUTS(b, "rel ");
        ub_ps(b, p->name);
        ub_pc(b, '\n');
    }
    ub_ptrs_free(&sp);
    if (target_ops) {
        for (int k = UB_LO_DELETE; k < UB_LO_NPARTS; k++) {
            if (!ub_part_nonempty(lo, k))
                continue;
            ub_ind(b, indent);
            ub_ps(b, ub_listop_ops[k]);
            ub_pc(b, ' ');
            ub_ps(b, varying);
            PUTS(b, "rel ");
            ub_ps(b, p->name);
            ub_write_targets(w, indent, ub_listop_get(lo, k));
            ub_pc(b, '\n');
        }
    }
    if (ub_prop_samples(p)->authored) {
        ub_ind(b, indent);
        ub_ps(b, varying);
        PUTS(b, "rel ");
        ub_ps(b, p->name);
        PUTS(b, ".timeSamples = {\n");
        ub_write_samples(w, indent, ub_prop_samples(p));
    }
    if (ub_prop_default_target(p)) {
        ub_ind(b, indent);
        ub_ps(b, varying);
        PUTS(b, "rel ");
        ub_ps(b, p->name);
        PUTS(b, ".default = ");
        ub_put_path(b, ub_prop_default_target(p),
                    strlen(ub_prop_default_target(p)));
        /* OpenUSD indents the newline that ends this statement. */
        ub_ind(b, indent);
        ub_pc(b, '\n');
    }
}

static void ub_write_body(ub_w *w, const ub_prim *prim, unsigned indent);

static void ub_write_variant_sets(ub_w *w, const ub_prim *prim,
                                  unsigned indent)
{
    ub_buf *b = w->b;
    uint32_t nsets = ub_prim_n_variant_sets(prim);
    if (nsets == 0)
        return;
    /* OpenUSD lists a prim's variant sets in the order of an explicit or
     * `add` variantSets statement (it creates those sets up front), then
     * the other variantSet blocks as they appear. */
    ub_ptrs order;
    const void **ov = ub_ptrs_get(w, &order, nsets);
    if (!ov)
        return;
    uint32_t no = 0;
    const ub_field *vf = ub_find(&prim->meta, "variantSets");
    const ub_value *names = NULL;
    if (vf && vf->value.kind == UB_V_LISTOP) {
        const ub_listop *lo = vf->value.u.listop;
        if (lo->is_explicit)
            names = ub_listop_get(lo, UB_LO_EXPLICIT);
        else if (lo->has[UB_LO_ADD])
            names = ub_listop_get(lo, UB_LO_ADD);
    }
    uint32_t nn = names && names->kind == UB_V_DATA && ub_value_type(names) &&
                          ub_value_type(names)->scalar == UB_SC_STRING
                      ? names->count
                      : 0;
    for (uint32_t k = 0; k < nn; k++) {
        const char *name = ub_sv(names, k);
        for (uint32_t s = 0; s < nsets; s++) {
            const ub_variant_set *vs = &ub_prim_variant_sets(prim)[s];
            if (strcmp(vs->name, name) != 0)
                continue;
            bool seen = false;
            for (uint32_t i = 0; i < no; i++)
                seen |= ov[i] == vs;
            if (!seen)
                ov[no++] = vs;
        }
    }
    for (uint32_t s = 0; s < nsets; s++) {
        const ub_variant_set *vs = &ub_prim_variant_sets(prim)[s];
        bool seen = false;
        for (uint32_t i = 0; i < no; i++)
            seen |= ov[i] == vs;
        if (!seen)
            ov[no++] = vs;
    }
    for (uint32_t s = 0; s < no; s++) {
        const ub_variant_set *vs = ov[s];
        uint32_t n = vs->variants.n;
        if (n == 0)
            continue;
        ub_ptrs sp;
        const void **v = ub_ptrs_get(w, &sp, n);
        if (!v)
            break;
        for (uint32_t i = 0; i < n; i++)
            v[i] = vs->variants.v[i];
        ub_sort_ptrs(v, n, ub_cmp_prim_name);
        ub_ind(b, indent);
        PUTS(b, "variantSet ");
        ub_put_q(b, vs->name);
        PUTS(b, " = {\n");
        for (uint32_t i = 0; i < n; i++) {
            const ub_prim *var = v[i];
            ub_ind(b, indent + 1);
            ub_put_q(b, var->name);
            ub_write_prim_meta(w, var, indent + 1);
            PUTS(b, " {\n");
            ub_write_body(w, var, indent + 1);
            ub_pc(b, '\n');
            ub_ind(b, indent + 1);
            PUTS(b, "}\n");
        }
        ub_ind(b, indent);
        PUTS(b, "}\n");
        ub_ptrs_free(&sp);
    }
    ub_ptrs_free(&order);
}

static uint32_t ub_order_count(const ub_value *v)
{
    return v->kind == UB_V_DATA ? v->count : 0;
}

/* A body in canonical order: reorder statements, properties, children,
 * variant sets.  A stream writes the children's text itself, between
 * ub_write_body_head and ub_write_body_tail. */
static void ub_write_body_head(ub_w *w, const ub_prim *prim, unsigned indent)
{
    ub_buf *b = w->b;
    if (ub_order_count(ub_prim_property_order(prim)) > 1) {
        ub_ind(b, indent + 1);
        PUTS(b, "reorder properties = ");
        ub_write_name_vector(b, ub_prim_property_order(prim));
        ub_pc(b, '\n');
    }
    if (ub_order_count(ub_prim_prim_order(prim)) > 1) {
        ub_ind(b, indent + 1);
        PUTS(b, "reorder nameChildren = ");
        ub_write_name_vector(b, ub_prim_prim_order(prim));
        ub_pc(b, '\n');
    }
    uint32_t np = prim->props.n;
    if (np) {
        ub_ptrs sp;
        const void **v = ub_ptrs_get(w, &sp, np);
        if (!v)
            return;
        memcpy(v, prim->props.v, np * sizeof *v);
        ub_sort_ptrs(v, np, ub_cmp_prop);
        for (uint32_t i = 0; i < np; i++) {
            const ub_prop *p = v[i];
            if (p->kind == UB_ATTR)
                ub_write_attribute(w, p, indent + 1);
            else
                ub_write_relationship(w, p, indent + 1);
        }
        ub_ptrs_free(&sp);
    }
    if (np && prim->children.n)
        ub_pc(b, '\n');
}

static void ub_write_body_tail(ub_w *w, const ub_prim *prim, unsigned indent)
{
    ub_write_variant_sets(w, prim, indent + 1);
}

static void ub_write_children(ub_w *w, const ub_prim *prim, unsigned indent)
{
    for (uint32_t i = 0; i < prim->children.n; i++) {
        if (i)
            ub_pc(w->b, '\n');
        ub_write_prim(w, prim->children.v[i], indent + 1);
        ub_buf_drain(w->b); /* nothing before a prim is ever revisited */
    }
}

static void ub_write_body(ub_w *w, const ub_prim *prim, unsigned indent)
{
    ub_write_body_head(w, prim, indent);
    ub_write_children(w, prim, indent);
    ub_write_body_tail(w, prim, indent);
}

static const char *const ub_specifiers[] = {"def", "over", "class"};

/* The prim's path ("/A/B", "/A{v=x}B"), rebuilt from the parent chain
 * only where it is needed (relocates); writes at most cap bytes of it and
 * returns its full length. */
static size_t ub_path_of(const ub_prim *p, char *out, size_t cap)
{
    if (!p || !p->parent)
        return 0;
    size_t n = ub_path_of(p->parent, out, cap);
    size_t l = strlen(p->name);
    if (ub_prim_variant_set(p)) {
        size_t vl = strlen(ub_prim_variant_set(p));
        if (n + vl + l + 3 < cap) {
            out[n] = '{';
            memcpy(out + n + 1, ub_prim_variant_set(p), vl);
            out[n + 1 + vl] = '=';
            memcpy(out + n + 2 + vl, p->name, l);
            out[n + 2 + vl + l] = '}';
        }
        return n + vl + l + 3;
    }
    bool slash = !(p->parent && ub_prim_variant_set(p->parent));
    if (n + slash + l < cap) {
        if (slash)
            out[n] = '/';
        memcpy(out + n + slash, p->name, l);
    }
    return n + slash + l;
}

/* A prim's text up to its children, and from its children on. */
static void ub_write_prim_head(ub_w *w, const ub_prim *prim, unsigned indent)
{
    ub_buf *b = w->b;
    ub_ind(b, indent);
    ub_ps(b, ub_specifiers[prim->specifier <= UB_CLASS ? prim->specifier
                                                             : 0]);
    /* "__AnyType__" is OpenUSD's spelling of "no type". */
    if (prim->type_name && prim->type_name[0] &&
        strcmp(prim->type_name, "__AnyType__") != 0) {
        ub_pc(b, ' ');
        ub_ps(b, prim->type_name);
    }
    ub_pc(b, ' ');
    ub_put_q(b, prim->name);
    ub_write_prim_meta(w, prim, indent);
    ub_pc(b, '\n');
    ub_ind(b, indent);
    PUTS(b, "{\n");
    ub_write_body_head(w, prim, indent);
}

static void ub_write_prim_tail(ub_w *w, const ub_prim *prim, unsigned indent)
{
    ub_write_body_tail(w, prim, indent);
    ub_ind(w->b, indent);
    PUTS(w->b, "}\n");
}

static void ub_write_prim(ub_w *w, const ub_prim *prim, unsigned indent)
{
    ub_write_prim_head(w, prim, indent);
    ub_write_children(w, prim, indent);
    ub_write_prim_tail(w, prim, indent);
}

static void ub_write_sublayers(ub_w *w, const ub_layer *l)
{
    ub_buf *b = w->b;
    PUTS(b, "    subLayers = [\n");
    for (uint32_t i = 0; i < l->n_sublayers; i++) {
        const ub_sublayer *s = &l->sublayers[i];
        ub_ind(b, 2);
        ub_put_asset(b, s->asset, strlen(s->asset));
        ub_put_offset(b, s->offset);
        if (i + 1 < l->n_sublayers)
            PUTS(b, ",\n");
        else
            ub_pc(b, '\n');
    }
    PUTS(b, "    ]\n");
}

static void ub_write_header(ub_w *w, const ub_layer *l)
{
    ub_buf *b = w->b;
    const ub_field *comment;
    ub_ptrs sp;
    /* "subLayers" sorts among the fields: add a stand-in entry. */
    ub_fields meta = l->meta;
    uint32_t n = ub_sorted_fields(w, &meta, &sp, true, &comment, "relocates");
    if (!sp.v)
        return;
    const ub_field *relocates = ub_find(&l->meta, "relocates");
    static const ub_field sub_key = {.key = "subLayers",
                                     .value = {.kind = UB_V_BLOCK}};
    ub_ptrs all;
    const void **v = ub_ptrs_get(w, &all, (size_t)n + 1);
    if (!v) {
        ub_ptrs_free(&sp);
        return;
    }
    uint32_t m = 0;
    bool sub_done = !l->has_sublayers;
    for (uint32_t i = 0; i < n; i++) {
        const ub_field *f = sp.v[i];
        if (!sub_done &&
            strcmp("subLayers", ub_field_name(f->key)) < 0) {
            v[m++] = &sub_key;
            sub_done = true;
        }
        if (ub_key_is(f, "subLayers"))
            continue; /* the list lives in layer->sublayers */
        v[m++] = f;
    }
    if (!sub_done)
        v[m++] = &sub_key;
    ub_ptrs_free(&sp);

    size_t start = b->len;
    PUTS(b, "(\n");
    size_t body = b->len;
    if (ub_comment_nonempty(comment)) {
        ub_ind(b, 1);
        ub_put_q(b, ub_comment_text(comment));
        ub_pc(b, '\n');
    }
    for (uint32_t i = 0; i < m; i++) {
        const ub_field *f = v[i];
        if (f == &sub_key) {
            ub_write_sublayers(w, l);
        } else if (ub_key_is(f, "doc")) {
            if (ub_is_str1(&f->value) && ub_sv(&f->value, 0)[0]) {
                PUTS(b, "    doc = ");
                ub_put_q(b, ub_sv(&f->value, 0));
                ub_pc(b, '\n');
            }
        } else if (ub_key_is(f, "hasOwnedSubLayers")) {
            const ub_value *hv = &f->value;
            if (hv->kind == UB_V_DATA && hv->count == 1 &&
                hv->type_id == UB_TY_BOOL &&
                *(const uint8_t *)ub_value_data(hv))
                PUTS(b, "    hasOwnedSubLayers = true\n");
        } else {
            ub_write_simple_field(w, 1, f);
        }
    }
    ub_ptrs_free(&all);
    if (relocates)
        ub_write_relocates(w, 1, &relocates->value, NULL);
    if (b->len == body)
        b->len = start; /* nothing to say: no header at all */
    else
        PUTS(b, ")\n");
}

/* What comes before the root prims: the cookie, the layer's metadata and
 * its rootPrims order. */
static void ub_write_top(ub_w *w, const ub_layer *layer)
{
    ub_buf *out = w->b;
    PUTS(out, "#usda 1.0\n");
    ub_write_header(w, layer);
    const ub_prim *root = layer->root;
    if (root && ub_order_count(ub_prim_prim_order(root)) > 1) {
        PUTS(out, "\nreorder rootPrims = ");
        ub_write_name_vector(out, ub_prim_prim_order(root));
        ub_pc(out, '\n');
    }
}

int ub_usda_write(const ub_layer *layer, ub_buf *out)
{
    return ub_usda_write_with(layer, out, NULL, NULL);
}

int ub_usda_write_with(const ub_layer *layer, ub_buf *out,
                       ub_usda_samples_fn fn, void *ctx)
{
    ub_w w = {.b = out, .oom = false, .samples_fn = fn, .samples_ctx = ctx};
    ub_write_top(&w, layer);
    const ub_prim *root = layer->root;
    if (root) {
        for (uint32_t i = 0; i < root->children.n; i++) {
            ub_pc(out, '\n');
            ub_write_prim(&w, root->children.v[i], 0);
            ub_buf_drain(out);
        }
    }
    ub_pc(out, '\n');
    if (w.oom)
        out->failed = true;
    return out->failed ? -1 : 0;
}

/* --- streaming -------------------------------------------------------------- */

/* Prims arrive children first.  When a prim closes, every prim still open
 * above it has all that precedes its children (metadata, properties) --
 * unless a property is authored after a child, which the parser reports
 * through ub_usda_stream_reopened -- so the open prims' heads are written
 * then, the closed prim whole (or just its tail when its head went out
 * with its first child), and nothing is ever kept but the open chain. */
/* What the stream knows of one depth (0: the pseudo-root, 1: root prims):
 * the open prim there whose head is written, and how many of its children
 * have been written. */
typedef struct ub_stream_level {
    const ub_prim *head;
    uint32_t nchildren;
} ub_stream_level;

struct ub_usda_stream {
    ub_buf *out;
    ub_stream_level *level;
    uint32_t nlevels;
    bool top_done, reopened, oom;
};

ub_usda_stream *ub_usda_stream_new(ub_buf *out)
{
    ub_usda_stream *s = calloc(1, sizeof *s);
    if (s)
        s->out = out;
    return s;
}

void ub_usda_stream_free(ub_usda_stream *s)
{
    if (!s)
        return;
    free(s->level);
    free(s);
}

static bool ub_stream_reserve(ub_usda_stream *s, unsigned depth)
{
    if (depth < s->nlevels)
        return true;
    uint32_t n = depth + 16;
    ub_stream_level *v = realloc(s->level, n * sizeof *v);
    if (!v)
        return false;
    memset(v + s->nlevels, 0, (n - s->nlevels) * sizeof *v);
    s->level = v;
    s->nlevels = n;
    return true;
}

/* The blank line before a prim that is not its parent's first (and
 * before every root prim, after the header). */
static void ub_stream_sep(ub_usda_stream *s, unsigned depth)
{
    uint32_t *n = &s->level[depth - 1].nchildren;
    if (depth == 1 || *n)
        ub_pc(s->out, '\n');
    ++*n;
}

/* Write the head of the open prim p at depth d, after those of its open
 * ancestors not written yet (a head is only ever written after its
 * parent's). */
static void ub_stream_open(ub_usda_stream *s, ub_w *w, const ub_prim *p,
                           unsigned d)
{
    if (d == 0 || s->level[d].head == p)
        return;
    ub_stream_open(s, w, p->parent, d - 1);
    ub_stream_sep(s, d);
    ub_write_prim_head(w, p, d - 1);
    s->level[d] = (ub_stream_level){p, 0};
}

void ub_usda_stream_prim(void *ctx, const ub_layer *layer,
                         const ub_prim *prim, unsigned depth)
{
    ub_usda_stream *s = ctx;
    if (!ub_stream_reserve(s, depth + 1)) {
        s->oom = true;
        return;
    }
    ub_w w = {.b = s->out, .oom = false};
    if (!s->top_done) {
        ub_write_top(&w, layer);
        s->top_done = true;
    }
    ub_stream_open(s, &w, prim->parent, depth - 1);
    if (s->level[depth].head == prim) {
        ub_write_prim_tail(&w, prim, depth - 1);
    } else {
        ub_stream_sep(s, depth);
        ub_write_prim(&w, prim, depth - 1); /* it has no children */
    }
    s->level[depth].head = NULL;
    s->oom |= w.oom;
    ub_buf_drain(s->out);
}

void ub_usda_stream_reopened(void *ctx, const ub_prim *prim)
{
    (void)prim;
    ((ub_usda_stream *)ctx)->reopened = true;
}

int ub_usda_stream_end(ub_usda_stream *s, const ub_layer *layer)
{
    if (s->reopened)
        return 1;
    if (!s->top_done) {
        ub_w w = {.b = s->out, .oom = false};
        ub_write_top(&w, layer);
        s->oom |= w.oom;
    }
    ub_pc(s->out, '\n');
    if (s->oom)
        s->out->failed = true;
    return s->out->failed ? -1 : 0;
}
