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
 * layer always gives the same bytes, whether written whole or streamed
 * (below).  Values are stored and sections built on a helper thread too,
 * where the process may use a second CPU (joined before returning;
 * without one, all is done in the caller's thread, to the same bytes).
 * Returns 0, or -1 after adding an error to diags (out of memory, or
 * something crate cannot hold, with the spec path it belongs to); out
 * may then hold a partial encoding. */
int ub_usdc_write(const ub_layer *layer, ub_buf *out, ub_diags *diags);

/* A file the crate goes to while it is written, so that a big one is not
 * held whole in memory: out's bytes are the file's from its start (out
 * empty when the write begins), and once more than `window` of them wait
 * in out (a value is never cut), and once every value is stored (before
 * the structural sections are built), they are handed to `write` and out
 * is emptied.  The writer reads bytes it handed over back through `read` (a
 * value that repeats one stored is compared with it byte for byte) and
 * fills in the bootstrap header, at the end, through `patch`; the caller
 * writes what out holds at the end after everything handed over.  Each
 * returns 0, or -1 after reporting why: the write then fails, with out
 * marked failed by its sink (ub_buf.sink_failed) and no error of its
 * own.  The bytes are the same as without a file, whatever the window.
 * `view` (may be NULL) saves the copy a read back makes: the bytes handed
 * over at [at, at + len) where they can be read in place (a mapping of
 * the file), or NULL, and `read` reads them. */
typedef struct ub_usdc_file {
    int (*write)(void *ctx, const void *data, size_t len);
    int (*read)(void *ctx, void *data, size_t len, uint64_t at);
    int (*patch)(void *ctx, const void *data, size_t len, uint64_t at);
    void *ctx;
    size_t window;
    const void *(*view)(void *ctx, uint64_t at, size_t len);
} ub_usdc_file;

/* The window `usdbake` writes with unless told (USDBAKE_USDC_WINDOW).
 * A window smaller than the file costs a read back for each value that
 * repeats one handed over and is not among the last few thousand stored
 * (~50,000 for the prim-heavy bench layer in 2 MiB).  Read in place
 * (`view`), that is a compare with the file's pages, cheaper than the
 * fresh pages a window the size of the file takes and then copies to
 * the file at the end: against 32 MiB, the array-heavy bench layer's
 * convert takes 10 MB less memory, the 2,000-frame clip bake 32 MB less
 * and ~17% less time. */
#define UB_USDC_FILE_WINDOW ((size_t)2 << 20)

/* What ub_usdc_write_to and ub_usdc_stream_new_to write to, beside out
 * (a member NULL: as ub_usdc_write). */
typedef struct ub_usdc_to {
    const ub_usdc_file *file;   /* the file, handed over as it goes */
    ub_samples_fn samples;      /* samples kept outside the layer */
    void *samples_ctx;
} ub_usdc_to;

/* ub_usdc_write to `to` (NULL: as ub_usdc_write). */
int ub_usdc_write_to(const ub_layer *layer, ub_buf *out,
                     const ub_usdc_to *to, ub_diags *diags);

/* The same, prim by prim as a streaming parse closes them
 * (ub_parse_stream): ub_usdc_stream_prim is its prim_done, and each prim
 * is written when it comes, so the layer is never whole in memory.
 * Errors go to diags as the prims come: give the stream diags of its
 * own, to keep only when the parse returns a `streamed` layer.  After
 * the parse, ub_usdc_stream_end writes the pseudo-root (the layer the
 * parse returned) and the sections, and returns as ub_usdc_write.  When
 * the parse returns a layer that is not `streamed` (it had to read the
 * layer whole), free the stream, drop what it appended to out, and use
 * ub_usdc_write. */
typedef struct ub_usdc_stream ub_usdc_stream;

ub_usdc_stream *ub_usdc_stream_new(ub_buf *out,
                                   ub_diags *diags); /* NULL: no memory */
/* The same writing to `to` (NULL: as ub_usdc_stream_new).  If the parse
 * returns a layer that is not `streamed`, what was handed over to its
 * file is dropped with the rest. */
ub_usdc_stream *ub_usdc_stream_new_to(ub_buf *out, const ub_usdc_to *to,
                                      ub_diags *diags);
void ub_usdc_stream_prim(void *ctx, const ub_layer *layer, const ub_prim *prim,
                         unsigned depth);
/* The parse's parse_threads: while the parse keeps every CPU busy, the
 * stream stores what it walks on the parse's thread, not its own. */
void ub_usdc_stream_parse_threads(void *ctx, unsigned n);
/* The parse's tail_pace: while ahead, the tail's thread stores what the
 * head's walk has handed over, and the head leaves that to it. */
void ub_usdc_stream_tail_pace(void *ctx, bool ahead);
/* The batches the tail's thread has stored so far (for tests: read once
 * the parse is over). */
size_t ub_usdc_stream_tail_stored(const ub_usdc_stream *s);
/* The pool a streaming parse's tail gives its pages back to as its prims
 * go out (ub_parse_stream.pages), which this stream's arrays take from
 * as they grow; NULL when there is none. */
struct ub_pages *ub_usdc_stream_pages(ub_usdc_stream *s);
/* The share of a split parse's text to give the head (head_percent):
 * the head's thread also walks its prims, and stores them but for what
 * the tail's thread stores while it is ahead (tail_pace).  Before the
 * tail stored any, 45% was best (34-66 ms faster than 50% by bench/ab),
 * and one of the two threads idled 200-550 ms whenever the VM's two CPUs
 * ran at different speeds.  With it, the two end within ~25 ms of each
 * other unless the head's CPU is the faster (then the head waits, as
 * before), and at 50% the prim-heavy convert was 66 ms faster than at
 * 45% without it (95%: 44-87, 40 rounds; the array-heavy one -4 ms,
 * -12..+5).  Against 50%, 53% was 32 ms slower (95%: 1-64) and 47% 30
 * ms (-6..+66). */
#define UB_USDC_STREAM_HEAD_PERCENT 50
int ub_usdc_stream_end(ub_usdc_stream *s, const ub_layer *layer);
void ub_usdc_stream_free(ub_usdc_stream *s);

#endif
