/* CUnit tests for ub_stitch: the merge on layers parsed from text, and
 * clip stitching on frames written to a temporary directory. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ub_parse.h"
#include "ub_stitch.h"
#include "ub_usda.h"
#include "ub_test.h"

static ub_strtab *T;
static char dir[] = "/tmp/ub_test_stitch.XXXXXX";

static const char *S(const char *s)
{
    return ub_intern_cstr(T, s);
}

static ub_layer *parse(const char *path, const char *text, ub_diags *d)
{
    ub_layer *l = ub_parse_usda(T, path, text, strlen(text), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    return l;
}

static const ub_prim *child(const ub_layer *l, const ub_prim *p,
                            const char *name)
{
    return ub_prim_find_child(l, p, S(name));
}

static const ub_prop *prop(const ub_layer *l, const ub_prim *p,
                           const char *name)
{
    return ub_prop_find(l, p, S(name));
}

static double num(const ub_value *v)
{
    return ub_value_get_double(v, 0, 0);
}

static const char *strong_text =
    "#usda 1.0\n(\n    startTimeCode = 5\n    endTimeCode = 6\n)\n"
    "over \"A\" (\n    customData = {\n        int a = 1\n    }\n)\n{\n"
    "    float x = 1\n"
    "    float y.timeSamples = {\n        1: 10,\n    }\n"
    "    def \"C\"\n    {\n    }\n"
    "}\n";
static const char *weak_text =
    "#usda 1.0\n(\n    startTimeCode = 2\n    endTimeCode = 3\n)\n"
    "def Xform \"A\" (\n    customData = {\n        int a = 2\n        int b = 3\n    }\n)\n{\n"
    "    float x = 2\n"
    "    float y.timeSamples = {\n        1: 99,\n        2: 20,\n    }\n"
    "    rel r = </A/C>\n"
    "    def \"B\"\n    {\n    }\n"
    "    def \"C\"\n    {\n        int z = 4\n    }\n"
    "}\n";

static void test_merge(void)
{
    ub_diags *d = ub_diags_new();
    ub_layer *out = ub_layer_new(T, "out.usda");
    ub_layer *s = parse("strong.usda", strong_text, d);
    ub_layer *w = parse("weak.usda", weak_text, d);
    CU_ASSERT_EQUAL(ub_stitch_merge(out, s, true, false, d), 0);
    CU_ASSERT_EQUAL(ub_stitch_merge(out, w, true, false, d), 0);
    /* the inputs may go: everything was copied */
    ub_layer_free(s);
    ub_layer_free(w);
    const ub_field *st = ub_fields_find(&out->meta, S("startTimeCode"));
    const ub_field *en = ub_fields_find(&out->meta, S("endTimeCode"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(en);
    CU_ASSERT_EQUAL(num(&st->value), 2); /* the earliest */
    CU_ASSERT_EQUAL(num(&en->value), 6); /* the latest */
    const ub_prim *a = child(out, out->root, "A");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->specifier, UB_DEF); /* a weaker def over an over */
    CU_ASSERT_PTR_EQUAL(a->type_name, S("Xform"));
    const ub_prop *x = prop(out, a, "x");
    CU_ASSERT_EQUAL(num(&x->default_value), 1);
    const ub_prop *y = prop(out, a, "y");
    CU_ASSERT_EQUAL_FATAL(ub_prop_samples(y)->n, 2);
    CU_ASSERT_EQUAL(num(&ub_prop_samples(y)->v[0].value), 10);
    CU_ASSERT_EQUAL(num(&ub_prop_samples(y)->v[1].value), 20);
    CU_ASSERT_PTR_NOT_NULL(prop(out, a, "r"));
    /* children: the stronger's, then the weaker's new ones */
    CU_ASSERT_EQUAL_FATAL(a->children.n, 2);
    CU_ASSERT_STRING_EQUAL(a->children.v[0]->name, "C");
    CU_ASSERT_STRING_EQUAL(a->children.v[1]->name, "B");
    CU_ASSERT_PTR_NOT_NULL(prop(out, a->children.v[0], "z"));
    /* dictionaries key by key, the stronger key winning */
    const ub_field *cd = ub_fields_find(&a->meta, S("customData"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(cd);
    CU_ASSERT_EQUAL_FATAL(cd->value.kind, UB_V_DICT);
    ub_dict_entry *ka = ub_dict_find(cd->value.u.dict, S("a"));
    ub_dict_entry *kb = ub_dict_find(cd->value.u.dict, S("b"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(ka);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kb);
    CU_ASSERT_EQUAL(num(&ka->value), 1);
    CU_ASSERT_EQUAL(num(&kb->value), 3);
    CU_ASSERT_EQUAL(ub_diags_errors(d), 0);
    ub_layer_free(out);
    ub_diags_free(d);
}

static void test_merge_without_samples_checks_types(void)
{
    ub_diags *d = ub_diags_new();
    ub_layer *out = ub_layer_new(T, "topo.usda");
    ub_layer *a = parse("f1.usda",
                        "#usda 1.0\ndef \"P\" {\n    float3 v.timeSamples = "
                        "{ 1: (1, 2, 3) }\n}\n",
                        d);
    ub_layer *b = parse("f2.usda",
                        "#usda 1.0\ndef \"P\" {\n    double3 v.timeSamples "
                        "= { 2: (1, 2, 3) }\n}\n",
                        d);
    CU_ASSERT_EQUAL(ub_stitch_merge(out, a, false, true, d), 0);
    const ub_prop *v = prop(out, child(out, out->root, "P"), "v");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL(ub_prop_samples(v)->n, 0); /* no samples in a topology */
    /* a frame is freed once merged: the topology's record still names it */
    ub_layer_free(a);
    a = NULL;
    CU_ASSERT_EQUAL(ub_stitch_merge(out, b, false, true, d), -1);
    CU_ASSERT_EQUAL_FATAL(ub_diags_errors(d), 1);
    const ub_diag *e = ub_diags_at(d, 0);
    CU_ASSERT_STRING_EQUAL(e->loc.file, "f2.usda");
    CU_ASSERT_EQUAL(e->loc.line, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "'/P.v' is double3"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "float3 in f1.usda:3:"));
    ub_layer_free(a);
    ub_layer_free(b);
    ub_layer_free(out);
    ub_diags_free(d);
}

/* Frame f of a small simulation, written to dir/name. */
static char *write_frame(const char *name, int f, bool with_time, bool gap)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    FILE *o = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    fprintf(o, "#usda 1.0\n");
    if (with_time)
        fprintf(o, "(\n    startTimeCode = %d\n    endTimeCode = %d\n)\n", f,
                f);
    fprintf(o, "def \"W\" {\n  def Points \"p\" {\n");
    fprintf(o, "    point3f[] points.timeSamples = { %d: [(%d, 0, 0)] }\n", f,
            f);
    if (!gap)
        fprintf(o, "    float s.timeSamples = { %d: %d }\n", f, 2 * f);
    fprintf(o, "    uniform token t = \"still\"\n  }\n}\n");
    fclose(o);
    return path;
}

static char *usda(const ub_layer *l)
{
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL(ub_usda_write(l, &b), 0);
    ub_buf_putc(&b, '\0');
    return ub_buf_take(&b);
}

static void test_clips(void)
{
    char *frames[4];
    const char *names[4] = {"f.3.usda", "f.1.usda", "f.2.usda", "f.4.usda"};
    int times[4] = {3, 1, 2, 4};
    for (int i = 0; i < 4; i++)
        frames[i] = write_frame(names[i], times[i], i != 0, i == 2);
    char out_path[64];
    snprintf(out_path, sizeof out_path, "%s/shot.usda", dir);
    ub_stitch_opts o = {.clip_path = "/W/p", .out_path = out_path};
    char *text[2][3];
    for (unsigned th = 1; th <= 2; th++) {
        ub_diags *d = ub_diags_new();
        ub_stitch_out so;
        o.threads = th == 1 ? 1 : 3;
        CU_ASSERT_EQUAL_FATAL(ub_stitch_clips(T, (const char *const *)frames,
                                              4, &o, &so, d),
                              0);
        CU_ASSERT_EQUAL(ub_diags_errors(d), 0);
        text[th - 1][0] = usda(so.result);
        text[th - 1][1] = usda(so.topology);
        text[th - 1][2] = usda(so.manifest);
        if (th == 1) {
            CU_ASSERT_PTR_NOT_NULL(strstr(so.topology_path,
                                          "/shot.topology.usda"));
            CU_ASSERT_PTR_NOT_NULL(strstr(so.manifest_path,
                                          "/shot.manifest.usda"));
            /* the manifest declares s (though f.2 lacks it), not t */
            const ub_prim *p = child(so.manifest,
                                     child(so.manifest, so.manifest->root,
                                           "W"),
                                     "p");
            CU_ASSERT_PTR_NOT_NULL_FATAL(p);
            CU_ASSERT_EQUAL(p->specifier, UB_OVER);
            CU_ASSERT_PTR_NOT_NULL(prop(so.manifest, p, "s"));
            CU_ASSERT_PTR_NOT_NULL(prop(so.manifest, p, "points"));
            CU_ASSERT_PTR_NULL(prop(so.manifest, p, "t"));
            /* the topology keeps t's value */
            const ub_prim *tp = child(so.topology,
                                      child(so.topology, so.topology->root,
                                            "W"),
                                      "p");
            const ub_prop *t = prop(so.topology, tp, "t");
            CU_ASSERT_PTR_NOT_NULL_FATAL(t);
            CU_ASSERT_EQUAL(t->variability, UB_UNIFORM);
            CU_ASSERT_EQUAL(t->default_value.kind, UB_V_DATA);
        }
        ub_stitch_out_free(&so);
        ub_diags_free(d);
    }
    /* the frames' order is kept; f.3 has no startTimeCode: its name says 3 */
    CU_ASSERT_PTR_NOT_NULL(strstr(text[0][0], "double2[] active = [(3, 0), "
                                              "(1, 1), (2, 2), (4, 3)]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text[0][0], "[@./f.3.usda@, @./f.1.usda@"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text[0][0], "startTimeCode = 1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text[0][0], "endTimeCode = 4"));
    for (int k = 0; k < 3; k++) {
        CU_ASSERT_STRING_EQUAL(text[0][k], text[1][k]);
        free(text[0][k]);
        free(text[1][k]);
    }
    for (int i = 0; i < 4; i++) {
        unlink(frames[i]);
        free(frames[i]);
    }
}

static void test_clip_errors(void)
{
    char *f = write_frame("nothing.usda", 1, false, false);
    char out_path[64];
    snprintf(out_path, sizeof out_path, "%s/shot.usda", dir);
    ub_stitch_opts o = {.clip_path = "/W/p", .out_path = out_path};
    ub_stitch_out so;
    ub_diags *d = ub_diags_new();
    CU_ASSERT_EQUAL(ub_stitch_clips(T, (const char *const *)&f, 1, &o, &so,
                                    d),
                    -1);
    CU_ASSERT_PTR_NULL(so.result);
    CU_ASSERT_EQUAL_FATAL(ub_diags_errors(d), 1);
    CU_ASSERT_STRING_EQUAL(ub_diags_at(d, 0)->id, "stitch-frame-time");
    ub_diags_free(d);
    d = ub_diags_new();
    o.clip_path = "/W/q";
    o.has_start = true; /* no time needed: still no such prim */
    CU_ASSERT_PTR_NULL(ub_stitch_manifest(T, (const char *const *)&f, 1,
                                          "/W/q", false, NULL, 0, d));
    CU_ASSERT_EQUAL_FATAL(ub_diags_errors(d), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(ub_diags_at(d, 0)->message, "</W/q>"));
    ub_diags_free(d);
    /* the library holds a clip path to the prim name rules too: invalid
     * UTF-8 is no name, though every byte is above 0x7f */
    d = ub_diags_new();
    o.clip_path = "/W/\xff\xfe";
    CU_ASSERT_EQUAL(ub_stitch_clips(T, (const char *const *)&f, 1, &o, &so,
                                    d),
                    -1);
    CU_ASSERT_EQUAL_FATAL(ub_diags_errors(d), 1);
    CU_ASSERT_STRING_EQUAL(ub_diags_at(d, 0)->id, "stitch-clip-path");
    CU_ASSERT_PTR_NOT_NULL(strstr(ub_diags_at(d, 0)->message,
                                  "is not an absolute prim path"));
    ub_diags_free(d);
    unlink(f);
    free(f);
}

static void test_manifest_blocks(void)
{
    char *frames[3] = {write_frame("m.1.usda", 1, true, false),
                       write_frame("m.2.usda", 2, true, true),
                       write_frame("m.3.usda", 3, true, false)};
    ub_diags *d = ub_diags_new();
    ub_layer *m = ub_stitch_manifest(T, (const char *const *)frames, 3, "/W",
                                     true, NULL, 2, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const ub_prim *p = child(m, child(m, m->root, "W"), "p");
    const ub_prop *s = prop(m, p, "s");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL_FATAL(ub_prop_samples(s)->n, 1);
    CU_ASSERT_EQUAL(ub_prop_samples(s)->v[0].time, 2);
    CU_ASSERT_EQUAL(ub_prop_samples(s)->v[0].value.kind, UB_V_BLOCK);
    CU_ASSERT_EQUAL(ub_prop_samples(prop(m, p, "points"))->n, 0);
    ub_layer_free(m);
    ub_diags_free(d);
    for (int i = 0; i < 3; i++) {
        unlink(frames[i]);
        free(frames[i]);
    }
}

int main(void)
{
    T = ub_strtab_new();
    if (!mkdtemp(dir))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("stitch", NULL, NULL);
    CU_add_test(s, "merge", test_merge);
    CU_add_test(s, "topology merge checks types",
                test_merge_without_samples_checks_types);
    CU_add_test(s, "clips", test_clips);
    CU_add_test(s, "clip errors", test_clip_errors);
    CU_add_test(s, "manifest blocks", test_manifest_blocks);
    unsigned failed = ub_test_run_all();
    ub_strtab_free(T);
    rmdir(dir);
    return failed ? 1 : 0;
}
