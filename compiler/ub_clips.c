/*
 * Value clips: the semantics of OpenUSD's Usd_ClipSet / Usd_Clip, written
 * for baking (every sample of a clip set, not one query at a time).
 */
#include "ub_clips.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_compose.h"
#include "ub_time.h"
#include "ub_usdb.h"

/* --- reading the info dictionary ----------------------------------------- */

static const ub_value *ub_info(const ub_dict *d, const char *key)
{
    for (uint32_t i = 0; i < d->n; i++)
        if (strcmp(d->e[i].key, key) == 0)
            return d->e[i].value.kind == UB_V_DATA ? &d->e[i].value : NULL;
    return NULL;
}

static bool ub_info_double(const ub_dict *d, const char *key, double *out)
{
    const ub_value *v = ub_info(d, key);
    if (!v || !v->type || v->count != 1 || v->is_array)
        return false;
    switch (v->type->scalar) {
    case UB_SC_DOUBLE: case UB_SC_FLOAT: case UB_SC_HALF: case UB_SC_INT:
    case UB_SC_INT64: case UB_SC_UINT: case UB_SC_UINT64: case UB_SC_UCHAR:
        *out = ub_value_get_double(v, 0, 0);
        return true;
    default:
        return false;
    }
}

static const char *ub_info_str(const ub_dict *d, const char *key)
{
    const ub_value *v = ub_info(d, key);
    return v && v->type && v->type->scalar == UB_SC_STRING && v->count == 1
               ? ub_value_str(v, 0)
               : NULL;
}

/* A double2[] as pairs; NULL when absent or of another type. */
static const ub_value *ub_info_pairs(const ub_dict *d, const char *key)
{
    const ub_value *v = ub_info(d, key);
    return v && v->type && v->type->base == UB_TY_DOUBLE2 ? v : NULL;
}

static void ub_clip_warn(ub_diags *diags, ub_loc loc, const ub_layer *l,
                         const char *set, const char *why)
{
    ub_diag *d = ub_diag_add(diags, UB_WARNING, loc, "clip-set-invalid",
                             l ? l->source : NULL, l ? l->source_len : 0,
                             "clip set '%s' is ignored: %s", set, why);
    ub_diag_set_hint(diags, d, "fix the clip metadata; OpenUSD ignores "
                               "this clip set too");
}

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
                              const char **why)
{
    if (!(stride > 0)) {
        *why = "templateStride must be greater than 0";
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
    for (double t = t0 * promo; !rc && t <= t1 * promo; t += stride * promo) {
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
        if (w >= sizeof path || !ub_loader_resolve(ld, path, src))
            continue;
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

/* A clip or manifest layer.  One that does not exist is an empty layer to
 * OpenUSD, which says so only if a value is ever looked for in it: a
 * warning here, not an error. */
static ub_layer *ub_clip_open(ub_loader *ld, const char *asset,
                              const ub_layer *src, ub_loc loc,
                              ub_diags *diags)
{
    if (!ub_loader_resolve(ld, asset, src)) {
        ub_diag *d = ub_diag_add(diags, UB_WARNING, loc, "clip-missing",
                                 src->source, src->source_len,
                                 "clip layer '%s' does not exist; it is read "
                                 "as an empty layer, as OpenUSD does",
                                 asset);
        ub_diag_set_hint(diags, d, "check the clip's asset path");
        return NULL;
    }
    return ub_loader_open(ld, asset, src, loc);
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
    const char *prim = ub_info_str(info, "primPath");
    const ub_value *assets_v = ub_info(info, "assetPaths");
    const ub_value *active_v = NULL, *times_v = NULL;
    double *tm_d = NULL, *ac_d = NULL;
    const char **as_d = NULL;
    uint32_t n_assets = 0, n_active = 0, n_times = 0;
    const char *tmpl = ub_info_str(info, "templateAssetPath");
    if (assets_v && assets_v->type && assets_v->type->id == UB_TY_ASSET) {
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
        const char *why = NULL;
        int n = ub_template_derive(ld, src, tmpl, stride, has_off, off, t0,
                                   t1, &tm_d, &n_times, &ac_d, &as_d, &why);
        if (n == -2)
            return -1;
        if (n < 0) {
            ub_clip_warn(diags, loc, src, name, why);
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
    if (!prim || !*prim)
        why = "no clip prim path in 'primPath'";
    else if (prim[0] != '/' || strchr(prim, '.') || strchr(prim, '{') ||
             (prim[1] == '\0'))
        why = "'primPath' must be an absolute path to a prim";
    for (uint32_t i = 0; !why && i < n_assets; i++)
        if (!*ASSET(i))
            why = "an empty asset path in 'assetPaths'";
    for (uint32_t i = 0; !why && i < n_active; i++) {
        double ix = ACT(i, 1);
        if (ix < 0 || ix >= n_assets)
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
        ub_clip_warn(diags, loc, src, name, why);
        rc = 0;
        goto done;
    }
    cs->clip_prim_path = prim;
    double interp = 0;
    const ub_value *im = ub_info(info, "interpolateMissingClipValues");
    if (im && im->type && im->type->scalar == UB_SC_BOOL && im->count == 1)
        interp = *(const uint8_t *)im->u.data;
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
         * an error); the loader has said why. */
        c->layer = ub_clip_open(ld, asset, src, loc, diags);
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
    }
    const ub_value *man = ub_info(info, "manifestAssetPath");
    if (man && man->type && man->type->id == UB_TY_ASSET && man->count &&
        *ub_value_str(man, 0))
        cs->manifest = ub_clip_open(ld, ub_value_str(man, 0), src, loc, diags);
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
    free(cs->clips);
    free(cs->times);
    cs->clips = NULL;
    cs->times = NULL;
    cs->n_clips = cs->n_times = 0;
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
        i2 = 0;
        while (i2 < n && t[i2].ext < ext)
            i2++;
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

static bool ub_has_samples(const ub_prop *p)
{
    return p && p->samples.n > 0;
}

bool ub_clip_set_has_attr(const ub_clip_set *cs, const char *clip_prim,
                          const char *attr)
{
    if (cs->manifest) {
        const ub_prop *p = ub_clip_attr(cs->manifest, clip_prim, attr);
        return p && p->variability == UB_VARYING;
    }
    /* generated: the first clip with samples declares it */
    for (uint32_t k = 0; k < cs->n_clips; k++) {
        const ub_prop *p = ub_clip_attr(cs->clips[k].layer, clip_prim, attr);
        if (ub_has_samples(p))
            return p->variability == UB_VARYING;
    }
    return false;
}

/* Whether clip k gives values (interpolateMissingClipValues: only clips
 * with samples, or with a manifest default). */
static bool ub_contributes(const ub_clip_set *cs, uint32_t k,
                           const char *clip_prim, const char *attr)
{
    if (!cs->interpolate_missing)
        return true;
    if (ub_has_samples(ub_clip_attr(cs->clips[k].layer, clip_prim, attr)))
        return true;
    const ub_prop *m = ub_clip_attr(cs->manifest, clip_prim, attr);
    return m && m->default_value.kind == UB_V_DATA;
}

typedef struct ub_times {
    double *v;
    uint32_t n, cap;
} ub_times;

static int ub_times_add(ub_times *t, double x)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->v[i] == x)
            return 0;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 32;
        double *nv = realloc(t->v, cap * sizeof *nv);
        if (!nv)
            return -1;
        t->v = nv;
        t->cap = cap;
    }
    t->v[t->n++] = x;
    return 0;
}

static int ub_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Usd_Clip::ListTimeSamplesForPath for clip k. */
static int ub_clip_times(const ub_clip_set *cs, uint32_t k,
                         const char *clip_prim, const char *attr,
                         ub_times *out)
{
    const ub_clip *c = &cs->clips[k];
    const ub_prop *p = ub_clip_attr(c->layer, clip_prim, attr);
    uint32_t ns = p ? p->samples.n : 0;
    for (uint32_t s = 0; s < ns; s++) {
        double t = p->samples.v[s].time;
        if (!cs->n_times) {
            if (c->start <= t && t < c->end && ub_times_add(out, t))
                return -1;
            continue;
        }
        for (uint32_t i = 0; i + 1 < cs->n_times; i++) {
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
    for (uint32_t i = 0; i < cs->n_times; i++)
        if (c->start <= cs->times[i].ext && cs->times[i].ext < c->end &&
            ub_times_add(out, cs->times[i].ext))
            return -1;
    return ub_times_add(out, c->authored_start);
}

/* The value at stage time t (Usd_ClipSet::QueryTimeSample). */
static int ub_clip_value(const ub_clip_set *cs, const char *clip_prim,
                         const char *attr, double t, ub_arena *a,
                         ub_value *out, const ub_layer **from)
{
    *from = NULL;
    const ub_clip *c = &cs->clips[ub_clip_set_active(cs, t)];
    double in = ub_clip_set_to_internal(cs, t);
    const ub_prop *p = ub_clip_attr(c->layer, clip_prim, attr);
    *out = ub_value_block();
    if (ub_has_samples(p)) {
        ub_value v;
        if (ub_samples_value_at(&p->samples, in, false, a, &v) != 0)
            return -1;
        *out = ub_value_clone(a, &v);
        if (out->kind == UB_V_EMPTY && v.kind != UB_V_EMPTY)
            return -1;
        *from = c->layer;
        /* timecodes are relative to the clip's time */
        if (out->kind == UB_V_DATA && out->type &&
            out->type->id == UB_TY_TIMECODE)
            for (uint32_t i = 0; i < out->count; i++)
                ub_value_set_double(
                    out, i, 0, ub_value_get_double(out, i, 0) + (t - in));
        return 0;
    }
    const ub_prop *m = ub_clip_attr(cs->manifest, clip_prim, attr);
    if (m && m->default_value.kind == UB_V_DATA) {
        *out = ub_value_clone(a, &m->default_value);
        if (out->kind == UB_V_EMPTY)
            return -1;
        *from = cs->manifest;
    }
    return 0;
}

int ub_clip_set_samples(const ub_clip_set *cs, const char *clip_prim,
                        const char *attr, ub_arena *a, ub_samples *out,
                        const ub_layer ***from)
{
    memset(out, 0, sizeof *out);
    out->authored = true;
    ub_times ts = {0};
    for (uint32_t k = 0; k < cs->n_clips; k++)
        if (ub_contributes(cs, k, clip_prim, attr) &&
            ub_clip_times(cs, k, clip_prim, attr, &ts) != 0) {
            free(ts.v);
            return -1;
        }
    if (!ts.n && cs->n_clips && ub_times_add(&ts, cs->clips[0].authored_start)) {
        free(ts.v);
        return -1;
    }
    qsort(ts.v, ts.n, sizeof *ts.v, ub_cmp_double);
    int rc = 0;
    *from = ub_arena_alloc(a, (ts.n ? ts.n : 1) * sizeof **from);
    if (!*from)
        rc = -1;
    for (uint32_t i = 0; i < ts.n && !rc; i++) {
        ub_value v;
        rc = ub_clip_value(cs, clip_prim, attr, ts.v[i], a, &v, &(*from)[i]);
        if (!rc)
            rc = ub_samples_set(a, out, ts.v[i], v);
    }
    free(ts.v);
    return rc ? -1 : 0;
}
