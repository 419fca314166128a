/*
 * ub_names — an ordered set of interned names (see ub_names.h).
 *
 * The slots must survive the caller's permuting of v, so they are kept
 * apart from v.  Below UB_NAMES_HASH_FROM names that costs no memory: the
 * names taken by address are an order the caller cannot disturb, and
 * rank_slot holds, in its nibble r, the slot of the name with the r-th
 * lowest address.  From there on, one block holds the names by slot and an
 * open-addressing table of slots (linear probing, at most half full): at
 * four bytes a bucket, both together take what a table of names alone
 * would.
 */
#include "ub_names.h"

#include <stdlib.h>
#include <string.h>

#include "ub_intern.h"

/* hcap (four buckets a name at most) stays within uint32_t */
#define UB_NAMES_MAX ((uint32_t)1 << 29)

static uint32_t *ub_names_table(const ub_names *nm)
{
    return (uint32_t *)(nm->by.keys + nm->hcap / 2);
}

/* How many of the first n names of v lie below name in memory. */
static uint32_t ub_names_rank(const char *const *v, uint32_t n,
                              const char *name)
{
    uint32_t r = 0;
    for (uint32_t i = 0; i < n; i++)
        r += (uintptr_t)v[i] < (uintptr_t)name;
    return r;
}

static uint32_t ub_names_rank_slot(const ub_names *nm, uint32_t rank)
{
    return (uint32_t)(nm->by.rank_slot >> (4 * rank)) & 15;
}

/* The bucket holding name, or the empty one it would go in. */
static uint32_t ub_names_bucket(const ub_names *nm, const char *name)
{
    const uint32_t *t = ub_names_table(nm), mask = nm->hcap - 1;
    uint32_t k = ub_interned_hash(name) & mask;
    while (t[k] && nm->by.keys[t[k] - 1] != name)
        k = (k + 1) & mask;
    return k;
}

/* A table for `need` names (the first table, or one twice as large). */
static int ub_names_grow(ub_names *nm, uint32_t need)
{
    uint32_t hcap = 64;
    while (hcap < need * 4)
        hcap *= 2;
    /* a name and two buckets for each name it can hold */
    const char **keys = calloc(hcap / 2, sizeof *keys + 2 * sizeof(uint32_t));
    if (!keys)
        return -1;
    if (nm->hcap) {
        memcpy(keys, nm->by.keys, nm->n * sizeof *keys);
        free(nm->by.keys);
    } else {
        for (uint32_t i = 0; i < nm->n; i++)
            keys[ub_names_rank_slot(nm, ub_names_rank(nm->v, nm->n,
                                                      nm->v[i]))] = nm->v[i];
    }
    nm->by.keys = keys;
    nm->hcap = hcap;
    uint32_t *t = ub_names_table(nm);
    for (uint32_t s = 0; s < nm->n; s++)
        t[ub_names_bucket(nm, keys[s])] = s + 1;
    return 0;
}

int64_t ub_names_slot(const ub_names *nm, const char *name)
{
    if (nm->hcap) {
        uint32_t k = ub_names_bucket(nm, name);
        return (int64_t)ub_names_table(nm)[k] - 1;
    }
    if (!ub_names_has(nm, name))
        return -1;
    return ub_names_rank_slot(nm, ub_names_rank(nm->v, nm->n, name));
}

bool ub_names_has(const ub_names *nm, const char *name)
{
    if (nm->hcap)
        return ub_names_table(nm)[ub_names_bucket(nm, name)] != 0;
    for (uint32_t i = 0; i < nm->n; i++)
        if (nm->v[i] == name)
            return true;
    return false;
}

int64_t ub_names_add(ub_names *nm, const char *name)
{
    int64_t slot = ub_names_slot(nm, name);
    if (slot >= 0)
        return slot;
    if (nm->n == UB_NAMES_MAX)
        return -1;
    if (nm->n == nm->cap) {
        uint32_t cap = nm->cap ? nm->cap * 2 : 16;
        const char **v = realloc(nm->v, cap * sizeof *v);
        if (!v)
            return -1;
        nm->v = v;
        nm->cap = cap;
    }
    uint32_t need = nm->n + 1;
    if ((nm->hcap ? need * 2 >= nm->hcap : need >= UB_NAMES_HASH_FROM) &&
        ub_names_grow(nm, need) != 0)
        return -1;
    if (nm->hcap) {
        ub_names_table(nm)[ub_names_bucket(nm, name)] = need;
        nm->by.keys[nm->n] = name;
    } else {
        /* the new slot's nibble goes in at the name's rank */
        uint32_t r = ub_names_rank(nm->v, nm->n, name);
        uint64_t below = ((uint64_t)1 << (4 * r)) - 1, rs = nm->by.rank_slot;
        nm->by.rank_slot = (rs & below) | (rs & ~below) << 4 |
                           (uint64_t)nm->n << (4 * r);
    }
    nm->v[nm->n] = name;
    return nm->n++;
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
    if (nm->hcap)
        free(nm->by.keys);
    *nm = (ub_names){0};
}
