/* libFuzzer target for the crate (usdc) reader: any bytes must give a
 * layer or an error naming the damaged part, never a crash, a hang, a leak
 * or an allocation the input's size does not justify.  A layer that reads
 * is written back as canonical text, so every decoded value is visited,
 * and as crate (unless the writer refuses, saying why), which must read
 * back to the same text: the writer meets layers here that no usda text
 * makes (fuzz_roundtrip gives it those). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ub_buf.h"
#include "ub_crate.h"
#include "ub_fuzz.h"
#include "ub_usda.h"
#include "ub_usdc_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_layer *L = ub_crate_read(data, size, "fuzz.usdc", t, d);
    if (L) {
        ub_buf b;
        ub_buf_init(&b);
        ub_fuzz_canonical(L, &b);
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
        ub_layer_free(L);
    }
    ub_diags_free(d);
    ub_strtab_free(t);
    return 0;
}
