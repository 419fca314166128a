/* Unit tests for runtime/ub_arena's marks and runtime/ub_layer's stubs
 * (what a streaming reader relies on to reuse memory safely), and for the
 * list op reorder of runtime/ub_value. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "ub_arena.h"
#include "ub_layer.h"

static const ub_loc noloc = {NULL, 0, 0};

static void test_release_reuses_memory(void)
{
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char *keep = ub_arena_strdup(a, "kept");
    ub_arena_mark m = ub_arena_get_mark(a);
    size_t before = ub_arena_bytes(a);
    void *first = ub_arena_alloc(a, 64);
    ub_arena_alloc(a, 128);
    CU_ASSERT(ub_arena_bytes(a) > before);
    ub_arena_release(a, m);
    CU_ASSERT_EQUAL(ub_arena_bytes(a), before);
    /* the same bytes come back, and what came before the mark is intact */
    CU_ASSERT_PTR_EQUAL(ub_arena_alloc(a, 64), first);
    CU_ASSERT_STRING_EQUAL(keep, "kept");
    ub_arena_free(a);
}

static void test_release_across_chunks(void)
{
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char *keep = ub_arena_strdup(a, "below the mark");
    ub_arena_mark outer = ub_arena_get_mark(a);
    /* several chunks' worth, with a nested mark in the middle */
    for (int i = 0; i < 64; i++)
        memset(ub_arena_alloc(a, 4096), 0xab, 4096);
    ub_arena_mark inner = ub_arena_get_mark(a);
    char *mid = ub_arena_alloc(a, 1 << 20);
    memset(mid, 1, 1 << 20);
    ub_arena_release(a, inner);
    char *again = ub_arena_alloc(a, 1 << 20);
    memset(again, 2, 1 << 20);
    ub_arena_release(a, outer);
    CU_ASSERT_STRING_EQUAL(keep, "below the mark");
    /* round trips across a chunk boundary keep working */
    for (int round = 0; round < 100; round++) {
        ub_arena_mark m = ub_arena_get_mark(a);
        char *p = ub_arena_alloc(a, 200000);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        memset(p, round, 200000);
        ub_arena_release(a, m);
    }
    CU_ASSERT_STRING_EQUAL(keep, "below the mark");
    ub_arena_free(a);
}

/* A prim with more properties than the lookup scan handles is indexed in
 * the layer's shared table; once it is dropped and its memory reused by
 * another prim, the old entries must not answer for the new prim. */
static void test_drop_body_forgets_lookups(void)
{
    ub_strtab *t = ub_strtab_new();
    ub_layer *l = ub_layer_new(t, "test.usda");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ub_prim *set = ub_prim_new(l, l->root, ub_intern_cstr(t, "Set"), UB_DEF,
                               noloc);
    char name[32];
    for (int round = 0; round < 3; round++) {
        snprintf(name, sizeof name, "item%d", round);
        ub_prim *p = ub_prim_new(l, set, ub_intern_cstr(t, name), UB_DEF,
                                 noloc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        ub_arena_mark m = ub_arena_get_mark(l->arena);
        for (int k = 0; k < 40; k++) {
            /* each round its own names: stale entries would be found */
            snprintf(name, sizeof name, "r%d_p%d", round, k);
            CU_ASSERT_PTR_NOT_NULL(ub_prop_new(l, p, ub_intern_cstr(t, name),
                                               UB_ATTR, noloc));
        }
        for (int k = 0; k < 30; k++) {
            snprintf(name, sizeof name, "child%d", k);
            CU_ASSERT_PTR_NOT_NULL(ub_prim_new(l, p, ub_intern_cstr(t, name),
                                               UB_DEF, noloc));
        }
        snprintf(name, sizeof name, "r%d_p7", round);
        CU_ASSERT_PTR_NOT_NULL(ub_prop_find(l, p, ub_intern_cstr(t, name)));
        CU_ASSERT_PTR_NOT_NULL(
            ub_prim_find_child(l, p, ub_intern_cstr(t, "child29")));
        ub_prim_drop_body(l, p);
        ub_arena_release(l->arena, m);
        /* a stub: still findable by name, with nothing inside */
        CU_ASSERT_PTR_EQUAL(ub_prim_find_child(l, set, p->name), p);
        CU_ASSERT_EQUAL(p->props.n, 0);
        CU_ASSERT_EQUAL(p->children.n, 0);
        CU_ASSERT_PTR_NULL(ub_prop_find(l, p, ub_intern_cstr(t, name)));
        CU_ASSERT_PTR_NULL(
            ub_prim_find_child(l, p, ub_intern_cstr(t, "child29")));
        /* a new owner in the reused memory, with 40 new properties */
        ub_prim *q = ub_prim_new(l, p, ub_intern_cstr(t, "reuse"), UB_DEF,
                                 noloc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        for (int k = 0; k < 40; k++) {
            snprintf(name, sizeof name, "other%d", k);
            ub_prop_new(l, q, ub_intern_cstr(t, name), UB_ATTR, noloc);
        }
        for (int k = 0; k < 40; k++) {
            snprintf(name, sizeof name, "r%d_p%d", round, k);
            CU_ASSERT_PTR_NULL(ub_prop_find(l, q, ub_intern_cstr(t, name)));
        }
        CU_ASSERT_PTR_NOT_NULL(ub_prop_find(l, q, ub_intern_cstr(t, "other39")));
        ub_prim_drop_body(l, p);
    }
    ub_layer_free(l);
    ub_strtab_free(t);
}

static bool is_entry(void *ctx, uint32_t item, uint32_t entry)
{
    const char *const *c = ctx; /* items "xayb...", then order */
    const char *items = c[0], *order = c[1];
    return items[item] == order[entry];
}

/* SdfListOp's reorder: named items move with the unnamed ones after them,
 * unnamed ones before any named stay first; unknown and repeated entries
 * change nothing. */
static void test_reorder(void)
{
    static const struct {
        const char *items, *order, *want;
    } cases[] = {
        {"xayb", "ba", "xbay"}, {"abc", "ca", "cab"}, {"ab", "zbb", "ab"},
        {"abcd", "dcba", "dcba"}, {"abcd", "", "abcd"}, {"a", "a", "a"},
        {"xyab", "b", "xyab"}, {"abxy", "ba", "bxya"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint32_t n = (uint32_t)strlen(cases[c].items), perm[8];
        const char *ctx[2] = {cases[c].items, cases[c].order};
        CU_ASSERT_EQUAL_FATAL(ub_reorder_perm(n, (uint32_t)strlen(ctx[1]),
                                              is_entry, ctx, perm),
                              0);
        char got[9] = {0};
        for (uint32_t j = 0; j < n; j++)
            got[j] = cases[c].items[perm[j]];
        if (strcmp(got, cases[c].want) != 0)
            fprintf(stderr, "\nreorder %s by %s: %s, wanted %s\n",
                    cases[c].items, cases[c].order, got, cases[c].want);
        CU_ASSERT_STRING_EQUAL(got, cases[c].want);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("layer", NULL, NULL);
    CU_add_test(s, "release reuses memory", test_release_reuses_memory);
    CU_add_test(s, "release across chunks", test_release_across_chunks);
    CU_add_test(s, "drop body forgets lookups", test_drop_body_forgets_lookups);
    CU_add_test(s, "list op reorder", test_reorder);
    CU_basic_set_mode(CU_BRM_NORMAL);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() +
                      CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
