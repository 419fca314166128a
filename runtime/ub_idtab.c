/* ub_idtab: growing and freeing; the probe is inline, in the header. */
#include "ub_idtab.h"

/* Take the entry at slot j out and put it back where the probe of a
 * table of cap slots (its hash's bits under cap - 1) finds it. */
static void ub_idtab_replace(ub_idslot *s, size_t cap, size_t j)
{
    ub_idslot e = s[j];
    s[j] = (ub_idslot){0, 0};
    size_t i = (size_t)e.h & (cap - 1);
    while (s[i].id1)
        i = (i + 1) & (cap - 1);
    s[i] = e;
}

bool ub_idtab_grow(ub_idtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    if (cap > ((size_t)1 << 32))
        return false;
    if (!t->cap) {
        /* huge pages for a big table: probes at random then miss the TLB
         * far less */
        if (!(t->s = ub_table_alloc_from(t->pages, cap, sizeof *t->s)))
            return false;
        t->cap = cap;
        return true;
    }
    /* Doubled where it is (ub_table_grow_from: only the new half's pages
     * are new), the entries then moved in place.  An entry's slot in the
     * doubled table is its old home or that plus the old size.  The old
     * slots are taken in order, each entry put back by the new probe:
     * one whose chain does not wrap past the old end lands at or before
     * its old slot (emptied, so the probe stops there), among slots
     * already done, or in the new half, which nothing empties -- so no
     * chain made runs through a slot emptied after.  The entries whose
     * chains wrapped (in the old run of slots from 0, up to the first
     * empty one, wrap) are left for the second step: the slots up to
     * wrap, and the run on from there, which hold every chain through
     * them, are then put back again in order, as a deletion repairs a
     * run. */
    size_t old = t->cap, wrap = 0;
    while (wrap < old && t->s[wrap].id1) /* (at most half full: it ends) */
        wrap++;
    ub_idslot *s = ub_table_grow_from(t->pages, t->s, old, cap, sizeof *s);
    if (!s)
        return false;
    for (size_t j = 0; j < old; j++)
        if (s[j].id1 && ((size_t)s[j].h & (old - 1)) <= j)
            ub_idtab_replace(s, cap, j);
    for (size_t j = 0; j < cap && (j < wrap || s[j].id1); j++)
        if (s[j].id1)
            ub_idtab_replace(s, cap, j);
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
