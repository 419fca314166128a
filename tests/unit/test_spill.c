/* Unit tests of ub_spill: the parts of baked clip samples kept in its
 * temporary file come back per attribute, in time order and as the bake
 * made them -- values of every kind a sample may hold, and text. */
#include <CUnit/Basic.h>
#include <string.h>

#include "ub_spill.h"
#include "ub_test.h"
#include "ub_usda.h"

/* The spill keys parts by their attribute; only the name is read (in
 * its messages). */
static ub_prop attr_a = {.name = "a"};
static ub_prop attr_b = {.name = "b"};
static ub_prop attr_none = {.name = "none"};

static ub_value float3(ub_arena *a, float x)
{
    ub_value v = ub_value_new(a, ub_type_get(UB_TY_FLOAT3), 1, false);
    float f[3] = {x, x + 1, x + 2};
    memcpy(ub_value_data(&v), f, sizeof f);
    return v;
}

static ub_value int_array(ub_arena *a, int n)
{
    ub_value v = ub_value_new(a, ub_type_get(UB_TY_INT), (uint32_t)n, true);
    for (int i = 0; i < n; i++)
        ((int *)ub_value_data(&v))[i] = 100 * n + i;
    return v;
}

static ub_value string(ub_arena *a, const char *s)
{
    ub_value v = ub_value_new(a, ub_type_get(UB_TY_STRING), 1, false);
    ((const char **)ub_value_data(&v))[0] = s;
    return v;
}

/* (1, (x, [y]), "q"): an untyped value with nested children. */
static ub_value untyped(ub_arena *a)
{
    ub_untyped *kids = ub_arena_zalloc(a, 3 * sizeof *kids);
    ub_untyped *inner = ub_arena_zalloc(a, 2 * sizeof *inner);
    ub_untyped *list = ub_arena_zalloc(a, sizeof *list);
    ub_untyped *top = ub_arena_zalloc(a, sizeof *top);
    list[0] = (ub_untyped){.kind = UB_U_ATOM, .text = "y"};
    inner[0] = (ub_untyped){.kind = UB_U_ATOM, .text = "x"};
    inner[1] = (ub_untyped){.kind = UB_U_LIST, .n = 1, .child = list};
    kids[0] = (ub_untyped){.kind = UB_U_ATOM, .text = "1"};
    kids[1] = (ub_untyped){.kind = UB_U_TUPLE, .n = 2, .child = inner};
    kids[2] = (ub_untyped){.kind = UB_U_STRING, .text = "q"};
    *top = (ub_untyped){.kind = UB_U_TUPLE, .n = 3, .child = kids};
    ub_value v = {.kind = UB_V_UNTYPED};
    v.u.untyped = top;
    return v;
}

/* A part of n samples at times t[i] with values v[i]. */
static ub_samples part_of(ub_arena *a, size_t n, const double *t,
                          const ub_value *v)
{
    ub_samples s = {0};
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL_FATAL(ub_samples_set(a, &s, t[i], v[i]), 0);
    return s;
}

/* Format the n parts into one text and hand them to the spill at once,
 * as the bake does with the parts of one clip layer. */
static void keep(const ub_clip_sink *sink, size_t n, ub_prop *const *attrs,
                 const ub_samples *parts, unsigned depth)
{
    ub_buf text;
    ub_buf_init(&text);
    ub_clip_part kept[4];
    CU_ASSERT_FATAL(n <= 4);
    for (size_t i = 0; i < n; i++) {
        size_t before = text.len;
        CU_ASSERT_EQUAL_FATAL(sink->format(sink->ctx, depth, &parts[i],
                                           &text), 0);
        kept[i] = (ub_clip_part){attrs[i], depth, parts[i].v[0].time,
                                 text.len - before};
    }
    CU_ASSERT_EQUAL(sink->keep(sink->ctx, kept, n, text.data, text.len), 0);
    ub_buf_free(&text);
}

static void test_values(void)
{
    ub_arena *a = ub_arena_new();
    ub_spill *s = ub_spill_new(UB_SPILL_VALUES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    ub_clip_sink sink = ub_spill_sink(s);

    /* the second clip first: a's parts arrive out of time order, and
     * its sample at 10 is replaced by the later part's */
    double t_late[] = {10, 20}, t_early[] = {1, 2, 10};
    ub_value v_late[] = {float3(a, 10), float3(a, 20)};
    ub_value v_early[] = {float3(a, 1), float3(a, 2), float3(a, 99)};
    double t_b[] = {1, 2, 3, 4, 5};
    ub_value v_b[] = {int_array(a, 3), string(a, "text"), untyped(a),
                      ub_value_block(), int_array(a, 0)};
    ub_samples late = part_of(a, 2, t_late, v_late);
    ub_samples parts[] = {part_of(a, 3, t_early, v_early),
                          part_of(a, 5, t_b, v_b)};
    ub_prop *la[] = {&attr_a}, *ea[] = {&attr_a, &attr_b};
    keep(&sink, 1, la, &late, 1);
    keep(&sink, 2, ea, parts, 1);
    ub_spill_finish(s);

    ub_samples out;
    CU_ASSERT_EQUAL_FATAL(ub_spill_values(s, &attr_a, a, &out), 0);
    CU_ASSERT_EQUAL_FATAL(out.n, 4);
    double want_t[] = {1, 2, 10, 20};
    ub_value want_v[] = {v_early[0], v_early[1], v_late[0], v_late[1]};
    for (unsigned i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(out.v[i].time, want_t[i]);
        CU_ASSERT(ub_value_equal(&out.v[i].value, &want_v[i]));
    }
    CU_ASSERT(!ub_value_equal(&out.v[2].value, &v_early[2]));

    CU_ASSERT_EQUAL_FATAL(ub_spill_values(s, &attr_b, a, &out), 0);
    CU_ASSERT_EQUAL_FATAL(out.n, 5);
    for (unsigned i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(out.v[i].time, t_b[i]);
        CU_ASSERT_EQUAL(out.v[i].value.kind, v_b[i].kind);
        CU_ASSERT(ub_value_equal(&out.v[i].value, &v_b[i]));
    }
    /* each value its own copy, the tree whole */
    const ub_untyped *u = out.v[2].value.u.untyped;
    CU_ASSERT(u != v_b[2].u.untyped);
    CU_ASSERT_EQUAL(u->n, 3);
    CU_ASSERT_EQUAL(u->child[1].child[1].kind, UB_U_LIST);
    CU_ASSERT_STRING_EQUAL(u->child[1].child[1].child[0].text, "y");
    CU_ASSERT_STRING_EQUAL(ub_value_str(&out.v[1].value, 0), "text");

    CU_ASSERT_EQUAL(ub_spill_values(s, &attr_none, a, &out), 0);
    CU_ASSERT_EQUAL(out.n, 0);
    CU_ASSERT(!ub_spill_said(s));
    ub_spill_free(s);
    ub_arena_free(a);
}

/* A dictionary is no sample value (no attribute type holds one, and the
 * readers refuse one): a part holding one is refused, not kept wrong, and
 * the spill says so (its caller then adds nothing). */
static void test_values_refused(void)
{
    ub_arena *a = ub_arena_new();
    ub_spill *s = ub_spill_new(UB_SPILL_VALUES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    ub_clip_sink sink = ub_spill_sink(s);
    ub_value d = {.kind = UB_V_DICT};
    d.u.dict = ub_dict_new(a);
    double t = 1;
    ub_samples part = part_of(a, 1, &t, &d);
    ub_buf text;
    ub_buf_init(&text);
    CU_ASSERT(!ub_spill_said(s));
    CU_ASSERT_EQUAL(sink.format(sink.ctx, 1, &part, &text), -1);
    CU_ASSERT(ub_spill_said(s));
    ub_buf_free(&text);
    ub_spill_free(s);
    ub_arena_free(a);
}

/* Text: each attribute's parts in time order, at the depth they were
 * formatted for, and nothing at another. */
static void test_text(void)
{
    ub_arena *a = ub_arena_new();
    ub_spill *s = ub_spill_new(UB_SPILL_TEXT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    ub_clip_sink sink = ub_spill_sink(s);
    double t1[] = {3}, t0[] = {1, 2};
    ub_value v1[] = {float3(a, 3)}, v0[] = {float3(a, 1), float3(a, 2)};
    ub_samples p1 = part_of(a, 1, t1, v1), p0 = part_of(a, 2, t0, v0);
    ub_prop *at[] = {&attr_a};
    keep(&sink, 1, at, &p1, 2);
    keep(&sink, 1, at, &p0, 2);
    ub_spill_finish(s);

    ub_buf want, got;
    ub_buf_init(&want);
    ub_buf_init(&got);
    for (int i = 0; i < 2; i++)
        ub_usda_write_sample(&want, 2, t0[i], &v0[i]);
    ub_usda_write_sample(&want, 2, t1[0], &v1[0]);
    CU_ASSERT_EQUAL_FATAL(ub_spill_samples(s, &attr_a, 2, &got), 0);
    CU_ASSERT_EQUAL_FATAL(got.len, want.len);
    CU_ASSERT(memcmp(got.data, want.data, want.len) == 0);
    CU_ASSERT(strstr(got.data, "1: (1, 2, 3)") != NULL);

    got.len = 0;
    CU_ASSERT_EQUAL(ub_spill_samples(s, &attr_none, 2, &got), 0);
    CU_ASSERT_EQUAL(got.len, 0);
    /* the writer nesting it elsewhere than the bake said */
    CU_ASSERT(!ub_spill_said(s));
    CU_ASSERT_EQUAL(ub_spill_samples(s, &attr_a, 3, &got), -1);
    CU_ASSERT(ub_spill_said(s));
    ub_buf_free(&want);
    ub_buf_free(&got);
    ub_spill_free(s);
    ub_arena_free(a);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite su = CU_add_suite("spill", NULL, NULL);
    CU_add_test(su, "values of every kind back in time order", test_values);
    CU_add_test(su, "a dictionary sample refused", test_values_refused);
    CU_add_test(su, "text back in time order, at its depth", test_text);
    return ub_test_run_all() ? 1 : 0;
}
