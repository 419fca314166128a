/*
 * ub_schema — the schema registry: OpenUSD's typed and API schemas (built
 * in, generated from OpenUSD's published generatedSchema.usda and
 * plugInfo.json files by compiler/ub_schema_tables.py) and a studio's own
 * (plugInfo.json files found on PXR_PLUGINPATH_NAME, as OpenUSD finds
 * them), and what a prim's definition says about a property.
 *
 * A prim's definition, as UsdSchemaRegistry builds it, is, strongest first:
 * its type's own properties (only a concrete typed schema has a
 * definition), the API schemas built into that type (its `apiSchemas`,
 * then the API schemas that auto-apply to it or a type it derives from),
 * each expanded with the API schemas built into it, then the API schemas
 * the prim applies (its composed `apiSchemas`, in order; a multiple-apply
 * schema with an instance name, `CollectionAPI:lights`, gets its property
 * templates' `__INSTANCE_NAME__` replaced by it).  The strongest
 * definition of a property fixes its type name and variability; a weaker
 * one never changes them.  A schema's "override" properties
 * (apiSchemaOverridePropertyNames) only restate a property one of its
 * built-in API schemas defines with the same type.
 *
 * UsdStage resolves a builtin property's type name and variability from
 * this definition before any authored opinion, and a builtin property is
 * never custom: that is what flatten writes.
 */
#ifndef UB_SCHEMA_H
#define UB_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_parse.h"

typedef enum ub_schema_kind {
    UB_SCHEMA_CONCRETE,    /* concreteTyped: a prim type with a definition */
    UB_SCHEMA_ABSTRACT,    /* abstractTyped, abstractBase: none */
    UB_SCHEMA_NONAPPLIED,  /* nonAppliedAPI: adds nothing to a prim */
    UB_SCHEMA_SINGLE_API,  /* singleApplyAPI */
    UB_SCHEMA_MULTI_API,   /* multipleApplyAPI: applied as Name:instance */
} ub_schema_kind;

/* A property as a schema declares it.  For multiple-apply schemas the name
 * is a template holding "__INSTANCE_NAME__". */
typedef struct ub_schema_prop_fact {
    const char *name;
    const char *type_name;  /* "point3f[]"; NULL for a relationship */
    int uniform;
    const char *fallback;   /* the fallback value as usda text, or NULL */
} ub_schema_prop_fact;

/* One schema: its facts. */
typedef struct ub_schema_def {
    const char *name;       /* the schema identifier: "Mesh", "CollectionAPI" */
    const char *tf_name;    /* its C++ type: "UsdGeomMesh" */
    const char *lib;        /* schema library or plugin name */
    ub_schema_kind kind;
    const char *base;       /* the schema it derives from, or NULL */
    const ub_schema_prop_fact *props;
    uint32_t n_props;
    const char *const *apis;      /* built-in API schemas, in order */
    uint32_t n_apis;
    const char *const *auto_to;   /* types it auto-applies to (API schemas) */
    uint32_t n_auto_to;
    const char *const *overrides; /* apiSchemaOverridePropertyNames */
    uint32_t n_overrides;
    /* computed by the registry: the API schemas auto-applied to it (their
     * auto_to names it or a schema it derives from), strongest first */
    const char *const *auto_applied;
    uint32_t n_auto_applied;
} ub_schema_def;

typedef struct ub_schema_reg ub_schema_reg;

/* A registry holding OpenUSD's schemas (the release in
 * ub_schema_release()).  NULL when out of memory.  Strings of schemas
 * loaded from plugins are interned in t, which must outlive the
 * registry. */
ub_schema_reg *ub_schema_reg_new(ub_strtab *t);
void ub_schema_reg_free(ub_schema_reg *r);

/* Add the schemas and metadata fields of the plugins named by
 * `pluginpath`, as OpenUSD reads PXR_PLUGINPATH_NAME: paths separated by
 * ':', each a plugInfo.json file or a directory holding one; a plugInfo's
 * "Includes" are paths or globs relative to it ("*\/resources/": a
 * trailing '/' names a directory).  Each plugin's "Types" say which
 * schemas it defines (schemaKind, bases, alias, apiSchemaAutoApplyTo), its
 * generatedSchema.usda (in its ResourcePath) what they hold, its
 * "SdfMetadata" its metadata fields and "AutoApplyAPISchemas" what else
 * auto-applies.  A plugin file that cannot be read or understood, or a
 * schema defined twice, is reported in diags as a warning and skipped
 * (OpenUSD skips them too).  Returns 0, or -1 when out of memory. */
int ub_schema_reg_load_plugins(ub_schema_reg *r, const char *pluginpath,
                               ub_diags *diags);

/* The metadata fields the plugins declare (plugInfo.json "SdfMetadata"),
 * in the order read; *n receives how many.  Hand them to the parser
 * (ub_parse_opts, ub_loader_set_fields) and to flattening. */
const ub_meta_field *ub_schema_fields(const ub_schema_reg *r, size_t *n);
/* The field named `name` (interned or not), or NULL. */
const ub_meta_field *ub_schema_field_find(const ub_schema_reg *r,
                                          const char *name);
const char *ub_schema_release(void);

/* The schema named `name`, or NULL.  A studio's schema of the same name as
 * an earlier one is ignored, as OpenUSD keeps the first. */
const ub_schema_def *ub_schema_find(const ub_schema_reg *r, const char *name);
size_t ub_schema_count(const ub_schema_reg *r);
const ub_schema_def *ub_schema_at(const ub_schema_reg *r, size_t i);

/* What a prim's definition says about one property. */
typedef struct ub_schema_prop {
    const char *type_name;  /* NULL: the definition has a relationship */
    bool uniform;
    const char *fallback;   /* usda text or NULL */
    const char *schema;     /* the schema that defines it */
} ub_schema_prop;

/* Look property `name` up in the definition of a prim of type `prim_type`
 * (NULL or "" for none) applying API schemas apis[0..n_apis) (its composed
 * `apiSchemas`, strongest first).  True and *out filled when the
 * definition has it. */
bool ub_schema_lookup(const ub_schema_reg *r, const char *prim_type,
                      const char *const *apis, size_t n_apis,
                      const char *name, ub_schema_prop *out);

#endif
