/* Unit tests of the crate writer: the file's frame (bootstrap, table of
 * contents, sections), the version it chooses, deduplication, inlining,
 * determinism and refusals.  Whether OpenUSD reads the files as the same
 * layer is tests/usdc-oracle.sh's part (it needs OpenUSD). */
#define _GNU_SOURCE /* sched_setaffinity */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_crate.h"
#include "ub_crate_codec.h"
#include "ub_crate_encode.h"
#include "ub_crate_format.h"
#include "ub_parse.h"
#include "ub_usda.h"
#include "ub_usdc_write.h"
#include "kept_samples.h"
#include "pin_cpu.h"
#include "same_diags.h"
#include "ub_test.h"

static ub_strtab *strtab;

/* Parse text and write it as crate into out; returns the writer's status
 * (-2 when the text does not parse). */
static int write_text(const char *text, ub_buf *out, ub_diags *d)
{
    ub_layer *l = ub_parse_usda(strtab, "t.usda", text, strlen(text), d);
    if (!l)
        return -2;
    int r = ub_usdc_write(l, out, d);
    ub_layer_free(l);
    return r;
}

/* Parse text, which must parse, into *l; its root prim `name`, which
 * must be there. */
static ub_prim *parsed_prim(const char *text, const char *name, ub_layer **l,
                            ub_diags *d)
{
    *l = ub_parse_usda(strtab, "t.usda", text, strlen(text), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*l);
    ub_prim *p =
        ub_prim_find_child(*l, (*l)->root, ub_intern_cstr(strtab, name));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

/* Whether layers a and b print as the same text. */
static bool same_usda(const ub_layer *a, const ub_layer *b)
{
    ub_buf x, y;
    ub_buf_init(&x);
    ub_buf_init(&y);
    bool same = ub_usda_write(a, &x) == 0 && ub_usda_write(b, &y) == 0 &&
                x.len == y.len && memcmp(x.data, y.data, x.len) == 0;
    ub_buf_free(&x);
    ub_buf_free(&y);
    return same;
}

static uint64_t u64_at(const ub_buf *b, size_t off)
{
    uint64_t x = 0;
    if (off + 8 <= b->len)
        memcpy(&x, b->data + off, 8);
    return x;
}

static uint32_t version_of(const ub_buf *b)
{
    const unsigned char *p = (const unsigned char *)b->data;
    return UB_CRATE_VERSION(p[8], p[9], p[10]);
}

static const char *simple =
    "#usda 1.0\n(\n    defaultPrim = \"A\"\n)\n\n"
    "def Xform \"A\"\n{\n    float x = 1.5\n    int[] ids = [1, 2, 3]\n}\n";

static void test_frame(void)
{
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(simple, &b, d), 0);
    CU_ASSERT(memcmp(b.data, UB_CRATE_IDENT, UB_CRATE_IDENT_LEN) == 0);
    CU_ASSERT_EQUAL(version_of(&b), UB_CRATE_VERSION(0, 8, 0));
    /* the table of contents: 6 sections in OpenUSD's order, each inside
     * the file and after the bootstrap, one after another */
    uint64_t toc = u64_at(&b, 16);
    CU_ASSERT_FATAL(toc >= UB_CRATE_BOOTSTRAP_SIZE && toc + 8 <= b.len);
    CU_ASSERT_EQUAL_FATAL(u64_at(&b, toc), 6);
    CU_ASSERT_EQUAL(toc + 8 + 6 * UB_CRATE_SECTION_ENTRY_SIZE, b.len);
    static const char *names[6] = {
        UB_CRATE_SEC_TOKENS, UB_CRATE_SEC_STRINGS, UB_CRATE_SEC_FIELDS,
        UB_CRATE_SEC_FIELDSETS, UB_CRATE_SEC_PATHS, UB_CRATE_SEC_SPECS};
    uint64_t end = 0;
    for (int i = 0; i < 6; i++) {
        size_t e = toc + 8 + (size_t)i * UB_CRATE_SECTION_ENTRY_SIZE;
        CU_ASSERT_STRING_EQUAL(b.data + e, names[i]);
        uint64_t start = u64_at(&b, e + 16), size = u64_at(&b, e + 24);
        CU_ASSERT(start >= UB_CRATE_BOOTSTRAP_SIZE);
        CU_ASSERT(i == 0 || start == end);
        end = start + size;
    }
    CU_ASSERT_EQUAL(end, toc);
    /* the bootstrap's reserved bytes are zero */
    for (size_t i = 24; i < UB_CRATE_BOOTSTRAP_SIZE; i++)
        CU_ASSERT_EQUAL(b.data[i], 0);
    ub_buf_free(&b);
    ub_diags_free(d);
}

static void expect_version(const char *text, uint32_t want)
{
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
    CU_ASSERT_EQUAL(version_of(&b), want);
    ub_buf_free(&b);
    ub_diags_free(d);
}

/* Newer versions only when the layer needs them. */
static void test_versions(void)
{
    expect_version("#usda 1.0\ndef \"A\" {\n timecode t = 3\n}\n",
                   UB_CRATE_VERSION(0, 9, 0));
    expect_version("#usda 1.0\ndef \"A\" {\n timecode[] t = [1, 2]\n}\n",
                   UB_CRATE_VERSION(0, 9, 0));
    expect_version("#usda 1.0\ndef \"A\" {\n double t.timeSamples = "
                   "{ 1: 2 }\n}\n",
                   UB_CRATE_VERSION(0, 8, 0));
    expect_version("#usda 1.0\ndef \"A\" {\n pathExpression e = \"/A\"\n}\n",
                   UB_CRATE_VERSION(0, 10, 0));
    expect_version("#usda 1.0\n(\n    relocates = {\n        </A/B>: </A/C>\n"
                   "    }\n)\n",
                   UB_CRATE_VERSION(0, 11, 0));
    expect_version("#usda 1.0\ndef \"A\" (\n    payload = @p.usda@\n)\n{\n}\n",
                   UB_CRATE_VERSION(0, 8, 0));
}

static size_t size_of(const char *text)
{
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    int r = write_text(text, &b, d);
    CU_ASSERT_EQUAL(r, 0);
    size_t n = b.len;
    ub_buf_free(&b);
    ub_diags_free(d);
    return n;
}

/* A repeated array is stored once: two equal 64-point arrays cost about
 * as much as one, two different ones about twice. */
static void test_dedup(void)
{
    char pts[2][4096];
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        n += (size_t)snprintf(pts[k] + n, sizeof pts[k] - n, "[");
        for (int i = 0; i < 64; i++)
            n += (size_t)snprintf(pts[k] + n, sizeof pts[k] - n,
                                  "%s(%d.5, %d.25, %d.125)", i ? ", " : "",
                                  i + k, i * 3, i * 7);
        snprintf(pts[k] + n, sizeof pts[k] - n, "]");
    }
    char one[10000], same[10000], diff[10000];
    snprintf(one, sizeof one,
             "#usda 1.0\ndef \"A\" {\npoint3f[] p = %s\n}\n", pts[0]);
    snprintf(same, sizeof same,
             "#usda 1.0\ndef \"A\" {\npoint3f[] p = %s\n"
             "point3f[] q = %s\n}\n", pts[0], pts[0]);
    snprintf(diff, sizeof diff,
             "#usda 1.0\ndef \"A\" {\npoint3f[] p = %s\n"
             "point3f[] q = %s\n}\n", pts[0], pts[1]);
    size_t s1 = size_of(one), s2 = size_of(same), s3 = size_of(diff);
    size_t arr = 64 * 12;
    CU_ASSERT(s2 < s1 + arr / 4);
    CU_ASSERT(s3 >= s1 + arr);
}

static char *read_back(const ub_buf *b);

/* A short value met again is stored once, found in the walk's cache of
 * values met last; a value of another type with the same bytes is not
 * that value (float2 and int2, double and int64, one after the other,
 * each pair's bytes the same). */
static void test_short_repeats(void)
{
    static const char text[] =
        "#usda 1.0\n\ndef \"P\"\n{\n"
        "    float2 a = (1.5, 2.25)\n"
        "    int2 b = (1069547520, 1074790400)\n"
        "    double c = 0.1\n"
        "    int64 d = 4591870180066957722\n"
        "}\n\n";
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
    char *back = read_back(&b);
    CU_ASSERT_STRING_EQUAL(back, text);
    free(back);
    ub_buf_free(&b);

    /* the same short value in 500 prims: one copy of its bytes, where
     * 500 distinct ones take 8 bytes each */
    ub_buf t;
    ub_buf_init(&t);
    size_t size[2];
    for (int k = 0; k < 2; k++) {
        t.len = 0;
        ub_buf_puts(&t, "#usda 1.0\n");
        for (int i = 0; i < 500; i++)
            ub_buf_printf(&t, "def \"P%d\"\n{\n    double x = 0.%d1\n}\n",
                          i, k ? i : 0);
        ub_buf_putc(&t, '\0');
        size[k] = size_of(t.data);
    }
    CU_ASSERT(size[1] >= size[0] + 499 * 8);
    ub_buf_free(&t);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_diags_free(d);
}

/* Small values live in the rep: a layer of inlinable defaults holds no
 * value bytes between the bootstrap and the first section, except the
 * name lists (token vectors) that are never inlined. */
static void test_inlined(void)
{
    const char *a = "#usda 1.0\ndef \"A\" {\nfloat f = 1.5\n"
                    "double d = 0.25\nint3 v = (1, -2, 3)\n"
                    "matrix2d m = ((2, 0), (0, 2))\nbool b = 1\n}\n";
    const char *b = "#usda 1.0\ndef \"A\" {\nfloat f = 2.5\n"
                    "double d = 0.1\nint3 v = (1000, -2, 3)\n"
                    "matrix2d m = ((2, 1), (0, 2))\nbool b = 0\n}\n";
    ub_diags *d = ub_diags_new();
    ub_buf x, y;
    ub_buf_init(&x);
    ub_buf_init(&y);
    CU_ASSERT_EQUAL_FATAL(write_text(a, &x, d), 0);
    CU_ASSERT_EQUAL_FATAL(write_text(b, &y, d), 0);
    /* the tokens section starts where the values end */
    size_t tx = u64_at(&x, u64_at(&x, 16) + 8 + 16);
    size_t ty = u64_at(&y, u64_at(&y, 16) + 8 + 16);
    /* b's double (not a float), int3 (not int8) and matrix (not
     * diagonal) go out of line: 8 + 12 + 32 bytes */
    CU_ASSERT_EQUAL(ty - tx, 8 + 12 + 32);
    ub_buf_free(&x);
    ub_buf_free(&y);
    ub_diags_free(d);
}

/* One payload set explicitly is stored as a lone payload (no list op
 * header or count: 9 bytes less), as OpenUSD stores it, and reads back as
 * the same explicit list; an internal payload or a list of two keeps the
 * list op. */
static void test_lone_payload(void)
{
    static const char *const texts[] = {
        "#usda 1.0\ndef \"A\" (\n    payload = @p.usda@</X> (offset = 3; "
        "scale = 2)\n)\n{\n}\n",
        "#usda 1.0\ndef \"A\" (\n    payload = </X>\n)\n{\n}\n",
        "#usda 1.0\ndef \"A\" (\n    payload = [@p.usda@, @q.usda@]\n)\n{\n"
        "}\n",
    };
    const size_t lone_bytes = 4 + 4 + 8 + 8;
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        ub_diags *d = ub_diags_new();
        ub_buf b;
        ub_buf_init(&b);
        CU_ASSERT_EQUAL_FATAL(write_text(texts[k], &b, d), 0);
        /* the values: from the bootstrap to the first section */
        size_t values = u64_at(&b, u64_at(&b, 16) + 8 + 16) - 88;
        /* the payload, then primChildren's token vector (8 + 4) */
        size_t payload = values - 12;
        CU_ASSERT_EQUAL(payload, k == 0 ? lone_bytes
                                        : 1 + 8 + k * lone_bytes);
        char *t = read_back(&b);
        CU_ASSERT_PTR_NOT_NULL(strstr(t, k == 0 ? "payload = @p.usda@</X> "
                                                  "(offset = 3; scale = 2)"
                                       : k == 1 ? "payload = </X>"
                                                : "payload = [\n        "
                                                  "@p.usda@,\n        "
                                                  "@q.usda@\n    ]"));
        free(t);
        ub_buf_free(&b);
        ub_diags_free(d);
    }
}

/* The start of section `name` in a written file (0: none). */
static uint64_t section_at(const ub_buf *b, const char *name)
{
    uint64_t toc = u64_at(b, 16);
    for (int i = 0; i < 6; i++) {
        size_t e = toc + 8 + (size_t)i * UB_CRATE_SECTION_ENTRY_SIZE;
        if (e + UB_CRATE_SECTION_ENTRY_SIZE <= b->len &&
            strcmp(b->data + e, name) == 0)
            return u64_at(b, e + 16);
    }
    return 0;
}

/* The number of paths in the PATHS section (its first word). */
static uint64_t path_count(const ub_buf *b)
{
    uint64_t at = section_at(b, UB_CRATE_SEC_PATHS);
    return at ? u64_at(b, at) : 0;
}

/* The SPECS section's path indices, malloc'd (*n of them). */
static uint32_t *spec_paths(const ub_buf *b, size_t *n)
{
    uint64_t at = section_at(b, UB_CRATE_SEC_SPECS);
    *n = at ? (size_t)u64_at(b, at) : 0;
    if (!*n)
        return NULL;
    uint64_t csize = u64_at(b, at + 8);
    uint32_t *v = malloc(*n * sizeof *v);
    const char *why = NULL;
    if (!v || ub_crate_ints(b->data + at + 16, (size_t)csize, *n, 4, v,
                            &why) != 0) {
        free(v);
        *n = 0;
        return NULL;
    }
    return v;
}

/* Prims' specs by path index, ascending: a prim closes (and is stored)
 * after its children, but its path was numbered before theirs, so the
 * SPECS path list delta-codes as a run of small steps. */
static void test_spec_order(void)
{
    const char *text = "#usda 1.0\ndef \"A\" {\n    def \"B\" {\n"
                       "        def \"C\" {\n        }\n    }\n"
                       "    def \"D\" {\n    }\n}\ndef \"E\" {\n}\n";
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
    size_t n = 0;
    uint32_t *v = spec_paths(&b, &n);
    CU_ASSERT_EQUAL_FATAL(n, 6); /* the pseudo-root and five prims */
    for (size_t i = 1; i < n; i++)
        CU_ASSERT(v[i] > v[i - 1]);
    free(v);
    ub_buf_free(&b);
    ub_diags_free(d);
}

/* A path a relationship names before the walk meets its prim or property
 * (a forward target), or after (a backward one), is one path all the
 * same: /, /A, /A.r, /A.y, /B, /B/C, /B/C.x, /B/C.s, each once. */
static void test_paths_once(void)
{
    const char *t = "#usda 1.0\ndef \"A\" {\n    rel r = </B/C.x>\n"
                    "    float y = 1\n}\n"
                    "def \"B\" {\n    def \"C\" {\n        float x = 2\n"
                    "        rel s = </A.y>\n    }\n}\n";
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(t, &b, d), 0);
    CU_ASSERT_EQUAL(path_count(&b), 8);
    ub_buf_free(&b);
    ub_diags_free(d);
}

/* TOKENS decompressed: the tokens' text, NUL after each (malloc'd;
 * NULL if the section is not there or does not decompress). */
static char *tokens_text(const ub_buf *b, size_t *len)
{
    size_t at = section_at(b, UB_CRATE_SEC_TOKENS);
    if (!at)
        return NULL;
    size_t n = u64_at(b, at + 8), z = u64_at(b, at + 16);
    char *t = malloc(n + 1);
    const char *why;
    if (!t || at + 24 + z > b->len ||
        ub_crate_lz4(b->data + at + 24, z, t, n, &why) != 0) {
        free(t);
        return NULL;
    }
    *len = n;
    return t;
}

/* Write text, check that it reads back as the same layer, and give the
 * tokens in order as one string, '|' before and after each (malloc'd). */
static char *tokens_of_written(const char *text)
{
    ub_diags *d = ub_diags_new();
    ub_buf b, x, y;
    ub_buf_init(&b);
    ub_buf_init(&x);
    ub_buf_init(&y);
    char *bars = NULL;
    size_t n = 0;
    char *t = write_text(text, &b, d) == 0 ? tokens_text(&b, &n) : NULL;
    ub_layer *l = ub_parse_usda(strtab, "t.usda", text, strlen(text), d);
    ub_layer *back = t ? ub_crate_read(b.data, b.len, "t.usdc", strtab, d)
                       : NULL;
    CU_ASSERT_PTR_NOT_NULL(t);
    CU_ASSERT_PTR_NOT_NULL(back);
    if (l && back && ub_usda_write(l, &x) == 0 &&
        ub_usda_write(back, &y) == 0)
        CU_ASSERT(x.len == y.len && memcmp(x.data, y.data, x.len) == 0);
    if (t && (bars = malloc(n + 2))) {
        bars[0] = '|';
        for (size_t i = 0; i < n; i++)
            bars[i + 1] = t[i] ? t[i] : '|';
        bars[n + 1] = '\0';
    }
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    free(t);
    ub_layer_free(l);
    ub_layer_free(back);
    ub_buf_free(&b);
    ub_buf_free(&x);
    ub_buf_free(&y);
    ub_diags_free(d);
    return bars;
}

/* Whether token a comes before token b in bars (tokens_of_written). */
static bool token_before(const char *bars, const char *a, const char *b)
{
    char ka[64], kb[64];
    snprintf(ka, sizeof ka, "|%s|", a);
    snprintf(kb, sizeof kb, "|%s|", b);
    const char *pa = strstr(bars, ka), *pb = strstr(bars, kb);
    return pa && pb && pa < pb;
}

/* Each prim's name is numbered with its siblings', in their order, when
 * their parent's primChildren names them -- not beside the strings of
 * its own spec -- as OpenUSD numbers them: runs of like names make
 * TOKENS compress much better. */
static void test_sibling_names_together(void)
{
    const char *t = "#usda 1.0\ndef \"Set\" {\n"
                    "    def \"p1\" (doc = \"one\") {\n"
                    "        def \"q\" (doc = \"deep\") {\n        }\n"
                    "    }\n"
                    "    def \"p2\" (doc = \"two\") {\n    }\n"
                    "    def \"p3\" (doc = \"three\") {\n    }\n"
                    "}\n";
    char *bars = tokens_of_written(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bars);
    CU_ASSERT_PTR_NOT_NULL(strstr(bars, "|p1|p2|p3|"));
    CU_ASSERT(token_before(bars, "deep", "q"));
    CU_ASSERT(token_before(bars, "one", "q"));
    CU_ASSERT(token_before(bars, "q", "two"));
    CU_ASSERT(token_before(bars, "three", "p1"));
    CU_ASSERT(token_before(bars, "p3", "Set"));
    free(bars);
    /* a path naming a prim whose parent is not done: the names are
     * numbered then (the path's lookup needs them), and the file is the
     * same layer */
    const char *u = "#usda 1.0\ndef \"Set\" {\n"
                    "    def \"p1\" (doc = \"one\") {\n    }\n"
                    "    def \"p2\" (doc = \"two\") {\n"
                    "        rel r = </Set/p1>\n    }\n"
                    "    def \"p3\" (doc = \"three\") {\n    }\n"
                    "}\n";
    bars = tokens_of_written(u);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bars);
    CU_ASSERT(token_before(bars, "two", "p1"));
    CU_ASSERT(token_before(bars, "p1", "three"));
    free(bars);
}

static void test_deterministic(void)
{
    const char *text =
        "#usda 1.0\n(\n    customLayerData = {\n        int b = 2\n"
        "        string a = \"x\"\n    }\n)\n"
        "def \"A\" (\n    variants = {\n        string v = \"x\"\n    }\n"
        "    prepend variantSets = \"v\"\n)\n{\n"
        "    variantSet \"v\" = {\n        \"x\" {\n"
        "            float f = 2\n        }\n    }\n"
        "    rel r = [</A.f>, </B>]\n"
        "    double t.timeSamples = { 1: 2, 2: 3.5, 3: None }\n}\n";
    ub_diags *d = ub_diags_new();
    ub_buf x, y;
    ub_buf_init(&x);
    ub_buf_init(&y);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &x, d), 0);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &y, d), 0);
    CU_ASSERT_EQUAL(x.len, y.len);
    CU_ASSERT(x.len == y.len && memcmp(x.data, y.data, x.len) == 0);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_buf_free(&x);
    ub_buf_free(&y);
    ub_diags_free(d);
}

/* The writer keeps token indices in the strtab's marks when it can claim
 * them, else in a table of its own: the same bytes either way, and the
 * marks come back claimable and 0. */
static void test_marks(void)
{
    ub_diags *d = ub_diags_new();
    ub_buf x, y;
    ub_buf_init(&x);
    ub_buf_init(&y);
    CU_ASSERT_EQUAL_FATAL(write_text(simple, &x, d), 0);
    const char *name = ub_intern_cstr(strtab, "ids");
    CU_ASSERT_EQUAL(ub_str_mark(name), 0);
    CU_ASSERT_FATAL(ub_strtab_mark_claim(strtab)); /* given back */
    ub_str_set_mark(name, 12345); /* ours: the writer must not read it */
    CU_ASSERT_EQUAL_FATAL(write_text(simple, &y, d), 0);
    CU_ASSERT_EQUAL(ub_str_mark(name), 12345);
    ub_str_set_mark(name, 0);
    ub_strtab_mark_release(strtab);
    CU_ASSERT(x.len == y.len && memcmp(x.data, y.data, x.len) == 0);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);

    /* given back clean by a write the writer refuses, and by a stream
     * abandoned after a prim */
    ub_buf z;
    ub_buf_init(&z);
    CU_ASSERT_EQUAL(write_text("#usda 1.0\ndef \"R\" {\n double fresh = 1 (\n"
                               "    displayUnit = mm\n)\n}\n",
                               &z, d),
                    -1);
    CU_ASSERT_EQUAL(ub_str_mark(ub_intern_cstr(strtab, "fresh")), 0);
    CU_ASSERT_FATAL(ub_strtab_mark_claim(strtab));
    ub_strtab_mark_release(strtab);
    ub_layer *l = ub_parse_usda(strtab, "t.usda", simple, strlen(simple), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ub_buf_free(&z);
    ub_buf_init(&z);
    ub_usdc_stream *st = ub_usdc_stream_new(&z, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    ub_usdc_stream_prim(st, l, l->root->children.v[0], 1);
    ub_usdc_stream_free(st);
    CU_ASSERT_EQUAL(ub_str_mark(name), 0);
    CU_ASSERT(ub_strtab_mark_claim(strtab));
    ub_strtab_mark_release(strtab);
    ub_layer_free(l);
    ub_buf_free(&z);
    ub_buf_free(&x);
    ub_buf_free(&y);
    ub_diags_free(d);
}

/* The LZ4 chunk count of FIELDS' reps: after the field count and the
 * key tokens' block (its size, its bytes), the reps' size, then the
 * framing's first byte. */
static int fields_chunks(const ub_buf *b)
{
    uint64_t at = section_at(b, UB_CRATE_SEC_FIELDS);
    uint64_t toks = u64_at(b, at + 8);
    uint64_t reps = at + 16 + toks + 8;
    return reps < b->len ? (signed char)b->data[reps] : -1;
}

/* A layer's usda text, read back from its crate encoding. */
static char *read_back(const ub_buf *b)
{
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_crate_read(b->data, b->len, "t.usdc", strtab, d);
    CU_ASSERT_EQUAL(ub_diags_errors(d), 0);
    ub_buf t;
    ub_buf_init(&t);
    if (l)
        ub_usda_write(l, &t);
    ub_layer_free(l);
    ub_diags_free(d);
    ub_buf_putc(&t, '\0');
    return ub_buf_take(&t);
}

/* Whether every list of prim (and below) is at its exact size: a model
 * read from crate leaves no slack (and no outgrown copies behind it). */
static bool exact_lists(const ub_prim *p)
{
    bool ok = p->meta.cap == p->meta.n && p->props.cap == p->props.n &&
              p->children.cap == p->children.n;
    for (uint32_t i = 0; i < p->meta.n; i++)
        if (p->meta.v[i].value.kind == UB_V_DICT)
            ok &= p->meta.v[i].value.u.dict->cap ==
                  p->meta.v[i].value.u.dict->n;
    for (uint32_t i = 0; i < p->props.n; i++)
        ok &= ub_prop_meta(p->props.v[i])->cap ==
              ub_prop_meta(p->props.v[i])->n;
    for (uint32_t i = 0; i < p->children.n; i++)
        ok &= exact_lists(p->children.v[i]);
    return ok;
}

static void test_read_exact_lists(void)
{
    const char *text =
        "#usda 1.0\n(\n    doc = \"d\"\n    upAxis = \"Y\"\n)\n\n"
        "def Xform \"A\" (\n    customData = {\n        int a = 1\n"
        "        int b = 2\n        int c = 3\n    }\n"
        "    doc = \"a\"\n    kind = \"group\"\n"
        "    prepend apiSchemas = [\"MaterialBindingAPI\"]\n"
        "    hidden = true\n)\n{\n"
        "    float r = 1 (\n        doc = \"r\"\n    )\n"
        "    float s = 2\n    float t = 3\n    float u = 4\n    float v = 5\n"
        "    rel m = </A>\n\n"
        "    def \"B\"\n    {\n    }\n\n    def \"C\"\n    {\n    }\n\n"
        "    def \"D\"\n    {\n    }\n\n    def \"E\"\n    {\n    }\n\n"
        "    def \"F\"\n    {\n    }\n}\n";
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
    ub_layer *l = ub_crate_read(b.data, b.len, "t.usdc", strtab, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    const ub_prim *a = l->root->children.v[0];
    CU_ASSERT_EQUAL(a->meta.n, 5);
    CU_ASSERT_EQUAL(a->props.n, 6);
    CU_ASSERT_EQUAL(a->children.n, 5);
    CU_ASSERT_EQUAL(l->meta.cap, l->meta.n);
    CU_ASSERT(exact_lists(l->root));
    ub_layer_free(l);
    ub_buf_free(&b);
    ub_diags_free(d);
}

/* A damaged spec whose path is too long to quote whole: the message
 * names its start and its end, and the field. */
static void test_long_path_damage(void)
{
    ub_buf t;
    ub_buf_init(&t);
    ub_buf_puts(&t, "#usda 1.0\ndef \"B");
    for (int i = 0; i < 598; i++)
        ub_buf_putc(&t, (char)('a' + i % 26));
    ub_buf_puts(&t, "E\"\n{\n    asset p = @zq_x.usda@\n}\n");
    ub_buf_putc(&t, '\0');
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(t.data, &b, d), 0);
    ub_buf_free(&t);
    /* the asset path's text is a literal in TOKENS' LZ4: a control
     * character put in it reads as one */
    char *at = memmem(b.data, b.len, "zq_x", 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    at[2] = '\x01';
    ub_layer *l = ub_crate_read(b.data, b.len, "t.usdc", strtab, d);
    CU_ASSERT_PTR_NULL(l);
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(d), 1);
    const char *m = ub_diags_at(d, 0)->message;
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "spec </Babcdef"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "..."));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(m, "xyzE.p> field 'default': asset paths may not contain "
                  "control characters"));
    ub_buf_free(&b);
    ub_diags_free(d);
}

/* Many fields: their reps are cut into two LZ4 chunks, made on two
 * threads; the file reads back as the layer, and holds the same bytes
 * when the writer has one CPU (and so one thread). */
static void test_fields_cut(void)
{
    ub_buf text;
    ub_buf_init(&text);
    ub_buf_puts(&text, "#usda 1.0\n\n");
    for (int i = 0; i < 18000; i++)
        ub_buf_printf(&text,
                      "def \"P%d\"\n{\n    double a = %d.5\n"
                      "    int b = %d\n}\n\n",
                      i, i, i + 100000);
    ub_buf_putc(&text, '\0');
    ub_diags *d = ub_diags_new();
    ub_buf x, y, small;
    ub_buf_init(&x);
    ub_buf_init(&y);
    ub_buf_init(&small);
    CU_ASSERT_EQUAL_FATAL(write_text(text.data, &x, d), 0);
    CU_ASSERT_EQUAL(fields_chunks(&x), 2);
    CU_ASSERT_EQUAL_FATAL(write_text(simple, &small, d), 0);
    CU_ASSERT_EQUAL(fields_chunks(&small), 0); /* one block, as OpenUSD */

    ub_layer *l = ub_parse_usda(strtab, "t.usda", text.data,
                                strlen(text.data), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ub_buf want;
    ub_buf_init(&want);
    ub_usda_write(l, &want);
    ub_buf_putc(&want, '\0');
    ub_layer_free(l);
    char *got = read_back(&x);
    CU_ASSERT_STRING_EQUAL(got, want.data);
    free(got);

    cpu_set_t was;
    pin_one(&was);
    CU_ASSERT_EQUAL(write_text(text.data, &y, d), 0);
    CU_ASSERT(sched_setaffinity(0, sizeof was, &was) == 0);
    CU_ASSERT(x.len == y.len && memcmp(x.data, y.data, x.len) == 0);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_buf_free(&want);
    ub_buf_free(&x);
    ub_buf_free(&y);
    ub_buf_free(&small);
    ub_buf_free(&text);
    ub_diags_free(d);
}

/* A list op of a field no schema registers, a part set to None included,
 * is written as OpenUSD writes it (an unregistered value holding a list op
 * of unregistered values, type 54): it reads back, and prints as the text
 * does (the None parts, empty, print as nothing, as in usdcat). */
static void test_unregistered_listops(void)
{
    const char *text = "#usda 1.0\n(\n    prepend layerKey = None\n)\n\n"
                       "def \"A\" (\n    prepend noneOnly = None\n"
                       "    delete mixed = None\n"
                       "    append mixed = [\"a\", 1, (2, 3)]\n)\n{\n}\n";
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_layer *c = ub_crate_read(b.data, b.len, "t.usdc", strtab, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const ub_prim *a = c->root->children.v[0];
    const ub_field *f =
        ub_fields_find(&a->meta, ub_intern_cstr(strtab, "noneOnly"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->value.kind, UB_V_LISTOP);
    CU_ASSERT_PTR_NULL(ub_value_type(&f->value));
    f = ub_fields_find(&a->meta, ub_intern_cstr(strtab, "mixed"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_FATAL(f->value.kind == UB_V_LISTOP);
    const ub_listop *lo = f->value.u.listop;
    CU_ASSERT(lo->has[UB_LO_APPEND] && !lo->has[UB_LO_DELETE]);
    const ub_value *ap = ub_listop_get(lo, UB_LO_APPEND);
    CU_ASSERT_FATAL(ap->kind == UB_V_UNTYPED);
    /* one item: the text OpenUSD records, the list without brackets */
    CU_ASSERT_EQUAL_FATAL(ap->u.untyped->n, 1);
    CU_ASSERT_STRING_EQUAL(ap->u.untyped->child[0].text, "\"a\", 1, (2, 3)");
    ub_layer *t = ub_parse_usda(strtab, "t.usda", text, strlen(text), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(same_usda(t, c));
    /* read back and written again: the same bytes */
    ub_buf again;
    ub_buf_init(&again);
    CU_ASSERT_EQUAL(ub_usdc_write(c, &again, d), 0);
    CU_ASSERT(again.len == b.len && memcmp(again.data, b.data, b.len) == 0);
    ub_buf_free(&again);
    ub_layer_free(t);
    ub_layer_free(c);
    ub_buf_free(&b);
    ub_diags_free(d);
}

/* The writer's refusal, the last error in d, says msg. */
static void expect_refusal(const ub_diags *d, const char *msg)
{
    CU_ASSERT_FATAL(ub_diags_errors(d) >= 1);
    const ub_diag *g = ub_diags_at(d, ub_diags_count(d) - 1);
    if (!strstr(g->message, msg))
        fprintf(stderr, "\nmessage: %s\nwanted: %s\n", g->message, msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(g->message, msg));
}

/* l, changed as only a usdb file or the API can change it, is refused
 * with one error that says msg; then l is freed. */
static void expect_layer_refused(ub_layer *l, ub_diags *d, const char *msg)
{
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL(ub_usdc_write(l, &b, d), -1);
    CU_ASSERT_FATAL(ub_diags_errors(d) == 1);
    expect_refusal(d, msg);
    ub_buf_free(&b);
    ub_layer_free(l);
}

/* What OpenUSD cannot write to crate either is refused with the spec. */
/* text is refused with an error that says msg, at line:col of the text
 * (the property's or the prim's name) */
static void expect_refused(const char *text, const char *msg, unsigned line,
                           unsigned col)
{
    ub_diags *d = ub_diags_new();
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL(write_text(text, &b, d), -1);
    expect_refusal(d, msg);
    const ub_diag *g = ub_diags_at(d, ub_diags_count(d) - 1);
    CU_ASSERT_STRING_EQUAL(g->loc.file, "t.usda");
    CU_ASSERT_EQUAL(g->loc.line, line);
    CU_ASSERT_EQUAL(g->loc.col, col);
    ub_buf_free(&b);
    ub_diags_free(d);
}

static void test_refused(void)
{
    expect_refused("#usda 1.0\ndef \"R\" {\n double a = 1 (\n"
                   "    displayUnit = mm\n)\n}\n",
                   "</R.a>: cannot be written as usdc: displayUnit", 3, 9);
    expect_refused("#usda 1.0\ndef \"R\" {\n rel r.default = </R>\n}\n",
                   "</R.r>: cannot be written as usdc: a relationship "
                   "default target", 3, 6);
    expect_refused("#usda 1.0\ndef \"R\" {\n varying rel r.timeSamples = "
                   "{ 1: </R> }\n}\n",
                   "</R.r>: cannot be written as usdc: relationship time "
                   "samples", 3, 14);
    expect_refused("#usda 1.0\ndef \"R\" {\n double v.timeSamples = "
                   "{ 1: 1, nan: 2 }\n}\n",
                   "</R.v>: cannot be written as usdc: a time sample at "
                   "time nan", 3, 9);
}

/* Crate keeps its strings NUL-separated: one holding a NUL (the usda
 * reader cuts a string there, but a usdb file or the API can hold one)
 * is refused, not written as a table shifted by one token. */
static void test_nul_refused(void)
{
    static const char text[] = "#usda 1.0\ndef \"R\" {\n string s = \"ab\"\n}\n";
    ub_diags *d = ub_diags_new();
    ub_layer *l;
    ub_prim *r = parsed_prim(text, "R", &l, d);
    ub_prop *p = ub_prop_find(l, r, ub_intern_cstr(strtab, "s"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const char *nul = ub_intern(strtab, "a\0b", 3);
    memcpy(ub_value_elem(&p->default_value, 0), &nul, sizeof nul);
    expect_layer_refused(l, d, "</R.s>: cannot be written as usdc: the "
                               "string or token \"a\" holds a NUL byte");
    ub_diags_free(d);
}

/* An attribute without a type name (only a damaged file or the API can
 * make one) is written with the empty token (found by fuzz_crate: the
 * empty name was a literal, not an interned string, where the writer read
 * an interned string's length).  Reading it back is refused: no text can
 * say an attribute without its type. */
static void test_untyped_attr(void)
{
    static const char text[] = "#usda 1.0\ndef \"R\" {\n float a\n float[] b\n}\n";
    ub_diags *d = ub_diags_new();
    ub_layer *l;
    ub_prim *r = parsed_prim(text, "R", &l, d);
    for (int i = 0; i < 2; i++) {
        ub_prop *p = ub_prop_find(l, r, ub_intern_cstr(strtab, i ? "b" : "a"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        p->type_id = UB_TY_INVALID;
        CU_ASSERT_PTR_NULL(ub_prop_type_name(strtab, p));
    }
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(ub_usdc_write(l, &b, d), 0);
    ub_layer *c = ub_crate_read(b.data, b.len, "t.usdc", strtab, d);
    CU_ASSERT_PTR_NULL(c);
    expect_refusal(d, "spec </R.a> field 'typeName': the type name '' is "
                      "not an identifier");
    ub_layer_free(l);
    ub_buf_free(&b);
    ub_diags_free(d);
}

/* A time sample no attribute's type allows (a dictionary): no text can
 * say one, but a crate file can hold one, and reading it is an error
 * naming the spec and the time -- no writer meets a sample it has no form
 * for.  An untyped sample (an unregistered value) reads back as such. */
static void test_samples_refused(void)
{
    static const char text[] =
        "#usda 1.0\ndef \"R\" {\n double x.timeSamples = { 1: 1.5, 2: 2.5 }\n}\n";
    for (int untyped = 0; untyped < 2; untyped++) {
        ub_diags *d = ub_diags_new();
        ub_layer *l;
        ub_prim *r = parsed_prim(text, "R", &l, d);
        ub_prop *p = ub_prop_find(l, r, ub_intern_cstr(strtab, "x"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        ub_samples *s = &ub_prop_ext_get(l->arena, p)->samples;
        CU_ASSERT_EQUAL_FATAL(s->n, 2);
        ub_value v = {.kind = untyped ? UB_V_UNTYPED : UB_V_DICT};
        if (untyped) {
            ub_untyped *u = ub_arena_zalloc(l->arena, sizeof *u);
            *u = (ub_untyped){.kind = UB_U_ATOM,
                              .text = ub_intern_cstr(strtab, "7")};
            v.u.untyped = u;
        } else {
            ub_value k = ub_value_new(l->arena, ub_type_get(UB_TY_INT), 1,
                                      false);
            ub_value_set_double(&k, 0, 0, 3);
            v.u.dict = ub_dict_new(l->arena);
            ub_dict_set(l->arena, v.u.dict, ub_intern_cstr(strtab, "k"), k,
                        (ub_sloc){0});
        }
        s->v[1].value = v;
        ub_buf b;
        ub_buf_init(&b);
        CU_ASSERT_EQUAL_FATAL(ub_usdc_write(l, &b, d), 0);
        ub_layer *c = ub_crate_read(b.data, b.len, "t.usdc", strtab, d);
        if (untyped) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(c);
            CU_ASSERT(same_usda(l, c));
            ub_layer_free(c);
        } else {
            CU_ASSERT_PTR_NULL(c);
            expect_refusal(d, "spec </R.x> field 'timeSamples': the sample "
                              "at time 2 holds a dictionary, which no "
                              "attribute's type allows");
        }
        ub_layer_free(l);
        ub_buf_free(&b);
        ub_diags_free(d);
    }
}

/* Required fields a layer leaves out (ub_prop.unwritten, which only the
 * crate reader sets) are left out of its crate copy too: the copy reads
 * back as the same layer with the same fields missing, and is smaller.
 * A layer from text has them all, and so has its crate file. */
static void test_unwritten_fields(void)
{
    static const char text[] = "#usda 1.0\nover \"R\" {\n float a = 1\n"
                               " varying rel r\n custom rel s\n}\n";
    ub_diags *d = ub_diags_new();
    ub_layer *l;
    ub_prim *r = parsed_prim(text, "R", &l, d);
    CU_ASSERT_EQUAL(r->unwritten, 0);
    const char *names[3] = {"a", "r", "s"};
    ub_prop *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = ub_prop_find(l, r, ub_intern_cstr(strtab, names[i]));
        CU_ASSERT_PTR_NOT_NULL_FATAL(p[i]);
        CU_ASSERT_EQUAL(p[i]->unwritten, 0);
    }
    ub_buf all, fewer;
    ub_buf_init(&all);
    ub_buf_init(&fewer);
    CU_ASSERT_EQUAL_FATAL(ub_usdc_write(l, &all, d), 0);
    ub_layer *c = ub_crate_read(all.data, all.len, "t.usdc", strtab, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    ub_prim *cr = c->root->children.v[0];
    CU_ASSERT_EQUAL(cr->unwritten, 0);
    CU_ASSERT_EQUAL_FATAL(cr->props.n, 3);
    /* (a relationship's custom is written only when true, as OpenUSD's
     * text reader writes it) */
    CU_ASSERT_EQUAL(cr->props.v[0]->unwritten, 0);
    CU_ASSERT_EQUAL(cr->props.v[1]->unwritten, UB_UNWRITTEN_CUSTOM);
    CU_ASSERT_EQUAL(cr->props.v[2]->unwritten, 0);
    ub_layer_free(c);

    /* each at its fallback: over, not custom, varying */
    r->unwritten = UB_UNWRITTEN_SPECIFIER;
    p[0]->unwritten = UB_UNWRITTEN_CUSTOM | UB_UNWRITTEN_VARIABILITY;
    p[1]->unwritten = UB_UNWRITTEN_CUSTOM | UB_UNWRITTEN_VARIABILITY;
    p[2]->unwritten = UB_UNWRITTEN_VARIABILITY;
    p[2]->varying_keyword = true;
    CU_ASSERT_EQUAL_FATAL(ub_usdc_write(l, &fewer, d), 0);
    CU_ASSERT(fewer.len < all.len);
    c = ub_crate_read(fewer.data, fewer.len, "t.usdc", strtab, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    cr = c->root->children.v[0];
    CU_ASSERT_EQUAL(cr->specifier, UB_OVER);
    CU_ASSERT_EQUAL(cr->unwritten, UB_UNWRITTEN_SPECIFIER);
    CU_ASSERT_EQUAL_FATAL(cr->props.n, 3);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(cr->props.v[i]->unwritten, p[i]->unwritten);
    CU_ASSERT(cr->props.v[1]->varying_keyword);
    CU_ASSERT(cr->props.v[2]->varying_keyword && cr->props.v[2]->custom);
    CU_ASSERT(same_usda(l, c));
    ub_layer_free(c);
    ub_layer_free(l);
    ub_buf_free(&all);
    ub_buf_free(&fewer);
    ub_diags_free(d);
}

/* A variant named "" would be written at its variant set's path, two
 * specs at one path (the usda reader refuses it; a usdb file may hold
 * one): refused. */
static void test_empty_variant_refused(void)
{
    static const char text[] = "#usda 1.0\ndef \"S\" {\n variantSet \"v\" = "
                               "{\n \"x\" { }\n }\n}\n";
    ub_diags *d = ub_diags_new();
    ub_layer *l;
    ub_prim *s = parsed_prim(text, "S", &l, d);
    ub_variant_set *vs = &ub_prim_variant_sets(s)[0];
    CU_ASSERT_EQUAL_FATAL(vs->variants.n, 1);
    vs->variants.v[0]->name = ub_intern_cstr(strtab, "");
    expect_layer_refused(l, d, "</S>: cannot be written as usdc: a variant "
                               "of 'v' is named \"\"");
    ub_diags_free(d);
}

/* Variant set and variant names the usda reader takes but the path
 * grammar does not ("a|b", ".x", "1"): written, and read back as they
 * were (OpenUSD reads such elements of its own files too).  A variant
 * set named "" has no path: refused, as OpenUSD's own writer makes a
 * file it then cannot read. */
/* A file in memory for ub_usdc_write_to: it counts its calls, and fails
 * the one numbered in fail (1 is the first call of any kind). */
typedef struct mem_file {
    ub_buf bytes;
    unsigned writes, reads, patches, calls, fail;
    unsigned first_read, patch; /* the calls they were, 0: none */
    unsigned views;
    bool view_declines; /* its view answers NULL: bytes are read instead */
} mem_file;

static int mem_write(void *ctx, const void *data, size_t len)
{
    mem_file *f = ctx;
    f->writes++;
    if (++f->calls == f->fail)
        return -1;
    ub_buf_append(&f->bytes, data, len);
    return 0;
}

static int mem_read(void *ctx, void *data, size_t len, uint64_t at)
{
    mem_file *f = ctx;
    if (!f->reads++)
        f->first_read = f->calls + 1;
    if (++f->calls == f->fail || at > f->bytes.len ||
        len > f->bytes.len - at)
        return -1;
    memcpy(data, f->bytes.data + at, len);
    return 0;
}

static int mem_patch(void *ctx, const void *data, size_t len, uint64_t at)
{
    mem_file *f = ctx;
    f->patches++;
    f->patch = f->calls + 1;
    if (++f->calls == f->fail || at > f->bytes.len ||
        len > f->bytes.len - at)
        return -1;
    memcpy(f->bytes.data + at, data, len);
    return 0;
}

static const void *mem_view(void *ctx, uint64_t at, size_t len)
{
    mem_file *f = ctx;
    f->views++;
    if (f->view_declines || at > f->bytes.len || len > f->bytes.len - at)
        return NULL;
    return f->bytes.data + at;
}

/* How write_through's file offers its bytes back. */
typedef enum mem_back { MEM_READ, MEM_VIEW, MEM_VIEW_DECLINES } mem_back;

/* Write l through a mem_file with the window given; *f gets the file,
 * what out held at the end appended.  Returns the writer's status. */
static int write_through_as(const ub_layer *l, size_t window, unsigned fail,
                            mem_back back, mem_file *f, ub_diags *d)
{
    memset(f, 0, sizeof *f);
    ub_buf_init(&f->bytes);
    f->fail = fail;
    f->view_declines = back == MEM_VIEW_DECLINES;
    ub_usdc_file file = {mem_write, mem_read, mem_patch, f, window,
                         back == MEM_READ ? NULL : mem_view};
    ub_usdc_to to = {.file = &file};
    ub_buf out;
    ub_buf_init(&out);
    int r = ub_usdc_write_to(l, &out, &to, d);
    if (r == 0) {
        ub_buf_append(&f->bytes, out.data, out.len);
    } else {
        CU_ASSERT(out.failed && out.sink_failed);
    }
    ub_buf_free(&out);
    return r;
}

static int write_through(const ub_layer *l, size_t window, unsigned fail,
                         mem_file *f, ub_diags *d)
{
    return write_through_as(l, window, fail, MEM_READ, f, d);
}

/* Handed to its file as it is written, a crate is the same bytes in any
 * window: values that repeat ones handed over are read back and found
 * the same (6,000 arrays, each repeated, outnumber the walk's cache of
 * values met last, so most repeats are read back), and the header is
 * patched in place.  In a window bigger than the file the values go to
 * it once stored, before the sections are built.  A file that fails
 * fails the write, with no error of the writer's own: the file said
 * why. */
static void test_handed_over(void)
{
    ub_buf text;
    ub_buf_init(&text);
    ub_buf_puts(&text, "#usda 1.0\n\n");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 6000; i++) {
            ub_buf_printf(&text, "def \"%c%d\"\n{\n    int[] a = [",
                          pass ? 'Q' : 'P', i);
            for (int k = 0; k < 12; k++)
                ub_buf_printf(&text, "%s%d", k ? ", " : "", i * 100 + k);
            ub_buf_puts(&text, "]\n}\n\n");
        }
    ub_buf_putc(&text, '\0');
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda(strtab, "t.usda", text.data,
                                strlen(text.data), d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ub_buf want;
    ub_buf_init(&want);
    CU_ASSERT_EQUAL_FATAL(ub_usdc_write(l, &want, d), 0);

    static const size_t windows[] = {1, 100, 4096, 65536, (size_t)1 << 30};
    for (size_t i = 0; i < sizeof windows / sizeof *windows; i++) {
        mem_file f;
        CU_ASSERT_EQUAL(write_through(l, windows[i], 0, &f, d), 0);
        CU_ASSERT(f.bytes.len == want.len &&
                  memcmp(f.bytes.data, want.data, want.len) == 0);
        if (windows[i] < want.len) {
            CU_ASSERT(f.writes > 0);
            CU_ASSERT(f.reads > 1000);
            CU_ASSERT_EQUAL(f.patches, 1);
        } else { /* the values go in one piece once all are stored, then
                    the header is patched in */
            CU_ASSERT_EQUAL(f.writes, 1);
            CU_ASSERT_EQUAL(f.reads, 0);
            CU_ASSERT_EQUAL(f.patches, 1);
        }
        ub_buf_free(&f.bytes);
    }
    /* A file that offers its bytes in place is compared there, not read;
     * one whose view declines is read as before.  The same bytes. */
    for (mem_back back = MEM_VIEW; back <= MEM_VIEW_DECLINES; back++) {
        mem_file f;
        CU_ASSERT_EQUAL(write_through_as(l, 4096, 0, back, &f, d), 0);
        CU_ASSERT(f.bytes.len == want.len &&
                  memcmp(f.bytes.data, want.data, want.len) == 0);
        CU_ASSERT(f.views > 1000);
        CU_ASSERT_EQUAL(f.reads, back == MEM_VIEW ? 0 : f.views);
        ub_buf_free(&f.bytes);
    }
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);

    /* the first write fails, the first read back, the patch of the
     * header (the last call) */
    mem_file f;
    CU_ASSERT_EQUAL(write_through(l, 4096, 0, &f, d), 0);
    unsigned fails[] = {1, f.first_read, f.patch};
    CU_ASSERT(f.first_read > 1 && f.patch == f.calls);
    ub_buf_free(&f.bytes);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(write_through(l, 4096, fails[i], &f, d), -1);
        CU_ASSERT_EQUAL(f.calls, fails[i]); /* nothing after it */
        ub_buf_free(&f.bytes);
    }
    /* the one write of the values in a big window */
    CU_ASSERT_EQUAL(write_through(l, (size_t)1 << 30, 1, &f, d), -1);
    CU_ASSERT_EQUAL(f.calls, 1);
    ub_buf_free(&f.bytes);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);

    ub_buf_free(&want);
    ub_buf_free(&text);
    ub_layer_free(l);
    ub_diags_free(d);
}

/* The crate writer under kept_check: samples kept outside the layer
 * through ub_usdc_to. */
static int write_kept(const ub_layer *l, ub_samples_fn fn, void *ctx,
                      ub_buf *out, ub_diags *d)
{
    ub_usdc_to to = {.samples = fn, .samples_ctx = ctx};
    return ub_usdc_write_to(l, out, &to, d);
}

static void test_samples_kept(void)
{
    kept_check(strtab, write_kept);
}

static void test_variant_names(void)
{
    static const char text[] =
        "#usda 1.0\n\ndef \"S\" (\n    variantSets = [\"a|b\", \".x\"]\n"
        ")\n{\n    variantSet \"a|b\" = {\n        \"1\" {\n\n        }\n"
        "    }\n    variantSet \".x\" = {\n        \"-y\" {\n\n        }\n"
        "    }\n}\n\n";
    ub_diags *d = ub_diags_new();
    ub_buf b, again;
    ub_buf_init(&b);
    ub_buf_init(&again);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
    ub_layer *l = ub_crate_read(b.data, b.len, "t.usdc", strtab, d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(ub_usda_write(l, &again), 0);
    CU_ASSERT(again.len == strlen(text) &&
              memcmp(again.data, text, again.len) == 0);
    ub_layer_free(l);
    ub_buf_free(&again);
    ub_buf_free(&b);
    expect_refused("#usda 1.0\ndef \"S\" {\n variantSet \"\" = {\n"
                   " \"x\" { }\n }\n}\n",
                   "</S>: cannot be written as usdc: a variant set is "
                   "named \"\"", 2, 5);
    /* "" in the parts of variantSets that make no variant set (prepend,
     * append, delete) is a name only: written, and read back */
    static const char *const parts[] = {"prepend", "append", "delete"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        char t[128];
        snprintf(t, sizeof t,
                 "#usda 1.0\n\ndef \"P\" (\n    %s variantSets = \"\"\n)\n"
                 "{\n}\n\n",
                 parts[i]);
        ub_buf_init(&b);
        CU_ASSERT_EQUAL_FATAL(write_text(t, &b, d), 0);
        char *back = read_back(&b);
        CU_ASSERT_STRING_EQUAL(back, t);
        free(back);
        ub_buf_free(&b);
    }
    ub_diags_free(d);
}

/* A layer with n prims in World's list of children, which a build in two
 * threads splits: nested prims, variants, an array and a dictionary that
 * prims on both sides share, samples, targets. */
static char *split_text(unsigned n)
{
    ub_buf b;
    ub_buf_init(&b);
    char line[1024];
    ub_buf_puts(&b, "#usda 1.0\n(\n    defaultPrim = \"World\"\n"
                    "    subLayers = [\n        @./a.usda@\n    ]\n)\n\n"
                    "def Scope \"Looks\"\n{\n"
                    "    def Material \"m0\"\n    {\n    }\n}\n\n"
                    "def Xform \"World\" (\n    kind = \"group\"\n)\n{\n"
                    "    int[] shared = [1, 2, 3]\n");
    for (unsigned i = 0; i < n; i++) {
        snprintf(line, sizeof line,
                 "\n    def Xform \"p%u\" (\n"
                 "        customData = {\n            int id = 7\n"
                 "            string s = \"x\"\n        }\n"
                 "        variants = {\n            string v = \"a\"\n"
                 "        }\n        prepend variantSets = \"v\"\n    )\n"
                 "    {\n        int[] ids = [1, 2, 3]\n"
                 "        rel look = </Looks/m0>\n"
                 "        float r = %u\n"
                 "        float r.timeSamples = {\n            1: 1.5,\n"
                 "            2: %u,\n        }\n\n"
                 "        def Mesh \"geo\"\n        {\n"
                 "            point3f[] points = [(0, 0, 0), (1, 1, %u)]\n"
                 "        }\n"
                 "        variantSet \"v\" = {\n            \"a\" {\n"
                 "                def \"inV\"\n                {\n"
                 "                }\n\n            }\n"
                 "            \"b\" {\n\n            }\n        }\n    }\n",
                 i, i, i, i);
        ub_buf_puts(&b, line);
    }
    ub_buf_puts(&b, "}\n\n");
    ub_buf_putc(&b, '\0');
    return ub_buf_take(&b);
}

/* b's token `from` renamed `to` (text cannot name two children alike):
 * TOKENS written again after the other sections, then the table of
 * contents. */
static void rename_token(ub_buf *b, const char *from, const char *to)
{
    uint64_t toc = u64_at(b, 16), nsec = u64_at(b, toc), tokens = 0;
    for (uint64_t i = 0; i < nsec; i++)
        if (strcmp(b->data + toc + 8 + 32 * i, UB_CRATE_SEC_TOKENS) == 0)
            tokens = toc + 8 + 32 * i;
    CU_ASSERT_FATAL(tokens != 0);
    uint64_t at = u64_at(b, tokens + 16), n = u64_at(b, at),
             raw = u64_at(b, at + 8), csize = u64_at(b, at + 16);
    char *text = malloc(raw);
    const char *why;
    CU_ASSERT_FATAL(text && ub_crate_lz4(b->data + at + 24, csize, text,
                                         raw, &why) == 0);
    ub_buf t, o;
    ub_buf_init(&t);
    ub_buf_init(&o);
    for (const char *p = text; p < text + raw; p += strlen(p) + 1)
        ub_buf_append(&t, strcmp(p, from) ? p : to,
                      strlen(strcmp(p, from) ? p : to) + 1);
    free(text);
    ub_buf_append(&o, b->data, toc);
    uint64_t sec = o.len, len = t.len;
    ub_buf_append(&o, &n, 8);
    ub_buf_append(&o, &len, 8);
    size_t csize_at = o.len;
    ub_buf_append(&o, &len, 8);
    ub_crate_lz4c c;
    ub_crate_lz4c_init(&c, 0);
    ub_crate_lz4_compress(t.data, t.len, &c, &o);
    ub_crate_lz4c_free(&c);
    uint64_t clen = o.len - csize_at - 8, size = o.len - sec,
             new_toc = o.len;
    memcpy(o.data + csize_at, &clen, 8);
    ub_buf_append(&o, b->data + toc, b->len - toc);
    memcpy(o.data + new_toc + (tokens - toc) + 16, &sec, 8);
    memcpy(o.data + new_toc + (tokens - toc) + 24, &size, 8);
    memcpy(o.data + 16, &new_toc, 8);
    ub_buf_free(&t);
    ub_buf_free(b);
    *b = o;
}

/* Read b with split mode `split`; *done: whether two threads built it. */
static ub_layer *read_split(const ub_buf *b, int split, bool *done,
                            ub_diags *d)
{
    ub_crate_stream cs = {.split = split, .split_done = done};
    return ub_crate_read_stream(b->data, b->len, "t.usdc", strtab, &cs, d);
}

/* A layer offset of +inf (the text's `1e400`) is kept, and said as
 * the reader meets it, by one thread or two: the head's prim first. */
static void test_read_inf_offsets(void)
{
    ub_buf text, b;
    ub_buf_init(&text);
    ub_buf_init(&b);
    ub_buf_puts(&text, "#usda 1.0\n\ndef \"World\"\n{\n");
    enum { N = 40 };
    for (unsigned i = 0; i < N; i++) {
        char line[256];
        snprintf(line, sizeof line, "    def \"p%02u\" (\n        %s\n"
                                    "    )\n    {\n        int x = %u\n"
                                    "    }\n",
                 i,
                 i == 0       ? "references = @./a.usda@ (offset = 1e400)"
                 : i == N - 1 ? "payload = @./b.usda@ (scale = 1e400)"
                              : "kind = \"model\"",
                 i);
        ub_buf_puts(&text, line);
    }
    ub_buf_puts(&text, "}\n");
    ub_buf_putc(&text, '\0');
    ub_diags *d = ub_diags_new();
    CU_ASSERT_EQUAL_FATAL(write_text(text.data, &b, d), 0);
    CU_ASSERT_EQUAL(ub_diags_warnings(d), 2); /* (the text reader's) */
    for (int split = -1; split <= 1; split += 2) {
        ub_diags *r = ub_diags_new();
        bool two = split < 0;
        ub_layer *l = read_split(&b, split, &two, r);
        CU_ASSERT_PTR_NOT_NULL(l);
        CU_ASSERT_EQUAL(two, split > 0);
        CU_ASSERT_EQUAL(ub_diags_errors(r), 0);
        CU_ASSERT_EQUAL_FATAL(ub_diags_count(r), 2);
        const ub_diag *a = ub_diags_at(r, 0), *z = ub_diags_at(r, 1);
        CU_ASSERT_EQUAL(a->severity, UB_WARNING);
        CU_ASSERT_STRING_EQUAL(a->loc.file, "t.usdc:</World/p00>");
        CU_ASSERT_STRING_EQUAL(a->message,
                               "the layer offset of reference './a.usda' "
                               "is inf, which usda cannot read back in a "
                               "layer offset");
        CU_ASSERT_STRING_EQUAL(z->loc.file, "t.usdc:</World/p39>");
        CU_ASSERT_PTR_NOT_NULL(strstr(z->message, "layer scale of payload "
                                                  "'./b.usda' is inf"));
        ub_layer_free(l);
        ub_diags_free(r);
    }
    ub_diags_free(d);
    ub_buf_free(&b);
    ub_buf_free(&text);
}

static void test_read_split(void)
{
    ub_diags *d = ub_diags_new();
    for (unsigned n = 2; n <= 300; n = n * 5 + 1) {
        char *text = split_text(n);
        ub_buf b;
        ub_buf_init(&b);
        CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
        bool one = true, two = false, any = true;
        ub_layer *l1 = read_split(&b, -1, &one, d);
        ub_layer *l2 = read_split(&b, 1, &two, d);
        ub_layer *l0 = read_split(&b, 0, &any, d); /* (by size and CPUs) */
        CU_ASSERT_FALSE(one);
        CU_ASSERT_TRUE(two);
        CU_ASSERT_FALSE(any); /* (too small) */
        CU_ASSERT_EQUAL(ub_diags_count(d), 0);
        CU_ASSERT_FATAL(l1 && l2 && l0);
        ub_buf t1;
        ub_buf_init(&t1);
        ub_usda_write(l1, &t1);
        ub_buf_putc(&t1, '\0');
        CU_ASSERT_STRING_EQUAL(t1.data, text);
        CU_ASSERT_TRUE(same_usda(l1, l2));
        CU_ASSERT_TRUE(same_usda(l1, l0));
        /* the layer's lookups know both threads' prims */
        const char *last = NULL;
        char name[32];
        snprintf(name, sizeof name, "p%u", n - 1);
        ub_prim *w = ub_prim_find_child(l2, l2->root,
                                        ub_intern_cstr(strtab, "World"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        ub_prim *p = ub_prim_find_child(l2, w, ub_intern_cstr(strtab, name));
        CU_ASSERT_PTR_NOT_NULL(p);
        CU_ASSERT(p && p->parent == w);
        if (p)
            last = p->name;
        CU_ASSERT_PTR_EQUAL(last, ub_intern_cstr(strtab, name));
        ub_buf_free(&t1);
        ub_layer_free(l0);
        ub_layer_free(l1);
        ub_layer_free(l2);
        ub_buf_free(&b);
        free(text);
    }
    /* World's list names p0 first and last (p19 renamed): one prim, as
     * one thread builds it (World's list is not split) */
    char *text = split_text(20);
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
    rename_token(&b, "p19", "p0");
    bool one = true, two = false;
    ub_layer *l1 = read_split(&b, -1, &one, d);
    ub_layer *l2 = read_split(&b, 1, &two, d);
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    CU_ASSERT_FATAL(l1 && l2);
    ub_prim *w = ub_prim_find_child(l1, l1->root,
                                    ub_intern_cstr(strtab, "World"));
    CU_ASSERT_FATAL(w != NULL);
    CU_ASSERT_EQUAL(w->children.n, 19);
    CU_ASSERT_TRUE(two); /* (the pseudo-root's list: World is the tail) */
    CU_ASSERT_TRUE(same_usda(l1, l2));
    ub_layer_free(l1);
    ub_layer_free(l2);
    free(text);
    ub_buf_free(&b);
    /* damage anywhere: the same layer, or the same error, both ways */
    text = split_text(6);
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(write_text(text, &b, d), 0);
    unsigned differ = 0, failed = 0, split = 0;
    for (size_t at = UB_CRATE_BOOTSTRAP_SIZE; at < b.len; at++) {
        for (unsigned k = 0; k < 2; k++) {
            ub_buf x;
            ub_buf_init(&x);
            ub_buf_append(&x, b.data, b.len);
            x.data[at] ^= k ? 0x01 : 0x5a;
            ub_diags *d1 = ub_diags_new(), *d2 = ub_diags_new();
            bool s1 = false;
            ub_layer *a = read_split(&x, -1, NULL, d1);
            ub_layer *c = read_split(&x, 1, &s1, d2);
            split += s1;
            failed += !a;
            if (!a != !c || !same_diags(d1, d2) ||
                (a && !same_usda(a, c)))
                differ++;
            ub_layer_free(a);
            ub_layer_free(c);
            ub_diags_free(d1);
            ub_diags_free(d2);
            ub_buf_free(&x);
        }
    }
    CU_ASSERT_EQUAL(differ, 0);
    CU_ASSERT(failed > 100); /* (the damage was met) */
    CU_ASSERT(split > 100);  /* (and often after a split) */
    free(text);
    ub_buf_free(&b);
    ub_diags_free(d);
}

int main(void)
{
    strtab = ub_strtab_new();
    if (!strtab || CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("usdc writer", NULL, NULL);
    CU_add_test(s, "bootstrap, table of contents, sections", test_frame);
    CU_add_test(s, "version by need", test_versions);
    CU_add_test(s, "repeated arrays stored once", test_dedup);
    CU_add_test(s, "short values met again stored once, typed",
                test_short_repeats);
    CU_add_test(s, "small values inlined", test_inlined);
    CU_add_test(s, "one explicit payload stored alone", test_lone_payload);
    CU_add_test(s, "prims' specs in path order", test_spec_order);
    CU_add_test(s, "paths named before and after their specs, once",
                test_paths_once);
    CU_add_test(s, "deterministic", test_deterministic);
    CU_add_test(s, "sibling prims' names numbered side by side",
                test_sibling_names_together);
    CU_add_test(s, "the same bytes with the strtab's marks or without",
                test_marks);
    CU_add_test(s, "many fields: reps in two chunks, any CPUs",
                test_fields_cut);
    CU_add_test(s, "handed to its file as it is written, the same bytes",
                test_handed_over);
    CU_add_test(s, "samples kept outside the layer", test_samples_kept);
    CU_add_test(s, "refusals", test_refused);
    CU_add_test(s, "a string holding a NUL refused", test_nul_refused);
    CU_add_test(s, "an attribute without a type name", test_untyped_attr);
    CU_add_test(s, "required fields left out stay out",
                test_unwritten_fields);
    CU_add_test(s, "a variant named \"\" refused", test_empty_variant_refused);
    CU_add_test(s, "read back with lists at their size",
                test_read_exact_lists);
    CU_add_test(s, "damage at a long path named", test_long_path_damage);
    CU_add_test(s, "samples no attribute holds refused on reading",
                test_samples_refused);
    CU_add_test(s, "variant names the path grammar does not take",
                test_variant_names);
    CU_add_test(s, "read by two threads: the layer one reads, its errors",
                test_read_split);
    CU_add_test(s, "layer offsets of inf kept and said, by two threads too",
                test_read_inf_offsets);
    CU_add_test(s, "list ops of unregistered fields",
                test_unregistered_listops);
    unsigned failed = ub_test_run_all();
    ub_strtab_free(strtab);
    return failed ? 1 : 0;
}
