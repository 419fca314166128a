/* Unit tests of the split parse (ub_parse.h): a layer read by two threads,
 * split at a line that starts with def / over / class, must be exactly the
 * layer one thread reads -- same canonical text, same locations, same
 * diagnostics -- wherever the split falls, including splits that cannot
 * work (inside a string, a variant, before an error), which must fall back.
 * Every candidate line of every layer of the conformance corpus is tried
 * ($UB_CONFORMANCE_DIR, default $srcdir/../shared/conformance; skipped
 * when absent). */
#define _GNU_SOURCE /* sched_setaffinity */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ub_arena.h"
#include "ub_buf.h"
#include "ub_cpus.h"
#include "ub_pages.h"
#include "ub_parse.h"
#include "ub_usda.h"
#include "ub_usdb_write.h"
#include "ub_usdc_write.h"
#include "pin_cpu.h"
#include "same_diags.h"
#include "ub_test.h"

static ub_strtab *strtab;

/* One parse: the layer, its canonical text and its diagnostics. */
typedef struct run {
    ub_layer *layer;
    ub_buf text;
    ub_diags *diags;
    int outcome;
} run;

static void run_parse_opts(run *r, const char *text, size_t len,
                           ub_parse_opts *o)
{
    r->diags = ub_diags_new();
    r->layer = ub_parse_usda_opts(strtab, "t.usda", text, len, o, r->diags);
    r->outcome = o->outcome;
    ub_buf_init(&r->text);
    if (r->layer)
        ub_usda_write(r->layer, &r->text);
}

static void run_parse(run *r, const char *text, size_t len, int split,
                      size_t at)
{
    ub_parse_opts o = {.split = split, .split_at = at};
    run_parse_opts(r, text, len, &o);
}

static void run_free(run *r)
{
    ub_layer_free(r->layer);
    ub_buf_free(&r->text);
    ub_diags_free(r->diags);
}

static bool same_loc(const ub_sloc *sa, const ub_sloc *sb, const ub_layer *lb)
{
    ub_loc a = ub_layer_loc(lb, *sa), b = ub_layer_loc(lb, *sb);
    /* every location of a layer names the layer's own path */
    return a.line == b.line && a.col == b.col && b.file == lb->path &&
           strcmp(a.file, b.file) == 0;
}

static bool same_fields(const ub_fields *a, const ub_fields *b,
                        const ub_layer *lb)
{
    if (a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->v[i].key != b->v[i].key ||
            !same_loc(&a->v[i].loc, &b->v[i].loc, lb))
            return false;
    return true;
}

/* The model of b has a's shape and locations, and b's own lookups work
 * (names found through the layer's index are the first of their name). */
static bool same_prim(const ub_prim *a, const ub_prim *b, ub_layer *lb)
{
    if (a->name != b->name || a->specifier != b->specifier ||
        a->type_name != b->type_name || a->children.n != b->children.n ||
        a->props.n != b->props.n ||
        ub_prim_n_variant_sets(a) != ub_prim_n_variant_sets(b) ||
        !same_fields(&a->meta, &b->meta, lb))
        return false;
    if (b->parent && !same_loc(&a->loc, &b->loc, lb))
        return false;
    for (uint32_t i = 0; i < b->props.n; i++) {
        const ub_prop *pa = a->props.v[i], *pb = b->props.v[i];
        if (pa->name != pb->name || !same_loc(&pa->loc, &pb->loc, lb) ||
            !same_fields(ub_prop_meta(pa), ub_prop_meta(pb), lb) ||
            ub_sloc_line(ub_prop_samples(pa)->loc) !=
                ub_sloc_line(ub_prop_samples(pb)->loc) ||
            ub_prop_find(lb, b, pb->name) != pb)
            return false;
    }
    for (uint32_t i = 0; i < b->children.n; i++) {
        const ub_prim *cb = b->children.v[i];
        if (cb->parent != b)
            return false;
        const ub_prim *want = cb;
        for (uint32_t j = 0; j < i && want == cb; j++)
            if (b->children.v[j]->name == cb->name)
                want = b->children.v[j];
        if (ub_prim_find_child(lb, b, cb->name) != want)
            return false;
        if (!same_prim(a->children.v[i], cb, lb))
            return false;
    }
    for (uint32_t s = 0; s < ub_prim_n_variant_sets(b); s++) {
        const ub_variant_set *va = &ub_prim_variant_sets(a)[s],
                             *vb = &ub_prim_variant_sets(b)[s];
        if (va->name != vb->name || va->variants.n != vb->variants.n)
            return false;
        for (uint32_t i = 0; i < vb->variants.n; i++)
            if (vb->variants.v[i]->parent != b ||
                !same_prim(va->variants.v[i], vb->variants.v[i], lb))
                return false;
    }
    return true;
}

static bool same_bytes(const ub_buf *a, const ub_buf *b)
{
    return a->len == b->len && (!a->len || memcmp(a->data, b->data,
                                                  a->len) == 0);
}

/* A streaming parse split at `at` whose second half is handed over late
 * (two_threads), written to .usdb as it is read, must give the bytes of
 * the serial parse's layer written whole, or say it cannot stream (a
 * property after a child), as a serial stream would.  Returns whether it
 * did; *streamed: whether the layer went out as a stream. */
static bool same_usdb_streamed(const run *s, const char *text, size_t len,
                               size_t at, const char *name, bool *streamed)
{
    *streamed = false;
    if (!s->layer)
        return true;
    ub_buf whole, got;
    ub_buf_init(&whole);
    ub_buf_init(&got);
    ub_diags *d = ub_diags_new();
    bool ok = ub_usdb_write(s->layer, 1, &whole, d) == 0;
    ub_usdb_stream *st = ub_usdb_stream_new(1, d); /* level 1: quick */
    ub_parse_stream ps = {.prim_done = ub_usdb_stream_prim,
                          .prim_reopened = ub_usdb_stream_reopened,
                          .ctx = st,
                          .two_threads = true};
    ub_parse_opts o = {.split = 1, .split_at = at, .stream = &ps};
    ub_layer *l = ub_parse_usda_opts(strtab, "t.usda", text, len, &o, d);
    int rc = -1;
    if (l && !l->streamed) /* parsed again, whole: written whole */
        rc = ub_usdb_write(l, 1, &got, d);
    else if (l)
        rc = ub_usdb_stream_end(st, l, &got);
    ub_usdb_stream_free(st);
    if (rc == 0) {
        *streamed = l->streamed;
        ok = ok && same_bytes(&got, &whole);
    } else {
        ok = ok && rc == 1;
    }
    if (!ok)
        fprintf(stderr, "\n%s: streamed .usdb split at offset %zu (outcome "
                "%d, end %d) differs from the whole layer's\n", name, at,
                o.outcome, rc);
    ub_layer_free(l);
    ub_diags_free(d);
    ub_buf_free(&whole);
    ub_buf_free(&got);
    return ok;
}

/* The same for .usdc, which writes a prim when it closes and so streams
 * whatever the order of its text; the tail's memory is given back as it
 * goes out, which this checks under AddressSanitizer too, and the stream
 * takes those pages for its own arrays (*pooled, when not NULL: how many
 * bytes of them).  Both ways must fail alike where crate cannot hold the
 * layer. */
static unsigned n_usdc_streamed; /* splits the .usdc check streamed */

/* The stream's parse_threads, as if the parse took more CPUs than there
 * are while the tail runs: the head's prims are then stored on the
 * parse's threads, the tail's by the stream's own, on any machine. */
static void every_cpu_busy(void *ctx, unsigned n)
{
    ub_usdc_stream_parse_threads(ctx, n > 1 ? 1024 : n);
}

/* The stream's tail_pace, as if the tail were always ahead: it then
 * stores every batch the head's walk has left it, whenever it takes a
 * block of text, and the head leaves it all it may. */
static void tail_always_ahead(void *ctx, bool ahead)
{
    (void)ahead;
    ub_usdc_stream_tail_pace(ctx, true);
}

static bool same_usdc_streamed(const run *s, const char *text, size_t len,
                               size_t at, const char *name, size_t *pooled,
                               size_t *tail_stored)
{
    if (!s->layer)
        return true;
    ub_buf whole, got;
    ub_buf_init(&whole);
    ub_buf_init(&got);
    ub_diags *d = ub_diags_new();
    int want = ub_usdc_write(s->layer, &whole, d);
    ub_usdc_stream *st = ub_usdc_stream_new(&got, d);
    ub_parse_stream ps = {.prim_done = ub_usdc_stream_prim,
                          .ctx = st,
                          .two_threads = true,
                          .parse_threads = every_cpu_busy,
                          .tail_pace = tail_always_ahead,
                          .pages = ub_usdc_stream_pages(st)};
    ub_parse_opts o = {.split = 1, .split_at = at, .stream = &ps};
    ub_layer *l = ub_parse_usda_opts(strtab, "t.usda", text, len, &o, d);
    int rc = -1;
    if (l && l->streamed)
        rc = ub_usdc_stream_end(st, l);
    if (pooled)
        *pooled = ub_pages_filled(ub_usdc_stream_pages(st));
    if (tail_stored)
        *tail_stored = ub_usdc_stream_tail_stored(st);
    ub_usdc_stream_free(st);
    if (l && !l->streamed) { /* parsed again, whole: written whole */
        got.len = 0;
        rc = ub_usdc_write(l, &got, d);
    }
    n_usdc_streamed += l && l->streamed;
    bool ok = rc == want && (rc != 0 || same_bytes(&got, &whole));
    if (!ok)
        fprintf(stderr, "\n%s: streamed .usdc split at offset %zu (outcome "
                "%d, end %d, whole %d) differs from the whole layer's\n",
                name, at, o.outcome, rc, want);
    ub_layer_free(l);
    ub_diags_free(d);
    ub_buf_free(&whole);
    ub_buf_free(&got);
    return ok;
}

/* Whether parse r gave what s did: layer, text, locations, diagnostics. */
static bool same_run(const run *s, const run *r)
{
    return (s->layer == NULL) == (r->layer == NULL) &&
           s->text.len == r->text.len &&
           (!s->text.len ||
            memcmp(s->text.data, r->text.data, s->text.len) == 0) &&
           same_diags(s->diags, r->diags) &&
           (!s->layer || same_prim(s->layer->root, r->layer->root, r->layer));
}

/* Whether a split parse at candidate `at` equals the serial parse s. */
static unsigned n_usdb_streamed; /* splits the .usdb check streamed */

static bool same_as_serial(const run *s, const char *text, size_t len,
                           size_t at, const char *name, int *outcome,
                           bool usdb)
{
    run r;
    run_parse(&r, text, len, 1, at);
    bool ok = same_run(s, &r);
    if (!ok)
        fprintf(stderr, "\n%s: split at offset %zu (outcome %d) differs from "
                "the serial parse\n", name, at, r.outcome);
    if (outcome)
        *outcome = r.outcome;
    run_free(&r);
    bool streamed = false;
    ok = ok && (!usdb || same_usdb_streamed(s, text, len, at, name,
                                            &streamed));
    ok = ok &&
         (!usdb || same_usdc_streamed(s, text, len, at, name, NULL, NULL));
    n_usdb_streamed += streamed;
    return ok;
}

/* Try every candidate line (or `max` of them, spread out); count the
 * outcomes in counts[UB_PARSE_*]. */
static bool check_splits(const char *text, size_t len, const char *name,
                         size_t max, unsigned counts[4])
{
    run s;
    run_parse(&s, text, len, -1, 0);
    size_t n = 0;
    for (size_t at = ub_parse_split_point(text, len, 0); at < len;
         at = ub_parse_split_point(text, len, at + 1))
        n++;
    size_t step = max && n > max ? n / max : 1, i = 0;
    bool ok = true;
    for (size_t at = ub_parse_split_point(text, len, 0); at < len && ok;
         at = ub_parse_split_point(text, len, at + 1), i++) {
        if (i % step)
            continue;
        int oc = 0;
        /* the .usdb stream at every fourth: the corpus takes long enough */
        ok = same_as_serial(&s, text, len, at, name, &oc, i % 4 == 0);
        if (counts && oc >= 0 && oc < 4)
            counts[oc]++;
    }
    run_free(&s);
    return ok;
}

/* Split a small layer at the line holding `mark`; the outcome must be
 * `want` and the result the serial one. */
static void split_at_mark(const char *text, const char *mark, int want)
{
    const char *m = strstr(text, mark);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    size_t at = (size_t)(m - text);
    while (at > 0 && text[at - 1] != '\n')
        at--;
    size_t len = strlen(text);
    CU_ASSERT_EQUAL(ub_parse_split_point(text, len, at), at);
    run s;
    run_parse(&s, text, len, -1, 0);
    int oc = -1;
    CU_ASSERT(same_as_serial(&s, text, len, at, mark, &oc, true));
    if (oc != want)
        fprintf(stderr, "\nsplit at '%s': outcome %d, wanted %d\n", mark, oc,
                want);
    CU_ASSERT_EQUAL(oc, want);
    run_free(&s);
}

/* Text that does not end in a NUL (a mapped file, a fuzzer's input): the
 * parse must not look past the last byte, wherever the input ends (a lone
 * CR, blanks, inside a comment) and wherever it is split.  The copies
 * are exactly as long as the text, so AddressSanitizer sees any read past
 * the end; the fuzzer found one in the end-of-input location. */
static void test_no_terminator(void)
{
    static const char *const texts[] = {
        "#usda 1.0\ndef \"a\"\n{\n}\ndef \"b\"\n{\n}\n\r",
        "#usda 1.0\r\ndef \"a\"\r\n{\r\n}\r\ndef \"b\"\r\n{\r\n}\r",
        "#usda 1.0\na\ndef \"b\"\n{\n    def \"c\"\n    {\n    }\n}\n\r",
        "#usda 1.0\ndef \"a\"\n{\n}\ndef \"b\"\n{\n}\n/* open \r",
        "#usda 1.0\ndef \"a\"\n{\n}\ndef \"b\"\n{\n    int x = 1\n \t\r\n ",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        size_t len = strlen(texts[i]);
        char *exact = malloc(len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(exact);
        memcpy(exact, texts[i], len);
        CU_ASSERT(check_splits(exact, len, "no terminator", 0, NULL));
        free(exact);
    }
}

/* ub_parse_opts.read_text as a file's pread serves it, from `file`
 * (NULL: it fails); counted, from both threads. */
typedef struct served {
    const char *file;
    atomic_size_t bytes;
    atomic_uint calls;
} served;

static int serve_text(void *ctx, void *buf, size_t n, uint64_t at)
{
    served *sv = ctx;
    atomic_fetch_add(&sv->calls, 1);
    if (!sv->file)
        return -1;
    memcpy(buf, sv->file + at, n);
    atomic_fetch_add(&sv->bytes, n);
    return 0;
}

/* Mapped text read through read_text: both threads' scanners take their
 * text from it, and the tail counts the lines before it through it too
 * -- in steps, here with a "\r\n" and a lone '\r' cut by a step's end,
 * which must count as the scanner counts them.  The "file" differs from
 * the text in one value on each side of the split, so the layer shows
 * where the scanners read; where read_text fails, the text is read. */
static void test_read_text(void)
{
    enum { STEP = 256 * 1024, PRIMS = 24000 };
    ub_buf b;
    ub_buf_init(&b);
    ub_buf_puts(&b, "#usda 1.0\r\n");
    for (unsigned i = 0; i < PRIMS; i++) {
        for (size_t cut = STEP; cut <= 2 * STEP; cut += STEP)
            if (b.len < cut && b.len + 64 > cut) {
                /* a comment whose line end starts at cut - 1 */
                ub_buf_putc(&b, '#');
                while (b.len < cut - 1)
                    ub_buf_putc(&b, '-');
                ub_buf_puts(&b, cut == STEP ? "\r\n" : "\r\r\n");
            }
        ub_buf_printf(&b, "def \"p%05u\"\r\n{\r\n    int x = 1\r\n}\r\n",
                      i);
    }
    CU_ASSERT_FATAL(!b.failed && b.len > 3 * STEP && b.len < 4 * STEP);
    CU_ASSERT_EQUAL(b.data[STEP - 1], '\r');
    CU_ASSERT_EQUAL(b.data[STEP], '\n');
    CU_ASSERT_EQUAL(b.data[2 * STEP - 1], '\r');
    CU_ASSERT_EQUAL(b.data[2 * STEP], '\r');
    size_t len = b.len, at = ub_parse_split_point(b.data, len, 3 * STEP);
    CU_ASSERT_FATAL(at < len);
    char *file = malloc(len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    memcpy(file, b.data, len);
    char *head = strstr(file + 100, "x = 1"), *tail = strstr(file + at, "x = 1");
    CU_ASSERT_FATAL(head && tail);
    head[4] = '7';
    tail[4] = '7';

    run want_file, want_text, got;
    run_parse(&want_file, file, len, -1, 0);
    run_parse(&want_text, b.data, len, -1, 0);
    CU_ASSERT_FATAL(want_file.layer && want_text.layer);
    CU_ASSERT(!same_bytes(&want_file.text, &want_text.text));

    served sv = {.file = file};
    ub_parse_opts o = {.mapped = true, .read_text = serve_text,
                       .read_ctx = &sv, .split = 1, .split_at = at};
    run_parse_opts(&got, b.data, len, &o);
    CU_ASSERT_EQUAL(got.outcome, UB_PARSE_SPLIT_GRAFTED);
    CU_ASSERT(same_run(&want_file, &got));
    /* each scanner reads its part once; the tail reads the head's to
     * count its lines (and a byte past each step) */
    CU_ASSERT(atomic_load(&sv.bytes) >= len + at);
    CU_ASSERT(atomic_load(&sv.bytes) <= len + at + at / STEP + 1);
    run_free(&got);

    /* one thread alike */
    atomic_store(&sv.bytes, 0);
    o = (ub_parse_opts){.mapped = true, .read_text = serve_text,
                        .read_ctx = &sv, .split = -1};
    run_parse_opts(&got, b.data, len, &o);
    CU_ASSERT(same_run(&want_file, &got));
    CU_ASSERT_EQUAL(atomic_load(&sv.bytes), len);
    run_free(&got);

    /* a failing read: the text */
    served none = {.file = NULL};
    o = (ub_parse_opts){.mapped = true, .read_text = serve_text,
                        .read_ctx = &none, .split = 1, .split_at = at};
    run_parse_opts(&got, b.data, len, &o);
    CU_ASSERT_EQUAL(got.outcome, UB_PARSE_SPLIT_GRAFTED);
    CU_ASSERT(same_run(&want_text, &got));
    CU_ASSERT(atomic_load(&none.calls) > 0);
    run_free(&got);

    /* text that is not mapped is read as it is */
    atomic_store(&sv.calls, 0);
    o = (ub_parse_opts){.read_text = serve_text, .read_ctx = &sv,
                        .split = 1, .split_at = at};
    run_parse_opts(&got, b.data, len, &o);
    CU_ASSERT(same_run(&want_text, &got));
    CU_ASSERT_EQUAL(atomic_load(&sv.calls), 0);
    run_free(&got);

    run_free(&want_file);
    run_free(&want_text);
    free(file);
    ub_buf_free(&b);
}

/* A prim-heavy layer like the benchmark's, nested and with metadata. */
static char *bench_like(unsigned nprims, size_t *len)
{
    ub_buf b;
    ub_buf_init(&b);
    ub_buf_puts(&b, "#usda 1.0\n(\n    defaultPrim = \"World\"\n    "
                    "upAxis = \"Y\"\n)\n\ndef Xform \"World\"\n{\n    "
                    "def Scope \"Looks\"\n    {\n");
    for (unsigned i = 0; i < 20; i++)
        ub_buf_printf(&b, "        def Material \"look_%02u\"\n        {\n"
                          "        }\n\n", i);
    ub_buf_puts(&b, "    }\n\n");
    for (unsigned i = 0; i < nprims; i++) {
        ub_buf_printf(
            &b,
            "    def Xform \"prop_%06u\" (\n        customData = {\n"
            "            int id = %u\n            double weight = %u.5\n"
            "        }\n        doc = \"prop %u\"\n        kind = \"group\"\n"
            "        prepend apiSchemas = [\"MaterialBindingAPI\"]\n    )\n"
            "    {\n        custom string department = \"layout\"\n"
            "        rel material:binding = </World/Looks/look_%02u>\n"
            "        float radius = %u.25 (\n            doc = \"cm\"\n"
            "        )\n        double3 xformOp:translate = (%u, 1.5, -2)\n"
            "        float3 xformOp:rotateXYZ.timeSamples = {\n"
            "            1: (0, 7.5, 0),\n            2: (0, 15, 0),\n"
            "        }\n        uniform token[] xformOpOrder = "
            "[\"xformOp:translate\"]\n",
            i, i, i, i, i % 20, i % 17, i);
        if (i % 7 == 0)
            ub_buf_printf(&b, "\n        def Mesh \"geo\"\n        {\n"
                              "            int[] faceVertexCounts = [4, 4]\n"
                              "            def Scope \"inner_%u\"\n"
                              "            {\n            }\n        }\n", i);
        ub_buf_puts(&b, "    }\n\n");
    }
    ub_buf_puts(&b, "    float worldScale = 2\n}\n\nover \"Other\"\n{\n}\n\n"
                    "class \"_base\"\n{\n    def \"x\"\n    {\n    }\n}\n");
    *len = b.len;
    return ub_buf_take(&b);
}

/* An array-heavy layer: meshes with point arrays and sampled arrays. */
static char *arrays_like(unsigned nmesh, size_t *len)
{
    ub_buf b;
    ub_buf_init(&b);
    ub_buf_puts(&b, "#usda 1.0\n(\n    startTimeCode = 1\n"
                    "    endTimeCode = 3\n)\n\ndef Xform \"Set\"\n{\n");
    for (unsigned i = 0; i < nmesh; i++) {
        ub_buf_printf(&b, "    def Mesh \"mesh_%u\"\n    {\n"
                          "        int[] faceVertexIndices = [", i);
        for (unsigned k = 0; k < 60; k++)
            ub_buf_printf(&b, "%s%u", k ? ", " : "", (k * 7 + i) % 40);
        ub_buf_puts(&b, "]\n        point3f[] points.timeSamples = {\n");
        for (unsigned t = 1; t <= 3; t++) {
            ub_buf_printf(&b, "            %u: [", t);
            for (unsigned k = 0; k < 40; k++)
                ub_buf_printf(&b, "%s(%u.5, %u, -%u.25)", k ? ", " : "", k,
                              t, i);
            ub_buf_puts(&b, "],\n");
        }
        ub_buf_puts(&b, "        }\n        texCoord2f[] primvars:st = [\n");
        for (unsigned k = 0; k < 12; k++)
            ub_buf_printf(&b, "            (0.%u, 1),\n", k);
        ub_buf_puts(&b, "        ] (\n            interpolation = "
                        "\"vertex\"\n        )\n    }\n\n");
    }
    ub_buf_puts(&b, "}\n");
    *len = b.len;
    return ub_buf_take(&b);
}

static void test_arrays_like(void)
{
    size_t len;
    char *text = arrays_like(60, &len);
    unsigned counts[4] = {0};
    CU_ASSERT(check_splits(text, len, "arrays-like", 0, counts));
    /* every candidate: the root prim and each mesh */
    CU_ASSERT_EQUAL(counts[UB_PARSE_SPLIT_GRAFTED], 61);
    CU_ASSERT_EQUAL(counts[UB_PARSE_SPLIT_READ_ON] +
                        counts[UB_PARSE_SPLIT_REPARSED], 0);
    free(text);
}

static void test_bench_like(void)
{
    size_t len;
    char *text = bench_like(120, &len);
    unsigned counts[4] = {0};
    CU_ASSERT(check_splits(text, len, "bench-like", 0, counts));
    /* the split really happens, not just the fallbacks */
    CU_ASSERT(counts[UB_PARSE_SPLIT_GRAFTED] > 100);
    free(text);
}

/* A layer whose tail first has a few prims of big arrays, then many small
 * prims: streamed to crate, the big ones' memory goes back in pages of
 * their own, which the arrays of the writer take as they grow past the
 * heap's blocks on the small ones.  *at: where the tail starts. */
static char *pages_like(size_t *len, size_t *at)
{
    ub_buf b;
    ub_buf_init(&b);
    ub_buf_puts(&b, "#usda 1.0\ndef Xform \"Set\"\n{\n");
    for (unsigned i = 0; i < 200; i++)
        ub_buf_printf(&b, "    def \"head_%u\"\n    {\n        int n = %u\n"
                          "    }\n", i, i);
    *at = b.len;
    for (unsigned i = 0; i < 6; i++) {
        ub_buf_printf(&b, "    def Mesh \"big_%u\"\n    {\n"
                          "        point3f[] points = [", i);
        for (unsigned k = 0; k < 60000; k++)
            ub_buf_printf(&b, "%s(%u, %u.5, -%u)", k ? ", " : "", k, i, k);
        ub_buf_puts(&b, "]\n    }\n");
    }
    for (unsigned i = 0; i < 6000; i++)
        ub_buf_printf(&b, "    def \"small_%u\" (\n        doc = \"n%u\"\n"
                          "    )\n    {\n        double v = %u.5\n"
                          "        string s = \"s%u\"\n    }\n",
                      i, i, i, i);
    ub_buf_puts(&b, "}\n");
    *len = b.len;
    return ub_buf_take(&b);
}

/* The pages the tail's memory gives back, taken by the crate stream's
 * arrays, tables and values' buffer (ub_pages.h), must not change a
 * byte: the file is the whole layer's, pages that held the tail's model
 * and all. */
static void test_pages_to_crate(void)
{
    size_t len, head;
    char *text = pages_like(&len, &head);
    run s;
    run_parse(&s, text, len, -1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.layer);
    size_t at = ub_parse_split_point(text, len, head), pooled = 0;
    CU_ASSERT_EQUAL(at, head);
    CU_ASSERT(
        same_usdc_streamed(&s, text, len, at, "pages", &pooled, NULL));
#if !UB_ASAN
    CU_ASSERT(pooled > 0); /* (else this checked nothing new) */
#endif
    run_free(&s);
    free(text);
}

/* While the tail is ahead, its thread stores batches the head's walk
 * handed over (ub_parse_stream.tail_pace): the file must be the same
 * bytes, whichever thread stored what.  The layer is big enough for the
 * tail to take many blocks of text while the head's walk hands batches
 * over. */
static void test_tail_stores(void)
{
    size_t len;
    char *text = bench_like(12000, &len);
    run s;
    run_parse(&s, text, len, -1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.layer);
    size_t at = ub_parse_split_point(text, len, len / 2), stored = 0;
    CU_ASSERT(at < len);
    CU_ASSERT(same_usdc_streamed(&s, text, len, at, "tail stores", NULL,
                                 &stored));
    if (ub_cpus() >= 2) /* (else there is no queue to store from) */
        CU_ASSERT(stored > 0);
    run_free(&s);
    free(text);
}

static void on_progress(void *ctx, size_t bytes)
{
    size_t *last = ctx;
    if (bytes < *last)
        *last = SIZE_MAX; /* went backwards */
    else if (*last != SIZE_MAX)
        *last = bytes;
}

/* A head that reads on after the split reads the tail's text again; its
 * progress reports must not go back. */
static void test_read_on_progress(void)
{
    ub_buf b;
    ub_buf_init(&b);
    ub_buf_puts(&b, "#usda 1.0\ndef \"w\"\n{\n");
    for (unsigned i = 0; b.len < (2u << 20); i++)
        ub_buf_printf(&b, "    def \"p%u\"\n    {\n        rel r = </w>\n"
                          "    }\n", i);
    /* the tail gives up at its very end, after reading all of it */
    ub_buf_puts(&b, "    def \"last\"\n    {\n        rel r = <../p0>\n"
                    "    }\n}\n");
    size_t last = 0;
    ub_parse_opts o = {.split = 1, .split_at = b.len / 2,
                       .progress = on_progress, .progress_ctx = &last};
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda_opts(strtab, "t.usda", b.data, b.len, &o, d);
    CU_ASSERT_PTR_NOT_NULL(l);
    CU_ASSERT_EQUAL(o.outcome, UB_PARSE_SPLIT_READ_ON); /* relative path */
    CU_ASSERT_EQUAL(last, b.len);
    ub_layer_free(l);
    ub_diags_free(d);
    ub_buf_free(&b);
}

/* What a stream is told of the parse's threads: 2 before its first
 * prim, 1 once the tail's thread has ended (seen as the head takes a
 * block of text: before, between or after the head's prims), before the
 * tail's prims. */
typedef struct told {
    char ev[64]; /* '2', '1', 'h' (a head prim), 't' (a tail prim) */
    size_t n;
    size_t head_end; /* the text the head reads */
    const char *text;
} told;

static void told_threads(void *ctx, unsigned n)
{
    told *t = ctx;
    if (t->n < sizeof t->ev - 1)
        t->ev[t->n++] = (char)('0' + n);
}

static void told_prim(void *ctx, const ub_layer *layer, const ub_prim *prim,
                      unsigned depth)
{
    told *t = ctx;
    (void)layer;
    (void)depth;
    /* prims p0.. are written in order: p<k>'s line is past the split or
     * not */
    char name[32];
    snprintf(name, sizeof name, "def \"%s\"", prim->name);
    const char *at = strstr(t->text, name);
    if (t->n < sizeof t->ev - 1)
        t->ev[t->n++] = at && (size_t)(at - t->text) < t->head_end ? 'h' : 't';
}

/* Whether ev has one '1', after '2' and before any tail prim, and is
 * `rest` without it: the head sees the tail's end as it takes a block of
 * text, so the '1' may come before, between or after the head's prims. */
static bool told_once_before_tail(const char *ev, const char *rest)
{
    const char *one = strchr(ev, '1'), *tail = strchr(ev, 't');
    if (!one || one == ev || strchr(one + 1, '1') || (tail && tail < one))
        return false;
    size_t k = (size_t)(one - ev);
    return strncmp(ev, rest, k) == 0 && strcmp(one + 1, rest + k) == 0;
}

/* Parse text (split at `at`, or by one thread: split -1) for a stream
 * that records in t what it is told; t->ev ends with a NUL. */
static void parse_told(told *t, const char *text, size_t len, int split,
                       size_t at, int outcome,
                       void (*prim_done)(void *, const ub_layer *,
                                         const ub_prim *, unsigned))
{
    ub_parse_stream ps = {.prim_done = prim_done,
                          .ctx = t,
                          .two_threads = true,
                          .parse_threads = told_threads};
    ub_parse_opts o = {.split = split, .split_at = at, .stream = &ps};
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda_opts(strtab, "t.usda", text, len, &o, d);
    CU_ASSERT_PTR_NOT_NULL(l);
    CU_ASSERT_EQUAL(o.outcome, outcome);
    t->ev[t->n] = '\0';
    ub_layer_free(l);
    ub_diags_free(d);
}

static void test_stream_told_threads(void)
{
    const char *text = "#usda 1.0\n"
                       "def \"p0\"\n{\n}\n"
                       "def \"p1\"\n{\n}\n"
                       "def \"p2\"\n{\n}\n"
                       "def \"p3\"\n{\n}\n";
    size_t len = strlen(text);
    size_t at = (size_t)(strstr(text, "def \"p2\"") - text);
    told t = {.head_end = at, .text = text};
    parse_told(&t, text, len, 1, at, UB_PARSE_SPLIT_GRAFTED, told_prim);
    CU_ASSERT(told_once_before_tail(t.ev, "2hhtt"));
    /* a parse one thread reads is never said to take two */
    told serial = {.head_end = len, .text = text};
    parse_told(&serial, text, len, -1, 0, UB_PARSE_SERIAL, told_prim);
    CU_ASSERT_STRING_EQUAL(serial.ev, "hhhh");
}

/* The threads of this process (/proc/self/status), 0 when unknown. */
static int process_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* told, for a layer of many prims: consecutive head (or tail) prims are
 * one event, and the head's first waits until the tail's thread is gone. */
static void told_prim_waits(void *ctx, const ub_layer *layer,
                            const ub_prim *prim, unsigned depth)
{
    told *t = ctx;
    (void)layer;
    (void)depth;
    char ev = prim->name[0]; /* prims h<k> and t<k> */
    if (t->n && t->ev[t->n - 1] == ev)
        return;
    if (t->n == 1) /* (after '2') */
        for (int i = 0; i < 1000 && process_threads() > 1; i++)
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    if (t->n < sizeof t->ev - 1)
        t->ev[t->n++] = ev;
}

/* A tail that ends while the head still has text to read: the stream is
 * told 1 then, not at the join, so that a stream handing its work to a
 * thread of its own (ub_usdc) takes the CPU the tail has freed. */
static void test_stream_told_tail_ended(void)
{
    ub_buf b;
    ub_buf_init(&b);
    ub_buf_puts(&b, "#usda 1.0\n");
    for (int i = 0; i < 20000; i++) /* ~0.9 MB: the head takes blocks */
        ub_buf_printf(&b, "def \"h%d\"\n{\n    int a = %d\n}\n", i, i);
    size_t at = b.len;
    ub_buf_puts(&b, "def \"t0\"\n{\n}\ndef \"t1\"\n{\n}\n");
    CU_ASSERT_FALSE_FATAL(b.failed);
    told t = {.head_end = at};
    parse_told(&t, b.data, b.len, 1, at, UB_PARSE_SPLIT_GRAFTED,
               told_prim_waits);
    /* told between the head's prims -- or before its first, when the
     * tail ended before the head took its first block of text */
    if (process_threads() > 0) /* (else the wait could not know) */
        CU_ASSERT(strcmp(t.ev, "2h1ht") == 0 || strcmp(t.ev, "21ht") == 0);
    ub_buf_free(&b);
}

static void test_auto_threshold(void)
{
    size_t len;
    char *text = bench_like(50, &len);
    run r;
    run_parse(&r, text, len, 0, 0);
    CU_ASSERT_PTR_NOT_NULL(r.layer);
    CU_ASSERT_EQUAL(r.outcome, UB_PARSE_SERIAL); /* small: one thread */
    run_free(&r);
    free(text);
}

static void test_split_points(void)
{
    const char *t = "#usda 1.0\ndef \"a\" {\n}\n  over\t\"b\" {\n}\n"
                    "define = 1\nclass \"c\" {\n}\n";
    size_t len = strlen(t);
    size_t a = ub_parse_split_point(t, len, 0);
    CU_ASSERT_EQUAL(a, 10u);
    size_t b = ub_parse_split_point(t, len, a + 1);
    CU_ASSERT_EQUAL(b, (size_t)(strstr(t, "  over") - t));
    size_t c = ub_parse_split_point(t, len, b + 1);
    CU_ASSERT_EQUAL(c, (size_t)(strstr(t, "class") - t));
    CU_ASSERT_EQUAL(ub_parse_split_point(t, len, c + 1), len);
}

/* Layers whose split cannot work: the result must still be the serial
 * one, by reading on or by parsing again. */
static void test_fallbacks(void)
{
    /* a warning in the head after prims closed (a stream had them): the
     * layer is read again by one thread, and a stream gets it whole, not
     * those prims a second time (same_usdb_streamed compares the bytes) */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    custom int x = 1\n"
                  "    def \"b\"\n    {\n    }\n}\ndef \"c\"\n{\n"
                  "    custom string s = \"a\\0b\"\n}\n"
                  "def \"d\"\n{\n    def \"e\"\n    {\n    }\n}\n",
                  "def \"d\"", UB_PARSE_SPLIT_REPARSED);
    /* inside a triple-quoted string: the head sees a broken string */
    split_at_mark("#usda 1.0\ndef \"a\" (\n    doc = \"\"\"text\n"
                  "def \"inside\" {\n}\n\"\"\"\n)\n{\n}\n"
                  "def \"b\"\n{\n}\n",
                  "def \"inside\"", UB_PARSE_SPLIT_REPARSED);
    /* inside a variant body */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    variantSet \"v\" = {\n"
                  "        \"x\" {\n            def \"in\"\n            {\n"
                  "            }\n        }\n    }\n}\n",
                  "def \"in\"", UB_PARSE_SPLIT_READ_ON);
    /* a relative path after the split */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    def \"b\"\n    {\n"
                  "        rel r = <../c>\n    }\n    def \"c\"\n    {\n"
                  "    }\n}\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    /* the same prim on both sides: the serial error */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    def \"b\"\n    {\n    }\n"
                  "    def \"c\"\n    {\n    }\n    def \"b\"\n    {\n"
                  "    }\n}\n",
                  "def \"c\"", UB_PARSE_SPLIT_READ_ON);
    /* one variant set on both sides: the serial error (a set given
     * twice) */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    variantSet \"v\" = {\n"
                  "        \"x\" {\n        }\n    }\n    def \"c\"\n"
                  "    {\n    }\n    variantSet \"v\" = {\n"
                  "        \"y\" {\n        }\n    }\n}\n",
                  "def \"c\"", UB_PARSE_SPLIT_READ_ON);
    /* the same property on both sides: one property, as serially */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    double x = 1\n"
                  "    def \"c\"\n    {\n    }\n"
                  "    double x.timeSamples = {\n        1: 2,\n    }\n}\n",
                  "def \"c\"", UB_PARSE_SPLIT_READ_ON);
    /* a syntax error after the split: the serial error */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    def \"b\"\n    {\n"
                  "        double = 1\n    }\n}\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    /* an error before the split */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    foo bar baz\n    def \"b\"\n"
                  "    {\n    }\n}\n",
                  "def \"b\"", UB_PARSE_SPLIT_REPARSED);
    /* a `}` too many, and one too few */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    def \"b\"\n    {\n    }\n}\n"
                  "}\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    def \"b\"\n    {\n    }\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    /* two `}` on one line, and an attribute at the root */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    def \"b\"\n    {\n"
                  "    } }\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    def \"b\"\n    {\n    }\n}\n"
                  "double x = 1\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    /* reorder statements on a level the tail did not open */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    def \"b\"\n    {\n    }\n"
                  "    reorder nameChildren = [\"b\"]\n}\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    /* a variant set begun on both sides: serially one set gets both */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n    variantSet \"v\" = {\n"
                  "        \"x\" {\n        }\n    }\n    def \"b\"\n    {\n"
                  "    }\n    variantSet \"v\" = {\n        \"y\" {\n"
                  "        }\n    }\n}\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    /* a variant set at the root: the serial syntax error */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n}\ndef \"b\"\n{\n}\n"
                  "variantSet \"v\" = {\n    \"y\" {\n    }\n}\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
    /* inside a block comment */
    split_at_mark("#usda 1.0\n/* a comment\ndef \"x\" {\n}\n*/\n"
                  "def \"b\"\n{\n}\n",
                  "def \"x\"", UB_PARSE_SPLIT_READ_ON);
    /* a block comment never closed after the split: the serial warning */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n}\ndef \"b\"\n{\n}\n"
                  "/* never closed\ndef \"c\"\n{\n}\n",
                  "def \"b\"", UB_PARSE_SPLIT_READ_ON);
}

/* Splits that work, at the edges of what the grammar allows. */
static void test_grafts(void)
{
    /* the first root prim, after layer metadata and without */
    split_at_mark("#usda 1.0\n(\n    doc = \"d\"\n)\n\ndef \"a\"\n{\n}\n",
                  "def \"a\"", UB_PARSE_SPLIT_GRAFTED);
    split_at_mark("#usda 1.0\nover \"a\"\n{\n}\n",
                  "over \"a\"", UB_PARSE_SPLIT_GRAFTED);
    /* at the root, the last prim without a final newline */
    split_at_mark("#usda 1.0\ndef \"a\"\n{\n}\n\ndef \"b\"\n{\n}",
                  "def \"b\"", UB_PARSE_SPLIT_GRAFTED);
    /* the first statement of a prim body, deep, with CRLF line ends */
    split_at_mark("#usda 1.0\r\ndef \"a\"\r\n{\r\n    def \"b\"\r\n    {\r\n"
                  "        def \"c\"\r\n        {\r\n            int x = 1\r\n"
                  "        }\r\n        int y = 2\r\n    }\r\n}\r\n"
                  "def \"z\" {\r\n}\r\n",
                  "def \"c\"", UB_PARSE_SPLIT_GRAFTED);
    /* properties and more children after the split, on every level */
    split_at_mark("#usda 1.0\n(\n    doc = \"x\"\n)\ndef \"a\" (\n"
                  "    kind = \"group\"\n)\n{\n    int p = 1\n"
                  "    over \"b\"\n    {\n        int q = 2\n    }\n"
                  "    int r = 3\n    rel s = </a/b>\n    class \"c\" {\n"
                  "    }\n}\ndef \"d\"\n{\n}\n",
                  "over \"b\"", UB_PARSE_SPLIT_GRAFTED);
    /* variant sets after the split, on two levels, one set also before */
    split_at_mark("#usda 1.0\ndef \"a\" (\n    variants = {\n"
                  "        string v = \"x\"\n    }\n)\n{\n"
                  "    variantSet \"u\" = {\n        \"p\" {\n        }\n"
                  "    }\n    def \"b\"\n    {\n        def \"c\"\n"
                  "        {\n        }\n        variantSet \"w\" = {\n"
                  "            \"q\" {\n                def \"d\" {\n"
                  "                }\n            }\n        }\n    }\n"
                  "    variantSet \"v\" = {\n        \"x\" (\n"
                  "            doc = \"in x\"\n        ) {\n"
                  "            def \"e\"\n            {\n"
                  "                rel r = </a/e>\n            }\n"
                  "        }\n        \"z\" {\n        }\n    }\n}\n",
                  "def \"c\"", UB_PARSE_SPLIT_GRAFTED);
}

/* A directory tree's .usda files, every candidate split of each. */
static void split_tree(const char *dir, unsigned *files, bool *ok,
                       unsigned counts[4])
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && *ok) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        snprintf(p, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            split_tree(p, files, ok, counts);
        } else if (n > 6 && strcmp(p + strlen(p) - 5, ".usda") == 0) {
            FILE *f = fopen(p, "rb");
            char *text = f ? malloc((size_t)st.st_size + 1) : NULL;
            size_t len = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
            if (text) {
                (*files)++;
                /* big layers: a sample, about 20 MB of parsing each */
                size_t max = len ? 20000000 / len : 200;
                max = max < 8 ? 8 : max > 200 ? 200 : max;
                *ok = check_splits(text, len, p, max, counts);
            }
            free(text);
            if (f)
                fclose(f);
        }
        free(p);
    }
    closedir(d);
}

static void test_conformance(void)
{
    char buf[4096];
    const char *dir = getenv("UB_CONFORMANCE_DIR");
    if (!dir) {
        snprintf(buf, sizeof buf, "%s/../shared/conformance",
                 getenv("srcdir") ? getenv("srcdir") : ".");
        dir = buf;
    }
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "\nskipped: no conformance corpus at %s\n", dir);
        return;
    }
    unsigned files = 0, counts[4] = {0};
    bool ok = true;
    split_tree(dir, &files, &ok, counts);
    fprintf(stderr, "\n%u layers: %u grafted, %u read on, %u parsed again; "
            "%u streamed to .usdb, %u to .usdc\n", files, counts[1],
            counts[2], counts[3], n_usdb_streamed, n_usdc_streamed);
    CU_ASSERT(ok);
    CU_ASSERT(files > 0);
    CU_ASSERT(counts[UB_PARSE_SPLIT_GRAFTED] > 0);
    CU_ASSERT(n_usdb_streamed > 0);
    CU_ASSERT(n_usdc_streamed > 0);
}

/* A process pinned to one CPU (taskset -c 0, a scheduler's pinning) runs
 * its work on one thread: every threaded part asks ub_cpus. */
static void test_cpus_affinity(void)
{
    cpu_set_t was;
    CU_ASSERT_FATAL(sched_getaffinity(0, sizeof was, &was) == 0);
    CU_ASSERT(ub_cpus() >= 1);
    CU_ASSERT(ub_cpus() <= (unsigned)CPU_COUNT(&was));
    pin_one(&was);
    CU_ASSERT_EQUAL(ub_cpus(), 1);
    CU_ASSERT(sched_setaffinity(0, sizeof was, &was) == 0);
}

int main(void)
{
    strtab = ub_strtab_new();
    if (!strtab || CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("split", NULL, NULL);
    CU_add_test(s, "threads follow the CPU affinity", test_cpus_affinity);
    CU_add_test(s, "split points", test_split_points);
    CU_add_test(s, "grafts", test_grafts);
    CU_add_test(s, "fallbacks", test_fallbacks);
    CU_add_test(s, "text without a final NUL", test_no_terminator);
    CU_add_test(s, "mapped text read through read_text", test_read_text);
    CU_add_test(s, "bench-like layer, every split", test_bench_like);
    CU_add_test(s, "array-heavy layer, every split", test_arrays_like);
    CU_add_test(s, "the tail's pages go to the crate stream",
                test_pages_to_crate);
    CU_add_test(s, "the tail's thread stores while ahead, the same bytes",
                test_tail_stores);
    CU_add_test(s, "small layers are read by one thread", test_auto_threshold);
    CU_add_test(s, "a stream is told the parse's threads",
                test_stream_told_threads);
    CU_add_test(s, "a stream is told when the tail's thread ends",
                test_stream_told_tail_ended);
    CU_add_test(s, "progress of a head reading on", test_read_on_progress);
    CU_add_test(s, "conformance corpus, every split", test_conformance);
    unsigned failed = ub_test_run_all();
    ub_strtab_free(strtab);
    return failed ? 1 : 0;
}
