#include "ub_usdz.h"

#include <stdint.h>
#include <string.h>

/* Zip's local file header: signature, then little-endian fields at these
 * offsets, then the name and the extra field, then the data. */
enum {
    UB_ZIP_LOCAL_SIG = 0x04034b50,
    UB_ZIP_FLAGS = 6,
    UB_ZIP_METHOD = 8,
    UB_ZIP_CSIZE = 18,
    UB_ZIP_USIZE = 22,
    UB_ZIP_NAME_LEN = 26,
    UB_ZIP_EXTRA_LEN = 28,
    UB_ZIP_LOCAL_SIZE = 30,
    UB_ZIP_FLAG_ENCRYPTED = 1 << 0,
    UB_ZIP_FLAG_DESCRIPTOR = 1 << 3, /* sizes after the data: unknown here */
};

static uint32_t ub_le16(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] | (uint32_t)u[1] << 8;
}

static uint32_t ub_le32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 |
           (uint32_t)u[3] << 24;
}

bool ub_usdz_sniff(const char *data, size_t len)
{
    return len >= 4 && ub_le32(data) == UB_ZIP_LOCAL_SIG;
}

int ub_usdz_next(const char *data, size_t len, size_t *pos, ub_usdz_entry *e,
                 const char **why)
{
    size_t at = *pos;
    /* anything but another local header ends the entries (the central
     * directory follows them) */
    if (at > len || len - at < 4 || ub_le32(data + at) != UB_ZIP_LOCAL_SIG)
        return 0;
    const char *h = data + at;
    if (len - at < UB_ZIP_LOCAL_SIZE) {
        *why = "truncated local file header";
        return -1;
    }
    uint32_t flags = ub_le16(h + UB_ZIP_FLAGS);
    uint32_t method = ub_le16(h + UB_ZIP_METHOD);
    uint32_t csize = ub_le32(h + UB_ZIP_CSIZE);
    uint32_t usize = ub_le32(h + UB_ZIP_USIZE);
    size_t nlen = ub_le16(h + UB_ZIP_NAME_LEN);
    size_t xlen = ub_le16(h + UB_ZIP_EXTRA_LEN);
    size_t body = at + UB_ZIP_LOCAL_SIZE;
    if (len - body < nlen || len - body - nlen < xlen) {
        *why = "entry name or extra field past the end of the file";
        return -1;
    }
    e->name = data + body;
    e->name_len = nlen;
    e->header_offset = at;
    if (flags & UB_ZIP_FLAG_ENCRYPTED) {
        *why = "encrypted entry (usdz entries are plain)";
        return -1;
    }
    if (method != 0) {
        *why = "compressed entry (usdz entries are stored uncompressed)";
        return -1;
    }
    if (flags & UB_ZIP_FLAG_DESCRIPTOR) {
        *why = "entry sizes in a data descriptor (usdz entries give their "
               "size in the header)";
        return -1;
    }
    if (csize == 0xffffffffu || usize == 0xffffffffu) {
        *why = "zip64 entry (not used by usdz)";
        return -1;
    }
    if (csize != usize) {
        *why = "stored entry whose sizes disagree";
        return -1;
    }
    size_t data_at = body + nlen + xlen;
    if (len - data_at < csize) {
        *why = "entry data past the end of the file";
        return -1;
    }
    e->data = data + data_at;
    e->len = csize;
    *pos = data_at + csize;
    return 1;
}

int ub_usdz_find(const char *data, size_t len, const char *name,
                 size_t name_len, ub_usdz_entry *e, const char **why)
{
    size_t pos = 0;
    int r;
    while ((r = ub_usdz_next(data, len, &pos, e, why)) == 1)
        if (!name ||
            (e->name_len == name_len && memcmp(e->name, name, name_len) == 0))
            return 1;
    return r;
}
