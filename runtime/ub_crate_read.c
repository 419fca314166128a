/*
 * The crate reader: structural sections first (tokens, strings, fields,
 * field sets, paths, specs), then the spec tree walked from the pseudo-root
 * through each spec's child lists into a ub_layer, decoding each field's
 * value as it is placed.  doc/usdc.md ("Reading") describes the format.
 */
#include "ub_crate.h"

#include "ub_crate_codec.h"
#include "ub_crate_format.h"
#include "ub_cpus.h"
#include "ub_ident.h"
#include "ub_metadef.h"
#include "ub_pathexpr.h"
#include "ub_specloc.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NONE UINT32_MAX
#define CR_MAX_DEPTH 1000     /* namespace levels */
#define CR_MAX_NEST 64        /* values inside values */
#define CR_MAX_PATH 65536     /* bytes of one path's text */
/* A mapped file's pages are given back by blocks of 2^CR_BLOCK_BITS
 * bytes, once a window of blocks has been read: CR_BLOCKS at first,
 * doubled whenever more than a quarter of the blocks given back are read
 * again (a file whose values are shared from all over it would otherwise
 * give back and fault in the same blocks thousands of times: each
 * madvise costs tens of microseconds on a virtual machine) */
#define CR_BLOCK_BITS 16
#define CR_BLOCKS 8

/* A path's kind byte: what it is (UB_PK_KIND, ub_specloc.h) and its
 * spec's type (0: no spec). */
#define PK_STYPE(m) ((unsigned)(m) >> 3)

/* Paths whose text was built lately (values name the same paths again
 * and again), by path index modulo this. */
#define CR_PTEXT_CACHE 1024

/* Field names the reader acts on, interned once per file. */
enum {
    K_TYPENAME, K_SPECIFIER, K_PRIMCHILDREN, K_PROPERTIES,
    K_VARIANTSETCHILDREN, K_VARIANTCHILDREN, K_TARGETCHILDREN,
    K_CONNECTIONCHILDREN, K_VARIABILITY, K_CUSTOM, K_DEFAULT, K_TIMESAMPLES,
    K_CONNECTIONPATHS, K_TARGETPATHS, K_PRIMORDER, K_PROPERTYORDER,
    K_SUBLAYERS, K_SUBLAYEROFFSETS,
    /* renamed to their text-format keys (cr_text_key) */
    K_DOCUMENTATION, K_VARIANTSETNAMES, K_VARIANTSELECTION, K_INHERITPATHS,
    K_LAYERRELOCATES,
    K_COUNT
};
static const char *const cr_key_names[K_COUNT] = {
    "typeName", "specifier", "primChildren", "properties",
    "variantSetChildren", "variantChildren", "targetChildren",
    "connectionChildren", "variability", "custom", "default", "timeSamples",
    "connectionPaths", "targetPaths", "primOrder", "propertyOrder",
    "subLayers", "subLayerOffsets",
    "documentation", "variantSetNames", "variantSelection", "inheritPaths",
    "layerRelocates",
};
static const char *const cr_text_names[] = {
    "doc", "variantSets", "variants", "inherits", "relocates",
};

typedef struct crate {
    const unsigned char *d;
    size_t len;
    const char *name;
    uint32_t ver;
    ub_strtab *t;
    ub_diags *diags;
    bool failed;
    /* where we are, formatted only for an error: "section TOKENS", "spec
     * </A.b> field 'default'", or a fixed place ("bootstrap header") */
    const char *w_place, *w_path, *w_field;
    uint64_t w_spec; /* instead of w_path: a spec's path index, or NONE */
    const unsigned char *toc;
    uint64_t nsec;
    const char **tok;
    uint64_t ntok;
    uint32_t *str;
    uint64_t nstr;
    /* field i: named by fname[n], n its entry in fld_name (fld_name_w
     * bytes each: a file has a few dozen names for a hundred thousand
     * fields), its value fld_rep[i] */
    unsigned char *fld_name;    /* ub_scratch_alloc's, fld_name_size */
    size_t fld_name_size;
    unsigned fld_name_w;
    struct cr_fname {
        const char *key;
        int id;                 /* one of the reader's keys, or K_COUNT */
        /* what the name is as metadata of each kind of spec, found once
         * here rather than per field (ub_metadef_check) */
        ub_metadef_role role[UB_SPEC_REL + 1];
    } *fname;
    uint64_t *fld_rep;
    uint64_t nfld;
    /* the field sets: fields by index, NONE ending a set, fset_w bytes
     * each (cr_fset) */
    unsigned char *fset;    /* ub_scratch_alloc's, of fset_size bytes */
    size_t fset_size;
    unsigned fset_w;
    uint64_t nfset;
    /* per path, in arrays of their own: a big layer has hundreds of
     * thousands, so they are kept small (names are token indexes, text is
     * built when asked for), and each is made when its section is decoded,
     * so PATHS' and SPECS' temporaries never sit under all of them */
    uint32_t *ppar;     /* the parent */
    uint32_t *pelem;    /* the token of its element; NONE for the root */
    uint32_t *pfset;    /* its spec's field set */
    uint8_t *pkind;     /* kind | spec type << 3 */
    uint64_t npath;
    struct cr_ptext {
        uint32_t i;
        const char *s;
    } *ptext;           /* CR_PTEXT_CACHE entries */
    /* the children of each path by name: a path that has any (its bit
     * in kid_bits) is the r-th such path (cr_parent_rank), and its
     * children are hashed by (elem, is-prop) into child[cstart[r] ..
     * cstart[r + 1]) (path + 1, 0 for none; 1.5 slots a child).  The
     * lookups of one prim stay in one small stretch of memory next to its
     * neighbours', and only paths with children (prims, not the many
     * properties) take a start. */
    uint64_t *kid_bits;
    uint32_t *kid_rank;     /* paths with children before each 64 */
    uint32_t *cstart;
    uint32_t *child;
    char *buf;          /* scratch for path text */
    size_t buf_cap;
    ub_layer *L;
    ub_arena *a;
    /* the metadata of the spec being built, gathered in an arena of its
     * own and copied to the layer's at its exact size (cr_meta_keep) */
    ub_arena *ms_arena;
    ub_arena_mark ms_mark;  /* ms_arena with its first chunk, empty */
    ub_fields ms;
    ub_arena *names;        /* the lists cr_names decodes */
    uint64_t budget;    /* values still allowed to be decoded */
    ub_sloc loc;        /* of what is being built: "file:<spec path>" */
    uint32_t tree;      /* the path tables handed to the string table as
                           its tree (cr_hand_over), or 0 */
    /* arrays decoded so far, by value representation: OpenUSD stores an
     * array once however many samples and fields use it, and so is it
     * decoded once here (values are never changed in place) */
    struct cr_memo {
        uint64_t rep;
        ub_value v;
    } *memo;
    size_t memo_n, memo_cap;
    /* streaming (ub_crate_read_stream): prims outside variants go to the
     * stream as they are built, then their memory is reused */
    const ub_crate_stream *stream;
    unsigned in_variant;        /* > 0 while building a variant's body */
    /* a mapped file (ub_crate_stream.mapped): the blocks read since pages
     * were last given back (bits), how many, the lowest and highest, the
     * last one; and those read before that (cr_release) */
    uint64_t *blk, *blk_old, *blk_mem;
    uint64_t nblk, blk_lo, blk_hi, blk_last, old_lo, old_hi;
    /* blocks given back by the walk and not read since (bits); the
     * window; blocks given back, and read again, since it last grew */
    uint64_t *blk_gone;
    uint64_t window, gave, regot;
    /* a build in two threads (cr_build_split): the prims of path
     * split_at's children list from entry split_j on are the other
     * thread's, and join split_prim, the prim built for split_at; NONE:
     * no split */
    uint32_t split_at, split_j;
    ub_prim *split_prim;
    /* lists of FIELDS, FIELDSETS, PATHS and SPECS a second thread
     * decodes while this one reads TOKENS (cr_ahead_start); NULL: none */
    struct cr_ahead *ahead;
    int split_mode;             /* ub_crate_stream.split */
    bool *split_done;           /* ub_crate_stream.split_done */
    const char *key[K_COUNT];   /* cr_key_names, interned */
    const char *text_key[K_COUNT - K_DOCUMENTATION]; /* cr_text_names */
} crate;

/* --- errors ------------------------------------------------------------ */

/* The reader's path tables, as ub_specloc.h takes them. */
static ub_spec_paths cr_paths(const crate *c)
{
    return (ub_spec_paths){c->ppar, c->pelem, c->pkind, c->tok, c->npath,
                           c->ntok};
}

static void cr_err(crate *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void cr_err(crate *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char where[640], spec[480];
    if (c->w_spec != NONE) {
        /* (no cr_path_build here: it reports its own errors) */
        ub_spec_paths ps = cr_paths(c);
        char *b = NULL;
        size_t cap = 0, n = 0;
        int r = c->w_spec < c->npath
                    ? ub_specloc_text(&ps, c->w_spec, "<", ">", CR_MAX_DEPTH,
                                      CR_MAX_PATH, &b, &cap, &n)
                    : UB_SPECLOC_DEEP;
        if (r == 0 && n < sizeof spec)
            snprintf(spec, sizeof spec, "%s", b);
        else if (r == 0) /* its start and its end, the middle cut */
            snprintf(spec, sizeof spec, "%.200s...%s", b, b + n - 200);
        else
            snprintf(spec, sizeof spec, "%s",
                     r < 0 ? "(a path: out of memory to write it)"
                           : "(a path too deep or long to write)");
        free(b);
        c->w_path = spec;
    }
    if (c->w_field)
        snprintf(where, sizeof where, "%s %s field '%.100s'", c->w_place,
                 c->w_path, c->w_field);
    else if (c->w_path)
        snprintf(where, sizeof where, "%s %s", c->w_place, c->w_path);
    else
        snprintf(where, sizeof where, "%s", c->w_place);
    ub_diag *d = ub_diag_add(c->diags, UB_ERROR, (ub_loc){c->name, 0, 0},
                             "usdc-damaged", NULL, 0,
                             "damaged usdc (crate) file: %s: %s", where, msg);
    ub_diag_set_hint(c->diags, d,
                     "the file was truncated or altered after OpenUSD "
                     "wrote it; write it again from its source");
}

static void cr_where(crate *c, const char *place, const char *path,
                     const char *field)
{
    c->w_place = place;
    c->w_path = path;
    c->w_spec = NONE;
    c->w_field = field;
}

/* Where we are: a field (or NULL) of the spec of path index i. */
static void cr_where_spec(crate *c, uint64_t i, const char *field)
{
    cr_where(c, "spec", NULL, field);
    c->w_spec = i;
}

static void *cr_oom(crate *c)
{
    if (!c->failed) {
        c->failed = true;
        ub_diag_add_oom(c->diags, (ub_loc){c->name, 0, 0},
                        "out of memory reading '%s'", c->name);
    }
    return NULL;
}

/* --- a bounded cursor -------------------------------------------------- */

typedef struct cur {
    const unsigned char *p, *end;
    crate *c;
} cur;

static void cr_touch(crate *c, const unsigned char *p, uint64_t n);

static bool cur_need(cur *k, uint64_t n, const char *what)
{
    if (k->c->failed)
        return false;
    if (k->p > k->end || (uint64_t)(k->end - k->p) < n) {
        cr_err(k->c, "%s runs past the end of %s", what,
               k->end == k->c->d + k->c->len ? "the file" : "its section");
        return false;
    }
    cr_touch(k->c, k->p, n);
    return true;
}

static uint64_t rd_u64(cur *k, const char *what)
{
    uint64_t x = 0;
    if (cur_need(k, 8, what)) {
        memcpy(&x, k->p, 8);
        k->p += 8;
    }
    return x;
}

static uint32_t rd_u32(cur *k, const char *what)
{
    uint32_t x = 0;
    if (cur_need(k, 4, what)) {
        memcpy(&x, k->p, 4);
        k->p += 4;
    }
    return x;
}

static uint8_t rd_u8(cur *k, const char *what)
{
    uint8_t x = 0;
    if (cur_need(k, 1, what))
        x = *k->p++;
    return x;
}

static double rd_f64(cur *k, const char *what)
{
    double x = 0;
    if (cur_need(k, 8, what)) {
        memcpy(&x, k->p, 8);
        k->p += 8;
    }
    return x;
}

/* A cursor at file offset off, up to the end of the file. */
static bool cur_at(crate *c, uint64_t off, cur *k)
{
    k->c = c;
    k->end = c->d + c->len;
    if (off > c->len) {
        cr_err(c, "offset %llu is outside the file (%zu bytes)",
               (unsigned long long)off, c->len);
        k->p = k->end;
        return false;
    }
    k->p = c->d + off;
    return true;
}

/* Give back the pages of the blocks read before the last release and not
 * since (all: of the whole file): the file is not held whole, and what is
 * read again is read again from it.  A crate's values are laid out by
 * type as much as by prim, so it is read in a dozen places at once: the
 * blocks read again since are those places, and stay. */
static void cr_release(crate *c, bool all)
{
    if (!c->blk)
        return;
    uint64_t *old = c->blk_old, *cur = c->blk;
    if (all) {
        madvise((void *)(uintptr_t)c->d, c->len, MADV_DONTNEED);
    } else {
        if (c->gave >= c->window && c->regot * 4 > c->gave) {
            c->window *= 2;
            c->gave = c->regot = 0;
        }
        uint64_t run = UINT64_MAX;
        for (uint64_t b = c->old_lo; b <= c->old_hi + 1; b++) {
            bool gone = b <= c->old_hi && (old[b / 64] >> (b % 64) & 1) &&
                        !(cur[b / 64] >> (b % 64) & 1);
            if (gone) {
                c->blk_gone[b / 64] |= 1ull << (b % 64);
                c->gave++;
            }
            if (gone && run == UINT64_MAX)
                run = b;
            if (!gone && run != UINT64_MAX) {
                uint64_t lo = run << CR_BLOCK_BITS;
                uint64_t hi = b << CR_BLOCK_BITS;
                madvise((void *)(uintptr_t)(c->d + lo),
                        (size_t)((hi < c->len ? hi : c->len) - lo),
                        MADV_DONTNEED);
                run = UINT64_MAX;
            }
        }
    }
    for (uint64_t w = c->old_lo / 64; c->old_lo <= c->old_hi &&
                                      w <= c->old_hi / 64; w++)
        old[w] = 0;
    if (all) {
        for (uint64_t w = c->blk_lo / 64; c->nblk && w <= c->blk_hi / 64;
             w++)
            cur[w] = 0;
        c->old_lo = UINT64_MAX;
        c->old_hi = 0;
    } else {
        /* what was read since is the old set now */
        c->blk = old;
        c->blk_old = cur;
        c->old_lo = c->blk_lo;
        c->old_hi = c->blk_hi;
    }
    c->nblk = 0;
    c->blk_lo = c->blk_last = UINT64_MAX;
    c->blk_hi = 0;
}

/* Note that the file's bytes p[0..n) are read. */
static void cr_touch(crate *c, const unsigned char *p, uint64_t n)
{
    if (!c->blk || !n)
        return;
    uint64_t b0 = (uint64_t)(p - c->d) >> CR_BLOCK_BITS;
    uint64_t b1 = (uint64_t)(p - c->d + n - 1) >> CR_BLOCK_BITS;
    if (b0 == c->blk_last && b1 == b0)
        return;
    /* before marking: what is about to be read is never given back */
    if (c->nblk >= c->window)
        cr_release(c, false);
    for (uint64_t b = b0; b <= b1; b++) {
        uint64_t bit = 1ull << (b % 64);
        if (c->blk[b / 64] & bit)
            continue;
        c->blk[b / 64] |= bit;
        c->nblk++;
        if (c->blk_gone[b / 64] & bit) {
            c->blk_gone[b / 64] &= ~bit;
            c->regot++;
        }
        if (b < c->blk_lo)
            c->blk_lo = b;
        if (b > c->blk_hi)
            c->blk_hi = b;
    }
    c->blk_last = b1;
}

/* Follow a stored relative jump (int64 from where it is stored). */
static bool cur_jump(cur *k)
{
    const unsigned char *at = k->p;
    uint64_t off = rd_u64(k, "a value offset");
    if (k->c->failed)
        return false;
    int64_t rel = (int64_t)off;
    int64_t pos = (int64_t)(at - k->c->d) + rel;
    if (pos < 0 || (uint64_t)pos > k->c->len) {
        cr_err(k->c, "value offset %lld points outside the file",
               (long long)rel);
        return false;
    }
    k->p = k->c->d + pos;
    return true;
}

/* A count read at k, checked against the bytes left for items of at
 * least `each` bytes. */
static uint64_t rd_count(cur *k, uint64_t each, const char *what)
{
    uint64_t n = rd_u64(k, what);
    if (k->c->failed)
        return 0;
    uint64_t left = (uint64_t)(k->end - k->p);
    if (each && n > left / each) {
        cr_err(k->c, "%s claims %llu items, more than the %llu bytes left "
               "can hold", what, (unsigned long long)n,
               (unsigned long long)left);
        return 0;
    }
    return n;
}

/* The size of count compressed ints of width 4 or 8 (uint64 size, then
 * the bytes), checked; 0 after an error. */
static uint64_t rd_ints_size(cur *k, uint64_t count, unsigned width,
                             const char *what)
{
    uint64_t n = rd_u64(k, what);
    if (!cur_need(k, n, what))
        return 0;
    if (!ub_crate_ints_plausible(n, count, width) ||
        count > SIZE_MAX / 8) {
        cr_err(k->c, "%s: %llu integers cannot come from %llu compressed "
               "bytes", what, (unsigned long long)count,
               (unsigned long long)n);
        return 0;
    }
    return n;
}

static void *cr_ahead_take(crate *c, const unsigned char *at, uint64_t size,
                           unsigned width);

/* Decode compressed ints whose size rd_ints_size read into out. */
static bool rd_ints_into(cur *k, uint64_t n, uint64_t count, unsigned width,
                         void *out, const char *what)
{
    void *early = cr_ahead_take(k->c, k->p, count, width);
    if (early) {
        memcpy(out, early, count * width);
        ub_scratch_free(early, count * width);
        k->p += n;
        return true;
    }
    const char *why = NULL;
    int rc = ub_crate_ints(k->p, n, count, width, out, &why);
    if (rc == UB_CRATE_NOMEM) {
        cr_oom(k->c);
        return false;
    }
    if (rc != 0) {
        cr_err(k->c, "%s: %s", what, why);
        return false;
    }
    k->p += n;
    return true;
}

/* count compressed ints of width 4 or 8, in ub_scratch_alloc's memory
 * (free with ub_scratch_free(p, count * width)). */
static void *rd_ints(cur *k, uint64_t count, unsigned width,
                     const char *what)
{
    uint64_t n = rd_ints_size(k, count, width, what);
    if (k->c->failed)
        return NULL;
    void *out = cr_ahead_take(k->c, k->p, count, width);
    if (out) {
        k->p += n;
        return out;
    }
    out = ub_scratch_alloc(count * width);
    if (!out)
        return cr_oom(k->c);
    if (!rd_ints_into(k, n, count, width, out, what)) {
        ub_scratch_free(out, count * width);
        return NULL;
    }
    return out;
}

/* --- indices ----------------------------------------------------------- */

static const char *cr_tok(crate *c, uint64_t i)
{
    if (i >= c->ntok) {
        cr_err(c, "token index %llu out of range (%llu tokens)",
               (unsigned long long)i, (unsigned long long)c->ntok);
        return "";
    }
    return c->tok[i];
}

static const char *cr_str(crate *c, uint64_t i)
{
    if (i >= c->nstr) {
        cr_err(c, "string index %llu out of range (%llu strings)",
               (unsigned long long)i, (unsigned long long)c->nstr);
        return "";
    }
    return cr_tok(c, c->str[i]);
}

static unsigned cr_kind(const crate *c, uint64_t i)
{
    return UB_PK_KIND(c->pkind[i]);
}

/* The element text of path i ("" for the root). */
static const char *cr_elem_of(const crate *c, uint64_t i)
{
    uint32_t e = c->pelem[i];
    return e == NONE ? "" : c->tok[e];
}

/* Path i's text between pre and post ("" for the path no item gave, as
 * OpenUSD's empty path), in c->buf (*n bytes); NULL after an error. */
static const char *cr_path_build(crate *c, uint64_t i, const char *pre,
                                 const char *post, size_t *n_out)
{
    if (i >= c->npath) {
        cr_err(c, "path index %llu out of range (%llu paths)",
               (unsigned long long)i, (unsigned long long)c->npath);
        return NULL;
    }
    ub_spec_paths ps = cr_paths(c);
    switch (ub_specloc_text(&ps, i, pre, post, CR_MAX_DEPTH, CR_MAX_PATH,
                            &c->buf, &c->buf_cap, n_out)) {
    case 0:
        return c->buf;
    case UB_SPECLOC_DEEP:
        cr_err(c, "a path is nested deeper than %d levels", CR_MAX_DEPTH);
        return NULL;
    case UB_SPECLOC_LONG:
        cr_err(c, "a path is longer than %d bytes", CR_MAX_PATH);
        return NULL;
    default:
        return cr_oom(c);
    }
}

/* cr_path_build's text, interned. */
static const char *cr_path_wrap(crate *c, uint64_t i, const char *pre,
                                const char *post)
{
    size_t n;
    const char *b = cr_path_build(c, i, pre, post, &n);
    if (!b)
        return NULL;
    const char *s = ub_intern(c->t, b, n);
    return s ? s : cr_oom(c);
}

/* The text of path i, interned (and remembered a while: values name the
 * same paths again and again). */
static const char *cr_path_text(crate *c, uint64_t i)
{
    struct cr_ptext *e = &c->ptext[i % CR_PTEXT_CACHE];
    if (i < c->npath && e->s && e->i == i)
        return e->s;
    const char *s = cr_path_wrap(c, i, "", "");
    if (!s)
        return "";
    *e = (struct cr_ptext){(uint32_t)i, s};
    return s;
}

/* --- structural sections ----------------------------------------------- */

/* A cursor over section `name`; false (no error) when there is none. */
static bool cr_section(crate *c, const char *name, cur *k)
{
    for (uint64_t i = 0; i < c->nsec; i++) {
        const unsigned char *e = c->toc + i * UB_CRATE_SECTION_ENTRY_SIZE;
        if (strncmp((const char *)e, name, UB_CRATE_SECTION_NAME_LEN) != 0)
            continue;
        int64_t start, size;
        memcpy(&start, e + 16, 8);
        memcpy(&size, e + 24, 8);
        cr_where(c, "section", name, NULL);
        if (start < 0 || size < 0 || (uint64_t)start > c->len ||
            (uint64_t)size > c->len - (uint64_t)start) {
            cr_err(c, "the section (at %lld, %lld bytes) lies outside the "
                   "file (%zu bytes)", (long long)start, (long long)size,
                   c->len);
            return false;
        }
        k->c = c;
        k->p = c->d + start;
        k->end = k->p + size;
        return true;
    }
    return false;
}

static int cr_read_boot(crate *c)
{
    cr_where(c, "bootstrap header", NULL, NULL);
    if (c->len < UB_CRATE_BOOTSTRAP_SIZE) {
        cr_err(c, "the file is %zu bytes, too small for the %d-byte header",
               c->len, UB_CRATE_BOOTSTRAP_SIZE);
        return -1;
    }
    if (memcmp(c->d, UB_CRATE_IDENT, UB_CRATE_IDENT_LEN) != 0) {
        cr_err(c, "it does not start with \"PXR-USDC\"");
        return -1;
    }
    c->ver = UB_CRATE_VERSION(c->d[8], c->d[9], c->d[10]);
    if (c->ver > UB_CRATE_VERSION_MAX || c->ver == 0) {
        c->failed = true;
        ub_diag *d = ub_diag_add(
            c->diags, UB_ERROR, (ub_loc){c->name, 0, 0}, "usdc-version",
            NULL, 0,
            "usdc (crate) file version %u.%u.%u is not supported: "
            "OpenUSD 24.08 reads 0.0.1 to 0.11.0",
            c->d[8], c->d[9], c->d[10]);
        ub_diag_set_hint(c->diags, d, "convert it with a newer usdcat");
        return -1;
    }
    int64_t toc;
    memcpy(&toc, c->d + 16, 8);
    cr_where(c, "table of contents", NULL, NULL);
    if (toc < 0 || (uint64_t)toc >= c->len) {
        cr_err(c, "table of contents at offset %lld but the file is %zu "
               "bytes (truncated?)", (long long)toc, c->len);
        return -1;
    }
    cur k = {c->d + toc, c->d + c->len, c};
    c->nsec = rd_count(&k, UB_CRATE_SECTION_ENTRY_SIZE, "section count");
    c->toc = k.p;
    return c->failed ? -1 : 0;
}

/* Bytes for an LZ4 block claiming `want` bytes out of `have` in. */
static bool cr_lz4_plausible(uint64_t have, uint64_t want)
{
    return want <= have * 255 + 64;
}

static int cr_read_tokens(crate *c)
{
    cur k;
    if (!cr_section(c, UB_CRATE_SEC_TOKENS, &k))
        return c->failed ? -1 : 0;
    uint64_t n = rd_u64(&k, "token count");
    char *chars = NULL;
    uint64_t nbytes = 0;
    /* the text is a temporary: the tokens are interned */
    if (c->ver < UB_CRATE_V_COMPRESSED_SECTIONS) {
        nbytes = rd_u64(&k, "token bytes");
        if (!cur_need(&k, nbytes, "the token text"))
            return -1;
        chars = ub_scratch_alloc(nbytes + 1);
        if (!chars)
            return (cr_oom(c), -1);
        memcpy(chars, k.p, nbytes);
    } else {
        nbytes = rd_u64(&k, "token bytes");
        uint64_t csize = rd_u64(&k, "compressed token bytes");
        if (!cur_need(&k, csize, "the compressed token text"))
            return -1;
        if (!cr_lz4_plausible(csize, nbytes)) {
            cr_err(c, "%llu bytes of tokens cannot come from %llu "
                   "compressed bytes", (unsigned long long)nbytes,
                   (unsigned long long)csize);
            return -1;
        }
        chars = ub_scratch_alloc(nbytes + 1);
        if (!chars)
            return (cr_oom(c), -1);
        const char *why;
        if (nbytes && ub_crate_lz4(k.p, csize, chars, nbytes, &why) != 0) {
            ub_scratch_free(chars, nbytes + 1);
            cr_err(c, "%s", why);
            return -1;
        }
    }
    if (n > nbytes) {
        ub_scratch_free(chars, nbytes + 1);
        cr_err(c, "claims %llu tokens in %llu bytes",
               (unsigned long long)n, (unsigned long long)nbytes);
        return -1;
    }
    if (nbytes && chars[nbytes - 1] != '\0') {
        ub_scratch_free(chars, nbytes + 1);
        cr_err(c, "the token text is not NUL-terminated");
        return -1;
    }
    chars[nbytes] = '\0';
    c->tok = malloc((n ? n : 1) * sizeof *c->tok);
    if (!c->tok) {
        ub_scratch_free(chars, nbytes + 1);
        return (cr_oom(c), -1);
    }
    const char *p = chars, *end = chars + nbytes;
    uint64_t i = 0;
    for (; i < n && p < end; i++) {
        size_t l = strlen(p);
        if (!(c->tok[i] = ub_intern(c->t, p, l))) {
            ub_scratch_free(chars, nbytes + 1);
            return (cr_oom(c), -1);
        }
        p += l + 1;
    }
    ub_scratch_free(chars, nbytes + 1);
    c->ntok = i;
    if (i != n) {
        cr_err(c, "claims %llu tokens but holds %llu",
               (unsigned long long)n, (unsigned long long)i);
        return -1;
    }
    return 0;
}

static int cr_read_strings(crate *c)
{
    cur k;
    if (!cr_section(c, UB_CRATE_SEC_STRINGS, &k))
        return c->failed ? -1 : 0;
    uint64_t n = rd_count(&k, 4, "string count");
    if (c->failed)
        return -1;
    c->str = malloc((n ? n : 1) * sizeof *c->str);
    if (!c->str)
        return (cr_oom(c), -1);
    memcpy(c->str, k.p, n * 4);
    c->nstr = n;
    for (uint64_t i = 0; i < n; i++)
        if (c->str[i] >= c->ntok) {
            cr_err(c, "string %llu names token %u of %llu",
                   (unsigned long long)i, c->str[i],
                   (unsigned long long)c->ntok);
            return -1;
        }
    return 0;
}

static int cr_key_id(const crate *c, const char *key);

/* v's n entries narrowed in place to their low w bytes (1 to 4, least
 * significant first): tables whose entries need fewer than 32 bits, as
 * the file's counts tell. */
static unsigned char *cr_narrow(uint32_t *v, uint64_t n, unsigned w)
{
    unsigned char *f = (unsigned char *)v;
    if (w < 4)
        for (uint64_t i = 0; i < n; i++) {
            uint32_t x = v[i];
            for (unsigned b = 0; b < w; b++)
                f[i * w + b] = (unsigned char)(x >> (8 * b));
        }
    return f;
}

/* Entry i of a table narrowed to w bytes (cr_narrow). */
static uint32_t cr_narrow_at(const unsigned char *f, unsigned w, uint64_t i)
{
    const unsigned char *q = f + i * w;
    uint32_t x;
    switch (w) {
    case 1:
        return q[0];
    case 2:
        return (uint32_t)q[0] | (uint32_t)q[1] << 8;
    case 3:
        return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16;
    default:
        memcpy(&x, q, 4);
        return x;
    }
}

/* FIELDS' n values at k (their compressed size, then LZ4), in malloc's
 * memory; NULL after an error.  The cursor stays at the compressed
 * bytes, where a list decoded ahead is found. */
static uint64_t *rd_field_reps(cur *k, uint64_t n)
{
    crate *c = k->c;
    uint64_t rsize = rd_u64(k, "field values size");
    if (!cur_need(k, rsize, "field values") ||
        !cr_lz4_plausible(rsize, n * 8)) {
        cr_err(c, "%llu field values cannot come from %llu bytes",
               (unsigned long long)n, (unsigned long long)rsize);
        return NULL;
    }
    uint64_t *reps = cr_ahead_take(c, k->p, n * 8, 0);
    if (reps)
        return reps;
    if (!(reps = malloc(n ? n * 8 : 1)))
        return cr_oom(c);
    const char *why;
    if (n && ub_crate_lz4(k->p, rsize, reps, n * 8, &why) != 0) {
        free(reps);
        cr_err(c, "field values: %s", why);
        return NULL;
    }
    return reps;
}

/* The text-format key of a crate field. */
static const char *cr_text_key(const crate *c, const char *key, int id)
{
    return id >= K_DOCUMENTATION && id < K_COUNT
               ? c->text_key[id - K_DOCUMENTATION]
               : key;
}

static int cr_read_fields(crate *c)
{
    cur k;
    if (!cr_section(c, UB_CRATE_SEC_FIELDS, &k))
        return c->failed ? -1 : 0;
    uint64_t n;
    uint32_t *tk = NULL;    /* the fields' name tokens, scratch */
    uint32_t *num = NULL;   /* by token: its name's number, or NONE */
    if (c->ver < UB_CRATE_V_COMPRESSED_SECTIONS) {
        n = rd_count(&k, 16, "field count");
        if (c->failed)
            return -1;
        tk = ub_scratch_alloc(n * 4);
        c->fld_rep = malloc((n ? n : 1) * sizeof *c->fld_rep);
        if (!tk || !c->fld_rep) {
            cr_oom(c);
            goto out;
        }
        for (uint64_t i = 0; i < n; i++) {
            memcpy(&tk[i], k.p + 16 * i + 4, 4);
            memcpy(&c->fld_rep[i], k.p + 16 * i + 8, 8);
        }
    } else {
        n = rd_u64(&k, "field count");
        if (!(tk = rd_ints(&k, n, 4, "field names")))
            return -1;
        if (!(c->fld_rep = rd_field_reps(&k, n)))
            goto out;
    }
    c->nfld = n;
    /* the names, numbered in order of first use; each field keeps its
     * name's number, in as few bytes as their count needs */
    if (!(num = ub_scratch_alloc(c->ntok * 4))) {
        cr_oom(c);
        goto out;
    }
    memset(num, 0xff, c->ntok * 4);
    uint32_t nn = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (tk[i] >= c->ntok) {
            cr_err(c, "field %llu is named by token %u of %llu",
                   (unsigned long long)i, tk[i],
                   (unsigned long long)c->ntok);
            goto out;
        }
        if (num[tk[i]] == NONE)
            num[tk[i]] = nn++;
        tk[i] = num[tk[i]];
    }
    if (!(c->fname = malloc((nn ? nn : 1) * sizeof *c->fname))) {
        cr_oom(c);
        goto out;
    }
    for (uint64_t t = 0; t < c->ntok; t++)
        if (num[t] != NONE) {
            struct cr_fname *nm = &c->fname[num[t]];
            nm->key = c->tok[t];
            nm->id = cr_key_id(c, c->tok[t]);
            const char *text = cr_text_key(c, nm->key, nm->id);
            for (int k = 0; k <= UB_SPEC_REL; k++)
                nm->role[k] = ub_metadef_role_of(text, (ub_spec_kind)k);
        }
    /* a field the reader does not know is metadata, written `name =
     * value`: a name the text cannot say is damage (as a path's is) */
    for (uint32_t i = 0; i < nn; i++) {
        const char *key = c->fname[i].key;
        if (c->fname[i].id == K_COUNT &&
            !ub_ident_cxx_ok(key, strlen(key))) {
            cr_err(c, "a field is named '%s', which is not an identifier",
                   key);
            goto out;
        }
    }
    ub_scratch_free(num, c->ntok * 4);
    unsigned w = nn <= 0x100 ? 1 : nn <= 0x10000 ? 2 : 4;
    unsigned char *f = cr_narrow(tk, n, w);
    c->fld_name = f;
    c->fld_name_size = ub_scratch_shrink(f, n * 4, n * w);
    c->fld_name_w = w;
    return 0;
out:
    ub_scratch_free(tk, n * 4);
    ub_scratch_free(num, c->ntok * 4);
    return -1;
}

/* The number of field i's name (in fname). */
static uint32_t cr_fld_name(const crate *c, uint64_t i)
{
    return cr_narrow_at(c->fld_name, c->fld_name_w, i);
}

static int cr_read_fieldsets(crate *c)
{
    cur k;
    if (!cr_section(c, UB_CRATE_SEC_FIELDSETS, &k))
        return c->failed ? -1 : 0;
    uint64_t n;
    uint32_t *v; /* the entries as stored, in scratch memory */
    if (c->ver < UB_CRATE_V_COMPRESSED_SECTIONS) {
        n = rd_count(&k, 4, "field set count");
        if (c->failed)
            return -1;
        if (!(v = ub_scratch_alloc(n * 4)))
            return (cr_oom(c), -1);
        memcpy(v, k.p, n * 4);
    } else {
        n = rd_u64(&k, "field set count");
        if (!(v = rd_ints(&k, n, 4, "field sets")))
            return -1;
    }
    if (n && v[n - 1] != NONE) {
        cr_err(c, "the last field set is not terminated");
        goto out;
    }
    for (uint64_t i = 0; i < n; i++)
        if (v[i] != NONE && v[i] >= c->nfld) {
            cr_err(c, "entry %llu names field %u of %llu",
                   (unsigned long long)i, v[i], (unsigned long long)c->nfld);
            goto out;
        }
    /* kept in as few bytes an entry as the field count needs (all ones:
     * NONE), narrowed in place */
    unsigned w = c->nfld < 0xffff ? 2 : c->nfld < 0xffffff ? 3 : 4;
    unsigned char *f = cr_narrow(v, n, w);
    c->fset = f;
    c->fset_size = ub_scratch_shrink(f, n * 4, n * w);
    c->fset_w = w;
    c->nfset = n;
    return 0;
out:
    ub_scratch_free(v, n * 4);
    return -1;
}

/* Entry i of the field sets. */
static uint32_t cr_fset(const crate *c, uint64_t i)
{
    uint32_t x = cr_narrow_at(c->fset, c->fset_w, i);
    /* NONE narrowed is all ones in w bytes */
    return c->fset_w < 4 && x == (1u << (8 * c->fset_w)) - 1 ? NONE : x;
}

/* "{set=sel}", with the names a layer's variant sets and variants may
 * have (the usda reader's rule, looser than the path grammar's: OpenUSD
 * writes what its text reader takes); the set's name is not "". */
static bool cr_variant_elem_ok(const char *e, size_t n)
{
    return ub_ident_variant_sel(e, n, 0) == n;
}

/* Check path i, with its parent and element token (parent NONE: the
 * root; each index once), and give it its kind; *elem is the token to keep
 * (NONE for the root). */
static bool cr_set_path(crate *c, uint64_t i, uint32_t parent, int64_t tok,
                        bool prop, uint32_t *elem_tok)
{
    uint64_t t = (uint64_t)(tok < 0 ? -tok : tok);
    const char *elem = parent == NONE ? "" : cr_tok(c, t);
    if (c->failed)
        return false;
    if (i >= c->npath) {
        cr_err(c, "path index %llu out of range (%llu paths)",
               (unsigned long long)i, (unsigned long long)c->npath);
        return false;
    }
    if (cr_kind(c, i)) {
        cr_err(c, "path %llu is given twice", (unsigned long long)i);
        return false;
    }
    if (parent == NONE) {
        *elem_tok = NONE;
        c->pkind[i] = UB_PK_ROOT;
        return true;
    }
    *elem_tok = (uint32_t)t;
    size_t n = ub_str_len(elem);
    unsigned up = cr_kind(c, parent), kind;
    bool place, name;
    /* A name no path may hold ("", "a/b", "a.b"), or an element its
     * parent cannot have (a property's child, a prim's target), would
     * print as some other path, or none: OpenUSD refuses the file
     * ("invalid prim name"), and so does this reader. */
    bool under_prim = up == UB_PK_CHILD || up == UB_PK_VARIANT;
    if (prop) {
        kind = UB_PK_PROP;
        place = under_prim;
        name = ub_ident_ns_ok(elem, n);
    } else if (elem[0] == '{') {
        kind = UB_PK_VARIANT;
        place = under_prim;
        name = cr_variant_elem_ok(elem, n);
    } else if (elem[0] == '[') {
        kind = UB_PK_TARGET;
        place = up == UB_PK_PROP || up == UB_PK_RELATTR;
        ub_pathinfo pi;
        name = n > 2 && elem[n - 1] == ']' &&
               ub_ident_path_split(elem + 1, n - 2, &pi) && pi.absolute;
    } else if (elem[0] == '.' && up == UB_PK_PROP &&
               strncmp(elem, ".mapper[", 8) == 0) {
        /* a connection mapper's path (</A.a.mapper[/B.c]>): OpenUSD
         * writes it for a relationship's target; no damage, but usdbake
         * has no such path (its text reader refuses it too) */
        c->failed = true;
        ub_diag *d = ub_diag_add(
            c->diags, UB_ERROR, (ub_loc){c->name, 0, 0}, "usdc-unsupported",
            NULL, 0,
            "the file holds a mapper path (a property's '%s'), which "
            "usdbake does not read", elem);
        ub_diag_set_hint(c->diags, d,
                         "OpenUSD writes one where a relationship targets "
                         "</A.a.mapper[/B.c]>; target the property instead");
        return false;
    } else if (elem[0] == '.') {
        kind = UB_PK_RELATTR;
        place = up == UB_PK_TARGET;
        name = ub_ident_ns_ok(elem + 1, n - 1);
    } else {
        kind = UB_PK_CHILD;
        place = up == UB_PK_ROOT || under_prim;
        name = ub_ident_ok(elem, n);
    }
    static const char *const what[] = {
        [UB_PK_CHILD] = "prim name", [UB_PK_PROP] = "property name",
        [UB_PK_VARIANT] = "variant selection", [UB_PK_TARGET] = "target",
        [UB_PK_RELATTR] = "relational attribute name"};
    if (!name) {
        cr_err(c, "path %llu is named '%s', which is not a valid %s",
               (unsigned long long)i, elem, what[kind]);
        return false;
    }
    if (!place) {
        cr_err(c, "path %llu ('%s', a %s) is under a path that cannot have "
               "one", (unsigned long long)i, elem, what[kind]);
        return false;
    }
    c->pkind[i] = (uint8_t)kind;
    return true;
}

/* Where (elem, prop) starts probing in a stretch of w slots. */
static uint32_t cr_slot(const char *elem, bool prop, uint32_t w)
{
    uint64_t x = ((uint64_t)(uintptr_t)elem ^ (uint64_t)prop) *
                 0x9e3779b97f4a7c15ull;
    return (uint32_t)(((x >> 32) * (uint64_t)w) >> 32);
}

/* Slots for a parent's k children: a third empty at least, so a probe
 * ends soon. */
static uint32_t cr_slots(uint32_t k)
{
    return k ? k + (k + 1) / 2 : 0;
}

/* The bits set in x, inline: without a popcount instruction in the
 * target, __builtin_popcountll is a call into libgcc. */
static uint32_t cr_popcount(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* Which of the paths with children p is (p has some). */
static uint32_t cr_parent_rank(const crate *c, uint32_t p)
{
    uint64_t below = c->kid_bits[p / 64] & ((1ull << (p % 64)) - 1);
    return c->kid_rank[p / 64] + cr_popcount(below);
}

static bool cr_has_kids(const crate *c, uint32_t p)
{
    return c->kid_bits[p / 64] >> (p % 64) & 1;
}

/* Index every path under its parent (once PATHS and SPECS are read). */
static bool cr_index_children(crate *c)
{
    uint64_t n = c->npath, words = n / 64 + 1;
    c->kid_bits = calloc(words, sizeof *c->kid_bits);
    c->kid_rank = malloc(words * sizeof *c->kid_rank);
    if (!c->kid_bits || !c->kid_rank)
        return cr_oom(c) != NULL;
    for (uint64_t i = 0; i < n; i++)
        if (cr_kind(c, i) && cr_kind(c, i) != UB_PK_ROOT) {
            uint32_t par = c->ppar[i];
            c->kid_bits[par / 64] |= 1ull << (par % 64);
        }
    uint32_t np = 0;
    for (uint64_t w = 0; w < words; w++) {
        c->kid_rank[w] = np;
        np += cr_popcount(c->kid_bits[w]);
    }
    c->cstart = calloc((size_t)np + 1, sizeof *c->cstart);
    if (!c->cstart)
        return cr_oom(c) != NULL;
    /* a prim's properties and children mostly have indexes in a row:
     * its rank is found once for them */
    uint32_t last = NONE, r = 0;
    for (uint64_t i = 0; i < n; i++)
        if (cr_kind(c, i) && cr_kind(c, i) != UB_PK_ROOT) {
            if (c->ppar[i] != last)
                r = cr_parent_rank(c, last = c->ppar[i]);
            c->cstart[r + 1]++;
        }
    for (uint32_t r = 0; r < np; r++) /* <= 2 * n: fits, see below */
        c->cstart[r + 1] = c->cstart[r] + cr_slots(c->cstart[r + 1]);
    c->child = calloc(c->cstart[np] ? c->cstart[np] : 1, sizeof *c->child);
    if (!c->child)
        return cr_oom(c) != NULL;
    last = NONE;
    for (uint64_t i = 0; i < n; i++) {
        unsigned kind = cr_kind(c, i);
        if (!kind || kind == UB_PK_ROOT)
            continue;
        if (c->ppar[i] != last)
            r = cr_parent_rank(c, last = c->ppar[i]);
        uint32_t *v = c->child + c->cstart[r];
        uint32_t w = c->cstart[r + 1] - c->cstart[r];
        uint32_t h = cr_slot(cr_elem_of(c, i), kind == UB_PK_PROP, w);
        while (v[h])
            h = h + 1 == w ? 0 : h + 1;
        v[h] = (uint32_t)i + 1;
    }
    return true;
}

/* The stretch of the child index that holds a path's children: found
 * once for all the lookups of one prim. */
typedef struct cr_kids {
    const uint32_t *v;
    uint32_t w;
} cr_kids;

static cr_kids cr_children(const crate *c, uint32_t parent)
{
    if (!c->cstart || parent >= c->npath || !cr_has_kids(c, parent))
        return (cr_kids){NULL, 0};
    uint32_t r = cr_parent_rank(c, parent);
    return (cr_kids){c->child + c->cstart[r],
                     c->cstart[r + 1] - c->cstart[r]};
}

/* The child named elem (a property when prop) in kids, or NONE. */
static uint32_t cr_find_child(const crate *c, cr_kids kids,
                              const char *elem, bool prop)
{
    if (!kids.w)
        return NONE;
    for (uint32_t h = cr_slot(elem, prop, kids.w); kids.v[h];
         h = h + 1 == kids.w ? 0 : h + 1) {
        uint32_t j = kids.v[h] - 1;
        if (cr_elem_of(c, j) == elem && (cr_kind(c, j) == UB_PK_PROP) == prop)
            return j;
    }
    return NONE;
}

/* The prim spec a list of prim children names under kids' parent, or
 * NONE: no such spec, and the entry is skipped. */
static uint32_t cr_prim_child(const crate *c, cr_kids kids, const char *name)
{
    uint32_t ci = cr_find_child(c, kids, name, false);
    return ci != NONE && PK_STYPE(c->pkind[ci]) == UB_CRATE_SPEC_PRIM ? ci
                                                                     : NONE;
}

static bool cr_alloc_paths(crate *c, uint64_t n)
{
    c->npath = n;
    /* cstart counts up to two slots a path in 32 bits */
    if (n > UINT32_MAX / 2 - 1) {
        cr_err(c, "claims %llu paths, more than usdbake reads",
               (unsigned long long)n);
        return false;
    }
    c->pkind = calloc(n ? n : 1, 1);
    if (!c->pkind)
        return cr_oom(c) != NULL;
    return true;
}

/* The parent and element tables of the paths. */
static bool cr_alloc_path_tables(crate *c)
{
    size_t n = c->npath ? c->npath : 1;
    c->ppar = malloc(n * sizeof *c->ppar);
    c->pelem = malloc(n * sizeof *c->pelem);
    if (!c->ppar || !c->pelem)
        return cr_oom(c) != NULL;
    return true;
}

static int cr_read_paths_compressed(crate *c, cur *k)
{
    uint64_t n = rd_u64(k, "encoded path count");
    if (c->failed)
        return -1;
    /* paths not encoded (the empty path) stay empty */
    if (c->npath > 2 * n + 16) {
        cr_err(c, "claims %llu paths but encodes %llu",
               (unsigned long long)c->npath, (unsigned long long)n);
        return -1;
    }
    uint32_t *idx = rd_ints(k, n, 4, "path indexes");
    int32_t *tok = idx ? rd_ints(k, n, 4, "path element tokens") : NULL;
    int32_t *jump = tok ? rd_ints(k, n, 4, "path jumps") : NULL;
    uint8_t *seen = jump ? ub_scratch_alloc(n) : NULL;
    /* pending siblings: (item, parent path) */
    uint64_t *stack = seen ? ub_scratch_alloc(n * sizeof *stack) : NULL;
    int rc = -1;
    if (!stack) {
        if (jump)
            cr_oom(c);
        goto out;
    }
    memset(seen, 0, n);
    size_t sp = 0;
    if (n)
        stack[sp++] = (uint64_t)NONE << 32;
    while (sp && !c->failed) {
        uint64_t top = stack[--sp];
        uint64_t i = top & 0xffffffffu;
        uint32_t parent = (uint32_t)(top >> 32);
        for (;;) {
            if (i >= n || seen[i]) {
                cr_err(c, i >= n ? "a jump leads past the last path"
                                 : "the path jumps form a cycle");
                goto out;
            }
            seen[i] = 1;
            int64_t t = tok[i];
            int64_t jmp = jump[i];
            uint32_t elem;
            if (!cr_set_path(c, idx[i], parent, t, t < 0, &elem))
                goto out;
            /* read once: the item's parent and element take the places
             * of its jump and token until the tables are made */
            memcpy(&jump[i], &parent, 4);
            memcpy(&tok[i], &elem, 4);
            if (parent == NONE)
                parent = idx[i];
            bool child = jmp > 0 || jmp == -1;
            bool sib = jmp >= 0;
            if (child && sib)
                stack[sp++] = ((uint64_t)parent << 32) |
                              (i + (uint64_t)jmp);
            if (child)
                parent = idx[i];
            if (!child && !sib)
                break;
            i++;
        }
    }
    if (c->failed)
        goto out;
    /* the tables, one at a time, each as its item list goes */
    ub_scratch_free(stack, n * sizeof *stack);
    stack = NULL;
    if (!(c->ppar = malloc((c->npath ? c->npath : 1) * sizeof *c->ppar))) {
        cr_oom(c);
        goto out;
    }
    for (uint64_t i = 0; i < n; i++)
        if (seen[i])
            memcpy(&c->ppar[idx[i]], &jump[i], 4);
    ub_scratch_free(jump, n * 4);
    jump = NULL;
    if (!(c->pelem = malloc((c->npath ? c->npath : 1) * sizeof *c->pelem))) {
        cr_oom(c);
        goto out;
    }
    for (uint64_t i = 0; i < n; i++)
        if (seen[i])
            memcpy(&c->pelem[idx[i]], &tok[i], 4);
    rc = 0;
out:
    ub_scratch_free(idx, n * 4);
    ub_scratch_free(tok, n * 4);
    ub_scratch_free(jump, n * 4);
    ub_scratch_free(seen, n);
    ub_scratch_free(stack, n * sizeof *stack);
    return rc;
}

static int cr_read_paths_plain(crate *c, cur *k)
{
    size_t hsize = c->ver < UB_CRATE_V_NO_PATH_PADDING ? 16 : 12;
    size_t pad = hsize - 12;
    if (!cr_alloc_path_tables(c))
        return -1;
    uint64_t *stack = ub_scratch_alloc(c->npath * sizeof *stack);
    if (!stack)
        return (cr_oom(c), -1);
    size_t sp = 0;
    uint64_t reads = 0;
    const unsigned char *base = k->c->d;
    stack[sp++] = ((uint64_t)NONE << 32) | (uint64_t)(k->p - base);
    /* offsets are file offsets; the section bounds every read */
    while (sp && !c->failed) {
        uint64_t top = stack[--sp];
        uint32_t parent = (uint32_t)(top >> 32);
        uint64_t off = top & 0xffffffffu;
        cur h = *k;
        h.p = base + off; /* cur_need refuses anything outside */
        for (;;) {
            if (++reads > c->npath) {
                cr_err(c, "more path items than the %llu paths",
                       (unsigned long long)c->npath);
                break;
            }
            if (!cur_need(&h, hsize, "a path item"))
                break;
            uint32_t pi, ti;
            memcpy(&pi, h.p + pad, 4);
            memcpy(&ti, h.p + pad + 4, 4);
            uint8_t bits = h.p[pad + 8];
            h.p += hsize;
            bool prop = bits & UB_CRATE_PATH_IS_PROPERTY;
            uint32_t elem;
            if (!cr_set_path(c, pi, parent, ti, prop, &elem))
                break;
            c->ppar[pi] = parent;
            c->pelem[pi] = elem;
            if (parent == NONE)
                parent = pi;
            bool child = bits & UB_CRATE_PATH_HAS_CHILD;
            bool sib = bits & UB_CRATE_PATH_HAS_SIBLING;
            if (child && sib) {
                uint64_t so = rd_u64(&h, "a sibling offset");
                if (c->failed)
                    break;
                if (so > 0xffffffffu || so > c->len) {
                    cr_err(c, "a sibling offset points outside the file");
                    break;
                }
                stack[sp++] = ((uint64_t)parent << 32) | so;
            }
            if (child)
                parent = pi;
            if (!child && !sib)
                break;
        }
    }
    ub_scratch_free(stack, c->npath * sizeof *stack);
    return c->failed ? -1 : 0;
}

static int cr_read_paths(crate *c)
{
    cur k;
    if (!cr_section(c, UB_CRATE_SEC_PATHS, &k))
        return c->failed ? -1 : 0;
    uint64_t n = rd_u64(&k, "path count");
    if (c->failed)
        return -1;
    uint64_t left = (uint64_t)(k.end - k.p);
    bool plain = c->ver < UB_CRATE_V_COMPRESSED_SECTIONS;
    if ((plain && n > left / 12 + 1) ||
        (!plain && !ub_crate_ints_plausible(left, n, 4))) {
        cr_err(c, "claims %llu paths, more than its %llu bytes can hold",
               (unsigned long long)n, (unsigned long long)left);
        return -1;
    }
    if (!cr_alloc_paths(c, n))
        return -1;
    if (n == 0)
        return 0;
    return plain ? cr_read_paths_plain(c, &k)
                 : cr_read_paths_compressed(c, &k);
}

/* Spec i's path and field set: checked, then the field set kept in its
 * path. */
static bool cr_set_spec_fset(crate *c, uint64_t i, uint32_t path,
                             uint32_t fset)
{
    if (path >= c->npath || !cr_kind(c, path)) {
        cr_err(c, "spec %llu has no path", (unsigned long long)i);
        return false;
    }
    if (fset >= c->nfset || (fset && cr_fset(c, fset - 1) != NONE)) {
        cr_err(c, "spec %llu (<%s>) names a field set that does not start "
               "at index %u", (unsigned long long)i, cr_path_text(c, path),
               fset);
        return false;
    }
    if (c->pfset[path] != NONE) {
        cr_err(c, "two specs for <%s>", cr_path_text(c, path));
        return false;
    }
    c->pfset[path] = fset;
    return true;
}

/* Spec i's type (its path checked by cr_set_spec_fset), kept in its
 * path's kind. */
static bool cr_set_spec_type(crate *c, uint64_t i, uint32_t path,
                             uint32_t type)
{
    if (type == UB_CRATE_SPEC_UNKNOWN || type > UB_CRATE_SPEC_VARIANT_SET) {
        cr_err(c, "spec %llu (<%s>) has spec type %u, which is none",
               (unsigned long long)i, cr_path_text(c, path), type);
        return false;
    }
    if (PK_STYPE(c->pkind[path])) {
        cr_err(c, "two specs for <%s>", cr_path_text(c, path));
        return false;
    }
    c->pkind[path] |= (uint8_t)(type << 3);
    return true;
}

static int cr_read_specs(crate *c)
{
    cur k;
    if (!cr_section(c, UB_CRATE_SEC_SPECS, &k))
        return c->failed ? -1 : 0;
    size_t np = c->npath ? c->npath : 1;
    if (!(c->pfset = malloc(np * sizeof *c->pfset)))
        return (cr_oom(c), -1);
    memset(c->pfset, 0xff, np * sizeof *c->pfset); /* NONE: no spec */
    uint64_t n;
    if (c->ver < UB_CRATE_V_COMPRESSED_SECTIONS) {
        size_t es = c->ver < UB_CRATE_V_NO_PATH_PADDING ? 16 : 12;
        size_t pad = es - 12;
        n = rd_count(&k, es, "spec count");
        for (uint64_t i = 0; i < n && !c->failed; i++) {
            const unsigned char *e = k.p + i * es + pad;
            uint32_t path, fset, type;
            memcpy(&path, e, 4);
            memcpy(&fset, e + 4, 4);
            memcpy(&type, e + 8, 4);
            if (cr_set_spec_fset(c, i, path, fset))
                cr_set_spec_type(c, i, path, type);
        }
        return c->failed ? -1 : 0;
    }
    /* two lists at a time, not three: paths and field sets, then paths
     * and types */
    n = rd_u64(&k, "spec count");
    uint32_t *p = rd_ints(&k, n, 4, "spec paths");
    uint32_t *f = p ? rd_ints(&k, n, 4, "spec field sets") : NULL;
    for (uint64_t i = 0; f && i < n && !c->failed; i++)
        cr_set_spec_fset(c, i, p[i], f[i]);
    /* the types where the field sets were */
    uint64_t tsize = f && !c->failed ? rd_ints_size(&k, n, 4, "spec types")
                                     : 0;
    if (f && !c->failed && rd_ints_into(&k, tsize, n, 4, f, "spec types"))
        for (uint64_t i = 0; i < n && !c->failed; i++)
            cr_set_spec_type(c, i, p[i], f[i]);
    ub_scratch_free(p, n * 4);
    ub_scratch_free(f, n * 4);
    return c->failed ? -1 : 0;
}

/* --- values ------------------------------------------------------------ */

static const uint8_t cr_types[UB_CRATE_TYPE_COUNT] = {
    [UB_CRATE_BOOL] = UB_TY_BOOL,       [UB_CRATE_UCHAR] = UB_TY_UCHAR,
    [UB_CRATE_INT] = UB_TY_INT,         [UB_CRATE_UINT] = UB_TY_UINT,
    [UB_CRATE_INT64] = UB_TY_INT64,     [UB_CRATE_UINT64] = UB_TY_UINT64,
    [UB_CRATE_HALF] = UB_TY_HALF,       [UB_CRATE_FLOAT] = UB_TY_FLOAT,
    [UB_CRATE_DOUBLE] = UB_TY_DOUBLE,   [UB_CRATE_STRING] = UB_TY_STRING,
    [UB_CRATE_TOKEN] = UB_TY_TOKEN,     [UB_CRATE_ASSET_PATH] = UB_TY_ASSET,
    [UB_CRATE_MATRIX2D] = UB_TY_MATRIX2D,
    [UB_CRATE_MATRIX3D] = UB_TY_MATRIX3D,
    [UB_CRATE_MATRIX4D] = UB_TY_MATRIX4D,
    [UB_CRATE_QUATD] = UB_TY_QUATD,     [UB_CRATE_QUATF] = UB_TY_QUATF,
    [UB_CRATE_QUATH] = UB_TY_QUATH,     [UB_CRATE_VEC2D] = UB_TY_DOUBLE2,
    [UB_CRATE_VEC2F] = UB_TY_FLOAT2,    [UB_CRATE_VEC2H] = UB_TY_HALF2,
    [UB_CRATE_VEC2I] = UB_TY_INT2,      [UB_CRATE_VEC3D] = UB_TY_DOUBLE3,
    [UB_CRATE_VEC3F] = UB_TY_FLOAT3,    [UB_CRATE_VEC3H] = UB_TY_HALF3,
    [UB_CRATE_VEC3I] = UB_TY_INT3,      [UB_CRATE_VEC4D] = UB_TY_DOUBLE4,
    [UB_CRATE_VEC4F] = UB_TY_FLOAT4,    [UB_CRATE_VEC4H] = UB_TY_HALF4,
    [UB_CRATE_VEC4I] = UB_TY_INT4,      [UB_CRATE_TIME_CODE] = UB_TY_TIMECODE,
    [UB_CRATE_PATH_EXPRESSION] = UB_TY_PATH_EXPRESSION,
};

static const ub_type *cr_type(unsigned ct)
{
    return ct < UB_CRATE_TYPE_COUNT && cr_types[ct] ? ub_type_get(cr_types[ct])
                                                    : NULL;
}

/* Types whose values are always in the representation itself. */
static bool cr_always_inlined(unsigned ct)
{
    switch (ct) {
    case UB_CRATE_BOOL: case UB_CRATE_UCHAR: case UB_CRATE_INT:
    case UB_CRATE_UINT: case UB_CRATE_HALF: case UB_CRATE_FLOAT:
    case UB_CRATE_STRING: case UB_CRATE_TOKEN: case UB_CRATE_ASSET_PATH:
    case UB_CRATE_VEC2H: case UB_CRATE_SPECIFIER: case UB_CRATE_PERMISSION:
    case UB_CRATE_VARIABILITY:
        return true;
    default:
        return false;
    }
}

/* Bytes one element takes in the file. */
static size_t cr_disk_size(unsigned ct, const ub_type *t)
{
    switch (ct) {
    case UB_CRATE_STRING: case UB_CRATE_TOKEN: case UB_CRATE_ASSET_PATH:
    case UB_CRATE_PATH_EXPRESSION:
        return 4;
    default:
        return ub_type_elem_size(t);
    }
}

/* An asset path value: the text reader's rule (UTF-8, no control
 * characters), which OpenUSD's crate reader applies too, refusing the
 * file; a path written back as text must read again. */
static const char *cr_asset(crate *c, const char *s)
{
    if (c->failed) /* (s may be "", no token's) */
        return s;
    const char *problem = ub_ident_asset_problem(s, ub_str_len(s));
    if (problem)
        cr_err(c, "%s", problem);
    return s;
}

/* n elements of crate type ct from src into dst (the model's storage). */
static void cr_put_elems(crate *c, unsigned ct, const ub_type *t,
                         const unsigned char *src, size_t n, void *dst)
{
    switch (ct) {
    case UB_CRATE_TOKEN:
    case UB_CRATE_STRING:
    case UB_CRATE_ASSET_PATH:
    case UB_CRATE_PATH_EXPRESSION:
        for (size_t i = 0; i < n; i++) {
            uint32_t x;
            memcpy(&x, src + 4 * i, 4);
            const char *e = ct == UB_CRATE_TOKEN ? cr_tok(c, x) : cr_str(c, x);
            ((const char **)dst)[i] =
                ct == UB_CRATE_ASSET_PATH ? cr_asset(c, e) : e;
        }
        return;
    case UB_CRATE_QUATD:
    case UB_CRATE_QUATF:
    case UB_CRATE_QUATH: {
        /* stored imaginary part first, then real; the model (and the
         * text) puts the real part first */
        size_t s = ub_scalar_size(t->scalar);
        for (size_t i = 0; i < n; i++) {
            const unsigned char *q = src + 4 * s * i;
            unsigned char *o = (unsigned char *)dst + 4 * s * i;
            memcpy(o, q + 3 * s, s);
            memcpy(o + s, q, 3 * s);
        }
        return;
    }
    default:
        memcpy(dst, src, n * ub_type_elem_size(t));
        return;
    }
}

static int cr_value(crate *c, uint64_t rep, ub_value *out, int nest);

static int cr_scalar(crate *c, unsigned ct, uint64_t rep, ub_value *out)
{
    const ub_type *t = cr_type(ct);
    ub_value v = ub_value_new(c->a, t, 1, false);
    if (v.kind != UB_V_DATA)
        return (cr_oom(c), -1);
    uint64_t payload = rep & UB_CRATE_REP_PAYLOAD_MASK;
    if (cr_always_inlined(ct) || (rep & UB_CRATE_REP_IS_INLINED)) {
        uint32_t x = (uint32_t)payload;
        unsigned nc = ub_type_ncomp(t);
        switch (ct) {
        case UB_CRATE_BOOL:
            *(uint8_t *)ub_value_data(&v) = (x & 0xff) != 0;
            break;
        case UB_CRATE_UCHAR:
            *(uint8_t *)ub_value_data(&v) = (uint8_t)x;
            break;
        case UB_CRATE_INT: case UB_CRATE_UINT: case UB_CRATE_FLOAT:
        case UB_CRATE_VEC2H:
            memcpy(ub_value_data(&v), &x, 4);
            break;
        case UB_CRATE_HALF: {
            uint16_t h = (uint16_t)x;
            memcpy(ub_value_data(&v), &h, 2);
            break;
        }
        case UB_CRATE_TOKEN:
            *(const char **)ub_value_data(&v) = cr_tok(c, x);
            break;
        case UB_CRATE_ASSET_PATH:
            *(const char **)ub_value_data(&v) = cr_asset(c, cr_tok(c, x));
            break;
        case UB_CRATE_STRING:
            *(const char **)ub_value_data(&v) = cr_str(c, x);
            break;
        case UB_CRATE_DOUBLE:
        case UB_CRATE_TIME_CODE: {
            float f;
            memcpy(&f, &x, 4);
            double d = f;
            memcpy(ub_value_data(&v), &d, 8);
            break;
        }
        case UB_CRATE_INT64: {
            int64_t i = (int32_t)x;
            memcpy(ub_value_data(&v), &i, 8);
            break;
        }
        case UB_CRATE_UINT64: {
            uint64_t u = x;
            memcpy(ub_value_data(&v), &u, 8);
            break;
        }
        case UB_CRATE_VEC2D: case UB_CRATE_VEC2F: case UB_CRATE_VEC2I:
        case UB_CRATE_VEC3D: case UB_CRATE_VEC3F: case UB_CRATE_VEC3H:
        case UB_CRATE_VEC3I: case UB_CRATE_VEC4D: case UB_CRATE_VEC4F:
        case UB_CRATE_VEC4H: case UB_CRATE_VEC4I:
            for (unsigned i = 0; i < nc; i++)
                ub_value_set_double(&v, 0, i, (int8_t)(x >> (8 * i)));
            break;
        case UB_CRATE_MATRIX2D: case UB_CRATE_MATRIX3D:
        case UB_CRATE_MATRIX4D:
            for (unsigned i = 0; i < t->rows; i++)
                ub_value_set_double(&v, 0, i * t->cols + i,
                                    (int8_t)(x >> (8 * i)));
            break;
        default:
            cr_err(c, "a %s value cannot be inlined", t->name);
            return -1;
        }
    } else {
        cur k;
        size_t es = cr_disk_size(ct, t);
        if (!cur_at(c, payload, &k) || !cur_need(&k, es, "a value"))
            return -1;
        cr_put_elems(c, ct, t, k.p, 1, ub_value_data(&v));
    }
    *out = v;
    return c->failed ? -1 : 0;
}

static bool cr_is_int_type(unsigned ct)
{
    return ct == UB_CRATE_INT || ct == UB_CRATE_UINT ||
           ct == UB_CRATE_INT64 || ct == UB_CRATE_UINT64;
}

static bool cr_is_float_type(unsigned ct)
{
    return ct == UB_CRATE_HALF || ct == UB_CRATE_FLOAT ||
           ct == UB_CRATE_DOUBLE;
}

static int cr_array(crate *c, unsigned ct, uint64_t rep, ub_value *out)
{
    const ub_type *t = cr_type(ct);
    uint64_t payload = rep & UB_CRATE_REP_PAYLOAD_MASK;
    if (payload == 0) {
        *out = ub_value_new(c->a, t, 0, true);
        return out->kind == UB_V_DATA ? 0 : ((cr_oom(c), -1));
    }
    cur k;
    if (!cur_at(c, payload, &k))
        return -1;
    if (c->ver < UB_CRATE_V_COMPRESSED_INTS)
        rd_u32(&k, "an array's rank");
    uint64_t n = c->ver < UB_CRATE_V_64BIT_ARRAY_SIZES
                     ? rd_u32(&k, "an array's size")
                     : rd_u64(&k, "an array's size");
    if (c->failed)
        return -1;
    if (n > UINT32_MAX) {
        cr_err(c, "an array of %llu elements", (unsigned long long)n);
        return -1;
    }
    size_t es = ub_type_elem_size(t);
    bool comp = (rep & UB_CRATE_REP_IS_COMPRESSED) &&
                n >= UB_CRATE_MIN_COMPRESSED_ARRAY &&
                ((cr_is_int_type(ct) && c->ver >= UB_CRATE_V_COMPRESSED_INTS) ||
                 (cr_is_float_type(ct) &&
                  c->ver >= UB_CRATE_V_COMPRESSED_FLOATS));
    if (!comp) {
        size_t ds = cr_disk_size(ct, t);
        if (n > (uint64_t)(k.end - k.p) / ds) {
            cr_err(c, "an array of %llu elements runs past the end of the "
                   "file", (unsigned long long)n);
            return -1;
        }
        ub_value v = ub_value_new(c->a, t, (uint32_t)n, true);
        if (v.kind != UB_V_DATA)
            return (cr_oom(c), -1);
        cr_touch(c, k.p, n * ds);
        cr_put_elems(c, ct, t, k.p, n, ub_value_data(&v));
        *out = v;
        return c->failed ? -1 : 0;
    }
    if (cr_is_int_type(ct)) {
        /* decoded where the value keeps it: no copy of a big array */
        uint64_t size = rd_ints_size(&k, n, (unsigned)es,
                                     "a compressed int array");
        if (c->failed)
            return -1;
        ub_value v = ub_value_new(c->a, t, (uint32_t)n, true);
        if (v.kind != UB_V_DATA)
            return (cr_oom(c), -1);
        if (!rd_ints_into(&k, size, n, (unsigned)es, ub_value_data(&v),
                          "a compressed int array"))
            return -1;
        *out = v;
        return 0;
    }
    /* floats: all integral ('i'), or a lookup table and indexes ('t') */
    uint8_t code = rd_u8(&k, "a compressed float array's code");
    if (c->failed)
        return -1;
    const unsigned char *lut = NULL;
    uint32_t nlut = 0;
    if (code == 't') {
        nlut = rd_u32(&k, "a float lookup table's size");
        if (!cur_need(&k, (uint64_t)nlut * es, "a float lookup table"))
            return -1;
        lut = k.p;
        k.p += (size_t)nlut * es;
    } else if (code != 'i') {
        cr_err(c, "a compressed float array has code %u (expected 'i' or "
               "'t')", code);
        return -1;
    }
    uint32_t *ints = rd_ints(&k, n, 4, "a compressed float array");
    if (!ints)
        return -1;
    ub_value v = ub_value_new(c->a, t, (uint32_t)n, true);
    if (v.kind != UB_V_DATA) {
        ub_scratch_free(ints, n * 4);
        return (cr_oom(c), -1);
    }
    char *vd = ub_value_data(&v);
    for (uint64_t i = 0; i < n; i++) {
        if (lut) {
            if (ints[i] >= nlut) {
                cr_err(c, "a float lookup index %u is past the table's %u "
                       "entries", ints[i], nlut);
                break;
            }
            memcpy(vd + i * es, lut + (size_t)ints[i] * es, es);
        } else {
            ub_value_set_double(&v, (uint32_t)i, 0, (double)(int32_t)ints[i]);
        }
    }
    ub_scratch_free(ints, n * 4);
    *out = v;
    return c->failed ? -1 : 0;
}

static size_t cr_memo_slot(const crate *c, uint64_t rep)
{
    uint64_t x = rep * 0x9e3779b97f4a7c15ull;
    size_t mask = c->memo_cap - 1;
    size_t h = (size_t)(x ^ (x >> 31)) & mask;
    while (c->memo[h].rep && c->memo[h].rep != rep)
        h = (h + 1) & mask;
    return h;
}

/* cr_array, decoding each stored array once. */
static int cr_array_memo(crate *c, unsigned ct, uint64_t rep, ub_value *out)
{
    /* streaming: an array lives no longer than the prim that uses it;
     * nor does a list of names (cr_names), whatever the file stores it
     * as: the memo would hand it out after it is given back */
    if ((rep & UB_CRATE_REP_PAYLOAD_MASK) == 0 || c->stream ||
        c->a == c->names)
        return cr_array(c, ct, rep, out);
    if (c->memo_cap) {
        size_t h = cr_memo_slot(c, rep);
        if (c->memo[h].rep == rep) {
            *out = c->memo[h].v;
            return 0;
        }
    }
    if (cr_array(c, ct, rep, out) != 0)
        return -1;
    if ((c->memo_n + 1) * 2 > c->memo_cap) {
        size_t cap = c->memo_cap ? c->memo_cap * 2 : 256;
        struct cr_memo *old = c->memo;
        size_t old_cap = c->memo_cap;
        c->memo = calloc(cap, sizeof *c->memo);
        if (!c->memo) {
            c->memo = old;
            return 0; /* no memo: decoded again next time */
        }
        c->memo_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].rep)
                c->memo[cr_memo_slot(c, old[i].rep)] = old[i];
        free(old);
    }
    size_t h = cr_memo_slot(c, rep);
    c->memo[h] = (struct cr_memo){rep, *out};
    c->memo_n++;
    return 0;
}

/* n uint32 indexes at k as an array of t, each mapped by ct's rule. */
static int cr_index_array(crate *c, cur *k, unsigned ct, ub_type_id t,
                          ub_value *out)
{
    uint64_t n = rd_count(k, 4, "a list");
    if (c->failed)
        return -1;
    ub_value v = ub_value_new(c->a, ub_type_get(t), (uint32_t)n, true);
    if (v.kind != UB_V_DATA)
        return (cr_oom(c), -1);
    const char **s = ub_value_data(&v);
    cr_touch(c, k->p, 4 * n);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t x;
        memcpy(&x, k->p + 4 * i, 4);
        s[i] = ct == UB_CRATE_TOKEN  ? cr_tok(c, x)
               : ct == UB_CRATE_STRING ? cr_str(c, x)
                                       : cr_path_text(c, x);
    }
    k->p += 4 * n;
    *out = v;
    return c->failed ? -1 : 0;
}

/* A VtValue stored inline in a structure: a jump, then its rep. */
static int cr_vtvalue(crate *c, cur *k, ub_value *out, int nest)
{
    if (!cur_jump(k))
        return -1;
    uint64_t rep = rd_u64(k, "a value");
    if (c->failed)
        return -1;
    return cr_value(c, rep, out, nest + 1);
}

static int cr_dict_at(crate *c, cur *k, ub_dict **out, int nest)
{
    uint64_t n = rd_count(k, 12, "a dictionary");
    if (c->failed)
        return -1;
    if (n > UINT32_MAX) {
        cr_err(c, "a dictionary of %llu entries (at most %u)",
               (unsigned long long)n, UINT32_MAX);
        return -1;
    }
    ub_dict *d = ub_dict_new(c->a);
    if (!d || ub_dict_reserve(c->a, d, (uint32_t)n) != 0)
        return (cr_oom(c), -1);
    for (uint64_t i = 0; i < n && !c->failed; i++) {
        const char *key = cr_str(c, rd_u32(k, "a dictionary key"));
        ub_value v;
        if (c->failed || cr_vtvalue(c, k, &v, nest) != 0)
            return -1;
        const char *what = ub_value_not_in_dict(&v);
        if (what) {
            cr_err(c, "the dictionary's value '%s' is %s, which no "
                      "dictionary holds", key, what);
            return -1;
        }
        if (!ub_dict_set(c->a, d, key, v, c->loc))
            return (cr_oom(c), -1);
    }
    *out = d;
    return c->failed ? -1 : 0;
}

/* A layer offset or scale of +inf (of `1e400` in the text OpenUSD read):
 * the layer holds it, but its text prints it as `inf`, which no usda
 * reader reads back in a layer offset (`-inf` reads).  Said here, as the
 * usda reader says it, since usdcat does not; what is the kind of arc,
 * asset its asset path ("" for an internal reference). */
static void cr_warn_offset(crate *c, ub_offset o, const char *what,
                           const char *asset)
{
    ub_offset_warn_unreadable(c->diags, ub_strtab_loc(c->t, c->loc), o, what,
                              asset);
}

static ub_reference *cr_ref_items(crate *c, cur *k, bool payload, uint64_t n,
                                  int nest)
{
    ub_reference *r = ub_arena_zalloc(c->a, (n ? n : 1) * sizeof *r);
    if (!r)
        return cr_oom(c);
    for (uint64_t i = 0; i < n && !c->failed; i++) {
        r[i].asset =
            cr_asset(c, cr_str(c, rd_u32(k, "a reference's asset")));
        r[i].prim_path = cr_path_text(c, rd_u32(k, "a reference's path"));
        /* (the text says a prim path, without variant selections, or
         * none for the default prim) */
        if (*r[i].prim_path && !ub_ident_prim_path_ok(r[i].prim_path)) {
            cr_err(c, "<%s> is not a prim path, as a %s's path must be",
                   r[i].prim_path, payload ? "payload" : "reference");
            return NULL;
        }
        r[i].offset = UB_OFFSET_IDENTITY;
        r[i].loc = c->loc;
        if (!payload || c->ver >= UB_CRATE_V_PAYLOAD_LISTOP) {
            r[i].offset.offset = rd_f64(k, "a layer offset");
            r[i].offset.scale = rd_f64(k, "a layer offset");
            const char *bad = ub_offset_problem(r[i].offset);
            if (bad && !c->failed) {
                cr_err(c, "%s", bad);
                return NULL;
            }
            cr_warn_offset(c, r[i].offset, payload ? "payload" : "reference",
                           r[i].asset);
            r[i].has_offset = r[i].offset.offset != 0.0;
            r[i].has_scale = r[i].offset.scale != 1.0;
        }
        if (!payload) {
            ub_dict *d;
            if (cr_dict_at(c, k, &d, nest) != 0)
                return NULL;
            r[i].custom_data = d->n ? d : NULL;
        }
    }
    return c->failed ? NULL : r;
}

/* An untyped list of n atoms (set by the caller), as the usda reader
 * makes a list op part of a field it does not know. */
static int cr_untyped_list(crate *c, uint64_t n, ub_value *out)
{
    ub_untyped *u = ub_arena_zalloc(c->a, sizeof *u);
    ub_untyped *kids = n ? ub_arena_zalloc(c->a, n * sizeof *kids) : NULL;
    if (!u || (n && !kids))
        return (cr_oom(c), -1);
    *u = (ub_untyped){.kind = UB_U_LIST, .n = (uint32_t)n, .child = kids};
    *out = (ub_value){.kind = UB_V_UNTYPED};
    out->u.untyped = u;
    return 0;
}

/* A part of a list op of unregistered values: each item a VtValue holding
 * the text OpenUSD recorded (a part of a field it did not know, written
 * from text, is one item: the list's text without its brackets). */
static int cr_unregistered_items(crate *c, cur *k, ub_value *out, int nest)
{
    uint64_t n = rd_count(k, 16, "a list op");
    if (c->failed || cr_untyped_list(c, n, out) != 0)
        return -1;
    ub_untyped *kids = out->u.untyped->child;
    for (uint64_t i = 0; i < n; i++) {
        ub_value v;
        if (cr_vtvalue(c, k, &v, nest) != 0)
            return -1;
        if (v.kind != UB_V_DATA || v.is_array || v.type_id != UB_TY_STRING) {
            cr_err(c, "an item of a list op of unregistered values is not "
                      "text");
            return -1;
        }
        kids[i] = (ub_untyped){.kind = UB_U_ATOM,
                               .text = ub_value_str(&v, 0)};
    }
    return 0;
}

static int cr_listop(crate *c, unsigned ct, uint64_t payload, ub_value *out,
                     int nest)
{
    ub_type_id et;
    switch (ct) {
    case UB_CRATE_TOKEN_LISTOP: et = UB_TY_TOKEN; break;
    case UB_CRATE_STRING_LISTOP: et = UB_TY_STRING; break;
    case UB_CRATE_PATH_LISTOP: et = UB_TY_PATH; break;
    case UB_CRATE_REFERENCE_LISTOP: et = UB_TY_REFERENCE; break;
    case UB_CRATE_PAYLOAD_LISTOP: et = UB_TY_PAYLOAD; break;
    case UB_CRATE_INT_LISTOP: et = UB_TY_INT; break;
    case UB_CRATE_INT64_LISTOP: et = UB_TY_INT64; break;
    case UB_CRATE_UINT_LISTOP: et = UB_TY_UINT; break;
    case UB_CRATE_UINT64_LISTOP: et = UB_TY_UINT64; break;
    default: et = UB_TY_INVALID; break; /* unregistered values: no type */
    }
    const ub_type *t = ub_type_get(et);
    cur k;
    if (!cur_at(c, payload, &k))
        return -1;
    uint8_t h = rd_u8(&k, "a list op header");
    ub_listop *lo = ub_listop_new(c->a);
    if (!lo)
        return (cr_oom(c), -1);
    static const struct {
        uint8_t bit;
        ub_listop_part part;
    } parts[] = {
        {UB_CRATE_LISTOP_HAS_EXPLICIT, UB_LO_EXPLICIT},
        {UB_CRATE_LISTOP_HAS_ADDED, UB_LO_ADD},
        {UB_CRATE_LISTOP_HAS_PREPENDED, UB_LO_PREPEND},
        {UB_CRATE_LISTOP_HAS_APPENDED, UB_LO_APPEND},
        {UB_CRATE_LISTOP_HAS_DELETED, UB_LO_DELETE},
        {UB_CRATE_LISTOP_HAS_ORDERED, UB_LO_REORDER},
    };
    lo->is_explicit = h & UB_CRATE_LISTOP_IS_EXPLICIT;
    for (size_t i = 0; i < sizeof parts / sizeof *parts && !c->failed; i++) {
        if (!(h & parts[i].bit))
            continue;
        ub_value items;
        if (!t) {
            if (cr_unregistered_items(c, &k, &items, nest) != 0)
                return -1;
        } else if (et == UB_TY_TOKEN || et == UB_TY_STRING ||
                   et == UB_TY_PATH) {
            unsigned how = et == UB_TY_TOKEN    ? UB_CRATE_TOKEN
                           : et == UB_TY_STRING ? UB_CRATE_STRING
                                                : UB_CRATE_PATH_VECTOR;
            if (cr_index_array(c, &k, how, et, &items) != 0)
                return -1;
        } else if (t->scalar == UB_SC_REF) {
            bool pl = et == UB_TY_PAYLOAD;
            uint64_t n = rd_count(&k, pl ? 8 : 32, "a list op");
            ub_reference *r = c->failed ? NULL
                                        : cr_ref_items(c, &k, pl, n, nest);
            if (!r)
                return -1;
            items = ub_value_wrap(t, (uint32_t)n, true, r);
        } else {
            size_t es = ub_type_elem_size(t);
            uint64_t n = rd_count(&k, es, "a list op");
            if (c->failed)
                return -1;
            items = ub_value_new(c->a, t, (uint32_t)n, true);
            if (items.kind != UB_V_DATA)
                return (cr_oom(c), -1);
            cr_touch(c, k.p, n * es);
            memcpy(ub_value_data(&items), k.p, n * es);
            k.p += n * es;
        }
        lo->has[parts[i].part] = true;
        if (ub_listop_assign(c->a, lo, parts[i].part, items, c->loc) != 0)
            return (cr_oom(c), -1);
    }
    if (lo->is_explicit && !lo->has[UB_LO_EXPLICIT]) {
        lo->has[UB_LO_EXPLICIT] = true;
        ub_value none;
        if (!t) {
            if (cr_untyped_list(c, 0, &none) != 0)
                return -1;
        } else {
            none = ub_value_new(c->a, t, 0, true);
        }
        if (ub_listop_put(c->a, lo, UB_LO_EXPLICIT, none) != 0)
            return (cr_oom(c), -1);
    }
    *out = (ub_value){.kind = UB_V_LISTOP, .type_id = ub_type_id_of(t)};
    out->u.listop = lo;
    return c->failed ? -1 : 0;
}

/* A token scalar (specifier, permission, variability as text). */
static int cr_token_value(crate *c, const char *s, ub_value *out)
{
    ub_value v = ub_value_new(c->a, ub_type_get(UB_TY_TOKEN), 1, false);
    if (v.kind != UB_V_DATA)
        return (cr_oom(c), -1);
    *(const char **)ub_value_data(&v) = ub_intern_cstr(c->t, s);
    *out = v;
    return 0;
}

static int cr_enum(crate *c, unsigned ct, uint32_t x, ub_value *out)
{
    static const char *const spec[] = {"def", "over", "class"};
    static const char *const perm[] = {"public", "private"};
    static const char *const var[] = {"varying", "uniform", "uniform"};
    const char *const *names = ct == UB_CRATE_SPECIFIER    ? spec
                               : ct == UB_CRATE_PERMISSION ? perm
                                                           : var;
    uint32_t n = ct == UB_CRATE_PERMISSION ? 2 : 3;
    if (x >= n) {
        cr_err(c, "enum value %u out of range", x);
        return -1;
    }
    return cr_token_value(c, names[x], out);
}

static int cr_value(crate *c, uint64_t rep, ub_value *out, int nest)
{
    *out = (ub_value){0};
    if (c->failed)
        return -1;
    if (nest > CR_MAX_NEST) {
        cr_err(c, "values nested more than %d deep (a value that contains "
               "itself?)", CR_MAX_NEST);
        return -1;
    }
    if (c->budget == 0) {
        cr_err(c, "more values than the file's size can justify (values "
               "shared in a loop?)");
        return -1;
    }
    c->budget--;
    unsigned ct = (unsigned)((rep >> UB_CRATE_REP_TYPE_SHIFT) &
                             UB_CRATE_REP_TYPE_MASK);
    uint64_t payload = rep & UB_CRATE_REP_PAYLOAD_MASK;
    bool inl = rep & UB_CRATE_REP_IS_INLINED;
    if (rep & UB_CRATE_REP_IS_ARRAY) {
        if (!cr_type(ct)) {
            cr_err(c, "value type %u has no array form", ct);
            return -1;
        }
        return cr_array_memo(c, ct, rep, out);
    }
    if (cr_type(ct))
        return cr_scalar(c, ct, rep, out);
    cur k;
    switch (ct) {
    case UB_CRATE_DICTIONARY: {
        ub_dict *d = NULL;
        if (inl)
            d = ub_dict_new(c->a);
        else if (cur_at(c, payload, &k))
            cr_dict_at(c, &k, &d, nest);
        if (c->failed)
            return -1;
        if (!d)
            return (cr_oom(c), -1);
        *out = (ub_value){.kind = UB_V_DICT};
        out->u.dict = d;
        return 0;
    }
    case UB_CRATE_TOKEN_VECTOR:
    case UB_CRATE_STRING_VECTOR:
    case UB_CRATE_PATH_VECTOR:
        if (!cur_at(c, payload, &k))
            return -1;
        return cr_index_array(
            c, &k,
            ct == UB_CRATE_TOKEN_VECTOR    ? UB_CRATE_TOKEN
            : ct == UB_CRATE_STRING_VECTOR ? UB_CRATE_STRING
                                           : UB_CRATE_PATH_VECTOR,
            ct == UB_CRATE_TOKEN_VECTOR    ? UB_TY_TOKEN
            : ct == UB_CRATE_STRING_VECTOR ? UB_TY_STRING
                                           : UB_TY_PATH,
            out);
    case UB_CRATE_DOUBLE_VECTOR:
    case UB_CRATE_LAYER_OFFSET_VECTOR: {
        /* layer offsets come back as double2 (offset, scale) */
        const ub_type *t = ub_type_get(ct == UB_CRATE_DOUBLE_VECTOR
                                           ? UB_TY_DOUBLE
                                           : UB_TY_DOUBLE2);
        size_t es = ub_type_elem_size(t);
        if (!cur_at(c, payload, &k))
            return -1;
        uint64_t n = rd_count(&k, es, "a list");
        if (c->failed)
            return -1;
        ub_value v = ub_value_new(c->a, t, (uint32_t)n, true);
        if (v.kind != UB_V_DATA)
            return (cr_oom(c), -1);
        cr_touch(c, k.p, n * es);
        memcpy(ub_value_data(&v), k.p, n * es);
        *out = v;
        return 0;
    }
    case UB_CRATE_SPECIFIER:
    case UB_CRATE_PERMISSION:
    case UB_CRATE_VARIABILITY:
        return cr_enum(c, ct, (uint32_t)payload, out);
    case UB_CRATE_VARIANT_SELECTION_MAP: {
        if (!cur_at(c, payload, &k))
            return -1;
        uint64_t n = rd_count(&k, 8, "variant selections");
        ub_dict *d = c->failed ? NULL : ub_dict_new(c->a);
        if (!d)
            return c->failed ? -1 : ((cr_oom(c), -1));
        for (uint64_t i = 0; i < n && !c->failed; i++) {
            const char *key = cr_str(c, rd_u32(&k, "a variant set"));
            const char *sel = cr_str(c, rd_u32(&k, "a variant selection"));
            ub_value v = ub_value_new(c->a, ub_type_get(UB_TY_STRING), 1,
                                      false);
            if (v.kind != UB_V_DATA)
                return (cr_oom(c), -1);
            *(const char **)ub_value_data(&v) = sel;
            if (!ub_dict_set(c->a, d, key, v, c->loc))
                return (cr_oom(c), -1);
        }
        *out = (ub_value){.kind = UB_V_DICT};
        out->u.dict = d;
        return c->failed ? -1 : 0;
    }
    case UB_CRATE_PAYLOAD: {
        /* a single payload (before 0.8.0): an explicit list of it, or an
         * explicit empty list for an empty asset path */
        if (!cur_at(c, payload, &k))
            return -1;
        ub_reference *r = cr_ref_items(c, &k, true, 1, nest);
        if (!r)
            return -1;
        const ub_type *t = ub_type_get(UB_TY_PAYLOAD);
        ub_listop *lo = ub_listop_new(c->a);
        if (!lo)
            return (cr_oom(c), -1);
        lo->is_explicit = true;
        lo->has[UB_LO_EXPLICIT] = true;
        ub_value v = ub_value_wrap(t, r->asset[0] ? 1 : 0, true, r);
        if (ub_listop_put(c->a, lo, UB_LO_EXPLICIT, v) != 0)
            return (cr_oom(c), -1);
        *out = (ub_value){.kind = UB_V_LISTOP, .type_id = ub_type_id_of(t)};
        out->u.listop = lo;
        return 0;
    }
    case UB_CRATE_TOKEN_LISTOP: case UB_CRATE_STRING_LISTOP:
    case UB_CRATE_PATH_LISTOP: case UB_CRATE_REFERENCE_LISTOP:
    case UB_CRATE_INT_LISTOP: case UB_CRATE_INT64_LISTOP:
    case UB_CRATE_UINT_LISTOP: case UB_CRATE_UINT64_LISTOP:
    case UB_CRATE_PAYLOAD_LISTOP:
    case UB_CRATE_UNREGISTERED_VALUE_LISTOP:
        return cr_listop(c, ct, payload, out, nest);
    case UB_CRATE_VALUE_BLOCK:
        *out = ub_value_block();
        return 0;
    case UB_CRATE_VALUE:
        if (!cur_at(c, payload, &k))
            return -1;
        return cr_vtvalue(c, &k, out, nest);
    case UB_CRATE_UNREGISTERED_VALUE: {
        if (!cur_at(c, payload, &k) || cr_vtvalue(c, &k, out, nest) != 0)
            return -1;
        /* a string holds the value's text as authored */
        if (out->kind == UB_V_DATA && !out->is_array &&
            out->type_id == UB_TY_STRING) {
            ub_untyped *u = ub_arena_zalloc(c->a, sizeof *u);
            if (!u)
                return (cr_oom(c), -1);
            u->kind = UB_U_ATOM;
            u->text = ub_value_str(out, 0);
            *out = (ub_value){.kind = UB_V_UNTYPED};
            out->u.untyped = u;
        }
        return 0;
    }
    case UB_CRATE_RELOCATES: {
        if (!cur_at(c, payload, &k))
            return -1;
        uint64_t n = rd_count(&k, 8, "relocates");
        if (c->failed)
            return -1;
        ub_value v = ub_value_new(c->a, ub_type_get(UB_TY_PATH),
                                  (uint32_t)(2 * n), true);
        if (v.kind != UB_V_DATA)
            return (cr_oom(c), -1);
        const char **s = ub_value_data(&v);
        for (uint64_t i = 0; i < 2 * n; i++)
            s[i] = cr_path_text(c, rd_u32(&k, "a relocate"));
        *out = v;
        return c->failed ? -1 : 0;
    }
    case UB_CRATE_TIME_SAMPLES:
        cr_err(c, "time samples where a single value belongs");
        return -1;
    default:
        cr_err(c, "unknown value type %u", ct);
        return -1;
    }
}

/* --- the spec tree ----------------------------------------------------- */

/* One field of a spec: its name, which of the reader's keys that is
 * (K_COUNT: none), its value's representation. */
typedef struct cr_field {
    const char *key;
    int id;
    uint64_t rep;
    const ub_metadef_role *role;    /* per spec kind: cr_fname's */
} cr_field;

/* Iterate the fields of a spec: *i starts at its field set. */
static bool cr_next_field(const crate *c, uint32_t *i, cr_field *f)
{
    uint32_t fi = cr_fset(c, *i);
    if (fi == NONE)
        return false;
    (*i)++;
    const struct cr_fname *nm = &c->fname[cr_fld_name(c, fi)];
    *f = (cr_field){nm->key, nm->id, c->fld_rep[fi], nm->role};
    return true;
}

/* Field id (one of the reader's keys) of the spec at path pidx. */
static bool cr_spec_field(const crate *c, uint32_t pidx, int id, cr_field *f)
{
    uint32_t i = c->pfset[pidx];
    while (cr_next_field(c, &i, f))
        if (f->id == id)
            return true;
    return false;
}

/* A token-vector field's value (names of children), or an empty one. */
/* The names a spec lists to build from (primChildren, properties,
 * variantSetChildren, variantChildren), decoded into the reader's own
 * arena: the layer keeps none of them (6 MB of the prim bench layer's
 * crate model were such lists).  *m is to give them back with
 * cr_names_done once built, innermost first (what a failed read leaves
 * goes with the reader). */
static ub_value cr_names(crate *c, uint32_t pidx, int id, ub_arena_mark *m)
{
    *m = ub_arena_get_mark(c->names);
    ub_arena *layer = c->a;
    c->a = c->names; /* (and never memoized: cr_array_memo) */
    cr_field f;
    ub_value v = {0};
    if (cr_spec_field(c, pidx, id, &f) && cr_value(c, f.rep, &v, 0) == 0 &&
        (v.kind != UB_V_DATA || !ub_value_type(&v) ||
         (v.type_id != UB_TY_TOKEN && v.type_id != UB_TY_STRING))) {
        cr_err(c, "'%s' is not a list of names", c->key[id]);
        v = (ub_value){0};
    }
    c->a = layer;
    return v.kind == UB_V_DATA ? v : (ub_value){0};
}

static void cr_names_done(crate *c, ub_arena_mark m)
{
    ub_arena_release(c->names, m);
}

static const char *K(crate *c, const char *s)
{
    return ub_intern_cstr(c->t, s);
}

/* ub_value_retype, out of memory said. */
static void cr_retype(crate *c, ub_value *v, const ub_type *want)
{
    if (ub_value_retype(c->a, v, want) != 0)
        cr_oom(c);
}

/* pathExpression values as SdfPathExpression writes them back (the file
 * holds their text, OpenUSD's reader parses it): text that is no
 * expression is damage, which the usda reader and OpenUSD's refuse.  The
 * value is copied, not changed: an array may be shared (cr_array_memo). */
static void cr_path_exprs(crate *c, ub_value *v)
{
    const char *bad = NULL;
    switch (ub_pathexpr_canon_value(c->a, c->t, v, &bad)) {
    case UB_PATHEXPR_OK:
        return;
    case UB_PATHEXPR_SYNTAX:
        cr_err(c, "invalid pathExpression \"%.200s\"", bad);
        return;
    default:
        cr_oom(c);
    }
}

/* ub_prop_value_fault, as an error. */
static bool cr_attr_value_ok(crate *c, const ub_prop *p, const ub_value *v,
                             double t)
{
    char why[160];
    const char *fault = ub_prop_value_fault(p, v, t, why, sizeof why);
    if (fault)
        cr_err(c, "%s", fault);
    return !fault;
}

static int cr_samples(crate *c, uint64_t rep, const ub_prop *p,
                      ub_samples *s)
{
    const ub_type *want = ub_prop_type(p);
    unsigned ct = (unsigned)((rep >> UB_CRATE_REP_TYPE_SHIFT) &
                             UB_CRATE_REP_TYPE_MASK);
    if (ct != UB_CRATE_TIME_SAMPLES || (rep & UB_CRATE_REP_IS_ARRAY)) {
        cr_err(c, "timeSamples holds a value of type %u", ct);
        return -1;
    }
    cur k;
    if (!cur_at(c, rep & UB_CRATE_REP_PAYLOAD_MASK, &k) || !cur_jump(&k))
        return -1;
    uint64_t trep = rd_u64(&k, "sample times");
    ub_value times;
    if (c->failed || cr_value(c, trep, &times, 1) != 0)
        return -1;
    if (times.kind != UB_V_DATA || times.type_id != UB_TY_DOUBLE) {
        cr_err(c, "sample times are not a list of doubles");
        return -1;
    }
    if (!cur_jump(&k))
        return -1;
    uint64_t n = rd_count(&k, 8, "sample values");
    if (c->failed)
        return -1;
    if (n != times.count) {
        cr_err(c, "%u sample times but %llu values", times.count,
               (unsigned long long)n);
        return -1;
    }
    s->authored = true;
    s->loc = c->loc;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t vr = rd_u64(&k, "a sample value");
        ub_value v;
        if (c->failed || cr_value(c, vr, &v, 1) != 0)
            return -1;
        cr_retype(c, &v, want);
        cr_path_exprs(c, &v);
        double t;
        memcpy(&t, (const char *)ub_value_data(&times) + 8 * i, 8);
        if (!cr_attr_value_ok(c, p, &v, t))
            return -1;
        if (ub_samples_set(c->a, s, t, v) != 0)
            return (cr_oom(c), -1);
    }
    return 0;
}

/* Which of the reader's keys a field name is (K_COUNT: none). */
static int cr_key_id(const crate *c, const char *key)
{
    for (int i = 0; i < K_COUNT; i++)
        if (c->key[i] == key)
            return i;
    return K_COUNT;
}

/* Fields that only order or list children: read by the tree walk. */
static bool cr_structural(int id)
{
    return id <= K_CONNECTIONCHILDREN;
}

/* Whether v, metadata under text_key on a spec of this kind, prints as
 * text the usda reader reads back as v (runtime/ub_metadef.h), and an
 * error when not.  A typed field's value stored in another width or as
 * the other kind of string is converted first, as the usda reader reads
 * its text by the field's type. */
static bool cr_meta_ok(crate *c, const char *text_key,
                       const ub_metadef_role *role, ub_spec_kind spec,
                       ub_value *v)
{
    const ub_metadef *d = role->def;
    if (d && d->kind == UB_MD_TYPED && v->kind == UB_V_DATA) {
        const ub_type *want = ub_type_get(d->type);
        cr_retype(c, v, want);
        bool str = v->type_id == UB_TY_STRING || v->type_id == UB_TY_TOKEN;
        if (str && (d->type == UB_TY_STRING || d->type == UB_TY_TOKEN))
            ub_value_set_type(v, want);
    }
    char why[160];
    const char *fault =
        ub_metadef_check(role, text_key, spec, v, why, sizeof why);
    if (fault) {
        cr_err(c, "%s", fault);
        return false;
    }
    if (strcmp(text_key, "variantSets") == 0) {
        /* the names a writer makes variant sets of (the explicit list,
         * else the added one: ub_usdc_write's variantSetChildren) are
         * path elements when written again, which "" cannot be; the
         * other parts are names only, as the usda reader takes them
         * (ub_metadef_check held every part to the text's names) */
        for (int op = 0; op < UB_LO_NPARTS; op++) {
            if (op != UB_LO_EXPLICIT && op != UB_LO_ADD)
                continue;
            const ub_value *l = v->u.listop->has[op]
                                    ? ub_listop_get(v->u.listop,
                                                    (ub_listop_part)op)
                                    : NULL;
            for (uint32_t k = 0; l && l->kind == UB_V_DATA && k < l->count;
                 k++) {
                const char *name = ub_value_str(l, k);
                if (!*name) {
                    cr_err(c, "\"%s\" is not a valid variant set name",
                           name);
                    return false;
                }
            }
        }
    }
    return true;
}

/* A field kept as metadata of a spec of this kind, in the spec's scratch
 * list. */
static void cr_set_meta(crate *c, const cr_field *f, ub_spec_kind spec)
{
    ub_value v;
    if (cr_value(c, f->rep, &v, 0) != 0)
        return;
    const char *key = cr_text_key(c, f->key, f->id);
    if (!cr_meta_ok(c, key, &f->role[spec], spec, &v))
        return;
    if (!ub_fields_set(c->ms_arena, &c->ms, key, v, c->loc))
        cr_oom(c);
}

/* The spec's metadata, from the scratch list into the layer at its exact
 * size (*to is a new spec's: empty).  Grown by doubling in the layer's
 * arena, each small list left its outgrown copies behind there: 45 MB
 * of a 100 MB prim-heavy layer's model. */
static void cr_meta_keep(crate *c, ub_fields *to)
{
    ub_fields *m = &c->ms;
    if (m->n && !c->failed) {
        if (to->n || ub_fields_reserve(c->a, to, m->n) != 0) {
            cr_oom(c); /* (never holds any: a spec is built once) */
        } else {
            memcpy(to->v, m->v, m->n * sizeof *m->v);
            to->n = m->n;
        }
    }
    ub_arena_release(c->ms_arena, c->ms_mark);
    *m = (ub_fields){0};
}

static bool cr_bool(crate *c, uint64_t rep)
{
    ub_value v;
    if (cr_value(c, rep, &v, 0) != 0)
        return false;
    if (v.kind != UB_V_DATA || v.type_id != UB_TY_BOOL) {
        cr_err(c, "expected a bool");
        return false;
    }
    return *(uint8_t *)ub_value_data(&v) != 0;
}

/* An enum field (specifier, variability) as its number, checked to be
 * below n. */
static uint32_t cr_enum_field(crate *c, uint64_t rep, unsigned type,
                              uint32_t n)
{
    unsigned ct = (unsigned)((rep >> UB_CRATE_REP_TYPE_SHIFT) &
                             UB_CRATE_REP_TYPE_MASK);
    uint32_t x = (uint32_t)(rep & UB_CRATE_REP_PAYLOAD_MASK);
    if (ct != type || (rep & UB_CRATE_REP_IS_ARRAY) || x >= n) {
        cr_err(c, "expected a %s", type == UB_CRATE_SPECIFIER ? "specifier"
                                                              : "variability");
        return 0;
    }
    return x;
}

/* A token field's value (typeName). */
static const char *cr_token_text(crate *c, uint64_t rep)
{
    ub_value v;
    if (cr_value(c, rep, &v, 0) != 0)
        return "";
    if (v.kind != UB_V_DATA || v.type_id != UB_TY_TOKEN || v.is_array) {
        cr_err(c, "expected a token");
        return "";
    }
    return ub_value_str(&v, 0);
}

/* Diagnostics about a crate layer have no line: they name the spec, as
 * "file:</World/a.size>", a location made of the path tree the string
 * table was given (ub_specloc.h), its text made only if read.  Without a
 * tree (no memory for it), the file alone. */
static void cr_set_loc(crate *c, uint32_t pidx)
{
    c->loc = c->tree ? ub_sloc_spec(c->tree, pidx)
                     : ub_strtab_sloc(c->t, (ub_loc){c->name, 0, 0});
}

/* targetPaths and connectionPaths: a list op of the paths the text can
 * say there (ub_prop_paths_fault), whatever a damaged file stored. */
static void cr_path_listop(crate *c, uint64_t rep, ub_value *out)
{
    ub_value v;
    if (cr_value(c, rep, &v, 0) != 0)
        return;
    char why[160];
    const char *fault = ub_prop_paths_fault(&v, why, sizeof why);
    if (fault)
        cr_err(c, "%s", fault);
    else
        *out = v;
}

static void cr_build_prop(crate *c, ub_prop *p, uint32_t pidx)
{
    cr_set_loc(c, pidx);
    p->loc = c->loc;
    cr_field tf;
    if (p->kind == UB_ATTR && cr_spec_field(c, pidx, K_TYPENAME, &tf)) {
        cr_where_spec(c, pidx, "typeName");
        const char *tn = cr_token_text(c, tf.rep);
        size_t n = strlen(tn);
        p->is_array = n > 2 && strcmp(tn + n - 2, "[]") == 0;
        if (p->is_array)
            n -= 2;
        bool renamed;
        const ub_type *ty = ub_type_of_attr_name(tn, n, &renamed);
        /* an unknown type is kept by its name, which the text must be
         * able to say */
        if (!ty && !ub_ident_attr_type_ok(tn, n)) {
            cr_err(c, "the type name '%s' is not an identifier, or is a "
                          "reserved word", tn);
            return;
        }
        if (ty && p->is_array && !ub_type_has_array(ty)) {
            cr_err(c, "type '%s' has no array form", ty->name);
            return;
        }
        const char *name = renamed ? K(c, ty->name) : ub_intern(c->t, tn, n);
        if (!name || ub_prop_set_decl(c->a, c->t, p, ty, name) != 0)
            cr_oom(c);
    } else if (p->kind == UB_ATTR) {
        /* (the text says an attribute's type first: it has one) */
        cr_where_spec(c, pidx, NULL);
        cr_err(c, "the attribute has no type name");
        return;
    }
    /* variability is a required field whose fallback is varying: a
     * relationship spec without one (the text reader always writes it,
     * other writers need not) is a `varying rel` */
    if (p->kind == UB_REL)
        p->varying_keyword = true;
    p->unwritten = UB_UNWRITTEN_CUSTOM | UB_UNWRITTEN_VARIABILITY;
    uint32_t i = c->pfset[pidx];
    for (cr_field fv, *f = &fv; !c->failed && cr_next_field(c, &i, f);) {
        cr_where_spec(c, pidx, f->key);
        int id = f->id;
        bool attr = p->kind == UB_ATTR;
        if (cr_structural(id))
            continue;
        if (id == K_VARIABILITY) {
            p->unwritten &= ~UB_UNWRITTEN_VARIABILITY;
            uint32_t v = cr_enum_field(c, f->rep, UB_CRATE_VARIABILITY, 3);
            if (p->kind == UB_REL)
                p->varying_keyword = v == 0;
            else
                p->variability = v == 0 ? UB_VARYING : UB_UNIFORM;
        } else if (id == K_CUSTOM) {
            p->unwritten &= ~UB_UNWRITTEN_CUSTOM;
            p->custom = cr_bool(c, f->rep);
        } else if (id == K_DEFAULT && attr) {
            if (cr_value(c, f->rep, &p->default_value, 0) == 0) {
                cr_retype(c, &p->default_value, ub_prop_type(p));
                cr_path_exprs(c, &p->default_value);
                cr_attr_value_ok(c, p, &p->default_value, NAN);
            }
        } else if (id == K_TIMESAMPLES && attr) {
            ub_prop_ext *x = ub_prop_ext_get(c->a, p);
            if (!x) {
                cr_oom(c);
                return;
            }
            cr_samples(c, f->rep, p, &x->samples);
        } else if (id == K_CONNECTIONPATHS && attr) {
            ub_prop_ext *x = ub_prop_ext_get(c->a, p);
            if (!x) {
                cr_oom(c);
                return;
            }
            cr_path_listop(c, f->rep, &x->connections);
        } else if (id == K_TARGETPATHS && !attr) {
            ub_prop_ext *x = ub_prop_rel_ext_get(c->a, p);
            if (!x) {
                cr_oom(c);
                return;
            }
            cr_path_listop(c, f->rep, &x->targets);
        } else {
            cr_set_meta(c, f, attr ? UB_SPEC_ATTR : UB_SPEC_REL);
        }
    }
    if (c->ms.n) {
        ub_fields *meta = ub_prop_meta_get(c->a, p);
        if (!meta)
            cr_oom(c);
        else
            cr_meta_keep(c, meta);
    }
}

static void cr_build_prim(crate *c, ub_prim *prim, uint32_t pidx,
                          unsigned depth);
static void cr_build_children(crate *c, ub_prim *prim, uint32_t pidx,
                              unsigned depth, const ub_value *names,
                              uint32_t from, uint32_t to);

static void cr_build_props(crate *c, ub_prim *prim, uint32_t pidx)
{
    ub_arena_mark m;
    ub_value names = cr_names(c, pidx, K_PROPERTIES, &m);
    cr_kids kids = cr_children(c, pidx);
    if (ub_prim_reserve_props(c->L, prim, names.count) != 0)
        cr_oom(c);
    for (uint32_t i = 0; i < names.count && !c->failed; i++) {
        const char *name = ub_value_str(&names, i);
        uint32_t ci = cr_find_child(c, kids, name, true);
        uint32_t st = ci == NONE ? 0 : PK_STYPE(c->pkind[ci]);
        if (st != UB_CRATE_SPEC_ATTRIBUTE &&
            st != UB_CRATE_SPEC_RELATIONSHIP)
            continue;
        bool created;
        ub_prop *p = ub_prop_find_or_new(
            c->L, prim, name,
            st == UB_CRATE_SPEC_ATTRIBUTE ? UB_ATTR : UB_REL,
            prim->loc, &created);
        if (!p) {
            cr_oom(c);
            return;
        }
        if (created)
            cr_build_prop(c, p, ci);
    }
    cr_names_done(c, m);
}

static void cr_build_variants(crate *c, ub_prim *prim, uint32_t pidx,
                              unsigned depth)
{
    ub_arena_mark sm;
    ub_value sets = cr_names(c, pidx, K_VARIANTSETCHILDREN, &sm);
    cr_kids kids = cr_children(c, pidx);
    for (uint32_t i = 0; i < sets.count && !c->failed; i++) {
        const char *set = ub_value_str(&sets, i);
        char *e = malloc(strlen(set) + 4);
        if (!e) {
            cr_oom(c);
            return;
        }
        sprintf(e, "{%s=}", set);
        uint32_t si = cr_find_child(c, kids, K(c, e), false);
        free(e);
        if (si == NONE ||
            PK_STYPE(c->pkind[si]) != UB_CRATE_SPEC_VARIANT_SET)
            continue;
        ub_variant_set *vs = ub_variant_set_get(c->L, prim, set,
                                                prim->loc);
        if (!vs) {
            cr_oom(c);
            return;
        }
        ub_arena_mark vm;
        ub_value vars = cr_names(c, si, K_VARIANTCHILDREN, &vm);
        for (uint32_t j = 0; j < vars.count && !c->failed; j++) {
            const char *var = ub_value_str(&vars, j);
            char *ve = malloc(strlen(set) + strlen(var) + 4);
            if (!ve) {
                cr_oom(c);
                return;
            }
            sprintf(ve, "{%s=%s}", set, var);
            uint32_t vi = cr_find_child(c, kids, K(c, ve), false);
            free(ve);
            if (vi == NONE ||
                PK_STYPE(c->pkind[vi]) != UB_CRATE_SPEC_VARIANT)
                continue;
            bool dup = false;
            for (uint32_t k = 0; k < vs->variants.n; k++)
                dup |= vs->variants.v[k]->name == var;
            if (dup)
                continue;
            ub_prim *v = ub_variant_new(c->L, prim, vs, var, prim->loc);
            if (!v) {
                cr_oom(c);
                return;
            }
            c->in_variant++;
            cr_build_prim(c, v, vi, depth + 1);
            c->in_variant--;
        }
        cr_names_done(c, vm);
    }
    cr_names_done(c, sm);
}

static void cr_build_prim(crate *c, ub_prim *prim, uint32_t pidx,
                          unsigned depth)
{
    if (depth > CR_MAX_DEPTH) {
        cr_err(c, "prims nested deeper than %d levels", CR_MAX_DEPTH);
        return;
    }
    bool root = prim == c->L->root;
    if (root)
        c->loc = ub_strtab_sloc(c->t, (ub_loc){c->name, 0, 0});
    else
        cr_set_loc(c, pidx);
    prim->loc = c->loc;
    uint32_t i = c->pfset[pidx];
    uint64_t sub_rep = 0, off_rep = 0;
    bool has_sub = false, has_off = false;
    prim->unwritten = root ? 0 : UB_UNWRITTEN_SPECIFIER;
    for (cr_field fv, *f = &fv; !c->failed && cr_next_field(c, &i, f);) {
        cr_where_spec(c, pidx, f->key);
        int id = f->id;
        if (id == K_SPECIFIER)
            prim->unwritten &= ~UB_UNWRITTEN_SPECIFIER;
        if (id == K_SPECIFIER && !root && !ub_prim_variant_set(prim)) {
            /* SdfSpecifier: def, over, class, as ub_specifier */
            prim->specifier = (ub_specifier)cr_enum_field(
                c, f->rep, UB_CRATE_SPECIFIER, 3);
        } else if (id == K_TYPENAME && !root) {
            const char *s = cr_token_text(c, f->rep);
            prim->type_name = s[0] ? s : NULL;
            if (s[0] && !ub_ident_type_name_ok(s, ub_str_len(s)))
                cr_err(c, "the type name '%s' is not an identifier, or is a "
                          "reserved word", s);
        } else if (cr_structural(id)) {
            continue;
        } else if (id == K_PRIMORDER || id == K_PROPERTYORDER) {
            ub_value v;
            if (cr_value(c, f->rep, &v, 0) == 0) {
                ub_prim_ext *x = NULL;
                if (v.kind == UB_V_DATA && v.type_id == UB_TY_TOKEN &&
                    !(x = ub_prim_ext_get(c->a, prim)))
                    cr_oom(c);
                else if (x)
                    *(id == K_PRIMORDER ? &x->prim_order
                                        : &x->property_order) = v;
                else
                    cr_err(c, "expected a list of names");
            }
        } else if (root && id == K_SUBLAYERS) {
            sub_rep = f->rep;
            has_sub = true;
        } else if (root && id == K_SUBLAYEROFFSETS) {
            off_rep = f->rep;
            has_off = true;
        } else {
            cr_set_meta(c, f, root ? UB_SPEC_LAYER : UB_SPEC_PRIM);
        }
    }
    cr_meta_keep(c, root ? &c->L->meta : &prim->meta);
    if (has_sub && !c->failed) {
        cr_where_spec(c, pidx, "subLayers");
        ub_value subs, offs = {0};
        if (cr_value(c, sub_rep, &subs, 0) != 0)
            return;
        if (subs.kind != UB_V_DATA ||
            ub_value_type(&subs)->scalar != UB_SC_STRING) {
            cr_err(c, "expected a list of asset paths");
            return;
        }
        if (has_off) {
            cr_where_spec(c, pidx, "subLayerOffsets");
            if (cr_value(c, off_rep, &offs, 0) != 0)
                return;
            if (offs.kind != UB_V_DATA || offs.type_id != UB_TY_DOUBLE2) {
                cr_err(c, "expected a list of layer offsets");
                return;
            }
        }
        c->L->has_sublayers = true;
        for (uint32_t j = 0; j < subs.count && !c->failed; j++) {
            ub_sublayer *s = ub_layer_add_sublayer(
                c->L, cr_asset(c, ub_value_str(&subs, j)), c->loc);
            if (!s) {
                cr_oom(c);
                return;
            }
            s->offset = UB_OFFSET_IDENTITY;
            if (j < offs.count) {
                memcpy(&s->offset,
                       (const char *)ub_value_data(&offs) + 16 * j, 16);
                const char *bad = ub_offset_problem(s->offset);
                if (bad)
                    cr_err(c, "%s", bad);
                else
                    cr_warn_offset(c, s->offset, "sublayer", s->asset);
                s->has_offset = s->offset.offset != 0.0;
                s->has_scale = s->offset.scale != 1.0;
            }
        }
    }
    if (c->failed)
        return;
    cr_build_props(c, prim, pidx);
    cr_build_variants(c, prim, pidx, depth);
    ub_arena_mark nm;
    ub_value names = cr_names(c, pidx, K_PRIMCHILDREN, &nm);
    if (ub_prim_reserve_children(c->L, prim, names.count) != 0)
        cr_oom(c);
    uint32_t to = names.count;
    if (pidx == c->split_at) { /* the tail is the other thread's */
        c->split_prim = prim;
        to = c->split_j < to ? c->split_j : to;
    }
    cr_build_children(c, prim, pidx, depth, &names, 0, to);
    cr_names_done(c, nm);
}

/* The prims that entries [from, to) of names, path pidx's list of prim
 * children, name (each a prim spec under pidx, each once), built as
 * children of prim. */
static void cr_build_children(crate *c, ub_prim *prim, uint32_t pidx,
                              unsigned depth, const ub_value *list,
                              uint32_t from, uint32_t to)
{
    cr_kids kids = cr_children(c, pidx);
    for (uint32_t j = from; j < to && !c->failed; j++) {
        const char *name = ub_value_str(list, j);
        uint32_t ci = cr_prim_child(c, kids, name);
        if (ci == NONE)
            continue;
        if (ub_prim_find_child(c->L, prim, name))
            continue; /* listed twice: one prim, built once */
        ub_prim *child = ub_prim_new(c->L, prim, name, UB_OVER, prim->loc);
        if (!child) {
            cr_oom(c);
            return;
        }
        if (!c->stream || c->in_variant) {
            cr_build_prim(c, child, ci, depth + 1);
            continue;
        }
        /* the child itself stays, a stub answering duplicate checks; all
         * it holds is handed back once the stream has it */
        ub_arena_mark m = ub_arena_get_mark(c->a);
        cr_build_prim(c, child, ci, depth + 1);
        if (c->failed)
            return;
        c->stream->prim_done(c->stream->ctx, c->L, child, depth + 1);
        ub_prim_drop_body(c->L, child);
        ub_arena_release(c->a, m);
        c->loc = prim->loc;
        cr_where_spec(c, pidx, NULL);
    }
}

/* --- a build in two threads --------------------------------------------- */

/* Below this many paths one thread builds the layer: a thread, a second
 * reader's scratch and the graft cost more than half a small walk. */
#define CR_SPLIT_MIN 16384
#define CR_SPLIT_LEVELS 64 /* lists of prim children looked at, at most */

/* Where a build splits: path `at` (at depth `depth`, the pseudo-root's
 * 0), whose list of prim children from entry j on is the other thread's;
 * those prims hold `tail` of the `total` paths below the pseudo-root. */
typedef struct cr_plan {
    uint32_t at, j;
    unsigned depth;
    uint64_t tail, total;
} cr_plan;

/* The number of paths below each path under root, or NULL without the
 * memory: the paths in breadth-first order through the child index, then
 * each added to its parent from the last (linear however deep the
 * namespace: a chain of paths up to the root from each would not be). */
static uint32_t *cr_subtree_sizes(const crate *c, uint32_t root)
{
    size_t n = c->npath ? c->npath : 1;
    uint32_t *sz = calloc(n, sizeof *sz);
    uint32_t *order = malloc(n * sizeof *order);
    if (!sz || !order) {
        free(sz);
        free(order);
        return NULL;
    }
    size_t next = 0, end = 0;
    order[end++] = root;
    while (next < end) {
        cr_kids k = cr_children(c, order[next++]);
        /* (each path is in its one parent's stretch: n at most) */
        for (uint32_t s = 0; s < k.w && end < n; s++)
            if (k.v[s])
                order[end++] = k.v[s] - 1;
    }
    while (end-- > 1)
        sz[c->ppar[order[end]]] += sz[order[end]] + 1;
    free(order);
    return sz;
}

static uint64_t cr_off_half(uint64_t tail, uint64_t total)
{
    return 2 * tail > total ? 2 * tail - total : total - 2 * tail;
}

/* Plan the split, from the pseudo-root down: in each list of prim
 * children, the tail whose paths come nearest half of all; then into the
 * child holding more than half, when one does.  The last list with a
 * tail is the split.  A list that names a prim twice has none (the half
 * that met the name first would decide where the prim is built).
 * false: no list has one, or out of memory.  Decodes only lists of
 * names, as the build will (errors are the build's too). */
static bool cr_plan_split(crate *c, uint32_t root, cr_plan *plan)
{
    uint32_t *sz = cr_subtree_sizes(c, root);
    uint64_t *seen = calloc(c->npath / 64 + 1, sizeof *seen);
    uint32_t *ent = NULL;
    size_t cap = 0;
    bool found = false;
    uint32_t at = root;
    uint64_t total = sz ? sz[root] : 0;
    for (unsigned depth = 0;
         sz && seen && depth < CR_SPLIT_LEVELS && !c->failed; depth++) {
        ub_arena_mark m;
        ub_value names = cr_names(c, at, K_PRIMCHILDREN, &m);
        cr_kids kids = cr_children(c, at);
        uint32_t n = names.count;
        if (n > cap) {
            uint32_t *e = realloc(ent, (size_t)n * sizeof *ent);
            if (!e) {
                cr_names_done(c, m);
                found = false;
                break;
            }
            ent = e;
            cap = n;
        }
        /* each entry's prim (NONE: skipped), the biggest, twice named? */
        bool twice = false;
        uint32_t big = NONE;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t e = ent[j] =
                cr_prim_child(c, kids, ub_value_str(&names, j));
            if (e == NONE)
                continue;
            twice |= (seen[e / 64] >> (e % 64)) & 1;
            seen[e / 64] |= 1ull << (e % 64);
            if (big == NONE || sz[e] > sz[big])
                big = e;
        }
        cr_names_done(c, m);
        uint64_t tail = 0, best = 0;
        uint32_t best_j = NONE;
        for (uint32_t j = n; j-- > 0;) {
            if (ent[j] == NONE)
                continue;
            seen[ent[j] / 64] = 0;
            tail += (uint64_t)sz[ent[j]] + 1;
            if (best_j == NONE ||
                cr_off_half(tail, total) < cr_off_half(best, total)) {
                best_j = j;
                best = tail;
            }
        }
        if (best_j != NONE && !twice) {
            *plan = (cr_plan){at, best_j, depth, best, total};
            found = true;
        }
        if (big == NONE || 2 * ((uint64_t)sz[big] + 1) <= total)
            break;
        at = big;
    }
    free(sz);
    free(seen);
    free(ent);
    return found && !c->failed;
}

/* The other thread: a reader of its own over the same tables, building
 * into a layer of its own. */
typedef struct cr_tail {
    crate w;
    cr_plan plan;
    bool at_root;
    pthread_t th;
} cr_tail;

/* What each reader has of its own (the tables are shared), made; false
 * without the memory (cr_free_own gives back what was made). */
static bool cr_alloc_own(crate *c)
{
    c->ptext = calloc(CR_PTEXT_CACHE, sizeof *c->ptext);
    c->ms_arena = ub_arena_new();
    c->names = ub_arena_new();
    /* (with a first chunk, which giving the scratch back then keeps) */
    if (!c->ptext || !c->ms_arena || !c->names ||
        !ub_arena_alloc(c->ms_arena, 1))
        return false;
    c->ms_mark = ub_arena_get_mark(c->ms_arena);
    return true;
}

static void cr_free_own(crate *c)
{
    free(c->ptext);
    free(c->buf);
    free(c->memo);
    ub_arena_free(c->ms_arena);
    ub_arena_free(c->names);
    c->ptext = NULL;
    c->buf = NULL;
    c->memo = NULL;
    c->ms_arena = c->names = NULL;
}

/* w: a reader for another thread, building into L with diagnostics d:
 * c's tables (read only from here on), scratch and memo of its own, no
 * pages given back (the first thread does that). */
static bool cr_fork(const crate *c, crate *w, ub_layer *L, ub_diags *d)
{
    *w = *c;
    w->diags = d;
    w->L = L;
    w->a = L->arena;
    w->buf = NULL;
    w->buf_cap = 0;
    w->memo = NULL;
    w->memo_n = w->memo_cap = 0;
    w->ms = (ub_fields){0};
    w->blk = w->blk_old = w->blk_mem = w->blk_gone = NULL;
    w->stream = NULL;
    w->in_variant = 0;
    w->split_at = NONE;
    w->split_prim = NULL;
    if (cr_alloc_own(w))
        return true;
    cr_free_own(w);
    return false;
}

static void *cr_build_tail(void *arg)
{
    cr_tail *t = arg;
    crate *w = &t->w;
    ub_prim *into = w->L->root; /* grafted onto the prim of plan.at */
    if (t->at_root)
        w->loc = ub_strtab_sloc(w->t, (ub_loc){w->name, 0, 0});
    else
        cr_set_loc(w, t->plan.at);
    into->loc = w->loc;
    ub_arena_mark m;
    ub_value names = cr_names(w, t->plan.at, K_PRIMCHILDREN, &m);
    uint32_t from = t->plan.j < names.count ? t->plan.j : names.count;
    if (ub_prim_reserve_children(w->L, into, names.count - from) != 0)
        cr_oom(w);
    cr_build_children(w, into, t->plan.at, t->plan.depth, &names, from,
                      names.count);
    cr_names_done(w, m);
    return NULL;
}

/* Back to before the build, for one thread to build again: a new layer
 * (given the tree of spec paths), memo and scratch empty.  false: out of
 * memory (said). */
static bool cr_restart(crate *c, uint64_t budget, ub_arena_mark names)
{
    c->L->spec_tree = 0; /* (the new layer's) */
    ub_layer_free(c->L);
    free(c->memo);
    c->memo = NULL;
    c->memo_n = c->memo_cap = 0;
    ub_arena_release(c->ms_arena, c->ms_mark);
    c->ms = (ub_fields){0};
    ub_arena_release(c->names, names);
    c->budget = budget;
    c->failed = false;
    c->in_variant = 0;
    c->split_at = NONE;
    c->split_prim = NULL;
    if (!(c->L = ub_layer_new(c->t, c->name)))
        return cr_oom(c) != NULL;
    c->L->spec_tree = c->tree;
    c->a = c->L->arena;
    return true;
}

/* Build the layer from the pseudo-root (path root) in two threads (see
 * ub_crate_stream.split).  Each thread's errors go to a list of its own,
 * and any error, in either, has the layer built again by one thread: the
 * error reported is the one a single thread meets first.  false: not
 * built so (no split, an error, no memory); c is then as before it. */
static bool cr_build_split(crate *c, uint32_t root)
{
    if (c->split_mode < 0 || c->stream ||
        (c->split_mode == 0 && (c->npath < CR_SPLIT_MIN || ub_cpus() < 2)))
        return false;
    ub_diags *diags = c->diags;
    uint64_t budget = c->budget;
    ub_arena_mark names = ub_arena_get_mark(c->names);
    cr_tail *t = calloc(1, sizeof *t);
    ub_diags *mine = ub_diags_new(), *theirs = ub_diags_new();
    ub_layer *tail = ub_layer_new(c->t, c->name);
    bool go = t && mine && theirs && tail;
    if (go) {
        c->diags = mine;
        go = cr_plan_split(c, root, &t->plan) &&
             (c->split_mode > 0 || (8 * t->plan.tail >= t->plan.total &&
                                    8 * t->plan.tail <= 7 * t->plan.total));
        c->budget = budget; /* (the lists are decoded again) */
    }
    if (go && (go = cr_fork(c, &t->w, tail, theirs))) {
        t->at_root = t->plan.at == root;
        c->split_at = t->plan.at;
        c->split_j = t->plan.j;
        ub_strtab_set_concurrent(c->t, true);
        if (!(go = pthread_create(&t->th, NULL, cr_build_tail, t) == 0)) {
            ub_strtab_set_concurrent(c->t, false);
            cr_free_own(&t->w);
        }
    }
    bool built = false;
    if (go) {
        cr_build_prim(c, c->L->root, root, 0);
        pthread_join(t->th, NULL);
        ub_strtab_set_concurrent(c->t, false);
        const crate *w = &t->w;
        /* (each decoded every value it built: together, as many as one
         * thread would have) */
        uint64_t used = (budget - c->budget) + (budget - w->budget);
        if (!c->failed && !w->failed && c->split_prim && used <= budget) {
            ub_prim *from = tail->root;
            built = ub_layer_graft(c->L, tail, &from, &c->split_prim, 1,
                                   NULL) == 0;
            /* (no errors, but there may be warnings: the head's, then
             * the tail's, as one thread says them) */
            if (built) {
                ub_diags_take(diags, mine);
                ub_diags_take(diags, theirs);
            }
            tail = NULL; /* (consumed) */
            c->budget = budget - used;
        }
        cr_free_own(&t->w);
    }
    ub_layer_free(tail);
    ub_diags_free(mine);
    ub_diags_free(theirs);
    free(t);
    c->diags = diags;
    c->split_at = NONE;
    if (c->split_done)
        *c->split_done = built;
    if (built)
        return true;
    if (go) /* something was built: not kept */
        cr_restart(c, budget, names);
    else {
        c->failed = false; /* (the plan's error: the build meets it) */
        ub_arena_release(c->names, names);
    }
    return false;
}

/* --- entry ------------------------------------------------------------- */

bool ub_crate_sniff(const void *data, size_t len)
{
    return len >= UB_CRATE_IDENT_LEN &&
           memcmp(data, UB_CRATE_IDENT, UB_CRATE_IDENT_LEN) == 0;
}

/* --- lists decoded ahead ------------------------------------------------- */

/* Past this many bytes of sections other than TOKENS (FIELDS, FIELDSETS,
 * PATHS and SPECS are most of them) a second thread decodes those four's
 * lists while the first reads TOKENS. */
#define CR_AHEAD_MIN (256u << 10)
#define CR_AHEAD_LISTS 9 /* FIELDS 2, FIELDSETS 1, PATHS 3, SPECS 3 */

/* The lists, each by where its bytes start (the size before them read by
 * both threads alike), its count and width (0: FIELDS' LZ4 values,
 * count bytes, malloc's; else ub_scratch_alloc's). */
typedef struct cr_ahead {
    crate q;            /* the thread's reader: its errors in `quiet` */
    ub_diags *quiet;
    pthread_t th;
    bool running;
    size_t n;
    struct cr_early {
        const unsigned char *at;
        uint64_t count;
        unsigned width;
        void *v;
    } e[CR_AHEAD_LISTS];
} cr_ahead;

/* Give back a list decoded ahead (its memory is as its width says). */
static void cr_early_free(const struct cr_early *e)
{
    if (e->v && e->width)
        ub_scratch_free(e->v, e->count * e->width);
    else
        free(e->v);
}

static void cr_early_put(cr_ahead *a, const unsigned char *at,
                         uint64_t count, unsigned width, void *v)
{
    struct cr_early e = {at, count, width, v};
    if (v && a->n < CR_AHEAD_LISTS)
        a->e[a->n++] = e;
    else
        cr_early_free(&e);
}

/* count 32-bit ints at k, as rd_ints reads them. */
static void cr_early_ints(cr_ahead *a, cur *k, uint64_t count)
{
    const unsigned char *at = k->p + 8; /* (after their size) */
    cr_early_put(a, at, count, 4, rd_ints(k, count, 4, ""));
}

/* Section `name`'s cursor, for the thread (an error in one section does
 * not stop it reading the next). */
static bool cr_early_section(cr_ahead *a, const char *name, cur *k)
{
    a->q.failed = false;
    return cr_section(&a->q, name, k);
}

/* The second thread: each section's lists as its reader (cr_read_*)
 * finds them, the biggest first.  What fails here is left out, for the
 * first thread to decode and report. */
static void *cr_ahead_main(void *arg)
{
    cr_ahead *a = arg;
    crate *q = &a->q;
    cur k;
    if (cr_early_section(a, UB_CRATE_SEC_FIELDSETS, &k))
        cr_early_ints(a, &k, rd_u64(&k, ""));
    if (cr_early_section(a, UB_CRATE_SEC_SPECS, &k)) {
        uint64_t n = rd_u64(&k, "");
        for (int i = 0; i < 3 && !q->failed; i++)
            cr_early_ints(a, &k, n);
    }
    if (cr_early_section(a, UB_CRATE_SEC_PATHS, &k)) {
        rd_u64(&k, ""); /* (the path count) */
        uint64_t n = rd_u64(&k, "");
        for (int i = 0; i < 3 && !q->failed; i++)
            cr_early_ints(a, &k, n);
    }
    if (cr_early_section(a, UB_CRATE_SEC_FIELDS, &k)) {
        uint64_t n = rd_u64(&k, "");
        cr_early_ints(a, &k, n);
        if (!q->failed) {
            uint64_t *reps = rd_field_reps(&k, n); /* (k stays: at them) */
            cr_early_put(a, k.p, n * 8, 0, reps);
        }
    }
    return NULL;
}

/* The list decoded ahead from the bytes at `at` (count, width as
 * cr_ahead), now the caller's; NULL: none (the caller decodes it). */
static void *cr_ahead_take(crate *c, const unsigned char *at, uint64_t count,
                           unsigned width)
{
    cr_ahead *a = c->ahead;
    for (size_t i = 0; a && !a->running && i < a->n; i++) {
        struct cr_early *e = &a->e[i];
        if (e->v && e->at == at && e->count == count && e->width == width) {
            void *v = e->v;
            e->v = NULL;
            return v;
        }
    }
    return NULL;
}

/* Start the second thread on a big file read whole (a stream's reads
 * hold one section's lists at a time, as cat's memory needs). */
static void cr_ahead_start(crate *c)
{
    if (c->stream || c->split_mode < 0 ||
        c->ver < UB_CRATE_V_COMPRESSED_SECTIONS)
        return;
    /* the sections' sizes as the table of contents gives them (a size
     * that does not fit is the first thread's to report) */
    uint64_t size = 0;
    for (uint64_t i = 0; i < c->nsec; i++) {
        const unsigned char *e = c->toc + i * UB_CRATE_SECTION_ENTRY_SIZE;
        int64_t n;
        memcpy(&n, e + 24, 8);
        if (n > 0 && strncmp((const char *)e, UB_CRATE_SEC_TOKENS,
                             UB_CRATE_SECTION_NAME_LEN) != 0)
            size += (uint64_t)n;
    }
    if (c->split_mode == 0 && (size < CR_AHEAD_MIN || ub_cpus() < 2))
        return;
    cr_ahead *a = calloc(1, sizeof *a);
    if (!a || !(a->quiet = ub_diags_new())) {
        free(a);
        return;
    }
    a->q = *c;
    a->q.diags = a->quiet;
    a->q.blk = NULL; /* (pages are the first thread's to give back) */
    a->q.ahead = NULL;
    if (pthread_create(&a->th, NULL, cr_ahead_main, a) != 0) {
        ub_diags_free(a->quiet);
        free(a);
        return;
    }
    a->running = true;
    c->ahead = a;
}

static void cr_ahead_join(crate *c)
{
    if (c->ahead && c->ahead->running) {
        pthread_join(c->ahead->th, NULL);
        c->ahead->running = false;
    }
}

/* (Joined first.)  The lists not taken. */
static void cr_ahead_free(crate *c)
{
    cr_ahead *a = c->ahead;
    if (!a)
        return;
    cr_ahead_join(c);
    for (size_t i = 0; i < a->n; i++)
        cr_early_free(&a->e[i]);
    ub_diags_free(a->quiet);
    free(a);
    c->ahead = NULL;
}

/* The structural sections, into tables.  Each section's pages of a
 * mapped file go back once it is decoded, and the children are indexed
 * only once SPECS' temporaries are gone: a structure-heavy file's peak is
 * its tables plus the biggest section's temporaries, not more. */
static int cr_read_sections(crate *c)
{
    static int (*const step[])(crate *) = {
        cr_read_boot, cr_read_tokens, cr_read_strings, cr_read_fields,
        cr_read_fieldsets, cr_read_paths, cr_read_specs,
    };
    for (size_t i = 0; i < sizeof step / sizeof *step; i++) {
        if (step[i] == cr_read_fields) /* (the lists decoded ahead) */
            cr_ahead_join(c);
        if (step[i](c) != 0 || c->failed)
            return -1;
        if (step[i] == cr_read_boot)
            cr_ahead_start(c);
        if (!c->ahead || !c->ahead->running)
            cr_release(c, true);
    }
    cr_ahead_free(c);
    return c->npath && !cr_index_children(c) ? -1 : 0;
}

/* The path tables to the string table, as the tree the locations of the
 * layer's specs name (the layer drops it); the reader goes on reading
 * them.  Without the memory for it, the locations name the file alone. */
static void cr_hand_over(crate *c)
{
    const char *file = ub_intern_cstr(c->t, c->name);
    if (file)
        c->tree = ub_strtab_add_spec_tree(c->t, file, cr_paths(c));
    c->L->spec_tree = c->tree;
}

static void cr_free(crate *c)
{
    cr_ahead_free(c);
    if (!c->tree) { /* (else the string table's now) */
        free(c->tok);
        free(c->ppar);
        free(c->pelem);
        free(c->pkind);
    }
    free(c->str);
    ub_scratch_free(c->fld_name, c->fld_name_size);
    free(c->fname);
    free(c->fld_rep);
    ub_scratch_free(c->fset, c->fset_size);
    free(c->pfset);
    free(c->kid_bits);
    free(c->kid_rank);
    free(c->cstart);
    free(c->child);
    free(c->blk_mem);
    cr_free_own(c);
}

ub_layer *ub_crate_read(const void *data, size_t len, const char *path,
                        ub_strtab *t, ub_diags *diags)
{
    return ub_crate_read_stream(data, len, path, t, NULL, diags);
}

ub_layer *ub_crate_read_stream(const void *data, size_t len,
                               const char *path, ub_strtab *t,
                               const ub_crate_stream *stream,
                               ub_diags *diags)
{
    /* (a stream without prim_done only says the data is mapped) */
    crate c = {.d = data, .len = len, .name = path, .t = t, .diags = diags,
               .stream = stream && stream->prim_done ? stream : NULL,
               .w_spec = NONE, .split_at = NONE,
               .split_mode = stream ? stream->split : 0,
               .split_done = stream ? stream->split_done : NULL};
    if (c.split_done)
        *c.split_done = false;
    c.budget = (uint64_t)len * 64 + (1u << 20);
    c.blk_lo = c.blk_last = c.old_lo = UINT64_MAX;
    if (stream && stream->mapped) {
        long pg = sysconf(_SC_PAGESIZE);
        if (pg > 0 && pg <= (1l << CR_BLOCK_BITS) &&
            ((uintptr_t)data & (uintptr_t)(pg - 1)) == 0) {
            size_t words = (len >> CR_BLOCK_BITS) / 64 + 1;
            c.blk = c.blk_mem = calloc(3 * words, 8);
            c.blk_old = c.blk ? c.blk + words : NULL;
            c.blk_gone = c.blk ? c.blk + 2 * words : NULL;
            c.window = CR_BLOCKS;
        }
    }
    for (int i = 0; i < K_COUNT; i++)
        c.key[i] = ub_intern_cstr(t, cr_key_names[i]);
    for (int i = 0; i < K_COUNT - K_DOCUMENTATION; i++)
        c.text_key[i] = ub_intern_cstr(t, cr_text_names[i]);
    if (!cr_alloc_own(&c)) {
        cr_oom(&c);
        cr_free(&c);
        return NULL;
    }
    if (cr_read_sections(&c) != 0) {
        cr_free(&c);
        return NULL;
    }
    uint32_t root = NONE;
    for (uint64_t i = 0; i < c.npath && root == NONE; i++)
        if (cr_kind(&c, i) == UB_PK_ROOT)
            root = (uint32_t)i;
    c.L = ub_layer_new(t, path);
    if (!c.L) {
        cr_oom(&c);
        cr_free(&c);
        return NULL;
    }
    c.a = c.L->arena;
    cr_hand_over(&c);
    if (root != NONE && PK_STYPE(c.pkind[root])) {
        if (PK_STYPE(c.pkind[root]) != UB_CRATE_SPEC_PSEUDO_ROOT) {
            cr_where(&c, "section", "SPECS", NULL);
            cr_err(&c, "the spec at </> is not the pseudo-root");
        } else if (!cr_build_split(&c, root) && !c.failed) {
            cr_build_prim(&c, c.L->root, root, 0);
        }
    }
    cr_free(&c);
    if (c.failed) {
        ub_layer_free(c.L);
        return NULL;
    }
    c.L->streamed = c.stream != NULL;
    return c.L;
}
