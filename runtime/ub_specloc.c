#include "ub_specloc.h"

#include "ub_idtab.h"
#include "ub_intern.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *ub_elem_of(const ub_spec_paths *p, uint64_t i)
{
    uint32_t e = p->elem[i];
    return e == UINT32_MAX ? "" : p->tok[e];
}

static size_t ub_elem_len(const ub_spec_paths *p, uint64_t i)
{
    uint32_t e = p->elem[i];
    return e == UINT32_MAX ? 0 : ub_str_len(p->tok[e]);
}

int ub_specloc_text(const ub_spec_paths *p, uint64_t i, const char *pre,
                    const char *post, uint32_t max_depth, size_t max_len,
                    char **buf, size_t *cap, size_t *len)
{
    bool given = UB_PK_KIND(p->kind[i]) != 0;
    uint32_t depth = 0;
    size_t elems = 1; /* the leading '/' */
    for (uint64_t j = i; given && UB_PK_KIND(p->kind[j]) != UB_PK_ROOT;
         j = p->parent[j]) {
        if (depth == max_depth)
            return UB_SPECLOC_DEEP;
        depth++;
        elems += ub_elem_len(p, j) + 1;
    }
    if (elems > max_len)
        return UB_SPECLOC_LONG;
    size_t npre = strlen(pre), npost = strlen(post);
    size_t need = npre + elems + npost + 1;
    if (need > *cap) {
        char *b = realloc(*buf, need);
        if (!b)
            return -1;
        *buf = b;
        *cap = need;
    }
    uint32_t near[64];
    uint32_t *chain = depth <= 64 ? near : malloc(depth * sizeof *chain);
    if (!chain)
        return -1;
    uint32_t n = 0;
    for (uint64_t j = i; n < depth; j = p->parent[j])
        chain[n++] = (uint32_t)j;
    char *b = *buf;
    memcpy(b, pre, npre);
    size_t w = npre;
    if (given)
        b[w++] = '/';
    /* from the root down: a property after '.', a child after '/' unless
     * it is the first or follows a variant selection ("/A{v=x}B") */
    while (n--) {
        unsigned kind = UB_PK_KIND(p->kind[chain[n]]);
        size_t el = ub_elem_len(p, chain[n]);
        if (kind == UB_PK_PROP)
            b[w++] = '.';
        else if (kind == UB_PK_CHILD && w > npre + 1 && b[w - 1] != '}')
            b[w++] = '/';
        memcpy(b + w, ub_elem_of(p, chain[n]), el);
        w += el;
    }
    if (chain != near)
        free(chain);
    memcpy(b + w, post, npost);
    w += npost;
    b[w] = '\0';
    *len = w;
    return 0;
}

struct ub_spec_tree {
    const char *file;
    char *pre; /* "file:<", what every text starts with */
    ub_spec_paths p;
    /* the texts made: by path, through a table of their indexes */
    struct ub_made {
        uint64_t path;
        const char *text;
    } *made;
    uint32_t n_made, cap_made;
    ub_idtab by_path;
    char *buf; /* scratch for a text */
    size_t buf_cap;
};

ub_spec_tree *ub_spec_tree_new(const char *file, ub_spec_paths paths)
{
    ub_spec_tree *tr = calloc(1, sizeof *tr);
    size_t n = strlen(file);
    char *pre = tr ? malloc(n + 3) : NULL;
    if (!pre) {
        free(tr);
        return NULL;
    }
    memcpy(pre, file, n);
    memcpy(pre + n, ":<", 3);
    tr->file = file;
    tr->pre = pre;
    tr->p = paths;
    return tr;
}

void ub_spec_tree_free(ub_spec_tree *tr, bool with_paths)
{
    if (!tr)
        return;
    if (with_paths) {
        free(tr->p.parent);
        free(tr->p.elem);
        free(tr->p.kind);
        free(tr->p.tok);
    }
    free(tr->made);
    ub_idtab_free(&tr->by_path);
    free(tr->buf);
    free(tr->pre);
    free(tr);
}

static uint64_t ub_path_hash(uint64_t i)
{
    i ^= i >> 33;
    i *= 0xff51afd7ed558ccdULL;
    return i ^ (i >> 33);
}

static bool ub_made_eq(const void *ctx, uint32_t id, const void *key)
{
    const ub_spec_tree *tr = ctx;
    return tr->made[id].path == *(const uint64_t *)key;
}

/* The longest path text a location takes (the reader refuses longer
 * paths in values; a spec's is only named). */
#define UB_SPECLOC_MAX_DEPTH 4096u
#define UB_SPECLOC_MAX_LEN ((size_t)1 << 20)

const char *ub_spec_tree_loc(ub_spec_tree *tr, uint64_t i, ub_arena *keep)
{
    if (i >= tr->p.n)
        return tr->file;
    ub_idslot *s =
        ub_idtab_find(&tr->by_path, ub_path_hash(i), ub_made_eq, tr, &i);
    if (!s)
        return tr->file;
    if (ub_idslot_used(s))
        return tr->made[ub_idslot_id(s)].text;
    if (tr->n_made == tr->cap_made) {
        uint32_t nc = tr->cap_made ? tr->cap_made * 2 : 16;
        struct ub_made *m = nc > tr->cap_made
                                ? realloc(tr->made, nc * sizeof *m)
                                : NULL;
        if (!m)
            return tr->file;
        tr->made = m;
        tr->cap_made = nc;
    }
    size_t len;
    int r = ub_specloc_text(&tr->p, i, tr->pre, ">", UB_SPECLOC_MAX_DEPTH,
                            UB_SPECLOC_MAX_LEN, &tr->buf, &tr->buf_cap, &len);
    char *text = r == 0 ? ub_arena_strndup(keep, tr->buf, len) : NULL;
    if (!text)
        return tr->file;
    tr->made[tr->n_made] = (struct ub_made){i, text};
    ub_idtab_put(&tr->by_path, s, ub_path_hash(i), tr->n_made++);
    return text;
}
