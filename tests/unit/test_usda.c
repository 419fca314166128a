/* Unit tests of the usda writer: each construct, built by hand, prints
 * exactly as OpenUSD 24.08's usdcat prints it (expected texts taken from
 * the conformance corpus' expected.cat.usda files). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "ub_parse.h"
#include "ub_usda.h"
#include "ub_test.h"

static ub_strtab *strtab;
static int stream_text(const char *text, size_t len, ub_buf *out);
static ub_layer *L;
static ub_buf out;
static const ub_sloc nosloc = {0};

static const char *S(const char *s)
{
    return ub_intern_cstr(strtab, s);
}

static int setup(void)
{
    L = ub_layer_new(strtab, "test.usda");
    ub_buf_init(&out);
    return L ? 0 : 1;
}

static int teardown(void)
{
    ub_layer_free(L);
    ub_buf_free(&out);
    L = NULL;
    return 0;
}

/* Write L and compare with want; print both on a mismatch. */
static void check(const char *want)
{
    out.len = 0;
    CU_ASSERT_EQUAL(ub_usda_write(L, &out), 0);
    ub_buf_putc(&out, '\0');
    if (strcmp(out.data, want) != 0)
        fprintf(stderr, "\n--- got:\n%s--- want:\n%s---\n", out.data, want);
    CU_ASSERT_STRING_EQUAL(out.data, want);
}

static ub_value str_value(ub_type_id t, const char *s)
{
    ub_value v = ub_value_new(L->arena, ub_type_get(t), 1, false);
    ((const char **)ub_value_data(&v))[0] = S(s);
    return v;
}

static ub_value strs_value(ub_type_id t, const char *const *s, uint32_t n)
{
    ub_value v = ub_value_new(L->arena, ub_type_get(t), n, true);
    for (uint32_t i = 0; i < n; i++)
        ((const char **)ub_value_data(&v))[i] = S(s[i]);
    return v;
}

static ub_value dbl_value(ub_type_id t, double x)
{
    ub_value v = ub_value_new(L->arena, ub_type_get(t), 1, false);
    ub_value_set_double(&v, 0, 0, x);
    return v;
}

static ub_value bool_value(bool b)
{
    ub_value v = ub_value_new(L->arena, ub_type_get(UB_TY_BOOL), 1, false);
    ((uint8_t *)ub_value_data(&v))[0] = b;
    return v;
}

static void set_meta(ub_fields *f, const char *key, ub_value v)
{
    ub_fields_set(L->arena, f, S(key), v, nosloc);
}

static ub_listop *listop(ub_value *v, ub_type_id t)
{
    ub_listop *lo = ub_listop_new(L->arena);
    *v = (ub_value){.kind = UB_V_LISTOP, .type_id = (uint8_t)t};
    v->u.listop = lo;
    return lo;
}

static void set_part(ub_listop *lo, ub_listop_part p, ub_value items)
{
    lo->has[p] = true;
    CU_ASSERT_FATAL(ub_listop_put(L->arena, lo, p, items) == 0);
    if (p == UB_LO_EXPLICIT)
        lo->is_explicit = true;
}

static ub_prim *def(ub_prim *parent, const char *type, const char *name)
{
    ub_prim *p = ub_prim_new(L, parent ? parent : L->root, S(name), UB_DEF,
                             nosloc);
    p->type_name = type ? S(type) : NULL;
    return p;
}

static ub_prop *attr(ub_prim *p, const char *type, bool array,
                     const char *name)
{
    ub_prop *a = ub_prop_new(L, p, S(name), UB_ATTR, nosloc);
    ub_prop_set_decl(L->arena, L->strtab, a,
                     ub_type_by_name(type, strlen(type)), S(type));
    a->is_array = array;
    return a;
}

/* --- tests ------------------------------------------------------------------ */

static void test_empty(void)
{
    check("#usda 1.0\n\n");
}

static void test_layer_metadata(void)
{
    set_meta(&L->meta, "framesPerSecond", dbl_value(UB_TY_DOUBLE, 24));
    set_meta(&L->meta, "framePrecision", (ub_value){0});
    ub_value fp = ub_value_new(L->arena, ub_type_get(UB_TY_INT), 1, false);
    *(int32_t *)ub_value_data(&fp) = 3;
    set_meta(&L->meta, "framePrecision", fp);
    set_meta(&L->meta, "comment", str_value(UB_TY_STRING, "Test of things."));
    set_meta(&L->meta, "owner", str_value(UB_TY_STRING, "foo"));
    set_meta(&L->meta, "hasOwnedSubLayers", bool_value(true));
    set_meta(&L->meta, "defaultPrim", str_value(UB_TY_TOKEN, "World"));
    set_meta(&L->meta, "doc", str_value(UB_TY_STRING, ""));
    ub_sublayer *s = ub_layer_add_sublayer(L, S("a.usda"), nosloc);
    s->offset = (ub_offset){11, 22};
    s = ub_layer_add_sublayer(L, S("b@x.usda"), nosloc);
    s->offset = (ub_offset){0, 2};
    L->has_sublayers = true;
    ub_dict *d = ub_dict_new(L->arena);
    ub_dict_set(L->arena, d, S("zeta"), dbl_value(UB_TY_DOUBLE, 0.5), nosloc);
    ub_dict_set(L->arena, d, S("Alpha"), str_value(UB_TY_STRING, "x"),
                nosloc);
    ub_dict_set(L->arena, d, S("not an id"), bool_value(false), nosloc);
    set_meta(&L->meta, "customLayerData",
             (ub_value){.kind = UB_V_DICT, .u.dict = d});
    check("#usda 1.0\n"
          "(\n"
          "    \"Test of things.\"\n"
          "    customLayerData = {\n"
          "        string Alpha = \"x\"\n"
          "        bool \"not an id\" = 0\n"
          "        double zeta = 0.5\n"
          "    }\n"
          "    defaultPrim = \"World\"\n"
          "    framePrecision = 3\n"
          "    framesPerSecond = 24\n"
          "    hasOwnedSubLayers = true\n"
          "    owner = \"foo\"\n"
          "    subLayers = [\n"
          "        @a.usda@ (offset = 11; scale = 22),\n"
          "        @@@b@x.usda@@@ (scale = 2)\n"
          "    ]\n"
          ")\n"
          "\n");
}

static void test_prims_and_order(void)
{
    ub_prim *cam = def(NULL, "Camera", "overview_cam");
    ub_prop *a = attr(cam, "double", false, "camy");
    a->default_value = dbl_value(UB_TY_DOUBLE, 3.4);
    a = attr(cam, "double", false, "camx");
    a->default_value = dbl_value(UB_TY_DOUBLE, 1.2);
    ub_prim *head = def(cam, "Scope", "Head");
    a = attr(head, "double", false, "width");
    a->default_value = dbl_value(UB_TY_DOUBLE, 1905.41);
    ub_prim *o = ub_prim_new(L, L->root, S("TestOver"), UB_OVER, nosloc);
    (void)o;
    ub_prim *c = ub_prim_new(L, L->root, S("Cls"), UB_CLASS, nosloc);
    c->type_name = S("__AnyType__");
    const char *order[] = {"TestOver", "overview_cam"};
    ub_prim_ext_get(L->arena, L->root)->prim_order =
        strs_value(UB_TY_TOKEN, order, 2);
    check("#usda 1.0\n"
          "\n"
          "reorder rootPrims = [\"TestOver\", \"overview_cam\"]\n"
          "\n"
          "def Camera \"overview_cam\"\n"
          "{\n"
          "    double camx = 1.2\n"
          "    double camy = 3.4\n"
          "\n"
          "    def Scope \"Head\"\n"
          "    {\n"
          "        double width = 1905.41\n"
          "    }\n"
          "}\n"
          "\n"
          "over \"TestOver\"\n"
          "{\n"
          "}\n"
          "\n"
          "class \"Cls\"\n"
          "{\n"
          "}\n"
          "\n");
}

static void test_property_order(void)
{
    ub_prim *p = def(NULL, "MfScope", "t");
    const char *names[] = {"i10", "i9", "blocked", "I2", "a_b", "aB", "x:y",
                           "x"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        ub_prop *a = attr(p, "int", false, names[i]);
        a->custom = true;
    }
    ub_prop *r = ub_prop_new(L, p, S("x"), UB_REL, nosloc);
    (void)r;
    check("#usda 1.0\n"
          "\n"
          "def MfScope \"t\"\n"
          "{\n"
          "    custom int a_b\n"
          "    custom int aB\n"
          "    custom int blocked\n"
          "    custom int I2\n"
          "    custom int i9\n"
          "    custom int i10\n"
          "    custom int x\n"
          "    rel x\n"
          "    custom int x:y\n"
          "}\n"
          "\n");
}

static void test_attributes(void)
{
    ub_prim *p = def(NULL, NULL, "p");
    ub_prop *a = attr(p, "float3", true, "pts");
    a->default_value = ub_value_new(L->arena, ub_type_get(UB_TY_FLOAT3), 2,
                                    true);
    float *f = ub_value_data(&a->default_value);
    f[0] = -1.707f, f[1] = 1.707f, f[2] = 10.303f;
    f[3] = 2.23f, f[4] = 4.45f, f[5] = 0;
    a = attr(p, "double", false, "blocked");
    a->custom = true;
    a->default_value = ub_value_block();
    a = attr(p, "token", false, "u");
    a->variability = UB_UNIFORM;
    a->default_value = str_value(UB_TY_TOKEN, "fo'o");
    ub_fields *am = ub_prop_meta_get(L->arena, a);
    set_meta(am, "allowedTokens",
             strs_value(UB_TY_TOKEN, (const char *[]){"a", "fo'o"}, 2));
    set_meta(am, "doc", str_value(UB_TY_STRING, "use \"this\""));
    set_meta(am, "comment", str_value(UB_TY_STRING, "a comment"));
    set_meta(am, "hidden", bool_value(true));
    set_meta(am, "displayUnit", str_value(UB_TY_TOKEN, "mm"));
    a = attr(p, "double", false, "radius");
    ub_samples_set(L->arena, &ub_prop_ext_get(L->arena, a)->samples, 3.23,
                   dbl_value(UB_TY_DOUBLE, 10));
    ub_samples_set(L->arena, &ub_prop_ext_get(L->arena, a)->samples, 1.23,
                   dbl_value(UB_TY_DOUBLE, 5));
    ub_samples_set(L->arena, &ub_prop_ext_get(L->arena, a)->samples, 7,
                   ub_value_block());
    ub_prop_ext_get(L->arena, a)->samples.authored = true;
    a = attr(p, "double", false, "empty");
    ub_prop_ext_get(L->arena, a)->samples.authored = true;
    a = attr(p, "matrix2d", false, "m");
    a->default_value = ub_value_new(L->arena, ub_type_get(UB_TY_MATRIX2D), 1,
                                    false);
    double *m = ub_value_data(&a->default_value);
    m[0] = 1, m[3] = 1;
    a = attr(p, "asset", false, "tex");
    a->default_value = str_value(UB_TY_ASSET, "//$STAGEDIR/path.sdf");
    a = attr(p, "half", false, "h");
    a->default_value = ub_value_new(L->arena, ub_type_get(UB_TY_HALF), 1,
                                    false);
    *(uint16_t *)ub_value_data(&a->default_value) = ub_float_to_half(1.807f);
    check("#usda 1.0\n"
          "\n"
          "def \"p\"\n"
          "{\n"
          "    custom double blocked = None\n"
          "    double empty.timeSamples = {\n"
          "    }\n"
          "    half h = 1.80664\n"
          "    matrix2d m = ( (1, 0), (0, 1) )\n"
          "    float3[] pts = [(-1.707, 1.707, 10.303), (2.23, 4.45, 0)]\n"
          "    double radius.timeSamples = {\n"
          "        1.23: 5,\n"
          "        3.23: 10,\n"
          "        7: None,\n"
          "    }\n"
          "    asset tex = @//$STAGEDIR/path.sdf@\n"
          "    uniform token u = \"fo'o\" (\n"
          "        \"a comment\"\n"
          "        allowedTokens = [\"a\", \"fo'o\"]\n"
          "        displayUnit = mm\n"
          "        doc = 'use \"this\"'\n"
          "        hidden = true\n"
          "    )\n"
          "}\n"
          "\n");
}

static void test_connections(void)
{
    ub_prim *p = def(NULL, NULL, "p");
    ub_prop *a = attr(p, "float", false, "in");
    ub_listop *lo =
        listop(&ub_prop_ext_get(L->arena, a)->connections, UB_TY_PATH);
    set_part(lo, UB_LO_EXPLICIT,
             strs_value(UB_TY_PATH, (const char *[]){"/a.x", "/b.y"}, 2));
    a = attr(p, "float", false, "one");
    a->default_value = dbl_value(UB_TY_FLOAT, 0.5);
    lo = listop(&ub_prop_ext_get(L->arena, a)->connections, UB_TY_PATH);
    set_part(lo, UB_LO_EXPLICIT,
             strs_value(UB_TY_PATH, (const char *[]){"/a.x"}, 1));
    a = attr(p, "float", false, "ops");
    lo = listop(&ub_prop_ext_get(L->arena, a)->connections, UB_TY_PATH);
    set_part(lo, UB_LO_DELETE,
             strs_value(UB_TY_PATH, (const char *[]){"/d.x"}, 1));
    set_part(lo, UB_LO_PREPEND,
             strs_value(UB_TY_PATH, (const char *[]){"/p.x"}, 1));
    a = attr(p, "float", false, "zero");
    lo = listop(&ub_prop_ext_get(L->arena, a)->connections, UB_TY_PATH);
    set_part(lo, UB_LO_EXPLICIT, strs_value(UB_TY_PATH, NULL, 0));
    check("#usda 1.0\n"
          "\n"
          "def \"p\"\n"
          "{\n"
          "    float in.connect = [\n"
          "        </a.x>,\n"
          "        </b.y>,\n"
          "    ]\n"
          "    float one = 0.5\n"
          "    float one.connect = </a.x>\n"
          "    delete float ops.connect = </d.x>\n"
          "    prepend float ops.connect = </p.x>\n"
          "    float zero.connect = None\n"
          "}\n"
          "\n");
}

static void test_relationships(void)
{
    ub_prim *p = def(NULL, "MfScope", "foo");
    ub_prop *r = ub_prop_new(L, p, S("complex_rel"), UB_REL, nosloc);
    ub_listop *lo = listop(&ub_prop_ext_get(L->arena, r)->targets, UB_TY_PATH);
    set_part(lo, UB_LO_EXPLICIT,
             strs_value(UB_TY_PATH,
                        (const char *[]){"/foo/Foo/Bar", "/foo/Blah/Blah"},
                        2));
    ub_fields *rm = ub_prop_meta_get(L->arena, r);
    set_meta(rm, "comment", str_value(UB_TY_STRING, "Exercise full syntax"));
    set_meta(rm, "doc", str_value(UB_TY_STRING, "use this for \"stuff\"..."));
    set_meta(rm, "permission", str_value(UB_TY_TOKEN, "public"));
    set_meta(rm, "symmetryFunction",
             str_value(UB_TY_TOKEN, "testSymmetryFunction"));
    r = ub_prop_new(L, p, S("no_targets_rel"), UB_REL, nosloc);
    r = ub_prop_new(L, p, S("rel_make_empty"), UB_REL, nosloc);
    lo = listop(&ub_prop_ext_get(L->arena, r)->targets, UB_TY_PATH);
    set_part(lo, UB_LO_EXPLICIT, strs_value(UB_TY_PATH, NULL, 0));
    r = ub_prop_new(L, p, S("rel_list_editing"), UB_REL, nosloc);
    r->custom = true;
    lo = listop(&ub_prop_ext_get(L->arena, r)->targets, UB_TY_PATH);
    set_part(lo, UB_LO_DELETE,
             strs_value(UB_TY_PATH, (const char *[]){"/foo", "/bar"}, 2));
    set_part(lo, UB_LO_REORDER,
             strs_value(UB_TY_PATH, (const char *[]){"/boom"}, 1));
    r = ub_prop_new(L, p, S("single"), UB_REL, nosloc);
    lo = listop(&ub_prop_ext_get(L->arena, r)->targets, UB_TY_PATH);
    set_part(lo, UB_LO_EXPLICIT,
             strs_value(UB_TY_PATH, (const char *[]){"/foo/Foo"}, 1));
    r = ub_prop_new(L, p, S("constraintTarget"), UB_REL, nosloc);
    r->varying_keyword = true;
    ub_prop_ext_get(L->arena, r)->default_target = S("/Pivot");
    lo = listop(&ub_prop_ext_get(L->arena, r)->targets, UB_TY_PATH);
    set_part(lo, UB_LO_ADD,
             strs_value(UB_TY_PATH, (const char *[]){"/Pivot3", "/Pivot2"},
                        2));
    check("#usda 1.0\n"
          "\n"
          "def MfScope \"foo\"\n"
          "{\n"
          "    rel complex_rel = [\n"
          "        </foo/Foo/Bar>,\n"
          "        </foo/Blah/Blah>,\n"
          "    ] (\n"
          "        \"Exercise full syntax\"\n"
          "        doc = 'use this for \"stuff\"...'\n"
          "        permission = public\n"
          "        symmetryFunction = testSymmetryFunction\n"
          "    )\n"
          "    add varying rel constraintTarget = [\n"
          "        </Pivot3>,\n"
          "        </Pivot2>,\n"
          "    ]\n"
          "    varying rel constraintTarget.default = </Pivot>    \n"
          "    rel no_targets_rel\n"
          "    custom rel rel_list_editing\n"
          "    delete rel rel_list_editing = [\n"
          "        </foo>,\n"
          "        </bar>,\n"
          "    ]\n"
          "    reorder rel rel_list_editing = </boom>\n"
          "    rel rel_make_empty = None\n"
          "    rel single = </foo/Foo>\n"
          "}\n"
          "\n");
}

static ub_value refs(const ub_reference *r, uint32_t n, ub_type_id t)
{
    ub_value v = ub_value_new(L->arena, ub_type_get(t), n, true);
    memcpy(ub_value_data(&v), r, n * sizeof *r);
    return v;
}

static void test_references(void)
{
    ub_prim *p = def(NULL, "MfScope", "TestPrim3");
    ub_dict *cd = ub_dict_new(L->arena);
    ub_value iv = ub_value_new(L->arena, ub_type_get(UB_TY_INT), 1, false);
    *(int32_t *)ub_value_data(&iv) = 42;
    ub_dict_set(L->arena, cd, S("t1"), iv, nosloc);
    ub_dict_set(L->arena, cd, S("b1"), bool_value(true), nosloc);
    ub_reference r[3] = {
        {.asset = S("///test/layer.sdf"), .prim_path = S("/Prim"),
         .offset = {11, 22}},
        {.asset = S("///test1/layer1.sdf"), .prim_path = S("/Prim2"),
         .offset = {0.1, 0.2}, .custom_data = cd},
        {.asset = S(""), .prim_path = S(""), .offset = {0, 1}},
    };
    ub_value v;
    ub_listop *lo = listop(&v, UB_TY_REFERENCE);
    set_part(lo, UB_LO_EXPLICIT, refs(r, 3, UB_TY_REFERENCE));
    set_meta(&p->meta, "references", v);

    ub_prim *q = def(NULL, "MfScope", "TestPrim7");
    lo = listop(&v, UB_TY_REFERENCE);
    set_part(lo, UB_LO_DELETE, refs(r, 1, UB_TY_REFERENCE));
    set_part(lo, UB_LO_PREPEND, refs(r + 2, 1, UB_TY_REFERENCE));
    set_meta(&q->meta, "references", v);
    ub_reference pl = {.asset = S("p.usda"), .prim_path = S(""),
                       .offset = {5, 1}};
    lo = listop(&v, UB_TY_PAYLOAD);
    set_part(lo, UB_LO_EXPLICIT, refs(&pl, 1, UB_TY_PAYLOAD));
    set_meta(&q->meta, "payload", v);
    lo = listop(&v, UB_TY_PATH);
    set_part(lo, UB_LO_EXPLICIT, strs_value(UB_TY_PATH, NULL, 0));
    set_meta(&q->meta, "inherits", v);
    set_meta(&q->meta, "instanceable", bool_value(false));
    ub_dict *vsel = ub_dict_new(L->arena);
    ub_dict_set(L->arena, vsel, S("shading"), str_value(UB_TY_STRING, "red"),
                nosloc);
    set_meta(&q->meta, "variants", (ub_value){.kind = UB_V_DICT,
                                               .u.dict = vsel});
    lo = listop(&v, UB_TY_STRING);
    set_part(lo, UB_LO_PREPEND,
             strs_value(UB_TY_STRING, (const char *[]){"shading"}, 1));
    set_meta(&q->meta, "variantSets", v);
    lo = listop(&v, UB_TY_TOKEN);
    set_part(lo, UB_LO_PREPEND,
             strs_value(UB_TY_TOKEN, (const char *[]){"MaterialBindingAPI"},
                        1));
    set_meta(&q->meta, "apiSchemas", v);
    set_meta(&q->meta, "kind", str_value(UB_TY_TOKEN, "component"));
    check("#usda 1.0\n"
          "\n"
          "def MfScope \"TestPrim3\" (\n"
          "    references = [\n"
          "        @///test/layer.sdf@</Prim> (offset = 11; scale = 22),\n"
          "        @///test1/layer1.sdf@</Prim2> (\n"
          "            offset = 0.1\n"
          "            scale = 0.2\n"
          "            customData = {\n"
          "                bool b1 = 1\n"
          "                int t1 = 42\n"
          "            }\n"
          "        ),\n"
          "        <>\n"
          "    ]\n"
          ")\n"
          "{\n"
          "}\n"
          "\n"
          "def MfScope \"TestPrim7\" (\n"
          "    prepend apiSchemas = [\"MaterialBindingAPI\"]\n"
          "    inherits = None\n"
          "    instanceable = false\n"
          "    kind = \"component\"\n"
          "    payload = @p.usda@ (offset = 5)\n"
          "    delete references = @///test/layer.sdf@</Prim> (offset = 11; "
          "scale = 22)\n"
          "    prepend references = <>\n"
          "    variants = {\n"
          "        string shading = \"red\"\n"
          "    }\n"
          "    prepend variantSets = \"shading\"\n"
          ")\n"
          "{\n"
          "}\n"
          "\n");
}

static void test_variants_and_reorder(void)
{
    ub_prim *p = def(NULL, "Xform", "ball");
    const char *po[] = {"b", "a"};
    ub_prim_ext_get(L->arena, p)->property_order =
        strs_value(UB_TY_TOKEN, po, 2);
    ub_prim_ext_get(L->arena, p)->prim_order =
        strs_value(UB_TY_TOKEN, po, 1); /* one name: dropped */
    ub_variant_set *vs = ub_variant_set_get(L, p, S("lights"), nosloc);
    ub_prim *on = ub_variant_new(L, p, vs, S("on"), nosloc);
    (void)on;
    ub_prim *left = ub_variant_new(L, p, vs, S("left"), nosloc);
    set_meta(&left->meta, "kind", str_value(UB_TY_TOKEN, "group"));
    ub_prim *o = ub_prim_new(L, left, S("lights"), UB_OVER, nosloc);
    (void)o;
    ub_variant_set_get(L, p, S("empty"), nosloc);
    check("#usda 1.0\n"
          "\n"
          "def Xform \"ball\"\n"
          "{\n"
          "    reorder properties = [\"b\", \"a\"]\n"
          "    variantSet \"lights\" = {\n"
          "        \"left\" (\n"
          "            kind = \"group\"\n"
          "        ) {\n"
          "            over \"lights\"\n"
          "            {\n"
          "            }\n"
          "\n"
          "        }\n"
          "        \"on\" {\n"
          "\n"
          "        }\n"
          "    }\n"
          "}\n"
          "\n");
}

static void test_dictionaries(void)
{
    ub_prim *p = def(NULL, NULL, "Root");
    ub_prop *a = attr(p, "double", false, "attr");
    a->custom = true;
    ub_dict *d = ub_dict_new(L->arena);
    ub_dict *inner = ub_dict_new(L->arena);
    ub_dict *empty = ub_dict_new(L->arena);
    ub_dict_set(L->arena, inner, S("attr05"), str_value(UB_TY_STRING, "t2"),
                nosloc);
    ub_dict_set(L->arena, inner, S("e"),
                (ub_value){.kind = UB_V_DICT, .u.dict = empty}, nosloc);
    ub_value v3 = ub_value_new(L->arena, ub_type_get(UB_TY_DOUBLE3), 1, true);
    double *x = ub_value_data(&v3);
    x[0] = 1, x[1] = 2, x[2] = 3;
    ub_dict_set(L->arena, d, S("attr03"), v3, nosloc);
    ub_dict_set(L->arena, d, S("attr04"),
                (ub_value){.kind = UB_V_DICT, .u.dict = inner}, nosloc);
    ub_dict_set(L->arena, d, S("attr01a"), str_value(UB_TY_TOKEN, "test"),
                nosloc);
    ub_value c = ub_value_new(L->arena, ub_type_get(UB_TY_COLOR3F), 1, false);
    ub_dict_set(L->arena, d, S("color"), c, nosloc);
    ub_dict_set(L->arena, d, S("frame"),
                ub_value_new(L->arena, ub_type_get(UB_TY_FRAME4D), 0, true),
                nosloc);
    set_meta(ub_prop_meta_get(L->arena, a), "customData",
             (ub_value){.kind = UB_V_DICT, .u.dict = d});
    check("#usda 1.0\n"
          "\n"
          "def \"Root\"\n"
          "{\n"
          "    custom double attr (\n"
          "        customData = {\n"
          "            token attr01a = \"test\"\n"
          "            double3[] attr03 = [(1, 2, 3)]\n"
          "            dictionary attr04 = {\n"
          "                string attr05 = \"t2\"\n"
          "                dictionary e = {\n"
          "                }\n"
          "            }\n"
          "            float3 color = (0, 0, 0)\n"
          "            matrix4d[] frame = []\n"
          "        }\n"
          "    )\n"
          "}\n"
          "\n");
}

static void test_untyped(void)
{
    ub_prim *p = def(NULL, "Scope", "Prim");
    ub_prop *a = ub_prop_new(L, p, S("fooTuple"), UB_ATTR, nosloc);
    ub_prop_set_decl(L->arena, L->strtab, a, NULL, S("ThisType::IsBogus"));
    ub_untyped *kids = ub_arena_zalloc(L->arena, 3 * sizeof *kids);
    kids[0] = (ub_untyped){.kind = UB_U_ATOM, .text = S("bogus")};
    kids[1] = (ub_untyped){.kind = UB_U_STRING, .text = S("s")};
    /* (an asset path holding '@' is written as a typed one is: `@a@b@`
     * read as `@a@` and then a syntax error) */
    kids[2] = (ub_untyped){.kind = UB_U_ASSET, .text = S("a@b")};
    ub_untyped *t = ub_arena_zalloc(L->arena, sizeof *t);
    *t = (ub_untyped){.kind = UB_U_TUPLE, .n = 3, .child = kids};
    a->default_value = (ub_value){.kind = UB_V_UNTYPED, .u.untyped = t};
    set_meta(ub_prop_meta_get(L->arena, a), "hidden", bool_value(true));
    check("#usda 1.0\n"
          "\n"
          "def Scope \"Prim\"\n"
          "{\n"
          "    ThisType::IsBogus fooTuple = (bogus, \"s\", @@@a@b@@@) (\n"
          "        hidden = true\n"
          "    )\n"
          "}\n"
          "\n");
}

static void test_strings(void)
{
    ub_prim *p = def(NULL, NULL, "s");
    set_meta(&p->meta, "comment", str_value(UB_TY_STRING, "multi\nline"));
    ub_prop *a = attr(p, "string", false, "c14");
    a->default_value = str_value(UB_TY_STRING, "fo'o''o\\\"o");
    a = attr(p, "string[]", false, "arr");
    ub_prop_set_decl(L->arena, L->strtab, a, ub_type_get(UB_TY_STRING),
                     S("string"));
    a->is_array = true;
    a->default_value = strs_value(UB_TY_STRING, (const char *[]){"a\tb", "\xc3\xa9"}, 2);
    check("#usda 1.0\n"
          "\n"
          "def \"s\" (\n"
          "    \"\"\"multi\nline\"\"\"\n"
          ")\n"
          "{\n"
          "    string[] arr = [\"a\\tb\", \"\xc3\xa9\"]\n"
          "    string c14 = \"fo'o''o\\\\\\\"o\"\n"
          "}\n"
          "\n");
}

static void test_deterministic(void)
{
    ub_prim *p = def(NULL, "Xform", "a");
    for (int i = 0; i < 50; i++) {
        char n[16];
        snprintf(n, sizeof n, "p%d", (i * 37) % 50);
        attr(p, "int", false, n)->custom = true;
    }
    out.len = 0;
    ub_usda_write(L, &out);
    size_t n1 = out.len;
    ub_buf second;
    ub_buf_init(&second);
    ub_usda_write(L, &second);
    CU_ASSERT_EQUAL(second.len, n1);
    CU_ASSERT(memcmp(second.data, out.data, n1) == 0);
    ub_buf_free(&second);
}

static void test_relocates_and_substitutions(void)
{
    const char *lr[] = {"/source", "/target", "/absolute", "/x/y", "/to/del",
                        ""};
    set_meta(&L->meta, "relocates", strs_value(UB_TY_PATH, lr, 6));
    ub_prim *a = def(NULL, NULL, "A");
    ub_prim *b = def(a, NULL, "B");
    const char *pr[] = {"/A/B/rel/path", "/A/B/other", "/source", "/target",
                        "/A/B", "/A/B/c", "/A/B/to/del", ""};
    set_meta(&b->meta, "relocates", strs_value(UB_TY_PATH, pr, 8));
    ub_dict *d = ub_dict_new(L->arena);
    ub_dict_set(L->arena, d, S("/old"), str_value(UB_TY_STRING, "/new"),
                nosloc);
    ub_dict_set(L->arena, d, S("/a"), str_value(UB_TY_STRING, "/b"), nosloc);
    set_meta(&b->meta, "prefixSubstitutions",
             (ub_value){.kind = UB_V_DICT, .u.dict = d});
    ub_value v;
    ub_listop *lo = listop(&v, UB_TY_STRING);
    set_part(lo, UB_LO_EXPLICIT,
             strs_value(UB_TY_STRING, (const char *[]){"v1", "v2"}, 2));
    set_meta(&b->meta, "variantSets", v);
    check("#usda 1.0\n"
          "(\n"
          "    relocates = {\n"
          "        </source>: </target>, \n"
          "        </absolute>: </x/y>, \n"
          "        </to/del>: <>\n"
          "    }\n"
          ")\n"
          "\n"
          "def \"A\"\n"
          "{\n"
          "    def \"B\" (\n"
          "        prefixSubstitutions = {\n"
          "            \"/a\": \"/b\", \n"
          "            \"/old\": \"/new\"\n"
          "        }\n"
          "        relocates = {\n"
          "            <.>: <c>, \n"
          "            <../../source>: <../../target>, \n"
          "            <rel/path>: <other>, \n"
          "            <to/del>: <>\n"
          "        }\n"
          "        variantSets = [\"v1\", \"v2\"]\n"
          "    )\n"
          "    {\n"
          "    }\n"
          "}\n"
          "\n");
}

/* An explicit variantSets list orders the variant sets (OpenUSD creates
 * them from the list); a prepend does not. */
static void test_variant_set_order(void)
{
    ub_prim *p = def(NULL, NULL, "p");
    ub_prim *q = def(NULL, NULL, "q");
    ub_prim *owners[2] = {p, q};
    for (int k = 0; k < 2; k++) {
        ub_value v;
        ub_listop *lo = listop(&v, UB_TY_STRING);
        set_part(lo, k == 0 ? UB_LO_EXPLICIT : UB_LO_PREPEND,
                 strs_value(UB_TY_STRING, (const char *[]){"b", "a"}, 2));
        set_meta(&owners[k]->meta, "variantSets", v);
        const char *sets[] = {"a", "b"};
        for (int i = 0; i < 2; i++) {
            ub_variant_set *vs = ub_variant_set_get(L, owners[k], S(sets[i]),
                                                    nosloc);
            ub_variant_new(L, owners[k], vs, S("x"), nosloc);
        }
    }
    check("#usda 1.0\n"
          "\n"
          "def \"p\" (\n"
          "    variantSets = [\"b\", \"a\"]\n"
          ")\n"
          "{\n"
          "    variantSet \"b\" = {\n"
          "        \"x\" {\n"
          "\n"
          "        }\n"
          "    }\n"
          "    variantSet \"a\" = {\n"
          "        \"x\" {\n"
          "\n"
          "        }\n"
          "    }\n"
          "}\n"
          "\n"
          "def \"q\" (\n"
          "    prepend variantSets = [\"b\", \"a\"]\n"
          ")\n"
          "{\n"
          "    variantSet \"a\" = {\n"
          "        \"x\" {\n"
          "\n"
          "        }\n"
          "    }\n"
          "    variantSet \"b\" = {\n"
          "        \"x\" {\n"
          "\n"
          "        }\n"
          "    }\n"
          "}\n"
          "\n");
}

/* --- property: write -> parse -> write is a fixed point ------------------ */

static uint64_t rng = 0x2545f4914f6cdd1du;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Strings that exercise every quoting rule: both quotes, backslashes,
 * control bytes, newlines (triple quotes), UTF-8 and invalid bytes. */
static const char *rnd_string(void)
{
    static const char *const parts[] = {
        "a", "Z", " ", "'", "\"", "\\", "\n", "\t", "\r", "\x01", "\x7f",
        "\xc3\xa9", "\xe2\x82\xac", "\xff", "@", "<x>", "{", "#", "0.5",
    };
    char buf[64];
    size_t n = 0, k = rnd() % 8;
    for (size_t i = 0; i < k; i++) {
        const char *p = parts[rnd() % (sizeof parts / sizeof *parts)];
        size_t l = strlen(p);
        memcpy(buf + n, p, l);
        n += l;
    }
    return ub_intern(strtab, buf, n);
}

static const char *rnd_ident(const char *prefix)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%s%u", prefix, (unsigned)(rnd() % 1000));
    return S(buf);
}

static void rnd_numeric(ub_value *v)
{
    size_t bytes = (size_t)v->count * ub_type_elem_size(ub_value_type(v));
    unsigned char *p = ub_value_data(v);
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)rnd();
    if (ub_value_type(v)->scalar == UB_SC_BOOL ||
        ub_value_type(v)->scalar == UB_SC_UCHAR) {
        if (ub_value_type(v)->scalar == UB_SC_BOOL)
            for (size_t i = 0; i < bytes; i++)
                p[i] &= 1;
    }
}

static ub_value rnd_value(const ub_type *t, bool array)
{
    uint32_t n = array ? (uint32_t)(rnd() % 4) : 1;
    ub_value v = ub_value_new(L->arena, t, n, array);
    if (t->scalar == UB_SC_STRING) {
        for (uint32_t i = 0; i < n; i++)
            ((const char **)ub_value_data(&v))[i] =
                t->id == UB_TY_ASSET ? rnd_ident("dir/file") : rnd_string();
    } else {
        rnd_numeric(&v);
    }
    return v;
}

static const ub_type_id attr_types[] = {
    UB_TY_BOOL, UB_TY_UCHAR, UB_TY_INT, UB_TY_UINT, UB_TY_INT64,
    UB_TY_UINT64, UB_TY_HALF, UB_TY_FLOAT, UB_TY_DOUBLE, UB_TY_TIMECODE,
    UB_TY_STRING, UB_TY_TOKEN, UB_TY_ASSET, UB_TY_MATRIX2D, UB_TY_MATRIX4D,
    UB_TY_QUATH, UB_TY_QUATF, UB_TY_QUATD, UB_TY_INT3, UB_TY_HALF2,
    UB_TY_FLOAT3, UB_TY_DOUBLE4, UB_TY_POINT3F, UB_TY_COLOR4H,
    UB_TY_TEXCOORD2F, UB_TY_FRAME4D,
};

static ub_dict *rnd_dict(int depth)
{
    ub_dict *d = ub_dict_new(L->arena);
    int n = (int)(rnd() % 4);
    for (int i = 0; i < n; i++) {
        const char *key = rnd() % 4 ? rnd_ident("k") : rnd_ident("a key ");
        if (depth < 2 && rnd() % 4 == 0) {
            ub_dict_set(L->arena, d, key,
                        (ub_value){.kind = UB_V_DICT,
                                   .u.dict = rnd_dict(depth + 1)},
                        nosloc);
        } else {
            const ub_type *t = ub_type_get(
                attr_types[rnd() % (sizeof attr_types / sizeof *attr_types)]);
            ub_dict_set(L->arena, d, key, rnd_value(t, rnd() % 2), nosloc);
        }
    }
    return d;
}

static void rnd_prim(ub_prim *parent, int depth)
{
    const char *name = rnd_ident("prim");
    if (ub_prim_find_child(L, parent, name))
        return; /* names are unique among siblings */
    ub_prim *p = ub_prim_new(L, parent, name, (ub_specifier)(rnd() % 3),
                             nosloc);
    if (!p)
        return;
    if (rnd() % 2)
        p->type_name = S(rnd() % 2 ? "Xform" : "Mesh");
    if (rnd() % 3 == 0)
        set_meta(&p->meta, "comment", str_value(UB_TY_STRING, rnd_string()));
    if (rnd() % 3 == 0)
        set_meta(&p->meta, "customData",
                 (ub_value){.kind = UB_V_DICT, .u.dict = rnd_dict(0)});
    if (rnd() % 3 == 0)
        set_meta(&p->meta, "kind", str_value(UB_TY_TOKEN, "component"));
    if (rnd() % 4 == 0) {
        ub_value v;
        ub_listop *lo = listop(&v, UB_TY_REFERENCE);
        ub_reference r = {.asset = rnd_ident("ref"),
                          .prim_path = S("/Model"),
                          .offset = {(double)(rnd() % 7), 1.0}};
        if (rnd() % 2)
            r.custom_data = rnd_dict(1);
        set_part(lo, rnd() % 2 ? UB_LO_EXPLICIT : UB_LO_PREPEND,
                 refs(&r, 1, UB_TY_REFERENCE));
        set_meta(&p->meta, "references", v);
    }
    if (rnd() % 5 == 0) {
        ub_value v;
        ub_listop *lo = listop(&v, UB_TY_PAYLOAD);
        ub_reference r = {.asset = rnd_ident("pay"), .prim_path = S(""),
                          .offset = {0, rnd() % 2 ? 1.0 : 0.5}};
        set_part(lo, UB_LO_APPEND, refs(&r, 1, UB_TY_PAYLOAD));
        set_meta(&p->meta, "payload", v);
    }
    if (rnd() % 5 == 0) {
        ub_value v;
        ub_listop *lo = listop(&v, UB_TY_PATH);
        /* Empty edits print nothing (as in OpenUSD), so only an explicit
         * list may be empty here. */
        bool expl = rnd() % 2;
        set_part(lo, expl ? UB_LO_EXPLICIT : UB_LO_DELETE,
                 strs_value(UB_TY_PATH, (const char *[]){"/C1", "/C2"},
                            (uint32_t)(rnd() % 2) + !expl));
        set_meta(&p->meta, rnd() % 2 ? "inherits" : "specializes", v);
    }
    if (rnd() % 5 == 0) {
        ub_value v;
        ub_listop *lo = listop(&v, UB_TY_TOKEN);
        set_part(lo, UB_LO_PREPEND,
                 strs_value(UB_TY_TOKEN, (const char *[]){"A", "B API"},
                            1 + (uint32_t)(rnd() % 2)));
        set_meta(&p->meta, "apiSchemas", v);
    }
    if (rnd() % 5 == 0) {
        const char *names[] = {"x", "y", "z"};
        ub_prim_ext_get(L->arena, p)->property_order =
            strs_value(UB_TY_TOKEN, names, (uint32_t)(rnd() % 4));
        ub_prim_ext_get(L->arena, p)->prim_order =
            strs_value(UB_TY_TOKEN, names + 1, 2);
    }
    if (rnd() % 5 == 0 && depth < 3) {
        ub_variant_set *vs = ub_variant_set_get(L, p, rnd_ident("set"), nosloc);
        const char *vname = rnd_ident("v");
        ub_prim *var = vs ? ub_variant_new(L, p, vs, vname, nosloc) : NULL;
        if (var) {
            if (rnd() % 2)
                set_meta(&var->meta, "kind", str_value(UB_TY_TOKEN, "group"));
            rnd_prim(var, depth + 1);
        }
        ub_dict *sel = ub_dict_new(L->arena);
        ub_dict_set(L->arena, sel, vs->name, str_value(UB_TY_STRING, vname),
                    nosloc);
        set_meta(&p->meta, "variants",
                 (ub_value){.kind = UB_V_DICT, .u.dict = sel});
    }
    int nprops = (int)(rnd() % 5);
    for (int i = 0; i < nprops; i++) {
        if (rnd() % 5 == 0) {
            const char *rn = rnd_ident("rel");
            if (ub_prop_find(L, p, rn))
                continue;
            ub_prop *r = ub_prop_new(L, p, rn, UB_REL, nosloc);
            if (!r)
                continue;
            r->custom = rnd() % 2;
            ub_listop *lo =
                listop(&ub_prop_ext_get(L->arena, r)->targets, UB_TY_PATH);
            bool expl = rnd() % 2;
            set_part(lo, expl ? UB_LO_EXPLICIT : UB_LO_APPEND,
                     strs_value(UB_TY_PATH, (const char *[]){"/a", "/b/c"},
                                (uint32_t)(rnd() % 2) + !expl));
            r->varying_keyword = rnd() % 4 == 0;
            if (rnd() % 4 == 0)
                ub_prop_ext_get(L->arena, r)->default_target = S("/d");
            continue;
        }
        const ub_type *t = ub_type_get(
            attr_types[rnd() % (sizeof attr_types / sizeof *attr_types)]);
        bool array = rnd() % 2;
        const char *an = rnd_ident("attr");
        if (ub_prop_find(L, p, an))
            continue;
        ub_prop *a = ub_prop_new(L, p, an, UB_ATTR, nosloc);
        if (!a)
            continue;
        ub_prop_set_decl(L->arena, L->strtab, a, t, S(t->name));
        a->is_array = array;
        a->custom = rnd() % 2;
        a->variability = rnd() % 3 == 0 ? UB_UNIFORM : UB_VARYING;
        switch (rnd() % 4) {
        case 0:
            a->default_value = rnd_value(t, array);
            break;
        case 1:
            a->default_value = ub_value_block();
            break;
        case 2:
            ub_prop_ext_get(L->arena, a)->samples.authored = true;
            for (int k = 0; k < 3; k++)
                ub_samples_set(
                    L->arena, &ub_prop_ext_get(L->arena, a)->samples,
                    (double)(rnd() % 100) / 8,
                    rnd() % 5 ? rnd_value(t, array) : ub_value_block());
            break;
        default:
            break;
        }
        if (rnd() % 3 == 0)
            set_meta(ub_prop_meta_get(L->arena, a), "doc",
                     str_value(UB_TY_STRING, rnd_string()));
        if (rnd() % 5 == 0) {
            ub_listop *lo =
                listop(&ub_prop_ext_get(L->arena, a)->connections, UB_TY_PATH);
            bool expl = rnd() % 2;
            set_part(lo, expl ? UB_LO_EXPLICIT : UB_LO_PREPEND,
                     strs_value(UB_TY_PATH,
                                (const char *[]){"/s.outputs:a", "/t.b"},
                                (uint32_t)(rnd() % 2) + !expl));
        }
    }
    if (depth < 3) {
        int nkids = (int)(rnd() % 3);
        for (int i = 0; i < nkids; i++)
            rnd_prim(p, depth + 1);
    }
}

/* A sink that appends to another buffer, counting how often it is fed. */
typedef struct {
    ub_buf collected;
    int calls;
} stream_sink;

static int stream_collect(void *ctx, const void *data, size_t len)
{
    stream_sink *s = ctx;
    s->calls++;
    ub_buf_append(&s->collected, data, len);
    return 0;
}

static int stream_fail(void *ctx, const void *data, size_t len)
{
    (void)ctx;
    (void)data;
    (void)len;
    return -1;
}

/* Streaming in tiny pieces must give exactly the in-memory bytes. */
static void check_streamed_equals(const ub_layer *layer, const ub_buf *whole)
{
    stream_sink sink = {.calls = 0};
    ub_buf_init(&sink.collected);
    ub_buf streamed;
    ub_buf_init(&streamed);
    ub_buf_set_sink(&streamed, stream_collect, &sink, 1);
    ub_usda_write(layer, &streamed);
    CU_ASSERT_EQUAL(ub_buf_flush(&streamed), 0);
    CU_ASSERT_EQUAL(sink.collected.len, whole->len);
    if (sink.collected.len == whole->len)
        CU_ASSERT(memcmp(sink.collected.data, whole->data, whole->len) == 0);
    CU_ASSERT(sink.calls >= 1);
    ub_buf_free(&streamed);
    ub_buf_free(&sink.collected);
}

static void test_streaming(void)
{
    ub_prim *a = ub_prim_new(L, L->root, ub_intern_cstr(strtab, "A"), UB_DEF,
                             nosloc);
    for (int i = 0; i < 50; i++) {
        char name[16];
        snprintf(name, sizeof name, "C%d", i);
        ub_prim_new(L, a, ub_intern_cstr(strtab, name), UB_DEF, nosloc);
    }
    ub_buf whole;
    ub_buf_init(&whole);
    ub_usda_write(L, &whole);
    check_streamed_equals(L, &whole);
    ub_buf_free(&whole);

    /* A failing sink fails the buffer: nothing claims success. */
    ub_buf failing;
    ub_buf_init(&failing);
    ub_buf_set_sink(&failing, stream_fail, NULL, 1);
    ub_usda_write(L, &failing);
    CU_ASSERT_EQUAL(ub_buf_flush(&failing), -1);
    CU_ASSERT(failing.sink_failed);
    ub_buf_free(&failing);
}

static void test_roundtrip_random(void)
{
    int bad = 0;
    for (int iter = 0; iter < 300 && bad < 3; iter++) {
        ub_layer_free(L);
        L = ub_layer_new(strtab, "random.usda");
        if (rnd() % 2)
            set_meta(&L->meta, "comment",
                     str_value(UB_TY_STRING, rnd_string()));
        if (rnd() % 2) {
            ub_sublayer *sl = ub_layer_add_sublayer(L, rnd_ident("sub"),
                                                    nosloc);
            if (sl)
                sl->offset = (ub_offset){(double)(rnd() % 5), 1.0};
            L->has_sublayers = true;
        }
        if (rnd() % 2)
            set_meta(&L->meta, "customLayerData",
                     (ub_value){.kind = UB_V_DICT, .u.dict = rnd_dict(0)});
        if (rnd() % 2)
            set_meta(&L->meta, "startTimeCode",
                     dbl_value(UB_TY_DOUBLE, (double)(rnd() % 100) / 3));
        int n = 1 + (int)(rnd() % 3);
        for (int i = 0; i < n; i++)
            rnd_prim(L->root, 0);
        ub_buf first, second;
        ub_buf_init(&first);
        ub_buf_init(&second);
        ub_usda_write(L, &first);
        check_streamed_equals(L, &first);
        ub_diags *diags = ub_diags_new();
        ub_layer *back = ub_parse_usda(strtab, "random.usda", first.data,
                                       first.len, diags);
        if (back)
            ub_usda_write(back, &second);
        if (!back || first.len != second.len ||
            memcmp(first.data, second.data, first.len) != 0) {
            bad++;
            fprintf(stderr, "\nround trip %d failed (%s):\n%.*s\n", iter,
                    back ? "texts differ" : "parse error", (int)first.len,
                    first.data);
            for (size_t i = 0; i < ub_diags_count(diags); i++)
                fprintf(stderr, "  %u:%u: %s\n", ub_diags_at(diags, i)->loc.line,
                        ub_diags_at(diags, i)->loc.col,
                        ub_diags_at(diags, i)->message);
            if (back)
                fprintf(stderr, "second:\n%.*s\n", (int)second.len,
                        second.data);
        }
        ub_layer_free(back);
        ub_diags_free(diags);
        /* canonical text streams back unchanged */
        ub_buf third;
        if (first.data && (stream_text(first.data, first.len, &third) != 0 ||
                           third.len != first.len ||
                           memcmp(first.data, third.data, first.len) != 0)) {
            bad++;
            fprintf(stderr, "\nstreamed text %d differs:\n%.*s\n", iter,
                    (int)third.len, third.data ? third.data : "");
        }
        ub_buf_free(&third);
        ub_buf_free(&first);
        ub_buf_free(&second);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Stream-parse text (ub_parse_opts.stream into ub_usda_stream): returns
 * ub_usda_stream_end's result (-2 for a parse error) and the text in out. */
static int stream_text(const char *text, size_t len, ub_buf *out)
{
    ub_buf_init(out);
    ub_usda_stream *st = ub_usda_stream_new(out);
    ub_parse_stream ps = {.prim_done = ub_usda_stream_prim,
                          .prim_reopened = ub_usda_stream_reopened,
                          .ctx = st};
    ub_diags *diags = ub_diags_new();
    ub_parse_opts po = {.stream = &ps};
    ub_layer *l = ub_parse_usda_opts(strtab, "stream.usda", text, len, &po,
                                     diags);
    int r = l ? ub_usda_stream_end(st, l) : -2;
    CU_ASSERT(!l || l->streamed);
    ub_layer_free(l);
    ub_diags_free(diags);
    ub_usda_stream_free(st);
    return r;
}

/* The text ub_usda_write gives for the whole parsed layer. */
static void whole_text(const char *text, ub_buf *out)
{
    ub_buf_init(out);
    ub_diags *diags = ub_diags_new();
    ub_layer *l = ub_parse_usda(strtab, "stream.usda", text, strlen(text),
                                diags);
    CU_ASSERT_PTR_NOT_NULL(l);
    if (l)
        ub_usda_write(l, out);
    ub_layer_free(l);
    ub_diags_free(diags);
}

/* A prim's relocates inside a variant are written relative to the prim's
 * path without its variant selections, the path the reader anchors them
 * at: written and read again, they name the same prims. */
static void test_relocates_in_variant(void)
{
    static const char text[] =
        "#usda 1.0\ndef \"X\" {\n    variantSet \"v\" = {\n"
        "        \"a\" {\n            def \"Y\" (\n"
        "                relocates = { <a> : <b>, </X/Y/c> : </X/d> }\n"
        "            ) {\n            }\n        }\n    }\n}\n";
    ub_buf once, twice;
    whole_text(text, &once);
    ub_buf_append(&once, "", 1); /* (a C string for strstr) */
    CU_ASSERT_FATAL(!once.failed);
    CU_ASSERT_PTR_NOT_NULL(strstr(once.data, "<a>: <b>, \n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(once.data, "<c>: <../d>\n"));
    whole_text(once.data, &twice);
    CU_ASSERT_EQUAL(once.len - 1, twice.len);
    CU_ASSERT(memcmp(once.data, twice.data, twice.len) == 0);
    ub_buf_free(&once);
    ub_buf_free(&twice);
}

static void test_stream_parse(void)
{
    /* streamed exactly as the whole layer is written */
    static const char *const same[] = {
        "#usda 1.0\n",
        "#usda 1.0\n(\n    doc = \"d\"\n)\n\nreorder rootPrims = [\"b\", \"a\"]\n"
        "def \"a\" {\n}\ndef \"b\" (kind = \"x\") {\n  float f = 1\n"
        "  def \"c\" {\n    def \"d\" {\n    }\n    def \"e\" {\n    }\n  }\n"
        "  def \"g\" {\n  }\n}\n",
        /* variant sets after children are written after them anyway */
        "#usda 1.0\ndef \"a\" {\n  def \"c\" {\n  }\n"
        "  variantSet \"v\" = {\n    \"x\" {\n      def \"in\" {\n"
        "        def \"deeper\" {\n        }\n      }\n    }\n  }\n"
        "  def \"d\" {\n  }\n}\n",
        /* properties and metadata of a prim with no children */
        "#usda 1.0\nover \"a\" (\n  active = false\n)\n{\n"
        "  rel r = </a>\n  int i.timeSamples = { 1: 2 }\n}\n",
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        ub_buf s, w;
        CU_ASSERT_EQUAL(stream_text(same[i], strlen(same[i]), &s), 0);
        whole_text(same[i], &w);
        CU_ASSERT_EQUAL(s.len, w.len);
        CU_ASSERT(s.len == w.len && memcmp(s.data, w.data, s.len) == 0);
        ub_buf_free(&s);
        ub_buf_free(&w);
    }
    /* text that belongs before a child authored after it: start over */
    static const char *const late[] = {
        "#usda 1.0\ndef \"a\" {\n  def \"c\" {\n  }\n  float f = 1\n}\n",
        "#usda 1.0\ndef \"a\" {\n  def \"c\" {\n  }\n  rel r\n}\n",
        "#usda 1.0\ndef \"a\" {\n  def \"c\" {\n  }\n"
        "  reorder nameChildren = [\"c\"]\n}\n",
        "#usda 1.0\ndef \"a\" {\n}\nreorder rootPrims = [\"a\"]\n",
    };
    for (size_t i = 0; i < sizeof late / sizeof *late; i++) {
        ub_buf s;
        CU_ASSERT_EQUAL(stream_text(late[i], strlen(late[i]), &s), 1);
        ub_buf_free(&s);
    }
    /* inside a variant, order is the variant's business: no start over */
    ub_buf s;
    static const char in_variant[] =
        "#usda 1.0\ndef \"a\" {\n"
        "  variantSet \"v\" = {\n    \"x\" {\n"
        "      def \"c\" {\n      }\n"
        "      float f = 1\n    }\n  }\n}\n";
    CU_ASSERT_EQUAL(stream_text(in_variant, sizeof in_variant - 1, &s), 0);
    ub_buf_free(&s);
    /* a parse error: no layer */
    static const char broken[] =
        "#usda 1.0\ndef \"a\" {\n  def \"c\" {\n  }\n  float f = (\n}\n";
    CU_ASSERT_EQUAL(stream_text(broken, sizeof broken - 1, &s), -2);
    ub_buf_free(&s);
}

typedef struct { const char *name; void (*fn)(void); } test_case;

static const test_case cases[] = {
    {"empty layer", test_empty},
    {"layer metadata and sublayers", test_layer_metadata},
    {"prims, children, rootPrims order", test_prims_and_order},
    {"properties in dictionary order", test_property_order},
    {"attributes: values, samples, metadata", test_attributes},
    {"attribute connections", test_connections},
    {"relationships", test_relationships},
    {"references, payloads, prim metadata order", test_references},
    {"variant sets and reorder statements", test_variants_and_reorder},
    {"nested dictionaries", test_dictionaries},
    {"values of unknown types", test_untyped},
    {"string quoting", test_strings},
    {"relocates and string dictionaries", test_relocates_and_substitutions},
    {"variant set order", test_variant_set_order},
    {"deterministic", test_deterministic},
    {"streaming to a sink between prims", test_streaming},
    {"write, parse, write: a fixed point", test_roundtrip_random},
    {"relocates inside a variant", test_relocates_in_variant},
    {"streaming parse and write", test_stream_parse},
};

int main(void)
{
    strtab = ub_strtab_new();
    if (!strtab || CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    unsigned failed = 0;
    /* one suite per case, each on a fresh layer */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CU_pSuite s = CU_add_suite(cases[i].name, setup, teardown);
        CU_add_test(s, cases[i].name, cases[i].fn);
    }
    failed = ub_test_run_all();
    ub_strtab_free(strtab);
    return failed ? 1 : 0;
}
