/*
 * ub_buf — a growable byte buffer, the one output sink of the writers.
 * Writers append here and the caller decides where bytes go (a temporary
 * file that is renamed into place, stdout, a test's memory).
 */
#ifndef UB_BUF_H
#define UB_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ub_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; later appends are ignored */
} ub_buf;

void ub_buf_init(ub_buf *b);
void ub_buf_free(ub_buf *b);
/* Make room for n more bytes; returns the write position or NULL. */
char *ub_buf_reserve(ub_buf *b, size_t n);
void ub_buf_append(ub_buf *b, const void *p, size_t n);
void ub_buf_puts(ub_buf *b, const char *s);
void ub_buf_putc(ub_buf *b, char c);
void ub_buf_printf(ub_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
