/* libFuzzer target for the crate (usdc) reader: any bytes must give a
 * layer or an error naming the damaged part, never a crash, a hang, a leak
 * or an allocation the input's size does not justify.  A layer that reads
 * is written back as canonical text, so every decoded value is visited,
 * and as crate (unless the writer refuses, saying why), which must read
 * back to the same text: the writer meets layers here that no usda text
 * makes (fuzz_roundtrip gives it those); with UB_FUZZ_TEXT_READS set,
 * the text must read, but for unregistered values (ub_fuzz_text_reads).
 * The bytes are also read by
 * two threads (ub_crate_stream.split, forced), which must give the same
 * layer or the same errors. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ub_buf.h"
#include "ub_crate.h"
#include "ub_fuzz.h"
#include "ub_usda.h"
#include "ub_usdc_write.h"
#include "../unit/same_diags.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The read by two threads of what one thread read as L (NULL: with the
 * errors in d), compared: aborts unless the same. */
static void split_same(const uint8_t *data, size_t size, ub_strtab *t,
                       const ub_layer *L, const ub_diags *d,
                       const ub_buf *text)
{
    ub_diags *d2 = ub_diags_new();
    ub_crate_stream two = {.split = 1};
    ub_layer *L2 =
        ub_crate_read_stream(data, size, "fuzz.usdc", t, &two, d2);
    if (!L2 != !L || !same_diags(d, d2))
        abort();
    if (L2)
        ub_fuzz_check_back(L2, text);
    ub_diags_free(d2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_crate_stream one = {.split = -1};
    ub_layer *L = ub_crate_read_stream(data, size, "fuzz.usdc", t, &one, d);
    if (!L)
        split_same(data, size, t, NULL, d, NULL);
    if (L) {
        ub_buf b;
        ub_buf_init(&b);
        ub_fuzz_canonical(L, &b);
        split_same(data, size, t, L, d, &b);
        ub_diags *wd = ub_diags_new();
        ub_buf bin;
        ub_buf_init(&bin);
        if (ub_usdc_write(L, &bin, wd) != 0) {
            if (ub_diags_errors(wd) == 0)
                abort(); /* a refusal says why */
        } else {
            ub_fuzz_check_back(
                ub_crate_read(bin.data, bin.len, "again.usdc", t, wd), &b);
        }
        ub_buf_free(&bin);
        ub_diags_free(wd);
        ub_buf_free(&b);
        ub_fuzz_text_reads(t, L); /* last: it changes L */
        ub_layer_free(L);
    }
    ub_diags_free(d);
    ub_strtab_free(t);
    return 0;
}
