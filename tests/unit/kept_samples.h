/* Test helper: samples kept outside a layer (ub_samples_fn), as flatten's
 * clip bake keeps them in its spill, for the binary writers' tests
 * (test_usdc, test_usdb).  Header-only. */
#ifndef UB_KEPT_SAMPLES_H
#define UB_KEPT_SAMPLES_H

#include <CUnit/Basic.h>
#include <string.h>

#include "ub_layer.h"

/* The source: a layer that holds the samples (its prim `prim`), how
 * often it was asked, and whether it fails. */
typedef struct kept {
    const ub_layer *holder;
    const ub_prim *prim;
    unsigned asked;
    bool fail;
} kept;

/* A ub_samples_fn: attr's samples in the holder, cloned into a. */
static inline int kept_samples(void *ctx, const ub_prop *attr, ub_arena *a,
                               ub_samples *out)
{
    kept *k = ctx;
    k->asked++;
    memset(out, 0, sizeof *out);
    out->authored = true;
    if (k->fail)
        return -1;
    const ub_prop *p = ub_prop_find(k->holder, k->prim, attr->name);
    const ub_samples *s = p ? ub_prop_samples(p) : NULL;
    for (uint32_t i = 0; s && i < s->n; i++)
        if (ub_samples_set(a, out, s->v[i].time,
                           ub_value_clone(a, &s->v[i].value)) != 0)
            return -1;
    return 0;
}

/* Empty the samples of prim's attributes that have them (authored
 * stays): what a bake into a spill leaves in the layer. */
static inline void kept_empty(ub_layer *l, ub_prim *prim)
{
    for (uint32_t i = 0; i < prim->props.n; i++) {
        ub_prop *q = prim->props.v[i];
        if (ub_prop_samples(q)->authored)
            ub_prop_ext_get(l->arena, q)->samples.n = 0;
    }
}

/* A layer of samples of a few kinds, one authored empty (`e`): its prim
 * is "A". */
static const char *const kept_text =
    "#usda 1.0\ndef \"A\"\n{\n"
    "    float a.timeSamples = { 1: 1.5, 2: None, 3: 2.5 }\n"
    "    token[] t.timeSamples = { 0: [\"x\", \"y\"], 4: [] }\n"
    "    double3 d = (1, 2, 3)\n"
    "    double3 d.timeSamples = { 1: (4, 5, 6) }\n"
    "    int e.timeSamples = { }\n"
    "}\n";

#endif
