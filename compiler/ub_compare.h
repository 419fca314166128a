/*
 * ub_compare — semantic comparison of two layers, as the conformance
 * corpus judges usdbake against OpenUSD: the same prims in the same order,
 * the same specifiers, type names, metadata, properties, defaults and time
 * samples, values equal after parsing to their declared type.  Layout
 * (whitespace, comments, the order writers impose on metadata and
 * dictionary keys) does not matter; order that is part of the scene
 * description (prims, properties, list-op items, array elements) does.
 *
 * The differences are returned as values; the caller decides whether and
 * how to print them.
 */
#ifndef UB_COMPARE_H
#define UB_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "ub_diag.h"
#include "ub_layer.h"

/* One difference: where (a prim or property path, "" for the layer
 * itself) and what ("default differs: element 3: 1.5 vs 2").  Locations
 * point into the two layers' sources; line 0 when there is none. */
typedef struct ub_difference {
    const char *path;
    const char *message;
    ub_loc loc_a, loc_b;
} ub_difference;

typedef struct ub_differences ub_differences;

ub_differences *ub_differences_new(void);
void ub_differences_free(ub_differences *d);
size_t ub_differences_count(const ub_differences *d);
const ub_difference *ub_differences_at(const ub_differences *d, size_t i);

typedef struct ub_compare_opts {
    /* Relative tolerance for floating-point components, sample times and
     * layer offsets; 0 compares exactly (NaN equals NaN). */
    double rel_tol;
    /* Stop after this many differences (0: no limit). */
    size_t max_differences;
    /* Root prims /Flattened_Prototype_N (UsdStage::Flatten's prototypes,
     * numbered in an order OpenUSD does not keep from run to run) match
     * whatever their numbers: each layer's are paired in the order the
     * other prims reach them, and paths into them compare renamed. */
    bool any_prototype_numbers;
} ub_compare_opts;

/* Compare layer a with layer b, appending what differs to out.  Both
 * layers must share one string table (strings are compared by pointer).
 * Returns the number of differences found (0: semantically equal), or -1
 * when out of memory or the layers do not share a string table. */
long ub_compare_layers(const ub_layer *a, const ub_layer *b,
                       const ub_compare_opts *opts, ub_differences *out);

#endif
