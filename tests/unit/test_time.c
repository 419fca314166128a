/* CUnit tests for ub_time: offsets, frame rates, value remapping. */
#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

#include "ub_time.h"
#include "ub_test.h"

static void test_compose_order(void)
{
    /* b sits at (offset 10, scale 2) in a; a at (offset -3, scale 0.5) in
     * the root: t -> ((t * 2 + 10) * 0.5 - 3). */
    ub_offset outer = {-3, 0.5}, inner = {10, 2};
    ub_offset c = ub_offset_compose(outer, inner);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(c, 4), (4 * 2 + 10) * 0.5 - 3,
                           1e-12);
    ub_offset r = ub_offset_compose(inner, outer);
    CU_ASSERT(fabs(ub_offset_apply(r, 4) - ub_offset_apply(c, 4)) > 1);
}

static void test_identity_and_inverse(void)
{
    CU_ASSERT(ub_offset_is_identity(UB_OFFSET_IDENTITY));
    CU_ASSERT(ub_offset_is_identity((ub_offset){1e-9, 1 + 1e-9}));
    CU_ASSERT(!ub_offset_is_identity((ub_offset){0.5, 1}));
    ub_offset o = {10, 4};
    ub_offset i = ub_offset_inverse(o);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(i, ub_offset_apply(o, 7.25)),
                           7.25, 1e-12);
    CU_ASSERT(isinf(ub_offset_inverse((ub_offset){1, 0}).scale));
}

static void test_validate(void)
{
    CU_ASSERT_EQUAL(ub_offset_validate((ub_offset){10, 2}), UB_OFFSET_OK);
    CU_ASSERT_EQUAL(ub_offset_validate((ub_offset){-2.5, 0.5}), UB_OFFSET_OK);
    CU_ASSERT_EQUAL(ub_offset_validate((ub_offset){10, 0}),
                    UB_OFFSET_SCALE_ZERO);
    CU_ASSERT_EQUAL(ub_offset_validate((ub_offset){10, 1e-320}),
                    UB_OFFSET_SCALE_ZERO); /* 1/scale overflows */
    CU_ASSERT_EQUAL(ub_offset_validate((ub_offset){1e300, 1e-10}),
                    UB_OFFSET_SCALE_ZERO); /* offset/scale overflows */
    CU_ASSERT_EQUAL(ub_offset_validate((ub_offset){10, -1}),
                    UB_OFFSET_SCALE_NEGATIVE);
    CU_ASSERT_EQUAL(ub_offset_validate((ub_offset){INFINITY, 1}),
                    UB_OFFSET_NONFINITE);
    CU_ASSERT_EQUAL(ub_offset_validate((ub_offset){0, NAN}),
                    UB_OFFSET_NONFINITE);
    CU_ASSERT(ub_offset_status_ignored(UB_OFFSET_SCALE_ZERO));
    CU_ASSERT(ub_offset_status_ignored(UB_OFFSET_NONFINITE));
    CU_ASSERT(!ub_offset_status_ignored(UB_OFFSET_SCALE_NEGATIVE));
    CU_ASSERT(!ub_offset_status_ignored(UB_OFFSET_OK));
}

/* The TimeCodes documentation's examples, through ub_sublayer_offset. */
static void test_sublayer_offsets(void)
{
    ub_offset_status st;
    /* 24 tcps root sublayering a 12 tcps layer sublayering a 6 tcps one. */
    ub_offset a = ub_sublayer_offset(UB_OFFSET_IDENTITY, UB_OFFSET_IDENTITY,
                                     24, 12, &st);
    CU_ASSERT_EQUAL(st, UB_OFFSET_OK);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(a, 12), 24, 1e-12);
    ub_offset b = ub_sublayer_offset(a, UB_OFFSET_IDENTITY, 12, 6, &st);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(b, 3), 12, 1e-12);
    /* (offset = 10; scale = 2), same rate: 10 -> 30. */
    ub_offset c = ub_sublayer_offset(UB_OFFSET_IDENTITY, (ub_offset){10, 2},
                                     24, 24, &st);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(c, 10), 30, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(c, 15), 40, 1e-12);
    /* 24 over 8 tcps with (offset = 10; scale = 2): 10 -> 70. */
    ub_offset d = ub_sublayer_offset(UB_OFFSET_IDENTITY, (ub_offset){10, 2},
                                     24, 8, &st);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(d, 10), 70, 1e-12);
    /* Scale 0: reported, identity used (the rate ratio still applies). */
    ub_offset z = ub_sublayer_offset(UB_OFFSET_IDENTITY, (ub_offset){10, 0},
                                     24, 12, &st);
    CU_ASSERT_EQUAL(st, UB_OFFSET_SCALE_ZERO);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(z, 5), 10, 1e-12);
    /* Scale -1: reported, applied as OpenUSD does. */
    ub_offset n = ub_sublayer_offset(UB_OFFSET_IDENTITY, (ub_offset){10, -1},
                                     24, 24, &st);
    CU_ASSERT_EQUAL(st, UB_OFFSET_SCALE_NEGATIVE);
    CU_ASSERT_DOUBLE_EQUAL(ub_offset_apply(n, 4), 6, 1e-12);
}

static void test_layer_tcps(void)
{
    ub_strtab *t = ub_strtab_new();
    ub_layer *l = ub_layer_new(t, "x.usda");
    CU_ASSERT_DOUBLE_EQUAL(ub_layer_tcps(l), 24, 0);
    CU_ASSERT(!ub_layer_has_tcps(l));
    ub_value v = ub_value_new(l->arena, ub_type_get(UB_TY_DOUBLE), 1, false);
    *(double *)ub_value_data(&v) = 30;
    ub_fields_set(l->arena, &l->meta, ub_intern_cstr(t, "framesPerSecond"),
                  v, (ub_sloc){0});
    CU_ASSERT_DOUBLE_EQUAL(ub_layer_tcps(l), 30, 0);
    CU_ASSERT(ub_layer_has_fps(l));
    ub_value w = ub_value_new(l->arena, ub_type_get(UB_TY_DOUBLE), 1, false);
    *(double *)ub_value_data(&w) = 12;
    ub_fields_set(l->arena, &l->meta,
                  ub_intern_cstr(t, "timeCodesPerSecond"), w, (ub_sloc){0});
    CU_ASSERT_DOUBLE_EQUAL(ub_layer_tcps(l), 12, 0);
    ub_layer_free(l);
    ub_strtab_free(t);
}

static void test_rates(void)
{
    CU_ASSERT(ub_rate_ok(24));
    CU_ASSERT(ub_rate_ok(1e-300));
    CU_ASSERT(ub_rate_ok(1e9));
    CU_ASSERT(!ub_rate_ok(0));
    CU_ASSERT(!ub_rate_ok(-24));
    CU_ASSERT(!ub_rate_ok(INFINITY));
    CU_ASSERT(!ub_rate_ok(NAN));
    CU_ASSERT(!ub_rate_ok(1e-320)); /* its inverse overflows */
    char m[256];
    ub_rate_problem(m, sizeof m, "timeCodesPerSecond", -24);
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "timeCodesPerSecond is -24, not a "
                                     "positive finite number"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "backwards"));
    ub_rate_problem(m, sizeof m, "timeCodesPerSecond", 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "a rate of 0 makes them infinite"));
    ub_rate_problem(m, sizeof m, "framesPerSecond", NAN);
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "without timeCodesPerSecond"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "not finite"));

    /* reported at the field it comes from, once however often asked */
    ub_strtab *t = ub_strtab_new();
    ub_layer *l = ub_layer_new(t, "r.usda");
    ub_value v = ub_value_new(l->arena, ub_type_get(UB_TY_DOUBLE), 1, false);
    *(double *)ub_value_data(&v) = -1;
    ub_fields_set(l->arena, &l->meta, ub_intern_cstr(t, "framesPerSecond"),
                  v, (ub_sloc){0});
    ub_diags *d = ub_diags_new();
    ub_layer_report_rate(l, d);
    ub_layer_report_rate(l, d);
    CU_ASSERT_EQUAL(ub_diags_count(d), 1);
    CU_ASSERT_EQUAL(ub_diags_errors(d), 1);
    const ub_diag *g = ub_diags_at(d, 0);
    CU_ASSERT_STRING_EQUAL(g->id, "fps-invalid");
    CU_ASSERT_PTR_NOT_NULL(strstr(g->message, "framesPerSecond is -1"));
    CU_ASSERT(ub_diags_has(d, "fps-invalid", g->loc));
    CU_ASSERT(!ub_diags_has(d, "tcps-invalid", g->loc));
    ub_loc other = g->loc;
    other.line++;
    CU_ASSERT(!ub_diags_has(d, "fps-invalid", other));
    ub_diags_free(d);
    ub_layer_free(l);
    ub_strtab_free(t);
}

static void test_value_remap(void)
{
    ub_strtab *t = ub_strtab_new();
    ub_arena *a = ub_arena_new();
    ub_offset o = {10, 2};
    /* timecode[] */
    ub_value arr = ub_value_new(a, ub_type_get(UB_TY_TIMECODE), 3, true);
    double *d = ub_value_data(&arr);
    d[0] = 1; d[1] = -2.5; d[2] = 0;
    CU_ASSERT(ub_value_apply_offset(&arr, o));
    CU_ASSERT_DOUBLE_EQUAL(d[0], 12, 0);
    CU_ASSERT_DOUBLE_EQUAL(d[1], 5, 0);
    CU_ASSERT_DOUBLE_EQUAL(d[2], 10, 0);
    /* a double is not a time */
    ub_value dbl = ub_value_new(a, ub_type_get(UB_TY_DOUBLE), 1, false);
    *(double *)ub_value_data(&dbl) = 3;
    CU_ASSERT(!ub_value_apply_offset(&dbl, o));
    CU_ASSERT_DOUBLE_EQUAL(*(double *)ub_value_data(&dbl), 3, 0);
    /* nested dictionaries: { timecode t = 3, dictionary n = { timecode
     * deeper = 1, double notATime = 3 } } */
    ub_dict *inner = ub_dict_new(a);
    ub_value tc = ub_value_new(a, ub_type_get(UB_TY_TIMECODE), 1, false);
    *(double *)ub_value_data(&tc) = 1;
    ub_dict_set(a, inner, ub_intern_cstr(t, "deeper"), tc, (ub_sloc){0});
    ub_dict_set(a, inner, ub_intern_cstr(t, "notATime"), dbl, (ub_sloc){0});
    ub_dict *outer = ub_dict_new(a);
    ub_value tc2 = ub_value_new(a, ub_type_get(UB_TY_TIMECODE), 1, false);
    *(double *)ub_value_data(&tc2) = 3;
    ub_dict_set(a, outer, ub_intern_cstr(t, "t"), tc2, (ub_sloc){0});
    ub_value nv = {.kind = UB_V_DICT, .u.dict = inner};
    ub_dict_set(a, outer, ub_intern_cstr(t, "n"), nv, (ub_sloc){0});
    ub_value dv = {.kind = UB_V_DICT, .u.dict = outer};
    CU_ASSERT(ub_value_apply_offset(&dv, o));
    /* the dictionaries hold copies of tc2, tc and dbl: look there */
    const char *k_t = ub_intern_cstr(t, "t");
    const char *k_deeper = ub_intern_cstr(t, "deeper");
    const char *k_not = ub_intern_cstr(t, "notATime");
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_dict_find(outer, k_t)->value), 16, 0);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_dict_find(inner, k_deeper)->value), 12,
        0);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&ub_dict_find(inner, k_not)->value), 3, 0);
    ub_arena_free(a);
    ub_strtab_free(t);
}

static ub_value ub_tc(ub_arena *a, double x)
{
    ub_value v = ub_value_new(a, ub_type_get(UB_TY_TIMECODE), 1, false);
    *(double *)ub_value_data(&v) = x;
    return v;
}

static void test_samples_remap(void)
{
    ub_arena *a = ub_arena_new();
    ub_samples s = {0};
    ub_samples_set(a, &s, -4.5, ub_tc(a, 1));
    ub_samples_set(a, &s, 0, ub_tc(a, 2));
    ub_samples_set(a, &s, 10, ub_tc(a, 3));
    CU_ASSERT_EQUAL(ub_samples_apply_offset(a, &s, (ub_offset){10, 2}), 0);
    CU_ASSERT_EQUAL(s.n, 3);
    CU_ASSERT_DOUBLE_EQUAL(s.v[0].time, 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.v[1].time, 10, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.v[2].time, 30, 0);
    /* timecode-valued samples are remapped too */
    CU_ASSERT_DOUBLE_EQUAL(*(double *)ub_value_data(&s.v[0].value), 12, 0);
    CU_ASSERT_DOUBLE_EQUAL(*(double *)ub_value_data(&s.v[2].value), 16, 0);
    /* negative scale reverses, keeps sorted */
    CU_ASSERT_EQUAL(ub_samples_apply_offset(a, &s, (ub_offset){0, -1}), 0);
    CU_ASSERT_DOUBLE_EQUAL(s.v[0].time, -30, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.v[2].time, -1, 0);
    /* collisions after mapping: the later original time wins */
    ub_samples c = {0};
    ub_samples_set(a, &c, 1, ub_tc(a, 100));
    ub_samples_set(a, &c, 2, ub_tc(a, 200));
    ub_samples_set(a, &c, 3, ub_tc(a, 300));
    CU_ASSERT_EQUAL(ub_samples_apply_offset(a, &c, (ub_offset){1e17, 1}), 0);
    CU_ASSERT_EQUAL(c.n, 1);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&c.v[0].value), 300 + 1e17, 0);
    ub_samples r = {0};
    ub_samples_set(a, &r, 1, ub_tc(a, 100));
    ub_samples_set(a, &r, 2, ub_tc(a, 200));
    CU_ASSERT_EQUAL(ub_samples_apply_offset(a, &r, (ub_offset){1e17, -1}), 0);
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_DOUBLE_EQUAL(
        *(double *)ub_value_data(&r.v[0].value), 1e17 - 200, 0);
    ub_arena_free(a);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("time", NULL, NULL);
    CU_add_test(s, "compose order", test_compose_order);
    CU_add_test(s, "identity and inverse", test_identity_and_inverse);
    CU_add_test(s, "validate", test_validate);
    CU_add_test(s, "sublayer offsets (TimeCodes docs)", test_sublayer_offsets);
    CU_add_test(s, "layer tcps", test_layer_tcps);
    CU_add_test(s, "rates that cannot scale times", test_rates);
    CU_add_test(s, "value remap", test_value_remap);
    CU_add_test(s, "samples remap", test_samples_remap);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
