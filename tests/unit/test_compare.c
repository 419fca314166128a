/* Unit tests of ub_compare: equal layers compare equal, and each kind of
 * difference is found, named by its path, and respects the tolerance. */
#include <CUnit/Basic.h>
#include <string.h>

#include "ub_compare.h"
#include "ub_parse.h"
#include "ub_test.h"

static ub_strtab *strtab;

/* A small scene: /World (Xform, kind = "component") with a mesh child
 * whose points have a default and two time samples. */
typedef struct scene {
    ub_layer *layer;
    ub_prim *world, *mesh;
    ub_prop *points, *size;
} scene;

static const char *S(const char *s)
{
    return ub_intern_cstr(strtab, s);
}

static ub_value make_doubles(ub_layer *l, ub_type_id t, const double *x,
                             uint32_t n, bool arr)
{
    const ub_type *ty = ub_type_get(t);
    uint32_t nc = ub_type_ncomp(ty);
    ub_value v = ub_value_new(l->arena, ty, n / nc, arr);
    for (uint32_t i = 0; i < n; i++)
        ub_value_set_double(&v, i / nc, i % nc, x[i]);
    return v;
}

static ub_value make_token(ub_layer *l, const char *s)
{
    ub_value v = ub_value_new(l->arena, ub_type_get(UB_TY_TOKEN), 1, false);
    ((const char **)ub_value_data(&v))[0] = S(s);
    return v;
}

static scene build(const char *path)
{
    scene s = {0};
    s.layer = ub_layer_new(strtab, S(path));
    ub_layer *l = s.layer;
    ub_sloc loc = ub_layer_sloc(l, (ub_loc){path, 1, 1});
    double tcps = 24;
    ub_fields_set(l->arena, &l->meta, S("timeCodesPerSecond"),
                  make_doubles(l, UB_TY_DOUBLE, &tcps, 1, false), loc);
    ub_sublayer *sub = ub_layer_add_sublayer(l, S("anim.usda"), loc);
    sub->offset = (ub_offset){10.0, 2.0};
    l->has_sublayers = true;

    s.world = ub_prim_new(l, l->root, S("World"), UB_DEF, loc);
    s.world->type_name = S("Xform");
    ub_fields_set(l->arena, &s.world->meta, S("kind"),
                  make_token(l, "component"), loc);
    s.mesh = ub_prim_new(l, s.world, S("a"), UB_DEF, loc);
    s.mesh->type_name = S("Mesh");

    s.points = ub_prop_new(l, s.mesh, S("points"), UB_ATTR, loc);
    ub_prop_set_decl(l->arena, strtab, s.points, ub_type_get(UB_TY_POINT3F),
                     S("point3f"));
    s.points->is_array = true;
    double pts[] = {0, 0, 0, 1, 0, 0, 1, 1, 0};
    s.points->default_value =
        make_doubles(l, UB_TY_POINT3F, pts, 9, true);
    double p1[] = {0, 0, 1, 1, 0, 1, 1, 1, 1};
    ub_samples_set(l->arena, &ub_prop_ext_get(l->arena, s.points)->samples,
                   1.0, make_doubles(l, UB_TY_POINT3F, pts, 9, true));
    ub_samples_set(l->arena, &ub_prop_ext_get(l->arena, s.points)->samples,
                   2.0, make_doubles(l, UB_TY_POINT3F, p1, 9, true));
    ub_prop_ext_get(l->arena, s.points)->samples.authored = true;

    s.size = ub_prop_new(l, s.mesh, S("size"), UB_ATTR, loc);
    ub_prop_set_decl(l->arena, strtab, s.size, ub_type_get(UB_TY_DOUBLE),
                     S("double"));
    double one = 1.0;
    s.size->default_value = make_doubles(l, UB_TY_DOUBLE, &one, 1, false);
    return s;
}

static long compare(scene *a, scene *b, double tol, ub_differences **out)
{
    *out = ub_differences_new();
    ub_compare_opts o = {tol, 0, false};
    return ub_compare_layers(a->layer, b->layer, &o, *out);
}

/* The one difference found is at path and its message contains text. */
static void expect_one(scene *a, scene *b, const char *path,
                       const char *text)
{
    ub_differences *d;
    long n = compare(a, b, 0.0, &d);
    CU_ASSERT_EQUAL(n, 1);
    if (n >= 1) {
        const ub_difference *x = ub_differences_at(d, 0);
        CU_ASSERT_STRING_EQUAL(x->path, path);
        CU_ASSERT_PTR_NOT_NULL(strstr(x->message, text));
        if (!strstr(x->message, text))
            fprintf(stderr, "\n  got '%s: %s'\n", x->path, x->message);
    }
    ub_differences_free(d);
    ub_layer_free(a->layer);
    ub_layer_free(b->layer);
}

static void test_equal(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    ub_differences *d;
    CU_ASSERT_EQUAL(compare(&a, &b, 0.0, &d), 0);
    CU_ASSERT_EQUAL(ub_differences_count(d), 0);
    ub_differences_free(d);
    /* A layer equals itself. */
    d = ub_differences_new();
    CU_ASSERT_EQUAL(ub_compare_layers(a.layer, a.layer, NULL, d), 0);
    ub_differences_free(d);
    ub_layer_free(a.layer);
    ub_layer_free(b.layer);
}

static void test_specifier(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    b.mesh->specifier = UB_OVER;
    expect_one(&a, &b, "/World/a", "specifier differs: def vs over");
}

static void test_type_name(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    b.world->type_name = S("Scope");
    expect_one(&a, &b, "/World", "type name differs: Xform vs Scope");
}

static void test_prim_metadata(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    ub_fields_set(b.layer->arena, &b.world->meta, S("kind"),
                  make_token(b.layer, "group"), (ub_sloc){0});
    expect_one(&a, &b, "/World", "metadata 'kind' differs");

    a = build("a.usda");
    b = build("b.usda");
    ub_fields_remove(&b.world->meta, S("kind"));
    expect_one(&a, &b, "/World", "metadata 'kind' only in a.usda");
}

static void test_layer_metadata(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    double t = 30;
    ub_fields_set(b.layer->arena, &b.layer->meta, S("timeCodesPerSecond"),
                  make_doubles(b.layer, UB_TY_DOUBLE, &t, 1, false),
                  (ub_sloc){0});
    expect_one(&a, &b, "", "layer metadata 'timeCodesPerSecond' differs");
}

static void test_sublayer_offset(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    b.layer->sublayers[0].offset.scale = 3.0;
    expect_one(&a, &b, "", "subLayers differ");
}

static void test_default_element(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    ub_value_set_double(&b.points->default_value, 2, 1, 0.5);
    expect_one(&a, &b, "/World/a.points",
               "default differs: element 2: (1, 1, 0) vs (1, 0.5, 0)");
}

static void test_default_count_and_block(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    b.points->default_value.count = 2;
    expect_one(&a, &b, "/World/a.points", "3 elements vs 2 elements");

    a = build("a.usda");
    b = build("b.usda");
    b.size->default_value = ub_value_block();
    expect_one(&a, &b, "/World/a.size", "default differs: 1 vs None");
}

static void test_type_and_variability(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    ub_prop_set_decl(b.layer->arena, strtab, b.points,
                     ub_type_get(UB_TY_FLOAT3), S("float3"));
    expect_one(&a, &b, "/World/a.points",
               "type differs: point3f[] vs float3[]");

    a = build("a.usda");
    b = build("b.usda");
    b.size->variability = UB_UNIFORM;
    expect_one(&a, &b, "/World/a.size", "variability differs");

    /* The legacy `config` means uniform. */
    a = build("a.usda");
    b = build("b.usda");
    a.size->variability = UB_UNIFORM;
    b.size->variability = UB_CONFIG;
    ub_differences *d;
    CU_ASSERT_EQUAL(compare(&a, &b, 0.0, &d), 0);
    ub_differences_free(d);
    ub_layer_free(a.layer);
    ub_layer_free(b.layer);
}

static void test_time_samples(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    ub_prop_samples(b.points)->v[1].time = 3.0;
    expect_one(&a, &b, "/World/a.points", "sample 1 is at time 2 vs 3");

    a = build("a.usda");
    b = build("b.usda");
    ub_prop_ext_get(b.layer->arena, b.points)->samples.n = 1;
    expect_one(&a, &b, "/World/a.points", "2 samples vs 1");

    a = build("a.usda");
    b = build("b.usda");
    ub_value_set_double(&ub_prop_samples(b.points)->v[0].value, 0, 0, 7.0);
    expect_one(&a, &b, "/World/a.points", "time sample at 1 differs");
}

static void test_properties_and_children(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    ub_prop *extra = ub_prop_new(b.layer, b.mesh, S("extra"), UB_REL,
                                 (ub_sloc){0});
    (void)extra;
    expect_one(&a, &b, "/World/a", "property 'extra' only in b.usda");

    /* Same properties in another order: equal (a prim's properties are
     * in name order whatever order a layer lists them in; propertyOrder
     * is metadata, compared as such). */
    a = build("a.usda");
    b = build("b.usda");
    ub_prop *t = b.mesh->props.v[0];
    b.mesh->props.v[0] = b.mesh->props.v[1];
    b.mesh->props.v[1] = t;
    ub_differences *d;
    CU_ASSERT_EQUAL(compare(&a, &b, 0.0, &d), 0);
    ub_differences_free(d);
    ub_layer_free(a.layer);
    ub_layer_free(b.layer);
    /* ... but as many of them, not others */
    a = build("a.usda");
    b = build("b.usda");
    b.mesh->props.v[1] = b.mesh->props.v[0];
    long n = compare(&a, &b, 0.0, &d);
    CU_ASSERT(n >= 1);
    ub_differences_free(d);
    ub_layer_free(a.layer);
    ub_layer_free(b.layer);

    a = build("a.usda");
    b = build("b.usda");
    ub_prim_new(a.layer, a.world, S("b"), UB_DEF, (ub_sloc){0});
    expect_one(&a, &b, "/World", "child prim 'b' only in a.usda");

    /* Children in another order: namespace order means something. */
    a = build("a.usda");
    b = build("b.usda");
    ub_prim_new(a.layer, a.world, S("b"), UB_DEF, (ub_sloc){0});
    ub_prim_new(b.layer, b.world, S("b"), UB_DEF, (ub_sloc){0});
    ub_prim *c = b.world->children.v[0];
    b.world->children.v[0] = b.world->children.v[1];
    b.world->children.v[1] = c;
    expect_one(&a, &b, "/World", "child prim order differs at position 0");
}

static void test_variants(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    ub_sloc loc = {0};
    ub_variant_set *sa = ub_variant_set_get(a.layer, a.world, S("look"), loc);
    ub_variant_set *sb = ub_variant_set_get(b.layer, b.world, S("look"), loc);
    ub_prim *va = ub_variant_new(a.layer, a.world, sa, S("red"), loc);
    ub_prim *vb = ub_variant_new(b.layer, b.world, sb, S("red"), loc);
    ub_prim_new(a.layer, va, S("Geom"), UB_DEF, loc);
    ub_prim *g = ub_prim_new(b.layer, vb, S("Geom"), UB_DEF, loc);
    g->type_name = S("Mesh");
    expect_one(&a, &b, "/World{look=red}/Geom", "type name differs");
}

static void test_tolerance(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    ub_value_set_double(&b.size->default_value, 0, 0, 1.0 + 1e-12);
    ub_prop_samples(b.points)->v[1].time = 2.0 * (1 + 1e-13);
    ub_differences *d;
    CU_ASSERT_EQUAL(compare(&a, &b, 0.0, &d), 2);
    ub_differences_free(d);
    CU_ASSERT_EQUAL(compare(&a, &b, 1e-9, &d), 0);
    ub_differences_free(d);
    /* A real difference stays one under the tolerance. */
    ub_value_set_double(&b.size->default_value, 0, 0, 1.001);
    CU_ASSERT_EQUAL(compare(&a, &b, 1e-9, &d), 1);
    ub_differences_free(d);
    ub_layer_free(a.layer);
    ub_layer_free(b.layer);
}

static void test_limit_and_strtab(void)
{
    scene a = build("a.usda"), b = build("b.usda");
    b.world->type_name = S("Scope");
    b.mesh->specifier = UB_CLASS;
    b.size->default_value = ub_value_block();
    ub_differences *d = ub_differences_new();
    ub_compare_opts o = {0.0, 2, false};
    CU_ASSERT_EQUAL(ub_compare_layers(a.layer, b.layer, &o, d), 2);
    CU_ASSERT_EQUAL(ub_differences_count(d), 2);
    ub_differences_free(d);

    /* Layers from different string tables cannot be compared by pointer. */
    ub_strtab *other = ub_strtab_new();
    ub_layer *c = ub_layer_new(other, "c.usda");
    d = ub_differences_new();
    CU_ASSERT_EQUAL(ub_compare_layers(a.layer, c, NULL, d), -1);
    ub_differences_free(d);
    ub_layer_free(c);
    ub_strtab_free(other);
    ub_layer_free(a.layer);
    ub_layer_free(b.layer);
}

static ub_layer *parse(const char *name, const char *text)
{
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda(strtab, name, text, strlen(text), d);
    ub_diags_free(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    return l;
}

static long diff_protos(const ub_layer *a, const ub_layer *b, bool any)
{
    ub_differences *d = ub_differences_new();
    ub_compare_opts o = {0.0, 0, any};
    long n = ub_compare_layers(a, b, &o, d);
    ub_differences_free(d);
    return n;
}

/* Flattened prototypes numbered the other way round are the same stage
 * with --any-prototype-numbers (paths into them renamed), and still
 * differ without it; different contents still differ. */
static void test_prototype_numbers(void)
{
    static const char fmt[] =
        "#usda 1.0\n"
        "over \"Flattened_Prototype_%c\"\n{\n"
        "    def \"g\"\n    {\n"
        "        rel r = </Flattened_Prototype_%c/g>\n    }\n}\n"
        "over \"Flattened_Prototype_%c\"\n{\n"
        "    def \"In\" (\n        instanceable = true\n"
        "        add references = </Flattened_Prototype_%c>\n    )\n"
        "    {\n    }\n    def \"%s\"\n    {\n    }\n}\n"
        "def \"Set\" (\n    instanceable = true\n"
        "    add references = </Flattened_Prototype_%c>\n)\n{\n"
        "    rel t = </Flattened_Prototype_%c/In>\n}\n";
    char ta[1024], tb[1024], tc[1024];
    /* a: the inner prototype is 1; b: it is 2 (written second) */
    snprintf(ta, sizeof ta, fmt, '1', '1', '2', '1', "x", '2', '2');
    snprintf(tb, sizeof tb, "#usda 1.0\n"
             "over \"Flattened_Prototype_1\"\n{\n"
             "    def \"In\" (\n        instanceable = true\n"
             "        add references = </Flattened_Prototype_2>\n    )\n"
             "    {\n    }\n    def \"x\"\n    {\n    }\n}\n"
             "over \"Flattened_Prototype_2\"\n{\n"
             "    def \"g\"\n    {\n"
             "        rel r = </Flattened_Prototype_2/g>\n    }\n}\n"
             "def \"Set\" (\n    instanceable = true\n"
             "    add references = </Flattened_Prototype_1>\n)\n{\n"
             "    rel t = </Flattened_Prototype_1/In>\n}\n");
    snprintf(tc, sizeof tc, fmt, '1', '1', '2', '1', "y", '2', '2');
    ub_layer *a = parse("a.usda", ta), *b = parse("b.usda", tb),
             *c = parse("c.usda", tc);
    CU_ASSERT_EQUAL(diff_protos(a, b, true), 0);
    CU_ASSERT_EQUAL(diff_protos(b, a, true), 0);
    CU_ASSERT(diff_protos(a, b, false) > 0);
    CU_ASSERT(diff_protos(a, c, true) > 0);
    CU_ASSERT(diff_protos(b, c, true) > 0);
    ub_layer_free(a);
    ub_layer_free(b);
    ub_layer_free(c);
}

int main(void)
{
    strtab = ub_strtab_new();
    if (!strtab || CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("compare", NULL, NULL);
    CU_add_test(s, "equal layers", test_equal);
    CU_add_test(s, "specifier", test_specifier);
    CU_add_test(s, "type name", test_type_name);
    CU_add_test(s, "prim metadata", test_prim_metadata);
    CU_add_test(s, "layer metadata", test_layer_metadata);
    CU_add_test(s, "sublayer offset", test_sublayer_offset);
    CU_add_test(s, "default element", test_default_element);
    CU_add_test(s, "default count and block", test_default_count_and_block);
    CU_add_test(s, "type and variability", test_type_and_variability);
    CU_add_test(s, "time samples", test_time_samples);
    CU_add_test(s, "properties and children", test_properties_and_children);
    CU_add_test(s, "variants", test_variants);
    CU_add_test(s, "tolerance", test_tolerance);
    CU_add_test(s, "limit and string table", test_limit_and_strtab);
    CU_add_test(s, "prototype numbers", test_prototype_numbers);
    unsigned failed = ub_test_run_all();
    ub_strtab_free(strtab);
    return failed ? 1 : 0;
}
