/*
 * roundtrip — the binary writers' round trip over many layers, in one
 * process (tests/corpus-roundtrip.test runs it over the conformance
 * corpus; usdb-roundtrip.test and usdc.test run the command line over the
 * fixtures).
 *
 *   roundtrip [-v] FILE...     (or names one a line on stdin: FILE "-")
 *
 * Each FILE is opened as `usdbake convert` opens it and written as
 * canonical text, which must be the text `usdbake cat` streams from it
 * prim by prim (when it can be streamed).  Then:
 *   - as usdb at levels 0 and 9, it reads back as the same text;
 *   - as usdc it is written (or refused with an error saying what crate
 *     cannot hold), written again with this process pinned to one CPU
 *     (the writer then stores on its walking thread) as the same bytes,
 *     and reads back as the same text, by one thread and by two (the
 *     reader's split, forced whatever the layer's size).
 * A file that does not open (the corpus's _bad_ layers) is counted, not
 * failed.  Prints "FAIL: FILE: what" for each failure and a summary;
 * exits 1 when anything failed, 2 on a usage error.
 *
 * Why not the command line, file by file: five or six processes a layer
 * over the corpus's 5,700 layers took nine minutes of every CI run (and
 * most of the sanitizer build's time); here it is seconds.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_buf.h"
#include "ub_crate.h"
#include "ub_diag.h"
#include "ub_loader.h"
#include "ub_parse.h"
#include "ub_usda.h"
#include "ub_usdb.h"
#include "ub_usdb_write.h"
#include "ub_usdc_write.h"

typedef struct rt_counts {
    unsigned layers, streamed, refused, failed, skipped;
    bool verbose;
} rt_counts;

static void rt_fail(rt_counts *n, const char *file, const char *what,
                    const ub_diags *d)
{
    printf("FAIL: %s: %s\n", file, what);
    for (size_t i = 0; d && i < ub_diags_count(d) && i < 3; i++)
        ub_diag_print(stdout, ub_diags_at(d, i));
    n->failed++;
}

static bool rt_same(const ub_buf *a, const ub_buf *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* back, read from what a writer wrote, must print as text; then freed. */
static bool rt_back_same(ub_layer *back, const ub_buf *text)
{
    if (!back)
        return false;
    ub_buf again;
    ub_buf_init(&again);
    bool same = ub_usda_write(back, &again) == 0 && !again.failed &&
                rt_same(text, &again);
    ub_buf_free(&again);
    ub_layer_free(back);
    return same;
}

static void rt_usdb(rt_counts *n, const char *file, ub_strtab *t,
                    const ub_layer *L, int level, const ub_buf *text)
{
    ub_diags *d = ub_diags_new();
    ub_buf bin;
    ub_buf_init(&bin);
    char what[64];
    if (!d || ub_usdb_write(L, level, &bin, d) != 0) {
        snprintf(what, sizeof what, "usdb level %d: not written", level);
        rt_fail(n, file, what, d);
    } else {
        ub_usdb *f = ub_usdb_open_memory(bin.data, bin.len, file, t, d);
        if (!rt_back_same(f ? ub_usdb_read_layer(f, file) : NULL, text)) {
            snprintf(what, sizeof what,
                     "usdb level %d: read back, it is not the same layer",
                     level);
            rt_fail(n, file, what, d);
        }
        ub_usdb_close(f);
    }
    ub_buf_free(&bin);
    ub_diags_free(d);
}

/* Whether this process could be pinned to its first allowed CPU; *was
 * keeps the affinity to restore. */
static bool rt_pin(cpu_set_t *was)
{
    if (sched_getaffinity(0, sizeof *was, was) != 0)
        return false;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, was))
            continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        return sched_setaffinity(0, sizeof one, &one) == 0;
    }
    return false;
}

static void rt_usdc(rt_counts *n, const char *file, ub_strtab *t,
                    const ub_layer *L, const ub_buf *text)
{
    ub_diags *d = ub_diags_new();
    ub_buf bin, pinned;
    ub_buf_init(&bin);
    ub_buf_init(&pinned);
    if (!d) {
        rt_fail(n, file, "out of memory", NULL);
    } else if (ub_usdc_write(L, &bin, d) != 0) {
        /* a refusal says what crate cannot hold */
        bool said = false;
        for (size_t i = 0; i < ub_diags_count(d); i++)
            said |= strstr(ub_diags_at(d, i)->message,
                           "cannot be written as usdc: ") != NULL;
        if (said)
            n->refused++;
        else
            rt_fail(n, file, "usdc: refused without saying why", d);
    } else {
        cpu_set_t was;
        bool pin = rt_pin(&was);
        int r = ub_usdc_write(L, &pinned, d);
        if (pin)
            sched_setaffinity(0, sizeof was, &was);
        if (r != 0 || !rt_same(&bin, &pinned))
            rt_fail(n, file,
                    pin ? "usdc: other bytes on one CPU"
                        : "usdc: other bytes the second time",
                    d);
        if (!rt_back_same(ub_crate_read(bin.data, bin.len, file, t, d),
                          text))
            rt_fail(n, file, "usdc: read back, it is not the same layer",
                    d);
        ub_crate_stream two = {.split = 1}; /* (whatever its size) */
        if (!rt_back_same(ub_crate_read_stream(bin.data, bin.len, file, t,
                                               &two, d),
                          text))
            rt_fail(n, file,
                    "usdc: read back by two threads, it is not the same "
                    "layer",
                    d);
    }
    ub_buf_free(&pinned);
    ub_buf_free(&bin);
    ub_diags_free(d);
}

/* The text `usdbake cat` streams from file into out: 0, 1 when the layer
 * cannot be streamed (cat writes it whole then), -1 when it does not
 * open. */
static int rt_streamed(ub_strtab *t, const char *file, ub_buf *out)
{
    ub_diags *d = ub_diags_new();
    ub_loader *ld = d ? ub_loader_new(t, d) : NULL;
    ub_usda_stream *st = ld ? ub_usda_stream_new(out) : NULL;
    int r = -1;
    if (st) {
        ub_parse_stream ps = {.prim_done = ub_usda_stream_prim,
                              .prim_reopened = ub_usda_stream_reopened,
                              .ctx = st};
        ub_loader_set_stream(ld, &ps);
        ub_layer *L = ub_loader_open(ld, file, NULL, (ub_loc){NULL, 0, 0});
        if (L && !ub_diags_errors(d))
            r = L->streamed ? ub_usda_stream_end(st, L) : 1;
    }
    ub_usda_stream_free(st);
    ub_loader_free(ld);
    ub_diags_free(d);
    return r;
}

static void rt_file(rt_counts *n, const char *file)
{
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_loader *ld = t && d ? ub_loader_new(t, d) : NULL;
    ub_layer *L = ld ? ub_loader_open(ld, file, NULL, (ub_loc){NULL, 0, 0})
                     : NULL;
    if (!ld) {
        rt_fail(n, file, "out of memory", NULL);
    } else if (!L || ub_diags_errors(d)) {
        n->skipped++;
    } else {
        ub_buf text;
        ub_buf_init(&text);
        if (ub_usda_write(L, &text) != 0 || text.failed) {
            rt_fail(n, file, "not written as text", NULL);
        } else {
            n->layers++;
            ub_buf streamed;
            ub_buf_init(&streamed);
            int sr = rt_streamed(t, file, &streamed);
            if (sr < 0)
                rt_fail(n, file, "does not open when streamed", NULL);
            if (sr == 0) {
                n->streamed++;
                if (!rt_same(&text, &streamed))
                    rt_fail(n, file, "the text cat streams is not the "
                                     "layer's",
                            NULL);
            }
            ub_buf_free(&streamed);
            rt_usdb(n, file, t, L, 0, &text);
            rt_usdb(n, file, t, L, 9, &text);
            rt_usdc(n, file, t, L, &text);
        }
        ub_buf_free(&text);
    }
    if (n->verbose)
        printf("%s\n", file);
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}

int main(int argc, char **argv)
{
    rt_counts n = {0};
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "-v") == 0) {
        n.verbose = true;
        first = 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: roundtrip [-v] FILE... (- reads names "
                        "from stdin)\n");
        return 2;
    }
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "-") != 0) {
            rt_file(&n, argv[i]);
            continue;
        }
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            line[strcspn(line, "\n")] = 0;
            if (line[0])
                rt_file(&n, line);
        }
    }
    printf("roundtrip: %u layers (%u streamed; usdb levels 0 and 9, usdc), "
           "%u refused by usdc, %u failed, %u not opened\n",
           n.layers, n.streamed, n.refused, n.failed, n.skipped);
    return n.failed ? 1 : n.layers ? 0 : 1;
}
