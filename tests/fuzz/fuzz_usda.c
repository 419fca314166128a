/* libFuzzer target for the usda reader and writer: any text must give a
 * layer or located errors, never a crash, a hang or a leak.  And what it
 * gives must hold together, or the target aborts:
 *   - a forced two-thread split parse writes the same text as one thread
 *     (or fails as it does);
 *   - a streaming parse (what `cat` does) writes the same text, unless it
 *     asks to start over;
 *   - the canonical text parses again (unless the reader warned that it
 *     would not: OpenUSD writes a layer offset too large for a double as
 *     `inf`, which no reader reads), and its own canonical text writes
 *     itself unchanged.
 * Seeds: the fixtures' and the conformance corpus's .usda layers
 * (tests/fuzz/run.sh); dictionary: tests/fuzz/usda.dict. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ub_fuzz.h"
#include "ub_parse.h"
#include "ub_usda.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The canonical text of text (parsed with opts), or failed: 1 when it
 * does not parse.  *warned: whether the reader warned. */
static int ub_fuzz_text(ub_strtab *t, const char *text, size_t len,
                        ub_parse_opts *opts, ub_buf *out, bool *warned)
{
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda_opts(t, "fuzz.usda", text, len, opts, d);
    int r = 1;
    if (l)
        r = ub_usda_write(l, out) != 0 ? -1 : 0;
    if (!l && ub_diags_errors(d) == 0)
        abort(); /* a failed parse says why */
    *warned = ub_diags_warnings(d) > 0;
    ub_layer_free(l);
    ub_diags_free(d);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    ub_strtab *t = ub_strtab_new();
    ub_buf once, split, again, streamed;
    ub_buf_init(&once);
    ub_buf_init(&split);
    ub_buf_init(&again);
    ub_buf_init(&streamed);

    ub_parse_opts serial = {.split = -1};
    bool warned, ignored;
    int r = ub_fuzz_text(t, text, size, &serial, &once, &warned);

    /* two threads, split at the first candidate line past the middle */
    ub_parse_opts halves = {.split = 1, .split_at = size / 2};
    int rs = ub_fuzz_text(t, text, size, &halves, &split, &ignored);
    if (rs != r || (r == 0 && !ub_fuzz_same(&once, &split)))
        abort();

    /* streamed, as cat reads */
    ub_usda_stream *us = ub_usda_stream_new(&streamed);
    if (us) {
        ub_parse_stream cb = {.prim_done = ub_usda_stream_prim,
                              .prim_reopened = ub_usda_stream_reopened,
                              .ctx = us};
        ub_parse_opts so = {.split = -1, .stream = &cb};
        ub_diags *d = ub_diags_new();
        ub_layer *l = ub_parse_usda_opts(t, "fuzz.usda", text, size, &so, d);
        if ((l != NULL) != (r == 0))
            abort();
        if (l && ub_usda_stream_end(us, l) == 0 &&
            !ub_fuzz_same(&once, &streamed))
            abort();
        ub_layer_free(l);
        ub_diags_free(d);
        ub_usda_stream_free(us);
    }

    /* The canonical text parses (unless the reader warned), and its
     * canonical text is a fixed point.  Not the first text itself: like OpenUSD's, it may print a
     * field whose value has no text (an empty `variants = {}` dictionary
     * prints as `( )`), which is gone once read again. */
    if (r == 0) {
        ub_buf third;
        ub_buf_init(&third);
        int ra = ub_fuzz_text(t, once.data ? once.data : "", once.len,
                              &serial, &again, &ignored);
        if (ra != 0 && !warned)
            abort();
        if (ra == 0 &&
            (ub_fuzz_text(t, again.data ? again.data : "", again.len,
                          &serial, &third, &ignored) != 0 ||
             !ub_fuzz_same(&again, &third)))
            abort();
        ub_buf_free(&third);
    }
    ub_buf_free(&once);
    ub_buf_free(&split);
    ub_buf_free(&again);
    ub_buf_free(&streamed);
    ub_strtab_free(t);
    return 0;
}
