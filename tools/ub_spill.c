/* Baked clip samples spilled to a temporary file (see ub_spill.h). */
#include "ub_spill.h"

#include <errno.h>
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
    FILE *f;            /* unlinked: nothing is left behind */
    int fd;
    uint64_t written;   /* bytes in the file */
    ub_spill_part *parts;
    size_t n, cap;
};

static void ub_spill_error(const char *what)
{
    fprintf(stderr, "usdbake: error: %s the temporary file of baked clip "
                    "samples: %s\n",
            what, strerror(errno));
}

ub_spill *ub_spill_new(void)
{
    ub_spill *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return NULL;
    }
    s->f = tmpfile();
    if (!s->f) {
        ub_spill_error("cannot create");
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
            fprintf(stderr, "usdbake: error: out of memory\n");
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
        ub_spill_error("cannot write");
        return -1;
    }
    s->written += len;
    return 0;
}

ub_clip_sink ub_spill_sink(ub_spill *s)
{
    return (ub_clip_sink){ub_spill_format, ub_spill_keep, s};
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

int ub_spill_samples(void *spill, const ub_prop *attr, unsigned indent,
                     ub_buf *out)
{
    ub_spill *s = spill;
    /* the first part of attr */
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)s->parts[mid].attr < (uintptr_t)attr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < s->n && s->parts[i].attr == attr; i++) {
        const ub_spill_part *p = &s->parts[i];
        if (p->indent != indent) {
            /* the writer nests the attribute elsewhere than the composer
             * said: never write misindented text */
            fprintf(stderr, "usdbake: error: internal: baked samples of "
                            "'%s' formatted at the wrong depth\n",
                    attr->name);
            return -1;
        }
        char *dst = ub_buf_reserve(out, p->len);
        if (!dst)
            return -1; /* out->failed: the caller says why */
        if (ub_pread_all(s->fd, dst, p->len, p->off) != 0) {
            ub_spill_error("cannot read");
            return -1;
        }
        out->len += p->len;
        ub_buf_drain(out);
        if (out->failed)
            return -1;
    }
    return 0;
}
