/* CUnit tests for ub_idtab: ids found by hash and the owner's equality,
 * through growth, keys whose hashes collide kept apart, and lookups that
 * leave the table as it is. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>

#include "ub_arena.h"
#include "ub_idtab.h"
#include "mem_probe.h"
#include "ub_test.h"

/* The owner's array: id -> key. */
typedef struct keys {
    uint64_t *v;
    uint32_t n;
} keys;

static bool key_eq(const void *ctx, uint32_t id, const void *key)
{
    return ((const keys *)ctx)->v[id] == *(const uint64_t *)key;
}

/* The id of key, entered as the next id when it is new (*fresh). */
static uint32_t lookup(ub_idtab *t, keys *k, uint64_t h, uint64_t key,
                       bool *fresh)
{
    ub_idslot *s = ub_idtab_find(t, h, key_eq, k, &key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    *fresh = !ub_idslot_used(s);
    if (!*fresh)
        return ub_idslot_id(s);
    k->v[k->n] = key;
    ub_idtab_put(t, s, h, k->n);
    return k->n++;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

static void test_ids_through_growth(void)
{
    enum { N = 100000 };
    keys k = {calloc(N, sizeof *k.v), 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(k.v);
    ub_idtab t = {0};
    bool fresh, all_fresh = true, all_found = true;
    for (uint64_t i = 0; i < N; i++)
        all_fresh &= lookup(&t, &k, mix(i), i * 7, &fresh) == i && fresh;
    CU_ASSERT(all_fresh);
    CU_ASSERT_EQUAL(t.n, N);
    /* at most half full, a power of two */
    CU_ASSERT(t.cap >= 2 * N);
    CU_ASSERT_EQUAL(t.cap & (t.cap - 1), 0);
    for (uint64_t i = 0; i < N; i++)
        all_found &= lookup(&t, &k, mix(i), i * 7, &fresh) == i && !fresh;
    CU_ASSERT(all_found);
    CU_ASSERT_EQUAL(k.n, N);
    ub_idtab_free(&t);
    CU_ASSERT_PTR_NULL(t.s);
    CU_ASSERT_EQUAL(t.cap, 0);
    CU_ASSERT_EQUAL(t.n, 0);
    free(k.v);
}

static void test_colliding_hashes(void)
{
    /* one hash for every key: equality alone tells them apart */
    keys k = {calloc(600, sizeof *k.v), 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(k.v);
    ub_idtab t = {0};
    bool fresh, ok = true;
    for (uint64_t i = 0; i < 600; i++)
        ok &= lookup(&t, &k, 42, 1000 + i, &fresh) == i && fresh;
    for (uint64_t i = 600; i-- > 0;)
        ok &= lookup(&t, &k, 42, 1000 + i, &fresh) == i && !fresh;
    CU_ASSERT(ok);
    /* same low 32 bits, other high bits: the same slot chain */
    CU_ASSERT_EQUAL(lookup(&t, &k, 42 | (7ull << 40), 1005, &fresh), 5);
    CU_ASSERT_FALSE(fresh);
    ub_idtab_free(&t);
    free(k.v);
}

static void test_empty_and_grow(void)
{
    ub_idtab t = {0};
    CU_ASSERT(ub_idtab_grow(&t));
    CU_ASSERT_EQUAL(t.cap, 256);
    CU_ASSERT_EQUAL(t.n, 0);
    keys k = {calloc(4, sizeof *k.v), 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(k.v);
    uint64_t key = 5;
    ub_idslot *s = ub_idtab_find(&t, 9, key_eq, &k, &key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_FALSE(ub_idslot_used(s));
    bool fresh;
    CU_ASSERT_EQUAL(lookup(&t, &k, 9, 5, &fresh), 0);
    /* growing keeps what is in */
    CU_ASSERT(ub_idtab_grow(&t));
    CU_ASSERT_EQUAL(t.cap, 512);
    CU_ASSERT_EQUAL(lookup(&t, &k, 9, 5, &fresh), 0);
    CU_ASSERT_FALSE(fresh);
    ub_idtab_free(&t);
    ub_idtab_free(&t); /* freeing an empty table is fine */
    free(k.v);
}

/* Whether every key entered so far is found (by ub_idtab_get), and the
 * table counts them all. */
static bool all_found(const ub_idtab *t, const keys *k,
                      uint64_t (*hash)(uint32_t))
{
    bool ok = t->n == k->n;
    for (uint32_t i = 0; i < k->n && ok; i++)
        ok = ub_idtab_get(t, hash(i), key_eq, k, &k->v[i]) == i;
    return ok;
}

/* Three in four keys' hashes put them in the last 16 slots whatever the
 * table's size, so that runs wrap past its end as it grows; the rest
 * are spread. */
static uint64_t end_hash(uint32_t i)
{
    uint64_t x = mix(i + 1);
    return i % 4 ? UINT64_MAX - (x & 15) : x;
}

/* The key of id i in the wrapping tests. */
static uint64_t wrap_key(uint32_t i) { return (uint64_t)i * 3 + 1; }

static void test_growth_wrapped_runs(void)
{
    /* a table grows in place (ub_idtab_grow): entries whose runs wrap
     * past the old end, and those of the runs they block, are found
     * after every growth, through the big tables too */
    enum { N = 20000 };
    keys k = {calloc(N, sizeof *k.v), 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(k.v);
    ub_idtab t = {0};
    bool fresh, ok = true;
    int grown = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t cap = t.cap;
        ok &= lookup(&t, &k, end_hash(i), wrap_key(i), &fresh) == i && fresh;
        if (t.cap != cap) {
            grown++;
            ok &= all_found(&t, &k, end_hash);
        }
    }
    CU_ASSERT(ok);
    CU_ASSERT(all_found(&t, &k, end_hash));
    CU_ASSERT(grown >= 7); /* 256 slots to 65,536 */
    CU_ASSERT(t.cap * sizeof *t.s > UB_SCRATCH_PAGES);
    /* a key not entered, whose run wraps, is not found */
    uint64_t key = 0;
    CU_ASSERT_EQUAL(ub_idtab_get(&t, UINT64_MAX, key_eq, &k, &key),
                    UINT32_MAX);
    ub_idtab_free(&t);
    free(k.v);
}

static void test_get(void)
{
    ub_idtab t = {0};
    keys k = {calloc(300, sizeof *k.v), 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(k.v);
    uint64_t key = 3;
    CU_ASSERT_EQUAL(ub_idtab_get(&t, 3, key_eq, &k, &key), UINT32_MAX);
    CU_ASSERT_EQUAL(t.cap, 0); /* looking up does not allocate */
    bool fresh, ok = true;
    for (uint64_t i = 0; i < 300; i++)
        lookup(&t, &k, mix(i), i, &fresh);
    size_t cap = t.cap;
    for (uint64_t i = 0; i < 300; i++)
        ok &= ub_idtab_get(&t, mix(i), key_eq, &k, &i) == i;
    key = 300;
    ok &= ub_idtab_get(&t, mix(key), key_eq, &k, &key) == UINT32_MAX;
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(t.cap, cap);
    ub_idtab_free(&t);
    free(k.v);
}

/* A big table is written all over as it fills: its pages are present
 * when it is made (not faulted in one by one), and zero. */
static void test_table_present(void)
{
    if (UB_ASAN)
        return; /* (calloc there, for the sanitizer to see) */
    const size_t sizes[] = {(size_t)128 << 10, (size_t)4 << 20};
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k] / sizeof(uint64_t);
        uint64_t *t = ub_table_alloc(n, sizeof *t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT(ub_test_resident(t, sizes[k]));
        bool zero = true;
        for (size_t i = 0; i < n; i++)
            zero = zero && t[i] == 0;
        CU_ASSERT(zero);
        ub_table_free(t, n, sizeof *t);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("idtab", NULL, NULL);
    CU_add_test(s, "ids through growth", test_ids_through_growth);
    CU_add_test(s, "colliding hashes", test_colliding_hashes);
    CU_add_test(s, "empty table, growth", test_empty_and_grow);
    CU_add_test(s, "growth with runs that wrap", test_growth_wrapped_runs);
    CU_add_test(s, "lookup alone", test_get);
    CU_add_test(s, "a big table is present when made", test_table_present);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
