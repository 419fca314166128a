/*
 * ub_names — an ordered set of interned names (see ub_names.h).
 *
 * The slots must survive the caller's permuting of v, so the names are
 * also kept by slot, in the second half of v's block: a slot is an index
 * there, and the table (from UB_NAMES_HASH_FROM names on) maps a name to
 * it as a ub_idtab does any key to the index of the owner's entry.
 */
#include "ub_names.h"

#include <stdlib.h>
#include <string.h>

#include "ub_intern.h"

/* v's block holds 2 * cap names */
#define UB_NAMES_MAX ((uint32_t)1 << 30)

static bool ub_names_eq(const void *ctx, uint32_t slot, const void *name)
{
    return ((const ub_names *)ctx)->keys[slot] == name;
}

int64_t ub_names_slot(const ub_names *nm, const char *name)
{
    if (nm->tab.cap) {
        uint32_t slot = ub_idtab_get(&nm->tab, ub_interned_hash(name),
                                     ub_names_eq, nm, name);
        return slot == UINT32_MAX ? -1 : (int64_t)slot;
    }
    for (uint32_t i = 0; i < nm->n; i++)
        if (nm->keys[i] == name)
            return i;
    return -1;
}

bool ub_names_has(const ub_names *nm, const char *name)
{
    return ub_names_slot(nm, name) >= 0;
}

/* Room for one more name in v and keys; -1 when out of memory. */
static int ub_names_room(ub_names *nm)
{
    if (nm->n < nm->cap)
        return 0;
    if (nm->cap >= UB_NAMES_MAX)
        return -1;
    uint32_t cap = nm->cap ? nm->cap * 2 : 16;
    const char **b = malloc(2 * (size_t)cap * sizeof *b);
    if (!b)
        return -1;
    if (nm->n) {
        memcpy(b, nm->v, nm->n * sizeof *b);
        memcpy(b + cap, nm->keys, nm->n * sizeof *b);
    }
    free(nm->v);
    nm->v = b;
    nm->keys = b + cap;
    nm->cap = cap;
    return 0;
}

/* Enter the first n names by slot in the table: the set has just grown to
 * be hashed.  -1 when out of memory, with no table. */
static int ub_names_index(ub_names *nm, uint32_t n)
{
    for (uint32_t s = 0; s < n; s++) {
        uint64_t h = ub_interned_hash(nm->keys[s]);
        ub_idslot *sl = ub_idtab_find(&nm->tab, h, ub_names_eq, nm,
                                      nm->keys[s]);
        if (!sl) {
            ub_idtab_free(&nm->tab);
            return -1;
        }
        ub_idtab_put(&nm->tab, sl, h, s);
    }
    return 0;
}

int64_t ub_names_add(ub_names *nm, const char *name)
{
    uint64_t h = ub_interned_hash(name);
    ub_idslot *sl = NULL;
    if (nm->tab.cap) {
        /* one probe finds the name or the place for it */
        if (!(sl = ub_idtab_find(&nm->tab, h, ub_names_eq, nm, name)))
            return -1;
        if (ub_idslot_used(sl))
            return ub_idslot_id(sl);
    } else {
        int64_t slot = ub_names_slot(nm, name);
        if (slot >= 0)
            return slot;
    }
    if (ub_names_room(nm) != 0)
        return -1;
    uint32_t slot = nm->n;
    nm->keys[slot] = name;
    if (sl)
        ub_idtab_put(&nm->tab, sl, h, slot);
    else if (slot + 1 >= UB_NAMES_HASH_FROM &&
             ub_names_index(nm, slot + 1) != 0)
        return -1;
    nm->v[nm->n++] = name;
    return slot;
}

int ub_names_reorder(ub_names *nm, const ub_value *order)
{
    return ub_reorder_names(nm->v, nm->n, order);
}

const char **ub_names_take(ub_names *nm, uint32_t *n)
{
    const char **v = nm->v;
    *n = nm->n;
    nm->v = NULL;
    ub_names_free(nm);
    return v;
}

void ub_names_free(ub_names *nm)
{
    free(nm->v);
    ub_idtab_free(&nm->tab);
    *nm = (ub_names){0};
}
