/*
 * ub_value — the typed value model shared by the parser, every compiler
 * pass, both writers and the binary reader.
 *
 * A value is parsed once, to its declared type (float stays float, half
 * stays half), and stored contiguously: a float3[] of n points is 3n floats
 * in a row, which is what the writers, the binary encoder and the runtime's
 * interpolation all want.  Role types (point3f, color3f, ...) have their own
 * ub_type so the authored type name is never lost, but share storage and
 * equality with their base type (float3).
 */
#ifndef UB_VALUE_H
#define UB_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ub_arena.h"
#include "ub_diag.h"

/* How one component is stored. */
typedef enum ub_scalar {
    UB_SC_NONE = 0,
    UB_SC_BOOL,   /* uint8_t, 0 or 1 */
    UB_SC_UCHAR,  /* uint8_t */
    UB_SC_INT,    /* int32_t */
    UB_SC_UINT,   /* uint32_t */
    UB_SC_INT64,  /* int64_t */
    UB_SC_UINT64, /* uint64_t */
    UB_SC_HALF,   /* uint16_t, IEEE 754 binary16 bits */
    UB_SC_FLOAT,  /* float */
    UB_SC_DOUBLE, /* double (also timecode) */
    UB_SC_STRING, /* const char *, interned (string, token, asset, path,
                     pathExpression: the type says which) */
    UB_SC_REF,    /* ub_reference (references and payload list ops) */
    UB_SC_DICT,   /* ub_dict * (only as a dictionary value's element) */
    UB_SC_OPAQUE, /* no storage: opaque values cannot be authored */
} ub_scalar;

/* Every value type usdbake knows: OpenUSD's SDF_VALUE_TYPES, their roles,
 * and the element types of metadata-only values. */
typedef enum ub_type_id {
    UB_TY_INVALID = 0,
    /* scalars */
    UB_TY_BOOL, UB_TY_UCHAR, UB_TY_INT, UB_TY_UINT, UB_TY_INT64,
    UB_TY_UINT64, UB_TY_HALF, UB_TY_FLOAT, UB_TY_DOUBLE, UB_TY_TIMECODE,
    UB_TY_STRING, UB_TY_TOKEN, UB_TY_ASSET, UB_TY_OPAQUE,
    UB_TY_PATH_EXPRESSION,
    /* dimensioned */
    UB_TY_MATRIX2D, UB_TY_MATRIX3D, UB_TY_MATRIX4D,
    UB_TY_QUATH, UB_TY_QUATF, UB_TY_QUATD,
    UB_TY_INT2, UB_TY_HALF2, UB_TY_FLOAT2, UB_TY_DOUBLE2,
    UB_TY_INT3, UB_TY_HALF3, UB_TY_FLOAT3, UB_TY_DOUBLE3,
    UB_TY_INT4, UB_TY_HALF4, UB_TY_FLOAT4, UB_TY_DOUBLE4,
    /* roles (base type in parentheses) */
    UB_TY_POINT3H, UB_TY_POINT3F, UB_TY_POINT3D,       /* Point  (3) */
    UB_TY_NORMAL3H, UB_TY_NORMAL3F, UB_TY_NORMAL3D,    /* Normal (3) */
    UB_TY_VECTOR3H, UB_TY_VECTOR3F, UB_TY_VECTOR3D,    /* Vector (3) */
    UB_TY_COLOR3H, UB_TY_COLOR3F, UB_TY_COLOR3D,       /* Color  (3) */
    UB_TY_COLOR4H, UB_TY_COLOR4F, UB_TY_COLOR4D,       /* Color  (4) */
    UB_TY_TEXCOORD2H, UB_TY_TEXCOORD2F, UB_TY_TEXCOORD2D,
    UB_TY_TEXCOORD3H, UB_TY_TEXCOORD3F, UB_TY_TEXCOORD3D,
    UB_TY_FRAME4D,                                     /* Frame (matrix4d) */
    UB_TY_GROUP,                                       /* Group (opaque) */
    /* metadata-only element types (never an attribute's type) */
    UB_TY_PATH,      /* SdfPath, stored as its text, interned */
    UB_TY_REFERENCE, /* element of a references list op */
    UB_TY_PAYLOAD,   /* element of a payload list op */
    UB_TY_DICTIONARY,
    UB_TY_COUNT
} ub_type_id;

typedef struct ub_type {
    ub_type_id id;
    const char *name;   /* text-format name: "point3f", "dictionary" */
    ub_type_id base;    /* storage/equality type: point3f -> float3 */
    ub_scalar scalar;   /* component storage */
    uint8_t rows, cols; /* float3: 1x3, matrix4d: 4x4, scalars 1x1 */
    const char *role;   /* "Point", "Color", ... or NULL */
    bool interpolates;  /* linear interpolation between samples applies */
} ub_type;

const ub_type *ub_type_get(ub_type_id id);
/* The type named name[0..len) in a usda file ("float3", "color3f"), or NULL
 * when the name is not a known value type. */
const ub_type *ub_type_by_name(const char *name, size_t len);
/* The type an attribute declared `name[0..len) x` has, as the usda
 * reader gives it: the type so named (a dictionary is none), else the one
 * an old name stands for ("Vec3f", "PointFloat"), else NULL: an unknown
 * type, kept by its name.  *renamed: the type's own name replaces the old
 * one (OpenUSD keeps the old name, as Transform and PointIndex, only
 * where no current type has its role). */
const ub_type *ub_type_of_attr_name(const char *name, size_t len,
                                    bool *renamed);
/* Whether an attribute may be declared t[] (opaque and group have no
 * array form: the usda reader refuses `opaque[] x`). */
static inline bool ub_type_has_array(const ub_type *t)
{
    return t->base != UB_TY_OPAQUE;
}
/* Components in one element (3 for float3, 16 for matrix4d). */
static inline unsigned ub_type_ncomp(const ub_type *t)
{
    return (unsigned)t->rows * t->cols;
}
typedef struct ub_dict ub_dict;

/* A layer offset: time t in the referenced layer is t * scale + offset in
 * the referencing one. */
typedef struct ub_offset {
    double offset, scale;
} ub_offset;
#define UB_OFFSET_IDENTITY ((ub_offset){0.0, 1.0})
/* Why o is no layer offset the text can say (NaN offset or scale: no
 * number reads as one); NULL when it is one.  The binary readers hold
 * the offsets they read to it.  (An infinite one is kept: the usda
 * reader makes one of a number too large for a double, warning, as
 * OpenUSD does.) */
const char *ub_offset_problem(ub_offset o);
/* Whether x, a layer offset's offset or scale, prints as text the usda
 * reader reads back there: all but +inf, which prints as `inf`, a word
 * and not a number to OpenUSD's reader and ours (`-inf` reads).  The
 * readers warn where they make or meet one. */
bool ub_offset_num_reads(double x);
/* The binary readers' warning of a layer offset o that does not read
 * back as text (ub_offset_num_reads), at loc: `what` is "sublayer",
 * "reference" or "payload", asset "" for an internal one.  Nothing
 * when o reads back. */
void ub_offset_warn_unreadable(ub_diags *d, ub_loc loc, ub_offset o,
                               const char *what, const char *asset);

/* Element of a references or payload list op. */
typedef struct ub_reference {
    const char *asset;     /* interned; "" for an internal reference */
    const char *prim_path; /* interned; "" for the default prim */
    ub_offset offset;
    bool has_offset, has_scale; /* authored (writers print only these) */
    ub_dict *custom_data;  /* NULL when none (payloads never have one) */
    ub_sloc loc;
} ub_reference;

/* Bytes of one component / of one element.  Inline: every access to a
 * value's data asks (ub_value_data). */
static inline size_t ub_scalar_size(ub_scalar s)
{
    static const uint8_t size[] = {
        [UB_SC_BOOL] = 1, [UB_SC_UCHAR] = 1, [UB_SC_HALF] = 2,
        [UB_SC_INT] = 4, [UB_SC_UINT] = 4, [UB_SC_FLOAT] = 4,
        [UB_SC_INT64] = 8, [UB_SC_UINT64] = 8, [UB_SC_DOUBLE] = 8,
        [UB_SC_STRING] = sizeof(const char *),
        [UB_SC_REF] = sizeof(ub_reference),
        [UB_SC_DICT] = sizeof(void *),
        [UB_SC_OPAQUE] = 0, [UB_SC_NONE] = 0,
    };
    return size[s];
}
static inline size_t ub_type_elem_size(const ub_type *t)
{
    return ub_scalar_size(t->scalar) * ub_type_ncomp(t);
}

/* --- values -------------------------------------------------------------- */

typedef enum ub_vkind {
    UB_V_EMPTY = 0, /* nothing authored */
    UB_V_BLOCK,     /* None: a value block */
    UB_V_DATA,      /* typed data, scalar or array */
    UB_V_DICT,      /* a dictionary */
    UB_V_LISTOP,    /* a list op (metadata and relationship targets) */
    UB_V_UNTYPED,   /* a value of an unknown type, kept as its text tree */
} ub_vkind;

/* DATA of at most this many bytes is kept inside its ub_value. */
#define UB_VALUE_INLINE 8
typedef struct ub_listop ub_listop;
typedef struct ub_untyped ub_untyped;

/* 16 bytes: a layer holds millions of these (every field, dictionary
 * entry, default and sample has one), so the type is kept as its id in
 * the word the small fields share, not as a pointer beside them.  Read it
 * with ub_value_type, set it with ub_value_set_type. */
typedef struct ub_value {
    uint8_t kind;     /* ub_vkind */
    bool is_array;    /* DATA: declared as T[] (even with one element) */
    uint8_t type_id;  /* ub_type_id: DATA: declared type; LISTOP: element
                         type; UB_TY_INVALID (no type) otherwise */
    uint32_t count;   /* DATA: elements (1 for a scalar) */
    union {
        /* DATA: count * ub_type_elem_size(type) bytes, kept in the value
         * itself when they fit (most scalars: a layer has a value per
         * field and property, and a separate block for each was a tenth
         * of the model), else out of line.  Private: read them through
         * ub_value_data, set them through ub_value_set_data. */
        union {
            /* one member per element type written through a pointer
             * from ub_value_data: stores through a double * (say) may
             * then alias the value, as C's aliasing rules require */
            unsigned char bytes[UB_VALUE_INLINE];
            uint16_t halves[UB_VALUE_INLINE / 2];
            int32_t ints[UB_VALUE_INLINE / 4];
            uint32_t uints[UB_VALUE_INLINE / 4];
            float floats[UB_VALUE_INLINE / 4];
            int64_t int64;
            uint64_t uint64;
            double dbl;
            const char *str;
            ub_dict *dict;
        } in_line;
        void *out_of_line;
        ub_dict *dict;
        ub_listop *listop;
        ub_untyped *untyped;
    } u;
} ub_value;
_Static_assert(UB_TY_COUNT <= 256, "ub_value.type_id is one byte");

/* The types by id (what ub_type_get reads), for the inline accessors. */
extern const ub_type ub_type_table[UB_TY_COUNT];

/* v's type: DATA's declared type, a LISTOP's element type; NULL when it
 * has none. */
static inline const ub_type *ub_value_type(const ub_value *v)
{
    return v->type_id ? &ub_type_table[v->type_id] : NULL;
}
/* What type_id holds for t (NULL: no type). */
static inline uint8_t ub_type_id_of(const ub_type *t)
{
    return t ? (uint8_t)t->id : (uint8_t)UB_TY_INVALID;
}
static inline void ub_value_set_type(ub_value *v, const ub_type *t)
{
    v->type_id = ub_type_id_of(t);
}

/* Bytes of v's data (DATA values). */
static inline size_t ub_value_bytes(const ub_value *v)
{
    const ub_type *t = ub_value_type(v);
    return t ? (size_t)v->count * ub_type_elem_size(t) : 0;
}
/* Whether v's data is kept inside v.  It follows from the type and the
 * count alone: change either only through the functions below. */
static inline bool ub_value_is_inline(const ub_value *v)
{
    return ub_value_bytes(v) <= UB_VALUE_INLINE;
}
/* v's data (DATA values).  When it is kept inside v, the pointer is into
 * v: good only while v is where it was, so take it from the value that
 * stays, not from a copy on its way somewhere else. */
static inline void *ub_value_data(const ub_value *v)
{
    return ub_value_is_inline(v) ? (void *)(uintptr_t)&v->u.in_line
                                 : v->u.out_of_line;
}
/* Give v (kind, type and count already set) the data at p: copied in when
 * it fits, else referenced (p must then live as long as v). */
static inline void ub_value_set_data(ub_value *v, const void *p)
{
    if (ub_value_is_inline(v)) {
        size_t n = ub_value_bytes(v);
        if (n)
            memcpy(&v->u.in_line, p, n);
    } else {
        v->u.out_of_line = (void *)(uintptr_t)p;
    }
}
/* A DATA value of count elements of type t, holding the data at p (as
 * ub_value_set_data does). */
static inline ub_value ub_value_wrap(const ub_type *t, uint32_t count,
                                     bool is_array, const void *p)
{
    ub_value v = {.kind = UB_V_DATA, .is_array = is_array,
                  .type_id = ub_type_id_of(t), .count = count};
    ub_value_set_data(&v, p);
    return v;
}
/* Keep the first n (<= count) elements of v. */
static inline void ub_value_truncate(ub_value *v, uint32_t n)
{
    if (ub_value_is_inline(v)) {
        v->count = n;
        return;
    }
    void *p = v->u.out_of_line;
    v->count = n;
    ub_value_set_data(v, p);
}
/* Element i's storage (DATA values). */
static inline void *ub_value_elem(const ub_value *v, uint32_t i)
{
    return (char *)ub_value_data(v) +
           (size_t)i * ub_type_elem_size(ub_value_type(v));
}
/* String-typed element i (string, token, asset, path). */
static inline const char *ub_value_str(const ub_value *v, uint32_t i)
{
    return ((const char *const *)ub_value_data(v))[i];
}

/* A dictionary keeps authored order; keys are unique (a later assignment
 * of a key replaces the earlier one in place).  Writers sort as OpenUSD
 * does. */
typedef struct ub_dict_entry {
    const char *key; /* interned */
    ub_value value;  /* DATA with its declared type, DICT, or BLOCK */
    ub_sloc loc;
} ub_dict_entry;

struct ub_dict {
    uint32_t n, cap;
    ub_dict_entry *e;
};
_Static_assert(sizeof(void *) != 8 || sizeof(ub_dict_entry) == 32,
               "ub_dict_entry: key, value, stored location");

/* List op: an explicit list, or the edits add/prepend/append/delete/
 * reorder.  Each part is a DATA array of the list op's element type;
 * `has` tells an authored empty list from no list at all.  A layer holds
 * one list op per relationship and per apiSchemas, most with one part, so
 * only the parts ever set take room: read them with ub_listop_part and
 * ub_listop_loc (an unset part reads as EMPTY at no location), set them
 * with ub_listop_assign. */
typedef enum ub_listop_part {
    UB_LO_EXPLICIT = 0,
    UB_LO_DELETE,
    UB_LO_ADD,
    UB_LO_PREPEND,
    UB_LO_APPEND,
    UB_LO_REORDER,
    UB_LO_NPARTS
} ub_listop_part;

typedef struct ub_listop_entry {
    ub_value value;
    ub_sloc loc;
} ub_listop_entry;

struct ub_listop {
    bool is_explicit;
    bool has[UB_LO_NPARTS];
    uint8_t n, cap;           /* private: entries used / allocated */
    uint8_t at[UB_LO_NPARTS]; /* private: part -> entry + 1, 0 unset */
    ub_listop_entry *e;       /* private */
};

_Static_assert(sizeof(void *) != 8 || sizeof(ub_listop_entry) == 24,
               "ub_listop_entry: value, stored location");

/* A value and an entry that are EMPTY (what unset parts read as). */
extern const ub_listop_entry ub_listop_entry_none;

static inline const ub_value *ub_listop_get(const ub_listop *lo,
                                            ub_listop_part p)
{
    return lo->at[p] ? &lo->e[lo->at[p] - 1].value
                     : &ub_listop_entry_none.value;
}
/* Whether two items of v, a list of items, are the same (a list op's
 * part may not repeat one: the usda reader refuses `[a, a]`).  Lists of
 * over 4096 items pass unchecked: the check is quadratic. */
bool ub_value_items_dup(const ub_value *v);
/* The same of any part of list op v. */
bool ub_listop_has_dup(const ub_value *v);
/* The first item of list op v's parts (all of them, in part order) that
 * ok refuses, or NULL when it takes every one; v's items are strings
 * (tokens, paths, ...). */
const char *ub_listop_str_refused(const ub_value *v,
                                  bool (*ok)(const char *item));
/* Whether part p holds no items: never set, or set to an empty list
 * (`append x = None`).  OpenUSD keeps a part as a list, so the two are
 * the same list op to it (equality, and what the text prints). */
static inline bool ub_listop_part_empty(const ub_listop *lo, ub_listop_part p)
{
    if (!lo->has[p] || !lo->at[p])
        return true;
    const ub_value *v = &lo->e[lo->at[p] - 1].value;
    return v->kind == UB_V_EMPTY || (v->kind == UB_V_DATA && v->count == 0);
}
static inline ub_sloc ub_listop_loc(const ub_listop *lo, ub_listop_part p)
{
    return lo->at[p] ? lo->e[lo->at[p] - 1].loc : ub_listop_entry_none.loc;
}
/* Part p for changing in place; NULL when it was never set. */
static inline ub_value *ub_listop_get_mut(ub_listop *lo, ub_listop_part p)
{
    return lo->at[p] ? &lo->e[lo->at[p] - 1].value : NULL;
}
/* Set part p's value and location (`has` is the caller's).  -1 when out of
 * memory. */
int ub_listop_assign(ub_arena *a, ub_listop *lo, ub_listop_part p,
                     ub_value value, ub_sloc loc);
int ub_listop_put(ub_arena *a, ub_listop *lo, ub_listop_part p,
                  ub_value value); /* keeps the location */
int ub_listop_set_loc(ub_arena *a, ub_listop *lo, ub_listop_part p,
                      ub_sloc loc);
/* A copy of lo whose parts can be set apart from lo's (values are shared,
 * not cloned); NULL when out of memory. */
ub_listop *ub_listop_copy(ub_arena *a, const ub_listop *lo);

/* A value of a type usdbake does not know (e.g. "ThisType::IsBogus"): kept
 * as the tree of atoms, tuples and lists it was written as, so it survives
 * a round trip. */
typedef enum ub_untyped_kind {
    UB_U_ATOM,  /* identifier or number, as written */
    UB_U_STRING,/* quoted string; text is the unescaped value */
    UB_U_ASSET, /* @asset@; text is the path */
    UB_U_PATH,  /* <path> */
    UB_U_TUPLE, /* ( ... ) */
    UB_U_LIST,  /* [ ... ] */
} ub_untyped_kind;

struct ub_untyped {
    ub_untyped_kind kind;
    const char *text;   /* atoms, strings: interned */
    uint32_t n;         /* tuples, lists: children */
    ub_untyped *child;  /* array of n */
};

/* Constructors.  All memory comes from the arena. */
ub_value ub_value_block(void);
/* count elements of type t, zeroed; is_array as declared. */
ub_value ub_value_new(ub_arena *a, const ub_type *t, uint32_t count,
                      bool is_array);
ub_dict *ub_dict_new(ub_arena *a);
/* Set key to value, replacing an existing entry with the same key.
 * Returns the entry, or NULL when out of memory. */
ub_dict_entry *ub_dict_set(ub_arena *a, ub_dict *d, const char *key,
                           ub_value value, ub_sloc loc);
ub_dict_entry *ub_dict_find(const ub_dict *d, const char *key);
/* Room for `more` entries beyond the n set, at exactly that size: for a
 * reader that knows the count, so the list leaves no outgrown copies in
 * the arena.  -1 when out of memory. */
int ub_dict_reserve(ub_arena *a, ub_dict *d, uint32_t more);
ub_listop *ub_listop_new(ub_arena *a);

/* A list op's reorder (OpenUSD's SdfListOp "ordered items", which is also
 * how `reorder nameChildren` applies): each item the order names moves,
 * in the order's order, together with the unnamed items that follow it;
 * unnamed items before any named one stay first.  The n items must be
 * distinct; is(ctx, i, k) tells whether item i is order entry k (of m).
 * Writes the result as indices: perm[j] is the item now at position j.
 * Returns 0, or -1 when out of memory. */
int ub_reorder_perm(uint32_t n, uint32_t m,
                    bool (*is)(void *ctx, uint32_t item, uint32_t entry),
                    void *ctx, uint32_t *perm);
/* The same reorder of n distinct interned names in place, by an order
 * that is a token or string array (anything else changes nothing). */
int ub_reorder_names(const char **v, uint32_t n, const ub_value *order);

/* Deep copy of v into arena a (strings stay interned in the same table). */
ub_value ub_value_clone(ub_arena *a, const ub_value *v);

/* NULL when v may be an attribute's time sample: a block, an untyped
 * value (kept as its text), or data of a type attributes have.  Else what
 * v is, for a message ("a dictionary"): the text grammar cannot write
 * such a sample, but a binary layer can hold one, and its readers refuse
 * it, so no writer meets a sample it has no form for. */
const char *ub_value_not_sample(const ub_value *v);
/* The same for a dictionary's value, which the text writes after a type
 * name: data of a type a dictionary can name (not paths, references or
 * payloads), or a dictionary; not a block, a list op or an untyped
 * value. */
const char *ub_value_not_in_dict(const ub_value *v);
/* Whether a reference or payload v holds (a list op of them, or one)
 * has a layer offset that does not read back as text (as
 * ub_offset_num_reads); and ub_offset_warn_unreadable for each. */
bool ub_value_offsets_unreadable(const ub_value *v);
void ub_value_warn_unreadable_offsets(ub_diags *d, ub_loc loc,
                                      const ub_value *v);
/* Why u, a node of an untyped value inside a node of kind `in` (-1: u is
 * the value itself), is no part of a value the text can say, or NULL.
 * The grammar takes a path only as a whole value, and a well-formed or
 * empty one (the usda reader reads any other as the empty path); no list
 * inside a tuple; no empty tuple, nor an empty list inside another; no
 * parts under anything but a tuple or list; and asset paths it can
 * hold.  An atom's text is not looked at: a binary layer may keep what
 * OpenUSD recorded of a value it did not know (a whole `(1, 2)`), printed
 * as recorded. */
const char *ub_untyped_fault(const ub_untyped *u, int in);

/* Give v type `want` (a property's declared type) when v is stored as
 * its base (a point3f[] stored as float3[]), or as floating-point
 * components of another width in the same shape (a clip's doubles baked
 * into a float attribute): those are converted into a new value in a, as
 * the usda reader reads their text by the declared type.  Anything else
 * stays as it is (ub_prop_value_fault refuses it).  0, or -1 when out of
 * memory. */
int ub_value_retype(ub_arena *a, ub_value *v, const ub_type *want);

/* Equality as OpenUSD compares values: same kind, same base type, same
 * shape, equal elements (floats by value; NaN equals NaN so that a layer
 * compares equal to itself).  Role types compare equal to their base. */
bool ub_value_equal(const ub_value *a, const ub_value *b);
/* Like ub_value_equal, but floating-point components may differ by a
 * relative tolerance (used by the conformance comparison). */
bool ub_value_close(const ub_value *a, const ub_value *b, double rel_tol);

/* Half-precision conversions (IEEE 754 binary16, round to nearest even). */
float ub_half_to_float(uint16_t h);
uint16_t ub_float_to_half(float f);

/* Component c of element i as a double (numeric types only). */
double ub_value_get_double(const ub_value *v, uint32_t i, unsigned c);
/* Store x into component c of element i, rounding to the component's
 * storage type (numeric types only). */
void ub_value_set_double(ub_value *v, uint32_t i, unsigned c, double x);

#endif
