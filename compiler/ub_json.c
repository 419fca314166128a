/*
 * ub_json — a small, bounded JSON reader (see ub_json.h).
 */
#include "ub_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ub_jr {
    ub_arena *a;
    const char *file, *text, *s, *end, *line_start;
    uint32_t line;
    ub_diags *diags;
    bool failed, oom;
} ub_jr;

static ub_loc ub_jr_loc(const ub_jr *r)
{
    return (ub_loc){r->file, r->line, (uint32_t)(r->s - r->line_start) + 1};
}

static void ub_jr_error(ub_jr *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void ub_jr_error(ub_jr *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    va_list ap;
    va_start(ap, fmt);
    ub_diag_addv(r->diags, UB_ERROR, ub_jr_loc(r), "json-syntax", r->text,
                 (size_t)(r->end - r->text), fmt, ap);
    va_end(ap);
}

/* What stands at the cursor, for messages. */
static const char *ub_jr_found(const ub_jr *r, char buf[8])
{
    if (r->s >= r->end)
        return "the end of the file";
    unsigned char c = (unsigned char)*r->s;
    if (c == '#')
        return "'#' (a comment must be a line of its own)";
    if (c < 0x20 || c >= 0x7f)
        snprintf(buf, 8, "0x%02x", c);
    else
        snprintf(buf, 8, "'%c'", c);
    return buf;
}

/* Whether only blanks precede the cursor on its line: a '#' there starts
 * a comment line (OpenUSD's plugin reader drops such lines and nothing
 * else). */
static bool ub_jr_line_blank(const ub_jr *r)
{
    for (const char *p = r->line_start; p < r->s; p++)
        if (*p != ' ' && *p != '\t')
            return false;
    return true;
}

static void ub_jr_space(ub_jr *r)
{
    while (r->s < r->end) {
        char c = *r->s;
        if (c == '\n') {
            r->s++;
            r->line++;
            r->line_start = r->s;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            r->s++;
        } else if (c == '#' && ub_jr_line_blank(r)) {
            while (r->s < r->end && *r->s != '\n')
                r->s++;
        } else {
            break;
        }
    }
}

static int ub_jr_hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t ub_jr_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string at the cursor (on its opening quote). */
static const char *ub_jr_string(ub_jr *r)
{
    const char *p = ++r->s;
    /* decoded text is never longer than its source */
    size_t cap = 0;
    while (p + cap < r->end && p[cap] != '"') {
        if (p[cap] == '\\')
            cap++;
        cap++;
    }
    char *out = ub_arena_alloc_bytes(r->a, cap + 1);
    if (!out) {
        r->oom = true;
        return NULL;
    }
    size_t n = 0;
    while (r->s < r->end && *r->s != '"') {
        unsigned char c = (unsigned char)*r->s;
        if (c < 0x20) {
            char buf[8];
            ub_jr_error(r, "invalid string: expected '\"' or a character, "
                           "found %s (control characters must be escaped)",
                        ub_jr_found(r, buf));
            return NULL;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            r->s++;
            continue;
        }
        r->s++;
        char e = r->s < r->end ? *r->s : '\0';
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *k = e ? strchr(from, e) : NULL;
        if (k) {
            out[n++] = to[k - from];
            r->s++;
        } else if (e == 'u' && r->end - r->s >= 5 &&
                   ub_jr_hex4(r->s + 1) >= 0) {
            unsigned long cp = (unsigned long)ub_jr_hex4(r->s + 1);
            r->s += 5;
            if (cp >= 0xd800 && cp < 0xdc00 && r->end - r->s >= 6 &&
                r->s[0] == '\\' && r->s[1] == 'u' &&
                ub_jr_hex4(r->s + 2) >= 0xdc00 &&
                ub_jr_hex4(r->s + 2) < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) +
                     (unsigned long)(ub_jr_hex4(r->s + 2) - 0xdc00);
                r->s += 6;
            }
            /* at most 4 bytes out for at least 6 in */
            n += ub_jr_utf8(out + n, cp);
        } else {
            char buf[8];
            ub_jr_error(r, "invalid escape in a string: expected one of "
                           "\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX, "
                           "found %s",
                        ub_jr_found(r, buf));
            return NULL;
        }
    }
    if (r->s >= r->end) {
        ub_jr_error(r, "unterminated string: expected '\"' before the end "
                       "of the file");
        return NULL;
    }
    r->s++;
    out[n] = '\0';
    return out;
}

static bool ub_jr_value(ub_jr *r, ub_json *v, int depth);

/* Items of an array or object into arena arrays, grown as they come. */
static bool ub_jr_items(ub_jr *r, ub_json *v, bool object, int depth)
{
    char close = object ? '}' : ']';
    size_t cap = 0;
    r->s++;
    ub_jr_space(r);
    if (r->s < r->end && *r->s == close) {
        r->s++;
        return true;
    }
    for (;;) {
        if (v->n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            v->items = ub_arena_grow(r->a, v->items, v->n, nc,
                                     sizeof *v->items);
            if (object)
                v->keys = ub_arena_grow(r->a, v->keys, v->n, nc,
                                        sizeof *v->keys);
            if (!v->items || (object && !v->keys)) {
                r->oom = true;
                return false;
            }
            cap = nc;
        }
        char buf[8];
        if (object) {
            ub_jr_space(r);
            if (r->s >= r->end || *r->s != '"') {
                ub_jr_error(r, "expected a key (a string) in an object, "
                               "found %s",
                            ub_jr_found(r, buf));
                return false;
            }
            const char *k = ub_jr_string(r);
            if (!k)
                return false;
            v->keys[v->n] = k;
            ub_jr_space(r);
            if (r->s >= r->end || *r->s != ':') {
                ub_jr_error(r, "expected ':' after the key \"%s\", found %s",
                            k, ub_jr_found(r, buf));
                return false;
            }
            r->s++;
        }
        if (!ub_jr_value(r, &v->items[v->n], depth + 1))
            return false;
        v->n++;
        ub_jr_space(r);
        if (r->s < r->end && *r->s == ',') {
            r->s++;
            continue;
        }
        if (r->s < r->end && *r->s == close) {
            r->s++;
            return true;
        }
        ub_jr_error(r, "expected ',' or '%c' in %s, found %s", close,
                    object ? "an object" : "an array", ub_jr_found(r, buf));
        return false;
    }
}

static bool ub_jr_value(ub_jr *r, ub_json *v, int depth)
{
    ub_jr_space(r);
    memset(v, 0, sizeof *v);
    v->loc = ub_jr_loc(r);
    char buf[8];
    if (depth > UB_JSON_MAX_DEPTH) {
        ub_jr_error(r, "values nested more than %d deep", UB_JSON_MAX_DEPTH);
        return false;
    }
    if (r->s >= r->end) {
        ub_jr_error(r, "expected a value, found the end of the file");
        return false;
    }
    char c = *r->s;
    if (c == '{' || c == '[') {
        v->kind = c == '{' ? UB_JSON_OBJECT : UB_JSON_ARRAY;
        return ub_jr_items(r, v, c == '{', depth);
    }
    if (c == '"') {
        v->kind = UB_JSON_STRING;
        v->str = ub_jr_string(r);
        return v->str != NULL;
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(r->end - r->s) >= n && memcmp(r->s, words[i], n) == 0) {
            v->kind = i < 2 ? UB_JSON_BOOL : UB_JSON_NULL;
            v->boolean = i == 0;
            r->s += n;
            return true;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char num[64];
        size_t n = 0;
        while (r->s + n < r->end && n < sizeof num - 1 &&
               strchr("0123456789+-.eE", r->s[n]))
            n++;
        memcpy(num, r->s, n);
        num[n] = '\0';
        char *e;
        v->kind = UB_JSON_NUMBER;
        v->number = strtod(num, &e);
        if (e != num + n) {
            ub_jr_error(r, "invalid number '%s': expected digits with an "
                           "optional fraction and exponent",
                        num);
            return false;
        }
        r->s += n;
        return true;
    }
    ub_jr_error(r, "expected a value (an object, array, string, number, "
                   "true, false or null), found %s",
                ub_jr_found(r, buf));
    return false;
}

ub_json *ub_json_parse(ub_arena *a, const char *file, const char *text,
                       size_t len, ub_diags *diags)
{
    ub_jr r = {.a = a, .file = file, .text = text, .s = text, .end = text + len,
               .line_start = text, .line = 1, .diags = diags};
    ub_json *v = ub_arena_alloc(a, sizeof *v);
    if (!v)
        return NULL;
    if (!ub_jr_value(&r, v, 0))
        return NULL;
    ub_jr_space(&r);
    if (r.s < r.end) {
        char buf[8];
        ub_jr_error(&r, "expected the end of the file after the value, "
                        "found %s",
                    ub_jr_found(&r, buf));
        return NULL;
    }
    return v;
}

const ub_json *ub_json_get(const ub_json *o, const char *key)
{
    const ub_json *found = NULL;
    for (size_t i = 0; o && o->kind == UB_JSON_OBJECT && i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            found = &o->items[i];
    return found;
}

const char *ub_json_get_str(const ub_json *o, const char *key)
{
    const ub_json *v = ub_json_get(o, key);
    return v && v->kind == UB_JSON_STRING ? v->str : NULL;
}
