/* CUnit tests for ub_schema: the registry of OpenUSD's schemas, prim
 * definitions (type, built-in and applied API schemas, instances), and what
 * flatten makes of builtin properties on small layers written for each
 * rule. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ub_compose.h"
#include "ub_parse.h"
#include "ub_schema.h"
#include "ub_stack.h"
#include "ub_test.h"

static ub_strtab *T;
static ub_schema_reg *R;
static char dir[256];

static void put(const char *name, const char *text)
{
    ub_test_put(dir, name, text);
}

/* Flatten dir/name with registry r. */
static ub_layer *flatten(const char *name, const ub_schema_reg *r,
                         ub_loader **ld, ub_diags **d)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    *d = ub_diags_new();
    *ld = ub_loader_new(T, *d);
    ub_layer *rl = ub_loader_open(*ld, p, NULL, (ub_loc){NULL, 0, 0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(rl);
    size_t rec = 0;
    return ub_compose_flatten_schemas(*ld, rl, r, "out.usda", *d, &rec);
}

static ub_prop *prop(ub_layer *l, const char *path, const char *name)
{
    ub_prim *p = ub_layer_find_prim(l, path);
    return p ? ub_prop_find(l, p, ub_intern_cstr(T, name)) : NULL;
}

static bool lookup(const char *type, const char *api, const char *name,
                   ub_schema_prop *sp)
{
    const char *apis[1] = {api};
    return ub_schema_lookup(R, type, apis, api ? 1 : 0, name, sp);
}

/* The table holds every kind of schema of OpenUSD's libraries. */
static void test_registry(void)
{
    CU_ASSERT_STRING_EQUAL(ub_schema_release(), "24.08");
    const ub_schema_def *mesh = ub_schema_find(R, "Mesh");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mesh);
    CU_ASSERT_EQUAL(mesh->kind, UB_SCHEMA_CONCRETE);
    CU_ASSERT_STRING_EQUAL(mesh->base, "PointBased");
    const ub_schema_def *gprim = ub_schema_find(R, "Gprim");
    CU_ASSERT(gprim && gprim->kind == UB_SCHEMA_ABSTRACT);
    const ub_schema_def *coll = ub_schema_find(R, "CollectionAPI");
    CU_ASSERT(coll && coll->kind == UB_SCHEMA_MULTI_API);
    const ub_schema_def *light = ub_schema_find(R, "SphereLight");
    CU_ASSERT_FATAL(light && light->n_apis == 1);
    CU_ASSERT_STRING_EQUAL(light->apis[0], "LightAPI");
    const ub_schema_def *ri = ub_schema_find(R, "RiRenderPassAPI");
    CU_ASSERT_FATAL(ri && ri->n_auto_to == 1);
    CU_ASSERT_STRING_EQUAL(ri->auto_to[0], "RenderPass");
    CU_ASSERT_PTR_NULL(ub_schema_find(R, "NoSuchSchema"));
}

/* Type and variability of typed schemas' properties, inherited ones
 * included; abstract types have no definition. */
static void test_typed(void)
{
    ub_schema_prop sp;
    CU_ASSERT_FATAL(lookup("Mesh", NULL, "points", &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "point3f[]");
    CU_ASSERT(!sp.uniform);
    CU_ASSERT_FATAL(lookup("Mesh", NULL, "subdivisionScheme", &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "token");
    CU_ASSERT(sp.uniform);
    CU_ASSERT_STRING_EQUAL(sp.fallback, "\"catmullClark\"");
    CU_ASSERT_FATAL(lookup("Mesh", NULL, "purpose", &sp)); /* Imageable */
    CU_ASSERT(sp.uniform);
    CU_ASSERT_FATAL(lookup("Mesh", NULL, "proxyPrim", &sp));
    CU_ASSERT_PTR_NULL(sp.type_name); /* a relationship */
    CU_ASSERT(!lookup("Mesh", NULL, "primvars:st", &sp));
    CU_ASSERT(!lookup("Gprim", NULL, "doubleSided", &sp));
    CU_ASSERT(!lookup("NoSuchType", NULL, "points", &sp));
    CU_ASSERT(!lookup(NULL, NULL, "points", &sp));
}

/* API schemas: built into a type, applied, instances of multiple-apply
 * ones, built-ins of API schemas, overrides and auto-applied ones. */
static void test_api(void)
{
    ub_schema_prop sp;
    /* SphereLight has LightAPI built in */
    CU_ASSERT_FATAL(lookup("SphereLight", NULL, "inputs:intensity", &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "float");
    CU_ASSERT_STRING_EQUAL(sp.schema, "LightAPI");
    /* applied to any prim, typed or not */
    CU_ASSERT_FATAL(lookup(NULL, "GeomModelAPI", "model:drawMode", &sp));
    CU_ASSERT(sp.uniform);
    CU_ASSERT(!lookup(NULL, "GeomModelAPI:x", "model:drawMode", &sp));
    /* a multiple-apply schema needs an instance name */
    CU_ASSERT(!lookup(NULL, "CollectionAPI", "collection:a:expansionRule",
                      &sp));
    CU_ASSERT_FATAL(lookup(NULL, "CollectionAPI:a",
                           "collection:a:expansionRule", &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "token");
    CU_ASSERT(sp.uniform);
    CU_ASSERT(!lookup(NULL, "CollectionAPI:a", "collection:b:expansionRule",
                      &sp));
    CU_ASSERT_FATAL(lookup(NULL, "CollectionAPI:a:b",
                           "collection:a:b:includes", &sp));
    CU_ASSERT_PTR_NULL(sp.type_name);
    /* a type's built-in instance: lights link through CollectionAPI */
    CU_ASSERT_FATAL(lookup("SphereLight", NULL,
                           "collection:lightLink:includeRoot", &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "bool");
    /* MeshLightAPI includes LightAPI, whose properties it overrides */
    CU_ASSERT_FATAL(lookup(NULL, "MeshLightAPI", "light:shaderId", &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "token");
    CU_ASSERT(sp.uniform);
    CU_ASSERT_STRING_EQUAL(sp.fallback, "\"MeshLight\"");
    /* RiRenderPassAPI auto-applies to RenderPass; it includes
     * CollectionAPI:matte and overrides cameraVisibility's fallback */
    CU_ASSERT_FATAL(lookup("RenderPass", NULL, "collection:matte:includes",
                           &sp));
    CU_ASSERT_PTR_NULL(sp.type_name);
    CU_ASSERT_FATAL(lookup("RenderPass", NULL,
                           "collection:cameraVisibility:includeRoot", &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "bool");
    CU_ASSERT_STRING_EQUAL(sp.fallback, "1");
    CU_ASSERT(!lookup("RenderSettings", NULL, "collection:matte:includes",
                      &sp));
    /* the type's own definition is stronger than an applied schema's */
    CU_ASSERT_FATAL(lookup("Mesh", "GeomModelAPI", "extent", &sp));
    CU_ASSERT_STRING_EQUAL(sp.schema, "Mesh");
}

/* flatten: the schema's type name wins over the authored one, its
 * variability over every opinion, and builtin properties are not custom;
 * what the schema does not define keeps the authored type. */
static void test_flatten(void)
{
    put("geom.usda",
        "#usda 1.0\n"
        "def Mesh \"M\" (\n    prepend apiSchemas = [\"CollectionAPI:set\"]\n"
        ")\n{\n"
        "    float3[] points = [(0, 0, 0)]\n"
        "    custom token subdivisionScheme = \"none\"\n"
        "    float3[] primvars:pos = [(1, 1, 1)]\n"
        "    token collection:set:expansionRule = \"expandPrims\"\n"
        "    token collection:other:expansionRule = \"expandPrims\"\n"
        "}\n"
        "def \"Untyped\"\n{\n    float3[] points = [(0, 0, 0)]\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = flatten("geom.usda", R, &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prop *p = prop(out, "/M", "points");
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT_STRING_EQUAL(ub_prop_type_spelling(p), "point3f");
    CU_ASSERT(p->is_array);
    CU_ASSERT_EQUAL(p->default_value.count, 1);
    p = prop(out, "/M", "subdivisionScheme");
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT_EQUAL(p->variability, UB_UNIFORM);
    CU_ASSERT(!p->custom);
    p = prop(out, "/M", "primvars:pos");
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT_STRING_EQUAL(ub_prop_type_spelling(p), "float3");
    p = prop(out, "/M", "collection:set:expansionRule");
    CU_ASSERT(p && p->variability == UB_UNIFORM);
    p = prop(out, "/M", "collection:other:expansionRule");
    CU_ASSERT(p && p->variability == UB_VARYING);
    p = prop(out, "/Untyped", "points");
    CU_ASSERT(p && strcmp(ub_prop_type_spelling(p), "float3") == 0);
    /* fallbacks are not opinions: what no layer authors is not written */
    CU_ASSERT_PTR_NULL(prop(out, "/M", "orientation"));
    CU_ASSERT_PTR_NULL(prop(out, "/M", "collection:set:includeRoot"));
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

static size_t count_id(const ub_diags *d, const char *id)
{
    size_t c = 0;
    for (size_t i = 0; i < ub_diags_count(d); i++)
        if (ub_diags_at(d, i)->id && strcmp(ub_diags_at(d, i)->id, id) == 0)
            c++;
    return c;
}

/* A value of another type than the schema's: the schema's type is
 * written, as OpenUSD writes it, with a warning; a relationship where the
 * schema has an attribute is refused (OpenUSD cannot flatten it). */
static void test_mismatch(void)
{
    put("mismatch.usda",
        "#usda 1.0\n"
        "def Mesh \"M\"\n{\n"
        "    double[] points = [1, 2]\n"
        "    int faceVertexCounts = 3\n"
        "    float3[] normals = [(0, 0, 1)]\n"
        "    custom double subdivisionScheme\n"
        "}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = flatten("mismatch.usda", R, &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    /* points and faceVertexCounts; normals differ only by role; no value
     * for subdivisionScheme */
    CU_ASSERT_EQUAL(count_id(d, "schema-type-mismatch"), 2);
    CU_ASSERT_EQUAL(ub_diags_errors(d), 0);
    ub_prop *p = prop(out, "/M", "faceVertexCounts");
    CU_ASSERT(p && p->is_array &&
              strcmp(ub_prop_type_spelling(p), "int") == 0);
    p = prop(out, "/M", "subdivisionScheme");
    CU_ASSERT(p && strcmp(ub_prop_type_spelling(p), "token") == 0 &&
              !p->custom);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);

    put("kind.usda", "#usda 1.0\ndef Mesh \"M\"\n{\n    rel orientation\n}\n");
    out = flatten("kind.usda", R, &ld, &d);
    CU_ASSERT_PTR_NULL(out);
    CU_ASSERT_EQUAL(count_id(d, "schema-property-kind"), 1);
    CU_ASSERT_EQUAL(ub_diags_at(d, 0)->loc.line, 4);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* The kind of the `prepend` part of list-op field `key` in meta (-1: no
 * such list op). */
static int prepend_kind(const ub_fields *meta, const char *key)
{
    const ub_field *f = ub_fields_find(meta, ub_intern_cstr(T, key));
    if (!f || f->value.kind != UB_V_LISTOP)
        return -1;
    return ub_listop_get(f->value.u.listop, UB_LO_PREPEND)->kind;
}

/* A studio's schemas and metadata from plugInfo.json files: a directory
 * on the path, Includes globs, # comments, a concrete schema deriving from
 * one of OpenUSD's, an auto-applied API schema, a metadata field. */
static void put_plugin(void)
{
    char p[512];
    snprintf(p, sizeof p, "%s/plugins", dir);
    CU_ASSERT_FATAL(mkdir(p, 0777) == 0);
    snprintf(p, sizeof p, "%s/plugins/studio", dir);
    CU_ASSERT_FATAL(mkdir(p, 0777) == 0);
    snprintf(p, sizeof p, "%s/plugins/studio/res", dir);
    CU_ASSERT_FATAL(mkdir(p, 0777) == 0);
    put("plugins/plugInfo.json",
        "# the studio's plugins\n{ \"Includes\": [\"*/\"] }\n");
    put("plugins/studio/plugInfo.json",
        "{\n"
        "  \"Plugins\": [{\n"
        "    \"Name\": \"studio\", \"Type\": \"resource\",\n"
        "    # generatedSchema.usda is in res\n"
        "    \"ResourcePath\": \"res\",\n"
        "    \"Info\": {\n"
        "      \"SdfMetadata\": {\n"
        "        \"studioTags\": {\"type\": \"tokenlistop\",\n"
        "                       \"appliesTo\": [\"prims\"]},\n"
        "        \"studioFrame\": {\"type\": \"timecode\"}\n"
        "      },\n"
        "      \"Types\": {\n"
        "        \"StudioWidget\": {\n"
        "          \"alias\": {\"UsdSchemaBase\": \"Widget\"},\n"
        "          \"bases\": [\"UsdGeomXformable\"],\n"
        "          \"schemaKind\": \"concreteTyped\"},\n"
        "        \"StudioTagAPI\": {\n"
        "          \"alias\": {\"UsdSchemaBase\": \"TagAPI\"},\n"
        "          \"bases\": [\"UsdAPISchemaBase\"],\n"
        "          \"apiSchemaAutoApplyTo\": [\"Xformable\"],\n"
        "          \"schemaKind\": \"singleApplyAPI\"}\n"
        "      }\n"
        "    }\n"
        "  }]\n"
        "}\n");
    put("plugins/studio/res/generatedSchema.usda",
        "#usda 1.0\n"
        "class Widget \"Widget\" (\n    apiSchemas = [\"CollectionAPI:parts\"]\n)\n"
        "{\n"
        "    uniform token studio:kind = \"a\"\n"
        "    point3f[] studio:pts\n"
        "    rel studio:target\n"
        "    token[] xformOpOrder\n"
        "}\n"
        "class \"TagAPI\"\n{\n    uniform string studio:tag\n}\n");
}

/* A registry with OpenUSD's schemas and the plugins on `paths` (':'
 * separated, each relative to dir); what loading said goes to *d. */
static ub_schema_reg *load(const char *paths, ub_diags **d)
{
    char p[2048];
    size_t n = 0;
    for (const char *s = paths; *s;) {
        size_t k = strcspn(s, ":");
        n += (size_t)snprintf(p + n, sizeof p - n, "%s%s/%.*s", n ? ":" : "",
                              dir, (int)k, s);
        CU_ASSERT_FATAL(n < sizeof p);
        s += k + (s[k] == ':');
    }
    ub_schema_reg *r = ub_schema_reg_new(T);
    *d = ub_diags_new();
    CU_ASSERT_FATAL(r && *d);
    CU_ASSERT_EQUAL_FATAL(ub_schema_reg_load_plugins(r, p, *d), 0);
    return r;
}

static void test_plugins(void)
{
    put_plugin();
    ub_diags *d;
    /* a directory named without its '/', and one that is not there */
    ub_schema_reg *r = load("plugins:none", &d);
    CU_ASSERT_EQUAL(ub_diags_errors(d), 0);
    CU_ASSERT_EQUAL(ub_diags_warnings(d), 1); /* the missing one */
    const ub_schema_def *w = ub_schema_find(r, "Widget");
    CU_ASSERT_FATAL(w != NULL);
    CU_ASSERT_EQUAL(w->kind, UB_SCHEMA_CONCRETE);
    CU_ASSERT_STRING_EQUAL(w->base, "Xformable");
    CU_ASSERT_STRING_EQUAL(w->lib, "studio");
    ub_schema_prop sp;
    CU_ASSERT_FATAL(ub_schema_lookup(r, "Widget", NULL, 0, "studio:kind",
                                     &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "token");
    CU_ASSERT(sp.uniform);
    CU_ASSERT_FATAL(ub_schema_lookup(r, "Widget", NULL, 0, "studio:pts",
                                     &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "point3f[]");
    CU_ASSERT_FATAL(ub_schema_lookup(r, "Widget", NULL, 0, "studio:target",
                                     &sp));
    CU_ASSERT_PTR_NULL(sp.type_name);
    /* its built-in instance of OpenUSD's CollectionAPI */
    CU_ASSERT_FATAL(ub_schema_lookup(r, "Widget", NULL, 0,
                                     "collection:parts:expansionRule", &sp));
    CU_ASSERT(sp.uniform);
    /* TagAPI auto-applies to Xformable and what derives from it: the
     * studio's Widget and OpenUSD's Mesh */
    CU_ASSERT(ub_schema_lookup(r, "Widget", NULL, 0, "studio:tag", &sp));
    CU_ASSERT(ub_schema_lookup(r, "Mesh", NULL, 0, "studio:tag", &sp));
    CU_ASSERT(!ub_schema_lookup(r, "Material", NULL, 0, "studio:tag", &sp));
    CU_ASSERT(!ub_schema_lookup(R, "Mesh", NULL, 0, "studio:tag", &sp));
    /* the metadata field */
    const ub_meta_field *f = ub_schema_field_find(r, "studioTags");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_STRING_EQUAL(f->type_name, "tokenlistop");
    CU_ASSERT_EQUAL(f->applies_to, UB_APPLIES_PRIMS);
    CU_ASSERT_STRING_EQUAL(f->plugin, "studio");
    CU_ASSERT_EQUAL(f->loc.line, 8);
    CU_ASSERT_PTR_NULL(ub_schema_field_find(r, "studioOther"));

    /* flatten with it */
    put("widget.usda",
        "#usda 1.0\n"
        "def Widget \"W\"\n{\n"
        "    float3[] studio:pts = [(1, 2, 3)]\n"
        "    token studio:kind = \"b\"\n"
        "    custom string studio:tag = \"x\"\n"
        "    float3[] other = [(1, 2, 3)]\n"
        "}\n");
    ub_loader *ld;
    ub_diags *fd;
    ub_layer *out = flatten("widget.usda", r, &ld, &fd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prop *q = prop(out, "/W", "studio:pts");
    CU_ASSERT(q && strcmp(ub_prop_type_spelling(q), "point3f") == 0 &&
              q->is_array);
    q = prop(out, "/W", "studio:kind");
    CU_ASSERT(q && q->variability == UB_UNIFORM);
    q = prop(out, "/W", "studio:tag");
    CU_ASSERT(q && q->variability == UB_UNIFORM && !q->custom);
    q = prop(out, "/W", "other");
    CU_ASSERT(q && strcmp(ub_prop_type_spelling(q), "float3") == 0);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(fd);
    ub_diags_free(d);
    ub_schema_reg_free(r);
}

/* A broken plugInfo.json is reported with its place; a schema defined
 * twice keeps the first definition, with a warning. */
static void test_plugin_errors(void)
{
    put("bad.json", "{\n  \"Plugins\": [\n    {\"Name\": \"x\",}\n  ]\n}\n");
    put("dup.json",
        "{\"Plugins\": [{\"Name\": \"dup\", \"Info\": {\"Types\": {\n"
        "  \"DupMesh\": {\"alias\": {\"UsdSchemaBase\": \"Mesh\"},\n"
        "              \"schemaKind\": \"concreteTyped\"}}}}]}\n");
    put("generatedSchema.usda",
        "#usda 1.0\nclass Mesh \"Mesh\"\n{\n    double points\n}\n");
    ub_diags *d;
    ub_schema_reg *r = load("bad.json:dup.json", &d);
    CU_ASSERT_EQUAL_FATAL(ub_diags_errors(d), 1);
    const ub_diag *e = ub_diags_at(d, 0);
    CU_ASSERT_EQUAL(e->loc.line, 3);
    CU_ASSERT_EQUAL(e->loc.col, 18);
    CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "expected a key"));
    CU_ASSERT_EQUAL(ub_diags_warnings(d), 1);
    ub_schema_prop sp;
    CU_ASSERT_FATAL(ub_schema_lookup(r, "Mesh", NULL, 0, "points", &sp));
    CU_ASSERT_STRING_EQUAL(sp.type_name, "point3f[]");
    ub_diags_free(d);
    ub_schema_reg_free(r);
}

/* Plugin metadata: read as known fields of their type where they apply,
 * kept by flattening (a timecode mapped through the sublayer's offset);
 * without the plugin they are unknown and dropped, as OpenUSD drops them. */
static void test_plugin_metadata(void)
{
    ub_diags *d;
    ub_schema_reg *r = load("plugins/studio/plugInfo.json", &d);
    char p[600];
    size_t nf;
    const ub_meta_field *f = ub_schema_fields(r, &nf);
    CU_ASSERT_EQUAL_FATAL(nf, 2);
    CU_ASSERT_EQUAL(f[1].applies_to, UB_APPLIES_ALL);
    put("meta_sub.usda",
        "#usda 1.0\n"
        "def \"P\" (\n    prepend studioTags = [\"hero\"]\n"
        "    studioFrame = 10\n)\n{\n"
        "    double a (\n        studioFrame = 4\n    )\n}\n");
    put("meta_root.usda",
        "#usda 1.0\n(\n    subLayers = [@./meta_sub.usda@ (offset = 100)]\n)\n");
    for (int with = 0; with < 2; with++) {
        ub_diags *pd = ub_diags_new();
        ub_loader *ld = ub_loader_new(T, pd);
        if (with)
            ub_loader_set_fields(ld, f, nf);
        snprintf(p, sizeof p, "%s/meta_root.usda", dir);
        ub_layer *rl = ub_loader_open(ld, p, NULL, (ub_loc){NULL, 0, 0});
        CU_ASSERT_PTR_NOT_NULL_FATAL(rl);
        ub_stack st;
        CU_ASSERT_EQUAL_FATAL(ub_stack_build(&st, ld, rl, pd), 0);
        CU_ASSERT_EQUAL_FATAL(st.n, 2);
        /* as parsed */
        const ub_prim *sp = ub_layer_find_prim(st.layers[1], "/P");
        CU_ASSERT_FATAL(sp != NULL);
        CU_ASSERT_EQUAL(prepend_kind(&sp->meta, "studioTags"),
                        with ? UB_V_DATA : UB_V_UNTYPED);
        /* flattened */
        ub_layer *out = ub_stack_flatten(&st, "out.usda", pd);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        const ub_prim *op = ub_layer_find_prim(out, "/P");
        CU_ASSERT_FATAL(op != NULL);
        const ub_field *fr = ub_fields_find(
            &op->meta, ub_intern_cstr(T, "studioFrame"));
        if (with) {
            CU_ASSERT_FATAL(fr && fr->value.kind == UB_V_DATA);
            CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&fr->value, 0, 0),
                                   110.0, 1e-9);
            CU_ASSERT(prepend_kind(&op->meta, "studioTags") >= 0);
            ub_prop *a = prop(out, "/P", "a");
            CU_ASSERT_FATAL(a != NULL);
            fr = ub_fields_find(ub_prop_meta(a),
                                ub_intern_cstr(T, "studioFrame"));
            CU_ASSERT(fr && ub_value_get_double(&fr->value, 0, 0) == 104.0);
            CU_ASSERT_EQUAL(ub_diags_warnings(pd), 0);
        } else {
            CU_ASSERT_PTR_NULL(fr);
            CU_ASSERT(ub_diags_warnings(pd) > 0); /* dropped, loudly */
        }
        ub_layer_free(out);
        ub_stack_free(&st);
        ub_loader_free(ld);
        ub_diags_free(pd);
    }
    /* the second thread of a split parse knows them too */
    static const char two[] =
        "#usda 1.0\n"
        "def \"A\" (\n    prepend studioTags = [\"a\"]\n)\n{\n}\n"
        "def \"B\" (\n    prepend studioTags = [\"b\"]\n)\n{\n}\n";
    ub_parse_opts so = {.fields = f, .n_fields = nf, .split = 1,
                        .split_at = strstr(two, "def \"B\"") - two};
    ub_diags *sd = ub_diags_new();
    ub_layer *sl = ub_parse_usda_opts(T, "two.usda", two, sizeof two - 1,
                                      &so, sd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sl);
    CU_ASSERT_EQUAL(so.outcome, UB_PARSE_SPLIT_GRAFTED);
    for (int i = 0; i < 2; i++) {
        const ub_prim *pr = ub_layer_find_prim(sl, i ? "/B" : "/A");
        CU_ASSERT_FATAL(pr != NULL);
        CU_ASSERT_EQUAL(prepend_kind(&pr->meta, "studioTags"), UB_V_DATA);
    }
    ub_layer_free(sl);
    ub_diags_free(sd);
    /* a list-op field applies to prims only: a list edit elsewhere is
     * not that field */
    ub_parse_opts po = {.fields = f, .n_fields = nf};
    static const char bad[] =
        "#usda 1.0\n(\n    prepend studioTags = [\"x\"]\n)\n";
    ub_diags *pd = ub_diags_new();
    ub_layer *l = ub_parse_usda_opts(T, "bad.usda", bad, sizeof bad - 1, &po,
                                     pd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(prepend_kind(&l->meta, "studioTags"), UB_V_UNTYPED);
    ub_layer_free(l);
    ub_diags_free(pd);
    ub_diags_free(d);
    ub_schema_reg_free(r);
}

int main(void)
{
    T = ub_strtab_new();
    R = ub_schema_reg_new(T);
    snprintf(dir, sizeof dir, "%s/ub-test-schema.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!T || !R || !mkdtemp(dir))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("schema", NULL, NULL);
    CU_add_test(s, "registry", test_registry);
    CU_add_test(s, "typed schemas", test_typed);
    CU_add_test(s, "API schemas", test_api);
    CU_add_test(s, "flatten", test_flatten);
    CU_add_test(s, "type mismatches", test_mismatch);
    CU_add_test(s, "plugins", test_plugins);
    CU_add_test(s, "plugin errors", test_plugin_errors);
    CU_add_test(s, "plugin metadata", test_plugin_metadata);
    unsigned failed = ub_test_run_all();
    ub_schema_reg_free(R);
    ub_strtab_free(T);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failed++;
    return failed ? 1 : 0;
}
