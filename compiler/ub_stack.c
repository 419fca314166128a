/*
 * Layer stacks and their flattening.
 *
 * The merge follows OpenUSD's UsdFlattenLayerStack (usd/flattenUtils.cpp):
 * every field of every spec is reduced over the layers strongest first;
 * before a layer's value takes part it is mapped into the root's time frame,
 * its asset paths are anchored to the layer that wrote them, and its list
 * ops are simplified (added items become appended ones, reorders are
 * dropped) so that any two of them compose into one.  Child names are
 * gathered weakest first, as PcpComposeSiteChildNames does, which is why a
 * prim that only a sublayer defines comes before the root's own prims.
 */
#include "ub_stack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ub_expr.h"
#include "ub_names.h"
#include "ub_time.h"

/* --- building the stack -------------------------------------------------- */

static int ub_stack_push(ub_stack *s, ub_layer *layer, ub_offset o)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        ub_layer **nl = realloc(s->layers, cap * sizeof *nl);
        if (!nl)
            return -1;
        s->layers = nl;
        ub_offset *no = realloc(s->offsets, cap * sizeof *no);
        if (!no)
            return -1;
        s->offsets = no;
        s->cap = cap;
    }
    s->layers[s->n] = layer;
    s->offsets[s->n] = o;
    s->n++;
    return 0;
}

/* The root layer's expressionVariables: what asset-path expressions of
 * the whole stack are evaluated with (PcpExpressionVariables). */
static const ub_dict *ub_stack_vars(const ub_layer *root)
{
    const char *k = ub_intern_cstr(root->strtab, "expressionVariables");
    const ub_field *f = k ? ub_fields_find(&root->meta, k) : NULL;
    return f && f->value.kind == UB_V_DICT ? f->value.u.dict : NULL;
}

/* The chain of layers from the root down to the one being expanded: what a
 * cycle is reported as. */
typedef struct ub_chain {
    const ub_layer *layer;
    const struct ub_chain *up;
} ub_chain;

static void ub_stack_report_cycle(ub_diags *diags, const ub_layer *layer,
                                  const ub_sublayer *sl,
                                  const ub_chain *chain, const ub_layer *sub)
{
    /* Names from `sub` (an ancestor) down to `layer`, then `sub` again. */
    size_t len = 0, n = 0;
    for (const ub_chain *c = chain; c; c = c->up) {
        len += strlen(c->layer->path) + 4;
        n++;
        if (c->layer == sub)
            break;
    }
    len += strlen(sub->path) + 1;
    char *text = malloc(len);
    const char **names = malloc(n * sizeof *names);
    if (text && names) {
        size_t i = n;
        for (const ub_chain *c = chain; i > 0; c = c->up)
            names[--i] = c->layer->path;
        char *p = text;
        for (i = 0; i < n; i++)
            p += sprintf(p, "%s -> ", names[i]);
        strcpy(p, sub->path);
    }
    ub_diag *d = ub_diag_add(diags, UB_ERROR, ub_layer_loc(layer, sl->loc),
                             "sublayer-cycle",
                             layer->source, layer->source_len,
                             "sublayer cycle: %s",
                             text && names ? text : sub->path);
    ub_diag_set_hint(diags, d, "remove '%s' from the subLayers of '%s'",
                     sl->asset, layer->path);
    free(text);
    free(names);
}

static int ub_stack_walk(ub_stack *s, ub_loader *ld, ub_layer *layer,
                         ub_offset cum, double tcps, const ub_chain *up,
                         const ub_dict *vars, ub_diags *diags)
{
    ub_chain me = {layer, up};
    if (ub_stack_push(s, layer, cum) != 0)
        return -1;
    for (uint32_t i = 0; i < layer->n_sublayers; i++) {
        const ub_sublayer *sl = &layer->sublayers[i];
        const char *asset = sl->asset;
        if (ub_expr_is(asset)) {
            const char *what = NULL;
            ub_expr_status es =
                ub_expr_eval(layer->strtab, sl->asset, vars, &asset, &what);
            if (es != UB_EXPR_OK) {
                ub_diag_add(diags, UB_ERROR, ub_layer_loc(layer, sl->loc),
                            "sublayer-expression",
                            layer->source, layer->source_len,
                            "cannot evaluate sublayer expression %s: %s%s%s",
                            sl->asset, ub_expr_status_text(es),
                            what ? " " : "", what ? what : "");
                s->n_recovered++;
                continue;
            }
            if (what)
                ub_expr_warn_undefined(diags, ub_layer_loc(layer, sl->loc),
                                       layer, sl->asset, asset, what);
            if (!*asset)
                continue; /* an empty result names no layer */
        }
        ub_layer *sub =
            ub_loader_open_arc(ld, asset, layer, ub_layer_loc(layer, sl->loc),
                               NULL, &s->n_recovered);
        if (!sub)
            continue; /* the loader said why */
        bool cycle = false;
        for (const ub_chain *c = &me; c && !cycle; c = c->up)
            cycle = c->layer == sub;
        if (cycle) {
            ub_stack_report_cycle(diags, layer, sl, &me, sub);
            s->n_recovered++;
            continue;
        }
        ub_offset authored = {sl->has_offset ? sl->offset.offset : 0.0,
                              sl->has_scale ? sl->offset.scale : 1.0};
        ub_offset_status st;
        double sub_tcps = ub_layer_tcps(sub);
        /* The rates matter only when they differ (then OpenUSD divides
         * one by the other); a rate of no use is an error not counted as
         * recovered, since every time mapped through it would be wrong. */
        if (tcps != sub_tcps && !(ub_rate_ok(tcps) && ub_rate_ok(sub_tcps))) {
            ub_layer_report_rate(ub_rate_ok(tcps) ? sub : layer, diags);
            continue;
        }
        ub_offset o = ub_sublayer_offset(cum, authored, tcps, sub_tcps, &st);
        if (st != UB_OFFSET_OK) {
            bool ignored = ub_offset_status_ignored(st);
            if (ignored)
                s->n_recovered++;
            ub_diag *d = ub_diag_add(
                diags, ignored ? UB_ERROR : UB_WARNING,
                ub_layer_loc(layer, sl->loc),
                st == UB_OFFSET_NONFINITE    ? "offset-not-finite"
                : st == UB_OFFSET_SCALE_ZERO ? "offset-scale-zero"
                                             : "offset-scale-negative",
                layer->source, layer->source_len,
                "layer offset (offset = %g; scale = %g) of sublayer '%s': "
                "%s%s",
                authored.offset, authored.scale, sl->asset,
                ub_offset_status_text(st),
                ignored ? "; the offset is ignored" : "");
            ub_diag_set_hint(diags, d,
                             ignored ? "use a finite, positive scale"
                                     : "OpenUSD applies it (time runs "
                                       "backwards); use a positive scale "
                                       "unless that is intended");
        }
        if (ub_stack_walk(s, ld, sub, o, sub_tcps, &me, vars, diags) != 0)
            return -1;
    }
    return 0;
}

int ub_stack_build(ub_stack *s, ub_loader *ld, ub_layer *root,
                   ub_diags *diags)
{
    memset(s, 0, sizeof *s);
    s->fields = ub_loader_fields(ld, &s->n_fields);
    s->ld = ld;
    return ub_stack_walk(s, ld, root, UB_OFFSET_IDENTITY, ub_layer_tcps(root),
                         NULL, ub_stack_vars(root), diags);
}

void ub_stack_free(ub_stack *s)
{
    if (!s)
        return;
    free(s->layers);
    free(s->offsets);
    memset(s, 0, sizeof *s);
}

/* --- flattening: context ------------------------------------------------- */

typedef struct ub_flat {
    const ub_stack *s;
    ub_layer *out;
    ub_arena *a; /* out->arena */
    ub_diags *diags;
    const ub_dict *vars; /* the root's expressionVariables */
    bool oom;
    const char *k_references, *k_payload, *k_clips, *k_active, *k_times,
        *k_asset_paths, *k_manifest, *k_relocates;
    /* Registered metadata fields by spec kind (UB_REG_*), and the
     * unregistered ones already warned about. */
    ub_names *reg[4], *warned;
} ub_flat;

enum { UB_REG_LAYER, UB_REG_PRIM, UB_REG_ATTR, UB_REG_REL };

/* One layer's spec at the path being flattened. */
typedef struct ub_site {
    uint32_t li; /* index into the stack */
    void *spec;  /* ub_prim * or ub_prop * */
} ub_site;

/* --- asset paths ----------------------------------------------------------*/

/* OpenUSD's UsdFlattenLayerStackResolveAssetPath (ub_loader_anchor),
 * after evaluating an expression with the root's variables. */
static const char *ub_flat_anchor(ub_flat *f, uint32_t li, const char *asset)
{
    if (ub_expr_is(asset)) {
        /* Evaluated with the root's variables, then anchored where it
         * was written, as OpenUSD does. */
        const char *what = NULL, *r = NULL;
        ub_expr_status es =
            ub_expr_eval(f->out->strtab, asset, f->vars, &r, &what);
        if (es == UB_EXPR_NOMEM)
            f->oom = true;
        if (es != UB_EXPR_OK) {
            /* (one that gives a control character would mean something
             * else kept as written: OpenUSD cannot write it either) */
            const ub_layer *l = f->s->layers[li];
            ub_diag_add(f->diags,
                        es == UB_EXPR_CONTROL ? UB_ERROR : UB_WARNING,
                        (ub_loc){l->path, 0, 0}, "asset-expression", NULL, 0,
                        "asset path %s is kept as written: %s%s%s", asset,
                        ub_expr_status_text(es), what ? " " : "",
                        what ? what : "");
            return asset;
        }
        if (what) {
            const ub_layer *l = f->s->layers[li];
            ub_expr_warn_undefined(f->diags, (ub_loc){l->path, 0, 0}, l,
                                   asset, r, what);
        }
        asset = r;
    }
    const char *r = ub_loader_anchor(f->s->ld, asset, f->s->layers[li]);
    if (!r)
        f->oom = true;
    return r ? r : asset;
}

static void ub_flat_fix_assets_data(ub_flat *f, uint32_t li, ub_value *v)
{
    if (v->kind != UB_V_DATA || !ub_value_type(v))
        return;
    if (v->type_id == UB_TY_ASSET) {
        const char **s = ub_value_data(v);
        for (uint32_t i = 0; i < v->count; i++)
            s[i] = ub_flat_anchor(f, li, s[i]);
    } else if (ub_value_type(v)->scalar == UB_SC_REF) {
        ub_reference *r = ub_value_data(v);
        for (uint32_t i = 0; i < v->count; i++)
            r[i].asset = ub_flat_anchor(f, li, r[i].asset);
    }
}

static bool ub_is_asset_value(const ub_value *v)
{
    return v->kind == UB_V_DATA && v->type_id == UB_TY_ASSET;
}

/* --- list ops -------------------------------------------------------------*/

/* A growable array of list-op items of one type. */
typedef struct ub_items {
    const ub_type *type;
    size_t es;
    char *data;
    uint32_t n, cap;
} ub_items;

static bool ub_dict_ptr_equal(ub_dict *a, ub_dict *b)
{
    if (!a || !b)
        return a == b;
    ub_value va = {.kind = UB_V_DICT, .u.dict = a};
    ub_value vb = {.kind = UB_V_DICT, .u.dict = b};
    return ub_value_equal(&va, &vb);
}

static bool ub_item_equal(const ub_items *it, const void *a, const void *b)
{
    if (it->type->scalar == UB_SC_REF) {
        const ub_reference *x = a, *y = b;
        return x->asset == y->asset && x->prim_path == y->prim_path &&
               x->offset.offset == y->offset.offset &&
               x->offset.scale == y->offset.scale &&
               ub_dict_ptr_equal(x->custom_data, y->custom_data);
    }
    return memcmp(a, b, it->es) == 0;
}

static int ub_items_find(const ub_items *it, const void *x)
{
    for (uint32_t i = 0; i < it->n; i++)
        if (ub_item_equal(it, it->data + i * it->es, x))
            return (int)i;
    return -1;
}

static int ub_items_push(ub_items *it, const void *x)
{
    if (it->n == it->cap) {
        uint32_t cap = it->cap ? it->cap * 2 : 8;
        char *nd = realloc(it->data, cap * it->es);
        if (!nd)
            return -1;
        it->data = nd;
        it->cap = cap;
    }
    memcpy(it->data + it->n * it->es, x, it->es);
    it->n++;
    return 0;
}

static void ub_items_remove(ub_items *it, const void *x)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < it->n; i++) {
        const char *e = it->data + i * it->es;
        if (ub_item_equal(it, e, x))
            continue;
        if (w != i)
            memcpy(it->data + w * it->es, e, it->es);
        w++;
    }
    it->n = w;
}

static int ub_items_init(ub_items *it, const ub_type *t, const ub_value *part,
                         bool has)
{
    memset(it, 0, sizeof *it);
    it->type = t;
    it->es = ub_type_elem_size(t);
    if (!has || part->kind != UB_V_DATA)
        return 0;
    for (uint32_t i = 0; i < part->count; i++)
        if (ub_items_push(it, ub_value_elem(part, i)) != 0)
            return -1;
    return 0;
}

static ub_value ub_items_value(ub_flat *f, const ub_items *it)
{
    ub_value v = ub_value_new(f->a, it->type, it->n, true);
    if (v.kind == UB_V_EMPTY) {
        f->oom = true;
        return v;
    }
    if (it->n)
        memcpy(ub_value_data(&v), it->data, it->n * it->es);
    return v;
}

/* Fold added items into appended ones and drop reorders, as OpenUSD does
 * before composing list ops (the result must be a composable list op). */
static void ub_flat_fix_listop(ub_flat *f, ub_listop *lo, const ub_type *t)
{
    if (lo->is_explicit || (!lo->has[UB_LO_ADD] && !lo->has[UB_LO_REORDER]))
        return;
    if (lo->has[UB_LO_ADD] &&
        ub_listop_get(lo, UB_LO_ADD)->kind == UB_V_DATA &&
        ub_listop_get(lo, UB_LO_ADD)->count > 0) {
        ub_items app;
        if (ub_items_init(&app, t, ub_listop_get(lo, UB_LO_APPEND),
                          lo->has[UB_LO_APPEND]) != 0) {
            f->oom = true;
            free(app.data);
            return;
        }
        const ub_value *add = ub_listop_get(lo, UB_LO_ADD);
        for (uint32_t i = 0; i < add->count; i++) {
            const void *x = ub_value_elem(add, i);
            if (ub_items_find(&app, x) < 0 && ub_items_push(&app, x) != 0)
                f->oom = true;
        }
        if (ub_listop_put(f->a, lo, UB_LO_APPEND, ub_items_value(f, &app)))
            f->oom = true;
        lo->has[UB_LO_APPEND] = true;
        if (!ub_sloc_line(ub_listop_loc(lo, UB_LO_APPEND)) &&
            ub_listop_set_loc(f->a, lo, UB_LO_APPEND,
                              ub_listop_loc(lo, UB_LO_ADD)) != 0)
            f->oom = true;
        free(app.data);
    }
    lo->has[UB_LO_ADD] = false;
    lo->has[UB_LO_REORDER] = false;
    ub_value *add = ub_listop_get_mut(lo, UB_LO_ADD);
    ub_value *reorder = ub_listop_get_mut(lo, UB_LO_REORDER);
    if (add)
        *add = (ub_value){0};
    if (reorder)
        *reorder = (ub_value){0};
}

/* Apply the (fixed, non-explicit) list op `a` to the item list `it`:
 * deletes, then prepends and appends, each moving an existing item. */
static int ub_items_apply(ub_items *it, const ub_listop *a)
{
    const ub_value *del = ub_listop_get(a, UB_LO_DELETE);
    if (a->has[UB_LO_DELETE] && del->kind == UB_V_DATA)
        for (uint32_t i = 0; i < del->count; i++)
            ub_items_remove(it, ub_value_elem(del, i));
    const ub_value *pre = ub_listop_get(a, UB_LO_PREPEND);
    if (a->has[UB_LO_PREPEND] && pre->kind == UB_V_DATA && pre->count) {
        ub_items nu = {.type = it->type, .es = it->es};
        for (uint32_t i = 0; i < pre->count; i++) {
            const void *x = ub_value_elem(pre, i);
            ub_items_remove(it, x);
            if (ub_items_find(&nu, x) < 0 && ub_items_push(&nu, x) != 0) {
                free(nu.data);
                return -1;
            }
        }
        for (uint32_t i = 0; i < it->n; i++)
            if (ub_items_push(&nu, it->data + i * it->es) != 0) {
                free(nu.data);
                return -1;
            }
        free(it->data);
        *it = nu;
    }
    const ub_value *app = ub_listop_get(a, UB_LO_APPEND);
    if (a->has[UB_LO_APPEND] && app->kind == UB_V_DATA)
        for (uint32_t i = 0; i < app->count; i++) {
            const void *x = ub_value_elem(app, i);
            ub_items_remove(it, x);
            if (ub_items_push(it, x) != 0)
                return -1;
        }
    return 0;
}

/* The list op equivalent to applying strong over weak (both fixed), as
 * SdfListOp::ApplyOperations(inner) computes it. */
static ub_listop *ub_flat_compose_listops(ub_flat *f, const ub_listop *a,
                                          const ub_listop *b,
                                          const ub_type *t)
{
    ub_listop *r =
        a->is_explicit ? ub_listop_copy(f->a, a) : ub_listop_new(f->a);
    if (!r) {
        f->oom = true;
        return NULL;
    }
    if (a->is_explicit)
        return r;
    for (int p = 0; p < UB_LO_NPARTS; p++) {
        ub_sloc l = ub_listop_loc(a, (ub_listop_part)p);
        if (l.bits &&
            ub_listop_set_loc(f->a, r, (ub_listop_part)p, l) != 0)
            f->oom = true;
    }
    if (b->is_explicit) {
        ub_items it;
        if (ub_items_init(&it, t, ub_listop_get(b, UB_LO_EXPLICIT),
                          b->has[UB_LO_EXPLICIT]) != 0 ||
            ub_items_apply(&it, a) != 0)
            f->oom = true;
        r->is_explicit = true;
        r->has[UB_LO_EXPLICIT] = true;
        if (ub_listop_assign(f->a, r, UB_LO_EXPLICIT, ub_items_value(f, &it),
                             ub_listop_loc(b, UB_LO_EXPLICIT)) != 0)
            f->oom = true;
        free(it.data);
        return r;
    }
    ub_items del, pre, app;
    int bad = ub_items_init(&del, t, ub_listop_get(b, UB_LO_DELETE),
                            b->has[UB_LO_DELETE]);
    bad |= ub_items_init(&pre, t, ub_listop_get(b, UB_LO_PREPEND),
                         b->has[UB_LO_PREPEND]);
    bad |= ub_items_init(&app, t, ub_listop_get(b, UB_LO_APPEND),
                         b->has[UB_LO_APPEND]);
    const ub_value *ad = ub_listop_get(a, UB_LO_DELETE);
    if (a->has[UB_LO_DELETE] && ad->kind == UB_V_DATA)
        for (uint32_t i = 0; i < ad->count; i++) {
            const void *x = ub_value_elem(ad, i);
            ub_items_remove(&pre, x);
            ub_items_remove(&app, x);
            if (ub_items_find(&del, x) < 0)
                bad |= ub_items_push(&del, x);
        }
    const ub_value *ap = ub_listop_get(a, UB_LO_PREPEND);
    if (a->has[UB_LO_PREPEND] && ap->kind == UB_V_DATA && ap->count) {
        ub_items np = {.type = t, .es = pre.es};
        for (uint32_t i = 0; i < ap->count; i++) {
            const void *x = ub_value_elem(ap, i);
            ub_items_remove(&del, x);
            ub_items_remove(&pre, x);
            ub_items_remove(&app, x);
            bad |= ub_items_push(&np, x);
        }
        for (uint32_t i = 0; i < pre.n; i++)
            bad |= ub_items_push(&np, pre.data + i * pre.es);
        free(pre.data);
        pre = np;
    }
    const ub_value *aa = ub_listop_get(a, UB_LO_APPEND);
    if (a->has[UB_LO_APPEND] && aa->kind == UB_V_DATA) {
        for (uint32_t i = 0; i < aa->count; i++) {
            const void *x = ub_value_elem(aa, i);
            ub_items_remove(&del, x);
            ub_items_remove(&pre, x);
            ub_items_remove(&app, x);
        }
        for (uint32_t i = 0; i < aa->count; i++)
            bad |= ub_items_push(&app, ub_value_elem(aa, i));
    }
    if (bad)
        f->oom = true;
    ub_items *parts[3] = {&del, &pre, &app};
    ub_listop_part ids[3] = {UB_LO_DELETE, UB_LO_PREPEND, UB_LO_APPEND};
    for (int k = 0; k < 3; k++) {
        ub_listop_part p = ids[k];
        r->has[p] = parts[k]->n > 0 || a->has[p] || b->has[p];
        if (r->has[p] &&
            ub_listop_put(f->a, r, p, ub_items_value(f, parts[k])) != 0)
            f->oom = true;
        if (!ub_sloc_line(ub_listop_loc(r, p)) &&
            ub_sloc_line(ub_listop_loc(b, p)) &&
            ub_listop_set_loc(f->a, r, p, ub_listop_loc(b, p)) != 0)
            f->oom = true;
        free(parts[k]->data);
    }
    return r;
}

/* --- values ---------------------------------------------------------------*/

static void ub_flat_map_clip_times(ub_value *v, ub_offset o)
{
    /* clip `active` and `times`: double2[] (stage time, x); only the
     * stage time is in the layer's frame. */
    if (v->kind != UB_V_DATA || !ub_value_type(v) ||
        ub_value_type(v)->base != UB_TY_DOUBLE2)
        return;
    for (uint32_t i = 0; i < v->count; i++)
        ub_value_set_double(v, i, 0,
                            ub_offset_apply(o, ub_value_get_double(v, i, 0)));
}

/* Whether the merge never changes v: numbers, tokens, untyped text (most
 * of a layer's bytes), not what is mapped, anchored or merged (timecodes,
 * assets, references, dictionaries, list ops). */
static bool ub_flat_never_changed(const ub_value *v)
{
    switch ((ub_vkind)v->kind) {
    case UB_V_EMPTY:
    case UB_V_BLOCK:
    case UB_V_UNTYPED:
        return true;
    case UB_V_DATA: {
        const ub_type *t = ub_value_type(v);
        return t && t->id != UB_TY_TIMECODE && t->id != UB_TY_ASSET &&
               t->scalar != UB_SC_REF && t->scalar != UB_SC_DICT;
    }
    case UB_V_DICT:
    case UB_V_LISTOP:
        break;
    }
    return false;
}

/* A value for the output layer.  What the merge never changes keeps
 * pointing at the input layer's storage, so flattening 100 MB does not
 * copy 100 MB; the rest is copied into the output's arena first. */
static ub_value ub_flat_copy(ub_flat *f, const ub_value *v)
{
    if (ub_flat_never_changed(v))
        return *v;
    ub_value c = ub_value_clone(f->a, v);
    if (c.kind == UB_V_EMPTY)
        f->oom = true;
    return c;
}

/* Layer li's value of field `key`, copied into the output and made ready
 * to merge: times mapped to the root, asset paths anchored, list ops
 * fixed. */
static ub_value ub_flat_prepare(ub_flat *f, uint32_t li, const char *key,
                                const ub_value *v)
{
    ub_value c = ub_flat_copy(f, v);
    if (f->oom)
        return c;
    ub_offset o = f->s->offsets[li];
    bool map = !ub_offset_is_identity(o);
    if (key == f->k_clips) {
        if (c.kind == UB_V_DICT && c.u.dict) {
            ub_dict *clips = c.u.dict;
            for (uint32_t i = 0; i < clips->n; i++) {
                ub_value *info = &clips->e[i].value;
                if (info->kind != UB_V_DICT || !info->u.dict)
                    continue;
                ub_dict_entry *e;
                if (map && (e = ub_dict_find(info->u.dict, f->k_active)))
                    ub_flat_map_clip_times(&e->value, o);
                if (map && (e = ub_dict_find(info->u.dict, f->k_times)))
                    ub_flat_map_clip_times(&e->value, o);
                if ((e = ub_dict_find(info->u.dict, f->k_asset_paths)))
                    ub_flat_fix_assets_data(f, li, &e->value);
                if ((e = ub_dict_find(info->u.dict, f->k_manifest)))
                    ub_flat_fix_assets_data(f, li, &e->value);
            }
        }
        return c;
    }
    if (c.kind == UB_V_LISTOP && c.u.listop) {
        ub_listop *lo = c.u.listop;
        for (int p = 0; p < UB_LO_NPARTS; p++) {
            ub_value *part = ub_listop_get_mut(lo, p);
            if (!lo->has[p] || !part)
                continue;
            if (map && part->kind == UB_V_DATA && ub_value_type(part) &&
                ub_value_type(part)->scalar == UB_SC_REF &&
                (key == f->k_references || key == f->k_payload)) {
                ub_reference *r = ub_value_data(part);
                for (uint32_t i = 0; i < part->count; i++) {
                    ub_offset ro = {r[i].has_offset ? r[i].offset.offset : 0,
                                    r[i].has_scale ? r[i].offset.scale : 1};
                    r[i].offset = ub_offset_compose(o, ro);
                    r[i].has_offset = r[i].offset.offset != 0.0;
                    r[i].has_scale = r[i].offset.scale != 1.0;
                }
            }
            ub_flat_fix_assets_data(f, li, part);
        }
        ub_flat_fix_listop(f, lo, ub_value_type(&c));
        return c;
    }
    if (map)
        ub_value_apply_offset(&c, o);
    ub_flat_fix_assets_data(f, li, &c);
    return c;
}

static void ub_flat_dict_over(ub_flat *f, ub_dict *strong,
                              const ub_dict *weak)
{
    for (uint32_t i = 0; i < weak->n; i++) {
        const ub_dict_entry *w = &weak->e[i];
        ub_dict_entry *s = ub_dict_find(strong, w->key);
        if (!s) {
            if (!ub_dict_set(f->a, strong, w->key, w->value, w->loc))
                f->oom = true;
        } else if (s->value.kind == UB_V_DICT && w->value.kind == UB_V_DICT &&
                   s->value.u.dict && w->value.u.dict) {
            ub_flat_dict_over(f, s->value.u.dict, w->value.u.dict);
        }
    }
}

/* Concatenation, for relocates: every layer's entries, strongest first. */
static void ub_flat_concat(ub_flat *f, ub_value *cur, const ub_value *w)
{
    if (cur->kind == UB_V_DATA && w->kind == UB_V_DATA &&
        ub_value_type(cur) == ub_value_type(w)) {
        size_t es = ub_type_elem_size(ub_value_type(cur));
        ub_value n = ub_value_new(f->a, ub_value_type(cur),
                                  cur->count + w->count,
                                  cur->is_array);
        if (n.kind == UB_V_EMPTY) {
            f->oom = true;
            return;
        }
        char *nd = ub_value_data(&n);
        memcpy(nd, ub_value_data(cur), cur->count * es);
        memcpy(nd + cur->count * es, ub_value_data(w), w->count * es);
        *cur = n;
    } else if (cur->kind == UB_V_UNTYPED && w->kind == UB_V_UNTYPED &&
               cur->u.untyped && w->u.untyped &&
               cur->u.untyped->kind == w->u.untyped->kind &&
               (cur->u.untyped->kind == UB_U_LIST ||
                cur->u.untyped->kind == UB_U_TUPLE)) {
        const ub_untyped *x = cur->u.untyped, *y = w->u.untyped;
        ub_untyped *n = ub_arena_alloc(f->a, sizeof *n);
        ub_untyped *ch = ub_arena_alloc(f->a, (x->n + y->n + 1) * sizeof *ch);
        if (!n || !ch) {
            f->oom = true;
            return;
        }
        *n = *x;
        memcpy(ch, x->child, x->n * sizeof *ch);
        memcpy(ch + x->n, y->child, y->n * sizeof *ch);
        n->child = ch;
        n->n = x->n + y->n;
        cur->u.untyped = n;
    } else if (cur->kind == UB_V_DICT && w->kind == UB_V_DICT &&
               cur->u.dict && w->u.dict) {
        ub_flat_dict_over(f, cur->u.dict, w->u.dict);
    }
}

/* Merge layer li's value w of field key under the stronger *cur. */
static void ub_flat_reduce(ub_flat *f, ub_value *cur, uint32_t li,
                           const char *key, const ub_value *w)
{
    if (w->kind == UB_V_EMPTY)
        return;
    if (cur->kind == UB_V_EMPTY) {
        *cur = ub_flat_prepare(f, li, key, w);
        return;
    }
    if (cur->kind == UB_V_BLOCK || w->kind == UB_V_BLOCK ||
        cur->kind != w->kind)
        return;
    if (key == f->k_relocates) {
        ub_value p = ub_flat_prepare(f, li, key, w);
        ub_flat_concat(f, cur, &p);
        return;
    }
    if (cur->kind == UB_V_DICT && cur->u.dict && w->u.dict) {
        ub_value p = ub_flat_prepare(f, li, key, w);
        if (p.u.dict)
            ub_flat_dict_over(f, cur->u.dict, p.u.dict);
        return;
    }
    if (cur->kind == UB_V_LISTOP && cur->u.listop && w->u.listop &&
        ub_value_type(cur) == ub_value_type(w) && ub_value_type(cur)) {
        ub_value p = ub_flat_prepare(f, li, key, w);
        if (!p.u.listop)
            return;
        ub_listop *r = ub_flat_compose_listops(f, cur->u.listop, p.u.listop,
                                               ub_value_type(cur));
        if (r)
            cur->u.listop = r;
    }
    /* Anything else: the stronger opinion stands. */
}

int ub_stack_merge_opinion(ub_arena *a, ub_value *strong,
                           const ub_value *weak)
{
    ub_flat f = {.a = a};
    if (weak->kind == UB_V_EMPTY)
        return 0;
    bool fresh = strong->kind == UB_V_EMPTY;
    if (!fresh && (strong->kind != weak->kind ||
                   (strong->kind != UB_V_DICT && strong->kind != UB_V_LISTOP)))
        return 0;
    if (!fresh && strong->kind == UB_V_LISTOP &&
        (!strong->u.listop || !weak->u.listop || !ub_value_type(strong) ||
         ub_value_type(strong) != ub_value_type(weak)))
        return 0;
    ub_value c = ub_value_clone(a, weak);
    if (c.kind == UB_V_EMPTY)
        return -1;
    if (c.kind == UB_V_LISTOP && c.u.listop && ub_value_type(&c))
        ub_flat_fix_listop(&f, c.u.listop, ub_value_type(&c));
    if (fresh) {
        *strong = c;
    } else if (strong->kind == UB_V_DICT) {
        if (strong->u.dict && c.u.dict)
            ub_flat_dict_over(&f, strong->u.dict, c.u.dict);
    } else {
        ub_flat_fix_listop(&f, strong->u.listop, ub_value_type(strong));
        ub_listop *r = ub_flat_compose_listops(&f, strong->u.listop,
                                               c.u.listop,
                                                   ub_value_type(strong));
        if (r)
            strong->u.listop = r;
    }
    return f.oom ? -1 : 0;
}

/* Whether layer li's value v of field `key` (NULL: a property's value)
 * may go into the output as it is, sharing its storage: when
 * ub_flat_prepare would give back an equal value and nothing changes it
 * in place later.  Plain data (not asset, timecode, reference or
 * dictionary elements, which are anchored, mapped or merged into); a list
 * op with nothing to anchor, map or fix (ub_flat_fix_listop); a
 * dictionary when no weaker spec can merge into it (sole) -- in a layer
 * without an offset, and never clips, which are rewritten. */
static bool ub_flat_as_is(ub_flat *f, uint32_t li, const char *key,
                          const ub_value *v, bool sole)
{
    if (ub_flat_never_changed(v))
        return true;
    if (v->kind != UB_V_DICT && v->kind != UB_V_LISTOP)
        return false;
    if (key == f->k_clips || !ub_offset_is_identity(f->s->offsets[li]))
        return false;
    if (v->kind == UB_V_DICT)
        return sole;
    const ub_listop *lo = v->u.listop;
    return lo && ub_value_type(v) && v->type_id != UB_TY_ASSET &&
           ub_value_type(v)->scalar != UB_SC_REF &&
           (lo->is_explicit ||
            (!lo->has[UB_LO_ADD] && !lo->has[UB_LO_REORDER]));
}

static bool ub_flat_registered(ub_flat *f, int kind, const ub_field *w,
                               uint32_t li);

/* Layer li's fields `in` over `out`; sole: no other layer has this spec. */
static void ub_flat_fields(ub_flat *f, ub_fields *out, const ub_fields *in,
                           uint32_t li, int kind, bool sole)
{
    if (sole && out->n == 0 && in->n) {
        /* All of them as they are: the output shares the list (its cap is
         * its n, so that a later append copies rather than writes into
         * the layer's block). */
        uint32_t i = 0;
        while (i < in->n && ub_names_has(f->reg[kind], in->v[i].key) &&
               ub_flat_as_is(f, li, in->v[i].key, &in->v[i].value, true))
            i++;
        if (i == in->n) {
            *out = (ub_fields){.n = in->n, .cap = in->n, .v = in->v};
            return;
        }
    }
    /* the strongest layer's fields, at their exact size */
    if (out->n == 0 && in->n && ub_fields_reserve(f->a, out, in->n) != 0)
        f->oom = true;
    for (uint32_t i = 0; i < in->n; i++) {
        const ub_field *w = &in->v[i];
        if (!ub_flat_registered(f, kind, w, li))
            continue;
        ub_field *cur = ub_fields_find(out, w->key);
        if (!cur) {
            ub_value p = ub_flat_as_is(f, li, w->key, &w->value, sole)
                             ? w->value
                             : ub_flat_prepare(f, li, w->key, &w->value);
            if (!ub_fields_set(f->a, out, w->key, p, w->loc))
                f->oom = true;
        } else {
            ub_flat_reduce(f, &cur->value, li, w->key, &w->value);
        }
    }
}

/* --- registered metadata ----------------------------------------------------
 * OpenUSD's flatten copies only the fields its schema knows (SdfSchema's
 * standard fields plus the SdfMetadata that OpenUSD's own plugins
 * register); metadata known only from some other plugin is dropped.  The
 * names are the usda spellings the parser stores. */

static const char *const ub_reg_common[] = {
    /* every spec kind that has metadata */
    "comment", "doc", "documentation", NULL};
static const char *const ub_reg_layer[] = {
    "colorConfiguration", "colorManagementSystem", "customLayerData",
    "defaultPrim", "endTimeCode", "expressionVariables", "framesPerSecond",
    "framePrecision", "hasOwnedSubLayers", "owner", "sessionOwner",
    "startTimeCode", "timeCodesPerSecond", "endFrame", "startFrame",
    "relocates",
    /* usd, usdGeom, usdPhysics, usdRender */
    "fallbackPrimTypes", "metersPerUnit", "upAxis", "kilogramsPerUnit",
    "renderSettingsPrimPath", NULL};
static const char *const ub_reg_prim[] = {
    "specifier", "inherits", "specializes", "references", "payload",
    "relocates", "variants", "variantSets", "active", "assetInfo",
    "customData", "displayGroupOrder", "displayName", "hidden",
    "instanceable", "kind", "permission", "prefix", "prefixSubstitutions",
    "suffix", "suffixSubstitutions", "symmetricPeer", "symmetryArguments",
    "symmetryFunction", "typeName",
    /* sdf, usd, usdGeom, usdShade */
    "payloadAssetDependencies", "apiSchemas", "clipSets", "clips",
    "inactiveIds", "sdrMetadata", NULL};
static const char *const ub_reg_prop[] = {
    "custom", "variability", "assetInfo", "customData", "displayGroup",
    "displayName", "hidden", "permission", "prefix", "suffix",
    "symmetricPeer", "symmetryArguments", "symmetryFunction",
    "renderType", NULL};
static const char *const ub_reg_attr[] = {
    "typeName", "connectionPaths", "displayUnit", "allowedTokens",
    "colorSpace",
    /* usdGeom, usdShade, usdSkel, usdImaging */
    "constraintTargetIdentifier", "elementSize", "interpolation",
    "unauthoredValuesIndex", "connectability", "sdrMetadata", "weight",
    "faceIndexPrimvar", "faceOffsetPrimvar", "uvPrimvar", NULL};
static const char *const ub_reg_rel[] = {
    "noLoadHint", "bindMaterialAs", "outputName", NULL};

static bool ub_reg_in(const char *const *keys, const char *key)
{
    for (; *keys; keys++)
        if (strcmp(*keys, key) == 0)
            return true;
    return false;
}

bool ub_stack_field_registered(ub_spec_kind kind, const char *key)
{
    if (ub_reg_in(ub_reg_common, key))
        return true;
    switch (kind) {
    case UB_SPEC_LAYER:
        return ub_reg_in(ub_reg_layer, key);
    case UB_SPEC_PRIM:
        return ub_reg_in(ub_reg_prim, key);
    case UB_SPEC_ATTR:
        return ub_reg_in(ub_reg_prop, key) || ub_reg_in(ub_reg_attr, key);
    case UB_SPEC_REL:
        return ub_reg_in(ub_reg_prop, key) || ub_reg_in(ub_reg_rel, key);
    }
    return false;
}

bool ub_stack_field_registered_with(const ub_meta_field *fields, size_t n,
                                    ub_spec_kind kind, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if ((fields[i].applies_to & (1u << kind)) &&
            strcmp(fields[i].name, key) == 0)
            return true;
    return ub_stack_field_registered(kind, key);
}

static int ub_reg_add(ub_flat *f, ub_names *nm, const char *const *keys)
{
    for (; *keys; keys++) {
        const char *k = ub_intern_cstr(f->out->strtab, *keys);
        if (!k || ub_names_add(nm, k) < 0)
            return -1;
    }
    return 0;
}

static int ub_reg_init(ub_flat *f, ub_names reg[5])
{
    int bad = 0;
    for (int k = 0; k < 4; k++) {
        f->reg[k] = &reg[k];
        bad |= ub_reg_add(f, &reg[k], ub_reg_common);
    }
    f->warned = &reg[4];
    bad |= ub_reg_add(f, &reg[UB_REG_LAYER], ub_reg_layer);
    bad |= ub_reg_add(f, &reg[UB_REG_PRIM], ub_reg_prim);
    bad |= ub_reg_add(f, &reg[UB_REG_ATTR], ub_reg_prop);
    bad |= ub_reg_add(f, &reg[UB_REG_ATTR], ub_reg_attr);
    bad |= ub_reg_add(f, &reg[UB_REG_REL], ub_reg_prop);
    bad |= ub_reg_add(f, &reg[UB_REG_REL], ub_reg_rel);
    /* the plugins' fields where they apply */
    for (size_t i = 0; i < f->s->n_fields; i++)
        for (int k = 0; k < 4; k++)
            if ((f->s->fields[i].applies_to & (1u << k)) &&
                ub_names_add(&reg[k], f->s->fields[i].name) < 0)
                bad = -1;
    return bad;
}

static bool ub_flat_registered(ub_flat *f, int kind, const ub_field *w,
                               uint32_t li)
{
    if (ub_names_has(f->reg[kind], w->key))
        return true;
    /* Loud where OpenUSD is silent: once per field name. */
    if (!ub_names_has(f->warned, w->key)) {
        if (ub_names_add(f->warned, w->key) < 0)
            f->oom = true;
        const ub_layer *l = f->s->layers[li];
        ub_diag *d = ub_diag_add(
            f->diags, UB_WARNING, ub_layer_loc(l, w->loc),
            "unregistered-metadata",
            l->source, l->source_len,
            "metadata '%s' is not a field OpenUSD knows without a plugin; "
            "it is dropped from the flattened layer, as OpenUSD drops it",
            w->key);
        ub_diag_set_hint(f->diags, d,
                         "register it in a plugInfo.json (SdfMetadata) for "
                         "OpenUSD, or move it into customData");
    }
    return false;
}

/* Scratch for the sites of one child: on the C stack for usual stacks, on
 * the heap for very deep ones (recursion multiplies it by the depth of
 * the namespace). */
#define UB_SITES_LOCAL 32

static ub_site *ub_sites_scratch(ub_flat *f, ub_site *local, uint32_t ns)
{
    if (ns <= UB_SITES_LOCAL)
        return local;
    ub_site *p = malloc(ns * sizeof *p);
    if (!p)
        f->oom = true;
    return p;
}

static void ub_sites_release(ub_site *p, const ub_site *local)
{
    if (p != local)
        free(p);
}

/* The children (or properties) of a prim in every layer that has it,
 * grouped by name: names in composed order (gathered weakest first,
 * `reorder nameChildren` applied for children), and for each name its
 * specs strongest first.  Built with one pass over the specs and a small
 * local hash, never probing the layers' own (large) indexes. */
typedef enum { UB_BUCKET_CHILDREN, UB_BUCKET_PROPS } ub_bucket_kind;

typedef struct ub_bucket {
    ub_names names;
    uint32_t *start; /* slot -> first entry in `sites`; n + 1 of them */
    ub_site *sites;
} ub_bucket;

static uint32_t ub_spec_count(const ub_prim *p, ub_bucket_kind kind)
{
    return kind == UB_BUCKET_CHILDREN ? p->children.n : p->props.n;
}

static void *ub_spec_at(const ub_prim *p, ub_bucket_kind kind, uint32_t i)
{
    return kind == UB_BUCKET_CHILDREN ? (void *)p->children.v[i]
                                      : (void *)p->props.v[i];
}

static const char *ub_spec_name(const void *spec, ub_bucket_kind kind)
{
    return kind == UB_BUCKET_CHILDREN ? ((const ub_prim *)spec)->name
                                      : ((const ub_prop *)spec)->name;
}

static int ub_bucket_build(ub_flat *f, ub_bucket *b, const ub_site *sites,
                           uint32_t ns, ub_bucket_kind kind)
{
    memset(b, 0, sizeof *b);
    size_t total = 0;
    for (uint32_t k = 0; k < ns; k++)
        total += ub_spec_count(sites[k].spec, kind);
    uint32_t *slot_of = malloc((total ? total : 1) * sizeof *slot_of);
    uint32_t *base = malloc(ns * sizeof *base);
    b->sites = malloc((total ? total : 1) * sizeof *b->sites);
    int bad = !slot_of || !base || !b->sites;
    /* weakest first: names in first-seen order, reorders applied */
    size_t pos = 0;
    for (uint32_t k = ns; !bad && k-- > 0;) {
        const ub_prim *p = sites[k].spec;
        base[k] = (uint32_t)pos;
        for (uint32_t i = 0; !bad && i < ub_spec_count(p, kind); i++) {
            int64_t slot = ub_names_add(
                &b->names, ub_spec_name(ub_spec_at(p, kind, i), kind));
            if (slot < 0)
                bad = 1;
            else
                slot_of[pos++] = (uint32_t)slot;
        }
        if (!bad && kind == UB_BUCKET_CHILDREN &&
            ub_names_reorder(&b->names, ub_prim_prim_order(p)) != 0)
            bad = 1;
    }
    if (!bad) {
        b->start = calloc(b->names.n + 1, sizeof *b->start);
        bad = !b->start;
    }
    if (!bad) {
        for (size_t i = 0; i < total; i++)
            b->start[slot_of[i] + 1]++;
        for (uint32_t i = 0; i < b->names.n; i++)
            b->start[i + 1] += b->start[i];
        /* strongest first within each name; start[] is advanced while
         * filling and shifted back afterwards */
        for (uint32_t k = 0; k < ns; k++) {
            const ub_prim *p = sites[k].spec;
            for (uint32_t i = 0; i < ub_spec_count(p, kind); i++) {
                uint32_t slot = slot_of[base[k] + i];
                b->sites[b->start[slot]++] =
                    (ub_site){sites[k].li, ub_spec_at(p, kind, i)};
            }
        }
        for (uint32_t i = b->names.n; i > 0; i--)
            b->start[i] = b->start[i - 1];
        b->start[0] = 0;
    }
    free(slot_of);
    free(base);
    if (bad)
        f->oom = true;
    return bad ? -1 : 0;
}

/* The specs named `name`, strongest first (*n of them). */
static ub_site *ub_bucket_sites(const ub_bucket *b, const char *name,
                                uint32_t *n)
{
    int64_t slot = ub_names_slot(&b->names, name);
    if (slot < 0) {
        *n = 0;
        return NULL;
    }
    *n = b->start[slot + 1] - b->start[slot];
    return b->sites + b->start[slot];
}

static void ub_bucket_free(ub_bucket *b)
{
    ub_names_free(&b->names);
    free(b->start);
    free(b->sites);
}

/* --- specs ----------------------------------------------------------------*/

static void ub_flat_body(ub_flat *f, ub_prim *outp, const ub_site *sites,
                         uint32_t ns);

/* The fields of a prim or variant. */
static void ub_flat_prim_fields(ub_flat *f, ub_prim *outp,
                                const ub_site *sites, uint32_t ns)
{
    bool spec_set = false;
    for (uint32_t k = 0; k < ns; k++) {
        const ub_prim *p = sites[k].spec;
        if (!spec_set && p->specifier != UB_OVER) {
            outp->specifier = p->specifier;
            spec_set = true;
        }
        if (!outp->type_name && p->type_name)
            outp->type_name = p->type_name;
        ub_flat_fields(f, &outp->meta, &p->meta, sites[k].li, UB_REG_PRIM,
                       ns == 1);
        bool kids = ub_prim_prim_order(outp)->kind == UB_V_EMPTY &&
                    ub_prim_prim_order(p)->kind != UB_V_EMPTY;
        bool props = ub_prim_property_order(outp)->kind == UB_V_EMPTY &&
                     ub_prim_property_order(p)->kind != UB_V_EMPTY;
        if (kids || props) {
            ub_prim_ext *x = ub_prim_ext_get(f->a, outp);
            if (!x) {
                f->oom = true;
                return;
            }
            if (kids)
                x->prim_order = ub_flat_copy(f, &p->ext->prim_order);
            if (props)
                x->property_order = ub_flat_copy(f, &p->ext->property_order);
        }
    }
    if (!spec_set)
        outp->specifier = UB_OVER;
}

static void ub_flat_prim_fields(ub_flat *f, ub_prim *outp,
                                const ub_site *sites, uint32_t ns);

static void ub_flat_children(ub_flat *f, ub_prim *outp, const ub_site *sites,
                             uint32_t ns)
{
    if (ns == 1 && ub_prim_prim_order((const ub_prim *)sites[0].spec)->kind ==
                       UB_V_EMPTY) {
        /* One layer has this prim (the common case deep in a stack): its
         * children in its order, without name lookups. */
        const ub_prim *p = sites[0].spec;
        if (ub_prim_reserve_children(f->out, outp, p->children.n) != 0)
            f->oom = true;
        for (uint32_t i = 0; i < p->children.n && !f->oom; i++) {
            ub_site kid = {sites[0].li, p->children.v[i]};
            ub_prim *oc = ub_prim_new(f->out, outp, p->children.v[i]->name,
                                      UB_DEF, p->children.v[i]->loc);
            if (!oc) {
                f->oom = true;
                break;
            }
            ub_flat_prim_fields(f, oc, &kid, 1);
            ub_flat_body(f, oc, &kid, 1);
        }
        return;
    }
    ub_bucket bk;
    if (ub_bucket_build(f, &bk, sites, ns, UB_BUCKET_CHILDREN) == 0) {
        if (ub_prim_reserve_children(f->out, outp, bk.names.n) != 0)
            f->oom = true;
        for (uint32_t c = 0; c < bk.names.n && !f->oom; c++) {
            uint32_t nk;
            const ub_site *kids = ub_bucket_sites(&bk, bk.names.v[c], &nk);
            if (!nk)
                continue;
            const ub_prim *first = kids[0].spec;
            ub_prim *oc = ub_prim_new(f->out, outp, bk.names.v[c], UB_DEF,
                                      first->loc);
            if (!oc) {
                f->oom = true;
                break;
            }
            ub_flat_prim_fields(f, oc, kids, nk);
            ub_flat_body(f, oc, kids, nk);
        }
    }
    ub_bucket_free(&bk);
}

static void ub_flat_variant_sets(ub_flat *f, ub_prim *outp,
                                 const ub_site *sites, uint32_t ns)
{
    ub_names sets = {0};
    for (uint32_t k = ns; k-- > 0;) {
        const ub_prim *p = sites[k].spec;
        for (uint32_t i = 0; i < ub_prim_n_variant_sets(p); i++)
            if (ub_names_add(&sets, ub_prim_variant_sets(p)[i].name) < 0)
                f->oom = true;
    }
    ub_site local[UB_SITES_LOCAL];
    ub_site *vs = ub_sites_scratch(f, local, ns);
    if (!vs) {
        ub_names_free(&sets);
        return;
    }
    for (uint32_t s = 0; s < sets.n && !f->oom; s++) {
        const char *set_name = sets.v[s];
        ub_names vars = {0};
        ub_sloc loc = {0};
        for (uint32_t k = ns; k-- > 0;) {
            const ub_variant_set *set =
                ub_variant_set_find(sites[k].spec, set_name);
            if (!set)
                continue;
            loc = set->loc;
            for (uint32_t i = 0; i < set->variants.n; i++)
                if (ub_names_add(&vars, set->variants.v[i]->name) < 0)
                    f->oom = true;
        }
        ub_variant_set *oset = ub_variant_set_get(f->out, outp, set_name, loc);
        if (!oset)
            f->oom = true;
        for (uint32_t v = 0; oset && v < vars.n && !f->oom; v++) {
            uint32_t nv = 0;
            for (uint32_t k = 0; k < ns; k++) {
                const ub_variant_set *set =
                    ub_variant_set_find(sites[k].spec, set_name);
                if (!set)
                    continue;
                for (uint32_t i = 0; i < set->variants.n; i++)
                    if (set->variants.v[i]->name == vars.v[v]) {
                        vs[nv++] = (ub_site){sites[k].li, set->variants.v[i]};
                        break;
                    }
            }
            if (!nv)
                continue;
            const ub_prim *first = vs[0].spec;
            ub_prim *ov = ub_variant_new(f->out, outp, oset, vars.v[v],
                                         first->loc);
            if (!ov) {
                f->oom = true;
                break;
            }
            ub_flat_prim_fields(f, ov, vs, nv);
            ov->specifier = UB_OVER;
            ub_flat_body(f, ov, vs, nv);
            /* the recursion may have grown the variant sets of outp */
            oset = ub_variant_set_get(f->out, outp, set_name, loc);
        }
        ub_names_free(&vars);
    }
    ub_sites_release(vs, local);
    ub_names_free(&sets);
}

static ub_samples ub_flat_samples(ub_flat *f, uint32_t li,
                                  const ub_samples *in)
{
    ub_samples s = {.authored = true, .loc = in->loc};
    if (in->n) {
        s.v = ub_arena_alloc(f->a, in->n * sizeof *s.v);
        if (!s.v) {
            f->oom = true;
            return s;
        }
        s.n = s.cap = in->n;
        /* Asset-valued samples are anchored when the first sample holds
         * an asset, as OpenUSD checks only the first. */
        bool assets = ub_is_asset_value(&in->v[0].value);
        for (uint32_t i = 0; i < in->n; i++) {
            s.v[i].time = in->v[i].time;
            s.v[i].value = ub_flat_copy(f, &in->v[i].value);
            if (assets)
                ub_flat_fix_assets_data(f, li, &s.v[i].value);
        }
    }
    ub_offset o = f->s->offsets[li];
    if (!ub_offset_is_identity(o) && ub_samples_apply_offset(f->a, &s, o))
        f->oom = true;
    return s;
}

static void ub_flat_prop(ub_flat *f, ub_prop *op, const ub_site *sites,
                         uint32_t ns)
{
    /* custom and variability are required fields in OpenUSD: every spec
     * has them (false / varying when not written), so the strongest spec
     * decides even when only a weaker one says `custom`. */
    const ub_prop *first = sites[0].spec;
    op->custom = first->custom;
    op->variability = first->variability;
    op->varying_keyword = first->varying_keyword;
    if (ub_prop_copy_decl(f->a, op, first) != 0)
        f->oom = true;
    op->is_array = first->is_array;
    bool samples_done = false;
    for (uint32_t k = 0; k < ns; k++) {
        const ub_prop *p = sites[k].spec;
        uint32_t li = sites[k].li;
        if (op->default_value.kind == UB_V_EMPTY &&
            p->default_value.kind != UB_V_EMPTY)
            op->default_value = ub_flat_prepare(f, li, NULL,
                                                &p->default_value);
        /* Samples come from the strongest layer that has any, unless a
         * stronger layer's default masks them. */
        if (!samples_done) {
            if (ub_prop_samples(p)->authored) {
                ub_prop_ext *x = ub_prop_ext_get(f->a, op);
                if (!x) {
                    f->oom = true;
                    return;
                }
                x->samples = ub_flat_samples(f, li, ub_prop_samples(p));
                samples_done = true;
            } else if (p->default_value.kind != UB_V_EMPTY) {
                samples_done = true;
            }
        }
        if (ub_prop_connections(p)->kind != UB_V_EMPTY ||
            ub_prop_targets(p)->kind != UB_V_EMPTY ||
            ub_prop_default_target(p)) {
            ub_prop_ext *x = ub_prop_ext_get(f->a, op);
            if (!x) {
                f->oom = true;
                return;
            }
            ub_flat_reduce(f, &x->connections, li, NULL,
                           ub_prop_connections(p));
            ub_flat_reduce(f, &x->targets, li, NULL, ub_prop_targets(p));
            if (!x->default_target && ub_prop_default_target(p))
                x->default_target = ub_prop_default_target(p);
        }
        ub_fields meta = *ub_prop_meta(op);
        ub_flat_fields(f, &meta, ub_prop_meta(p), li,
                       p->kind == UB_ATTR ? UB_REG_ATTR : UB_REG_REL, ns == 1);
        if (ub_prop_set_meta(f->a, op, &meta) != 0)
            f->oom = true;
    }
}

/* Whether the flattened copy of p, the only spec of its property, would
 * equal p: then the output takes p itself (most properties of a big layer;
 * they are most of its memory).  Its fields must all be registered (the
 * copy drops an unregistered one, with a warning). */
static bool ub_flat_prop_as_is(ub_flat *f, const ub_prop *p, uint32_t li)
{
    if (!ub_flat_as_is(f, li, NULL, &p->default_value, true))
        return false;
    if (ub_prop_samples(p)->authored ||
        !ub_flat_as_is(f, li, NULL, ub_prop_connections(p), true) ||
        !ub_flat_as_is(f, li, NULL, ub_prop_targets(p), true))
        return false;
    int kind = p->kind == UB_ATTR ? UB_REG_ATTR : UB_REG_REL;
    const ub_fields *meta = ub_prop_meta(p);
    for (uint32_t i = 0; i < meta->n; i++)
        if (!ub_names_has(f->reg[kind], meta->v[i].key) ||
            !ub_flat_as_is(f, li, meta->v[i].key, &meta->v[i].value, true))
            return false;
    return true;
}

static void ub_flat_props(ub_flat *f, ub_prim *outp, const ub_site *sites,
                          uint32_t ns)
{
    if (ns == 1) {
        /* One layer: its properties as they are, without name lookups. */
        const ub_prim *p = sites[0].spec;
        uint32_t same = 0;
        while (same < p->props.n &&
               ub_flat_prop_as_is(f, p->props.v[same], sites[0].li))
            same++;
        if (same == p->props.n && same && !outp->props.n) {
            if (ub_prop_share_all(f->out, outp, &p->props) != 0)
                f->oom = true;
            return;
        }
        for (uint32_t i = 0; i < p->props.n && !f->oom; i++) {
            const ub_prop *ip = p->props.v[i];
            if (i < same || ub_flat_prop_as_is(f, ip, sites[0].li)) {
                if (ub_prop_append(f->out, outp, p->props.v[i]) != 0)
                    f->oom = true;
                continue;
            }
            ub_site one = {sites[0].li, p->props.v[i]};
            ub_prop *op = ub_prop_new(f->out, outp, ip->name, ip->kind,
                                      ip->loc);
            if (!op) {
                f->oom = true;
                break;
            }
            ub_flat_prop(f, op, &one, 1);
        }
        return;
    }
    ub_bucket bk;
    if (ub_bucket_build(f, &bk, sites, ns, UB_BUCKET_PROPS) == 0) {
        for (uint32_t c = 0; c < bk.names.n && !f->oom; c++) {
            uint32_t nb;
            ub_site *ps = ub_bucket_sites(&bk, bk.names.v[c], &nb);
            if (!nb)
                continue;
            /* The strongest spec decides attribute or relationship; weaker
             * specs of the other kind are ignored (as OpenUSD does). */
            ub_prop_kind kind = ((const ub_prop *)ps[0].spec)->kind;
            uint32_t np = 0;
            for (uint32_t k = 0; k < nb; k++) {
                const ub_prop *p = ps[k].spec;
                if (p->kind != kind) {
                    const ub_layer *l = f->s->layers[ps[k].li];
                    ub_diag_add(
                        f->diags, UB_WARNING, ub_layer_loc(l, p->loc),
                        "spec-type-mismatch",
                        l->source, l->source_len,
                        "'%s' is %s here but %s in a stronger layer; this "
                        "opinion is ignored",
                        p->name,
                        p->kind == UB_ATTR ? "an attribute"
                                           : "a relationship",
                        kind == UB_ATTR ? "an attribute" : "a relationship");
                    continue;
                }
                ps[np++] = ps[k];
            }
            const ub_prop *first = ps[0].spec;
            ub_prop *op = ub_prop_new(f->out, outp, bk.names.v[c], kind,
                                      first->loc);
            if (!op) {
                f->oom = true;
                break;
            }
            ub_flat_prop(f, op, ps, np);
        }
    }
    ub_bucket_free(&bk);
}

static void ub_flat_body(ub_flat *f, ub_prim *outp, const ub_site *sites,
                         uint32_t ns)
{
    ub_flat_children(f, outp, sites, ns);
    if (!outp->parent)
        return; /* the pseudo-root has no variants or properties */
    ub_flat_variant_sets(f, outp, sites, ns);
    ub_flat_props(f, outp, sites, ns);
}

ub_layer *ub_stack_flatten(const ub_stack *s, const char *out_path,
                           ub_diags *diags)
{
    if (!s->n)
        return NULL;
    ub_strtab *t = s->layers[0]->strtab;
    ub_flat f = {.s = s, .diags = diags};
    f.out = ub_layer_new(t, out_path ? out_path : "flattened.usda");
    if (!f.out)
        return NULL;
    /* written, not searched: its lists need no name index */
    ub_layer_unindexed(f.out);
    f.a = f.out->arena;
    f.vars = ub_stack_vars(s->layers[0]);
    f.k_references = ub_intern_cstr(t, "references");
    f.k_payload = ub_intern_cstr(t, "payload");
    f.k_clips = ub_intern_cstr(t, "clips");
    f.k_active = ub_intern_cstr(t, "active");
    f.k_times = ub_intern_cstr(t, "times");
    f.k_asset_paths = ub_intern_cstr(t, "assetPaths");
    f.k_manifest = ub_intern_cstr(t, "manifestAssetPath");
    f.k_relocates = ub_intern_cstr(t, "relocates");
    ub_names reg[5];
    memset(reg, 0, sizeof reg);
    if (ub_reg_init(&f, reg) != 0)
        f.oom = true;

    ub_site *sites = malloc(s->n * sizeof *sites);
    if (!sites)
        f.oom = true;
    for (size_t i = 0; sites && i < s->n; i++) {
        sites[i] = (ub_site){(uint32_t)i, s->layers[i]->root};
        /* layer metadata: every layer takes part; subLayers is not a
         * field of ub_layer.meta, so it is dropped by construction. */
        ub_flat_fields(&f, &f.out->meta, &s->layers[i]->meta, (uint32_t)i,
                       UB_REG_LAYER, false);
    }
    for (size_t i = 0;
         i < s->n && ub_prim_prim_order(f.out->root)->kind == UB_V_EMPTY; i++)
        if (ub_prim_prim_order(s->layers[i]->root)->kind != UB_V_EMPTY) {
            ub_prim_ext *x = ub_prim_ext_get(f.a, f.out->root);
            if (!x) {
                f.oom = true;
                break;
            }
            x->prim_order =
                ub_flat_copy(&f, ub_prim_prim_order(s->layers[i]->root));
        }
    if (sites)
        ub_flat_body(&f, f.out->root, sites, (uint32_t)s->n);
    free(sites);

    for (int k = 0; k < 5; k++)
        ub_names_free(&reg[k]);
    if (f.oom) {
        ub_layer_free(f.out);
        return NULL;
    }
    return f.out;
}
