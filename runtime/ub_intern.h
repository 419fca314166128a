/*
 * ub_intern — the string table behind tokens, paths and string values.
 *
 * Every name, token, path and string value of every layer in one session is
 * interned in one ub_strtab, so equal strings are the same pointer: the
 * passes compare names with ==, the binary writer deduplicates for free, and
 * flattening several layers into one never copies a name.  The table owns
 * its bytes; it must outlive every layer that uses it.
 */
#ifndef UB_INTERN_H
#define UB_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ub_diag.h"
#include "ub_specloc.h"

typedef struct ub_strtab ub_strtab;

ub_strtab *ub_strtab_new(void);
void ub_strtab_free(ub_strtab *t);

/* A table is used by one thread at a time unless it is made concurrent:
 * then ub_intern (and ub_intern_cstr) may be called from several threads at
 * once; the other functions still need one thread.  Switch it only while no
 * other thread uses t (e.g. before starting the threads and after joining
 * them).  Off by default: a single-threaded user takes no locks.  Calls
 * nest: the table stays concurrent until every `on` has had its `off`, so a
 * split parse inside a worker of a parallel reader does not switch it off
 * under the other workers. */
void ub_strtab_set_concurrent(ub_strtab *t, bool on);

/* The unique copy of s[0..n) (NUL-terminated); NULL when out of memory.
 * Strings may contain NUL bytes: use ub_str_len for their length. */
const char *ub_intern(ub_strtab *t, const char *s, size_t n);
const char *ub_intern_cstr(ub_strtab *t, const char *s);
/* The same, for a caller that has hashed s already: h must be
 * ub_hash_bytes(s, n). */
const char *ub_intern_hashed(ub_strtab *t, uint64_t h, const char *s,
                             size_t n);

/* A copy of s[0..n) (NUL-terminated) that lives as long as t, made
 * without looking for an equal one: for text that is only ever printed and
 * is different each time, such as the locations naming a crate layer's
 * specs, where the hash and the slot would be all cost.  Not interned: never
 * compare it by pointer.  ub_str_len works on it.  NULL when out of
 * memory. */
const char *ub_strtab_keep(ub_strtab *t, const char *s, size_t n);

/* A hash of the bytes s[0..n) (FNV-1a), for tables keyed by strings that
 * are not interned. */
uint64_t ub_hash_bytes(const char *s, size_t n);

/* A hash of an interned string's pointer, for tables keyed by interned
 * names (equal strings are one pointer, so the bytes need no reading). */
static inline uint32_t ub_interned_hash(const char *s)
{
    uint64_t x = (uint64_t)(uintptr_t)s;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* The interned name of the value type with id `id` (a ub_type_id), or
 * NULL for no type.  Interned when the table is made, so that a property
 * whose type name is its type's own need not store it (ub_prop_type_name
 * gives it back from here, as the same pointer). */
const char *ub_strtab_type_name(const ub_strtab *t, unsigned id);

/* The table of the files model records' locations name (ub_sloc).
 * ub_strtab_file_id gives file's index, adding it the first time (files
 * are told apart by pointer, as a location keeps its file's pointer: it
 * must outlive t); 0 for NULL, UB_SLOC_FILE_UNKNOWN when the table is full
 * or out of memory.  ub_strtab_sloc / ub_strtab_loc convert between a
 * location and its stored form (ub_diag.h).  Adding is safe while t is
 * concurrent; reading an index another thread added is, once that
 * thread's record has been handed over. */
uint32_t ub_strtab_file_id(ub_strtab *t, const char *file);
ub_sloc ub_strtab_sloc(ub_strtab *t, ub_loc loc);
ub_loc ub_strtab_loc(const ub_strtab *t, ub_sloc s);

/* A crate layer's path tree, for the locations of its specs
 * (ub_specloc.h, ub_sloc_spec): t takes the arrays of paths over and
 * returns the tree's index, or 0 when t has no room left or memory ran
 * out (the arrays are then still the caller's).  file (the layer's name)
 * must live as long as t.  A tree is dropped with its layer
 * (ub_layer.spec_tree; so a crate layer is freed before its string
 * table, as every layer is): the texts of locations read already stay
 * as long as t; read later, a location gives "(unknown file)".  Indexes
 * are not used again: after 2^20 - 1 trees in one table (crate layers
 * read), a spec's location is its file alone.  Both are safe while t is
 * concurrent. */
uint32_t ub_strtab_add_spec_tree(ub_strtab *t, const char *file,
                                 ub_spec_paths paths);
void ub_strtab_drop_spec_tree(ub_strtab *t, uint32_t tree);

/* Length of an interned string (stored beside it; O(1)). */
size_t ub_str_len(const char *interned);

/* A 32-bit mark beside each string of t (interned or kept), for one user
 * at a time: the crate writer keeps a string's token index there, where
 * a table of its own would cost a cache miss a new name.  The user
 * claims the marks (false: another user holds them, and a table of its
 * own must do), finds every mark 0, sets marks with ub_str_set_mark and
 * reads them with ub_str_mark from one thread at a time -- other threads
 * may intern meanwhile: interning never reads a mark -- and sets each
 * mark it set back to 0 before ub_strtab_mark_release.  Only strings of t
 * may be marked. */
bool ub_strtab_mark_claim(ub_strtab *t);
void ub_strtab_mark_release(ub_strtab *t);

/* (Inline: the writer asks for a mark per name.  The mark is the first of
 * the three words before the string, ub_intern.c.) */
static inline uint32_t ub_str_mark(const char *interned)
{
    uint32_t m;
    memcpy(&m, interned - 3 * sizeof m, sizeof m);
    return m;
}

static inline void ub_str_set_mark(const char *interned, uint32_t mark)
{
    /* the mark is beside the string, not in it: its bytes stay const */
    memcpy((char *)(uintptr_t)(interned - 3 * sizeof mark), &mark,
           sizeof mark);
}

/* Number of distinct strings and bytes held (for reports). */
size_t ub_strtab_count(const ub_strtab *t);
size_t ub_strtab_bytes(const ub_strtab *t);

#endif
