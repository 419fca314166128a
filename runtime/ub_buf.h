/*
 * ub_buf — a growable byte buffer, the one output sink of the writers.
 * Writers append here and the caller decides where bytes go (a temporary
 * file that is renamed into place, stdout, a test's memory).
 */
#ifndef UB_BUF_H
#define UB_BUF_H

#include <stdbool.h>
#include <stddef.h>

/* Where a streaming buffer hands its bytes; returns 0, or -1 on failure. */
typedef int (*ub_buf_sink_fn)(void *ctx, const void *data, size_t len);

typedef struct ub_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation or the sink failed; appends are ignored */
    size_t present; /* a big buffer's (own pages): the bytes made present;
                       0: data is malloc's */
    /* a big buffer's next pages come from here first (ub_pages.h; NULL:
     * none) */
    struct ub_pages *pages;
    ub_buf_sink_fn sink; /* NULL: everything stays in memory */
    void *sink_ctx;
    size_t sink_threshold;
    bool sink_failed; /* the failure was the sink's (it reported it) */
} ub_buf;

void ub_buf_init(ub_buf *b);
void ub_buf_free(ub_buf *b);
/* The bytes as a block the caller gives back with free(), the buffer left
 * empty; NULL (and the buffer freed) when out of memory.  The only way to
 * keep a buffer's bytes past it: a big buffer's data is not malloc's, so
 * it must not be freed or realloc'd but through these functions. */
char *ub_buf_take(ub_buf *b);
/* Make room for n more bytes; returns the write position or NULL. */
char *ub_buf_reserve(ub_buf *b, size_t n);
/* The same for n bytes the caller writes at once (a coding or a
 * compression into its bound): from 64 KiB they are made present now,
 * with one system call, not faulted in a page at a time behind
 * ub_buf_reserve's step -- unless the buffer is in huge pages (from
 * UB_SCRATCH_HUGE), which fault in 2 MiB at a time: there a bound made
 * present cost more than the faults, being mostly not written (the
 * crate writer's FIELDSETS of the prim bench layer: an 8.2 MB bound
 * for its coding, a 2.6 MB section). */
char *ub_buf_reserve_written(ub_buf *b, size_t n);
void ub_buf_append(ub_buf *b, const void *p, size_t n);
void ub_buf_puts(ub_buf *b, const char *s);
void ub_buf_putc(ub_buf *b, char c);
void ub_buf_printf(ub_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Streaming: once set, ub_buf_drain hands the buffered bytes to sink when
 * more than threshold bytes are waiting, so a 100 MB output need not be
 * held in memory.  Writers call ub_buf_drain only at points after which
 * they never revisit what they wrote (between prims); bytes are never
 * handed over anywhere else. */
void ub_buf_set_sink(ub_buf *b, ub_buf_sink_fn sink, void *ctx,
                     size_t threshold);
void ub_buf_drain(ub_buf *b);
/* Hand everything still buffered to the sink.  Returns 0, or -1 when the
 * buffer has failed (out of memory or a sink error). */
int ub_buf_flush(ub_buf *b);

#endif
