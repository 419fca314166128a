/*
 * ub_ident — the names a path may hold, as OpenUSD checks them: prim
 * names (UTF-8 identifiers, XID_Start XID_Continue*), property names
 * (identifiers joined by ':') and variant names.  The usda reader checks
 * what it reads with these, and so do the binary readers, whose names
 * come from a table of strings that damage can make anything.
 */
#ifndef UB_IDENT_H
#define UB_IDENT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the n bytes at s are an identifier. */
bool ub_ident_ok(const char *s, size_t n);
/* Whether they are identifiers joined by ':' (a property name). */
bool ub_ident_ns_ok(const char *s, size_t n);
/* Whether they are a variant or variant set name. */
bool ub_ident_variant_ok(const char *s, size_t n);

#endif
