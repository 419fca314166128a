/* Test helper: a zip archive of stored entries, as usdz packages are,
 * built in memory (for test_usdz and test_loader).  Header-only. */
#ifndef UB_ZIP_FIXTURE_H
#define UB_ZIP_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct zf_buf {
    char data[1 << 16];
    size_t len;
} zf_buf;

static inline void zf_put16(zf_buf *b, uint32_t v)
{
    b->data[b->len++] = (char)(v & 0xff);
    b->data[b->len++] = (char)((v >> 8) & 0xff);
}

static inline void zf_put32(zf_buf *b, uint32_t v)
{
    zf_put16(b, v & 0xffff);
    zf_put16(b, v >> 16);
}

/* Append one local file header and its data (method 0 = stored; flags as
 * given, for damaged variants).  Data starts 64-byte aligned, padded in
 * the extra field as usdz writers do. */
static inline void zf_entry_ex(zf_buf *b, const char *name, const char *data,
                        size_t n, uint32_t method, uint32_t flags)
{
    size_t nl = strlen(name);
    size_t at = b->len + 30 + nl;
    size_t pad = (64 - at % 64) % 64;
    if (pad && pad < 4)
        pad += 64;
    zf_put32(b, 0x04034b50);
    zf_put16(b, 20);
    zf_put16(b, flags);
    zf_put16(b, method);
    zf_put32(b, 0);
    zf_put32(b, 0); /* crc: not checked by readers of usdz */
    zf_put32(b, (uint32_t)n);
    zf_put32(b, (uint32_t)n);
    zf_put16(b, (uint32_t)nl);
    zf_put16(b, (uint32_t)pad);
    memcpy(b->data + b->len, name, nl);
    b->len += nl;
    if (pad) {
        zf_put16(b, 0x1986);
        zf_put16(b, (uint32_t)(pad - 4));
        memset(b->data + b->len, 0, pad - 4);
        b->len += pad - 4;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

static inline void zf_entry(zf_buf *b, const char *name, const char *text)
{
    zf_entry_ex(b, name, text, strlen(text), 0, 0);
}

/* A central directory's start, which ends the local entries. */
static inline void zf_end(zf_buf *b)
{
    zf_put32(b, 0x06054b50);
    for (int i = 0; i < 9; i++)
        zf_put16(b, 0);
}

static inline int zf_write(const char *path, const zf_buf *b)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(b->data, 1, b->len, f);
    return fclose(f) == 0 && w == b->len ? 0 : -1;
}

#endif
