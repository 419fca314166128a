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
    ub_buf text;        /* formatted, not written yet */
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
    ub_buf_init(&s->text);
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
    ub_buf_free(&s->text);
    free(s->parts);
    free(s);
}

static int ub_spill_flush(ub_spill *s)
{
    if (s->text.failed) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return -1;
    }
    if (ub_cli_write_all(s->fd, s->text.data, s->text.len) != 0) {
        ub_spill_error("cannot write");
        return -1;
    }
    s->written += s->text.len;
    s->text.len = 0;
    return 0;
}

int ub_spill_sink(void *spill, ub_prop *attr, unsigned depth,
                  const ub_samples *part)
{
    ub_spill *s = spill;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        ub_spill_part *np = realloc(s->parts, cap * sizeof *np);
        if (!np) {
            fprintf(stderr, "usdbake: error: out of memory\n");
            return -1;
        }
        s->parts = np;
        s->cap = cap;
    }
    size_t start = s->text.len;
    for (uint32_t i = 0; i < part->n; i++)
        ub_usda_write_sample(&s->text, depth, part->v[i].time,
                             &part->v[i].value);
    s->parts[s->n++] = (ub_spill_part){attr, part->n ? part->v[0].time : 0,
                                       depth, s->written + start,
                                       s->text.len - start};
    return s->text.len >= (1u << 20) ? ub_spill_flush(s) : 0;
}

static int ub_cmp_part(const void *a, const void *b)
{
    const ub_spill_part *x = a, *y = b;
    if (x->attr != y->attr)
        return (uintptr_t)x->attr < (uintptr_t)y->attr ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

int ub_spill_finish(ub_spill *s)
{
    if (ub_spill_flush(s) != 0)
        return -1;
    if (s->n > 1)
        qsort(s->parts, s->n, sizeof *s->parts, ub_cmp_part);
    return 0;
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
        if (!dst) {
            fprintf(stderr, "usdbake: error: out of memory\n");
            return -1;
        }
        for (size_t got = 0; got < p->len;) {
            ssize_t r = pread(s->fd, dst + got, p->len - got,
                              (off_t)(p->off + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                if (r == 0)
                    errno = EIO;
                ub_spill_error("cannot read");
                return -1;
            }
            got += (size_t)r;
        }
        out->len += p->len;
        ub_buf_drain(out);
        if (out->failed)
            return -1;
    }
    return 0;
}
