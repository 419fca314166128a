/*
 * ub_layer — one layer's scene description: the tree the parser builds,
 * the compiler passes rewrite or merge, and the writers print.
 *
 * Everything of a layer lives in its arena and is freed by ub_layer_free.
 * Names, tokens, paths and string values are interned in the ub_strtab the
 * layer was created with, which is shared by all layers of one run so that
 * passes combining layers compare names by pointer.
 *
 * Metadata keys are the text-format spellings ("references", "inherits",
 * "variants", "doc", "comment" for the bare layer/prim string, ...), so the
 * model reads like the file.  Orders are authored order; writers impose
 * OpenUSD's canonical order.
 *
 * Value shapes of the special fields (what the usda writer reads):
 *   "comment", "doc"        STRING scalar
 *   "references"/"payload"  LISTOP of REFERENCE / PAYLOAD
 *   "inherits"/"specializes" LISTOP of PATH
 *   "variantSets"           LISTOP of STRING (or TOKEN)
 *   "variants"              DICT of STRING values
 *   "relocates"             DATA array of PATH, 2n elements: source0,
 *                           target0, source1, ...; "" for <>.  Paths are
 *                           absolute as OpenUSD stores them (a prim's are
 *                           anchored at the prim); the writer makes a
 *                           prim's relative again and sorts them
 *   "permission", "symmetryFunction", "displayUnit"  TOKEN scalar, printed
 *                           bare
 *   "prefixSubstitutions"/"suffixSubstitutions"  DICT of STRING values
 *   bool-valued fields      BOOL scalar (printed true/false)
 *   unknown fields          their typed value, or UNTYPED
 * Relationship targets, connections and list-op paths are stored absolute.
 */
#ifndef UB_LAYER_H
#define UB_LAYER_H

#include "ub_arena.h"
#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_value.h"

/* How deep a layer may nest: prims (a variant counts as a level) and,
 * separately, dictionaries inside a value.  The readers refuse deeper
 * input with a located error, so that the passes and writers, which
 * recurse over prims and values, have a bounded stack whatever the input.
 * Real scenes nest a few dozen levels. */
#define UB_MAX_NESTING 1000

/* An ordered set of metadata fields, unique by key. */
typedef struct ub_field {
    const char *key; /* interned */
    ub_value value;
    ub_sloc loc;
} ub_field;

typedef struct ub_fields {
    uint32_t n, cap;
    ub_field *v;
} ub_fields;

/* Time samples: sorted by time (a nan time, which check reports, last),
 * times unique (a later sample at the same time replaces an earlier one, as
 * OpenUSD's map does).  A sample value may be a BLOCK. */
typedef struct ub_sample {
    double time;
    ub_value value;
} ub_sample;

typedef struct ub_samples {
    bool authored; /* `.timeSamples = { }` is authored even when empty */
    uint32_t n, cap;
    ub_sample *v;
    ub_sloc loc;
} ub_samples;

typedef enum ub_prop_kind { UB_ATTR = 0, UB_REL = 1 } ub_prop_kind;

typedef enum ub_variability {
    UB_VARYING = 0, /* the default; written without a keyword */
    UB_UNIFORM = 1,
    UB_CONFIG = 2,  /* legacy `config`, read as uniform by OpenUSD */
} ub_variability;

/* Required fields a spec leaves out (ub_prim.unwritten, ub_prop.unwritten):
 * they read as their fallbacks (over, not custom, varying), which is what
 * the model then holds.  OpenUSD's text reader writes them (all but a
 * relationship's custom, written only when true); a crate file need not,
 * and its crate copy leaves out the same ones (the same layer, fewer
 * fields).  Set by the crate reader alone; 0 everywhere else. */
enum {
    UB_UNWRITTEN_SPECIFIER = 1,
    UB_UNWRITTEN_CUSTOM = 2,
    UB_UNWRITTEN_VARIABILITY = 4,
};

/* What only some properties author, kept out of line: a layer has a
 * property record for every attribute, and most have a default and
 * nothing else.  It is allocated in three sizes, each a prefix of the
 * next, so that a property pays only for the parts it uses: metadata
 * (an attribute with a doc string), then the short part (every
 * relationship has targets), then the attribute part.  Read through
 * ub_prop_meta, ub_prop_samples, ub_prop_connections, ub_prop_targets,
 * ub_prop_default_target and ub_prop_type_name (EMPTY / NULL when the
 * property has none); change through ub_prop_meta_get,
 * ub_prop_rel_ext_get and ub_prop_ext_get, each of which allocates its
 * size. */
typedef struct ub_prop_ext {
    /* the metadata part */
    ub_fields meta; /* everything inside ( ... ) */
    /* the short part */
    const char *type_name;      /* an attribute's type name when it is not
                                   its type's own (an unknown type, a
                                   legacy name OpenUSD keeps); else NULL */
    ub_value targets;           /* LISTOP of UB_TY_PATH, or EMPTY */
    const char *default_target; /* `rel r.default = </p>`; NULL when none */
    /* the attribute part */
    ub_samples samples;
    ub_value connections; /* LISTOP of UB_TY_PATH, or EMPTY */
} ub_prop_ext;

/* How much of a property's ub_prop_ext is allocated. */
typedef enum ub_prop_ext_part {
    UB_PEXT_NONE = 0,  /* ext is NULL */
    UB_PEXT_META = 1,  /* meta */
    UB_PEXT_SHORT = 2, /* meta to default_target */
    UB_PEXT_WHOLE = 3,
} ub_prop_ext_part;

typedef struct ub_prop {
    const char *name;      /* interned, may be namespaced ("xformOp:translate") */
    uint8_t kind;          /* ub_prop_kind */
    uint8_t variability;   /* ub_variability */
    bool custom;
    bool varying_keyword;  /* relationship declared `varying rel` */
    bool is_array;         /* attributes: declared T[] */
    uint8_t ext_part;      /* private: ub_prop_ext_part of ext */
    uint8_t unwritten;     /* UB_UNWRITTEN_CUSTOM, _VARIABILITY */
    /* attributes */
    uint8_t type_id;       /* ub_type_id; UB_TY_INVALID when the type name
                              is unknown: read it with ub_prop_type (an id
                              in the flags' word, not a pointer beside
                              them: a layer has a record per property).
                              The type name is ub_prop_type_name's: it
                              takes room only when it is not the type's */
    ub_value
        default_value; /* EMPTY, BLOCK or DATA (UNTYPED when no type) */
    ub_sloc loc;
    ub_prop_ext *ext; /* NULL until one of its fields is set */
} ub_prop;

/* A layer has one of these per field and per property (ub_bench mem):
 * their sizes are part of the model's memory. */
_Static_assert(sizeof(void *) != 8 || sizeof(ub_field) == 32,
               "ub_field: key, value, stored location");
_Static_assert(sizeof(void *) != 8 || sizeof(ub_prop) == 48,
               "ub_prop: 48 bytes");

/* p's declared type; NULL when its type name is unknown (and for
 * relationships). */
static inline const ub_type *ub_prop_type(const ub_prop *p)
{
    return p->type_id ? &ub_type_table[p->type_id] : NULL;
}

/* Why v, attribute p's default (t NaN) or its sample at time t, is no
 * value the text can say there ("the sample at time 1 is of type
 * double3, where the attribute's is float"); NULL when it is one.  The
 * usda reader reads a value by the attribute's type, so a value of
 * another type would print as text it refuses; the binary readers hold
 * what they read to this (after ub_value_retype).  The message is made
 * in buf (cap bytes; 160 are enough). */
/* Why v, a property's targets or connections (EMPTY when none), is no
 * list the text can say there; NULL when it is one.  The usda reader
 * makes every such path absolute and refuses variant selections and
 * target paths (ub_ident_target_path_ok).  The message is made in buf
 * (cap bytes). */
const char *ub_prop_paths_fault(const ub_value *v, char *buf, size_t cap);

const char *ub_prop_value_fault(const ub_prop *p, const ub_value *v,
                                double t, char *buf, size_t cap);
/* An ub_prop_ext with nothing authored (what a property without one reads). */
extern const ub_prop_ext ub_prop_ext_none;

/* The short part (none when ext is only a metadata part). */
static inline const ub_prop_ext *ub_prop_ext_of(const ub_prop *p)
{
    return p->ext_part >= UB_PEXT_SHORT ? p->ext : &ub_prop_ext_none;
}
/* p's metadata (an empty list when it has none). */
static inline const ub_fields *ub_prop_meta(const ub_prop *p)
{
    return p->ext_part >= UB_PEXT_META ? &p->ext->meta
                                       : &ub_prop_ext_none.meta;
}
/* p's type name as authored, without "[]": interned in t (the table p's
 * layer uses); NULL for a relationship and an attribute without one. */
static inline const char *ub_prop_type_name(const ub_strtab *t,
                                            const ub_prop *p)
{
    const char *n = ub_prop_ext_of(p)->type_name;
    return n ? n : ub_strtab_type_name(t, p->type_id);
}
/* The same as text, for printing (the type's own name is the type
 * table's, not interned: never compare it by pointer). */
static inline const char *ub_prop_type_spelling(const ub_prop *p)
{
    const char *n = ub_prop_ext_of(p)->type_name;
    return n ? n : p->type_id ? ub_type_table[p->type_id].name : NULL;
}
/* Whether p and q were declared with the same type name (and so the same
 * type). */
static inline bool ub_prop_same_type_name(const ub_prop *p, const ub_prop *q)
{
    return p->type_id == q->type_id &&
           ub_prop_ext_of(p)->type_name == ub_prop_ext_of(q)->type_name;
}
/* Set p's type and its type name (interned in t; NULL for none).  The
 * name is kept out of line only when it is not type's own.  -1 when out
 * of memory. */
int ub_prop_set_decl(ub_arena *a, const ub_strtab *t, ub_prop *p,
                     const ub_type *type, const char *type_name);
/* Give p the type and type name of q. -1 when out of memory. */
int ub_prop_copy_decl(ub_arena *a, ub_prop *p, const ub_prop *q);
/* The attribute part (none when ext is a shorter part). */
static inline const ub_prop_ext *ub_prop_ext_attr(const ub_prop *p)
{
    return p->ext_part == UB_PEXT_WHOLE ? p->ext : &ub_prop_ext_none;
}
static inline const ub_samples *ub_prop_samples(const ub_prop *p)
{
    return &ub_prop_ext_attr(p)->samples;
}
static inline const ub_value *ub_prop_connections(const ub_prop *p)
{
    return &ub_prop_ext_attr(p)->connections;
}
static inline const ub_value *ub_prop_targets(const ub_prop *p)
{
    return &ub_prop_ext_of(p)->targets;
}
static inline const char *ub_prop_default_target(const ub_prop *p)
{
    return ub_prop_ext_of(p)->default_target;
}
/* p's out-of-line fields for changing, allocated from a (zeroed) the first
 * time (a shorter part is moved into a whole one); NULL only when out of
 * memory.  A pointer into it is good until the next call for p. */
ub_prop_ext *ub_prop_ext_get(ub_arena *a, ub_prop *p);
/* The same for setting only the short part (targets, default_target,
 * type_name) and the metadata: at least that much is allocated.  Nothing
 * else of it may be touched. */
ub_prop_ext *ub_prop_rel_ext_get(ub_arena *a, ub_prop *p);
/* The same for p's metadata only. */
ub_fields *ub_prop_meta_get(ub_arena *a, ub_prop *p);
/* Make *m p's metadata (a list built elsewhere; an empty one takes no
 * room).  -1 when out of memory. */
int ub_prop_set_meta(ub_arena *a, ub_prop *p, const ub_fields *m);

typedef struct ub_props {
    uint32_t n, cap;
    ub_prop **v;
} ub_props;

typedef enum ub_specifier {
    UB_DEF = 0,
    UB_OVER = 1,
    UB_CLASS = 2,
} ub_specifier;

typedef struct ub_prim ub_prim;

typedef struct ub_prims {
    uint32_t n, cap;
    ub_prim **v;
} ub_prims;

/* `variantSet "name" = { "a" { ... } "b" { ... } }`.  Each variant's body
 * is a ub_prim (its name is the variant name, its specifier OVER) so every
 * construct allowed in a prim is allowed in a variant. */
typedef struct ub_variant_set {
    const char *name;
    ub_prims variants;
    ub_sloc loc;
} ub_variant_set;

/* What few prims have, kept out of line (a layer may have millions of
 * prims, nearly all without variant sets or reorder statements).  Read
 * through ub_prim_variant_sets, ub_prim_n_variant_sets,
 * ub_prim_prim_order, ub_prim_property_order and ub_prim_variant_set;
 * change through ub_prim_ext_get (variant sets: ub_variant_set_get). */
typedef struct ub_prim_ext {
    uint32_t n_variant_sets, cap_variant_sets;
    ub_variant_set *variant_sets;
    ub_value prim_order;     /* `reorder nameChildren = [...]`: token array */
    ub_value property_order; /* `reorder properties = [...]`: token array */
    const char *variant_set; /* a variant's body: the set it belongs to */
} ub_prim_ext;

struct ub_prim {
    const char *name;        /* interned; "" for the pseudo-root */
    uint8_t specifier;       /* ub_specifier */
    uint8_t unwritten;       /* UB_UNWRITTEN_SPECIFIER */
    const char *type_name;   /* interned; NULL when not authored */
    ub_fields meta;          /* everything inside ( ... ) */
    ub_props props;
    ub_prims children;
    ub_prim *parent; /* NULL for the pseudo-root */
    ub_sloc loc;
    ub_prim_ext *ext; /* NULL until one of its fields is set */
};

_Static_assert(sizeof(void *) != 8 || sizeof(ub_prim) == 96,
               "ub_prim: 96 bytes");

/* An ub_prim_ext with nothing set (what a prim without one reads). */
extern const ub_prim_ext ub_prim_ext_none;

static inline const ub_prim_ext *ub_prim_ext_of(const ub_prim *p)
{
    return p->ext ? p->ext : &ub_prim_ext_none;
}
static inline uint32_t ub_prim_n_variant_sets(const ub_prim *p)
{
    return ub_prim_ext_of(p)->n_variant_sets;
}
/* The variant sets' array (n_variant_sets of them; NULL when none). */
static inline ub_variant_set *ub_prim_variant_sets(const ub_prim *p)
{
    return ub_prim_ext_of(p)->variant_sets;
}
static inline const ub_value *ub_prim_prim_order(const ub_prim *p)
{
    return &ub_prim_ext_of(p)->prim_order;
}
static inline const ub_value *ub_prim_property_order(const ub_prim *p)
{
    return &ub_prim_ext_of(p)->property_order;
}
static inline const char *ub_prim_variant_set(const ub_prim *p)
{
    return ub_prim_ext_of(p)->variant_set;
}
/* p's out-of-line fields for changing, allocated from a (zeroed) the first
 * time; NULL only when out of memory. */
ub_prim_ext *ub_prim_ext_get(ub_arena *a, ub_prim *p);

/* An entry of the layer's subLayers list, with its layer offset. */
typedef struct ub_sublayer {
    const char *asset;   /* interned, as authored */
    ub_offset offset;
    bool has_offset, has_scale;
    ub_sloc loc;
} ub_sublayer;

typedef struct ub_layer {
    ub_arena *arena;       /* owns everything below */
    ub_strtab *strtab;     /* shared; not owned */
    const char *path;      /* as given by the caller ("-" for stdin) */
    const char *source;    /* the text it was parsed from, if kept; */
    size_t source_len;     /*   used to quote lines in later diagnostics */
    ub_fields meta;        /* layer metadata except subLayers */
    bool has_sublayers;    /* `subLayers = []` is authored even if empty */
    uint32_t n_sublayers, cap_sublayers;
    ub_sublayer *sublayers;
    ub_prim *root;         /* pseudo-root: root prims are its children;
                              `reorder rootPrims` is its prim_order */
    bool streamed;         /* read by a streaming parse: every prim below
                              the pseudo-root is a stub (ub_prim_drop_body),
                              its contents went to the stream */
    struct ub_name_index *index; /* private: (owner, name) -> child/prop */
    uint32_t spec_tree;    /* the string table's path tree naming its specs
                              (a crate layer's, ub_specloc.h); 0: none.
                              Dropped with the layer */
} ub_layer;

/* A new empty layer; NULL when out of memory. */
ub_layer *ub_layer_new(ub_strtab *strtab, const char *path);
void ub_layer_free(ub_layer *layer);
/* Keep no name index for layer: lookups by name (ub_prim_find_child,
 * ub_prop_find, ...) then scan the list, which costs time only in a big
 * one.  For a layer that is built to be written, not searched: the index
 * of a list of 100,000 children is megabytes. */
void ub_layer_unindexed(ub_layer *layer);

/* Interning through the layer's table. */
const char *ub_layer_intern(ub_layer *layer, const char *s, size_t n);

/* A record's location as a location, and a location as a record stores
 * it (ub_diag.h: through the string table's file table, which every layer
 * of a run shares, so a record's location reads the same through any of
 * them).  The builders below take the stored form. */
static inline ub_loc ub_layer_loc(const ub_layer *layer, ub_sloc s)
{
    return ub_strtab_loc(layer->strtab, s);
}
static inline ub_sloc ub_layer_sloc(const ub_layer *layer, ub_loc loc)
{
    return ub_strtab_sloc(layer->strtab, loc);
}

/* Builders.  Each returns NULL (or -1) only when out of memory.  Lookups
 * by name are hashed (a layer may have 100k siblings); ub_prim_new and
 * ub_prop_new append without checking for an existing one of that name. */
/* Room for n more children of parent, so that appending them does not
 * leave outgrown copies of the list in the arena: for a builder that
 * knows how many it will add. */
int ub_prim_reserve_children(ub_layer *layer, ub_prim *parent, uint32_t n);
/* The same for n more properties of prim. */
int ub_prim_reserve_props(ub_layer *layer, ub_prim *prim, uint32_t n);
ub_prim *ub_prim_new(ub_layer *layer, ub_prim *parent, const char *name,
                     ub_specifier spec, ub_sloc loc);
ub_prim *ub_prim_find_child(const ub_layer *layer, const ub_prim *parent,
                            const char *name);
ub_prop *ub_prop_new(ub_layer *layer, ub_prim *prim, const char *name,
                     ub_prop_kind kind, ub_sloc loc);
ub_prop *ub_prop_find(const ub_layer *layer, const ub_prim *prim,
                      const char *name);
/* Append p, a property of another layer that outlives this one, to
 * prim's properties as it is (not copied: this layer must not change it).
 * -1 when out of memory. */
int ub_prop_append(ub_layer *layer, ub_prim *prim, ub_prop *p);
/* Give prim, which has no properties yet, the properties of another layer
 * that outlives this one: their list itself is shared (its cap is set to
 * its n, so that an append copies it).  -1 when out of memory or when
 * prim already has properties. */
int ub_prop_share_all(ub_layer *layer, ub_prim *prim, const ub_props *props);
/* Find-or-create in one hash probe.  ub_prim_find_or_new always appends a
 * new prim; *existing is the sibling of that name already there (a
 * duplicate), or NULL.  ub_prop_find_or_new returns the existing property
 * (*created false) or a new one of kind (*created true).  NULL only when
 * out of memory. */
ub_prim *ub_prim_find_or_new(ub_layer *layer, ub_prim *parent,
                             const char *name, ub_specifier spec, ub_sloc loc,
                             ub_prim **existing);
ub_prop *ub_prop_find_or_new(ub_layer *layer, ub_prim *prim, const char *name,
                             ub_prop_kind kind, ub_sloc loc, bool *created);
ub_variant_set *ub_variant_set_get(ub_layer *layer, ub_prim *prim,
                                   const char *name, ub_sloc loc);
/* The variant set of prim named name (interned), or NULL. */
ub_variant_set *ub_variant_set_find(const ub_prim *prim, const char *name);
/* A new variant in set (no check for an existing one of that name). */
ub_prim *ub_variant_new(ub_layer *layer, ub_prim *owner, ub_variant_set *set,
                       const char *name, ub_sloc loc);
ub_sublayer *ub_layer_add_sublayer(ub_layer *layer, const char *asset,
                                   ub_sloc loc);

/* Set a field (replacing an existing one of the same key in place). */
ub_field *ub_fields_set(ub_arena *a, ub_fields *f, const char *key,
                        ub_value value, ub_sloc loc);
ub_field *ub_fields_find(const ub_fields *f, const char *key);
/* Room for `more` fields beyond the n set, allocated at exactly that size
 * (a copy of a known list need not grow by doubling).  -1 when out of
 * memory. */
int ub_fields_reserve(ub_arena *a, ub_fields *f, uint32_t more);
/* Remove key, keeping the order of the rest.  Returns whether it was set. */
bool ub_fields_remove(ub_fields *f, const char *key);

/* Insert or replace the sample at time t, keeping samples sorted. */
int ub_samples_set(ub_arena *a, ub_samples *s, double time, ub_value value);
/* The sample at exactly time t, or NULL. */
ub_sample *ub_samples_find(const ub_samples *s, double time);

/* Where a layer's samples wait when it does not hold them (flatten's
 * clip bake: a spill file, read back an attribute at a time): the binary
 * writers ask for the samples of an attribute whose timeSamples are
 * authored but hold none, their values in a, which the writer empties
 * after each attribute.  Returns 0, or -1 after reporting why: the write
 * then fails with no error of its own. */
typedef int (*ub_samples_fn)(void *ctx, const ub_prop *attr, ub_arena *a,
                             ub_samples *out);

/* Forget everything inside prim -- metadata, properties, children,
 * variant sets, orders -- keeping its name, specifier, type name, parent
 * and location: a stub that still answers "which names exist here" for
 * duplicate checks.  The streaming parser calls it before handing the
 * prim's memory back to the arena. */
void ub_prim_drop_body(ub_layer *layer, ub_prim *prim);

/* A copy of stub (a prim whose body was dropped) in layer's arena, for a
 * stub whose own memory is about to be handed back; NULL when out of
 * memory.  The caller puts it in the stub's place in its parent's
 * children (a layer whose name index is off: the index would still name
 * the old one). */
ub_prim *ub_prim_stub_copy(ub_layer *layer, const ub_prim *stub);

/* The path of a prim or property as text ("/World/a", "/World/a.size",
 * variant selections as "/A{v=x}B"), allocated in the layer's arena. */
const char *ub_prim_path(ub_layer *layer, const ub_prim *prim);

/* Move layer src, built apart (e.g. by another thread) with dst's string
 * table, into dst: src's memory joins dst's arena and its name lookups
 * join dst's, except that the children, properties and variant sets of
 * each from[i] are appended to into[i] (their parent becomes into[i]).
 * The caller makes sure no appended name is already a child / property /
 * variant set of into[i].  src is
 * consumed (do not ub_layer_free it); from[i] are left empty.  -1 when out
 * of memory: dst is then only fit for ub_layer_free.
 * kept: NULL, or where src's arena goes instead of joining dst's: the
 * caller then owns it (ub_arena_adopt it into dst's, or free it once
 * nothing in dst points into it); it is set whatever the result. */
int ub_layer_graft(ub_layer *dst, ub_layer *src, ub_prim *const *from,
                   ub_prim *const *into, uint32_t n, ub_arena **kept);

#endif
