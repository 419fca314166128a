#include "ub_loader.h"

#include "ub_crate.h"
#include "ub_parse.h"
#include "ub_usdb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ub_loaded {
    const char *resolved; /* interned file path */
    const char *abs;      /* absolute, normalised, interned: the identity
                             (a relative and an absolute spelling of one
                             path are one layer; a symlink is another
                             layer, as for OpenUSD's resolver) */
    ub_file file;         /* the source, kept for diagnostics */
    ub_layer *layer;      /* NULL when it failed to load */
} ub_loaded;

struct ub_loader {
    ub_strtab *strtab;
    ub_diags *diags;
    char **search;
    size_t n_search;
    ub_loaded *loaded;
    size_t n_loaded, cap_loaded;
    /* abs path -> index + 1 in `loaded` (open addressing; 0 = empty), so
     * opening the same layer from thousands of arcs stays cheap */
    uint32_t *by_abs;
    size_t by_abs_cap;
    char *cwd; /* the current directory, read once */
    ub_loader_progress_fn progress;
    void *progress_ctx;
    uint64_t bytes_read; /* of the layers read whole */
    const char *reading; /* the layer being parsed */
    const ub_parse_stream *stream; /* not owned */
};

/* Progress within one big layer, for the loader's progress hook. */
static void ub_loader_parsed(void *ctx, size_t bytes)
{
    ub_loader *ld = ctx;
    ld->progress(ld->progress_ctx, ld->reading, ld->bytes_read + bytes);
}

void ub_loader_set_stream(ub_loader *ld, const ub_parse_stream *stream)
{
    ld->stream = stream;
}

void ub_loader_set_progress(ub_loader *ld, ub_loader_progress_fn fn,
                            void *ctx)
{
    ld->progress = fn;
    ld->progress_ctx = ctx;
}

ub_loader *ub_loader_new(ub_strtab *t, ub_diags *diags)
{
    ub_loader *ld = calloc(1, sizeof *ld);
    if (!ld)
        return NULL;
    ld->strtab = t;
    ld->diags = diags;
    return ld;
}

void ub_loader_free(ub_loader *ld)
{
    if (!ld)
        return;
    for (size_t i = 0; i < ld->n_loaded; i++) {
        ub_layer_free(ld->loaded[i].layer);
        ub_file_release(&ld->loaded[i].file);
    }
    for (size_t i = 0; i < ld->n_search; i++)
        free(ld->search[i]);
    free(ld->search);
    free(ld->loaded);
    free(ld->by_abs);
    free(ld->cwd);
    free(ld);
}

int ub_loader_add_search_path(ub_loader *ld, const char *dir)
{
    char **s = realloc(ld->search, (ld->n_search + 1) * sizeof *s);
    if (!s)
        return -1;
    ld->search = s;
    s[ld->n_search] = strdup(dir);
    if (!s[ld->n_search])
        return -1;
    ld->n_search++;
    return 0;
}

int ub_read_file(const char *path, char **data, size_t *len, ub_diags *diags,
                 ub_loc named_at)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    const char *shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if (!f) {
        ub_diag_add(diags, UB_ERROR, named_at, NULL, NULL, 0,
                    "cannot open '%s': %s", shown, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    struct stat st;
    if (f != stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
        cap = (size_t)st.st_size + 1;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            ub_diag_add(diags, UB_ERROR, named_at, NULL, NULL, 0,
                        "out of memory reading '%s'", shown);
            break;
        }
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int err = buf && ferror(f);
    if (err)
        ub_diag_add(diags, UB_ERROR, named_at, NULL, NULL, 0,
                    "cannot read '%s': %s", shown, strerror(errno));
    if (f != stdin)
        fclose(f);
    if (!buf || err) {
        free(buf);
        return -1;
    }
    *data = buf;
    *len = n;
    return 0;
}

int ub_file_load(const char *path, ub_file *f, ub_diags *diags,
                 ub_loc named_at)
{
    memset(f, 0, sizeof *f);
    struct stat st;
    int fd = strcmp(path, "-") == 0 ? -1 : open(path, O_RDONLY);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
                       0);
        close(fd);
        if (p != MAP_FAILED) {
            /* The parser reads front to back exactly once. */
            madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
            f->data = p;
            f->len = (size_t)st.st_size;
            f->mapped = true;
            return 0;
        }
    } else if (fd >= 0) {
        close(fd);
    }
    /* Empty files, pipes, stdin, and anything mmap refuses. */
    return ub_read_file(path, &f->data, &f->len, diags, named_at);
}

void ub_file_release(ub_file *f)
{
    if (f->mapped)
        munmap(f->data, f->len);
    else
        free(f->data);
    memset(f, 0, sizeof *f);
}

int ub_path_normalize(char *p)
{
    char *in = strdup(p);
    if (!in)
        return -1;
    bool abs = in[0] == '/';
    char *w = p;
    size_t fixed = 0; /* length of the leading "../" parts that stay */
    if (abs)
        *w++ = '/';
    char *start = w;
    char *save = NULL;
    for (char *part = strtok_r(in, "/", &save); part;
         part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, ".") == 0)
            continue;
        if (strcmp(part, "..") == 0) {
            if ((size_t)(w - start) > fixed) {
                /* drop the last part written, with its slash */
                if (w > start && w[-1] == '/')
                    w--;
                while (w > start && w[-1] != '/')
                    w--;
                continue;
            }
            if (abs)
                continue; /* "/.." is "/" */
            memcpy(w, "../", 3);
            w += 3;
            fixed = (size_t)(w - start);
            continue;
        }
        size_t n = strlen(part);
        memmove(w, part, n);
        w += n;
        *w++ = '/';
    }
    if (w > start && w[-1] == '/' && w - 1 > p)
        w--;
    if (w == p)
        *w++ = '.';
    *w = '\0';
    free(in);
    return 0;
}

static int ub_is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir of `file` joined with `rel`, in a malloc'd string. */
static char *ub_join_dir(const char *file, const char *rel)
{
    const char *slash = strrchr(file, '/');
    size_t dn = slash ? (size_t)(slash - file) + 1 : 0;
    size_t rn = strlen(rel);
    char *p = malloc(dn + rn + 1);
    if (!p)
        return NULL;
    memcpy(p, file, dn);
    memcpy(p + dn, rel, rn + 1);
    return p;
}

const char *ub_loader_resolve(ub_loader *ld, const char *asset,
                              const ub_layer *anchor)
{
    if (strcmp(asset, "-") == 0)
        return ub_intern_cstr(ld->strtab, asset);
    /* an absolute path joins an empty directory: only normalised */
    const char *base = asset[0] != '/' && anchor &&
                               strcmp(anchor->path, "-") != 0
                           ? anchor->path
                           : "";
    char *cand = ub_join_dir(base, asset);
    /* one spelling per file, so "./a.usda" named from two places (or a
     * cycle of "./" paths) is one layer */
    if (cand && ub_path_normalize(cand) != 0) {
        free(cand);
        return NULL;
    }
    if (cand && ub_is_file(cand)) {
        const char *r = ub_intern_cstr(ld->strtab, cand);
        free(cand);
        return r;
    }
    free(cand);
    if (asset[0] == '/')
        return NULL;
    /* Search paths apply to search-relative paths only ("a/b.usda", not
     * "./a.usda"), as OpenUSD's default resolver does. */
    if (strncmp(asset, "./", 2) == 0 || strncmp(asset, "../", 3) == 0)
        return NULL;
    for (size_t i = 0; i < ld->n_search; i++) {
        size_t dn = strlen(ld->search[i]), an = strlen(asset);
        char *p = malloc(dn + 1 + an + 1);
        if (!p)
            return NULL;
        memcpy(p, ld->search[i], dn);
        p[dn] = '/';
        memcpy(p + dn + 1, asset, an + 1);
        if (ub_path_normalize(p) == 0 && ub_is_file(p)) {
            const char *r = ub_intern_cstr(ld->strtab, p);
            free(p);
            return r;
        }
        free(p);
    }
    return NULL;
}

/* path made absolute (against the current directory) and normalised,
 * interned; NULL when out of memory. */
static const char *ub_loader_abs(ub_loader *ld, const char *path)
{
    if (path[0] == '/')
        return path; /* resolved paths are normalised already */
    if (!ld->cwd) {
        char buf[4096];
        if (!getcwd(buf, sizeof buf) || !(ld->cwd = strdup(buf)))
            return NULL;
    }
    size_t cn = strlen(ld->cwd), pn = strlen(path);
    char *p = malloc(cn + 1 + pn + 1);
    if (!p)
        return NULL;
    memcpy(p, ld->cwd, cn);
    p[cn] = '/';
    memcpy(p + cn + 1, path, pn + 1);
    const char *r = ub_path_normalize(p) == 0 ? ub_intern_cstr(ld->strtab, p)
                                              : NULL;
    free(p);
    return r;
}

static size_t ub_loader_hash(const char *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

/* The loaded entry with this absolute path, or NULL. */
static ub_loaded *ub_loader_find(ub_loader *ld, const char *abs)
{
    if (!ld->by_abs_cap)
        return NULL;
    size_t mask = ld->by_abs_cap - 1;
    for (size_t i = ub_loader_hash(abs) & mask; ld->by_abs[i];
         i = (i + 1) & mask)
        if (ld->loaded[ld->by_abs[i] - 1].abs == abs)
            return &ld->loaded[ld->by_abs[i] - 1];
    return NULL;
}

/* Index entry `idx` of `loaded` under its absolute path. */
static int ub_loader_index(ub_loader *ld, size_t idx)
{
    if ((ld->n_loaded + 1) * 2 > ld->by_abs_cap) {
        size_t cap = ld->by_abs_cap ? ld->by_abs_cap * 2 : 64;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < ld->by_abs_cap; i++) {
            uint32_t v = ld->by_abs[i];
            if (!v)
                continue;
            size_t j = ub_loader_hash(ld->loaded[v - 1].abs) & (cap - 1);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = v;
        }
        free(ld->by_abs);
        ld->by_abs = t;
        ld->by_abs_cap = cap;
    }
    size_t mask = ld->by_abs_cap - 1;
    size_t j = ub_loader_hash(ld->loaded[idx].abs) & mask;
    while (ld->by_abs[j])
        j = (j + 1) & mask;
    ld->by_abs[j] = (uint32_t)(idx + 1);
    return 0;
}

static ub_loaded *ub_loader_push(ub_loader *ld, const char *resolved)
{
    if (ld->n_loaded == ld->cap_loaded) {
        size_t cap = ld->cap_loaded ? ld->cap_loaded * 2 : 8;
        ub_loaded *n = realloc(ld->loaded, cap * sizeof *n);
        if (!n)
            return NULL;
        ld->loaded = n;
        ld->cap_loaded = cap;
    }
    ub_loaded *e = &ld->loaded[ld->n_loaded++];
    memset(e, 0, sizeof *e);
    e->resolved = resolved;
    return e;
}

ub_layer *ub_loader_open(ub_loader *ld, const char *asset,
                         const ub_layer *anchor, ub_loc named_at)
{
    const char *resolved = ub_loader_resolve(ld, asset, anchor);
    if (!resolved) {
        ub_diag *d = ub_diag_add(
            ld->diags, UB_ERROR, named_at, NULL,
            anchor ? anchor->source : NULL, anchor ? anchor->source_len : 0,
            "cannot find layer '%s'", asset);
        ub_diag_set_hint(ld->diags, d,
                         "asset paths are resolved relative to the layer "
                         "that names them, then along --search-path");
        return NULL;
    }
    bool is_stdin = strcmp(resolved, "-") == 0;
    const char *abs = is_stdin ? NULL : ub_loader_abs(ld, resolved);
    if (!is_stdin && !abs) {
        ub_diag_add(ld->diags, UB_ERROR, named_at, NULL, NULL, 0,
                    "out of memory opening '%s'", resolved);
        return NULL;
    }
    const ub_loaded *seen = abs ? ub_loader_find(ld, abs) : NULL;
    if (seen)
        return seen->layer;
    ub_loaded *e = ub_loader_push(ld, resolved);
    if (!e)
        return NULL;
    e->abs = abs;
    if (abs && ub_loader_index(ld, (size_t)(e - ld->loaded)) != 0)
        return NULL;
    if (ub_file_load(resolved, &e->file, ld->diags, named_at) != 0)
        return NULL;
    /* Sniffed by content, never by name: a .usd may be text or crate. */
    if (ub_crate_sniff(e->file.data, e->file.len)) {
        e->layer = ub_crate_read(e->file.data, e->file.len, resolved,
                                 ld->strtab, ld->diags);
    } else if (ub_usdb_sniff(e->file.data, e->file.len)) {
        /* usdbake binary (.usdb), owned by runtime/ub_usdb.h */
        e->layer = ub_usdb_load(ld->strtab, resolved, e->file.data, e->file.len,
                                ld->diags);
    } else {
        ub_parse_opts po = {.mapped = e->file.mapped,
                            .stream = ld->stream,
                            .progress = ld->progress ? ub_loader_parsed : NULL,
                            .progress_ctx = ld};
        ld->reading = resolved;
        e->layer = ub_parse_usda_opts(ld->strtab, resolved, e->file.data,
                                      e->file.len, &po, ld->diags);
    }
    ld->bytes_read += e->file.len;
    if (ld->progress)
        ld->progress(ld->progress_ctx, resolved, ld->bytes_read);
    return e->layer;
}

size_t ub_loader_count(const ub_loader *ld)
{
    return ld->n_loaded;
}

ub_layer *ub_loader_at(const ub_loader *ld, size_t i)
{
    return i < ld->n_loaded ? ld->loaded[i].layer : NULL;
}
