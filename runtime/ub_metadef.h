/*
 * ub_metadef — the metadata fields the usda text knows: the fields it
 * types, and the shape each has in the model
 * (runtime/ub_layer.h).  The usda reader reads a field's value by the type
 * this table gives it; the binary readers (crate, .usdb), whose fields
 * and values come from a file that damage can make anything, hold each
 * field they keep to the same table (ub_metadef_check), so that what they
 * build prints as text the usda reader reads back as the same layer.
 */
#ifndef UB_METADEF_H
#define UB_METADEF_H

#include <stdbool.h>
#include <stddef.h>

#include "ub_value.h"

/* What a metadata block belongs to (OpenUSD's spec types). */
typedef enum ub_spec_kind {
    UB_SPEC_LAYER, UB_SPEC_PRIM, UB_SPEC_ATTR, UB_SPEC_REL
} ub_spec_kind;

/* A field's specs, as a set: UB_MD_ON(UB_SPEC_PRIM) | ... */
#define UB_MD_ON(spec) (1u << (spec))

typedef enum ub_metadef_kind {
    UB_MD_UNKNOWN = 0,  /* read as unknown metadata (an untyped value) */
    UB_MD_TYPED,        /* a value of `type` (an array when `array`) */
    UB_MD_DICT,         /* a dictionary */
    UB_MD_LISTOP,       /* a list op of `type` */
} ub_metadef_kind;

typedef struct ub_metadef {
    const char *key;
    unsigned specs;     /* UB_MD_ON bits */
    ub_metadef_kind kind;
    ub_type_id type;
    bool array;
} ub_metadef;

/* The field `key` of the fields OpenUSD 24.08 types with the plugins
 * usdcat loads, on a spec of this kind; NULL when it types none there.
 * (Fields with a syntax of their own, as `references`, are not here.) */
const ub_metadef *ub_metadef_find(const char *key, ub_spec_kind spec);

/* Whether `key` is a field of such a spec that the text sets by syntax of
 * its own, not as `key = value` (a prim's specifier, an attribute's
 * typeName). */
bool ub_metadef_not_metadata(const char *key, ub_spec_kind spec);

/* Why v, a value of d's type, is no value of field d ("it must be
 * greater than 0": OpenUSD's text reader refuses a framesPerSecond that
 * is not), or NULL. */
const char *ub_metadef_value_fault(const ub_metadef *d, const ub_value *v);

/* Whether s is a unit `displayUnit` may name (mm, cm, ..., default). */
bool ub_metadef_display_unit_ok(const char *s);


/* What a field's name makes of it on a spec of one kind: all that
 * ub_metadef_check asks of the name, found once per name by a reader that
 * meets a few dozen names a hundred thousand times, and passed back to
 * ub_metadef_check with each value. */
typedef enum ub_metadef_how {
    UB_MDR_UNKNOWN,      /* a field the text does not know: key = value */
    UB_MDR_SPECIAL,      /* a field with a syntax of its own */
    UB_MDR_TYPED,        /* a field of the table: def */
    UB_MDR_NOT_METADATA, /* ub_metadef_not_metadata */
    UB_MDR_RESERVED,     /* a reserved word that is no field of the spec */
    UB_MDR_NOT_IDENT,    /* no identifier, so no key */
} ub_metadef_how;
typedef struct ub_metadef_role {
    const ub_metadef *def;  /* UB_MDR_TYPED's field */
    unsigned char how;      /* ub_metadef_how */
    unsigned char special;  /* UB_MDR_SPECIAL's field, the module's own */
} ub_metadef_role;
ub_metadef_role ub_metadef_role_of(const char *key, ub_spec_kind spec);

/* Why v, kept under metadata `key` (interned; its role on a spec of this
 * kind is *role, from ub_metadef_role_of) would print as text that the
 * usda reader refuses or reads as another value ("expected a dictionary",
 * "'default' has no place on a prim", ...); NULL when it prints as
 * itself.  Fields with a syntax of their own are held to the shapes
 * runtime/ub_layer.h gives them, typed fields to their type, and the rest
 * (unknown fields) to a name and a value that `key = value` can say.  The
 * message is made in buf (cap bytes: 160 are enough for any but a very
 * long key, which is cut). */
const char *ub_metadef_check(const ub_metadef_role *role, const char *key,
                             ub_spec_kind spec, const ub_value *v, char *buf,
                             size_t cap);

#endif
