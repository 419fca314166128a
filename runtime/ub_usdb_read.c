/* The .usdb reader: doc/binary-format.md is the contract.  Every byte read
 * here is bounds-checked; damage is reported, naming the section. */
#include "ub_usdb.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "ub_ident.h"
#include "ub_metadef.h"
#include "ub_pathexpr.h"
#include "ub_usdb_format.h"

typedef struct rsec {
    uint32_t tag, codec;
    uint64_t off, stored, raw, hash;
} rsec;

typedef struct rprim {
    uint32_t name, type_name; /* type_name: str + 1 */
    uint32_t parent, vset_name; /* vset_name: str + 1 for variant bodies */
    uint8_t spec;
    uint32_t first_field, n_fields;
    uint32_t prim_order, prop_order; /* val */
    uint32_t first_prop, n_props;
    uint32_t first_child, n_children;
    uint32_t first_vset, n_vsets;
} rprim;

typedef struct rvset {
    uint32_t name, first_variant, n_variants;
} rvset;

typedef struct rprop {
    uint32_t name, type_name, default_target; /* str + 1 for the latter */
    const ub_type *type;
    uint8_t flags, variability;
    uint32_t def, series, conn, targets; /* val / record + 1 */
    uint32_t first_field, n_fields;
} rprop;

typedef struct rfield {
    uint32_t key, val;
} rfield;

typedef struct rrec {
    uint32_t chunk;
    size_t off, len;
} rrec;

typedef struct rsub {
    uint32_t asset;
    uint8_t flags;
    double offset, scale;
} rsub;

/* One decoded series, cached for the last property asked about. */
typedef struct rseries {
    uint32_t rec; /* record + 1; 0 = empty cache */
    uint32_t n;
    double *times;
    uint32_t *ids;   /* per-sample records (mode RECS) */
    ub_value packed; /* all samples as one array (mode PACKED) */
    ub_arena *arena; /* owns packed */
} rseries;

struct ub_usdb {
    const unsigned char *base;
    size_t size;
    bool mapped;
    bool oom; /* memory ran out (reported once) */
    const char *name;
    ub_strtab *strtab;
    bool own_strtab;
    ub_diags *diags;
    ZSTD_DCtx *dctx;
    rsec *secs;
    uint32_t nsecs;
    uint32_t *data_secs, nchunks;
    unsigned char **chunks;   /* decompressed DATA, NULL until used */
    bool *chunk_owned;
    const char **strs;
    uint32_t nstrs;
    const ub_type **str_type; /* cache: string id -> type */
    uint8_t *str_type_state;  /* 0 unknown, 1 looked up */
    rprim *prims;
    uint32_t nprims, capprims;
    rvset *vsets;
    uint32_t nvsets, capvsets;
    rprop *props;
    uint32_t nprops, capprops;
    rfield *fields;
    uint32_t nfields, capfields;
    rrec *recs;
    uint32_t nrecs;
    uint32_t layer_first_field, layer_n_fields;
    bool has_sublayers;
    rsub *subs;
    uint32_t nsubs;
    uint64_t decompressed, raw_total;
    int64_t tree_max_str, tree_max_rec; /* decoding the tree: highest ids
                                           referenced so far */
    rseries cache;
    /* the roles of field names as metadata (ub_metadef_role_of), by
     * string id and spec kind, direct-mapped: a layer has a few dozen
     * names for a hundred thousand fields */
    struct {
        uint32_t key;   /* string id + 1, 0 for none */
        ub_spec_kind spec;
        ub_metadef_role role;
    } roles[256];
    uint8_t *field_spec; /* field -> ub_spec_kind (field_spec), or NULL */
};

/* --- errors ------------------------------------------------------------ */

static void ub_usdb_err(ub_usdb *f, const char *section, const char *fmt,
                        ...) __attribute__((format(printf, 3, 4)));

static void ub_usdb_err(ub_usdb *f, const char *section, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ub_diag *d = ub_diag_add(f->diags, UB_ERROR, (ub_loc){f->name, 0, 0},
                             "usdb-damaged", NULL, 0,
                             "damaged usdb file: %s: %s", section, msg);
    ub_diag_set_hint(f->diags, d,
                     "the file was truncated or altered after it was "
                     "written; convert the source layer again");
}

/* Memory ran out: said once, as such -- the file is not damaged. */
static void ub_usdb_oom(ub_usdb *f)
{
    if (f->oom)
        return;
    f->oom = true;
    ub_diag_add_oom(f->diags, (ub_loc){f->name, 0, 0},
                    "out of memory reading '%s'", f->name ? f->name : "-");
}

/* A byte cursor over one decompressed section or record, with a sticky
 * error that names where it is. */
typedef struct cur {
    const unsigned char *start, *p, *end;
    ub_usdb *f;
    const char *where;   /* static label */
    bool tree;           /* references are tree references */
    int64_t chunk, rec;  /* for records; -1 otherwise (formatted on error
                            only: decoding is hot) */
    bool err;
} cur;

static void cur_init(cur *c, ub_usdb *f, const void *data, size_t len,
                     const char *where)
{
    c->start = c->p = data;
    c->end = c->p + len;
    c->f = f;
    c->where = where;
    c->chunk = c->rec = -1;
    c->tree = false;
    c->err = false;
}

static void cur_fail(cur *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void cur_fail(cur *c, const char *fmt, ...)
{
    if (c->err)
        return;
    c->err = true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char where[64];
    if (c->rec >= 0)
        snprintf(where, sizeof where, "section DATA chunk %lld record %lld",
                 (long long)c->chunk, (long long)c->rec);
    else
        snprintf(where, sizeof where, "%s", c->where);
    ub_usdb_err(c->f, where, "%s at byte %zu", msg,
                (size_t)(c->p - c->start));
}

static void cur_oom(cur *c)
{
    c->err = true;
    ub_usdb_oom(c->f);
}

static size_t cur_left(const cur *c)
{
    return (size_t)(c->end - c->p);
}

static unsigned get_u8(cur *c)
{
    if (c->err)
        return 0;
    if (c->p >= c->end) {
        cur_fail(c, "unexpected end of data");
        return 0;
    }
    return *c->p++;
}

static uint64_t get_vu(cur *c)
{
    if (c->p < c->end && *c->p < 0x80) /* the common one-byte case */
        return *c->p++;
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        unsigned b = get_u8(c);
        if (c->err)
            return 0;
        if (shift == 63 && b > 1) {
            cur_fail(c, "varint out of range");
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    cur_fail(c, "varint longer than 10 bytes");
    return 0;
}

static uint32_t get_vu32(cur *c)
{
    uint64_t v = get_vu(c);
    if (v > UINT32_MAX) {
        cur_fail(c, "number %llu out of range", (unsigned long long)v);
        return 0;
    }
    return (uint32_t)v;
}

/* A count of items each at least `min` bytes long: never more than the
 * bytes left, so a damaged count cannot make us allocate beyond the file. */
static uint32_t get_count(cur *c, size_t min)
{
    uint32_t n = get_vu32(c);
    if (!c->err && min && n > cur_left(c) / min) {
        cur_fail(c, "count %u exceeds the remaining %zu bytes", n,
                 cur_left(c));
        return 0;
    }
    return n;
}

static double get_f64(cur *c)
{
    if (c->err)
        return 0;
    if (cur_left(c) < 8) {
        cur_fail(c, "unexpected end of data");
        return 0;
    }
    uint64_t u = ub_le64(c->p);
    c->p += 8;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* A tree reference (see tree_code in the writer): returns the id, or
 * UINT32_MAX after an error. */
static uint32_t get_tree_ref(cur *c, int64_t *max, uint64_t v, uint32_t n,
                             const char *what)
{
    int64_t id;
    if (v & 1) {
        uint64_t skip = (v - 1) / 2;
        if (skip >= (uint64_t)n) {
            cur_fail(c, "%s reference out of range", what);
            return UINT32_MAX;
        }
        id = *max + 1 + (int64_t)skip;
    } else {
        id = (int64_t)((v - 2) / 2);
        if (id > *max) {
            cur_fail(c, "%s %lld referenced before its first use", what,
                     (long long)id);
            return UINT32_MAX;
        }
    }
    if (id < 0 || id >= (int64_t)n) {
        cur_fail(c, "%s %lld out of range (%u)", what, (long long)id, n);
        return UINT32_MAX;
    }
    if (id > *max)
        *max = id;
    return (uint32_t)id;
}

/* An optional string in the tree: string + 1, or 0. */
static uint32_t get_tree_opt_str(cur *c)
{
    uint64_t v = get_vu(c);
    if (c->err || v == 0)
        return 0;
    uint32_t id = get_tree_ref(c, &c->f->tree_max_str, v, c->f->nstrs,
                               "string");
    return c->err ? 0 : id + 1;
}

/* An optional string's text: NULL for none. */
static const char *opt_str(const ub_usdb *f, uint32_t s)
{
    return s ? f->strs[s - 1] : NULL;
}

static uint32_t get_str_id(cur *c)
{
    if (c->tree) {
        uint64_t v = get_vu(c);
        if (!c->err && v == 0)
            cur_fail(c, "missing string");
        if (c->err)
            return 0;
        uint32_t id = get_tree_ref(c, &c->f->tree_max_str, v, c->f->nstrs,
                                   "string");
        return c->err ? 0 : id;
    }
    uint32_t s = get_vu32(c);
    if (!c->err && s >= c->f->nstrs) {
        cur_fail(c, "string %u out of range (%u strings)", s, c->f->nstrs);
        return 0;
    }
    return s;
}

static const char *get_str(cur *c)
{
    uint32_t s = get_str_id(c);
    return c->err ? NULL : c->f->strs[s];
}

/* Asset paths as every reader holds them (UTF-8, no control character),
 * or the text printed from them would not read back; what: "asset path"
 * or "sublayer asset path", for the message. */
static void check_asset(cur *c, const char *s, const char *what)
{
    const char *why = s ? ub_ident_asset_problem(s, ub_str_len(s)) : NULL;
    if (why)
        cur_fail(c, "%s '%.40s': %s", what, s, why);
}

static const char *get_asset(cur *c)
{
    const char *s = get_str(c);
    check_asset(c, s, "asset path");
    return c->err ? NULL : s;
}

static const char *get_opt_str(cur *c)
{
    uint32_t s = get_vu32(c);
    if (c->err || s == 0)
        return NULL;
    if (s - 1 >= c->f->nstrs) {
        cur_fail(c, "string %u out of range (%u strings)", s - 1,
                 c->f->nstrs);
        return NULL;
    }
    return c->f->strs[s - 1];
}

/* --- sections ---------------------------------------------------------- */

static const char *tag_name(uint32_t tag, char buf[5])
{
    for (int i = 0; i < 4; i++) {
        unsigned char ch = (unsigned char)(tag >> (8 * i));
        buf[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    buf[4] = '\0';
    return buf;
}

static void sec_label(const ub_usdb *f, uint32_t s, char *out, size_t n)
{
    char t[5];
    tag_name(f->secs[s].tag, t);
    if (f->secs[s].tag == UB_USDB_TAG_DATA) {
        for (uint32_t k = 0; k < f->nchunks; k++)
            if (f->data_secs[k] == s) {
                snprintf(out, n, "section DATA chunk %u", k);
                return;
            }
    }
    snprintf(out, n, "section %s", t);
}

/* Verify and decompress section s.  *owned says whether *out was
 * allocated (stored sections are used in place). */
static int sec_load(ub_usdb *f, uint32_t s, const unsigned char **out,
                    bool *owned)
{
    const rsec *sec = &f->secs[s];
    char label[48];
    sec_label(f, s, label, sizeof label);
    const unsigned char *src = f->base + sec->off;
#ifndef UB_USDB_FUZZING /* the fuzzer cannot forge hashes: let it past */
    if (XXH3_64bits(src, (size_t)sec->stored) != sec->hash) {
        ub_usdb_err(f, label,
                    "checksum mismatch (bytes %llu..%llu of the file)",
                    (unsigned long long)sec->off,
                    (unsigned long long)(sec->off + sec->stored));
        return -1;
    }
#endif
    *owned = false;
    if (sec->codec == UB_USDB_CODEC_STORED) {
        *out = src;
        f->decompressed += sec->raw;
        return 0;
    }
    unsigned long long fcs = ZSTD_getFrameContentSize(src, (size_t)sec->stored);
    if (fcs != sec->raw) {
        ub_usdb_err(f, label, "compressed frame header does not match the "
                              "index (size %llu, expected %llu)",
                    fcs, (unsigned long long)sec->raw);
        return -1;
    }
    unsigned char *dst = malloc(sec->raw ? (size_t)sec->raw : 1);
    if (!dst) {
        ub_usdb_oom(f);
        return -1;
    }
    size_t z = ZSTD_decompressDCtx(f->dctx, dst, (size_t)sec->raw, src,
                                   (size_t)sec->stored);
    if (ZSTD_isError(z) || z != sec->raw) {
        ub_usdb_err(f, label, "cannot decompress: %s",
                    ZSTD_isError(z) ? ZSTD_getErrorName(z) : "short frame");
        free(dst);
        return -1;
    }
    f->decompressed += sec->raw;
    *out = dst;
    *owned = true;
    return 0;
}

static int parse_index(ub_usdb *f)
{
    const unsigned char *b = f->base;
    size_t n = f->size;
    if (n < UB_USDB_MAGIC_LEN ||
        memcmp(b, UB_USDB_MAGIC, UB_USDB_MAGIC_LEN) != 0) {
        ub_usdb_err(f, "header", n < UB_USDB_MAGIC_LEN
                                     ? "file truncated (%zu bytes)"
                                     : "bad magic (not a usdbake binary "
                                       "layer, %zu bytes)",
                    n);
        return -1;
    }
    if (n < UB_USDB_HEADER_LEN + UB_USDB_TRAILER_LEN) {
        ub_usdb_err(f, "trailer", "file truncated (%zu bytes)", n);
        return -1;
    }
    const unsigned char *tr = b + n - UB_USDB_TRAILER_LEN;
    unsigned major = ub_le16(b + 8), minor = ub_le16(b + 10);
    if (memcmp(tr + 16, UB_USDB_TAIL_MAGIC, 4) != 0) {
        ub_usdb_err(f, "trailer",
                    "end marker missing (file truncated or damaged)");
        return -1;
    }
    if (major != UB_USDB_MAJOR && major == ub_le16(tr + 12)) {
        ub_usdb_err(f, "header",
                    "format version %u.%u is not supported (this reader "
                    "reads %d.x)",
                    major, minor, UB_USDB_MAJOR);
        return -1;
    }
    /* The trailer repeats the version, so damage to either shows. */
    if (ub_le16(tr + 12) != major || ub_le16(tr + 14) != minor) {
        ub_usdb_err(f, "header", "version %u.%u does not match the "
                                 "trailer's %u.%u",
                    major, minor, ub_le16(tr + 12), ub_le16(tr + 14));
        return -1;
    }
    uint64_t ilen = ub_le32(tr);
    uint64_t tail = n - UB_USDB_TRAILER_LEN;
    if (ilen < 1 || ilen > tail - UB_USDB_HEADER_LEN) {
        ub_usdb_err(f, "trailer", "index length %llu does not fit the "
                                  "%zu-byte file",
                    (unsigned long long)ilen, n);
        return -1;
    }
    uint64_t ioff = tail - ilen;
    const unsigned char *ix = b + ioff;
#ifndef UB_USDB_FUZZING
    if (XXH3_64bits(ix, (size_t)ilen) != ub_le64(tr + 4)) {
        ub_usdb_err(f, "index", "checksum mismatch (bytes %llu..%llu)",
                    (unsigned long long)ioff, (unsigned long long)tail);
        return -1;
    }
#endif
    cur c;
    cur_init(&c, f, ix, (size_t)ilen, "index");
    uint32_t count = get_count(&c, 15);
    if (c.err)
        return -1;
    f->secs = calloc(count ? count : 1, sizeof *f->secs);
    f->data_secs = calloc(count ? count : 1, sizeof *f->data_secs);
    if (!f->secs || !f->data_secs) {
        ub_usdb_oom(f);
        return -1;
    }
    f->nsecs = count;
    uint64_t off = UB_USDB_HEADER_LEN;
    for (uint32_t i = 0; i < count && !c.err; i++) {
        rsec *sc = &f->secs[i];
        if (cur_left(&c) < 4) {
            cur_fail(&c, "unexpected end of data");
            break;
        }
        sc->tag = ub_le32(c.p);
        c.p += 4;
        sc->codec = get_u8(&c);
        sc->stored = get_vu(&c);
        sc->raw = get_vu(&c);
        if (!c.err && cur_left(&c) < 8)
            cur_fail(&c, "unexpected end of data");
        if (c.err)
            break;
        sc->hash = ub_le64(c.p);
        c.p += 8;
        sc->off = off;
        char t[5];
        tag_name(sc->tag, t);
        if (sc->stored > ioff - off) {
            cur_fail(&c, "section %u (%s) of %llu bytes overruns the data "
                         "area",
                     i, t, (unsigned long long)sc->stored);
            break;
        }
        off += sc->stored;
        if (sc->codec > UB_USDB_CODEC_ZSTD ||
            (sc->codec == UB_USDB_CODEC_STORED && sc->raw != sc->stored) ||
            sc->raw > sc->stored * 65536 + ((uint64_t)1 << 20) ||
            sc->raw > (uint64_t)SIZE_MAX / 2) {
            cur_fail(&c, "section %u (%s) has codec %u and sizes %llu/%llu "
                         "that cannot be right",
                     i, t, sc->codec, (unsigned long long)sc->stored,
                     (unsigned long long)sc->raw);
            break;
        }
        f->raw_total += sc->raw;
        if (sc->tag == UB_USDB_TAG_DATA)
            f->data_secs[f->nchunks++] = i;
    }
    if (!c.err && c.p != c.end)
        cur_fail(&c, "%zu bytes left over", cur_left(&c));
    if (!c.err && off != ioff)
        cur_fail(&c, "sections end at %llu, not at the index (%llu)",
                 (unsigned long long)off, (unsigned long long)ioff);
    return c.err ? -1 : 0;
}

static int find_sec(ub_usdb *f, uint32_t tag, const char *name)
{
    int found = -1;
    for (uint32_t i = 0; i < f->nsecs; i++) {
        if (f->secs[i].tag != tag)
            continue;
        if (found >= 0) {
            ub_usdb_err(f, "index", "section %s appears twice", name);
            return -1;
        }
        found = (int)i;
    }
    if (found < 0)
        ub_usdb_err(f, "index", "section %s is missing", name);
    return found;
}

/* --- skeleton: strings, record index, tree ----------------------------- */

static int load_strs(ub_usdb *f, const unsigned char *d, size_t len)
{
    cur c;
    cur_init(&c, f, d, len, "section SKEL (strings)");
    uint32_t n = get_count(&c, 1);
    if (c.err)
        return -1;
    size_t *lens = malloc((n ? n : 1) * sizeof *lens);
    f->strs = malloc((n ? n : 1) * sizeof *f->strs);
    f->str_type = calloc(n ? n : 1, sizeof *f->str_type);
    f->str_type_state = calloc(n ? n : 1, 1);
    if (!lens || !f->strs || !f->str_type || !f->str_type_state) {
        free(lens);
        cur_oom(&c);
        return -1;
    }
    size_t total = 0;
    for (uint32_t i = 0; i < n && !c.err; i++) {
        uint64_t l = get_vu(&c);
        if (!c.err && l > cur_left(&c)) {
            cur_fail(&c, "string %u of %llu bytes overruns the section", i,
                     (unsigned long long)l);
        }
        lens[i] = (size_t)l;
        total += (size_t)l;
    }
    if (!c.err && total != cur_left(&c))
        cur_fail(&c, "string bytes (%zu) do not fill the section (%zu)",
                 total, cur_left(&c));
    for (uint32_t i = 0; i < n && !c.err; i++) {
        /* (no reader makes one: the usda reader ends a string at a NUL,
         * crate's tokens end at one; and a path's or a name's checks
         * read the text only up to it) */
        if (memchr(c.p, 0, lens[i])) {
            cur_fail(&c, "string %u holds a NUL byte", i);
            break;
        }
        f->strs[i] = ub_intern(f->strtab, (const char *)c.p, lens[i]);
        if (!f->strs[i])
            cur_oom(&c);
        c.p += lens[i];
    }
    free(lens);
    if (c.err)
        return -1;
    f->nstrs = n;
    return 0;
}

static int load_ridx(ub_usdb *f, const unsigned char *d, size_t len)
{
    cur c;
    cur_init(&c, f, d, len, "section SKEL (record index)");
    uint32_t nchunks = get_vu32(&c);
    if (!c.err && nchunks != f->nchunks)
        cur_fail(&c, "%u chunks listed, but the index has %u DATA sections",
                 nchunks, f->nchunks);
    uint32_t cap = 0;
    for (uint32_t k = 0; k < nchunks && !c.err; k++) {
        uint32_t n = get_count(&c, 1);
        uint64_t raw = f->secs[f->data_secs[k]].raw, off = 0;
        if (c.err)
            break;
        if (n > UINT32_MAX - f->nrecs) {
            cur_fail(&c, "too many records");
            break;
        }
        if (f->nrecs + n > cap) {
            uint32_t nc = f->nrecs + n + cap / 2;
            rrec *r = realloc(f->recs, (size_t)nc * sizeof *r);
            if (!r) {
                cur_oom(&c);
                break;
            }
            f->recs = r;
            cap = nc;
        }
        for (uint32_t i = 0; i < n && !c.err; i++) {
            uint64_t l = get_vu(&c);
            if (c.err)
                break;
            if (l == 0 || l > raw - off) {
                cur_fail(&c, "record %u (%llu bytes) overruns DATA chunk %u",
                         f->nrecs, (unsigned long long)l, k);
                break;
            }
            f->recs[f->nrecs++] = (rrec){k, (size_t)off, (size_t)l};
            off += l;
        }
        if (!c.err && off != raw)
            cur_fail(&c, "records fill %llu of the %llu bytes of DATA chunk "
                         "%u",
                     (unsigned long long)off, (unsigned long long)raw, k);
    }
    if (!c.err && c.p != c.end)
        cur_fail(&c, "%zu bytes left over", cur_left(&c));
    return c.err ? -1 : 0;
}

static int64_t unzigzag64(uint64_t z)
{
    return (int64_t)((z >> 1) ^ (0 - (z & 1)));
}

/* A record reference in the tree (0 none); returns record + 1, or 0. */
static uint32_t get_val(cur *c)
{
    uint64_t v = get_vu(c);
    if (c->err || v == 0)
        return 0;
    uint32_t rec = get_tree_ref(c, &c->f->tree_max_rec, v, c->f->nrecs,
                                "record");
    return c->err ? 0 : rec + 1;
}

#define GROW(arr, n, cap, add, c)                                          \
    do {                                                                   \
        if ((uint64_t)(n) + (add) > (cap)) {                               \
            uint64_t nc_ = ((uint64_t)(n) + (add)) * 2;                    \
            void *np_ = nc_ > UINT32_MAX                                   \
                            ? NULL                                         \
                            : realloc((arr), (size_t)nc_ * sizeof *(arr)); \
            if (!np_) {                                                    \
                cur_oom(c);                                                \
                break;                                                     \
            }                                                              \
            (arr) = np_;                                                   \
            (cap) = (uint32_t)nc_;                                         \
        }                                                                  \
    } while (0)

static void dec_fields(cur *c, uint32_t *first, uint32_t *n)
{
    ub_usdb *f = c->f;
    uint32_t k = get_count(c, 2);
    GROW(f->fields, f->nfields, f->capfields, k, c);
    if (c->err)
        return;
    *first = f->nfields;
    *n = k;
    for (uint32_t i = 0; i < k && !c->err; i++) {
        rfield *fl = &f->fields[f->nfields++];
        fl->key = get_str_id(c);
        fl->val = get_val(c);
    }
}

/* Look up a type by its usda name (string s), caching per string. */
static const ub_type *type_of_str(ub_usdb *f, uint32_t s)
{
    if (!f->str_type_state[s]) {
        f->str_type_state[s] = 1;
        const char *name = f->strs[s];
        for (int id = UB_TY_INVALID + 1; id < UB_TY_COUNT; id++) {
            const ub_type *t = ub_type_get((ub_type_id)id);
            if (t && strcmp(t->name, name) == 0 &&
                strlen(name) == ub_str_len(name)) {
                f->str_type[s] = t;
                break;
            }
        }
    }
    return f->str_type[s];
}

static const ub_type *get_type(cur *c)
{
    uint32_t s = get_str_id(c);
    if (c->err)
        return NULL;
    const ub_type *t = type_of_str(c->f, s);
    if (!t)
        cur_fail(c, "unknown value type '%.40s'", c->f->strs[s]);
    return t;
}

/* What a name in the tree must be: the file's checksums catch damage,
 * not a writer that put "a/b" where a prim name goes, and such a name
 * would print text that no usda reader takes. */
enum { NAME_PRIM, NAME_PROP, NAME_VARIANT, NAME_VSET };

static void check_name(cur *c, uint32_t id, int kind)
{
    if (c->err)
        return;
    const char *s = c->f->strs[id];
    size_t n = ub_str_len(s);
    /* as the usda reader has them: a variant set may be named "", a
     * variant may not */
    bool ok = kind == NAME_PRIM   ? ub_ident_ok(s, n)
              : kind == NAME_PROP ? ub_ident_ns_ok(s, n)
              : kind == NAME_VSET ? ub_ident_variant_ok(s, n)
                                  : n > 0 && ub_ident_variant_ok(s, n);
    if (!ok)
        cur_fail(c, "'%.40s' is not a valid %s name", s,
                 kind == NAME_PRIM   ? "prim"
                 : kind == NAME_PROP ? "property"
                 : kind == NAME_VSET ? "variant set"
                                     : "variant");
}

static void dec_prop(cur *c, uint32_t idx)
{
    ub_usdb *f = c->f;
    rprop p = {0};
    p.name = get_str_id(c);
    check_name(c, p.name, NAME_PROP);
    p.flags = (uint8_t)get_u8(c);
    p.variability = (uint8_t)get_u8(c);
    if (!c->err && (p.flags & ~0x1fu)) {
        cur_fail(c, "unknown property flags 0x%x", p.flags);
        return;
    }
    if (!c->err && p.variability > UB_CONFIG) {
        cur_fail(c, "unknown variability %u", p.variability);
        return;
    }
    p.type_name = get_tree_opt_str(c);
    uint32_t ty = get_tree_opt_str(c);
    if (!c->err && ty) {
        if (ty - 1 >= f->nstrs)
            cur_fail(c, "string %u out of range", ty - 1);
        else if (!(p.type = type_of_str(f, ty - 1)))
            cur_fail(c, "unknown value type '%.40s'", f->strs[ty - 1]);
    }
    /* the type is the one the type name names: one without the other
     * would read as the type's own name, which no writer wrote */
    if (!c->err && p.type && !p.type_name)
        cur_fail(c, "property '%.40s' has value type '%s' but no type name",
                 f->strs[p.name], p.type->name);
    /* the text says an attribute's type name first, as a name (the crate
     * reader holds its attributes to the same) */
    const char *tn = !c->err && p.type_name ? f->strs[p.type_name - 1]
                                             : NULL;
    if (!c->err && !(p.flags & 1) &&
        (!tn || !ub_ident_attr_type_ok(tn, ub_str_len(tn))))
        cur_fail(c, "attribute '%.40s' has %s", f->strs[p.name],
                 tn ? "a type name that is not an identifier, or is a "
                      "reserved word"
                    : "no type name");
    if (!c->err && tn && !(p.flags & 1) && (p.flags & 8) && p.type &&
        !ub_type_has_array(p.type))
        cur_fail(c, "attribute '%.40s': type '%s' has no array form",
                 f->strs[p.name], p.type->name);
    /* and its values' type is the one the text reads for that name: a
     * float3 under `inherited x` would print as samples of a type the
     * usda reader does not know */
    bool renamed;
    if (!c->err && tn && !(p.flags & 1) &&
        ub_type_of_attr_name(tn, ub_str_len(tn), &renamed) != p.type)
        cur_fail(c, "attribute '%.40s' has type name '%.40s' and values of "
                    "type %s", f->strs[p.name], tn,
                 p.type ? p.type->name : "none");
    p.def = get_val(c);
    p.series = get_val(c);
    p.conn = get_val(c);
    p.targets = get_val(c);
    p.default_target = get_tree_opt_str(c);
    dec_fields(c, &p.first_field, &p.n_fields);
    if (!c->err)
        f->props[idx] = p;
}

static void dec_prim(cur *c, uint32_t idx, uint32_t parent,
                     uint32_t vset_name, int depth)
{
    ub_usdb *f = c->f;
    if (depth > UB_USDB_MAX_DEPTH) {
        cur_fail(c, "prims nested more than %d levels deep",
                 UB_USDB_MAX_DEPTH);
        return;
    }
    rprim p = {.parent = parent, .vset_name = vset_name};
    p.name = get_str_id(c);
    /* the root has no name of its own: "" */
    if (parent != UB_USDB_NONE)
        check_name(c, p.name, vset_name ? NAME_VARIANT : NAME_PRIM);
    p.spec = (uint8_t)get_u8(c);
    if (!c->err && p.spec > UB_CLASS) {
        cur_fail(c, "unknown specifier %u", p.spec);
        return;
    }
    p.type_name = get_tree_opt_str(c);
    /* a type name the text says after the specifier (the crate reader
     * holds its prims to the same) */
    const char *tn = !c->err ? opt_str(f, p.type_name) : NULL;
    if (tn && !ub_ident_type_name_ok(tn, ub_str_len(tn)))
        cur_fail(c, "prim '%.40s' has a type name that is not an "
                    "identifier, or is a reserved word", f->strs[p.name]);
    dec_fields(c, &p.first_field, &p.n_fields);
    p.prim_order = get_val(c);
    p.prop_order = get_val(c);
    p.n_props = get_count(c, 8);
    GROW(f->props, f->nprops, f->capprops, p.n_props, c);
    if (c->err)
        return;
    p.first_prop = f->nprops;
    f->nprops += p.n_props;
    for (uint32_t i = 0; i < p.n_props && !c->err; i++)
        dec_prop(c, p.first_prop + i);
    p.n_children = get_count(c, 9);
    GROW(f->prims, f->nprims, f->capprims, p.n_children, c);
    if (c->err)
        return;
    p.first_child = f->nprims;
    f->nprims += p.n_children;
    f->prims[idx] = p; /* children refer to it while they are decoded */
    for (uint32_t i = 0; i < p.n_children && !c->err; i++)
        dec_prim(c, p.first_child + i, idx, 0, depth + 1);
    p.n_vsets = get_count(c, 2);
    GROW(f->vsets, f->nvsets, f->capvsets, p.n_vsets, c);
    if (c->err)
        return;
    p.first_vset = f->nvsets;
    f->nvsets += p.n_vsets;
    f->prims[idx] = p;
    for (uint32_t i = 0; i < p.n_vsets && !c->err; i++) {
        rvset vs;
        vs.name = get_str_id(c);
        check_name(c, vs.name, NAME_VSET);
        vs.n_variants = get_count(c, 9);
        GROW(f->prims, f->nprims, f->capprims, vs.n_variants, c);
        if (c->err)
            return;
        vs.first_variant = f->nprims;
        f->nprims += vs.n_variants;
        f->vsets[p.first_vset + i] = vs;
        for (uint32_t k = 0; k < vs.n_variants && !c->err; k++)
            dec_prim(c, vs.first_variant + k, idx, vs.name + 1, depth + 1);
    }
}

static int load_spec(ub_usdb *f, const unsigned char *d, size_t len)
{
    cur c;
    cur_init(&c, f, d, len, "section SKEL (tree)");
    c.tree = true;
    f->tree_max_str = f->tree_max_rec = -1;
    dec_fields(&c, &f->layer_first_field, &f->layer_n_fields);
    f->has_sublayers = get_u8(&c) != 0;
    uint32_t ns = get_count(&c, 18);
    if (!c.err) {
        f->subs = calloc(ns ? ns : 1, sizeof *f->subs);
        if (!f->subs)
            cur_oom(&c);
    }
    for (uint32_t i = 0; i < ns && !c.err; i++) {
        f->subs[i].asset = get_str_id(&c);
        if (!c.err)
            check_asset(&c, f->strs[f->subs[i].asset],
                        "sublayer asset path");
        f->subs[i].flags = (uint8_t)get_u8(&c);
        f->subs[i].offset = get_f64(&c);
        f->subs[i].scale = get_f64(&c);
        const char *bad = ub_offset_problem(
            (ub_offset){f->subs[i].offset, f->subs[i].scale});
        if (bad && !c.err)
            cur_fail(&c, "sublayer %u: %s", i, bad);
        f->nsubs = i + 1;
    }
    GROW(f->prims, f->nprims, f->capprims, 1, &c);
    if (!c.err) {
        f->nprims = 1;
        dec_prim(&c, 0, UB_USDB_NONE, 0, 0);
    }
    if (!c.err && c.p != c.end)
        cur_fail(&c, "%zu bytes left over after the tree", cur_left(&c));
    return c.err ? -1 : 0;
}

/* --- open / close ------------------------------------------------------ */

bool ub_usdb_sniff(const void *data, size_t len)
{
    const unsigned char *b = data;
    if (len == 0)
        return false;
    /* A damaged or truncated file is still routed here, so the error can
     * name the damage instead of failing as text. */
    size_t k = len < UB_USDB_MAGIC_LEN ? len : UB_USDB_MAGIC_LEN;
    if (memcmp(b, UB_USDB_MAGIC, k) == 0)
        return true;
    return len >= UB_USDB_HEADER_LEN + UB_USDB_TRAILER_LEN &&
           memcmp(b + len - 4, UB_USDB_TAIL_MAGIC, 4) == 0 && b[0] == 0x89;
}

static ub_usdb *ub_usdb_new(const char *name, ub_strtab *t, ub_diags *diags)
{
    ub_usdb *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->diags = diags;
    f->strtab = t;
    if (!t) {
        f->strtab = ub_strtab_new();
        f->own_strtab = true;
    }
    f->name = f->strtab ? ub_intern_cstr(f->strtab, name ? name : "-") : NULL;
    f->dctx = ZSTD_createDCtx();
    if (!f->strtab || !f->name || !f->dctx) {
        ub_usdb_close(f);
        return NULL;
    }
    return f;
}

static int ub_usdb_init(ub_usdb *f)
{
    if (parse_index(f) != 0)
        return -1;
    int sk = find_sec(f, UB_USDB_TAG_SKEL, "SKEL");
    if (sk < 0)
        return -1;
    f->chunks = calloc(f->nchunks ? f->nchunks : 1, sizeof *f->chunks);
    f->chunk_owned = calloc(f->nchunks ? f->nchunks : 1, 1);
    if (!f->chunks || !f->chunk_owned) {
        ub_usdb_oom(f);
        return -1;
    }
    const unsigned char *d;
    bool owned;
    if (sec_load(f, (uint32_t)sk, &d, &owned) != 0)
        return -1;
    /* strings, record index, then the tree to the end */
    cur c;
    cur_init(&c, f, d, (size_t)f->secs[sk].raw, "section SKEL");
    int rc = -1;
    uint64_t ls = get_vu(&c);
    if (!c.err && ls > cur_left(&c))
        cur_fail(&c, "string table of %llu bytes overruns the section",
                 (unsigned long long)ls);
    if (!c.err && load_strs(f, c.p, (size_t)ls) == 0) {
        c.p += ls;
        uint64_t lr = get_vu(&c);
        if (!c.err && lr > cur_left(&c))
            cur_fail(&c, "record index of %llu bytes overruns the section",
                     (unsigned long long)lr);
        if (!c.err && load_ridx(f, c.p, (size_t)lr) == 0) {
            c.p += lr;
            rc = load_spec(f, c.p, cur_left(&c));
        }
    }
    if (owned)
        free((void *)d);
    return rc;
}

ub_usdb *ub_usdb_open_memory(const void *data, size_t len, const char *name,
                             ub_strtab *t, ub_diags *diags)
{
    ub_usdb *f = ub_usdb_new(name, t, diags);
    if (!f) {
        ub_diag_add_oom(diags, (ub_loc){NULL, 0, 0},
                        "out of memory opening '%s'", name ? name : "-");
        return NULL;
    }
    f->base = data;
    f->size = len;
    if (ub_usdb_init(f) != 0) {
        ub_usdb_close(f);
        return NULL;
    }
    return f;
}

ub_usdb *ub_usdb_open(const char *path, ub_strtab *t, ub_diags *diags)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        ub_diag_add(diags, UB_ERROR, (ub_loc){NULL, 0, 0}, NULL, NULL, 0,
                    "cannot open '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    ub_usdb *f = ub_usdb_new(path, t, diags);
    if (!f) {
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    if (size > 0) {
        void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            ub_diag_add(diags, UB_ERROR, (ub_loc){f->name, 0, 0}, NULL,
                        NULL, 0, "cannot map '%s': %s", path,
                        strerror(errno));
            close(fd);
            ub_usdb_close(f);
            return NULL;
        }
        f->base = m;
        f->mapped = true;
    }
    close(fd);
    f->size = size;
    if (ub_usdb_init(f) != 0) {
        ub_usdb_close(f);
        return NULL;
    }
    return f;
}

static void cache_clear(ub_usdb *f)
{
    free(f->cache.times);
    free(f->cache.ids);
    ub_arena_free(f->cache.arena);
    memset(&f->cache, 0, sizeof f->cache);
}

void ub_usdb_close(ub_usdb *f)
{
    if (!f)
        return;
    cache_clear(f);
    for (uint32_t k = 0; f->chunks && k < f->nchunks; k++)
        if (f->chunk_owned[k])
            free(f->chunks[k]);
    free(f->chunks);
    free(f->chunk_owned);
    if (f->mapped)
        munmap((void *)f->base, f->size);
    ZSTD_freeDCtx(f->dctx);
    free(f->secs);
    free(f->data_secs);
    free(f->strs);
    free(f->str_type);
    free(f->str_type_state);
    free(f->prims);
    free(f->vsets);
    free(f->props);
    free(f->fields);
    free(f->field_spec);
    free(f->recs);
    free(f->subs);
    if (f->own_strtab)
        ub_strtab_free(f->strtab);
    free(f);
}

ub_strtab *ub_usdb_strtab(const ub_usdb *f)
{
    return f->strtab;
}

uint64_t ub_usdb_bytes_decompressed(const ub_usdb *f)
{
    return f->decompressed;
}

uint64_t ub_usdb_bytes_raw_total(const ub_usdb *f)
{
    return f->raw_total;
}

uint32_t ub_usdb_section_count(const ub_usdb *f)
{
    return f->nsecs;
}

int ub_usdb_section(const ub_usdb *f, uint32_t i, char name[48],
                    uint64_t *offset, uint64_t *stored, uint64_t *raw)
{
    if (i >= f->nsecs)
        return -1;
    char label[48];
    sec_label(f, i, label, sizeof label);
    snprintf(name, 48, "%s", label + 8); /* without "section " */
    *offset = f->secs[i].off;
    *stored = f->secs[i].stored;
    *raw = f->secs[i].raw;
    return 0;
}

/* --- records ----------------------------------------------------------- */

/* Record rec's bytes, decompressing its chunk on first use. */
static int rec_bytes(ub_usdb *f, uint32_t rec, cur *c)
{
    const rrec *r = &f->recs[rec];
    if (!f->chunks[r->chunk]) {
        const unsigned char *d;
        bool owned;
        if (sec_load(f, f->data_secs[r->chunk], &d, &owned) != 0)
            return -1;
        f->chunks[r->chunk] = (unsigned char *)d;
        f->chunk_owned[r->chunk] = owned;
    }
    cur_init(c, f, f->chunks[r->chunk] + r->off, r->len, "section DATA");
    c->chunk = r->chunk;
    c->rec = rec;
    return 0;
}

static void dec_value_body(cur *c, ub_arena *a, ub_value *out, int depth);

static ub_dict *dec_dict(cur *c, ub_arena *a, int depth)
{
    uint32_t n = get_count(c, 3);
    ub_dict *d = c->err ? NULL : ub_dict_new(a);
    if (!d) {
        cur_oom(c);
        return NULL;
    }
    if (n) {
        d->e = ub_arena_zalloc(a, (size_t)n * sizeof *d->e);
        if (!d->e) {
            cur_oom(c);
            return NULL;
        }
    }
    for (uint32_t i = 0; i < n && !c->err; i++) {
        d->e[i].key = get_str(c);
        dec_value_body(c, a, &d->e[i].value, depth + 1);
        const char *what =
            c->err ? NULL : ub_value_not_in_dict(&d->e[i].value);
        if (what) {
            cur_fail(c, "the dictionary's value '%s' is %s, which no "
                        "dictionary holds", d->e[i].key, what);
            return NULL;
        }
        d->n = d->cap = i + 1;
    }
    return d;
}

/* An untyped value's node inside one of kind `in` (-1: the value
 * itself), held to what the text can say (ub_untyped_fault). */
static void dec_untyped(cur *c, ub_arena *a, ub_untyped *u, int depth, int in)
{
    if (depth > UB_USDB_MAX_DEPTH) {
        cur_fail(c, "values nested more than %d levels deep",
                 UB_USDB_MAX_DEPTH);
        return;
    }
    unsigned k = get_u8(c);
    if (!c->err && k > UB_U_LIST) {
        cur_fail(c, "unknown untyped value kind %u", k);
        return;
    }
    u->kind = (ub_untyped_kind)k;
    u->text = get_opt_str(c);
    if (!c->err && !u->text && k < UB_U_TUPLE) {
        /* an atom, string, asset or path is its text: writers print it */
        cur_fail(c, "an untyped value of kind %u without its text", k);
        return;
    }
    u->n = get_count(c, 3);
    u->child = NULL;
    if (c->err)
        return;
    const char *why = ub_untyped_fault(u, in);
    if (why) {
        cur_fail(c, "an untyped value %s", why);
        return;
    }
    if (!u->n)
        return;
    u->child = ub_arena_zalloc(a, (size_t)u->n * sizeof *u->child);
    if (!u->child) {
        cur_oom(c);
        return;
    }
    for (uint32_t i = 0; i < u->n && !c->err; i++)
        dec_untyped(c, a, &u->child[i], depth + 1, (int)u->kind);
}

/* The fewest bytes one element of t takes in a numeric block (a SMALL
 * decimal component takes 2), to bound counts. */
static size_t numeric_min(const ub_type *t)
{
    size_t s = ub_scalar_size(t->scalar);
    return ub_type_ncomp(t) * (s < 2 ? s : 2);
}

/* Layout SMALL: per component a digit count and a varint, or raw bits. */
static void dec_small(cur *c, const ub_type *t, unsigned char *out, size_t n)
{
    size_t s = ub_scalar_size(t->scalar);
    size_t m = n * ub_type_ncomp(t);
    for (size_t k = 0; k < m && !c->err; k++) {
        unsigned d = get_u8(c);
        double v = 0;
        if (d == UB_USDB_SMALL_RAW) {
            if (cur_left(c) < s) {
                cur_fail(c, "unexpected end of data");
                return;
            }
            uint64_t u = 0;
            for (size_t by = s; by-- > 0;)
                u = u << 8 | c->p[by];
            c->p += s;
            if (s == 4) {
                uint32_t x = (uint32_t)u;
                memcpy(out + k * 4, &x, 4);
            } else {
                memcpy(out + k * 8, &u, 8);
            }
            continue;
        }
        if (d > UB_USDB_DEC_MAX) {
            cur_fail(c, "bad digit count %u", d);
            return;
        }
        v = ub_usdb_decimal(unzigzag64(get_vu(c)), d);
        if (s == 4) {
            float x = (float)v;
            memcpy(out + k * 4, &x, 4);
        } else {
            memcpy(out + k * 8, &v, 8);
        }
    }
}

/* Layout COLUMNS: per column, byte planes or a decimal column. */
static void dec_columns(cur *c, const ub_type *t, unsigned char *out,
                        size_t n)
{
    size_t s = ub_scalar_size(t->scalar);
    unsigned nc = ub_type_ncomp(t);
    size_t stride = nc * s;
    for (unsigned col = 0; col < nc && !c->err; col++) {
        unsigned mode = get_u8(c);
        unsigned char *p = out + col * s;
        if (c->err)
            return;
        if (mode == UB_USDB_COL_PLANES) {
            if (n > cur_left(c) / s) {
                cur_fail(c, "%zu %s elements overrun the record", n,
                         t->name);
                return;
            }
            const unsigned char *planes = c->p;
            c->p += n * s;
            for (size_t i = 0; i < n; i++, p += stride) {
                uint64_t v = 0;
                for (size_t by = s; by-- > 0;)
                    v = v << 8 | planes[by * n + i];
                if (s == 4) {
                    uint32_t x = (uint32_t)v;
                    memcpy(p, &x, 4);
                } else {
                    memcpy(p, &v, 8);
                }
            }
            continue;
        }
        unsigned d = get_u8(c), fl = get_u8(c);
        if (c->err)
            return;
        if (mode != UB_USDB_COL_DECIMAL || d > UB_USDB_DEC_MAX || fl > 3) {
            cur_fail(c, "bad column header %u/%u/%u", mode, d, fl);
            return;
        }
        size_t w = (fl & 2) ? 8 : 4;
        if (n > cur_left(c) / w) {
            cur_fail(c, "%zu %s elements overrun the record", n, t->name);
            return;
        }
        const unsigned char *planes = c->p;
        c->p += n * w;
        int64_t prev = 0;
        for (size_t i = 0; i < n; i++, p += stride) {
            uint64_t z = 0;
            for (size_t by = w; by-- > 0;)
                z = z << 8 | planes[by * n + i];
            int64_t k = (int64_t)((z >> 1) ^ (0 - (z & 1)));
            if (fl & 1) /* wrapping add: a damaged file must not trap */
                k = (int64_t)((uint64_t)prev + (uint64_t)k);
            prev = k;
            double v = ub_usdb_decimal(k, d);
            if (s == 4) {
                float x = (float)v;
                memcpy(p, &x, 4);
            } else {
                memcpy(p, &v, 8);
            }
        }
    }
}

/* A numeric block of count elements of t into dst. */
static void dec_numeric(cur *c, const ub_type *t, void *dst, uint32_t count)
{
    size_t s = ub_scalar_size(t->scalar);
    unsigned nc = ub_type_ncomp(t);
    size_t n = count;
    unsigned layout = get_u8(c);
    if (c->err)
        return;
    if (layout == UB_USDB_LAYOUT_SMALL &&
        (t->scalar == UB_SC_FLOAT || t->scalar == UB_SC_DOUBLE)) {
        dec_small(c, t, dst, n);
        return;
    }
    if (layout > UB_USDB_LAYOUT_COLUMNS ||
        (layout == UB_USDB_LAYOUT_DELTA && t->scalar != UB_SC_INT &&
         t->scalar != UB_SC_UINT && t->scalar != UB_SC_INT64 &&
         t->scalar != UB_SC_UINT64) ||
        (layout == UB_USDB_LAYOUT_COLUMNS && t->scalar != UB_SC_FLOAT &&
         t->scalar != UB_SC_DOUBLE)) {
        cur_fail(c, "unknown numeric layout %u for %s", layout, t->name);
        return;
    }
    if (layout == UB_USDB_LAYOUT_COLUMNS) {
        dec_columns(c, t, dst, n);
        return;
    }
    if (n > cur_left(c) / (nc * s)) {
        cur_fail(c, "%u %s elements overrun the record", count, t->name);
        return;
    }
    size_t bytes = n * nc * s;
    const unsigned char *src = c->p;
    unsigned char *out = dst;
    c->p += bytes;
    if (layout == UB_USDB_LAYOUT_RAW) {
        for (size_t k = 0; k < n * nc; k++, src += s) {
            uint64_t v = 0;
            for (size_t by = s; by-- > 0;)
                v = v << 8 | src[by];
            switch (s) {
            case 1:
                out[k] = (unsigned char)v;
                break;
            case 2: {
                uint16_t x = (uint16_t)v;
                memcpy(out + k * 2, &x, 2);
                break;
            }
            case 4: {
                uint32_t x = (uint32_t)v;
                memcpy(out + k * 4, &x, 4);
                break;
            }
            default:
                memcpy(out + k * 8, &v, 8);
                break;
            }
        }
        return;
    }
    unsigned bits = (unsigned)(s * 8);
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    size_t stride = nc * s;
    for (unsigned col = 0; col < nc; col++) {
        const unsigned char *planes = src + (size_t)col * s * n;
        unsigned char *p = out + col * s;
        uint64_t prev = 0;
        if (s == 4 && layout == UB_USDB_LAYOUT_SPLIT) {
            /* the common case (float vectors): a tight loop */
            const unsigned char *b0 = planes, *b1 = planes + n,
                                *b2 = planes + 2 * n, *b3 = planes + 3 * n;
            for (size_t i = 0; i < n; i++, p += stride) {
                uint32_t x = (uint32_t)b0[i] | (uint32_t)b1[i] << 8 |
                             (uint32_t)b2[i] << 16 | (uint32_t)b3[i] << 24;
                memcpy(p, &x, 4);
            }
            continue;
        }
        for (size_t i = 0; i < n; i++, p += stride) {
            uint64_t v = 0;
            for (size_t by = s; by-- > 0;)
                v = v << 8 | planes[by * n + i];
            if (layout == UB_USDB_LAYOUT_DELTA) {
                uint64_t d = (v >> 1) ^ (0 - (v & 1));
                v = (prev + d) & mask;
                prev = v;
            }
            switch (s) {
            case 1:
                *p = (unsigned char)v;
                break;
            case 2: {
                uint16_t x = (uint16_t)v;
                memcpy(p, &x, 2);
                break;
            }
            case 4: {
                uint32_t x = (uint32_t)v;
                memcpy(p, &x, 4);
                break;
            }
            default:
                memcpy(p, &v, 8);
                break;
            }
        }
    }
}

static void dec_data(cur *c, ub_arena *a, ub_value *out, int depth)
{
    const ub_type *t = ub_value_type(out);
    uint32_t count = get_vu32(c);
    if (c->err)
        return;
    size_t min = 1;
    switch (t->scalar) {
    case UB_SC_REF:
        min = 19;
        break;
    case UB_SC_OPAQUE:
    case UB_SC_NONE:
        min = 0;
        break;
    case UB_SC_STRING:
    case UB_SC_DICT:
        min = 1;
        break;
    default:
        min = numeric_min(t);
        break;
    }
    if (min && count > cur_left(c) / min) {
        cur_fail(c, "%u %s elements overrun the record", count, t->name);
        return;
    }
    /* opaque values take no bytes; the model never has more than one, and
     * a damaged count must not make writers loop for billions */
    if (!min && count > 1) {
        cur_fail(c, "%u %s elements (at most 1)", count, t->name);
        return;
    }
    ub_value v = ub_value_new(a, t, count, out->is_array);
    if (v.kind != UB_V_DATA) {
        cur_oom(c);
        return;
    }
    switch (t->scalar) {
    case UB_SC_STRING: {
        const char **s = ub_value_data(&v);
        bool asset = t->base == UB_TY_ASSET;
        for (uint32_t i = 0; i < count && !c->err; i++)
            s[i] = asset ? get_asset(c) : get_str(c);
        break;
    }
    case UB_SC_REF: {
        ub_reference *r = ub_value_data(&v);
        for (uint32_t i = 0; i < count && !c->err; i++) {
            r[i].asset = get_asset(c);
            r[i].prim_path = get_str(c);
            /* as in the crate reader: what the text can say */
            if (!c->err && *r[i].prim_path &&
                !ub_ident_prim_path_ok(r[i].prim_path))
                cur_fail(c, "<%s> is not a prim path, as a reference's or "
                            "payload's path must be",
                         r[i].prim_path);
            unsigned fl = get_u8(c);
            if (!c->err && (fl & ~7u))
                cur_fail(c, "unknown reference flags 0x%x", fl);
            r[i].has_offset = fl & 1;
            r[i].has_scale = (fl & 2) != 0;
            r[i].offset.offset = get_f64(c);
            r[i].offset.scale = get_f64(c);
            const char *bad = ub_offset_problem(r[i].offset);
            if (bad && !c->err)
                cur_fail(c, "a reference or payload: %s", bad);
            if (fl & 4)
                r[i].custom_data = dec_dict(c, a, depth + 1);
        }
        break;
    }
    case UB_SC_DICT: {
        ub_dict **d = ub_value_data(&v);
        for (uint32_t i = 0; i < count && !c->err; i++) {
            unsigned present = get_u8(c);
            if (!c->err && present > 1)
                cur_fail(c, "bad dictionary marker %u", present);
            if (present)
                d[i] = dec_dict(c, a, depth + 1);
        }
        break;
    }
    case UB_SC_OPAQUE:
    case UB_SC_NONE:
        break;
    default:
        dec_numeric(c, t, ub_value_data(&v), count);
        break;
    }
    *out = v;
}

static void dec_value_body(cur *c, ub_arena *a, ub_value *out, int depth)
{
    memset(out, 0, sizeof *out);
    if (depth > UB_USDB_MAX_DEPTH) {
        cur_fail(c, "values nested more than %d levels deep",
                 UB_USDB_MAX_DEPTH);
        return;
    }
    unsigned kind = get_u8(c), flags = get_u8(c);
    if (c->err)
        return;
    if (kind > UB_V_UNTYPED || (flags & ~3u)) {
        cur_fail(c, "unknown value kind %u / flags 0x%x", kind, flags);
        return;
    }
    out->is_array = flags & 1;
    if (flags & 2)
        ub_value_set_type(out, get_type(c));
    if (c->err)
        return;
    switch ((ub_vkind)kind) {
    case UB_V_EMPTY:
    case UB_V_BLOCK:
        break;
    case UB_V_DATA:
        if (!ub_value_type(out)) {
            cur_fail(c, "typed data without a type");
            return;
        }
        dec_data(c, a, out, depth);
        break;
    case UB_V_DICT:
        out->u.dict = dec_dict(c, a, depth);
        break;
    case UB_V_LISTOP: {
        ub_listop *lo = ub_listop_new(a);
        if (!lo) {
            cur_oom(c);
            return;
        }
        unsigned ex = get_u8(c), has = get_u8(c);
        if (!c->err && (ex > 1 || has >= 1u << UB_LO_NPARTS))
            cur_fail(c, "bad list op header %u/0x%x", ex, has);
        lo->is_explicit = ex;
        for (int p = 0; p < UB_LO_NPARTS && !c->err; p++) {
            if (!(has & (1u << p)))
                continue;
            lo->has[p] = true;
            ub_value part = {0};
            dec_value_body(c, a, &part, depth + 1);
            if (ub_listop_put(a, lo, (ub_listop_part)p, part) != 0) {
                cur_oom(c);
                return;
            }
        }
        out->u.listop = lo;
        break;
    }
    case UB_V_UNTYPED: {
        ub_untyped *u = ub_arena_zalloc(a, sizeof *u);
        if (!u) {
            cur_oom(c);
            return;
        }
        dec_untyped(c, a, u, depth + 1, -1);
        out->u.untyped = u;
        break;
    }
    }
    if (c->err)
        memset(out, 0, sizeof *out);
    else
        out->kind = (uint8_t)kind;
}

/* Value record rec (a val: 0 is EMPTY) into *out. */
static int read_val(ub_usdb *f, uint32_t val, ub_arena *a, ub_value *out)
{
    memset(out, 0, sizeof *out);
    if (val == 0)
        return 0;
    if (val - 1 >= f->nrecs) { /* validated at open; belt and braces */
        ub_usdb_err(f, "section SKEL (tree)", "record %u out of range",
                    val - 1);
        return -1;
    }
    cur c;
    if (rec_bytes(f, val - 1, &c) != 0)
        return -1;
    if (get_u8(&c) != UB_USDB_REC_VALUE && !c.err)
        cur_fail(&c, "expected a value record");
    dec_value_body(&c, a, out, 0);
    if (!c.err && c.p != c.end)
        cur_fail(&c, "%zu bytes left over", cur_left(&c));
    if (c.err) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}

/* Decode series record rec into the one-entry cache. */
static int read_series(ub_usdb *f, uint32_t series)
{
    if (f->cache.rec == series)
        return 0;
    cache_clear(f);
    cur c;
    if (rec_bytes(f, series - 1, &c) != 0)
        return -1;
    rseries s = {0};
    if (get_u8(&c) != UB_USDB_REC_SERIES && !c.err)
        cur_fail(&c, "expected a time-sample series record");
    s.n = get_vu32(&c);
    unsigned tl = get_u8(&c);
    if (!c.err && tl > UB_USDB_TIMES_ARITH)
        cur_fail(&c, "unknown time layout %u", tl);
    if (!c.err && tl == UB_USDB_TIMES_RAW && s.n > cur_left(&c) / 8)
        cur_fail(&c, "%u sample times overrun the record", s.n);
    /* Arithmetic times cost 16 bytes for any n, so n is capped by the
     * per-sample data that must follow (at least a byte each). */
    if (!c.err && tl == UB_USDB_TIMES_ARITH && s.n > cur_left(&c))
        cur_fail(&c, "%u samples overrun the record", s.n);
    if (!c.err) {
        s.times = malloc((s.n ? s.n : 1) * sizeof *s.times);
        if (!s.times)
            cur_oom(&c);
    }
    if (!c.err && tl == UB_USDB_TIMES_RAW) {
        for (uint32_t i = 0; i < s.n; i++)
            s.times[i] = get_f64(&c);
    } else if (!c.err) {
        double t0 = get_f64(&c), step = get_f64(&c);
        for (uint32_t i = 0; i < s.n; i++) {
            double m = (double)i * step; /* no fused multiply-add */
            s.times[i] = t0 + m;
        }
    }
    unsigned mode = get_u8(&c);
    if (!c.err && mode == UB_USDB_SERIES_RECS) {
        s.ids = malloc((s.n ? s.n : 1) * sizeof *s.ids);
        if (!s.ids)
            cur_oom(&c);
        int64_t prev = 0;
        for (uint32_t i = 0; i < s.n && !c.err; i++) {
            int64_t r = (int64_t)((uint64_t)prev +
                                  (uint64_t)unzigzag64(get_vu(&c)));
            if (!c.err && (r < 0 || r >= (int64_t)f->nrecs))
                cur_fail(&c, "record %lld out of range", (long long)r);
            s.ids[i] = (uint32_t)r;
            prev = r;
        }
    } else if (!c.err && mode == UB_USDB_SERIES_PACKED) {
        const ub_type *t = get_type(&c);
        if (t && (t->scalar == UB_SC_STRING || t->scalar == UB_SC_REF ||
                  t->scalar == UB_SC_DICT || t->scalar == UB_SC_OPAQUE ||
                  t->scalar == UB_SC_NONE))
            cur_fail(&c, "type %s cannot be packed", t->name);
        if (!c.err && s.n > cur_left(&c) / numeric_min(t))
            cur_fail(&c, "%u samples overrun the record", s.n);
        if (!c.err) {
            s.arena = ub_arena_new();
            s.packed = s.arena ? ub_value_new(s.arena, t, s.n, true)
                               : (ub_value){0};
            if (s.packed.kind != UB_V_DATA)
                cur_oom(&c);
            else
                dec_numeric(&c, t, ub_value_data(&s.packed), s.n);
        }
    } else if (!c.err) {
        cur_fail(&c, "unknown series mode %u", mode);
    }
    if (!c.err && c.p != c.end)
        cur_fail(&c, "%zu bytes left over", cur_left(&c));
    if (c.err) {
        free(s.times);
        free(s.ids);
        ub_arena_free(s.arena);
        return -1;
    }
    s.rec = series;
    f->cache = s;
    return 0;
}

/* Sample i of the cached series. */
static int cached_sample(ub_usdb *f, uint32_t i, ub_arena *a, ub_value *out)
{
    if (f->cache.ids) {
        if (read_val(f, f->cache.ids[i] + 1, a, out) != 0)
            return -1;
        const char *what = ub_value_not_sample(out);
        if (what) {
            char where[48];
            snprintf(where, sizeof where, "section DATA record %u",
                     f->cache.rec - 1);
            ub_usdb_err(f, where, "sample %u holds %s, which no "
                        "attribute's type allows", i, what);
            return -1;
        }
        return 0;
    }
    const ub_value *p = &f->cache.packed;
    *out = ub_value_new(a, ub_value_type(p), 1, false);
    if (out->kind != UB_V_DATA) {
        ub_usdb_oom(f);
        return -1;
    }
    memcpy(ub_value_data(out), ub_value_elem(p, i),
           ub_type_elem_size(ub_value_type(p)));
    return 0;
}

/* --- the tree API ------------------------------------------------------ */

#define PRIM_OK(f, p) ((p) < (f)->nprims)
#define PROP_OK(f, p) ((p) < (f)->nprops)

void ub_usdb_layer_fields(const ub_usdb *f, uint32_t *first, uint32_t *n)
{
    *first = f->layer_first_field;
    *n = f->layer_n_fields;
}

uint32_t ub_usdb_sublayer_count(const ub_usdb *f)
{
    return f->nsubs;
}

const char *ub_usdb_sublayer(const ub_usdb *f, uint32_t i, ub_offset *off,
                             bool *has_offset, bool *has_scale)
{
    if (i >= f->nsubs)
        return NULL;
    const rsub *s = &f->subs[i];
    if (off)
        *off = (ub_offset){s->offset, s->scale};
    if (has_offset)
        *has_offset = s->flags & 1;
    if (has_scale)
        *has_scale = (s->flags & 2) != 0;
    return f->strs[s->asset];
}

uint32_t ub_usdb_prim_count(const ub_usdb *f)
{
    return f->nprims;
}

const char *ub_usdb_prim_name(const ub_usdb *f, uint32_t p)
{
    return PRIM_OK(f, p) ? f->strs[f->prims[p].name] : NULL;
}

ub_specifier ub_usdb_prim_specifier(const ub_usdb *f, uint32_t p)
{
    return PRIM_OK(f, p) ? (ub_specifier)f->prims[p].spec : UB_OVER;
}

const char *ub_usdb_prim_type_name(const ub_usdb *f, uint32_t p)
{
    return PRIM_OK(f, p) ? opt_str(f, f->prims[p].type_name) : NULL;
}

uint32_t ub_usdb_prim_parent(const ub_usdb *f, uint32_t p)
{
    return PRIM_OK(f, p) ? f->prims[p].parent : UB_USDB_NONE;
}

uint32_t ub_usdb_prim_child_count(const ub_usdb *f, uint32_t p)
{
    return PRIM_OK(f, p) ? f->prims[p].n_children : 0;
}

uint32_t ub_usdb_prim_child(const ub_usdb *f, uint32_t p, uint32_t i)
{
    return PRIM_OK(f, p) && i < f->prims[p].n_children
               ? f->prims[p].first_child + i
               : UB_USDB_NONE;
}

uint32_t ub_usdb_prim_prop_count(const ub_usdb *f, uint32_t p)
{
    return PRIM_OK(f, p) ? f->prims[p].n_props : 0;
}

uint32_t ub_usdb_prim_prop(const ub_usdb *f, uint32_t p, uint32_t i)
{
    return PRIM_OK(f, p) && i < f->prims[p].n_props
               ? f->prims[p].first_prop + i
               : UB_USDB_NONE;
}

void ub_usdb_prim_fields(const ub_usdb *f, uint32_t p, uint32_t *first,
                         uint32_t *n)
{
    *first = PRIM_OK(f, p) ? f->prims[p].first_field : 0;
    *n = PRIM_OK(f, p) ? f->prims[p].n_fields : 0;
}

int ub_usdb_prim_orders(ub_usdb *f, uint32_t p, ub_arena *a,
                        ub_value *prim_order, ub_value *property_order)
{
    if (!PRIM_OK(f, p))
        return -1;
    if (read_val(f, f->prims[p].prim_order, a, prim_order) != 0)
        return -1;
    return read_val(f, f->prims[p].prop_order, a, property_order);
}

uint32_t ub_usdb_prim_variant_set_count(const ub_usdb *f, uint32_t p)
{
    return PRIM_OK(f, p) ? f->prims[p].n_vsets : 0;
}

const char *ub_usdb_variant_set(const ub_usdb *f, uint32_t p, uint32_t i,
                                uint32_t *n_variants)
{
    if (!PRIM_OK(f, p) || i >= f->prims[p].n_vsets)
        return NULL;
    const rvset *vs = &f->vsets[f->prims[p].first_vset + i];
    if (n_variants)
        *n_variants = vs->n_variants;
    return f->strs[vs->name];
}

uint32_t ub_usdb_variant(const ub_usdb *f, uint32_t p, uint32_t set,
                         uint32_t i)
{
    if (!PRIM_OK(f, p) || set >= f->prims[p].n_vsets)
        return UB_USDB_NONE;
    const rvset *vs = &f->vsets[f->prims[p].first_vset + set];
    return i < vs->n_variants ? vs->first_variant + i : UB_USDB_NONE;
}

static bool name_is(const char *interned, const char *s, size_t n)
{
    return ub_str_len(interned) == n && memcmp(interned, s, n) == 0;
}

uint32_t ub_usdb_find_prim(const ub_usdb *f, const char *path)
{
    if (!path || path[0] != '/' || !f->nprims)
        return UB_USDB_NONE;
    uint32_t cur_p = 0;
    const char *s = path;
    while (*s) {
        if (*s == '/') {
            s++;
            continue;
        }
        const rprim *p = &f->prims[cur_p];
        if (*s == '{') {
            const char *eq = strchr(s, '='), *close = strchr(s, '}');
            if (!eq || !close || eq > close)
                return UB_USDB_NONE;
            uint32_t found = UB_USDB_NONE;
            for (uint32_t i = 0; i < p->n_vsets && found == UB_USDB_NONE;
                 i++) {
                const rvset *vs = &f->vsets[p->first_vset + i];
                if (!name_is(f->strs[vs->name], s + 1, (size_t)(eq - s - 1)))
                    continue;
                for (uint32_t k = 0; k < vs->n_variants; k++)
                    if (name_is(f->strs[f->prims[vs->first_variant + k].name],
                                eq + 1, (size_t)(close - eq - 1)))
                        found = vs->first_variant + k;
            }
            if (found == UB_USDB_NONE)
                return UB_USDB_NONE;
            cur_p = found;
            s = close + 1;
            continue;
        }
        size_t n = strcspn(s, "/{");
        uint32_t found = UB_USDB_NONE;
        for (uint32_t i = 0; i < p->n_children; i++)
            if (name_is(f->strs[f->prims[p->first_child + i].name], s, n)) {
                found = p->first_child + i;
                break;
            }
        if (found == UB_USDB_NONE)
            return UB_USDB_NONE;
        cur_p = found;
        s += n;
    }
    return cur_p;
}

const char *ub_usdb_prop_name(const ub_usdb *f, uint32_t p)
{
    return PROP_OK(f, p) ? f->strs[f->props[p].name] : NULL;
}

ub_prop_kind ub_usdb_prop_kind(const ub_usdb *f, uint32_t p)
{
    return PROP_OK(f, p) && (f->props[p].flags & 1) ? UB_REL : UB_ATTR;
}

const ub_type *ub_usdb_prop_type(const ub_usdb *f, uint32_t p)
{
    return PROP_OK(f, p) ? f->props[p].type : NULL;
}

const char *ub_usdb_prop_type_name(const ub_usdb *f, uint32_t p)
{
    return PROP_OK(f, p) ? opt_str(f, f->props[p].type_name) : NULL;
}

bool ub_usdb_prop_is_array(const ub_usdb *f, uint32_t p)
{
    return PROP_OK(f, p) && (f->props[p].flags & 8);
}

ub_variability ub_usdb_prop_variability(const ub_usdb *f, uint32_t p)
{
    return PROP_OK(f, p) ? (ub_variability)f->props[p].variability
                         : UB_VARYING;
}

bool ub_usdb_prop_custom(const ub_usdb *f, uint32_t p)
{
    return PROP_OK(f, p) && (f->props[p].flags & 2);
}

void ub_usdb_prop_fields(const ub_usdb *f, uint32_t p, uint32_t *first,
                         uint32_t *n)
{
    *first = PROP_OK(f, p) ? f->props[p].first_field : 0;
    *n = PROP_OK(f, p) ? f->props[p].n_fields : 0;
}

uint32_t ub_usdb_find_prop(const ub_usdb *f, uint32_t prim, const char *name)
{
    if (!PRIM_OK(f, prim) || !name)
        return UB_USDB_NONE;
    const rprim *p = &f->prims[prim];
    size_t n = strlen(name);
    for (uint32_t i = 0; i < p->n_props; i++)
        if (name_is(f->strs[f->props[p->first_prop + i].name], name, n))
            return p->first_prop + i;
    return UB_USDB_NONE;
}

static int prop_value(ub_usdb *f, const ub_prop *p, ub_value *v, double t,
                      ub_arena *a);
static int prop_paths(ub_usdb *f, const char *name, const ub_value *v);
static int field_value(ub_usdb *f, uint32_t fl, ub_spec_kind spec,
                       ub_arena *a, ub_value *out);

/* Property p as the layer build makes it, as far as its values are held
 * to it: the lazy reads give what a layer read would, or fail as it
 * would. */
static ub_prop lazy_prop(const ub_usdb *f, uint32_t p)
{
    const rprop *rp = &f->props[p];
    return (ub_prop){.name = f->strs[rp->name],
                     .kind = (rp->flags & 1) ? UB_REL : UB_ATTR,
                     .is_array = (rp->flags & 8) != 0,
                     .type_id = rp->type ? rp->type->id : UB_TY_INVALID};
}

int ub_usdb_prop_default(ub_usdb *f, uint32_t p, ub_arena *a, ub_value *out)
{
    memset(out, 0, sizeof *out);
    if (!PROP_OK(f, p) || read_val(f, f->props[p].def, a, out) != 0)
        return -1;
    ub_prop q = lazy_prop(f, p);
    return prop_value(f, &q, out, NAN, a);
}

int ub_usdb_prop_targets(ub_usdb *f, uint32_t p, ub_arena *a, ub_value *out)
{
    memset(out, 0, sizeof *out);
    if (!PROP_OK(f, p) || read_val(f, f->props[p].targets, a, out) != 0)
        return -1;
    return prop_paths(f, f->strs[f->props[p].name], out);
}

int ub_usdb_prop_connections(ub_usdb *f, uint32_t p, ub_arena *a,
                             ub_value *out)
{
    memset(out, 0, sizeof *out);
    if (!PROP_OK(f, p) || read_val(f, f->props[p].conn, a, out) != 0)
        return -1;
    return prop_paths(f, f->strs[f->props[p].name], out);
}

int ub_usdb_sample_times(ub_usdb *f, uint32_t p, ub_arena *a,
                         const double **times, uint32_t *n)
{
    *times = NULL;
    *n = 0;
    if (!PROP_OK(f, p))
        return -1;
    if (!f->props[p].series)
        return 0;
    if (read_series(f, f->props[p].series) != 0)
        return -1;
    if (!f->cache.n)
        return 0;
    double *t = ub_arena_alloc(a, f->cache.n * sizeof *t);
    if (!t)
        return -1;
    memcpy(t, f->cache.times, f->cache.n * sizeof *t);
    *times = t;
    *n = f->cache.n;
    return 0;
}

int ub_usdb_sample(ub_usdb *f, uint32_t p, uint32_t i, ub_arena *a,
                   ub_value *out)
{
    memset(out, 0, sizeof *out);
    if (!PROP_OK(f, p) || !f->props[p].series)
        return -1;
    if (read_series(f, f->props[p].series) != 0)
        return -1;
    if (i >= f->cache.n || cached_sample(f, i, a, out) != 0)
        return -1;
    ub_prop q = lazy_prop(f, p);
    return prop_value(f, &q, out, f->cache.times[i], a);
}

const char *ub_usdb_field_key(const ub_usdb *f, uint32_t fl)
{
    return fl < f->nfields ? f->strs[f->fields[fl].key] : NULL;
}

static void field_spec_mark(uint8_t *spec, uint32_t first, uint32_t n,
                            ub_spec_kind kind)
{
    memset(spec + first, (int)kind, n);
}

/* The kind of spec field fl belongs to: each field was read as one
 * owner's (dec_fields), so the owners' ranges tell; the map is made the
 * first time it is asked for.  -1 when out of memory. */
static int field_spec(ub_usdb *f, uint32_t fl, ub_spec_kind *kind)
{
    if (!f->field_spec) {
        uint8_t *m = malloc(f->nfields ? f->nfields : 1);
        if (!m) {
            ub_usdb_oom(f);
            return -1;
        }
        memset(m, UB_SPEC_PRIM, f->nfields);
        field_spec_mark(m, f->layer_first_field, f->layer_n_fields,
                        UB_SPEC_LAYER);
        for (uint32_t i = 0; i < f->nprops; i++)
            field_spec_mark(m, f->props[i].first_field, f->props[i].n_fields,
                            (f->props[i].flags & 1) ? UB_SPEC_REL
                                                    : UB_SPEC_ATTR);
        f->field_spec = m;
    }
    *kind = (ub_spec_kind)f->field_spec[fl];
    return 0;
}

int ub_usdb_field_value(ub_usdb *f, uint32_t fl, ub_arena *a, ub_value *out)
{
    memset(out, 0, sizeof *out);
    ub_spec_kind kind;
    if (fl >= f->nfields || field_spec(f, fl, &kind) != 0)
        return -1;
    return field_value(f, fl, kind, a, out);
}

/* --- whole layer ------------------------------------------------------- */

/* The role of string str as a field's name on a spec of this kind. */
static const ub_metadef_role *field_role(ub_usdb *f, uint32_t str,
                                         ub_spec_kind spec)
{
    size_t n = sizeof f->roles / sizeof *f->roles;
    size_t h = ((size_t)str * 4 + (size_t)spec) % n;
    if (f->roles[h].key != str + 1 || f->roles[h].spec != spec) {
        f->roles[h].key = str + 1;
        f->roles[h].spec = spec;
        f->roles[h].role = ub_metadef_role_of(f->strs[str], spec);
    }
    return &f->roles[h].role;
}

/* Field fl's value, on a spec of this kind, held to the shape its text
 * has (runtime/ub_metadef.h). */
static int field_value(ub_usdb *f, uint32_t fl, ub_spec_kind spec,
                       ub_arena *a, ub_value *out)
{
    const rfield *r = &f->fields[fl];
    if (read_val(f, r->val, a, out) != 0)
        return -1;
    char why[160];
    const char *key = f->strs[r->key];
    const char *fault = ub_metadef_check(field_role(f, r->key, spec), key,
                                         spec, out, why, sizeof why);
    if (!fault)
        return 0;
    ub_usdb_err(f, "section SKEL (tree)", "field '%s': %s", key, fault);
    return -1;
}

/* The metadata of a spec of this kind, each field held to the shape its
 * text has (runtime/ub_metadef.h), as the crate reader holds it: a
 * writer's bug, or a layer an API user built, must not reach the text as
 * something the usda reader refuses or reads as another value. */
static int build_fields(ub_usdb *f, ub_layer *L, uint32_t first, uint32_t n,
                        ub_fields *out, ub_sloc loc, ub_spec_kind spec)
{
    if (!n)
        return 0;
    out->v = ub_arena_zalloc_align(L->arena, n * sizeof *out->v,
                                   alignof(ub_field));
    if (!out->v)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        out->v[i].key = f->strs[f->fields[first + i].key];
        out->v[i].loc = loc;
        if (field_value(f, first + i, spec, L->arena, &out->v[i].value) != 0)
            return -1;
        out->n = out->cap = i + 1;
    }
    return 0;
}

/* Relationship p's default (t NaN) or sample at time t as the text says
 * them: no default value (its target is apart), and a sample None or a
 * path, since the usda reader takes nothing else (a path's text was held
 * to what a path value may say as it was read: dec_untyped). */
static int rel_value(ub_usdb *f, const ub_prop *p, const ub_value *v,
                     double t)
{
    const char *fault = NULL;
    if (isnan(t)) {
        if (v->kind != UB_V_EMPTY)
            fault = "a relationship has no default value";
    } else if (v->kind != UB_V_BLOCK &&
               (v->kind != UB_V_UNTYPED || v->u.untyped->kind != UB_U_PATH)) {
        fault = "a relationship's time samples are paths or None";
    }
    if (!fault)
        return 0;
    ub_usdb_err(f, "section SKEL (tree)", "property '%s': %s", p->name,
                fault);
    return -1;
}

/* Property p's default (t NaN) or sample at time t: a relationship's as
 * rel_value says; an attribute's given p's type (a clip bake's doubles in
 * a float attribute are converted, as the crate reader converts them) and
 * held to it (ub_prop_value_fault). */
static int prop_value(ub_usdb *f, const ub_prop *p, ub_value *v, double t,
                      ub_arena *a)
{
    if (p->kind != UB_ATTR)
        return rel_value(f, p, v, t);
    if (ub_value_retype(a, v, ub_prop_type(p)) != 0) {
        ub_usdb_oom(f);
        return -1;
    }
    char why[160];
    const char *fault = ub_prop_value_fault(p, v, t, why, sizeof why);
    if (fault) {
        ub_usdb_err(f, "section SKEL (tree)", "property '%s': %s", p->name,
                    fault);
        return -1;
    }
    /* a pathExpression must parse, and is kept as the crate reader keeps
     * one (its canonical text) */
    const char *bad = NULL;
    switch (ub_pathexpr_canon_value(a, f->strtab, v, &bad)) {
    case UB_PATHEXPR_OK:
        return 0;
    case UB_PATHEXPR_SYNTAX:
        ub_usdb_err(f, "section SKEL (tree)",
                    "property '%s': invalid pathExpression \"%.200s\"",
                    p->name, bad);
        return -1;
    default:
        ub_usdb_oom(f);
        return -1;
    }
}

/* Property `name`'s targets or connections v as the text says them. */
static int prop_paths(ub_usdb *f, const char *name, const ub_value *v)
{
    char why[160];
    const char *fault = ub_prop_paths_fault(v, why, sizeof why);
    if (!fault)
        return 0;
    ub_usdb_err(f, "section SKEL (tree)", "property '%s': %s", name, fault);
    return -1;
}

static int ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const char *const *)a;
    uintptr_t y = (uintptr_t)*(const char *const *)b;
    return x < y ? -1 : x > y;
}

/* *twin: a name two of set vs's variants have (names are interned: equal
 * names are one pointer), or NULL; sorted, so a set of many variants
 * costs n log n, not n * n.  -1 when out of memory. */
static int variant_twin(const ub_usdb *f, const rvset *vs,
                        const char **twin)
{
    uint32_t n = vs->n_variants;
    *twin = NULL;
    if (n < 2)
        return 0;
    const char **v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    for (uint32_t k = 0; k < n; k++)
        v[k] = f->strs[f->prims[vs->first_variant + k].name];
    qsort(v, n, sizeof *v, ptr_cmp);
    for (uint32_t k = 1; k < n && !*twin; k++)
        if (v[k] == v[k - 1])
            *twin = v[k];
    free(v);
    return 0;
}

/* A second sibling of a name: damage. */
static int twice(ub_usdb *f, const char *what, const char *name)
{
    ub_usdb_err(f, "section SKEL (tree)", "%s '%s' twice among siblings",
                what, name);
    return -1;
}

static int build_prop(ub_usdb *f, ub_layer *L, ub_prim *prim, uint32_t pi,
                      ub_sloc loc)
{
    const rprop *rp = &f->props[pi];
    bool created;
    ub_prop *p = ub_prop_find_or_new(L, prim, f->strs[rp->name],
                                     (rp->flags & 1) ? UB_REL : UB_ATTR, loc,
                                     &created);
    if (!p)
        return -1;
    if (!created)
        return twice(f, "property", p->name);
    p->custom = rp->flags & 2;
    p->varying_keyword = (rp->flags & 4) != 0;
    p->is_array = (rp->flags & 8) != 0;
    p->variability = (ub_variability)rp->variability;
    if (ub_prop_set_decl(L->arena, L->strtab, p, rp->type,
                         opt_str(f, rp->type_name)) != 0)
        return -1;
    const char *default_target = opt_str(f, rp->default_target);
    ub_value conn, targets;
    if (read_val(f, rp->def, L->arena, &p->default_value) != 0 ||
        read_val(f, rp->conn, L->arena, &conn) != 0 ||
        read_val(f, rp->targets, L->arena, &targets) != 0 ||
        prop_value(f, p, &p->default_value, NAN, L->arena) != 0)
        return -1;
    /* targets and connections as the text says them; a default target
     * any path (the usda reader keeps it as written) */
    if (prop_paths(f, p->name, &conn) != 0 ||
        prop_paths(f, p->name, &targets) != 0)
        return -1;
    if (default_target && *default_target &&
        !ub_ident_path_ok(default_target)) {
        ub_usdb_err(f, "section SKEL (tree)",
                    "property '%s': its default target is no path", p->name);
        return -1;
    }
    bool authored = (rp->flags & 16) != 0;
    if (default_target || conn.kind != UB_V_EMPTY ||
        targets.kind != UB_V_EMPTY || authored || rp->series) {
        ub_prop_ext *x = ub_prop_ext_get(L->arena, p);
        if (!x)
            return -1;
        x->default_target = default_target;
        x->connections = conn;
        x->targets = targets;
        x->samples.authored = authored;
        x->samples.loc = loc;
    }
    if (rp->series) {
        if (read_series(f, rp->series) != 0)
            return -1;
        ub_prop_ext *px = ub_prop_ext_get(L->arena, p);
        if (!px)
            return -1;
        ub_samples *s = &px->samples;
        uint32_t n = f->cache.n;
        if (n) {
            s->v = ub_arena_zalloc(L->arena, n * sizeof(ub_sample));
            if (!s->v)
                return -1;
        }
        for (uint32_t i = 0; i < n; i++) {
            s->v[i].time = f->cache.times[i];
            if (cached_sample(f, i, L->arena, &s->v[i].value) != 0 ||
                prop_value(f, p, &s->v[i].value, s->v[i].time,
                           L->arena) != 0)
                return -1;
            s->n = s->cap = i + 1;
        }
    }
    ub_fields meta = {0};
    if (build_fields(f, L, rp->first_field, rp->n_fields, &meta, loc,
                     p->kind == UB_REL ? UB_SPEC_REL : UB_SPEC_ATTR) != 0)
        return -1;
    return ub_prop_set_meta(L->arena, p, &meta);
}

/* The warning of a reference's or payload's offset of +inf among a
 * prim's fields, naming the prim as the crate reader names a spec
 * ("file:</path>"): -1 when out of memory. */
static int warn_unreadable_offsets(ub_usdb *f, ub_layer *L,
                                   const ub_prim *prim)
{
    ub_loc where = {NULL, 0, 0};
    for (uint32_t i = 0; i < prim->meta.n; i++) {
        const ub_value *v = &prim->meta.v[i].value;
        if (!ub_value_offsets_unreadable(v))
            continue;
        if (!where.file) {
            /* (interned, as a crate spec's text: it outlives the layer) */
            const char *path = ub_prim_path(L, prim);
            size_t n = path ? strlen(L->path) + strlen(path) + 4 : 0;
            char *text = n ? malloc(n) : NULL;
            if (text)
                snprintf(text, n, "%s:<%s>", L->path, path);
            where.file = text ? ub_intern_cstr(f->strtab, text) : NULL;
            free(text);
            if (!where.file)
                return -1;
        }
        ub_value_warn_unreadable_offsets(f->diags, where, v);
    }
    return 0;
}

static int build_prim(ub_usdb *f, ub_layer *L, uint32_t pi, ub_prim *prim,
                      ub_sloc loc)
{
    const rprim rp = f->prims[pi];
    prim->specifier = (ub_specifier)rp.spec;
    prim->type_name = opt_str(f, rp.type_name);
    if (build_fields(f, L, rp.first_field, rp.n_fields, &prim->meta, loc,
                     UB_SPEC_PRIM) != 0 ||
        warn_unreadable_offsets(f, L, prim) != 0 ||
        ((rp.prim_order || rp.prop_order) &&
         (!ub_prim_ext_get(L->arena, prim) ||
          read_val(f, rp.prim_order, L->arena, &prim->ext->prim_order) != 0 ||
          read_val(f, rp.prop_order, L->arena, &prim->ext->property_order) !=
              0)))
        return -1;
    for (uint32_t i = 0; i < rp.n_props; i++)
        if (build_prop(f, L, prim, rp.first_prop + i, loc) != 0)
            return -1;
    /* (names are unique among siblings, as the usda reader holds them:
     * it refuses a second prim, variant set or variant of a name, and
     * merges or refuses a second property) */
    for (uint32_t i = 0; i < rp.n_children; i++) {
        uint32_t ci = rp.first_child + i;
        ub_prim *twin;
        ub_prim *c = ub_prim_find_or_new(L, prim, f->strs[f->prims[ci].name],
                                         (ub_specifier)f->prims[ci].spec, loc,
                                         &twin);
        if (c && twin)
            return twice(f, "prim", c->name);
        if (!c || build_prim(f, L, ci, c, loc) != 0)
            return -1;
    }
    for (uint32_t i = 0; i < rp.n_vsets; i++) {
        const rvset *vs = &f->vsets[rp.first_vset + i];
        if (ub_variant_set_find(prim, f->strs[vs->name]))
            return twice(f, "variant set", f->strs[vs->name]);
        ub_variant_set *set =
            ub_variant_set_get(L, prim, f->strs[vs->name], loc);
        if (!set)
            return -1;
        const char *twin;
        if (variant_twin(f, vs, &twin) != 0)
            return -1; /* (out of memory: said by the caller) */
        if (twin)
            return twice(f, "variant", twin);
        for (uint32_t k = 0; k < vs->n_variants; k++) {
            uint32_t vi = vs->first_variant + k;
            ub_prim *v = ub_variant_new(L, prim, set,
                                        f->strs[f->prims[vi].name], loc);
            if (!v || build_prim(f, L, vi, v, loc) != 0)
                return -1;
        }
    }
    return 0;
}

ub_layer *ub_usdb_read_layer(ub_usdb *f, const char *path)
{
    size_t errors = ub_diags_errors(f->diags);
    ub_layer *L = ub_layer_new(f->strtab, path ? path : f->name);
    if (!L) {
        ub_usdb_oom(f);
        return NULL;
    }
    ub_sloc loc =
        ub_layer_sloc(L, (ub_loc){ub_intern_cstr(f->strtab, L->path), 0, 0});
    int rc = build_fields(f, L, f->layer_first_field, f->layer_n_fields,
                          &L->meta, loc, UB_SPEC_LAYER);
    L->has_sublayers = f->has_sublayers;
    for (uint32_t i = 0; rc == 0 && i < f->nsubs; i++) {
        ub_sublayer *s = ub_layer_add_sublayer(L, f->strs[f->subs[i].asset],
                                               loc);
        if (!s) {
            rc = -1;
            break;
        }
        s->offset = (ub_offset){f->subs[i].offset, f->subs[i].scale};
        ub_offset_warn_unreadable(f->diags, ub_layer_loc(L, loc), s->offset,
                                  "sublayer", s->asset);
        s->has_offset = f->subs[i].flags & 1;
        s->has_scale = (f->subs[i].flags & 2) != 0;
    }
    L->has_sublayers = f->has_sublayers;
    if (rc == 0)
        rc = build_prim(f, L, 0, L->root, loc);
    if (rc != 0) {
        if (ub_diags_errors(f->diags) == errors)
            ub_usdb_oom(f);
        ub_layer_free(L);
        return NULL;
    }
    return L;
}

ub_layer *ub_usdb_load(ub_strtab *t, const char *path, const void *data,
                       size_t len, ub_diags *diags)
{
    ub_usdb *f = ub_usdb_open_memory(data, len, path, t, diags);
    if (!f)
        return NULL;
    ub_layer *L = ub_usdb_read_layer(f, path);
    ub_usdb_close(f);
    return L;
}
