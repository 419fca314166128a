/*
 * ub_specloc — the text of a path of a crate layer's path tree, and the
 * locations of its specs.  A crate layer has no lines: a diagnostic names
 * the spec, as "file:</World/a.size>".  Made for every spec of a layer,
 * those texts were a fifth of its model (50 MB for the 761,370 specs of a
 * 100 MB prim-heavy layer); so the reader hands its path tree over to the
 * string table instead (ub_strtab_add_spec_tree, ub_intern.h), a spec's
 * location is the tree and the path in 8 bytes, and the text is made only
 * when a location is read.
 */
#ifndef UB_SPECLOC_H
#define UB_SPECLOC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_arena.h"

/* A path's last element: the root, a prim's child, a property, a variant
 * selection "{set=sel}", a target "[path]" of a property, or a relational
 * attribute ".name" of a target.  The low 3 bits of a kind byte; the
 * rest is the reader's. */
enum {
    UB_PK_ROOT = 1,
    UB_PK_CHILD,
    UB_PK_PROP,
    UB_PK_VARIANT,
    UB_PK_TARGET,
    UB_PK_RELATTR
};
#define UB_PK_KIND(m) ((m) & 7u)

/* A path tree: path i's parent, element (a token's index, UINT32_MAX
 * for none) and kind byte (0: no item gave the path), for i < n; every
 * parent and element index in range. */
typedef struct ub_spec_paths {
    uint32_t *parent;
    uint32_t *elem;
    uint8_t *kind;
    const char **tok; /* interned; ntok of them */
    uint64_t n, ntok;
} ub_spec_paths;

/* ub_specloc_text's failures besides -1 (out of memory). */
enum { UB_SPECLOC_DEEP = 1, UB_SPECLOC_LONG = 2 };

/* Path i's text between pre and post ("" for a path no item gave, as
 * OpenUSD's empty path) in *buf (grown with realloc; *cap its size), *len
 * bytes, NUL-terminated.  0, -1 when out of memory, UB_SPECLOC_DEEP when
 * the path has more than max_depth elements above the root (a cycle
 * has), or UB_SPECLOC_LONG when its elements' text is longer than
 * max_len bytes. */
int ub_specloc_text(const ub_spec_paths *p, uint64_t i, const char *pre,
                    const char *post, uint32_t max_depth, size_t max_len,
                    char **buf, size_t *cap, size_t *len);

/* A tree handed over (ub_strtab_add_spec_tree): its paths and file,
 * and the texts made so far.  The file must outlive the tree. */
typedef struct ub_spec_tree ub_spec_tree;
ub_spec_tree *ub_spec_tree_new(const char *file, ub_spec_paths paths);
/* Frees the tree, and the arrays of its paths when with_paths. */
void ub_spec_tree_free(ub_spec_tree *tr, bool with_paths);
/* "file:</path>" for path i, made once and kept in `keep` (which must
 * outlive every reader of the text, not the tree); the file's name alone
 * when out of memory or when the path cannot be written.  The caller
 * serializes calls on one tree. */
const char *ub_spec_tree_loc(ub_spec_tree *tr, uint64_t i, ub_arena *keep);
#endif
