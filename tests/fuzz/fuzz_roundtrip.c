/* libFuzzer target for the binary writers: a layer the usda reader gives
 * must come back the same from each binary format, or the target aborts.
 *   - usdc: written as crate (unless the writer refuses, saying why:
 *     crate cannot hold every layer) and read back, it writes the same
 *     canonical text as the layer it came from;
 *   - usdb: likewise, at levels 0 and 3 (stored and compressed), never
 *     refused.
 * A binary writer that loses or changes a value is a silent wrong answer
 * for every tool after the build step; this looks for the layers that do
 * it.  Seeds: as fuzz_usda's (tests/fuzz/run.sh). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ub_crate.h"
#include "ub_fuzz.h"
#include "ub_parse.h"
#include "ub_usda.h"
#include "ub_usdb.h"
#include "ub_usdb_write.h"
#include "ub_usdc_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ub_fuzz_usdc(ub_strtab *t, const ub_layer *L, const ub_buf *text)
{
    ub_diags *d = ub_diags_new();
    ub_buf bin;
    ub_buf_init(&bin);
    if (ub_usdc_write(L, &bin, d) != 0) {
        /* a refusal says why */
        if (ub_diags_errors(d) == 0)
            abort();
    } else {
        ub_fuzz_check_back(
            ub_crate_read(bin.data, bin.len, "fuzz.usdc", t, d), text);
    }
    ub_buf_free(&bin);
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
        ub_fuzz_usdc(t, L, &text);
        ub_fuzz_usdb(t, L, 0, &text);
        ub_fuzz_usdb(t, L, 3, &text);
        ub_buf_free(&text);
        ub_layer_free(L);
    }
    ub_diags_free(d);
    ub_strtab_free(t);
    return 0;
}
