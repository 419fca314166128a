#include "ub_arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Chunks grow geometrically so that a 100 MB layer needs few mallocs, yet a
 * tiny layer does not pin megabytes. */
#define UB_ARENA_FIRST_CHUNK (16u * 1024u)
#define UB_ARENA_MAX_CHUNK (64u * 1024u * 1024u)

typedef struct ub_chunk {
    struct ub_chunk *prev;
    size_t size, used;
    alignas(max_align_t) unsigned char data[];
} ub_chunk;

struct ub_arena {
    ub_chunk *head;
    size_t next_size;
    size_t total;
};

ub_arena *ub_arena_new(void)
{
    ub_arena *a = calloc(1, sizeof *a);
    if (a)
        a->next_size = UB_ARENA_FIRST_CHUNK;
    return a;
}

void ub_arena_free(ub_arena *a)
{
    if (!a)
        return;
    for (ub_chunk *c = a->head; c;) {
        ub_chunk *prev = c->prev;
        free(c);
        c = prev;
    }
    free(a);
}

void *ub_arena_alloc(ub_arena *a, size_t size)
{
    const size_t align = alignof(max_align_t);
    size = (size + align - 1) & ~(align - 1);
    if (size == 0)
        size = align;
    ub_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = a->next_size;
        if (want < size)
            want = size;
        if (a->next_size < UB_ARENA_MAX_CHUNK)
            a->next_size *= 2;
        c = malloc(sizeof *c + want);
        if (!c)
            return NULL;
        c->size = want;
        c->used = 0;
        c->prev = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->total += size;
    return p;
}

void *ub_arena_zalloc(ub_arena *a, size_t size)
{
    void *p = ub_arena_alloc(a, size);
    if (p)
        memset(p, 0, size);
    return p;
}

char *ub_arena_strndup(ub_arena *a, const char *s, size_t n)
{
    char *p = ub_arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *ub_arena_strdup(ub_arena *a, const char *s)
{
    return ub_arena_strndup(a, s, strlen(s));
}

void *ub_arena_grow(ub_arena *a, void *old, size_t old_n, size_t new_cap,
                    size_t elem_size)
{
    if (new_cap && elem_size > SIZE_MAX / new_cap)
        return NULL;
    void *p = ub_arena_alloc(a, new_cap * elem_size);
    if (p && old_n)
        memcpy(p, old, old_n * elem_size);
    return p;
}

size_t ub_arena_bytes(const ub_arena *a)
{
    return a->total;
}
