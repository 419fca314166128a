/* libFuzzer target for the crate (usdc) reader: any bytes must give a
 * layer or an error naming the damaged part, never a crash, a hang, a leak
 * or an allocation the input's size does not justify.  A layer that reads
 * is written back as canonical text, so every decoded value is visited. */
#include <stddef.h>
#include <stdint.h>

#include "ub_buf.h"
#include "ub_crate.h"
#include "ub_usda.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_layer *L = ub_crate_read(data, size, "fuzz.usdc", t, d);
    if (L) {
        ub_buf b;
        ub_buf_init(&b);
        ub_usda_write(L, &b);
        ub_buf_free(&b);
        ub_layer_free(L);
    }
    ub_diags_free(d);
    ub_strtab_free(t);
    return 0;
}
