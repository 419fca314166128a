/* Placeholder until the real writer lands. */
#include "ub_usda.h"

int ub_usda_write(const ub_layer *layer, ub_buf *out)
{
    (void)layer;
    ub_buf_puts(out, "#usda 1.0\n");
    return -1;
}
