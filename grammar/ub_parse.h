/*
 * ub_parse — the usda text reader: a reentrant flex scanner and a pure
 * bison parser with locations, building a ub_layer.
 */
#ifndef UB_PARSE_H
#define UB_PARSE_H

#include <stddef.h>

#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_layer.h"

/* Parse text[0..len) (need not be NUL-terminated), read from `path`, into
 * a new layer whose strings are interned in t.  On success returns the
 * layer (its `source` points at text, which the caller keeps alive for as
 * long as it wants later diagnostics to quote lines).  On failure returns
 * NULL and appends at least one located UB_ERROR to diags; no partial layer
 * is ever returned. */
ub_layer *ub_parse_usda(ub_strtab *t, const char *path, const char *text,
                        size_t len, ub_diags *diags);

/* ub_parse_usda for text that is a read-only mapping of a file (mmap,
 * PROT_READ): pages already read are given back to the kernel as parsing
 * goes, so a big layer's text does not stay resident next to its model.
 * The mapping stays valid; a later read of it faults the file back in. */
ub_layer *ub_parse_usda_mapped(ub_strtab *t, const char *path,
                               const char *text, size_t len, ub_diags *diags);

/* Whether text begins like a usda layer ("#usda " or the legacy "#sdf "). */
int ub_parse_is_usda(const char *text, size_t len);

#endif
