/* CUnit tests for ub_loader: resolution, search paths, one layer per
 * file, content sniffing, located errors. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ub_loader.h"

static char dir[256];

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

static const char *path(const char *rel)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, rel);
    return p[k];
}

static int setup(void)
{
    snprintf(dir, sizeof dir, "%s/ub_test_loader.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    char p[512];
    snprintf(p, sizeof p, "%s/lib", dir);
    mkdir(p, 0777);
    snprintf(p, sizeof p, "%s/sub", dir);
    mkdir(p, 0777);
    return 0;
}

static int teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}

static void test_normalize(void)
{
    char a[] = "a/./b//c/../d.usda", b[] = "/x/../../y", c[] = "../a/../../b",
         d[] = "./", e[] = "/";
    ub_path_normalize(a);
    ub_path_normalize(b);
    ub_path_normalize(c);
    ub_path_normalize(d);
    ub_path_normalize(e);
    CU_ASSERT_STRING_EQUAL(a, "a/b/d.usda");
    CU_ASSERT_STRING_EQUAL(b, "/y");
    CU_ASSERT_STRING_EQUAL(c, "../../b");
    CU_ASSERT_STRING_EQUAL(d, ".");
    CU_ASSERT_STRING_EQUAL(e, "/");
}

static void test_resolve_and_search(void)
{
    put("root.usda", "#usda 1.0\n");
    put("sub/near.usda", "#usda 1.0\n");
    put("lib/far.usda", "#usda 1.0\n");
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(t, d);
    ub_layer *root = ub_loader_open(ld, path("root.usda"), NULL,
                                    (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    /* relative to the naming layer */
    CU_ASSERT_STRING_EQUAL(ub_loader_resolve(ld, "./sub/near.usda", root),
                           path("sub/near.usda"));
    CU_ASSERT_STRING_EQUAL(ub_loader_resolve(ld, "sub/x/../near.usda", root),
                           path("sub/near.usda"));
    /* search paths only after a miss, and never for ./ or ../ paths */
    CU_ASSERT_PTR_NULL(ub_loader_resolve(ld, "far.usda", root));
    CU_ASSERT_EQUAL(ub_loader_add_search_path(ld, path("lib")), 0);
    CU_ASSERT_STRING_EQUAL(ub_loader_resolve(ld, "far.usda", root),
                           path("lib/far.usda"));
    CU_ASSERT_PTR_NULL(ub_loader_resolve(ld, "./far.usda", root));
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}

static void test_read_once(void)
{
    put("root.usda", "#usda 1.0\n");
    put("a.usda", "#usda 1.0\n");
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(t, d);
    ub_layer *root = ub_loader_open(ld, path("root.usda"), NULL,
                                    (ub_loc){0});
    ub_layer *a1 = ub_loader_open(ld, "./a.usda", root, (ub_loc){0});
    ub_layer *a2 = ub_loader_open(ld, path("a.usda"), root, (ub_loc){0});
    ub_layer *a3 = ub_loader_open(ld, "sub/../a.usda", root, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(a1);
    CU_ASSERT_PTR_EQUAL(a1, a2);
    CU_ASSERT_PTR_EQUAL(a1, a3);
    CU_ASSERT_EQUAL(ub_loader_count(ld), 2);
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}

static void test_errors(void)
{
    put("root.usda", "#usda 1.0\n(\n    subLayers = [@gone.usda@]\n)\n");
    put("crate.usd", "PXR-USDC\x01\x02\x03");
    put("text.usd", "#usda 1.0\ndef \"T\"\n{\n}\n");
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(t, d);
    ub_layer *root = ub_loader_open(ld, path("root.usda"), NULL,
                                    (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_EQUAL_FATAL(root->n_sublayers, 1);
    /* missing: located where it is named, the line quoted */
    CU_ASSERT_PTR_NULL(ub_loader_open(ld, root->sublayers[0].asset, root,
                                      root->sublayers[0].loc));
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(d), 1);
    const ub_diag *m = ub_diags_at(d, 0);
    CU_ASSERT_EQUAL(m->severity, UB_ERROR);
    CU_ASSERT_EQUAL(m->loc.line, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(m->message, "gone.usda"));
    CU_ASSERT(m->line_text && strstr(m->line_text, "@gone.usda@"));
    /* crate by content: this one is truncated, and the crate reader
     * says so (tests/crate.test reads whole ones) */
    CU_ASSERT_PTR_NULL(ub_loader_open(ld, "crate.usd", root, (ub_loc){0}));
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(d), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(ub_diags_at(d, 1)->message,
                                  "damaged usdc (crate) file: bootstrap "
                                  "header"));
    /* a text .usd is read as text */
    ub_layer *txt = ub_loader_open(ld, "text.usd", root, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL(txt);
    if (txt)
        CU_ASSERT_EQUAL(txt->root->children.n, 1);
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("loader", setup, teardown);
    CU_add_test(s, "normalize", test_normalize);
    CU_add_test(s, "resolve and search paths", test_resolve_and_search);
    CU_add_test(s, "one layer per file", test_read_once);
    CU_add_test(s, "errors and sniffing", test_errors);
    CU_basic_set_mode(CU_BRM_NORMAL);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() +
                      CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
