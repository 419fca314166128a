/* CUnit tests for ub_compose (paths, strength order, path mapping, time
 * offsets through arcs) and ub_clips (clip time mapping, active clips,
 * baked samples).  Layers are written to a temporary directory and
 * composed through the real loader. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ub_clips.h"
#include "ub_compose.h"
#include "ub_parse.h"
#include "ub_test.h"

static ub_strtab *T;
static char dir[256];

static const char *S(const char *s)
{
    return ub_intern_cstr(T, s);
}

static void put(const char *name, const char *text)
{
    ub_test_put(dir, name, text);
}

/* Compose dir/root and return the flattened layer (NULL on error); *rec
 * counts the errors worked around. */
static ub_layer *compose_rec(const char *root, ub_loader **ld, ub_diags **d,
                             size_t *rec)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, root);
    *d = ub_diags_new();
    *ld = ub_loader_new(T, *d);
    ub_layer *rl = ub_loader_open(*ld, p, NULL, (ub_loc){NULL, 0, 0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(rl);
    *rec = 0;
    return ub_compose_flatten(*ld, rl, "out.usda", *d, rec);
}

static ub_layer *compose(const char *root, ub_loader **ld, ub_diags **d)
{
    size_t rec;
    return compose_rec(root, ld, d, &rec);
}

static ub_prop *prop(ub_layer *l, const char *path, const char *name)
{
    ub_prim *p = ub_layer_find_prim(l, path);
    return p ? ub_prop_find(l, p, S(name)) : NULL;
}

static double dflt(ub_layer *l, const char *path, const char *name)
{
    ub_prop *a = prop(l, path, name);
    if (!a || a->default_value.kind != UB_V_DATA)
        return NAN;
    return ub_value_get_double(&a->default_value, 0, 0);
}

static void test_paths(void)
{
    CU_ASSERT_PTR_EQUAL(ub_path_strip_variants(T, "/A{v=x}B"), S("/A/B"));
    CU_ASSERT_PTR_EQUAL(ub_path_strip_variants(T, "/A{v=x}"), S("/A"));
    CU_ASSERT_PTR_EQUAL(ub_path_strip_variants(T, "/A{v=x}{w=y}B.c"),
                        S("/A/B.c"));
    CU_ASSERT(ub_path_has_prefix("/A/B", "/A"));
    CU_ASSERT(ub_path_has_prefix("/A.x", "/A"));
    CU_ASSERT(ub_path_has_prefix("/A", "/"));
    CU_ASSERT(!ub_path_has_prefix("/AB", "/A"));
    CU_ASSERT_PTR_EQUAL(ub_path_replace_prefix(T, "/Ref/C.x", "/Ref", "/M"),
                        S("/M/C.x"));
    CU_ASSERT_PTR_EQUAL(ub_path_replace_prefix(T, "/Ref", "/Ref", "/M/N"),
                        S("/M/N"));
    CU_ASSERT_PTR_NULL(ub_path_replace_prefix(T, "/Other", "/Ref", "/M"));
}

static void test_find_prim_in_variant(void)
{
    static const char text[] =
        "#usda 1.0\n"
        "def \"A\" (\n    variantSets = \"v\"\n)\n{\n"
        "    variantSet \"v\" = {\n"
        "        \"x\" {\n            def \"B\"\n            {\n"
        "            }\n        }\n    }\n}\n";
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda(T, "v.usda", text, sizeof text - 1, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ub_prim *b = ub_layer_find_prim(l, "/A{v=x}B");
    CU_ASSERT_PTR_NOT_NULL(b);
    CU_ASSERT(b && strcmp(b->name, "B") == 0);
    CU_ASSERT_PTR_NULL(ub_layer_find_prim(l, "/A/B"));
    CU_ASSERT_PTR_NULL(ub_layer_find_prim(l, "/A{v=y}B"));
    ub_layer_free(l);
    ub_diags_free(d);
}

/* One attribute per arc type, each also authored by every weaker arc:
 * the value says which arc won (local 1, inherit 2, variant 3,
 * reference 4, payload 5, specialize 6). */
static void test_strength_order(void)
{
    put("livrps.usda",
        "#usda 1.0\n"
        "class \"Cls\"\n{\n    double a = 2\n    double b = 2\n}\n"
        "class \"Spec\"\n{\n    double a = 6\n    double b = 6\n"
        "    double c = 6\n    double d = 6\n    double e = 6\n"
        "    double f = 6\n}\n"
        "def \"Shot\" (\n    inherits = </Cls>\n    specializes = </Spec>\n"
        "    references = @./ref.usda@</Ref> (offset = 10; scale = 2)\n"
        "    payload = @./pay.usda@</Pay>\n"
        "    variantSets = \"v\"\n    variants = {\n"
        "        string v = \"one\"\n    }\n)\n{\n"
        "    double a = 1\n"
        "    variantSet \"v\" = {\n"
        "        \"one\" {\n            double a = 3\n            double b = 3\n"
        "            double c = 3\n        }\n"
        "        \"two\" {\n            double c = 99\n        }\n    }\n}\n");
    put("ref.usda",
        "#usda 1.0\n"
        "def \"Ref\"\n{\n    double a = 4\n    double b = 4\n"
        "    double c = 4\n    double d = 4\n"
        "    double anim.timeSamples = {\n        1: 7,\n    }\n"
        "    rel r = </Ref/Child>\n    rel out = </Elsewhere>\n"
        "    def \"Child\"\n    {\n    }\n}\n");
    put("pay.usda",
        "#usda 1.0\n"
        "def \"Pay\"\n{\n    double a = 5\n    double b = 5\n"
        "    double c = 5\n    double d = 5\n    double e = 5\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("livrps.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(dflt(out, "/Shot", "a"), 1);
    CU_ASSERT_EQUAL(dflt(out, "/Shot", "b"), 2);
    CU_ASSERT_EQUAL(dflt(out, "/Shot", "c"), 3);
    CU_ASSERT_EQUAL(dflt(out, "/Shot", "d"), 4);
    CU_ASSERT_EQUAL(dflt(out, "/Shot", "e"), 5);
    CU_ASSERT_EQUAL(dflt(out, "/Shot", "f"), 6);
    /* the reference's offset: time 1 lands at 1 * 2 + 10 */
    ub_prop *anim = prop(out, "/Shot", "anim");
    CU_ASSERT_PTR_NOT_NULL_FATAL(anim);
    CU_ASSERT_EQUAL(ub_prop_samples(anim)->n, 1);
    CU_ASSERT_EQUAL(ub_prop_samples(anim)->v[0].time, 12);
    /* targets mapped across the reference; one outside it is dropped */
    ub_prop *r = prop(out, "/Shot", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(ub_prop_targets(r)->kind, UB_V_LISTOP);
    const ub_value *ex =
        ub_listop_get(ub_prop_targets(r)->u.listop, UB_LO_EXPLICIT);
    CU_ASSERT_EQUAL(ex->count, 1);
    CU_ASSERT_PTR_EQUAL(ub_value_str(ex, 0), S("/Shot/Child"));
    CU_ASSERT_EQUAL(ub_prop_targets(prop(out, "/Shot", "out"))->kind,
                    UB_V_EMPTY);
    /* the child comes from the reference; arcs are not written */
    CU_ASSERT_PTR_NOT_NULL(ub_layer_find_prim(out, "/Shot/Child"));
    ub_prim *shot = ub_layer_find_prim(out, "/Shot");
    CU_ASSERT_PTR_NULL(ub_fields_find(&shot->meta, S("references")));
    CU_ASSERT_PTR_NULL(ub_fields_find(&shot->meta, S("variants")));
    CU_ASSERT_EQUAL(shot->specifier, UB_DEF);
    CU_ASSERT_EQUAL(ub_layer_find_prim(out, "/Cls")->specifier, UB_CLASS);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* A class the referenced layer inherits is implied into the referencing
 * layer stack, where a local opinion about it wins. */
static void test_implied_inherit(void)
{
    put("implied.usda",
        "#usda 1.0\n"
        "def \"M\" (\n    references = @./model.usda@</Model>\n)\n{\n}\n"
        "class \"Class\"\n{\n    double x = 1\n}\n");
    put("model.usda",
        "#usda 1.0\n"
        "def \"Model\" (\n    inherits = </Class>\n)\n{\n}\n"
        "class \"Class\"\n{\n    double x = 2\n    double y = 2\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("implied.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(dflt(out, "/M", "x"), 1);
    CU_ASSERT_EQUAL(dflt(out, "/M", "y"), 2);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* Relocates: a prim moved to another parent leaves the old one (and,
 * with its only opinions at the source, arrives as an empty over); a
 * rename in place is composed. */
static void test_relocates(void)
{
    put("reloc.usda",
        "#usda 1.0\n(\n    relocates = {\n        </A/B>: </D/B>\n    }\n)\n"
        "def \"A\"\n{\n    def \"B\"\n    {\n    }\n}\ndef \"D\"\n{\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("reloc.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NULL(ub_layer_find_prim(out, "/A/B"));
    ub_prim *moved = ub_layer_find_prim(out, "/D/B");
    CU_ASSERT_PTR_NOT_NULL(moved);
    CU_ASSERT(moved && moved->specifier == UB_OVER);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
    /* the source comes from a reference (opinions at a source in the
     * relocating layer stack itself are ignored, as Pcp ignores them) */
    put("rename.usda",
        "#usda 1.0\n(\n    relocates = {\n        </A/B>: </A/C>\n    }\n)\n"
        "def \"A\" (\n    references = @./renamed.usda@</R>\n)\n{\n"
        "    over \"B\"\n    {\n        double ignored = 1\n    }\n}\n");
    put("renamed.usda",
        "#usda 1.0\n"
        "def \"R\"\n{\n    def \"B\"\n    {\n        double x = 1\n    }\n}\n");
    out = compose("rename.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NULL(ub_layer_find_prim(out, "/A/B"));
    CU_ASSERT_EQUAL(dflt(out, "/A/C", "x"), 1);
    CU_ASSERT_PTR_NULL(prop(out, "/A/C", "ignored"));
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* A clip set built from a dictionary: times with a jump at 10. */
static ub_dict *clip_info(ub_arena *a, const char *asset, const double *tm,
                          int nt)
{
    ub_dict *d = ub_dict_new(a);
    ub_value as = ub_value_new(a, ub_type_get(UB_TY_ASSET), 1, true);
    ((const char **)ub_value_data(&as))[0] = S(asset);
    ub_dict_set(a, d, S("assetPaths"), as, (ub_sloc){0});
    ub_value pp = ub_value_new(a, ub_type_get(UB_TY_STRING), 1, false);
    ((const char **)ub_value_data(&pp))[0] = S("/Model");
    ub_dict_set(a, d, S("primPath"), pp, (ub_sloc){0});
    ub_value ac = ub_value_new(a, ub_type_get(UB_TY_DOUBLE2), 1, true);
    ((double *)ub_value_data(&ac))[0] = 0;
    ((double *)ub_value_data(&ac))[1] = 0;
    ub_dict_set(a, d, S("active"), ac, (ub_sloc){0});
    ub_value t = ub_value_new(a, ub_type_get(UB_TY_DOUBLE2), nt, true);
    memcpy(ub_value_data(&t), tm, 2 * nt * sizeof *tm);
    ub_dict_set(a, d, S("times"), t, (ub_sloc){0});
    return d;
}

/* A sink that records what it keeps, as text. */
typedef struct sink_rec {
    ub_buf text;
    size_t n_parts, n_keeps, fail_at;
    bool lens_add_up;
} sink_rec;

static int rec_format(const void *ctx, unsigned depth, const ub_samples *part,
                      ub_buf *text)
{
    (void)ctx;
    for (uint32_t i = 0; i < part->n; i++)
        ub_buf_printf(text, "%u %g=%g;", depth, part->v[i].time,
                      part->v[i].value.kind == UB_V_DATA
                          ? ub_value_get_double(&part->v[i].value, 0, 0)
                          : -1.0);
    return 0;
}

static int rec_keep(void *ctx, const ub_clip_part *parts, size_t n,
                    const char *text, size_t len)
{
    sink_rec *r = ctx;
    if (++r->n_keeps == r->fail_at)
        return -1;
    size_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += parts[i].len;
        ub_buf_printf(&r->text, "[%g %zu]", parts[i].t0, parts[i].len);
    }
    r->lens_add_up = r->lens_add_up && sum == len;
    ub_buf_append(&r->text, text, len);
    r->n_parts += n;
    return 0;
}

/* Bake attribute x of six clips (clip k active from 10k) through a
 * recording sink, on `threads` threads; returns the bake's result. */
static int bake_recorded(unsigned threads, sink_rec *r)
{
    char p[512];
    snprintf(p, sizeof p, "%s/clipsrc.usda", dir);
    ub_diags *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(T, d);
    ub_layer *src = ub_loader_open(ld, p, NULL, (ub_loc){NULL, 0, 0});
    ub_arena *a = ub_arena_new();
    enum { NC = 6 };
    ub_dict *info = ub_dict_new(a);
    ub_value as = ub_value_new(a, ub_type_get(UB_TY_ASSET), NC, true);
    ub_value ac = ub_value_new(a, ub_type_get(UB_TY_DOUBLE2), NC, true);
    for (int k = 0; k < NC; k++) {
        char name[32];
        snprintf(name, sizeof name, "./rclip%d.usda", k);
        ((const char **)ub_value_data(&as))[k] = S(name);
        ((double *)ub_value_data(&ac))[2 * k] = 10.0 * k;
        ((double *)ub_value_data(&ac))[2 * k + 1] = k;
    }
    ub_dict_set(a, info, S("assetPaths"), as, (ub_sloc){0});
    ub_dict_set(a, info, S("active"), ac, (ub_sloc){0});
    ub_value pp = ub_value_new(a, ub_type_get(UB_TY_STRING), 1, false);
    ((const char **)ub_value_data(&pp))[0] = S("/Model");
    ub_dict_set(a, info, S("primPath"), pp, (ub_sloc){0});
    ub_clip_set cs;
    int rc = -2;
    ub_clip_bake *bake = ub_clip_bake_new(ld, threads, NULL);
    ub_prop attr = {.name = S("x"), .kind = UB_ATTR};
    ub_clip_sink sink = {rec_format, rec_keep, r};
    if (src && bake &&
        ub_clip_set_init(&cs, ld, S("default"), info, src,
                         UB_OFFSET_IDENTITY, (ub_loc){0}, d) == 1) {
        if (ub_clip_bake_keep(bake, &cs) == 0 &&
            ub_clip_bake_defer(bake, &cs, S("/Model"), S("x"), &attr, a,
                               2) == 0)
            rc = ub_clip_bake_run(bake, a, NULL, NULL, &sink);
        ub_clip_set_free(&cs);
    }
    ub_clip_bake_free(bake);
    /* every clip read was given back, whatever happened */
    for (size_t i = 0; i < ub_loader_count(ld); i++)
        if (ub_loader_path_at(ld, i) && strstr(ub_loader_path_at(ld, i),
                                               "/rclip"))
            CU_ASSERT_PTR_NULL(ub_loader_at(ld, i));
    ub_arena_free(a);
    ub_loader_free(ld);
    ub_diags_free(d);
    return rc;
}

/* A sink's parts are formatted on any thread and kept in one order:
 * the same whatever the number of threads; a keep that fails stops the
 * bake and gives every clip back. */
static void test_clip_sink_threads(void)
{
    put("clipsrc.usda", "#usda 1.0\n");
    for (int k = 0; k < 6; k++) {
        char name[32], text[256];
        snprintf(name, sizeof name, "rclip%d.usda", k);
        snprintf(text, sizeof text,
                 "#usda 1.0\ndef \"Model\"\n{\n    double x.timeSamples = "
                 "{\n        %d: %d,\n        %d: %d,\n    }\n}\n",
                 10 * k, k, 10 * k + 5, 100 + k);
        put(name, text);
    }
    sink_rec one = {.lens_add_up = true}, three = {.lens_add_up = true};
    ub_buf_init(&one.text);
    ub_buf_init(&three.text);
    CU_ASSERT_EQUAL(bake_recorded(1, &one), 0);
    CU_ASSERT_EQUAL(bake_recorded(3, &three), 0);
    CU_ASSERT_EQUAL(one.n_keeps, 6);
    CU_ASSERT_EQUAL(one.n_parts, 6);
    CU_ASSERT(one.lens_add_up && three.lens_add_up);
    CU_ASSERT_EQUAL_FATAL(one.text.len, three.text.len);
    CU_ASSERT(memcmp(one.text.data, three.text.data, one.text.len) == 0);
    /* clip 3's part: its two samples, at depth 2 */
    CU_ASSERT_PTR_NOT_NULL(strstr(one.text.data, "[30 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(one.text.data, "2 30=3;2 35=103;"));
    ub_buf_free(&one.text);
    ub_buf_free(&three.text);
    for (unsigned threads = 1; threads <= 3; threads += 2) {
        sink_rec r = {.fail_at = 2, .lens_add_up = true};
        ub_buf_init(&r.text);
        CU_ASSERT_EQUAL(bake_recorded(threads, &r), -1);
        CU_ASSERT_EQUAL(r.n_keeps, 2);
        ub_buf_free(&r.text);
    }
}

static void test_clip_times(void)
{
    put("clip.usda",
        "#usda 1.0\n"
        "def \"Model\"\n{\n    double x.timeSamples = {\n"
        "        0: 0,\n        10: 100,\n    }\n}\n");
    put("clipsrc.usda", "#usda 1.0\n");
    char p[512];
    snprintf(p, sizeof p, "%s/clipsrc.usda", dir);
    ub_diags *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(T, d);
    ub_layer *src = ub_loader_open(ld, p, NULL, (ub_loc){NULL, 0, 0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    ub_arena *a = ub_arena_new();
    /* stage 0..10 plays the clip 0..10, then jumps back to 0 */
    static const double tm[] = {0, 0, 10, 10, 10, 0, 20, 10};
    ub_clip_set cs;
    CU_ASSERT_EQUAL_FATAL(ub_clip_set_init(&cs, ld, S("default"),
                                           clip_info(a, "./clip.usda", tm, 4),
                                           src, UB_OFFSET_IDENTITY,
                                           (ub_loc){0}, d),
                          1);
    CU_ASSERT_EQUAL(cs.n_times, 6); /* with the two sentinels */
    CU_ASSERT(cs.times[2].jump);
    CU_ASSERT(cs.times_sorted); /* lookups bisect */
    CU_ASSERT_DOUBLE_EQUAL(ub_clip_set_to_internal(&cs, 5), 5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ub_clip_set_to_internal(&cs, 10), 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ub_clip_set_to_internal(&cs, 15), 5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ub_clip_set_to_internal(&cs, 30), 10, 1e-12);
    CU_ASSERT_EQUAL(ub_clip_set_active(&cs, -5), 0);
    CU_ASSERT(ub_clip_set_has_attr(&cs, S("/Model"), S("x")));
    CU_ASSERT(!ub_clip_set_has_attr(&cs, S("/Model"), S("y")));
    /* the bake reads the clip and puts its samples in the attribute */
    ub_clip_bake *bake = ub_clip_bake_new(ld, 1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bake);
    CU_ASSERT_EQUAL_FATAL(ub_clip_bake_keep(bake, &cs), 0);
    ub_prop attr = {.name = S("x"), .kind = UB_ATTR};
    CU_ASSERT_EQUAL_FATAL(
        ub_clip_bake_defer(bake, &cs, S("/Model"), S("x"), &attr, a, 1), 0);
    CU_ASSERT(ub_prop_samples(&attr)->authored);
    CU_ASSERT_EQUAL_FATAL(ub_clip_bake_run(bake, a, NULL, NULL, NULL),
                          0);
    const ub_samples s = *ub_prop_samples(&attr);
    /* 0, just before the jump, at it, and 20 */
    CU_ASSERT_EQUAL_FATAL(s.n, 4);
    CU_ASSERT_EQUAL(s.v[0].time, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.v[1].time, 10 - UB_CLIP_SAFE_STEP, 1e-15);
    CU_ASSERT_EQUAL(s.v[2].time, 10);
    CU_ASSERT_EQUAL(s.v[3].time, 20);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&s.v[1].value, 0, 0), 100,
                           1e-6);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&s.v[2].value, 0, 0), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(ub_value_get_double(&s.v[3].value, 0, 0), 100, 0);
    ub_clip_set_free(&cs);
    ub_clip_bake_free(bake);
    /* the clip was read for the bake and given back */
    size_t nl = ub_loader_count(ld), seen = 0;
    for (size_t i = 0; i < nl; i++)
        if (ub_loader_path_at(ld, i) &&
            strstr(ub_loader_path_at(ld, i), "/clip.usda")) {
            seen++;
            CU_ASSERT_PTR_NULL(ub_loader_at(ld, i));
        }
    CU_ASSERT_EQUAL(seen, 1);
    /* a jump's SafeStep moves it before a stage time closer than that:
     * lookups then scan, as OpenUSD's do, with the same answers */
    static const double close[] = {0, 0, 10 - 1e-9, 1, 10, 10, 10, 0, 20, 10};
    CU_ASSERT_EQUAL_FATAL(ub_clip_set_init(&cs, ld, S("default"),
                                           clip_info(a, "./clip.usda", close,
                                                     5),
                                           src, UB_OFFSET_IDENTITY,
                                           (ub_loc){0}, d),
                          1);
    CU_ASSERT(!cs.times_sorted);
    CU_ASSERT_DOUBLE_EQUAL(ub_clip_set_to_internal(&cs, 5),
                           5 / (10 - 1e-9), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ub_clip_set_to_internal(&cs, 15), 5, 1e-12);
    ub_clip_set_free(&cs);
    /* an index in `active` past assetPaths: ignored with a warning */
    ub_dict *bad = clip_info(a, "./clip.usda", tm, 4);
    ((double *)ub_value_data(&ub_dict_find(bad, S("active"))->value))[1] = 3;
    size_t before = ub_diags_count(d);
    CU_ASSERT_EQUAL(ub_clip_set_init(&cs, ld, S("default"), bad, src,
                                     UB_OFFSET_IDENTITY, (ub_loc){0}, d),
                    0);
    CU_ASSERT(ub_diags_count(d) > before);
    /* and so is a NaN one (found by fuzz_layerstack under UBSan) */
    ((double *)ub_value_data(&ub_dict_find(bad, S("active"))->value))[1] = NAN;
    before = ub_diags_count(d);
    CU_ASSERT_EQUAL(ub_clip_set_init(&cs, ld, S("default"), bad, src,
                                     UB_OFFSET_IDENTITY, (ub_loc){0}, d),
                    0);
    CU_ASSERT(ub_diags_count(d) > before);
    ub_arena_free(a);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* Template metadata: one clip per existing file over [start, end]. */
static void test_clip_template(void)
{
    static const char clip[] =
        "#usda 1.0\ndef \"Model\"\n{\n    double x.timeSamples = {\n"
        "        0: 1,\n    }\n}\n";
    put("tmpl.001.usda", clip);
    put("tmpl.002.usda", clip);
    put("tsrc.usda", "#usda 1.0\n");
    char p[512];
    snprintf(p, sizeof p, "%s/tsrc.usda", dir);
    ub_diags *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(T, d);
    ub_layer *src = ub_loader_open(ld, p, NULL, (ub_loc){NULL, 0, 0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    ub_arena *a = ub_arena_new();
    ub_dict *info = ub_dict_new(a);
    ub_value v = ub_value_new(a, ub_type_get(UB_TY_STRING), 1, false);
    ((const char **)ub_value_data(&v))[0] = S("./tmpl.###.usda");
    ub_dict_set(a, info, S("templateAssetPath"), v, (ub_sloc){0});
    v = ub_value_new(a, ub_type_get(UB_TY_STRING), 1, false);
    ((const char **)ub_value_data(&v))[0] = S("/Model");
    ub_dict_set(a, info, S("primPath"), v, (ub_sloc){0});
    const char *keys[] = {"templateStartTime", "templateEndTime",
                          "templateStride"};
    const double vals[] = {1, 3, 1};
    for (int i = 0; i < 3; i++) {
        v = ub_value_new(a, ub_type_get(UB_TY_DOUBLE), 1, false);
        *(double *)ub_value_data(&v) = vals[i];
        ub_dict_set(a, info, S(keys[i]), v, (ub_sloc){0});
    }
    ub_clip_set cs;
    /* the layer offset moves the derived times, not the files chosen */
    CU_ASSERT_EQUAL_FATAL(ub_clip_set_init(&cs, ld, S("default"), info, src,
                                           (ub_offset){100, 1}, (ub_loc){0},
                                           d),
                          1);
    CU_ASSERT_EQUAL(cs.n_clips, 2); /* tmpl.003.usda does not exist */
    CU_ASSERT_EQUAL(cs.clips[0].authored_start, 101);
    CU_ASSERT_EQUAL(cs.clips[1].authored_start, 102);
    CU_ASSERT_PTR_NOT_NULL(cs.clips[1].asset);
    /* stage 102 is clip time 2 (times = [(101, 1), (102, 2)]) */
    CU_ASSERT_DOUBLE_EQUAL(ub_clip_set_to_internal(&cs, 102), 2, 1e-12);
    ub_clip_set_free(&cs);
    ub_arena_free(a);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* A class inside a prim with variants sees the selected variant, the
 * selection coming from the referencing layer. */
static void test_ancestral_variant(void)
{
    put("anc.usda",
        "#usda 1.0\n"
        "def \"M\" (\n    references = @./ancmodel.usda@</Model>\n"
        "    variants = {\n        string look = \"b\"\n    }\n)\n{\n}\n");
    put("ancmodel.usda",
        "#usda 1.0\n"
        "def \"Model\" (\n    variantSets = \"look\"\n"
        "    variants = {\n        string look = \"a\"\n    }\n)\n{\n"
        "    class \"Class\"\n    {\n    }\n"
        "    def \"Thing\" (\n        inherits = </Model/Class>\n    )\n"
        "    {\n    }\n"
        "    variantSet \"look\" = {\n"
        "        \"a\" {\n            over \"Class\"\n            {\n"
        "                double v = 1\n            }\n        }\n"
        "        \"b\" {\n            over \"Class\"\n            {\n"
        "                double v = 2\n            }\n        }\n"
        "    }\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("anc.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(dflt(out, "/M/Thing", "v"), 2);
    CU_ASSERT_EQUAL(dflt(out, "/M/Class", "v"), 2);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* `reorder nameChildren` moves each named child with the unnamed ones
 * after it; unnamed ones before stay first (as Pcp applies it, through
 * SdfListOp's reorder). */
static void test_reorder(void)
{
    put("reorder.usda",
        "#usda 1.0\n"
        "def \"P\"\n{\n"
        "    reorder nameChildren = [\"b\", \"a\"]\n"
        "    def \"x\" {\n    }\n    def \"a\" {\n    }\n"
        "    def \"y\" {\n    }\n    def \"b\" {\n    }\n"
        "}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("reorder.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *p = ub_layer_find_prim(out, "/P");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    static const char *const want[] = {"x", "b", "a", "y"};
    CU_ASSERT_EQUAL_FATAL(p->children.n, 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_STRING_EQUAL(p->children.v[i]->name, want[i]);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* The asset value at key in a dictionary (NULL when not an asset). */
static const char *dict_asset(const ub_value *v, const char *key)
{
    if (v->kind != UB_V_DICT || !v->u.dict)
        return NULL;
    ub_dict_entry *e = ub_dict_find(v->u.dict, S(key));
    return e && e->value.kind == UB_V_DATA ? ub_value_str(&e->value, 0)
                                           : NULL;
}

/* The stage's metadata is resolved as a prim's: asset paths in
 * customLayerData anchored to the root layer, at any depth; a search path
 * found nowhere near kept as written. */
static void test_stage_metadata_assets(void)
{
    put("near.usda", "#usda 1.0\n");
    put("meta.usda", "#usda 1.0\n(\n    customLayerData = {\n"
                     "        asset rel = @./x/../y.usda@\n"
                     "        asset near = @near.usda@\n"
                     "        asset gone = @gone.usda@\n"
                     "        dictionary deep = {\n"
                     "            asset[] list = [@./z.usda@]\n"
                     "        }\n    }\n)\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("meta.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const ub_field *f = ub_fields_find(&out->meta, S("customLayerData"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char want[512];
    snprintf(want, sizeof want, "%s/y.usda", dir);
    CU_ASSERT_STRING_EQUAL(dict_asset(&f->value, "rel"), want);
    snprintf(want, sizeof want, "%s/near.usda", dir);
    CU_ASSERT_STRING_EQUAL(dict_asset(&f->value, "near"), want);
    CU_ASSERT_STRING_EQUAL(dict_asset(&f->value, "gone"), "gone.usda");
    ub_dict_entry *deep = ub_dict_find(f->value.u.dict, S("deep"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
    snprintf(want, sizeof want, "%s/z.usda", dir);
    CU_ASSERT_STRING_EQUAL(dict_asset(&deep->value, "list"), want);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* Prototype names skip the names of the stage's prims, and a skipped
 * number is not taken by the next prototype either: two prototypes on a
 * stage that has /Flattened_Prototype_1 and _2 are _3 and _4, never the
 * same prim twice. */
static void test_prototype_names(void)
{
    put("pnames.usda",
        "#usda 1.0\n"
        "def \"Flattened_Prototype_1\"\n{\n}\n"
        "def \"Flattened_Prototype_2\"\n{\n}\n"
        "def \"A\"\n{\n    def \"g\"\n    {\n    }\n}\n"
        "def \"B\"\n{\n    def \"h\"\n    {\n    }\n}\n"
        "def \"I\" (\n    instanceable = true\n    references = </A>\n)\n{\n}\n"
        "def \"J\" (\n    instanceable = true\n    references = </B>\n)\n{\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("pnames.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    int n3 = 0, n4 = 0;
    for (uint32_t i = 0; i < out->root->children.n; i++) {
        const char *nm = out->root->children.v[i]->name;
        n3 += strcmp(nm, "Flattened_Prototype_3") == 0;
        n4 += strcmp(nm, "Flattened_Prototype_4") == 0;
    }
    CU_ASSERT_EQUAL(n3, 1);
    CU_ASSERT_EQUAL(n4, 1);
    CU_ASSERT_EQUAL(out->root->children.n, 8);
    /* one prototype each: /A's and /B's children */
    bool ab = ub_layer_find_prim(out, "/Flattened_Prototype_3/g") &&
              ub_layer_find_prim(out, "/Flattened_Prototype_4/h");
    bool ba = ub_layer_find_prim(out, "/Flattened_Prototype_3/h") &&
              ub_layer_find_prim(out, "/Flattened_Prototype_4/g");
    CU_ASSERT(ab != ba);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* Flatten keeps `reorder nameChildren` and `reorder properties`, the
 * strongest opinion of each, on instances too (UsdStage::Flatten copies
 * them as metadata). */
static void test_keep_reorders(void)
{
    put("keepro.usda",
        "#usda 1.0\n"
        "def \"R\"\n{\n"
        "    reorder nameChildren = [\"z\", \"q\"]\n"
        "    reorder properties = [\"m\", \"k\"]\n"
        "    int k = 1\n    int m = 2\n"
        "    def \"q\" {\n    }\n    def \"z\" {\n    }\n"
        "}\n"
        "def \"S\" (\n    references = </R>\n)\n{\n"
        "    reorder nameChildren = [\"q\", \"z\"]\n}\n"
        "def \"I\" (\n    instanceable = true\n    references = </R>\n)\n{\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("keepro.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *r = ub_layer_find_prim(out, "/R");
    ub_prim *s = ub_layer_find_prim(out, "/S");
    ub_prim *i = ub_layer_find_prim(out, "/I");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(i);
    CU_ASSERT_EQUAL_FATAL(ub_prim_prim_order(r)->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(ub_prim_prim_order(r), 0), S("z"));
    CU_ASSERT_EQUAL_FATAL(ub_prim_property_order(r)->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(ub_prim_property_order(r), 0), S("m"));
    /* the referencing prim's own reorder is the strongest */
    CU_ASSERT_EQUAL_FATAL(ub_prim_prim_order(s)->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(ub_prim_prim_order(s), 0), S("q"));
    CU_ASSERT_EQUAL_FATAL(ub_prim_property_order(s)->count, 2);
    CU_ASSERT_EQUAL_FATAL(s->children.n, 2);
    CU_ASSERT_STRING_EQUAL(s->children.v[0]->name, "q");
    CU_ASSERT_EQUAL_FATAL(ub_prim_prim_order(i)->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(ub_prim_prim_order(i), 0), S("z"));
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* The prototype an instance's references name, or NULL. */
static const char *proto_of(ub_layer *out, const char *path)
{
    ub_prim *p = ub_layer_find_prim(out, path);
    const ub_field *f = p ? ub_fields_find(&p->meta, S("references")) : NULL;
    if (!f || f->value.kind != UB_V_LISTOP)
        return NULL;
    const ub_value *v = ub_listop_get(f->value.u.listop, UB_LO_ADD);
    return v->count
               ? ((const ub_reference *)ub_value_data(v))->prim_path
               : NULL;
}

/* A reference to a prim below a root prim brings what the target has
 * through its ancestors' arcs (here /RootRef/Child is only reached
 * through /RootRef's reference), and an instance's key leaves out arcs to
 * sites without specs: Sub1 and Sub3 share one prototype. */
static void test_subroot_references(void)
{
    put("sr_ref.usda",
        "#usda 1.0\n"
        "def \"Ref1\"\n{\n    def \"Child\" (\n"
        "        references = </Ref2>\n    )\n    {\n    }\n}\n"
        "def \"Ref2\"\n{\n    def \"G\"\n    {\n    }\n}\n");
    put("sr_root.usda",
        "#usda 1.0\n"
        "def \"RootRef\" (\n    references = @./sr_ref.usda@</Ref1>\n)\n"
        "{\n}\n"
        "def \"Plain\" (\n    references = </RootRef/Child>\n)\n{\n}\n"
        "def \"Sub1\" (\n    instanceable = true\n"
        "    references = @./sr_ref.usda@</Ref1/Child>\n)\n{\n}\n"
        "def \"Sub3\" (\n    instanceable = true\n"
        "    references = </RootRef/Child>\n)\n{\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("sr_root.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL(ub_layer_find_prim(out, "/RootRef/Child/G"));
    CU_ASSERT_PTR_NOT_NULL(ub_layer_find_prim(out, "/Plain/G"));
    const char *p1 = proto_of(out, "/Sub1"), *p3 = proto_of(out, "/Sub3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p1);
    CU_ASSERT_PTR_EQUAL(p1, p3);
    char g[128];
    snprintf(g, sizeof g, "%s/G", p1);
    CU_ASSERT_PTR_NOT_NULL(ub_layer_find_prim(out, g));
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* A variant selection written as a variable expression selects the
 * variant the root layer's expressionVariables name. */
static void test_variant_selection_expression(void)
{
    put("vexpr.usda",
        "#usda 1.0\n(\n    expressionVariables = {\n"
        "        string VAR = \"b\"\n    }\n)\n"
        "def \"A\" (\n    variants = {\n        string v = \"`${VAR}`\"\n"
        "    }\n    prepend variantSets = \"v\"\n)\n{\n"
        "    variantSet \"v\" = {\n"
        "        \"a\" {\n            double x = 1\n        }\n"
        "        \"b\" {\n            double x = 2\n        }\n    }\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("vexpr.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(dflt(out, "/A", "x"), 2);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* A reference to a file that is not a layer is an error at the arc, the
 * arc is dropped and the rest composed (counted as recovered). */
static void test_unreadable_reference(void)
{
    put("mesh.drc", "DRACO\x02\x02");
    put("ok.usda", "#usda 1.0\ndef \"P\"\n{\n    double y = 2\n}\n");
    put("arcs.usda", "#usda 1.0\n"
                     "def \"A\" (\n    references = @./mesh.drc@\n)\n"
                     "{\n    double x = 1\n}\n"
                     "def \"B\" (\n    references = @./ok.usda@</P>\n)\n"
                     "{\n}\n");
    ub_loader *ld;
    ub_diags *d;
    size_t rec;
    ub_layer *out = compose_rec("arcs.usda", &ld, &d, &rec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(rec, 1);
    CU_ASSERT_EQUAL(ub_diags_errors(d), 1);
    CU_ASSERT_EQUAL(ub_diags_at(d, 0)->loc.line, 3);
    CU_ASSERT_DOUBLE_EQUAL(dflt(out, "/A", "x"), 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(dflt(out, "/B", "y"), 2, 0);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* An arc back into the stage's root layer reaches a layer stack of its
 * own (OpenUSD's stage has a session layer on top): a child referencing
 * a model that references the child's parent in the root layer is no
 * cycle at the child, only one level further down. */
static void test_arc_back_to_root_layer(void)
{
    put("cyc_model.usda",
        "#usda 1.0\n"
        "def \"Model\" (\n    references = @./cyc_root.usda@</Parent>\n)\n"
        "{\n}\n");
    put("cyc_root.usda",
        "#usda 1.0\n"
        "def \"Parent\"\n{\n"
        "    over \"Child\" (\n"
        "        references = @./cyc_model.usda@</Model>\n    )\n"
        "    {\n        double v = 1\n    }\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("cyc_root.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *c = ub_layer_find_prim(out, "/Parent/Child");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->specifier, UB_DEF);
    CU_ASSERT_PTR_NOT_NULL(ub_layer_find_prim(out, "/Parent/Child/Child"));
    CU_ASSERT_PTR_NULL(ub_layer_find_prim(out, "/Parent/Child/Child/Child"));
    CU_ASSERT_EQUAL(dflt(out, "/Parent/Child/Child", "v"), 1);
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

static const char *pexpr(ub_layer *l, const char *path, const char *name)
{
    ub_prop *pr = prop(l, path, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
    return ub_value_str(&pr->default_value, 0);
}

/* pathExpression values: relative paths anchored at the prim as the layer
 * is read, then mapped through each arc into the stage's namespace; "//"
 * patterns stay; in a prototype, OpenUSD's own prototype path stays in
 * the value (its flatten does not rename it). */
static void test_path_expressions(void)
{
    put("pe_prop.usda",
        "#usda 1.0\n"
        "def \"Prop\"\n{\n"
        "    def \"geom\"\n    {\n"
        "        pathExpression e = \"//foo ../anim//*bar\"\n"
        "        pathExpression[] a = [\"/Prop/x + /Elsewhere\", \".\"]\n"
        "        pathExpression s.timeSamples = { 1: \"../z + //q\" }\n"
        "    }\n}\n");
    put("pe_root.usda",
        "#usda 1.0\n"
        "def \"Ref\" (\n    references = @./pe_prop.usda@</Prop>\n)\n{\n}\n"
        "def \"Inst\" (\n    instanceable = true\n"
        "    references = @./pe_prop.usda@</Prop>\n)\n{\n}\n");
    ub_loader *ld;
    ub_diags *d;
    ub_layer *out = compose("pe_root.usda", &ld, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_STRING_EQUAL(pexpr(out, "/Ref/geom", "e"), "//foo /Ref/anim//*bar");
    ub_prop *a = prop(out, "/Ref/geom", "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->default_value.count, 2);
    /* a path outside the reference matches nothing there */
    CU_ASSERT_STRING_EQUAL(ub_value_str(&a->default_value, 0), "/Ref/x");
    CU_ASSERT_STRING_EQUAL(ub_value_str(&a->default_value, 1), "/Ref/geom");
    /* a sample is never anchored: a relative path maps to nothing */
    ub_prop *sp = prop(out, "/Ref/geom", "s");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
    CU_ASSERT_EQUAL_FATAL(ub_prop_samples(sp)->n, 1);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&ub_prop_samples(sp)->v[0].value, 0), "//q");
    CU_ASSERT_STRING_EQUAL(pexpr(out, "/Flattened_Prototype_1/geom", "e"),
                           "//foo /__Prototype_1/anim//*bar");
    ub_layer_free(out);
    ub_loader_free(ld);
    ub_diags_free(d);
}

/* An instance whose class is implied back to the same site across a
 * reference (Pcp adds the duplicate, inert, and counts it in the
 * instance key) gets a prototype of its own; across an inherit it shares
 * one with the class's other instances. */
static int n_protos(ub_layer *l)
{
    int n = 0;
    for (uint32_t i = 0; i < l->root->children.n; i++)
        n += strncmp(l->root->children.v[i]->name, "Flattened_Prototype_",
                     20) == 0;
    return n;
}

static void test_implied_class_instance_keys(void)
{
    static const char *const arcs[] = {"references", "payload", "inherits",
                                       "specializes"};
    static const int want[] = {2, 2, 1, 1};
    for (int k = 0; k < 4; k++) {
        char text[600];
        snprintf(text, sizeof text,
                 "#usda 1.0\n"
                 "class \"_C\"\n{\n}\n"
                 "def \"P\"\n{\n"
                 "    def \"Child\" (\n        inherits = </_C>\n"
                 "        instanceable = true\n    )\n    {\n    }\n}\n"
                 "def \"R\" (\n    %s = </P>\n)\n{\n}\n",
                 arcs[k]);
        put("ikey.usda", text);
        ub_loader *ld;
        ub_diags *d;
        ub_layer *out = compose("ikey.usda", &ld, &d);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        CU_ASSERT_EQUAL(n_protos(out), want[k]);
        ub_layer_free(out);
        ub_loader_free(ld);
        ub_diags_free(d);
    }
}

int main(void)
{
    T = ub_strtab_new();
    snprintf(dir, sizeof dir, "%s/ub-test-compose.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!T || !mkdtemp(dir))
        return 1;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("compose", NULL, NULL);
    CU_add_test(s, "paths", test_paths);
    CU_add_test(s, "reorder", test_reorder);
    CU_add_test(s, "prims inside variants", test_find_prim_in_variant);
    CU_add_test(s, "strength order and mapping", test_strength_order);
    CU_add_test(s, "implied inherits", test_implied_inherit);
    CU_add_test(s, "relocates", test_relocates);
    CU_add_test(s, "clip times", test_clip_times);
    CU_add_test(s, "clip sink: the same parts on any number of threads",
                test_clip_sink_threads);
    CU_add_test(s, "clip templates", test_clip_template);
    CU_add_test(s, "ancestral variants", test_ancestral_variant);
    CU_add_test(s, "stage metadata assets", test_stage_metadata_assets);
    CU_add_test(s, "unreadable reference", test_unreadable_reference);
    CU_add_test(s, "prototype names", test_prototype_names);
    CU_add_test(s, "reorder statements kept", test_keep_reorders);
    CU_add_test(s, "subroot references", test_subroot_references);
    CU_add_test(s, "variant selection expressions",
                test_variant_selection_expression);
    CU_add_test(s, "arc back to the root layer", test_arc_back_to_root_layer);
    CU_add_test(s, "path expressions", test_path_expressions);
    CU_add_test(s, "implied classes in instance keys",
                test_implied_class_instance_keys);
    unsigned failed = ub_test_run_all();
    ub_strtab_free(T);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failed++;
    return failed ? 1 : 0;
}
