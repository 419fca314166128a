/*
 * ub_usdz — the entries of a usdz package (read-only).
 *
 * A usdz package is a zip archive whose entries are stored uncompressed
 * (and 64-byte aligned), so an entry's bytes are a slice of the package's
 * bytes: nothing is copied or inflated.  Its first entry is the package's
 * root layer.  Entries are found by walking the local file headers from
 * the start, as OpenUSD's reader does; the central directory is not
 * needed.  Every header and size is checked against the buffer, so a
 * damaged package is an error value, never a read out of bounds.
 *
 * Pure functions over a byte buffer: no I/O, no allocation.
 */
#ifndef UB_USDZ_H
#define UB_USDZ_H

#include <stdbool.h>
#include <stddef.h>

/* One stored entry: its name (not NUL-terminated) and its bytes, slices of
 * the package buffer. */
typedef struct ub_usdz_entry {
    const char *name;
    size_t name_len;
    const char *data;
    size_t len;
    size_t header_offset; /* of its local file header in the package */
} ub_usdz_entry;

/* True when the bytes start like a zip archive (a local file header). */
bool ub_usdz_sniff(const char *data, size_t len);

/* The entry at *pos (start with *pos = 0); advances *pos past it.
 * Returns 1 with *e filled, 0 at the end of the entries (the central
 * directory or the end of the buffer), or -1 with *why set to a static
 * description of what is wrong (a truncated header, a compressed or
 * encrypted entry, sizes past the end). */
int ub_usdz_next(const char *data, size_t len, size_t *pos, ub_usdz_entry *e,
                 const char **why);

/* The entry named `name` (exact, name_len bytes), or the first entry when
 * name is NULL.  Returns 1 found, 0 not there, -1 damaged (as
 * ub_usdz_next; entries before the damage are still searched). */
int ub_usdz_find(const char *data, size_t len, const char *name,
                 size_t name_len, ub_usdz_entry *e, const char **why);

#endif
