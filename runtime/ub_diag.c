#include "ub_diag.h"

#include "ub_arena.h"
#include "ub_intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ub_diags {
    ub_arena *arena; /* message, hint and line copies */
    ub_diag **items; /* pointers, so a returned ub_diag* stays valid */
    size_t n, cap;
    /* added when there was no memory to keep them, by severity */
    size_t lost[UB_ERROR + 1];
    size_t added; /* every add, kept or not: the next ub_diag.seq */
    /* the kept diagnostics with an id, hashed by (id, place), so that
     * ub_diags_has costs no scan of thousands of warnings each time a
     * problem many arcs run into is met again; idx_lost: not all are in
     * it (out of memory), so it scans after all */
    const ub_diag **idx;
    size_t idx_cap, idx_n;
    bool idx_lost;
};

ub_diags *ub_diags_new(void)
{
    ub_diags *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->arena = ub_arena_new();
    if (!d->arena) {
        free(d);
        return NULL;
    }
    return d;
}

void ub_diags_free(ub_diags *d)
{
    if (!d)
        return;
    ub_arena_free(d->arena);
    free(d->items);
    free(d->idx);
    free(d);
}

static uint64_t ub_diag_key(const char *id, ub_loc loc)
{
    const char *file = loc.file ? loc.file : "";
    uint64_t h = ub_hash_bytes(id, strlen(id)) * 31 +
                 ub_hash_bytes(file, strlen(file));
    h = h * 1099511628211ull + ((uint64_t)loc.line << 32 | loc.col);
    return h ^ h >> 29;
}

static bool ub_diag_is(const ub_diag *g, const char *id, ub_loc loc)
{
    return g->id && strcmp(g->id, id) == 0 && g->loc.line == loc.line &&
           g->loc.col == loc.col &&
           (g->loc.file == loc.file ||
            (g->loc.file && loc.file && strcmp(g->loc.file, loc.file) == 0));
}

static void ub_diags_index(ub_diags *d, const ub_diag *g)
{
    if (!g->id || d->idx_lost)
        return;
    if (2 * (d->idx_n + 1) > d->idx_cap) {
        size_t cap = d->idx_cap ? 2 * d->idx_cap : 64;
        const ub_diag **t = calloc(cap, sizeof *t);
        if (!t) {
            d->idx_lost = true;
            return;
        }
        for (size_t i = 0; i < d->idx_cap; i++) {
            if (!d->idx[i])
                continue;
            size_t j = ub_diag_key(d->idx[i]->id, d->idx[i]->loc) & (cap - 1);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = d->idx[i];
        }
        free(d->idx);
        d->idx = t;
        d->idx_cap = cap;
    }
    size_t j = ub_diag_key(g->id, g->loc) & (d->idx_cap - 1);
    while (d->idx[j])
        j = (j + 1) & (d->idx_cap - 1);
    d->idx[j] = g;
    d->idx_n++;
}

size_t ub_diags_count(const ub_diags *d)
{
    return d->n;
}

const ub_diag *ub_diags_at(const ub_diags *d, size_t i)
{
    return i < d->n ? d->items[i] : NULL;
}

static size_t ub_diags_count_sev(const ub_diags *d, ub_severity sev)
{
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        k += d->items[i]->severity == sev;
    return k;
}

size_t ub_diags_errors(const ub_diags *d)
{
    return ub_diags_count_sev(d, UB_ERROR) + d->lost[UB_ERROR];
}

size_t ub_diags_warnings(const ub_diags *d)
{
    return ub_diags_count_sev(d, UB_WARNING) + d->lost[UB_WARNING];
}

size_t ub_diags_lost(const ub_diags *d)
{
    return d->lost[UB_NOTE] + d->lost[UB_WARNING] + d->lost[UB_ERROR];
}

/* The formatted text, its control characters written as escapes: a
 * diagnostic is one line ("file:line:col: error: ..."), whatever a name it
 * quotes holds ("\n" as a prim name). */
static char *ub_vformat(ub_arena *a, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *s = ub_arena_alloc_bytes(a, (size_t)n + 1);
    if (!s)
        return NULL;
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    size_t ctl = 0;
    for (int i = 0; i < n; i++)
        ctl += (unsigned char)s[i] < 0x20 || s[i] == 0x7f;
    if (!ctl)
        return s;
    char *e = ub_arena_alloc_bytes(a, (size_t)n + 3 * ctl + 1), *w = e;
    if (!e)
        return NULL;
    for (int i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != 0x7f) {
            *w++ = (char)ch;
            continue;
        }
        *w++ = '\\';
        if (ch == '\n' || ch == '\t' || ch == '\r')
            *w++ = ch == '\n' ? 'n' : ch == '\t' ? 't' : 'r';
        else
            w += sprintf(w, "x%02x", ch);
    }
    *w = '\0';
    return e;
}

static const char *ub_copy_line(ub_arena *a, const char *src, size_t len,
                                uint32_t line)
{
    if (!src || line == 0)
        return NULL;
    size_t i = 0;
    for (uint32_t l = 1; l < line; l++) {
        const char *nl = memchr(src + i, '\n', len - i);
        if (!nl)
            return NULL;
        i = (size_t)(nl - src) + 1;
    }
    size_t end = i;
    while (end < len && src[end] != '\n' && src[end] != '\r')
        end++;
    return ub_arena_strndup(a, src + i, end - i);
}

ub_diag *ub_diag_addv(ub_diags *d, ub_severity sev, ub_loc loc,
                      const char *id, const char *src, size_t src_len,
                      const char *fmt, va_list ap)
{
    ub_diag *diag = NULL;
    size_t seq = d->added++;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        ub_diag **items = realloc(d->items, cap * sizeof *items);
        if (items) {
            d->items = items;
            d->cap = cap;
        }
    }
    if (d->n < d->cap)
        diag = ub_arena_zalloc(d->arena, sizeof *diag);
    if (!diag) {
        d->lost[sev]++;
        return NULL;
    }
    diag->severity = sev;
    diag->seq = seq;
    diag->loc = loc;
    if (loc.file)
        diag->loc.file = ub_arena_strdup(d->arena, loc.file);
    diag->id = id;
    diag->message = ub_vformat(d->arena, fmt, ap);
    if (!diag->message)
        diag->message = "(the message was lost: out of memory)";
    diag->line_text = ub_copy_line(d->arena, src, src_len, loc.line);
    d->items[d->n++] = diag;
    ub_diags_index(d, diag);
    return diag;
}

ub_diag *ub_diag_add(ub_diags *d, ub_severity sev, ub_loc loc, const char *id,
                     const char *src, size_t src_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ub_diag *diag = ub_diag_addv(d, sev, loc, id, src, src_len, fmt, ap);
    va_end(ap);
    return diag;
}

ub_diag *ub_diag_add_oom(ub_diags *d, ub_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ub_diag *diag = ub_diag_addv(d, UB_ERROR, loc, NULL, NULL, 0, fmt, ap);
    va_end(ap);
    if (diag)
        diag->out_of_memory = true;
    return diag;
}

size_t ub_diags_first_oom(const ub_diags *d)
{
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < d->n; i++)
        if (d->items[i]->out_of_memory && d->items[i]->seq < first)
            first = d->items[i]->seq;
    return first;
}

bool ub_diags_has(const ub_diags *d, const char *id, ub_loc loc)
{
    if (d->idx_lost) {
        for (size_t i = 0; i < d->n; i++)
            if (ub_diag_is(d->items[i], id, loc))
                return true;
        return false;
    }
    if (!d->idx_n)
        return false;
    for (size_t j = ub_diag_key(id, loc) & (d->idx_cap - 1); d->idx[j];
         j = (j + 1) & (d->idx_cap - 1))
        if (ub_diag_is(d->idx[j], id, loc))
            return true;
    return false;
}

void ub_diag_set_hint(ub_diags *d, ub_diag *diag, const char *fmt, ...)
{
    if (!diag)
        return;
    va_list ap;
    va_start(ap, fmt);
    diag->hint = ub_vformat(d->arena, fmt, ap);
    va_end(ap);
}

void ub_diags_take(ub_diags *dst, ub_diags *src)
{
    for (size_t i = 0; i < src->n; i++) {
        const ub_diag *s = src->items[i];
        ub_diag *c = ub_diag_add(dst, s->severity, s->loc, s->id, NULL, 0,
                                 "%s", s->message ? s->message : "");
        if (!c)
            continue; /* counted as lost in dst */
        c->out_of_memory = s->out_of_memory;
        if (s->hint)
            c->hint = ub_arena_strdup(dst->arena, s->hint);
        if (s->line_text)
            c->line_text = ub_arena_strdup(dst->arena, s->line_text);
    }
    for (int sev = UB_NOTE; sev <= UB_ERROR; sev++) {
        dst->lost[sev] += src->lost[sev];
        src->lost[sev] = 0;
    }
    src->n = 0;
    free(src->idx);
    src->idx = NULL;
    src->idx_cap = src->idx_n = 0;
    src->idx_lost = false;
}

static int ub_diag_cmp(const void *pa, const void *pb)
{
    const ub_diag *a = *(ub_diag *const *)pa, *b = *(ub_diag *const *)pb;
    const char *fa = a->loc.file ? a->loc.file : "";
    const char *fb = b->loc.file ? b->loc.file : "";
    int c = strcmp(fa, fb);
    if (c)
        return c;
    if (a->loc.line != b->loc.line)
        return a->loc.line < b->loc.line ? -1 : 1;
    if (a->loc.col != b->loc.col)
        return a->loc.col < b->loc.col ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void ub_diags_sort(ub_diags *d)
{
    if (d->n > 1)
        qsort(d->items, d->n, sizeof *d->items, ub_diag_cmp);
}

static const char *ub_severity_name(ub_severity s)
{
    switch (s) {
    case UB_ERROR:
        return "error";
    case UB_WARNING:
        return "warning";
    default:
        return "note";
    }
}

void ub_diag_print(FILE *out, const ub_diag *diag)
{
    const char *file = diag->loc.file ? diag->loc.file : "usdbake";
    if (diag->loc.line)
        fprintf(out, "%s:%u:%u: ", file, diag->loc.line, diag->loc.col);
    else
        fprintf(out, "%s: ", file);
    fprintf(out, "%s: %s", ub_severity_name(diag->severity),
            diag->message ? diag->message : "");
    if (diag->id)
        fprintf(out, " [%s]", diag->id);
    fputc('\n', out);
    if (diag->line_text) {
        fprintf(out, "    %s\n    ", diag->line_text);
        /* Keep tabs so the caret lines up under tab-indented source. */
        for (uint32_t i = 1; i < diag->loc.col && diag->line_text[i - 1]; i++)
            fputc(diag->line_text[i - 1] == '\t' ? '\t' : ' ', out);
        fputs("^\n", out);
    }
    if (diag->hint)
        fprintf(out, "note: %s\n", diag->hint);
}
