#define _GNU_SOURCE /* mremap */
#include "ub_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ub_arena.h"
#include "ub_pages.h"

/* A buffer from UB_BUF_PAGES bytes lives in pages of its own: it grows by
 * mremap, which moves pages rather than copying bytes, and the pages
 * ahead of its end are made present a step at a time (ub_populate_ahead),
 * not faulted in one by one.  (Not under AddressSanitizer: UB_ASAN.) */
#if !UB_ASAN && defined(MAP_ANONYMOUS) && defined(MREMAP_MAYMOVE)
#define UB_BUF_MMAP 1
#else
#define UB_BUF_MMAP 0
#endif
#define UB_BUF_PAGES ((size_t)1 << 20)
/* how far past the end written its pages are kept present, beyond
 * ub_populate_ahead's own step */
#define UB_BUF_LEAD ((size_t)256 << 10)

void ub_buf_init(ub_buf *b)
{
    memset(b, 0, sizeof *b);
}

void ub_buf_free(ub_buf *b)
{
#if UB_BUF_MMAP
    if (b->present)
        munmap(b->data, b->cap);
    else
#endif
        free(b->data);
    memset(b, 0, sizeof *b);
}

char *ub_buf_take(ub_buf *b)
{
    char *d = b->data;
#if UB_BUF_MMAP
    if (b->present) {
        d = malloc(b->len ? b->len : 1);
        if (d && b->len)
            memcpy(d, b->data, b->len);
        ub_buf_free(b);
        return d;
    }
#endif
    ub_buf_init(b);
    return d ? d : malloc(1);
}

#if UB_BUF_MMAP
/* Make the pages up to a step past the end present.  Not up to the end
 * of what was reserved: writers reserve a bound (a compressed size) and
 * may write far less. */
static void ub_buf_populate(ub_buf *b)
{
    /* (a writer may have written past them: a coding into its bound,
     * ub_buf_reserve_written) */
    b->present = ub_pages_ahead(b->pages, b->data, b->present, b->len,
                                b->len + UB_BUF_LEAD, b->cap);
}

/* Grow a buffer to cap bytes of its own pages; false: out of memory. */
static bool ub_buf_grow_paged(ub_buf *b, size_t cap)
{
    if (b->present) {
        char *d = ub_remap_grow(b->data, b->cap, cap);
        if (!d)
            return false;
        if (b->cap < UB_SCRATCH_HUGE)
            ub_huge_hint(d, cap); /* (a bigger block keeps its hint) */
        b->data = d;
        b->cap = cap;
        return true;
    }
    char *d = mmap(NULL, cap, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (d == MAP_FAILED)
        return false;
    ub_huge_hint(d, cap);
    char *old = b->data;
    b->data = d;
    b->cap = cap;
    ub_buf_populate(b); /* before the copy, which would fault them */
    if (b->len)
        memcpy(d, old, b->len);
    free(old);
    return true;
}
#endif

/* Grow b to cap bytes; false: out of memory. */
static bool ub_buf_grow(ub_buf *b, size_t cap)
{
#if UB_BUF_MMAP
    if (cap >= UB_BUF_PAGES)
        return ub_buf_grow_paged(b, cap);
#endif
    char *d = realloc(b->data, cap);
    if (!d)
        return false;
    b->data = d;
    b->cap = cap;
    return true;
}

char *ub_buf_reserve(ub_buf *b, size_t n)
{
    if (b->failed)
        return NULL;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n) {
            if (cap > ((size_t)-1) / 2) {
                b->failed = true;
                return NULL;
            }
            cap *= 2;
        }
        if (!ub_buf_grow(b, cap)) {
            b->failed = true;
            return NULL;
        }
    }
#if UB_BUF_MMAP
    if (b->present && b->len + n > b->present)
        ub_buf_populate(b);
#endif
    return b->data + b->len;
}

char *ub_buf_reserve_written(ub_buf *b, size_t n)
{
    char *w = ub_buf_reserve(b, n);
    if (!w || n < UB_SCRATCH_PAGES || UB_ASAN)
        return w;
#if UB_BUF_MMAP
    if (b->present) {
        if (b->cap < UB_SCRATCH_HUGE)
            b->present =
                ub_populate_ahead(b->data, b->present, b->len + n, b->cap);
        return w;
    }
#endif
    ub_populate(w, n); /* (a malloc block: the whole pages inside it) */
    return w;
}

void ub_buf_append(ub_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return; /* p may then be a NULL empty buffer's data */
    char *w = ub_buf_reserve(b, n);
    if (!w)
        return;
    memcpy(w, p, n);
    b->len += n;
}

void ub_buf_puts(ub_buf *b, const char *s)
{
    ub_buf_append(b, s, strlen(s));
}

void ub_buf_putc(ub_buf *b, char c)
{
    char *w = ub_buf_reserve(b, 1);
    if (w) {
        *w = c;
        b->len++;
    }
}

void ub_buf_printf(ub_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        ub_buf_append(b, small, (size_t)n);
        return;
    }
    char *w = ub_buf_reserve(b, (size_t)n + 1);
    if (!w)
        return;
    va_start(ap, fmt);
    vsnprintf(w, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ub_buf_set_sink(ub_buf *b, ub_buf_sink_fn sink, void *ctx,
                     size_t threshold)
{
    b->sink = sink;
    b->sink_ctx = ctx;
    b->sink_threshold = threshold;
}

int ub_buf_flush(ub_buf *b)
{
    if (b->failed)
        return -1;
    if (b->sink && b->len) {
        if (b->sink(b->sink_ctx, b->data, b->len) != 0)
            b->failed = b->sink_failed = true;
        b->len = 0;
    }
    return b->failed ? -1 : 0;
}

void ub_buf_drain(ub_buf *b)
{
    if (b->sink && b->len > b->sink_threshold)
        ub_buf_flush(b);
}
