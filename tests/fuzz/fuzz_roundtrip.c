/* libFuzzer target for the binary writers: a layer the usda reader gives
 * must come back the same from each binary format, or the target aborts.
 *   - usdc: written as crate (unless the writer refuses, saying why:
 *     crate cannot hold every layer) and read back, it writes the same
 *     canonical text as the layer it came from;
 *   - usdb: likewise, at levels 0 and 3 (stored and compressed), never
 *     refused; and written while the text is read (ub_usdb_stream, the
 *     parse split at the middle as convert splits big layers), the bytes
 *     of the whole layer's, unless the stream says it cannot;
 *   - usdc streamed: likewise the bytes of the whole layer's crate (or
 *     refused as it is), written as convert writes a big layer -- the
 *     parse split at the middle, the head's prims stored on the parse's
 *     thread -- into a file whose window is a few bytes, so that every
 *     value that repeats one is read back from the file to be compared.
 * A binary writer that loses or changes a value is a silent wrong answer
 * for every tool after the build step; this looks for the layers that do
 * it.  Seeds: as fuzz_usda's (tests/fuzz/run.sh). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ub_crate.h"
#include "ub_fuzz.h"
#include "ub_parse.h"
#include "ub_usda.h"
#include "ub_usdb.h"
#include "ub_usdb_write.h"
#include "ub_usdc_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The crate ub_usdc_write made of a layer (bin; it returned want, with
 * diagnostics wd) must read back as the layer (its canonical text). */
static void ub_fuzz_usdc(ub_strtab *t, int want, const ub_buf *bin,
                         const ub_diags *wd, const ub_buf *text)
{
    if (want != 0) {
        /* a refusal says why */
        if (ub_diags_errors(wd) == 0)
            abort();
        return;
    }
    ub_diags *d = ub_diags_new();
    ub_fuzz_check_back(ub_crate_read(bin->data, bin->len, "fuzz.usdc", t, d),
                       text);
    ub_diags_free(d);
}

static void ub_fuzz_usdb(ub_strtab *t, const ub_layer *L, int level,
                         const ub_buf *text)
{
    ub_diags *d = ub_diags_new();
    ub_buf bin;
    ub_buf_init(&bin);
    if (ub_usdb_write(L, level, &bin, d) != 0)
        abort();
    ub_usdb *f = ub_usdb_open_memory(bin.data, bin.len, "fuzz.usdb", t, d);
    ub_fuzz_check_back(f ? ub_usdb_read_layer(f, "fuzz.usdb") : NULL, text);
    ub_usdb_close(f);
    ub_buf_free(&bin);
    ub_diags_free(d);
}

/* The text read as convert reads a big layer into a stream: split at
 * its middle, the tail's half read by a second thread. */
static ub_layer *ub_fuzz_parse_split(ub_strtab *t, const uint8_t *data,
                                     size_t size, const ub_parse_stream *ps,
                                     ub_diags *d)
{
    ub_parse_opts o = {.split = 1, .split_at = size / 2, .stream = ps};
    return ub_parse_usda_opts(t, "fuzz.usda", (const char *)data, size, &o,
                              d);
}

/* The .usdb of the text read as a stream, against whole's (level 3). */
static void ub_fuzz_usdb_stream(ub_strtab *t, const uint8_t *data, size_t size,
                                const ub_buf *whole)
{
    ub_diags *d = ub_diags_new();
    ub_usdb_stream *st = ub_usdb_stream_new(3, d);
    if (!st)
        abort();
    ub_parse_stream ps = {.prim_done = ub_usdb_stream_prim,
                          .prim_reopened = ub_usdb_stream_reopened,
                          .ctx = st,
                          .two_threads = true};
    ub_layer *L = ub_fuzz_parse_split(t, data, size, &ps, d);
    ub_buf bin;
    ub_buf_init(&bin);
    /* the same text parsed before: it must parse again */
    int rc = !L ? -1 : L->streamed ? ub_usdb_stream_end(st, L, &bin)
                                   : ub_usdb_write(L, 3, &bin, d);
    if (rc < 0 ||
        (rc == 0 && (bin.len != whole->len ||
                     memcmp(bin.data, whole->data, bin.len) != 0)))
        abort();
    ub_usdb_stream_free(st);
    ub_layer_free(L);
    ub_buf_free(&bin);
    ub_diags_free(d);
}

/* A file in memory (ub_usdc_file): what the writer handed over. */
static int ub_fuzz_file_write(void *ctx, const void *data, size_t len)
{
    ub_buf_append(ctx, data, len);
    return ((ub_buf *)ctx)->failed ? -1 : 0;
}

static int ub_fuzz_file_read(void *ctx, void *data, size_t len, uint64_t at)
{
    const ub_buf *b = ctx;
    if (at > b->len || len > b->len - at)
        abort(); /* the writer reads back only what it handed over */
    memcpy(data, b->data + at, len);
    return 0;
}

static int ub_fuzz_file_patch(void *ctx, const void *data, size_t len,
                              uint64_t at)
{
    ub_buf *b = ctx;
    if (at > b->len || len > b->len - at)
        abort(); /* the header patched is one handed over */
    memcpy(b->data + at, data, len);
    return 0;
}

/* Every CPU taken while the tail runs, as on a busy machine: the head's
 * prims are stored on the parse's thread, the tail's on the stream's. */
static void ub_fuzz_busy(void *ctx, unsigned n)
{
    ub_usdc_stream_parse_threads(ctx, n > 1 ? 1024 : n);
}

/* The .usdc of the text read as a stream must be what ub_usdc_write made
 * of the layer read whole (whole; it returned want). */
static void ub_fuzz_usdc_stream(ub_strtab *t, const uint8_t *data, size_t size,
                                int want, const ub_buf *whole)
{
    ub_diags *d = ub_diags_new();
    ub_buf disk, out;
    ub_buf_init(&disk);
    ub_buf_init(&out);
    ub_usdc_file file = {ub_fuzz_file_write, ub_fuzz_file_read,
                         ub_fuzz_file_patch, &disk, 16};
    ub_usdc_to to = {.file = &file};
    ub_usdc_stream *st = ub_usdc_stream_new_to(&out, &to, d);
    if (!st)
        abort();
    ub_parse_stream ps = {.prim_done = ub_usdc_stream_prim,
                          .ctx = st,
                          .two_threads = true,
                          .parse_threads = ub_fuzz_busy};
    ub_layer *L = ub_fuzz_parse_split(t, data, size, &ps, d);
    if (!L)
        abort(); /* the same text parsed before: it must parse again */
    int rc = L->streamed ? ub_usdc_stream_end(st, L) : 0;
    ub_usdc_stream_free(st);
    if (L->streamed) {
        ub_buf_append(&disk, out.data, out.len); /* the file's end */
    } else { /* read whole after all: written whole */
        disk.len = 0;
        rc = ub_usdc_write(L, &disk, d);
    }
    if (rc != want || (rc == 0 && !ub_fuzz_same(&disk, whole)))
        abort();
    ub_layer_free(L);
    ub_buf_free(&disk);
    ub_buf_free(&out);
    ub_diags_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_parse_opts serial = {.split = -1};
    ub_layer *L = ub_parse_usda_opts(t, "fuzz.usda", (const char *)data,
                                     size, &serial, d);
    if (L) {
        ub_buf text;
        ub_buf_init(&text);
        ub_fuzz_canonical(L, &text);
        ub_buf crate;
        ub_buf_init(&crate);
        ub_diags *cd = ub_diags_new();
        int want = ub_usdc_write(L, &crate, cd);
        ub_fuzz_usdc(t, want, &crate, cd, &text);
        ub_fuzz_usdc_stream(t, data, size, want, &crate);
        ub_diags_free(cd);
        ub_buf_free(&crate);
        ub_fuzz_usdb(t, L, 0, &text);
        ub_fuzz_usdb(t, L, 3, &text);
        ub_buf whole;
        ub_buf_init(&whole);
        ub_diags *wd = ub_diags_new();
        if (ub_usdb_write(L, 3, &whole, wd) != 0)
            abort();
        ub_diags_free(wd);
        ub_fuzz_usdb_stream(t, data, size, &whole);
        ub_buf_free(&whole);
        ub_buf_free(&text);
        ub_layer_free(L);
    }
    ub_diags_free(d);
    ub_strtab_free(t);
    return 0;
}
