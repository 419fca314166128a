/* CUnit tests for ub_stack's merge: layers built by hand, flattened, and
 * the result inspected. */
#include <CUnit/Basic.h>
#include <string.h>

#include "ub_stack.h"
#include "ub_time.h"
#include "ub_test.h"

static ub_strtab *T;

static const char *S(const char *s)
{
    return ub_intern_cstr(T, s);
}

static ub_value dbl(ub_layer *l, double x)
{
    ub_value v = ub_value_new(l->arena, ub_type_get(UB_TY_DOUBLE), 1, false);
    *(double *)ub_value_data(&v) = x;
    return v;
}

static ub_value tc(ub_layer *l, double x)
{
    ub_value v = ub_value_new(l->arena, ub_type_get(UB_TY_TIMECODE), 1,
                              false);
    *(double *)ub_value_data(&v) = x;
    return v;
}

static ub_prop *attr(ub_layer *l, ub_prim *p, const char *name,
                     ub_type_id ty)
{
    ub_prop *a = ub_prop_new(l, p, S(name), UB_ATTR, (ub_sloc){0});
    ub_prop_set_decl(l->arena, l->strtab, a, ub_type_get(ty),
                     S(ub_type_get(ty)->name));
    return a;
}

static ub_value paths(ub_layer *l, int n, const char **p)
{
    ub_value v = ub_value_new(l->arena, ub_type_get(UB_TY_PATH), n, true);
    for (int i = 0; i < n; i++)
        ((const char **)ub_value_data(&v))[i] = S(p[i]);
    return v;
}

/* A two-layer stack: strong (index 0) over weak (index 1) at offset o. */
typedef struct fixture {
    ub_layer *l[2];
    ub_offset off[2];
    ub_stack s;
    ub_diags *ld_diags;
    ub_loader *ld; /* anchors the asset paths */
} fixture;

static void fx_init(fixture *f, ub_offset o)
{
    f->l[0] = ub_layer_new(T, "/tmp/ub_test_stack/root.usda");
    f->l[1] = ub_layer_new(T, "/tmp/ub_test_stack/sub/weak.usda");
    f->off[0] = UB_OFFSET_IDENTITY;
    f->off[1] = o;
    f->ld_diags = ub_diags_new();
    f->ld = ub_loader_new(T, f->ld_diags);
    f->s = (ub_stack){.n = 2, .cap = 2, .layers = f->l, .offsets = f->off,
                      .ld = f->ld};
}

static void fx_free(fixture *f)
{
    ub_layer_free(f->l[0]);
    ub_layer_free(f->l[1]);
    ub_loader_free(f->ld);
    ub_diags_free(f->ld_diags);
}

static ub_layer *fx_flatten(fixture *f, ub_diags *d)
{
    return ub_stack_flatten(&f->s, "/tmp/ub_test_stack/out.usda", d);
}

static void test_prim_fields(void)
{
    fixture f;
    fx_init(&f, UB_OFFSET_IDENTITY);
    ub_prim *sa = ub_prim_new(f.l[0], f.l[0]->root, S("A"), UB_OVER,
                              (ub_sloc){0});
    ub_prim *wa = ub_prim_new(f.l[1], f.l[1]->root, S("A"), UB_DEF,
                              (ub_sloc){0});
    wa->type_name = S("Xform");
    ub_fields_set(f.l[0]->arena, &sa->meta, S("kind"),
                  (ub_value){0}, (ub_sloc){0});
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *a = ub_prim_find_child(out, out->root, S("A"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->specifier, UB_DEF); /* over is no opinion */
    CU_ASSERT_PTR_EQUAL(a->type_name, S("Xform"));
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static void test_child_order(void)
{
    fixture f;
    fx_init(&f, UB_OFFSET_IDENTITY);
    ub_prim_new(f.l[0], f.l[0]->root, S("A"), UB_DEF, (ub_sloc){0});
    ub_prim_new(f.l[0], f.l[0]->root, S("C"), UB_DEF, (ub_sloc){0});
    ub_prim_new(f.l[1], f.l[1]->root, S("B"), UB_DEF, (ub_sloc){0});
    ub_prim_new(f.l[1], f.l[1]->root, S("A"), UB_DEF, (ub_sloc){0});
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    /* weakest first, then the names only stronger layers add */
    CU_ASSERT_EQUAL_FATAL(out->root->children.n, 3);
    CU_ASSERT_PTR_EQUAL(out->root->children.v[0]->name, S("B"));
    CU_ASSERT_PTR_EQUAL(out->root->children.v[1]->name, S("A"));
    CU_ASSERT_PTR_EQUAL(out->root->children.v[2]->name, S("C"));
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static void test_defaults_and_samples(void)
{
    fixture f;
    fx_init(&f, (ub_offset){10, 2});
    ub_prim *sa = ub_prim_new(f.l[0], f.l[0]->root, S("A"), UB_OVER,
                              (ub_sloc){0});
    ub_prim *wa = ub_prim_new(f.l[1], f.l[1]->root, S("A"), UB_DEF,
                              (ub_sloc){0});
    /* masked: strong default hides weak samples */
    attr(f.l[0], sa, "masked", UB_TY_DOUBLE)->default_value = dbl(f.l[0], 5);
    ub_prop *wm = attr(f.l[1], wa, "masked", UB_TY_DOUBLE);
    ub_samples_set(f.l[1]->arena, &ub_prop_ext_get(f.l[1]->arena, wm)->samples,
                   1, dbl(f.l[1], 1));
    /* both: strong samples and a weak default */
    ub_prop *sb = attr(f.l[0], sa, "both", UB_TY_DOUBLE);
    ub_samples_set(f.l[0]->arena, &ub_prop_ext_get(f.l[0]->arena, sb)->samples,
                   1, dbl(f.l[0], 1));
    attr(f.l[1], wa, "both", UB_TY_DOUBLE)->default_value = dbl(f.l[1], 7);
    /* weak only: samples mapped, timecode values mapped, doubles not */
    ub_prop *wt = attr(f.l[1], wa, "t", UB_TY_TIMECODE);
    ub_samples_set(f.l[1]->arena, &ub_prop_ext_get(f.l[1]->arena, wt)->samples,
                   1, tc(f.l[1], 100));
    ub_samples_set(f.l[1]->arena, &ub_prop_ext_get(f.l[1]->arena, wt)->samples,
                   2, tc(f.l[1], 200));
    ub_prop *wd = attr(f.l[1], wa, "d", UB_TY_DOUBLE);
    wd->default_value = dbl(f.l[1], 15);
    ub_prop *wc = attr(f.l[1], wa, "c", UB_TY_TIMECODE);
    wc->is_array = true;
    wc->default_value = ub_value_new(f.l[1]->arena,
                                     ub_type_get(UB_TY_TIMECODE), 2, true);
    ((double *)ub_value_data(&wc->default_value))[0] = 0;
    ((double *)ub_value_data(&wc->default_value))[1] = -1.5;

    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *a = ub_prim_find_child(out, out->root, S("A"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    ub_prop *m = ub_prop_find(out, a, S("masked"));
    CU_ASSERT_FALSE(ub_prop_samples(m)->authored);
    CU_ASSERT_DOUBLE_EQUAL(*(double *)ub_value_data(&m->default_value), 5, 0);
    ub_prop *b = ub_prop_find(out, a, S("both"));
    CU_ASSERT(ub_prop_samples(b)->authored);
    CU_ASSERT_DOUBLE_EQUAL(ub_prop_samples(b)->v[0].time, 1,
                           0); /* root: unmapped */
    CU_ASSERT_DOUBLE_EQUAL(*(double *)ub_value_data(&b->default_value), 7, 0);
    ub_prop *t = ub_prop_find(out, a, S("t"));
    CU_ASSERT_EQUAL_FATAL(ub_prop_samples(t)->n, 2);
    CU_ASSERT_DOUBLE_EQUAL(ub_prop_samples(t)->v[0].time, 12, 0);
    CU_ASSERT_DOUBLE_EQUAL(ub_prop_samples(t)->v[1].time, 14, 0);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_prop_samples(t)->v[0].value), 210, 0);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_prop_samples(t)->v[1].value), 410, 0);
    ub_prop *dd = ub_prop_find(out, a, S("d"));
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&dd->default_value), 15, 0);
    ub_prop *c = ub_prop_find(out, a, S("c"));
    CU_ASSERT_DOUBLE_EQUAL(
        ((double *)ub_value_data(&c->default_value))[0], 10, 0);
    CU_ASSERT_DOUBLE_EQUAL(
        ((double *)ub_value_data(&c->default_value))[1], 7, 0);
    /* the input layers are untouched */
    CU_ASSERT_DOUBLE_EQUAL(ub_prop_samples(wt)->v[0].time, 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(
        ((double *)ub_value_data(&wc->default_value))[1], -1.5, 0);
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static void test_dictionaries(void)
{
    fixture f;
    fx_init(&f, (ub_offset){10, 2});
    ub_prim *sa = ub_prim_new(f.l[0], f.l[0]->root, S("A"), UB_DEF,
                              (ub_sloc){0});
    ub_prim *wa = ub_prim_new(f.l[1], f.l[1]->root, S("A"), UB_DEF,
                              (ub_sloc){0});
    /* strong: customData = { double x = 1, dictionary n = { double y = 2 } }
     * weak:   customData = { double x = 9, timecode t = 3,
     *                        dictionary n = { double y = 9, timecode z = 1 } } */
    ub_arena *sar = f.l[0]->arena, *war = f.l[1]->arena;
    ub_dict *sn = ub_dict_new(sar);
    ub_dict_set(sar, sn, S("y"), dbl(f.l[0], 2), (ub_sloc){0});
    ub_dict *sd = ub_dict_new(sar);
    ub_dict_set(sar, sd, S("x"), dbl(f.l[0], 1), (ub_sloc){0});
    ub_dict_set(sar, sd, S("n"), (ub_value){.kind = UB_V_DICT, .u.dict = sn},
                (ub_sloc){0});
    ub_fields_set(sar, &sa->meta, S("customData"),
                  (ub_value){.kind = UB_V_DICT, .u.dict = sd}, (ub_sloc){0});
    ub_dict *wn = ub_dict_new(war);
    ub_dict_set(war, wn, S("y"), dbl(f.l[1], 9), (ub_sloc){0});
    ub_dict_set(war, wn, S("z"), tc(f.l[1], 1), (ub_sloc){0});
    ub_dict *wd = ub_dict_new(war);
    ub_dict_set(war, wd, S("x"), dbl(f.l[1], 9), (ub_sloc){0});
    ub_dict_set(war, wd, S("t"), tc(f.l[1], 3), (ub_sloc){0});
    ub_dict_set(war, wd, S("n"), (ub_value){.kind = UB_V_DICT, .u.dict = wn},
                (ub_sloc){0});
    ub_fields_set(war, &wa->meta, S("customData"),
                  (ub_value){.kind = UB_V_DICT, .u.dict = wd}, (ub_sloc){0});
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *a = ub_prim_find_child(out, out->root, S("A"));
    ub_field *cd = ub_fields_find(&a->meta, S("customData"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(cd);
    ub_dict *r = cd->value.u.dict;
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_dict_find(r, S("x"))->value), 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_dict_find(r, S("t"))->value), 16, 0);
    ub_dict *rn = ub_dict_find(r, S("n"))->value.u.dict;
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_dict_find(rn, S("y"))->value), 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_dict_find(rn, S("z"))->value), 12, 0);
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static void test_target_listops(void)
{
    /* OpenUSD's testUsdUtilsFlattenLayerStack ListOpTest. */
    fixture f;
    fx_init(&f, (ub_offset){-10, 1});
    ub_prim *sa = ub_prim_new(f.l[0], f.l[0]->root, S("L"), UB_OVER,
                              (ub_sloc){0});
    ub_prim *wa = ub_prim_new(f.l[1], f.l[1]->root, S("L"), UB_DEF,
                              (ub_sloc){0});
    ub_prop *sr = ub_prop_new(f.l[0], sa, S("foo"), UB_REL, (ub_sloc){0});
    ub_prop *wr = ub_prop_new(f.l[1], wa, S("foo"), UB_REL, (ub_sloc){0});
    wr->custom = true;
    const char *pre_r[] = {"/Pre_root"}, *app_r[] = {"/App_root"},
               *del_r[] = {"/Del_root"}, *pre_s[] = {"/Pre_sub"},
               *app_s[] = {"/App_sub"}, *del_s[] = {"/Del_sub"},
               *add_s[] = {"/Add_sub", "/App_sub"};
    ub_listop *so = ub_listop_new(f.l[0]->arena);
    so->has[UB_LO_PREPEND] = so->has[UB_LO_APPEND] = so->has[UB_LO_DELETE] =
        true;
    CU_ASSERT_FATAL(ub_listop_put(f.l[0]->arena, so, UB_LO_PREPEND,
                                  paths(f.l[0], 1, pre_r)) == 0);
    CU_ASSERT_FATAL(ub_listop_put(f.l[0]->arena, so, UB_LO_APPEND,
                                  paths(f.l[0], 1, app_r)) == 0);
    CU_ASSERT_FATAL(ub_listop_put(f.l[0]->arena, so, UB_LO_DELETE,
                                  paths(f.l[0], 1, del_r)) == 0);
    ub_prop_ext_get(f.l[0]->arena, sr)->targets = (ub_value){
        .kind = UB_V_LISTOP, .type_id = UB_TY_PATH, .u.listop = so};
    ub_listop *wo = ub_listop_new(f.l[1]->arena);
    wo->has[UB_LO_PREPEND] = wo->has[UB_LO_APPEND] = wo->has[UB_LO_DELETE] =
        wo->has[UB_LO_ADD] = true;
    CU_ASSERT_FATAL(ub_listop_put(f.l[1]->arena, wo, UB_LO_PREPEND,
                                  paths(f.l[1], 1, pre_s)) == 0);
    CU_ASSERT_FATAL(ub_listop_put(f.l[1]->arena, wo, UB_LO_APPEND,
                                  paths(f.l[1], 1, app_s)) == 0);
    CU_ASSERT_FATAL(ub_listop_put(f.l[1]->arena, wo, UB_LO_DELETE,
                                  paths(f.l[1], 1, del_s)) == 0);
    CU_ASSERT_FATAL(ub_listop_put(f.l[1]->arena, wo, UB_LO_ADD,
                                  paths(f.l[1], 2, add_s)) == 0);
    ub_prop_ext_get(f.l[1]->arena, wr)->targets = (ub_value){
        .kind = UB_V_LISTOP, .type_id = UB_TY_PATH, .u.listop = wo};
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prop *r = ub_prop_find(out, ub_prim_find_child(out, out->root, S("L")),
                              S("foo"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    /* custom is a required field: the strongest spec (not custom) wins */
    CU_ASSERT_FALSE(r->custom);
    ub_listop *lo = ub_prop_targets(r)->u.listop;
    CU_ASSERT_PTR_NOT_NULL_FATAL(lo);
    CU_ASSERT_FALSE(lo->is_explicit);
    CU_ASSERT_FALSE(lo->has[UB_LO_ADD]);
    const ub_value *del = ub_listop_get(lo, UB_LO_DELETE),
                   *pre = ub_listop_get(lo, UB_LO_PREPEND),
                   *app = ub_listop_get(lo, UB_LO_APPEND);
    CU_ASSERT_EQUAL_FATAL(del->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(del, 0), S("/Del_sub"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(del, 1), S("/Del_root"));
    CU_ASSERT_EQUAL_FATAL(pre->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(pre, 0), S("/Pre_root"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(pre, 1), S("/Pre_sub"));
    /* added items joined the appended ones (without duplicates) */
    CU_ASSERT_EQUAL_FATAL(app->count, 3);
    CU_ASSERT_PTR_EQUAL(ub_value_str(app, 0), S("/App_sub"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(app, 1), S("/Add_sub"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(app, 2), S("/App_root"));
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static void test_reference_offsets_and_assets(void)
{
    fixture f;
    fx_init(&f, (ub_offset){-10, 1});
    ub_prim *wa = ub_prim_new(f.l[1], f.l[1]->root, S("A"), UB_DEF,
                              (ub_sloc){0});
    ub_value refs = ub_value_new(f.l[1]->arena,
                                 ub_type_get(UB_TY_REFERENCE), 2, true);
    ub_reference *r = ub_value_data(&refs);
    r[0] = (ub_reference){.asset = S("./ref.usda"), .prim_path = S(""),
                          .offset = {5, 2}, .has_offset = true,
                          .has_scale = true};
    r[1] = (ub_reference){.asset = S("/abs/x.usda"), .prim_path = S("/P"),
                          .offset = UB_OFFSET_IDENTITY};
    ub_listop *lo = ub_listop_new(f.l[1]->arena);
    lo->is_explicit = true;
    lo->has[UB_LO_EXPLICIT] = true;
    CU_ASSERT_FATAL(ub_listop_put(f.l[1]->arena, lo, UB_LO_EXPLICIT, refs) ==
                    0);
    ub_fields_set(f.l[1]->arena, &wa->meta, S("references"),
                  (ub_value){.kind = UB_V_LISTOP,
                             .type_id = UB_TY_REFERENCE,
                             .u.listop = lo},
                  (ub_sloc){0});
    ub_prop *p = attr(f.l[1], wa, "tex", UB_TY_ASSET);
    p->default_value = ub_value_new(f.l[1]->arena, ub_type_get(UB_TY_ASSET),
                                    1, false);
    ((const char **)ub_value_data(&p->default_value))[0] = S("../tex/a.png");
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *a = ub_prim_find_child(out, out->root, S("A"));
    ub_field *fr = ub_fields_find(&a->meta, S("references"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(fr);
    ub_reference *o =
        ub_value_data(ub_listop_get(fr->value.u.listop, UB_LO_EXPLICIT));
    /* the layer's offset applies after the reference's own */
    CU_ASSERT_DOUBLE_EQUAL(o[0].offset.offset, -5, 0);
    CU_ASSERT_DOUBLE_EQUAL(o[0].offset.scale, 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(o[1].offset.offset, -10, 0);
    CU_ASSERT(o[1].has_offset);
    CU_ASSERT_FALSE(o[1].has_scale);
    CU_ASSERT_STRING_EQUAL(o[0].asset, "/tmp/ub_test_stack/sub/ref.usda");
    CU_ASSERT_STRING_EQUAL(o[1].asset, "/abs/x.usda");
    ub_prop *t = ub_prop_find(out, a, S("tex"));
    CU_ASSERT_STRING_EQUAL(ub_value_str(&t->default_value, 0),
                           "/tmp/ub_test_stack/tex/a.png");
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static ub_value tokens(ub_layer *l, int n, const char **t)
{
    ub_value v = ub_value_new(l->arena, ub_type_get(UB_TY_TOKEN), n, true);
    for (int i = 0; i < n; i++)
        ((const char **)ub_value_data(&v))[i] = S(t[i]);
    return v;
}

static void test_reorder_children(void)
{
    /* weak: B, A, C; strong adds D and says `reorder nameChildren =
     * ["C", "A"]`: names gathered weakest first (B A C D), then C with what
     * follows it up to the next named one (C D), then A; B stays first. */
    fixture f;
    fx_init(&f, UB_OFFSET_IDENTITY);
    const char *weak[] = {"B", "A", "C"};
    for (int i = 0; i < 3; i++)
        ub_prim_new(f.l[1], f.l[1]->root, S(weak[i]), UB_DEF, (ub_sloc){0});
    ub_prim_new(f.l[0], f.l[0]->root, S("D"), UB_DEF, (ub_sloc){0});
    const char *order[] = {"C", "A"};
    ub_prim_ext_get(f.l[0]->arena, f.l[0]->root)->prim_order =
        tokens(f.l[0], 2, order);
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const char *want[] = {"B", "C", "D", "A"};
    CU_ASSERT_EQUAL_FATAL(out->root->children.n, 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_PTR_EQUAL(out->root->children.v[i]->name, S(want[i]));
    /* the strongest reorder statement is kept */
    CU_ASSERT_EQUAL(ub_prim_prim_order(out->root)->kind, UB_V_DATA);
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static void test_variants(void)
{
    /* Both layers author variantSet "v": the weak one variants a and b,
     * the strong one b (with an extra attribute) and c. */
    fixture f;
    fx_init(&f, (ub_offset){100, 1});
    ub_prim *sp = ub_prim_new(f.l[0], f.l[0]->root, S("P"), UB_OVER,
                              (ub_sloc){0});
    ub_prim *wp = ub_prim_new(f.l[1], f.l[1]->root, S("P"), UB_DEF,
                              (ub_sloc){0});
    ub_variant_set *ws = ub_variant_set_get(f.l[1], wp, S("v"), (ub_sloc){0});
    ub_variant_new(f.l[1], wp, ws, S("a"), (ub_sloc){0});
    ub_prim *wb = ub_variant_new(f.l[1], wp, ws, S("b"), (ub_sloc){0});
    ub_prop *wt = attr(f.l[1], wb, "t", UB_TY_TIMECODE);
    wt->default_value = tc(f.l[1], 1);
    ub_variant_set *ss = ub_variant_set_get(f.l[0], sp, S("v"), (ub_sloc){0});
    ub_prim *sb = ub_variant_new(f.l[0], sp, ss, S("b"), (ub_sloc){0});
    ub_variant_new(f.l[0], sp, ss, S("c"), (ub_sloc){0});
    attr(f.l[0], sb, "x", UB_TY_DOUBLE)->default_value = dbl(f.l[0], 2);
    ub_prim_new(f.l[0], sb, S("Child"), UB_DEF, (ub_sloc){0});
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *p = ub_prim_find_child(out, out->root, S("P"));
    CU_ASSERT_EQUAL_FATAL(ub_prim_n_variant_sets(p), 1);
    ub_variant_set *vs = &ub_prim_variant_sets(p)[0];
    CU_ASSERT_EQUAL_FATAL(vs->variants.n, 3);
    CU_ASSERT_PTR_EQUAL(vs->variants.v[0]->name, S("a"));
    CU_ASSERT_PTR_EQUAL(vs->variants.v[1]->name, S("b"));
    CU_ASSERT_PTR_EQUAL(vs->variants.v[2]->name, S("c"));
    ub_prim *b = vs->variants.v[1];
    CU_ASSERT_EQUAL(b->specifier, UB_OVER);
    ub_prop *t = ub_prop_find(out, b, S("t"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&t->default_value), 101, 0);
    CU_ASSERT_PTR_NOT_NULL(ub_prop_find(out, b, S("x")));
    CU_ASSERT_PTR_NOT_NULL(ub_prim_find_child(out, b, S("Child")));
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static void test_explicit_under_edits(void)
{
    /* weak: inherits = [</A>, </B>] (explicit); strong: delete </A>,
     * prepend </C>: the result is explicit [</C>, </B>]. */
    fixture f;
    fx_init(&f, UB_OFFSET_IDENTITY);
    ub_prim *sp = ub_prim_new(f.l[0], f.l[0]->root, S("P"), UB_OVER,
                              (ub_sloc){0});
    ub_prim *wp = ub_prim_new(f.l[1], f.l[1]->root, S("P"), UB_DEF,
                              (ub_sloc){0});
    const char *ab[] = {"/A", "/B"}, *a[] = {"/A"}, *c[] = {"/C"};
    ub_listop *wo = ub_listop_new(f.l[1]->arena);
    wo->is_explicit = wo->has[UB_LO_EXPLICIT] = true;
    CU_ASSERT_FATAL(ub_listop_put(f.l[1]->arena, wo, UB_LO_EXPLICIT,
                                  paths(f.l[1], 2, ab)) == 0);
    ub_fields_set(f.l[1]->arena, &wp->meta, S("inherits"),
                  (ub_value){.kind = UB_V_LISTOP,
                             .type_id = UB_TY_PATH, .u.listop = wo},
                  (ub_sloc){0});
    ub_listop *so = ub_listop_new(f.l[0]->arena);
    so->has[UB_LO_DELETE] = so->has[UB_LO_PREPEND] = true;
    CU_ASSERT_FATAL(ub_listop_put(f.l[0]->arena, so, UB_LO_DELETE,
                                  paths(f.l[0], 1, a)) == 0);
    CU_ASSERT_FATAL(ub_listop_put(f.l[0]->arena, so, UB_LO_PREPEND,
                                  paths(f.l[0], 1, c)) == 0);
    ub_fields_set(f.l[0]->arena, &sp->meta, S("inherits"),
                  (ub_value){.kind = UB_V_LISTOP,
                             .type_id = UB_TY_PATH, .u.listop = so},
                  (ub_sloc){0});
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prim *p = ub_prim_find_child(out, out->root, S("P"));
    ub_listop *lo = ub_fields_find(&p->meta, S("inherits"))->value.u.listop;
    CU_ASSERT(lo->is_explicit);
    const ub_value *e = ub_listop_get(lo, UB_LO_EXPLICIT);
    CU_ASSERT_EQUAL_FATAL(e->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(e, 0), S("/C"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(e, 1), S("/B"));
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

static void test_spec_type_mismatch(void)
{
    /* strong: attribute "x"; weak: relationship "x": the weak one is
     * ignored, with a warning. */
    fixture f;
    fx_init(&f, UB_OFFSET_IDENTITY);
    ub_prim *sp = ub_prim_new(f.l[0], f.l[0]->root, S("P"), UB_DEF,
                              (ub_sloc){0});
    ub_prim *wp = ub_prim_new(f.l[1], f.l[1]->root, S("P"), UB_DEF,
                              (ub_sloc){0});
    attr(f.l[0], sp, "x", UB_TY_DOUBLE)->default_value = dbl(f.l[0], 1);
    ub_prop_new(f.l[1], wp, S("x"), UB_REL, (ub_sloc){0});
    ub_diags *d = ub_diags_new();
    ub_layer *out = fx_flatten(&f, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_prop *x = ub_prop_find(out, ub_prim_find_child(out, out->root, S("P")),
                              S("x"));
    CU_ASSERT_EQUAL(x->kind, UB_ATTR);
    CU_ASSERT_EQUAL(ub_diags_warnings(d), 1);
    ub_layer_free(out);
    ub_diags_free(d);
    fx_free(&f);
}

int main(void)
{
    T = ub_strtab_new();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("stack", NULL, NULL);
    CU_add_test(s, "prim fields", test_prim_fields);
    CU_add_test(s, "child order", test_child_order);
    CU_add_test(s, "defaults and samples", test_defaults_and_samples);
    CU_add_test(s, "dictionaries", test_dictionaries);
    CU_add_test(s, "relationship list ops", test_target_listops);
    CU_add_test(s, "reference offsets and assets",
                test_reference_offsets_and_assets);
    CU_add_test(s, "reorder nameChildren", test_reorder_children);
    CU_add_test(s, "variants", test_variants);
    CU_add_test(s, "explicit list op under edits", test_explicit_under_edits);
    CU_add_test(s, "spec type mismatch", test_spec_type_mismatch);
    unsigned failed = ub_test_run_all();
    ub_strtab_free(T);
    return failed ? 1 : 0;
}
