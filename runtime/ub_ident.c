/* Names as OpenUSD's paths have them (see ub_ident.h). */
#include "ub_ident.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

bool ub_ident_cxx_ok(const char *s, size_t n)
{
    if (ub_ident_ok(s, n))
        return true;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && !(s[i] == ':' && i + 1 < n && s[i + 1] == ':'))
            continue;
        /* an ASCII identifier from start to i */
        if (i == start || (s[start] >= '0' && s[start] <= '9'))
            return false;
        for (size_t k = start; k < i; k++) {
            unsigned char ch = (unsigned char)s[k];
            if (!(ch == '_' || (ch >= '0' && ch <= '9') ||
                  ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z')))
                return false;
        }
        start = i + 2;
        i++;
    }
    return true;
}

const char *const ub_ident_keywords[UB_IDENT_NKEYWORDS] = {
    "add", "append", "class", "config", "connect", "custom", "customData",
    "def", "default", "delete", "dictionary", "displayUnit", "doc",
    "inherits", "kind", "nameChildren", "None", "offset", "over", "payload",
    "permission", "prefixSubstitutions", "prepend", "properties",
    "references", "relocates", "rel", "reorder", "rootPrims", "scale",
    "subLayers", "suffixSubstitutions", "specializes", "symmetryArguments",
    "symmetryFunction", "timeSamples", "uniform", "variantSet",
    "variantSets", "variants", "varying",
};

bool ub_ident_keyword(const char *s, size_t n)
{
    /* (type names start upper-case: most names are none at a glance) */
    if (n < 3 || ((s[0] < 'a' || s[0] > 'z') && s[0] != 'N'))
        return false;
    for (size_t i = 0; i < UB_IDENT_NKEYWORDS; i++)
        if (strlen(ub_ident_keywords[i]) == n &&
            memcmp(ub_ident_keywords[i], s, n) == 0)
            return true;
    return false;
}

bool ub_ident_attr_type_ok(const char *s, size_t n)
{
    return ub_ident_cxx_ok(s, n) && !ub_ident_keyword(s, n);
}

bool ub_ident_type_name_ok(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '.') {
            if (!ub_ident_attr_type_ok(s + start, i - start))
                return false;
            start = i + 1;
        }
    return true;
}

size_t ub_utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len = s[0] < 0x80           ? 1
                 : (s[0] & 0xe0) == 0xc0 ? 2
                 : (s[0] & 0xf0) == 0xe0 ? 3
                 : (s[0] & 0xf8) == 0xf0 ? 4
                                         : 0;
    if (!len || len > n)
        return 0;
    uint32_t v = len == 1 ? s[0] : s[0] & (0x7fu >> len);
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[k] & 0x3fu);
    }
    *cp = v;
    return len;
}

const char *ub_ident_asset_problem(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = ub_utf8_seq(u + i, n - i, &cp);
        if (!len)
            return "asset paths must be UTF-8";
        /* C0 and C1 controls and DEL, in any form.  OpenUSD stops
         * checking at a code point 0 (an overlong C0 80 lets the rest
         * through); this refuses it. */
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
            return "asset paths may not contain control characters";
        i += len;
    }
    return NULL;
}

bool ub_ident_prim_path_ok(const char *s)
{
    if (!s || s[0] != '/' || !s[1])
        return false;
    for (const char *q = s + 1;;) {
        const char *e = strchr(q, '/');
        if (!ub_ident_ok(q, e ? (size_t)(e - q) : strlen(q)))
            return false;
        if (!e)
            return true;
        q = e + 1;
    }
}

bool ub_ident_path_ok(const char *s)
{
    ub_pathinfo pi; /* (12 KiB, here and not in a caller's frame) */
    return s && ub_ident_path_split(s, strlen(s), &pi);
}

bool ub_ident_target_path_ok(const char *s)
{
    if (!s || s[0] != '/' || !s[1])
        return false;
    ub_pathinfo pi;
    bool ok = ub_ident_path_split(s, strlen(s), &pi) && pi.absolute &&
              !pi.variant_sel && !pi.is_target;
    for (uint32_t i = 0; ok && i < pi.n; i++)
        ok = !(pi.len[i] == 2 && memcmp(pi.comp[i], "..", 2) == 0);
    return ok;
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

/* --- paths ------------------------------------------------------------- */

static size_t ub_scan_ident(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
                     (s[i] >= 'A' && s[i] <= 'Z') ||
                     (s[i] >= '0' && s[i] <= '9') ||
                     (unsigned char)s[i] >= 0x80))
        i++;
    return i;
}

size_t ub_ident_variant_sel(const char *s, size_t n, size_t i)
{
    if (i >= n || s[i] != '{')
        return 0;
    size_t e = i + 1;
    while (e < n && s[e] != '=' && s[e] != '}')
        e++;
    if (e == i + 1 || e >= n || s[e] != '=' ||
        !ub_ident_variant_ok(s + i + 1, e - i - 1))
        return 0;
    size_t v = e + 1, w = v;
    while (w < n && s[w] != '}')
        w++;
    if (w == n || !ub_ident_variant_ok(s + v, w - v))
        return 0;
    return w + 1;
}

static bool ub_path_split_at(const char *s, size_t n, ub_pathinfo *pi,
                             unsigned targets, bool any);

size_t ub_ident_close_bracket(const char *s, size_t n, size_t i)
{
    size_t depth = 0;
    for (; i < n; i++) {
        if (s[i] == '[')
            depth++;
        else if (s[i] == ']' && --depth == 0)
            return i;
    }
    return n;
}

/* The bracketed path whose '[' is s[open] (a target, or a mapper's
 * path), one level deeper than targets: the index after its ']', or 0
 * when it is none. */
static size_t ub_path_bracket(const char *s, size_t n, size_t open,
                              unsigned targets, bool any)
{
    if (targets == UB_PATH_MAX_TARGETS)
        return 0;
    size_t t = ub_ident_close_bracket(s, n, open);
    if (t == n)
        return 0;
    ub_pathinfo *inner = malloc(sizeof *inner);
    bool ok = inner && ub_path_split_at(s + open + 1, t - open - 1, inner,
                                        targets + 1, any);
    free(inner);
    return ok ? t + 1 : 0;
}

/* Whether s[i..n), after a property name, is what OpenUSD's path
 * grammar allows there beside a target: `.expression`, or
 * `.mapper[path]` with an optional `.argument`. */
static bool ub_path_mapper_tail(const char *s, size_t n, size_t i,
                                unsigned targets)
{
    static const char expr[] = ".expression", mapper[] = ".mapper[";
    if (n - i == sizeof expr - 1 && memcmp(s + i, expr, n - i) == 0)
        return true;
    size_t m = sizeof mapper - 1;
    if (n - i <= m || memcmp(s + i, mapper, m) != 0)
        return false;
    size_t e = ub_path_bracket(s, n, i + m - 1, targets, true);
    return e && (e == n || (s[e] == '.' && ub_ident_ok(s + e + 1, n - e - 1)));
}

/* The property part: .name, optionally [target path] and .name again;
 * targets: the target paths this one is inside.  any: also the forms
 * only OpenUSD's path grammar knows (ub_ident_any_path_ok). */
static bool ub_path_prop(const char *s, size_t n, size_t i, ub_pathinfo *pi,
                         unsigned targets, bool any)
{
    pi->prop = s + i;
    pi->prop_len = (uint32_t)(n - i);
    pi->has_prop = true;
    for (int part = 0; part < 2; part++) {
        if (i >= n || s[i] != '.')
            return false;
        size_t b = ++i;
        while (i < n && s[i] != '[' && s[i] != '.' && s[i] != ']')
            i++;
        if (!ub_ident_ns_ok(s + b, i - b))
            return false;
        if (i == n)
            return true;
        if (any && s[i] == '.')
            return ub_path_mapper_tail(s, n, i, targets);
        if (s[i] != '[' || (part == 1 && !any) ||
            !(i = ub_path_bracket(s, n, i, targets, any)))
            return false;
        if (i == n)
            return pi->is_target = true;
    }
    return false;
}

bool ub_ident_path_split(const char *s, size_t n, ub_pathinfo *pi)
{
    return ub_path_split_at(s, n, pi, 0, false);
}

bool ub_ident_any_path_ok(const char *s)
{
    ub_pathinfo pi; /* (as ub_ident_path_ok) */
    return s && ub_path_split_at(s, strlen(s), &pi, 0, true);
}

bool ub_ident_path_value_ok(const char *s)
{
    return s && (!*s || ub_ident_any_path_ok(s));
}

static bool ub_path_split_at(const char *s, size_t n, ub_pathinfo *pi,
                             unsigned targets, bool any)
{
    /* (not the component arrays: 12 KiB, for every path read) */
    pi->absolute = pi->variant_sel = pi->has_prop = pi->is_target = false;
    pi->n = 0;
    pi->prop = NULL;
    pi->prop_len = 0;
    if (n == 0)
        return false;
    size_t i = 0;
    if (s[0] == '/') {
        pi->absolute = true;
        i = 1;
        if (n == 1)
            return true;
    }
    if (s[i] == '.' && (i + 1 == n || s[i + 1] != '.')) {
        if (i + 1 == n)
            return !pi->absolute; /* "." : the anchor itself */
        return !pi->absolute && ub_path_prop(s, n, i, pi, targets, any);
    }
    bool names_seen = false;
    while (i < n) {
        size_t b = i;
        if (pi->n && !names_seen && s[i] == '.' && i + 1 < n &&
            s[i + 1] != '.')
            return ub_path_prop(s, n, i, pi, targets, any); /* "../.a" */
        if (s[i] == '.' && i + 1 < n && s[i + 1] == '.') {
            if (pi->absolute || names_seen)
                return false;
            i += 2;
            if (i < n && s[i] != '/')
                return false; /* "...a": a property needs "../.a" */
        } else {
            i = ub_scan_ident(s, n, i);
            if (!ub_ident_ok(s + b, i - b))
                return false;
            names_seen = true;
            while (i < n && s[i] == '{') {
                i = ub_ident_variant_sel(s, n, i);
                if (!i)
                    return false;
                pi->variant_sel = true;
            }
        }
        if (pi->n == UB_PATH_MAX_COMPS)
            return false;
        pi->comp[pi->n] = s + b;
        pi->len[pi->n] = (uint32_t)(i - b);
        pi->n++;
        if (i == n)
            return true;
        if (s[i] == '/') {
            i++;
            if (i == n)
                return false;
            continue;
        }
        if (s[i] == '.' && !(i + 1 < n && s[i + 1] == '.'))
            return ub_path_prop(s, n, i, pi, targets, any);
        if (s[i - 1] == '}')
            continue; /* "/A{v=x}B": a child inside the variant */
        return false;
    }
    return true;
}

size_t ub_ident_strip_variants(char *out, const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '{') {
            out[w++] = s[i];
            continue;
        }
        while (i < n && s[i] != '}')
            i++;
        /* "/A{v=x}B" continues with a child name ("/A/B") */
        if (i + 1 < n && s[i + 1] != '/' && s[i + 1] != '.' &&
            s[i + 1] != '{')
            out[w++] = '/';
    }
    out[w] = '\0';
    return w;
}
