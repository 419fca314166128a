/* CUnit tests for ub_names: slots on repeats, membership on both sides of
 * the size from which a set is hashed and through its growth, and slots
 * that stay put while the caller permutes v. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "ub_intern.h"
#include "ub_names.h"
#include "ub_test.h"

/* n distinct interned names "<prefix><i>"; NULL when out of memory. */
static const char **make_names(ub_strtab *t, const char *prefix, uint32_t n)
{
    const char **v = malloc((n ? n : 1) * sizeof *v);
    for (uint32_t i = 0; v && i < n; i++) {
        char s[32];
        snprintf(s, sizeof s, "%s%u", prefix, i);
        v[i] = ub_intern_cstr(t, s);
        if (!v[i]) {
            free(v);
            return NULL;
        }
    }
    return v;
}

/* Every one of the n names in, at the slot it was added in (name i at
 * slot i), and none of the m others. */
static bool holds_exactly(const ub_names *nm, const char **in, uint32_t n,
                          const char **out, uint32_t m)
{
    bool ok = nm->n == n;
    for (uint32_t i = 0; i < n; i++)
        ok = ok && ub_names_has(nm, in[i]) && ub_names_slot(nm, in[i]) == i;
    for (uint32_t i = 0; i < m; i++)
        ok = ok && !ub_names_has(nm, out[i]) &&
             ub_names_slot(nm, out[i]) == -1;
    return ok;
}

/* v[0..n) holds exactly the n names, in any order. */
static bool v_is_a_permutation(const ub_names *nm, const char **in,
                               uint32_t n)
{
    char *seen = calloc(n ? n : 1, 1);
    bool ok = seen && nm->n == n;
    for (uint32_t i = 0; ok && i < n; i++) {
        int64_t s = ub_names_slot(nm, nm->v[i]);
        ok = s >= 0 && s < n && in[s] == nm->v[i] && !seen[s];
        if (ok)
            seen[s] = 1;
    }
    free(seen);
    return ok;
}

static void test_empty(void)
{
    ub_strtab *t = ub_strtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const char *a = ub_intern_cstr(t, "a");
    ub_names nm = {0};
    CU_ASSERT_FALSE(ub_names_has(&nm, a));
    CU_ASSERT_EQUAL(ub_names_slot(&nm, a), -1);
    CU_ASSERT_EQUAL(nm.n, 0);
    uint32_t n = 1;
    CU_ASSERT_PTR_NULL(ub_names_take(&nm, &n));
    CU_ASSERT_EQUAL(n, 0);
    ub_names_free(&nm);
    ub_names_free(&nm); /* freeing leaves it empty, and freeable */
    CU_ASSERT_PTR_NULL(nm.v);
    ub_strtab_free(t);
}

static void test_repeat_gives_first_slot(void)
{
    ub_strtab *t = ub_strtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const char *a = ub_intern_cstr(t, "a"), *b = ub_intern_cstr(t, "b"),
               *c = ub_intern_cstr(t, "c");
    ub_names nm = {0};
    CU_ASSERT_EQUAL(ub_names_add(&nm, a), 0);
    CU_ASSERT_EQUAL(ub_names_add(&nm, b), 1);
    CU_ASSERT_EQUAL(ub_names_add(&nm, a), 0);
    CU_ASSERT_EQUAL(ub_names_add(&nm, c), 2);
    CU_ASSERT_EQUAL(ub_names_add(&nm, b), 1);
    /* equal strings are one name */
    CU_ASSERT_EQUAL(ub_names_add(&nm, ub_intern(t, "cx", 1)), 2);
    CU_ASSERT_EQUAL(nm.n, 3);
    CU_ASSERT(nm.v[0] == a && nm.v[1] == b && nm.v[2] == c);
    ub_names_free(&nm);
    ub_strtab_free(t);
}

static void test_across_hash_threshold(void)
{
    /* after every add, from 1 name to well past the first table */
    enum { N = 3 * UB_NAMES_HASH_FROM + 5 };
    ub_strtab *t = ub_strtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const char **in = make_names(t, "in", N), **out = make_names(t, "out", N);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_names nm = {0};
    for (uint32_t i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(ub_names_add(&nm, in[i]), i);
        CU_ASSERT(holds_exactly(&nm, in, i + 1, out, N));
        /* the repeats do not add */
        CU_ASSERT_EQUAL(ub_names_add(&nm, in[i / 2]), i / 2);
        CU_ASSERT_EQUAL(nm.n, i + 1);
        /* hashed from UB_NAMES_HASH_FROM names on, scanned below */
        CU_ASSERT_EQUAL(nm.tab.cap != 0, i + 1 >= UB_NAMES_HASH_FROM);
    }
    ub_names_free(&nm);
    free(in);
    free(out);
    ub_strtab_free(t);
}

static void test_large(void)
{
    /* a prim with 100k children: the table grows many times */
    enum { N = 100000 };
    ub_strtab *t = ub_strtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const char **in = make_names(t, "in", N), **out = make_names(t, "out", N);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_names nm = {0};
    bool ok = true;
    for (uint32_t i = 0; i < N; i++)
        ok = ok && ub_names_add(&nm, in[i]) == i;
    CU_ASSERT(ok);
    for (uint32_t i = 0; i < N; i += 7)
        ok = ok && ub_names_add(&nm, in[i]) == i;
    CU_ASSERT(ok);
    CU_ASSERT(holds_exactly(&nm, in, N, out, N));
    /* at most half full */
    CU_ASSERT(nm.tab.cap >= 2 * N);
    ub_names_free(&nm);
    free(in);
    free(out);
    ub_strtab_free(t);
}

/* Reverses v, then rotates it by one: no name stays where it was. */
static void permute(ub_names *nm)
{
    for (uint32_t i = 0, j = nm->n ? nm->n - 1 : 0; i < j; i++, j--) {
        const char *s = nm->v[i];
        nm->v[i] = nm->v[j];
        nm->v[j] = s;
    }
    if (nm->n > 1) {
        const char *first = nm->v[0];
        for (uint32_t i = 1; i < nm->n; i++)
            nm->v[i - 1] = nm->v[i];
        nm->v[nm->n - 1] = first;
    }
}

static void test_slots_survive_permuting_v(void)
{
    /* permuted below the threshold, across it and in a grown table, with
     * names added between the permutations */
    enum { N = 5000 };
    const uint32_t steps[] = {3, 9, 15, 16, 17, 40, 64, 1000, N};
    ub_strtab *t = ub_strtab_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const char **in = make_names(t, "in", N), **out = make_names(t, "out", N);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    ub_names nm = {0};
    uint32_t n = 0;
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
        for (; n < steps[k]; n++)
            CU_ASSERT_EQUAL(ub_names_add(&nm, in[n]), n);
        const char *first = nm.v[0];
        permute(&nm);
        CU_ASSERT(nm.v[0] != first);
        CU_ASSERT(holds_exactly(&nm, in, n, out, N));
        CU_ASSERT(v_is_a_permutation(&nm, in, n));
        CU_ASSERT_EQUAL(ub_names_add(&nm, in[n / 3]), n / 3);
    }
    /* the names handed over are the permuted v */
    const char *last = nm.v[n - 1];
    uint32_t got = 0;
    const char **v = ub_names_take(&nm, &got);
    CU_ASSERT_EQUAL(got, N);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT(v[N - 1] == last);
    CU_ASSERT_EQUAL(nm.n, 0);
    CU_ASSERT_FALSE(ub_names_has(&nm, in[0]));
    free(v);
    free(in);
    free(out);
    ub_strtab_free(t);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("names", NULL, NULL);
    CU_add_test(s, "empty set", test_empty);
    CU_add_test(s, "a repeat gives the first slot",
                test_repeat_gives_first_slot);
    CU_add_test(s, "membership across the hash threshold",
                test_across_hash_threshold);
    CU_add_test(s, "100,000 names", test_large);
    CU_add_test(s, "slots survive permuting v",
                test_slots_survive_permuting_v);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
