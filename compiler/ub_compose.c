/*
 * Stage composition and UsdStage::Flatten.
 *
 * A prim index is built per composed prim, from its parent's (every node of
 * the parent's graph continues at the child's name: ancestral opinions),
 * then every node's direct arcs are evaluated until none is left, variant
 * sets last (a selection may be authored by any node found before them), as
 * Pcp's indexer orders its tasks.  Class-based arcs found under a
 * reference are implied to every node above it (a class opinion in the
 * referencing layer stack beats the referenced one), and specializes
 * subtrees are moved after everything else.  The strength order is a
 * depth-first walk with each node's children ordered by arc type, then
 * namespace depth of introduction (deeper: stronger), then authored order.
 *
 * Value resolution follows UsdStage: metadata strongest first with
 * dictionaries merged key by key; list ops applied weakest first and
 * written as explicit lists; an attribute's samples from the strongest
 * layer with a value (when that value is samples), its default from the
 * strongest default; custom and variability from the weakest opinion;
 * relationship targets and connections mapped into stage namespace.
 */
#include "ub_compose.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "ub_clips.h"
#include "ub_expr.h"
#include "ub_ident.h"
#include "ub_idtab.h"
#include "ub_names.h"
#include "ub_pathexpr.h"
#include "ub_schema.h"
#include "ub_stack.h"
#include "ub_usdb.h"
#include "ub_time.h"

/* --- paths -------------------------------------------------------------- */

const char *ub_path_strip_variants(ub_strtab *t, const char *path)
{
    if (!strchr(path, '{'))
        return path;
    size_t n = strlen(path);
    char *b = malloc(n + 1);
    if (!b)
        return NULL;
    size_t w = ub_ident_strip_variants(b, path, n);
    const char *r = ub_intern(t, b, w);
    free(b);
    return r;
}

bool ub_path_has_prefix(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (n == 1 && prefix[0] == '/')
        return path[0] == '/';
    if (strncmp(path, prefix, n) != 0)
        return false;
    char c = path[n];
    return c == '\0' || c == '/' || c == '.' || c == '{';
}

const char *ub_path_replace_prefix(ub_strtab *t, const char *path,
                                   const char *from, const char *to)
{
    if (!ub_path_has_prefix(path, from))
        return NULL;
    size_t fn = strlen(from), tn = strlen(to);
    const char *rest = path + fn;
    if (fn == 1 && from[0] == '/')
        rest = path + 1, fn = 1;
    size_t rn = strlen(rest);
    char *b = malloc(tn + rn + 2);
    if (!b)
        return NULL;
    memcpy(b, to, tn);
    size_t w = tn;
    if (from[0] == '/' && from[1] == '\0' && rn) {
        if (!(tn == 1 && to[0] == '/'))
            b[w++] = '/';
    } else if (((tn == 1 && to[0] == '/') || (tn && to[tn - 1] == '}')) &&
               rn && rest[0] == '/') {
        rest++, rn--; /* "/" + "/B" is "/B"; "/A{v=x}" + "/B", "/A{v=x}B" */
    }
    memcpy(b + w, rest, rn);
    w += rn;
    b[w] = '\0';
    const char *r = ub_intern(t, b, w);
    free(b);
    return r;
}

ub_prim *ub_layer_find_prim(const ub_layer *layer, const char *path)
{
    if (!path || path[0] != '/')
        return NULL;
    ub_prim *p = layer->root;
    const char *s = path + 1;
    char name[1024];
    while (*s && p) {
        if (*s == '/') {
            s++;
            continue;
        }
        if (*s == '{') {
            const char *eq = strchr(s, '='), *end = strchr(s, '}');
            if (!eq || !end || eq > end)
                return NULL;
            size_t sn = (size_t)(eq - s - 1), vn = (size_t)(end - eq - 1);
            const ub_variant_set *set = NULL;
            for (uint32_t i = 0; i < ub_prim_n_variant_sets(p); i++)
                if (strlen(ub_prim_variant_sets(p)[i].name) == sn &&
                    memcmp(ub_prim_variant_sets(p)[i].name, s + 1, sn) == 0)
                    set = &ub_prim_variant_sets(p)[i];
            ub_prim *v = NULL;
            for (uint32_t i = 0; set && i < set->variants.n; i++)
                if (strlen(set->variants.v[i]->name) == vn &&
                    memcmp(set->variants.v[i]->name, eq + 1, vn) == 0)
                    v = set->variants.v[i];
            p = v;
            s = end + 1;
            continue;
        }
        size_t n = strcspn(s, "/{.");
        if (s[n] == '.' || n >= sizeof name)
            return NULL;
        memcpy(name, s, n);
        name[n] = '\0';
        const char *k = ub_intern_cstr(layer->strtab, name);
        p = k ? ub_prim_find_child(layer, p, k) : NULL;
        s += n;
    }
    return p;
}

/* parent + child name ("/" + "A" = "/A"; "/A{v=x}" + "B" = "/A{v=x}B"). */
static const char *ub_path_child(ub_strtab *t, const char *parent,
                                 const char *name)
{
    size_t pn = strlen(parent), nn = strlen(name);
    char *b = malloc(pn + nn + 2);
    if (!b)
        return NULL;
    memcpy(b, parent, pn);
    size_t w = pn;
    if (!(pn == 1 && parent[0] == '/') && parent[pn - 1] != '}')
        b[w++] = '/';
    memcpy(b + w, name, nn);
    w += nn;
    b[w] = '\0';
    const char *r = ub_intern(t, b, w);
    free(b);
    return r;
}

/* --- context -------------------------------------------------------------- */

typedef struct ub_node {
    uint8_t arc;          /* ub_arc */
    bool ancestral;       /* continued from the parent prim's index */
    bool evaluated;       /* direct arcs (but variants) added */
    bool variants_done;
    bool root_identity;   /* class-based maps also map "/" to "/" */
    bool implied;         /* a class arc implied from below */
    bool inert;           /* kept for the graph, gives no opinions (the
                             instance's own opinions in a prototype) */
    bool dup_class;       /* an implied class at the very site it was
                             implied from (across a reference): inert,
                             but Pcp counts it in instance keys */
    ub_stack *ls;
    const char *path;     /* site path, may hold variant selections */
    const char *src, *tgt; /* map to parent (variant-free); NULL: identity */
    ub_offset offset;     /* node time -> stage time (before the layer's
                             own offset in ls) */
    int parent;           /* -1 for the root */
    int depth;            /* namespace depth the arc was added at */
    int sib;              /* authored order among its arcs */
} ub_node;

typedef struct ub_index {
    ub_node *v;
    int n, cap;
    int depth; /* of the prim being indexed */
} ub_index;

typedef struct ub_cstack {
    ub_layer *root;
    ub_stack st;
} ub_cstack;

typedef struct ub_cx {
    ub_loader *ld;
    ub_diags *diags;
    ub_strtab *t;
    ub_cstack **stacks;
    size_t n_stacks, cap_stacks;
    ub_layer *out;
    /* instancing: prototypes made so far, and while one is written the
     * instance path its namespace replaces */
    struct ub_proto *protos;
    uint32_t n_protos, cap_protos;
    /* protos by key (a stage may have a million instances of as many
     * prototypes) */
    ub_idtab proto_tab;
    uint32_t last_proto_id; /* N of the last Flattened_Prototype_N named */
    int subroot_depth;      /* subroot arcs' ancestries being built */
    /* asset expressions said to use an undefined variable, each once */
    ub_names expr_told;
    /* targets and connections said to map to no stage path, each once
     * (keyed by layer, property and path) */
    ub_names scope_told;
    /* the last parent indexes subroot arcs' ancestries were built from
     * (ub_parent_index): the siblings of a prim below a reference each
     * inherit a class beside them, whose ancestry is the same parent's,
     * in the referenced layer and, implied, in the referencing one */
    struct {
        const ub_stack *ls;
        const char *path;
        ub_index ix;
    } up[4];
    unsigned up_next; /* the entry replaced next */
    const char *remap_from, *remap_to;
    /* the prototype's own path on OpenUSD's stage, "/__Prototype_N", which
     * its flatten leaves in pathExpression values */
    const char *remap_proto;
    /* relocates found so far, in stage paths (strongest first, one per
     * source) */
    struct ub_reloc *reloc;
    uint32_t n_reloc;
    ub_arena *a;
    ub_clip_bake *bake; /* attributes whose samples come from clips */
    size_t n_recovered;
    bool oom, failed;
    const char *k_references, *k_payload, *k_inherits, *k_specializes,
        *k_variants, *k_variant_sets, *k_active, *k_instanceable, *k_clips,
        *k_clip_sets, *k_api_schemas;
    const ub_schema_reg *schemas;
    const ub_meta_field *fields; /* the plugins' metadata fields */
    size_t n_fields;
} ub_cx;

/* The layer stack rooted at `root`.  The stage's own (the first made) is
 * never the one an arc to its root layer reaches: OpenUSD's stage has a
 * session layer on top, so an arc back into the root layer opens a layer
 * stack of its own (and is no cycle by itself). */
static ub_stack *ub_cx_stack(ub_cx *cx, ub_layer *root)
{
    for (size_t i = cx->n_stacks ? 1 : 0; i < cx->n_stacks; i++)
        if (cx->stacks[i]->root == root)
            return &cx->stacks[i]->st;
    if (cx->n_stacks == cx->cap_stacks) {
        size_t cap = cx->cap_stacks ? cx->cap_stacks * 2 : 8;
        ub_cstack **ns = realloc(cx->stacks, cap * sizeof *ns);
        if (!ns) {
            cx->oom = true;
            return NULL;
        }
        cx->stacks = ns;
        cx->cap_stacks = cap;
    }
    ub_cstack *c = calloc(1, sizeof *c);
    if (!c) {
        cx->oom = true;
        return NULL;
    }
    c->root = root;
    cx->stacks[cx->n_stacks++] = c;
    if (ub_stack_build(&c->st, cx->ld, root, cx->diags) != 0)
        cx->oom = true;
    cx->n_recovered += c->st.n_recovered;
    return &c->st;
}

/* --- prim indexes --------------------------------------------------------- */

enum { UB_MAX_NODES = 4096 };

static int ub_index_add(ub_cx *cx, ub_index *ix, const ub_node *n)
{
    if (ix->n == ix->cap) {
        int cap = ix->cap ? ix->cap * 2 : 16;
        ub_node *nv = realloc(ix->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            cx->oom = true;
            return -1;
        }
        ix->v = nv;
        ix->cap = cap;
    }
    ix->v[ix->n] = *n;
    return ix->n++;
}

/* p (variant-free, in node i's namespace) in its parent's namespace.
 * root_identity: map a path outside the arc to itself, as a class-based
 * arc does (n->root_identity) -- but not one inside the arc's target: it
 * would not map back (PcpMapFunction keeps its maps one to one), so a
 * class's target path into the instance that inherits it is dropped. */
static const char *ub_map_step(ub_cx *cx, const ub_node *n, const char *p,
                               bool root_identity)
{
    if (!n->src)
        return p;
    const char *r = ub_path_replace_prefix(cx->t, p, n->src, n->tgt);
    if (r)
        return r;
    if (root_identity)
        return p;
    return n->root_identity && !ub_path_has_prefix(p, n->tgt) ? p : NULL;
}

/* p in node i's namespace mapped into the stage's, or NULL; *stop (when
 * not NULL): the node whose arc does not map it, or -1. */
static const char *ub_map_to_root_at(ub_cx *cx, const ub_index *ix, int i,
                                     const char *p, int *stop)
{
    for (; p && i >= 0 && ix->v[i].parent >= 0; i = ix->v[i].parent) {
        const char *q = ub_map_step(cx, &ix->v[i], p, false);
        if (!q && stop)
            *stop = i;
        p = q;
    }
    return p;
}

static const char *ub_map_to_root(ub_cx *cx, const ub_index *ix, int i,
                                  const char *p)
{
    return ub_map_to_root_at(cx, ix, i, p, NULL);
}

static int ub_arc_rank(int arc)
{
    static const int rank[] = {
        [UB_ARC_ROOT] = 0,      [UB_ARC_INHERIT] = 1,
        [UB_ARC_VARIANT] = 2,   [UB_ARC_RELOCATE] = 3,
        [UB_ARC_REFERENCE] = 4, [UB_ARC_PAYLOAD] = 5,
        [UB_ARC_SPECIALIZE] = 6};
    return rank[arc];
}

static int ub_cmp_sibling(const ub_index *ix, int a, int b)
{
    const ub_node *x = &ix->v[a], *y = &ix->v[b];
    if (ub_arc_rank(x->arc) != ub_arc_rank(y->arc))
        return ub_arc_rank(x->arc) - ub_arc_rank(y->arc);
    if (x->depth != y->depth)
        return y->depth - x->depth;
    if (x->sib != y->sib)
        return x->sib - y->sib;
    return a - b;
}

static void ub_sort_children(const ub_index *ix, int *c, int n)
{
    for (int i = 1; i < n; i++) {
        int x = c[i], j = i;
        while (j > 0 && ub_cmp_sibling(ix, c[j - 1], x) > 0) {
            c[j] = c[j - 1];
            j--;
        }
        c[j] = x;
    }
}

/* Depth-first strength order; specializes subtrees under a non-root node
 * are deferred to the end (Pcp propagates them to the root). */
static void ub_order_visit(const ub_index *ix, int i, int *out, int *n,
                           int *deferred, int *nd)
{
    out[(*n)++] = i;
    int nk = 0;
    for (int k = 0; k < ix->n; k++)
        nk += ix->v[k].parent == i;
    if (!nk)
        return;
    /* on the heap: a chain of arcs may be deep */
    int *kids = malloc((size_t)nk * sizeof *kids);
    if (!kids)
        return; /* the caller sees fewer nodes than ix->n */
    nk = 0;
    for (int k = 0; k < ix->n; k++)
        if (ix->v[k].parent == i)
            kids[nk++] = k;
    ub_sort_children(ix, kids, nk);
    for (int k = 0; k < nk; k++) {
        if (ix->v[kids[k]].arc == UB_ARC_SPECIALIZE)
            deferred[(*nd)++] = kids[k];
        else
            ub_order_visit(ix, kids[k], out, n, deferred, nd);
    }
    free(kids);
}

/* Fills out[0..ix->n) with the nodes strongest first. */
static void ub_strength_order(const ub_index *ix, int *out)
{
    int n = 0, nd = 0, done = 0;
    int deferred[ix->n + 1];
    ub_order_visit(ix, 0, out, &n, deferred, &nd);
    while (done < nd) {
        /* nearer the root first */
        int best = done;
        for (int k = done + 1; k < nd; k++) {
            int da = 0, db = 0;
            for (int p = deferred[k]; p >= 0; p = ix->v[p].parent)
                da++;
            for (int p = deferred[best]; p >= 0; p = ix->v[p].parent)
                db++;
            if (da < db)
                best = k;
        }
        int x = deferred[best];
        deferred[best] = deferred[done];
        deferred[done] = x;
        done++;
        ub_order_visit(ix, x, out, &n, deferred, &nd);
    }
    /* only when out of memory above: every node still appears once */
    for (int k = 0; n < ix->n && k < ix->n; k++) {
        bool seen = false;
        for (int m = 0; m < n && !seen; m++)
            seen = out[m] == k;
        if (!seen)
            out[n++] = k;
    }
}

/* --- list ops applied (SdfListOp::ApplyOperations) ------------------------ */

typedef struct ub_item {
    const void *elem; /* element storage in its layer */
    uint32_t li;      /* layer index in the node's stack */
    int node;
} ub_item;

/* A list op being applied: its items in order, and (past a few items) an
 * open-addressing index of them by value so that applying n items costs
 * O(n), not O(n^2) (a relationship may have a million targets).  A deleted
 * item keeps its place with elem NULL until the part is done. */
typedef struct ub_items {
    ub_item *v;
    uint32_t n, cap;
    const ub_type *type;
    uint32_t *slot; /* 1 + position in v, 0 for a free slot; NULL: none */
    uint32_t mask;  /* slot count - 1 */
} ub_items;

static void ub_items_free(ub_items *it)
{
    free(it->v);
    free(it->slot);
}

static bool ub_elem_eq(const ub_type *t, const void *a, const void *b)
{
    if (t->scalar == UB_SC_REF) {
        const ub_reference *x = a, *y = b;
        return x->asset == y->asset && x->prim_path == y->prim_path &&
               x->offset.offset == y->offset.offset &&
               x->offset.scale == y->offset.scale;
    }
    return memcmp(a, b, ub_type_elem_size(t)) == 0;
}

/* A hash of what ub_elem_eq compares (-0.0 hashes as 0.0, which it equals). */
static uint64_t ub_elem_hash(const ub_type *t, const void *e)
{
    if (t->scalar == UB_SC_REF) {
        const ub_reference *r = e;
        double num[2] = {r->offset.offset + 0.0, r->offset.scale + 0.0};
        uint64_t h = XXH3_64bits(num, sizeof num);
        h ^= (uint64_t)(uintptr_t)r->asset * UINT64_C(0x9e3779b97f4a7c15);
        h ^= (uint64_t)(uintptr_t)r->prim_path * UINT64_C(0xc2b2ae3d27d4eb4f);
        return h ^ (h >> 29);
    }
    return XXH3_64bits(e, ub_type_elem_size(t));
}

static int ub_items_find(const ub_items *it, const void *e)
{
    if (!it->slot) {
        for (uint32_t i = 0; i < it->n; i++)
            if (it->v[i].elem && ub_elem_eq(it->type, it->v[i].elem, e))
                return (int)i;
        return -1;
    }
    for (uint32_t h = (uint32_t)ub_elem_hash(it->type, e) & it->mask;
         it->slot[h]; h = (h + 1) & it->mask) {
        const ub_item *x = &it->v[it->slot[h] - 1];
        if (x->elem && ub_elem_eq(it->type, x->elem, e))
            return (int)(it->slot[h] - 1);
    }
    return -1;
}

static void ub_items_slot_put(ub_items *it, uint32_t pos)
{
    uint32_t h = (uint32_t)ub_elem_hash(it->type, it->v[pos].elem) & it->mask;
    while (it->slot[h])
        h = (h + 1) & it->mask;
    it->slot[h] = pos + 1;
}

/* Index the live items afresh, with room for `more` to be pushed.  A few
 * items (most list ops have one to three) are searched without one. */
static bool ub_items_index(ub_items *it, uint32_t more)
{
    free(it->slot);
    it->slot = NULL;
    if ((uint64_t)it->n + more <= 16)
        return true;
    uint64_t want = 2 * ((uint64_t)it->n + more) + 2, cap = 8;
    while (cap < want)
        cap *= 2;
    if (cap > UINT32_MAX)
        return false;
    uint32_t *slot = calloc((size_t)cap, sizeof *slot);
    if (!slot)
        return false;
    it->slot = slot;
    it->mask = (uint32_t)cap - 1;
    for (uint32_t i = 0; i < it->n; i++)
        if (it->v[i].elem)
            ub_items_slot_put(it, i);
    return true;
}

/* Append x, indexed when there is an index (grown when half full). */
static bool ub_items_push(ub_items *it, ub_item x)
{
    if (it->n == it->cap) {
        uint32_t cap = it->cap ? it->cap * 2 : 8;
        ub_item *nv = realloc(it->v, cap * sizeof *nv);
        if (!nv)
            return false;
        it->v = nv;
        it->cap = cap;
    }
    it->v[it->n++] = x;
    if (it->slot && (uint64_t)it->n * 2 > it->mask)
        (void)ub_items_index(it, it->n); /* else searched without one */
    else if (it->slot)
        ub_items_slot_put(it, it->n - 1);
    return true;
}

/* Drop the deleted items, and the index, which no longer fits. */
static void ub_items_compact(ub_items *it)
{
    free(it->slot);
    it->slot = NULL;
    uint32_t w = 0;
    for (uint32_t i = 0; i < it->n; i++)
        if (it->v[i].elem)
            it->v[w++] = it->v[i];
    it->n = w;
}

/* The parts of a list op as OpenUSD's SdfListOp::ApplyOperations applies
 * them, duplicates in a part included (crate files may hold them; a mapped
 * path list may make them): explicit and added items are kept where they
 * first are; deleted ones removed; prepended ones moved to the front in the
 * order of their first occurrence, appended ones to the end in the order of
 * their last. */
static bool ub_items_add_part(ub_items *it, const ub_listop *lo,
                              ub_listop_part p, uint32_t li, int node)
{
    const ub_value *v = ub_listop_get(lo, p);
    if (!(p == UB_LO_EXPLICIT || lo->has[p]) || v->kind != UB_V_DATA)
        return true;
    if (!ub_items_index(it, v->count))
        return false;
    for (uint32_t i = 0; i < v->count; i++) {
        const void *x = ub_value_elem(v, i);
        if (ub_items_find(it, x) < 0 &&
            !ub_items_push(it, (ub_item){x, li, node}))
            return false;
    }
    return true;
}

static bool ub_items_move_part(ub_items *it, const ub_listop *lo,
                               ub_listop_part p, uint32_t li, int node)
{
    const ub_value *v = ub_listop_get(lo, p);
    if (!lo->has[p] || v->kind != UB_V_DATA || !v->count)
        return true;
    bool front = p == UB_LO_PREPEND;
    ub_items moved = {.type = it->type};
    bool ok = ub_items_index(&moved, v->count);
    for (uint32_t k = 0; ok && k < v->count; k++) {
        const void *x = ub_value_elem(v, front ? k : v->count - 1 - k);
        if (ub_items_find(&moved, x) < 0)
            ok = ub_items_push(&moved, (ub_item){x, li, node});
    }
    ok = ok && ub_items_index(it, 0);
    for (uint32_t k = 0; ok && k < moved.n; k++) {
        int at = ub_items_find(it, moved.v[k].elem);
        if (at >= 0)
            it->v[at].elem = NULL;
    }
    if (ok) {
        ub_items_compact(it);
        ub_item *nv = malloc(((size_t)it->n + moved.n) * sizeof *nv);
        ok = nv != NULL;
        if (ok) {
            /* appended items were gathered last occurrence first */
            uint32_t rest = front ? moved.n : 0, w = front ? 0 : it->n;
            for (uint32_t k = 0; k < moved.n; k++)
                nv[w + k] = moved.v[front ? k : moved.n - 1 - k];
            if (it->n)
                memcpy(nv + rest, it->v, it->n * sizeof *nv);
            free(it->v);
            it->v = nv;
            it->n += moved.n;
            it->cap = it->n;
        }
    }
    ub_items_free(&moved);
    return ok;
}

/* Items being reordered, and the reorder part's elements. */
typedef struct ub_items_order {
    const ub_item *v;
    const ub_type *type;
    const ub_value *order;
} ub_items_order;

static bool ub_items_is_entry(void *ctx, uint32_t item, uint32_t entry)
{
    const ub_items_order *o = ctx;
    return ub_elem_eq(o->type, o->v[item].elem,
                      ub_value_elem(o->order, entry));
}

static bool ub_items_apply(ub_items *it, const ub_listop *lo, uint32_t li,
                           int node)
{
    const ub_type *t = it->type;
    if (lo->is_explicit) {
        it->n = 0;
        return ub_items_add_part(it, lo, UB_LO_EXPLICIT, li, node);
    }
    const ub_value *d = ub_listop_get(lo, UB_LO_DELETE);
    if (lo->has[UB_LO_DELETE] && d->kind == UB_V_DATA && d->count) {
        if (!ub_items_index(it, 0))
            return false;
        for (uint32_t i = 0; i < d->count; i++) {
            int k = ub_items_find(it, ub_value_elem(d, i));
            if (k >= 0)
                it->v[k].elem = NULL;
        }
        ub_items_compact(it);
    }
    if (!ub_items_add_part(it, lo, UB_LO_ADD, li, node) ||
        !ub_items_move_part(it, lo, UB_LO_PREPEND, li, node) ||
        !ub_items_move_part(it, lo, UB_LO_APPEND, li, node))
        return false;
    const ub_value *ro = ub_listop_get(lo, UB_LO_REORDER);
    if (lo->has[UB_LO_REORDER] && ro->kind == UB_V_DATA && ro->count &&
        it->n) {
        uint32_t *perm = malloc(it->n * sizeof *perm);
        ub_item *was = malloc(it->n * sizeof *was);
        ub_items_order o = {was, t, ro};
        bool ok = perm && was;
        if (ok) {
            memcpy(was, it->v, it->n * sizeof *was);
            ok = ub_reorder_perm(it->n, ro->count, ub_items_is_entry, &o,
                                 perm) == 0;
        }
        for (uint32_t j = 0; ok && j < it->n; j++)
            it->v[j] = was[perm[j]];
        ub_items_compact(it); /* drops the index of the old order */
        free(perm);
        free(was);
        if (!ok)
            return false;
    }
    return true;
}

/* --- specs of a node ------------------------------------------------------ */

/* The list op `key` of node i's specs applied weakest first. */
static void ub_node_listop(ub_cx *cx, const ub_index *ix, int i,
                           const char *key, ub_items *it)
{
    const ub_node *n = &ix->v[i];
    for (size_t li = n->ls->n; li-- > 0;) {
        ub_prim *p = ub_layer_find_prim(n->ls->layers[li], n->path);
        ub_field *f = p ? ub_fields_find(&p->meta, key) : NULL;
        if (!f || f->value.kind != UB_V_LISTOP || !f->value.u.listop)
            continue;
        if (!it->type)
            it->type = ub_value_type(&f->value);
        if (!it->type || ub_value_type(&f->value)->scalar != it->type->scalar)
            continue;
        if (!ub_items_apply(it, f->value.u.listop, (uint32_t)li, i))
            cx->oom = true;
    }
}

static bool ub_is_cycle(ub_cx *cx, const ub_index *ix, int parent,
                        const ub_stack *ls, const char *path)
{
    const char *sp = ub_path_strip_variants(cx->t, path);
    for (int k = parent; k >= 0; k = ix->v[k].parent) {
        if (ix->v[k].ls != ls)
            continue;
        const char *kp = ub_path_strip_variants(cx->t, ix->v[k].path);
        if (!sp || !kp)
            return false;
        if (ub_path_has_prefix(sp, kp) || ub_path_has_prefix(kp, sp))
            return true;
    }
    return false;
}

static void ub_report(ub_cx *cx, ub_severity sev, const ub_layer *l,
                      ub_loc loc, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void ub_report(ub_cx *cx, ub_severity sev, const ub_layer *l,
                      ub_loc loc, const char *id, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ub_diag_addv(cx->diags, sev, loc, id, l ? l->source : NULL,
                 l ? l->source_len : 0, fmt, ap);
    va_end(ap);
}

static bool ub_has_child_site(const ub_index *ix, int parent, int arc,
                              const ub_stack *ls, const char *path)
{
    for (int k = 0; k < ix->n; k++)
        if (ix->v[k].parent == parent && ix->v[k].arc == arc &&
            ix->v[k].ls == ls && ix->v[k].path == path)
            return true;
    return false;
}

static int ub_index_add_arc(ub_cx *cx, ub_index *ix, const ub_node *nn);

/* A class path for a site inside a variant ("/A{v=x}B"): the part under
 * the variant keeps its selection (Pcp's _DetermineInheritPath). */
static const char *ub_class_site(ub_cx *cx, const char *cls, const char *site)
{
    const char *close = strrchr(site, '}');
    if (!close || !cls)
        return cls;
    const char *vp = ub_intern(cx->t, site, (size_t)(close - site + 1));
    const char *sv = vp ? ub_path_strip_variants(cx->t, vp) : NULL;
    if (!sv)
        return NULL;
    const char *r = ub_path_replace_prefix(cx->t, cls, sv, vp);
    return r ? r : cls;
}

/* A class-based arc added at c (under a non-root node) is implied to every
 * node above it, in that node's layer stack. */
static void ub_imply_class(ub_cx *cx, ub_index *ix, int c)
{
    ub_node cn = ix->v[c];
    const char *cls = ub_path_strip_variants(cx->t, cn.path);
    int cur = cn.parent;
    while (cur >= 0 && ix->v[cur].parent >= 0 && !cx->oom) {
        int par = ix->v[cur].parent;
        cls = ub_map_step(cx, &ix->v[cur], cls, true);
        if (!cls)
            return;
        const ub_node *pn = &ix->v[par];
        const char *inst = ub_path_strip_variants(cx->t, pn->path);
        if (!inst || cls == inst)
            return;
        const char *site = ub_class_site(cx, cls, pn->path);
        if (!site)
            return;
        /* The same site again would give its opinions twice.  Implied
         * across a reference or payload, Pcp adds it inert
         * (_AddClassBasedArc's ignoreIfSameAsSite) and counts it in
         * instance keys; across a class arc OpenUSD shares the instances
         * as if it were not there. */
        bool dup = pn->ls == cn.ls && site == cn.path;
        bool keep = !dup || ix->v[cur].arc == UB_ARC_REFERENCE ||
                    ix->v[cur].arc == UB_ARC_PAYLOAD;
        /* An implied class at one of the prim's own ancestors (a class
         * </C> implied at </C/P>) is a cycle, as Pcp finds it: its child
         * P would imply it again, one level deeper, without end. */
        if (!dup && ub_is_cycle(cx, ix, par, pn->ls, site)) {
            const ub_layer *l = pn->ls->layers[0];
            ub_loc at = {l->path, 0, 0};
            for (size_t li = 0; li < pn->ls->n && !at.line; li++) {
                const ub_prim *p =
                    ub_layer_find_prim(pn->ls->layers[li], pn->path);
                if (p) {
                    l = pn->ls->layers[li];
                    at = ub_layer_loc(l, p->loc);
                }
            }
            ub_report(cx, UB_ERROR, l, at, "arc-cycle",
                      "composition cycle: <%s> inherits or specializes "
                      "<%s> (implied across an arc), which leads back to "
                      "it; the arc is ignored",
                      inst, cls);
            cx->n_recovered++;
            return;
        }
        if (keep && !ub_has_child_site(ix, par, cn.arc, pn->ls, site)) {
            ub_node nn = {.arc = cn.arc,
                          .implied = true,
                          .inert = dup,
                          .dup_class = dup,
                          .evaluated = dup,
                          .variants_done = dup,
                          .root_identity = true,
                          .ls = pn->ls,
                          .path = site,
                          .src = cls,
                          .tgt = inst,
                          .offset = pn->offset,
                          .parent = par,
                          .depth = cn.depth,
                          .sib = cn.sib};
            if ((dup ? ub_index_add(cx, ix, &nn)
                     : ub_index_add_arc(cx, ix, &nn)) < 0)
                return;
        }
        cur = par;
    }
}

/* A specialize below a reference, a payload or a variant whose class,
 * implied up the index, comes back to its own site (an internal arc in
 * one layer stack): Pcp propagates it to the root, where it is that inert
 * implied node, and it comes without the target's ancestral opinions (as
 * usdcat shows; below an inherit they come).  Implied through an arc
 * that moves it (a reference </N> in </P> implies </N/M> as </P/M>), it
 * keeps them. */
static bool ub_specialize_propagated(ub_cx *cx, const ub_index *ix,
                                     const ub_node *n)
{
    if (n->arc != UB_ARC_SPECIALIZE || n->parent < 0 || n->implied)
        return false;
    int a = ix->v[n->parent].arc;
    if (a != UB_ARC_REFERENCE && a != UB_ARC_PAYLOAD && a != UB_ARC_VARIANT)
        return false;
    const char *cls = ub_path_strip_variants(cx->t, n->path);
    for (int cur = n->parent; cls && ix->v[cur].parent >= 0;
         cur = ix->v[cur].parent) {
        const ub_node *pn = &ix->v[ix->v[cur].parent];
        cls = ub_map_step(cx, &ix->v[cur], cls, true);
        const char *inst = ub_path_strip_variants(cx->t, pn->path);
        if (!cls || !inst || cls == inst)
            return false;
        if (pn->ls == n->ls && ub_class_site(cx, cls, pn->path) == n->path)
            return true;
    }
    return false;
}

static void ub_add_class_arcs(ub_cx *cx, ub_index *ix, int i, int arc,
                              const char *key)
{
    ub_items it = {0};
    ub_node_listop(cx, ix, i, key, &it);
    for (uint32_t k = 0; k < it.n && !cx->oom; k++) {
        const char *cls = *(const char *const *)it.v[k].elem;
        ub_node *n = &ix->v[i];
        const char *inst = ub_path_strip_variants(cx->t, n->path);
        if (!cls || !inst || !*cls)
            continue;
        if (ub_is_cycle(cx, ix, i, n->ls, cls)) {
            const ub_layer *l = n->ls->layers[it.v[k].li];
            ub_prim *p = ub_layer_find_prim(l, n->path);
            ub_report(cx, UB_ERROR, l,
                      p ? ub_layer_loc(l, p->loc) : (ub_loc){l->path, 0, 0},
                      "arc-cycle",
                      "composition cycle: <%s> inherits or specializes "
                      "<%s>, which leads back to it; the arc is ignored",
                      inst, cls);
            cx->n_recovered++;
            continue;
        }
        const char *site = ub_class_site(cx, cls, n->path);
        if (!site) {
            cx->oom = true;
            break;
        }
        ub_node nn = {.arc = (uint8_t)arc,
                      .root_identity = true,
                      .ls = n->ls,
                      .path = site,
                      .src = cls,
                      .tgt = inst,
                      .offset = n->offset,
                      .parent = i,
                      .depth = ix->depth,
                      .sib = (int)k};
        int c = ub_index_add_arc(cx, ix, &nn);
        if (c >= 0 && ix->v[i].parent >= 0)
            ub_imply_class(cx, ix, c);
    }
    ub_items_free(&it);
}

static bool ub_index_for_path(ub_cx *cx, ub_stack *ls, const char *path,
                              ub_index *out);

static bool ub_index_child(ub_cx *cx, const ub_index *ix, const char *name,
                           ub_index *child);

static bool ub_index_down(ub_cx *cx, ub_index *ix, const char *rest,
                          bool expand_last);

/* Whether a node of ix has the site (ls, path) already. */
static bool ub_index_has_site(const ub_index *ix, const ub_stack *ls,
                              const char *path)
{
    for (int k = 0; k < ix->n; k++)
        if (ix->v[k].ls == ls && ix->v[k].path == path)
            return true;
    return false;
}

/* Add nn to ix with sub (an index continued to nn's site, its first node
 * standing for nn) below it: sub's nodes but the first keep their arcs
 * to sub's first, now nn.  With no_variants a variant node of sub and
 * all under it are left out; with skip_dups a node whose site ix has
 * already, and all under it (Pcp's skipDuplicateNodes, for class arcs:
 * the same opinions are not given twice).  Returns nn's index in ix, or
 * -1. */
static int ub_graft(ub_cx *cx, ub_index *ix, const ub_node *nn,
                    const ub_index *sub, bool no_variants, bool skip_dups)
{
    int *map = malloc((size_t)sub->n * sizeof *map); /* sub -> ix, or -1 */
    if (!map) {
        cx->oom = true;
        return -1;
    }
    int at = map[0] = ub_index_add(cx, ix, nn);
    for (int k = 1; k < sub->n && at >= 0 && !cx->oom; k++) {
        ub_node n = sub->v[k];
        map[k] = -1;
        if (map[n.parent] < 0 || (no_variants && n.arc == UB_ARC_VARIANT) ||
            (skip_dups && ub_index_has_site(ix, n.ls, n.path)))
            continue;
        n.parent = map[n.parent];
        n.offset = ub_offset_compose(nn->offset, n.offset);
        n.depth = nn->depth;
        map[k] = ub_index_add(cx, ix, &n);
    }
    free(map);
    return at;
}

/* The index of path in ls (ub_index_for_path), kept in cx->up; NULL
 * when it cannot be built. */
static const ub_index *ub_parent_index(ub_cx *cx, ub_stack *ls,
                                       const char *path)
{
    const unsigned n = sizeof cx->up / sizeof cx->up[0];
    for (unsigned k = 0; k < n; k++)
        if (cx->up[k].ls == ls && cx->up[k].path == path)
            return &cx->up[k].ix;
    ub_index up;
    bool ok = ub_index_for_path(cx, ls, path, &up) && !cx->oom && !cx->failed;
    if (!ok) {
        free(up.v);
        return NULL;
    }
    unsigned k = cx->up_next++ % n;
    free(cx->up[k].ix.v);
    cx->up[k].ls = ls;
    cx->up[k].path = path;
    cx->up[k].ix = up;
    return &cx->up[k].ix;
}

/* An arc to a prim below a root prim (/A/B) -- a reference, a payload,
 * an inherit or a specialize -- brings the opinions the target has from
 * its ancestors' arcs too (as Pcp builds a subroot arc's subtree): the
 * index of the target's parent in its layer stack, continued at the
 * target's name, goes under the new node, its arcs at the target still to
 * evaluate with the rest of this index (whose variant selections are
 * stronger).  Returns false when nn targets a root prim or the ancestry
 * cannot be built (then nn is added alone); else *at is the new node. */
static bool ub_subroot_ancestry(ub_cx *cx, ub_index *ix, const ub_node *nn,
                                bool no_variants, bool skip_dups, int *at)
{
    const char *p = nn->path, *slash = strrchr(p, '/');
    if (slash == p || strchr(p, '{') || cx->subroot_depth >= 16)
        return false;
    const char *parent = ub_intern(cx->t, p, (size_t)(slash - p));
    const char *name = ub_intern_cstr(cx->t, slash + 1);
    ub_index sub = {0};
    cx->subroot_depth++;
    const ub_index *up =
        parent && name ? ub_parent_index(cx, nn->ls, parent) : NULL;
    bool ok = up && ub_index_child(cx, up, name, &sub);
    cx->subroot_depth--;
    if (ok && !cx->oom && !cx->failed)
        *at = ub_graft(cx, ix, nn, &sub, no_variants, skip_dups);
    else
        ok = false;
    free(sub.v);
    return ok;
}

/* The variant a site below it lies in: "/A{v=x}" for "/A{v=x}B/C"; NULL
 * for a site in no variant, or a variant's own ("/A{v=x}"), and out of
 * memory (then cx->oom). */
static const char *ub_variant_site(ub_cx *cx, const char *path)
{
    const char *close = strrchr(path, '}');
    if (!close || !close[1])
        return NULL;
    const char *r = ub_intern(cx->t, path, (size_t)(close - path + 1));
    if (!r)
        cx->oom = true;
    return r;
}

/* An ancestral variant node nn, at A{set=sel}rest (vsite is A{set=sel}):
 * what the variant at A authors -- a reference, say -- reaches rest as
 * any ancestor's arcs reach a prim.  The variant's own index, continued
 * down to nn's site, goes under nn, as ub_subroot_ancestry does for a
 * prim.  Returns nn's index in ix, or -1. */
static int ub_variant_ancestry(ub_cx *cx, ub_index *ix, const ub_node *nn,
                               const char *vsite, bool skip_dups)
{
    if (cx->subroot_depth >= 16)
        return ub_index_add(cx, ix, nn);
    ub_node root = {.arc = UB_ARC_VARIANT,
                    .ls = nn->ls,
                    .path = vsite,
                    .offset = UB_OFFSET_IDENTITY,
                    .parent = -1};
    int depth = 0;
    for (const char *c = vsite; *c && *c != '{'; c++)
        depth += *c == '/';
    ub_index sub = {.depth = depth};
    cx->subroot_depth++;
    bool ok = ub_index_add(cx, &sub, &root) >= 0 &&
              ub_index_down(cx, &sub, nn->path + strlen(vsite), false);
    cx->subroot_depth--;
    int at = -1;
    if (ok && !cx->oom && !cx->failed && sub.n > 0)
        at = ub_graft(cx, ix, nn, &sub, false, skip_dups);
    else if (!cx->oom && !cx->failed)
        at = ub_index_add(cx, ix, nn);
    free(sub.v);
    return at;
}

/* nn added to ix with its ancestral opinions (ub_subroot_ancestry);
 * returns its index, or -1 when out of memory.  A class arc's ancestral
 * variants are not taken from the target's own layer stack: they come
 * with the selections of the whole index (ub_eval_ancestral_variants), as
 * Pcp finds them through its stack frames. */
static int ub_index_add_arc(ub_cx *cx, ub_index *ix, const ub_node *nn)
{
    if (ub_specialize_propagated(cx, ix, nn))
        return ub_index_add(cx, ix, nn);
    bool cls = nn->arc == UB_ARC_INHERIT || nn->arc == UB_ARC_SPECIALIZE;
    bool skip_dups = cls && !nn->inert;
    /* a site inside a variant (an arc authored there): the variant's
     * arcs are its ancestors' */
    const char *vsite = ub_variant_site(cx, nn->path);
    if (vsite)
        return ub_variant_ancestry(cx, ix, nn, vsite, skip_dups);
    if (cx->oom)
        return -1;
    int at = -1;
    return ub_subroot_ancestry(cx, ix, nn, cls, skip_dups, &at)
               ? at
               : ub_index_add(cx, ix, nn);
}

static void ub_add_ref_arcs(ub_cx *cx, ub_index *ix, int i, int arc,
                            const char *key)
{
    ub_items it = {0};
    ub_node_listop(cx, ix, i, key, &it);
    for (uint32_t k = 0; k < it.n && !cx->oom; k++) {
        const ub_reference *r = it.v[k].elem;
        ub_node *n = &ix->v[i];
        uint32_t li = it.v[k].li;
        ub_layer *from = n->ls->layers[li];
        ub_stack *ls = n->ls;
        ub_layer *target_root = n->ls->layers[0];
        if (r->asset && *r->asset) {
            ub_load_status st;
            ub_layer *l =
                ub_loader_open_arc(cx->ld, r->asset, from,
                                   ub_layer_loc(from, r->loc), &st,
                                   &cx->n_recovered);
            if (!l) {
                cx->failed |= !ub_load_recoverable(st);
                continue;
            }
            ls = ub_cx_stack(cx, l);
            if (!ls)
                continue;
            n = &ix->v[i];
            target_root = l;
        }
        const char *tp = r->prim_path;
        if (!tp || !*tp) {
            const char *k_dp = ub_intern_cstr(cx->t, "defaultPrim");
            ub_field *dp = k_dp ? ub_fields_find(&target_root->meta, k_dp)
                                : NULL;
            const ub_type *dt = dp ? ub_value_type(&dp->value) : NULL;
            const char *name = dp && dp->value.kind == UB_V_DATA && dt &&
                                       dt->scalar == UB_SC_STRING
                                   ? ub_value_str(&dp->value, 0)
                                   : NULL;
            if (!name || !*name) {
                ub_report(cx, UB_ERROR, from, ub_layer_loc(from, r->loc), "reference-no-prim",
                          "%s to @%s@ names no prim, and that layer has no "
                          "defaultPrim; the arc is ignored",
                          arc == UB_ARC_PAYLOAD ? "payload" : "reference",
                          r->asset);
                cx->n_recovered++;
                continue;
            }
            tp = name[0] == '/' ? name : ub_path_child(cx->t, "/", name);
            if (!tp) {
                cx->oom = true;
                continue;
            }
        }
        /* A target without specs adds nothing (Pcp reports it only when
         * nothing under the new node has specs either). */
        if (ub_is_cycle(cx, ix, i, ls, tp)) {
            ub_report(cx, UB_ERROR, from, ub_layer_loc(from, r->loc), "arc-cycle",
                      "composition cycle: the arc to <%s> in @%s@ leads "
                      "back to a prim that is being composed; the arc is "
                      "ignored",
                      tp, *r->asset ? r->asset : from->path);
            cx->n_recovered++;
            continue;
        }
        ub_offset authored = {r->has_offset ? r->offset.offset : 0.0,
                              r->has_scale ? r->offset.scale : 1.0};
        ub_offset_status st = ub_offset_validate(authored);
        if (ub_offset_status_ignored(st)) {
            ub_report(cx, UB_ERROR, from, ub_layer_loc(from, r->loc), "offset-invalid",
                      "layer offset of the arc to @%s@: %s; the offset is "
                      "ignored",
                      r->asset, ub_offset_status_text(st));
            cx->n_recovered++;
            authored = UB_OFFSET_IDENTITY;
        }
        /* as for a sublayer (ub_stack_walk): rates that differ scale the
         * arc's times by their ratio, of no use if either is not a rate */
        double from_tcps = ub_layer_tcps(from);
        double to_tcps = ub_layer_tcps(target_root);
        if (from_tcps != to_tcps &&
            !(ub_rate_ok(from_tcps) && ub_rate_ok(to_tcps))) {
            ub_layer_report_rate(ub_rate_ok(from_tcps) ? target_root : from,
                                 cx->diags);
            continue;
        }
        /* an internal arc inside a variant stays inside it */
        const char *site = *r->asset ? tp : ub_class_site(cx, tp, n->path);
        if (!site) {
            cx->oom = true;
            continue;
        }
        ub_offset base = ub_offset_compose(n->offset, n->ls->offsets[li]);
        ub_offset o =
            ub_sublayer_offset(base, authored, from_tcps, to_tcps, NULL);
        const char *inst = ub_path_strip_variants(cx->t, n->path);
        ub_node nn = {.arc = (uint8_t)arc,
                      /* internal arcs keep the whole namespace visible */
                      .root_identity = !*r->asset,
                      .ls = ls,
                      .path = site,
                      .src = tp,
                      .tgt = inst,
                      .offset = o,
                      .parent = i,
                      .depth = ix->depth,
                      .sib = (int)k};
        ub_index_add_arc(cx, ix, &nn);
    }
    ub_items_free(&it);
}

static void ub_eval_arcs(ub_cx *cx, ub_index *ix, int i)
{
    ub_add_class_arcs(cx, ix, i, UB_ARC_INHERIT, cx->k_inherits);
    ub_add_ref_arcs(cx, ix, i, UB_ARC_REFERENCE, cx->k_references);
    ub_add_ref_arcs(cx, ix, i, UB_ARC_PAYLOAD, cx->k_payload);
    ub_add_class_arcs(cx, ix, i, UB_ARC_SPECIALIZE, cx->k_specializes);
}

/* The expressionVariables of a layer stack (its root layer's). */
static const ub_dict *ub_stack_vars(const ub_stack *ls)
{
    const ub_layer *l = ls->layers[0];
    const char *k = ub_intern_cstr(l->strtab, "expressionVariables");
    const ub_field *f = k ? ub_fields_find(&l->meta, k) : NULL;
    return f && f->value.kind == UB_V_DICT ? f->value.u.dict : NULL;
}

/* The strongest selection for variant set `set` over the whole index. */
static const char *ub_variant_selection(ub_cx *cx, const ub_index *ix,
                                        const char *set)
{
    int order[ix->n];
    ub_strength_order(ix, order);
    for (int k = 0; k < ix->n; k++) {
        const ub_node *n = &ix->v[order[k]];
        for (size_t li = 0; !n->inert && li < n->ls->n; li++) {
            ub_prim *p = ub_layer_find_prim(n->ls->layers[li], n->path);
            ub_field *f = p ? ub_fields_find(&p->meta, cx->k_variants) : NULL;
            if (!f || f->value.kind != UB_V_DICT || !f->value.u.dict)
                continue;
            ub_dict_entry *e = ub_dict_find(f->value.u.dict, set);
            if (e && e->value.kind == UB_V_DATA && ub_value_type(&e->value) &&
                ub_value_type(&e->value)->scalar == UB_SC_STRING &&
                    e->value.count)
                return ub_value_str(&e->value, 0);
        }
    }
    return NULL;
}

/* Variant sets on an ancestor of a newly added node's site apply to it:
 * a class or subroot reference inside a prim with variants sees the
 * selected variant's opinions (Pcp's ancestral variant arcs).  The
 * selection is the stage's at that ancestor, else the node's own layer
 * stack's. */
static void ub_eval_ancestral_variants(ub_cx *cx, ub_index *ix, int i)
{
    const ub_node *n = &ix->v[i];
    if (n->ancestral || n->parent < 0 ||
        n->arc == UB_ARC_VARIANT ||
        n->arc == UB_ARC_RELOCATE || strchr(n->path, '{'))
        return;
    if (ub_specialize_propagated(cx, ix, n))
        return; /* (no ancestral opinions: see ub_index_add_arc) */
    /* Below a class arc made at this prim, a variant whose site is in the
     * index already is left out, as Pcp's _AddVariantArc does. */
    bool skip_dups = false;
    for (int k = i; k > 0 && !skip_dups; k = ix->v[k].parent) {
        const ub_node *a = &ix->v[k];
        skip_dups = (a->arc == UB_ARC_INHERIT ||
                     a->arc == UB_ARC_SPECIALIZE) &&
                    !a->ancestral && !a->inert && a->depth == ix->depth;
    }
    const char *path = n->path;
    for (const char *slash = strrchr(path, '/'); slash && slash > path;
         slash = strrchr(path, '/')) {
        /* ancestor A = path[0..slash) */
        const char *anc = ub_intern(cx->t, path, (size_t)(slash - path));
        if (!anc) {
            cx->oom = true;
            return;
        }
        ub_node tmp = *n;
        tmp.path = anc;
        ub_index one = {.v = &tmp, .n = 1, .cap = 1};
        ub_items sets = {0};
        ub_node_listop(cx, &one, 0, cx->k_variant_sets, &sets);
        const char *root_anc = ub_map_to_root(cx, ix, i, anc);
        for (uint32_t k = 0; k < sets.n && !cx->oom; k++) {
            const char *set = *(const char *const *)sets.v[k].elem;
            const char *sel = NULL;
            const ub_stack *stacks[2] = {ix->v[0].ls, n->ls};
            const char *where[2] = {root_anc, anc};
            for (int w = 0; w < 2 && !sel; w++)
                for (size_t li = 0; where[w] && li < stacks[w]->n && !sel;
                     li++) {
                    ub_prim *p = ub_layer_find_prim(stacks[w]->layers[li],
                                                    where[w]);
                    ub_field *f =
                        p ? ub_fields_find(&p->meta, cx->k_variants) : NULL;
                    ub_dict_entry *e =
                        f && f->value.kind == UB_V_DICT && f->value.u.dict
                            ? ub_dict_find(f->value.u.dict, set)
                            : NULL;
                    if (e && e->value.kind == UB_V_DATA &&
                        ub_value_type(&e->value) &&
                        ub_value_type(&e->value)->scalar == UB_SC_STRING &&
                        e->value.count)
                        sel = ub_value_str(&e->value, 0);
                }
            if (!sel || !*sel)
                continue;
            size_t need = strlen(n->path) + strlen(set) + strlen(sel) + 4;
            char *b = malloc(need);
            if (!b) {
                cx->oom = true;
                break;
            }
            snprintf(b, need, "%s{%s=%s}%s", anc, set, sel,
                     n->path + strlen(anc) + 1);
            const char *vp = ub_intern_cstr(cx->t, b);
            free(b);
            ub_node nn = {.arc = UB_ARC_VARIANT,
                          .ls = n->ls,
                          .path = vp,
                          .offset = n->offset,
                          .parent = i,
                          .depth = ix->depth,
                          .sib = (int)k};
            const char *vsite = vp ? ub_variant_site(cx, vp) : NULL;
            if (skip_dups && vp && ub_index_has_site(ix, n->ls, vp))
                continue;
            if (!vp || !vsite ||
                ub_variant_ancestry(cx, ix, &nn, vsite, skip_dups) < 0)
                cx->oom |= !cx->failed;
            n = &ix->v[i];
        }
        ub_items_free(&sets);
        path = anc;
    }
}

/* Say once per expression that it used an undefined variable by its name
 * (ub_expr_eval). */
static void ub_expr_told(ub_cx *cx, const ub_layer *l, const char *expr,
                         const char *result, const char *var)
{
    if (ub_names_has(&cx->expr_told, expr))
        return;
    if (ub_names_add(&cx->expr_told, expr) < 0) {
        cx->oom = true;
        return;
    }
    ub_expr_warn_undefined(cx->diags, (ub_loc){l->path, 0, 0}, l, expr,
                           result, var);
}

static void ub_eval_variants(ub_cx *cx, ub_index *ix, int i)
{
    ub_items it = {0};
    ub_node_listop(cx, ix, i, cx->k_variant_sets, &it);
    for (uint32_t k = 0; k < it.n && !cx->oom; k++) {
        const char *set = *(const char *const *)it.v[k].elem;
        const char *sel = ub_variant_selection(cx, ix, set);
        if (sel && ub_expr_is(sel)) {
            /* a selection may be a variable expression, evaluated with
             * the expressionVariables of the node's layer stack */
            const char *r = NULL, *what = NULL;
            ub_expr_status st = ub_expr_eval(cx->t, sel,
                                             ub_stack_vars(ix->v[i].ls), &r,
                                             &what);
            if (st == UB_EXPR_NOMEM) {
                cx->oom = true;
                break;
            }
            if (st != UB_EXPR_OK) {
                const ub_layer *l = ix->v[i].ls->layers[0];
                ub_report(cx, UB_ERROR, l, (ub_loc){l->path, 0, 0},
                          "variant-selection-expression",
                          "variant selection %s for set '%s' at <%s>: %s%s%s",
                          sel, set, ix->v[i].path, ub_expr_status_text(st),
                          what ? ": " : "", what ? what : "");
                cx->failed = true;
                break;
            }
            if (what)
                ub_expr_told(cx, ix->v[i].ls->layers[0], sel, r, what);
            sel = r;
        }
        if (!sel || !*sel)
            continue;
        const ub_node *n = &ix->v[i];
        size_t need = strlen(n->path) + strlen(set) + strlen(sel) + 4;
        char *b = malloc(need);
        if (!b) {
            cx->oom = true;
            break;
        }
        snprintf(b, need, "%s{%s=%s}", n->path, set, sel);
        const char *vp = ub_intern_cstr(cx->t, b);
        free(b);
        if (!vp) {
            cx->oom = true;
            break;
        }
        ub_node nn = {.arc = UB_ARC_VARIANT,
                      .ls = n->ls,
                      .path = vp,
                      .offset = n->offset,
                      .parent = i,
                      .depth = ix->depth,
                      .sib = (int)k};
        ub_index_add(cx, ix, &nn);
    }
    ub_items_free(&it);
}

/* Evaluate arcs until none is left: all non-variant arcs first, then the
 * variant sets of the strongest node that has some pending. */
static void ub_index_expand(ub_cx *cx, ub_index *ix)
{
    for (;;) {
        if (cx->oom || cx->failed)
            return;
        if (ix->n > UB_MAX_NODES) {
            ub_report(cx, UB_ERROR, NULL, (ub_loc){NULL, 0, 0},
                      "compose-too-large",
                      "a prim index grew beyond %d nodes (at %s); "
                      "composition stopped",
                      UB_MAX_NODES, ix->v[0].path);
            cx->failed = true;
            return;
        }
        bool progress = false;
        for (int i = 0; i < ix->n; i++)
            if (!ix->v[i].evaluated) {
                ix->v[i].evaluated = true;
                ub_eval_arcs(cx, ix, i);
                progress = true;
            }
        if (progress)
            continue;
        int order[ix->n];
        ub_strength_order(ix, order);
        for (int k = 0; k < ix->n && !progress; k++)
            if (!ix->v[order[k]].variants_done) {
                ix->v[order[k]].variants_done = true;
                ub_eval_variants(cx, ix, order[k]);
                ub_eval_ancestral_variants(cx, ix, order[k]);
                progress = true;
            }
        if (!progress)
            return;
    }
}

/* --- opinions ------------------------------------------------------------- */

typedef struct ub_op {
    int node;
    uint32_t li;
    ub_prim *spec;
} ub_op;

typedef struct ub_ops {
    ub_op *v;
    uint32_t n;
} ub_ops;

static bool ub_collect_ops(ub_cx *cx, const ub_index *ix, ub_ops *ops)
{
    int order[ix->n];
    ub_strength_order(ix, order);
    size_t total = 0;
    for (int k = 0; k < ix->n; k++)
        total += ix->v[k].ls->n;
    ops->v = malloc((total ? total : 1) * sizeof *ops->v);
    ops->n = 0;
    if (!ops->v) {
        cx->oom = true;
        return false;
    }
    for (int k = 0; k < ix->n; k++) {
        const ub_node *n = &ix->v[order[k]];
        for (size_t li = 0; !n->inert && li < n->ls->n; li++) {
            ub_prim *p = ub_layer_find_prim(n->ls->layers[li], n->path);
            if (p)
                ops->v[ops->n++] = (ub_op){order[k], (uint32_t)li, p};
        }
    }
    return true;
}

/* The time mapping of an opinion into stage time. */
static ub_offset ub_op_offset(const ub_index *ix, const ub_op *op)
{
    const ub_node *n = &ix->v[op->node];
    return ub_offset_compose(n->offset, n->ls->offsets[op->li]);
}

static const ub_layer *ub_op_layer(const ub_index *ix, const ub_op *op)
{
    const ub_node *n = &ix->v[op->node];
    return n->ls->layers[op->li];
}

/* --- values ------------------------------------------------------------- */

/* An asset path anchored to the layer that wrote it, as UsdStage does for
 * flattening (ub_loader_anchor), after evaluating an expression. */
static const char *ub_anchor(ub_cx *cx, const ub_layer *l,
                             const ub_dict *vars, const char *asset)
{
    if (ub_expr_is(asset)) {
        /* evaluated with the layer stack's expressionVariables first; one
         * that cannot be is kept as written, as OpenUSD keeps it */
        const char *r = NULL, *what = NULL;
        ub_expr_status st = ub_expr_eval(cx->t, asset, vars, &r, &what);
        if (st == UB_EXPR_NOMEM)
            cx->oom = true;
        if (st == UB_EXPR_CONTROL && !cx->failed) {
            /* kept as written, it would mean something else */
            ub_report(cx, UB_ERROR, l, (ub_loc){l->path, 0, 0},
                      "asset-expression", "asset path %s: %s", asset,
                      ub_expr_status_text(st));
            cx->failed = true;
        }
        if (st != UB_EXPR_OK || !r)
            return asset;
        if (what)
            ub_expr_told(cx, l, asset, r, what);
        asset = r;
    }
    const char *r = ub_loader_anchor(cx->ld, asset, l);
    if (!r)
        cx->oom = true; /* the flatten fails: asset is never written */
    return r ? r : asset;
}

static void ub_anchor_value(ub_cx *cx, const ub_layer *l, const ub_dict *vars,
                            ub_value *v)
{
    if (v->kind == UB_V_DATA && v->type_id == UB_TY_ASSET) {
        const char **s = ub_value_data(v);
        for (uint32_t i = 0; i < v->count; i++)
            s[i] = ub_anchor(cx, l, vars, s[i]);
    } else if (v->kind == UB_V_DICT && v->u.dict) {
        for (uint32_t i = 0; i < v->u.dict->n; i++)
            ub_anchor_value(cx, l, vars, &v->u.dict->e[i].value);
    }
}

static const char *ub_relocate(ub_cx *cx, const char *p);

typedef struct ub_pe_site {
    ub_cx *cx;
    const ub_index *ix;
    int node;
} ub_pe_site;

/* A path in a pathExpression, from its node's namespace into the stage's
 * (UsdStage's _MapPathExpressionToPrim); in a prototype, into OpenUSD's
 * prototype path (its flatten does not rename those). */
static const char *ub_pe_map_path(void *ud, const char *path)
{
    ub_pe_site *s = ud;
    ub_cx *cx = s->cx;
    if (path[0] != '/') {
        /* never anchored (a time sample): only an identity map keeps it */
        for (int i = s->node; i >= 0 && s->ix->v[i].parent >= 0;
             i = s->ix->v[i].parent)
            if (s->ix->v[i].src)
                return NULL;
        return path;
    }
    const char *m = ub_map_to_root(cx, s->ix, s->node, path);
    if (!m)
        return NULL;
    m = ub_relocate(cx, m);
    if (cx->remap_from && cx->remap_proto &&
        ub_path_has_prefix(m, cx->remap_from))
        m = ub_path_replace_prefix(cx->t, m, cx->remap_from, cx->remap_proto);
    if (!m)
        cx->oom = true;
    return m;
}

/* The text t an expression function made (status st) into *slot,
 * interned; on a syntax error *slot keeps its text. */
static void ub_put_expr(ub_cx *cx, const char **slot, ub_pathexpr_status st,
                        char *t)
{
    if (st == UB_PATHEXPR_NOMEM)
        cx->oom = true;
    if (st == UB_PATHEXPR_OK) {
        *slot = ub_intern_cstr(cx->t, t);
        if (!*slot)
            cx->oom = true;
    }
    free(t);
}

static void ub_map_path_exprs(ub_cx *cx, const ub_index *ix, int node,
                              ub_value *v)
{
    ub_pe_site site = {cx, ix, node};
    const char **s = ub_value_data(v);
    for (uint32_t i = 0; i < v->count && !cx->oom; i++) {
        char *t = NULL;
        ub_pathexpr_status st =
            ub_pathexpr_rewrite(s[i], NULL, ub_pe_map_path, &site, &t);
        ub_put_expr(cx, &s[i], st, t);
    }
}

/* An opinion's value copied into the output: times into stage time, asset
 * paths anchored, pathExpressions mapped. */
static ub_value ub_prepare(ub_cx *cx, const ub_index *ix, const ub_op *op,
                           const ub_value *v)
{
    ub_value c = ub_value_clone(cx->a, v);
    if (c.kind == UB_V_EMPTY && v->kind != UB_V_EMPTY) {
        cx->oom = true;
        return c;
    }
    ub_offset o = ub_op_offset(ix, op);
    if (!ub_offset_is_identity(o))
        ub_value_apply_offset(&c, o);
    ub_anchor_value(cx, ub_op_layer(ix, op),
                    ub_stack_vars(ix->v[op->node].ls), &c);
    if (c.kind == UB_V_DATA && c.type_id == UB_TY_PATH_EXPRESSION)
        ub_map_path_exprs(cx, ix, op->node, &c);
    return c;
}

static bool ub_is_path_expr(const ub_value *v)
{
    return v->kind == UB_V_DATA && v->type_id == UB_TY_PATH_EXPRESSION;
}

/* Stronger pathExpression value s over weaker w (both prepared) in place:
 * each expression's "%_" is the weaker one (SdfPathExpression::
 * ComposeOver); arrays compose element by element when their lengths
 * agree, else the stronger stands. */
static void ub_compose_path_exprs(ub_cx *cx, ub_value *s, const ub_value *w)
{
    if (s->is_array != w->is_array || s->count != w->count)
        return;
    const char **sv = ub_value_data(s);
    const char *const *wv = ub_value_data(w);
    for (uint32_t i = 0; i < s->count && !cx->oom; i++) {
        char *t = NULL;
        ub_pathexpr_status st = ub_pathexpr_compose(sv[i], wv[i], &t);
        ub_put_expr(cx, &sv[i], st, t);
    }
}

/* An attribute's default from its opinions, strongest first, as UsdStage
 * resolves it: the strongest value, but a pathExpression takes in each
 * weaker opinion (ub_compose_path_exprs).  Where a weaker opinion is not
 * a pathExpression, OpenUSD 24.08 holds that value instead, as read, and
 * the next opinion, resolved, replaces it -- type confusion, kept so that
 * the flattened layer is OpenUSD's.  A value held as read is not offset,
 * and its asset paths are anchored where the strongest opinion is, as
 * its flatten anchors them. */
static ub_value ub_compose_default(ub_cx *cx, const ub_index *ix,
                                   const ub_op *ops, ub_prop *const *props,
                                   uint32_t n)
{
    ub_value v = {0};
    uint32_t first = n;    /* the strongest opinion */
    bool held_raw = false; /* v is a weaker opinion held as read */
    for (uint32_t k = 0; k < n && !cx->oom; k++) {
        const ub_value *pv = &props[k]->default_value;
        if (pv->kind == UB_V_EMPTY)
            continue; /* no opinion */
        if (first == n)
            first = k;
        if (v.kind == UB_V_EMPTY || held_raw) {
            v = ub_prepare(cx, ix, &ops[k], pv);
            held_raw = false;
            if (!ub_is_path_expr(&v))
                break;
            continue;
        }
        if (ub_is_path_expr(pv)) {
            ub_value w = ub_prepare(cx, ix, &ops[k], pv);
            ub_compose_path_exprs(cx, &v, &w);
        } else {
            v = ub_value_clone(cx->a, pv);
            if (v.kind == UB_V_EMPTY)
                cx->oom = true;
            held_raw = true;
        }
    }
    if (held_raw)
        ub_anchor_value(cx, ub_op_layer(ix, &ops[first]),
                        ub_stack_vars(ix->v[ops[first].node].ls), &v);
    return v;
}

/* Weaker dictionary entries under stronger ones, key by key. */
static void ub_dict_under(ub_cx *cx, ub_dict *strong, const ub_dict *weak,
                          const ub_index *ix, const ub_op *op)
{
    for (uint32_t i = 0; i < weak->n; i++) {
        const ub_dict_entry *w = &weak->e[i];
        ub_dict_entry *s = ub_dict_find(strong, w->key);
        if (!s) {
            ub_value c = op ? ub_prepare(cx, ix, op, &w->value)
                            : ub_value_clone(cx->a, &w->value);
            if (!ub_dict_set(cx->a, strong, w->key, c, w->loc))
                cx->oom = true;
        } else if (s->value.kind == UB_V_DICT && s->value.u.dict &&
                   w->value.kind == UB_V_DICT && w->value.u.dict) {
            ub_dict_under(cx, s->value.u.dict, w->value.u.dict, ix, op);
        }
    }
}

static bool ub_private_field(ub_cx *cx, const char *key)
{
    static const char *const priv[] = {
        "inherits", "relocates", "payload", "references", "specializes",
        "subLayers", "variants", "variantSets", "clips", "clipSets",
        "clipActive", "clipAssetPaths", "clipManifestAssetPath",
        "clipPrimPath", "clipTemplateAssetPath", "clipTemplateEndTime",
        "clipTemplateStartTime", "clipTemplateStride", "clipTimes", NULL};
    (void)cx;
    for (int i = 0; priv[i]; i++)
        if (strcmp(priv[i], key) == 0)
            return true;
    return false;
}

/* Metadata of a prim or property: `metas[k]` is the field set of opinion
 * ops[k] (strongest first). */
static void ub_compose_meta(ub_cx *cx, ub_fields *out, const ub_index *ix,
                            const ub_op *ops, const ub_fields *const *metas,
                            uint32_t n, ub_spec_kind kind)
{
    for (uint32_t k = 0; k < n; k++) {
        const ub_fields *m = metas[k];
        for (uint32_t i = 0; i < m->n; i++) {
            const ub_field *f = &m->v[i];
            if (ub_private_field(cx, f->key) ||
                !ub_stack_field_registered_with(cx->fields, cx->n_fields,
                                                kind, f->key))
                continue;
            ub_field *have = ub_fields_find(out, f->key);
            if (f->value.kind == UB_V_LISTOP) {
                if (have)
                    continue;
                /* applied weakest first into one explicit list */
                ub_items it = {.type = ub_value_type(&f->value)};
                for (uint32_t j = n; j-- > k;) {
                    ub_field *g = ub_fields_find(metas[j], f->key);
                    if (g && g->value.kind == UB_V_LISTOP &&
                        g->value.u.listop &&
                            ub_value_type(&g->value) == it.type &&
                        !ub_items_apply(&it, g->value.u.listop, ops[j].li,
                                        ops[j].node))
                        cx->oom = true;
                }
                ub_value arr = ub_value_new(cx->a, it.type, it.n, true);
                ub_listop *lo = ub_listop_new(cx->a);
                if ((arr.kind == UB_V_EMPTY && it.n) || !lo) {
                    cx->oom = true;
                    ub_items_free(&it);
                    continue;
                }
                size_t es = ub_type_elem_size(it.type);
                for (uint32_t j = 0; j < it.n; j++)
                    memcpy(ub_value_elem(&arr, j), it.v[j].elem, es);
                ub_items_free(&it);
                lo->is_explicit = true;
                lo->has[UB_LO_EXPLICIT] = true;
                if (ub_listop_put(cx->a, lo, UB_LO_EXPLICIT, arr) != 0) {
                    cx->oom = true;
                    continue;
                }
                ub_value v = {.kind = UB_V_LISTOP,
                    .type_id = f->value.type_id};
                v.u.listop = lo;
                if (!ub_fields_set(cx->a, out, f->key, v, f->loc))
                    cx->oom = true;
                continue;
            }
            if (!have) {
                ub_value c = ub_prepare(cx, ix, &ops[k], &f->value);
                if (!ub_fields_set(cx->a, out, f->key, c, f->loc))
                    cx->oom = true;
            } else if (have->value.kind == UB_V_DICT && have->value.u.dict &&
                       f->value.kind == UB_V_DICT && f->value.u.dict) {
                ub_dict_under(cx, have->value.u.dict, f->value.u.dict, ix,
                              &ops[k]);
            }
        }
    }
}

/* --- schemas ------------------------------------------------------------- */

/* What the prim's definition (its type and its composed apiSchemas, see
 * ub_schema.h) says about property `name`: UsdStage takes a builtin
 * property's type name and variability from it, before any opinion. */
static bool ub_builtin_prop(ub_cx *cx, const ub_prim *outp, const char *name,
                            ub_schema_prop *sp)
{
    const ub_field *f = ub_fields_find(&outp->meta, cx->k_api_schemas);
    const ub_value *e = NULL;
    if (f && f->value.kind == UB_V_LISTOP && f->value.u.listop)
        e = ub_listop_get(f->value.u.listop, UB_LO_EXPLICIT);
    uint32_t n = e && e->kind == UB_V_DATA ? e->count : 0;
    const char *local[16];
    const char **apis = n <= 16 ? local : malloc(n * sizeof *apis);
    if (!apis) {
        cx->oom = true;
        return false;
    }
    for (uint32_t i = 0; i < n; i++)
        apis[i] = ub_value_str(e, i);
    bool found = ub_schema_lookup(cx->schemas, outp->type_name, apis, n, name,
                                  sp);
    if (apis != local)
        free(apis);
    return found;
}

/* --- relocates ------------------------------------------------------------ */

typedef struct ub_reloc {
    /* in the stage's namespace; tgt "": the source is removed (Pcp 24.08
     * takes a relocate to the empty path for a deletion) */
    const char *src, *tgt;
    ub_stack *ls;           /* the layer stack that says so */
    const char *ls_src;     /* the source in its namespace */
} ub_reloc;

static void ub_reloc_add(ub_cx *cx, const char *src, const char *tgt,
                         ub_stack *ls, const char *ls_src)
{
    if (!src || !tgt || !*src)
        return;
    for (uint32_t r = 0; r < cx->n_reloc; r++)
        if (cx->reloc[r].src == src)
            return;
    ub_reloc *nr = realloc(cx->reloc, (cx->n_reloc + 1) * sizeof *nr);
    if (!nr) {
        cx->oom = true;
        return;
    }
    cx->reloc = nr;
    cx->reloc[cx->n_reloc++] = (ub_reloc){src, tgt, ls, ls_src};
}

/* The relocates field of a layer (its value pairs of paths), or NULL. */
static const ub_field *ub_layer_relocates(const ub_layer *l)
{
    const char *k = ub_intern_cstr(l->strtab, "relocates");
    const ub_field *f = k ? ub_fields_find(&l->meta, k) : NULL;
    return f && f->value.kind == UB_V_DATA && f->value.type_id == UB_TY_PATH
               ? f
               : NULL;
}

/* Whether the warning keyed by the text in key (which this frees) is
 * told here for the first time: out-of-scope warnings are said once
 * however many places meet their cause (a crowd of one asset).  False,
 * with cx->oom, when out of memory. */
static bool ub_told_first(ub_cx *cx, ub_buf *key)
{
    const char *k = key->failed ? NULL : ub_intern(cx->t, key->data, key->len);
    ub_buf_free(key);
    if (k && ub_names_has(&cx->scope_told, k))
        return false;
    if (!k || ub_names_add(&cx->scope_told, k) < 0) {
        cx->oom = true;
        return false;
    }
    return true;
}

/* A stage path moved by the root layer stack's relocates (the longest
 * source that is a prefix). */
static const char *ub_relocate(ub_cx *cx, const char *p)
{
    const char *best = NULL, *to = NULL;
    for (uint32_t i = 0; i < cx->n_reloc; i++) {
        const char *s = cx->reloc[i].src;
        /* (a removed prim's paths stay as they are, as in OpenUSD) */
        if (!*cx->reloc[i].tgt)
            continue;
        if (ub_path_has_prefix(p, s) && (!best || strlen(s) > strlen(best)))
            best = s, to = cx->reloc[i].tgt;
    }
    const char *r = best ? ub_path_replace_prefix(cx->t, p, best, to) : p;
    return r ? r : p;
}

static const char *ub_path_parent(ub_strtab *t, const char *p)
{
    const char *slash = strrchr(p, '/');
    if (!slash || slash == p)
        return ub_intern_cstr(t, "/");
    return ub_intern(t, p, (size_t)(slash - p));
}

static const char *ub_arc_word(int arc);

/* Relocates of the layer stacks in a prim's index that move its
 * descendants, mapped into the stage's namespace (Pcp applies a layer
 * stack's relocates wherever that stack is composed). */
static void ub_register_relocates(ub_cx *cx, const ub_index *ix)
{
    for (int i = 0; i < ix->n && !cx->oom; i++) {
        const ub_node *n = &ix->v[i];
        const char *site = ub_path_strip_variants(cx->t, n->path);
        for (size_t li = 0; site && li < n->ls->n; li++) {
            const ub_layer *l = n->ls->layers[li];
            const ub_field *rf = ub_layer_relocates(l);
            const ub_value *r = rf ? &rf->value : NULL;
            for (uint32_t k = 0; r && k + 1 < r->count; k += 2) {
                const char *src = ub_value_str(r, k);
                const char *tgt = ub_value_str(r, k + 1);
                if (!*src || src == site || !ub_path_has_prefix(src, site))
                    continue;
                const char *to = tgt;
                int stop = -1;
                if (*tgt) {
                    to = ub_map_to_root_at(cx, ix, i, tgt, &stop);
                    /* (a target elsewhere under the arc: the index of a
                     * prim above, whose site holds both, registers it) */
                    if (to && !ub_path_has_prefix(tgt, site))
                        continue;
                }
                const char *from = ub_map_to_root(cx, ix, i, src);
                /* A target the arcs do not bring onto the stage: Pcp takes
                 * the prim from its source all the same, and it is nowhere
                 * (as a relocate to the empty path). */
                bool nowhere = *tgt && !to && stop >= 0 &&
                               ix->v[stop].parent >= 0;
                if (nowhere)
                    to = "";
                uint32_t before = cx->n_reloc;
                ub_reloc_add(cx, from, to, n->ls, src);
                if (!nowhere || cx->n_reloc == before)
                    continue;
                /* said once for the relocate, not for every place the
                 * layer is brought in */
                ub_buf key;
                ub_buf_init(&key);
                ub_buf_printf(&key, "relocate\n%s\n%s", l->path, src);
                if (!ub_told_first(cx, &key))
                    continue;
                ub_report(cx, UB_WARNING, l, ub_layer_loc(l, rf->loc),
                          "relocate-out-of-scope",
                          "<%s> is relocated to <%s>, which lies outside "
                          "the %s from <%s>: <%s> is removed from the "
                          "stage (and so wherever the layer is brought "
                          "in), as OpenUSD removes it",
                          src, tgt, ub_arc_word(ix->v[stop].arc),
                          ix->v[ix->v[stop].parent].path, from);
            }
        }
    }
}

/* --- value clips ---------------------------------------------------------- */

/* The clip sets that affect a prim: its own (strongest first), then its
 * nearest ancestor's with clips (Usd_ClipCache). */
typedef struct ub_clipsets {
    ub_clip_set *v;
    uint32_t n;
    uint32_t n_own; /* v[0..n_own) are owned */
} ub_clipsets;

static void ub_clipsets_free(ub_clipsets *c)
{
    for (uint32_t i = 0; i < c->n_own; i++)
        ub_clip_set_free(&c->v[i]);
    free(c->v);
}

/* One clip set being composed. */
typedef struct ub_csc {
    const char *name;
    ub_dict *info;
    bool anchored;
    int rank;      /* strength rank of the anchoring node */
    int node;
    uint32_t li;
    ub_offset off; /* anchoring layer -> stage */
    ub_loc loc;
    int lso;       /* position in the node's clipSets list */
} ub_csc;

typedef struct ub_cscs {
    ub_csc *v;
    uint32_t n, cap;
} ub_cscs;

static ub_csc *ub_cscs_get(ub_cx *cx, ub_cscs *l, const char *name)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].name == name)
            return &l->v[i];
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 4;
        ub_csc *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) {
            cx->oom = true;
            return NULL;
        }
        l->v = nv;
        l->cap = cap;
    }
    ub_csc *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->info = ub_dict_new(cx->a);
    if (!c->info)
        cx->oom = true;
    return c->info ? c : NULL;
}

static void ub_map_clip_times(ub_dict *info, const char *key, ub_offset o)
{
    ub_dict_entry *e = NULL;
    for (uint32_t i = 0; i < info->n && !e; i++)
        if (strcmp(info->e[i].key, key) == 0)
            e = &info->e[i];
    ub_value *v = e ? &e->value : NULL;
    if (!v || v->kind != UB_V_DATA || !ub_value_type(v) ||
        ub_value_type(v)->base != UB_TY_DOUBLE2 || ub_offset_is_identity(o))
        return;
    for (uint32_t i = 0; i < v->count; i++)
        ub_value_set_double(v, i, 0,
                            ub_offset_apply(o, ub_value_get_double(v, i, 0)));
}

static int ub_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The clip sets of one node, composed over its layers (weak to strong). */
static void ub_node_clip_sets(ub_cx *cx, const ub_index *ix, int node,
                              int rank, ub_cscs *out)
{
    const ub_node *n = &ix->v[node];
    const char *k_sets = ub_intern_cstr(cx->t, "clipSets");
    ub_items added = {.type = ub_type_get(UB_TY_STRING)};
    for (size_t li = n->ls->n; li-- > 0 && !cx->oom;) {
        const ub_layer *l = n->ls->layers[li];
        ub_prim *p = ub_layer_find_prim(l, n->path);
        if (!p)
            continue;
        ub_field *f = ub_fields_find(&p->meta, cx->k_clips);
        if (f && f->value.kind == UB_V_DICT && f->value.u.dict) {
            const ub_dict *clips = f->value.u.dict;
            const char **names = malloc((clips->n + 1) * sizeof *names);
            uint32_t nn = 0;
            if (!names) {
                cx->oom = true;
                break;
            }
            ub_offset off =
                ub_offset_compose(n->offset, n->ls->offsets[li]);
            for (uint32_t i = 0; i < clips->n; i++) {
                const ub_dict_entry *e = &clips->e[i];
                if (!*e->key || e->value.kind != UB_V_DICT || !e->value.u.dict)
                    continue;
                ub_csc *c = ub_cscs_get(cx, out, e->key);
                if (!c)
                    break;
                ub_value iv = ub_value_clone(cx->a, &e->value);
                if (iv.kind != UB_V_DICT) {
                    cx->oom = true;
                    break;
                }
                if (ub_clip_info_anchors(iv.u.dict)) {
                    c->anchored = true;
                    c->rank = rank;
                    c->node = node;
                    c->li = (uint32_t)li;
                    c->off = off;
                    c->loc = ub_layer_loc(l, f->loc);
                }
                ub_map_clip_times(iv.u.dict, "active", off);
                ub_map_clip_times(iv.u.dict, "times", off);
                ub_dict_under(cx, iv.u.dict, c->info, ix, NULL);
                c->info = iv.u.dict;
                names[nn++] = e->key;
            }
            qsort(names, nn, sizeof *names, ub_cmp_str);
            for (uint32_t i = 0; i < nn; i++) {
                bool have = false;
                for (uint32_t j = 0; j < added.n; j++)
                    have |= *(const char *const *)added.v[j].elem == names[i];
                /* the element must outlive `names`: point at the key */
                const char *const *keyp = NULL;
                for (uint32_t j = 0; j < clips->n && !keyp; j++)
                    if (clips->e[j].key == names[i])
                        keyp = &clips->e[j].key;
                if (!have && keyp &&
                    !ub_items_push(&added,
                                   (ub_item){keyp, (uint32_t)li, node}))
                    cx->oom = true;
            }
            free(names);
        }
        ub_field *sets = k_sets ? ub_fields_find(&p->meta, k_sets) : NULL;
        if (sets && sets->value.kind == UB_V_LISTOP && sets->value.u.listop &&
            ub_value_type(&sets->value) &&
                ub_value_type(&sets->value)->scalar == UB_SC_STRING &&
            !ub_items_apply(&added, sets->value.u.listop, (uint32_t)li, node))
            cx->oom = true;
    }
    /* a name clipSets gives that no clips dictionary here defines is
     * ignored (OpenUSD says nothing): a misspelling, most likely */
    for (uint32_t j = 0; j < added.n && !cx->oom; j++) {
        const char *const *keyp = added.v[j].elem;
        bool defined = false;
        for (uint32_t i = 0; keyp && i < out->n && !defined; i++)
            defined = out->v[i].name == *keyp;
        if (!keyp || defined)
            continue;
        const ub_layer *l = n->ls->layers[added.v[j].li];
        ub_prim *p = ub_layer_find_prim(l, n->path);
        ub_field *f = p && k_sets ? ub_fields_find(&p->meta, k_sets) : NULL;
        ub_loc at = f ? ub_layer_loc(l, f->loc) : (ub_loc){l->path, 0, 0};
        if (ub_diags_has(cx->diags, "clip-set-undefined", at))
            continue;
        ub_report(cx, UB_WARNING, l, at, "clip-set-undefined",
                  "clipSets of <%s> names clip set '%s', which no clips "
                  "dictionary of the prim defines: the name is ignored, as "
                  "OpenUSD ignores it",
                  n->path, *keyp);
    }
    /* only the sets the clipSets list op keeps, in its order */
    uint32_t w = 0;
    for (uint32_t i = 0; i < out->n; i++) {
        int pos = -1;
        for (uint32_t j = 0; j < added.n && pos < 0; j++)
            if (*(const char *const *)added.v[j].elem == out->v[i].name)
                pos = (int)j;
        if (pos < 0)
            continue;
        out->v[i].lso = pos;
        out->v[w++] = out->v[i];
    }
    out->n = w;
    ub_items_free(&added);
}

static void ub_prim_clip_sets(ub_cx *cx, const ub_index *ix,
                              const ub_clipsets *ancestral, ub_clipsets *out)
{
    memset(out, 0, sizeof *out);
    int order[ix->n];
    ub_strength_order(ix, order);
    ub_cscs all = {0};
    for (int k = 0; k < ix->n && !cx->oom; k++) {
        ub_cscs here = {0};
        ub_node_clip_sets(cx, ix, order[k], k, &here);
        for (uint32_t i = 0; i < here.n && !cx->oom; i++) {
            ub_csc *c = ub_cscs_get(cx, &all, here.v[i].name);
            if (!c)
                break;
            if (!c->anchored && here.v[i].anchored) {
                ub_dict *keep = c->info;
                *c = here.v[i];
                c->info = keep;
            }
            ub_dict_under(cx, c->info, here.v[i].info, ix, NULL);
        }
        free(here.v);
    }
    uint32_t n_own = 0;
    for (uint32_t i = 0; i < all.n; i++)
        n_own += all.v[i].anchored;
    /* by anchoring node, then clipSets order */
    for (uint32_t i = 1; i < all.n; i++)
        for (uint32_t j = i; j > 0; j--) {
            ub_csc *a = &all.v[j - 1], *b = &all.v[j];
            if (a->rank < b->rank || (a->rank == b->rank && a->lso <= b->lso))
                break;
            ub_csc x = *a;
            *a = *b;
            *b = x;
        }
    uint32_t cap = n_own + (n_own ? ancestral->n : 0) + 1;
    out->v = calloc(cap, sizeof *out->v);
    if (!out->v) {
        cx->oom = true;
        free(all.v);
        return;
    }
    for (uint32_t i = 0; i < all.n && !cx->oom; i++) {
        const ub_csc *c = &all.v[i];
        if (!c->anchored)
            continue;
        const ub_node *n = &ix->v[c->node];
        ub_clip_set *cs = &out->v[out->n];
        int r = ub_clip_set_init(cs, cx->ld, c->name, c->info,
                                 n->ls->layers[c->li], c->off, c->loc,
                                 cx->diags);
        if (r < 0)
            cx->oom = true;
        if (r != 1)
            continue;
        cs->anchor_stack = n->ls;
        cs->source_prim_path = ub_path_strip_variants(cx->t, n->path);
        cs->source_li = c->li;
        if (ub_clip_bake_keep(cx->bake, cs) != 0)
            cx->oom = true;
        out->n++;
    }
    out->n_own = out->n;
    free(all.v);
    if (!out->n_own) {
        /* none of its own: the ancestor's apply unchanged */
        free(out->v);
        out->v = ancestral->v;
        out->n = ancestral->n;
        out->n_own = 0;
        return;
    }
    for (uint32_t i = 0; i < ancestral->n; i++)
        out->v[out->n++] = ancestral->v[i];
}

/* --- properties ----------------------------------------------------------- */

/* Targets or connections: list ops applied weakest first, each path
 * mapped from its node's namespace into the stage's (unmapped ones are
 * dropped, as Pcp drops them). */
static const char *ub_arc_word(int arc)
{
    switch (arc) {
    case UB_ARC_INHERIT: return "inherit";
    case UB_ARC_SPECIALIZE: return "specialize";
    case UB_ARC_VARIANT: return "variant";
    case UB_ARC_RELOCATE: return "relocation";
    case UB_ARC_PAYLOAD: return "payload";
    default: return "reference";
    }
}

/* Say, once for each property and path, that the arc at node `stop`
 * does not bring target or connection `path` of op's property prop onto
 * the stage (OpenUSD says so too, and leaves it out). */
static void ub_tell_out_of_scope(ub_cx *cx, const ub_index *ix,
                                 const ub_op *op, const ub_prop *prop,
                                 const char *path, int stop, bool targets)
{
    const ub_layer *l = ub_op_layer(ix, op);
    const char *prim = ix->v[op->node].path; /* the spec's, in l */
    if (stop < 0 || ix->v[stop].parent < 0)
        return;
    ub_buf key;
    ub_buf_init(&key);
    ub_buf_printf(&key, "%s\n%s.%s\n%s", l->path, prim, prop->name, path);
    if (!ub_told_first(cx, &key))
        return;
    ub_report(cx, UB_WARNING, l, ub_layer_loc(l, prop->loc),
              "target-out-of-scope",
              "%s <%s> of <%s.%s> lies outside the %s from <%s>: it is "
              "left out, as OpenUSD leaves it out",
              targets ? "relationship target" : "connection", path, prim,
              prop->name, ub_arc_word(ix->v[stop].arc),
              ix->v[ix->v[stop].parent].path);
}

static ub_value ub_compose_paths(ub_cx *cx, const ub_index *ix,
                                 const ub_op *ops, ub_prop *const *props,
                                 uint32_t n, bool targets)
{
    /* Each opinion's paths are mapped into stage namespace first, so that
     * a stronger `delete` of a stage path removes a weaker target authored
     * across an arc (Pcp applies the list ops to translated paths). */
    ub_items it = {.type = ub_type_get(UB_TY_PATH)};
    /* the paths no arc maps, to be said at the end: a stronger explicit
     * list makes them moot (Pcp clears their errors) */
    struct ub_unmapped {
        uint32_t k;
        const char *path;
        int stop;
    } *unmapped = NULL;
    uint32_t n_unmapped = 0, cap_unmapped = 0;
    for (uint32_t k = n; k-- > 0 && !cx->oom;) {
        const ub_value *v = targets ? ub_prop_targets(props[k])
                                    : ub_prop_connections(props[k]);
        if (v->kind != UB_V_LISTOP || !v->u.listop)
            continue;
        if (v->u.listop->has[UB_LO_EXPLICIT])
            n_unmapped = 0;
        ub_listop *mapped = ub_listop_copy(cx->a, v->u.listop);
        if (!mapped) {
            cx->oom = true;
            break;
        }
        for (int part = 0; part < UB_LO_NPARTS; part++) {
            const ub_value *pv = ub_listop_get(v->u.listop, part);
            if (!mapped->has[part] || pv->kind != UB_V_DATA)
                continue;
            ub_value nv = ub_value_new(cx->a, ub_type_get(UB_TY_PATH),
                                       pv->count, true);
            if (nv.kind == UB_V_EMPTY && pv->count) {
                cx->oom = true;
                break;
            }
            uint32_t w = 0;
            for (uint32_t i = 0; i < pv->count; i++) {
                int stop = -1;
                const char *m = ub_map_to_root_at(cx, ix, ops[k].node,
                                                  ub_value_str(pv, i), &stop);
                if (m) {
                    ((const char **)ub_value_data(&nv))[w++] = m;
                } else if (part != UB_LO_DELETE) {
                    if (n_unmapped == cap_unmapped) {
                        uint32_t cap = cap_unmapped ? 2 * cap_unmapped : 4;
                        void *nu = realloc(unmapped, cap * sizeof *unmapped);
                        if (!nu) {
                            cx->oom = true;
                            continue;
                        }
                        unmapped = nu;
                        cap_unmapped = cap;
                    }
                    unmapped[n_unmapped++] =
                        (struct ub_unmapped){k, ub_value_str(pv, i), stop};
                }
            }
            ub_value_truncate(&nv, w);
            if (ub_listop_put(cx->a, mapped, part, nv) != 0) {
                cx->oom = true;
                break;
            }
        }
        if (!ub_items_apply(&it, mapped, ops[k].li, ops[k].node))
            cx->oom = true;
    }
    for (uint32_t u = 0; u < n_unmapped && !cx->oom; u++)
        ub_tell_out_of_scope(cx, ix, &ops[unmapped[u].k], props[unmapped[u].k],
                             unmapped[u].path, unmapped[u].stop, targets);
    free(unmapped);
    ub_value arr = {0};
    if (!it.n) {
        ub_items_free(&it);
        return arr;
    }
    /* relocated, the paths may repeat: the first of each is kept */
    const char **paths = malloc(it.n * sizeof *paths);
    ub_items uniq = {.type = it.type};
    bool ok = paths && ub_items_index(&uniq, it.n);
    uint32_t np = 0;
    for (uint32_t i = 0; ok && i < it.n; i++) {
        const char *m = *(const char *const *)it.v[i].elem;
        m = ub_relocate(cx, m);
        if (m && cx->remap_from)
            m = ub_path_has_prefix(m, cx->remap_from)
                    ? ub_path_replace_prefix(cx->t, m, cx->remap_from,
                                             cx->remap_to)
                    : m;
        if (!m)
            continue;
        paths[np] = m;
        if (ub_items_find(&uniq, &paths[np]) < 0)
            ok = ub_items_push(&uniq, (ub_item){&paths[np++], 0, 0});
    }
    ub_items_free(&uniq);
    ub_items_free(&it);
    if (!ok) {
        cx->oom = true;
        free(paths);
        return arr;
    }
    if (np) {
        arr = ub_value_new(cx->a, ub_type_get(UB_TY_PATH), np, true);
        ub_listop *lo = ub_listop_new(cx->a);
        if (arr.kind == UB_V_EMPTY || !lo) {
            cx->oom = true;
            free(paths);
            return (ub_value){0};
        }
        memcpy(ub_value_data(&arr), paths, np * sizeof *paths);
        lo->is_explicit = true;
        lo->has[UB_LO_EXPLICIT] = true;
        if (ub_listop_put(cx->a, lo, UB_LO_EXPLICIT, arr) != 0) {
            cx->oom = true;
            free(paths);
            return (ub_value){0};
        }
        arr = (ub_value){.kind = UB_V_LISTOP,
                         .type_id = UB_TY_PATH};
        arr.u.listop = lo;
    }
    free(paths);
    return arr;
}

/* The composed targets or connections given to property op. */
static void ub_compose_set_paths(ub_cx *cx, ub_prop *op, const ub_value *v,
                                 bool targets)
{
    ub_prop_ext *x = ub_prop_ext_get(cx->a, op);
    if (!x)
        cx->oom = true;
    else if (targets)
        x->targets = *v;
    else
        x->connections = *v;
}

/* The metadata of property op, from its opinions props[0..n). */
static void ub_compose_prop_meta(ub_cx *cx, ub_prop *op, const ub_index *ix,
                                 const ub_op *ops, ub_prop *const *props,
                                 uint32_t n, ub_spec_kind spec)
{
    const ub_fields *metas[n];
    for (uint32_t k = 0; k < n; k++)
        metas[k] = ub_prop_meta(props[k]);
    ub_fields out = *ub_prop_meta(op);
    ub_compose_meta(cx, &out, ix, ops, metas, n, spec);
    if (ub_prop_set_meta(cx->a, op, &out) != 0)
        cx->oom = true;
}

/* Node n's prim path in clip set cs's namespace (its primPath for the
 * prim the set is authored on), or NULL. */
static const char *ub_clip_prim_of(ub_cx *cx, const ub_clip_set *cs,
                                   const ub_node *n)
{
    const char *p = ub_path_strip_variants(cx->t, n->path);
    return p ? ub_path_replace_prefix(cx->t, p, cs->source_prim_path,
                                      cs->clip_prim_path)
             : NULL;
}

/* The clip set providing attribute `name`'s value at node `node`, layer
 * li, or NULL; *clip_prim receives the prim's path in the clips. */
static const ub_clip_set *ub_clip_for(ub_cx *cx, const ub_index *ix,
                                      const ub_clipsets *clips, int node,
                                      uint32_t li, const char *name,
                                      const char **clip_prim)
{
    const ub_node *n = &ix->v[node];
    for (uint32_t i = 0; clips && i < clips->n; i++) {
        const ub_clip_set *cs = &clips->v[i];
        if (cs->anchor_stack != n->ls || cs->source_li != li)
            continue;
        const char *cp = ub_clip_prim_of(cx, cs, n);
        if (cp && ub_clip_set_has_attr(cs, cp, name)) {
            *clip_prim = cp;
            return cs;
        }
    }
    return NULL;
}

/* A stage has no frame at an infinite time, and none at NaN: a sample
 * there (authored so, or mapped there by a layer offset) is left out of
 * s, with a warning.  UsdStage's flatten leaves out those at infinity
 * (it copies the samples of the open interval of all times); at NaN
 * its maps give what they happen to give. */
static void ub_drop_unframed_samples(ub_cx *cx, const ub_layer *l,
                                     const ub_prop *p, ub_samples *s)
{
    uint32_t w = 0, dropped = 0;
    double first = 0; /* the first left out */
    for (uint32_t i = 0; i < s->n; i++) {
        if (isfinite(s->v[i].time))
            s->v[w++] = s->v[i];
        else if (!dropped++)
            first = s->v[i].time;
    }
    if (!dropped)
        return;
    ub_report(cx, UB_WARNING, l, ub_layer_loc(l, s->loc), "time-not-finite",
              "'%s' has a sample at time %s on the stage: it is left out, "
              "%s",
              p->name, isnan(first) ? "nan" : first > 0 ? "inf" : "-inf",
              isnan(first) ? "since no frame is at nan"
                           : "as usdcat --flatten leaves it out");
    s->n = w;
}

/* The value type a schema declares for a property ("point3f[]"): the type,
 * *name its interned name without "[]" (NULL out of memory), *arr whether
 * it is an array; NULL when usdbake does not know the type. */
static const ub_type *ub_schema_decl(ub_cx *cx, const ub_schema_prop *sp,
                                     const char **name, bool *arr)
{
    size_t len = strlen(sp->type_name);
    *arr = len > 2 && strcmp(sp->type_name + len - 2, "[]") == 0;
    if (*arr)
        len -= 2;
    const ub_type *t = ub_type_by_name(sp->type_name, len);
    *name = t ? ub_intern(cx->t, sp->type_name, len) : NULL;
    return t;
}

/* Output attribute op, of prim outp, gets its samples from clip set cs
 * (cp: the prim's path in the clips) when the bake reads the clips. */
static void ub_defer_clip(ub_cx *cx, const ub_clip_set *cs, const char *cp,
                          const char *name, const ub_prim *outp, ub_prop *op)
{
    unsigned depth = 0;
    for (const ub_prim *q = outp; q->parent; q = q->parent)
        depth++;
    if (ub_clip_bake_defer(cx->bake, cs, cp, name, op, cx->a, depth) != 0)
        cx->oom = true;
}

static void ub_emit_prop(ub_cx *cx, ub_prim *outp, const ub_index *ix,
                         const ub_op *ops, ub_prop *const *props, uint32_t n,
                         const ub_clipsets *clips)
{
    const ub_prop *first = props[0];
    const ub_prop *weakest = props[n - 1];
    ub_schema_prop sp;
    bool builtin = ub_builtin_prop(cx, outp, first->name, &sp);
    if (builtin && (first->kind == UB_ATTR) != (sp.type_name != NULL)) {
        /* OpenUSD fails to write it ("is not an attribute") */
        ub_report(cx, UB_ERROR, ub_op_layer(ix, &ops[0]),
                  ub_layer_loc(ub_op_layer(ix, &ops[0]), first->loc),
                  "schema-property-kind",
                  "'%s' is authored as %s, but schema '%s' defines it as "
                  "%s; OpenUSD cannot flatten it: author it as the schema "
                  "says, or under another name",
                  first->name,
                  first->kind == UB_ATTR ? "an attribute" : "a relationship",
                  sp.schema,
                  sp.type_name ? "an attribute" : "a relationship");
        cx->failed = true;
        return;
    }
    if (first->kind == UB_ATTR) {
        const ub_prop *typed = NULL;
        uint32_t typed_k = 0;
        for (uint32_t k = 0; k < n && !typed; k++)
            if (ub_prop_type_spelling(props[k])) {
                typed = props[k];
                typed_k = k;
            }
        /* the definition's type, else the strongest authored one */
        const char *ty_name = typed ? ub_prop_type_name(cx->t, typed) : NULL;
        const ub_type *ty = typed ? ub_prop_type(typed) : NULL;
        bool is_array = typed && typed->is_array;
        if (builtin && sp.type_name) {
            bool arr;
            const char *st_name;
            const ub_type *st = ub_schema_decl(cx, &sp, &st_name, &arr);
            bool valued = false;
            for (uint32_t k = 0; k < n && !valued; k++)
                valued = props[k]->default_value.kind == UB_V_DATA ||
                         props[k]->default_value.kind == UB_V_UNTYPED ||
                         ub_prop_samples(props[k])->n > 0;
            if (st && typed && valued &&
                (!ty || ty->base != st->base || is_array != arr))
                /* loud where OpenUSD is silent */
                ub_report(cx, UB_WARNING, ub_op_layer(ix, &ops[typed_k]),
                          ub_layer_loc(ub_op_layer(ix, &ops[typed_k]),
                                       typed->loc),
                          "schema-type-mismatch",
                          "attribute '%s' is declared '%s%s', but schema "
                          "'%s' defines it as '%s': the flattened layer "
                          "says '%s', as OpenUSD's does, with values of the "
                          "other type that will not read back",
                          first->name, ub_prop_type_spelling(typed),
                          typed->is_array ? "[]" : "", sp.schema,
                          sp.type_name, sp.type_name);
            if (st) {
                ty_name = st_name;
                ty = st;
                is_array = arr;
                if (!ty_name) {
                    cx->oom = true;
                    return;
                }
            }
        }
        if (!ty) {
            ub_report(cx, UB_WARNING, ub_op_layer(ix, &ops[0]),
                      ub_layer_loc(ub_op_layer(ix, &ops[0]), first->loc),
                      "unknown-attribute-type",
                      "attribute '%s' has an unknown value type '%s'; it is "
                      "left out of the flattened layer, as OpenUSD does",
                      first->name, ty_name ? ty_name : "");
            return;
        }
        ub_prop *op = ub_prop_new(cx->out, outp, first->name, UB_ATTR,
                                  first->loc);
        if (!op) {
            cx->oom = true;
            return;
        }
        if (ub_prop_set_decl(cx->a, cx->t, op, ty, ty_name) != 0) {
            cx->oom = true;
            return;
        }
        op->is_array = is_array;
        op->custom = weakest->custom;
        op->variability = weakest->variability;
        if (builtin && sp.type_name) {
            op->custom = false;
            op->variability = sp.uniform ? UB_UNIFORM : UB_VARYING;
        }
        /* The value source: the strongest layer with samples or a default,
         * or a clip set anchored at a layer before it. */
        int order[ix->n];
        ub_strength_order(ix, order);
        uint32_t pk = 0;
        bool found = false;
        for (int o = 0; o < ix->n && !found; o++) {
            int node = order[o];
            if (ix->v[node].inert)
                continue;
            for (uint32_t li = 0; li < ix->v[node].ls->n && !found; li++) {
                if (pk < n && ops[pk].node == node && ops[pk].li == li) {
                    const ub_prop *p = props[pk];
                    if (ub_prop_samples(p)->authored &&
                        ub_prop_samples(p)->n > 0) {
                        found = true;
                        ub_samples s = {.authored = true,
                                        .loc = ub_prop_samples(p)->loc};
                        s.v = ub_arena_alloc(cx->a, ub_prop_samples(p)->n *
                                                        sizeof *s.v);
                        if (!s.v) {
                            cx->oom = true;
                            return;
                        }
                        s.n = s.cap = ub_prop_samples(p)->n;
                        const ub_layer *l = ub_op_layer(ix, &ops[pk]);
                        ub_offset so = ub_op_offset(ix, &ops[pk]);
                        ub_offset inv = ub_offset_inverse(so);
                        for (uint32_t i = 0; i < s.n; i++) {
                            double t = ub_prop_samples(p)->v[i].time;
                            /* OpenUSD reads the value back at the stage
                             * time mapped into the layer, which rounding
                             * may move off the sample: interpolate there */
                            double lt = ub_offset_apply(
                                inv, ub_offset_apply(so, t));
                            ub_value v = ub_prop_samples(p)->v[i].value;
                            if (lt != t && isfinite(lt) &&
                                ub_samples_value_at(ub_prop_samples(p), lt,
                                                    false, cx->a, &v) != 0)
                                cx->oom = true;
                            /* (UsdStage maps every time, t * 1 + 0 too:
                             * a sample at -0 comes out at 0) */
                            s.v[i].time = t + 0.0;
                            s.v[i].value = ub_value_clone(cx->a, &v);
                            ub_anchor_value(
                                cx, l, ub_stack_vars(ix->v[node].ls),
                                &s.v[i].value);
                            if (s.v[i].value.kind == UB_V_DATA &&
                                ub_value_type(&s.v[i].value)->id ==
                                    UB_TY_PATH_EXPRESSION)
                                ub_map_path_exprs(cx, ix, node,
                                                  &s.v[i].value);
                        }
                        if (!ub_offset_is_identity(so) &&
                            ub_samples_apply_offset(cx->a, &s, so) != 0)
                            cx->oom = true;
                        ub_drop_unframed_samples(cx, l, p, &s);
                        ub_prop_ext *x = ub_prop_ext_get(cx->a, op);
                        if (x)
                            x->samples = s;
                        else
                            cx->oom = true;
                    } else if (p->default_value.kind != UB_V_EMPTY) {
                        found = true;
                    }
                    pk++;
                }
                const char *cp = NULL;
                const ub_clip_set *cs =
                    found ? NULL
                          : ub_clip_for(cx, ix, clips, node, li, first->name,
                                        &cp);
                if (cs) {
                    found = true;
                    ub_defer_clip(cx, cs, cp, first->name, outp, op);
                }
            }
        }
        op->default_value = ub_compose_default(cx, ix, ops, props, n);
        ub_value conn = ub_compose_paths(cx, ix, ops, props, n, false);
        if (conn.kind != UB_V_EMPTY)
            ub_compose_set_paths(cx, op, &conn, false);
        ub_compose_prop_meta(cx, op, ix, ops, props, n, UB_SPEC_ATTR);
    } else {
        ub_prop *op = ub_prop_new(cx->out, outp, first->name, UB_REL,
                                  first->loc);
        if (!op) {
            cx->oom = true;
            return;
        }
        op->custom = builtin ? false : weakest->custom;
        op->variability = weakest->variability;
        op->varying_keyword = weakest->varying_keyword;
        ub_value targets = ub_compose_paths(cx, ix, ops, props, n, true);
        if (targets.kind != UB_V_EMPTY)
            ub_compose_set_paths(cx, op, &targets, true);
        ub_compose_prop_meta(cx, op, ix, ops, props, n, UB_SPEC_REL);
    }
}

/* Gathering the attributes clip sets give a prim (ub_emit_clip_builtins). */
typedef struct ub_clip_names {
    ub_names *all;
    bool oom;
} ub_clip_names;

static int ub_clip_names_add(void *ctx, const char *name)
{
    ub_clip_names *g = ctx;
    if (ub_names_add(g->all, name) < 0)
        g->oom = true;
    return g->oom;
}

/* A builtin attribute the prim's clips give values to, with no spec on
 * the stage (a Points' widths from a file-per-frame cache): UsdStage
 * counts it authored, and its flatten writes it with the definition's
 * type and the clips' samples.  Attributes of spec were written already
 * (their names are in `done`); one the definition lacks is not written,
 * as in OpenUSD. */
static void ub_emit_clip_builtins(ub_cx *cx, ub_prim *outp,
                                  const ub_index *ix, const ub_names *done,
                                  const ub_clipsets *clips)
{
    ub_names names = {0};
    ub_clip_names g = {&names, false};
    for (int i = 0; i < ix->n && !g.oom; i++) {
        const ub_node *n = &ix->v[i];
        for (uint32_t c = 0; c < clips->n && !g.oom; c++) {
            const ub_clip_set *cs = &clips->v[c];
            if (cs->anchor_stack != n->ls || n->inert)
                continue;
            const char *cp = ub_clip_prim_of(cx, cs, n);
            if (cp)
                ub_clip_set_each_attr(cs, cp, ub_clip_names_add, &g);
        }
    }
    cx->oom |= g.oom;
    int order[ix->n];
    ub_strength_order(ix, order);
    for (uint32_t k = 0; k < names.n && !cx->oom; k++) {
        const char *name = names.v[k];
        ub_schema_prop sp;
        if (ub_names_has(done, name) ||
            !ub_builtin_prop(cx, outp, name, &sp) || !sp.type_name)
            continue;
        /* the strongest clip set giving it, as for an attribute of spec */
        const ub_clip_set *cs = NULL;
        const char *cp = NULL;
        for (int o = 0; o < ix->n && !cs; o++) {
            int node = order[o];
            for (uint32_t li = 0;
                 !ix->v[node].inert && li < ix->v[node].ls->n && !cs; li++)
                cs = ub_clip_for(cx, ix, clips, node, li, name, &cp);
        }
        bool arr;
        const char *ty_name;
        const ub_type *st = ub_schema_decl(cx, &sp, &ty_name, &arr);
        if (!cs || !st)
            continue;
        ub_prop *op = ty_name ? ub_prop_new(cx->out, outp, name, UB_ATTR,
                                            (ub_sloc){0})
                              : NULL;
        if (!op || ub_prop_set_decl(cx->a, cx->t, op, st, ty_name) != 0) {
            cx->oom = true;
            break;
        }
        op->is_array = arr;
        op->custom = false;
        op->variability = sp.uniform ? UB_UNIFORM : UB_VARYING;
        ub_defer_clip(cx, cs, cp, name, outp, op);
    }
    ub_names_free(&names);
}

static void ub_emit_props(ub_cx *cx, ub_prim *outp, const ub_index *ix,
                          const ub_ops *ops, const ub_clipsets *clips)
{
    ub_names nm = {0};
    for (uint32_t k = ops->n; k-- > 0;) {
        const ub_prim *p = ops->v[k].spec;
        for (uint32_t i = 0; i < p->props.n; i++)
            if (ub_names_add(&nm, p->props.v[i]->name) < 0)
                cx->oom = true;
    }
    uint32_t cap = ops->n ? ops->n : 1;
    ub_op *pops = malloc(cap * sizeof *pops);
    ub_prop **props = malloc(cap * sizeof *props);
    for (uint32_t c = 0; pops && props && c < nm.n && !cx->oom; c++) {
        uint32_t np = 0;
        for (uint32_t k = 0; k < ops->n; k++) {
            const ub_layer *l = ub_op_layer(ix, &ops->v[k]);
            ub_prop *p = ub_prop_find(l, ops->v[k].spec, nm.v[c]);
            if (!p || (np && p->kind != props[0]->kind))
                continue;
            pops[np] = ops->v[k];
            props[np++] = p;
        }
        if (np)
            ub_emit_prop(cx, outp, ix, pops, props, np, clips);
    }
    if (!pops || !props)
        cx->oom = true;
    if (clips && clips->n && !cx->oom)
        ub_emit_clip_builtins(cx, outp, ix, &nm, clips);
    free(pops);
    free(props);
    ub_names_free(&nm);
}

/* --- prims ---------------------------------------------------------------- */

static bool ub_due_to_direct_inherit(const ub_index *ix, int node)
{
    for (int k = node; k >= 0; k = ix->v[k].parent)
        if (ix->v[k].arc == UB_ARC_INHERIT && !ix->v[k].ancestral)
            return true;
    return false;
}

static ub_specifier ub_resolve_specifier(const ub_index *ix, const ub_ops *ops)
{
    ub_specifier r = UB_OVER;
    for (uint32_t k = 0; k < ops->n; k++) {
        const ub_prim *p = ops->v[k].spec;
        if (ub_prim_variant_set(p)) /* variants have no specifier */
            continue;
        if (p->specifier == UB_DEF)
            return UB_DEF;
        if (p->specifier == UB_CLASS) {
            if (!ub_due_to_direct_inherit(ix, ops->v[k].node))
                return UB_CLASS;
            r = UB_CLASS;
        }
    }
    return r;
}

static const ub_field *ub_strongest_field(const ub_ops *ops, const char *key)
{
    for (uint32_t k = 0; k < ops->n; k++) {
        const ub_field *f = ub_fields_find(&ops->v[k].spec->meta, key);
        if (f)
            return f;
    }
    return NULL;
}

static bool ub_field_is_false(const ub_field *f)
{
    return f && f->value.kind == UB_V_DATA && ub_value_type(&f->value) &&
           ub_value_type(&f->value)->scalar == UB_SC_BOOL && f->value.count &&
           !*(const uint8_t *)ub_value_data(&f->value);
}

static bool ub_field_is_true(const ub_field *f)
{
    return f && f->value.kind == UB_V_DATA && ub_value_type(&f->value) &&
           ub_value_type(&f->value)->scalar == UB_SC_BOOL && f->value.count &&
           *(const uint8_t *)ub_value_data(&f->value);
}

static void ub_emit_prim(ub_cx *cx, ub_prim *outparent, ub_index *ix,
                         const char *name, const ub_clipsets *ancestral);

/* The start of a child's index: every node of its parent's continued at
 * the child's name (ancestral opinions). */
static bool ub_index_child(ub_cx *cx, const ub_index *ix, const char *name,
                           ub_index *child)
{
    for (int i = 0; i < ix->n; i++) {
        ub_node n = ix->v[i];
        n.path = ub_path_child(cx->t, n.path, name);
        n.ancestral = true;
        n.variants_done = n.inert; /* no arcs from inert sites */
        n.evaluated = n.inert;
        if (!n.path || ub_index_add(cx, child, &n) < 0)
            return false;
    }
    return true;
}

/* The full index of a prim path in layer stack rs (the stage's, or a
 * referenced one's), built from its root prim down. */
static bool ub_index_for_path(ub_cx *cx, ub_stack *rs, const char *path,
                              ub_index *out)
{
    const char *p = path + 1;
    size_t n = strcspn(p, "/");
    ub_node root = {.arc = UB_ARC_ROOT,
                    .ls = rs,
                    .path = ub_intern(cx->t, path, n + 1),
                    .offset = UB_OFFSET_IDENTITY,
                    .parent = -1};
    *out = (ub_index){.depth = 1};
    if (!rs || !root.path || ub_index_add(cx, out, &root) < 0)
        return false;
    return ub_index_down(cx, out, p + n, true);
}

/* Expand ix, then continue it one name of rest ("B/C", or "/B/C") at a
 * time, each level expanded; the last only when expand_last (else its
 * arcs are left to whoever takes it over). */
static bool ub_index_down(ub_cx *cx, ub_index *ix, const char *rest,
                          bool expand_last)
{
    const char *p = rest + (*rest == '/');
    if (*p || expand_last)
        ub_index_expand(cx, ix);
    while (*p && !cx->oom && !cx->failed) {
        size_t n = strcspn(p, "/");
        const char *name = ub_intern(cx->t, p, n);
        ub_index next = {.depth = ix->depth + 1};
        bool ok = name && ub_index_child(cx, ix, name, &next);
        free(ix->v);
        *ix = next;
        if (!ok)
            return false;
        p += n + (p[n] == '/');
        if (*p || expand_last)
            ub_index_expand(cx, ix);
    }
    return !cx->oom;
}

/* Add to a relocation target's index the source's index under a relocate
 * arc.  Opinions at the source in the layer stack that relocates it are
 * ignored, as Pcp ignores them. */
static bool ub_index_relocated(ub_cx *cx, ub_index *child, const ub_reloc *r)
{
    ub_index src;
    if (!ub_index_for_path(cx, cx->stacks[0] ? &cx->stacks[0]->st : NULL,
                           r->src, &src)) {
        free(src.v);
        return false;
    }
    ub_node rn = {.arc = UB_ARC_RELOCATE,
                  .inert = true,
                  .evaluated = true,
                  .variants_done = true,
                  .ls = r->ls,
                  .path = r->ls_src,
                  .src = r->src,
                  .tgt = r->tgt,
                  .offset = UB_OFFSET_IDENTITY,
                  .parent = 0,
                  .depth = child->depth,
                  .sib = 0};
    int base = ub_index_add(cx, child, &rn);
    bool ok = base >= 0;
    for (int i = 1; i < src.n && ok; i++) {
        ub_node n = src.v[i];
        n.evaluated = n.variants_done = true; /* already expanded */
        n.parent = n.parent == 0 ? base : base + n.parent;
        if (n.ls == r->ls && n.path == r->ls_src)
            n.inert = true;
        ok = ub_index_add(cx, child, &n) >= 0;
    }
    free(src.v);
    return ok;
}

typedef struct ub_name_at {
    const char *name;
    uint32_t at;
} ub_name_at;

static int ub_name_at_cmp(const void *a, const void *b)
{
    const ub_name_at *x = a, *y = b;
    if (x->name != y->name)
        return (uintptr_t)x->name < (uintptr_t)y->name ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* A renamed child may meet a local opinion at its new name: one prim, at
 * the first place the name appears, relocated when either one is.  Names
 * repeat only through relocation, so without one nothing is to do; with
 * one, sorting keeps this O(n log n) (a prim may have a million
 * children). */
static bool ub_merge_renamed(const char **v, uint32_t *rel, uint32_t *n)
{
    uint32_t any = 0;
    for (uint32_t c = 0; c < *n && !any; c++)
        any = rel[c];
    if (!any)
        return true;
    ub_name_at *s = malloc((*n ? *n : 1) * sizeof *s);
    if (!s)
        return false;
    for (uint32_t c = 0; c < *n; c++)
        s[c] = (ub_name_at){v[c], c};
    qsort(s, *n, sizeof *s, ub_name_at_cmp);
    /* a later duplicate gives its relocation to the first and is dropped
     * (v[c] = NULL) */
    for (uint32_t i = 1; i < *n; i++) {
        if (s[i].name != s[i - 1].name)
            continue;
        uint32_t first = s[i - 1].at, dup = s[i].at;
        if (!rel[first])
            rel[first] = rel[dup];
        v[dup] = NULL;
        s[i].at = first;
    }
    free(s);
    uint32_t w = 0;
    for (uint32_t c = 0; c < *n; c++) {
        if (!v[c])
            continue;
        v[w] = v[c];
        rel[w++] = rel[c];
    }
    *n = w;
    return true;
}

static void ub_emit_children(ub_cx *cx, ub_prim *outp, const ub_index *ix,
                             const ub_ops *ops, const ub_clipsets *clips)
{
    ub_names nm = {0};
    /* the names weaker nodes give, before the root node's own specs */
    uint32_t weaker = UINT32_MAX;
    for (uint32_t k = ops->n; k-- > 0;) {
        const ub_prim *p = ops->v[k].spec;
        if (ops->v[k].node == 0 && weaker == UINT32_MAX)
            weaker = nm.n;
        for (uint32_t i = 0; i < p->children.n; i++)
            if (ub_names_add(&nm, p->children.v[i]->name) < 0)
                cx->oom = true;
        if (ub_names_reorder(&nm, ub_prim_prim_order(p)) != 0)
            cx->oom = true;
    }
    /* from here on a plain list, which relocation edits */
    uint32_t n;
    const char **names = ub_names_take(&nm, &n);
    if (weaker == UINT32_MAX)
        weaker = n;
    /* Relocated children (Pcp's _ComposePrimChildNamesAtNode): a source
     * renamed under the same parent keeps its place; one moved elsewhere
     * leaves, and arrives after the names weaker nodes give and before
     * those of the prim's own specs, the ones moved here in the order of
     * their names. */
    const char *here = ub_path_strip_variants(cx->t, ix->v[0].path);
    uint32_t cap = n + cx->n_reloc + 1;
    /* indices into cx->reloc plus one (0: none): the table grows while
     * children are composed */
    uint32_t *rel = calloc(cap, sizeof *rel);
    const char **nv = realloc(names, cap * sizeof *nv);
    if (!rel || !here || !nv)
        cx->oom = true;
    else
        names = nv;
    uint32_t w = 0, at_weaker = weaker;
    for (uint32_t c = 0; !cx->oom && c < n; c++) {
        const char *cp = ub_path_child(cx->t, here, names[c]);
        uint32_t r = 0;
        for (uint32_t k = 0; cp && k < cx->n_reloc && !r; k++)
            if (cx->reloc[k].src == cp)
                r = k + 1;
        if (r && (!*cx->reloc[r - 1].tgt ||
                  ub_path_parent(cx->t, cx->reloc[r - 1].tgt) != here)) {
            if (c < weaker)
                at_weaker--;
            continue; /* moved to another parent, or removed */
        }
        rel[w] = r;
        names[w++] = r ? ub_intern_cstr(cx->t,
                                        strrchr(cx->reloc[r - 1].tgt, '/') + 1)
                       : names[c];
    }
    /* prims moved in from elsewhere: each after the names the weaker
     * nodes gave (one of those may already be the name: then it is that
     * one), before the prim's own specs' names, by name (Pcp's set) */
    uint32_t at = at_weaker;
    for (uint32_t k = 0; !cx->oom && k < cx->n_reloc; k++) {
        const ub_reloc *r = &cx->reloc[k];
        if (!*r->tgt || ub_path_parent(cx->t, r->tgt) != here ||
            ub_path_parent(cx->t, r->src) == here)
            continue;
        const char *name = ub_intern_cstr(cx->t, strrchr(r->tgt, '/') + 1);
        if (!name) {
            cx->oom = true;
            break;
        }
        uint32_t i = at_weaker;
        while (i < at && strcmp(names[i], name) < 0)
            i++;
        memmove(names + i + 1, names + i, (w - i) * sizeof *names);
        memmove(rel + i + 1, rel + i, (w - i) * sizeof *rel);
        rel[i] = k + 1;
        names[i] = name;
        at++;
        w++;
    }
    if (!cx->oom)
        n = w;
    if (!cx->oom && !ub_merge_renamed(names, rel, &n))
        cx->oom = true;
    for (uint32_t c = 0; c < n && !cx->oom && !cx->failed; c++) {
        ub_index child = {.depth = ix->depth + 1};
        bool ok = ub_index_child(cx, ix, names[c], &child);
        if (ok && rel[c]) {
            ub_reloc r = cx->reloc[rel[c] - 1]; /* a copy: see above */
            ok = ub_index_relocated(cx, &child, &r);
        }
        if (!ok)
            cx->oom = true;
        else
            ub_emit_prim(cx, outp, &child, names[c], clips);
        free(child.v);
    }
    free(rel);
    free(names);
}

/* A prototype: the instance's own opinions (its root node and the nodes
 * from above it) left out, so every instance with the same arcs shares
 * it. */
typedef struct ub_proto {
    ub_node *key; /* the contributing nodes, strongest first */
    int n;
    const char *path;
    ub_prim *prim; /* its over in the output */
} ub_proto;

static uint64_t ub_proto_hash(const ub_node *k, int n)
{
    uint64_t h = 1469598103934665603u;
    for (int i = 0; i < n; i++) {
        uint64_t f[5] = {k[i].arc, (uintptr_t)k[i].ls, (uintptr_t)k[i].path};
        memcpy(&f[3], &k[i].offset.offset, sizeof f[3]);
        memcpy(&f[4], &k[i].offset.scale, sizeof f[4]);
        for (int j = 0; j < 5; j++)
            h = (h ^ f[j]) * 1099511628211u;
    }
    return h ^ (h >> 29);
}

/* Whether a node's site has a spec in its layer stack.  A node without
 * one is no part of an instance's key (Pcp_ChildNodeIsInstanceable): an
 * arc to an empty site shares the prototype of the arcs below it. */
static bool ub_node_has_specs(const ub_node *n)
{
    for (size_t li = 0; li < n->ls->n; li++)
        if (ub_layer_find_prim(n->ls->layers[li], n->path))
            return true;
    return false;
}

/* A prototype's key as looked up: its nodes and their count. */
typedef struct ub_proto_key {
    const ub_node *k;
    int n;
} ub_proto_key;

/* Whether prototype id of ctx (a ub_cx) has the key. */
static bool ub_proto_same(const void *ctx, uint32_t id, const void *key)
{
    const ub_proto *p = &((const ub_cx *)ctx)->protos[id];
    const ub_node *k = ((const ub_proto_key *)key)->k;
    int n = ((const ub_proto_key *)key)->n;
    if (p->n != n)
        return false;
    for (int i = 0; i < n; i++)
        if (p->key[i].arc != k[i].arc || p->key[i].ls != k[i].ls ||
            p->key[i].path != k[i].path ||
            p->key[i].offset.offset != k[i].offset.offset ||
            p->key[i].offset.scale != k[i].offset.scale)
            return false;
    return true;
}

/* Room for one more prototype in cx->protos. */
static bool ub_proto_reserve(ub_cx *cx)
{
    if (cx->n_protos < cx->cap_protos)
        return true;
    uint32_t cap = cx->cap_protos ? cx->cap_protos * 2 : 16;
    ub_proto *np = realloc(cx->protos, cap * sizeof *np);
    if (!np)
        return false;
    cx->protos = np;
    cx->cap_protos = cap;
    return true;
}

static int ub_ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a,
              y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* Prototypes first among the root's children, as UsdStage::Flatten
 * writes them; each group keeps its order. */
static void ub_protos_first(ub_cx *cx)
{
    ub_prims *kids = &cx->out->root->children;
    ub_prim **tmp = malloc(kids->n * sizeof *tmp);
    ub_prim **pp = malloc(cx->n_protos * sizeof *pp);
    if (!tmp || !pp) {
        free(tmp);
        free(pp);
        cx->oom = true;
        return;
    }
    for (uint32_t k = 0; k < cx->n_protos; k++)
        pp[k] = cx->protos[k].prim;
    qsort(pp, cx->n_protos, sizeof *pp, ub_ptr_cmp);
    uint32_t w = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < kids->n; i++) {
            bool is_proto = bsearch(&kids->v[i], pp, cx->n_protos,
                                    sizeof *pp, ub_ptr_cmp) != NULL;
            if (is_proto == (pass == 0))
                tmp[w++] = kids->v[i];
        }
    memcpy(kids->v, tmp, kids->n * sizeof *tmp);
    free(tmp);
    free(pp);
}

/* A prototype key's entry for a variant selection, not a node: arc is
 * this, path "set=sel" (a set's name holds no '='). */
enum { UB_KEY_SELECTION = 255 };

static int ub_str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Append to key the index's authored variant selections, each set's
 * strongest, by set name: Pcp counts them in an instance's key whether or
 * not they select anything (a selection for a set the prim lacks still
 * tells instances apart).  Returns the new count, or -1 out of memory
 * (key has room for ix->n nodes; it grows). */
static int ub_key_selections(ub_cx *cx, const ub_index *ix, ub_node **key,
                             int nk)
{
    ub_names sets = {0};
    for (int i = 0; i < ix->n && !cx->oom; i++) {
        const ub_node *n = &ix->v[i];
        for (size_t li = 0; !n->inert && li < n->ls->n; li++) {
            const ub_prim *p = ub_layer_find_prim(n->ls->layers[li], n->path);
            const ub_field *f =
                p ? ub_fields_find(&p->meta, cx->k_variants) : NULL;
            const ub_dict *d = f && f->value.kind == UB_V_DICT
                                   ? f->value.u.dict
                                   : NULL;
            for (uint32_t e = 0; d && e < d->n; e++)
                if (ub_names_add(&sets, d->e[e].key) < 0)
                    cx->oom = true;
        }
    }
    const char **names = sets.n ? malloc(sets.n * sizeof *names) : NULL;
    ub_node *nv = sets.n ? realloc(*key, ((size_t)nk + sets.n) * sizeof *nv)
                         : *key;
    if (sets.n && (!names || !nv))
        cx->oom = true;
    if (nv)
        *key = nv;
    if (cx->oom) {
        free(names);
        ub_names_free(&sets);
        return -1;
    }
    if (sets.n) {
        memcpy(names, sets.v, sets.n * sizeof *names);
        qsort(names, sets.n, sizeof *names, ub_str_cmp);
    }
    for (uint32_t k = 0; k < sets.n && !cx->oom; k++) {
        const char *sel = ub_variant_selection(cx, ix, names[k]);
        if (!sel)
            continue;
        size_t need = strlen(names[k]) + strlen(sel) + 2;
        char *b = malloc(need);
        const char *kv = NULL;
        if (b) {
            snprintf(b, need, "%s=%s", names[k], sel);
            kv = ub_intern_cstr(cx->t, b);
            free(b);
        }
        if (!kv) {
            cx->oom = true;
            break;
        }
        (*key)[nk++] = (ub_node){.arc = UB_KEY_SELECTION, .path = kv};
    }
    free(names);
    ub_names_free(&sets);
    return cx->oom ? -1 : nk;
}

static const char *ub_prototype(ub_cx *cx, const ub_index *ix,
                                const ub_clipsets *ancestral)
{
    ub_index pi = {.depth = ix->depth};
    pi.v = malloc((size_t)ix->n * sizeof *pi.v);
    ub_node *key = malloc((size_t)ix->n * sizeof *key);
    if (!pi.v || !key) {
        free(pi.v);
        free(key);
        cx->oom = true;
        return NULL;
    }
    memcpy(pi.v, ix->v, (size_t)ix->n * sizeof *pi.v);
    pi.n = pi.cap = ix->n;
    for (int i = 0; i < pi.n; i++)
        if (i == 0 || pi.v[i].depth < ix->depth)
            pi.v[i].inert = true;
    int order[ix->n], nk = 0;
    ub_strength_order(&pi, order);
    for (int k = 0; k < pi.n; k++) {
        const ub_node *n = &pi.v[order[k]];
        bool dup = n->dup_class && order[k] && n->depth >= ix->depth;
        if ((!n->inert || dup) && ub_node_has_specs(n))
            key[nk++] = *n;
    }
    if ((nk = ub_key_selections(cx, ix, &key, nk)) < 0) {
        free(key);
        free(pi.v);
        return NULL;
    }
    uint64_t h = ub_proto_hash(key, nk);
    /* the slot stays free until the prototype is made below, with no
     * other probe of the table in between */
    ub_idslot *sl = ub_idtab_find(&cx->proto_tab, h, ub_proto_same, cx,
                                  &(ub_proto_key){key, nk});
    if (sl && ub_idslot_used(sl)) {
        free(key);
        free(pi.v);
        return cx->protos[ub_idslot_id(sl)].path;
    }
    if (!sl || !ub_proto_reserve(cx)) {
        free(key);
        free(pi.v);
        cx->oom = true;
        return NULL;
    }
    char name[64];
    const char *path = NULL, *nm = NULL;
    /* ids never go back: a name skipped because a stage prim has it is
     * not taken by the next prototype either (as UsdStage::Flatten) */
    while (!path || !nm) {
        snprintf(name, sizeof name, "Flattened_Prototype_%u",
                 ++cx->last_proto_id);
        nm = ub_intern_cstr(cx->t, name);
        path = nm ? ub_path_child(cx->t, "/", nm) : NULL;
        if (!nm || !path) {
            cx->oom = true;
            free(key);
            free(pi.v);
            return NULL;
        }
        /* never the name of a prim of the stage */
        bool clash = false;
        for (size_t li = 0; li < ix->v[0].ls->n && !clash; li++)
            clash = ub_layer_find_prim(ix->v[0].ls->layers[li], path) != NULL;
        if (clash)
            path = nm = NULL;
    }
    ub_prim *pp = ub_prim_new(cx->out, cx->out->root, nm, UB_OVER,
                              (ub_sloc){0});
    ub_idtab_put(&cx->proto_tab, sl, h, cx->n_protos);
    cx->protos[cx->n_protos++] = (ub_proto){key, nk, path, pp};
    if (!pp) {
        cx->oom = true;
        free(pi.v);
        return NULL;
    }
    const char *save_from = cx->remap_from, *save_to = cx->remap_to,
               *save_proto = cx->remap_proto;
    cx->remap_from = ub_path_strip_variants(cx->t, ix->v[0].path);
    cx->remap_to = path;
    snprintf(name, sizeof name, "/__Prototype_%u", cx->last_proto_id);
    cx->remap_proto = ub_intern_cstr(cx->t, name);
    if (!cx->remap_proto)
        cx->oom = true;
    ub_ops ops;
    if (ub_collect_ops(cx, &pi, &ops)) {
        ub_clipsets clips;
        ub_prim_clip_sets(cx, &pi, ancestral, &clips);
        ub_emit_children(cx, pp, &pi, &ops, &clips);
        if (clips.n_own)
            ub_clipsets_free(&clips);
        free(ops.v);
    }
    cx->remap_from = save_from;
    cx->remap_to = save_to;
    cx->remap_proto = save_proto;
    free(pi.v);
    return path;
}

/* `reorder nameChildren` and `reorder properties` are metadata to
 * UsdStage::Flatten (primOrder, propertyOrder): the strongest opinion of
 * each is written as authored, on instances too. */
static void ub_keep_reorders(ub_cx *cx, ub_prim *outp, const ub_ops *ops)
{
    bool kids = false, props = false;
    for (uint32_t k = 0; k < ops->n && !(kids && props); k++) {
        const ub_prim *p = ops->v[k].spec;
        if ((!kids && ub_prim_prim_order(p)->kind != UB_V_EMPTY) ||
            (!props && ub_prim_property_order(p)->kind != UB_V_EMPTY)) {
            ub_prim_ext *x = ub_prim_ext_get(cx->a, outp);
            if (!x) {
                cx->oom = true;
                return;
            }
            if (!kids && p->ext->prim_order.kind != UB_V_EMPTY) {
                x->prim_order = ub_value_clone(cx->a, &p->ext->prim_order);
                kids = true;
            }
            if (!props && p->ext->property_order.kind != UB_V_EMPTY) {
                x->property_order =
                    ub_value_clone(cx->a, &p->ext->property_order);
                props = true;
            }
        }
    }
}

static void ub_emit_prim(ub_cx *cx, ub_prim *outparent, ub_index *ix,
                         const char *name, const ub_clipsets *ancestral)
{
    ub_index_expand(cx, ix);
    if (cx->oom || cx->failed)
        return;
    ub_register_relocates(cx, ix);
    ub_ops ops;
    if (!ub_collect_ops(cx, ix, &ops))
        return;
    /* A relocation target exists even with no opinions (as an over). */
    bool relocated = false;
    for (int i = 0; i < ix->n && !relocated; i++)
        relocated = ix->v[i].arc == UB_ARC_RELOCATE;
    if ((!ops.n && !relocated) ||
        ub_field_is_false(ub_strongest_field(&ops, cx->k_active))) {
        free(ops.v);
        return;
    }
    if (!ops.n) {
        if (!ub_prim_new(cx->out, outparent, name, UB_OVER,
                         (ub_sloc){0}))
            cx->oom = true;
        free(ops.v);
        return;
    }
    /* Relocates authored on a prim (the legacy form) are not composed. */
    const char *k_reloc = ub_intern_cstr(cx->t, "relocates");
    for (uint32_t k = 0; k_reloc && k < ops.n; k++) {
        const ub_field *f = ub_fields_find(&ops.v[k].spec->meta, k_reloc);
        if (!f)
            continue;
        const ub_layer *l = ub_op_layer(ix, &ops.v[k]);
        ub_report(cx, UB_ERROR, l, ub_layer_loc(l, f->loc),
                  "flatten-unsupported",
                  "relocates on a prim are not supported by usdbake "
                  "flatten yet; nothing was written");
        cx->failed = true;
        free(ops.v);
        return;
    }
    /* An instance: instanceable, with arcs of its own that bring specs
     * (an arc to an empty site gives nothing to share: Pcp's
     * Pcp_ChildNodeIsInstanceable). */
    bool instance = false;
    if (ub_field_is_true(ub_strongest_field(&ops, cx->k_instanceable)))
        for (int i = 1; i < ix->n && !instance; i++)
            instance = !ix->v[i].inert && ix->v[i].depth >= ix->depth &&
                       ub_node_has_specs(&ix->v[i]);
    const char *proto = instance ? ub_prototype(cx, ix, ancestral) : NULL;
    if (instance && !proto) {
        free(ops.v);
        return;
    }
    ub_prim *outp = ub_prim_new(cx->out, outparent, name,
                                ub_resolve_specifier(ix, &ops),
                                ops.v[0].spec->loc);
    if (!outp) {
        cx->oom = true;
        free(ops.v);
        return;
    }
    for (uint32_t k = 0; k < ops.n && !outp->type_name; k++)
        if (ops.v[k].spec->type_name && *ops.v[k].spec->type_name)
            outp->type_name = ops.v[k].spec->type_name;
    const ub_fields **metas = malloc(ops.n * sizeof *metas);
    if (!metas) {
        cx->oom = true;
        free(ops.v);
        return;
    }
    for (uint32_t k = 0; k < ops.n; k++)
        metas[k] = &ops.v[k].spec->meta;
    ub_compose_meta(cx, &outp->meta, ix, ops.v, metas, ops.n, UB_SPEC_PRIM);
    free(metas);
    if (proto) {
        /* `add references = </Flattened_Prototype_N>` */
        ub_value refs = ub_value_new(cx->a, ub_type_get(UB_TY_REFERENCE), 1,
                                     true);
        ub_listop *lo = ub_listop_new(cx->a);
        const char *k_refs = cx->k_references;
        if (refs.kind == UB_V_EMPTY || !lo) {
            cx->oom = true;
        } else {
            ub_reference *r = ub_value_data(&refs);
            memset(r, 0, sizeof *r);
            r->asset = ub_intern_cstr(cx->t, "");
            r->prim_path = proto;
            r->offset = UB_OFFSET_IDENTITY;
            lo->has[UB_LO_ADD] = true;
            if (ub_listop_put(cx->a, lo, UB_LO_ADD, refs) != 0)
                cx->oom = true;
            ub_value v = {.kind = UB_V_LISTOP,
                          .type_id = UB_TY_REFERENCE};
            v.u.listop = lo;
            if (!r->asset || !ub_fields_set(cx->a, &outp->meta, k_refs, v,
                                            ops.v[0].spec->loc))
                cx->oom = true;
        }
    }
    ub_keep_reorders(cx, outp, &ops);
    ub_clipsets clips;
    ub_prim_clip_sets(cx, ix, ancestral, &clips);
    ub_emit_props(cx, outp, ix, &ops, &clips);
    if (!proto)
        ub_emit_children(cx, outp, ix, &ops, &clips);
    if (clips.n_own)
        ub_clipsets_free(&clips);
    free(ops.v);
}

/* A clip's value for the output: asset paths anchored to the clip (or
 * manifest) that gave it. */
static void ub_clip_anchor(void *ctx, const ub_clip_set *cs,
                           const ub_layer *from, ub_value *v)
{
    ub_anchor_value(ctx, from, ub_stack_vars(cs->anchor_stack), v);
}

ub_layer *ub_compose_flatten(ub_loader *ld, ub_layer *root,
                             const char *out_path, ub_diags *diags,
                             size_t *n_recovered)
{
    ub_schema_reg *reg = ub_schema_reg_new(root->strtab);
    ub_layer *l = reg ? ub_compose_flatten_schemas(ld, root, reg, out_path,
                                                   diags, n_recovered)
                      : NULL;
    ub_schema_reg_free(reg);
    return l;
}

ub_layer *ub_compose_flatten_schemas(ub_loader *ld, ub_layer *root,
                                     const ub_schema_reg *schemas,
                                     const char *out_path, ub_diags *diags,
                                     size_t *n_recovered)
{
    return ub_compose_flatten_to(ld, root, schemas, out_path, diags,
                                 n_recovered, NULL);
}

ub_layer *ub_compose_flatten_to(ub_loader *ld, ub_layer *root,
                                const ub_schema_reg *schemas,
                                const char *out_path, ub_diags *diags,
                                size_t *n_recovered,
                                const ub_flatten_opts *opts)
{
    const ub_flatten_opts none = {0};
    if (!opts)
        opts = &none;
    ub_cx cx = {.ld = ld, .diags = diags, .t = root->strtab,
                .schemas = schemas};
    cx.fields = ub_loader_fields(ld, &cx.n_fields);
    cx.bake = ub_clip_bake_new(ld, opts->threads, diags);
    if (!cx.bake)
        cx.oom = true;
    ub_strtab *t = cx.t;
    cx.k_references = ub_intern_cstr(t, "references");
    cx.k_payload = ub_intern_cstr(t, "payload");
    cx.k_inherits = ub_intern_cstr(t, "inherits");
    cx.k_specializes = ub_intern_cstr(t, "specializes");
    cx.k_variants = ub_intern_cstr(t, "variants");
    cx.k_variant_sets = ub_intern_cstr(t, "variantSets");
    cx.k_active = ub_intern_cstr(t, "active");
    cx.k_instanceable = ub_intern_cstr(t, "instanceable");
    cx.k_clips = ub_intern_cstr(t, "clips");
    cx.k_clip_sets = ub_intern_cstr(t, "clipSets");
    cx.k_api_schemas = ub_intern_cstr(t, "apiSchemas");
    cx.out = ub_layer_new(t, out_path ? out_path : "flattened.usda");
    ub_stack *rs = cx.out ? ub_cx_stack(&cx, root) : NULL;
    if (rs && !cx.oom) {
        cx.a = cx.out->arena;
        /* the root stack's relocates, strongest first per source */
        for (size_t li = 0; li < rs->n && !cx.oom; li++) {
            const ub_field *f = ub_layer_relocates(rs->layers[li]);
            if (!f)
                continue;
            for (uint32_t i = 0; i + 1 < f->value.count; i += 2)
                ub_reloc_add(&cx, ub_value_str(&f->value, i),
                             ub_value_str(&f->value, i + 1), rs,
                             ub_value_str(&f->value, i));
        }
        /* stage metadata: the root layer's own */
        for (uint32_t i = 0; i < root->meta.n; i++) {
            const ub_field *f = &root->meta.v[i];
            if (ub_private_field(&cx, f->key) ||
                !ub_stack_field_registered_with(cx.fields, cx.n_fields,
                                                UB_SPEC_LAYER, f->key))
                continue;
            ub_value c = ub_value_clone(cx.a, &f->value);
            /* asset paths anchored, in dictionaries too (customLayerData),
             * as UsdStage resolves the pseudo-root's metadata */
            ub_anchor_value(&cx, root, ub_stack_vars(rs), &c);
            if (!ub_fields_set(cx.a, &cx.out->meta, f->key, c, f->loc))
                cx.oom = true;
        }
        ub_names nm = {0};
        const ub_clipsets no_clips = {0};
        for (size_t k = rs->n; k-- > 0;) {
            const ub_prim *p = rs->layers[k]->root;
            for (uint32_t i = 0; i < p->children.n; i++)
                if (ub_names_add(&nm, p->children.v[i]->name) < 0)
                    cx.oom = true;
            if (ub_names_reorder(&nm, ub_prim_prim_order(p)) != 0)
                cx.oom = true;
        }
        for (uint32_t c = 0; c < nm.n && !cx.oom && !cx.failed; c++) {
            ub_index ix = {.depth = 1};
            ub_node n = {.arc = UB_ARC_ROOT,
                         .ls = rs,
                         .path = ub_path_child(t, "/", nm.v[c]),
                         .offset = UB_OFFSET_IDENTITY,
                         .parent = -1,
                         .depth = 0};
            if (!n.path || ub_index_add(&cx, &ix, &n) < 0)
                cx.oom = true;
            else
                ub_emit_prim(&cx, cx.out->root, &ix, nm.v[c], &no_clips);
            free(ix.v);
        }
        ub_names_free(&nm);
        /* every clip read once, its samples handed out */
        if (!cx.oom && !cx.failed &&
            ub_clip_bake_run(cx.bake, cx.a, ub_clip_anchor, &cx,
                             opts->sink) != 0)
            cx.oom = true;
    }
    if (cx.n_protos && cx.out && !cx.oom)
        ub_protos_first(&cx);
    for (uint32_t i = 0; i < cx.n_protos; i++)
        free(cx.protos[i].key);
    free(cx.protos);
    ub_names_free(&cx.expr_told);
    ub_names_free(&cx.scope_told);
    for (unsigned k = 0; k < sizeof cx.up / sizeof cx.up[0]; k++)
        free(cx.up[k].ix.v);
    ub_idtab_free(&cx.proto_tab);
    free(cx.reloc);
    ub_clip_bake_free(cx.bake);
    for (size_t i = 0; i < cx.n_stacks; i++) {
        ub_stack_free(&cx.stacks[i]->st);
        free(cx.stacks[i]);
    }
    free(cx.stacks);
    if (n_recovered)
        *n_recovered = cx.n_recovered;
    if (cx.oom || cx.failed || !rs) {
        ub_layer_free(cx.out);
        return NULL;
    }
    return cx.out;
}
