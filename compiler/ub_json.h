/*
 * ub_json — a small, bounded JSON reader for OpenUSD's plugInfo.json files:
 * standard JSON (RFC 8259) plus what OpenUSD's plugin reader also takes,
 * comment lines: lines whose first non-blank character is `#` (a `#`
 * after a value on the same line is an error, as it is for OpenUSD).  Nesting is bounded
 * (UB_JSON_MAX_DEPTH), so no input can exhaust the stack.  Written here
 * rather than taken from a library because it is a page of code and the
 * comment syntax is OpenUSD's own.
 */
#ifndef UB_JSON_H
#define UB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_arena.h"
#include "ub_diag.h"

#define UB_JSON_MAX_DEPTH 64

typedef enum ub_json_kind {
    UB_JSON_NULL,
    UB_JSON_BOOL,
    UB_JSON_NUMBER,
    UB_JSON_STRING,
    UB_JSON_ARRAY,
    UB_JSON_OBJECT,
} ub_json_kind;

typedef struct ub_json {
    ub_json_kind kind;
    ub_loc loc;
    bool boolean;
    double number;
    const char *str;          /* strings: NUL-terminated UTF-8 */
    size_t n;                 /* arrays and objects: how many items */
    struct ub_json *items;    /* arrays: the items; objects: the values */
    const char **keys;        /* objects: the keys, in file order */
} ub_json;

/* Parse text[0..len) (named `file` in diagnostics; file must outlive the
 * diagnostics) into nodes allocated in arena a.  NULL after appending a
 * located error to diags (what was found, what was expected), or when out
 * of memory. */
ub_json *ub_json_parse(ub_arena *a, const char *file, const char *text,
                       size_t len, ub_diags *diags);

/* The value of key in object o (the last one when repeated), or NULL. */
const ub_json *ub_json_get(const ub_json *o, const char *key);

/* The string value of key in object o, or NULL. */
const char *ub_json_get_str(const ub_json *o, const char *key);

#endif
