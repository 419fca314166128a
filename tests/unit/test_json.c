/* CUnit tests for ub_json: plugInfo.json's JSON with # comments, escapes,
 * bounded nesting and located errors. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "ub_json.h"
#include "ub_test.h"

static ub_json *parse(ub_arena *a, ub_diags *d, const char *text)
{
    return ub_json_parse(a, "p.json", text, strlen(text), d);
}

static void test_values(void)
{
    ub_arena *a = ub_arena_new();
    ub_diags *d = ub_diags_new();
    const ub_json *v = parse(
        a, d,
        "# a comment line\n"
        "{ \"s\": \"a#b \\\"q\\\" \\u00e9\\ud83d\\ude00\\n\",\n"
        "    # an indented comment line\n"
        "  \"n\": -1.5e2, \"t\": true, \"f\": false, \"z\": null,\n"
        "  \"a\": [1, [], {}], \"s\": \"last\" }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    CU_ASSERT_EQUAL(v->kind, UB_JSON_OBJECT);
    CU_ASSERT_EQUAL(v->n, 7);
    CU_ASSERT_STRING_EQUAL(v->items[0].str,
                           "a#b \"q\" \xc3\xa9\xf0\x9f\x98\x80\n");
    CU_ASSERT_STRING_EQUAL(ub_json_get_str(v, "s"), "last");
    const ub_json *n = ub_json_get(v, "n");
    CU_ASSERT(n && n->kind == UB_JSON_NUMBER && n->number == -150.0);
    CU_ASSERT(ub_json_get(v, "t")->boolean);
    CU_ASSERT(!ub_json_get(v, "f")->boolean);
    CU_ASSERT_EQUAL(ub_json_get(v, "z")->kind, UB_JSON_NULL);
    const ub_json *arr = ub_json_get(v, "a");
    CU_ASSERT_FATAL(arr && arr->kind == UB_JSON_ARRAY && arr->n == 3);
    CU_ASSERT_EQUAL(arr->items[1].kind, UB_JSON_ARRAY);
    CU_ASSERT_EQUAL(arr->items[1].n, 0);
    CU_ASSERT_EQUAL(arr->items[2].kind, UB_JSON_OBJECT);
    CU_ASSERT_EQUAL(arr->loc.line, 5);
    CU_ASSERT_EQUAL(arr->loc.col, 8);
    CU_ASSERT_PTR_NULL(ub_json_get(v, "missing"));
    CU_ASSERT_PTR_NULL(ub_json_get_str(v, "n"));
    ub_diags_free(d);
    ub_arena_free(a);
}

/* Each error names the place, what was found and what was expected. */
static void test_errors(void)
{
    static const struct {
        const char *text;
        uint32_t line, col;
        const char *says;
    } cases[] = {
        {"{\"a\": 1,}", 1, 9, "expected a key"},
        {"{\"a\" 1}", 1, 6, "expected ':'"},
        {"[1 2]", 1, 4, "expected ',' or ']'"},
        {"\n  \"abc", 2, 7, "unterminated string"},
        {"\"\\x\"", 1, 3, "invalid escape"},
        {"{} x", 1, 4, "expected the end of the file"},
        {"", 1, 1, "found the end of the file"},
        {"[1.2.3]", 1, 2, "invalid number"},
        {"nul", 1, 1, "expected a value"},
        {"[1, # not a comment\n 2]", 1, 5, "a comment must be a line"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ub_arena *a = ub_arena_new();
        ub_diags *d = ub_diags_new();
        CU_ASSERT_PTR_NULL(parse(a, d, cases[i].text));
        CU_ASSERT_EQUAL_FATAL(ub_diags_errors(d), 1);
        const ub_diag *e = ub_diags_at(d, 0);
        CU_ASSERT_STRING_EQUAL(e->loc.file, "p.json");
        CU_ASSERT_EQUAL(e->loc.line, cases[i].line);
        CU_ASSERT_EQUAL(e->loc.col, cases[i].col);
        if (!strstr(e->message, cases[i].says))
            fprintf(stderr, "case %zu: '%s' does not say '%s'\n", i,
                    e->message, cases[i].says);
        CU_ASSERT_PTR_NOT_NULL(strstr(e->message, cases[i].says));
        ub_diags_free(d);
        ub_arena_free(a);
    }
}

/* Nesting is bounded: deep input is an error, not a stack overflow. */
static void test_depth(void)
{
    char text[4 * UB_JSON_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < 2 * UB_JSON_MAX_DEPTH; i++)
        text[n++] = '[';
    text[n] = '\0';
    ub_arena *a = ub_arena_new();
    ub_diags *d = ub_diags_new();
    CU_ASSERT_PTR_NULL(parse(a, d, text));
    CU_ASSERT_EQUAL_FATAL(ub_diags_errors(d), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(ub_diags_at(d, 0)->message, "nested"));
    ub_diags_free(d);
    /* as deep as allowed parses */
    n = 0;
    for (int i = 0; i < UB_JSON_MAX_DEPTH; i++)
        text[n++] = '[';
    for (int i = 0; i < UB_JSON_MAX_DEPTH; i++)
        text[n++] = ']';
    text[n] = '\0';
    d = ub_diags_new();
    CU_ASSERT_PTR_NOT_NULL(parse(a, d, text));
    ub_diags_free(d);
    ub_arena_free(a);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("json", NULL, NULL);
    CU_add_test(s, "values", test_values);
    CU_add_test(s, "errors", test_errors);
    CU_add_test(s, "depth", test_depth);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
