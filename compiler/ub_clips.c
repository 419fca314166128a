/*
 * Value clips: the semantics of OpenUSD's Usd_ClipSet / Usd_Clip, written
 * for baking (every sample of a clip set, not one query at a time).
 */
#include "ub_clips.h"

#include <float.h>
#include <pthread.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_compose.h"
#include "ub_cpus.h"
#include "ub_time.h"
#include "ub_usdb.h"

/* Room for one more element in a growing array (*v of *cap elements of
 * size `elem`, n used).  Returns 0, or -1 when out of memory. */
static int ub_grow(void *v, uint32_t n, uint32_t *cap, size_t elem,
                   uint32_t first)
{
    if (n < *cap)
        return 0;
    uint32_t nc = *cap ? *cap * 2 : first;
    void *nv = realloc(*(void **)v, nc * elem);
    if (!nv)
        return -1;
    *(void **)v = nv;
    *cap = nc;
    return 0;
}

/* --- reading the info dictionary ----------------------------------------- */

static const ub_value *ub_info(const ub_dict *d, const char *key)
{
    for (uint32_t i = 0; i < d->n; i++)
        if (strcmp(d->e[i].key, key) == 0)
            return d->e[i].value.kind == UB_V_DATA ? &d->e[i].value : NULL;
    return NULL;
}

/* Field key of clip info d when it holds exactly the value type OpenUSD
 * reads it with (type t's storage; an array or one value), else NULL:
 * Usd reads each field only as its own type, and takes one of any other
 * type (a half templateEndTime, an asset primPath) for absent. */
static const ub_value *ub_info_typed(const ub_dict *d, const char *key,
                                     ub_type_id t, bool array)
{
    const ub_value *v = ub_info(d, key);
    return v && ub_value_type(v) && ub_value_type(v)->base == t &&
                   v->is_array == array && (array || v->count == 1)
               ? v
               : NULL;
}

static bool ub_info_double(const ub_dict *d, const char *key, double *out)
{
    const ub_value *v = ub_info_typed(d, key, UB_TY_DOUBLE, false);
    if (v)
        *out = ub_value_get_double(v, 0, 0);
    return v != NULL;
}

static const char *ub_info_str(const ub_dict *d, const char *key)
{
    const ub_value *v = ub_info_typed(d, key, UB_TY_STRING, false);
    return v ? ub_value_str(v, 0) : NULL;
}

/* A double2[] as pairs; NULL when absent or of another type. */
static const ub_value *ub_info_pairs(const ub_dict *d, const char *key)
{
    return ub_info_typed(d, key, UB_TY_DOUBLE2, true);
}

bool ub_clip_info_anchors(const ub_dict *info)
{
    return ub_info_typed(info, "assetPaths", UB_TY_ASSET, true) ||
           ub_info_str(info, "templateAssetPath");
}

/* hint: NULL for the usual one */
static void ub_clip_warn(ub_diags *diags, ub_loc loc, const ub_layer *l,
                         const char *set, const char *why, const char *hint)
{
    ub_diag *d = ub_diag_add(diags, UB_WARNING, loc, "clip-set-invalid",
                             l ? l->source : NULL, l ? l->source_len : 0,
                             "clip set '%s' is ignored: %s", set, why);
    ub_diag_set_hint(diags, d, "%s",
                     hint ? hint
                          : "fix the clip metadata; OpenUSD ignores this "
                            "clip set too");
}

/* The hint of a NaN time, which OpenUSD's maps order by accident: it may
 * ignore the set, or use some of it. */
static const char ub_nan_hint[] =
    "fix the clip metadata; what OpenUSD makes of a NaN time depends on "
    "where its maps happen to put it";

/* The hint of a template OpenUSD would step through without end. */
static const char ub_endless_hint[] =
    "fix the clip metadata; OpenUSD would not finish reading this clip set";

/* --- templates ------------------------------------------------------------ */

/* The explicit metadata a template stands for (OpenUSD's _DeriveClipInfo):
 * one clip per existing file over [start, end] by stride.  Fills pairs
 * (times, active: 2 doubles each) and assets; returns the clip count, or
 * -1 when the template is invalid (why is set) or -2 when out of memory. */
static int ub_template_derive(ub_loader *ld, const ub_layer *src,
                              const char *tmpl, double stride, bool has_off,
                              double off, double t0, double t1,
                              double **times, uint32_t *n_times,
                              double **active, const char ***assets,
                              const char **why, const char **hint)
{
    if (!(stride > 0)) {
        *why = "templateStride must be greater than 0";
        return -1;
    }
    /* (an infinite stride steps once, from the start, in OpenUSD's loop
     * as in ours) */
    if (!isfinite(t0) || !isfinite(t1) || (has_off && !isfinite(off))) {
        *why = "its template times must be finite numbers";
        *hint = ub_endless_hint;
        return -1;
    }
    if (fabs(t0) >= UB_CLIP_TEMPLATE_MAX_TIME ||
        fabs(t1) >= UB_CLIP_TEMPLATE_MAX_TIME) {
        *why = "its template times are too large to be frame numbers";
        *hint = "clip file names number their frames with ints, as "
                "OpenUSD's do; keep the times within 2e9";
        return -1;
    }
    if ((t1 - t0) / stride >= UB_CLIP_TEMPLATE_MAX_FRAMES) {
        *why = "its templateStride makes over 1000000 frames";
        *hint = ub_endless_hint;
        return -1;
    }
    if (has_off && fabs(off) > stride) {
        *why = "templateActiveOffset must not exceed templateStride";
        return -1;
    }
    if (t0 > t1) {
        *why = "templateStartTime is after templateEndTime";
        return -1;
    }
    /* file format arguments ("p.###.usd:SDF_FORMAT_ARGS:a=1") name no
     * file: they are not part of the path */
    char *plain = strdup(tmpl);
    if (!plain)
        return -2;
    char *args = strstr(plain, ":SDF_FORMAT_ARGS:");
    if (args)
        *args = '\0';
    tmpl = plain;
    const char *slash = strrchr(tmpl, '/');
    const char *base = slash ? slash + 1 : tmpl;
    size_t dir_n = (size_t)(base - tmpl);
    /* tokens of the base name split at '.' */
    char *b = strdup(base);
    if (!b) {
        free(plain);
        return -2;
    }
    char *tok[64];
    int nt = 0, int_i = -1, dec_i = -1, groups = 0;
    for (char *s = b, *e; nt < 64; s = e + 1) {
        e = strchr(s, '.');
        if (e)
            *e = '\0';
        if (*s) { /* TfStringTokenize drops empty tokens */
            bool hashes = true;
            for (char *c = s; *c; c++)
                hashes &= *c == '#';
            if (hashes) {
                if (int_i < 0)
                    int_i = nt;
                else
                    dec_i = nt;
                groups++;
            }
            tok[nt++] = s;
        }
        if (!e)
            break;
    }
    if ((groups != 1 && groups != 2) || (groups == 2 && int_i != dec_i - 1)) {
        free(b);
        free(plain);
        *why = "templateAssetPath must look like path/name.###.usd or "
               "path/name.###.###.usd";
        return -1;
    }
    size_t n_int = strlen(tok[int_i]), n_dec = dec_i >= 0 ? strlen(tok[dec_i])
                                                          : 0;
    uint32_t cap = 16, n = 0, nt_out = 0;
    double *tm = malloc((cap + 2) * 2 * sizeof *tm);
    double *ac = malloc(cap * 2 * sizeof *ac);
    const char **as = malloc(cap * sizeof *as);
    int rc = 0;
    if (!tm || !ac || !as)
        rc = -2;
    const double promo = 10000;
    if (!rc && has_off) {
        double ct = (t0 * promo - fabs(off) * promo) / promo;
        tm[2 * nt_out] = ct;
        tm[2 * nt_out + 1] = ct;
        nt_out++;
    }
    /* (a stride too small to move t ends the steps: OpenUSD's loop would
     * never end) */
    for (double t = t0 * promo, last = NAN; !rc && t <= t1 * promo && t != last;
         last = t, t += stride * promo) {
        double ct = t / promo;
        char ibuf[64], dbuf[96], path[4096];
        snprintf(ibuf, sizeof ibuf, "%0*d", (int)n_int, (int)ct);
        dbuf[0] = '\0';
        if (n_dec) {
            char tmp[96];
            snprintf(tmp, sizeof tmp, "%.*f", (int)n_dec, ct);
            char *dot = strchr(tmp, '.');
            snprintf(dbuf, sizeof dbuf, "%s", dot ? dot + 1 : "");
        }
        size_t w = 0;
        w += (size_t)snprintf(path, sizeof path, "%.*s", (int)dir_n, tmpl);
        for (int k = 0; k < nt && w < sizeof path; k++)
            w += (size_t)snprintf(path + w, sizeof path - w, "%s%s",
                                  k ? "." : "",
                                  k == int_i               ? ibuf
                                  : k == dec_i && n_dec    ? dbuf
                                                           : tok[k]);
        if (w >= sizeof path)
            continue;
        ub_load_status st;
        if (!ub_loader_resolve(ld, path, src, &st)) {
            if (st == UB_LOAD_FAILED) {
                rc = -2;
                break;
            }
            continue;
        }
        if (n == cap) {
            cap *= 2;
            double *ntm = realloc(tm, (cap + 2) * 2 * sizeof *tm);
            if (ntm)
                tm = ntm;
            double *nac = realloc(ac, cap * 2 * sizeof *ac);
            if (nac)
                ac = nac;
            const char **nas = realloc(as, cap * sizeof *as);
            if (nas)
                as = nas;
            if (!ntm || !nac || !nas) {
                rc = -2;
                break;
            }
        }
        as[n] = ub_intern_cstr(src->strtab, path);
        if (!as[n]) {
            rc = -2;
            break;
        }
        tm[2 * nt_out] = ct;
        tm[2 * nt_out + 1] = ct;
        nt_out++;
        ac[2 * n] = has_off ? (t + off * promo) / promo : ct;
        ac[2 * n + 1] = n;
        n++;
    }
    if (!rc && has_off) {
        double ct = (t1 * promo + fabs(off) * promo) / promo;
        tm[2 * nt_out] = ct;
        tm[2 * nt_out + 1] = ct;
        nt_out++;
    }
    free(b);
    free(plain);
    if (rc) {
        free(tm);
        free(ac);
        free(as);
        return rc;
    }
    *times = tm;
    *n_times = nt_out;
    *active = ac;
    *assets = as;
    return (int)n;
}

/* Whether a clip or manifest layer exists: 1, 0, or -1 when out of
 * memory.  One that does not is an empty layer to OpenUSD, which says so
 * only if a value is ever looked for in it: a warning here, not an
 * error. */
static int ub_clip_exists(ub_loader *ld, const char *asset,
                          const ub_layer *src, ub_loc loc, ub_diags *diags)
{
    ub_load_status st;
    if (ub_loader_resolve(ld, asset, src, &st))
        return 1;
    if (st == UB_LOAD_FAILED)
        return -1;
    ub_diag *d = ub_diag_add(diags, UB_WARNING, loc, "clip-missing",
                             src->source, src->source_len,
                             "clip layer '%s' does not exist; it is read "
                             "as an empty layer, as OpenUSD does",
                             asset);
    ub_diag_set_hint(diags, d, "check the clip's asset path");
    return 0;
}

static const ub_prop *ub_clip_attr(const ub_layer *l, const char *prim,
                                   const char *attr);

static int ub_cmp_decl(const void *a, const void *b)
{
    const ub_clip_decl *x = a, *y = b;
    if (x->prim != y->prim)
        return (uintptr_t)x->prim < (uintptr_t)y->prim ? -1 : 1;
    if (x->attr != y->attr)
        return (uintptr_t)x->attr < (uintptr_t)y->attr ? -1 : 1;
    return 0;
}

/* The same, then in the order read (the first clip to declare wins). */
static int ub_cmp_decl_seq(const void *a, const void *b)
{
    const ub_clip_decl *x = a, *y = b;
    int c = ub_cmp_decl(a, b);
    return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The attributes with samples in prim p of clip l (and below), for a
 * generated manifest (duplicates are dropped once all clips are in). */
static int ub_decls_add(ub_clip_set *cs, uint32_t *cap, ub_layer *l,
                        const ub_prim *p)
{
    const char *path = NULL;
    for (uint32_t i = 0; i < p->props.n; i++) {
        const ub_prop *pr = p->props.v[i];
        if (pr->kind != UB_ATTR || !ub_prop_samples(pr)->n)
            continue;
        if (!path) {
            const char *txt = ub_prim_path(l, p);
            path = txt ? ub_intern_cstr(l->strtab, txt) : NULL;
            if (!path)
                return -1;
        }
        ub_clip_decl key = {path, pr->name, false, cs->n_decls};
        if (ub_grow(&cs->decls, cs->n_decls, cap, sizeof *cs->decls, 16))
            return -1;
        key.varying = pr->variability == UB_VARYING;
        cs->decls[cs->n_decls++] = key;
    }
    for (uint32_t i = 0; i < p->children.n; i++)
        if (ub_decls_add(cs, cap, l, p->children.v[i]) != 0)
            return -1;
    return 0;
}

/* The manifest OpenUSD generates when none is given: every clip read once,
 * transiently.  Returns 0 or -1 (out of memory). */
static int ub_clip_set_declare(ub_clip_set *cs, ub_loader *ld)
{
    uint32_t cap = 0;
    for (uint32_t k = 0; k < cs->n_clips; k++) {
        if (!cs->clips[k].asset)
            continue;
        ub_layer *l = ub_loader_open_transient(ld, cs->clips[k].asset,
                                               cs->source_layer, cs->loc);
        int rc = l && l->root ? ub_decls_add(cs, &cap, l, l->root) : 0;
        ub_loader_release(ld, l);
        if (rc)
            return -1;
    }
    if (cs->n_decls > 1)
        qsort(cs->decls, cs->n_decls, sizeof *cs->decls, ub_cmp_decl_seq);
    uint32_t w = 0;
    for (uint32_t i = 0; i < cs->n_decls; i++)
        if (!w || ub_cmp_decl(&cs->decls[w - 1], &cs->decls[i]) != 0)
            cs->decls[w++] = cs->decls[i];
    cs->n_decls = w;
    return 0;
}

/* --- setup ---------------------------------------------------------------- */

static int ub_cmp_tmap(const void *a, const void *b)
{
    const ub_clip_tmap *x = a, *y = b;
    if (x->ext < y->ext)
        return -1;
    if (x->ext > y->ext)
        return 1;
    /* stable: the original order is kept in `in`'s slot index below */
    return 0;
}

int ub_clip_set_init(ub_clip_set *cs, ub_loader *ld, const char *name,
                     const ub_dict *info, const ub_layer *src,
                     ub_offset offset, ub_loc loc, ub_diags *diags)
{
    memset(cs, 0, sizeof *cs);
    cs->name = name;
    cs->source_layer = src;
    cs->loc = loc;
    const char *prim = ub_info_str(info, "primPath");
    const ub_value *assets_v = ub_info_typed(info, "assetPaths", UB_TY_ASSET,
                                             true);
    const ub_value *active_v = NULL, *times_v = NULL;
    double *tm_d = NULL, *ac_d = NULL;
    const char **as_d = NULL;
    uint32_t n_assets = 0, n_active = 0, n_times = 0;
    const char *tmpl = ub_info_str(info, "templateAssetPath");
    if (assets_v && assets_v->type_id == UB_TY_ASSET) {
        n_assets = assets_v->count;
        active_v = ub_info_pairs(info, "active");
        times_v = ub_info_pairs(info, "times");
        if (!active_v)
            return 0; /* incomplete: OpenUSD ignores it without a word */
        n_active = active_v->count;
        n_times = times_v ? times_v->count : 0;
    } else if (tmpl) {
        double stride, t0, t1, off = 0;
        bool has_off = ub_info_double(info, "templateActiveOffset", &off);
        if (!ub_info_double(info, "templateStride", &stride) ||
            !ub_info_double(info, "templateStartTime", &t0) ||
            !ub_info_double(info, "templateEndTime", &t1))
            return 0;
        const char *why = NULL, *hint = NULL;
        int n = ub_template_derive(ld, src, tmpl, stride, has_off, off, t0,
                                   t1, &tm_d, &n_times, &ac_d, &as_d, &why,
                                   &hint);
        if (n == -2)
            return -1;
        if (n < 0) {
            ub_clip_warn(diags, loc, src, name, why, hint);
            return 0;
        }
        n_assets = n_active = (uint32_t)n;
        for (uint32_t i = 0; i < n_times; i++)
            tm_d[2 * i] = ub_offset_apply(offset, tm_d[2 * i]);
        for (uint32_t i = 0; i < n_active; i++)
            ac_d[2 * i] = ub_offset_apply(offset, ac_d[2 * i]);
    } else {
        return 0;
    }
    int rc = 1;
    const char *why = NULL;
#define ACT(i, c) (ac_d ? ac_d[2 * (i) + (c)] : ub_value_get_double(active_v, i, c))
#define TIM(i, c) (tm_d ? tm_d[2 * (i) + (c)] : ub_value_get_double(times_v, i, c))
#define ASSET(i) (as_d ? as_d[i] : ub_value_str(assets_v, i))
    if (!prim && ub_info(info, "primPath"))
        why = "'primPath' is not a string (OpenUSD reads it only as one)";
    else if (!prim || !*prim)
        why = "no clip prim path in 'primPath'";
    else if (prim[0] != '/' || strchr(prim, '.') || strchr(prim, '{') ||
             (prim[1] == '\0'))
        why = "'primPath' must be an absolute path to a prim";
    for (uint32_t i = 0; !why && i < n_assets; i++)
        if (!*ASSET(i))
            why = "an empty asset path in 'assetPaths'";
    bool before_nan = why != NULL;
    /* a NaN stage time has no place among the others: OpenUSD's maps
     * take it for equal to whichever time they compare it with (a lone
     * clip is active at every time, whatever its time) */
    for (uint32_t i = 0; !why && n_active > 1 && i < n_active; i++)
        if (isnan(ACT(i, 0)))
            why = "a stage time in 'active' is not a number";
    for (uint32_t i = 0; !why && i < n_times; i++)
        if (isnan(TIM(i, 0)) || isnan(TIM(i, 1)))
            why = "a time in 'times' is not a number";
    const char *hint = why && !before_nan ? ub_nan_hint : NULL;
    for (uint32_t i = 0; !why && i < n_active; i++) {
        double ix = ACT(i, 1);
        /* written so that NaN fails too (OpenUSD's own check lets it
         * through to an undefined conversion; found by fuzz_layerstack) */
        if (!(ix >= 0 && ix < n_assets))
            why = "an index in 'active' is not an index into 'assetPaths'";
        for (uint32_t j = 0; !why && j < i; j++)
            if (ACT(j, 0) == ACT(i, 0))
                why = "two clips are active at the same time in 'active'";
    }
    for (uint32_t i = 0; !why && i < n_times; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < n_times; j++)
            seen += TIM(j, 0) == TIM(i, 0);
        if (seen > 2)
            why = "more than two entries of 'times' share a stage time";
    }
    if (!why && n_active == 0)
        why = "'active' is empty";
    if (why) {
        ub_clip_warn(diags, loc, src, name, why, hint);
        rc = 0;
        goto done;
    }
    cs->clip_prim_path = prim;
    double interp = 0;
    const ub_value *im =
        ub_info_typed(info, "interpolateMissingClipValues", UB_TY_BOOL, false);
    if (im)
        interp = *(const uint8_t *)ub_value_data(im);
    cs->interpolate_missing = interp != 0;
    /* clips by start time */
    cs->clips = calloc(n_active, sizeof *cs->clips);
    if (!cs->clips) {
        rc = -1;
        goto done;
    }
    cs->n_clips = n_active;
    uint32_t *order = malloc(n_active * sizeof *order);
    if (!order) {
        rc = -1;
        goto done;
    }
    for (uint32_t i = 0; i < n_active; i++)
        order[i] = i;
    for (uint32_t i = 1; i < n_active; i++)
        for (uint32_t j = i; j > 0 && ACT(order[j - 1], 0) > ACT(order[j], 0);
             j--) {
            uint32_t x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    for (uint32_t k = 0; k < n_active; k++) {
        ub_clip *c = &cs->clips[k];
        c->authored_start = ACT(order[k], 0);
        c->start = k == 0 ? -DBL_MAX : c->authored_start;
        c->end = k + 1 < n_active ? ACT(order[k + 1], 0) : DBL_MAX;
        const char *asset = ASSET((uint32_t)ACT(order[k], 1));
        /* A clip that cannot be read is an empty layer to OpenUSD (after
         * an error): the bake reads it (and the loader says why). */
        int ex = ub_clip_exists(ld, asset, src, loc, diags);
        c->asset = ex > 0 ? asset : NULL;
        if (ex < 0 || (c->asset && ub_loader_expect(ld, asset, src) != 0)) {
            free(order);
            rc = -1;
            goto done;
        }
    }
    free(order);
    if (n_times) {
        cs->times = malloc((n_times + 2) * sizeof *cs->times);
        if (!cs->times) {
            rc = -1;
            goto done;
        }
        for (uint32_t i = 0; i < n_times; i++)
            cs->times[i + 1] = (ub_clip_tmap){TIM(i, 0), TIM(i, 1), false};
        /* stable sort by stage time (insertion sort keeps equal ones) */
        for (uint32_t i = 2; i <= n_times; i++)
            for (uint32_t j = i;
                 j > 1 && ub_cmp_tmap(&cs->times[j - 1], &cs->times[j]) > 0;
                 j--) {
                ub_clip_tmap x = cs->times[j];
                cs->times[j] = cs->times[j - 1];
                cs->times[j - 1] = x;
            }
        for (uint32_t i = 1; i < n_times; i++)
            if (cs->times[i].ext == cs->times[i + 1].ext) {
                cs->times[i].ext -= UB_CLIP_SAFE_STEP;
                cs->times[i].jump = true;
            }
        cs->times[0] = cs->times[1];
        cs->times[n_times + 1] = cs->times[n_times];
        cs->n_times = n_times + 2;
        cs->times_sorted = true;
        for (uint32_t i = 0; i + 1 < cs->n_times; i++)
            if (!(cs->times[i].ext <= cs->times[i + 1].ext))
                cs->times_sorted = false; /* (or a NaN) */
    }
    const ub_value *man =
        ub_info_typed(info, "manifestAssetPath", UB_TY_ASSET, false);
    if (man && !*ub_value_str(man, 0)) {
        /* Usd opens @@ as the manifest, and gets an empty layer: the clips
         * give no attribute a value */
        ub_diag *d = ub_diag_add(diags, UB_WARNING, loc, "clip-missing",
                                 src->source, src->source_len,
                                 "clip set '%s' has an empty manifestAssetPath "
                                 "(@@): its manifest is an empty layer, so its "
                                 "clips give no values, as in OpenUSD",
                                 name);
        ub_diag_set_hint(diags, d, "name the manifest, or leave the field out "
                                   "to have one made from the clips");
    } else if (man) {
        int ex = ub_clip_exists(ld, ub_value_str(man, 0), src, loc, diags);
        if (ex < 0) {
            rc = -1;
            goto done;
        }
        if (ex)
            cs->manifest = ub_loader_open(ld, ub_value_str(man, 0), src, loc);
    } else if (ub_clip_set_declare(cs, ld) != 0) {
        rc = -1;
        goto done;
    }
    cs->refs = malloc(sizeof *cs->refs);
    if (!cs->refs)
        rc = -1;
    else
        *cs->refs = 1;
done:
#undef ACT
#undef TIM
#undef ASSET
    free(tm_d);
    free(ac_d);
    free(as_d);
    if (rc != 1)
        ub_clip_set_free(cs);
    return rc;
}

void ub_clip_set_free(ub_clip_set *cs)
{
    if (cs->refs && --*cs->refs > 0)
        return; /* another copy (a bake's) still uses the arrays */
    free(cs->refs);
    free(cs->clips);
    free(cs->times);
    free(cs->decls);
    cs->refs = NULL;
    cs->clips = NULL;
    cs->times = NULL;
    cs->decls = NULL;
    cs->n_clips = cs->n_times = cs->n_decls = 0;
}

/* --- time mapping ------------------------------------------------------- */

static double ub_to_internal2(double ext, ub_clip_tmap m1, ub_clip_tmap m2)
{
    if (m1.ext == m2.ext || ext == m1.ext)
        return m1.in;
    if (ext == m2.ext)
        return m2.in;
    return (m2.in - m1.in) / (m2.ext - m1.ext) * (ext - m1.ext) + m1.in;
}

/* The first time mapping at or after stage time x (cs->n_times if none),
 * as a scan from the start finds it.  A shot of thousands of frames has
 * as many mappings, looked up per clip and sample: bisect where the
 * mappings are in order. */
static uint32_t ub_times_first_ge(const ub_clip_set *cs, double x)
{
    const ub_clip_tmap *t = cs->times;
    uint32_t lo = 0, hi = cs->n_times;
    if (!cs->times_sorted) {
        while (lo < hi && t[lo].ext < x)
            lo++;
        return lo;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t[mid].ext < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double ub_clip_set_to_internal(const ub_clip_set *cs, double ext)
{
    if (!cs->n_times)
        return ext;
    const ub_clip_tmap *t = cs->times;
    uint32_t n = cs->n_times, i1, i2;
    if (ext <= t[0].ext) {
        i1 = 0, i2 = 1;
    } else if (ext >= t[n - 1].ext) {
        i1 = n - 2, i2 = n - 1;
    } else {
        /* (a NaN time falls here and finds nothing: the first span) */
        i2 = ub_times_first_ge(cs, ext);
        if (i2 == 0 || i2 >= n)
            i2 = 1;
        i1 = i2 - 1;
    }
    if (t[i2].jump && i2 + 1 < n)
        return ub_to_internal2(
            ext, t[i1], (ub_clip_tmap){t[i2 + 1].ext, t[i2].in, false});
    return ub_to_internal2(ext, t[i1], t[i2]);
}

static double ub_to_external2(double in, ub_clip_tmap m1, ub_clip_tmap m2)
{
    if (m1.in == m2.in || in == m1.in)
        return m1.ext;
    if (in == m2.in)
        return m2.ext;
    return (m2.ext - m1.ext) / (m2.in - m1.in) * (in - m1.in) + m1.ext;
}

static double ub_to_external(const ub_clip_set *cs, double in, uint32_t i1,
                             uint32_t i2)
{
    const ub_clip_tmap *t = cs->times;
    if (t[i2].jump && i2 + 1 < cs->n_times)
        return ub_to_external2(
            in, t[i1], (ub_clip_tmap){t[i2 + 1].ext, t[i2].in, false});
    return ub_to_external2(in, t[i1], t[i2]);
}

uint32_t ub_clip_set_active(const ub_clip_set *cs, double t)
{
    uint32_t k = 0;
    while (k + 1 < cs->n_clips && cs->clips[k + 1].start <= t)
        k++;
    return k;
}

/* --- attributes in clips -------------------------------------------------- */

static const ub_prop *ub_clip_attr(const ub_layer *l, const char *prim,
                                   const char *attr)
{
    if (!l)
        return NULL;
    ub_prim *p = ub_layer_find_prim(l, prim);
    const ub_prop *pr = p ? ub_prop_find(l, p, attr) : NULL;
    return pr && pr->kind == UB_ATTR ? pr : NULL;
}

/* Whether p has a sample at a frame (one at NaN or inf is at none: it is
 * left out, and said so, when the clip is baked). */
static bool ub_has_samples(const ub_prop *p)
{
    if (!p)
        return false;
    const ub_samples *s = ub_prop_samples(p);
    for (uint32_t i = 0; i < s->n; i++)
        if (isfinite(s->v[i].time))
            return true;
    return false;
}

bool ub_clip_set_has_attr(const ub_clip_set *cs, const char *clip_prim,
                          const char *attr)
{
    if (cs->manifest) {
        const ub_prop *p = ub_clip_attr(cs->manifest, clip_prim, attr);
        return p && p->variability == UB_VARYING;
    }
    /* generated: the first clip with samples declares it */
    ub_clip_decl key = {clip_prim, attr, false, 0};
    const ub_clip_decl *d = cs->n_decls
                                ? bsearch(&key, cs->decls, cs->n_decls,
                                          sizeof key, ub_cmp_decl)
                                : NULL;
    return d && d->varying;
}

int ub_clip_set_each_attr(const ub_clip_set *cs, const char *clip_prim,
                          int (*fn)(void *ctx, const char *name), void *ctx)
{
    if (cs->manifest) {
        const ub_prim *p = ub_layer_find_prim(cs->manifest, clip_prim);
        for (uint32_t i = 0; p && i < p->props.n; i++) {
            const ub_prop *q = p->props.v[i];
            int rc = q->kind == UB_ATTR && q->variability == UB_VARYING
                         ? fn(ctx, q->name)
                         : 0;
            if (rc)
                return rc;
        }
        return 0;
    }
    for (uint32_t i = 0; i < cs->n_decls; i++) {
        const ub_clip_decl *d = &cs->decls[i];
        int rc = d->prim == clip_prim && d->varying ? fn(ctx, d->attr) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* Whether the manifest has a block for the attribute at exactly time t (a
 * sample of its own there).  OpenUSD looks it up at the attribute's path
 * where the clip set is authored, not at the clip's prim (Usd_Clip::
 * IsBlocked queries the manifest layer with the path untranslated): the
 * same path when primPath names that prim, as it mostly does. */
static bool ub_manifest_blocked(const ub_clip_set *cs, const char *clip_prim,
                                const char *attr, double t)
{
    size_t cn = strlen(cs->clip_prim_path);
    if (!cs->manifest || !cs->source_prim_path ||
        strncmp(clip_prim, cs->clip_prim_path, cn) != 0 ||
        (clip_prim[cn] && clip_prim[cn] != '/'))
        return false;
    char src[4096];
    int w = snprintf(src, sizeof src, "%s%s", cs->source_prim_path,
                     clip_prim + cn);
    if (w < 0 || (size_t)w >= sizeof src)
        return false;
    const ub_prop *m = ub_clip_attr(cs->manifest, src, attr);
    const ub_samples *s = m ? ub_prop_samples(m) : NULL;
    for (uint32_t i = 0; s && i < s->n; i++)
        if (s->v[i].time == t)
            return s->v[i].value.kind == UB_V_BLOCK;
    return false;
}

/* The manifest's default of attr on clip_prim: the value a clip without
 * samples gives, or NULL.  One of a type usdbake does not know counts,
 * kept as its text, as OpenUSD uses it unchanged. */
static const ub_value *ub_manifest_default(const ub_clip_set *cs,
                                           const char *clip_prim,
                                           const char *attr)
{
    const ub_prop *m = ub_clip_attr(cs->manifest, clip_prim, attr);
    if (!m || (m->default_value.kind != UB_V_DATA &&
               m->default_value.kind != UB_V_UNTYPED))
        return NULL;
    return &m->default_value;
}

/* Whether clip k (its layer: l) gives values (interpolateMissingClipValues:
 * only clips with samples, or with a manifest default).  A block in the
 * manifest at the clip's start says it has no samples, whatever its layer
 * holds (Usd_ClipSet::_ClipContributesValue). */
static bool ub_contributes(const ub_clip_set *cs, uint32_t k,
                           const ub_layer *l, const char *clip_prim,
                           const char *attr)
{
    if (!cs->interpolate_missing)
        return true;
    if (!ub_manifest_blocked(cs, clip_prim, attr,
                             cs->clips[k].authored_start) &&
        ub_has_samples(ub_clip_attr(l, clip_prim, attr)))
        return true;
    return ub_manifest_default(cs, clip_prim, attr) != NULL;
}

typedef struct ub_times {
    double *v;
    uint32_t n, cap;
} ub_times;

static int ub_times_add(ub_times *t, double x)
{
    if (ub_grow(&t->v, t->n, &t->cap, sizeof *t->v, 32))
        return -1;
    t->v[t->n++] = x;
    return 0;
}

static int ub_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Usd_Clip::ListTimeSamplesForPath for clip k (its layer: l), sorted and
 * without duplicates.  All of them lie where clip k is active. */
static int ub_clip_times(const ub_clip_set *cs, uint32_t k, const ub_layer *l,
                         const char *clip_prim, const char *attr,
                         ub_times *out)
{
    const ub_clip *c = &cs->clips[k];
    const ub_prop *p = ub_clip_attr(l, clip_prim, attr);
    uint32_t ns = p ? ub_prop_samples(p)->n : 0;
    out->n = 0;
    /* the mappings at stage times in [start, end): [from, to) */
    uint32_t from = cs->n_times ? ub_times_first_ge(cs, c->start) : 0;
    uint32_t to = cs->n_times ? ub_times_first_ge(cs, c->end) : 0;
    if (!cs->times_sorted) /* out of order: every mapping, as before */
        from = 0, to = cs->n_times;
    for (uint32_t s = 0; s < ns; s++) {
        double t = ub_prop_samples(p)->v[s].time;
        if (!cs->n_times) {
            if (c->start <= t && t < c->end && ub_times_add(out, t))
                return -1;
            continue;
        }
        /* the spans [m1, m2] that meet [start, end): m1 before end, m2
         * at or after start */
        for (uint32_t i = from ? from - 1 : 0; i + 1 < cs->n_times && i < to;
             i++) {
            ub_clip_tmap m1 = cs->times[i], m2 = cs->times[i + 1];
            /* [m1.ext, m2.ext] must meet [start, end) */
            if (!(m1.ext < c->end && m2.ext >= c->start) || m1.jump)
                continue;
            double lo = m1.in < m2.in ? m1.in : m2.in;
            double hi = m1.in < m2.in ? m2.in : m1.in;
            if (!(lo <= t && t <= hi))
                continue;
            if (m1.in == m2.in) {
                if (c->start <= m1.ext && m1.ext < c->end &&
                    ub_times_add(out, m1.ext))
                    return -1;
                if (c->start <= m2.ext && m2.ext < c->end &&
                    ub_times_add(out, m2.ext))
                    return -1;
            } else {
                double e = ub_to_external(cs, t, i, i + 1);
                if (c->start <= e && e < c->end && ub_times_add(out, e))
                    return -1;
            }
        }
    }
    for (uint32_t i = from; i < to; i++)
        if (c->start <= cs->times[i].ext && cs->times[i].ext < c->end &&
            ub_times_add(out, cs->times[i].ext))
            return -1;
    /* (a clip active from inf starts no sample: usdcat writes none) */
    if (isfinite(c->authored_start) && ub_times_add(out, c->authored_start))
        return -1;
    qsort(out->v, out->n, sizeof *out->v, ub_cmp_double);
    uint32_t w = 0;
    for (uint32_t i = 0; i < out->n; i++)
        if (!w || out->v[w - 1] != out->v[i])
            out->v[w++] = out->v[i];
    out->n = w;
    return 0;
}

/* Whether time t lies strictly between two of s's samples (sorted), on
 * none of them: where a value is interpolated. */
static bool ub_between_samples(const ub_samples *s, double t)
{
    if (s->n < 2 || !(t > s->v[0].time && t < s->v[s->n - 1].time))
        return false;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->v[i].time == t)
            return false;
    return true;
}

/* Whether clip attribute p holds another value type than the stage's
 * attribute `want` of an interpolating type: UsdStage interpolates a
 * clip with the stage attribute's type, and reading the clip's samples
 * as that type fails, so a value between two samples resolves to none
 * (a sample's own time and the held ends still read). */
static bool ub_clip_type_blocks(const ub_prop *p, const ub_prop *want)
{
    if (!p || !want)
        return false;
    const ub_type *tp = ub_prop_type(p), *tw = ub_prop_type(want);
    return tp && tw && tw->interpolates &&
           (tp->base != tw->base || p->is_array != want->is_array);
}

/* The value at stage time t, where clip k (its layer: l) is active
 * (Usd_ClipSet::QueryTimeSample), for the stage attribute `want`. */
static int ub_clip_value(const ub_clip_set *cs, const ub_layer *l,
                         const char *clip_prim, const char *attr, double t,
                         const ub_prop *want, ub_arena *a, ub_value *out,
                         const ub_layer **from)
{
    *from = NULL;
    double in = ub_clip_set_to_internal(cs, t);
    const ub_prop *p = ub_clip_attr(l, clip_prim, attr);
    *out = ub_value_block();
    /* (reading samples of another type fails where they would be
     * interpolated: then the clip has no value there, as if it had no
     * samples, and the manifest's default applies) */
    if (ub_has_samples(p) &&
        !(ub_clip_type_blocks(p, want) &&
          ub_between_samples(ub_prop_samples(p), in))) {
        /* Usd interpolates by the stage attribute's type: a clip holding
         * doubles for an int2 holds them */
        const ub_type *tw = want ? ub_prop_type(want) : NULL;
        bool held = tw && !tw->interpolates;
        ub_value v;
        if (ub_samples_value_at(ub_prop_samples(p), in, held, a, &v) != 0)
            return -1;
        *out = ub_value_clone(a, &v);
        if (out->kind == UB_V_EMPTY && v.kind != UB_V_EMPTY)
            return -1;
        *from = l;
        /* timecodes are relative to the clip's time */
        if (out->kind == UB_V_DATA && out->type_id == UB_TY_TIMECODE)
            for (uint32_t i = 0; i < out->count; i++)
                ub_value_set_double(
                    out, i, 0, ub_value_get_double(out, i, 0) + (t - in));
        return 0;
    }
    const ub_value *fallback = ub_manifest_default(cs, clip_prim, attr);
    if (fallback) {
        *out = ub_value_clone(a, fallback);
        if (out->kind == UB_V_EMPTY)
            return -1;
        *from = cs->manifest;
    }
    return 0;
}

/* --- the bake ------------------------------------------------------------- */

typedef struct ub_bake_job {
    uint32_t set;            /* index into the bake's sets */
    const char *clip_prim, *attr;
    ub_prop *out;
    unsigned depth;
    bool any;                /* some part was handed over */
    bool told_type;          /* the type mismatch below was said */
    bool told_nan;           /* a clip's sample at NaN or inf was said */
} ub_bake_job;

/* One use of a clip layer: clip k of set `set`. */
typedef struct ub_bake_use {
    const char *key;         /* the layer's resolved path, interned */
    uint32_t set, k, seq;
} ub_bake_use;

struct ub_clip_bake {
    ub_loader *ld;
    ub_diags *diags;  /* (may be NULL) */
    unsigned threads; /* 0: as many as the process may run */
    ub_clip_set *sets;
    uint32_t n_sets, cap_sets;
    ub_bake_job *jobs;
    uint32_t n_jobs, cap_jobs;
};

ub_clip_bake *ub_clip_bake_new(ub_loader *ld, unsigned threads,
                               ub_diags *diags)
{
    ub_clip_bake *b = calloc(1, sizeof *b);
    if (b) {
        b->ld = ld;
        b->diags = diags;
        b->threads = threads;
    }
    return b;
}

void ub_clip_bake_free(ub_clip_bake *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < b->n_sets; i++)
        ub_clip_set_free(&b->sets[i]);
    free(b->sets);
    free(b->jobs);
    free(b);
}

int ub_clip_bake_keep(ub_clip_bake *b, ub_clip_set *cs)
{
    if (ub_grow(&b->sets, b->n_sets, &b->cap_sets, sizeof *b->sets, 8))
        return -1;
    (*cs->refs)++;
    cs->bake_id = b->n_sets + 1;
    b->sets[b->n_sets++] = *cs;
    return 0;
}

int ub_clip_bake_defer(ub_clip_bake *b, const ub_clip_set *cs,
                       const char *clip_prim, const char *attr, ub_prop *out,
                       ub_arena *a, unsigned depth)
{
    ub_prop_ext *x = ub_prop_ext_get(a, out);
    if (!x)
        return -1;
    if (!cs->bake_id || cs->bake_id > b->n_sets)
        return -1;
    if (ub_grow(&b->jobs, b->n_jobs, &b->cap_jobs, sizeof *b->jobs, 64))
        return -1;
    b->jobs[b->n_jobs++] = (ub_bake_job){.set = cs->bake_id - 1,
                                         .clip_prim = clip_prim,
                                         .attr = attr,
                                         .out = out,
                                         .depth = depth};
    memset(&x->samples, 0, sizeof x->samples);
    x->samples.authored = true;
    return 0;
}

static int ub_cmp_use(const void *a, const void *b)
{
    const ub_bake_use *x = a, *y = b;
    if (x->key != y->key)
        return (uintptr_t)x->key < (uintptr_t)y->key ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ub_cmp_use_seq(const void *a, const void *b)
{
    const ub_bake_use *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The default sink: the samples go into the output prop. */
static int ub_bake_store(ub_arena *a, ub_prop *out, const ub_samples *part)
{
    ub_prop_ext *x = ub_prop_ext_get(a, out);
    if (!x)
        return -1;
    for (uint32_t i = 0; i < part->n; i++) {
        ub_value v = ub_value_clone(a, &part->v[i].value);
        if (v.kind == UB_V_EMPTY && part->v[i].value.kind != UB_V_EMPTY)
            return -1;
        if (ub_samples_set(a, &x->samples, part->v[i].time, v) != 0)
            return -1;
    }
    return 0;
}

/* A clip layer's parts, taken from it on the bake's thread and written
 * as text by the sink's format on any thread (see the pool below). */
typedef struct ub_bake_parts {
    ub_clip_part *info;
    ub_samples *samples;
    size_t n, cap;
} ub_bake_parts;

static int ub_parts_add(ub_bake_parts *ps, const ub_bake_job *j,
                        const ub_samples *part)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        ub_clip_part *ni = realloc(ps->info, cap * sizeof *ni);
        if (!ni)
            return -1;
        ps->info = ni;
        ub_samples *nsm = realloc(ps->samples, cap * sizeof *nsm);
        if (!nsm)
            return -1;
        ps->samples = nsm;
        ps->cap = cap;
    }
    ps->info[ps->n] = (ub_clip_part){j->out, j->depth, part->v[0].time, 0};
    ps->samples[ps->n++] = *part;
    return 0;
}

/* One job's part from clip k of its set (layer l, NULL when it could not
 * be read), built in scratch arena sa: added to ps when there is a sink
 * (ps not NULL), else stored in the output prop. */
static int ub_bake_part(ub_clip_bake *b, ub_bake_job *j, uint32_t k,
                        const ub_layer *l, ub_arena *sa, ub_times *ts,
                        ub_arena *a, ub_clip_fixup_fn fixup, void *fixup_ctx,
                        ub_bake_parts *ps)
{
    const ub_clip_set *cs = &b->sets[j->set];
    if (!ub_contributes(cs, k, l, j->clip_prim, j->attr))
        return 0;
    if (ub_clip_times(cs, k, l, j->clip_prim, j->attr, ts) != 0)
        return -1;
    ub_samples part = {.authored = true};
    part.v = ub_arena_alloc(sa, (ts->n ? ts->n : 1) * sizeof *part.v);
    if (!part.v)
        return -1;
    /* (what the clip holds, looked up once for the warnings below) */
    const ub_prop *held = b->diags && l && (!j->told_type || !j->told_nan)
                              ? ub_clip_attr(l, j->clip_prim, j->attr)
                              : NULL;
    const ub_prop *p = !j->told_type ? held : NULL;
    const ub_type *clip_t = p ? ub_prop_type(p) : NULL;
    const ub_type *stage_t = p ? ub_prop_type(j->out) : NULL;
    if (clip_t && stage_t &&
        (clip_t->base != stage_t->base || p->is_array != j->out->is_array)) {
        j->told_type = true;
        char tp[80], tw[80];
        snprintf(tp, sizeof tp, "%s%s", clip_t->name,
                 p->is_array ? "[]" : "");
        snprintf(tw, sizeof tw, "%s%s", stage_t->name,
                 j->out->is_array ? "[]" : "");
        const ub_layer *src = cs->source_layer;
        ub_diag *d = ub_diag_add(
            b->diags, UB_WARNING, cs->loc, "clip-type-mismatch",
            src ? src->source : NULL, src ? src->source_len : 0,
            "clip layer '%s' holds '%s' as %s, the stage as %s: %s", l->path,
            j->attr, tp, tw,
            ub_clip_type_blocks(p, j->out)
                ? "values between its samples resolve to none, as OpenUSD "
                  "resolves them"
                : "its values are held, as the stage's type is, and "
                  "written as the clip holds them, as OpenUSD does");
        ub_diag_set_hint(b->diags, d, "write the clip's samples with the "
                                      "stage's type");
    }
    const ub_prop *q = !j->told_nan ? held : NULL;
    for (uint32_t i = 0; q && i < ub_prop_samples(q)->n; i++) {
        double t = ub_prop_samples(q)->v[i].time;
        if (!isfinite(t)) {
            /* OpenUSD's result is the accident of a map keyed by NaN, or
             * of interpolating towards infinity (often a NaN) */
            j->told_nan = true;
            const ub_layer *src = cs->source_layer;
            ub_diag *d = ub_diag_add(
                b->diags, UB_WARNING, cs->loc, "clip-time-not-finite",
                src ? src->source : NULL, src ? src->source_len : 0,
                "clip layer '%s' has a sample of '%s' at time %s: it is "
                "left out",
                l->path, j->attr,
                isnan(t) ? "nan" : t > 0 ? "inf" : "-inf");
            ub_diag_set_hint(b->diags, d, "give the sample a frame number, "
                                          "or remove it (usdbake check "
                                          "finds such samples)");
            break;
        }
    }
    for (uint32_t i = 0; i < ts->n; i++) {
        const ub_layer *from;
        ub_value v;
        if (ub_clip_value(cs, l, j->clip_prim, j->attr, ts->v[i], j->out, sa,
                          &v, &from) != 0)
            return -1;
        if (from && fixup)
            fixup(fixup_ctx, cs, from, &v);
        /* (a time of -0 comes out at 0, as UsdStage maps it) */
        part.v[part.n].time = ts->v[i] + 0.0;
        part.v[part.n++].value = v;
    }
    part.cap = part.n;
    if (!part.n)
        return 0;
    j->any = true;
    return ps ? ub_parts_add(ps, j, &part) : ub_bake_store(a, j->out, &part);
}

/* --- reading clips and writing their parts on worker threads ------------ */

/* Scratch of a clip layer whose parts are in flight: their samples'
 * arena and their text.  Reused from group to group. */
typedef struct ub_bake_slot {
    ub_arena *sa;
    ub_arena_mark mark;
    ub_buf text;
} ub_bake_slot;

/* One clip layer: its uses [from, to), its reading, and (with a sink) its
 * parts and their formatting. */
typedef struct ub_bake_group {
    size_t from, to;
    ub_loader_task task;
    int state;  /* reading: 0 not begun, 1 to read, 2 reading, 3 read */
    int fstate; /* its parts: 0 not taken, 1 to format, 2 formatting,
                   3 formatted */
    int frc;    /* the formatting's result */
    ub_layer *layer; /* read; given back when its parts are kept */
    ub_bake_parts parts;
    ub_bake_slot *slot;
} ub_bake_group;

/* Parts formatted or formatting at once, beyond the one being taken: each
 * holds its clip layer, so this bounds memory with the reading window. */
#define UB_BAKE_IN_FLIGHT 2

typedef struct ub_bake_pool {
    ub_bake_group *groups;
    size_t n, begun, taken;
    size_t next;   /* the next group a worker looks at to read */
    size_t parted; /* groups whose parts are taken */
    size_t fnext;  /* the next group a worker looks at to format */
    size_t kept;   /* groups whose parts the sink has kept */
    const ub_clip_sink *sink;
    ub_bake_slot *slots[UB_BAKE_IN_FLIGHT + 1];
    unsigned n_slots;
    unsigned n_workers;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    bool stop;
    ub_strtab *t;
} ub_bake_pool;

/* Write g's parts as text (any thread; g is the caller's alone). */
static void ub_group_format(const ub_clip_sink *sink, ub_bake_group *g)
{
    ub_buf *text = &g->slot->text;
    for (size_t i = 0; i < g->parts.n && !g->frc; i++) {
        size_t before = text->len;
        if (sink->format(sink->ctx, g->parts.info[i].depth,
                         &g->parts.samples[i], text) != 0 ||
            text->failed)
            g->frc = -1;
        g->parts.info[i].len = text->len - before;
    }
}

/* A group to format, marked as taken; NULL when there is none.  Formatting
 * goes first: it lets the bake's thread go on and gives layers back.
 * Called with the lock held when there are workers. */
static ub_bake_group *ub_pool_format_job(ub_bake_pool *p)
{
    while (p->fnext < p->parted && p->groups[p->fnext].fstate != 1)
        p->fnext++;
    if (p->fnext >= p->parted)
        return NULL;
    ub_bake_group *g = &p->groups[p->fnext++];
    g->fstate = 2;
    return g;
}

/* A group to read, marked as taken; NULL when there is none.  Called with
 * the lock held when there are workers. */
static ub_bake_group *ub_pool_read_job(ub_bake_pool *p)
{
    while (p->next < p->begun && p->groups[p->next].state != 1)
        p->next++;
    if (p->next >= p->begun)
        return NULL;
    ub_bake_group *g = &p->groups[p->next++];
    g->state = 2;
    return g;
}

/* Do one job, formatting first (called with the lock held); false when
 * there is none. */
static bool ub_pool_work(ub_bake_pool *p)
{
    ub_bake_group *f = ub_pool_format_job(p);
    ub_bake_group *g = f ? NULL : ub_pool_read_job(p);
    if (!f && !g)
        return false;
    pthread_mutex_unlock(&p->mu);
    if (f)
        ub_group_format(p->sink, f);
    else
        ub_loader_task_run(p->t, &g->task);
    pthread_mutex_lock(&p->mu);
    if (f)
        f->fstate = 3;
    else
        g->state = 3;
    pthread_cond_broadcast(&p->done);
    return true;
}

static void *ub_pool_main(void *arg)
{
    ub_bake_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (ub_pool_work(p))
            continue;
        if (p->stop)
            break;
        pthread_cond_wait(&p->work, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Workers: one fewer than the threads the bake may use (the calling
 * thread takes the samples), none for one. */
static int ub_pool_start(ub_bake_pool *p, ub_clip_bake *b)
{
    unsigned threads = b->threads ? b->threads : ub_cpus();
    p->t = b->n_sets ? b->sets[0].source_layer->strtab : NULL;
    if (threads < 2 || p->n < 2 || !p->t)
        return 0;
    p->th = malloc((threads - 1) * sizeof *p->th);
    if (!p->th || pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->th);
        p->th = NULL;
        return 0; /* one thread, then */
    }
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    ub_strtab_set_concurrent(p->t, true);
    for (unsigned i = 0; i + 1 < threads; i++) {
        if (pthread_create(&p->th[i], NULL, ub_pool_main, p) != 0)
            break;
        p->n_workers++;
    }
    return 0;
}

/* Begin the next group's reading (on the loader's thread). */
static int ub_pool_begin(ub_bake_pool *p, ub_clip_bake *b,
                         const ub_bake_use *uses)
{
    ub_bake_group *g = &p->groups[p->begun];
    const ub_bake_use *u = &uses[g->from];
    const ub_clip_set *cs = &b->sets[u->set];
    int r = u->key ? ub_loader_task_begin(b->ld, cs->clips[u->k].asset,
                                          cs->source_layer, cs->loc, &g->task)
                   : 0;
    if (r < 0)
        return -1;
    if (p->n_workers)
        pthread_mutex_lock(&p->mu);
    g->state = r == 1 ? 1 : 3;
    p->begun++;
    if (p->n_workers) {
        pthread_cond_signal(&p->work);
        pthread_mutex_unlock(&p->mu);
    }
    return 0;
}

/* While waiting, the bake's thread does what no worker has taken yet
 * (both threads stay busy whichever of reading and formatting is the
 * slower), or sleeps until a worker is done with something.  Called with
 * the lock held. */
static void ub_pool_help(ub_bake_pool *p)
{
    if (!ub_pool_work(p))
        pthread_cond_wait(&p->done, &p->mu);
}

/* Wait until g is read (reading it here when no worker has taken it). */
static void ub_pool_wait(ub_bake_pool *p, ub_bake_group *g)
{
    if (p->n_workers)
        pthread_mutex_lock(&p->mu);
    bool mine = g->state == 1;
    if (mine)
        g->state = 2;
    if (p->n_workers)
        pthread_mutex_unlock(&p->mu);
    if (mine)
        ub_loader_task_run(p->t, &g->task);
    if (!p->n_workers) {
        g->state = 3;
        return;
    }
    /* workers read every group's state while looking for work */
    pthread_mutex_lock(&p->mu);
    if (mine)
        g->state = 3;
    while (g->state != 3)
        ub_pool_help(p);
    pthread_mutex_unlock(&p->mu);
}

/* Scratch for the next group's parts. */
static ub_bake_slot *ub_pool_slot(ub_bake_pool *p)
{
    if (p->n_slots)
        return p->slots[--p->n_slots];
    ub_bake_slot *sl = calloc(1, sizeof *sl);
    if (sl && !(sl->sa = ub_arena_new())) {
        free(sl);
        sl = NULL;
    }
    if (sl) {
        sl->mark = ub_arena_get_mark(sl->sa);
        ub_buf_init(&sl->text);
    }
    return sl;
}

static void ub_slot_free(ub_bake_slot *sl)
{
    if (!sl)
        return;
    ub_arena_free(sl->sa);
    ub_buf_free(&sl->text);
    free(sl);
}

/* Give back what g holds: its layer, its parts, its scratch. */
static void ub_group_done(ub_bake_pool *p, ub_clip_bake *b, ub_bake_group *g)
{
    ub_loader_release(b->ld, g->layer);
    g->layer = NULL;
    free(g->parts.info);
    free(g->parts.samples);
    g->parts = (ub_bake_parts){0};
    if (g->slot) {
        ub_arena_release(g->slot->sa, g->slot->mark);
        g->slot->text.len = 0;
        if (p->n_slots < UB_BAKE_IN_FLIGHT + 1)
            p->slots[p->n_slots++] = g->slot;
        else
            ub_slot_free(g->slot);
        g->slot = NULL;
    }
}

/* Hand the sink the groups' formatted parts, in order: all of them when
 * `all` (or when there are no workers), else those formatted already and
 * as many more as leave at most UB_BAKE_IN_FLIGHT in flight. */
static int ub_pool_keep(ub_bake_pool *p, ub_clip_bake *b, bool all)
{
    int rc = 0;
    bool mt = p->n_workers > 0;
    if (mt)
        pthread_mutex_lock(&p->mu);
    while (!rc && p->kept < p->parted &&
           (all || !mt || p->parted - p->kept > UB_BAKE_IN_FLIGHT ||
            p->groups[p->kept].fstate == 3)) {
        ub_bake_group *g = &p->groups[p->kept];
        if (g->fstate != 3) {
            if (mt) {
                ub_pool_help(p);
                continue;
            }
            ub_group_format(p->sink, g);
            g->fstate = 3;
        }
        if (mt)
            pthread_mutex_unlock(&p->mu);
        rc = g->frc ? -1
                    : p->sink->keep(p->sink->ctx, g->parts.info, g->parts.n,
                                    g->slot->text.data, g->slot->text.len);
        ub_group_done(p, b, g);
        if (mt)
            pthread_mutex_lock(&p->mu);
        p->kept++;
    }
    if (mt)
        pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Join the workers and give back what was read or taken but not kept
 * (after a failure). */
static void ub_pool_stop(ub_bake_pool *p, ub_clip_bake *b)
{
    if (p->n_workers) {
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
    }
    for (unsigned i = 0; i < p->n_workers; i++)
        pthread_join(p->th[i], NULL);
    if (p->th) {
        ub_strtab_set_concurrent(p->t, false);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->done);
        pthread_mutex_destroy(&p->mu);
        free(p->th);
    }
    for (size_t k = p->kept; k < p->parted; k++)
        ub_group_done(p, b, &p->groups[k]);
    for (size_t k = p->taken; k < p->begun; k++) {
        ub_bake_group *g = &p->groups[k];
        if (g->state == 1) /* never read */
            ub_loader_task_run(p->t, &g->task);
        ub_loader_release(b->ld, ub_loader_task_end(b->ld, &g->task));
    }
    while (p->n_slots)
        ub_slot_free(p->slots[--p->n_slots]);
    free(p->groups);
}

/* One part, formatted and kept here. */
static int ub_sink_one(const ub_clip_sink *sink, const ub_bake_job *j,
                       const ub_samples *part)
{
    ub_buf text;
    ub_buf_init(&text);
    ub_clip_part info = {j->out, j->depth, part->v[0].time, 0};
    int rc = sink->format(sink->ctx, j->depth, part, &text) != 0 ||
                     text.failed
                 ? -1
                 : 0;
    info.len = text.len;
    if (!rc)
        rc = sink->keep(sink->ctx, &info, 1, text.data, text.len);
    ub_buf_free(&text);
    return rc;
}

int ub_clip_bake_run(ub_clip_bake *b, ub_arena *a, ub_clip_fixup_fn fixup,
                     void *fixup_ctx, const ub_clip_sink *sink)
{
    /* jobs by set, so that a clip's uses find their jobs: set s has
     * by_set[first[s] .. first[s + 1]) */
    uint32_t *first = calloc((size_t)b->n_sets + 2, sizeof *first);
    uint32_t *by_set = malloc(((size_t)b->n_jobs + 1) * sizeof *by_set);
    size_t n_uses = 0;
    for (uint32_t i = 0; i < b->n_sets; i++)
        n_uses += b->sets[i].n_clips;
    ub_bake_use *uses = malloc((n_uses + 1) * sizeof *uses);
    ub_arena *sa = ub_arena_new();
    ub_times ts = {0};
    int rc = first && by_set && uses && sa ? 0 : -1;
    for (uint32_t i = 0; !rc && i < b->n_jobs; i++)
        first[b->jobs[i].set + 2]++;
    for (uint32_t i = 1; !rc && i <= b->n_sets; i++)
        first[i + 1] += first[i];
    /* first[s + 1] is now where set s starts; filling moves it to its end */
    for (uint32_t i = 0; !rc && i < b->n_jobs; i++)
        by_set[first[b->jobs[i].set + 1]++] = i;
    ub_arena_mark mark = sa ? ub_arena_get_mark(sa) : (ub_arena_mark){0};
    /* every clip layer once, in the order first named; a clip that does
     * not exist is an empty layer */
    size_t nu = 0;
    for (uint32_t i = 0; !rc && i < b->n_sets; i++) {
        const ub_clip_set *cs = &b->sets[i];
        for (uint32_t k = 0; k < cs->n_clips; k++) {
            ub_load_status st = UB_LOAD_MISSING;
            const char *r = cs->clips[k].asset
                                ? ub_loader_resolve(b->ld, cs->clips[k].asset,
                                                    cs->source_layer, &st)
                                : NULL;
            if (st == UB_LOAD_FAILED)
                rc = -1;
            uses[nu] = (ub_bake_use){r, i, k, (uint32_t)nu};
            nu++;
        }
    }
    if (!rc && nu > 1) {
        qsort(uses, nu, sizeof *uses, ub_cmp_use);
        /* each group takes its first use's place */
        for (size_t g = 0, e; g < nu; g = e) {
            for (e = g + 1; e < nu && uses[e].key == uses[g].key && uses[g].key;
                 e++)
                uses[e].seq = uses[g].seq;
        }
        qsort(uses, nu, sizeof *uses, ub_cmp_use_seq);
    }
    /* the groups of uses, one per clip layer, read by the pool (ahead of
     * their turn, a few at a time) and taken in order */
    size_t ng = 0;
    for (size_t g = 0; g < nu; g++)
        ng += g == 0 || uses[g].seq != uses[g - 1].seq;
    ub_bake_pool pool = {0};
    pool.groups = calloc(ng + 1, sizeof *pool.groups);
    if (!pool.groups)
        rc = -1;
    for (size_t g = 0, k = 0; !rc && g < nu; g++)
        if (g == 0 || uses[g].seq != uses[g - 1].seq) {
            pool.groups[k].from = g;
            if (k)
                pool.groups[k - 1].to = g;
            k++;
        }
    if (!rc && ng)
        pool.groups[ng - 1].to = nu;
    pool.n = ng;
    pool.sink = sink;
    if (!rc && ub_pool_start(&pool, b) != 0)
        rc = -1;
    size_t window = 2 * ((size_t)pool.n_workers + 1);
    for (size_t k = 0; !rc && k < ng; k++) {
        while (!rc && pool.begun < ng && pool.begun < k + window)
            rc = ub_pool_begin(&pool, b, uses);
        if (rc)
            break;
        ub_bake_group *gr = &pool.groups[k];
        ub_pool_wait(&pool, gr);
        ub_layer *l = ub_loader_task_end(b->ld, &gr->task);
        pool.taken = k + 1;
        if (gr->task.out_of_memory) {
            /* the clips after it would only run out too, each with its
             * own error, and the bake fails either way */
            rc = -1;
            break;
        }
        /* with a sink, the layer stays until its parts are written */
        ub_bake_slot *sl = sink ? ub_pool_slot(&pool) : NULL;
        if (sink && !sl) {
            ub_loader_release(b->ld, l);
            rc = -1;
            break;
        }
        if (sl) {
            gr->layer = l;
            gr->slot = sl;
        }
        for (size_t u = gr->from; !rc && u < gr->to; u++) {
            uint32_t s = uses[u].set;
            for (uint32_t q = first[s]; !rc && q < first[s + 1]; q++)
                rc = ub_bake_part(b, &b->jobs[by_set[q]], uses[u].k, l,
                                  sl ? sl->sa : sa, &ts, a, fixup, fixup_ctx,
                                  sl ? &gr->parts : NULL);
        }
        if (!sink) {
            ub_loader_release(b->ld, l);
            ub_arena_release(sa, mark);
            continue;
        }
        /* its parts go to the workers (even after a failure, so that
         * ub_pool_stop gives them back) */
        if (pool.n_workers)
            pthread_mutex_lock(&pool.mu);
        gr->fstate = 1;
        pool.parted = k + 1;
        if (pool.n_workers) {
            pthread_cond_signal(&pool.work);
            pthread_mutex_unlock(&pool.mu);
        }
        if (!rc)
            rc = ub_pool_keep(&pool, b, false);
    }
    if (!rc && sink)
        rc = ub_pool_keep(&pool, b, true);
    ub_pool_stop(&pool, b);
    /* no clip gave a time (interpolateMissingClipValues, no samples, no
     * default): a block at the first clip's start */
    for (uint32_t i = 0; !rc && i < b->n_jobs; i++) {
        ub_bake_job *j = &b->jobs[i];
        if (j->any || !b->sets[j->set].n_clips)
            continue;
        ub_sample blk = {b->sets[j->set].clips[0].authored_start,
                         ub_value_block()};
        ub_samples part = {.authored = true, .n = 1, .cap = 1, .v = &blk};
        rc = sink ? ub_sink_one(sink, j, &part)
                  : ub_bake_store(a, j->out, &part);
    }
    free(ts.v);
    ub_arena_free(sa);
    free(uses);
    free(by_set);
    free(first);
    return rc;
}
