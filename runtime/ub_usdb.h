/*
 * ub_usdb — the consumer library for usdbake binary layers (.usdb,
 * doc/binary-format.md).  Links with libusdbake-runtime alone.
 *
 * Opening maps the file and decodes only its skeleton (strings, the prim
 * and property tree, the record index).  Values live in zstd-compressed
 * chunks that are decompressed, checksum-verified, on first use, so reading
 * one attribute of a large file touches a small part of it.
 *
 * Handles are indices: prims (0 is the pseudo-root), properties, fields
 * and variant sets are numbered from 0 within one open file.  Values come
 * back as ub_value in an arena the caller passes (strings interned in the
 * file's ub_strtab).  Every failure returns -1 (or NULL) after appending
 * an error to the diags given at open, naming the damaged section; a
 * damaged file never crashes the reader.  A value is held to the rules a
 * whole-layer read (ub_usdb_read_layer) holds it to (doc/binary-format.md:
 * an attribute's values of its type, a field's of its shape on its kind
 * of spec, paths the text can say), so each read refuses what that read
 * would refuse.  One ub_usdb is not thread-safe
 * (chunk cache); open one per thread.
 *
 *     ub_usdb *f = ub_usdb_open("shot.usdb", NULL, diags);
 *     uint32_t prim = ub_usdb_find_prim(f, "/World/mesh");
 *     uint32_t prop = ub_usdb_find_prop(f, prim, "points");
 *     ub_value v;
 *     if (ub_usdb_value_at(f, prop, 24.5, arena, &v) == 0) ...
 *     ub_usdb_close(f);
 */
#ifndef UB_USDB_H
#define UB_USDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_arena.h"
#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_layer.h"
#include "ub_value.h"

typedef struct ub_usdb ub_usdb;

#define UB_USDB_NONE UINT32_MAX /* "no such prim/property" */

/* Whether data begins with the .usdb magic (format sniffing). */
bool ub_usdb_sniff(const void *data, size_t len);

/* Open a file by mmap.  t interns the file's strings (NULL: the file
 * makes and owns its own table); diags receives every error of this and
 * every later call on the file, and must outlive it.  NULL on error. */
ub_usdb *ub_usdb_open(const char *path, ub_strtab *t, ub_diags *diags);
/* Open bytes already in memory (kept, not copied: they must outlive the
 * file); name is used in messages. */
ub_usdb *ub_usdb_open_memory(const void *data, size_t len, const char *name,
                             ub_strtab *t, ub_diags *diags);
void ub_usdb_close(ub_usdb *f);

ub_strtab *ub_usdb_strtab(const ub_usdb *f);
/* Decompressed bytes produced so far (skeleton plus chunks touched). */
uint64_t ub_usdb_bytes_decompressed(const ub_usdb *f);
/* Total raw (decompressed) size of every section of the file. */
uint64_t ub_usdb_bytes_raw_total(const ub_usdb *f);

/* The file's sections in file order, for tools and tests: section i's
 * name as errors give it ("SKEL", "DATA chunk 3"), byte offset, stored
 * and raw sizes. */
uint32_t ub_usdb_section_count(const ub_usdb *f);
int ub_usdb_section(const ub_usdb *f, uint32_t i, char name[48],
                    uint64_t *offset, uint64_t *stored, uint64_t *raw);

/* The whole layer as a ub_layer (its path is `path`), verifying every
 * section.  NULL on error. */
ub_layer *ub_usdb_read_layer(ub_usdb *f, const char *path);
/* Convenience for loaders: open data (not kept), read the layer, close. */
ub_layer *ub_usdb_load(ub_strtab *t, const char *path, const void *data,
                       size_t len, ub_diags *diags);

/* --- layer ----------------------------------------------------------------- */

/* Layer metadata: fields [*first, *first + *n). */
void ub_usdb_layer_fields(const ub_usdb *f, uint32_t *first, uint32_t *n);
uint32_t ub_usdb_sublayer_count(const ub_usdb *f);
/* Sublayer i: its asset path, layer offset, and which parts are authored. */
const char *ub_usdb_sublayer(const ub_usdb *f, uint32_t i, ub_offset *off,
                             bool *has_offset, bool *has_scale);

/* --- prims ----------------------------------------------------------------- */

uint32_t ub_usdb_prim_count(const ub_usdb *f);
const char *ub_usdb_prim_name(const ub_usdb *f, uint32_t prim);
ub_specifier ub_usdb_prim_specifier(const ub_usdb *f, uint32_t prim);
/* NULL when not authored. */
const char *ub_usdb_prim_type_name(const ub_usdb *f, uint32_t prim);
/* UB_USDB_NONE for the pseudo-root. */
uint32_t ub_usdb_prim_parent(const ub_usdb *f, uint32_t prim);
uint32_t ub_usdb_prim_child_count(const ub_usdb *f, uint32_t prim);
uint32_t ub_usdb_prim_child(const ub_usdb *f, uint32_t prim, uint32_t i);
uint32_t ub_usdb_prim_prop_count(const ub_usdb *f, uint32_t prim);
uint32_t ub_usdb_prim_prop(const ub_usdb *f, uint32_t prim, uint32_t i);
void ub_usdb_prim_fields(const ub_usdb *f, uint32_t prim, uint32_t *first,
                         uint32_t *n);
/* `reorder nameChildren` / `reorder properties` (EMPTY when none). */
int ub_usdb_prim_orders(ub_usdb *f, uint32_t prim, ub_arena *a,
                        ub_value *prim_order, ub_value *property_order);
/* Variant sets: set i's name and its variants (prim bodies, named by the
 * variant). */
uint32_t ub_usdb_prim_variant_set_count(const ub_usdb *f, uint32_t prim);
const char *ub_usdb_variant_set(const ub_usdb *f, uint32_t prim, uint32_t i,
                                uint32_t *n_variants);
uint32_t ub_usdb_variant(const ub_usdb *f, uint32_t prim, uint32_t set,
                         uint32_t i);
/* The prim at an absolute path ("/World/a"; variant bodies as
 * "/A{set=v}B"), or UB_USDB_NONE. */
uint32_t ub_usdb_find_prim(const ub_usdb *f, const char *path);

/* --- properties ------------------------------------------------------------ */

const char *ub_usdb_prop_name(const ub_usdb *f, uint32_t prop);
ub_prop_kind ub_usdb_prop_kind(const ub_usdb *f, uint32_t prop);
/* The declared type (NULL when unknown or a relationship), the type name
 * as authored, and whether it is an array type. */
const ub_type *ub_usdb_prop_type(const ub_usdb *f, uint32_t prop);
const char *ub_usdb_prop_type_name(const ub_usdb *f, uint32_t prop);
bool ub_usdb_prop_is_array(const ub_usdb *f, uint32_t prop);
ub_variability ub_usdb_prop_variability(const ub_usdb *f, uint32_t prop);
bool ub_usdb_prop_custom(const ub_usdb *f, uint32_t prop);
void ub_usdb_prop_fields(const ub_usdb *f, uint32_t prop, uint32_t *first,
                         uint32_t *n);
/* The property named name of prim, or UB_USDB_NONE. */
uint32_t ub_usdb_find_prop(const ub_usdb *f, uint32_t prim, const char *name);

/* The default value (EMPTY when none, BLOCK for `= None`). */
int ub_usdb_prop_default(ub_usdb *f, uint32_t prop, ub_arena *a,
                         ub_value *out);
/* Relationship targets / attribute connections (a LISTOP, or EMPTY). */
int ub_usdb_prop_targets(ub_usdb *f, uint32_t prop, ub_arena *a,
                         ub_value *out);
int ub_usdb_prop_connections(ub_usdb *f, uint32_t prop, ub_arena *a,
                             ub_value *out);

/* Time samples: their number and times (ascending; *times lives in a and
 * is NULL when n is 0), and sample i's value. */
int ub_usdb_sample_times(ub_usdb *f, uint32_t prop, ub_arena *a,
                         const double **times, uint32_t *n);
int ub_usdb_sample(ub_usdb *f, uint32_t prop, uint32_t i, ub_arena *a,
                   ub_value *out);

/* The attribute's value at `time`, resolved as OpenUSD resolves one layer
 * with the stage's default (linear) interpolation:
 *  - no samples: the default value (EMPTY when there is none);
 *  - before the first / after the last sample: that sample's value;
 *  - at a sample (within 1e-6 of a bracketing pair): that sample;
 *  - between two samples: linear interpolation for types whose
 *    ub_type.interpolates is set (quaternions by slerp), evaluated with
 *    OpenUSD's precision per type; arrays of different lengths, other
 *    types, and an upper sample that is a block hold the lower value;
 *  - the lower sample is a block: a BLOCK value (no value).
 * Only the one or two samples needed are decoded. */
int ub_usdb_value_at(ub_usdb *f, uint32_t prop, double time, ub_arena *a,
                     ub_value *out);

/* --- fields (metadata) ----------------------------------------------------- */

const char *ub_usdb_field_key(const ub_usdb *f, uint32_t field);
int ub_usdb_field_value(ub_usdb *f, uint32_t field, ub_arena *a,
                        ub_value *out);

/* --- interpolation on the value model ---------------------------------------- */

/* The value of in-memory samples at time, by the rules of
 * ub_usdb_value_at (held: always hold the lower sample, as OpenUSD's
 * Held interpolation does).  With no samples *out is EMPTY.  Returns -1
 * only when out of memory. */
int ub_samples_value_at(const ub_samples *s, double time, bool held,
                        ub_arena *a, ub_value *out);

/* Linear interpolation between lo and hi at alpha in [0, 1] for one
 * interpolating type (both DATA of the same type and count); quaternions
 * slerp. */
int ub_value_lerp(const ub_value *lo, const ub_value *hi, double alpha,
                  ub_arena *a, ub_value *out);

#endif
