/* What every CUnit test program here shares: running the registered suites
 * and writing small layers into the program's scratch directory. */
#ifndef UB_TEST_H
#define UB_TEST_H

#include <CUnit/Basic.h>
#include <stdio.h>

/* Run every registered suite with CUnit's basic runner, free the registry
 * and return the number of failures: assertions, tests, and suites whose
 * setup failed (those would otherwise pass silently). */
static inline unsigned ub_test_run_all(void)
{
    CU_basic_set_mode(CU_BRM_NORMAL);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() +
                      CU_get_number_of_tests_failed() +
                      CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failed;
}

/* Write text to dir/name; a test that cannot write its input stops. */
static inline void ub_test_put(const char *dir, const char *name,
                               const char *text)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
}

#endif
