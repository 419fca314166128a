#include "ub_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ub_buf_init(ub_buf *b)
{
    memset(b, 0, sizeof *b);
}

void ub_buf_free(ub_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
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
        char *d = realloc(b->data, cap);
        if (!d) {
            b->failed = true;
            return NULL;
        }
        b->data = d;
        b->cap = cap;
    }
    return b->data + b->len;
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
