/* Values at a time: OpenUSD's bracketing and interpolation rules
 * (pxr/usd/usd/interpolators.h), with its per-type arithmetic so that the
 * numbers match the ones OpenUSD computes. */
#include "ub_usdb.h"

#include <math.h>
#include <string.h>

static float f32(const void *p)
{
    float x;
    memcpy(&x, p, sizeof x);
    return x;
}

static double f64(const void *p)
{
    double x;
    memcpy(&x, p, sizeof x);
    return x;
}

static float h16(const void *p)
{
    uint16_t x;
    memcpy(&x, p, sizeof x);
    return ub_half_to_float(x);
}

static void put_h16(void *p, float v)
{
    uint16_t x = ub_float_to_half(v);
    memcpy(p, &x, sizeof x);
}

static bool is_quat(const ub_type *t)
{
    return t->base == UB_TY_QUATH || t->base == UB_TY_QUATF ||
           t->base == UB_TY_QUATD;
}

/* GfSlerp: theta is computed at the quaternion's own precision, and the
 * scale factors are applied through the quaternion's operator*=. */
static void slerp(const ub_type *t, const unsigned char *a,
                  const unsigned char *b, double alpha, unsigned char *out)
{
    size_t s = ub_scalar_size(t->scalar);
    double q0[4], q1[4];
    for (int i = 0; i < 4; i++) {
        q0[i] = s == 8 ? f64(a + 8 * i) : s == 4 ? f32(a + 4 * i)
                                                 : h16(a + 2 * i);
        q1[i] = s == 8 ? f64(b + 8 * i) : s == 4 ? f32(b + 4 * i)
                                                 : h16(b + 2 * i);
    }
    /* components are stored as written: real first, then i, j, k */
    double cos_theta;
    if (s == 8) {
        cos_theta = (q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3]) +
                    q0[0] * q1[0];
    } else {
        float dot = (float)q0[1] * (float)q1[1] +
                    (float)q0[2] * (float)q1[2] +
                    (float)q0[3] * (float)q1[3];
        if (s == 2)
            dot = ub_half_to_float(ub_float_to_half(dot));
        cos_theta = dot + (float)q0[0] * (float)q1[0];
    }
    bool flip = false;
    if (cos_theta < 0.0) {
        cos_theta = -cos_theta;
        flip = true;
    }
    double scale0, scale1;
    if (1.0 - cos_theta > 0.00001) {
        double theta = acos(cos_theta), sin_theta;
        if (s == 4) {
            theta = (float)theta;
            sin_theta = (float)sin(theta);
        } else if (s == 2) {
            theta = ub_half_to_float(ub_float_to_half((float)theta));
            sin_theta = ub_half_to_float(ub_float_to_half((float)sin(theta)));
        } else {
            sin_theta = sin(theta);
        }
        scale0 = sin((1.0 - alpha) * theta) / sin_theta;
        scale1 = sin(alpha * theta) / sin_theta;
    } else {
        scale0 = 1.0 - alpha;
        scale1 = alpha;
    }
    if (flip)
        scale1 = -scale1;
    for (int i = 0; i < 4; i++) {
        if (s == 8) {
            double r = scale0 * q0[i] + scale1 * q1[i];
            memcpy(out + 8 * i, &r, 8);
        } else if (s == 4) {
            float r = (float)q0[i] * (float)scale0 +
                      (float)q1[i] * (float)scale1;
            memcpy(out + 4 * i, &r, 4);
        } else {
            float h0 = ub_half_to_float(ub_float_to_half((float)scale0));
            float h1 = ub_half_to_float(ub_float_to_half((float)scale1));
            float x = ub_half_to_float(ub_float_to_half((float)q0[i] * h0));
            float y = ub_half_to_float(ub_float_to_half((float)q1[i] * h1));
            put_h16(out + 2 * i, x + y);
        }
    }
}

/* GfLerp(alpha, a, b) = (1 - alpha) * a + alpha * b for one element.
 * Scalars are promoted to double; vectors scale each component at their
 * own precision (GfVec3f::operator*=(double)) and add at it. */
static void lerp_elem(const ub_type *t, const unsigned char *a,
                      const unsigned char *b, double alpha,
                      unsigned char *out)
{
    unsigned nc = ub_type_ncomp(t);
    double wa = 1.0 - alpha;
    for (unsigned c = 0; c < nc; c++) {
        switch (t->scalar) {
        case UB_SC_DOUBLE: {
            double r = wa * f64(a + 8 * c) + alpha * f64(b + 8 * c);
            memcpy(out + 8 * c, &r, 8);
            break;
        }
        case UB_SC_FLOAT: {
            float r;
            if (nc == 1) {
                r = (float)(wa * f32(a) + alpha * f32(b));
            } else {
                float x = (float)(f32(a + 4 * c) * wa);
                float y = (float)(f32(b + 4 * c) * alpha);
                r = x + y;
            }
            memcpy(out + 4 * c, &r, 4);
            break;
        }
        case UB_SC_HALF:
            if (nc == 1) {
                put_h16(out, (float)(wa * h16(a) + alpha * h16(b)));
            } else {
                float x = ub_half_to_float(
                    ub_float_to_half(h16(a + 2 * c) * (float)wa));
                float y = ub_half_to_float(
                    ub_float_to_half(h16(b + 2 * c) * (float)alpha));
                put_h16(out + 2 * c, x + y);
            }
            break;
        default: /* not an interpolating type: hold */
            memcpy(out, a, ub_type_elem_size(t));
            return;
        }
    }
}

int ub_value_lerp(const ub_value *lo, const ub_value *hi, double alpha,
                  ub_arena *a, ub_value *out)
{
    const ub_type *t = ub_value_type(lo);
    *out = ub_value_new(a, t, lo->count, lo->is_array);
    if (out->kind != UB_V_DATA)
        return -1;
    size_t es = ub_type_elem_size(t);
    const unsigned char *a0 = ub_value_data(lo), *b0 = ub_value_data(hi);
    unsigned char *o0 = ub_value_data(out);
    for (uint32_t i = 0; i < lo->count; i++) {
        const unsigned char *pa = a0 + i * es, *pb = b0 + i * es;
        unsigned char *po = o0 + i * es;
        if (is_quat(t))
            slerp(t, pa, pb, alpha, po);
        else
            lerp_elem(t, pa, pb, alpha, po);
    }
    return 0;
}

/* Whether OpenUSD's linear interpolator applies between lo and hi; when
 * not, the lower value is held. */
static bool can_lerp(const ub_value *lo, const ub_value *hi)
{
    return lo->kind == UB_V_DATA && hi->kind == UB_V_DATA &&
        ub_value_type(lo) &&
           ub_value_type(hi) && ub_value_type(lo)->interpolates &&
           ub_value_type(lo)->base == ub_value_type(hi)->base &&
           lo->is_array == hi->is_array && lo->count == hi->count;
}

/* Bracketing samples of t, as SdfLayer::GetBracketingTimeSamples. */
static void bracket(const double *times, uint32_t n, double t, uint32_t *lo,
                    uint32_t *hi)
{
    if (!(t > times[0])) { /* before the first (or NaN): hold the first */
        *lo = *hi = 0;
        return;
    }
    if (t >= times[n - 1]) {
        *lo = *hi = n - 1;
        return;
    }
    uint32_t l = 0, h = n - 1; /* times[l] < t < times[h] or equal */
    while (h - l > 1) {
        uint32_t m = l + (h - l) / 2;
        if (times[m] <= t)
            l = m;
        else
            h = m;
    }
    if (times[l] == t)
        h = l;
    *lo = l;
    *hi = h;
}

typedef int (*fetch_fn)(void *ctx, uint32_t i, ub_arena *a, ub_value *out);

/* The value at t from n samples at times, fetching only what is needed. */
static int value_at(const double *times, uint32_t n, double t, bool held,
                    fetch_fn fetch, void *ctx, ub_arena *a, ub_value *out)
{
    uint32_t lo, hi;
    bracket(times, n, t, &lo, &hi);
    if (fetch(ctx, lo, a, out) != 0)
        return -1;
    /* Equal (or nearly equal, GfIsClose 1e-6) brackets: that sample.  A
     * blocked lower sample means no value; held types hold. */
    if (lo == hi || fabs(times[hi] - times[lo]) < 1e-6 || held ||
        out->kind != UB_V_DATA || !ub_value_type(out) ||
            !ub_value_type(out)->interpolates)
        return 0;
    ub_value upper;
    if (fetch(ctx, hi, a, &upper) != 0)
        return -1;
    if (!can_lerp(out, &upper)) /* blocked upper or other size: hold */
        return 0;
    double alpha = (t - times[lo]) / (times[hi] - times[lo]);
    if (out->is_array && alpha == 0.0)
        return 0;
    if (out->is_array && alpha == 1.0) {
        *out = upper;
        return 0;
    }
    ub_value lower = *out;
    return ub_value_lerp(&lower, &upper, alpha, a, out);
}

typedef struct mem_ctx {
    const ub_samples *s;
    uint32_t *at; /* the samples kept (at finite times), by index */
} mem_ctx;

static int mem_fetch(void *ctx, uint32_t i, ub_arena *a, ub_value *out)
{
    (void)a;
    const mem_ctx *m = ctx;
    *out = m->s->v[m->at[i]].value;
    return 0;
}

int ub_samples_value_at(const ub_samples *s, double time, bool held,
                        ub_arena *a, ub_value *out)
{
    memset(out, 0, sizeof *out);
    if (!s->n)
        return 0;
    double *times = ub_arena_alloc(a, s->n * sizeof *times);
    uint32_t *at = ub_arena_alloc(a, s->n * sizeof *at);
    if (!times || !at)
        return -1;
    /* A sample at NaN (text may author one; it stays where it was) is at
     * no time: it would bracket every time after it.  One at an infinite
     * time is at no frame: interpolated towards, it gives a NaN or the
     * other sample's value. */
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (isfinite(s->v[i].time)) {
            times[n] = s->v[i].time;
            at[n++] = i;
        }
    if (!n)
        return 0;
    mem_ctx m = {s, at};
    return value_at(times, n, time, held, mem_fetch, &m, a, out);
}

typedef struct file_ctx {
    ub_usdb *f;
    uint32_t prop;
} file_ctx;

static int file_fetch(void *ctx, uint32_t i, ub_arena *a, ub_value *out)
{
    file_ctx *c = ctx;
    return ub_usdb_sample(c->f, c->prop, i, a, out);
}

int ub_usdb_value_at(ub_usdb *f, uint32_t prop, double time, ub_arena *a,
                     ub_value *out)
{
    const double *times;
    uint32_t n;
    memset(out, 0, sizeof *out);
    if (ub_usdb_sample_times(f, prop, a, &times, &n) != 0)
        return -1;
    if (!n)
        return ub_usdb_prop_default(f, prop, a, out);
    file_ctx c = {f, prop};
    return value_at(times, n, time, false, file_fetch, &c, a, out);
}
