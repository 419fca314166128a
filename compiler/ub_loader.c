#define _GNU_SOURCE /* O_TMPFILE */
#include "ub_loader.h"

#include "ub_crate.h"
#include "ub_idtab.h"
#include "ub_parse.h"
#include "ub_usdb.h"
#include "ub_usdz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ub_loaded {
    const char *resolved; /* interned file path */
    const char *abs;      /* absolute, normalised, interned: the identity
                             (a relative and an absolute spelling of one
                             path are one layer; a symlink is another
                             layer, as for OpenUSD's resolver) */
    ub_file file;         /* the source, kept for diagnostics (empty for
                             a package entry: see ub_pkgfile) */
    ub_layer *layer;      /* NULL when it failed to load or was released */
    ub_load_status fail;  /* why it failed, then */
    const char *file_path; /* the file read: resolved, or for a package
                              entry its package's (interned) */
    const char *path;     /* the layer's path once read (interned) */
    bool pinned;          /* opened by ub_loader_open: kept until the end */
    bool released;        /* read whole, then given back (ub_loader_release) */
    bool pending;         /* listed by ub_loader_expect, not read yet */
} ub_loaded;

/* A usdz package's bytes, read once: its layers are slices of them. */
typedef struct ub_pkgfile {
    const char *abs; /* absolute, interned */
    ub_file file;
} ub_pkgfile;

struct ub_loader {
    ub_strtab *strtab;
    ub_diags *diags;
    char **search;
    size_t n_search;
    ub_loaded *loaded;
    size_t n_loaded, cap_loaded;
    /* abs path -> index in `loaded`, so opening the same layer from
     * thousands of arcs stays cheap */
    ub_idtab by_abs;
    char *cwd; /* the current directory, read once */
    ub_loader_progress_fn progress;
    void *progress_ctx;
    uint64_t bytes_read; /* of the layers read whole */
    const char *reading; /* the layer being parsed */
    const ub_parse_stream *stream; /* not owned */
    const ub_meta_field *fields;   /* not owned */
    size_t n_fields;
    ub_pkgfile *pkgs;
    size_t n_pkgs;
    /* placing a path: an allocation failed (reset by ub_loader_place_st) */
    bool oom;
    long alloc_budget; /* ub_loader_fail_allocs_after; < 0: no limit */
};

static const char *ub_loader_abs(ub_loader *ld, const char *path);

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

void ub_loader_set_fields(ub_loader *ld, const ub_meta_field *fields,
                          size_t n)
{
    ld->fields = fields;
    ld->n_fields = n;
}

const ub_meta_field *ub_loader_fields(const ub_loader *ld, size_t *n)
{
    *n = ld->n_fields;
    return ld->fields;
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
    ld->alloc_budget = -1;
    return ld;
}

void ub_loader_fail_allocs_after(ub_loader *ld, long n)
{
    ld->alloc_budget = n;
}

/* --- allocation while placing paths ---------------------------------------
 * Placing a path allocates, and a failed allocation must not read as "no
 * such file": every allocation of the placing code goes through these,
 * which note a failure in ld->oom (and obey ub_loader_fail_allocs_after,
 * so that a test can make any one of them fail). */
static bool ub_ld_may(ub_loader *ld)
{
    if (ld->alloc_budget == 0) {
        ld->oom = true;
        return false;
    }
    if (ld->alloc_budget > 0)
        ld->alloc_budget--;
    return true;
}

static void *ub_ld_noted(ub_loader *ld, void *p)
{
    if (!p)
        ld->oom = true;
    return p;
}

static void *ub_ld_malloc(ub_loader *ld, size_t n)
{
    return ub_ld_noted(ld, ub_ld_may(ld) ? malloc(n) : NULL);
}

static char *ub_ld_strndup(ub_loader *ld, const char *s, size_t n)
{
    return ub_ld_noted(ld, ub_ld_may(ld) ? strndup(s, n) : NULL);
}

static const char *ub_ld_intern(ub_loader *ld, const char *s)
{
    const char *r = ub_ld_may(ld) ? ub_intern_cstr(ld->strtab, s) : NULL;
    if (!r)
        ld->oom = true;
    return r;
}

/* ub_path_normalize (which allocates). */
static int ub_ld_normalize(ub_loader *ld, char *p)
{
    if (ub_ld_may(ld) && ub_path_normalize(p) == 0)
        return 0;
    ld->oom = true;
    return -1;
}

void ub_loader_free(ub_loader *ld)
{
    if (!ld)
        return;
    for (size_t i = 0; i < ld->n_loaded; i++) {
        ub_layer_free(ld->loaded[i].layer);
        ub_file_release(&ld->loaded[i].file);
    }
    for (size_t i = 0; i < ld->n_pkgs; i++)
        ub_file_release(&ld->pkgs[i].file);
    free(ld->pkgs);
    for (size_t i = 0; i < ld->n_search; i++)
        free(ld->search[i]);
    free(ld->search);
    free(ld->loaded);
    ub_idtab_free(&ld->by_abs);
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

/* Smaller files are read into memory, not mapped.  Unmapping a file
 * costs a TLB shootdown on every CPU the process runs on, which a bake of
 * hundreds of small clips pays hundreds of times; malloc reuses one
 * clip's buffer for the next. */
#define UB_MAP_MIN ((off_t)1 << 20)

/* A pipe is read into memory up to this many bytes, and from there into a
 * temporary file (ub_read_pipe). */
#define UB_SPILL_AT ((size_t)8 << 20)

const char *ub_tmpdir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

int ub_tmpfile_open(void)
{
#ifdef O_TMPFILE
    return open(ub_tmpdir(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

/* Whether data begins as a layer does (ub_read_bytes tells them apart):
 * usda text, a crate file, a usdbake binary or a usdz package. */
#define UB_SNIFF_LEN 64
static bool ub_begins_as_layer(const char *data, size_t len)
{
    return (len > 0 && data[0] == '#') || ub_crate_sniff(data, len) ||
           ub_usdb_sniff(data, len) || ub_usdz_sniff(data, len);
}

/* write(2) all of data, or pwrite(2) it at *off (advanced) when off is
 * not NULL. */
static int ub_write_loop(int fd, const void *data, size_t len, uint64_t *off)
{
    const char *p = data;
    while (len) {
        ssize_t w = off ? pwrite(fd, p, len, (off_t)*off) : write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
        if (off)
            *off += (uint64_t)w;
    }
    return 0;
}

int ub_write_all(int fd, const void *data, size_t len)
{
    return ub_write_loop(fd, data, len, NULL);
}

int ub_pwrite_all(int fd, const void *data, size_t len, uint64_t off)
{
    return ub_write_loop(fd, data, len, &off);
}

int ub_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    while (len) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO; /* the file is shorter than it was */
            return -1;
        }
        p += r;
        len -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* The spilled bytes of fd back into memory, with room for `more` after
 * them: the spill failed part way. */
static char *ub_spill_back(int fd, size_t spilled, size_t more)
{
    char *d = malloc(spilled + more);
    if (d && ub_pread_all(fd, d, spilled, 0) != 0) {
        free(d);
        return NULL;
    }
    return d;
}

/* All of `in` (standard input, a FIFO, a file), named `shown`, into f;
 * cap: a first guess at its size plus one.  Up to UB_SPILL_AT bytes it is
 * kept in memory; past that (when `spill`) in a
 * temporary file without a name (ub_tmpfile_open), which is then mapped
 * as a regular file is, so that the parse gives back the pages it has
 * read: a big layer piped in takes the memory it takes as a file, not its
 * size on top.  Where no such file can be made or written, it stays in
 * memory.  in is closed here unless it is stdin. */
static int ub_read_pipe(FILE *in, const char *shown, size_t cap, bool spill,
                        ub_file *f, ub_diags *diags, ub_loc named_at)
{
    size_t n = 0, spilled = 0;
    char *buf = malloc(cap);
    int fd = -1;        /* the temporary file, while spilling */
    bool tried = !spill; /* a temporary file was tried */
    bool sniffed = !spill; /* its first bytes were looked at */
    bool oom = !buf;
    size_t room = SIZE_MAX; /* what the temporary file may hold */
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        room = (size_t)rl.rlim_cur;
    while (!oom) {
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                oom = true;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, in);
        n += got;
        /* what does not begin as a layer does is no layer, however much
         * of it comes (`yes |`): the rest is not read */
        if (!sniffed && (n >= UB_SNIFF_LEN || got == 0)) {
            sniffed = true;
            if (!ub_begins_as_layer(buf, n))
                break;
        }
        if (!tried && n >= UB_SPILL_AT) {
            tried = true;
            fd = ub_tmpfile_open();
        }
        if (fd >= 0 && (got == 0 || n == cap)) {
            if (spilled + n <= room && ub_write_all(fd, buf, n) == 0) {
                spilled += n;
                n = 0;
            } else {
                /* the device filled up, or the file would pass the
                 * process's file size limit (writing past it is a
                 * SIGXFSZ): all of it in memory after all */
                char *d = ub_spill_back(fd, spilled, cap);
                close(fd);
                fd = -1;
                if (!d) {
                    oom = true;
                    break;
                }
                memcpy(d + spilled, buf, n);
                free(buf);
                buf = d;
                n += spilled;
                cap += spilled;
                spilled = 0;
            }
        }
        if (got == 0)
            break;
    }
    int err = !oom && ferror(in);
    if (err)
        ub_diag_add(diags, UB_ERROR, named_at, NULL, NULL, 0,
                    "cannot read '%s': %s", shown, strerror(errno));
    else if (oom)
        ub_diag_add_oom(diags, named_at, "out of memory reading '%s'",
                        shown);
    if (in != stdin)
        fclose(in);
    if (fd >= 0 && !err && !oom && spilled) {
        void *p = mmap(NULL, spilled, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            free(buf);
            madvise(p, spilled, MADV_SEQUENTIAL);
            f->data = p;
            f->len = spilled;
            f->mapped = true;
            f->fd = fd;
            return 0;
        }
        char *d = ub_spill_back(fd, spilled, 1);
        free(buf);
        buf = d;
        n = spilled;
        if (!d) {
            oom = true;
            ub_diag_add_oom(diags, named_at, "out of memory reading '%s'",
                            shown);
        }
    }
    if (fd >= 0)
        close(fd);
    if (err || oom) {
        free(buf);
        return -1;
    }
    f->data = buf;
    f->len = n;
    return 0;
}

/* The name a diagnostic gives path ("-" is standard input). */
static const char *ub_input_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* path opened for reading as a stream ("-": standard input), or NULL
 * after an error in diags. */
static FILE *ub_input_open(const char *path, ub_diags *diags,
                           ub_loc named_at)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        ub_diag_add(diags, UB_ERROR, named_at, NULL, NULL, 0,
                    "cannot open '%s': %s", ub_input_name(path),
                    strerror(errno));
    return f;
}

int ub_read_file(const char *path, char **data, size_t *len, ub_diags *diags,
                 ub_loc named_at)
{
    FILE *f = ub_input_open(path, diags, named_at);
    const char *shown = ub_input_name(path);
    if (!f)
        return -1;
    size_t cap = 1 << 16;
    struct stat st;
    if (f != stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
        cap = (size_t)st.st_size + 1;
    ub_file file;
    if (ub_read_pipe(f, shown, cap, false, &file, diags, named_at) != 0)
        return -1;
    *data = file.data;
    *len = file.len;
    return 0;
}

int ub_file_load(const char *path, ub_file *f, ub_diags *diags,
                 ub_loc named_at)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    struct stat st;
    bool is_stdin = strcmp(path, "-") == 0;
    const char *shown = ub_input_name(path);
    /* standard input redirected from a file is that file */
    int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY);
    bool regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (is_stdin && regular && lseek(fd, 0, SEEK_CUR) != 0)
        regular = false; /* read from where it stands, as a pipe is */
    if (regular && st.st_size >= UB_MAP_MIN) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
                       0);
        if (p != MAP_FAILED) {
            /* The parser reads front to back exactly once. */
            madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
            f->data = p;
            f->len = (size_t)st.st_size;
            f->mapped = true;
            f->fd = fd;
            return 0;
        }
    } else if (regular) {
        /* a small file: read through the descriptor already open */
        FILE *fp = fdopen(fd, "rb");
        if (fp)
            return ub_read_pipe(fp, shown, (size_t)st.st_size + 1, false, f,
                                diags, named_at);
    }
    if (fd >= 0)
        close(fd);
    /* Pipes, stdin, and anything mmap or fdopen refuses (a regular file
     * that mmap refused is read into memory, not copied to another; stdin
     * from a file at an offset past 0 is read as a pipe is). */
    FILE *in = ub_input_open(path, diags, named_at);
    if (!in)
        return -1;
    return ub_read_pipe(in, shown, (size_t)1 << 16, !regular, f, diags,
                        named_at);
}

/* ub_parse_opts.read_text of a mapped file. */
static int ub_file_read_at(void *ctx, void *buf, size_t n, uint64_t at)
{
    const ub_file *f = ctx;
    return ub_pread_all(f->fd, buf, n, at);
}

void ub_file_parse_opts(const ub_file *f, ub_parse_opts *po)
{
    po->mapped = f->mapped;
    po->read_text = f->mapped && f->fd >= 0 ? ub_file_read_at : NULL;
    po->read_ctx = (void *)(uintptr_t)f;
}

void ub_file_parsed(ub_file *f)
{
    /* (fd means something only when mapped: a ub_file never loaded is
     * all zeros) */
    if (f->mapped && f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

void ub_file_release(ub_file *f)
{
    ub_file_parsed(f);
    if (f->mapped)
        munmap(f->data, f->len);
    else
        free(f->data);
    memset(f, 0, sizeof *f);
    f->fd = -1;
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
static char *ub_join_dir(ub_loader *ld, const char *file, const char *rel)
{
    const char *slash = strrchr(file, '/');
    size_t dn = slash ? (size_t)(slash - file) + 1 : 0;
    size_t rn = strlen(rel);
    char *p = ub_ld_malloc(ld, dn + rn + 1);
    if (!p)
        return NULL;
    memcpy(p, file, dn);
    memcpy(p + dn, rel, rn + 1);
    return p;
}

/* ub_join_dir, normalised; NULL when out of memory. */
static char *ub_join_dir_norm(ub_loader *ld, const char *file,
                              const char *rel)
{
    char *p = ub_join_dir(ld, file, rel);
    if (p && ub_ld_normalize(ld, p) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

/* "a.usda" and "a/b.usda" are searched for; "./a.usda", "../a.usda" and
 * "/a.usda" are not (OpenUSD's default resolver). */
static bool ub_is_search_path(const char *asset)
{
    return asset[0] != '/' && strncmp(asset, "./", 2) != 0 &&
           strncmp(asset, "../", 3) != 0;
}

/* --- usdz packages ------------------------------------------------------
 * "pkg.usdz[inner/a.usda]" names entry inner/a.usda of package pkg.usdz;
 * packages nest: "a.usdz[b.usdz[c.usda]]".  As in Ar (packageUtils),
 * brackets pair up from the last ']' back, a bracket after a backslash
 * belongs to a name ("x\[1\].png"), and a path whose last ']' has no
 * pair is no package path at all: a file name with brackets in it. */

/* The '[' pairing with the ']' at p[close], or SIZE_MAX. */
static size_t ub_pkg_open_of(const char *p, size_t close)
{
    size_t need = 1;
    for (size_t i = close; i-- > 0;) {
        if ((p[i] != '[' && p[i] != ']') || (i > 0 && p[i - 1] == '\\'))
            continue;
        if (p[i] == ']')
            need++;
        else if (--need == 0)
            return i;
    }
    return SIZE_MAX;
}

/* Where the package part of p[0..n) ends: the '[' pairing with its last
 * ']', or SIZE_MAX when it is no package path (a package needs a name). */
static size_t ub_pkg_outer(const char *p, size_t n)
{
    if (n < 3 || p[n - 1] != ']')
        return SIZE_MAX;
    size_t o = ub_pkg_open_of(p, n - 1);
    return o == 0 ? SIZE_MAX : o;
}

static bool ub_pkg_is(const char *p)
{
    return ub_pkg_outer(p, strlen(p)) != SIZE_MAX;
}

/* s[0..n) with the brackets of its names escaped (esc) or unescaped: all
 * of them, or of a package path only its package part's (what is inside
 * is escaped already).  malloc'd (ub_ld_malloc when ld). */
static char *ub_pkg_escape(ub_loader *ld, const char *s, size_t n, bool esc)
{
    size_t o = ub_pkg_outer(s, n), upto = o == SIZE_MAX ? n : o;
    char *r = ld ? ub_ld_malloc(ld, 2 * upto + (n - upto) + 1)
                 : malloc(2 * upto + (n - upto) + 1);
    if (!r)
        return NULL;
    size_t w = 0;
    for (size_t i = 0; i < upto; i++) {
        bool delim = s[i] == '[' || s[i] == ']';
        if (esc && delim)
            r[w++] = '\\';
        else if (!esc && s[i] == '\\' && i + 1 < upto &&
                 (s[i + 1] == '[' || s[i + 1] == ']'))
            continue;
        r[w++] = s[i];
    }
    memcpy(r + w, s + upto, n - upto);
    r[w + n - upto] = '\0';
    return r;
}

/* ArJoinPackageRelativePath: path put inside the innermost package of pkg
 * ("a.usdz[b.usdz]" + "c.usda" = "a.usdz[b.usdz[c.usda]]"), its brackets
 * escaped; malloc'd. */
static char *ub_pkg_join(const char *pkg, const char *path, size_t path_len)
{
    size_t pn = strlen(pkg), close = 0;
    if (ub_pkg_is(pkg))
        while (close < pn && pkg[pn - 1 - close] == ']')
            close++;
    char *in = ub_pkg_escape(NULL, path, path_len, true);
    size_t in_len = in ? strlen(in) : 0;
    char *r = in ? malloc(pn + in_len + 2 + 1) : NULL;
    if (!r) {
        free(in);
        return NULL;
    }
    size_t w = pn - close;
    memcpy(r, pkg, w);
    r[w++] = '[';
    memcpy(r + w, in, in_len);
    w += in_len;
    memset(r + w, ']', close + 1);
    r[w + close + 1] = '\0';
    free(in);
    return r;
}

/* ub_pkg_join while placing a path (no loader on a reading thread). */
static char *ub_ld_pkg_join(ub_loader *ld, const char *pkg, const char *path,
                            size_t path_len)
{
    return ub_ld_noted(ld, ub_ld_may(ld) ? ub_pkg_join(pkg, path, path_len)
                                         : NULL);
}

/* ArSplitPackageRelativePathInner: "a.usdz[b.usdz[c.usda]]" is package
 * "a.usdz[b.usdz]" and path "c.usda" (both malloc'd, the path unescaped).
 * p is a package path (ub_pkg_is).  Returns -1 when out of memory. */
static int ub_pkg_split_inner(ub_loader *ld, const char *p, char **pkg,
                              char **inner)
{
    /* the innermost ']': the first of the last run, or the one after an
     * escaped one */
    size_t n = strlen(p), close = n - 1;
    while (close > 0 && p[close - 1] == ']')
        close--;
    if (close > 0 && p[close - 1] == '\\')
        close++;
    size_t open = close < n ? ub_pkg_open_of(p, close) : SIZE_MAX;
    if (open == SIZE_MAX) /* (cannot be: the outer pair is there) */
        open = ub_pkg_outer(p, n), close = n - 1;
    *inner = ub_pkg_escape(ld, p + open + 1, close - open - 1, false);
    *pkg = ub_ld_malloc(ld, n - (close - open));
    if (!*inner || !*pkg) {
        free(*inner);
        free(*pkg);
        return -1;
    }
    memcpy(*pkg, p, open);
    memcpy(*pkg + open, p + close + 1, n - close);
    return 0;
}

/* The package file `outer` (a plain path), read once per loader and kept
 * until it is freed (its layers point into it).  NULL when it cannot be
 * read, with the reason in `report` when that is not NULL. */
static const ub_file *ub_loader_pkgfile(ub_loader *ld, const char *outer,
                                        ub_diags *report, ub_loc at)
{
    const char *abs = ub_loader_abs(ld, outer);
    if (!abs)
        return NULL;
    for (size_t i = 0; i < ld->n_pkgs; i++)
        if (ld->pkgs[i].abs == abs)
            return &ld->pkgs[i].file;
    ub_pkgfile *n = ub_ld_noted(
        ld, ub_ld_may(ld) ? realloc(ld->pkgs, (ld->n_pkgs + 1) * sizeof *n)
                          : NULL);
    if (!n)
        return NULL;
    ld->pkgs = n;
    ub_diags *scratch = report;
    if (!scratch)
        scratch = ub_ld_noted(ld, ub_ld_may(ld) ? ub_diags_new() : NULL);
    ub_pkgfile *pf = &ld->pkgs[ld->n_pkgs];
    int r = scratch ? ub_file_load(outer, &pf->file, scratch, at) : -1;
    if (scratch != report)
        ub_diags_free(scratch);
    if (r != 0)
        return NULL;
    /* (its entries are read from the mapping, as slices of it) */
    ub_file_parsed(&pf->file);
    pf->abs = abs;
    ld->n_pkgs++;
    return &pf->file;
}

/* The bytes of `inner` ("name" or "name[rest]", escaped as in a package
 * path) inside a package's bytes: 1 found, 0 no such entry, -1 damaged
 * (*why), or out of memory (noted in ld). */
static int ub_pkg_locate(ub_loader *ld, const char *data, size_t len,
                         const char *inner, size_t n, const char **out,
                         size_t *out_len, const char **why)
{
    size_t o = ub_pkg_outer(inner, n), name_len = o == SIZE_MAX ? n : o;
    char *name = ub_pkg_escape(ld, inner, name_len, false);
    if (!name) {
        *why = "out of memory";
        return -1;
    }
    ub_usdz_entry e;
    int r = ub_usdz_find(data, len, name, strlen(name), &e, why);
    free(name);
    if (r != 1)
        return r;
    if (o == SIZE_MAX) {
        *out = e.data;
        *out_len = e.len;
        return 1;
    }
    return ub_pkg_locate(ld, e.data, e.len, inner + o + 1, n - o - 2, out,
                         out_len, why);
}

/* The bytes of p: a plain file, or an entry of a package.  1 found, 0 not
 * there, -1 damaged package; problems go to `report` when it is not
 * NULL. */
static int ub_loader_bytes(ub_loader *ld, const char *p, ub_diags *report,
                           ub_loc at, const char **data, size_t *len)
{
    size_t n = strlen(p), o = ub_pkg_outer(p, n);
    bool pkg = o != SIZE_MAX;
    char *outer = pkg ? ub_ld_strndup(ld, p, o) : NULL;
    if (pkg && !outer)
        return 0;
    const ub_file *f = ub_loader_pkgfile(ld, pkg ? outer : p, report, at);
    if (!f) {
        free(outer);
        return 0;
    }
    int r = 1;
    const char *why = NULL;
    if (pkg)
        r = ub_pkg_locate(ld, f->data, f->len, p + o + 1, n - o - 2, data,
                          len, &why);
    else
        *data = f->data, *len = f->len;
    if (r < 0 && report && !ld->oom)
        ub_diag_add(report, UB_ERROR, (ub_loc){at.file ? at.file : p, at.line,
                                               at.col},
                    "usdz-damaged", NULL, 0,
                    "'%s' is a damaged usdz package: %s", outer, why);
    free(outer);
    return r < 0 && ld->oom ? 0 : r;
}

/* Whether p exists: a regular file (or any file when any_kind, as the
 * anchoring rule asks), or an entry of a package (a damaged package
 * counts as there, so that opening it says what is wrong). */
static bool ub_loader_exists(ub_loader *ld, const char *p, bool any_kind)
{
    if (!ub_pkg_is(p)) {
        struct stat st;
        return stat(p, &st) == 0 && (any_kind || S_ISREG(st.st_mode));
    }
    const char *d;
    size_t n;
    return ub_loader_bytes(ld, p, NULL, (ub_loc){0}, &d, &n) != 0;
}

/* A package's root layer, as Sdf expands it: its first entry, and that
 * entry's first entry while it is a package itself.  Returns the package
 * holding the root layer (*pkg, malloc'd) and the layer's path in it
 * (*root, malloc'd), or -1. */
static int ub_loader_pkg_root(ub_loader *ld, const char *pkg, char **out_pkg,
                              char **root)
{
    char *cur = ub_ld_strndup(ld, pkg, strlen(pkg));
    for (int depth = 0; cur && depth < 32; depth++) {
        const char *d, *why;
        size_t n;
        ub_usdz_entry e;
        if (ub_loader_bytes(ld, cur, NULL, (ub_loc){0}, &d, &n) != 1 ||
            ub_usdz_find(d, n, NULL, 0, &e, &why) != 1)
            break;
        if (!ub_usdz_sniff(e.data, e.len)) {
            *root = ub_ld_strndup(ld, e.name, e.name_len);
            if (!*root)
                break; /* cur is freed below, so not handed out */
            *out_pkg = cur;
            return 0;
        }
        char *next = ub_ld_pkg_join(ld, cur, e.name, e.name_len);
        free(cur);
        cur = next;
    }
    free(cur);
    return -1;
}

/* A relative asset written in a packaged layer (anchor_path is
 * "pkg[inner]"), as SdfComputeAssetPathRelativeToLayer places it: next to
 * the layer inside the package; a search path only when it exists there or
 * next to the package's root layer.  NULL (*fall_through) when it is
 * found in neither: then it is resolved from the package file. */
static char *ub_loader_place_in_pkg(ub_loader *ld, const char *asset,
                                    const char *anchor_path, bool resolve,
                                    bool *fall_through)
{
    char *pkg = NULL, *inner = NULL, *rel = NULL, *cand = NULL;
    *fall_through = false;
    if (ub_pkg_split_inner(ld, anchor_path, &pkg, &inner) != 0)
        return NULL;
    bool search = ub_is_search_path(asset);
    /* the asset's own normal form, brackets left alone */
    rel = ub_join_dir(ld, "", asset);
    if (rel && !ub_pkg_is(rel) && ub_ld_normalize(ld, rel) != 0) {
        free(rel);
        rel = NULL;
    }
    char *in = rel ? ub_join_dir_norm(ld, inner, rel) : NULL;
    cand = in ? ub_ld_pkg_join(ld, pkg, in, strlen(in)) : NULL;
    free(in);
    if (cand && (search || resolve) && !ub_loader_exists(ld, cand, !resolve)) {
        free(cand);
        cand = NULL;
        char *rpkg = NULL, *root = NULL;
        if (search && ub_loader_pkg_root(ld, pkg, &rpkg, &root) == 0) {
            char *rin = ub_join_dir_norm(ld, root, rel);
            cand = rin ? ub_ld_pkg_join(ld, rpkg, rin, strlen(rin)) : NULL;
            free(rin);
            if (cand && !ub_loader_exists(ld, cand, !resolve)) {
                free(cand);
                cand = NULL;
            }
        }
        free(rpkg);
        free(root);
        *fall_through = search;
    }
    free(pkg);
    free(inner);
    free(rel);
    return cand;
}

/* Where asset, written in the layer at anchor_path (NULL: the current
 * directory), is.  resolve: the file to read (a regular file, or a package
 * entry; search paths tried), NULL when there is none.  Otherwise
 * OpenUSD's identifier for it (absolute when anchored; a search path not
 * found next to its layer stays relative and normalised), which need not
 * exist.  Interned. */
static const char *ub_loader_place(ub_loader *ld, const char *asset,
                                   const char *anchor_path, bool resolve)
{
    if (anchor_path && strcmp(anchor_path, "-") == 0)
        anchor_path = NULL;
    char *outer_anchor = NULL;
    if (anchor_path && ub_pkg_is(anchor_path) && asset[0] != '/') {
        bool fall_through;
        char *c = ub_loader_place_in_pkg(ld, asset, anchor_path, resolve,
                                         &fall_through);
        if (c || !fall_through) {
            const char *r = !c        ? NULL
                            : resolve ? ub_ld_intern(ld, c)
                                      : ub_loader_abs(ld, c);
            free(c);
            return r;
        }
        /* relative to the package file itself */
        outer_anchor = ub_ld_strndup(
            ld, anchor_path, ub_pkg_outer(anchor_path, strlen(anchor_path)));
        if (!outer_anchor)
            return NULL;
        anchor_path = outer_anchor;
    }
    const char *r = NULL;
    size_t an = strlen(asset), ao = ub_pkg_outer(asset, an);
    if (ao != SIZE_MAX) {
        /* the package is placed, and the path inside it split off and put
         * back in (ArSplitPackageRelativePathOuter, then Join: its
         * brackets come out escaped); its entry must be in it */
        char *outer = ub_ld_strndup(ld, asset, ao);
        const char *po = outer ? ub_loader_place(ld, outer, anchor_path,
                                                 resolve)
                               : NULL;
        char *in = po ? ub_pkg_escape(ld, asset + ao + 1, an - ao - 2, false)
                      : NULL;
        char *p = in ? ub_ld_pkg_join(ld, po, in, strlen(in)) : NULL;
        if (p && (!resolve || ub_loader_exists(ld, p, false)))
            r = ub_ld_intern(ld, p);
        free(p);
        free(in);
        free(outer);
        free(outer_anchor);
        return r;
    }
    bool search = ub_is_search_path(asset);
    /* an absolute path joins an empty directory: only normalised */
    char *cand = ub_join_dir_norm(
        ld, asset[0] != '/' && anchor_path ? anchor_path : "", asset);
    free(outer_anchor);
    if (!cand)
        return NULL;
    if (!resolve) {
        /* anchored (absolute) unless a search path not found there: that
         * stays relative, only normalised */
        if (!search || ub_loader_exists(ld, cand, true)) {
            r = ub_loader_abs(ld, cand);
        } else {
            char *norm = ub_join_dir_norm(ld, "", asset);
            r = norm ? ub_ld_intern(ld, norm) : NULL;
            free(norm);
        }
        free(cand);
        return r;
    }
    if (ub_is_file(cand))
        r = ub_ld_intern(ld, cand);
    free(cand);
    /* Search paths apply to search-relative paths only ("a/b.usda", not
     * "./a.usda"), as OpenUSD's default resolver does. */
    for (size_t i = 0; !r && search && i < ld->n_search; i++) {
        char *p = ub_join_dir_norm(ld, "", ld->search[i]);
        size_t dn = p ? strlen(p) : 0, an = strlen(asset);
        char *q = p ? ub_ld_malloc(ld, dn + 1 + an + 1) : NULL;
        if (q) {
            memcpy(q, p, dn);
            q[dn] = '/';
            memcpy(q + dn + 1, asset, an + 1);
            if (ub_ld_normalize(ld, q) == 0 && ub_is_file(q))
                r = ub_ld_intern(ld, q);
        }
        free(p);
        free(q);
    }
    return r;
}

/* ub_loader_place, out of memory told apart: *st UB_LOAD_OK (found or,
 * not resolving, placed), UB_LOAD_MISSING (NULL: no such file) or
 * UB_LOAD_FAILED (NULL: an allocation failed on the way, so the answer
 * is unknown). */
static const char *ub_loader_place_st(ub_loader *ld, const char *asset,
                                      const ub_layer *anchor, bool resolve,
                                      ub_load_status *st)
{
    ld->oom = false;
    const char *r =
        strcmp(asset, "-") == 0 && resolve
            ? ub_ld_intern(ld, asset)
            : ub_loader_place(ld, asset, anchor ? anchor->path : NULL,
                              resolve);
    *st = ld->oom ? UB_LOAD_FAILED : r ? UB_LOAD_OK : UB_LOAD_MISSING;
    return ld->oom ? NULL : r;
}

const char *ub_loader_resolve(ub_loader *ld, const char *asset,
                              const ub_layer *anchor, ub_load_status *st)
{
    return ub_loader_place_st(ld, asset, anchor, true, st);
}

/* "scheme:" as in URIs (a Windows drive letter is not one): left alone. */
static bool ub_has_scheme(const char *a)
{
    size_t i = 0;
    while ((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= 'A' && a[i] <= 'Z') ||
           (i > 0 && ((a[i] >= '0' && a[i] <= '9') || a[i] == '+' ||
                      a[i] == '-' || a[i] == '.')))
        i++;
    return i > 1 && a[i] == ':';
}

const char *ub_loader_anchor(ub_loader *ld, const char *asset,
                             const ub_layer *anchor)
{
    if (!asset[0] || asset[0] == '/' || ub_has_scheme(asset))
        return asset;
    ub_load_status st;
    const char *id = ub_loader_place_st(ld, asset, anchor, false, &st);
    if (st == UB_LOAD_FAILED)
        return NULL;
    /* not anchored (a search path found nowhere near): OpenUSD keeps the
     * path as written */
    return id && id[0] == '/' ? id : asset;
}

/* path made absolute (against the current directory) and normalised,
 * interned; NULL when out of memory.  Of a package path, the package
 * file's part. */
static const char *ub_loader_abs(ub_loader *ld, const char *path)
{
    if (path[0] == '/')
        return ub_ld_intern(ld, path); /* normalised already */
    if (!ld->cwd) {
        char buf[4096];
        if (!getcwd(buf, sizeof buf) ||
            !(ld->cwd = ub_ld_strndup(ld, buf, strlen(buf))))
            return NULL;
    }
    size_t o = ub_pkg_outer(path, strlen(path));
    const char *lb = o != SIZE_MAX ? path + o : NULL;
    size_t cn = strlen(ld->cwd), pn = lb ? (size_t)(lb - path) : strlen(path);
    size_t rest = lb ? strlen(lb) : 0;
    char *p = ub_ld_malloc(ld, cn + 1 + pn + rest + 1);
    if (!p)
        return NULL;
    memcpy(p, ld->cwd, cn);
    p[cn] = '/';
    memcpy(p + cn + 1, path, pn);
    p[cn + 1 + pn] = '\0';
    const char *r = NULL;
    if (ub_ld_normalize(ld, p) == 0) {
        strcat(p, lb ? lb : "");
        r = ub_ld_intern(ld, p);
    }
    free(p);
    return r;
}

/* Whether entry id of `loaded` has the absolute path key (interned). */
static bool ub_loader_abs_eq(const void *ctx, uint32_t id, const void *key)
{
    return ((const ub_loader *)ctx)->loaded[id].abs == key;
}

/* The loaded entry with this absolute path, or NULL. */
static ub_loaded *ub_loader_find(ub_loader *ld, const char *abs)
{
    uint32_t id = ub_idtab_get(&ld->by_abs, ub_interned_hash(abs),
                               ub_loader_abs_eq, ld, abs);
    return id == UINT32_MAX ? NULL : &ld->loaded[id];
}

/* Index entry `idx` of `loaded` under its absolute path (no entry before
 * it has that path). */
static int ub_loader_index(ub_loader *ld, size_t idx)
{
    const char *abs = ld->loaded[idx].abs;
    uint32_t h = ub_interned_hash(abs);
    ub_idslot *s = ub_idtab_find(&ld->by_abs, h, ub_loader_abs_eq, ld, abs);
    if (!s)
        return -1;
    ub_idtab_put(&ld->by_abs, s, h, (uint32_t)idx);
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

/* What a file that is not a layer is, by its name, for the message. */
static const char *ub_foreign_format(const char *path)
{
    static const struct {
        const char *ext, *what;
    } known[] = {
        {".drc", "a Draco-compressed mesh"},
        {".abc", "an Alembic archive (OpenUSD reads it through a plugin)"},
        {".mtlx", "a MaterialX document (OpenUSD reads it through a plugin)"},
        {".vdb", "an OpenVDB volume"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof known / sizeof known[0]; i++)
        if (strcmp(dot, known[i].ext) == 0)
            return known[i].what;
    return "not usda text, a usdz package or a usdbake binary layer";
}

/* The layer in data (the bytes of `path`), by its content: a usdz package
 * (its first entry), a crate file, a usdbake binary or usda text; file:
 * the file data is, or NULL (a package's entry); po: how text is parsed
 * (how to read the file set here).  Touches no loader: a worker thread may
 * call it (with t concurrent).  *reading, when not NULL, gets the path of
 * the text being parsed (for the progress callback). */
static ub_layer *ub_read_bytes(ub_strtab *t, ub_diags *diags,
                               const char *path, const char *data,
                               size_t len, const ub_file *file,
                               ub_parse_opts *po, const char **reading,
                               ub_loc named_at, const ub_layer *anchor,
                               ub_load_status *st)
{
    bool mapped = file && file->mapped;
    /* Point at where the layer was named, when it was named in a layer;
     * otherwise at the file itself. */
    bool named = named_at.file && named_at.line;
    ub_loc at = named ? named_at : (ub_loc){path, 0, 0};
    const char *src = named && anchor ? anchor->source : NULL;
    size_t src_len = named && anchor ? anchor->source_len : 0;
    *st = UB_LOAD_UNREADABLE;
    if (ub_usdz_sniff(data, len)) {
        ub_usdz_entry e;
        const char *why = "it has no entries";
        if (ub_usdz_find(data, len, NULL, 0, &e, &why) != 1) {
            ub_diag_add(diags, UB_ERROR, at, "usdz-damaged", src, src_len,
                        "'%s' is a damaged usdz package: %s (no root "
                        "layer)",
                        path, why);
            return NULL;
        }
        char *inner = ub_pkg_join(path, e.name, e.name_len);
        const char *ip = inner ? ub_intern_cstr(t, inner) : NULL;
        free(inner);
        if (!ip) {
            *st = UB_LOAD_FAILED;
            return NULL;
        }
        return ub_read_bytes(t, diags, ip, e.data, e.len, NULL, po, reading,
                             named_at, anchor, st);
    }
    ub_layer *l = NULL;
    /* Sniffed by content, never by name: a .usd may be text or crate. */
    if (ub_crate_sniff(data, len)) {
        /* (whole or streamed, a mapped file's pages are given back as
         * the reader is done with them) */
        const ub_parse_stream *ps = po ? po->stream : NULL;
        ub_crate_stream cs = {.prim_done = ps ? ps->prim_done : NULL,
                              .ctx = ps ? ps->ctx : NULL,
                              .mapped = mapped,
                              .split = po ? po->split : 0};
        l = ub_crate_read_stream(data, len, path, t, &cs, diags);
    } else if (ub_usdb_sniff(data, len)) {
        /* usdbake binary (.usdb), owned by the binary-format module,
         * runtime/ub_usdb.h */
        l = ub_usdb_load(t, path, data, len, diags);
    } else if (len > 0 && data[0] == '#') {
        if (file)
            ub_file_parse_opts(file, po);
        if (reading)
            *reading = path;
        l = ub_parse_usda_opts(t, path, data, len, po, diags);
    } else {
        ub_diag *d = ub_diag_add(diags, UB_ERROR, at, "not-a-layer", src,
                                 src_len, "cannot read '%s' as a layer: %s",
                                 path, ub_foreign_format(path));
        if (named) /* (a layer named on the command line has no arc) */
            ub_diag_set_hint(diags, d,
                             "OpenUSD reports this at the arc and composes "
                             "without it, and so does flatten (--strict "
                             "refuses it)");
        return NULL;
    }
    if (l)
        *st = UB_LOAD_OK;
    else if (named)
        ub_diag_add(diags, UB_ERROR, named_at, "layer-unreadable", src,
                    src_len, "layer '%s' has errors (reported there): it is "
                    "left out here",
                    path);
    return l;
}

/* Set what entry e (just pushed, for `resolved`) knows before it is read:
 * the file it is in.  -1 when out of memory. */
static int ub_loaded_init(ub_loader *ld, ub_loaded *e, const char *abs)
{
    e->abs = abs;
    e->fail = UB_LOAD_UNREADABLE;
    e->file_path = e->resolved;
    if (ub_pkg_is(e->resolved)) {
        /* an entry of a package: its file is the package */
        e->file_path = ub_intern(
            ld->strtab, e->resolved,
            ub_pkg_outer(e->resolved, strlen(e->resolved)));
        if (!e->file_path)
            return -1;
    }
    return 0;
}

/* The layer of entry e has been read (or not): note its path and
 * status.  A crate layer copies what it needs (ub_crate.h): its file need
 * not stay mapped, where a text layer's bytes stay to quote its lines and
 * a .usdb's arrays are read from its mapping. */
static void ub_loaded_done(ub_loader *ld, ub_loaded *e, ub_load_status st)
{
    e->fail = st;
    e->path = e->layer ? ub_intern_cstr(ld->strtab, e->layer->path) : NULL;
    if (e->layer && !e->path)
        e->path = e->resolved;
    if (e->layer && e->file.data && ub_crate_sniff(e->file.data, e->file.len))
        ub_file_release(&e->file);
}

/* Read and parse the file of entry e into e->layer (NULL on failure, with
 * the reason in the diagnostics and *st). */
static void ub_loader_fill(ub_loader *ld, ub_loaded *e,
                           const ub_layer *anchor, ub_loc named_at,
                           ub_load_status *st)
{
    const char *resolved = e->resolved;
    const char *data;
    size_t len;
    const ub_file *file = NULL;
    *st = UB_LOAD_UNREADABLE;
    if (ub_pkg_is(resolved)) {
        /* an entry of a package: a slice of the package's bytes */
        if (ub_loader_bytes(ld, resolved, ld->diags, named_at, &data, &len) !=
            1) {
            e->fail = *st;
            return;
        }
    } else if (ub_file_load(resolved, &e->file, ld->diags, named_at) != 0) {
        e->fail = *st;
        return;
    } else {
        data = e->file.data;
        len = e->file.len;
        file = &e->file;
    }
    ub_parse_opts po = {.stream = ld->stream,
                        .progress = ld->progress ? ub_loader_parsed : NULL,
                        .progress_ctx = ld,
                        .fields = ld->fields,
                        .n_fields = ld->n_fields};
    e->layer = ub_read_bytes(ld->strtab, ld->diags, resolved, data, len,
                             file, &po, &ld->reading, named_at, anchor, st);
    ub_file_parsed(&e->file);
    ub_loaded_done(ld, e, *st);
    ld->bytes_read += len;
    if (ld->progress)
        ld->progress(ld->progress_ctx, resolved, ld->bytes_read);
}

static ub_layer *ub_loader_get(ub_loader *ld, const char *asset,
                               const ub_layer *anchor, ub_loc named_at,
                               bool pin, ub_load_status *st)
{
    const char *resolved = ub_loader_resolve(ld, asset, anchor, st);
    if (*st == UB_LOAD_FAILED) {
        ub_diag_add_oom(ld->diags, named_at,
                        "out of memory looking for '%s'", asset);
        return NULL;
    }
    *st = UB_LOAD_FAILED;
    struct stat fs;
    if (!resolved && !anchor && !ub_pkg_is(asset) && stat(asset, &fs) == 0) {
        /* named on the command line, and there, but no layer file: a
         * directory, or a pipe or device (<(cmd), /dev/stdin), which a
         * layer cannot be read from by name (its neighbours could not
         * be found from it) */
        bool dir = S_ISDIR(fs.st_mode);
        ub_diag *d = ub_diag_add(
            ld->diags, UB_ERROR, named_at, NULL, NULL, 0,
            "cannot read layer '%s': it is %s, not a layer file", asset,
            dir ? "a directory" : "a pipe, a socket or a device");
        if (!dir)
            ub_diag_set_hint(ld->diags, d,
                             "give - to read a layer from standard input");
        *st = UB_LOAD_MISSING;
        return NULL;
    }
    if (!resolved) {
        ub_diag *d = ub_diag_add(
            ld->diags, UB_ERROR, named_at, NULL,
            anchor ? anchor->source : NULL, anchor ? anchor->source_len : 0,
            "cannot find layer '%s'", asset);
        ub_diag_set_hint(ld->diags, d,
                         "asset paths are resolved relative to the layer "
                         "that names them, then along --search-path");
        *st = UB_LOAD_MISSING;
        return NULL;
    }
    bool is_stdin = strcmp(resolved, "-") == 0;
    const char *abs = is_stdin ? NULL : ub_loader_abs(ld, resolved);
    if (!is_stdin && !abs) {
        ub_diag_add_oom(ld->diags, named_at,
                        "out of memory opening '%s'", resolved);
        return NULL;
    }
    ub_loaded *seen = abs ? ub_loader_find(ld, abs) : NULL;
    if (seen && seen->pending) {
        /* listed by ub_loader_expect: read now, as if first opened here */
        seen->pending = false;
        seen->pinned |= pin;
        ub_loader_fill(ld, seen, anchor, named_at, st);
        return seen->layer;
    }
    if (seen && seen->released) {
        /* given back earlier: read again.  It read before, and what it
         * had to say (warnings) was said then. */
        ub_diags *said = ld->diags, *again = ub_diags_new();
        if (!again)
            return NULL;
        seen->released = false;
        ld->diags = again;
        ub_loader_fill(ld, seen, anchor, named_at, st);
        ld->diags = said;
        ub_diags_free(again);
        seen->pinned |= pin;
        return seen->layer;
    }
    if (seen && !seen->layer && named_at.file && named_at.line)
        ub_diag_add(ld->diags, UB_ERROR, named_at, "layer-unreadable",
                    anchor ? anchor->source : NULL,
                    anchor ? anchor->source_len : 0,
                    "layer '%s' could not be read (reported above): it is "
                    "left out here",
                    resolved);
    if (seen) {
        seen->pinned |= pin;
        *st = seen->layer ? UB_LOAD_OK : seen->fail;
        return seen->layer;
    }
    ub_loaded *e = ub_loader_push(ld, resolved);
    if (!e)
        return NULL;
    if (ub_loaded_init(ld, e, abs) != 0)
        return NULL;
    e->pinned = pin;
    if (abs && ub_loader_index(ld, (size_t)(e - ld->loaded)) != 0)
        return NULL;
    ub_loader_fill(ld, e, anchor, named_at, st);
    return e->layer;
}

int ub_loader_task_begin(ub_loader *ld, const char *asset,
                         const ub_layer *anchor, ub_loc named_at,
                         ub_loader_task *task)
{
    memset(task, 0, sizeof *task);
    task->anchor = anchor;
    task->named_at = named_at;
    ub_load_status st;
    const char *resolved = ub_loader_resolve(ld, asset, anchor, &st);
    if (st == UB_LOAD_FAILED)
        return -1;
    const char *abs = resolved && strcmp(resolved, "-") != 0
                          ? ub_loader_abs(ld, resolved)
                          : NULL;
    ub_loaded *e = abs ? ub_loader_find(ld, abs) : NULL;
    if (!e || !(e->pending || e->released)) {
        /* nothing to read here: read already (or failed), or to be
         * opened (and reported) as usual */
        task->layer = ub_loader_open_transient(ld, asset, anchor, named_at);
        return 0;
    }
    task->index = (size_t)(e - ld->loaded);
    task->resolved = e->resolved;
    task->fields = ld->fields;
    task->n_fields = ld->n_fields;
    task->quiet = e->released;
    task->diags = ub_diags_new();
    if (!task->diags)
        return -1;
    if (ub_pkg_is(e->resolved)) {
        /* an entry of a package: its bytes are found here, in the
         * loader's packages (read once, on this thread) */
        task->in_pkg = true;
        task->have_bytes =
            ub_loader_bytes(ld, e->resolved, task->diags, named_at,
                            &task->data, &task->len) == 1;
    }
    /* claimed: until ub_loader_task_end, neither pending nor released */
    e->pending = e->released = false;
    task->claimed = true;
    return 1;
}

void ub_loader_task_run(ub_strtab *t, ub_loader_task *task)
{
    ub_parse_opts po = {.split = -1, /* the caller runs the threads */
                        .fields = task->fields,
                        .n_fields = task->n_fields};
    const char *data = task->data;
    size_t len = task->len;
    const ub_file *file = NULL;
    task->st = UB_LOAD_UNREADABLE;
    task->layer = NULL;
    if (task->in_pkg) {
        if (!task->have_bytes)
            return;
    } else if (ub_file_load(task->resolved, &task->file, task->diags,
                            task->named_at) != 0) {
        return;
    } else {
        data = task->file.data;
        len = task->file.len;
        file = &task->file;
    }
    task->len = len;
    task->layer = ub_read_bytes(t, task->diags, task->resolved, data, len,
                                file, &po, NULL, task->named_at,
                                task->anchor, &task->st);
    ub_file_parsed(&task->file);
}

ub_layer *ub_loader_task_end(ub_loader *ld, ub_loader_task *task)
{
    if (!task->claimed)
        return task->layer;
    ub_loaded *e = &ld->loaded[task->index];
    e->file = task->file;
    e->layer = task->layer;
    ub_loaded_done(ld, e, task->st);
    /* A diagnostic that could not be kept is memory run out too: the
     * out-of-memory error itself may be the one lost, and the layer then
     * looks merely unreadable (the bake would read on, every later clip
     * failing with errors of its own). */
    task->out_of_memory =
        !task->layer && (ub_diags_first_oom(task->diags) != SIZE_MAX ||
                         ub_diags_lost(task->diags) > 0);
    if (!task->quiet)
        ub_diags_take(ld->diags, task->diags);
    ub_diags_free(task->diags);
    task->diags = NULL;
    task->claimed = false;
    ld->bytes_read += task->len;
    if (ld->progress)
        ld->progress(ld->progress_ctx, e->resolved, ld->bytes_read);
    return e->layer;
}

bool ub_load_recoverable(ub_load_status st)
{
    return st == UB_LOAD_MISSING || st == UB_LOAD_UNREADABLE;
}

/* ub_loader_open_arc, pinned (kept until the end) or not (transient). */
static ub_layer *ub_loader_open_as(ub_loader *ld, const char *asset,
                                   const ub_layer *anchor, ub_loc named_at,
                                   bool pin, ub_load_status *st,
                                   size_t *n_recovered)
{
    size_t before = ub_diags_errors(ld->diags);
    ub_load_status s;
    ub_layer *l = ub_loader_get(ld, asset, anchor, named_at, pin, &s);
    if (st)
        *st = s;
    if (!l && n_recovered && ub_load_recoverable(s))
        *n_recovered += ub_diags_errors(ld->diags) - before;
    return l;
}

ub_layer *ub_loader_open_arc(ub_loader *ld, const char *asset,
                             const ub_layer *anchor, ub_loc named_at,
                             ub_load_status *st, size_t *n_recovered)
{
    return ub_loader_open_as(ld, asset, anchor, named_at, true, st,
                             n_recovered);
}

ub_layer *ub_loader_open(ub_loader *ld, const char *asset,
                         const ub_layer *anchor, ub_loc named_at)
{
    return ub_loader_open_arc(ld, asset, anchor, named_at, NULL, NULL);
}

int ub_loader_expect(ub_loader *ld, const char *asset, const ub_layer *anchor)
{
    ub_load_status st;
    const char *resolved = ub_loader_resolve(ld, asset, anchor, &st);
    if (st == UB_LOAD_FAILED)
        return -1;
    if (!resolved || strcmp(resolved, "-") == 0)
        return 0;
    const char *abs = ub_loader_abs(ld, resolved);
    if (!abs)
        return -1;
    if (ub_loader_find(ld, abs))
        return 0;
    ub_loaded *e = ub_loader_push(ld, resolved);
    if (!e)
        return -1;
    if (ub_loaded_init(ld, e, abs) != 0)
        return -1;
    e->pending = true;
    return ub_loader_index(ld, (size_t)(e - ld->loaded));
}

ub_layer *ub_loader_open_transient(ub_loader *ld, const char *asset,
                                   const ub_layer *anchor, ub_loc named_at)
{
    return ub_loader_open_as(ld, asset, anchor, named_at, false, NULL, NULL);
}

void ub_loader_release(ub_loader *ld, ub_layer *layer)
{
    if (!layer)
        return;
    /* the layer's copy of its path need not be the interned one; the root
     * layer of a package is named after its entry, not the package, so
     * that one is looked for among the entries */
    const char *p = ub_intern_cstr(ld->strtab, layer->path);
    const char *abs = p ? ub_loader_abs(ld, p) : NULL;
    ub_loaded *e = abs ? ub_loader_find(ld, abs) : NULL;
    for (size_t i = ld->n_loaded; (!e || e->layer != layer) && i-- > 0;)
        e = &ld->loaded[i];
    if (!e || e->layer != layer || e->pinned)
        return;
    ub_layer_free(e->layer);
    ub_file_release(&e->file);
    e->layer = NULL;
    e->released = true;
}

size_t ub_loader_count(const ub_loader *ld)
{
    return ld->n_loaded;
}

ub_layer *ub_loader_at(const ub_loader *ld, size_t i)
{
    return i < ld->n_loaded ? ld->loaded[i].layer : NULL;
}

const char *ub_loader_path_at(const ub_loader *ld, size_t i)
{
    if (i >= ld->n_loaded || (!ld->loaded[i].layer && !ld->loaded[i].released))
        return NULL;
    return ld->loaded[i].path;
}

const char *ub_loader_file_at(const ub_loader *ld, size_t i)
{
    return i < ld->n_loaded ? ld->loaded[i].file_path : NULL;
}
