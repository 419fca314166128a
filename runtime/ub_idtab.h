/*
 * ub_idtab — a hash table of uint32 ids into an array its owner keeps.
 *
 * The table holds no keys: a slot is the key's hash (its low 32 bits) and
 * the id + 1, and the owner's equality tells whether id's entry is the key
 * sought.  8 bytes a slot, so that a probe of a table far bigger than the
 * cache costs one miss; the keys live once, in the owner's array, which
 * the owner needs anyway (a writer numbers what it writes).
 *
 * Lookup and insertion are one probe: ub_idtab_find gives the slot of the
 * key, or the empty slot where it belongs, and ub_idtab_put fills that
 * slot before the table is probed again; ub_idtab_get only looks up.
 * The probe is inline, so that each owner's equality is inlined into it:
 * the writers' walks spend their time here.
 */
#ifndef UB_IDTAB_H
#define UB_IDTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_arena.h"

typedef struct ub_idslot {
    uint32_t h;   /* the key's hash, low 32 bits */
    uint32_t id1; /* id + 1; 0: empty */
} ub_idslot;

typedef struct ub_idtab {
    ub_idslot *s; /* cap slots, cap a power of two (0 before the first) */
    size_t cap, n;
    /* where a bigger table takes its pages first (ub_pages.h; NULL: new
     * ones), set by the owner */
    struct ub_pages *pages;
} ub_idtab;

/* Whether the entry numbered id is key. */
typedef bool (*ub_idtab_eq)(const void *ctx, uint32_t id, const void *key);

/* Double the table (256 slots the first time); false when out of memory
 * or past 2^32 slots (the hash's 32 bits place a slot), the table then
 * unchanged.  Most owners leave this to ub_idtab_find. */
bool ub_idtab_grow(ub_idtab *t);
/* Empty the table and give its slots back. */
void ub_idtab_free(ub_idtab *t);
/* The same, its slots' block kept in k (ub_kept_free) for what comes
 * next. */
void ub_idtab_free_kept(ub_idtab *t, ub_kept *k);

static inline bool ub_idslot_used(const ub_idslot *s) { return s->id1 != 0; }
static inline uint32_t ub_idslot_id(const ub_idslot *s) { return s->id1 - 1; }

/* The slot of the key whose hash is h (eq decides), or the empty slot
 * where it belongs, in a table that has slots and an empty one. */
static inline ub_idslot *ub_idtab_probe(const ub_idtab *t, uint64_t h,
                                        ub_idtab_eq eq, const void *ctx,
                                        const void *key)
{
    uint32_t h32 = (uint32_t)h;
    size_t mask = t->cap - 1;
    for (size_t j = h32 & mask;; j = (j + 1) & mask) {
        ub_idslot *s = &t->s[j];
        if (!s->id1 || (s->h == h32 && eq(ctx, s->id1 - 1, key)))
            return s;
    }
}

/* The slot of the key whose hash is h (eq decides), or the empty slot
 * where it belongs; NULL when out of memory.  The table is grown first
 * when one more key would fill it past half: a probe that misses, the
 * common case while a table fills, then walks ~2.5 slots. */
static inline ub_idslot *ub_idtab_find(ub_idtab *t, uint64_t h,
                                       ub_idtab_eq eq, const void *ctx,
                                       const void *key)
{
    if ((t->n + 1) * 2 > t->cap && !ub_idtab_grow(t))
        return NULL;
    return ub_idtab_probe(t, h, eq, ctx, key);
}

/* The id of the key whose hash is h, or UINT32_MAX (never an id) when it
 * is not there.  It never grows the table, so an owner done filling it
 * can look up through a const pointer, or from several threads. */
static inline uint32_t ub_idtab_get(const ub_idtab *t, uint64_t h,
                                    ub_idtab_eq eq, const void *ctx,
                                    const void *key)
{
    if (!t->cap)
        return UINT32_MAX;
    const ub_idslot *s = ub_idtab_probe(t, h, eq, ctx, key);
    return ub_idslot_used(s) ? ub_idslot_id(s) : UINT32_MAX;
}

/* Enter id for the key of hash h in s, the empty slot ub_idtab_find
 * gave for it. */
static inline void ub_idtab_put(ub_idtab *t, ub_idslot *s, uint64_t h,
                                uint32_t id)
{
    s->h = (uint32_t)h;
    s->id1 = id + 1;
    t->n++;
}

#endif
