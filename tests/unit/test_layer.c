/* Unit tests for runtime/ub_arena's marks and runtime/ub_layer's stubs
 * (what a streaming reader relies on to reuse memory safely), for the
 * list op reorder of runtime/ub_value, and for the stored locations of
 * model records (ub_sloc), a crate layer's spec locations among them
 * (runtime/ub_specloc). */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_arena.h"
#include "ub_layer.h"
#include "ub_test.h"

static const ub_sloc nosloc = {0};

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

/* What a memory report reads: the chunks' span covers what was handed
 * out, and a release gives the span back too. */
static void test_footprint(void)
{
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    size_t used, reserved;
    ub_arena_footprint(a, &used, &reserved);
    CU_ASSERT_EQUAL(used, 0);
    CU_ASSERT_EQUAL(reserved, 0);
    ub_arena_alloc(a, 1);
    ub_arena_mark m = ub_arena_get_mark(a);
    ub_arena_alloc(a, 16); /* 15 bytes of padding before it */
    ub_arena_footprint(a, &used, &reserved);
    CU_ASSERT_EQUAL(used, 32);
    CU_ASSERT(reserved >= used);
    ub_arena_release(a, m);
    ub_arena_footprint(a, &used, &reserved);
    CU_ASSERT_EQUAL(used, 1);
    ub_arena_free(a);
}

/* A block whose size is a multiple of 8 but not of 16 (a 72-byte
 * record) follows the one before it without padding, and a block of
 * 16 bytes still starts at 16. */
static void test_alignment(void)
{
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char *p = ub_arena_alloc(a, 72), *q = ub_arena_alloc(a, 72);
    CU_ASSERT_EQUAL(q - p, 72);
    CU_ASSERT_EQUAL((uintptr_t)q % 8, 0);
    ub_arena_alloc(a, 1);
    char *r = ub_arena_alloc(a, 24);
    CU_ASSERT_EQUAL((uintptr_t)r % 8, 0);
    CU_ASSERT_EQUAL(r - q, 80);
    char *s = ub_arena_alloc(a, 32);
    CU_ASSERT_EQUAL((uintptr_t)s % 16, 0);
    ub_arena_free(a);
}

/* A record given its type's alignment (8) follows an 8-byte block without
 * padding whatever its size, where ub_arena_alloc would align a 64-byte
 * block to 16. */
static void test_record_alignment(void)
{
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char *p = ub_arena_alloc(a, 8);
    char *q = ub_arena_alloc_align(a, 64, 8);
    CU_ASSERT_EQUAL(q - p, 8);
    char *r = ub_arena_zalloc_align(a, 32, 8);
    CU_ASSERT_EQUAL(r - q, 64);
    CU_ASSERT_EQUAL(r[31], 0);
    char *g = ub_arena_grow_align(a, r, 1, 2, 32, 8);
    CU_ASSERT_EQUAL(g - r, 32);
    ub_arena_free(a);
}

/* Text takes no padding: strings follow one another byte for byte. */
static void test_bytes_unaligned(void)
{
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char *p = ub_arena_strdup(a, "seventeen bytes!"), *q = ub_arena_strdup(a, "x");
    CU_ASSERT_EQUAL(q - p, 17);
    CU_ASSERT_STRING_EQUAL(p, "seventeen bytes!");
    CU_ASSERT_STRING_EQUAL(q, "x");
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

/* Chunks from a huge page up (pages of their own, in whole huge pages):
 * blocks bigger than a chunk, whole and intact; and a chunk given back
 * by a release is the one the next allocation across that boundary
 * takes, whether it was sized for a block or is an arena's power of
 * two. */
static void test_big_chunks(void)
{
    const size_t mib = (size_t)1 << 20;
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char *big = ub_arena_alloc(a, 3 * mib);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    memset(big, 7, 3 * mib);
    char *bigger = ub_arena_alloc(a, 5 * mib + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bigger);
    memset(bigger, 9, 5 * mib + 1);
    CU_ASSERT_EQUAL(big[0], 7);
    CU_ASSERT_EQUAL(big[3 * mib - 1], 7);
    CU_ASSERT_EQUAL(bigger[5 * mib], 9);
    size_t used, reserved;
    ub_arena_footprint(a, &used, &reserved);
    CU_ASSERT(reserved >= used && used >= 8 * mib);
    /* a block sized chunk, given back and taken again */
    ub_arena_mark m = ub_arena_get_mark(a);
    char *p = ub_arena_alloc(a, 40 * mib);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p[40 * mib - 1] = 1;
    ub_arena_release(a, m);
    CU_ASSERT_PTR_EQUAL(ub_arena_alloc(a, 40 * mib), p);
    ub_arena_release(a, m);
    ub_arena_free(a);

    /* an arena's power-of-two chunk (4 MiB once it holds 3) */
    a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    for (int i = 0; i < 3 * 256; i++)
        CU_ASSERT_PTR_NOT_NULL_FATAL(ub_arena_alloc(a, 4096));
    m = ub_arena_get_mark(a);
    p = ub_arena_alloc(a, 3 * mib + mib / 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memset(p, 3, 3 * mib + mib / 2);
    ub_arena_release(a, m);
    for (int round = 0; round < 20; round++) {
        CU_ASSERT_PTR_EQUAL(ub_arena_alloc(a, 3 * mib + mib / 2), p);
        ub_arena_release(a, m);
    }
    ub_arena_free(a);
}

/* A streaming reader's cycles (mark, a prim's worth of small blocks,
 * release) keep its chunks near what it holds: chunk sizes must not keep
 * doubling with each cycle that spills into a new chunk, which reserved
 * 64 MiB chunks to read a 5 MB file (refused under `ulimit -v`). */
static void test_release_cycles_stay_small(void)
{
    ub_arena *a = ub_arena_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ub_arena_alloc(a, 10000));
    size_t most = 0;
    for (int cycle = 0; cycle < 200; cycle++) {
        ub_arena_mark m = ub_arena_get_mark(a);
        for (int i = 0; i < 200; i++)
            CU_ASSERT_PTR_NOT_NULL_FATAL(ub_arena_alloc(a, 1000));
        size_t used, reserved;
        ub_arena_footprint(a, &used, &reserved);
        if (reserved > most)
            most = reserved;
        ub_arena_release(a, m);
    }
    /* 210 KB held at most: chunks of up to twice that, and the spare */
    CU_ASSERT(most <= (size_t)1 << 20);
    ub_arena_free(a);
}

/* Diagnostics keep the order they were added in (what the printer uses
 * to leave out what follows running out of memory), and an
 * out-of-memory error is marked, also once moved into another list. */
static void test_diags_order_and_oom(void)
{
    ub_diags *d = ub_diags_new(), *into = ub_diags_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(into);
    CU_ASSERT_EQUAL(ub_diags_first_oom(d), SIZE_MAX);
    ub_diag_add(d, UB_ERROR, (ub_loc){"b.usda", 1, 1}, NULL, NULL, 0, "b");
    ub_diag *oom = ub_diag_add_oom(d, (ub_loc){"a.usda", 0, 0},
                                   "out of memory reading '%s'", "a.usda");
    ub_diag_add(d, UB_WARNING, (ub_loc){"a.usda", 0, 0}, NULL, NULL, 0, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(oom);
    CU_ASSERT(oom->out_of_memory);
    CU_ASSERT_STRING_EQUAL(oom->message, "out of memory reading 'a.usda'");
    CU_ASSERT_EQUAL(ub_diags_first_oom(d), 1);
    CU_ASSERT_EQUAL(ub_diags_errors(d), 2);
    CU_ASSERT_EQUAL(ub_diags_warnings(d), 1);
    CU_ASSERT_EQUAL(ub_diags_lost(d), 0);
    /* sorted by file and place; the same place keeps the order added */
    ub_diags_sort(d);
    CU_ASSERT_EQUAL(ub_diags_at(d, 0)->seq, 1);
    CU_ASSERT_EQUAL(ub_diags_at(d, 1)->seq, 2);
    CU_ASSERT_EQUAL(ub_diags_at(d, 2)->seq, 0);
    /* moved after what another list holds: numbered on from there */
    ub_diag_add(into, UB_NOTE, (ub_loc){NULL, 0, 0}, NULL, NULL, 0, "n");
    ub_diags_take(into, d);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    CU_ASSERT_EQUAL(ub_diags_count(into), 4);
    CU_ASSERT_EQUAL(ub_diags_first_oom(into), 1);
    CU_ASSERT(ub_diags_at(into, 1)->out_of_memory);
    CU_ASSERT(!ub_diags_at(into, 2)->out_of_memory);
    ub_diags_free(d);
    ub_diags_free(into);
}

/* ub_diags_has finds a diagnostic by id and place among many (a hashed
 * index: each lookup is no scan), through sorting, and after a move into
 * another list, where the emptied list no longer finds it. */
static void test_diags_has(void)
{
    ub_diags *d = ub_diags_new(), *into = ub_diags_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(into);
    CU_ASSERT(!ub_diags_has(d, "w", (ub_loc){"a.usda", 1, 1}));
    for (uint32_t i = 1; i <= 5000; i++)
        ub_diag_add(d, UB_WARNING, (ub_loc){"a.usda", i, 3}, "w", NULL, 0,
                    "%u", i);
    ub_diag_add(d, UB_ERROR, (ub_loc){"b.usda", 7, 5}, "e", NULL, 0, "e");
    ub_diag_add(d, UB_ERROR, (ub_loc){"b.usda", 8, 5}, NULL, NULL, 0, "x");
    ub_diags_sort(d);
    for (uint32_t i = 1; i <= 5000; i += 499)
        CU_ASSERT(ub_diags_has(d, "w", (ub_loc){"a.usda", i, 3}));
    CU_ASSERT(!ub_diags_has(d, "w", (ub_loc){"a.usda", 5001, 3}));
    CU_ASSERT(!ub_diags_has(d, "w", (ub_loc){"a.usda", 1, 4}));
    CU_ASSERT(!ub_diags_has(d, "w", (ub_loc){"b.usda", 1, 3}));
    CU_ASSERT(!ub_diags_has(d, "e", (ub_loc){"a.usda", 7, 5}));
    /* the place's file is compared by its text */
    char file[] = "b.usda";
    CU_ASSERT(ub_diags_has(d, "e", (ub_loc){file, 7, 5}));
    ub_diags_take(into, d);
    CU_ASSERT(!ub_diags_has(d, "e", (ub_loc){"b.usda", 7, 5}));
    CU_ASSERT(ub_diags_has(into, "e", (ub_loc){"b.usda", 7, 5}));
    CU_ASSERT(ub_diags_has(into, "w", (ub_loc){"a.usda", 4321, 3}));
    ub_diags_free(d);
    ub_diags_free(into);
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
                               nosloc);
    char name[32];
    for (int round = 0; round < 3; round++) {
        snprintf(name, sizeof name, "item%d", round);
        ub_prim *p = ub_prim_new(l, set, ub_intern_cstr(t, name), UB_DEF,
                                 nosloc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        ub_arena_mark m = ub_arena_get_mark(l->arena);
        for (int k = 0; k < 40; k++) {
            /* each round its own names: stale entries would be found */
            snprintf(name, sizeof name, "r%d_p%d", round, k);
            CU_ASSERT_PTR_NOT_NULL(ub_prop_new(l, p, ub_intern_cstr(t, name),
                                               UB_ATTR, nosloc));
        }
        for (int k = 0; k < 30; k++) {
            snprintf(name, sizeof name, "child%d", k);
            CU_ASSERT_PTR_NOT_NULL(ub_prim_new(l, p, ub_intern_cstr(t, name),
                                               UB_DEF, nosloc));
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
                                 nosloc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        for (int k = 0; k < 40; k++) {
            snprintf(name, sizeof name, "other%d", k);
            ub_prop_new(l, q, ub_intern_cstr(t, name), UB_ATTR, nosloc);
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
/* A property or a whole property list taken from another layer is found
 * by name in the new one, small lists and indexed big ones alike, and
 * appending to a shared list copies it instead of writing into the
 * layer it came from. */
static void test_shared_props(void)
{
    ub_strtab *t = ub_strtab_new();
    ub_layer *src = ub_layer_new(t, "src.usda");
    ub_layer *dst = ub_layer_new(t, "dst.usda");
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dst);
    ub_prim *big = ub_prim_new(src, src->root, ub_intern_cstr(t, "Big"),
                               UB_DEF, nosloc);
    ub_prim *small = ub_prim_new(src, src->root, ub_intern_cstr(t, "Small"),
                                 UB_DEF, nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    CU_ASSERT_PTR_NOT_NULL_FATAL(small);
    char name[16];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "p%d", i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(
            ub_prop_new(src, big, ub_intern_cstr(t, name), UB_ATTR, nosloc));
    }
    ub_prop *a = ub_prop_new(src, small, ub_intern_cstr(t, "a"), UB_ATTR,
                             nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);

    ub_prim *ob = ub_prim_new(dst, dst->root, big->name, UB_DEF, nosloc);
    ub_prim *os = ub_prim_new(dst, dst->root, small->name, UB_DEF, nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ob);
    CU_ASSERT_PTR_NOT_NULL_FATAL(os);
    CU_ASSERT_EQUAL(ub_prop_share_all(dst, ob, &big->props), 0);
    CU_ASSERT_EQUAL(ob->props.n, 40);
    CU_ASSERT_PTR_EQUAL(ub_prop_find(dst, ob, ub_intern_cstr(t, "p33")),
                        big->props.v[33]);
    CU_ASSERT_EQUAL(ub_prop_share_all(dst, ob, &small->props), -1);
    CU_ASSERT_EQUAL(ub_prop_append(dst, os, a), 0);
    CU_ASSERT_PTR_EQUAL(ub_prop_find(dst, os, a->name), a);

    /* the shared list grows by copying: src's list is left as it was */
    ub_prop **was = big->props.v;
    CU_ASSERT_PTR_NOT_NULL(
        ub_prop_new(dst, ob, ub_intern_cstr(t, "extra"), UB_ATTR, nosloc));
    CU_ASSERT_EQUAL(ob->props.n, 41);
    CU_ASSERT_EQUAL(big->props.n, 40);
    CU_ASSERT_PTR_EQUAL(big->props.v, was);
    CU_ASSERT(ob->props.v != was);
    CU_ASSERT_PTR_NULL(ub_prop_find(src, big, ub_intern_cstr(t, "extra")));

    /* a field list reserved at its size holds that many without growing */
    ub_fields f = {0};
    CU_ASSERT_EQUAL(ub_fields_reserve(dst->arena, &f, 3), 0);
    ub_field *v = f.v;
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "k%d", i);
        CU_ASSERT_PTR_NOT_NULL(ub_fields_set(dst->arena, &f,
                                             ub_intern_cstr(t, name),
                                             ub_value_block(), nosloc));
    }
    CU_ASSERT_EQUAL(f.n, 3);
    CU_ASSERT_EQUAL(f.cap, 3);
    CU_ASSERT_PTR_EQUAL(f.v, v);

    ub_layer_free(dst);
    ub_layer_free(src);
    ub_strtab_free(t);
}

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

/* A list op stores only the parts set: an unset part reads EMPTY at no
 * location, and a copy's parts are set without touching the original. */
static void test_listop_parts(void)
{
    ub_arena *a = ub_arena_new();
    ub_strtab *t = ub_strtab_new();
    ub_listop *lo = ub_listop_new(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lo);
    for (int p = 0; p < UB_LO_NPARTS; p++) {
        CU_ASSERT_EQUAL(ub_listop_get(lo, p)->kind, UB_V_EMPTY);
        CU_ASSERT_EQUAL(ub_sloc_line(ub_listop_loc(lo, p)), 0);
        CU_ASSERT_PTR_NULL(ub_listop_get_mut(lo, p));
    }
    const ub_type *tok = ub_type_get(UB_TY_TOKEN);
    ub_value one = ub_value_new(a, tok, 1, true);
    ub_value two = ub_value_new(a, tok, 2, true);
    ub_sloc at = ub_strtab_sloc(t, (ub_loc){"x.usda", 3, 5});
    CU_ASSERT_EQUAL(ub_listop_assign(a, lo, UB_LO_APPEND, one, at), 0);
    CU_ASSERT_EQUAL(ub_listop_put(a, lo, UB_LO_DELETE, two), 0);
    CU_ASSERT_EQUAL(ub_listop_get(lo, UB_LO_APPEND)->count, 1);
    CU_ASSERT_EQUAL(ub_sloc_line(ub_listop_loc(lo, UB_LO_APPEND)), 3);
    CU_ASSERT_EQUAL(ub_listop_get(lo, UB_LO_DELETE)->count, 2);
    CU_ASSERT_EQUAL(ub_sloc_line(ub_listop_loc(lo, UB_LO_DELETE)), 0);
    CU_ASSERT_EQUAL(ub_listop_get(lo, UB_LO_PREPEND)->kind, UB_V_EMPTY);
    /* put keeps the location, assign replaces it */
    CU_ASSERT_EQUAL(ub_listop_put(a, lo, UB_LO_APPEND, two), 0);
    CU_ASSERT_EQUAL(ub_listop_get(lo, UB_LO_APPEND)->count, 2);
    CU_ASSERT_EQUAL(ub_strtab_loc(t, ub_listop_loc(lo, UB_LO_APPEND)).col, 5);
    ub_listop *c = ub_listop_copy(a, lo);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(ub_listop_put(a, c, UB_LO_APPEND, one), 0);
    CU_ASSERT_EQUAL(ub_listop_put(a, c, UB_LO_ADD, one), 0);
    CU_ASSERT_EQUAL(ub_listop_get(c, UB_LO_APPEND)->count, 1);
    CU_ASSERT_EQUAL(ub_listop_get(lo, UB_LO_APPEND)->count, 2);
    CU_ASSERT_EQUAL(ub_listop_get(lo, UB_LO_ADD)->kind, UB_V_EMPTY);
    /* every part set: the entries grow to six */
    for (int p = 0; p < UB_LO_NPARTS; p++)
        CU_ASSERT_EQUAL(ub_listop_assign(a, c, p, one,
                                         ub_sloc_make(1, 10u + p, 1)),
                        0);
    for (int p = 0; p < UB_LO_NPARTS; p++)
        CU_ASSERT_EQUAL(ub_sloc_line(ub_listop_loc(c, p)), 10u + p);
    ub_arena_free(a);
    ub_strtab_free(t);
}

/* A layer without a name index finds the same entries by scanning: the
 * first of a name, in lists far over the size the index starts at, built
 * before and after the index went.  Children reserved for are appended
 * without moving the list. */
static void test_unindexed(void)
{
    ub_strtab *t = ub_strtab_new();
    ub_layer *l = ub_layer_new(t, "test.usda");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ub_prim *set = ub_prim_new(l, l->root, ub_intern_cstr(t, "Set"), UB_DEF,
                               nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    CU_ASSERT_EQUAL(ub_prim_reserve_children(l, set, 60), 0);
    ub_prim **list = set->children.v;
    char name[32];
    ub_prim *first[30];
    for (int k = 0; k < 60; k++) {
        if (k == 40)
            ub_layer_unindexed(l);
        snprintf(name, sizeof name, "c%d", k % 30); /* each name twice */
        ub_prim *c = ub_prim_new(l, set, ub_intern_cstr(t, name), UB_DEF,
                                 nosloc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        if (k < 30)
            first[k] = c;
        CU_ASSERT_PTR_NOT_NULL(
            ub_prop_new(l, set, ub_intern_cstr(t, name), UB_ATTR, nosloc));
    }
    CU_ASSERT_PTR_EQUAL(set->children.v, list);
    CU_ASSERT_EQUAL(set->children.n, 60);
    for (int k = 0; k < 30; k++) {
        snprintf(name, sizeof name, "c%d", k);
        const char *n = ub_intern_cstr(t, name);
        CU_ASSERT_PTR_EQUAL(ub_prim_find_child(l, set, n), first[k]);
        CU_ASSERT_PTR_EQUAL(ub_prop_find(l, set, n), set->props.v[k]);
    }
    CU_ASSERT_PTR_NULL(
        ub_prim_find_child(l, set, ub_intern_cstr(t, "c30")));
    ub_layer_free(l);
    ub_strtab_free(t);
}

/* Properties and prims read their out-of-line parts as unauthored until
 * one is set. */
static void test_ext_parts(void)
{
    ub_strtab *t = ub_strtab_new();
    ub_layer *l = ub_layer_new(t, "test.usda");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ub_prim *p = ub_prim_new(l, l->root, ub_intern_cstr(t, "P"), UB_DEF,
                             nosloc);
    ub_prop *a = ub_prop_new(l, p, ub_intern_cstr(t, "a"), UB_ATTR, nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_FALSE(ub_prop_samples(a)->authored);
    CU_ASSERT_EQUAL(ub_prop_samples(a)->n, 0);
    CU_ASSERT_EQUAL(ub_prop_connections(a)->kind, UB_V_EMPTY);
    CU_ASSERT_EQUAL(ub_prop_targets(a)->kind, UB_V_EMPTY);
    CU_ASSERT_PTR_NULL(ub_prop_default_target(a));
    CU_ASSERT_PTR_NULL(a->ext);
    ub_prop_ext *x = ub_prop_ext_get(l->arena, a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_EQUAL(ub_prop_ext_get(l->arena, a), x);
    CU_ASSERT_EQUAL(ub_samples_set(l->arena, &x->samples, 1.0,
                                   ub_value_block()),
                    0);
    CU_ASSERT_EQUAL(ub_prop_samples(a)->n, 1);
    CU_ASSERT_EQUAL(ub_prim_n_variant_sets(p), 0);
    CU_ASSERT_PTR_NULL(ub_prim_variant_sets(p));
    CU_ASSERT_EQUAL(ub_prim_prim_order(p)->kind, UB_V_EMPTY);
    CU_ASSERT_PTR_NULL(ub_prim_variant_set(p));
    ub_variant_set *vs =
        ub_variant_set_get(l, p, ub_intern_cstr(t, "look"), nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(vs);
    ub_prim *v = ub_variant_new(l, p, vs, ub_intern_cstr(t, "red"), nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL(ub_prim_n_variant_sets(p), 1);
    CU_ASSERT_STRING_EQUAL(ub_prim_variant_set(v), "look");
    CU_ASSERT_EQUAL(ub_prim_property_order(p)->kind, UB_V_EMPTY);

    /* a relationship's part only: it reads as having no samples or
     * connections, and becomes whole, keeping its targets, when asked */
    ub_prop *r = ub_prop_new(l, p, ub_intern_cstr(t, "r"), UB_REL, nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    ub_prop_ext *rx = ub_prop_rel_ext_get(l->arena, r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rx);
    rx->targets = ub_value_block();
    rx->default_target = ub_intern_cstr(t, "/P");
    CU_ASSERT_PTR_EQUAL(ub_prop_rel_ext_get(l->arena, r), rx);
    CU_ASSERT_EQUAL(ub_prop_targets(r)->kind, UB_V_BLOCK);
    CU_ASSERT_STRING_EQUAL(ub_prop_default_target(r), "/P");
    CU_ASSERT_FALSE(ub_prop_samples(r)->authored);
    CU_ASSERT_EQUAL(ub_prop_connections(r)->kind, UB_V_EMPTY);
    ub_prop_ext *whole = ub_prop_ext_get(l->arena, r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    whole->samples.authored = true;
    CU_ASSERT(ub_prop_samples(r)->authored);
    CU_ASSERT_EQUAL(ub_prop_targets(r)->kind, UB_V_BLOCK);
    CU_ASSERT_STRING_EQUAL(ub_prop_default_target(r), "/P");
    CU_ASSERT_PTR_EQUAL(ub_prop_rel_ext_get(l->arena, r), whole);
    CU_ASSERT_PTR_EQUAL(ub_prop_ext_get(l->arena, r), whole);

    /* metadata only: an empty list takes no part; a list takes the
     * metadata part, which reads as no targets, type name or samples and
     * is kept as the part grows to the short one, then the whole one */
    ub_prop *m = ub_prop_new(l, p, ub_intern_cstr(t, "m"), UB_ATTR, nosloc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(ub_prop_meta(m)->n, 0);
    ub_fields none = {0};
    CU_ASSERT_EQUAL(ub_prop_set_meta(l->arena, m, &none), 0);
    CU_ASSERT_PTR_NULL(m->ext);
    const char *doc = ub_intern_cstr(t, "doc");
    ub_fields *mf = ub_prop_meta_get(l->arena, m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mf);
    CU_ASSERT_PTR_NOT_NULL(ub_fields_set(l->arena, mf, doc,
                                         ub_value_block(), nosloc));
    CU_ASSERT_PTR_EQUAL(ub_prop_meta_get(l->arena, m), mf);
    CU_ASSERT_EQUAL(ub_prop_meta(m)->n, 1);
    CU_ASSERT_EQUAL(ub_prop_targets(m)->kind, UB_V_EMPTY);
    CU_ASSERT_PTR_NULL(ub_prop_default_target(m));
    CU_ASSERT_PTR_NULL(ub_prop_type_name(t, m));
    CU_ASSERT_FALSE(ub_prop_samples(m)->authored);
    ub_prop_ext *ms = ub_prop_rel_ext_get(l->arena, m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ms);
    ms->default_target = ub_intern_cstr(t, "/P");
    CU_ASSERT_PTR_NOT_NULL(ub_fields_find(ub_prop_meta(m), doc));
    CU_ASSERT_FALSE(ub_prop_samples(m)->authored);
    ub_prop_ext *mw = ub_prop_ext_get(l->arena, m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mw);
    mw->samples.authored = true;
    CU_ASSERT_PTR_NOT_NULL(ub_fields_find(ub_prop_meta(m), doc));
    CU_ASSERT_STRING_EQUAL(ub_prop_default_target(m), "/P");
    CU_ASSERT(ub_prop_samples(m)->authored);
    CU_ASSERT_PTR_EQUAL(ub_prop_meta_get(l->arena, m), &mw->meta);
    /* a list built elsewhere replaces it; an empty one empties it */
    CU_ASSERT_EQUAL(ub_prop_set_meta(l->arena, m, &none), 0);
    CU_ASSERT_EQUAL(ub_prop_meta(m)->n, 0);
    CU_ASSERT_STRING_EQUAL(ub_prop_default_target(m), "/P");
    /* the relationship above took no metadata part of its own */
    CU_ASSERT_EQUAL(ub_prop_meta(r)->n, 0);
    ub_layer_free(l);
    ub_strtab_free(t);
}

/* Stored locations: files told apart through the string table, so a
 * record shared from another layer names its own file; a line or column
 * that does not fit saturates; a full table reads as an unknown file,
 * never as another one; a location without a line keeps its file. */
static void test_stored_locations(void)
{
    ub_strtab *t = ub_strtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ub_layer *la = ub_layer_new(t, "a.usda"), *lb = ub_layer_new(t, "b.usda");
    CU_ASSERT_PTR_NOT_NULL_FATAL(la);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lb);
    ub_sloc sa = ub_layer_sloc(la, (ub_loc){la->path, 3, 7});
    ub_sloc sb = ub_layer_sloc(lb, (ub_loc){lb->path, 12, 1});
    ub_prim *pa = ub_prim_new(la, la->root, ub_intern_cstr(t, "P"), UB_DEF,
                              sa);
    ub_prim *pb = ub_prim_new(lb, lb->root, ub_intern_cstr(t, "P"), UB_DEF,
                              sb);
    ub_prop *x = ub_prop_new(lb, pb, ub_intern_cstr(t, "x"), UB_ATTR, sb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pa);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_EQUAL(ub_prop_append(la, pa, x), 0);
    /* b's property, read through a, is still b's */
    ub_loc l = ub_layer_loc(la, ub_prop_find(la, pa, x->name)->loc);
    CU_ASSERT_PTR_EQUAL(l.file, lb->path);
    CU_ASSERT_EQUAL(l.line, 12);
    CU_ASSERT_EQUAL(l.col, 1);
    l = ub_layer_loc(la, pa->loc);
    CU_ASSERT_PTR_EQUAL(l.file, la->path);
    CU_ASSERT_EQUAL(l.line, 3);
    CU_ASSERT_EQUAL(l.col, 7);
    CU_ASSERT_EQUAL(ub_strtab_file_id(t, la->path),
                    ub_strtab_file_id(t, la->path));
    CU_ASSERT_NOT_EQUAL(ub_strtab_file_id(t, la->path),
                        ub_strtab_file_id(t, lb->path));
    /* nothing is no file, and all zero */
    CU_ASSERT_EQUAL(ub_strtab_sloc(t, (ub_loc){NULL, 0, 0}).bits, 0);
    CU_ASSERT_PTR_NULL(ub_strtab_loc(t, (ub_sloc){0}).file);
    /* saturating */
    l = ub_strtab_loc(t, ub_strtab_sloc(t, (ub_loc){la->path, 5, 3000000}));
    CU_ASSERT_PTR_EQUAL(l.file, la->path);
    CU_ASSERT_EQUAL(l.line, 5);
    CU_ASSERT_EQUAL(l.col, UB_SLOC_MAX_COL);
    l = ub_strtab_loc(t, ub_strtab_sloc(t, (ub_loc){la->path, UINT32_MAX,
                                                    UB_SLOC_MAX_COL}));
    CU_ASSERT_EQUAL(l.line, UB_SLOC_MAX_LINE);
    CU_ASSERT_EQUAL(l.col, UB_SLOC_MAX_COL);
    CU_ASSERT_EQUAL(ub_sloc_line(ub_strtab_sloc(t, (ub_loc){la->path, 9, 2})),
                    9);
    /* fill the table: the files of a and b keep theirs, a new one is
     * unknown, with its line and column */
    static char names[UB_SLOC_FILES];
    uint32_t last = 0;
    for (uint32_t i = 0; i < UB_SLOC_FILES; i++)
        last = ub_strtab_file_id(t, &names[i]);
    CU_ASSERT_EQUAL(last, UB_SLOC_FILE_UNKNOWN); /* a and b took two */
    CU_ASSERT_EQUAL(ub_strtab_file_id(t, &names[0]), 3);
    /* the last narrow file and the first wide one: each keeps its file,
     * line and column, saturating as its layout must */
    const char *narrow = &names[UB_SLOC_WIDE_FIRST - 4];
    const char *wide = &names[UB_SLOC_WIDE_FIRST - 3];
    CU_ASSERT_EQUAL(ub_strtab_file_id(t, narrow), UB_SLOC_WIDE_FIRST - 1);
    CU_ASSERT_EQUAL(ub_strtab_file_id(t, wide), UB_SLOC_WIDE_FIRST);
    ub_sloc sn = ub_strtab_sloc(t, (ub_loc){narrow, 5000000, 500000});
    CU_ASSERT_FALSE(ub_sloc_wide(sn));
    l = ub_strtab_loc(t, sn);
    CU_ASSERT_PTR_EQUAL(l.file, narrow);
    CU_ASSERT_EQUAL(l.line, 5000000);
    CU_ASSERT_EQUAL(l.col, 500000);
    ub_sloc sw = ub_strtab_sloc(t, (ub_loc){wide, 70000, 12});
    CU_ASSERT(ub_sloc_wide(sw));
    l = ub_strtab_loc(t, sw);
    CU_ASSERT_PTR_EQUAL(l.file, wide);
    CU_ASSERT_EQUAL(l.line, 70000);
    CU_ASSERT_EQUAL(l.col, 12);
    CU_ASSERT_EQUAL(ub_sloc_line(sw), 70000);
    l = ub_strtab_loc(t, ub_strtab_sloc(t, (ub_loc){wide, UINT32_MAX,
                                                    40000}));
    CU_ASSERT_PTR_EQUAL(l.file, wide);
    CU_ASSERT_EQUAL(l.line, UB_SLOC_WIDE_MAX_LINE);
    CU_ASSERT_EQUAL(l.col, UB_SLOC_WIDE_MAX_COL);
    /* the last file the table holds */
    const char *top = &names[UB_SLOC_FILES - 3];
    CU_ASSERT_EQUAL(ub_strtab_file_id(t, top), UB_SLOC_FILES);
    l = ub_strtab_loc(t, ub_strtab_sloc(t, (ub_loc){top, 3, 4}));
    CU_ASSERT_PTR_EQUAL(l.file, top);
    CU_ASSERT_EQUAL(l.line, 3);
    CU_ASSERT_EQUAL(l.col, 4);
    l = ub_layer_loc(la, ub_layer_sloc(la, (ub_loc){"late.usda", 4, 2}));
    CU_ASSERT_STRING_EQUAL(l.file, UB_SLOC_UNKNOWN_FILE);
    CU_ASSERT_EQUAL(l.line, 4);
    CU_ASSERT_EQUAL(l.col, 2);
    l = ub_layer_loc(la, pa->loc);
    CU_ASSERT_PTR_EQUAL(l.file, la->path);
    l = ub_layer_loc(lb, ub_layer_sloc(lb, (ub_loc){lb->path, 8, 8}));
    CU_ASSERT_PTR_EQUAL(l.file, lb->path);
    /* a location without a line (a crate spec's) needs no table entry */
    const char *spec = "c.usdc:</P.x>";
    l = ub_layer_loc(la, ub_layer_sloc(la, (ub_loc){spec, 0, 0}));
    CU_ASSERT_PTR_EQUAL(l.file, spec);
    CU_ASSERT_EQUAL(l.line, 0);
    CU_ASSERT_EQUAL(l.col, 0);
    CU_ASSERT_EQUAL(ub_sloc_line(ub_layer_sloc(la, (ub_loc){spec, 0, 0})), 0);
    ub_layer_free(la);
    ub_layer_free(lb);
    ub_strtab_free(t);
}

/* The paths of a small crate path tree, as its reader hands them over:
 * / (0), /A (1), /A.x (2), /A{v=y} (3), /A{v=y}B (4), /A{v=y}B.z (5). */
static ub_spec_paths spec_paths(ub_strtab *t)
{
    static const char *const names[] = {"A", "x", "{v=y}", "B", "z"};
    static const uint32_t parent[] = {0, 0, 1, 1, 3, 4};
    static const uint32_t elem[] = {UINT32_MAX, 0, 1, 2, 3, 4};
    static const uint8_t kind[] = {UB_PK_ROOT, UB_PK_CHILD, UB_PK_PROP,
                                   UB_PK_VARIANT, UB_PK_CHILD, UB_PK_PROP};
    ub_spec_paths p = {malloc(sizeof parent), malloc(sizeof elem),
                       malloc(sizeof kind), malloc(5 * sizeof(char *)), 6, 5};
    CU_ASSERT_FATAL(p.parent && p.elem && p.kind && p.tok);
    memcpy(p.parent, parent, sizeof parent);
    memcpy(p.elem, elem, sizeof elem);
    memcpy(p.kind, kind, sizeof kind);
    for (int i = 0; i < 5; i++)
        p.tok[i] = ub_intern_cstr(t, names[i]);
    return p;
}

static void free_paths(ub_spec_paths *p)
{
    free(p->parent);
    free(p->elem);
    free(p->kind);
    free(p->tok);
}

static void test_spec_text(void)
{
    ub_strtab *t = ub_strtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ub_spec_paths p = spec_paths(t);
    char *b = NULL;
    size_t cap = 0, n = 0;
    static const char *const want[] = {"</>", "</A>", "</A.x>", "</A{v=y}>",
                                       "</A{v=y}B>", "</A{v=y}B.z>"};
    for (uint64_t i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(ub_specloc_text(&p, i, "<", ">", 10, 100, &b, &cap,
                                        &n), 0);
        CU_ASSERT_STRING_EQUAL(b, want[i]);
        CU_ASSERT_EQUAL(n, strlen(want[i]));
    }
    /* 4 elements below the root; 13 bytes counting a separator each
     * and the root's '/' (the limits the reader checks) */
    CU_ASSERT_EQUAL(ub_specloc_text(&p, 5, "", "", 3, 100, &b, &cap, &n),
                    UB_SPECLOC_DEEP);
    CU_ASSERT_EQUAL(ub_specloc_text(&p, 5, "", "", 4, 13, &b, &cap, &n), 0);
    CU_ASSERT_STRING_EQUAL(b, "/A{v=y}B.z");
    CU_ASSERT_EQUAL(ub_specloc_text(&p, 5, "", "", 4, 12, &b, &cap, &n),
                    UB_SPECLOC_LONG);
    /* a path no item gave is the empty path; a cycle is too deep */
    p.kind[2] = 0;
    CU_ASSERT_EQUAL(ub_specloc_text(&p, 2, "<", ">", 10, 100, &b, &cap, &n),
                    0);
    CU_ASSERT_STRING_EQUAL(b, "<>");
    p.parent[1] = 4;
    CU_ASSERT_EQUAL(ub_specloc_text(&p, 5, "", "", 1000, 1 << 20, &b, &cap,
                                    &n),
                    UB_SPECLOC_DEEP);
    free(b);
    free_paths(&p);
    ub_strtab_free(t);
}

/* A crate layer's specs are named through its path tree, their texts
 * made when read and kept after the tree is dropped. */
static void test_spec_locations(void)
{
    ub_strtab *t = ub_strtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ub_layer *l = ub_layer_new(t, "c.usdc");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    const char *file = ub_intern_cstr(t, "c.usdc");
    uint32_t tree = ub_strtab_add_spec_tree(t, file, spec_paths(t));
    CU_ASSERT_NOT_EQUAL_FATAL(tree, 0);
    l->spec_tree = tree;
    ub_sloc s = ub_sloc_spec(tree, 5);
    CU_ASSERT(ub_sloc_is_spec(s));
    CU_ASSERT(!ub_sloc_is_spec(ub_layer_sloc(l, (ub_loc){file, 0, 0})));
    CU_ASSERT(!ub_sloc_is_spec(ub_layer_sloc(l, (ub_loc){file, 2, 3})));
    ub_loc at = ub_layer_loc(l, s);
    CU_ASSERT_STRING_EQUAL(at.file, "c.usdc:</A{v=y}B.z>");
    CU_ASSERT_EQUAL(at.line, 0);
    CU_ASSERT_EQUAL(at.col, 0);
    /* made once */
    CU_ASSERT_PTR_EQUAL(ub_layer_loc(l, s).file, at.file);
    CU_ASSERT_STRING_EQUAL(ub_layer_loc(l, ub_sloc_spec(tree, 1)).file,
                           "c.usdc:</A>");
    /* as a location again (a diagnostic's), it is that text */
    CU_ASSERT_PTR_EQUAL(ub_layer_loc(l, ub_layer_sloc(l, at)).file, at.file);
    /* a second tree has its own index */
    uint32_t other = ub_strtab_add_spec_tree(t, file, spec_paths(t));
    CU_ASSERT(other != 0 && other != tree);
    ub_strtab_drop_spec_tree(t, other);
    ub_layer_free(l); /* drops the tree */
    CU_ASSERT_STRING_EQUAL(at.file, "c.usdc:</A{v=y}B.z>");
    CU_ASSERT_STRING_EQUAL(ub_strtab_loc(t, s).file, UB_SLOC_UNKNOWN_FILE);
    CU_ASSERT_STRING_EQUAL(ub_strtab_loc(t, ub_sloc_spec(tree, 2)).file,
                           UB_SLOC_UNKNOWN_FILE);
    ub_strtab_free(t);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("layer", NULL, NULL);
    CU_add_test(s, "release reuses memory", test_release_reuses_memory);
    CU_add_test(s, "release across chunks", test_release_across_chunks);
    CU_add_test(s, "chunks from a huge page up", test_big_chunks);
    CU_add_test(s, "release cycles stay small",
                test_release_cycles_stay_small);
    CU_add_test(s, "diagnostics: order, out of memory",
                test_diags_order_and_oom);
    CU_add_test(s, "diagnostics found by id and place", test_diags_has);
    CU_add_test(s, "footprint", test_footprint);
    CU_add_test(s, "alignment", test_alignment);
    CU_add_test(s, "record alignment", test_record_alignment);
    CU_add_test(s, "bytes unaligned", test_bytes_unaligned);
    CU_add_test(s, "drop body forgets lookups", test_drop_body_forgets_lookups);
    CU_add_test(s, "shared properties", test_shared_props);
    CU_add_test(s, "list op reorder", test_reorder);
    CU_add_test(s, "list op parts", test_listop_parts);
    CU_add_test(s, "out-of-line prop and prim parts", test_ext_parts);
    CU_add_test(s, "lookups without a name index", test_unindexed);
    CU_add_test(s, "stored locations", test_stored_locations);
    CU_add_test(s, "crate spec path text", test_spec_text);
    CU_add_test(s, "crate spec locations", test_spec_locations);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
