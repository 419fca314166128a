/*
 * ub_usda — the canonical usda text writer: what OpenUSD 24.08's usdcat
 * prints for the same layer, byte for byte where we can.
 */
#ifndef UB_USDA_H
#define UB_USDA_H

#include "ub_buf.h"
#include "ub_layer.h"

/* Append the canonical text of layer to out.  Returns 0, or -1 when out of
 * memory (out->failed is then set).  Deterministic: the same layer always
 * gives the same bytes. */
int ub_usda_write(const ub_layer *layer, ub_buf *out);

#endif
