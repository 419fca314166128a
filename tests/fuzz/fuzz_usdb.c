/* libFuzzer target for the .usdb reader: any bytes must give a layer or a
 * located error, never a crash, a hang or a leak.  Built with
 * -DUB_USDB_FUZZING, which skips checksum checks so that mutations reach
 * the decoders behind them (a fuzzer cannot forge XXH3).  A layer that
 * reads is written back as usdb (unless the writer refuses, saying why),
 * which must read back to the same canonical text; with
 * UB_FUZZ_TEXT_READS set, that text must read, but for unregistered
 * values (ub_fuzz_text_reads). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ub_fuzz.h"
#include "ub_usdb.h"
#include "ub_usdb_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_usdb *f = ub_usdb_open_memory(data, size, "fuzz.usdb", t, d);
    if (f) {
        /* the lazy API, property by property */
        ub_arena *a = ub_arena_new();
        for (uint32_t p = 0; p < ub_usdb_prim_count(f) && p < 64; p++) {
            uint32_t first, n;
            ub_usdb_prim_fields(f, p, &first, &n);
            ub_value v;
            for (uint32_t i = 0; i < n; i++)
                ub_usdb_field_value(f, first + i, a, &v);
            for (uint32_t i = 0; i < ub_usdb_prim_prop_count(f, p); i++) {
                uint32_t q = ub_usdb_prim_prop(f, p, i);
                ub_usdb_prop_default(f, q, a, &v);
                ub_usdb_value_at(f, q, 1.5, a, &v);
                ub_usdb_value_at(f, q, -1e9, a, &v);
            }
        }
        ub_arena_free(a);
        /* the whole layer, and writing it back */
        ub_layer *L = ub_usdb_read_layer(f, "fuzz.usdb");
        if (L) {
            ub_buf b, text;
            ub_buf_init(&b);
            ub_buf_init(&text);
            ub_diags *wd = ub_diags_new();
            if (ub_usdb_write(L, 1, &b, wd) != 0) {
                if (ub_diags_errors(wd) == 0)
                    abort(); /* a refusal says why */
            } else {
                ub_fuzz_canonical(L, &text);
                ub_usdb *g =
                    ub_usdb_open_memory(b.data, b.len, "again.usdb", t, wd);
                ub_fuzz_check_back(
                    g ? ub_usdb_read_layer(g, "again.usdb") : NULL, &text);
                ub_usdb_close(g);
            }
            ub_diags_free(wd);
            ub_buf_free(&text);
            ub_buf_free(&b);
            ub_fuzz_text_reads(t, L); /* last: it changes L */
            ub_layer_free(L);
        }
        ub_usdb_close(f);
    }
    ub_diags_free(d);
    ub_strtab_free(t);
    return 0;
}
