/* Names as OpenUSD's paths have them (see ub_ident.h). */
#include "ub_ident.h"

#include <stdint.h>

#include "ub_xid.h"

/* Decode one UTF-8 sequence; returns its length, 0 when malformed. */
static size_t ub_utf8(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char b = s[0];
    size_t len;
    uint32_t v;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if (b >= 0xc2 && b < 0xe0) {
        len = 2;
        v = b & 0x1f;
    } else if (b >= 0xe0 && b < 0xf0) {
        len = 3;
        v = b & 0x0f;
    } else if (b >= 0xf0 && b < 0xf5) {
        len = 4;
        v = b & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10ffff)) ||
        (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

static bool ub_in_ranges(const uint32_t (*r)[2], size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid][0])
            hi = mid;
        else if (cp > r[mid][1])
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

static bool ub_xid(uint32_t cp, bool start)
{
    if (cp < 0x80)
        return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
               cp == '_' || (!start && cp >= '0' && cp <= '9');
    if (start)
        return ub_in_ranges(ub_xid_start,
                            sizeof ub_xid_start / sizeof *ub_xid_start, cp);
    return ub_in_ranges(ub_xid_continue,
                        sizeof ub_xid_continue / sizeof *ub_xid_continue, cp);
}

bool ub_ident_ok(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
        return false;
    size_t a = 0;
    while (a < n && (u[a] == '_' || (u[a] >= 'a' && u[a] <= 'z') ||
                     (u[a] >= 'A' && u[a] <= 'Z') ||
                     (a > 0 && u[a] >= '0' && u[a] <= '9')))
        a++;
    if (a == n)
        return true; /* plain ASCII, the common case */
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = ub_utf8(u + i, n - i, &cp);
        if (!k || !ub_xid(cp, i == 0))
            return false;
        i += k;
    }
    return true;
}

bool ub_ident_ns_ok(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == ':') {
            if (!ub_ident_ok(s + start, i - start))
                return false;
            start = i + 1;
        }
    return true;
}

/* Variant (and variant set) names as OpenUSD's path grammar has them: an
 * optional leading '.', then XID_Continue characters, '|' and '-' (so even
 * "" and "." pass). */
bool ub_ident_variant_ok(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    if (n && u[0] == '.')
        i = 1;
    while (i < n) {
        uint32_t cp;
        size_t k = ub_utf8(u + i, n - i, &cp);
        if (!k || !(cp == '|' || cp == '-' || ub_xid(cp, false)))
            return false;
        i += k;
    }
    return true;
}
