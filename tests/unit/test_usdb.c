/* Unit tests of the .usdb binary format: every encoding round-trips
 * bit-exactly through ub_usdb_write and the runtime reader, the lazy
 * runtime API answers what OpenUSD would (values between samples, before
 * the first and after the last, blocks, held types), and damage is
 * reported, naming the section. */
#define _GNU_SOURCE /* sched_setaffinity */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "ub_parse.h"
#include "ub_usdb.h"
#include "ub_usda.h"
#include "ub_usdb_write.h"
#include "kept_samples.h"
#include "pin_cpu.h"
#include "ub_test.h"

static ub_strtab *T;

static const char *S(const char *s)
{
    return ub_intern_cstr(T, s);
}

static const ub_type *TY(ub_type_id id)
{
    return ub_type_get(id);
}

/* --- building layers ----------------------------------------------------- */

static ub_value arr_f(ub_arena *a, ub_type_id id, uint32_t n,
                      double (*gen)(uint32_t i, unsigned c), bool is_array)
{
    ub_value v = ub_value_new(a, TY(id), n, is_array);
    ub_scalar sc = ub_value_type(&v)->scalar;
    for (uint32_t i = 0; i < n; i++)
        for (unsigned c = 0; c < ub_type_ncomp(ub_value_type(&v)); c++) {
            double x = gen(i, c);
            /* unsigned storage gets values it can hold */
            if (sc == UB_SC_UINT || sc == UB_SC_UINT64)
                x = fabs(x);
            else if (sc == UB_SC_UCHAR || sc == UB_SC_BOOL)
                x = fmod(fabs(x), sc == UB_SC_BOOL ? 2 : 256);
            ub_value_set_double(&v, i, c, x);
        }
    return v;
}

static double g_dec(uint32_t i, unsigned c)
{
    return (double)((int)(i * 37 + c * 11) % 2001 - 1000) / 1e4;
}

static double g_rand(uint32_t i, unsigned c)
{
    uint64_t x = (uint64_t)(i * 3 + c + 1) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 31;
    return (double)(x >> 11) / 9007199254740992.0 * 2000.0 - 1000.0;
}

static double g_int(uint32_t i, unsigned c)
{
    return (double)((int)(i * 7 + c) % 50 - 25) * ((i & 1) ? 1000 : 1);
}

static ub_value strs(ub_arena *a, ub_type_id id, uint32_t n, const char *pre)
{
    ub_value v = ub_value_new(a, TY(id), n, true);
    for (uint32_t i = 0; i < n; i++) {
        char b[64];
        snprintf(b, sizeof b, "%s%u", pre, i % 5);
        ((const char **)ub_value_data(&v))[i] = S(b);
    }
    return v;
}

static ub_dict *dict(ub_arena *a, int depth)
{
    ub_dict *d = ub_dict_new(a);
    ub_value x = ub_value_new(a, TY(UB_TY_DOUBLE), 1, false);
    *(double *)ub_value_data(&x) = 2.5;
    ub_dict_set(a, d, S("weight"), x, (ub_sloc){0});
    ub_dict_set(a, d, S("names"), strs(a, UB_TY_STRING, 3, "n"),
                (ub_sloc){0});
    /* (not a block: no dictionary's text holds one, and the reader
     * refuses it; test_metadata_refused) */
    ub_dict_set(a, d, S("kinds"), strs(a, UB_TY_TOKEN, 2, "k"),
                (ub_sloc){0});
    if (depth > 0) {
        ub_value sub = {.kind = UB_V_DICT, .u.dict = dict(a, depth - 1)};
        ub_dict_set(a, d, S("sub"), sub, (ub_sloc){0});
    }
    return d;
}

static ub_value listop(ub_arena *a, ub_type_id id)
{
    ub_listop *lo = ub_listop_new(a);
    lo->has[UB_LO_PREPEND] = true;
    CU_ASSERT_FATAL(
        ub_listop_put(a, lo, UB_LO_PREPEND, strs(a, id, 2, "/A/p")) == 0);
    lo->has[UB_LO_DELETE] = true; /* authored, empty */
    CU_ASSERT_FATAL(ub_listop_put(a, lo, UB_LO_DELETE,
                                  ub_value_new(a, TY(id), 0, true)) == 0);
    lo->has[UB_LO_APPEND] = true;
    CU_ASSERT_FATAL(
        ub_listop_put(a, lo, UB_LO_APPEND, strs(a, id, 1, "/B/q")) == 0);
    return (ub_value){.kind = UB_V_LISTOP, .type_id = (uint8_t)(id),
        .u.listop = lo};
}

static ub_value refs(ub_arena *a)
{
    ub_value v = ub_value_new(a, TY(UB_TY_REFERENCE), 2, true);
    ub_reference *r = ub_value_data(&v);
    r[0] = (ub_reference){.asset = S("./a.usda"), .prim_path = S("/A"),
                          .offset = {12.5, 2.0}, .has_offset = true,
                          .has_scale = true, .custom_data = dict(a, 1)};
    r[1] = (ub_reference){.asset = S(""), .prim_path = S(""),
                          .offset = {0, 1}};
    ub_listop *lo = ub_listop_new(a);
    lo->is_explicit = true;
    lo->has[UB_LO_EXPLICIT] = true;
    CU_ASSERT_FATAL(ub_listop_put(a, lo, UB_LO_EXPLICIT, v) == 0);
    return (ub_value){.kind = UB_V_LISTOP,
        .type_id = (uint8_t)(UB_TY_REFERENCE),
                      .u.listop = lo};
}

static ub_value untyped(ub_arena *a)
{
    ub_untyped *u = ub_arena_zalloc(a, sizeof *u);
    u->kind = UB_U_LIST;
    u->n = 3;
    u->child = ub_arena_zalloc(a, 3 * sizeof *u->child);
    u->child[0] = (ub_untyped){.kind = UB_U_ATOM, .text = S("1.5e3")};
    u->child[1] = (ub_untyped){.kind = UB_U_STRING, .text = S("x\"y")};
    u->child[2].kind = UB_U_TUPLE;
    u->child[2].n = 1;
    u->child[2].child = ub_arena_zalloc(a, sizeof(ub_untyped));
    /* (what the text can say: a path is a whole value, never a part) */
    u->child[2].child[0] =
        (ub_untyped){.kind = UB_U_ASSET, .text = S("a@b.usda")};
    return (ub_value){.kind = UB_V_UNTYPED, .u.untyped = u};
}

static ub_prop *attr(ub_layer *L, ub_prim *p, const char *name,
                     ub_type_id id, bool is_array)
{
    ub_prop *a = ub_prop_new(L, p, S(name), UB_ATTR, (ub_sloc){0});
    ub_prop_set_decl(L->arena, T, a, TY(id), S(TY(id)->name));
    a->is_array = is_array;
    return a;
}

static ub_value scalar(ub_arena *a, ub_type_id id, double x)
{
    ub_value v = ub_value_new(a, TY(id), 1, false);
    for (unsigned c = 0; c < ub_type_ncomp(ub_value_type(&v)); c++)
        ub_value_set_double(&v, 0, c, x + c);
    return v;
}

/* A layer that uses every part of the model. */
static ub_layer *rich_layer(void)
{
    ub_layer *L = ub_layer_new(T, "rich.usda");
    ub_arena *a = L->arena;
    ub_fields_set(a, &L->meta, S("doc"), strs(a, UB_TY_STRING, 1, "doc"),
                  (ub_sloc){0});
    L->meta.v[0].value.is_array = false;
    ub_fields_set(a, &L->meta, S("customLayerData"),
                  (ub_value){.kind = UB_V_DICT, .u.dict = dict(a, 3)},
                  (ub_sloc){0});
    ub_sublayer *sl = ub_layer_add_sublayer(L, S("./sub.usda"), (ub_sloc){0});
    sl->offset = (ub_offset){-3.25, 0.5};
    sl->has_offset = sl->has_scale = true;
    ub_layer_add_sublayer(L, S("./sub2.usda"), (ub_sloc){0});
    ub_prim_ext_get(a, L->root)->prim_order = strs(a, UB_TY_TOKEN, 2, "World");

    ub_prim *w = ub_prim_new(L, L->root, S("World"), UB_DEF, (ub_sloc){0});
    w->type_name = S("Xform");
    ub_fields_set(a, &w->meta, S("references"), refs(a), (ub_sloc){0});
    ub_fields_set(a, &w->meta, S("inherits"), listop(a, UB_TY_PATH),
                  (ub_sloc){0});
    ub_fields_set(a, &w->meta, S("bogus"), untyped(a), (ub_sloc){0});
    ub_prim_ext_get(a, w)->property_order = strs(a, UB_TY_TOKEN, 3, "p");

    /* every scalar type, as a scalar and as a long array */
    static const ub_type_id ids[] = {
        UB_TY_BOOL, UB_TY_UCHAR, UB_TY_INT, UB_TY_UINT, UB_TY_INT64,
        UB_TY_UINT64, UB_TY_HALF, UB_TY_FLOAT, UB_TY_DOUBLE, UB_TY_TIMECODE,
        UB_TY_MATRIX2D, UB_TY_MATRIX4D, UB_TY_QUATH, UB_TY_QUATF,
        UB_TY_QUATD, UB_TY_INT3, UB_TY_HALF3, UB_TY_POINT3F,
        UB_TY_NORMAL3F, UB_TY_COLOR4D, UB_TY_TEXCOORD2F, UB_TY_FRAME4D};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char n[64];
        snprintf(n, sizeof n, "s_%s", TY(ids[i])->name);
        attr(L, w, n, ids[i], false)->default_value =
            arr_f(a, ids[i], 1, g_dec, false);
        snprintf(n, sizeof n, "dec_%s", TY(ids[i])->name);
        attr(L, w, n, ids[i], true)->default_value =
            arr_f(a, ids[i], 300, ids[i] == UB_TY_INT64 ? g_int : g_dec,
                  true);
        snprintf(n, sizeof n, "rnd_%s", TY(ids[i])->name);
        attr(L, w, n, ids[i], true)->default_value =
            arr_f(a, ids[i], 200, g_rand, true);
    }
    /* special floats: -0, inf, nan, denormals stay bit-exact */
    ub_value sp = ub_value_new(a, TY(UB_TY_FLOAT), 40, true);
    for (uint32_t i = 0; i < 40; i++)
        ((float *)ub_value_data(&sp))[i] = i % 4 == 0 ? -0.0f
                                  : i % 4 == 1 ? INFINITY
                                  : i % 4 == 2 ? NAN
                                               : 1e-42f * (float)i;
    attr(L, w, "special", UB_TY_FLOAT, true)->default_value = sp;
    ub_value i64 = ub_value_new(a, TY(UB_TY_INT64), 20, true);
    for (uint32_t i = 0; i < 20; i++)
        ((int64_t *)ub_value_data(&i64))[i] = i & 1 ? INT64_MIN : INT64_MAX;
    attr(L, w, "extremes", UB_TY_INT64, true)->default_value = i64;
    attr(L, w, "tokens", UB_TY_TOKEN, true)->default_value =
        strs(a, UB_TY_TOKEN, 50, "tok");
    attr(L, w, "assets", UB_TY_ASSET, true)->default_value =
        strs(a, UB_TY_ASSET, 3, "./tex");
    attr(L, w, "empty", UB_TY_FLOAT, true)->default_value =
        ub_value_new(a, TY(UB_TY_FLOAT), 0, true);
    attr(L, w, "blocked", UB_TY_DOUBLE, false)->default_value =
        ub_value_block();
    ub_prop *op = attr(L, w, "op", UB_TY_OPAQUE, false);
    op->custom = true;
    ub_prop *un = ub_prop_new(L, w, S("unknown"), UB_ATTR, (ub_sloc){0});
    ub_prop_set_decl(L->arena, T, un, NULL, S("ThisType::IsBogus"));
    un->default_value = untyped(a);
    ub_prop *cn = attr(L, w, "in", UB_TY_COLOR3F, false);
    ub_prop_ext_get(a, cn)->connections = listop(a, UB_TY_PATH);
    cn->variability = UB_UNIFORM;
    ub_fields_set(a, ub_prop_meta_get(a, cn), S("customData"),
                  (ub_value){.kind = UB_V_DICT, .u.dict = dict(a, 0)},
                  (ub_sloc){0});

    /* samples: packed scalars (arithmetic times), arrays with a block,
     * NaN time, and authored-but-empty */
    ub_prop *tr = attr(L, w, "xformOp:translate", UB_TY_DOUBLE3, false);
    for (int t = 1; t <= 48; t++)
        ub_samples_set(a, &ub_prop_ext_get(a, tr)->samples, t,
                       scalar(a, UB_TY_DOUBLE3, t * 0.5));
    ub_prop *pts = attr(L, w, "points", UB_TY_POINT3F, true);
    ub_samples_set(a, &ub_prop_ext_get(a, pts)->samples, 0.25,
                   arr_f(a, UB_TY_POINT3F, 100, g_dec, true));
    ub_samples_set(a, &ub_prop_ext_get(a, pts)->samples, 7.125,
                   ub_value_block());
    ub_samples_set(a, &ub_prop_ext_get(a, pts)->samples, 9,
                   arr_f(a, UB_TY_POINT3F, 100, g_dec, true));
    ub_prop *nt = attr(L, w, "nantime", UB_TY_FLOAT, false);
    ub_samples_set(a, &ub_prop_ext_get(a, nt)->samples, 1,
                   scalar(a, UB_TY_FLOAT, 1));
    ub_prop_ext_get(a, nt)->samples.v = ub_arena_grow(
        a, ub_prop_ext_get(a, nt)->samples.v, 1, 2, sizeof(ub_sample));
    ub_prop_samples(nt)->v[1] = (ub_sample){NAN, scalar(a, UB_TY_FLOAT, 2)};
    ub_prop_ext_get(a, nt)->samples.n = 2;
    ub_prop_ext_get(a, nt)->samples.cap = 2;
    ub_prop_ext_get(a, attr(L, w, "noSamples", UB_TY_FLOAT, false))
        ->samples.authored = true;

    ub_prop *rel = ub_prop_new(L, w, S("material:binding"), UB_REL,
                               (ub_sloc){0});
    ub_prop_ext_get(a, rel)->targets = listop(a, UB_TY_PATH);
    ub_prop_ext_get(a, rel)->default_target = S("/Looks/a");
    rel->varying_keyword = true;
    rel->custom = true;

    /* children, classes, variants with nested prims */
    ub_prim *c = ub_prim_new(L, w, S("child"), UB_OVER, (ub_sloc){0});
    ub_prim_new(L, c, S("grand"), UB_CLASS, (ub_sloc){0});
    ub_variant_set *vs = ub_variant_set_get(L, w, S("look"), (ub_sloc){0});
    ub_prim *red = ub_variant_new(L, w, vs, S("red"), (ub_sloc){0});
    attr(L, red, "color", UB_TY_COLOR3F, false)->default_value =
        scalar(a, UB_TY_COLOR3F, 1);
    ub_prim_new(L, red, S("inVariant"), UB_DEF, (ub_sloc){0});
    ub_variant_new(L, w, vs, S("blue"), (ub_sloc){0})->specifier = UB_DEF;
    ub_variant_set_get(L, w, S("empty"), (ub_sloc){0});
    return L;
}

/* --- deep, bit-exact comparison ------------------------------------------ */

static bool val_same(const ub_value *x, const ub_value *y)
{
    if (x->kind != y->kind || ub_value_type(x) != ub_value_type(y) ||
        x->is_array != y->is_array || !ub_value_equal(x, y))
        return false;
    if (x->kind == UB_V_DATA && ub_value_type(x)->scalar != UB_SC_STRING &&
        ub_value_type(x)->scalar != UB_SC_REF &&
            ub_value_type(x)->scalar != UB_SC_DICT)
        return memcmp(ub_value_data(x), ub_value_data(y),
                      x->count * ub_type_elem_size(ub_value_type(x))) == 0;
    return true;
}

static bool fields_same(const ub_fields *x, const ub_fields *y)
{
    if (x->n != y->n)
        return false;
    for (uint32_t i = 0; i < x->n; i++)
        if (x->v[i].key != y->v[i].key ||
            !val_same(&x->v[i].value, &y->v[i].value))
            return false;
    return true;
}

static bool prim_same(const ub_prim *x, const ub_prim *y)
{
    if (x->name != y->name || x->specifier != y->specifier ||
        x->type_name != y->type_name ||
        ub_prim_variant_set(x) != ub_prim_variant_set(y) ||
        !fields_same(&x->meta, &y->meta) ||
        !val_same(ub_prim_prim_order(x), ub_prim_prim_order(y)) ||
        !val_same(ub_prim_property_order(x), ub_prim_property_order(y)) ||
        x->props.n != y->props.n || x->children.n != y->children.n ||
        ub_prim_n_variant_sets(x) != ub_prim_n_variant_sets(y))
        return false;
    for (uint32_t i = 0; i < x->props.n; i++) {
        const ub_prop *p = x->props.v[i], *q = y->props.v[i];
        if (p->name != q->name || p->kind != q->kind ||
            p->custom != q->custom || p->variability != q->variability ||
            p->varying_keyword != q->varying_keyword ||
            !ub_prop_same_type_name(p, q) ||
            p->is_array != q->is_array ||
            ub_prop_default_target(p) != ub_prop_default_target(q) ||
            !val_same(&p->default_value, &q->default_value) ||
            !val_same(ub_prop_connections(p), ub_prop_connections(q)) ||
            !val_same(ub_prop_targets(p), ub_prop_targets(q)) ||
            !fields_same(ub_prop_meta(p), ub_prop_meta(q)) ||
            ub_prop_samples(p)->authored != ub_prop_samples(q)->authored ||
            ub_prop_samples(p)->n != ub_prop_samples(q)->n)
            return false;
        for (uint32_t k = 0; k < ub_prop_samples(p)->n; k++)
            if (memcmp(&ub_prop_samples(p)->v[k].time,
                       &ub_prop_samples(q)->v[k].time, 8) ||
                !val_same(&ub_prop_samples(p)->v[k].value,
                          &ub_prop_samples(q)->v[k].value))
                return false;
    }
    for (uint32_t i = 0; i < x->children.n; i++)
        if (!prim_same(x->children.v[i], y->children.v[i]))
            return false;
    for (uint32_t i = 0; i < ub_prim_n_variant_sets(x); i++) {
        const ub_variant_set *a = &ub_prim_variant_sets(x)[i],
                             *b = &ub_prim_variant_sets(y)[i];
        if (a->name != b->name || a->variants.n != b->variants.n)
            return false;
        for (uint32_t k = 0; k < a->variants.n; k++)
            if (!prim_same(a->variants.v[k], b->variants.v[k]))
                return false;
    }
    return true;
}

static bool layer_same(const ub_layer *x, const ub_layer *y)
{
    if (!fields_same(&x->meta, &y->meta) ||
        x->has_sublayers != y->has_sublayers ||
        x->n_sublayers != y->n_sublayers)
        return false;
    for (uint32_t i = 0; i < x->n_sublayers; i++) {
        const ub_sublayer *a = &x->sublayers[i], *b = &y->sublayers[i];
        if (a->asset != b->asset || a->has_offset != b->has_offset ||
            a->has_scale != b->has_scale ||
            memcmp(&a->offset, &b->offset, sizeof a->offset))
            return false;
    }
    return prim_same(x->root, y->root);
}

static void write(const ub_layer *L, int level, ub_buf *b)
{
    ub_diags *d = ub_diags_new();
    ub_buf_init(b);
    CU_ASSERT_EQUAL_FATAL(ub_usdb_write(L, level, b, d), 0);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_diags_free(d);
}

/* --- tests ---------------------------------------------------------------- */

static void test_roundtrip_every_encoding(void)
{
    ub_layer *L = rich_layer();
    for (int level = 0; level <= 19; level += 19) {
        ub_buf b;
        write(L, level, &b);
        ub_diags *d = ub_diags_new();
        ub_layer *R = ub_usdb_load(T, "rich.usdb", b.data, b.len, d);
        CU_ASSERT_PTR_NOT_NULL(R);
        CU_ASSERT_EQUAL(ub_diags_count(d), 0);
        if (R)
            CU_ASSERT(layer_same(L, R));
        /* and the reread layer writes the same bytes again */
        ub_buf b2;
        if (R) {
            write(R, level, &b2);
            CU_ASSERT(b2.len == b.len && !memcmp(b.data, b2.data, b.len));
            ub_buf_free(&b2);
        }
        ub_layer_free(R);
        ub_diags_free(d);
        ub_buf_free(&b);
    }
    ub_layer_free(L);
}

static void test_deterministic_and_levels(void)
{
    ub_layer *L = rich_layer();
    ub_buf a, b, s;
    write(L, 9, &a);
    write(L, 9, &b);
    write(L, 0, &s);
    CU_ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    CU_ASSERT(a.len < s.len); /* compression does something */
    CU_ASSERT(ub_usdb_sniff(a.data, a.len));
    CU_ASSERT(!ub_usdb_sniff("#usda 1.0\n", 10));
    ub_buf_free(&a);
    ub_buf_free(&b);
    ub_buf_free(&s);
    ub_layer_free(L);
}

static ub_value str1(ub_arena *a, ub_type_id id, const char *text)
{
    ub_value v = ub_value_new(a, TY(id), 1, false);
    ((const char **)ub_value_data(&v))[0] = S(text);
    return v;
}

/* A prim-heavy layer: unique names and docs, values that repeat (kinds,
 * translations, token samples) and values that do not. */
static ub_layer *many_prims(int n)
{
    ub_layer *L = ub_layer_new(T, "many.usda");
    ub_arena *a = L->arena;
    static const char *kinds[] = {"component", "group", "assembly"};
    for (int i = 0; i < n; i++) {
        char name[32], doc[64];
        snprintf(name, sizeof name, "prop_%06d", i);
        snprintf(doc, sizeof doc, "prop %d, placed by layout", i);
        ub_prim *p = ub_prim_new(L, L->root, S(name), UB_DEF, (ub_sloc){0});
        p->type_name = S("Xform");
        ub_fields_set(a, &p->meta, S("doc"), str1(a, UB_TY_STRING, doc),
                      (ub_sloc){0});
        ub_fields_set(a, &p->meta, S("kind"),
                      str1(a, UB_TY_TOKEN, kinds[i % 3]), (ub_sloc){0});
        attr(L, p, "radius", UB_TY_FLOAT, false)->default_value =
            scalar(a, UB_TY_FLOAT, i * 0.25);
        attr(L, p, "xformOp:translate", UB_TY_DOUBLE3, false)
            ->default_value = scalar(a, UB_TY_DOUBLE3, i % 97);
        ub_prop *v = attr(L, p, "visibility", UB_TY_TOKEN, false);
        ub_samples_set(a, &ub_prop_ext_get(a, v)->samples, 1,
                       str1(a, UB_TY_TOKEN, "inherited"));
        ub_samples_set(
            a, &ub_prop_ext_get(a, v)->samples, 2,
            str1(a, UB_TY_TOKEN, i % 2 ? "invisible" : kinds[i % 3]));
    }
    return L;
}

/* The default level decides by size (19 for a small layer, 9 for a
 * middling one, 3 for a big one); a big layer's records are compressed
 * on a second thread while the rest is still being encoded, before the
 * writer knows the final size.  Either way the bytes are those of the
 * level chosen, asked for explicitly, and read back to the same layer. */
static void test_auto_level_same_bytes(void)
{
    ub_layer *small = many_prims(200), *middling = many_prims(20000),
             *big = many_prims(120000);
    struct {
        ub_layer *L;
        int level;
    } c[] = {{small, 19}, {middling, 9}, {big, 3}};
    for (int k = 0; k < 3; k++) {
        ub_buf dflt, again, expl;
        write(c[k].L, UB_USDB_LEVEL_DEFAULT, &dflt);
        write(c[k].L, UB_USDB_LEVEL_DEFAULT, &again);
        write(c[k].L, c[k].level, &expl);
        CU_ASSERT(dflt.len == expl.len &&
                  memcmp(dflt.data, expl.data, dflt.len) == 0);
        CU_ASSERT(dflt.len == again.len &&
                  memcmp(dflt.data, again.data, dflt.len) == 0);
        ub_diags *d = ub_diags_new();
        ub_layer *R = ub_usdb_load(T, "x.usdb", dflt.data, dflt.len, d);
        CU_ASSERT_PTR_NOT_NULL(R);
        if (R)
            CU_ASSERT(layer_same(c[k].L, R));
        ub_layer_free(R);
        ub_diags_free(d);
        ub_buf_free(&dflt);
        ub_buf_free(&again);
        ub_buf_free(&expl);
    }
    /* the middling layer is not written at level 19: a different choice */
    ub_buf dflt, l19;
    write(middling, UB_USDB_LEVEL_DEFAULT, &dflt);
    write(middling, 19, &l19);
    CU_ASSERT(dflt.len != l19.len ||
              memcmp(dflt.data, l19.data, dflt.len) != 0);
    ub_buf_free(&dflt);
    ub_buf_free(&l19);
    ub_layer_free(small);
    ub_layer_free(middling);
    ub_layer_free(big);
}

/* Equal arrays and equal sample series are stored once: a layer with the
 * same big array on 20 prims is hardly bigger than with one. */
static void test_dedup(void)
{
    size_t sizes[2];
    for (int k = 0; k < 2; k++) {
        ub_layer *L = ub_layer_new(T, "d.usda");
        int n = k ? 20 : 1;
        for (int i = 0; i < n; i++) {
            char name[16];
            snprintf(name, sizeof name, "m%d", i);
            ub_prim *p = ub_prim_new(L, L->root, S(name), UB_DEF,
                                     (ub_sloc){0});
            attr(L, p, "pts", UB_TY_POINT3F, true)->default_value =
                arr_f(L->arena, UB_TY_POINT3F, 20000, g_rand, true);
            ub_prop *s = attr(L, p, "s", UB_TY_FLOAT3, true);
            for (int t = 0; t < 3; t++)
                ub_samples_set(
                    L->arena, &ub_prop_ext_get(L->arena, s)->samples, t,
                    arr_f(L->arena, UB_TY_FLOAT3, 5000, g_rand, true));
        }
        ub_buf b;
        write(L, 0, &b);
        sizes[k] = b.len;
        ub_buf_free(&b);
        ub_layer_free(L);
    }
    CU_ASSERT(sizes[0] > 20000 * 12);
    CU_ASSERT(sizes[1] < sizes[0] + 20 * 200);
}

/* A layer whose records fill FAR chunks (the writer holds the records
 * of 16 to 32 compressed ones) between uses of one big array and of one
 * short one: "first"'s, then those of `repeats` more prims ("again0",
 * "again1"). */
#define FAR 48
static ub_layer *far_apart(int repeats)
{
    ub_layer *L = ub_layer_new(T, "far.usda");
    for (int i = 0; i <= FAR + repeats; i++) {
        char name[16];
        if (i == 0)
            snprintf(name, sizeof name, "first");
        else if (i <= FAR)
            snprintf(name, sizeof name, "m%d", i);
        else
            snprintf(name, sizeof name, "again%d", i - FAR - 1);
        ub_prim *p = ub_prim_new(L, L->root, S(name), UB_DEF, (ub_sloc){0});
        /* (over a chunk's 256 KiB: a chunk each) */
        ub_value v = arr_f(L->arena, UB_TY_FLOAT3, 22000, g_rand, true);
        if (i > 0 && i <= FAR) /* (each its own) */
            ub_value_set_double(&v, 0, 0, i);
        attr(L, p, "pts", UB_TY_FLOAT3, true)->default_value = v;
        if (i == 0 || i > FAR)
            attr(L, p, "few", UB_TY_FLOAT3, true)->default_value =
                arr_f(L->arena, UB_TY_FLOAT3, 2, g_dec, true);
    }
    return L;
}

/* A chunk's records leave memory once it is compressed (or stored): a
 * record equal to one of them is still stored once, read back from its
 * chunk the first time and from the copy then kept the second -- on one
 * CPU, where the chunks before it are always compressed when it comes,
 * and on two, the same bytes -- and the file reads back as the layer. */
static void test_dropped_records_still_shared(void)
{
    static const int levels[] = {0, 3};
    for (int k = 0; k < 2; k++) {
        ub_layer *once = far_apart(0), *twice = far_apart(1),
                 *thrice = far_apart(2);
        ub_buf a, b, b3, c;
        cpu_set_t was;
        pin_one(&was);
        write(once, levels[k], &a);
        write(twice, levels[k], &b);
        write(thrice, levels[k], &b3);
        CU_ASSERT(sched_setaffinity(0, sizeof was, &was) == 0);
        write(twice, levels[k], &c);
        CU_ASSERT(a.len > FAR * 264000 / (levels[k] ? 2 : 1));
        /* each "again" prim adds its names and references, 20 to 40
         * bytes; no record (the short one alone would add 40) */
        CU_ASSERT(b.len < a.len + 48);
        CU_ASSERT(b3.len < b.len + 48);
        CU_ASSERT(b.len == c.len && memcmp(b.data, c.data, b.len) == 0);
        ub_diags *d = ub_diags_new();
        ub_layer *R = ub_usdb_load(T, "far.usdb", b3.data, b3.len, d);
        CU_ASSERT_PTR_NOT_NULL(R);
        if (R)
            CU_ASSERT(layer_same(thrice, R));
        ub_layer_free(R);
        ub_diags_free(d);
        ub_layer_free(thrice);
        ub_buf_free(&b3);
        ub_buf_free(&a);
        ub_buf_free(&b);
        ub_buf_free(&c);
        ub_layer_free(once);
        ub_layer_free(twice);
    }
}

/* Decimal-looking floats are stored as scaled integers: smaller than
 * their raw bits, and still bit-exact (checked by the round trip). */
static void test_decimal_columns_compress(void)
{
    size_t sizes[2];
    for (int k = 0; k < 2; k++) {
        ub_layer *L = ub_layer_new(T, "c.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("m"), UB_DEF, (ub_sloc){0});
        attr(L, p, "n", UB_TY_NORMAL3F, true)->default_value =
            arr_f(L->arena, UB_TY_NORMAL3F, 50000, k ? g_dec : g_rand, true);
        ub_buf b;
        write(L, 3, &b);
        sizes[k] = b.len;
        ub_diags *d = ub_diags_new();
        ub_layer *R = ub_usdb_load(T, "c.usdb", b.data, b.len, d);
        CU_ASSERT(R && layer_same(L, R));
        ub_layer_free(R);
        ub_diags_free(d);
        ub_buf_free(&b);
        ub_layer_free(L);
    }
    CU_ASSERT(sizes[1] * 3 < sizes[0]);
}

/* A file of animated values for the runtime API. */
static ub_layer *anim_layer(void)
{
    ub_layer *L = ub_layer_new(T, "anim.usda");
    ub_arena *a = L->arena;
    ub_prim *p = ub_prim_new(L, L->root, S("A"), UB_DEF, (ub_sloc){0});
    ub_prim *b = ub_prim_new(L, p, S("B"), UB_DEF, (ub_sloc){0});
    ub_prop *f = attr(L, b, "f", UB_TY_FLOAT, false);
    f->default_value = scalar(a, UB_TY_FLOAT, 100);
    ub_samples_set(a, &ub_prop_ext_get(a, f)->samples, 10,
                   scalar(a, UB_TY_FLOAT, 1));
    ub_samples_set(a, &ub_prop_ext_get(a, f)->samples, 20,
                   scalar(a, UB_TY_FLOAT, 3));
    ub_samples_set(a, &ub_prop_ext_get(a, f)->samples, 30, ub_value_block());
    ub_samples_set(a, &ub_prop_ext_get(a, f)->samples, 40,
                   scalar(a, UB_TY_FLOAT, 5));
    ub_samples_set(a, &ub_prop_ext_get(a, f)->samples, 50,
                   scalar(a, UB_TY_FLOAT, 7));
    ub_prop *i = attr(L, b, "i", UB_TY_INT, false);
    ub_samples_set(a, &ub_prop_ext_get(a, i)->samples, 0,
                   scalar(a, UB_TY_INT, 1));
    ub_samples_set(a, &ub_prop_ext_get(a, i)->samples, 10,
                   scalar(a, UB_TY_INT, 9));
    ub_prop *v = attr(L, b, "v", UB_TY_DOUBLE3, false);
    ub_samples_set(a, &ub_prop_ext_get(a, v)->samples, 0,
                   scalar(a, UB_TY_DOUBLE3, 0));
    ub_samples_set(a, &ub_prop_ext_get(a, v)->samples, 4,
                   scalar(a, UB_TY_DOUBLE3, 8));
    ub_prop *q = attr(L, b, "q", UB_TY_QUATD, false);
    ub_value q0 = ub_value_new(a, TY(UB_TY_QUATD), 1, false),
             q1 = ub_value_new(a, TY(UB_TY_QUATD), 1, false);
    double *d0 = ub_value_data(&q0), *d1 = ub_value_data(&q1);
    d0[0] = 1; /* identity */
    d1[0] = cos(M_PI / 4);
    d1[3] = sin(M_PI / 4); /* 90 degrees about z */
    ub_samples_set(a, &ub_prop_ext_get(a, q)->samples, 0, q0);
    ub_samples_set(a, &ub_prop_ext_get(a, q)->samples, 1, q1);
    ub_prop *pa = attr(L, b, "pa", UB_TY_POINT3F, true);
    ub_samples_set(a, &ub_prop_ext_get(a, pa)->samples, 0,
                   arr_f(a, UB_TY_POINT3F, 4, g_dec, true));
    ub_value up = arr_f(a, UB_TY_POINT3F, 4, g_dec, true);
    for (uint32_t k = 0; k < 12; k++)
        ((float *)ub_value_data(&up))[k] += 1.0f;
    ub_samples_set(a, &ub_prop_ext_get(a, pa)->samples, 2, up);
    ub_samples_set(a, &ub_prop_ext_get(a, pa)->samples, 4,
                   arr_f(a, UB_TY_POINT3F, 3, g_dec, true));
    ub_prop *h = attr(L, b, "h", UB_TY_HALF, false);
    ub_samples_set(a, &ub_prop_ext_get(a, h)->samples, 0,
                   scalar(a, UB_TY_HALF, 0));
    ub_samples_set(a, &ub_prop_ext_get(a, h)->samples, 1,
                   scalar(a, UB_TY_HALF, 1));
    ub_prop *s = attr(L, b, "s", UB_TY_STRING, false);
    ub_value s0 = strs(a, UB_TY_STRING, 1, "lo"),
             s1 = strs(a, UB_TY_STRING, 1, "hi");
    s0.is_array = s1.is_array = false;
    ((const char **)ub_value_data(&s1))[0] = S("hi");
    ub_samples_set(a, &ub_prop_ext_get(a, s)->samples, 0, s0);
    ub_samples_set(a, &ub_prop_ext_get(a, s)->samples, 1, s1);
    attr(L, b, "d", UB_TY_DOUBLE, false)->default_value =
        scalar(a, UB_TY_DOUBLE, 42);
    attr(L, b, "none", UB_TY_DOUBLE, false);
    return L;
}

static ub_usdb *open_anim(ub_buf *b, ub_diags *d)
{
    ub_layer *L = anim_layer();
    write(L, 9, b);
    ub_layer_free(L);
    return ub_usdb_open_memory(b->data, b->len, "anim.usdb", T, d);
}

static double at(ub_usdb *f, uint32_t prop, double t, ub_arena *a,
                 ub_vkind *kind)
{
    ub_value v;
    CU_ASSERT_EQUAL(ub_usdb_value_at(f, prop, t, a, &v), 0);
    *kind = (ub_vkind)v.kind;
    return v.kind == UB_V_DATA ? ub_value_get_double(&v, 0, 0) : NAN;
}

static void test_runtime_tree(void)
{
    ub_buf b;
    ub_diags *d = ub_diags_new();
    ub_usdb *f = open_anim(&b, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    uint32_t p = ub_usdb_find_prim(f, "/A/B");
    CU_ASSERT_NOT_EQUAL_FATAL(p, UB_USDB_NONE);
    CU_ASSERT_STRING_EQUAL(ub_usdb_prim_name(f, p), "B");
    CU_ASSERT_EQUAL(ub_usdb_prim_specifier(f, p), UB_DEF);
    CU_ASSERT_EQUAL(ub_usdb_find_prim(f, "/A/C"), UB_USDB_NONE);
    CU_ASSERT_EQUAL(ub_usdb_find_prim(f, "/"), 0);
    uint32_t parent = ub_usdb_prim_parent(f, p);
    CU_ASSERT_STRING_EQUAL(ub_usdb_prim_name(f, parent), "A");
    CU_ASSERT_EQUAL(ub_usdb_prim_child(f, parent, 0), p);
    CU_ASSERT_EQUAL(ub_usdb_prim_prop_count(f, p), 9);
    uint32_t q = ub_usdb_find_prop(f, p, "pa");
    CU_ASSERT_EQUAL(ub_usdb_prop_type(f, q), TY(UB_TY_POINT3F));
    CU_ASSERT(ub_usdb_prop_is_array(f, q));
    CU_ASSERT_EQUAL(ub_usdb_find_prop(f, p, "nope"), UB_USDB_NONE);
    ub_arena *a = ub_arena_new();
    const double *times;
    uint32_t n;
    CU_ASSERT_EQUAL(ub_usdb_sample_times(f, ub_usdb_find_prop(f, p, "f"), a,
                                         &times, &n),
                    0);
    CU_ASSERT_EQUAL_FATAL(n, 5);
    CU_ASSERT_EQUAL(times[0], 10);
    CU_ASSERT_EQUAL(times[4], 50);
    ub_value v;
    CU_ASSERT_EQUAL(ub_usdb_prop_default(f, ub_usdb_find_prop(f, p, "d"), a,
                                         &v),
                    0);
    CU_ASSERT(v.kind == UB_V_DATA && *(double *)ub_value_data(&v) == 42);
    /* bad handles are refused, not crashed on */
    CU_ASSERT_PTR_NULL(ub_usdb_prim_name(f, 99999));
    CU_ASSERT_EQUAL(ub_usdb_prop_default(f, 99999, a, &v), -1);
    ub_arena_free(a);
    ub_usdb_close(f);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_diags_free(d);
    ub_buf_free(&b);
}

static void test_value_at(void)
{
    ub_buf b;
    ub_diags *d = ub_diags_new();
    ub_usdb *f = open_anim(&b, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ub_arena *a = ub_arena_new();
    uint32_t p = ub_usdb_find_prim(f, "/A/B");
    uint32_t pf = ub_usdb_find_prop(f, p, "f");
    ub_vkind k;
    /* before the first sample, and after the last: held end values */
    CU_ASSERT_EQUAL(at(f, pf, -1e9, a, &k), 1);
    CU_ASSERT_EQUAL(at(f, pf, 10, a, &k), 1);
    CU_ASSERT_EQUAL(at(f, pf, 1e9, a, &k), 7);
    /* between: linear */
    CU_ASSERT_DOUBLE_EQUAL(at(f, pf, 15, a, &k), 2, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(at(f, pf, 12.5, a, &k), 1.5, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(at(f, pf, 45, a, &k), 6, 1e-6);
    /* the upper sample is a block: hold the lower */
    CU_ASSERT_EQUAL(at(f, pf, 25, a, &k), 3);
    CU_ASSERT_EQUAL(k, UB_V_DATA);
    /* the lower sample is a block: no value */
    at(f, pf, 30, a, &k);
    CU_ASSERT_EQUAL(k, UB_V_BLOCK);
    at(f, pf, 35, a, &k);
    CU_ASSERT_EQUAL(k, UB_V_BLOCK);
    /* samples within 1e-6 of a time count as that time */
    CU_ASSERT_EQUAL(at(f, pf, 20 + 1e-9, a, &k), 3);
    /* held types */
    uint32_t pi = ub_usdb_find_prop(f, p, "i");
    CU_ASSERT_EQUAL(at(f, pi, 9.99, a, &k), 1);
    CU_ASSERT_EQUAL(at(f, pi, 10, a, &k), 9);
    ub_value v;
    CU_ASSERT_EQUAL(ub_usdb_value_at(f, ub_usdb_find_prop(f, p, "s"), 0.9,
                                     a, &v),
                    0);
    CU_ASSERT(v.kind == UB_V_DATA && ub_value_str(&v, 0) == S("lo0"));
    /* vectors: every component */
    CU_ASSERT_EQUAL(ub_usdb_value_at(f, ub_usdb_find_prop(f, p, "v"), 1, a,
                                     &v),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&v, 0, 0), 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&v, 0, 2), 4, 1e-12);
    /* quaternions slerp: halfway from identity to 90 degrees about z is
     * 45 degrees about z */
    CU_ASSERT_EQUAL(ub_usdb_value_at(f, ub_usdb_find_prop(f, p, "q"), 0.5,
                                     a, &v),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&v, 0, 0), cos(M_PI / 8),
                           1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&v, 0, 3), sin(M_PI / 8),
                           1e-12);
    /* half */
    CU_ASSERT_DOUBLE_EQUAL(at(f, ub_usdb_find_prop(f, p, "h"), 0.25, a, &k),
                           0.25, 1e-3);
    /* arrays: element-wise; different lengths hold the lower */
    uint32_t pa = ub_usdb_find_prop(f, p, "pa");
    CU_ASSERT_EQUAL(ub_usdb_value_at(f, pa, 1, a, &v), 0);
    CU_ASSERT_EQUAL(v.count, 4);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&v, 3, 2),
                           g_dec(3, 2) + 0.5, 1e-6);
    CU_ASSERT_EQUAL(ub_usdb_value_at(f, pa, 3, a, &v), 0);
    CU_ASSERT_EQUAL(v.count, 4);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&v, 0, 0), g_dec(0, 0) + 1,
                           1e-6);
    CU_ASSERT_EQUAL(ub_usdb_value_at(f, pa, 5, a, &v), 0);
    CU_ASSERT_EQUAL(v.count, 3);
    /* no samples: the default, or nothing */
    CU_ASSERT_EQUAL(at(f, ub_usdb_find_prop(f, p, "d"), 3, a, &k), 42);
    at(f, ub_usdb_find_prop(f, p, "none"), 3, a, &k);
    CU_ASSERT_EQUAL(k, UB_V_EMPTY);
    ub_arena_free(a);
    ub_usdb_close(f);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_diags_free(d);
    ub_buf_free(&b);
}

static void test_samples_value_at_memory(void)
{
    ub_layer *L = anim_layer();
    ub_prim *b = L->root->children.v[0]->children.v[0];
    const ub_samples *s = ub_prop_samples(ub_prop_find(L, b, S("f")));
    ub_value v;
    CU_ASSERT_EQUAL(ub_samples_value_at(s, 15, false, L->arena, &v), 0);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&v, 0, 0), 2, 1e-6);
    CU_ASSERT_EQUAL(ub_samples_value_at(s, 15, true, L->arena, &v), 0);
    CU_ASSERT_EQUAL(ub_value_get_double(&v, 0, 0), 1);
    ub_layer_free(L);

    /* A sample at NaN is at no time, one at inf or -inf at no frame:
     * after the last sample the last is held, not interpolated towards
     * them (it was NaN), and before the first the first. */
    const char *text = "#usda 1.0\ndef \"P\"\n{\n"
                       "    double a.timeSamples = {\n        -inf: 9,\n"
                       "        0: 1,\n        5: 2,\n        inf: 8,\n"
                       "        nan: 7,\n    }\n}\n";
    ub_diags *d = ub_diags_new();
    L = ub_parse_usda(T, "t.usda", text, strlen(text), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    s = ub_prop_samples(ub_prop_find(L, L->root->children.v[0], S("a")));
    CU_ASSERT_EQUAL_FATAL(s->n, 5);
    CU_ASSERT_EQUAL(ub_samples_value_at(s, 9, false, L->arena, &v), 0);
    CU_ASSERT_EQUAL(ub_value_get_double(&v, 0, 0), 2);
    CU_ASSERT_EQUAL(ub_samples_value_at(s, -3, false, L->arena, &v), 0);
    CU_ASSERT_EQUAL(ub_value_get_double(&v, 0, 0), 1);
    CU_ASSERT_EQUAL(ub_samples_value_at(s, 2.5, false, L->arena, &v), 0);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&v, 0, 0), 1.5, 1e-12);
    ub_layer_free(L);
    ub_diags_free(d);
}

/* Reading one small attribute of a big file decompresses a small part. */
static void test_lazy(void)
{
    ub_layer *L = ub_layer_new(T, "big.usda");
    for (int i = 0; i < 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        ub_prim *p = ub_prim_new(L, L->root, S(name), UB_DEF, (ub_sloc){0});
        attr(L, p, "pts", UB_TY_POINT3F, true)->default_value =
            arr_f(L->arena, UB_TY_POINT3F, 100000 + i, g_rand, true);
        attr(L, p, "r", UB_TY_FLOAT, false)->default_value =
            scalar(L->arena, UB_TY_FLOAT, i);
    }
    ub_buf b;
    write(L, 3, &b);
    ub_layer_free(L);
    ub_diags *d = ub_diags_new();
    ub_usdb *f = ub_usdb_open_memory(b.data, b.len, "big.usdb", T, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ub_arena *a = ub_arena_new();
    ub_value v;
    uint32_t p = ub_usdb_find_prim(f, "/m7");
    CU_ASSERT_EQUAL(ub_usdb_prop_default(f, ub_usdb_find_prop(f, p, "r"), a,
                                         &v),
                    0);
    CU_ASSERT_EQUAL(ub_value_get_double(&v, 0, 0), 7);
    uint64_t touched = ub_usdb_bytes_decompressed(f),
             total = ub_usdb_bytes_raw_total(f);
    CU_ASSERT(total > 12 * 1200000);
    CU_ASSERT(touched < total / 8);
    ub_arena_free(a);
    ub_usdb_close(f);
    ub_diags_free(d);
    ub_buf_free(&b);
}

static bool has_error(ub_diags *d, const char *needle)
{
    for (size_t i = 0; i < ub_diags_count(d); i++)
        if (strstr(ub_diags_at(d, i)->message, needle))
            return true;
    return false;
}

/* L written as a .usdb reads back as damage, with an error saying want
 * (NULL: L reads back as itself, without a diagnostic); L is freed. */
static void written_reads(ub_layer *L, const char *want)
{
    ub_buf b;
    write(L, 0, &b);
    ub_diags *dg = ub_diags_new();
    ub_layer *R = ub_usdb_load(T, "w.usdb", b.data, b.len, dg);
    if (want) {
        CU_ASSERT_PTR_NULL(R);
        if (!has_error(dg, want))
            fprintf(stderr, "\nwanted: %s\n", want);
        CU_ASSERT(has_error(dg, want));
    } else {
        CU_ASSERT_PTR_NOT_NULL(R);
        CU_ASSERT_EQUAL(ub_diags_count(dg), 0);
        if (R)
            CU_ASSERT(layer_same(L, R));
    }
    ub_layer_free(R);
    ub_diags_free(dg);
    ub_buf_free(&b);
    ub_layer_free(L);
}

static void test_damage_named(void)
{
    ub_layer *L = rich_layer();
    ub_buf b;
    write(L, 3, &b);
    ub_layer_free(L);
    /* every truncation fails cleanly */
    for (size_t cut = 0; cut < b.len; cut += 1 + cut / 8) {
        ub_diags *d = ub_diags_new();
        ub_layer *R = ub_usdb_load(T, "t.usdb", b.data, cut, d);
        CU_ASSERT_PTR_NULL(R);
        CU_ASSERT(ub_diags_errors(d) >= 1);
        ub_layer_free(R);
        ub_diags_free(d);
    }
    /* a flipped byte in the first section names it */
    unsigned char *x = malloc(b.len);
    memcpy(x, b.data, b.len);
    x[20] ^= 4;
    ub_diags *d = ub_diags_new();
    CU_ASSERT_PTR_NULL(ub_usdb_load(T, "f.usdb", x, b.len, d));
    CU_ASSERT(has_error(d, "section SKEL: checksum mismatch"));
    ub_diags_free(d);
    memcpy(x, b.data, b.len);
    x[b.len - 24] ^= 1; /* in the index, just before the trailer */
    d = ub_diags_new();
    CU_ASSERT_PTR_NULL(ub_usdb_load(T, "f.usdb", x, b.len, d));
    CU_ASSERT(has_error(d, "index: checksum mismatch"));
    ub_diags_free(d);
    free(x);
    ub_buf_free(&b);
}

/* A LEB128 varint at *p (advanced). */
static uint64_t vu_at(const unsigned char **p)
{
    uint64_t v = 0;
    for (unsigned sh = 0;; sh += 7) {
        unsigned char c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80))
            return v;
    }
}

/* An attribute whose value type is given but whose type name is not
 * (the type name's str? set to none) is damage: the reader names the
 * file, the section and the property, on load and on lazy open alike.
 * The file is written stored (level 0), the byte changed, and the
 * section's and the index's checksums made right again, so only the
 * tree is wrong. */
static void test_type_without_type_name(void)
{
    /* the prim's type name is "float" too, so the attribute's type name
     * and type are both one-byte references to that earlier string, and
     * the attribute is the end of the tree: type name, type, default
     * (a fresh record: 1), then eight zeros (no series, connections,
     * targets, default target, fields; no children, variant sets, root
     * variant sets) */
    const char *text = "#usda 1.0\n\ndef float \"P\"\n{\n"
                       "    float a = 1\n}\n";
    ub_diags *d = ub_diags_new();
    ub_layer *L = ub_parse_usda(T, "t.usda", text, strlen(text), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    ub_buf b;
    write(L, 0, &b);
    ub_layer_free(L);
    unsigned char *x = (unsigned char *)b.data;
    uint32_t ilen;
    memcpy(&ilen, x + b.len - 20, 4);
    unsigned char *index = x + b.len - 20 - ilen;
    const unsigned char *q = index;
    CU_ASSERT_FATAL(vu_at(&q) >= 1);
    CU_ASSERT_FATAL(memcmp(q, "SKEL", 4) == 0 && q[4] == 0); /* stored */
    q += 5;
    uint64_t skel_len = vu_at(&q);
    vu_at(&q);
    unsigned char *sum = (unsigned char *)q;
    unsigned char *end = x + 12 + skel_len; /* SKEL is first */
    static const unsigned char tail[8] = {0};
    CU_ASSERT_FATAL(memcmp(end - 8, tail, 8) == 0 && end[-9] == 1);
    CU_ASSERT_FATAL(end[-11] == end[-10] && end[-11] >= 2 &&
                    !(end[-11] & 1) && !(end[-11] & 0x80));
    end[-11] = 0; /* type name: none */
    uint64_t h = XXH3_64bits(x + 12, skel_len);
    memcpy(sum, &h, 8);
    h = XXH3_64bits(index, ilen);
    memcpy(x + b.len - 16, &h, 8);
    ub_diags_free(d);
    d = ub_diags_new();
    CU_ASSERT_PTR_NULL(ub_usdb_load(T, "bad.usdb", x, b.len, d));
    CU_ASSERT(has_error(d, "section SKEL (tree): property 'a' has value "
                           "type 'float' but no type name"));
    CU_ASSERT(ub_diags_count(d) >= 1 &&
              strcmp(ub_diags_at(d, 0)->loc.file, "bad.usdb") == 0);
    ub_diags_free(d);
    d = ub_diags_new();
    CU_ASSERT_PTR_NULL(ub_usdb_open_memory(x, b.len, "bad.usdb", T, d));
    CU_ASSERT(has_error(d, "property 'a' has value type 'float' but no "
                           "type name"));
    ub_diags_free(d);
    ub_buf_free(&b);
}

/* Names the path grammar refuses are damage when read: the model's API
 * takes any name, and so does the writer, but text printed from such a
 * file would not parse. */
static void test_names_checked(void)
{
    static const struct {
        const char *prim, *prop, *vset, *variant, *want;
    } cases[] = {
        {"a/b", "x", "v", "red", "'a/b' is not a valid prim name"},
        {"A", "1x", "v", "red", "'1x' is not a valid property name"},
        {"A", "x:", "v", "red", "'x:' is not a valid property name"},
        {"A", "x", "v", "r:d", "'r:d' is not a valid variant name"},
        {"A", "x", "v", "", "'' is not a valid variant name"},
        {"A", "x", "", "red", NULL}, /* "" is a variant set's name */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ub_layer *L = ub_layer_new(T, "names.usda");
        ub_prim *p =
            ub_prim_new(L, L->root, S(cases[i].prim), UB_DEF, (ub_sloc){0});
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(
            attr(L, p, cases[i].prop, UB_TY_INT, false));
        ub_variant_set *vs =
            ub_variant_set_get(L, p, S(cases[i].vset), (ub_sloc){0});
        CU_ASSERT_PTR_NOT_NULL_FATAL(vs);
        CU_ASSERT_PTR_NOT_NULL_FATAL(
            ub_variant_new(L, p, vs, S(cases[i].variant), (ub_sloc){0}));
        ub_buf b;
        write(L, 0, &b);
        ub_layer_free(L);
        ub_diags *d = ub_diags_new();
        ub_layer *back = ub_usdb_load(T, "names.usdb", b.data, b.len, d);
        if (cases[i].want) {
            CU_ASSERT_PTR_NULL(back);
            CU_ASSERT(has_error(d, cases[i].want));
        } else {
            CU_ASSERT_PTR_NOT_NULL(back);
            CU_ASSERT_EQUAL(ub_diags_count(d), 0);
        }
        ub_layer_free(back);
        ub_diags_free(d);
        ub_buf_free(&b);
    }
}

/* Asset paths as every reader holds them: a .usdb with one that is not
 * UTF-8, or holds a control character, is damage (the model's API and the
 * writer take any). */
static void test_assets_checked(void)
{
    for (int k = 0; k < 3; k++) {
        ub_layer *L = ub_layer_new(T, "assets.usda");
        ub_arena *a = L->arena;
        if (k == 0)
            ub_layer_add_sublayer(L, S("./a\x01.usda"), (ub_sloc){0});
        ub_prim *p = ub_prim_new(L, L->root, S("A"), UB_DEF, (ub_sloc){0});
        ub_prop *q = ub_prop_new(L, p, S("x"), UB_ATTR, (ub_sloc){0});
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        /* k == 1: an asset[] with a Latin-1 byte; k == 2: all is well */
        q->default_value = strs(a, UB_TY_ASSET, 2, k == 1 ? "caf\xe9" : "ok");
        q->type_id = UB_TY_ASSET;
        q->is_array = true;
        ub_buf b;
        write(L, 0, &b);
        ub_layer_free(L);
        ub_diags *d = ub_diags_new();
        ub_layer *back = ub_usdb_load(T, "assets.usdb", b.data, b.len, d);
        if (k < 2) {
            CU_ASSERT_PTR_NULL(back);
            CU_ASSERT(has_error(d, k == 0 ? "sublayer asset path './a"
                                          : "asset path 'caf"));
            CU_ASSERT(has_error(d, k == 0 ? "control characters"
                                          : "must be UTF-8"));
        } else {
            CU_ASSERT_PTR_NOT_NULL(back);
        }
        ub_layer_free(back);
        ub_diags_free(d);
        ub_buf_free(&b);
    }
}

/* The .usdb writer under kept_check (level 3: any level would do). */
static int write_kept(const ub_layer *l, ub_samples_fn fn, void *ctx,
                      ub_buf *out, ub_diags *d)
{
    return ub_usdb_write_with(l, 3, fn, ctx, out, d);
}

static void test_samples_kept(void)
{
    kept_check(T, write_kept);
}

/* An untyped atom, string, asset or path is its text: one without it
 * (the API can make one; a file whose checksums hold never has one) is
 * damage when read, named, not a null pointer for the text writer (found
 * by fuzz_usdb, whose build skips checksums). */
static void test_untyped_without_text(void)
{
    static const ub_untyped_kind kinds[] = {UB_U_ATOM, UB_U_STRING,
                                            UB_U_ASSET, UB_U_PATH};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        ub_layer *L = ub_layer_new(T, "u.usda");
        ub_untyped *u = ub_arena_zalloc(L->arena, sizeof *u);
        u->kind = kinds[k];
        ub_fields_set(L->arena, &L->meta, S("odd"),
                      (ub_value){.kind = UB_V_UNTYPED, .u.untyped = u},
                      (ub_sloc){0});
        ub_buf b;
        write(L, 0, &b);
        ub_layer_free(L);
        ub_diags *d = ub_diags_new();
        CU_ASSERT_PTR_NULL(ub_usdb_load(T, "u.usdb", b.data, b.len, d));
        CU_ASSERT(has_error(d, "an untyped value of kind"));
        CU_ASSERT(has_error(d, "without its text"));
        ub_diags_free(d);
        ub_buf_free(&b);
    }
}

/* An untyped node of a kind, text and parts (each a node, up to 3). */
static ub_untyped *un(ub_arena *a, ub_untyped_kind kind, const char *text,
                      uint32_t n, const ub_untyped *p0, const ub_untyped *p1,
                      const ub_untyped *p2)
{
    ub_untyped *u = ub_arena_zalloc(a, sizeof *u);
    const ub_untyped *parts[3] = {p0, p1, p2};
    *u = (ub_untyped){.kind = kind, .text = text ? S(text) : NULL, .n = n};
    if (n)
        u->child = ub_arena_zalloc(a, n * sizeof *u->child);
    for (uint32_t i = 0; i < n; i++)
        u->child[i] = *parts[i];
    return u;
}

/* An untyped value is held to what the text can say of one (the usda
 * reader builds nothing else): else it printed as text no reader takes
 * (`[(</p>)]`, `()`) or that reads as something else.  What it can say
 * reads back, and its text reads. */
static void test_untyped_shapes(void)
{
    const ub_untyped_kind A = UB_U_ATOM, P = UB_U_PATH, T_ = UB_U_TUPLE,
                          L_ = UB_U_LIST, AS = UB_U_ASSET;
    for (int k = 0; k < 10; k++) {
        ub_layer *L = ub_layer_new(T, "u.usda");
        ub_arena *a = L->arena;
        ub_untyped *one = un(a, A, "1", 0, NULL, NULL, NULL);
        ub_untyped *v = NULL;
        const char *want = NULL;
        switch (k) {
        case 0:
            v = un(a, L_, NULL, 1, un(a, P, "/p", 0, NULL, NULL, NULL), NULL,
                   NULL);
            want = "an untyped value holds a path inside a list or tuple";
            break;
        case 1:
            v = un(a, T_, NULL, 0, NULL, NULL, NULL);
            want = "an untyped value holds an empty tuple";
            break;
        case 2:
            v = un(a, T_, NULL, 1, un(a, L_, NULL, 1, one, NULL, NULL), NULL,
                   NULL);
            want = "an untyped value holds a list inside a tuple";
            break;
        case 3:
            v = un(a, L_, NULL, 1, un(a, L_, NULL, 0, NULL, NULL, NULL),
                   NULL, NULL);
            want = "an untyped value holds an empty list inside a list";
            break;
        case 4:
            v = un(a, AS, "a\x01b", 0, NULL, NULL, NULL);
            want = "an untyped value holds an asset path the text cannot "
                   "hold";
            break;
        case 5:
            v = un(a, A, "x", 1, one, NULL, NULL);
            want = "an untyped value holds parts under an atom";
            break;
        case 6: /* [[1], ((1)), @a@b@], read */
            v = un(a, L_, NULL, 3, un(a, L_, NULL, 1, one, NULL, NULL),
                   un(a, T_, NULL, 1, un(a, T_, NULL, 1, one, NULL, NULL),
                      NULL, NULL),
                   un(a, AS, "a@b", 0, NULL, NULL, NULL));
            break;
        case 7:
            v = un(a, L_, NULL, 0, NULL, NULL, NULL);
            break;
        case 8:
            v = un(a, P, "", 0, NULL, NULL, NULL);
            break;
        default:
            v = un(a, P, "/A.r[/B]", 0, NULL, NULL, NULL);
            break;
        }
        ub_fields_set(a, &L->meta, S("odd"),
                      (ub_value){.kind = UB_V_UNTYPED, .u.untyped = v},
                      (ub_sloc){0});
        if (!want) {
            ub_buf text;
            ub_buf_init(&text);
            CU_ASSERT_EQUAL_FATAL(ub_usda_write(L, &text), 0);
            ub_diags *d = ub_diags_new();
            ub_layer *R = ub_parse_usda(T, "u.usda", text.data, text.len, d);
            CU_ASSERT_PTR_NOT_NULL(R);
            CU_ASSERT_EQUAL(ub_diags_count(d), 0);
            ub_layer_free(R);
            ub_diags_free(d);
            ub_buf_free(&text);
        }
        written_reads(L, want);
    }
}

/* Metadata held to the shape its text has, as the crate reader holds it
 * (runtime/ub_metadef.h): what only the API or a writer's bug makes is
 * damage, named; the same fields with their text's shape read back. */
static void test_metadata_refused(void)
{
    for (int k = 0; k < 13; k++) {
        ub_layer *L = ub_layer_new(T, "m.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_prop *x = attr(L, p, "x", UB_TY_DOUBLE, false);
        ub_dict *d = dict(L->arena, 0);
        const char *want = NULL;
        switch (k) {
        case 0:
            ub_fields_set(L->arena, &p->meta, S("displayName"),
                          scalar(L->arena, UB_TY_INT, 7), (ub_sloc){0});
            want = "field 'displayName': expected a value of type string, "
                   "found a value of type int";
            break;
        case 1:
            ub_fields_set(L->arena, &p->meta, S("default"),
                          scalar(L->arena, UB_TY_INT, 7), (ub_sloc){0});
            want = "field 'default': 'default' has no place on a prim";
            break;
        case 2:
            ub_dict_set(L->arena, d, S("edits"),
                        listop(L->arena, UB_TY_TOKEN), (ub_sloc){0});
            ub_fields_set(L->arena, &L->meta, S("customLayerData"),
                          (ub_value){.kind = UB_V_DICT, .u.dict = d},
                          (ub_sloc){0});
            want = "the dictionary's value 'edits' is a list op, which no "
                   "dictionary holds";
            break;
        case 3: {
            ub_fields meta = {0};
            ub_fields_set(L->arena, &meta, S("bad key"),
                          scalar(L->arena, UB_TY_INT, 7), (ub_sloc){0});
            ub_prop_set_meta(L->arena, x, &meta);
            want = "field 'bad key': 'bad key' is not an identifier, as a "
                   "field's name must be";
            break;
        }
        case 4:
        case 5: {
            /* the text's inherits are prim paths: </P.x> is not one */
            ub_listop *lo = ub_listop_new(L->arena);
            lo->is_explicit = lo->has[UB_LO_EXPLICIT] = true;
            CU_ASSERT_FATAL(ub_listop_put(L->arena, lo, UB_LO_EXPLICIT,
                                          strs(L->arena, UB_TY_PATH, 1,
                                               k == 4 ? "/P.x" : "/Q")) ==
                            0);
            ub_fields_set(L->arena, &p->meta, S("inherits"),
                          (ub_value){.kind = UB_V_LISTOP,
                                     .type_id = UB_TY_PATH,
                                     .u.listop = lo},
                          (ub_sloc){0});
            if (k == 4)
                want = "field 'inherits': expected absolute prim paths "
                       "without variant selections";
            break;
        }
        case 6: {
            /* relocates pair absolute prim paths */
            ub_value r = ub_value_new(L->arena, TY(UB_TY_PATH), 2, true);
            ((const char **)ub_value_data(&r))[0] = S("/P");
            ((const char **)ub_value_data(&r))[1] = S("a b");
            ub_fields_set(L->arena, &L->meta, S("relocates"), r,
                          (ub_sloc){0});
            want = "field 'relocates': expected pairs of absolute prim paths";
            break;
        }
        case 7: /* a list op's part repeats no item */
            ub_fields_set(L->arena, &p->meta, S("apiSchemas"),
                          listop(L->arena, UB_TY_TOKEN), (ub_sloc){0});
            ((const char **)ub_value_data(ub_listop_get(
                p->meta.v[0].value.u.listop, UB_LO_PREPEND)))[1] = S("/A/p0");
            want = "field 'apiSchemas': a part of the list op holds an item "
                   "twice";
            break;
        case 8: /* a variant selection is a name, or an expression */
        case 9: {
            ub_dict *sel = ub_dict_new(L->arena);
            ub_value v = ub_value_new(L->arena, TY(UB_TY_STRING), 1, false);
            *(const char **)ub_value_data(&v) = S(k == 8 ? "a b" : "`${V}`");
            ub_dict_set(L->arena, sel, S("v"), v, (ub_sloc){0});
            ub_fields_set(L->arena, &p->meta, S("variants"),
                          (ub_value){.kind = UB_V_DICT, .u.dict = sel},
                          (ub_sloc){0});
            if (k == 8)
                want = "field 'variants': expected variant selections";
            break;
        }
        case 11: /* a substitution's key is not empty */
        case 12: {
            ub_dict *sub = ub_dict_new(L->arena);
            ub_value v = ub_value_new(L->arena, TY(UB_TY_STRING), 1, false);
            *(const char **)ub_value_data(&v) = S("/new");
            ub_dict_set(L->arena, sub, S(k == 11 ? "" : "/old"), v,
                        (ub_sloc){0});
            ub_fields_set(L->arena, &p->meta, S("prefixSubstitutions"),
                          (ub_value){.kind = UB_V_DICT, .u.dict = sub},
                          (ub_sloc){0});
            if (k == 11)
                want = "field 'prefixSubstitutions': expected a dictionary "
                       "of strings without an empty key";
            break;
        }
        default:
            ub_fields_set(L->arena, &p->meta, S("displayName"),
                          strs(L->arena, UB_TY_STRING, 1, "shown"),
                          (ub_sloc){0});
            p->meta.v[0].value.is_array = false;
            ub_fields_set(L->arena, &L->meta, S("customLayerData"),
                          (ub_value){.kind = UB_V_DICT, .u.dict = d},
                          (ub_sloc){0});
        }
        written_reads(L, want);
    }
}

/* An attribute's value of another type than the attribute's is damage;
 * one of another floating-point width (a clip bake's doubles in a float
 * attribute) is converted, as the crate reader converts it. */
static void test_values_typed(void)
{
    for (int k = 0; k < 3; k++) {
        ub_layer *L = ub_layer_new(T, "v.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_prop *x = attr(L, p, "x", UB_TY_FLOAT3, false);
        ub_samples *s = &ub_prop_ext_get(L->arena, x)->samples;
        s->authored = true;
        if (k < 2)
            x->default_value = scalar(L->arena,
                                      k == 0 ? UB_TY_INT : UB_TY_DOUBLE3, 1.5);
        else
            CU_ASSERT_EQUAL_FATAL(
                ub_samples_set(L->arena, s, 2,
                               scalar(L->arena, UB_TY_INT3, 1.5)),
                0);
        ub_buf b;
        write(L, 0, &b);
        ub_diags *dg = ub_diags_new();
        ub_layer *R = ub_usdb_load(T, "v.usdb", b.data, b.len, dg);
        if (k == 1) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(R);
            const ub_prop *rx = R->root->children.v[0]->props.v[0];
            const ub_value *v = &rx->default_value;
            CU_ASSERT_EQUAL(v->type_id, UB_TY_FLOAT3);
            CU_ASSERT_EQUAL(ub_value_get_double(v, 0, 2), 3.5);
        } else {
            const char *want =
                k == 0 ? "property 'x': the default is of type int, where "
                         "the attribute's is float3"
                       : "property 'x': the sample at time 2 is of type "
                         "int3, where the attribute's is float3";
            CU_ASSERT_PTR_NULL(R);
            if (!has_error(dg, want))
                fprintf(stderr, "\nwanted: %s\n", want);
            CU_ASSERT(has_error(dg, want));
        }
        ub_layer_free(R);
        ub_diags_free(dg);
        ub_buf_free(&b);
        ub_layer_free(L);
    }
}

/* An attribute without a type name, or with one that is no name, is
 * damage: the text says an attribute's type first; so is a prim's type
 * name the text cannot say after the specifier (the crate reader holds
 * its attributes and prims to the same). */
static void test_type_names_checked(void)
{
    static const char *const want[] = {
        "attribute 'x' has no type name",
        "attribute 'x' has a type name that is not an identifier",
        "prim 'P' has a type name that is not an identifier",
        "attribute 'x' has type name 'inherited' and values of type double",
        "attribute 'x': type 'opaque' has no array form",
    };
    for (int k = 0; k < 5; k++) {
        ub_layer *L = ub_layer_new(T, "t.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_prop *x = ub_prop_new(L, p, S("x"), UB_ATTR, (ub_sloc){0});
        if (k >= 1)
            ub_prop_set_decl(L->arena, T, x, NULL,
                             S(k == 1 ? "not a type" : "float"));
        if (k == 2)
            p->type_name = S("/A/C"); /* the fuzzer's */
        if (k == 3) /* a type name that names no type, and a type */
            ub_prop_set_decl(L->arena, T, x, TY(UB_TY_DOUBLE),
                             S("inherited"));
        if (k == 4) { /* `opaque[] x` does not read */
            ub_prop_set_decl(L->arena, T, x, TY(UB_TY_OPAQUE), S("opaque"));
            x->is_array = true;
        }
        written_reads(L, want[k]);
    }
}

/* A layer offset that is not a number (no text says one) is damage, a
 * sublayer's as a reference's. */
static void test_nan_offsets(void)
{
    for (int k = 0; k < 2; k++) {
        ub_layer *L = ub_layer_new(T, "o.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        if (k == 0) {
            ub_sublayer *sl =
                ub_layer_add_sublayer(L, S("./sub.usda"), (ub_sloc){0});
            sl->offset = (ub_offset){NAN, 1};
            sl->has_offset = true;
        } else {
            ub_value r = refs(L->arena);
            ub_reference *e = (ub_reference *)ub_value_data(
                ub_listop_get(r.u.listop, UB_LO_EXPLICIT));
            e[0].offset.scale = NAN;
            ub_fields_set(L->arena, &p->meta, S("references"), r,
                          (ub_sloc){0});
        }
        ub_buf b;
        write(L, 0, &b);
        ub_diags *dg = ub_diags_new();
        CU_ASSERT_PTR_NULL(ub_usdb_load(T, "o.usdb", b.data, b.len, dg));
        CU_ASSERT(has_error(dg, k == 0 ? "sublayer 0: a layer offset or "
                                         "scale is not a number (NaN)"
                                       : "a reference or payload: a layer "
                                         "offset or scale is not a number"));
        ub_diags_free(dg);
        ub_buf_free(&b);
        ub_layer_free(L);
    }
}

/* A reference's path is a prim path the text can say, absolute and
 * without variant selections, or none (the fixture's second reference):
 * another path is damage. */
static void test_reference_paths_checked(void)
{
    static const char *const bad[] = {"d/ope", "/A{v=x}", "/A.p"};
    for (int k = 0; k < 3; k++) {
        ub_layer *L = ub_layer_new(T, "r.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_value r = refs(L->arena);
        ub_reference *e = (ub_reference *)ub_value_data(
            ub_listop_get(r.u.listop, UB_LO_EXPLICIT));
        e[0].prim_path = S(bad[k]);
        ub_fields_set(L->arena, &p->meta, S("references"), r, (ub_sloc){0});
        char want[96];
        snprintf(want, sizeof want, "<%s> is not a prim path", bad[k]);
        written_reads(L, want);
    }
}

/* A string holding a NUL byte is damage, wherever it is used: a path's
 * checks read it only up to the NUL (`</A\0b>` passed as </A>), and the
 * text writer wrote all of it, text no reader reads. */
static void test_nul_strings_refused(void)
{
    for (int k = 0; k < 3; k++) {
        ub_layer *L = ub_layer_new(T, "n.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        const char *nul = ub_intern(T, "/A\0b", 4);
        if (k == 0) {
            ub_value r = refs(L->arena);
            ub_reference *e = (ub_reference *)ub_value_data(
                ub_listop_get(r.u.listop, UB_LO_EXPLICIT));
            e[0].prim_path = nul;
            ub_fields_set(L->arena, &p->meta, S("references"), r,
                          (ub_sloc){0});
        } else {
            ub_listop *lo = ub_listop_new(L->arena);
            lo->has[UB_LO_PREPEND] = true;
            ub_value one = ub_value_new(L->arena, TY(UB_TY_PATH), 1, true);
            *(const char **)ub_value_data(&one) = k == 1 ? nul : S("/A");
            CU_ASSERT_FATAL(
                ub_listop_put(L->arena, lo, UB_LO_PREPEND, one) == 0);
            ub_fields_set(L->arena, &p->meta, S("inherits"),
                          (ub_value){.kind = UB_V_LISTOP,
                                     .type_id = UB_TY_PATH,
                                     .u.listop = lo},
                          (ub_sloc){0});
        }
        written_reads(L, k < 2 ? "holds a NUL byte" : NULL);
    }
}

/* A layer offset of +inf (the usda reader makes one of `1e400`) is kept,
 * but its text prints as `inf`, which no usda reader reads back there:
 * reading the .usdb warns of each, naming the spec as the crate reader
 * does.  -inf reads back and is not warned of. */
static void test_inf_offsets_warned(void)
{
    ub_layer *L = ub_layer_new(T, "w.usda");
    ub_sublayer *sub = ub_layer_add_sublayer(L, S("./s.usda"), (ub_sloc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
    sub->offset = (ub_offset){INFINITY, 1.0};
    sub->has_offset = true;
    ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
    ub_value r = refs(L->arena);
    ub_reference *e = (ub_reference *)ub_value_data(
        ub_listop_get(r.u.listop, UB_LO_EXPLICIT));
    e[0].offset.offset = INFINITY;
    e[1].offset.scale = -INFINITY; /* (reads back) */
    e[1].has_scale = true;
    ub_fields_set(L->arena, &p->meta, S("references"), r, (ub_sloc){0});
    ub_variant_set *set = ub_variant_set_get(L, p, S("v"), (ub_sloc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    ub_prim *va = ub_variant_new(L, p, set, S("a"), (ub_sloc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(va);
    ub_value pl = ub_value_new(L->arena, TY(UB_TY_PAYLOAD), 1, true);
    *(ub_reference *)ub_value_data(&pl) = (ub_reference){
        .asset = S("./b.usda"), .prim_path = S("/B"),
        .offset = {0.0, INFINITY}, .has_scale = true};
    ub_listop *lo = ub_listop_new(L->arena);
    lo->has[UB_LO_PREPEND] = true;
    CU_ASSERT_FATAL(ub_listop_put(L->arena, lo, UB_LO_PREPEND, pl) == 0);
    ub_fields_set(L->arena, &va->meta, S("payload"),
                  (ub_value){.kind = UB_V_LISTOP,
                             .type_id = UB_TY_PAYLOAD,
                             .u.listop = lo},
                  (ub_sloc){0});
    ub_buf b;
    write(L, 0, &b);
    ub_diags *dg = ub_diags_new();
    ub_layer *R = ub_usdb_load(T, "w.usdb", b.data, b.len, dg);
    CU_ASSERT_PTR_NOT_NULL(R);
    if (R)
        CU_ASSERT(layer_same(L, R));
    CU_ASSERT_EQUAL(ub_diags_errors(dg), 0);
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(dg), 3);
    static const char *const where[3] = {"w.usdb", "w.usdb:</P>",
                                         "w.usdb:</P{v=a}>"};
    static const char *const what[3] = {
        "the layer offset of sublayer './s.usda' is inf",
        "the layer offset of reference './a.usda' is inf",
        "the layer scale of payload './b.usda' is inf"};
    for (int i = 0; i < 3; i++) {
        const ub_diag *d = ub_diags_at(dg, (size_t)i);
        CU_ASSERT_EQUAL(d->severity, UB_WARNING);
        CU_ASSERT_STRING_EQUAL(d->loc.file, where[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(d->message, what[i]));
    }
    ub_layer_free(R);
    ub_diags_free(dg);
    ub_buf_free(&b);
    ub_layer_free(L);
}

/* A property's targets and connections are absolute prim or property
 * paths without variant selections, and its default target a path: others
 * are damage. */
static void test_prop_paths_checked(void)
{
    static const char *const want[] = {
        "property 'x': </P{v=a}.y> is not an absolute prim or property "
        "path",
        "property 'r': </> is not an absolute prim or property path",
        "property 'r': its default target is no path",
        NULL,
        "property 'r': a part of the list op holds a path twice",
    };
    for (int k = 0; k < 5; k++) {
        ub_layer *L = ub_layer_new(T, "p.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_prop *x = attr(L, p, "x", UB_TY_DOUBLE, false);
        ub_prop *r = ub_prop_new(L, p, S("r"), UB_REL, (ub_sloc){0});
        ub_listop *lo = ub_listop_new(L->arena);
        lo->is_explicit = lo->has[UB_LO_EXPLICIT] = true;
        ub_value one =
            ub_value_new(L->arena, TY(UB_TY_PATH), k == 4 ? 2 : 1, true);
        for (uint32_t i = 0; i < one.count; i++)
            ((const char **)ub_value_data(&one))[i] =
                S(k == 0 ? "/P{v=a}.y" : k == 1 ? "/" : "/P.x");
        CU_ASSERT_FATAL(
            ub_listop_put(L->arena, lo, UB_LO_EXPLICIT, one) == 0);
        ub_value paths = {.kind = UB_V_LISTOP, .type_id = UB_TY_PATH,
                          .u.listop = lo};
        if (k == 0)
            ub_prop_ext_get(L->arena, x)->connections = paths;
        else
            ub_prop_rel_ext_get(L->arena, r)->targets = paths;
        if (k == 2)
            ub_prop_rel_ext_get(L->arena, r)->default_target = S("a b");
        written_reads(L, want[k]);
    }
}

/* Names are unique among siblings, as the usda reader holds them: a
 * second prim, property, variant set or variant of a name is damage. */
static void test_twins_refused(void)
{
    static const char *const want[] = {
        "prim 'A' twice among siblings",
        "property 'x' twice among siblings",
        "variant set 'v' twice among siblings",
        "variant 'a' twice among siblings",
    };
    for (int k = 0; k < 4; k++) {
        ub_layer *L = ub_layer_new(T, "w.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("A"), UB_DEF, (ub_sloc){0});
        if (k == 0)
            ub_prim_new(L, L->root, S("A"), UB_OVER, (ub_sloc){0});
        attr(L, p, "x", UB_TY_DOUBLE, false);
        if (k == 1)
            attr(L, p, "x", UB_TY_DOUBLE, false);
        ub_variant_set *v = ub_variant_set_get(L, p, S("v"), (ub_sloc){0});
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        ub_variant_new(L, p, v, S("a"), (ub_sloc){0});
        if (k == 2) /* (the builder finds a set by its name: renamed) */
            ub_variant_set_get(L, p, S("w"), (ub_sloc){0})->name = S("v");
        if (k == 3)
            ub_variant_new(L, p, v, S("a"), (ub_sloc){0});
        written_reads(L, want[k]);
    }
}

/* <text> as the usda reader holds a relationship's sample. */
static ub_value untyped_path(ub_arena *a, const char *text)
{
    ub_untyped *u = ub_arena_zalloc(a, sizeof *u);
    *u = (ub_untyped){.kind = UB_U_PATH, .text = S(text)};
    return (ub_value){.kind = UB_V_UNTYPED, .u.untyped = u};
}

/* A relationship's samples are None or paths and it has no default
 * value, as the usda reader takes them: others are damage. */
static void test_rel_values_checked(void)
{
    static const char *const want[] = {
        NULL,
        "property 'r': a relationship's time samples are paths or None",
        "an untyped value holds a path that is not well formed",
        "property 'r': a relationship has no default value",
        "an untyped value holds a path that is not well formed",
        NULL,
        NULL,
    };
    for (int k = 0; k < 7; k++) {
        ub_layer *L = ub_layer_new(T, "r.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_prop *r = ub_prop_new(L, p, S("r"), UB_REL, (ub_sloc){0});
        ub_samples *s = &ub_prop_ext_get(L->arena, r)->samples;
        /* (the usda reader reads `<a b>` as `<>`: a path it cannot
         * parse is damage here, the empty one is not, nor a mapper path,
         * which OpenUSD's path grammar has) */
        ub_value path = untyped_path(L->arena, k == 2   ? "a>b"
                                               : k == 4 ? "a b"
                                               : k == 5 ? ""
                                               : k == 6 ? "/P.q.mapper[/P.x]"
                                                        : "/P.q");
        ub_value d = ub_value_new(L->arena, TY(UB_TY_DOUBLE), 1, false);
        CU_ASSERT_FATAL(ub_samples_set(L->arena, s, 1, ub_value_block()) ==
                        0);
        CU_ASSERT_FATAL(ub_samples_set(L->arena, s, 2,
                                       k == 1 ? d : path) == 0);
        if (k == 3)
            r->default_value = d;
        written_reads(L, want[k]);
    }
}

/* The lazy reads (ub_usdb_field_value, _prop_default, _sample,
 * _prop_targets) hold what they give to the rules the layer build holds
 * it to, each field to its own spec kind's: a value the build refuses
 * they refuse alike. */
static void test_lazy_reads_checked(void)
{
    static const char *const want[] = {
        NULL,
        "field 'displayName': expected a value of type string",
        "property 'x': the default is of type int, where the attribute's "
        "is double",
        "property 'r': a relationship's time samples are paths or None",
        "property 'r': </> is not an absolute prim or property path",
        "field 'upAxis': expected a value of type token",
    };
    for (int k = 0; k < 6; k++) {
        ub_layer *L = ub_layer_new(T, "z.usda");
        ub_arena *a = L->arena;
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_prop *x = attr(L, p, "x", UB_TY_DOUBLE, false);
        ub_prop *r = ub_prop_new(L, p, S("r"), UB_REL, (ub_sloc){0});
        /* fields that are good on their own spec kind only: an int under
         * `upAxis` on a layer, `displayGroupOrder` on a prim,
         * `interpolation` on an attribute would be damage */
        ub_value seven = scalar(a, UB_TY_INT, 7);
        ub_fields_set(a, &L->meta, S("interpolation"), seven, (ub_sloc){0});
        ub_fields_set(a, &p->meta, S("upAxis"), seven, (ub_sloc){0});
        ub_fields_set(a, ub_prop_meta_get(a, x), S("displayGroupOrder"),
                      seven, (ub_sloc){0});
        ub_value mm = ub_value_new(a, TY(UB_TY_TOKEN), 1, false);
        *(const char **)ub_value_data(&mm) = S("mm"); /* attributes only */
        ub_fields_set(a, ub_prop_meta_get(a, x), S("displayUnit"), mm,
                      (ub_sloc){0});
        ub_fields_set(a, ub_prop_meta_get(a, r), S("interpolation"), seven,
                      (ub_sloc){0});
        if (k == 1)
            ub_fields_set(a, &p->meta, S("displayName"), seven, (ub_sloc){0});
        if (k == 5)
            ub_fields_set(a, &L->meta, S("upAxis"), seven, (ub_sloc){0});
        x->default_value = k == 2 ? seven : scalar(a, UB_TY_DOUBLE, 1.5);
        ub_value path = untyped_path(a, "/P.x");
        CU_ASSERT_FATAL(ub_samples_set(a, &ub_prop_ext_get(a, r)->samples, 1,
                                       k == 3 ? seven : path) == 0);
        if (k == 4) {
            ub_listop *lo = ub_listop_new(a);
            lo->is_explicit = lo->has[UB_LO_EXPLICIT] = true;
            ub_value one = ub_value_new(a, TY(UB_TY_PATH), 1, true);
            *(const char **)ub_value_data(&one) = S("/");
            CU_ASSERT_FATAL(ub_listop_put(a, lo, UB_LO_EXPLICIT, one) == 0);
            ub_prop_ext_get(a, r)->targets =
                (ub_value){.kind = UB_V_LISTOP, .type_id = UB_TY_PATH,
                           .u.listop = lo};
        }
        ub_buf b;
        write(L, 0, &b);
        ub_layer_free(L);
        ub_diags *d = ub_diags_new();
        ub_usdb *f = ub_usdb_open_memory(b.data, b.len, "z.usdb", T, d);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        uint32_t pi = ub_usdb_find_prim(f, "/P");
        uint32_t xi = ub_usdb_find_prop(f, pi, "x");
        uint32_t ri = ub_usdb_find_prop(f, pi, "r");
        ub_arena *va = ub_arena_new();
        ub_value v;
        int refused = 0, fields = 0;
        uint32_t first[4], n[4];
        ub_usdb_layer_fields(f, &first[0], &n[0]);
        ub_usdb_prim_fields(f, pi, &first[1], &n[1]);
        ub_usdb_prop_fields(f, xi, &first[2], &n[2]);
        ub_usdb_prop_fields(f, ri, &first[3], &n[3]);
        for (int o = 0; o < 4; o++)
            for (uint32_t i = 0; i < n[o]; i++, fields++)
                refused += ub_usdb_field_value(f, first[o] + i, va, &v) != 0;
        CU_ASSERT_EQUAL(fields, k == 1 || k == 5 ? 6 : 5);
        refused += ub_usdb_prop_default(f, xi, va, &v) != 0;
        refused += ub_usdb_sample(f, ri, 0, va, &v) != 0;
        refused += ub_usdb_prop_targets(f, ri, va, &v) != 0;
        CU_ASSERT_EQUAL(refused, k == 0 ? 0 : 1);
        if (want[k] && !has_error(d, want[k]))
            fprintf(stderr, "\nwanted: %s\n", want[k]);
        CU_ASSERT(k == 0 ? ub_diags_count(d) == 0 : has_error(d, want[k]));
        /* the whole layer's build agrees */
        ub_layer *R = ub_usdb_read_layer(f, NULL);
        CU_ASSERT((R != NULL) == (k == 0));
        ub_layer_free(R);
        ub_arena_free(va);
        ub_usdb_close(f);
        ub_diags_free(d);
        ub_buf_free(&b);
    }
}

/* A layer's framesPerSecond is greater than 0, as the usda reader holds
 * it (the CI configuration of the fuzz oracle found a NaN printed). */
static void test_frames_per_second(void)
{
    static const double fps[] = {24, 0, -1, NAN};
    for (int k = 0; k < 4; k++) {
        ub_layer *L = ub_layer_new(T, "f.usda");
        ub_fields_set(L->arena, &L->meta, S("framesPerSecond"),
                      scalar(L->arena, UB_TY_DOUBLE, fps[k]), (ub_sloc){0});
        written_reads(L, k == 0 ? NULL
                                : "field 'framesPerSecond': it must be "
                                  "greater than 0");
    }
}

/* A pathExpression default must parse, and is kept as its canonical
 * text, as the crate reader keeps one. */
static void test_path_exprs_checked(void)
{
    for (int k = 0; k < 2; k++) {
        ub_layer *L = ub_layer_new(T, "x.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_prop *e = attr(L, p, "pe", UB_TY_PATH_EXPRESSION, false);
        e->default_value =
            ub_value_new(L->arena, TY(UB_TY_PATH_EXPRESSION), 1, false);
        *(const char **)ub_value_data(&e->default_value) =
            S(k == 0 ? "/A\x01B" : "/A/B    /C");
        if (k == 0) {
            written_reads(L, "property 'pe': invalid pathExpression");
            continue;
        }
        ub_buf b;
        write(L, 0, &b);
        ub_diags *dg = ub_diags_new();
        ub_layer *R = ub_usdb_load(T, "x.usdb", b.data, b.len, dg);
        CU_ASSERT_PTR_NOT_NULL_FATAL(R);
        const ub_prop *q = R->root->children.v[0]->props.v[0];
        CU_ASSERT_STRING_EQUAL(ub_value_str(&q->default_value, 0),
                               "/A/B /C");
        ub_layer_free(R);
        ub_diags_free(dg);
        ub_buf_free(&b);
        ub_layer_free(L);
    }
}

/* A time sample no attribute's type allows (a dictionary, a list op): a
 * .usdb can hold one, which is damage, both where the layer is built and
 * where the runtime reads the sample; an untyped sample reads back. */
static void test_samples_refused(void)
{
    for (int k = 0; k < 3; k++) {
        ub_layer *L = ub_layer_new(T, "s.usda");
        ub_prim *p = ub_prim_new(L, L->root, S("P"), UB_DEF, (ub_sloc){0});
        ub_prop *x = attr(L, p, "x", UB_TY_DOUBLE, false);
        ub_samples *s = &ub_prop_ext_get(L->arena, x)->samples;
        ub_value v = k == 0 ? (ub_value){.kind = UB_V_DICT,
                                         .u.dict = dict(L->arena, 1)}
                   : k == 1 ? listop(L->arena, UB_TY_TOKEN)
                            : untyped(L->arena);
        CU_ASSERT_EQUAL_FATAL(ub_samples_set(L->arena, s, 1,
                                             scalar(L->arena, UB_TY_DOUBLE,
                                                    1.5)),
                              0);
        CU_ASSERT_EQUAL_FATAL(ub_samples_set(L->arena, s, 2, v), 0);
        s->authored = true;
        ub_buf b;
        write(L, 0, &b);
        ub_diags *d = ub_diags_new();
        ub_layer *R = ub_usdb_load(T, "s.usdb", b.data, b.len, d);
        const char *what = k == 0 ? "sample 1 holds a dictionary, which no "
                                    "attribute's type allows"
                                  : "sample 1 holds a list op, which no "
                                    "attribute's type allows";
        if (k < 2) {
            CU_ASSERT_PTR_NULL(R);
            CU_ASSERT(has_error(d, what));
        } else {
            CU_ASSERT_PTR_NOT_NULL(R);
            CU_ASSERT_EQUAL(ub_diags_count(d), 0);
            if (R)
                CU_ASSERT(layer_same(L, R));
        }
        ub_layer_free(R);
        /* the runtime's sample, read alone */
        ub_diags *d2 = ub_diags_new();
        ub_usdb *f = ub_usdb_open_memory(b.data, b.len, "s.usdb", T, d2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        uint32_t q = ub_usdb_find_prop(f, ub_usdb_find_prim(f, "/P"), "x");
        ub_arena *a = ub_arena_new();
        ub_value got;
        CU_ASSERT_EQUAL(ub_usdb_sample(f, q, 1, a, &got), k < 2 ? -1 : 0);
        if (k < 2)
            CU_ASSERT(has_error(d2, what));
        ub_arena_free(a);
        ub_usdb_close(f);
        ub_diags_free(d2);
        ub_diags_free(d);
        ub_buf_free(&b);
        ub_layer_free(L);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    T = ub_strtab_new();
    CU_pSuite s = CU_add_suite("usdb", NULL, NULL);
    CU_add_test(s, "every value kind and layout round-trips bit-exactly",
                test_roundtrip_every_encoding);
    CU_add_test(s, "deterministic output; levels", test_deterministic_and_levels);
    CU_add_test(s, "equal arrays and series stored once", test_dedup);
    CU_add_test(s, "records of compressed chunks still shared",
                test_dropped_records_still_shared);
    CU_add_test(s, "samples kept outside the layer", test_samples_kept);
    CU_add_test(s, "default level: the bytes of the level it picks",
                test_auto_level_same_bytes);
    CU_add_test(s, "decimal float columns", test_decimal_columns_compress);
    CU_add_test(s, "runtime: tree and lookups", test_runtime_tree);
    CU_add_test(s, "runtime: value at a time", test_value_at);
    CU_add_test(s, "ub_samples_value_at", test_samples_value_at_memory);
    CU_add_test(s, "runtime: lazy chunks", test_lazy);
    CU_add_test(s, "damage is reported and named", test_damage_named);
    CU_add_test(s, "a type without a type name is damage",
                test_type_without_type_name);
    CU_add_test(s, "an untyped atom without its text is damage",
                test_untyped_without_text);
    CU_add_test(s, "untyped values the text cannot say are damage",
                test_untyped_shapes);
    CU_add_test(s, "samples no attribute holds are damage",
                test_samples_refused);
    CU_add_test(s, "metadata its text cannot say is damage",
                test_metadata_refused);
    CU_add_test(s, "values of another type than their attribute's",
                test_values_typed);
    CU_add_test(s, "layer offsets that are not numbers are damage",
                test_nan_offsets);
    CU_add_test(s, "type names the text cannot say are damage",
                test_type_names_checked);
    CU_add_test(s, "strings holding a NUL byte refused",
                test_nul_strings_refused);
    CU_add_test(s, "layer offsets of inf are warned of",
                test_inf_offsets_warned);
    CU_add_test(s, "target and connection paths the text cannot say are "
                   "damage",
                test_prop_paths_checked);
    CU_add_test(s, "names given twice among siblings are damage",
                test_twins_refused);
    CU_add_test(s, "relationship values the text cannot say are damage",
                test_rel_values_checked);
    CU_add_test(s, "the lazy reads refuse what the layer build refuses",
                test_lazy_reads_checked);
    CU_add_test(s, "a framesPerSecond not above 0 is damage",
                test_frames_per_second);
    CU_add_test(s, "pathExpressions that do not parse are damage",
                test_path_exprs_checked);
    CU_add_test(s, "reference paths the text cannot say are damage",
                test_reference_paths_checked);
    CU_add_test(s, "names the path grammar refuses are damage",
                test_names_checked);
    CU_add_test(s, "asset paths OpenUSD refuses are damage",
                test_assets_checked);
    unsigned failed = ub_test_run_all();
    ub_strtab_free(T);
    return failed ? 1 : 0;
}
