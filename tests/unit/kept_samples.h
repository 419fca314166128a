/* Test helper: samples kept outside a layer (ub_samples_fn), as flatten's
 * clip bake keeps them in its spill, for the binary writers' tests
 * (test_usdc, test_usdb), and the check both run.  Header-only. */
#ifndef UB_KEPT_SAMPLES_H
#define UB_KEPT_SAMPLES_H

#include <CUnit/Basic.h>
#include <string.h>

#include "ub_layer.h"
#include "ub_parse.h"

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

/* A binary writer under test: write l to out, asking fn (ctx) for the
 * samples it keeps elsewhere (fn NULL: the layer holds them all). */
typedef int (*kept_writer)(const ub_layer *l, ub_samples_fn fn, void *ctx,
                           ub_buf *out, ub_diags *d);

/* An attribute whose samples wait outside the layer is written as if the
 * layer held them; the writer asks once for each such attribute and never
 * for others (the layer holding its samples asks only for the one
 * authored empty); a source that fails fails the write, with no error of
 * the writer's. */
static inline void kept_check(ub_strtab *t, kept_writer write)
{
    ub_diags *d = ub_diags_new();
    ub_layer *holder = ub_parse_usda(t, "t.usda", kept_text,
                                     strlen(kept_text), d);
    ub_layer *l = ub_parse_usda(t, "t.usda", kept_text, strlen(kept_text), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(holder);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    const char *a = ub_intern_cstr(t, "A");
    ub_prim *hp = ub_prim_find_child(holder, holder->root, a);
    ub_prim *p = ub_prim_find_child(l, l->root, a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(hp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    ub_buf want, got;
    ub_buf_init(&want);
    ub_buf_init(&got);
    CU_ASSERT_EQUAL_FATAL(write(holder, NULL, NULL, &want, d), 0);
    kept_empty(l, p);
    kept k = {holder, hp, 0, false};
    CU_ASSERT_EQUAL(write(l, kept_samples, &k, &got, d), 0);
    CU_ASSERT(got.len == want.len && memcmp(got.data, want.data, got.len) == 0);
    CU_ASSERT_EQUAL(k.asked, 4); /* a, t, d, e: each once */

    k.asked = 0;
    got.len = 0;
    CU_ASSERT_EQUAL(write(holder, kept_samples, &k, &got, d), 0);
    CU_ASSERT(got.len == want.len && memcmp(got.data, want.data, got.len) == 0);
    CU_ASSERT_EQUAL(k.asked, 1); /* e: authored and empty */
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);

    k.fail = true;
    got.len = 0;
    CU_ASSERT_EQUAL(write(l, kept_samples, &k, &got, d), -1);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);

    ub_buf_free(&want);
    ub_buf_free(&got);
    ub_layer_free(holder);
    ub_layer_free(l);
    ub_diags_free(d);
}

#endif
