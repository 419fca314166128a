/* ub_stitch — value-clip sets from per-frame layers, clip manifests, and
 * layer merges (see ub_stitch.h). */
#include "ub_stitch.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ub_cpus.h"
#include "ub_ident.h"
#include "ub_idtab.h"
#include "ub_loader.h"
#include "ub_stack.h"

/* --- reading inputs in parallel, merging them in order ------------------ */

typedef struct ub_slot {
    ub_loader *ld;
    ub_diags *diags;
    ub_layer *layer;
    bool ready;
} ub_slot;

typedef struct ub_reader {
    ub_strtab *t;
    const char *const *paths;
    size_t n, next, released, window;
    ub_slot *slots;
    bool stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} ub_reader;

/* Called on the calling thread for each input, in order. */
typedef int (*ub_each_fn)(void *ctx, size_t i, const ub_layer *layer);

static void *ub_reader_work(void *arg)
{
    ub_reader *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->stop && r->next < r->n &&
               r->next >= r->released + r->window)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->stop || r->next >= r->n)
            break;
        size_t i = r->next++;
        pthread_mutex_unlock(&r->mu);
        ub_slot *s = &r->slots[i];
        s->diags = ub_diags_new();
        s->ld = s->diags ? ub_loader_new(r->t, s->diags) : NULL;
        ub_layer *l = s->ld ? ub_loader_open(s->ld, r->paths[i], NULL,
                                             (ub_loc){NULL, 0, 0})
                            : NULL;
        pthread_mutex_lock(&r->mu);
        s->layer = l;
        s->ready = true;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void ub_slot_release(ub_slot *s)
{
    ub_loader_free(s->ld);
    ub_diags_free(s->diags);
    *s = (ub_slot){0};
}

/* Read paths[0..n) with worker threads and hand each layer to fn, in
 * order, on this thread.  Stops at the first input that does not load or
 * that fn refuses (-1).  Returns 0 or -1. */
static int ub_read_each(ub_strtab *t, const char *const *paths, size_t n,
                        unsigned threads, ub_each_fn fn, void *ctx,
                        ub_diags *diags)
{
    if (!threads)
        threads = ub_cpus();
    if (threads > n)
        threads = n ? (unsigned)n : 1;
    ub_reader r = {.t = t, .paths = paths, .n = n, .window = 2 * threads};
    r.slots = calloc(n ? n : 1, sizeof *r.slots);
    pthread_t *tid = calloc(threads, sizeof *tid);
    if (!r.slots || !tid) {
        free(r.slots);
        free(tid);
        ub_diag_add_oom(diags, (ub_loc){NULL, 0, 0}, "out of memory");
        return -1;
    }
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    ub_strtab_set_concurrent(t, true);
    unsigned started = 0;
    while (started < threads &&
           pthread_create(&tid[started], NULL, ub_reader_work, &r) == 0)
        started++;
    int status = 0;
    if (!started) {
        r.window = n; /* no thread: read them all here first */
        ub_reader_work(&r);
    }
    for (size_t i = 0; i < n && status == 0; i++) {
        ub_slot *s = &r.slots[i];
        pthread_mutex_lock(&r.mu);
        while (!s->ready)
            pthread_cond_wait(&r.cv, &r.mu);
        pthread_mutex_unlock(&r.mu);
        if (s->diags)
            ub_diags_take(diags, s->diags);
        if (!s->layer) {
            if (!s->diags || !s->ld)
                ub_diag_add_oom(diags, (ub_loc){paths[i], 0, 0},
                                "out of memory reading this layer");
            status = -1;
        } else if (fn(ctx, i, s->layer) != 0) {
            status = -1;
        }
        ub_slot_release(s);
        pthread_mutex_lock(&r.mu);
        r.released = i + 1;
        if (status != 0)
            r.stop = true;
        pthread_cond_broadcast(&r.cv);
        pthread_mutex_unlock(&r.mu);
    }
    for (unsigned k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    ub_strtab_set_concurrent(t, false);
    for (size_t i = 0; i < n; i++)
        if (r.slots[i].ready)
            ub_slot_release(&r.slots[i]);
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    free(r.slots);
    free(tid);
    return status;
}

/* --- the merge (UsdUtilsStitchLayers) ------------------------------------ */

typedef struct ub_merge {
    ub_layer *out;
    const ub_layer *src;
    ub_diags *diags;
    bool samples, check_types, oom, bad;
    const char *file; /* src's path, interned: locations that outlive src */
    const char *k_start, *k_end, *k_fps, *k_tcps, *k_precision;
} ub_merge;

/* s, a location in another layer, with its file replaced by file (which
 * outlives that layer). */
static ub_sloc ub_sloc_refile(ub_strtab *t, ub_sloc s, const char *file)
{
    if (ub_sloc_is_spec(s)) /* (no line: its text need not be made) */
        return ub_strtab_sloc(t, (ub_loc){file, 0, 0});
    ub_loc l = ub_strtab_loc(t, s);
    l.file = file;
    return ub_strtab_sloc(t, l);
}

static ub_sloc ub_merge_loc(const ub_merge *m, ub_sloc l)
{
    return ub_sloc_refile(m->out->strtab, l, m->file);
}

static void ub_merge_value(ub_merge *m, ub_value *dst, const ub_value *src)
{
    if (ub_stack_merge_opinion(m->out->arena, dst, src) != 0)
        m->oom = true;
}

static double ub_num(const ub_value *v)
{
    return ub_value_get_double(v, 0, 0);
}

static bool ub_is_num(const ub_value *v)
{
    return v->kind == UB_V_DATA && v->count == 1 && !v->is_array &&
           ub_value_type(v) &&
               ub_value_type(v)->rows * ub_value_type(v)->cols == 1 &&
           ub_value_type(v)->scalar >= UB_SC_UCHAR &&
               ub_value_type(v)->scalar <= UB_SC_DOUBLE;
}

/* Fields of one spec: layer says whether they are layer metadata (where
 * start/endTimeCode widen and the rates are checked). */
static void ub_merge_fields(ub_merge *m, ub_fields *dst, const ub_fields *src,
                            bool layer)
{
    for (uint32_t i = 0; i < src->n; i++) {
        const ub_field *w = &src->v[i];
        ub_field *s = ub_fields_find(dst, w->key);
        if (!s) {
            ub_value c = {0};
            ub_merge_value(m, &c, &w->value);
            if (!m->oom && !ub_fields_set(m->out->arena, dst, w->key, c,
                                          ub_merge_loc(m, w->loc)))
                m->oom = true;
            continue;
        }
        if (layer && (w->key == m->k_start || w->key == m->k_end) &&
            ub_is_num(&s->value) && ub_is_num(&w->value)) {
            double a = ub_num(&s->value), b = ub_num(&w->value);
            if (w->key == m->k_start ? b < a : b > a)
                s->value = ub_value_clone(m->out->arena, &w->value);
            continue;
        }
        if (layer &&
            (w->key == m->k_fps || w->key == m->k_tcps ||
             w->key == m->k_precision) &&
            ub_is_num(&s->value) && ub_is_num(&w->value) &&
            ub_num(&s->value) != ub_num(&w->value)) {
            ub_diag_add(m->diags, UB_WARNING, ub_layer_loc(m->src, w->loc),
                        "stitch-rate-mismatch",
                        m->src->source, m->src->source_len,
                        "%s is %g here but %g in a stronger layer; the "
                        "stronger value is kept",
                        w->key, ub_num(&w->value), ub_num(&s->value));
            continue;
        }
        ub_merge_value(m, &s->value, &w->value);
    }
}

static void ub_merge_prop_new(ub_merge *m, ub_prop *d, const ub_prop *s)
{
    ub_arena *a = m->out->arena;
    d->variability = s->variability;
    d->custom = s->custom;
    d->varying_keyword = s->varying_keyword;
    d->is_array = s->is_array;
    if (ub_prop_copy_decl(a, d, s) != 0)
        m->oom = true;
    d->default_value = ub_value_clone(a, &s->default_value);
    if (!s->ext)
        return;
    ub_prop_ext *x = ub_prop_ext_get(a, d);
    if (!x) {
        m->oom = true;
        return;
    }
    x->connections = ub_value_clone(a, ub_prop_connections(s));
    x->targets = ub_value_clone(a, ub_prop_targets(s));
    x->default_target = ub_prop_default_target(s);
    if (m->samples) {
        x->samples.authored = ub_prop_samples(s)->authored;
        x->samples.loc = ub_merge_loc(m, ub_prop_samples(s)->loc);
    }
}

static void ub_merge_prop(ub_merge *m, ub_prim *dp, const ub_prop *s)
{
    bool created = false;
    ub_prop *d = ub_prop_find_or_new(m->out, dp, s->name, s->kind,
                                     ub_merge_loc(m, s->loc), &created);
    if (!d) {
        m->oom = true;
        return;
    }
    if (created) {
        ub_merge_prop_new(m, d, s);
    } else {
        if (m->check_types && d->kind == UB_ATTR && s->kind == UB_ATTR &&
            (!ub_prop_same_type_name(d, s) || d->is_array != s->is_array)) {
            ub_loc dl = ub_layer_loc(m->out, d->loc);
            ub_diag *g = ub_diag_add(
                m->diags, UB_ERROR, ub_layer_loc(m->src, s->loc),
                "stitch-type-mismatch",
                m->src->source, m->src->source_len,
                "attribute '%s.%s' is %s%s here but %s%s in %s:%u:%u; "
                "every frame must declare it with one type",
                ub_prim_path(m->out, dp), s->name, ub_prop_type_spelling(s),
                s->is_array ? "[]" : "", ub_prop_type_spelling(d),
                d->is_array ? "[]" : "", dl.file ? dl.file : "?", dl.line,
                dl.col);
            (void)g;
            m->bad = true;
            return;
        }
        if (d->kind != s->kind)
            return; /* the stronger spec stands */
        if (d->default_value.kind == UB_V_EMPTY)
            d->default_value = ub_value_clone(m->out->arena, &s->default_value);
        if (s->ext) {
            ub_prop_ext *dx = ub_prop_ext_get(m->out->arena, d);
            if (!dx) {
                m->oom = true;
                return;
            }
            ub_merge_value(m, &dx->connections, ub_prop_connections(s));
            ub_merge_value(m, &dx->targets, ub_prop_targets(s));
            if (!dx->default_target)
                dx->default_target = ub_prop_default_target(s);
            if (m->samples && ub_prop_samples(s)->authored &&
                !dx->samples.authored) {
                dx->samples.authored = true;
                dx->samples.loc = ub_merge_loc(m, ub_prop_samples(s)->loc);
            }
        }
    }
    if (m->samples && ub_prop_samples(s)->n) {
        ub_prop_ext *dx = ub_prop_ext_get(m->out->arena, d);
        if (!dx) {
            m->oom = true;
            return;
        }
        for (uint32_t k = 0; k < ub_prop_samples(s)->n; k++) {
            const ub_sample *x = &ub_prop_samples(s)->v[k];
            if (ub_samples_find(&dx->samples, x->time))
                continue;
            ub_value c = ub_value_clone(m->out->arena, &x->value);
            if ((x->value.kind != UB_V_EMPTY && c.kind == UB_V_EMPTY) ||
                ub_samples_set(m->out->arena, &dx->samples, x->time, c) != 0)
                m->oom = true;
        }
    }
    ub_fields meta = *ub_prop_meta(d);
    ub_merge_fields(m, &meta, ub_prop_meta(s), false);
    if (ub_prop_set_meta(m->out->arena, d, &meta) != 0)
        m->oom = true;
}

static void ub_merge_prim(ub_merge *m, ub_prim *d, const ub_prim *s,
                          bool created);

static void ub_merge_body(ub_merge *m, ub_prim *d, const ub_prim *s)
{
    for (uint32_t i = 0; i < s->props.n && !m->oom; i++)
        ub_merge_prop(m, d, s->props.v[i]);
    for (uint32_t i = 0; i < s->children.n && !m->oom; i++) {
        const ub_prim *c = s->children.v[i];
        ub_prim *dc = ub_prim_find_child(m->out, d, c->name);
        bool created = !dc;
        if (created)
            dc = ub_prim_new(m->out, d, c->name, c->specifier,
                             ub_merge_loc(m, c->loc));
        if (!dc) {
            m->oom = true;
            return;
        }
        ub_merge_prim(m, dc, c, created);
    }
    for (uint32_t i = 0; i < ub_prim_n_variant_sets(s) && !m->oom; i++) {
        const ub_variant_set *vs = &ub_prim_variant_sets(s)[i];
        ub_variant_set *dv = ub_variant_set_get(m->out, d, vs->name,
                                                ub_merge_loc(m, vs->loc));
        if (!dv) {
            m->oom = true;
            return;
        }
        for (uint32_t k = 0; k < vs->variants.n && !m->oom; k++) {
            const ub_prim *v = vs->variants.v[k];
            ub_prim *dvar = NULL;
            for (uint32_t j = 0; j < dv->variants.n; j++)
                if (dv->variants.v[j]->name == v->name)
                    dvar = dv->variants.v[j];
            bool created = !dvar;
            if (created)
                dvar = ub_variant_new(m->out, d, dv, v->name,
                                      ub_merge_loc(m, v->loc));
            if (!dvar) {
                m->oom = true;
                return;
            }
            ub_merge_prim(m, dvar, v, created);
        }
    }
}

static void ub_merge_prim(ub_merge *m, ub_prim *d, const ub_prim *s,
                          bool created)
{
    if (!created && s->specifier != UB_OVER)
        d->specifier = s->specifier;
    if (!d->type_name)
        d->type_name = s->type_name;
    bool kids = ub_prim_prim_order(d)->kind == UB_V_EMPTY &&
                ub_prim_prim_order(s)->kind != UB_V_EMPTY;
    bool props = ub_prim_property_order(d)->kind == UB_V_EMPTY &&
                 ub_prim_property_order(s)->kind != UB_V_EMPTY;
    if (kids || props) {
        ub_prim_ext *x = ub_prim_ext_get(m->out->arena, d);
        if (!x) {
            m->oom = true;
            return;
        }
        if (kids)
            x->prim_order = ub_value_clone(m->out->arena, &s->ext->prim_order);
        if (props)
            x->property_order =
                ub_value_clone(m->out->arena, &s->ext->property_order);
    }
    ub_merge_fields(m, &d->meta, &s->meta, false);
    ub_merge_body(m, d, s);
}

int ub_stitch_merge(ub_layer *dst, const ub_layer *src, bool samples,
                    bool check_types, ub_diags *diags)
{
    ub_strtab *t = dst->strtab;
    ub_merge m = {
        .out = dst, .src = src, .diags = diags, .samples = samples,
        .check_types = check_types,
        .file = ub_intern_cstr(t, src->path),
        .k_start = ub_intern_cstr(t, "startTimeCode"),
        .k_end = ub_intern_cstr(t, "endTimeCode"),
        .k_fps = ub_intern_cstr(t, "framesPerSecond"),
        .k_tcps = ub_intern_cstr(t, "timeCodesPerSecond"),
        .k_precision = ub_intern_cstr(t, "framePrecision"),
    };
    if (!m.file || !m.k_start || !m.k_end || !m.k_fps || !m.k_tcps ||
        !m.k_precision)
        m.oom = true;
    if (!m.oom && !dst->has_sublayers && src->has_sublayers) {
        dst->has_sublayers = true;
        for (uint32_t i = 0; i < src->n_sublayers && !m.oom; i++) {
            const ub_sublayer *w = &src->sublayers[i];
            ub_sublayer *s = ub_layer_add_sublayer(dst, w->asset,
                                                   ub_merge_loc(&m, w->loc));
            if (!s) {
                m.oom = true;
                break;
            }
            s->offset = w->offset;
            s->has_offset = w->has_offset;
            s->has_scale = w->has_scale;
        }
    }
    if (!m.oom)
        ub_merge_fields(&m, &dst->meta, &src->meta, true);
    if (!m.oom)
        ub_merge_prim(&m, dst->root, src->root, false);
    if (m.oom)
        ub_diag_add_oom(diags, (ub_loc){src->path, 0, 0},
                        "out of memory merging this layer");
    return m.oom || m.bad ? -1 : 0;
}

/* --- paths ------------------------------------------------------------- */

/* An absolute, normalised copy of a file path (malloc'd), or NULL. */
static char *ub_abs_path(const char *p)
{
    char *r;
    if (p[0] == '/') {
        r = strdup(p);
    } else {
        char *cwd = getcwd(NULL, 0);
        if (!cwd)
            return NULL;
        size_t a = strlen(cwd), b = strlen(p);
        r = malloc(a + b + 2);
        if (r) {
            memcpy(r, cwd, a);
            r[a] = '/';
            memcpy(r + a + 1, p, b + 1);
        }
        free(cwd);
    }
    if (r && ub_path_normalize(r) != 0) {
        free(r);
        r = NULL;
    }
    return r;
}

/* The asset path a result layer at `result` writes for the layer at
 * `file`, as usdstitchclips writes it: "./" and the rest when the file is
 * in the result's directory or below, else its absolute path. */
static const char *ub_rel_asset(ub_strtab *t, const char *file,
                                const char *result)
{
    char *f = ub_abs_path(file), *r = ub_abs_path(result);
    const char *out = NULL;
    if (f && r) {
        char *slash = strrchr(r, '/');
        size_t dl = slash ? (size_t)(slash - r) + 1 : 0;
        if (dl && strncmp(f, r, dl) == 0) {
            size_t n = strlen(f + dl);
            char *x = malloc(n + 3);
            if (x) {
                memcpy(x, "./", 2);
                memcpy(x + 2, f + dl, n + 1);
                out = ub_intern_cstr(t, x);
                free(x);
            }
        } else {
            out = ub_intern_cstr(t, f);
        }
    }
    free(f);
    free(r);
    return out;
}

/* base with ".<tag>" before its last '.', as OpenUSD names the topology
 * and manifest layers (but a '.' in a directory name is not taken for the
 * extension's); NULL when the file name has no '.'. */
static const char *ub_sibling_name(ub_strtab *t, const char *base,
                                   const char *tag)
{
    const char *slash = strrchr(base, '/');
    const char *dot = strrchr(slash ? slash : base, '.');
    if (!dot)
        return NULL;
    size_t pre = (size_t)(dot - base), tl = strlen(tag), rest = strlen(dot);
    char *x = malloc(pre + tl + rest + 2);
    if (!x)
        return NULL;
    memcpy(x, base, pre);
    x[pre] = '.';
    memcpy(x + pre + 1, tag, tl);
    memcpy(x + pre + 1 + tl, dot, rest + 1);
    const char *r = ub_intern_cstr(t, x);
    free(x);
    return r;
}

/* Split an absolute prim path into interned names.  Returns the count, or
 * -1 when it is not an absolute prim path. */
static int ub_split_prim_path(ub_strtab *t, const char *p, const char ***names)
{
    *names = NULL;
    if (!ub_ident_prim_path_ok(p))
        return -1;
    int n = 0;
    for (const char *q = p; *q; q++)
        n += *q == '/';
    const char **v = calloc((size_t)n, sizeof *v);
    if (!v)
        return -1;
    int k = 0;
    for (const char *q = p + 1;;) {
        const char *e = strchr(q, '/');
        size_t len = e ? (size_t)(e - q) : strlen(q);
        if (!(v[k++] = ub_intern(t, q, len))) {
            free(v);
            return -1;
        }
        if (!e)
            break;
        q = e + 1;
    }
    *names = v;
    return n;
}

static const ub_prim *ub_find_prim(const ub_layer *l, const char *const *names,
                                   int n)
{
    const ub_prim *p = l->root;
    for (int i = 0; i < n && p; i++)
        p = ub_prim_find_child(l, p, names[i]);
    return p;
}

/* The prim of out at src's path, made of overs where missing. */
static ub_prim *ub_ensure_prim(ub_layer *out, const ub_prim *src)
{
    if (!src->parent)
        return out->root;
    ub_prim *p = ub_ensure_prim(out, src->parent);
    if (!p)
        return NULL;
    ub_prim *c = ub_prim_find_child(out, p, src->name);
    return c ? c
             : ub_prim_new(out, p, src->name, UB_OVER, (ub_sloc){0});
}

/* --- frame times ----------------------------------------------------------*/

/* Layer metadata key or, without it, alt (the legacy name) as a number.
 * (Keys are found by their interned pointer: a literal is never one.) */
static bool ub_layer_time(ub_strtab *st, const ub_layer *l, const char *key,
                          const char *alt, double *t)
{
    const char *k = ub_intern_cstr(st, key), *a = ub_intern_cstr(st, alt);
    const ub_field *f = k ? ub_fields_find(&l->meta, k) : NULL;
    if ((!f || !ub_is_num(&f->value)) && a)
        f = ub_fields_find(&l->meta, a);
    if (!f || !ub_is_num(&f->value))
        return false;
    *t = ub_num(&f->value);
    return true;
}

/* The last number in a file name's base ("splash.0101.usda": 101, also
 * "-3" and "12.5" as templates allow). */
static bool ub_name_time(const char *path, double *t)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *ext = strrchr(base, '.');
    size_t n = ext && ext != base ? (size_t)(ext - base) : strlen(base);
    size_t end = n;
    while (end > 0 && !isdigit((unsigned char)base[end - 1]))
        end--;
    if (!end)
        return false;
    size_t b = end;
    while (b > 0 && isdigit((unsigned char)base[b - 1]))
        b--;
    /* a fraction: digits '.' digits */
    if (b >= 2 && base[b - 1] == '.' && isdigit((unsigned char)base[b - 2])) {
        b--;
        while (b > 0 && isdigit((unsigned char)base[b - 1]))
            b--;
    }
    if (b > 0 && base[b - 1] == '-' && (b == 1 || !isalnum((unsigned char)base[b - 2])))
        b--;
    char buf[64];
    if (end - b >= sizeof buf)
        return false;
    memcpy(buf, base + b, end - b);
    buf[end - b] = '\0';
    char *e;
    *t = strtod(buf, &e);
    return *e == '\0' && isfinite(*t);
}

static int ub_frame_time(ub_strtab *st, const ub_layer *l, ub_diags *diags,
                         double *start, double *end)
{
    bool hs = ub_layer_time(st, l, "startTimeCode", "startFrame", start);
    bool he = ub_layer_time(st, l, "endTimeCode", "endFrame", end);
    if (hs) {
        if (!he)
            *end = 0.0; /* OpenUSD's reading of a missing end */
        return 0;
    }
    if (ub_name_time(l->path, start)) {
        if (!he)
            *end = *start;
        return 0;
    }
    ub_diag *d = ub_diag_add(
        diags, UB_ERROR, (ub_loc){l->path, 0, 0}, "stitch-frame-time", NULL,
        0,
        "cannot tell this frame's time: it has no startTimeCode and its "
        "name has no frame number");
    ub_diag_set_hint(diags, d,
                     "author startTimeCode/endTimeCode in the frame, or name "
                     "it NAME.FRAME.usda");
    return -1;
}

/* --- manifests ------------------------------------------------------------*/

/* Which clips animate each manifest attribute (for value blocks). */
typedef struct ub_mattr {
    ub_prop *prop;
    size_t stamp; /* last clip (+1) with samples */
} ub_mattr;

typedef struct ub_manifest {
    ub_layer *out;
    ub_diags *diags;
    bool blocks, oom, bad;
    ub_mattr *attrs;
    size_t n, cap;
    ub_idtab by_prop; /* prop pointer -> attrs index */
    double *times; /* each clip's start time so far */
    size_t n_times;
} ub_manifest;

static uint32_t ub_ptr_hash(const void *p)
{
    return ub_interned_hash((const char *)p);
}

static bool ub_mattr_eq(const void *ctx, uint32_t id, const void *key)
{
    return ((const ub_manifest *)ctx)->attrs[id].prop == key;
}

static ub_mattr *ub_mattr_find(ub_manifest *mf, const ub_prop *p)
{
    uint32_t id = ub_idtab_get(&mf->by_prop, ub_ptr_hash(p), ub_mattr_eq,
                               mf, p);
    return id == UINT32_MAX ? NULL : &mf->attrs[id];
}

/* Enter p, an attribute new to the manifest. */
static int ub_mattr_add(ub_manifest *mf, ub_prop *p)
{
    uint32_t h = ub_ptr_hash(p);
    ub_idslot *s = ub_idtab_find(&mf->by_prop, h, ub_mattr_eq, mf, p);
    if (!s)
        return -1;
    if (mf->n == mf->cap) {
        size_t nc = mf->cap ? mf->cap * 2 : 64;
        ub_mattr *na = realloc(mf->attrs, nc * sizeof *na);
        if (!na)
            return -1;
        mf->attrs = na;
        mf->cap = nc;
    }
    ub_idtab_put(&mf->by_prop, s, h, (uint32_t)mf->n);
    mf->attrs[mf->n++] = (ub_mattr){p, 0};
    return 0;
}

static void ub_manifest_block(ub_manifest *mf, ub_prop *p, double t)
{
    ub_prop_ext *x = ub_prop_ext_get(mf->out->arena, p);
    if (!x || ub_samples_set(mf->out->arena, &x->samples, t,
                             ub_value_block()) != 0) {
        mf->oom = true;
        return;
    }
    x->samples.authored = true;
}

/* Declare in the manifest every attribute of s (and below) that has time
 * samples. */
static void ub_manifest_prim(ub_manifest *mf, const ub_layer *l,
                             const ub_prim *s)
{
    ub_prim *d = NULL;
    for (uint32_t i = 0; i < s->props.n && !mf->oom; i++) {
        const ub_prop *p = s->props.v[i];
        if (p->kind != UB_ATTR || ub_prop_samples(p)->n == 0)
            continue;
        if (!d && !(d = ub_ensure_prim(mf->out, s))) {
            mf->oom = true;
            return;
        }
        bool created = false;
        ub_prop *a = ub_prop_find_or_new(mf->out, d, p->name, UB_ATTR,
                                         (ub_sloc){0}, &created);
        if (!a) {
            mf->oom = true;
            return;
        }
        if (created) {
            if (ub_prop_copy_decl(mf->out->arena, a, p) != 0)
                mf->oom = true;
            a->is_array = p->is_array;
            a->variability = p->variability;
            a->loc = ub_sloc_refile(mf->out->strtab, p->loc,
                                    ub_intern_cstr(mf->out->strtab, l->path));
        } else if (!ub_prop_same_type_name(a, p) ||
                   a->is_array != p->is_array) {
            ub_loc al = ub_layer_loc(mf->out, a->loc);
            ub_diag_add(mf->diags, UB_ERROR, ub_layer_loc(l, p->loc),
                        "stitch-type-mismatch", l->source, l->source_len,
                        "attribute '%s.%s' is %s%s here but %s%s in "
                        "%s:%u:%u; every clip must declare it with one type",
                        ub_prim_path(mf->out, d), p->name,
                        ub_prop_type_spelling(p), p->is_array ? "[]" : "",
                        ub_prop_type_spelling(a),
                        a->is_array ? "[]" : "",
                        al.file ? al.file : "?", al.line, al.col);
            mf->bad = true;
            continue;
        }
        if (!mf->blocks)
            continue;
        if (created) {
            if (ub_mattr_add(mf, a) != 0) {
                mf->oom = true;
                return;
            }
            for (size_t k = 0; k + 1 < mf->n_times; k++)
                ub_manifest_block(mf, a, mf->times[k]);
        }
        ub_mattr *ma = ub_mattr_find(mf, a);
        if (ma)
            ma->stamp = mf->n_times;
    }
    for (uint32_t i = 0; i < s->children.n && !mf->oom; i++)
        ub_manifest_prim(mf, l, s->children.v[i]);
}

/* Add clip l (starting at time t) to the manifest. */
static int ub_manifest_add(ub_manifest *mf, const ub_layer *l,
                           const ub_prim *clip_prim, double t)
{
    if (mf->blocks) {
        double *nt = realloc(mf->times, (mf->n_times + 1) * sizeof *nt);
        if (!nt)
            return -1;
        mf->times = nt;
        mf->times[mf->n_times++] = t;
    }
    if (clip_prim)
        ub_manifest_prim(mf, l, clip_prim);
    if (mf->blocks)
        for (size_t i = 0; i < mf->n; i++)
            if (mf->attrs[i].stamp != mf->n_times)
                ub_manifest_block(mf, mf->attrs[i].prop, t);
    return mf->oom ? -1 : 0;
}

static void ub_manifest_free(ub_manifest *mf)
{
    free(mf->attrs);
    ub_idtab_free(&mf->by_prop);
    free(mf->times);
}

/* Manifest attributes take the topology's default, as usdstitchclips'
 * manifest does. */
static void ub_manifest_defaults(ub_layer *man, const ub_prim *mp,
                                 const ub_layer *topo, const ub_prim *tp,
                                 bool *oom)
{
    for (uint32_t i = 0; i < mp->props.n; i++) {
        ub_prop *a = mp->props.v[i];
        const ub_prop *b = ub_prop_find(topo, tp, a->name);
        if (b && b->kind == UB_ATTR && b->default_value.kind != UB_V_EMPTY) {
            a->default_value = ub_value_clone(man->arena, &b->default_value);
            if (a->default_value.kind == UB_V_EMPTY)
                *oom = true;
        }
    }
    for (uint32_t i = 0; i < mp->children.n; i++) {
        const ub_prim *c = mp->children.v[i];
        const ub_prim *tc = ub_prim_find_child(topo, tp, c->name);
        if (tc)
            ub_manifest_defaults(man, c, topo, tc, oom);
    }
}

/* --- stitching clips ------------------------------------------------------*/

typedef struct ub_clip_rec {
    const char *asset;
    double start, end;
} ub_clip_rec;

typedef struct ub_stitcher {
    ub_strtab *t;
    const ub_stitch_opts *o;
    ub_diags *diags;
    const char **names;
    int n_names;
    ub_layer *topology;
    ub_manifest mf;
    ub_clip_rec *clips;
    bool found;     /* some frame has the clip prim */
    bool merge_all; /* --merge: samples kept, no clip records */
    ub_layer *merged;
} ub_stitcher;

/* ub_rel_asset for the layer at file, with a diagnostic when there is
 * none: an asset path must be UTF-8 without control characters (OpenUSD
 * and usdbake refuse to read any other), so a file named in Latin-1 can
 * be no clip, and an output so named can have no topology sublayer. */
static const char *ub_stitch_asset(ub_stitcher *st, const char *file)
{
    const char *asset = ub_rel_asset(st->t, file, st->o->out_path);
    if (!asset) {
        ub_diag_add_oom(st->diags, (ub_loc){file, 0, 0}, "out of memory");
        return NULL;
    }
    const char *why = ub_ident_asset_problem(asset, ub_str_len(asset));
    if (why) {
        ub_diag_add(st->diags, UB_ERROR, (ub_loc){file, 0, 0},
                    "stitch-asset-path", NULL, 0,
                    "this file's name cannot be written as an asset path "
                    "(%s)", why);
        return NULL;
    }
    return asset;
}

static int ub_stitch_frame(void *ctx, size_t i, const ub_layer *l)
{
    ub_stitcher *st = ctx;
    if (st->merge_all)
        return ub_stitch_merge(st->merged, l, true, false, st->diags);
    double start = 0, end = 0;
    if ((st->clips || st->mf.blocks) &&
        ub_frame_time(st->t, l, st->diags, &start, &end) != 0)
        return -1;
    const ub_prim *cp = ub_find_prim(l, st->names, st->n_names);
    st->found = st->found || cp;
    if (st->topology &&
        ub_stitch_merge(st->topology, l, false, true, st->diags) != 0)
        return -1;
    if (st->clips) {
        const char *asset = ub_stitch_asset(st, l->path);
        if (!asset)
            return -1;
        st->clips[i] = (ub_clip_rec){asset, start, end};
    }
    int mr = ub_manifest_add(&st->mf, l, cp, start);
    if (st->mf.bad)
        return -1;
    if (mr != 0) {
        ub_diag_add_oom(st->diags, (ub_loc){l->path, 0, 0}, "out of memory");
        return -1;
    }
    return 0;
}

typedef struct ub_frame_at {
    double t;
    size_t i;
} ub_frame_at;

static int ub_cmp_frame_at(const void *a, const void *b)
{
    const ub_frame_at *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Two frames at one time would make two clips active at once: OpenUSD
 * drops such a clip set whole (`check` says clip-active-duplicate), so
 * nothing is written and both frames are named. */
static int ub_stitch_same_times(const ub_stitcher *st,
                                const char *const *frames, size_t n,
                                ub_diags *diags)
{
    ub_frame_at *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        ub_diag_add_oom(diags, (ub_loc){NULL, 0, 0}, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (ub_frame_at){st->clips[i].start, i};
    qsort(v, n, sizeof *v, ub_cmp_frame_at);
    int bad = 0;
    for (size_t k = 1; k < n; k++)
        if (v[k].t == v[k - 1].t) {
            ub_diag *d = ub_diag_add(
                diags, UB_ERROR, (ub_loc){frames[v[k].i], 0, 0},
                "stitch-frame-time", NULL, 0,
                "this frame's time %g is also the time of '%s': a clip set "
                "plays one clip at a time",
                v[k].t, frames[v[k - 1].i]);
            ub_diag_set_hint(diags, d,
                             "stitch each frame once, and give frames of "
                             "one time (startTimeCode, else the number in "
                             "the name) to different clip sets");
            bad = -1;
        }
    free(v);
    return bad;
}

static ub_value ub_pairs(ub_arena *a, const double *xy, size_t n)
{
    ub_value v = ub_value_new(a, ub_type_get(UB_TY_DOUBLE2), (uint32_t)n,
                              true);
    if (v.kind == UB_V_DATA && n)
        memcpy(ub_value_data(&v), xy, n * 2 * sizeof(double));
    return v;
}

static ub_value ub_scalar_of(ub_arena *a, ub_type_id id)
{
    return ub_value_new(a, ub_type_get(id), 1, false);
}

static ub_value ub_string_value(ub_arena *a, ub_type_id id, const char *s)
{
    ub_value v = ub_scalar_of(a, id);
    if (v.kind == UB_V_DATA)
        ((const char **)ub_value_data(&v))[0] = s;
    return v;
}

static ub_value ub_double_value(ub_arena *a, double x)
{
    ub_value v = ub_scalar_of(a, UB_TY_DOUBLE);
    if (v.kind == UB_V_DATA)
        ((double *)ub_value_data(&v))[0] = x;
    return v;
}

/* The result layer: clip metadata on overs at the clip path, the topology
 * as its strongest sublayer. */
static int ub_stitch_result(ub_stitcher *st, size_t n, ub_stitch_out *out)
{
    const ub_stitch_opts *o = st->o;
    ub_layer *r = ub_layer_new(st->t, o->out_path);
    if (!r)
        return -1;
    out->result = r;
    ub_arena *a = r->arena;
    ub_sloc nl = {0};
    bool bad = false;
    const char *topo = ub_stitch_asset(st, out->topology_path);
    const char *man = topo ? ub_stitch_asset(st, out->manifest_path) : NULL;
    if (!topo || !man)
        return -1;
    r->has_sublayers = true;
    bad |= !ub_layer_add_sublayer(r, topo, nl);
    ub_prim *p = r->root;
    for (int i = 0; i < st->n_names && p; i++)
        p = ub_prim_new(r, p, st->names[i], UB_OVER, nl);
    if (!p)
        return -1;
    ub_dict *set = ub_dict_new(a), *clips = ub_dict_new(a);
    if (!set || !clips)
        return -1;
    ub_value d;
#define UB_PUT(dict, key, val)                                               \
    do {                                                                     \
        d = (val);                                                           \
        bad |= d.kind == UB_V_EMPTY ||                                       \
               !ub_dict_set(a, dict, ub_intern_cstr(st->t, key), d, nl);     \
    } while (0)
    UB_PUT(set, "primPath", ub_string_value(a, UB_TY_STRING,
                                            ub_intern_cstr(st->t,
                                                           o->clip_path)));
    UB_PUT(set, "manifestAssetPath", ub_string_value(a, UB_TY_ASSET, man));
    double start = o->start, end = o->end;
    if (o->template_path) {
        UB_PUT(set, "templateAssetPath",
               ub_string_value(a, UB_TY_STRING,
                               ub_intern_cstr(st->t, o->template_path)));
        UB_PUT(set, "templateStartTime", ub_double_value(a, o->start));
        UB_PUT(set, "templateEndTime", ub_double_value(a, o->end));
        UB_PUT(set, "templateStride", ub_double_value(a, o->stride));
        if (o->has_active_offset)
            UB_PUT(set, "templateActiveOffset",
                   ub_double_value(a, o->active_offset));
    } else {
        ub_value assets = ub_value_new(a, ub_type_get(UB_TY_ASSET),
                                       (uint32_t)n, true);
        double *act = malloc((n ? n : 1) * 2 * sizeof *act);
        double *tim = malloc((n ? n : 1) * 4 * sizeof *tim);
        size_t nt = 0;
        double lo = INFINITY, hi = -INFINITY;
        if (assets.kind != UB_V_DATA || !act || !tim) {
            free(act);
            free(tim);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            const ub_clip_rec *c = &st->clips[i];
            ((const char **)ub_value_data(&assets))[i] = c->asset;
            act[2 * i] = c->start;
            act[2 * i + 1] = (double)i;
            tim[2 * nt] = tim[2 * nt + 1] = c->start;
            nt++;
            if (c->end - c->start != 0) {
                tim[2 * nt] = tim[2 * nt + 1] = c->end;
                nt++;
            }
        }
        for (size_t i = 0; i < nt; i++) {
            lo = fmin(lo, tim[2 * i]);
            hi = fmax(hi, tim[2 * i]);
        }
        if (!o->has_start)
            start = lo;
        if (!o->has_end)
            end = hi;
        UB_PUT(set, "assetPaths", assets);
        UB_PUT(set, "active", ub_pairs(a, act, n));
        UB_PUT(set, "times", ub_pairs(a, tim, nt));
        free(act);
        free(tim);
    }
    if (o->interpolate_missing) {
        ub_value b = ub_scalar_of(a, UB_TY_BOOL);
        if (b.kind == UB_V_DATA)
            ((uint8_t *)ub_value_data(&b))[0] = 1;
        UB_PUT(set, "interpolateMissingClipValues", b);
    }
    bad |= !ub_dict_set(a, clips,
                        ub_intern_cstr(st->t, o->clip_set ? o->clip_set
                                                          : "default"),
                        (ub_value){.kind = UB_V_DICT, .u.dict = set}, nl);
    bad |= !ub_fields_set(a, &p->meta, ub_intern_cstr(st->t, "clips"),
                          (ub_value){.kind = UB_V_DICT, .u.dict = clips}, nl);
#undef UB_PUT
    bad |= !ub_fields_set(a, &r->meta, ub_intern_cstr(st->t, "startTimeCode"),
                          ub_double_value(a, start), nl);
    bad |= !ub_fields_set(a, &r->meta, ub_intern_cstr(st->t, "endTimeCode"),
                          ub_double_value(a, end), nl);
    if (o->comment)
        bad |= !ub_fields_set(a, &r->meta, ub_intern_cstr(st->t, "comment"),
                              ub_string_value(a, UB_TY_STRING,
                                              ub_intern_cstr(st->t,
                                                             o->comment)),
                              nl);
    return bad ? -1 : 0;
}

void ub_stitch_out_free(ub_stitch_out *out)
{
    ub_layer_free(out->result);
    ub_layer_free(out->topology);
    ub_layer_free(out->manifest);
    *out = (ub_stitch_out){0};
}

static int ub_stitch_begin(ub_stitcher *st, ub_strtab *t, const char *clip_path,
                           ub_diags *diags)
{
    st->t = t;
    st->diags = diags;
    st->n_names = ub_split_prim_path(t, clip_path, &st->names);
    if (st->n_names < 0) {
        ub_diag_add(diags, UB_ERROR, (ub_loc){NULL, 0, 0}, "stitch-clip-path",
                    NULL, 0,
                    "clip path '%s' is not an absolute prim path (expected "
                    "something like /World/model)",
                    clip_path ? clip_path : "");
        return -1;
    }
    return 0;
}

static int ub_stitch_not_found(ub_stitcher *st, const char *clip_path,
                               const char *const *frames, size_t n)
{
    if (st->found)
        return 0;
    ub_diag *d = ub_diag_add(
        st->diags, UB_ERROR, (ub_loc){NULL, 0, 0}, "stitch-clip-path", NULL,
        0, "no input has a prim at the clip path <%s>", clip_path);
    ub_diag_set_hint(st->diags, d,
                     "--clip-path names the prim whose values the clips "
                     "hold (%zu input%s read, the first %s)",
                     n, n == 1 ? "" : "s", n ? frames[0] : "none");
    return -1;
}

int ub_stitch_clips(ub_strtab *t, const char *const *frames, size_t n,
                    const ub_stitch_opts *o, ub_stitch_out *out,
                    ub_diags *diags)
{
    *out = (ub_stitch_out){0};
    ub_stitcher st = {.o = o};
    if (ub_stitch_begin(&st, t, o->clip_path, diags) != 0)
        return -1;
    int status = -1;
    out->topology_path = ub_sibling_name(t, o->out_path, "topology");
    out->manifest_path = ub_sibling_name(t, o->out_path, "manifest");
    if (!out->topology_path || !out->manifest_path) {
        ub_diag_add(diags, UB_ERROR, (ub_loc){NULL, 0, 0}, NULL, NULL, 0,
                    "the output '%s' needs an extension (.usda, .usdb): "
                    "the topology and manifest layers are named after it",
                    o->out_path);
        goto done;
    }
    st.topology = out->topology = ub_layer_new(t, out->topology_path);
    st.mf.out = out->manifest = ub_layer_new(t, out->manifest_path);
    st.mf.diags = diags;
    st.clips = calloc(n ? n : 1, sizeof *st.clips);
    if (!out->topology || !out->manifest || !st.clips) {
        ub_diag_add_oom(diags, (ub_loc){NULL, 0, 0}, "out of memory");
        goto done;
    }
    if (ub_read_each(t, frames, n, o->threads, ub_stitch_frame, &st, diags) !=
            0 ||
        ub_stitch_not_found(&st, o->clip_path, frames, n) != 0 ||
        ub_stitch_same_times(&st, frames, n, diags) != 0)
        goto done;
    bool oom = false;
    const ub_prim *tp = ub_find_prim(out->topology, NULL, 0);
    ub_manifest_defaults(out->manifest, out->manifest->root, out->topology, tp,
                         &oom);
    size_t errors = ub_diags_errors(diags);
    if (oom || ub_stitch_result(&st, n, out) != 0) {
        /* the result says why it failed, or it ran out of memory */
        if (ub_diags_errors(diags) == errors)
            ub_diag_add_oom(diags, (ub_loc){NULL, 0, 0}, "out of memory");
        goto done;
    }
    status = 0;
done:
    if (status != 0)
        ub_stitch_out_free(out);
    ub_manifest_free(&st.mf);
    free(st.clips);
    free(st.names);
    return status;
}

ub_layer *ub_stitch_manifest(ub_strtab *t, const char *const *clips, size_t n,
                             const char *clip_path, bool write_blocks,
                             const char *out_path, unsigned threads,
                             ub_diags *diags)
{
    ub_stitcher st = {0};
    if (ub_stitch_begin(&st, t, clip_path, diags) != 0)
        return NULL;
    st.mf.blocks = write_blocks;
    st.mf.diags = diags;
    st.mf.out = ub_layer_new(t, out_path ? out_path : "manifest.usda");
    if (!st.mf.out) {
        ub_diag_add_oom(diags, (ub_loc){NULL, 0, 0}, "out of memory");
    } else if (ub_read_each(t, clips, n, threads, ub_stitch_frame, &st,
                            diags) != 0 ||
               ub_stitch_not_found(&st, clip_path, clips, n) != 0) {
        ub_layer_free(st.mf.out);
        st.mf.out = NULL;
    }
    ub_manifest_free(&st.mf);
    free(st.names);
    return st.mf.out;
}

ub_layer *ub_stitch_layers(ub_strtab *t, const char *const *layers, size_t n,
                           const char *out_path, unsigned threads,
                           ub_diags *diags)
{
    ub_stitcher st = {.t = t, .diags = diags, .merge_all = true};
    st.merged = ub_layer_new(t, out_path ? out_path : "stitched.usda");
    if (!st.merged) {
        ub_diag_add_oom(diags, (ub_loc){NULL, 0, 0}, "out of memory");
        return NULL;
    }
    if (ub_read_each(t, layers, n, threads, ub_stitch_frame, &st, diags) !=
        0) {
        ub_layer_free(st.merged);
        return NULL;
    }
    return st.merged;
}
