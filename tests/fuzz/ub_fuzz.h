/*
 * ub_fuzz — what the fuzz targets share: comparing canonical texts, and
 * checking that a layer read back from a writer's bytes prints as the
 * layer it was written from.  Each target is one program (run.sh builds
 * tests/fuzz/fuzz_NAME.c alone with the library), so these are inline.
 */
#ifndef UB_FUZZ_H
#define UB_FUZZ_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ub_buf.h"
#include "ub_layer.h"
#include "ub_parse.h"
#include "ub_usda.h"
#include "ub_value.h"

static inline bool ub_fuzz_same(const ub_buf *a, const ub_buf *b)
{
    return a->len == b->len &&
           (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* The canonical text of L into out; aborts when the writer fails (only
 * out of memory, which fuzz inputs are too small for). */
static inline void ub_fuzz_canonical(const ub_layer *L, ub_buf *out)
{
    if (ub_usda_write(L, out) != 0 || out->failed)
        abort();
}

/* back, what a reader made of a writer's bytes, must exist and print as
 * text, the canonical text of the layer written; then it is freed. */
static inline void ub_fuzz_check_back(ub_layer *back, const ub_buf *text)
{
    if (!back)
        abort(); /* what a writer wrote, its reader must read */
    ub_buf again;
    ub_buf_init(&again);
    ub_fuzz_canonical(back, &again);
    if (!ub_fuzz_same(text, &again))
        abort();
    ub_buf_free(&again);
    ub_layer_free(back);
}

/* Whether the untyped value u has an atom: text a binary layer may hold
 * as OpenUSD recorded it, unchecked. */
static inline bool ub_fuzz_has_atom(const ub_untyped *u)
{
    if (u->kind == UB_U_ATOM)
        return true;
    for (uint32_t i = 0; i < u->n; i++)
        if (ub_fuzz_has_atom(&u->child[i]))
            return true;
    return false;
}

/* Whether v may hold text OpenUSD recorded for a value it did not know
 * (an untyped value with an atom, or a list op of such values); the
 * other untyped values are held to the text's shapes (ub_untyped_fault). */
static inline bool ub_fuzz_unregistered(const ub_value *v)
{
    return (v->kind == UB_V_UNTYPED && ub_fuzz_has_atom(v->u.untyped)) ||
           (v->kind == UB_V_LISTOP && !ub_value_type(v));
}

/* A layer offset or scale of +inf, which a binary layer may hold as the
 * text reader makes one (of `1e400`, warning), prints as `inf`, which no
 * usda reader reads in a layer offset (OpenUSD's neither; `-inf` reads):
 * made finite, so that the rest of the layer is still checked. */
static inline void ub_fuzz_finite_offset(ub_offset *o)
{
    if (!ub_offset_num_reads(o->offset))
        o->offset = 0.0;
    if (!ub_offset_num_reads(o->scale))
        o->scale = 1.0;
}

/* The same for every reference or payload of v (a list of them, or a
 * list op's parts). */
static inline void ub_fuzz_finite_refs(ub_value *v)
{
    if (v->kind == UB_V_LISTOP) {
        for (int p = 0; p < UB_LO_NPARTS; p++) {
            ub_value *x = ub_listop_get_mut(v->u.listop, (ub_listop_part)p);
            if (x)
                ub_fuzz_finite_refs(x);
        }
        return;
    }
    const ub_type *t = ub_value_type(v);
    if (v->kind != UB_V_DATA || !t || t->scalar != UB_SC_REF)
        return;
    ub_reference *r = ub_value_data(v);
    for (uint32_t i = 0; i < v->count; i++)
        ub_fuzz_finite_offset(&r[i].offset);
}

static inline void ub_fuzz_drop_fields(ub_fields *f)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < f->n; i++)
        if (!ub_fuzz_unregistered(&f->v[i].value)) {
            ub_fuzz_finite_refs(&f->v[i].value);
            f->v[k++] = f->v[i];
        }
    f->n = k;
}

/* Drop every unregistered value from p and what it holds, and make its
 * layer offsets finite. */
static inline void ub_fuzz_drop_prim(ub_prim *p)
{
    ub_fuzz_drop_fields(&p->meta);
    for (uint32_t i = 0; i < p->props.n; i++) {
        ub_prop *q = p->props.v[i];
        if (q->ext_part >= UB_PEXT_SHORT)
            ub_fuzz_drop_fields(&q->ext->meta);
        if (ub_fuzz_unregistered(&q->default_value))
            q->default_value = (ub_value){.kind = UB_V_EMPTY};
        if (q->ext_part == UB_PEXT_WHOLE) {
            ub_samples *s = &q->ext->samples;
            uint32_t k = 0;
            for (uint32_t j = 0; j < s->n; j++)
                if (!ub_fuzz_unregistered(&s->v[j].value))
                    s->v[k++] = s->v[j];
            s->n = k;
        }
    }
    for (uint32_t i = 0; i < ub_prim_n_variant_sets(p); i++) {
        ub_variant_set *vs = &ub_prim_variant_sets(p)[i];
        for (uint32_t j = 0; j < vs->variants.n; j++)
            ub_fuzz_drop_prim(vs->variants.v[j]);
    }
    for (uint32_t i = 0; i < p->children.n; i++)
        ub_fuzz_drop_prim(p->children.v[i]);
}

/* With UB_FUZZ_TEXT_READS set in the environment: L, a layer a binary
 * reader made, must print as text the usda reader reads, since a binary
 * layer holds what the text can say or its reader refuses it
 * (doc/usdc.md).  (Not that the text prints the same again: OpenUSD's
 * own does not always, and usdbake's matches it there, as a matrix in an
 * unknown field.)  Unregistered values (ub_fuzz_unregistered) are
 * dropped first, and L with them: they are kept as the text OpenUSD
 * recorded, unchecked, and printed as OpenUSD prints them, so damage
 * there prints text the usda reader refuses (a list op's item `200d`),
 * as OpenUSD's does.  Layer offsets of +inf are made finite first
 * (ub_fuzz_finite_offset).  CI sets it (.ci/run); runs by hand that explore
 * with fresh seeds set it too. */
static inline void ub_fuzz_text_reads(ub_strtab *t, ub_layer *L)
{
    if (!getenv("UB_FUZZ_TEXT_READS"))
        return;
    ub_fuzz_drop_fields(&L->meta);
    for (uint32_t i = 0; i < L->n_sublayers; i++)
        ub_fuzz_finite_offset(&L->sublayers[i].offset);
    ub_fuzz_drop_prim(L->root);
    ub_buf text;
    ub_buf_init(&text);
    ub_fuzz_canonical(L, &text);
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda(t, "fuzz.usda", (const char *)text.data,
                                text.len, d);
    if (!l)
        abort();
    ub_layer_free(l);
    ub_diags_free(d);
    ub_buf_free(&text);
}

#endif
