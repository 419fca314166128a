/* ub_idtab: growing and freeing; the probe is inline, in the header. */
#include "ub_idtab.h"

bool ub_idtab_grow(ub_idtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    if (cap > ((size_t)1 << 32))
        return false;
    /* huge pages for a big table: probes at random then miss the TLB far
     * less */
    ub_idslot *s = ub_table_alloc_from(t->pages, cap, sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->s[i].id1)
            continue;
        size_t j = (size_t)t->s[i].h & (cap - 1);
        while (s[j].id1)
            j = (j + 1) & (cap - 1);
        s[j] = t->s[i];
    }
    ub_table_free_to(t->pages, t->s, t->cap, sizeof *t->s);
    t->s = s;
    t->cap = cap;
    return true;
}

void ub_idtab_free(ub_idtab *t)
{
    ub_table_free(t->s, t->cap, sizeof *t->s);
    *t = (ub_idtab){0};
}

void ub_idtab_free_kept(ub_idtab *t, ub_kept *k)
{
    ub_kept_free(k, t->s, t->cap * sizeof *t->s);
    *t = (ub_idtab){0};
}
