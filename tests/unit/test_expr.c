/* CUnit tests for ub_expr: asset-path variable expressions. */
#include <CUnit/Basic.h>
#include <string.h>

#include "ub_expr.h"
#include "ub_test.h"

static ub_strtab *T;
static ub_arena *A;
static ub_dict *V;

static ub_value str(const char *s, ub_type_id ty)
{
    ub_value v = ub_value_new(A, ub_type_get(ty), 1, false);
    ((const char **)ub_value_data(&v))[0] = ub_intern_cstr(T, s);
    return v;
}

static const char *eval(const char *expr, ub_expr_status want)
{
    const char *out = NULL, *what = NULL;
    ub_expr_status st = ub_expr_eval(T, ub_intern_cstr(T, expr), V, &out,
                                     &what);
    CU_ASSERT_EQUAL(st, want);
    return st == UB_EXPR_OK ? out : what;
}

static void test_is(void)
{
    CU_ASSERT(ub_expr_is(ub_intern_cstr(T, "`\"a\"`")));
    CU_ASSERT(!ub_expr_is(ub_intern_cstr(T, "a.usda")));
    CU_ASSERT(!ub_expr_is(ub_intern_cstr(T, "`")));
}

static void test_strings(void)
{
    CU_ASSERT_STRING_EQUAL(eval("`\"./${NAME}.usda\"`", UB_EXPR_OK),
                           "./shot.usda");
    CU_ASSERT_STRING_EQUAL(eval("`'${A}/${NAME}_${A}'`", UB_EXPR_OK),
                           "dir/shot_dir");
    CU_ASSERT_STRING_EQUAL(eval("` \"plain\" `", UB_EXPR_OK), "plain");
    /* escapes: \$ \` \\ and the quote */
    CU_ASSERT_STRING_EQUAL(eval("`\"a\\${NAME}\\\"b\\\\\"`", UB_EXPR_OK),
                           "a${NAME}\"b\\");
    CU_ASSERT_STRING_EQUAL(eval("`${NAME}`", UB_EXPR_OK), "shot");
    CU_ASSERT_STRING_EQUAL(eval("`${TOK}`", UB_EXPR_OK), "tokval");
}

/* Inside a string an undefined variable stands for its name, as
 * OpenUSD's evaluator leaves it (usdcat --flatten gives "./NOPE.usda");
 * what names it.  Bare, it is an error. */
static void test_undefined(void)
{
    const char *out = NULL, *what = NULL;
    CU_ASSERT_EQUAL(ub_expr_eval(T, ub_intern_cstr(T, "`\"./${NOPE}_${A}\"`"),
                                 V, &out, &what),
                    UB_EXPR_OK);
    CU_ASSERT_STRING_EQUAL(out, "./NOPE_dir");
    CU_ASSERT_STRING_EQUAL(what, "NOPE");
    CU_ASSERT_EQUAL(ub_expr_eval(T, ub_intern_cstr(T, "`\"${A}\"`"), V, &out,
                                 &what),
                    UB_EXPR_OK);
    CU_ASSERT_PTR_NULL(what); /* all defined */
    CU_ASSERT_STRING_EQUAL(eval("`${NOPE}`", UB_EXPR_UNDEFINED), "NOPE");
}

static void test_errors(void)
{
    CU_ASSERT_STRING_EQUAL(eval("`\"${N}.usda\"`", UB_EXPR_NOT_STRING), "N");
    eval("`\"unterminated`", UB_EXPR_SYNTAX);
    eval("`\"${}\"`", UB_EXPR_SYNTAX);
    /* an escape the grammar does not pair is unescaped as C would, as
     * OpenUSD's TfEscapeString does: "\q" is "q" */
    CU_ASSERT_STRING_EQUAL(eval("`\"bad \\q escape\"`", UB_EXPR_OK),
                           "bad q escape");
    eval("`if(${B}, \"a\", \"b\")`", UB_EXPR_UNSUPPORTED);
    eval("`\"a\" \"b\"`", UB_EXPR_UNSUPPORTED);
    /* a variable's newline gives no asset path (usdcat fails to write) */
    eval("`\"./${NL}.usda\"`", UB_EXPR_CONTROL);
}

int main(void)
{
    T = ub_strtab_new();
    A = ub_arena_new();
    V = ub_dict_new(A);
    ub_dict_set(A, V, ub_intern_cstr(T, "NAME"), str("shot", UB_TY_STRING),
                (ub_sloc){0});
    ub_dict_set(A, V, ub_intern_cstr(T, "A"), str("dir", UB_TY_STRING),
                (ub_sloc){0});
    ub_dict_set(A, V, ub_intern_cstr(T, "TOK"), str("tokval", UB_TY_TOKEN),
                (ub_sloc){0});
    ub_dict_set(A, V, ub_intern_cstr(T, "NL"), str("a\nb", UB_TY_STRING),
                (ub_sloc){0});
    ub_value n = ub_value_new(A, ub_type_get(UB_TY_INT), 1, false);
    ub_dict_set(A, V, ub_intern_cstr(T, "N"), n, (ub_sloc){0});
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("expr", NULL, NULL);
    CU_add_test(s, "is", test_is);
    CU_add_test(s, "strings", test_strings);
    CU_add_test(s, "undefined", test_undefined);
    CU_add_test(s, "errors", test_errors);
    unsigned failed = ub_test_run_all();
    ub_arena_free(A);
    ub_strtab_free(T);
    return failed ? 1 : 0;
}
