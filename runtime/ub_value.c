#include "ub_value.h"

#include "ub_ident.h"

#include <math.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#define T(id, name, base, sc, r, c, role, interp) \
    [id] = {id, name, base, sc, r, c, role, interp}

/* The table mirrors OpenUSD's registered value types; `interpolates` is
 * true exactly for the types OpenUSD interpolates linearly (floating-point
 * scalars, vectors, matrices, quaternions by slerp). */
const ub_type ub_type_table[UB_TY_COUNT] = {
    T(UB_TY_BOOL, "bool", UB_TY_BOOL, UB_SC_BOOL, 1, 1, NULL, false),
    T(UB_TY_UCHAR, "uchar", UB_TY_UCHAR, UB_SC_UCHAR, 1, 1, NULL, false),
    T(UB_TY_INT, "int", UB_TY_INT, UB_SC_INT, 1, 1, NULL, false),
    T(UB_TY_UINT, "uint", UB_TY_UINT, UB_SC_UINT, 1, 1, NULL, false),
    T(UB_TY_INT64, "int64", UB_TY_INT64, UB_SC_INT64, 1, 1, NULL, false),
    T(UB_TY_UINT64, "uint64", UB_TY_UINT64, UB_SC_UINT64, 1, 1, NULL, false),
    T(UB_TY_HALF, "half", UB_TY_HALF, UB_SC_HALF, 1, 1, NULL, true),
    T(UB_TY_FLOAT, "float", UB_TY_FLOAT, UB_SC_FLOAT, 1, 1, NULL, true),
    T(UB_TY_DOUBLE, "double", UB_TY_DOUBLE, UB_SC_DOUBLE, 1, 1, NULL, true),
    T(UB_TY_TIMECODE, "timecode", UB_TY_TIMECODE, UB_SC_DOUBLE, 1, 1, NULL,
      true),
    T(UB_TY_STRING, "string", UB_TY_STRING, UB_SC_STRING, 1, 1, NULL, false),
    T(UB_TY_TOKEN, "token", UB_TY_TOKEN, UB_SC_STRING, 1, 1, NULL, false),
    T(UB_TY_ASSET, "asset", UB_TY_ASSET, UB_SC_STRING, 1, 1, NULL, false),
    T(UB_TY_OPAQUE, "opaque", UB_TY_OPAQUE, UB_SC_OPAQUE, 1, 1, NULL, false),
    T(UB_TY_PATH_EXPRESSION, "pathExpression", UB_TY_PATH_EXPRESSION,
      UB_SC_STRING, 1, 1, NULL, false),
    T(UB_TY_MATRIX2D, "matrix2d", UB_TY_MATRIX2D, UB_SC_DOUBLE, 2, 2, NULL,
      true),
    T(UB_TY_MATRIX3D, "matrix3d", UB_TY_MATRIX3D, UB_SC_DOUBLE, 3, 3, NULL,
      true),
    T(UB_TY_MATRIX4D, "matrix4d", UB_TY_MATRIX4D, UB_SC_DOUBLE, 4, 4, NULL,
      true),
    T(UB_TY_QUATH, "quath", UB_TY_QUATH, UB_SC_HALF, 1, 4, NULL, true),
    T(UB_TY_QUATF, "quatf", UB_TY_QUATF, UB_SC_FLOAT, 1, 4, NULL, true),
    T(UB_TY_QUATD, "quatd", UB_TY_QUATD, UB_SC_DOUBLE, 1, 4, NULL, true),
    T(UB_TY_INT2, "int2", UB_TY_INT2, UB_SC_INT, 1, 2, NULL, false),
    T(UB_TY_HALF2, "half2", UB_TY_HALF2, UB_SC_HALF, 1, 2, NULL, true),
    T(UB_TY_FLOAT2, "float2", UB_TY_FLOAT2, UB_SC_FLOAT, 1, 2, NULL, true),
    T(UB_TY_DOUBLE2, "double2", UB_TY_DOUBLE2, UB_SC_DOUBLE, 1, 2, NULL, true),
    T(UB_TY_INT3, "int3", UB_TY_INT3, UB_SC_INT, 1, 3, NULL, false),
    T(UB_TY_HALF3, "half3", UB_TY_HALF3, UB_SC_HALF, 1, 3, NULL, true),
    T(UB_TY_FLOAT3, "float3", UB_TY_FLOAT3, UB_SC_FLOAT, 1, 3, NULL, true),
    T(UB_TY_DOUBLE3, "double3", UB_TY_DOUBLE3, UB_SC_DOUBLE, 1, 3, NULL, true),
    T(UB_TY_INT4, "int4", UB_TY_INT4, UB_SC_INT, 1, 4, NULL, false),
    T(UB_TY_HALF4, "half4", UB_TY_HALF4, UB_SC_HALF, 1, 4, NULL, true),
    T(UB_TY_FLOAT4, "float4", UB_TY_FLOAT4, UB_SC_FLOAT, 1, 4, NULL, true),
    T(UB_TY_DOUBLE4, "double4", UB_TY_DOUBLE4, UB_SC_DOUBLE, 1, 4, NULL, true),
    T(UB_TY_POINT3H, "point3h", UB_TY_HALF3, UB_SC_HALF, 1, 3, "Point", true),
    T(UB_TY_POINT3F, "point3f", UB_TY_FLOAT3, UB_SC_FLOAT, 1, 3, "Point", true),
    T(UB_TY_POINT3D, "point3d", UB_TY_DOUBLE3, UB_SC_DOUBLE, 1, 3, "Point",
      true),
    T(UB_TY_NORMAL3H, "normal3h", UB_TY_HALF3, UB_SC_HALF, 1, 3, "Normal",
      true),
    T(UB_TY_NORMAL3F, "normal3f", UB_TY_FLOAT3, UB_SC_FLOAT, 1, 3, "Normal",
      true),
    T(UB_TY_NORMAL3D, "normal3d", UB_TY_DOUBLE3, UB_SC_DOUBLE, 1, 3, "Normal",
      true),
    T(UB_TY_VECTOR3H, "vector3h", UB_TY_HALF3, UB_SC_HALF, 1, 3, "Vector",
      true),
    T(UB_TY_VECTOR3F, "vector3f", UB_TY_FLOAT3, UB_SC_FLOAT, 1, 3, "Vector",
      true),
    T(UB_TY_VECTOR3D, "vector3d", UB_TY_DOUBLE3, UB_SC_DOUBLE, 1, 3, "Vector",
      true),
    T(UB_TY_COLOR3H, "color3h", UB_TY_HALF3, UB_SC_HALF, 1, 3, "Color", true),
    T(UB_TY_COLOR3F, "color3f", UB_TY_FLOAT3, UB_SC_FLOAT, 1, 3, "Color", true),
    T(UB_TY_COLOR3D, "color3d", UB_TY_DOUBLE3, UB_SC_DOUBLE, 1, 3, "Color",
      true),
    T(UB_TY_COLOR4H, "color4h", UB_TY_HALF4, UB_SC_HALF, 1, 4, "Color", true),
    T(UB_TY_COLOR4F, "color4f", UB_TY_FLOAT4, UB_SC_FLOAT, 1, 4, "Color", true),
    T(UB_TY_COLOR4D, "color4d", UB_TY_DOUBLE4, UB_SC_DOUBLE, 1, 4, "Color",
      true),
    T(UB_TY_TEXCOORD2H, "texCoord2h", UB_TY_HALF2, UB_SC_HALF, 1, 2,
      "TextureCoordinate", true),
    T(UB_TY_TEXCOORD2F, "texCoord2f", UB_TY_FLOAT2, UB_SC_FLOAT, 1, 2,
      "TextureCoordinate", true),
    T(UB_TY_TEXCOORD2D, "texCoord2d", UB_TY_DOUBLE2, UB_SC_DOUBLE, 1, 2,
      "TextureCoordinate", true),
    T(UB_TY_TEXCOORD3H, "texCoord3h", UB_TY_HALF3, UB_SC_HALF, 1, 3,
      "TextureCoordinate", true),
    T(UB_TY_TEXCOORD3F, "texCoord3f", UB_TY_FLOAT3, UB_SC_FLOAT, 1, 3,
      "TextureCoordinate", true),
    T(UB_TY_TEXCOORD3D, "texCoord3d", UB_TY_DOUBLE3, UB_SC_DOUBLE, 1, 3,
      "TextureCoordinate", true),
    T(UB_TY_FRAME4D, "frame4d", UB_TY_MATRIX4D, UB_SC_DOUBLE, 4, 4, "Frame",
      true),
    T(UB_TY_GROUP, "group", UB_TY_OPAQUE, UB_SC_OPAQUE, 1, 1, "Group", false),
    T(UB_TY_PATH, "path", UB_TY_PATH, UB_SC_STRING, 1, 1, NULL, false),
    T(UB_TY_REFERENCE, "reference", UB_TY_REFERENCE, UB_SC_REF, 1, 1, NULL,
      false),
    T(UB_TY_PAYLOAD, "payload", UB_TY_PAYLOAD, UB_SC_REF, 1, 1, NULL, false),
    T(UB_TY_DICTIONARY, "dictionary", UB_TY_DICTIONARY, UB_SC_DICT, 1, 1, NULL,
      false),
};

#undef T

const ub_type *ub_type_get(ub_type_id id)
{
    if (id <= UB_TY_INVALID || id >= UB_TY_COUNT)
        return NULL;
    return &ub_type_table[id];
}

const ub_type *ub_type_by_name(const char *name, size_t len)
{
    /* Only types an attribute or dictionary may be declared with; the
     * metadata-only element types are not spelled in usda. */
    for (int id = UB_TY_BOOL; id < UB_TY_PATH; id++) {
        const ub_type *t = &ub_type_table[id];
        if (strlen(t->name) == len && memcmp(t->name, name, len) == 0)
            return t;
    }
    if (len == 10 && memcmp(name, "dictionary", 10) == 0)
        return &ub_type_table[UB_TY_DICTIONARY];
    return NULL;
}

ub_value ub_value_block(void)
{
    return (ub_value){.kind = UB_V_BLOCK};
}

ub_value ub_value_new(ub_arena *a, const ub_type *t, uint32_t count,
                      bool is_array)
{
    ub_value v = {.kind = UB_V_DATA, .is_array = is_array,
        .type_id = ub_type_id_of(t),
                  .count = count};
    if (ub_value_is_inline(&v))
        return v; /* zeroed in place */
    v.u.out_of_line = ub_arena_zalloc(a, ub_value_bytes(&v));
    if (!v.u.out_of_line)
        v.kind = UB_V_EMPTY;
    return v;
}

ub_dict *ub_dict_new(ub_arena *a)
{
    return ub_arena_zalloc(a, sizeof(ub_dict));
}

ub_dict_entry *ub_dict_find(const ub_dict *d, const char *key)
{
    for (uint32_t i = 0; i < d->n; i++)
        if (d->e[i].key == key)
            return &d->e[i];
    return NULL;
}

int ub_dict_reserve(ub_arena *a, ub_dict *d, uint32_t more)
{
    return ub_arena_reserve(a, (void **)&d->e, d->n, &d->cap, more,
                            sizeof *d->e, alignof(ub_dict_entry));
}

ub_dict_entry *ub_dict_set(ub_arena *a, ub_dict *d, const char *key,
                           ub_value value, ub_sloc loc)
{
    ub_dict_entry *e = ub_dict_find(d, key);
    if (!e) {
        if (d->n == d->cap) {
            uint32_t cap = d->cap ? d->cap * 2 : 4;
            ub_dict_entry *ne = ub_arena_grow_align(a, d->e, d->n, cap, sizeof *ne,
                                                    alignof(ub_dict_entry));
            if (!ne)
                return NULL;
            d->e = ne;
            d->cap = cap;
        }
        e = &d->e[d->n++];
        e->key = key;
    }
    e->value = value;
    e->loc = loc;
    return e;
}

const ub_listop_entry ub_listop_entry_none;

ub_listop *ub_listop_new(ub_arena *a)
{
    return ub_arena_zalloc(a, sizeof(ub_listop));
}

/* The entry of part p, added (EMPTY) when it has none. */
static ub_listop_entry *ub_listop_entry_of(ub_arena *a, ub_listop *lo,
                                           ub_listop_part p)
{
    if (lo->at[p])
        return &lo->e[lo->at[p] - 1];
    if (lo->n == lo->cap) {
        uint8_t cap = lo->cap ? (uint8_t)(lo->cap * 2) : 1;
        if (cap > UB_LO_NPARTS)
            cap = UB_LO_NPARTS;
        ub_listop_entry *e = ub_arena_grow_align(
            a, lo->e, lo->n, cap, sizeof *e, alignof(ub_listop_entry));
        if (!e)
            return NULL;
        lo->e = e;
        lo->cap = cap;
    }
    ub_listop_entry *e = &lo->e[lo->n++];
    *e = ub_listop_entry_none;
    lo->at[p] = lo->n;
    return e;
}

int ub_listop_assign(ub_arena *a, ub_listop *lo, ub_listop_part p,
                     ub_value value, ub_sloc loc)
{
    ub_listop_entry *e = ub_listop_entry_of(a, lo, p);
    if (!e)
        return -1;
    e->value = value;
    e->loc = loc;
    return 0;
}

int ub_listop_put(ub_arena *a, ub_listop *lo, ub_listop_part p, ub_value value)
{
    ub_listop_entry *e = ub_listop_entry_of(a, lo, p);
    if (!e)
        return -1;
    e->value = value;
    return 0;
}

int ub_listop_set_loc(ub_arena *a, ub_listop *lo, ub_listop_part p, ub_sloc loc)
{
    ub_listop_entry *e = ub_listop_entry_of(a, lo, p);
    if (!e)
        return -1;
    e->loc = loc;
    return 0;
}

ub_listop *ub_listop_copy(ub_arena *a, const ub_listop *lo)
{
    ub_listop *c = ub_arena_alloc(a, sizeof *c);
    if (!c)
        return NULL;
    *c = *lo;
    if (lo->n) {
        c->e = ub_arena_alloc_align(a, lo->n * sizeof *c->e,
                                    alignof(ub_listop_entry));
        if (!c->e)
            return NULL;
        memcpy(c->e, lo->e, lo->n * sizeof *c->e);
        c->cap = lo->n;
    }
    return c;
}

static bool ub_reorder_named(uint32_t m,
                             bool (*is)(void *, uint32_t, uint32_t),
                             void *ctx, uint32_t item)
{
    for (uint32_t k = 0; k < m; k++)
        if (is(ctx, item, k))
            return true;
    return false;
}

int ub_reorder_perm(uint32_t n, uint32_t m,
                    bool (*is)(void *ctx, uint32_t item, uint32_t entry),
                    void *ctx, uint32_t *perm)
{
    bool *taken = calloc(n ? n : 1, sizeof *taken);
    if (!taken)
        return -1;
    uint32_t w = 0;
    for (uint32_t k = 0; k < m; k++) {
        /* an entry named twice finds its item taken the second time */
        uint32_t i = 0;
        while (i < n && (taken[i] || !is(ctx, i, k)))
            i++;
        if (i == n)
            continue;
        do {
            taken[i] = true;
            perm[w++] = i++;
            while (i < n && taken[i])
                i++;
        } while (i < n && !ub_reorder_named(m, is, ctx, i));
    }
    uint32_t rest = n - w;
    memmove(perm + rest, perm, w * sizeof *perm);
    uint32_t r = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!taken[i])
            perm[r++] = i;
    free(taken);
    return 0;
}

static bool ub_name_is_entry(void *ctx, uint32_t item, uint32_t entry)
{
    const void *const *c = ctx; /* {names, order} */
    const char *const *v = c[0];
    return v[item] == ub_value_str(c[1], entry);
}

int ub_reorder_names(const char **v, uint32_t n, const ub_value *order)
{
    if (order->kind != UB_V_DATA || order->count == 0 || n == 0 ||
        !ub_value_type(order) || ub_value_type(order)->scalar != UB_SC_STRING)
        return 0;
    uint32_t *perm = malloc(n * sizeof *perm);
    const char **was = malloc(n * sizeof *was);
    const void *ctx[2] = {was, order};
    int rc = perm && was ? 0 : -1;
    if (rc == 0) {
        memcpy(was, v, n * sizeof *v);
        rc = ub_reorder_perm(n, order->count, ub_name_is_entry, ctx, perm);
    }
    for (uint32_t j = 0; rc == 0 && j < n; j++)
        v[j] = was[perm[j]];
    free(perm);
    free(was);
    return rc;
}

static ub_dict *ub_dict_clone(ub_arena *a, const ub_dict *d);

static ub_untyped *ub_untyped_clone(ub_arena *a, const ub_untyped *u)
{
    ub_untyped *c = ub_arena_alloc(a, sizeof *c);
    if (!c)
        return NULL;
    *c = *u;
    if (u->n) {
        c->child = ub_arena_alloc(a, u->n * sizeof *c->child);
        if (!c->child)
            return NULL;
        for (uint32_t i = 0; i < u->n; i++) {
            ub_untyped *k = ub_untyped_clone(a, &u->child[i]);
            if (!k)
                return NULL;
            c->child[i] = *k;
        }
    }
    return c;
}

ub_value ub_value_clone(ub_arena *a, const ub_value *v)
{
    ub_value c = *v;
    switch ((ub_vkind)v->kind) {
    case UB_V_DATA: {
        if (!ub_value_is_inline(v)) {
            size_t bytes = ub_value_bytes(v);
            c.u.out_of_line = ub_arena_alloc(a, bytes);
            if (!c.u.out_of_line)
                return (ub_value){0};
            memcpy(c.u.out_of_line, v->u.out_of_line, bytes);
        }
        if (ub_value_type(v)->scalar == UB_SC_REF) {
            ub_reference *r = ub_value_data(&c);
            for (uint32_t i = 0; i < v->count; i++)
                if (r[i].custom_data)
                    r[i].custom_data = ub_dict_clone(a, r[i].custom_data);
        } else if (ub_value_type(v)->scalar == UB_SC_DICT) {
            ub_dict **d = ub_value_data(&c);
            for (uint32_t i = 0; i < v->count; i++)
                d[i] = ub_dict_clone(a, d[i]);
        }
        break;
    }
    case UB_V_DICT:
        c.u.dict = ub_dict_clone(a, v->u.dict);
        break;
    case UB_V_LISTOP: {
        ub_listop *lo = ub_listop_copy(a, v->u.listop);
        if (!lo)
            return (ub_value){0};
        for (uint8_t i = 0; i < lo->n; i++)
            lo->e[i].value = ub_value_clone(a, &lo->e[i].value);
        c.u.listop = lo;
        break;
    }
    case UB_V_UNTYPED:
        c.u.untyped = ub_untyped_clone(a, v->u.untyped);
        break;
    case UB_V_EMPTY:
    case UB_V_BLOCK:
        break;
    }
    return c;
}

static ub_dict *ub_dict_clone(ub_arena *a, const ub_dict *d)
{
    if (!d)
        return NULL;
    ub_dict *c = ub_dict_new(a);
    if (!c)
        return NULL;
    /* d's keys are unique already: copy the entries at their exact size */
    if (d->n) {
        c->e = ub_arena_alloc_align(a, d->n * sizeof *c->e,
                                    alignof(ub_dict_entry));
        if (!c->e)
            return NULL;
        c->n = c->cap = d->n;
    }
    for (uint32_t i = 0; i < d->n; i++) {
        c->e[i] = d->e[i];
        c->e[i].value = ub_value_clone(a, &d->e[i].value);
    }
    return c;
}

/* --- half ---------------------------------------------------------------- */

float ub_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                mant <<= 1;
            } while (!(mant & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) |
                   ((mant & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t ub_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0);
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
        return sign | 0x7c00;
    if (absx < 0x38800000u) { /* below the smallest normal half */
        if (absx < 0x33000000u) /* below half the smallest subnormal */
            return sign;
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e; /* subnormal half unit is 2^-24 */
        uint32_t half_m = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half_m & 1)))
            half_m++;
        return sign | (uint16_t)half_m;
    }
    uint32_t e = (absx >> 23) - 127 + 15;
    uint32_t m = absx & 0x7fffff;
    uint32_t h = (e << 10) | (m >> 13);
    uint32_t rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++; /* may carry into the exponent, which is still correct */
    return sign | (uint16_t)h;
}

/* --- numeric access ------------------------------------------------------ */

double ub_value_get_double(const ub_value *v, uint32_t i, unsigned c)
{
    const char *p = (const char *)ub_value_elem(v, i) +
                    c * ub_scalar_size(ub_value_type(v)->scalar);
    switch (ub_value_type(v)->scalar) {
    case UB_SC_BOOL:
    case UB_SC_UCHAR:
        return *(const uint8_t *)p;
    case UB_SC_INT: {
        int32_t x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    case UB_SC_UINT: {
        uint32_t x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    case UB_SC_INT64: {
        int64_t x;
        memcpy(&x, p, sizeof x);
        return (double)x;
    }
    case UB_SC_UINT64: {
        uint64_t x;
        memcpy(&x, p, sizeof x);
        return (double)x;
    }
    case UB_SC_HALF: {
        uint16_t x;
        memcpy(&x, p, sizeof x);
        return ub_half_to_float(x);
    }
    case UB_SC_FLOAT: {
        float x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    case UB_SC_DOUBLE: {
        double x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    default:
        return 0.0;
    }
}

void ub_value_set_double(ub_value *v, uint32_t i, unsigned c, double x)
{
    ub_scalar sc = ub_value_type(v)->scalar;
    char *p = (char *)ub_value_elem(v, i) + c * ub_scalar_size(sc);
    switch (sc) {
    case UB_SC_BOOL:
        *(uint8_t *)p = x != 0.0;
        break;
    case UB_SC_UCHAR:
        *(uint8_t *)p = (uint8_t)x;
        break;
    case UB_SC_INT: {
        int32_t y = (int32_t)x;
        memcpy(p, &y, sizeof y);
        break;
    }
    case UB_SC_UINT: {
        uint32_t y = (uint32_t)x;
        memcpy(p, &y, sizeof y);
        break;
    }
    case UB_SC_INT64: {
        int64_t y = (int64_t)x;
        memcpy(p, &y, sizeof y);
        break;
    }
    case UB_SC_UINT64: {
        uint64_t y = (uint64_t)x;
        memcpy(p, &y, sizeof y);
        break;
    }
    case UB_SC_HALF: {
        uint16_t y = ub_float_to_half((float)x);
        memcpy(p, &y, sizeof y);
        break;
    }
    case UB_SC_FLOAT: {
        float y = (float)x;
        memcpy(p, &y, sizeof y);
        break;
    }
    case UB_SC_DOUBLE:
        memcpy(p, &x, sizeof x);
        break;
    default:
        break;
    }
}

/* --- equality ------------------------------------------------------------ */

static bool ub_close_double(double a, double b, double tol)
{
    if (a == b || (isnan(a) && isnan(b)))
        return true;
    if (tol <= 0.0 || !isfinite(a) || !isfinite(b))
        return false;
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= tol * scale;
}

static bool ub_dict_cmp(const ub_dict *a, const ub_dict *b, double tol);
static bool ub_untyped_equal(const ub_untyped *a, const ub_untyped *b);
static bool ub_value_cmp(const ub_value *a, const ub_value *b, double tol);

static bool ub_reference_cmp(const ub_reference *a, const ub_reference *b,
                             double tol)
{
    if (a->asset != b->asset || a->prim_path != b->prim_path)
        return false;
    if (!ub_close_double(a->offset.offset, b->offset.offset, tol) ||
        !ub_close_double(a->offset.scale, b->offset.scale, tol))
        return false;
    if (!a->custom_data || !b->custom_data) {
        bool ea = !a->custom_data || a->custom_data->n == 0;
        bool eb = !b->custom_data || b->custom_data->n == 0;
        return ea && eb;
    }
    return ub_dict_cmp(a->custom_data, b->custom_data, tol);
}

static bool ub_data_cmp(const ub_value *a, const ub_value *b, double tol)
{
    if (ub_value_type(a)->base != ub_value_type(b)->base ||
        a->is_array != b->is_array ||
        a->count != b->count)
        return false;
    const ub_type *t = ub_value_type(a);
    unsigned nc = ub_type_ncomp(t);
    switch (t->scalar) {
    case UB_SC_STRING: {
        for (uint32_t i = 0; i < a->count; i++)
            if (ub_value_str(a, i) != ub_value_str(b, i))
                return false;
        return true;
    }
    case UB_SC_REF: {
        const ub_reference *ra = ub_value_data(a), *rb = ub_value_data(b);
        for (uint32_t i = 0; i < a->count; i++)
            if (!ub_reference_cmp(&ra[i], &rb[i], tol))
                return false;
        return true;
    }
    case UB_SC_DICT: {
        ub_dict *const *da = ub_value_data(a), *const *db = ub_value_data(b);
        for (uint32_t i = 0; i < a->count; i++)
            if (!ub_dict_cmp(da[i], db[i], tol))
                return false;
        return true;
    }
    case UB_SC_HALF:
    case UB_SC_FLOAT:
    case UB_SC_DOUBLE:
        for (uint32_t i = 0; i < a->count; i++)
            for (unsigned c = 0; c < nc; c++)
                if (!ub_close_double(ub_value_get_double(a, i, c),
                                     ub_value_get_double(b, i, c), tol))
                    return false;
        return true;
    case UB_SC_OPAQUE:
    case UB_SC_NONE:
        return true;
    default:
        return memcmp(ub_value_data(a), ub_value_data(b),
                      (size_t)a->count * ub_type_elem_size(t)) == 0;
    }
}

static bool ub_dict_cmp(const ub_dict *a, const ub_dict *b, double tol)
{
    uint32_t na = a ? a->n : 0, nb = b ? b->n : 0;
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na; i++) {
        const ub_dict_entry *e = ub_dict_find(b, a->e[i].key);
        if (!e || !ub_value_cmp(&a->e[i].value, &e->value, tol))
            return false;
    }
    return true;
}

static bool ub_untyped_equal(const ub_untyped *a, const ub_untyped *b)
{
    if (a->kind != b->kind || a->text != b->text || a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (!ub_untyped_equal(&a->child[i], &b->child[i]))
            return false;
    return true;
}

static bool ub_value_cmp(const ub_value *a, const ub_value *b, double tol)
{
    if (a->kind != b->kind)
        return false;
    switch ((ub_vkind)a->kind) {
    case UB_V_EMPTY:
    case UB_V_BLOCK:
        return true;
    case UB_V_DATA:
        return ub_data_cmp(a, b, tol);
    case UB_V_DICT:
        return ub_dict_cmp(a->u.dict, b->u.dict, tol);
    case UB_V_LISTOP: {
        const ub_listop *la = a->u.listop, *lb = b->u.listop;
        if (la->is_explicit != lb->is_explicit)
            return false;
        for (int p = 0; p < UB_LO_NPARTS; p++) {
            bool ea = ub_listop_part_empty(la, p),
                 eb = ub_listop_part_empty(lb, p);
            if (ea || eb) {
                if (ea != eb)
                    return false;
                continue;
            }
            if (!ub_value_cmp(ub_listop_get(la, p), ub_listop_get(lb, p), tol))
                return false;
        }
        return true;
    }
    case UB_V_UNTYPED:
        return ub_untyped_equal(a->u.untyped, b->u.untyped);
    }
    return false;
}

const char *ub_value_not_sample(const ub_value *v)
{
    const ub_type *t = ub_value_type(v);
    switch (v->kind) {
    case UB_V_BLOCK:
    case UB_V_UNTYPED:
        return NULL;
    case UB_V_DATA:
        if (!t)
            return "data without a type";
        if (t->scalar == UB_SC_REF)
            return "references or payloads";
        if (t->scalar == UB_SC_DICT)
            return "dictionaries";
        return NULL;
    case UB_V_DICT:
        return "a dictionary";
    case UB_V_LISTOP:
        return "a list op";
    case UB_V_EMPTY:
        break;
    }
    return "no value";
}

bool ub_value_items_dup(const ub_value *v)
{
    if (!ub_value_type(v) || v->count < 2 || v->count > 4096)
        return false; /* big lists: quadratic check not worth it */
    size_t es = ub_type_elem_size(ub_value_type(v));
    for (uint32_t i = 0; i < v->count; i++)
        for (uint32_t j = i + 1; j < v->count; j++) {
            if (ub_value_type(v)->scalar == UB_SC_REF) {
                const ub_reference *a = ub_value_elem(v, i);
                const ub_reference *b = ub_value_elem(v, j);
                if (a->asset == b->asset && a->prim_path == b->prim_path &&
                    a->offset.offset == b->offset.offset &&
                    a->offset.scale == b->offset.scale && !a->custom_data &&
                    !b->custom_data)
                    return true;
            } else if (memcmp(ub_value_elem(v, i), ub_value_elem(v, j), es) ==
                       0) {
                return true;
            }
        }
    return false;
}

bool ub_listop_has_dup(const ub_value *v)
{
    for (int op = 0; op < UB_LO_NPARTS; op++)
        if (v->u.listop->has[op] &&
            ub_value_items_dup(
                ub_listop_get(v->u.listop, (ub_listop_part)op)))
            return true;
    return false;
}

const char *ub_listop_str_refused(const ub_value *v,
                                  bool (*ok)(const char *item))
{
    for (int op = 0; op < UB_LO_NPARTS; op++) {
        if (!v->u.listop->has[op])
            continue;
        const ub_value *l = ub_listop_get(v->u.listop, (ub_listop_part)op);
        if (l->kind != UB_V_DATA)
            continue;
        for (uint32_t k = 0; k < l->count; k++)
            if (!ok(ub_value_str(l, k)))
                return ub_value_str(l, k);
    }
    return NULL;
}

const char *ub_offset_problem(ub_offset o)
{
    return isnan(o.offset) || isnan(o.scale)
               ? "a layer offset or scale is not a number (NaN)"
               : NULL;
}

bool ub_offset_num_reads(double x)
{
    return !(isinf(x) && x > 0);
}

/* Whether both numbers of o read back (ub_offset_num_reads). */
static bool ub_offset_reads(ub_offset o)
{
    return ub_offset_num_reads(o.offset) && ub_offset_num_reads(o.scale);
}

void ub_offset_warn_unreadable(ub_diags *d, ub_loc loc, ub_offset o,
                               const char *what, const char *asset)
{
    if (ub_offset_reads(o))
        return;
    bool offset = !ub_offset_num_reads(o.offset);
    ub_diag *w = ub_diag_add(
        d, UB_WARNING, loc, NULL, NULL, 0,
        "the layer %s of %s%s '%.200s' is inf, which usda cannot read back "
        "in a layer offset",
        offset ? "offset" : "scale", *asset ? "" : "internal ", what, asset);
    ub_diag_set_hint(d, w,
                     "write the layer again with a finite number (usdcat "
                     "too writes text it cannot read)");
}

/* The references or payloads of v, a DATA value: warned of (d not
 * NULL), or counted. */
static unsigned ub_refs_unreadable(ub_diags *d, ub_loc loc, const ub_value *v)
{
    const ub_type *t = ub_value_type(v);
    if (v->kind != UB_V_DATA || !t || t->scalar != UB_SC_REF)
        return 0;
    const char *what = t->id == UB_TY_PAYLOAD ? "payload" : "reference";
    unsigned n = 0;
    for (uint32_t i = 0; i < v->count; i++) {
        const ub_reference *r = ub_value_elem(v, i);
        if (ub_offset_reads(r->offset))
            continue;
        n++;
        if (d)
            ub_offset_warn_unreadable(d, loc, r->offset, what,
                                      r->asset ? r->asset : "");
    }
    return n;
}

/* Each list op part or the one value of v, as ub_refs_unreadable. */
static unsigned ub_value_refs_unreadable(ub_diags *d, ub_loc loc,
                                         const ub_value *v)
{
    if (v->kind == UB_V_DATA)
        return ub_refs_unreadable(d, loc, v);
    unsigned n = 0;
    if (v->kind == UB_V_LISTOP && v->u.listop)
        for (int part = 0; part < UB_LO_NPARTS; part++)
            if (v->u.listop->has[part])
                n += ub_refs_unreadable(d, loc,
                                        ub_listop_get(v->u.listop, part));
    return n;
}

bool ub_value_offsets_unreadable(const ub_value *v)
{
    return ub_value_refs_unreadable(NULL, (ub_loc){NULL, 0, 0}, v) != 0;
}

void ub_value_warn_unreadable_offsets(ub_diags *d, ub_loc loc,
                                      const ub_value *v)
{
    ub_value_refs_unreadable(d, loc, v);
}

const char *ub_value_not_in_dict(const ub_value *v)
{
    const ub_type *t = ub_value_type(v);
    switch (v->kind) {
    case UB_V_DICT:
        return NULL;
    case UB_V_DATA:
        if (!t)
            return "data without a type";
        if (t->scalar == UB_SC_REF)
            return "references or payloads";
        if (t->id == UB_TY_PATH)
            return "paths";
        if (t->scalar == UB_SC_OPAQUE)
            return "an opaque value";
        return NULL;
    case UB_V_BLOCK:
        return "None";
    case UB_V_LISTOP:
        return "a list op";
    case UB_V_UNTYPED:
        return "an unregistered value";
    case UB_V_EMPTY:
        break;
    }
    return "no value";
}

const char *ub_untyped_fault(const ub_untyped *u, int in)
{
    if (u->kind < UB_U_TUPLE && u->n)
        return "holds parts under an atom, string, asset or path";
    switch (u->kind) {
    case UB_U_PATH:
        if (in >= 0)
            return "holds a path inside a list or tuple (a path is a whole "
                   "value)";
        return ub_ident_path_value_ok(u->text)
                   ? NULL
                   : "holds a path that is not well formed";
    case UB_U_ASSET:
        return ub_ident_asset_problem(u->text, strlen(u->text))
                   ? "holds an asset path the text cannot hold"
                   : NULL;
    case UB_U_TUPLE:
        return u->n ? NULL : "holds an empty tuple";
    case UB_U_LIST:
        if (in == UB_U_TUPLE)
            return "holds a list inside a tuple";
        return u->n || in < 0 ? NULL : "holds an empty list inside a list";
    default:
        return NULL;
    }
}

/* Floating-point components, told apart by what they print as: a
 * quaternion (real part first) or a plain tuple; 0 for other scalars. */
static int ub_float_kind(const ub_type *t)
{
    if (t->scalar != UB_SC_HALF && t->scalar != UB_SC_FLOAT &&
        t->scalar != UB_SC_DOUBLE)
        return 0;
    bool quat = t->base == UB_TY_QUATH || t->base == UB_TY_QUATF ||
                t->base == UB_TY_QUATD;
    return quat ? 2 : 1;
}

int ub_value_retype(ub_arena *a, ub_value *v, const ub_type *want)
{
    const ub_type *got = v->kind == UB_V_DATA ? ub_value_type(v) : NULL;
    if (!want || !got)
        return 0;
    if (got->base == want->base ||
        (want->id == UB_TY_TIMECODE && got->id == UB_TY_DOUBLE)) {
        ub_value_set_type(v, want);
    } else if (ub_float_kind(got) &&
               ub_float_kind(got) == ub_float_kind(want) &&
               got->rows == want->rows && got->cols == want->cols) {
        ub_value w = ub_value_new(a, want, v->count, v->is_array);
        if (w.kind != UB_V_DATA)
            return -1;
        for (uint32_t i = 0; i < v->count; i++)
            for (unsigned k = 0; k < ub_type_ncomp(want); k++)
                ub_value_set_double(&w, i, k, ub_value_get_double(v, i, k));
        *v = w;
    }
    return 0;
}

bool ub_value_equal(const ub_value *a, const ub_value *b)
{
    return ub_value_cmp(a, b, 0.0);
}

bool ub_value_close(const ub_value *a, const ub_value *b, double rel_tol)
{
    return ub_value_cmp(a, b, rel_tol);
}

/* Type names OpenUSD still reads from old files.  Most map to today's
 * name; a few (Transform, PointIndex, ...) keep their name because no
 * current type has their role, but store as the type given here. */
static const struct ub_legacy_type {
    const char *name;
    ub_type_id id;
    bool keep_name;
} ub_legacy_types[] = {
    {"Vec2i", UB_TY_INT2, 0},       {"Vec2h", UB_TY_HALF2, 0},
    {"Vec2f", UB_TY_FLOAT2, 0},     {"Vec2d", UB_TY_DOUBLE2, 0},
    {"Vec3i", UB_TY_INT3, 0},       {"Vec3h", UB_TY_HALF3, 0},
    {"Vec3f", UB_TY_FLOAT3, 0},     {"Vec3d", UB_TY_DOUBLE3, 0},
    {"Vec4i", UB_TY_INT4, 0},       {"Vec4h", UB_TY_HALF4, 0},
    {"Vec4f", UB_TY_FLOAT4, 0},     {"Vec4d", UB_TY_DOUBLE4, 0},
    {"Point", UB_TY_POINT3D, 0},    {"PointFloat", UB_TY_POINT3F, 0},
    {"Normal", UB_TY_NORMAL3D, 0},  {"NormalFloat", UB_TY_NORMAL3F, 0},
    {"Vector", UB_TY_VECTOR3D, 0},  {"VectorFloat", UB_TY_VECTOR3F, 0},
    {"Color", UB_TY_COLOR3D, 0},    {"ColorFloat", UB_TY_COLOR3F, 0},
    {"Quath", UB_TY_QUATH, 0},      {"Quatf", UB_TY_QUATF, 0},
    {"Quatd", UB_TY_QUATD, 0},      {"Matrix2d", UB_TY_MATRIX2D, 0},
    {"Matrix3d", UB_TY_MATRIX3D, 0}, {"Matrix4d", UB_TY_MATRIX4D, 0},
    {"Frame", UB_TY_FRAME4D, 0},    {"Transform", UB_TY_MATRIX4D, 1},
    {"PointIndex", UB_TY_INT, 1},   {"EdgeIndex", UB_TY_INT, 1},
    {"FaceIndex", UB_TY_INT, 1},
};

static const ub_type *ub_legacy_type(const char *name, size_t len,
                                     bool *keep_name)
{
    for (size_t i = 0; i < sizeof ub_legacy_types / sizeof *ub_legacy_types;
         i++)
        if (strlen(ub_legacy_types[i].name) == len &&
            memcmp(ub_legacy_types[i].name, name, len) == 0) {
            *keep_name = ub_legacy_types[i].keep_name;
            return ub_type_get(ub_legacy_types[i].id);
        }
    return NULL;
}

const ub_type *ub_type_of_attr_name(const char *name, size_t len,
                                    bool *renamed)
{
    *renamed = false;
    const ub_type *t = ub_type_by_name(name, len);
    if (t)
        return t->id == UB_TY_DICTIONARY ? NULL : t;
    bool keep = true;
    t = ub_legacy_type(name, len, &keep);
    *renamed = t && !keep;
    return t;
}
