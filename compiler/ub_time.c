#include "ub_time.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* OpenUSD compares offsets with GfIsClose(a, b, 1e-6). */
#define UB_OFFSET_EPSILON 1e-6

ub_offset ub_offset_compose(ub_offset outer, ub_offset inner)
{
    return (ub_offset){outer.scale * inner.offset + outer.offset,
                       outer.scale * inner.scale};
}

bool ub_offset_is_identity(ub_offset o)
{
    return fabs(o.offset) < UB_OFFSET_EPSILON &&
           fabs(o.scale - 1.0) < UB_OFFSET_EPSILON;
}

ub_offset ub_offset_inverse(ub_offset o)
{
    if (ub_offset_is_identity(o))
        return o;
    double s = o.scale != 0.0 ? 1.0 / o.scale : INFINITY;
    return (ub_offset){-o.offset * s, s};
}

ub_offset_status ub_offset_validate(ub_offset o)
{
    if (!isfinite(o.offset) || !isfinite(o.scale))
        return UB_OFFSET_NONFINITE;
    /* OpenUSD also refuses an offset whose inverse is not finite: a scale
     * so close to 0 that 1/scale (or offset/scale) overflows. */
    if (o.scale == 0.0 || !isfinite(1.0 / o.scale) ||
        !isfinite(o.offset / o.scale))
        return UB_OFFSET_SCALE_ZERO;
    if (o.scale < 0.0)
        return UB_OFFSET_SCALE_NEGATIVE;
    return UB_OFFSET_OK;
}

bool ub_offset_status_ignored(ub_offset_status s)
{
    return s == UB_OFFSET_NONFINITE || s == UB_OFFSET_SCALE_ZERO;
}

const char *ub_offset_status_text(ub_offset_status s)
{
    switch (s) {
    case UB_OFFSET_OK:
        return "valid";
    case UB_OFFSET_NONFINITE:
        return "offset or scale is not a finite number";
    case UB_OFFSET_SCALE_ZERO:
        return "scale is 0 or too close to 0 to invert (all times would "
               "collapse to one)";
    case UB_OFFSET_SCALE_NEGATIVE:
        return "scale is negative (time runs backwards)";
    }
    return "invalid";
}

/* The authored double (or other number) of a layer metadata field. */
static bool ub_layer_meta_number(const ub_layer *layer, const char *key,
                                 double *out)
{
    if (!layer)
        return false;
    const char *k = ub_intern_cstr(layer->strtab, key);
    const ub_field *f = k ? ub_fields_find(&layer->meta, k) : NULL;
    if (!f || f->value.kind != UB_V_DATA || f->value.count < 1 ||
        !ub_value_type(&f->value))
        return false;
    switch (ub_value_type(&f->value)->scalar) {
    case UB_SC_BOOL: case UB_SC_UCHAR: case UB_SC_INT: case UB_SC_UINT:
    case UB_SC_INT64: case UB_SC_UINT64: case UB_SC_HALF: case UB_SC_FLOAT:
    case UB_SC_DOUBLE:
        *out = ub_value_get_double(&f->value, 0, 0);
        return true;
    default:
        return false;
    }
}

double ub_layer_tcps(const ub_layer *layer)
{
    double v;
    if (ub_layer_meta_number(layer, "timeCodesPerSecond", &v))
        return v;
    if (ub_layer_meta_number(layer, "framesPerSecond", &v))
        return v;
    return 24.0;
}

bool ub_rate_ok(double rate)
{
    /* (a rate so near 0 that its inverse overflows is no better than 0) */
    return isfinite(rate) && rate > 0 && isfinite(1.0 / rate);
}

const char ub_rate_hint[] = "author the rate the animation was made at, "
                            "such as 24";

void ub_rate_problem(char *buf, size_t n, const char *key, double rate)
{
    bool fps = strcmp(key, "framesPerSecond") == 0;
    snprintf(buf, n,
             "%s is %g, not a positive finite number: %sOpenUSD divides by "
             "a layer's rate to scale the times of its sublayers and "
             "references, and %s",
             key, rate,
             fps ? "without timeCodesPerSecond, " : "",
             !isfinite(rate) ? "a rate that is not finite makes them nan, "
                               "infinite or 0"
             : rate < 0      ? "a negative rate runs them backwards"
             : rate == 0     ? "a rate of 0 makes them infinite or all 0"
                             : "a rate this close to 0 makes them infinite");
}

void ub_layer_report_rate(const ub_layer *layer, ub_diags *diags)
{
    bool tcps = ub_layer_has_tcps(layer);
    const char *key = tcps ? "timeCodesPerSecond" : "framesPerSecond";
    const char *k = ub_intern_cstr(layer->strtab, key);
    const ub_field *f = k ? ub_fields_find(&layer->meta, k) : NULL;
    ub_loc loc = f ? ub_layer_loc(layer, f->loc) : (ub_loc){layer->path, 0, 0};
    const char *id = tcps ? "tcps-invalid" : "fps-invalid";
    if (ub_diags_has(diags, id, loc))
        return;
    char msg[256];
    ub_rate_problem(msg, sizeof msg, key, ub_layer_tcps(layer));
    ub_diag *d = ub_diag_add(diags, UB_ERROR, loc, id, layer->source,
                             layer->source_len, "%s", msg);
    ub_diag_set_hint(diags, d, "%s", ub_rate_hint);
}

bool ub_layer_has_tcps(const ub_layer *layer)
{
    double v;
    return ub_layer_meta_number(layer, "timeCodesPerSecond", &v);
}

bool ub_layer_has_fps(const ub_layer *layer)
{
    double v;
    return ub_layer_meta_number(layer, "framesPerSecond", &v);
}

ub_offset ub_sublayer_offset(ub_offset parent, ub_offset authored,
                             double parent_tcps, double sub_tcps,
                             ub_offset_status *status)
{
    ub_offset_status st = ub_offset_validate(authored);
    if (status)
        *status = st;
    ub_offset o = ub_offset_status_ignored(st) ? UB_OFFSET_IDENTITY
                                               : authored;
    /* Exact comparison on purpose: OpenUSD scales only when the rates
     * differ at all. */
    if (parent_tcps != sub_tcps)
        o.scale = o.scale * parent_tcps / sub_tcps;
    return ub_offset_compose(parent, o);
}

static bool ub_dict_apply_offset(ub_dict *d, ub_offset o);

bool ub_value_apply_offset(ub_value *v, ub_offset o)
{
    bool changed = false;
    if (v->kind == UB_V_DICT && v->u.dict)
        return ub_dict_apply_offset(v->u.dict, o);
    if (v->kind != UB_V_DATA || !ub_value_type(v))
        return false;
    if (v->type_id == UB_TY_TIMECODE) {
        double *t = ub_value_data(v);
        for (uint32_t i = 0; i < v->count; i++)
            t[i] = ub_offset_apply(o, t[i]);
        return v->count > 0;
    }
    if (ub_value_type(v)->scalar == UB_SC_DICT) {
        ub_dict **d = ub_value_data(v);
        for (uint32_t i = 0; i < v->count; i++)
            if (d[i] && ub_dict_apply_offset(d[i], o))
                changed = true;
    }
    return changed;
}

static bool ub_dict_apply_offset(ub_dict *d, ub_offset o)
{
    bool changed = false;
    for (uint32_t i = 0; i < d->n; i++)
        if (ub_value_apply_offset(&d->e[i].value, o))
            changed = true;
    return changed;
}

int ub_samples_apply_offset(ub_arena *a, ub_samples *s, ub_offset o)
{
    (void)a; /* done in place: mapping keeps (or exactly reverses) order */
    uint32_t n = s->n;
    ub_sample *v = s->v;
    for (uint32_t i = 0; i < n; i++) {
        v[i].time = ub_offset_apply(o, v[i].time);
        ub_value_apply_offset(&v[i].value, o);
    }
    bool reverse = o.scale < 0;
    if (reverse)
        for (uint32_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
            ub_sample t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    /* Mapping is monotonic (rounding included), so collisions are runs of
     * equal times.  The sample with the greatest original time wins, as in
     * OpenUSD: the last of a run when time runs forwards, the first when
     * it was reversed. */
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (w > 0 && v[w - 1].time == v[i].time) {
            if (!reverse)
                v[w - 1] = v[i];
            continue;
        }
        v[w++] = v[i];
    }
    s->n = w;
    return 0;
}
