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
#include "ub_usda.h"

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

#endif
