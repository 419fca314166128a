/*
 * ub_names — an ordered set of interned names, the one both the stage
 * composer (a prim's children and properties) and the layer-stack
 * flattener (children, properties, variant sets, registered metadata) use.
 *
 * Names are compared by pointer (ub_intern.h: equal strings are one
 * pointer).  Each name has a slot, the order it was first added in.  v
 * holds the names; the caller may permute v[0..n) at will (a `reorder
 * nameChildren`) and slots stay as they were, so a caller can index its
 * own arrays by slot.  Few names are found by scanning (most prims have a
 * handful of children); from UB_NAMES_HASH_FROM on, through a table of
 * ids (ub_idtab.h: a prim may have 100k).  Out of memory is a return
 * value; nothing here prints or exits.
 *
 * A set is zero-initialised (`ub_names nm = {0};`) and freed with
 * ub_names_free.  It is used by one thread at a time.
 */
#ifndef UB_NAMES_H
#define UB_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "ub_idtab.h"
#include "ub_value.h"

/* Sets with this many names and more are hashed. */
#define UB_NAMES_HASH_FROM 16

typedef struct ub_names {
    const char **v;    /* the names, in the caller's order */
    const char **keys; /* the names by slot: v's block, after its cap */
    uint32_t n, cap;
    ub_idtab tab; /* name -> slot, from UB_NAMES_HASH_FROM names on */
} ub_names;

/* Adds name unless present.  Returns its slot (the first one's, for a
 * name added before), or -1 when out of memory (the set is unchanged). */
int64_t ub_names_add(ub_names *nm, const char *name);

/* The slot of name, or -1 when absent. */
int64_t ub_names_slot(const ub_names *nm, const char *name);

bool ub_names_has(const ub_names *nm, const char *name);

/* Applies `reorder nameChildren` (ub_reorder_names) to v; slots stay.
 * Returns 0, or -1 when out of memory. */
int ub_names_reorder(ub_names *nm, const ub_value *order);

/* Hands v over (*n names; the caller frees it) and leaves nm empty: for a
 * caller that goes on to edit the list as a plain array. */
const char **ub_names_take(ub_names *nm, uint32_t *n);

void ub_names_free(ub_names *nm);

#endif
