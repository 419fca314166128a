/* Baked clip samples spilled to a temporary file (see ub_spill.h). */
#include "ub_spill.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ub_cli.h"
#include "ub_usda.h"

/* One part: its attribute, first time, indent and bytes in the file. */
typedef struct ub_spill_part {
    const ub_prop *attr;
    double t0;
    unsigned indent;
    uint64_t off;
    size_t len;
} ub_spill_part;

struct ub_spill {
    ub_spill_form form;
    FILE *f;            /* unlinked: nothing is left behind */
    int fd;
    uint64_t written;   /* bytes in the file */
    ub_spill_part *parts;
    size_t n, cap;
    /* an error was printed (ub_spill_said); set by any of the bake's
     * threads, hence atomic */
    atomic_bool said;
};

/* Every error the spill prints goes through here: the caller then has
 * nothing to add (not "out of memory"). */
static void ub_spill_say(const ub_spill *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void ub_spill_say(const ub_spill *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("usdbake: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    /* (the flag is the one thing a format call changes: const for the
     * rest, as ub_clip_sink asks) */
    atomic_store(&((ub_spill *)s)->said, true);
}

bool ub_spill_said(const ub_spill *s)
{
    return atomic_load(&s->said);
}

static void ub_spill_error(const ub_spill *s, const char *what)
{
    ub_spill_say(s, "%s the temporary file of baked clip samples: %s", what,
                 strerror(errno));
}

ub_spill *ub_spill_new(ub_spill_form form)
{
    ub_spill *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return NULL;
    }
    s->form = form;
    atomic_init(&s->said, false);
    s->f = tmpfile();
    if (!s->f) {
        ub_spill_error(s, "cannot create");
        free(s);
        return NULL;
    }
    s->fd = fileno(s->f);
    return s;
}

void ub_spill_free(ub_spill *s)
{
    if (!s)
        return;
    fclose(s->f);
    free(s->parts);
    free(s);
}

/* Runs on any of the bake's threads: it touches nothing but text. */
static int ub_spill_format(const void *ctx, unsigned depth,
                           const ub_samples *part, ub_buf *text)
{
    (void)ctx;
    for (uint32_t i = 0; i < part->n; i++)
        ub_usda_write_sample(text, depth, part->v[i].time,
                             &part->v[i].value);
    return text->failed ? -1 : 0;
}

/* A clip layer's parts: indexed, and their text written in one go. */
static int ub_spill_keep(void *spill, const ub_clip_part *parts, size_t n,
                         const char *text, size_t len)
{
    ub_spill *s = spill;
    if (s->n + n > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->n + n)
            cap *= 2;
        ub_spill_part *np = realloc(s->parts, cap * sizeof *np);
        if (!np) {
            ub_spill_say(s, "out of memory");
            return -1;
        }
        s->parts = np;
        s->cap = cap;
    }
    uint64_t off = s->written;
    for (size_t i = 0; i < n; i++) {
        s->parts[s->n++] = (ub_spill_part){parts[i].out, parts[i].t0,
                                           parts[i].depth, off,
                                           parts[i].len};
        off += parts[i].len;
    }
    if (ub_write_all(s->fd, text, len) != 0) {
        ub_spill_error(s, "cannot write");
        return -1;
    }
    s->written += len;
    return 0;
}

/* Values (UB_SPILL_VALUES) are kept as, for each sample, its time, its
 * value's kind, array flag, type id (a byte each, then a zero) and
 * count, then what the value holds: a DATA value's bytes (strings as
 * their interned pointers: the spill lives in the process that interned
 * them), an untyped value's tree (each node its kind, its child count
 * and its interned text, then its children).  A sample's value is
 * nothing else. */
static void ub_spill_put_untyped(ub_buf *b, const ub_untyped *u)
{
    uint32_t head[2] = {(uint32_t)u->kind, u->n};
    ub_buf_append(b, head, sizeof head);
    ub_buf_append(b, &u->text, sizeof u->text);
    for (uint32_t i = 0; i < u->n; i++)
        ub_spill_put_untyped(b, &u->child[i]);
}

/* Runs on any of the bake's threads: it touches nothing but out. */
static int ub_spill_format_values(const void *ctx, unsigned depth,
                                  const ub_samples *part, ub_buf *out)
{
    (void)depth;
    for (uint32_t i = 0; i < part->n; i++) {
        const ub_value *v = &part->v[i].value;
        /* (the readers refuse the rest: ub_value_not_sample) */
        const char *bad = v->kind != UB_V_EMPTY ? ub_value_not_sample(v)
                                                : NULL;
        if (bad) {
            ub_spill_say(ctx, "internal: a baked sample holds %s", bad);
            return -1;
        }
        uint8_t head[4] = {v->kind, v->is_array, v->type_id, 0};
        ub_buf_append(out, &part->v[i].time, sizeof part->v[i].time);
        ub_buf_append(out, head, sizeof head);
        ub_buf_append(out, &v->count, sizeof v->count);
        if (v->kind == UB_V_DATA)
            ub_buf_append(out, ub_value_data(v), ub_value_bytes(v));
        else if (v->kind == UB_V_UNTYPED)
            ub_spill_put_untyped(out, v->u.untyped);
    }
    return out->failed ? -1 : 0;
}

ub_clip_sink ub_spill_sink(ub_spill *s)
{
    return (ub_clip_sink){s->form == UB_SPILL_VALUES ? ub_spill_format_values
                                                     : ub_spill_format,
                          ub_spill_keep, s};
}

static int ub_cmp_part(const void *a, const void *b)
{
    const ub_spill_part *x = a, *y = b;
    if (x->attr != y->attr)
        return (uintptr_t)x->attr < (uintptr_t)y->attr ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

void ub_spill_finish(ub_spill *s)
{
    if (s->n > 1)
        qsort(s->parts, s->n, sizeof *s->parts, ub_cmp_part);
}

/* The first of attr's parts (s->n: none). */
static size_t ub_spill_first(const ub_spill *s, const ub_prop *attr)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)s->parts[mid].attr < (uintptr_t)attr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ub_spill_samples(void *spill, const ub_prop *attr, unsigned indent,
                     ub_buf *out)
{
    ub_spill *s = spill;
    for (size_t i = ub_spill_first(s, attr);
         i < s->n && s->parts[i].attr == attr; i++) {
        const ub_spill_part *p = &s->parts[i];
        if (p->indent != indent) {
            /* the writer nests the attribute elsewhere than the composer
             * said: never write misindented text */
            ub_spill_say(s, "internal: baked samples of '%s' formatted at "
                            "the wrong depth",
                         attr->name);
            return -1;
        }
        char *dst = ub_buf_reserve(out, p->len);
        if (!dst)
            return -1; /* out->failed: the caller says why */
        if (ub_pread_all(s->fd, dst, p->len, p->off) != 0) {
            ub_spill_error(s, "cannot read");
            return -1;
        }
        out->len += p->len;
        ub_buf_drain(out);
        if (out->failed)
            return -1;
    }
    return 0;
}

/* Reading values back: a cursor over one part's bytes. */
typedef struct ub_spill_cur {
    const char *p, *end;
    ub_arena *a;
    bool bad;
} ub_spill_cur;

static void ub_spill_take(ub_spill_cur *k, void *dst, size_t n)
{
    if (k->bad || (size_t)(k->end - k->p) < n) {
        k->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, k->p, n);
    k->p += n;
}

static void ub_spill_get_untyped(ub_spill_cur *k, ub_untyped *u)
{
    uint32_t head[2];
    ub_spill_take(k, head, sizeof head);
    ub_spill_take(k, &u->text, sizeof u->text);
    u->kind = (ub_untyped_kind)head[0];
    u->n = head[1];
    u->child = NULL;
    if (k->bad || !u->n)
        return;
    /* (each child takes 16 bytes of the part at least) */
    if (u->n > (size_t)(k->end - k->p) / 16 ||
        !(u->child = ub_arena_alloc(k->a, u->n * sizeof *u->child))) {
        k->bad = true;
        u->n = 0;
        return;
    }
    for (uint32_t i = 0; i < u->n; i++)
        ub_spill_get_untyped(k, &u->child[i]);
}

static bool ub_spill_get_sample(ub_spill_cur *k, double *time, ub_value *v)
{
    uint8_t head[4];
    uint32_t count;
    ub_spill_take(k, time, sizeof *time);
    ub_spill_take(k, head, sizeof head);
    ub_spill_take(k, &count, sizeof count);
    memset(v, 0, sizeof *v);
    v->kind = head[0];
    if (v->kind != UB_V_EMPTY && v->kind != UB_V_BLOCK &&
        v->kind != UB_V_DATA && v->kind != UB_V_UNTYPED)
        k->bad = true;
    if (k->bad)
        return false;
    if (v->kind == UB_V_DATA) {
        const ub_type *t = ub_type_get((ub_type_id)head[2]);
        if (!t) {
            k->bad = true;
            return false;
        }
        *v = ub_value_new(k->a, t, count, head[1] != 0);
        if (v->kind != UB_V_DATA) {
            k->bad = true;
            return false;
        }
        ub_spill_take(k, ub_value_data(v), ub_value_bytes(v));
    } else if (v->kind == UB_V_UNTYPED) {
        ub_untyped *u = ub_arena_alloc(k->a, sizeof *u);
        if (!u) {
            k->bad = true;
            return false;
        }
        ub_spill_get_untyped(k, u);
        v->u.untyped = u;
    }
    return !k->bad;
}

int ub_spill_values(void *spill, const ub_prop *attr, ub_arena *a,
                    ub_samples *out)
{
    ub_spill *s = spill;
    memset(out, 0, sizeof *out);
    out->authored = true;
    for (size_t i = ub_spill_first(s, attr);
         i < s->n && s->parts[i].attr == attr; i++) {
        const ub_spill_part *p = &s->parts[i];
        char *bytes = malloc(p->len ? p->len : 1);
        if (!bytes) {
            ub_spill_say(s, "out of memory");
            return -1;
        }
        if (ub_pread_all(s->fd, bytes, p->len, p->off) != 0) {
            ub_spill_error(s, "cannot read");
            free(bytes);
            return -1;
        }
        ub_spill_cur k = {bytes, bytes + p->len, a, false};
        while (k.p < k.end) {
            double t;
            ub_value v;
            if (!ub_spill_get_sample(&k, &t, &v) ||
                ub_samples_set(a, out, t, v) != 0) {
                /* (the bytes are the spill's own: out of memory, or a
                 * file changed under it) */
                ub_spill_say(s, "cannot read back the baked samples of '%s'",
                             attr->name);
                free(bytes);
                return -1;
            }
        }
        free(bytes);
    }
    return 0;
}
