/* Unit tests of the usda parser: the scanner (strings, escapes, assets,
 * paths, comments, numbers), each grammar construct (a small layer from a
 * string, checked on the model), values parsed to their declared type, and
 * the location and wording of errors. */
#include <CUnit/Basic.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ub_ident.h"
#include "ub_parse.h"
#include "ub_test.h"

static ub_strtab *strtab;
static ub_diags *diags;
static ub_layer *L;

static const char *S(const char *s)
{
    return ub_intern_cstr(strtab, s);
}

/* Parse the n bytes of text into L (freeing the previous layer). */
static ub_layer *parse_n(const char *text, size_t n)
{
    ub_layer_free(L);
    ub_diags_free(diags);
    diags = ub_diags_new();
    L = ub_parse_usda(strtab, "t.usda", text, n, diags);
    if (!L)
        for (size_t i = 0; i < ub_diags_count(diags); i++)
            ub_diag_print(stderr, ub_diags_at(diags, i));
    return L;
}

static ub_layer *parse(const char *text)
{
    return parse_n(text, strlen(text));
}

/* text must be rejected, its first error at line:col mentioning what. */
static void reject(const char *text, unsigned line, unsigned col,
                   const char *what)
{
    ub_layer_free(L);
    ub_diags_free(diags);
    diags = ub_diags_new();
    L = ub_parse_usda(strtab, "t.usda", text, strlen(text), diags);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(ub_diags_errors(diags) >= 1);
    size_t i = 0; /* (warnings may come first) */
    while (i < ub_diags_count(diags) &&
           ub_diags_at(diags, i)->severity != UB_ERROR)
        i++;
    if (i == ub_diags_count(diags))
        return;
    const ub_diag *d = ub_diags_at(diags, i);
    bool ok = d->severity == UB_ERROR && d->loc.line == line &&
              d->loc.col == col && strstr(d->message, what) != NULL;
    if (!ok)
        fprintf(stderr, "\nwanted %u:%u '%s', got %u:%u '%s'\n", line, col,
                what, d->loc.line, d->loc.col, d->message);
    CU_ASSERT(ok);
    CU_ASSERT_STRING_EQUAL(d->loc.file, "t.usda");
    CU_ASSERT_PTR_NOT_NULL(d->line_text);
}

static ub_prim *child(ub_prim *p, const char *name)
{
    return ub_prim_find_child(L, p, S(name));
}

static ub_prim *prim(const char *path)
{
    ub_prim *p = L->root;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *t = strtok(buf, "/"); t && p; t = strtok(NULL, "/"))
        p = child(p, t);
    return p;
}

static ub_prop *prop(const char *prim_path, const char *name)
{
    ub_prim *p = prim(prim_path);
    return p ? ub_prop_find(L, p, S(name)) : NULL;
}

static const ub_value *meta(const ub_fields *f, const char *key)
{
    ub_field *x = ub_fields_find(f, S(key));
    return x ? &x->value : NULL;
}

/* The first path (or name) of a list op's explicit items, or NULL. */
static const char *explicit0(const ub_value *v)
{
    if (!v || v->kind != UB_V_LISTOP || !v->u.listop)
        return NULL;
    const ub_value *items = ub_listop_get(v->u.listop, UB_LO_EXPLICIT);
    return items && items->count ? ub_value_str(items, 0) : NULL;
}

static const char *str0(const ub_value *v)
{
    return v && v->kind == UB_V_DATA &&
        ub_value_type(v)->scalar == UB_SC_STRING
               ? ub_value_str(v, 0)
               : NULL;
}

static float F(const ub_value *v, uint32_t i)
{
    float f;
    memcpy(&f, (const char *)ub_value_data(v) + 4 * i, 4);
    return f;
}

static double D(const ub_value *v, uint32_t i)
{
    double d;
    memcpy(&d, (const char *)ub_value_data(v) + 8 * i, 8);
    return d;
}

static int32_t I(const ub_value *v, uint32_t i)
{
    int32_t x;
    memcpy(&x, (const char *)ub_value_data(v) + 4 * i, 4);
    return x;
}

/* --- scanner ---------------------------------------------------------------- */

static void test_strings(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" {\n"
        "    string a = \"tab\\there \\\"q\\\" \\x41\\101 \\q\"\n"
        "    string b = 'single \"quotes\"'\n"
        "    string c = \"\"\"one\n"
        "two \"quoted\" \"\"\"\n"
        "    string d = ''''''\n"
        "    string e = \"\"\n"
        "    string f = '''a''b'''\n"
        "}\n"));
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "a")->default_value),
                           "tab\there \"q\" AA q");
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "b")->default_value),
                           "single \"quotes\"");
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "c")->default_value),
                           "one\ntwo \"quoted\" ");
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "d")->default_value), "");
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "e")->default_value), "");
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "f")->default_value), "a''b");
    /* the triple-quoted string spans two lines: later lines still count */
    CU_ASSERT_EQUAL(ub_layer_loc(L, prop("/A", "d")->loc).line, 7);
}

/* "nrcxkhlaym" and "nnitgkaisa" share the intern cache's slot, stored
 * hash and length (found by search): a cache that trusted them would
 * give the second name, string or asset path the first one's text. */
static void test_intern_cache_collision(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"nrcxkhlaym\" {\n"
        "    int nrcxkhlaym = 1\n"
        "    int nnitgkaisa = 2\n"
        "    string s = \"nrcxkhlaym\"\n"
        "    string t = \"nnitgkaisa\"\n"
        "    asset u = @nrcxkhlaym@\n"
        "    asset v = @nnitgkaisa@\n"
        "}\n"
        "def \"nnitgkaisa\" {\n"
        "}\n"));
    CU_ASSERT_EQUAL(L->root->children.n, 2);
    if (L->root->children.n == 2) {
        CU_ASSERT_STRING_EQUAL(L->root->children.v[0]->name, "nrcxkhlaym");
        CU_ASSERT_STRING_EQUAL(L->root->children.v[1]->name, "nnitgkaisa");
    }
    /* the properties of /nrcxkhlaym, with the value each must hold */
    static const struct {
        const char *name, *text;
        int32_t i;
    } want[] = {{"nrcxkhlaym", NULL, 1}, {"nnitgkaisa", NULL, 2},
                {"s", "nrcxkhlaym", 0},  {"t", "nnitgkaisa", 0},
                {"u", "nrcxkhlaym", 0},  {"v", "nnitgkaisa", 0}};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        const ub_prop *p = prop("/nrcxkhlaym", want[k].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        if (want[k].text) {
            CU_ASSERT_STRING_EQUAL(str0(&p->default_value), want[k].text);
        } else {
            CU_ASSERT_EQUAL(I(&p->default_value, 0), want[k].i);
        }
    }
}

static void test_assets_and_paths(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" {\n"
        "    asset a = @./a b.usda@\n"
        "    asset b = @@@has@one@@@\n"
        "    asset c = @@@esc\\@@@aped@@@\n"
        "    asset[] d = [@x@, \"y\"]\n"
        "    rel r = [<../B>, <.attr>, <child/grand>, </C.x>]\n"
        "    def \"K\" {\n        double x.connect = <../B.out>\n    }\n"
        "}\n"));
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "a")->default_value), "./a b.usda");
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "b")->default_value), "has@one");
    CU_ASSERT_STRING_EQUAL(str0(&prop("/A", "c")->default_value),
                           "esc@@@aped");
    const ub_value *d = &prop("/A", "d")->default_value;
    CU_ASSERT_EQUAL(d->count, 2);
    CU_ASSERT_STRING_EQUAL(ub_value_str(d, 1), "y");
    ub_prop *r = prop("/A", "r");
    CU_ASSERT_EQUAL_FATAL(ub_prop_targets(r)->kind, UB_V_LISTOP);
    const ub_listop *lo = ub_prop_targets(r)->u.listop;
    CU_ASSERT(lo->is_explicit);
    const ub_value *t = ub_listop_get(lo, UB_LO_EXPLICIT);
    CU_ASSERT_EQUAL_FATAL(t->count, 4);
    /* relative targets are made absolute against the owning prim */
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 0), S("/B"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 1), S("/A.attr"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 2), S("/A/child/grand"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 3), S("/C.x"));
    ub_prop *x = prop("/A/K", "x");
    CU_ASSERT_EQUAL_FATAL(ub_prop_connections(x)->kind, UB_V_LISTOP);
    CU_ASSERT_PTR_EQUAL(
        ub_value_str(
            ub_listop_get(ub_prop_connections(x)->u.listop, UB_LO_EXPLICIT),
            0),
        S("/A/B.out"));

    /* a relative path's target is made absolute too, against the path's
     * own prim (as usdcat prints it); an absolute path's stays as written */
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\ndef \"X\" {\n    def \"K\" {\n"
        "        rel r = [<.r[../Y].a>, <../Q.r[Y].a>, <Z.r[../Y].a>,\n"
        "                 </X.r[../Y].a>, <.r[.q[../Z].b].c>]\n"
        "        int c.connect = <.r[Y].a>\n    }\n}\n"));
    t = ub_listop_get(ub_prop_targets(prop("/X/K", "r"))->u.listop,
                      UB_LO_EXPLICIT);
    CU_ASSERT_EQUAL_FATAL(t->count, 5);
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 0), S("/X/K.r[/X/Y].a"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 1), S("/X/Q.r[/X/Q/Y].a"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 2), S("/X/K/Z.r[/X/K/Y].a"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 3), S("/X.r[../Y].a"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 4), S("/X/K.r[/X/K.q[/X/Z].b].c"));
    CU_ASSERT_PTR_EQUAL(explicit0(ub_prop_connections(prop("/X/K", "c"))),
                        S("/X/K.r[/X/K/Y].a"));
    /* a target that climbs above the root; text that is no path */
    reject("#usda 1.0\ndef \"X\" {\n    rel r = <.r[../../Y].a>\n}\n", 3, 13,
           "(it leaves the root)");
    reject("#usda 1.0\ndef \"X\" {\n    rel r = </X.r[/Y].a.b>\n}\n", 3, 13,
           "(it is no path: expected names joined by '/'");

    /* as Sdf reads them: <.> is the prim itself, "../.a" a property of
     * the parent (a property right after ".." is no path), and a path
     * that climbs to </> names neither a prim nor a property */
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\ndef \"X\" (\n    inherits = <.>\n) {\n"
        "    def \"Y\" (\n        specializes = <..>\n    ) {\n"
        "        rel r = [<.>, <../.a>, <../../Z.b>]\n"
        "        int c.connect = <../.out>\n    }\n}\n"));
    CU_ASSERT_PTR_EQUAL(explicit0(meta(&prim("/X")->meta, "inherits")),
                        S("/X"));
    CU_ASSERT_PTR_EQUAL(explicit0(meta(&prim("/X/Y")->meta, "specializes")),
                        S("/X"));
    t = ub_listop_get(ub_prop_targets(prop("/X/Y", "r"))->u.listop,
                      UB_LO_EXPLICIT);
    CU_ASSERT_EQUAL_FATAL(t->count, 3);
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 0), S("/X/Y"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 1), S("/X.a"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(t, 2), S("/Z.b"));
    CU_ASSERT_PTR_EQUAL(explicit0(ub_prop_connections(prop("/X/Y", "c"))),
                        S("/X.out"));
    reject("#usda 1.0\ndef \"X\" (\n    inherits = <..>\n) {}\n", 3, 16,
           "<..> is not one (it is the pseudo-root </>)");
    reject("#usda 1.0\ndef \"X\" {\n    rel r = <..>\n}\n", 3, 13,
           "<..> is not one (it is the pseudo-root </>)");
    reject("#usda 1.0\ndef \"X\" {\n    def \"Y\" {\n        int c.connect = "
           "<../..>\n    }\n}\n",
           4, 25, "(it is the pseudo-root </>)");
    reject("#usda 1.0\ndef \"X\" {\n    rel r = <...a>\n}\n", 3, 13,
           "(it is no path");
}

static void test_comments(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "# a comment\n"
        "// another\n"
        "/* a block\n"
        "   over lines */\n"
        "def \"A\" /* inline */ { # trailing\n"
        "    int[] a = [1, // one\n"
        "               2] // two\n"
        "}\n"));
    CU_ASSERT_EQUAL(ub_layer_loc(L, prim("/A")->loc).line, 6);
    CU_ASSERT_EQUAL(ub_layer_loc(L, prop("/A", "a")->loc).line, 7);
    CU_ASSERT_EQUAL(prop("/A", "a")->default_value.count, 2);
}

static void test_numbers(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" {\n"
        "    double[] d = [inf, -inf, nan, -0, 1e3, .5, 5., -2.5E-3, 0.1]\n"
        "    float[] f = [0.1, 16777217, 1e39,\n"
        "        1.000000059604644776257986737988403547205962240695953369140625]\n"
        "    float3 p = (1, -2.5, 3e2)\n"
        "    uint64 big = 18446744073709551615\n"
        "    int64 low = -9223372036854775808\n"
        "    half h = 0.1\n"
        "    half[] hs = [65504, 65520, 1e-8]\n"
        "    bool[] b = [true, False, 1, 0, yes, \"no\"]\n"
        "    timecode tc = 12.5\n"
        "}\n"));
    const ub_value *d = &prop("/A", "d")->default_value;
    CU_ASSERT_EQUAL_FATAL(d->count, 9);
    CU_ASSERT(isinf(D(d, 0)) && D(d, 0) > 0);
    CU_ASSERT(isinf(D(d, 1)) && D(d, 1) < 0);
    CU_ASSERT(isnan(D(d, 2)));
    CU_ASSERT(D(d, 3) == 0.0 && signbit(D(d, 3)));
    CU_ASSERT_EQUAL(D(d, 4), 1000.0);
    CU_ASSERT_EQUAL(D(d, 5), 0.5);
    CU_ASSERT_EQUAL(D(d, 6), 5.0);
    CU_ASSERT_EQUAL(D(d, 7), -2.5e-3);
    CU_ASSERT_EQUAL(D(d, 8), 0.1);
    const ub_value *f = &prop("/A", "f")->default_value;
    CU_ASSERT_EQUAL(f->type_id, UB_TY_FLOAT);
    /* float values are the double narrowed, as OpenUSD reads them */
    CU_ASSERT_EQUAL(F(f, 0), (float)0.1);
    CU_ASSERT_EQUAL(F(f, 1), 16777216.0f);
    CU_ASSERT(isinf(F(f, 2)));
    /* 1 + 2^-24 + 2^-60: nearest float is 1 + 2^-23, but OpenUSD reads
     * the double 1 + 2^-24 first, which then ties to even: 1.0f */
    CU_ASSERT_EQUAL(F(f, 3), 1.0f);
    const ub_value *p = &prop("/A", "p")->default_value;
    CU_ASSERT_FALSE(p->is_array);
    CU_ASSERT_EQUAL(p->count, 1);
    CU_ASSERT_EQUAL(F(p, 0), 1.0f);
    CU_ASSERT_EQUAL(F(p, 1), -2.5f);
    CU_ASSERT_EQUAL(F(p, 2), 300.0f);
    uint64_t big;
    memcpy(&big, ub_value_data(&prop("/A", "big")->default_value), 8);
    CU_ASSERT_EQUAL(big, UINT64_MAX);
    int64_t low;
    memcpy(&low, ub_value_data(&prop("/A", "low")->default_value), 8);
    CU_ASSERT_EQUAL(low, INT64_MIN);
    uint16_t h;
    memcpy(&h, ub_value_data(&prop("/A", "h")->default_value), 2);
    CU_ASSERT_EQUAL(h, ub_float_to_half(0.1f));
    const ub_value *hs = &prop("/A", "hs")->default_value;
    uint16_t hv[3];
    memcpy(hv, ub_value_data(hs), 6);
    CU_ASSERT_EQUAL(hv[0], 0x7bff);    /* largest half */
    CU_ASSERT_EQUAL(hv[1], 0x7c00);    /* rounds to infinity */
    CU_ASSERT_EQUAL(hv[2], 0);         /* underflows to zero */
    const ub_value *b = &prop("/A", "b")->default_value;
    const uint8_t *bv = ub_value_data(b);
    CU_ASSERT(bv[0] == 1 && bv[1] == 0 && bv[2] == 1 && bv[3] == 0 &&
              bv[4] == 1 && bv[5] == 0);
    const ub_value *tc = &prop("/A", "tc")->default_value;
    CU_ASSERT_EQUAL(tc->type_id, UB_TY_TIMECODE);
    CU_ASSERT_EQUAL(D(tc, 0), 12.5);
}

/* Numbers written in runs (one scanner token) and one by one (over lines,
 * with comments) must give the same array. */
static void test_number_runs(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" {\n"
        "    point3f[] a = [(1, 2, 3), (4.5, -5, 6e1), (7, 8, 9), (1, 1, 1),"
        " (2, 2, 2), (3, 3, 3), (4, 4, 4), (5, 5, 5), (6, 6, 6), (0.1, 0.2, 0.3)]\n"
        "    point3f[] b = [\n"
        "        (1, 2, 3), (4.5, -5,\n"
        "        6e1), (7, 8, 9), (1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 4, 4),\n"
        "        (5, 5, 5), (6, 6, 6), (0.1, /* c */ 0.2, 0.3),\n"
        "    ]\n"
        "    int[] c = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,"
        " 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, -34]\n"
        "    matrix2d m = ((1, 2), (3, 4))\n"
        "    double2[] e = [(1, 2)]\n"
        "    double t.timeSamples = { 1: 5, 2: 6, 0: -1 }\n"
        "}\n"));
    const ub_value *a = &prop("/A", "a")->default_value;
    const ub_value *b = &prop("/A", "b")->default_value;
    CU_ASSERT_EQUAL_FATAL(a->count, 10);
    CU_ASSERT_EQUAL_FATAL(b->count, 10);
    CU_ASSERT(a->is_array);
    CU_ASSERT_EQUAL(memcmp(ub_value_data(a), ub_value_data(b), 10 * 12), 0);
    CU_ASSERT_EQUAL(F(a, 3), 4.5f);
    CU_ASSERT_EQUAL(F(a, 5), 60.0f);
    CU_ASSERT_EQUAL(F(a, 29), (float)0.3);
    const ub_value *c = &prop("/A", "c")->default_value;
    CU_ASSERT_EQUAL_FATAL(c->count, 34);
    CU_ASSERT_EQUAL(I(c, 0), 1);
    CU_ASSERT_EQUAL(I(c, 32), 33);
    CU_ASSERT_EQUAL(I(c, 33), -34);
    const ub_value *m = &prop("/A", "m")->default_value;
    CU_ASSERT_EQUAL(m->count, 1);
    CU_ASSERT_EQUAL(D(m, 0), 1.0);
    CU_ASSERT_EQUAL(D(m, 3), 4.0);
    CU_ASSERT_EQUAL(prop("/A", "e")->default_value.count, 1);
    /* "1: 5, 2: 6" inside { } are samples, not a number run */
    const ub_samples *s = ub_prop_samples(prop("/A", "t"));
    CU_ASSERT_EQUAL_FATAL(s->n, 3);
    CU_ASSERT_EQUAL(s->v[0].time, 0.0);
    CU_ASSERT_EQUAL(D(&s->v[2].value, 0), 6.0);
}

/* Runs far longer than the scanner's buffer, in every number spelling,
 * are read element for element: the run is read by hand up to where the
 * buffer ends, and must resume there exactly. */
static void test_long_number_runs(void)
{
    static const char *const forms[] = {"%d", "-%d", "%d.5", "-%d.25",
                                        ".%d", "-.%d", "%de2", "%d.5E-1",
                                        "%d.", "%de+1"};
    enum { N = 30000 };
    static char text[N * 48 + 4096];
    static double want[N];
    char *t = text;
    t += sprintf(t, "#usda 1.0\ndef \"A\" {\n    double[] d = [");
    for (int i = 0; i < N; i++) {
        char num[32];
        snprintf(num, sizeof num, forms[i % 10], i % 997);
        want[i] = strtod(num, NULL);
        /* separators of every width, all on one line */
        t += sprintf(t, "%s%s", i ? (i % 7 == 0 ? " ,  " : i % 3 ? ", " : ",")
                                  : "",
                     num);
    }
    t += sprintf(t, "]\n    double3[] v = [");
    for (int i = 0; i < N / 3; i++)
        t += sprintf(t, "%s(%d.5,%s-%d, %de1 )", i ? ", " : "", i,
                     i % 2 ? "  " : " ", i % 89, i % 13);
    t += sprintf(t, "]\n}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(text));
    const ub_value *d = &prop("/A", "d")->default_value;
    CU_ASSERT_EQUAL_FATAL(d->count, N);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += D(d, i) != want[i];
    CU_ASSERT_EQUAL(bad, 0);
    const ub_value *v = &prop("/A", "v")->default_value;
    CU_ASSERT_EQUAL_FATAL(v->count, N / 3);
    bad = 0;
    for (int i = 0; i < N / 3; i++)
        bad += D(v, 3 * i) != i + 0.5 || D(v, 3 * i + 1) != -(i % 89) ||
               D(v, 3 * i + 2) != (i % 13) * 10.0;
    CU_ASSERT_EQUAL(bad, 0);
    /* a bad element deep in a run is reported where it is */
    t = text;
    t += sprintf(t, "#usda 1.0\ndef \"A\" {\n    double[] d = [");
    for (int i = 0; i < 5000; i++)
        t += sprintf(t, "%d, ", i);
    *t = '\0';
    /* the column of the 'x' of "1x" */
    size_t col = (size_t)(t - strrchr(text, '\n')) + 1;
    sprintf(t, "1x, 2]\n}\n");
    reject(text, 3, (unsigned)col, "unexpected identifier 'x'");
}

/* The scanner reads a run's numbers as it finds the run's end; the value
 * builder stores them directly only where that reading is the whole story
 * (float, double, half and int arrays, tuples all of the type's size,
 * ints that fit).  Everything else is read from the text again, and is
 * stored or reported exactly as before. */
static void test_number_runs_stored(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\ndef \"A\" {\n"
        "    float3[] f = [(1.5, -2, 3e1), (0.1, -0, .25)]\n"
        "    half2[] h = [(1, 2.5), (65504, -0.5)]\n"
        "    int[] i = [1, -2, 3, 2147483647, -2147483648]\n"
        "    float[] s = [0.1, 1e-3, -7]\n"
        "}\n"));
    const ub_value *f = &prop("/A", "f")->default_value;
    CU_ASSERT_EQUAL_FATAL(f->count, 2);
    const float *fv = ub_value_data(f);
    CU_ASSERT(fv[0] == 1.5f && fv[1] == -2.0f && fv[2] == 30.0f);
    CU_ASSERT(fv[3] == (float)0.1 && fv[4] == 0.0f && signbit(fv[4]) &&
              fv[5] == 0.25f);
    const ub_value *h = &prop("/A", "h")->default_value;
    CU_ASSERT_EQUAL_FATAL(h->count, 2);
    const uint16_t *hv = ub_value_data(h);
    CU_ASSERT(hv[0] == 0x3c00 && hv[1] == 0x4100 && hv[2] == 0x7bff &&
              hv[3] == 0xb800);
    const ub_value *i = &prop("/A", "i")->default_value;
    CU_ASSERT_EQUAL_FATAL(i->count, 5);
    const int32_t *iv = ub_value_data(i);
    CU_ASSERT(iv[0] == 1 && iv[1] == -2 && iv[2] == 3 &&
              iv[3] == INT32_MAX && iv[4] == INT32_MIN);
    const ub_value *sv = &prop("/A", "s")->default_value;
    CU_ASSERT_EQUAL_FATAL(sv->count, 3);
    CU_ASSERT(((const float *)ub_value_data(sv))[1] == 1e-3f);
    /* digits of every count on either side of the point, some runs
     * crossing 8 bytes: the value strtod gives */
    enum { NR = 20000 };
    static char text[NR * 40 + 256];
    static double want[NR];
    char *t = text;
    t += sprintf(t, "#usda 1.0\ndef \"R\" {\n    double[] d = [");
    uint64_t seed = 12345;
    for (int k = 0; k < NR; k++) {
        char num[48], *q = num;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned whole = (unsigned)(seed >> 60) % 13, frac = (seed >> 52) % 13;
        if (seed >> 51 & 1)
            *q++ = '-';
        for (unsigned i = 0; i < whole; i++)
            *q++ = (char)('0' + (seed >> (i * 3 % 48)) % 10);
        if (frac || !whole) {
            *q++ = '.';
            for (unsigned i = 0; i < frac + !whole; i++)
                *q++ = (char)('0' + (seed >> ((i * 5 + 7) % 48)) % 10);
        }
        *q = '\0';
        want[k] = strtod(num, NULL);
        t += sprintf(t, "%s%s", k ? ", " : "", num);
    }
    sprintf(t, "]\n}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(text));
    const ub_value *r = &prop("/R", "d")->default_value;
    CU_ASSERT_EQUAL_FATAL(r->count, NR);
    int bad = 0;
    for (int k = 0; k < NR; k++)
        bad += D(r, k) != want[k] || signbit(D(r, k)) != signbit(want[k]);
    CU_ASSERT_EQUAL(bad, 0);
    /* an int that does not fit, and a tuple of the wrong size, are
     * reported where they are */
    reject("#usda 1.0\ndef \"A\" {\n    int[] i = [1, 2, 2147483648]\n}\n",
           3, 22, "out of range for type 'int[]'");
    reject("#usda 1.0\ndef \"A\" {\n"
           "    float3[] p = [(1, 2, 3), (4, 5)]\n}\n",
           3, 35, "expected 3 values, found 2");
    reject("#usda 1.0\ndef \"A\" {\n"
           "    float2[] p = [(1, 2), (4, 5, 6)]\n}\n",
           3, 34, "too many values in a tuple of type 'float2'");
}

/* Progress: reported from the calling thread only, never backwards, and
 * ending at the whole length -- serial and split alike. */
/* A variant selection may be a variable expression ("`${VAR}`"): kept as
 * authored, resolved when the stage composes. */
static void test_variant_selection_expression(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\ndef \"A\" (\n"
        "    variants = {\n        string v = \"`${VAR}`\"\n    }\n"
        ")\n{\n}\n"));
    const ub_value *v = meta(&prim("/A")->meta, "variants");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL_FATAL(v->kind, UB_V_DICT);
    const ub_dict_entry *e = ub_dict_find(v->u.dict, S("v"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&e->value, 0), "`${VAR}`");
}

/* pathExpression values as OpenUSD's text reader keeps them: every value
 * in SdfPathExpression's own text; a default's relative paths made
 * absolute against its prim (samples and metadata stay relative); text
 * that is no path expression refuses the layer. */
static void test_path_expressions(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\ndef \"A\"\n{\n    def \"B\"\n    {\n"
        "        pathExpression e = \"  //foo   ../anim//*bar\"\n"
        "        pathExpression[] a = [\"x &  (y & z)\", \"// + x\"]\n"
        "        pathExpression s.timeSamples = { 1: \"../t  +  u\" }\n"
        "    }\n}\n"));
    ub_prop *e = prop("/A/B", "e"), *a = prop("/A/B", "a"),
            *ts = prop("/A/B", "s");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ts);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&e->default_value, 0),
                           "//foo /A/anim//*bar");
    CU_ASSERT_STRING_EQUAL(ub_value_str(&a->default_value, 0),
                           "/A/B/x & (/A/B/y & /A/B/z)");
    CU_ASSERT_STRING_EQUAL(ub_value_str(&a->default_value, 1), "//");
    CU_ASSERT_EQUAL_FATAL(ub_prop_samples(ts)->n, 1);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&ub_prop_samples(ts)->v[0].value, 0),
                           "../t + u");
    reject("#usda 1.0\ndef \"A\"\n{\n    pathExpression e = \"~~a\"\n}\n",
           4, 24, "invalid pathExpression");
}

typedef struct {
    size_t calls, last, len;
    bool backwards, other_thread;
    pthread_t self;
} progress_log;

static void on_progress(void *ctx, size_t bytes)
{
    progress_log *p = ctx;
    p->calls++;
    p->backwards |= bytes < p->last;
    p->other_thread |= !pthread_equal(pthread_self(), p->self);
    p->last = bytes;
}

static void test_progress(void)
{
    size_t cap = 3u << 20;
    char *text = malloc((9u << 20) + 256);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    size_t n = (size_t)sprintf(text, "#usda 1.0\n");
    for (int i = 0; n < cap; i++)
        n += (size_t)sprintf(text + n, "def \"p%d\"\n{\n    int x = %d\n}\n",
                             i, i);
    for (int split = -1; split <= 1; split += 2) {
        progress_log log = {.self = pthread_self()};
        ub_parse_opts o = {.split = split, .split_at = n / 2,
                           .progress = on_progress, .progress_ctx = &log};
        ub_diags *d = ub_diags_new();
        ub_layer *l = ub_parse_usda_opts(strtab, "p.usda", text, n, &o, d);
        CU_ASSERT_PTR_NOT_NULL(l);
        CU_ASSERT(log.calls >= 10); /* 3 MB in 128 KiB blocks */
        CU_ASSERT_FALSE(log.backwards);
        CU_ASSERT_FALSE(log.other_thread);
        CU_ASSERT_EQUAL(log.last, n);
        if (split > 0)
            CU_ASSERT_EQUAL(o.outcome, UB_PARSE_SPLIT_GRAFTED);
        ub_layer_free(l);
        ub_diags_free(d);
    }
    /* no options are the default options: a big layer is split when two
     * CPUs are online (ub_parse_usda passes none) */
    while (n < (9u << 20))
        n += (size_t)sprintf(text + n, "def \"q%zu\"\n{\n}\n", n);
    ub_parse_opts none = {0};
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda_opts(strtab, "p.usda", text, n, &none, d);
    CU_ASSERT_PTR_NOT_NULL(l);
    CU_ASSERT_EQUAL(none.outcome, sysconf(_SC_NPROCESSORS_ONLN) >= 2
                                      ? UB_PARSE_SPLIT_GRAFTED
                                      : UB_PARSE_SERIAL);
    ub_layer_free(l);
    ub_diags_free(d);
    free(text);
}

/* A layer cut short is reported just after its last visible character,
 * whatever token that ends (a number run, a newline, a comment). */
static void test_end_of_file_location(void)
{
    reject("#usda 1.0\ndef \"A\" {\n    int[] a = [1, 2, 3", 3, 23,
           "unexpected end of file");
    reject("#usda 1.0\ndef \"A\" {\n    int[] a = [1, 2, 3\n\n  \n", 3, 23,
           "unexpected end of file");
    reject("#usda 1.0\r\ndef \"A\" {\r\n    int a = 1\r\n\r\n", 3, 14,
           "unexpected end of file");
    reject("#usda 1.0\ndef \"A\" {\n    /* open comment\n", 3, 20,
           "unexpected end of file");
    CU_ASSERT_EQUAL(ub_diags_at(diags, 0)->severity, UB_WARNING);
}

static void test_utf8_identifiers(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"\xe6\x83\x85\xe5\xa0\xb1\" {\n"
        "    int caf\xc3\xa9:x = 1\n"
        "}\n"));
    CU_ASSERT_PTR_NOT_NULL(prop("/\xe6\x83\x85\xe5\xa0\xb1", "caf\xc3\xa9:x"));
    /* U+222B INTEGRAL is no identifier character */
    reject("#usda 1.0\ndef \"a\xe2\x88\xab\" {\n}\n", 2, 5,
           "not a valid prim name");
    /* a prim path on a command line (stitch --clip-path) by the same
     * rules */
    CU_ASSERT_TRUE(ub_ident_prim_path_ok("/\xe6\x83\x85/caf\xc3\xa9_1"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("/a\xe2\x88\xab"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("/W/\xff"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("/W/1a"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("/W.x"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("/W{v=a}"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("/W//a"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("/W/"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("W"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok("/"));
    CU_ASSERT_FALSE(ub_ident_prim_path_ok(NULL));
    /* the paths the text takes as targets and connections */
    CU_ASSERT_TRUE(ub_ident_target_path_ok("/W/a.b:c"));
    CU_ASSERT_TRUE(ub_ident_target_path_ok("/W"));
    CU_ASSERT_TRUE(ub_ident_target_path_ok("/W.r[/X].y"));
    CU_ASSERT_FALSE(ub_ident_target_path_ok("/W.r[/X]"));
    CU_ASSERT_FALSE(ub_ident_target_path_ok("/W{v=a}.b"));
    CU_ASSERT_FALSE(ub_ident_target_path_ok("/W/../X"));
    CU_ASSERT_FALSE(ub_ident_target_path_ok("W.b"));
    CU_ASSERT_FALSE(ub_ident_target_path_ok("/"));
    CU_ASSERT_FALSE(ub_ident_target_path_ok(")C"));
    /* type names: no reserved word, as the grammar reads one as such */
    CU_ASSERT_TRUE(ub_ident_attr_type_ok("float3", 6));
    CU_ASSERT_TRUE(ub_ident_attr_type_ok("Kind", 4));
    CU_ASSERT_FALSE(ub_ident_attr_type_ok("kind", 4));
    CU_ASSERT_FALSE(ub_ident_attr_type_ok("None", 4));
    CU_ASSERT_TRUE(ub_ident_type_name_ok("a.Mesh", 6));
    CU_ASSERT_FALSE(ub_ident_type_name_ok("a.def", 5));
    for (size_t i = 0; i < UB_IDENT_NKEYWORDS; i++)
        CU_ASSERT_TRUE(ub_ident_keyword(ub_ident_keywords[i],
                                        strlen(ub_ident_keywords[i])));
}

/* --- grammar constructs ---------------------------------------------------- */

static void test_layer_metadata(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "(\n"
        "    \"layer comment\"\n"
        "    doc = \"documentation\"\n"
        "    subLayers = [@a.usda@ (offset = 10; scale = 2), @b.usda@,\n"
        "                 @c.usda@ (scale = 0.5)]\n"
        "    timeCodesPerSecond = 24\n"
        "    framesPerSecond = 30\n"
        "    startTimeCode = 1\n"
        "    endTimeCode = 240\n"
        "    defaultPrim = \"World\"\n"
        "    upAxis = \"Z\"\n"
        "    metersPerUnit = 0.01\n"
        "    customLayerData = { string who = \"me\"; dictionary d = { int x = 1 } }\n"
        "    expressionVariables = { string SHOT = \"s01\" }\n"
        "    someUnknownKey = [1, (2, foo), \"s\"]\n"
        ")\n"));
    CU_ASSERT_STRING_EQUAL(str0(meta(&L->meta, "comment")), "layer comment");
    CU_ASSERT_STRING_EQUAL(str0(meta(&L->meta, "doc")), "documentation");
    CU_ASSERT_EQUAL_FATAL(L->n_sublayers, 3);
    CU_ASSERT_STRING_EQUAL(L->sublayers[0].asset, "a.usda");
    CU_ASSERT_EQUAL(L->sublayers[0].offset.offset, 10.0);
    CU_ASSERT_EQUAL(L->sublayers[0].offset.scale, 2.0);
    CU_ASSERT(L->sublayers[0].has_offset && L->sublayers[0].has_scale);
    CU_ASSERT(!L->sublayers[1].has_offset && !L->sublayers[1].has_scale);
    CU_ASSERT_EQUAL(L->sublayers[1].offset.scale, 1.0);
    CU_ASSERT(!L->sublayers[2].has_offset && L->sublayers[2].has_scale);
    CU_ASSERT_EQUAL(ub_layer_loc(L, L->sublayers[2].loc).line, 6);
    CU_ASSERT_EQUAL(D(meta(&L->meta, "timeCodesPerSecond"), 0), 24.0);
    CU_ASSERT_EQUAL(ub_value_type(meta(&L->meta, "framesPerSecond"))->id,
                    UB_TY_DOUBLE);
    CU_ASSERT_EQUAL(ub_value_type(meta(&L->meta, "defaultPrim"))->id,
                    UB_TY_TOKEN);
    const ub_value *cld = meta(&L->meta, "customLayerData");
    CU_ASSERT_EQUAL_FATAL(cld->kind, UB_V_DICT);
    ub_dict_entry *who = ub_dict_find(cld->u.dict, S("who"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(who);
    CU_ASSERT_STRING_EQUAL(str0(&who->value), "me");
    ub_dict_entry *dd = ub_dict_find(cld->u.dict, S("d"));
    CU_ASSERT_EQUAL_FATAL(dd->value.kind, UB_V_DICT);
    CU_ASSERT_PTR_NOT_NULL(ub_dict_find(dd->value.u.dict, S("x")));
    const ub_value *u = meta(&L->meta, "someUnknownKey");
    CU_ASSERT_EQUAL_FATAL(u->kind, UB_V_UNTYPED);
    CU_ASSERT_EQUAL(u->u.untyped->kind, UB_U_LIST);
    CU_ASSERT_EQUAL_FATAL(u->u.untyped->n, 3);
    CU_ASSERT_EQUAL(u->u.untyped->child[1].kind, UB_U_TUPLE);
    CU_ASSERT_STRING_EQUAL(u->u.untyped->child[1].child[1].text, "foo");
    CU_ASSERT_EQUAL(u->u.untyped->child[2].kind, UB_U_STRING);
}

static void test_prims(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def Xform \"A\" {\n"
        "    over \"B\" {\n"
        "        class Scope \"C\" {\n"
        "        }\n"
        "    }\n"
        "    def ThisType::IsBogus \"D\" { }\n"
        "    reorder nameChildren = [\"D\", \"B\"]\n"
        "    reorder properties = \"x\"\n"
        "}\n"
        "class \"E\" (\n"
        "    kind = \"component\"\n"
        "    active = false\n"
        "    instanceable = true\n"
        "    hidden = true\n"
        "    permission = private\n"
        "    symmetryFunction =\n"
        "    customData = { int a = 1 }\n"
        "    assetInfo = { asset identifier = @x.usda@ }\n"
        "    prefixSubstitutions = { \"a\": \"b\" }\n"
        "    variants = { string shade = \"red\" }\n"
        ") { }\n"
        "reorder rootPrims = [\"E\", \"A\"]\n"));
    ub_prim *a = prim("/A");
    CU_ASSERT_EQUAL(a->specifier, UB_DEF);
    CU_ASSERT_STRING_EQUAL(a->type_name, "Xform");
    CU_ASSERT_EQUAL(prim("/A/B")->specifier, UB_OVER);
    CU_ASSERT_EQUAL(prim("/A/B/C")->specifier, UB_CLASS);
    CU_ASSERT_PTR_NULL(prim("/A/B")->type_name);
    CU_ASSERT_STRING_EQUAL(prim("/A/D")->type_name, "ThisType::IsBogus");
    CU_ASSERT_EQUAL(ub_prim_prim_order(a)->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(ub_prim_prim_order(a), 0), S("D"));
    CU_ASSERT_EQUAL(ub_prim_property_order(a)->count, 1);
    CU_ASSERT_EQUAL(ub_prim_prim_order(L->root)->count, 2);
    ub_prim *e = prim("/E");
    CU_ASSERT_EQUAL(ub_value_type(meta(&e->meta, "kind"))->id, UB_TY_TOKEN);
    CU_ASSERT_STRING_EQUAL(str0(meta(&e->meta, "kind")), "component");
    CU_ASSERT_EQUAL(ub_value_type(meta(&e->meta, "active"))->id, UB_TY_BOOL);
    CU_ASSERT_EQUAL(*(uint8_t *)ub_value_data(meta(&e->meta, "active")), 0);
    CU_ASSERT_STRING_EQUAL(str0(meta(&e->meta, "permission")), "private");
    CU_ASSERT_STRING_EQUAL(str0(meta(&e->meta, "symmetryFunction")), "");
    CU_ASSERT_EQUAL(meta(&e->meta, "customData")->kind, UB_V_DICT);
    CU_ASSERT_EQUAL(meta(&e->meta, "prefixSubstitutions")->kind, UB_V_DICT);
    const ub_value *v = meta(&e->meta, "variants");
    CU_ASSERT_EQUAL_FATAL(v->kind, UB_V_DICT);
    CU_ASSERT_STRING_EQUAL(str0(&ub_dict_find(v->u.dict, S("shade"))->value),
                           "red");
}

/* `typeName` in a prim's metadata is the prim's type, as the one after
 * its specifier (the later one wins, "" is none), as OpenUSD reads it; a
 * variant's is dropped, as OpenUSD's output drops it. */
static void test_type_name_metadata(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" (\n    typeName = \"Mesh\"\n) { }\n"
        "def Scope \"B\" (\n    typeName = \"Xform\"\n) { }\n"
        "def Scope \"C\" (\n    typeName = \"\"\n) {\n"
        "    variantSet \"v\" = {\n"
        "        \"x\" (\n            typeName = \"Mesh\"\n        ) { }\n"
        "    }\n"
        "}\n"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(prim("/A")->type_name);
    CU_ASSERT_STRING_EQUAL(prim("/A")->type_name, "Mesh");
    CU_ASSERT_STRING_EQUAL(prim("/B")->type_name, "Xform");
    ub_prim *c = prim("/C");
    CU_ASSERT_PTR_NULL(c->type_name);
    static const char *const paths[] = {"/A", "/B", "/C"};
    for (size_t i = 0; i < 3; i++)
        CU_ASSERT_PTR_NULL(meta(&prim(paths[i])->meta, "typeName"));
    ub_prim *v = ub_prim_variant_sets(c)[0].variants.v[0];
    CU_ASSERT_PTR_NULL(v->type_name);
    CU_ASSERT_PTR_NULL(meta(&v->meta, "typeName"));
}

static void test_list_ops(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" (\n"
        "    prepend references = [@a.usda@</X> (offset = 5; customData = "
        "{ int k = 1 }), </Y>]\n"
        "    delete references = @b.usda@\n"
        "    payload = @p.usda@ (scale = 2)\n"
        "    inherits = [</C1>, <../C2>]\n"
        "    append specializes = </S>\n"
        "    prepend apiSchemas = [\"MaterialBindingAPI\"]\n"
        "    variantSets = [\"v\", \"w\"]\n"
        "    intListOpTest = [1, 2]\n"
        "    add tokenListOpTest = [\"t\"]\n"
        ") { }\n"
        "def \"B\" ( references = None ) { }\n"));
    ub_prim *a = prim("/A");
    const ub_value *r = meta(&a->meta, "references");
    CU_ASSERT_EQUAL_FATAL(r->kind, UB_V_LISTOP);
    const ub_listop *lo = r->u.listop;
    CU_ASSERT_FALSE(lo->is_explicit);
    CU_ASSERT(lo->has[UB_LO_PREPEND] && lo->has[UB_LO_DELETE]);
    const ub_value *pre = ub_listop_get(lo, UB_LO_PREPEND);
    CU_ASSERT_EQUAL_FATAL(pre->count, 2);
    CU_ASSERT_EQUAL(pre->type_id, UB_TY_REFERENCE);
    const ub_reference *r0 = ub_value_elem(pre, 0), *r1 = ub_value_elem(pre, 1);
    CU_ASSERT_STRING_EQUAL(r0->asset, "a.usda");
    CU_ASSERT_STRING_EQUAL(r0->prim_path, "/X");
    CU_ASSERT(r0->has_offset && !r0->has_scale);
    CU_ASSERT_EQUAL(r0->offset.offset, 5.0);
    CU_ASSERT_PTR_NOT_NULL(r0->custom_data);
    CU_ASSERT_STRING_EQUAL(r1->asset, "");
    CU_ASSERT_STRING_EQUAL(r1->prim_path, "/Y");
    CU_ASSERT_EQUAL(r1->offset.scale, 1.0);
    const ub_value *p = meta(&a->meta, "payload");
    CU_ASSERT_EQUAL(p->type_id, UB_TY_PAYLOAD);
    CU_ASSERT(p->u.listop->is_explicit);
    const ub_value *inh =
        ub_listop_get(meta(&a->meta, "inherits")->u.listop, 0);
    CU_ASSERT_EQUAL_FATAL(inh->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_value_str(inh, 1), S("/C2"));
    CU_ASSERT(meta(&a->meta, "specializes")->u.listop->has[UB_LO_APPEND]);
    const ub_value *api = meta(&a->meta, "apiSchemas");
    CU_ASSERT_EQUAL(api->type_id, UB_TY_TOKEN);
    CU_ASSERT_EQUAL(ub_listop_get(api->u.listop, UB_LO_PREPEND)->count, 1);
    CU_ASSERT_EQUAL(ub_value_type(meta(&a->meta, "variantSets"))->id,
                    UB_TY_STRING);
    const ub_value *il = meta(&a->meta, "intListOpTest");
    CU_ASSERT_EQUAL(il->type_id, UB_TY_INT);
    CU_ASSERT_EQUAL(I(ub_listop_get(il->u.listop, UB_LO_EXPLICIT), 1), 2);
    CU_ASSERT(meta(&a->meta, "tokenListOpTest")->u.listop->has[UB_LO_ADD]);
    /* None on an explicit list is an authored empty list */
    const ub_value *none = meta(&prim("/B")->meta, "references");
    CU_ASSERT_EQUAL_FATAL(none->kind, UB_V_LISTOP);
    CU_ASSERT(none->u.listop->is_explicit);
    CU_ASSERT(none->u.listop->has[UB_LO_EXPLICIT]);
    CU_ASSERT_EQUAL(ub_listop_get(none->u.listop, UB_LO_EXPLICIT)->count, 0);
}

static void test_attributes(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" {\n"
        "    custom uniform token[] t = [\"a\", \"b\"] (\n"
        "        doc = \"d\"\n"
        "        allowedTokens = [\"a\", \"b\"]\n"
        "        hidden = true\n"
        "        permission = public\n"
        "        customData = { bool x = 1 }\n"
        "    )\n"
        "    config int c = 1\n"
        "    double d = None\n"
        "    double d.timeSamples = { 2: 20, 1: None, 2: 22, }\n"
        "    float u ( displayUnit = cm )\n"
        "    prepend double w.connect = </B.out>\n"
        "    opaque o\n"
        "    Transform legacy = ((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,0,0,1))\n"
        "    Vec3f old = (1, 2, 3)\n"
        "    Some::Thing weird = [a, (b, 1)]\n"
        "}\n"));
    ub_prop *t = prop("/A", "t");
    CU_ASSERT(t->custom);
    CU_ASSERT_EQUAL(t->variability, UB_UNIFORM);
    CU_ASSERT(t->is_array);
    CU_ASSERT_EQUAL(ub_prop_type(t)->id, UB_TY_TOKEN);
    CU_ASSERT_EQUAL(t->default_value.count, 2);
    CU_ASSERT_STRING_EQUAL(str0(meta(ub_prop_meta(t), "doc")), "d");
    CU_ASSERT_EQUAL(meta(ub_prop_meta(t), "allowedTokens")->count, 2);
    CU_ASSERT_EQUAL(prop("/A", "c")->variability, UB_CONFIG);
    ub_prop *d = prop("/A", "d");
    CU_ASSERT_EQUAL(d->default_value.kind, UB_V_BLOCK);
    CU_ASSERT(ub_prop_samples(d)->authored);
    CU_ASSERT_EQUAL_FATAL(ub_prop_samples(d)->n, 2);
    CU_ASSERT_EQUAL(ub_prop_samples(d)->v[0].time, 1.0);
    CU_ASSERT_EQUAL(ub_prop_samples(d)->v[0].value.kind, UB_V_BLOCK);
    CU_ASSERT_EQUAL(D(&ub_prop_samples(d)->v[1].value, 0),
                    22.0); /* last wins */
    CU_ASSERT_STRING_EQUAL(
        str0(meta(ub_prop_meta(prop("/A", "u")), "displayUnit")), "cm");
    ub_prop *w = prop("/A", "w");
    CU_ASSERT(ub_prop_connections(w)->u.listop->has[UB_LO_PREPEND]);
    CU_ASSERT_EQUAL(ub_prop_type(prop("/A", "o"))->id, UB_TY_OPAQUE);
    ub_prop *lg = prop("/A", "legacy");
    CU_ASSERT_STRING_EQUAL(ub_prop_type_spelling(lg), "Transform");
    CU_ASSERT_EQUAL(ub_prop_type(lg)->id, UB_TY_MATRIX4D);
    CU_ASSERT_EQUAL(D(&lg->default_value, 15), 1.0);
    CU_ASSERT_STRING_EQUAL(ub_prop_type_spelling(prop("/A", "old")), "float3");
    ub_prop *wd = prop("/A", "weird");
    CU_ASSERT_PTR_NULL(ub_prop_type(wd));
    CU_ASSERT_STRING_EQUAL(ub_prop_type_spelling(wd), "Some::Thing");
    CU_ASSERT_EQUAL(wd->default_value.kind, UB_V_UNTYPED);
}

static void test_relationships(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" {\n"
        "    rel a\n"
        "    custom rel b = None\n"
        "    varying rel c = </X> ( noLoadHint = true; doc = \"r\" )\n"
        "    prepend rel d = [</P>, </Q>]\n"
        "    delete rel d = </R>\n"
        "    rel e.default = </D>\n"
        "    custom varying rel f = []\n"
        "}\n"));
    CU_ASSERT_EQUAL(prop("/A", "a")->kind, UB_REL);
    CU_ASSERT_EQUAL(ub_prop_targets(prop("/A", "a"))->kind, UB_V_EMPTY);
    ub_prop *b = prop("/A", "b");
    CU_ASSERT(b->custom);
    CU_ASSERT_EQUAL_FATAL(ub_prop_targets(b)->kind, UB_V_LISTOP);
    CU_ASSERT_EQUAL(
        ub_listop_get(ub_prop_targets(b)->u.listop, UB_LO_EXPLICIT)->count, 0);
    ub_prop *c = prop("/A", "c");
    CU_ASSERT(c->varying_keyword);
    CU_ASSERT_EQUAL(ub_value_type(meta(ub_prop_meta(c), "noLoadHint"))->id,
                    UB_TY_BOOL);
    ub_prop *d = prop("/A", "d");
    CU_ASSERT(ub_prop_targets(d)->u.listop->has[UB_LO_PREPEND]);
    CU_ASSERT(ub_prop_targets(d)->u.listop->has[UB_LO_DELETE]);
    CU_ASSERT_EQUAL(
        ub_listop_get(ub_prop_targets(d)->u.listop, UB_LO_PREPEND)->count, 2);
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A", "e")), S("/D"));
    ub_prop *f = prop("/A", "f");
    CU_ASSERT(f->custom && f->varying_keyword);
    CU_ASSERT(ub_prop_targets(f)->u.listop->is_explicit);
}

/* A relationship's default is a path value: Sdf keeps it as written (as
 * usdcat prints it), never made absolute as targets are. */
static void test_rel_default_as_written(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" {\n"
        "    def \"B\" {\n"
        "        rel a.default = <x/y.z>\n"
        "        rel b.default = <../.q>\n"
        "        rel c.default = <>\n"
        "        rel d.default = <.>\n"
        "        rel e.default = <../../../w>\n"
        "        rel f.default = </A/B>\n"
        "        rel g = <x>\n"
        "    }\n"
        "}\n"));
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A/B", "a")),
                        S("x/y.z"));
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A/B", "b")),
                        S("../.q"));
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A/B", "c")), S(""));
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A/B", "d")), S("."));
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A/B", "e")),
                        S("../../../w"));
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A/B", "f")), S("/A/B"));
    /* (targets still are) */
    CU_ASSERT_PTR_EQUAL(
        ub_value_str(ub_listop_get(ub_prop_targets(prop("/A/B", "g"))->u.listop,
                                   UB_LO_EXPLICIT),
                     0),
        S("/A/B/x"));
    /* a path Sdf cannot read is an error, not a value */
    CU_ASSERT_PTR_NULL(parse("#usda 1.0\ndef \"A\" {\n"
                             "    rel a.default = <a/../b>\n}\n"));
}

static void test_variants(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" (\n"
        "    variants = { string v = \"x\" }\n"
        "    prepend variantSets = \"v\"\n"
        ") {\n"
        "    variantSet \"v\" = {\n"
        "        \"x\" ( doc = \"in x\" ) {\n"
        "            def \"Inner\" {\n"
        "                rel r = </A/Other>\n"
        "                double c.connect = <../.out>\n"
        "                variantSet \"w\" = { \"deep\" { } }\n"
        "            }\n"
        "        }\n"
        "        \"y\" { }\n"
        "        \".a-b|c\" { }\n"
        "    }\n"
        "}\n"));
    ub_prim *a = prim("/A");
    CU_ASSERT_EQUAL_FATAL(ub_prim_n_variant_sets(a), 1);
    ub_variant_set *vs = &ub_prim_variant_sets(a)[0];
    CU_ASSERT_STRING_EQUAL(vs->name, "v");
    /* variant names follow the path grammar: '.', '-' and '|' allowed */
    CU_ASSERT_EQUAL_FATAL(vs->variants.n, 3);
    ub_prim *x = vs->variants.v[0];
    CU_ASSERT_STRING_EQUAL(x->name, "x");
    CU_ASSERT_PTR_EQUAL(ub_prim_variant_set(x), S("v"));
    CU_ASSERT_STRING_EQUAL(str0(meta(&x->meta, "doc")), "in x");
    ub_prim *inner = child(x, "Inner");
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    CU_ASSERT_EQUAL(ub_prim_n_variant_sets(inner), 1);
    ub_prop *r = ub_prop_find(L, inner, S("r"));
    CU_ASSERT_PTR_EQUAL(explicit0(ub_prop_targets(r)), S("/A/Other"));
    /* a relative connection is anchored through the variant selection,
     * which OpenUSD strips (with a warning): /A.out */
    ub_prop *cn = ub_prop_find(L, inner, S("c"));
    CU_ASSERT_PTR_EQUAL(explicit0(ub_prop_connections(cn)), S("/A.out"));
    CU_ASSERT_STRING_EQUAL(ub_prim_path(L, inner), "/A{v=x}Inner");
    /* a relative target, inherit or specializes path there keeps it:
     * OpenUSD 24.08 refuses the layer */
    reject("#usda 1.0\ndef \"A\" {\n    variantSet \"v\" = {\n        \"x\" {\n"
           "            def \"I\" {\n                rel r = <../Other>\n"
           "            }\n        }\n    }\n}\n",
           6, 25, "<../Other> is relative, and inside a variant");
    reject("#usda 1.0\ndef \"A\" {\n    variantSet \"v\" = {\n        \"x\" {\n"
           "            def \"I\" (\n                inherits = <../B>\n"
           "            ) {\n            }\n        }\n    }\n}\n",
           6, 28, "inherit paths cannot contain variant selections");
    /* a variant's own paths are anchored at its prim */
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\ndef \"A\" {\n    variantSet \"v\" = {\n        \"x\" (\n"
        "            inherits = <../B>\n        ) {\n"
        "            rel s = <.>\n        }\n    }\n}\n"));
    x = ub_prim_variant_sets(prim("/A"))[0].variants.v[0];
    CU_ASSERT_PTR_EQUAL(explicit0(meta(&x->meta, "inherits")), S("/B"));
    CU_ASSERT_PTR_EQUAL(explicit0(ub_prop_targets(ub_prop_find(L, x, S("s")))),
                        S("/A"));
}

static void test_cookie_and_legacy(void)
{
    CU_ASSERT_PTR_NOT_NULL(parse("#sdf 1.4.32\ndef \"A\" {}\n"));
    CU_ASSERT_PTR_NOT_NULL(parse("#usda 1.0"));
    /* another version reads as 1.0, with a warning, as in OpenUSD */
    CU_ASSERT_PTR_NOT_NULL(parse("#usda 2.0\ndef \"A\" {}\n"));
    CU_ASSERT_EQUAL(ub_diags_count(diags), 1);
    if (ub_diags_count(diags) == 1) {
        const ub_diag *d = ub_diags_at(diags, 0);
        CU_ASSERT_EQUAL(d->severity, UB_WARNING);
        CU_ASSERT_PTR_NOT_NULL(strstr(d->message, "usda version '2.0'"));
    }
    CU_ASSERT_PTR_NOT_NULL(parse("#usda 1.0  \ndef \"A\" {}\n"));
    CU_ASSERT_EQUAL(ub_diags_count(diags), 0);
    reject("#usda\n", 1, 1, "#usda 1.0");
    reject("#usdax 1.0\n", 1, 1, "#usda 1.0");
    reject("def \"A\" {}\n", 1, 1, "#usda 1.0");
    reject("", 1, 1, "#usda 1.0");
}

/* OpenUSD 24.08 crashes on `relocates = { }` (a pure virtual call); the
 * empty map is valid syntax and means "no relocates", so it is accepted
 * (conformance case parse/148_relocates_empty_map). */
static void test_empty_relocates(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n(\n    relocates = {\n        # blank\n    }\n)\n"
        "def \"P\" ( relocates = { </P/a> : <b>, <c> : <> } ) { }\n"));
    const ub_value *r = meta(&prim("/P")->meta, "relocates");
    CU_ASSERT_EQUAL_FATAL(r->count, 4);
    CU_ASSERT_PTR_EQUAL(ub_value_str(r, 0), S("/P/a"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(r, 1), S("/P/b"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(r, 3), S(""));
}

/* Relocates paths are checked as authored, as OpenUSD's reader checks
 * them: "." and ".." are prim paths ("/" is not).  A layer's own "."
 * is the pseudo-root, which OpenUSD writes back as </> and then cannot
 * read: a located warning says so (found by fuzz_usda: the canonical
 * text of `def "A" ( relocates = { </A> : <b> } )` is `<.>: <b>`). */
static void test_relocates_dot(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\ndef \"A\" ( relocates = { <.> : <b>, <..> : <../c> } )"
        " { }\n"));
    const ub_value *r = meta(&prim("/A")->meta, "relocates");
    CU_ASSERT_EQUAL_FATAL(r->count, 4);
    CU_ASSERT_PTR_EQUAL(ub_value_str(r, 0), S("/A"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(r, 1), S("/A/b"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(r, 2), S("/"));
    CU_ASSERT_PTR_EQUAL(ub_value_str(r, 3), S("/c"));
    CU_ASSERT_EQUAL(ub_diags_count(diags), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(
        parse("#usda 1.0\n(\n    relocates = {\n        <.> : </B>\n    }\n)\n"));
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(diags), 1);
    const ub_diag *w = ub_diags_at(diags, 0);
    CU_ASSERT_EQUAL(w->severity, UB_WARNING);
    CU_ASSERT(w->loc.line == 4 && w->loc.col == 9);
    CU_ASSERT_PTR_NOT_NULL(strstr(w->message, "pseudo-root"));
    reject("#usda 1.0\n(\n    relocates = {\n        </> : </B>\n    }\n)\n",
           4, 9, "'/' is not a valid relocates path");
}

/* A layer offset too large for a double reads as inf, as in OpenUSD, and
 * +inf prints as `inf`, which no reader reads back there: a located
 * warning says so, at the number; -inf reads back, and is not warned of. */
static void test_offset_too_large(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(
        parse("#usda 1.0\n(\n    subLayers = [\n"
              "        @a.usda@ (offset = 1e400; scale = -1e999)\n    ]\n)\n"
              "def \"P\" (\n    references = @b.usda@ (scale = 1e309)\n)\n"
              "{\n}\n"));
    CU_ASSERT_EQUAL_FATAL(L->n_sublayers, 1);
    CU_ASSERT(isinf(L->sublayers[0].offset.offset) &&
              L->sublayers[0].offset.offset > 0);
    CU_ASSERT(isinf(L->sublayers[0].offset.scale) &&
              L->sublayers[0].offset.scale < 0);
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(diags), 2);
    const ub_diag *a = ub_diags_at(diags, 0), *b = ub_diags_at(diags, 1);
    CU_ASSERT(a->severity == UB_WARNING && b->severity == UB_WARNING);
    CU_ASSERT(a->loc.line == 4 && a->loc.col == 28);
    CU_ASSERT_PTR_NOT_NULL(strstr(a->message, "this offset is too large"));
    CU_ASSERT(b->loc.line == 8 && b->loc.col == 36);
    CU_ASSERT_PTR_NOT_NULL(strstr(b->message, "this scale is too large"));
}

/* A NUL byte, raw or escaped, ends a string, as usdcat writes it:
 * the rest is dropped with a located warning (found by fuzz_roundtrip:
 * the text writer dropped it silently and the crate writer wrote a token
 * table shifted by one). */
static void test_nul_in_string(void)
{
    static const char raw[] = "#usda 1.0\n(\n    doc = \"a\0bc\"\n)\n";
    const char *escaped[] = {
        "#usda 1.0\n(\n    doc = \"a\\x00bc\"\n)\n",
        "#usda 1.0\n(\n    doc = \"a\\0bc\"\n)\n",
        "#usda 1.0\n(\n    doc = \"\"\"a\\0bc\"\"\"\n)\n",
    };
    for (int i = 0; i < 4; i++) {
        const char *t = i ? escaped[i - 1] : raw;
        size_t n = i ? strlen(t) : sizeof raw - 1;
        CU_ASSERT_PTR_NOT_NULL_FATAL(parse_n(t, n));
        const ub_value *doc = meta(&L->meta, "doc");
        CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
        CU_ASSERT_PTR_EQUAL(ub_value_str(doc, 0), S("a"));
        CU_ASSERT_EQUAL_FATAL(ub_diags_count(diags), 1);
        const ub_diag *w = ub_diags_at(diags, 0);
        CU_ASSERT_EQUAL(w->severity, UB_WARNING);
        CU_ASSERT(w->loc.line == 3 && w->loc.col == 11);
        CU_ASSERT_PTR_NOT_NULL(strstr(w->message, "NUL byte ends this "
                                                  "string: the 2 bytes "
                                                  "after it are dropped"));
    }
}

/* A path kept as written -- a relationship's sample, an unknown type's
 * value -- that no path parses as reads as the empty path, with a
 * located warning, as OpenUSD reads it: kept, `<a\x3eb>` was "a>b",
 * which printed as text the reader refuses (and a `.usdb` of it was
 * refused as damaged). */
static void test_ill_formed_path_value(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse("#usda 1.0\ndef \"A\" {\n"
                                       "    rel r.timeSamples = {\n"
                                       "        1: <a\\x3eb>,\n"
                                       "        2: <a b>,\n"
                                       "        3: </A.r>,\n"
                                       "        4: <>,\n"
                                       "    }\n"
                                       "    myType x = <c\\\\d>\n"
                                       "}\n"));
    static const char *const want[] = {"", "", "/A.r", ""};
    const ub_samples *s = ub_prop_samples(prop("/A", "r"));
    CU_ASSERT_EQUAL_FATAL(s->n, 4);
    for (int i = 0; i < 4; i++) {
        const ub_value *v = &s->v[i].value;
        CU_ASSERT_EQUAL_FATAL(v->kind, UB_V_UNTYPED);
        CU_ASSERT_EQUAL(v->u.untyped->kind, UB_U_PATH);
        CU_ASSERT_PTR_EQUAL(v->u.untyped->text, S(want[i]));
    }
    const ub_value *x = &prop("/A", "x")->default_value;
    CU_ASSERT_EQUAL_FATAL(x->kind, UB_V_UNTYPED);
    CU_ASSERT_PTR_EQUAL(x->u.untyped->text, S(""));
    static const struct {
        unsigned line, col;
        const char *what;
    } warned[] = {{4, 12, "<a>b> is no well-formed path"},
                  {5, 12, "<a b> is no well-formed path"},
                  {9, 16, "<c\\d> is no well-formed path"}};
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(diags), 3);
    for (int i = 0; i < 3; i++) {
        const ub_diag *w = ub_diags_at(diags, (size_t)i);
        CU_ASSERT_EQUAL(w->severity, UB_WARNING);
        CU_ASSERT(w->loc.line == warned[i].line && w->loc.col == warned[i].col);
        CU_ASSERT_PTR_NOT_NULL(strstr(w->message, warned[i].what));
    }
    /* OpenUSD's path grammar also has mapper and expression paths, and a
     * target after a relational attribute: kept (as usdcat keeps them),
     * and what it does not take is <> */
    static const struct {
        const char *path;
        bool kept;
    } forms[] = {{"/A.b.mapper[/C.d]", true},
                 {"/A.b.expression", true},
                 {"/A.b[/C.d].mapper[/E.f]", true},
                 {"/A.b[/C].d[/E]", true},
                 {"/A.b.mapper[/C.d].arg", true},
                 {"/A.b.mapper[/C.d.mapper[/E]]", true},
                 {"/A.b.mapper[/C.d].arg.x", false},
                 {"/A.b.expression.x", false},
                 {"/A.b[/C].d[/E].f", false},
                 {"/A.b.mapper", false},
                 {"/A.b.mapper[]", false}};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char text[160];
        snprintf(text, sizeof text,
                 "#usda 1.0\ndef \"A\" {\n    rel r.timeSamples = { 1: <%s> "
                 "}\n}\n",
                 forms[i].path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(parse(text));
        const ub_value *v = &ub_prop_samples(prop("/A", "r"))->v[0].value;
        CU_ASSERT_PTR_EQUAL(v->u.untyped->text,
                            S(forms[i].kept ? forms[i].path : ""));
        CU_ASSERT_EQUAL(ub_diags_count(diags), forms[i].kept ? 0 : 1);
    }
}

/* A name or path with a NUL byte is refused, as OpenUSD checks it with
 * the NUL in it (usdbake had checked what was left before the NUL, and
 * read "\0" as a variant set named ""). */
static void test_nul_in_name(void)
{
    reject("#usda 1.0\ndef \"A\\0\" {\n}\n", 2, 5,
           "a prim name may not hold a NUL byte");
    reject("#usda 1.0\ndef \"A\" {\n    variantSet \"\\0\" = {\n"
           "        \"x\" {\n        }\n    }\n}\n",
           3, 16, "a variant set name may not hold a NUL byte");
    reject("#usda 1.0\ndef \"A\" {\n    variantSet \"v\" = {\n"
           "        \"x\\x00\" {\n        }\n    }\n}\n",
           4, 9, "a variant name may not hold a NUL byte");
    reject("#usda 1.0\ndef \"A\" (\n    variantSets = \"v\\0\"\n) {\n}\n", 3,
           19, "a variant set name may not hold a NUL byte");
    reject("#usda 1.0\ndef \"A\" (\n    variants = { string v = \"x\\0\" }\n"
           ") {\n}\n",
           3, 25, "variant selection 'v' may not hold a NUL byte");
    reject("#usda 1.0\ndef \"A\" (\n    references = </B\\0>\n) {\n}\n", 3,
           18, "a path may not hold a NUL byte");
    /* a string value equal to a name, cut short elsewhere, is no name */
    CU_ASSERT_PTR_NOT_NULL(parse("#usda 1.0\ndef \"x\" {\n"
                                 "    string s = \"x\\0y\"\n}\n"));
}

/* A variant named "" would share its variant set's path (OpenUSD's
 * reader loses the set; found by fuzz_roundtrip: its crate file held two
 * specs at one path).  A variant set named "" is OpenUSD's too. */
static void test_empty_variant_name(void)
{
    reject("#usda 1.0\ndef \"S\" {\n    variantSet \"v\" = {\n"
           "        \"a\" { }\n        \"\" { }\n    }\n}\n",
           5, 9, "a variant may not be named \"\"");
    CU_ASSERT_PTR_NOT_NULL(parse("#usda 1.0\ndef \"S\" {\n    variantSet \"\" = "
                                 "{\n        \"a\" { }\n    }\n}\n"));
}

/* A variant set given twice in one prim, or a variant twice in its set,
 * is an error: OpenUSD takes both silently, and then lists only the last
 * block's variants while composing every block's, or lists a variant
 * twice and keeps the second's properties only; usdbake had merged them.
 * Names compare after their escapes. */
static void test_duplicate_variants(void)
{
    reject("#usda 1.0\ndef \"P\" {\n    variantSet \"v\" = {\n"
           "        \"a\" { }\n    }\n    variantSet \"v\" = {\n"
           "        \"b\" { }\n    }\n}\n",
           6, 16, "duplicate variant set 'v' in </P> (first defined on line 3)");
    reject("#usda 1.0\ndef \"P\" {\n    variantSet \"v\" = {\n"
           "        \"a\" { }\n        \"\\x61\" { }\n    }\n}\n",
           5, 9, "duplicate variant 'a' in variant set 'v' of </P> (first "
           "defined on line 4)");
    /* inside a variant, its own prim: the same names are new there */
    CU_ASSERT_PTR_NOT_NULL(parse(
        "#usda 1.0\ndef \"P\" {\n    variantSet \"v\" = {\n"
        "        \"a\" {\n            variantSet \"v\" = {\n"
        "                \"a\" { }\n            }\n        }\n"
        "        \"b\" {\n            variantSet \"v\" = {\n"
        "                \"a\" { }\n            }\n        }\n"
        "    }\n    variantSet \"w\" = {\n        \"a\" { }\n    }\n}\n"));
}

/* A prim named "" is an error, and the parse goes on past it: a relative
 * path below it is made absolute through its empty name (it crashed
 * there; found by fuzz_roundtrip). */
static void test_empty_prim_name(void)
{
    reject("#usda 1.0\ndef Xform \"\" {\n    def \"B\" {\n"
           "        rel r = <../x>\n    }\n}\n",
           2, 11, "\"\" is not a valid prim name");
}

/* UB_MAX_NESTING levels of prims, variants and dictionaries read; one
 * more is one located error (and only that one), however deep the rest. */
/* sprintf at w; returns the end of what it wrote. */
static char *put(char *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsprintf(w, fmt, ap);
    va_end(ap);
    return w + (n > 0 ? n : 0);
}

static char *nested(int prims, int variants, int dicts)
{
    size_t cap = 64 + (size_t)(prims + variants) * 64 + (size_t)dicts * 40;
    char *t = malloc(cap), *w = t;
    if (!t)
        abort();
    w = put(w, "#usda 1.0\n");
    for (int i = 0; i < prims; i++)
        w = put(w, "def \"p%d\" {\n", i);
    for (int i = 0; i < variants; i++)
        w = put(w, "variantSet \"s\" = {\n\"v\" {\n");
    w = put(w, "def \"D\" (\ncustomData = {\n");
    for (int i = 0; i < dicts; i++)
        w = put(w, "dictionary d%d = {\n", i);
    w = put(w, "int x = 1\n");
    for (int i = 0; i < dicts; i++)
        w = put(w, "}\n");
    w = put(w, "}\n) {\n}\n");
    for (int i = 0; i < variants; i++)
        w = put(w, "}\n}\n");
    for (int i = 0; i < prims; i++)
        w = put(w, "}\n");
    return t;
}

static void test_nesting_limit(void)
{
    int m = UB_MAX_NESTING;
    /* the deepest layer read: m levels of prims and variants ("D" is the
     * last), m - 1 dictionaries inside customData */
    char *t = nested(m / 2, m / 2 - 1, m - 1);
    CU_ASSERT_PTR_NOT_NULL(parse(t));
    free(t);
    t = nested(m, 0, 0);
    reject(t, (unsigned)m + 2, 5, "nested more than 1000 levels deep");
    CU_ASSERT_EQUAL(ub_diags_count(diags), 1);
    free(t);
    t = nested(10 * m, 0, 0);
    reject(t, (unsigned)m + 2, 5, "prims and variants nested more than");
    CU_ASSERT_EQUAL(ub_diags_count(diags), 1);
    free(t);
    t = nested(m / 2, m / 2, 0);
    reject(t, (unsigned)(m / 2 + 1 + 2 * (m / 2) + 1), 5,
           "prims and variants nested more than");
    free(t);
    /* split in the middle, each half under the limit and the whole over
     * it: the two-thread parse reports what one thread does */
    t = nested(m + 100, 0, 0);
    for (int split = 0; split < 2; split++) {
        ub_layer_free(L);
        ub_diags_free(diags);
        diags = ub_diags_new();
        ub_parse_opts o = {.split = split ? 1 : -1,
                           .split_at = strlen(t) / 4};
        L = ub_parse_usda_opts(strtab, "t.usda", t, strlen(t), &o, diags);
        CU_ASSERT_PTR_NULL(L);
        CU_ASSERT_EQUAL_FATAL(ub_diags_count(diags), 1);
        CU_ASSERT_EQUAL(ub_diags_at(diags, 0)->loc.line, (unsigned)m + 2);
    }
    free(t);
    t = nested(1, 0, 3 * m);
    /* customData's braces and 999 dictionaries in it are 1000 levels */
    reject(t, (unsigned)(4 + m), 19, "dictionaries nested more than");
    CU_ASSERT_EQUAL(ub_diags_count(diags), 1);
    free(t);
}

/* A variant selection in a path: the set a variant set name (not ""),
 * the selection a variant name or "" -- the rule the crate reader holds
 * its path elements to. */
static void test_variant_selection_paths(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse(
        "#usda 1.0\n"
        "def \"A\" {\n"
        "    rel a.default = </A{a-b=x}B>\n"
        "    rel b.default = </A{v=}B>\n"
        "    rel c.default = </A{v|w=.x-y}B>\n"
        "}\n"));
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A", "a")),
                        S("/A{a-b=x}B"));
    CU_ASSERT_PTR_EQUAL(ub_prop_default_target(prop("/A", "c")),
                        S("/A{v|w=.x-y}B"));
    static const char *const bad[] = {"{=x}", "{\xc3\x97=x}", "{v=x=y}",
                                      "{v=x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char t[128];
        snprintf(t, sizeof t,
                 "#usda 1.0\ndef \"A\" {\n    rel a.default = </A%sB>\n}\n",
                 bad[i]);
        reject(t, 3, 21, "is not a valid path");
    }
}

/* s, times times, at t[*o] (of n bytes); *o moves past it */
static void put_times(char *t, size_t n, size_t *o, const char *s, int times)
{
    for (int i = 0; i < times; i++)
        *o += (size_t)snprintf(t + *o, n - *o, "%s", s);
}

/* "rel r = </A.r[/A.r[... depth ...[/B].a...].a>", the text malloc'd: a
 * relational attribute (a target, a property path, is no target) */
static char *nested_target(int depth)
{
    size_t n = 64 + (size_t)depth * 8, o = 0;
    char *t = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    put_times(t, n, &o, "#usda 1.0\ndef \"A\" {\n    rel r = <", 1);
    put_times(t, n, &o, "/A.r[", depth);
    put_times(t, n, &o, "/B", 1);
    put_times(t, n, &o, "].a", depth);
    put_times(t, n, &o, ">\n}\n", 1);
    return t;
}

/* Paths as deep as a layer may be: a target of the deepest prim, target
 * paths nested in target paths up to UB_PATH_MAX_TARGETS (each level is
 * split again: deeper ones are refused before they cost their length
 * times their depth, or a stack frame a level). */
static void test_deep_paths(void)
{
    int m = UB_MAX_NESTING - 1;
    size_t n = 64 + (size_t)m * 20, o = 0;
    char *t = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* m nested prims "p", the innermost targeting itself */
    put_times(t, n, &o, "#usda 1.0\n", 1);
    put_times(t, n, &o, "def \"p\" {\n", m);
    put_times(t, n, &o, "rel r = <", 1);
    put_times(t, n, &o, "/p", m);
    put_times(t, n, &o, ">\n", 1);
    put_times(t, n, &o, "}\n", m);
    CU_ASSERT_PTR_NOT_NULL(parse(t));
    free(t);

    t = nested_target(UB_PATH_MAX_TARGETS);
    CU_ASSERT_PTR_NOT_NULL(parse(t));
    free(t);
    t = nested_target(UB_PATH_MAX_TARGETS + 1);
    reject(t, 3, 13, "relationship target paths must be absolute");
    free(t);
    t = nested_target(200000);
    reject(t, 3, 13, "relationship target paths must be absolute");
    free(t);
}

/* An empty list as the first untyped value of a layer (found by
 * tests/fuzz/fuzz_usda.c: pointer arithmetic on a node buffer not yet
 * allocated, which UBSan reports). */
static void test_first_value_empty_list(void)
{
    CU_ASSERT_PTR_NOT_NULL(parse("#usda 1.0\ndef \"A\" (\n    myKey = []\n)"
                                 " {\n}\n"));
    CU_ASSERT_PTR_NOT_NULL(parse("#usda 1.0\ndef \"A\" {\n    int[] a = []"
                                 "\n}\n"));
}

/* --- errors -------------------------------------------------------------------- */

static void test_syntax_errors(void)
{
    reject("#usda 1.0\ndef \"A\" {\n    foobar baz qux\n}\n", 3, 16,
           "syntax error: unexpected identifier 'qux'");
    reject("#usda 1.0\nfoobar \"A\" {\n}\n", 2, 1, "expected");
    reject("#usda 1.0\n(\n    doc = \"unterminated\n)\n", 3, 11,
           "unterminated string");
    reject("#usda 1.0\ndef \"A\" { int a = 1 def \"B\" {} }\n", 2, 21,
           "unexpected 'def'");
    /* a block comment never closed: the rest of the layer is comment, as
     * for OpenUSD, said at the comment's start; inside a prim, the end
     * of the file is then the error */
    CU_ASSERT_PTR_NOT_NULL_FATAL(parse("#usda 1.0\ndef \"A\" {\n}\n"
                                       "  /* open\ndef \"B\" {\n}\n"));
    CU_ASSERT_PTR_NULL(ub_prim_find_child(L, L->root, S("B")));
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(diags), 1);
    const ub_diag *w = ub_diags_at(diags, 0);
    CU_ASSERT_EQUAL(w->severity, UB_WARNING);
    CU_ASSERT(w->loc.line == 4 && w->loc.col == 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(w->message, "unterminated comment"));
    reject("#usda 1.0\ndef \"A\" {\n  /* open\n}\n", 4, 2,
           "unexpected end of file");
    CU_ASSERT_EQUAL(ub_diags_count(diags), 2);
    reject("#usda 1.0\ndef \"A\" {\n    kind = model\n}\n", 3, 5,
           "unexpected 'kind', expected");
    reject("#usda 1.0\n(\n    startFrame = 1 endFrame = 2\n)\n", 3, 20,
           "unexpected identifier 'endFrame'");
    reject("#usda 1.0\ndef \"A\" { } ~\n", 2, 13, "unexpected character '~'");
}

static void test_value_errors(void)
{
    reject("#usda 1.0\ndef \"A\" {\n    int a = 2147483648\n}\n", 3, 13,
           "out of range for type 'int'");
    reject("#usda 1.0\ndef \"A\" {\n    uchar a = 256\n}\n", 3, 15,
           "out of range");
    reject("#usda 1.0\ndef \"A\" {\n    uint a = -1\n}\n", 3, 14,
           "out of range");
    reject("#usda 1.0\ndef \"A\" {\n    float a = foo\n}\n", 3, 15,
           "expected a number, found 'foo'");
    reject("#usda 1.0\ndef \"A\" {\n    string a = 1\n}\n", 3, 16,
           "expected a quoted string");
    reject("#usda 1.0\ndef \"A\" {\n    float3 a = (1, 2)\n}\n", 3, 21,
           "expected 3 values, found 2");
    reject("#usda 1.0\ndef \"A\" {\n    float3[] a = [(1, 2, 3), (1, 2)]\n}\n",
           3, 35, "expected 3 values, found 2");
    reject("#usda 1.0\ndef \"A\" {\n    float a = [1]\n}\n", 3, 15,
           "not an array");
    reject("#usda 1.0\ndef \"A\" {\n    float[] a = 1\n}\n", 3, 17,
           "is an array");
    reject("#usda 1.0\ndef \"A\" {\n    int[] a = [1, [2]]\n}\n", 3, 19,
           "nested lists");
    reject("#usda 1.0\ndef \"A\" {\n    matrix2d m = ((1, 2), (3))\n}\n", 3,
           29, "a row has 1 values");
    reject("#usda 1.0\ndef \"A\" {\n    opaque o = 1\n}\n", 3, 16,
           "cannot have an authored value");
    reject("#usda 1.0\ndef \"A\" (\n    hidden = maybe\n) {}\n", 3, 14,
           "expected a boolean");
    reject("#usda 1.0\ndef \"A\" (\n    customData = 5\n) {}\n", 3, 5,
           "expected a dictionary");
    /* a dictionary where a typed field wants a value: the field's type,
     * not that of the dictionary's last entry */
    reject("#usda 1.0\ndef \"A\" (\n    instanceable = {\n        string x "
           "= \"b\"\n    }\n) {}\n", 3, 5,
           "'instanceable': expected a boolean (true, false, 1 or 0), found "
           "a dictionary");
    reject("#usda 1.0\ndef \"A\" (\n    apiSchemas = {\n        int x = 1\n"
           "    }\n) {}\n", 3, 5,
           "'apiSchemas': expected a list '[...]', found a dictionary");
    reject("#usda 1.0\ndef \"A\" (\n    foo = (1, 2), (3, 4)\n) {}\n", 3, 17,
           "unexpected ','");
}

static void test_semantic_errors(void)
{
    reject("#usda 1.0\ndef \"A\" {}\ndef \"A\" {}\n", 3, 5,
           "duplicate prim '/A'");
    /* a diagnostic is one line: what it quotes has its control
     * characters escaped */
    reject("#usda 1.0\ndef Xform \"\\n\" {\n}\n", 2, 11,
           "\"\\n\" is not a valid prim name");
    reject("#usda 1.0\ndef \"\\t\\x01\" {\n}\n", 2, 5,
           "\"\\t\\x01\" is not a valid prim name");
    reject("#usda 1.0\ndef \"A\" {\n    bool a = 1\n    string a.timeSamples "
           "= {}\n}\n", 4, 12,
           "already has type 'bool'");
    reject("#usda 1.0\ndef \"A\" {\n    float a = 1\n    uniform float a = 1\n}\n",
           4, 19, "already has variability 'varying'");
    reject("#usda 1.0\ndef \"A\" (\n    permission = bogus\n) {}\n", 3, 18,
           "not a valid permission");
    reject("#usda 1.0\ndef \"A\" {\n    float a (displayUnit = parsec)\n}\n",
           3, 28, "not a valid display unit");
    reject("#usda 1.0\ndef \"A\" (\n    references = @@</X>\n) {}\n", 3, 18,
           "must not be empty");
    reject("#usda 1.0\ndef \"A\" (\n    prepend payload = None\n) {}\n", 3, 23,
           "only allowed for an explicit list");
    reject("#usda 1.0\ndef \"A\" {\n    prepend rel r = []\n}\n", 3, 22,
           "only allowed for an explicit list");
    reject("#usda 1.0\ndef \"A\" {\n    rel r = [</a>, </b>, </a>]\n}\n", 3, 14,
           "duplicate items");
    reject("#usda 1.0\ndef \"A\" {\n    rel r = </X{v=a}Y>\n}\n", 3, 13,
           "variant selections");
    /* OpenUSD refuses a connection with a variant selection too */
    reject("#usda 1.0\ndef \"A\" {\n    int c.connect = </X{v=a}Y.z>\n}\n",
           3, 21, "connection paths cannot contain variant selections");
    /* a target path (a property's target) is neither a prim nor a
     * property: OpenUSD refuses it as a target and as a connection; a
     * relational attribute is a property */
    reject("#usda 1.0\ndef \"A\" {\n    rel r = </X.r[/Y]>\n}\n", 3, 13,
           "it names a target of a property");
    reject("#usda 1.0\ndef \"A\" {\n    int c.connect = [</X.c>, "
           "</X/B.r[/X/C/D]>]\n}\n",
           3, 30, "it names a target of a property");
    CU_ASSERT_PTR_NOT_NULL(
        parse("#usda 1.0\ndef \"A\" {\n    rel r = </X.r[/Y].a>\n}\n"));
    /* both: the variant selection is said, as OpenUSD says it */
    reject("#usda 1.0\ndef \"A\" {\n    rel r = </X{v=a}.r[/Y]>\n}\n", 3,
           13, "cannot contain variant selections");
    /* "``" alone is no expression */
    reject("#usda 1.0\ndef \"A\" (\n    variants = { string v = \"``\" }\n) {}\n",
           3, 25, "nor a variable expression");
    reject("#usda 1.0\ndef \"A\" (\n    inherits = </B.attr>\n) {}\n", 3, 16,
           "must be prim paths");
    reject("#usda 1.0\ndef \"A\" (\n    inherits = <../../B>\n) {}\n", 3, 16,
           "leaves the root");
    reject("#usda 1.0\ndef \"A\" {\n    variantSet \"v\" = {\n        \"bad:name\" "
           "{ }\n    }\n}\n", 4, 9, "not a valid variant name");
    reject("#usda 1.0\ndef \"A\" (\n    variants = { string v = \"a.b\" }\n) {}\n",
           3, 25, "not a valid variant name");
    reject("#usda 1.0\ndef \"A\" (\n    relocates = { <> : </b> }\n) {}\n", 3,
           19, "not a valid relocates path");
    reject("#usda 1.0\n(\n    subLayers = [@a\x01.usda@]\n)\n", 3, 18,
           "control characters");
    /* asset paths as OpenUSD holds them: UTF-8 sequences with all their
     * continuation bytes, no C1 control (U+0085 here) */
    reject("#usda 1.0\ndef \"A\" {\n    asset a = @x\xff.usda@\n}\n", 3, 15,
           "asset paths must be UTF-8: '@x\xff.usda@'");
    reject("#usda 1.0\ndef \"A\" {\n    asset a = @@@y\xe6\x83@@@\n}\n", 3,
           15, "asset paths must be UTF-8: '@@@y\xe6\x83@@@'");
    reject("#usda 1.0\ndef \"A\" {\n    asset a = @\xc2\x85@\n}\n", 3, 15,
           "control characters");
    CU_ASSERT_PTR_NOT_NULL(parse("#usda 1.0\ndef \"A\" {\n    asset a = "
                                 "@x\xc3\xa9\xe6\x83\x85/\xf0\x9f\x98\x80@\n}\n"));
    reject("#usda 1.0\n(\n    framesPerSecond = 0\n)\n", 3, 5,
           "greater than 0");
    reject("#usda 1.0\ndef \"P\"\n{\n    opaque[] x\n}\n", 4, 5,
           "type 'opaque' has no array form");
    /* None is a value only for list ops and fields OpenUSD does not know
     * on that kind of spec; a known field refuses it, as OpenUSD does */
    reject("#usda 1.0\ndef \"A\" (\n    instanceable = None\n) {}\n", 3, 20,
           "field 'instanceable': expected a value of type 'bool', found "
           "None");
    reject("#usda 1.0\n(\n    customLayerData = None\n)\n", 3, 23,
           "expected a dictionary");
    reject("#usda 1.0\ndef \"A\" (\n    displayGroupOrder = None\n) {}\n",
           3, 25, "type 'string[]', found None");
    reject("#usda 1.0\ndef \"A\" {\n    rel r (\n        displayGroup = "
           "None\n    )\n}\n",
           4, 24, "field 'displayGroup': expected a value of type 'string'");
    /* <> after an asset path is refused (an internal <> is kept), and
     * the list it was in is not said to be empty as well */
    reject("#usda 1.0\ndef \"A\" (\n    prepend payload = @a.usda@<>\n) {}\n",
           3, 31, "<> is not a valid prim path");
    CU_ASSERT_EQUAL(ub_diags_count(diags), 1);
    reject("#usda 1.0\ndef \"A\" (\n    prepend references = @@\n) {}\n",
           3, 26, "must not be empty");
    CU_ASSERT_EQUAL(ub_diags_count(diags), 1);
    CU_ASSERT_PTR_NOT_NULL(
        parse("#usda 1.0\ndef \"A\" (\n    references = <>\n) {}\n"));
    /* a default of an unknown type is kept as text; samples are not, and
     * a relationship's samples are paths (OpenUSD refuses the rest) */
    reject("#usda 1.0\ndef \"A\" {\n    doubl a.timeSamples = { 1: 1.0 }\n}\n",
           3, 32, "unknown attribute type 'doubl'");
    reject("#usda 1.0\ndef \"A\" {\n    rel r.timeSamples = { 1: 300 }\n}\n",
           3, 30, "time samples are paths");
    L = parse("#usda 1.0\ndef \"A\" {\n    doubl a = 1\n    doubl b."
              "timeSamples = { 1: None }\n    rel r.timeSamples = { 1: </A>, "
              "2: None }\n}\n");
    CU_ASSERT_PTR_NOT_NULL(L);
    if (L) {
        const ub_prop *b = prop("/A", "b"), *r = prop("/A", "r");
        CU_ASSERT(b && ub_prop_samples(b)->n == 1);
        CU_ASSERT(r && ub_prop_samples(r)->n == 2);
    }
    L = parse("#usda 1.0\ndef \"A\" (\n    apiSchemas = None\n    foo = "
              "None\n) {\n    double a (\n        instanceable = None\n    "
              ")\n}\n");
    CU_ASSERT_PTR_NOT_NULL(L);
    if (L) {
        const ub_value *foo = meta(&prim("/A")->meta, "foo");
        const ub_value *ia = meta(ub_prop_meta(prop("/A", "a")), "instanceable");
        const ub_value *api = meta(&prim("/A")->meta, "apiSchemas");
        CU_ASSERT(foo && foo->kind == UB_V_BLOCK);
        CU_ASSERT(ia && ia->kind == UB_V_BLOCK);
        CU_ASSERT(api && api->kind == UB_V_LISTOP);
    }
    reject("#usda 1.0\ndef \"A\" (\n    specifier = \"def\"\n) {}\n", 3, 5,
           "'specifier' is not metadata");
    reject("#usda 1.0\ndef \"A\" (\n    references = @a.usda@<B>\n) {}\n", 3, 26,
           "empty or absolute");
}

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

static const test_case cases[] = {
    {"scanner: strings and escapes", test_strings},
    {"scanner: names alike to the intern cache", test_intern_cache_collision},
    {"scanner: assets and paths", test_assets_and_paths},
    {"scanner: comments", test_comments},
    {"scanner: numbers to declared types", test_numbers},
    {"scanner: number runs", test_number_runs},
    {"scanner: number runs longer than a buffer", test_long_number_runs},
    {"scanner: a run's numbers stored as read", test_number_runs_stored},
    {"progress reports", test_progress},
    {"end of file: where it is reported", test_end_of_file_location},
    {"scanner: UTF-8 identifiers", test_utf8_identifiers},
    {"layer metadata", test_layer_metadata},
    {"prims and prim metadata", test_prims},
    {"typeName metadata is the prim's type", test_type_name_metadata},
    {"list ops", test_list_ops},
    {"attributes", test_attributes},
    {"relationships", test_relationships},
    {"rel default as written", test_rel_default_as_written},
    {"variant sets", test_variants},
    {"cookie", test_cookie_and_legacy},
    {"empty relocates", test_empty_relocates},
    {"relocates: '.' and '..'", test_relocates_dot},
    {"a layer offset too large for a double", test_offset_too_large},
    {"a NUL ends a string", test_nul_in_string},
    {"a NUL in a name or path is refused", test_nul_in_name},
    {"a variant named \"\"", test_empty_variant_name},
    {"a variant set or variant given twice", test_duplicate_variants},
    {"a prim named \"\" with paths below it", test_empty_prim_name},
    {"nesting limit", test_nesting_limit},
    {"deep paths and nested targets", test_deep_paths},
    {"variant selections in paths", test_variant_selection_paths},
    {"an empty list first", test_first_value_empty_list},
    {"errors: syntax", test_syntax_errors},
    {"errors: values", test_value_errors},
    {"errors: semantics", test_semantic_errors},
    {"variant selection expressions", test_variant_selection_expression},
    {"path expressions", test_path_expressions},
    {"ill-formed path values", test_ill_formed_path_value},
};

int main(void)
{
    strtab = ub_strtab_new();
    if (!strtab || CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("parse", NULL, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CU_add_test(s, cases[i].name, cases[i].fn);
    unsigned failed = ub_test_run_all();
    ub_layer_free(L);
    ub_diags_free(diags);
    ub_strtab_free(strtab);
    return failed ? 1 : 0;
}
