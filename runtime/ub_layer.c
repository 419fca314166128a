#include "ub_layer.h"

#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_ident.h"

/* (owner, name) -> object, for prims' children and properties.  One table per layer: cheaper than one per prim when
 * most prims have a handful of children. */
typedef struct ub_name_slot {
    uintptr_t key; /* the owner's address | kind (0 child prim, 1
                      property: owners are aligned); 0 when free */
    void *obj;     /* its name is read from it: a slot without the name
                      takes two thirds of the room, and a probe reads
                      the object only when the owner matches */
} ub_name_slot;

struct ub_name_index {
    ub_name_slot *slots;
    size_t cap, count;
    bool off; /* ub_layer_unindexed: lookups scan, nothing is entered */
};

static uint64_t ub_name_hash(const void *owner, const char *name, uint32_t k)
{
    uint64_t h = (uint64_t)(uintptr_t)owner * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uintptr_t)name + 0x632be59bd9b4e019ull + (h << 6) +
         (h >> 2);
    h ^= k * 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static uintptr_t ub_name_key(const void *owner, uint32_t kind)
{
    return (uintptr_t)owner | kind;
}

static const void *ub_slot_owner(const ub_name_slot *s)
{
    return (const void *)(s->key & ~(uintptr_t)1);
}

static const char *ub_entry_name(const void *obj, uint32_t kind);

static const char *ub_slot_name(const ub_name_slot *s)
{
    return ub_entry_name(s->obj, (uint32_t)(s->key & 1));
}

static uint64_t ub_slot_hash(const ub_name_slot *s)
{
    return ub_name_hash(ub_slot_owner(s), ub_slot_name(s),
                        (uint32_t)(s->key & 1));
}

/* Owners with at most this many children (or properties) are searched by
 * scanning their list: most prims have a handful, and the scan touches
 * memory the caller is already using where the shared table would miss the
 * cache on every probe.  Bigger owners have all their entries indexed. */
#define UB_INDEX_MIN 16

/* The list (owner, kind) names: children for kind 0, properties for 1. */
static void *const *ub_index_list(const void *owner, uint32_t kind,
                                  uint32_t *n)
{
    const ub_prim *p = owner;
    if (kind) {
        *n = p->props.n;
        return (void *const *)p->props.v;
    }
    *n = p->children.n;
    return (void *const *)p->children.v;
}

static const char *ub_entry_name(const void *obj, uint32_t kind)
{
    return kind ? ((const ub_prop *)obj)->name : ((const ub_prim *)obj)->name;
}

/* The first entry of the list called name (the index keeps the first). */
static void *ub_list_find(const void *owner, const char *name, uint32_t kind)
{
    uint32_t n;
    void *const *v = ub_index_list(owner, kind, &n);
    for (uint32_t i = 0; i < n; i++)
        if (ub_entry_name(v[i], kind) == name)
            return v[i];
    return NULL;
}

static ub_name_slot *ub_index_find(struct ub_name_index *ix,
                                   const void *owner, const char *name,
                                   uint32_t kind)
{
    if (!ix || !ix->cap)
        return NULL;
    size_t mask = ix->cap - 1;
    for (size_t i = ub_name_hash(owner, name, kind) & mask;;
         i = (i + 1) & mask) {
        ub_name_slot *s = &ix->slots[i];
        if (!s->key)
            return NULL;
        if (s->key == ub_name_key(owner, kind) && ub_slot_name(s) == name)
            return s;
    }
}

/* Whether count entries are too many for cap slots: a table stays at
 * most 3/4 full. */
static bool ub_index_over(size_t count, size_t cap)
{
    return count * 4 > cap * 3;
}

/* Room for one more entry. */
static int ub_index_reserve(struct ub_name_index *ix)
{
    if (ub_index_over(ix->count + 1, ix->cap)) {
        size_t cap = ix->cap ? ix->cap * 2 : 256;
        ub_name_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < ix->cap; i++) {
            ub_name_slot *s = &ix->slots[i];
            if (!s->key)
                continue;
            size_t j = ub_slot_hash(s) & (cap - 1);
            while (slots[j].key)
                j = (j + 1) & (cap - 1);
            slots[j] = *s;
        }
        free(ix->slots);
        ix->slots = slots;
        ix->cap = cap;
    }
    return 0;
}

/* The slot of (owner, name, kind): the entry's, or the free one where it
 * would go.  Needs ub_index_reserve first. */
static ub_name_slot *ub_index_slot(struct ub_name_index *ix, const void *owner,
                                   const char *name, uint32_t kind)
{
    size_t mask = ix->cap - 1;
    size_t i = ub_name_hash(owner, name, kind) & mask;
    while (ix->slots[i].key) {
        if (ix->slots[i].key == ub_name_key(owner, kind) &&
            ub_slot_name(&ix->slots[i]) == name)
            return &ix->slots[i];
        i = (i + 1) & mask;
    }
    return &ix->slots[i];
}

/* The first entry of (owner, kind) called name, or NULL. */
static void *ub_index_lookup(struct ub_name_index *ix, const void *owner,
                             const char *name, uint32_t kind)
{
    uint32_t n;
    ub_index_list(owner, kind, &n);
    if (n <= UB_INDEX_MIN || ix->off)
        return ub_list_find(owner, name, kind);
    ub_name_slot *s = ub_index_find(ix, owner, name, kind);
    return s ? s->obj : NULL;
}

/* Index (owner, kind) from entry `first` on, after entries were appended
 * (a list that just outgrew the scan is indexed whole; the first entry of
 * a name stays the indexed one). */
static int ub_index_from(struct ub_name_index *ix, const void *owner,
                         uint32_t kind, uint32_t first)
{
    uint32_t n;
    void *const *v = ub_index_list(owner, kind, &n);
    if (n <= UB_INDEX_MIN || ix->off)
        return 0;
    for (uint32_t i = first > UB_INDEX_MIN ? first : 0; i < n; i++) {
        if (ub_index_reserve(ix) != 0)
            return -1;
        const char *name = ub_entry_name(v[i], kind);
        ub_name_slot *s = ub_index_slot(ix, owner, name, kind);
        if (!s->key) {
            *s = (ub_name_slot){ub_name_key(owner, kind), v[i]};
            ix->count++;
        }
    }
    return 0;
}

/* Remove (owner, name, kind) if present, shifting later entries of its
 * probe run back so that every remaining entry stays reachable. */
static void ub_index_remove(struct ub_name_index *ix, const void *owner,
                            const char *name, uint32_t kind)
{
    ub_name_slot *s = ub_index_find(ix, owner, name, kind);
    if (!s)
        return;
    size_t mask = ix->cap - 1;
    size_t hole = (size_t)(s - ix->slots);
    for (size_t j = (hole + 1) & mask; ix->slots[j].key; j = (j + 1) & mask) {
        const ub_name_slot *e = &ix->slots[j];
        size_t home = ub_slot_hash(e) & mask;
        /* e may fill the hole unless its home lies cyclically in
         * (hole, j]: then the hole is not on its probe path */
        bool stays = hole < j ? (home > hole && home <= j)
                              : (home > hole || home <= j);
        if (!stays) {
            ix->slots[hole] = *e;
            hole = j;
        }
    }
    ix->slots[hole] = (ub_name_slot){0};
    ix->count--;
}

/* Drop the index entries of an owner's lists (kept only for big ones). */
static void ub_index_forget(struct ub_name_index *ix, const ub_prim *owner)
{
    for (uint32_t kind = 0; kind < 2 && !ix->off; kind++) {
        uint32_t n;
        void *const *v = ub_index_list(owner, kind, &n);
        if (n <= UB_INDEX_MIN)
            continue;
        for (uint32_t i = 0; i < n; i++)
            ub_index_remove(ix, owner, ub_entry_name(v[i], kind), kind);
    }
}

static void ub_prim_forget_tree(struct ub_name_index *ix, const ub_prim *p)
{
    ub_index_forget(ix, p);
    for (uint32_t i = 0; i < p->children.n; i++)
        ub_prim_forget_tree(ix, p->children.v[i]);
    for (uint32_t s = 0; s < ub_prim_n_variant_sets(p); s++)
        for (uint32_t i = 0; i < ub_prim_variant_sets(p)[s].variants.n; i++)
            ub_prim_forget_tree(ix, ub_prim_variant_sets(p)[s].variants.v[i]);
}

void ub_prim_drop_body(ub_layer *layer, ub_prim *prim)
{
    ub_prim_forget_tree(layer->index, prim);
    prim->meta = (ub_fields){0};
    prim->props = (ub_props){0};
    prim->children = (ub_prims){0};
    /* variant sets and orders; the streamed prims this is for are never
     * variant bodies, and their ext lies in the memory handed back */
    prim->ext = NULL;
}

ub_prim *ub_prim_stub_copy(ub_layer *layer, const ub_prim *stub)
{
    ub_prim *p =
        ub_arena_alloc_align(layer->arena, sizeof *p, alignof(ub_prim));
    if (p)
        *p = *stub;
    return p;
}

const ub_prop_ext ub_prop_ext_none;
const ub_prim_ext ub_prim_ext_none;

ub_prim_ext *ub_prim_ext_get(ub_arena *a, ub_prim *p)
{
    if (!p->ext)
        p->ext = ub_arena_zalloc(a, sizeof *p->ext);
    return p->ext;
}

/* The bytes of ub_prop_ext each part takes. */
static size_t ub_prop_ext_size(unsigned part)
{
    switch (part) {
    case UB_PEXT_META:
        return offsetof(ub_prop_ext, type_name);
    case UB_PEXT_SHORT:
        return offsetof(ub_prop_ext, samples);
    case UB_PEXT_WHOLE:
        return sizeof(ub_prop_ext);
    default:
        return 0;
    }
}

/* p's ext with at least `part` allocated: a shorter one is copied into
 * a new block (the old one stays in the arena, which never frees). */
static ub_prop_ext *ub_prop_ext_at_least(ub_arena *a, ub_prop *p,
                                         ub_prop_ext_part part)
{
    if (p->ext_part >= part)
        return p->ext;
    ub_prop_ext *x = ub_arena_zalloc(a, ub_prop_ext_size(part));
    if (!x)
        return NULL;
    if (p->ext)
        memcpy(x, p->ext, ub_prop_ext_size(p->ext_part));
    p->ext = x;
    p->ext_part = (uint8_t)part;
    return x;
}

ub_prop_ext *ub_prop_ext_get(ub_arena *a, ub_prop *p)
{
    return ub_prop_ext_at_least(a, p, UB_PEXT_WHOLE);
}

ub_prop_ext *ub_prop_rel_ext_get(ub_arena *a, ub_prop *p)
{
    return ub_prop_ext_at_least(a, p, UB_PEXT_SHORT);
}

ub_fields *ub_prop_meta_get(ub_arena *a, ub_prop *p)
{
    ub_prop_ext *x = ub_prop_ext_at_least(a, p, UB_PEXT_META);
    return x ? &x->meta : NULL;
}

int ub_prop_set_meta(ub_arena *a, ub_prop *p, const ub_fields *m)
{
    if (m->n == 0 && p->ext_part == UB_PEXT_NONE)
        return 0;
    ub_fields *to = ub_prop_meta_get(a, p);
    if (!to)
        return -1;
    *to = *m;
    return 0;
}

/* p's out-of-line type name (NULL: none), allocating the short part
 * only when there is one to keep. */
static int ub_prop_keep_type_name(ub_arena *a, ub_prop *p, const char *name)
{
    if (!name && !ub_prop_ext_of(p)->type_name)
        return 0;
    ub_prop_ext *x = ub_prop_rel_ext_get(a, p);
    if (!x)
        return -1;
    x->type_name = name;
    return 0;
}

int ub_prop_set_decl(ub_arena *a, const ub_strtab *t, ub_prop *p,
                     const ub_type *type, const char *type_name)
{
    p->type_id = ub_type_id_of(type);
    /* the type's own name is ub_strtab_type_name's: nothing to keep */
    bool own = !type_name || type_name == ub_strtab_type_name(t, p->type_id);
    return ub_prop_keep_type_name(a, p, own ? NULL : type_name);
}

int ub_prop_copy_decl(ub_arena *a, ub_prop *p, const ub_prop *q)
{
    p->type_id = q->type_id;
    return ub_prop_keep_type_name(a, p, ub_prop_ext_of(q)->type_name);
}

ub_layer *ub_layer_new(ub_strtab *strtab, const char *path)
{
    ub_arena *a = ub_arena_new();
    if (!a)
        return NULL;
    ub_layer *l = ub_arena_zalloc(a, sizeof *l);
    struct ub_name_index *ix = calloc(1, sizeof *ix);
    if (!l || !ix) {
        free(ix);
        ub_arena_free(a);
        return NULL;
    }
    l->arena = a;
    l->strtab = strtab;
    l->index = ix;
    l->path = ub_arena_strdup(a, path ? path : "-");
    l->root = ub_arena_zalloc(a, sizeof *l->root);
    if (!l->path || !l->root) {
        ub_layer_free(l);
        return NULL;
    }
    l->root->name = ub_intern(strtab, "", 0);
    l->root->specifier = UB_OVER;
    return l;
}

void ub_layer_free(ub_layer *layer)
{
    if (!layer)
        return;
    if (layer->index) {
        free(layer->index->slots);
        free(layer->index);
    }
    ub_strtab_drop_spec_tree(layer->strtab, layer->spec_tree);
    ub_arena_free(layer->arena);
}

void ub_layer_unindexed(ub_layer *layer)
{
    free(layer->index->slots);
    *layer->index = (struct ub_name_index){.off = true};
}

const char *ub_layer_intern(ub_layer *layer, const char *s, size_t n)
{
    return ub_intern(layer->strtab, s, n);
}

/* Append p to an arena-backed pointer vector. */
static int ub_ptrvec_push(ub_arena *a, void ***v, uint32_t *n, uint32_t *cap,
                          void *p)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 4;
        void **nv = ub_arena_grow(a, *v, *n, nc, sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = p;
    return 0;
}

int ub_prim_reserve_children(ub_layer *layer, ub_prim *parent, uint32_t n)
{
    ub_prims *c = &parent->children;
    return ub_arena_reserve(layer->arena, (void **)&c->v, c->n, &c->cap, n,
                            sizeof *c->v, alignof(ub_prim *));
}

int ub_prim_reserve_props(ub_layer *layer, ub_prim *prim, uint32_t n)
{
    ub_props *p = &prim->props;
    return ub_arena_reserve(layer->arena, (void **)&p->v, p->n, &p->cap, n,
                            sizeof *p->v, alignof(ub_prop *));
}

ub_prim *ub_prim_new(ub_layer *layer, ub_prim *parent, const char *name,
                     ub_specifier spec, ub_sloc loc)
{
    ub_prim *p =
        ub_arena_zalloc_align(layer->arena, sizeof *p, alignof(ub_prim));
    if (!p)
        return NULL;
    p->name = name;
    p->specifier = spec;
    p->parent = parent;
    p->loc = loc;
    if (ub_ptrvec_push(layer->arena, (void ***)&parent->children.v,
                       &parent->children.n, &parent->children.cap, p) != 0)
        return NULL;
    if (ub_index_from(layer->index, parent, 0, parent->children.n - 1) != 0)
        return NULL;
    return p;
}

/* Variant bodies live in their set, not in a children list; their own
 * children are indexed like any prim's. */
ub_prim *ub_variant_new(ub_layer *layer, ub_prim *owner, ub_variant_set *set,
                       const char *name, ub_sloc loc)
{
    ub_prim *p =
        ub_arena_zalloc_align(layer->arena, sizeof *p, alignof(ub_prim));
    if (!p)
        return NULL;
    p->name = name;
    p->specifier = UB_OVER;
    p->parent = owner;
    p->loc = loc;
    ub_prim_ext *x = ub_prim_ext_get(layer->arena, p);
    if (!x)
        return NULL;
    x->variant_set = set->name;
    if (ub_ptrvec_push(layer->arena, (void ***)&set->variants.v,
                       &set->variants.n, &set->variants.cap, p) != 0)
        return NULL;
    return p;
}

ub_prim *ub_prim_find_child(const ub_layer *layer, const ub_prim *parent,
                            const char *name)
{
    return ub_index_lookup(layer->index, parent, name, 0);
}

ub_prop *ub_prop_new(ub_layer *layer, ub_prim *prim, const char *name,
                     ub_prop_kind kind, ub_sloc loc)
{
    ub_prop *p =
        ub_arena_zalloc_align(layer->arena, sizeof *p, alignof(ub_prop));
    if (!p)
        return NULL;
    p->name = name;
    p->kind = kind;
    p->loc = loc;
    if (ub_ptrvec_push(layer->arena, (void ***)&prim->props.v, &prim->props.n,
                       &prim->props.cap, p) != 0)
        return NULL;
    if (ub_index_from(layer->index, prim, 1, prim->props.n - 1) != 0)
        return NULL;
    return p;
}

int ub_prop_share_all(ub_layer *layer, ub_prim *prim, const ub_props *props)
{
    if (prim->props.n)
        return -1;
    prim->props = (ub_props){.n = props->n, .cap = props->n, .v = props->v};
    return ub_index_from(layer->index, prim, 1, 0);
}

int ub_prop_append(ub_layer *layer, ub_prim *prim, ub_prop *p)
{
    if (ub_ptrvec_push(layer->arena, (void ***)&prim->props.v, &prim->props.n,
                       &prim->props.cap, p) != 0)
        return -1;
    return ub_index_from(layer->index, prim, 1, prim->props.n - 1);
}

ub_prop *ub_prop_find(const ub_layer *layer, const ub_prim *prim,
                      const char *name)
{
    return ub_index_lookup(layer->index, prim, name, 1);
}

ub_prim *ub_prim_find_or_new(ub_layer *layer, ub_prim *parent,
                             const char *name, ub_specifier spec, ub_sloc loc,
                             ub_prim **existing)
{
    *existing = ub_index_lookup(layer->index, parent, name, 0);
    return ub_prim_new(layer, parent, name, spec, loc);
}

ub_prop *ub_prop_find_or_new(ub_layer *layer, ub_prim *prim, const char *name,
                             ub_prop_kind kind, ub_sloc loc, bool *created)
{
    ub_prop *p = ub_index_lookup(layer->index, prim, name, 1);
    *created = !p;
    return p ? p : ub_prop_new(layer, prim, name, kind, loc);
}

ub_variant_set *ub_variant_set_find(const ub_prim *prim, const char *name)
{
    for (uint32_t i = 0; i < ub_prim_n_variant_sets(prim); i++)
        if (ub_prim_variant_sets(prim)[i].name == name)
            return &ub_prim_variant_sets(prim)[i];
    return NULL;
}

ub_variant_set *ub_variant_set_get(ub_layer *layer, ub_prim *prim,
                                   const char *name, ub_sloc loc)
{
    ub_variant_set *had = ub_variant_set_find(prim, name);
    if (had)
        return had;
    ub_prim_ext *x = ub_prim_ext_get(layer->arena, prim);
    if (!x)
        return NULL;
    if (x->n_variant_sets == x->cap_variant_sets) {
        uint32_t nc = x->cap_variant_sets ? x->cap_variant_sets * 2 : 2;
        ub_variant_set *nv = ub_arena_grow(layer->arena, x->variant_sets,
                                           x->n_variant_sets, nc, sizeof *nv);
        if (!nv)
            return NULL;
        x->variant_sets = nv;
        x->cap_variant_sets = nc;
    }
    ub_variant_set *s = &x->variant_sets[x->n_variant_sets++];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->loc = loc;
    return s;
}

ub_sublayer *ub_layer_add_sublayer(ub_layer *layer, const char *asset,
                                   ub_sloc loc)
{
    if (layer->n_sublayers == layer->cap_sublayers) {
        uint32_t nc = layer->cap_sublayers ? layer->cap_sublayers * 2 : 4;
        ub_sublayer *nv = ub_arena_grow(layer->arena, layer->sublayers,
                                        layer->n_sublayers, nc, sizeof *nv);
        if (!nv)
            return NULL;
        layer->sublayers = nv;
        layer->cap_sublayers = nc;
    }
    ub_sublayer *s = &layer->sublayers[layer->n_sublayers++];
    *s = (ub_sublayer){.asset = asset, .offset = UB_OFFSET_IDENTITY,
                       .loc = loc};
    layer->has_sublayers = true;
    return s;
}

ub_field *ub_fields_find(const ub_fields *f, const char *key)
{
    for (uint32_t i = 0; i < f->n; i++)
        if (f->v[i].key == key)
            return &f->v[i];
    return NULL;
}

int ub_fields_reserve(ub_arena *a, ub_fields *f, uint32_t more)
{
    return ub_arena_reserve(a, (void **)&f->v, f->n, &f->cap, more,
                            sizeof *f->v, alignof(ub_field));
}

ub_field *ub_fields_set(ub_arena *a, ub_fields *f, const char *key,
                        ub_value value, ub_sloc loc)
{
    ub_field *fld = ub_fields_find(f, key);
    if (!fld) {
        if (f->n == f->cap) {
            uint32_t nc = f->cap ? f->cap * 2 : 4;
            ub_field *nv = ub_arena_grow_align(a, f->v, f->n, nc, sizeof *nv,
                                               alignof(ub_field));
            if (!nv)
                return NULL;
            f->v = nv;
            f->cap = nc;
        }
        fld = &f->v[f->n++];
        fld->key = key;
    }
    fld->value = value;
    fld->loc = loc;
    return fld;
}

bool ub_fields_remove(ub_fields *f, const char *key)
{
    for (uint32_t i = 0; i < f->n; i++) {
        if (f->v[i].key == key) {
            memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof *f->v);
            f->n--;
            return true;
        }
    }
    return false;
}

/* The order of sample times: numbers ascending, then nan (all nan times
 * are one time).  A total order, so that a layer authoring a nan time
 * (which `check` reports) still reads and writes the same way every time;
 * `<` alone would put nan anywhere. */
static bool ub_time_before(double a, double b)
{
    return a < b || (!isnan(a) && isnan(b));
}

static bool ub_time_same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static uint32_t ub_samples_lower_bound(const ub_samples *s, double t)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ub_time_before(s->v[mid].time, t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ub_samples_set(ub_arena *a, ub_samples *s, double time, ub_value value)
{
    s->authored = true;
    /* Samples nearly always arrive in order: append without searching. */
    uint32_t i = (s->n && ub_time_before(s->v[s->n - 1].time, time))
                     ? s->n
                     : ub_samples_lower_bound(s, time);
    if (i < s->n && ub_time_same(s->v[i].time, time)) {
        s->v[i].value = value;
        return 0;
    }
    if (s->n == s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 8;
        ub_sample *nv = ub_arena_grow(a, s->v, s->n, nc, sizeof *nv);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = nc;
    }
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
    s->v[i].time = time;
    s->v[i].value = value;
    s->n++;
    return 0;
}

ub_sample *ub_samples_find(const ub_samples *s, double time)
{
    uint32_t i = ub_samples_lower_bound(s, time);
    return (i < s->n && ub_time_same(s->v[i].time, time)) ? &s->v[i] : NULL;
}

static size_t ub_prim_path_len(const ub_prim *p)
{
    if (!p || !p->parent)
        return 0;
    size_t n = ub_prim_path_len(p->parent);
    if (ub_prim_variant_set(p))
        return n + ub_str_len(ub_prim_variant_set(p)) + ub_str_len(p->name) +
               3;
    return n + (ub_prim_variant_set(p->parent) ? 0 : 1) + ub_str_len(p->name);
}

static char *ub_prim_path_write(const ub_prim *p, char *out)
{
    if (!p || !p->parent)
        return out;
    out = ub_prim_path_write(p->parent, out);
    if (ub_prim_variant_set(p)) {
        *out++ = '{';
        size_t n = ub_str_len(ub_prim_variant_set(p));
        memcpy(out, ub_prim_variant_set(p), n);
        out += n;
        *out++ = '=';
        n = ub_str_len(p->name);
        memcpy(out, p->name, n);
        out += n;
        *out++ = '}';
        return out;
    }
    if (!ub_prim_variant_set(p->parent)) /* "/A{v=x}B": no slash after '}' */
        *out++ = '/';
    size_t n = ub_str_len(p->name);
    memcpy(out, p->name, n);
    return out + n;
}

const char *ub_prim_path(ub_layer *layer, const ub_prim *prim)
{
    if (!prim->parent)
        return "/";
    size_t n = ub_prim_path_len(prim);
    char *s = ub_arena_alloc_bytes(layer->arena, n + 1);
    if (!s)
        return NULL;
    char *end = ub_prim_path_write(prim, s);
    *end = '\0';
    return s;
}

/* Append list src[0..n) to an arena-backed pointer vector in one step. */
static int ub_ptrvec_append(ub_arena *a, void ***v, uint32_t *n,
                            uint32_t *cap, void *const *src, uint32_t k)
{
    if (!k)
        return 0;
    if (*n + k > *cap) {
        uint32_t nc = *n + k;
        void **nv = ub_arena_grow(a, *v, *n, nc, sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    memcpy(*v + *n, src, k * sizeof *src);
    *n += k;
    return 0;
}


static bool ub_is_from(const void *owner, ub_prim *const *from, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (owner == from[i])
            return true;
    return false;
}

/* The lists a table indexes, each once: a set of slot keys (owner |
 * kind).  Only lists longer than UB_INDEX_MIN are indexed, so there are
 * few of them next to the entries. */
typedef struct ub_key_set {
    uintptr_t *v; /* open addressing; 0 empty */
    size_t cap, n;
} ub_key_set;

/* Put key in the cap slots of v; whether it was not there yet. */
static bool ub_key_put(uintptr_t *v, size_t cap, uintptr_t key)
{
    size_t j = (size_t)ub_name_hash((void *)key, NULL, 0) & (cap - 1);
    while (v[j] && v[j] != key)
        j = (j + 1) & (cap - 1);
    if (v[j])
        return false;
    v[j] = key;
    return true;
}

static int ub_key_set_add(ub_key_set *s, uintptr_t key)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        uintptr_t *v = calloc(cap, sizeof *v);
        if (!v)
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->v[i])
                ub_key_put(v, cap, s->v[i]);
        free(s->v);
        s->v = v;
        s->cap = cap;
    }
    if (ub_key_put(s->v, s->cap, key))
        s->n++;
    return 0;
}

/* Add to s the lists ix indexes, except those of from[0..n). */
static int ub_index_owners(const struct ub_name_index *ix, ub_key_set *s,
                           ub_prim *const *from, uint32_t n)
{
    for (size_t i = 0; ix && i < ix->cap; i++) {
        const ub_name_slot *sl = &ix->slots[i];
        if (sl->key && !ub_is_from(ub_slot_owner(sl), from, n) &&
            ub_key_set_add(s, sl->key) != 0)
            return -1;
    }
    return 0;
}

/* Room for count entries in ix's empty table, at once. */
static int ub_index_presize(struct ub_name_index *ix, size_t count)
{
    size_t cap = 256;
    while (ub_index_over(count, cap))
        cap *= 2;
    ix->slots = calloc(cap, sizeof *ix->slots);
    if (!ix->slots)
        return -1;
    ix->cap = cap;
    ix->count = 0;
    return 0;
}

int ub_layer_graft(ub_layer *dst, ub_layer *src, ub_prim *const *from,
                   ub_prim *const *into, uint32_t n, ub_arena **kept)
{
    struct ub_name_index *six = src->index, *dix = dst->index;
    ub_arena *sa = src->arena; /* src itself lives in it: read it first */
    if (kept)
        *kept = ub_arena_new();
    if (kept && *kept)
        ub_arena_adopt(*kept, sa);
    else
        ub_arena_adopt(dst->arena, sa);
    int rc = 0;
    /* dst's index is built again, once, at its final size, from the lists
     * both tables index (src's lists of `from` are appended to `into`'s).
     * Growing dst's table while src's is alive held three tables at once:
     * the peak of reading a big layer in two. */
    ub_key_set owners = {0};
    if (ub_index_owners(six, &owners, from, n) != 0 ||
        ub_index_owners(dix, &owners, NULL, 0) != 0)
        rc = -1;
    if (six) {
        free(six->slots);
        free(six);
    }
    free(dix->slots);
    *dix = (struct ub_name_index){.off = dix->off};
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        ub_prim *f = from[i], *t = into[i];
        for (uint32_t k = 0; k < f->children.n; k++)
            f->children.v[k]->parent = t;
        if (ub_ptrvec_append(dst->arena, (void ***)&t->children.v,
                             &t->children.n, &t->children.cap,
                             (void *const *)f->children.v,
                             f->children.n) != 0 ||
            ub_ptrvec_append(dst->arena, (void ***)&t->props.v, &t->props.n,
                             &t->props.cap, (void *const *)f->props.v,
                             f->props.n) != 0)
            rc = -1;
        if (rc == 0 && ub_prim_n_variant_sets(f)) {
            ub_prim_ext *tx = ub_prim_ext_get(dst->arena, t);
            uint32_t nt = ub_prim_n_variant_sets(t);
            uint32_t nv = nt + f->ext->n_variant_sets;
            ub_variant_set *v =
                tx ? ub_arena_grow(dst->arena, tx->variant_sets, nt, nv,
                                   sizeof *v)
                   : NULL;
            if (v) {
                memcpy(v + nt, f->ext->variant_sets,
                       f->ext->n_variant_sets * sizeof *v);
                for (uint32_t k = nt; k < nv; k++)
                    for (uint32_t j = 0; j < v[k].variants.n; j++)
                        v[k].variants.v[j]->parent = t;
                tx->variant_sets = v;
                tx->n_variant_sets = tx->cap_variant_sets = nv;
            } else {
                rc = -1;
            }
        }
        f->children = (ub_prims){0};
        f->props = (ub_props){0};
        if (f->ext) {
            f->ext->n_variant_sets = f->ext->cap_variant_sets = 0;
            f->ext->variant_sets = NULL;
        }
    }
    /* an `into` list indexed before is among the owners; one that outgrew
     * the scan just now is indexed too (ub_index_from skips small ones,
     * and a name already indexed keeps its first entry) */
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        for (uint32_t kind = 0; kind < 2; kind++) {
            uint32_t len;
            ub_index_list(into[i], kind, &len);
            if (len > UB_INDEX_MIN &&
                ub_key_set_add(&owners, ub_name_key(into[i], kind)) != 0)
                rc = -1;
        }
    size_t total = 0;
    for (size_t i = 0; rc == 0 && i < owners.cap; i++)
        if (owners.v[i]) {
            uint32_t len;
            ub_index_list((void *)(owners.v[i] & ~(uintptr_t)1),
                          (uint32_t)(owners.v[i] & 1), &len);
            total += len;
        }
    if (rc == 0 && !dix->off && ub_index_presize(dix, total) != 0)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < owners.cap; i++)
        if (owners.v[i] &&
            ub_index_from(dix, (void *)(owners.v[i] & ~(uintptr_t)1),
                          (uint32_t)(owners.v[i] & 1), 0) != 0)
            rc = -1;
    free(owners.v);
    ub_arena_free(sa);
    return rc;
}

const char *ub_prop_paths_fault(const ub_value *v, char *buf, size_t cap)
{
    if (v->kind == UB_V_EMPTY)
        return NULL;
    if (v->kind != UB_V_LISTOP || v->type_id != UB_TY_PATH)
        return "the value is not a list op of paths";
    if (ub_listop_has_dup(v))
        return "a part of the list op holds a path twice";
    const char *bad = ub_listop_str_refused(v, ub_ident_target_path_ok);
    if (!bad)
        return NULL;
    snprintf(buf, cap, "<%s> is not an absolute prim or property path "
             "without variant selections, as a target or connection path "
             "must be", bad);
    return buf;
}

const char *ub_prop_value_fault(const ub_prop *p, const ub_value *v,
                                double t, char *buf, size_t cap)
{
    const ub_type *want = ub_prop_type(p), *got = ub_value_type(v);
    /* (the usual case first: it runs for every sample) */
    if (v->kind == UB_V_DATA && want && got && got->base == want->base &&
        v->is_array == p->is_array)
        return NULL;
    char at[48] = "the default";
    if (!isnan(t))
        snprintf(at, sizeof at, "the sample at time %g", t);
    const char *what = v->kind != UB_V_EMPTY ? ub_value_not_sample(v)
                                             : NULL; /* (no default) */
    if (what) {
        snprintf(buf, cap, "%s holds %s, which no attribute's type allows",
                 at, what);
        return buf;
    }
    /* (as the usda reader: OpenUSD's says "Unrecognized type name") */
    if (!want && !isnan(t) && v->kind != UB_V_BLOCK) {
        snprintf(buf, cap, "%s holds a value, where only None can be a "
                 "sample of an attribute of no known type", at);
        return buf;
    }
    if (v->kind == UB_V_DATA && want) {
        snprintf(buf, cap, "%s is of type %s%s, where the attribute's is "
                 "%s%s", at, got->name, v->is_array ? "[]" : "", want->name,
                 p->is_array ? "[]" : "");
        return buf;
    }
    return NULL;
}
