/* CUnit tests for ub_usdz: the stored entries of a usdz package, found by
 * walking local headers; damaged packages are errors, never reads out of
 * bounds. */
#include <CUnit/Basic.h>
#include <string.h>

#include "ub_usdz.h"
#include "zip_fixture.h"
#include "ub_test.h"

static void test_entries(void)
{
    static zf_buf b;
    b.len = 0;
    zf_entry(&b, "root.usda", "#usda 1.0\n");
    zf_entry(&b, "tex/a.png", "PNG");
    zf_end(&b);
    CU_ASSERT(ub_usdz_sniff(b.data, b.len));
    CU_ASSERT(!ub_usdz_sniff("#usda 1.0\n", 10));
    size_t pos = 0;
    ub_usdz_entry e;
    const char *why = NULL;
    CU_ASSERT_EQUAL_FATAL(ub_usdz_next(b.data, b.len, &pos, &e, &why), 1);
    CU_ASSERT_EQUAL(e.name_len, 9);
    CU_ASSERT_NSTRING_EQUAL(e.name, "root.usda", 9);
    CU_ASSERT_EQUAL(e.len, 10);
    CU_ASSERT_NSTRING_EQUAL(e.data, "#usda 1.0\n", 10);
    /* stored data is a slice of the package, 64-byte aligned */
    CU_ASSERT_EQUAL((size_t)(e.data - b.data) % 64, 0);
    CU_ASSERT_EQUAL_FATAL(ub_usdz_next(b.data, b.len, &pos, &e, &why), 1);
    CU_ASSERT_NSTRING_EQUAL(e.name, "tex/a.png", 9);
    /* the central directory ends the entries */
    CU_ASSERT_EQUAL(ub_usdz_next(b.data, b.len, &pos, &e, &why), 0);
    /* first entry, an entry by name, a missing one */
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, NULL, 0, &e, &why), 1);
    CU_ASSERT_NSTRING_EQUAL(e.name, "root.usda", 9);
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, "tex/a.png", 9, &e, &why),
                    1);
    CU_ASSERT_EQUAL(e.len, 3);
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, "tex/a", 5, &e, &why), 0);
}

/* Every truncation of a good package reads what is whole and stops with
 * an error or at the end, inside the buffer (ASan checks the reads). */
static void test_truncated(void)
{
    static zf_buf b;
    b.len = 0;
    zf_entry(&b, "root.usda", "#usda 1.0\n");
    zf_entry(&b, "b.usda", "#usda 1.0\n");
    for (size_t n = 0; n < b.len; n++) {
        char *copy = malloc(n ? n : 1);
        memcpy(copy, b.data, n);
        size_t pos = 0;
        ub_usdz_entry e;
        const char *why = NULL;
        int r, k = 0;
        while ((r = ub_usdz_next(copy, n, &pos, &e, &why)) == 1) {
            CU_ASSERT(e.data + e.len <= copy + n);
            k++;
        }
        CU_ASSERT(k <= 1);
        if (r < 0)
            CU_ASSERT_PTR_NOT_NULL(why);
        free(copy);
    }
}

static void test_damaged(void)
{
    static zf_buf b;
    ub_usdz_entry e;
    const char *why = NULL;
    /* deflated: usdz entries are stored */
    b.len = 0;
    zf_entry_ex(&b, "root.usda", "xx", 2, 8, 0);
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, NULL, 0, &e, &why), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "compressed"));
    /* encrypted */
    b.len = 0;
    zf_entry_ex(&b, "root.usda", "xx", 2, 0, 1);
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, NULL, 0, &e, &why), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "encrypted"));
    /* sizes in a data descriptor */
    b.len = 0;
    zf_entry_ex(&b, "root.usda", "xx", 2, 0, 8);
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, NULL, 0, &e, &why), -1);
    /* a size past the end of the file */
    b.len = 0;
    zf_entry(&b, "root.usda", "#usda 1.0\n");
    b.data[18] = (char)0xff; /* compressed size, low byte */
    b.data[22] = (char)0xff;
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, NULL, 0, &e, &why), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "past the end"));
    /* sizes that disagree */
    b.data[22] = 10;
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, NULL, 0, &e, &why), -1);
    /* an entry before the damage is still found */
    b.len = 0;
    zf_entry(&b, "root.usda", "#usda 1.0\n");
    zf_entry_ex(&b, "bad", "xx", 2, 8, 0);
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, "root.usda", 9, &e, &why), 1);
    CU_ASSERT_EQUAL(ub_usdz_find(b.data, b.len, "other", 5, &e, &why), -1);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("usdz", NULL, NULL);
    CU_add_test(s, "entries", test_entries);
    CU_add_test(s, "truncated", test_truncated);
    CU_add_test(s, "damaged", test_damaged);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
