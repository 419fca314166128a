/*
 * ub_usdc_write — a ub_layer to OpenUSD's crate binary format (.usdc), the
 * binary every USD application opens.  What is written, version by
 * version, and why: doc/usdc.md ("Writing").
 */
#ifndef UB_USDC_WRITE_H
#define UB_USDC_WRITE_H

#include "ub_buf.h"
#include "ub_diag.h"
#include "ub_layer.h"

/* Append the crate encoding of layer to out.  The file is version 0.8.0
 * unless a value needs a newer one (timecode values 0.9.0, path
 * expressions 0.10.0, layer relocates 0.11.0).  Deterministic: the same
 * layer always gives the same bytes.  Values are stored and sections
 * built on a helper thread too, where the process may use a second CPU
 * (joined before returning; without one, all is done in the caller's
 * thread, to the same bytes).  Returns 0, or -1 after
 * adding an error to diags (out of memory, or something crate cannot
 * hold, with the spec path it belongs to); out may then hold a partial
 * encoding. */
int ub_usdc_write(const ub_layer *layer, ub_buf *out, ub_diags *diags);

#endif
