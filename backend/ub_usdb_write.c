/* The .usdb writer: see doc/binary-format.md for every byte written here. */
#include "ub_usdb_write.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
/* inline: most records are a few bytes, where the call is the cost */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

#include "ub_cpus.h"
#include "ub_idtab.h"
#include "ub_prefetch.h"
#include "ub_usdb_format.h"

/* An entry of the string cache: the interned pointer and its id. */
typedef struct ub_w_sslot {
    const char *s; /* NULL: empty */
    uint32_t id;
} ub_w_sslot;

/* The record cache keeps the whole hash and length, and the bytes of a
 * short record: hot records lie all over recs, and comparing against
 * them there costs a TLB and a cache miss each. */
#define UB_W_RBYTES 48
typedef struct ub_w_rcent {
    uint64_t hash;
    uint32_t id1, len;
    char bytes[UB_W_RBYTES];
} ub_w_rcent;

typedef struct ub_w_section {
    uint32_t tag, codec;
    uint64_t offset, stored, raw, hash;
} ub_w_section;

/* A record the tree walk encoded, waiting to be numbered. */
typedef struct ub_w_pend {
    uint64_t hash;
    size_t len;
    size_t hole; /* offset of its reference in the batch's tree bytes, or
                    SIZE_MAX when the tree does not refer to it */
    uint32_t id; /* set when numbered */
    uint8_t kind; /* enum below */
} ub_w_pend;
/* A series' per-sample records are numbered before the series, whose
 * record ends in their ids: the walk encodes the samples (SAMPLE) and the
 * series up to its ids (SERIES), and the numbering side appends the ids,
 * then hashes it. */
enum { UB_W_PLAIN, UB_W_SAMPLE, UB_W_SERIES, UB_W_COUNT };
/* UB_W_COUNT is no record: a streamed prim's child count, known only when
 * the prim closes, goes at its hole; the numbering side notes where that
 * is in the tree (count_at), and the skeleton gets the counts put in. */
/* A batch ends at this many records or bytes of records: big enough that
 * handing over (a lock, maybe a wake-up) is rare, small enough that the
 * numbering side need not wait long for work.  A streamed convert runs
 * the walk while the parse's second thread runs too, three threads on
 * two CPUs: at 256 records and 64 KiB the hand-overs tripled the context
 * switches and cost 4% of convert's time on the prim bench layer. */
#define UB_W_NPEND 1024
#define UB_W_BATCH_BYTES ((size_t)256 << 10)
/* Batches handed over and not yet numbered, at most: the walk outruns
 * the numbering, and without a bound a numbering thread short of CPU let
 * every batch of a big layer wait in the queue (under valgrind, 6.7 MB
 * of the 20 MB bench layer's 59 MB heap peak). */
#define UB_W_QUEUE_MAX 8

/* What the walk hands to the numbering thread: records encoded one after
 * another, and the tree bytes written meanwhile with holes where the
 * records' references go. */
typedef struct ub_w_batch {
    struct ub_w_batch *next;
    ub_buf recs, tree;
    ub_w_pend pend[UB_W_NPEND];
    unsigned npend;
} ub_w_batch;

/* Direct-mapped caches in front of the tables: a layer names the same few
 * keys, type names and small values (a token, an xformOpOrder) over and
 * over, and these stay in L1 while the big tables do not. */
#define UB_W_SCACHE 4096
#define UB_W_SCACHE_SHIFT 52 /* 64 - log2(UB_W_SCACHE) */
#define UB_W_RCACHE 1024
/* The records of the last UB_W_HELD compressed chunks stay (4 to 8 MiB): a
 * record recurs soon or not at all, mostly; they go UB_W_HELD at a time,
 * so that moving the rest down costs one copy of the records in all.
 * UB_W_DZ chunks that went stay decompressed, for the comparisons. */
#define UB_W_HELD 16
#define UB_W_DZ 8

/* The numbering side: deduplicates records, numbers them in order, fills
 * the tree's record references in, closes chunks and compresses them
 * once the level is known.  It runs on its own thread while the walk
 * encodes (or inline when no thread can be had); batches are taken in
 * order, so the bytes are those of doing everything in one thread. */
typedef struct ub_w_num {
    /* records, concatenated; rec_off has nrecs + 1 entries, offsets into
     * all of them.  recs holds them from recs_base on: the records of
     * compressed chunks go, all but the last UB_W_HELD chunks' (the
     * first ndropped chunks' are gone), so the writer does not hold the
     * layer's records twice (a clip bake's samples are most of it).  The
     * short records stay, in shorts (they are the ones that recur, and
     * fetching one from its chunk costs the chunk); a new record compared
     * with a long one that went reads it back from its compressed chunk
     * (a few stay decompressed, in dz) and keeps a copy once it proves
     * equal: what recurs, recurs again. */
    ub_buf recs;
    uint64_t recs_base;
    uint32_t ndropped;
    /* the short records that went: record id's bytes at short_at[id] in
     * shorts (for every id that went; UINT32_MAX: a long one) */
    uint32_t *short_at;
    uint32_t capshort;
    ub_buf shorts;
    uint64_t *rec_off;
    uint32_t nrecs, caprecs;
    ub_idtab rec_tab;
    ub_w_rcent *rcache;
    ub_buf spec; /* the tree */
    size_t *count_at; /* where each child count goes in spec (streamed) */
    uint32_t ncount_at, capcount_at;
    int64_t tree_max_rec;
    uint32_t *sample_ids, nsample, capsample; /* the series' so far */
    ub_buf series; /* a series record being completed */
    /* chunks of records (doc: record index), closed as records arrive */
    uint32_t *chunk_first, nchunks, capchunks, chunk_start;
    int level;        /* as asked; -1 until "auto" is decided */
    uint32_t nzipped; /* chunks compressed so far, into zout */
    ZSTD_CCtx *cctx;
    ub_buf zout;
    ub_w_section *zsec;
    uint32_t capzsec;
    ZSTD_DCtx *dctx;
    /* chunks decompressed: chunk c, if any, in dz[c % UB_W_DZ] */
    ub_buf dz[UB_W_DZ];
    uint32_t dz_chunk[UB_W_DZ]; /* UINT32_MAX: none */
    /* copies of long records that went, found equal to a new one: copy
     * k is record kent[k].id, at kent[k].off in kept; kept_tab finds k
     * by record id */
    struct ub_w_kent {
        uint32_t id;
        uint64_t off;
    } *kent;
    uint32_t nkent, capkent;
    ub_idtab kept_tab;
    ub_buf kept;
    bool failed;
} ub_w_num;

/* The queue between the walk and the numbering thread. */
typedef struct ub_w_q {
    pthread_mutex_t mu;
    pthread_cond_t cv;   /* a batch to number, or closed */
    pthread_cond_t room; /* fewer than UB_W_QUEUE_MAX are queued */
    pthread_t th;
    ub_w_batch *head, *tail;
    unsigned queued;
    bool closed;
} ub_w_q;

typedef struct ub_w {
    const ub_layer *layer;
    ub_diags *diags;
    const char *empty; /* "" interned, for required strings that are NULL */
    /* string table: interned pointer -> id */
    const char **strs;
    uint32_t nstrs, capstrs;
    ub_idtab str_tab;
    ub_w_sslot *scache;
    /* the batch being filled: records and tree bytes since the last one */
    ub_buf recs, spec;
    ub_w_pend pend[UB_W_NPEND];
    unsigned npend;
    ub_w_batch *free; /* batches to reuse (under q->mu when q) */
    ub_w_q *q;        /* the numbering thread, or NULL: inline */
    ub_w_num num;     /* the thread's until it is joined */
    uint32_t type_sid[UB_TY_COUNT]; /* type name's string id + 1 */
    void *tmp; /* gather space for packed series */
    size_t tmp_cap;
    int64_t tree_max_str; /* highest string id the tree used */
    ZSTD_CCtx *trial;  /* fast level for choosing layouts */
    ub_buf cand[3], ztmp;
    bool failed, too_deep;
    /* samples kept outside the layer (ub_usdb_write_with), read into the
     * arena an attribute at a time; the source's failure (it said why) */
    ub_samples_fn samples;
    void *samples_ctx;
    ub_arena *samples_arena;
    bool source_failed;
    /* streamed (ub_usdb_stream): the child counts of the prims whose
     * heads went out before their children, by slot; and those prims
     * still open, from the pseudo-root down, with their count slots */
    uint32_t *counts, ncounts, capcounts;
    struct ub_w_open {
        const ub_prim *prim;
        uint32_t slot;
    } *open;
    uint32_t nopen, capopen;
} ub_w;

static void ub_w_oom(ub_w *w)
{
    w->failed = true;
}

/* Room for `need` elements of `elem` bytes in *v, whose capacity is *cap:
 * doubled (from `first`) until it holds them, or `need` exactly where
 * doubling would pass 2^32 - 1.  False when out of memory, *v and *cap
 * unchanged.  Every growing array of the writer goes through here. */
static bool grow(void **v, uint32_t *cap, uint32_t need, size_t elem,
                 uint32_t first)
{
    if (need <= *cap)
        return true;
    uint64_t c = *cap ? *cap : first;
    while (c < need)
        c = c ? 2 * c : 1;
    if (c > UINT32_MAX)
        c = need;
    void *p = realloc(*v, (size_t)c * elem);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}

/* Room for n more bytes of b: the inline test is all most writes cost. */
static inline unsigned char *room(ub_buf *b, size_t n)
{
    if (b->cap - b->len >= n && !b->failed)
        return (unsigned char *)b->data + b->len;
    return (unsigned char *)ub_buf_reserve(b, n);
}

static inline void put_u8(ub_buf *b, unsigned v)
{
    unsigned char *p = room(b, 1);
    if (p) {
        *p = (unsigned char)v;
        b->len++;
    }
}

/* v as a vu at p (10 bytes of room); returns its length. */
static inline size_t enc_vu(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static inline void put_vu(ub_buf *b, uint64_t v)
{
    unsigned char *p = room(b, 10);
    if (p)
        b->len += enc_vu(p, v);
}

static void put_f64(ub_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    unsigned char *p = room(b, 8);
    if (p) {
        ub_put_le64(p, u);
        b->len += 8;
    }
}

static uint64_t zigzag64(int64_t d)
{
    return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

/* --- strings ----------------------------------------------------------- */

static inline size_t ptr_hash(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29));
}

static bool str_eq(const void *ctx, uint32_t id, const void *key)
{
    return ((const ub_w *)ctx)->strs[id] == key;
}

static uint32_t str_id_slow(ub_w *w, const char *s, size_t h, ub_w_sslot *c)
{
    ub_idslot *sl = ub_idtab_find(&w->str_tab, h, str_eq, w, s);
    if (!sl) {
        ub_w_oom(w);
        return 0;
    }
    if (ub_idslot_used(sl)) {
        /* used again: likely more, keep it at hand (first uses do not go
         * in, or unique names would push out the hot ones) */
        *c = (ub_w_sslot){s, ub_idslot_id(sl)};
        return c->id;
    }
    if (!grow((void **)&w->strs, &w->capstrs, w->nstrs + 1,
              sizeof *w->strs, 1024)) {
        ub_w_oom(w);
        return 0;
    }
    w->strs[w->nstrs] = s;
    ub_idtab_put(&w->str_tab, sl, h, w->nstrs);
    return w->nstrs++;
}

static inline uint32_t str_id(ub_w *w, const char *s)
{
    if (!s)
        s = w->empty;
    size_t h = ptr_hash(s);
    /* the multiply's top bits: the best mixed, and apart from h's low ones */
    ub_w_sslot *c = &w->scache[((uint64_t)(uintptr_t)s *
                                0x9e3779b97f4a7c15ull) >> UB_W_SCACHE_SHIFT];
    if (c->s == s)
        return c->id;
    return str_id_slow(w, s, h, c);
}

/* A reference in the tree (doc: "tree references"): ids above every one
 * referenced before are fresh, coded by how many they skip (a new prim's
 * name is 1); older ones by their number, so a value the tree uses again
 * and again is the same bytes every time. */
static uint64_t tree_code(int64_t *max, uint32_t id)
{
    if ((int64_t)id > *max) {
        uint64_t skip = (uint64_t)((int64_t)id - *max - 1);
        *max = id;
        return 1 + 2 * skip;
    }
    return 2 + 2 * (uint64_t)id;
}

/* String id in b: tree coded in the tree, plain elsewhere. */
static inline void put_sid(ub_w *w, ub_buf *b, uint32_t id)
{
    put_vu(b, b == &w->spec ? tree_code(&w->tree_max_str, id) : id);
}

static inline void put_opt_sid(ub_w *w, ub_buf *b, uint32_t id)
{
    put_vu(b, b == &w->spec ? tree_code(&w->tree_max_str, id)
                            : (uint64_t)id + 1);
}

static inline void put_str(ub_w *w, ub_buf *b, const char *s)
{
    put_sid(w, b, str_id(w, s));
}

static inline void put_opt_str(ub_w *w, ub_buf *b, const char *s)
{
    if (!s)
        put_vu(b, 0);
    else
        put_opt_sid(w, b, str_id(w, s));
}

/* A type is named by its usda name, so type ids are no part of the format.
 * Its string id, remembered per type. */
static uint32_t type_sid(ub_w *w, const ub_type *t)
{
    if (w->type_sid[t->id])
        return w->type_sid[t->id] - 1;
    const char *name = ub_intern_cstr(w->layer->strtab, t->name);
    if (!name) {
        ub_w_oom(w);
        return 0;
    }
    uint32_t id = str_id(w, name);
    w->type_sid[t->id] = id + 1;
    return id;
}

/* --- records ----------------------------------------------------------- */

/* memcmp for the short records most are, in words (the last one
 * overlapping), without a call. */
static inline bool bytes_equal(const char *a, const char *b, size_t n)
{
    if (n < 8) {
        if (n < 4)
            return memcmp(a, b, n) == 0;
        uint32_t x0, y0, x1, y1;
        memcpy(&x0, a, 4);
        memcpy(&y0, b, 4);
        memcpy(&x1, a + n - 4, 4);
        memcpy(&y1, b + n - 4, 4);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n > 64)
        return memcmp(a, b, n) == 0;
    uint64_t x, y, d = 0;
    for (size_t i = 0; i + 8 < n; i += 8) {
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        d |= x ^ y;
    }
    memcpy(&x, a + n - 8, 8);
    memcpy(&y, b + n - 8, 8);
    return (d | (x ^ y)) == 0;
}

/* kept_tab's key: a record id (equal ids, one copy). */
static uint64_t kept_hash(uint32_t id)
{
    return (uint64_t)id * 0x9e3779b97f4a7c15ull;
}

static bool kept_eq(const void *ctx, uint32_t k, const void *key)
{
    return ((const ub_w_num *)ctx)->kent[k].id == *(const uint32_t *)key;
}

/* The kept copy of record id, which went, or NULL. */
static const char *kept_find(const ub_w_num *n, uint32_t id)
{
    uint32_t k = ub_idtab_get(&n->kept_tab, kept_hash(id), kept_eq, n, &id);
    return k == UINT32_MAX ? NULL : n->kept.data + n->kent[k].off;
}

static void kept_put(ub_w_num *n, uint32_t id, const char *p, size_t len)
{
    ub_idslot *sl =
        ub_idtab_find(&n->kept_tab, kept_hash(id), kept_eq, n, &id);
    if (!sl || !grow((void **)&n->kent, &n->capkent, n->nkent + 1,
                     sizeof *n->kent, 64)) {
        n->failed = true;
        return;
    }
    n->kent[n->nkent] = (struct ub_w_kent){id, n->kept.len};
    ub_idtab_put(&n->kept_tab, sl, kept_hash(id), n->nkent++);
    ub_buf_append(&n->kept, p, len);
    if (n->kept.failed)
        n->failed = true;
}

/* Record id's bytes, of a chunk whose records went: from the chunk
 * decompressed (into dz); NULL when that fails (the write fails: out of
 * memory). */
static const char *dropped_bytes(ub_w_num *n, uint32_t id)
{
    uint32_t lo = 0, hi = n->ndropped; /* chunk_first[lo] <= id < [hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (n->chunk_first[mid] <= id)
            lo = mid;
        else
            hi = mid;
    }
    ub_buf *dz = &n->dz[lo % UB_W_DZ];
    uint32_t *have = &n->dz_chunk[lo % UB_W_DZ];
    if (*have != lo) {
        const ub_w_section *z = &n->zsec[lo];
        dz->len = 0;
        *have = UINT32_MAX;
        char *d = ub_buf_reserve(dz, z->raw ? z->raw : 1);
        if (!d || (!n->dctx && !(n->dctx = ZSTD_createDCtx()))) {
            n->failed = true;
            return NULL;
        }
        const char *src = n->zout.data + z->offset;
        if (z->codec == UB_USDB_CODEC_STORED)
            memcpy(d, src, z->raw);
        else if (ZSTD_decompressDCtx(n->dctx, d, z->raw, src, z->stored) !=
                 z->raw) {
            n->failed = true;
            return NULL;
        }
        dz->len = z->raw;
        *have = lo;
    }
    return dz->data + (n->rec_off[id] - n->rec_off[n->chunk_first[lo]]);
}

/* The records of the compressed chunks but the last UB_W_HELD go, once
 * twice as many are held; the short ones move to shorts. */
static void num_drop(ub_w_num *n)
{
    if (n->nzipped - n->ndropped < 2 * UB_W_HELD)
        return;
    uint32_t upto = n->nzipped - UB_W_HELD; /* chunks [ndropped, upto) */
    uint32_t first = n->chunk_first[n->ndropped], end = n->chunk_first[upto];
    if (!grow((void **)&n->short_at, &n->capshort, end, sizeof *n->short_at,
              1024)) {
        n->failed = true;
        return;
    }
    for (uint32_t id = first; id < end; id++) {
        uint64_t len = n->rec_off[id + 1] - n->rec_off[id];
        n->short_at[id] = UINT32_MAX;
        if (len <= UB_W_RBYTES && n->shorts.len < UINT32_MAX - len) {
            n->short_at[id] = (uint32_t)n->shorts.len;
            ub_buf_append(&n->shorts,
                          n->recs.data + (n->rec_off[id] - n->recs_base),
                          (size_t)len);
        }
    }
    if (n->shorts.failed)
        n->failed = true;
    size_t cut = (size_t)(n->rec_off[end] - n->recs_base);
    memmove(n->recs.data, n->recs.data + cut, n->recs.len - cut);
    n->recs.len -= cut;
    n->recs_base = n->rec_off[end];
    n->ndropped = upto;
}

/* What comparing with records that went takes, given back. */
static void num_free_gone(ub_w_num *n)
{
    ZSTD_freeDCtx(n->dctx);
    n->dctx = NULL;
    for (int i = 0; i < UB_W_DZ; i++) {
        ub_buf_free(&n->dz[i]);
        n->dz_chunk[i] = UINT32_MAX;
    }
    free(n->kent);
    n->kent = NULL;
    n->nkent = n->capkent = 0;
    ub_idtab_free(&n->kept_tab);
    ub_buf_free(&n->kept);
    free(n->short_at);
    n->short_at = NULL;
    n->capshort = 0;
    ub_buf_free(&n->shorts);
}

static bool rec_equal(ub_w_num *n, uint32_t id, const char *p, size_t len)
{
    if (n->rec_off[id + 1] - n->rec_off[id] != len)
        return false;
    if (n->rec_off[id] >= n->recs_base)
        return bytes_equal(n->recs.data + (n->rec_off[id] - n->recs_base),
                           p, len);
    if (n->short_at[id] != UINT32_MAX)
        return bytes_equal(n->shorts.data + n->short_at[id], p, len);
    const char *q = kept_find(n, id);
    if (q)
        return bytes_equal(q, p, len);
    if (!(q = dropped_bytes(n, id)) || !bytes_equal(q, p, len))
        return false;
    kept_put(n, id, q, len);
    return true;
}

typedef struct ub_w_rkey {
    const char *p;
    size_t len;
} ub_w_rkey;

static bool rec_eq(const void *ctx, uint32_t id, const void *key)
{
    const ub_w_rkey *k = key;
    return rec_equal((ub_w_num *)(uintptr_t)ctx, id, k->p, k->len);
}

/* --- sections ---------------------------------------------------------- */

/* Append one section's stored bytes to out and describe it in *sec. */
static int put_section(ZSTD_CCtx *cctx, int level, ub_buf *out, uint32_t tag,
                       const void *raw, size_t raw_len, ub_w_section *sec)
{
    size_t bound = ZSTD_compressBound(raw_len);
    char *dst = ub_buf_reserve(out, bound);
    if (!dst)
        return -1;
    size_t z = raw_len; /* level 0: store every section */
    if (level > 0)
        z = ZSTD_compressCCtx(cctx, dst, bound, raw, raw_len, level);
    if (ZSTD_isError(z))
        return -1;
    sec->tag = tag;
    sec->offset = out->len;
    sec->raw = raw_len;
    if (z < raw_len) {
        sec->codec = UB_USDB_CODEC_ZSTD;
        sec->stored = z;
    } else { /* incompressible: store, so reading costs a memcpy at most */
        sec->codec = UB_USDB_CODEC_STORED;
        sec->stored = raw_len;
        if (raw_len)
            memcpy(dst, raw, raw_len);
    }
    sec->hash = XXH3_64bits(dst, sec->stored);
    out->len += sec->stored;
    return 0;
}

/* The level "auto" resolves to for a layer whose skeleton and records
 * take `bytes` (UB_USDB_LEVEL_DEFAULT in ub_usdb_write.h). */
static int auto_level(size_t bytes)
{
    if (bytes <= UB_USDB_AUTO_TINY)
        return 19;
    return bytes <= UB_USDB_AUTO_SMALL ? 9 : 3;
}

/* Compress the next closed chunk (level 0: store it), once the level is
 * known: "auto" is level 3 as soon as the tree and records outgrow
 * UB_USDB_AUTO_SMALL (they only grow); else ub_usdb_write decides at the
 * end and compresses the rest itself.  The chunk's records then leave
 * recs.  Returns whether there was one. */
static bool num_compress_one(ub_w_num *n)
{
    if (n->nzipped == n->nchunks || n->failed)
        return false;
    if (n->level < 0) {
        size_t bytes = n->spec.len + n->recs_base + n->recs.len;
        if (bytes <= UB_USDB_AUTO_SMALL)
            return false;
        n->level = auto_level(bytes);
    }
    if (!n->cctx && !(n->cctx = ZSTD_createCCtx())) {
        n->failed = true;
        return false;
    }
    uint32_t c = n->nzipped;
    if (!grow((void **)&n->zsec, &n->capzsec, c + 1, sizeof *n->zsec,
              64)) {
        n->failed = true;
        return false;
    }
    uint64_t a = n->rec_off[n->chunk_first[c]];
    uint64_t e = n->rec_off[n->chunk_first[c + 1]];
    if (put_section(n->cctx, n->level, &n->zout, UB_USDB_TAG_DATA,
                    n->recs.data + (a - n->recs_base), (size_t)(e - a),
                    &n->zsec[c]) != 0) {
        n->failed = true;
        return false;
    }
    n->nzipped++;
    num_drop(n);
    return true;
}

/* Records [chunk_start, end) make a chunk. */
static void chunk_close(ub_w_num *n, uint32_t end)
{
    if (!grow((void **)&n->chunk_first, &n->capchunks, n->nchunks + 2,
              sizeof *n->chunk_first, 64)) {
        n->failed = true;
        return;
    }
    n->chunk_first[n->nchunks++] = n->chunk_start;
    n->chunk_first[n->nchunks] = end;
    n->chunk_start = end;
}

/* The id of the record p[0..len), hash h: an earlier byte-equal record,
 * else a new one appended to recs.  Equal hashes alone never merge two
 * records.  A chunk closes when adding a record would take it past the
 * target (a bigger record gets a chunk to itself). */
static uint32_t num_record(ub_w_num *n, uint64_t h, const char *p, size_t len)
{
    ub_w_rcent *c = &n->rcache[(h >> 32) & (UB_W_RCACHE - 1)];
    if (c->hash == h && c->len == (uint32_t)len && c->id1 &&
        (len <= UB_W_RBYTES ? bytes_equal(c->bytes, p, len)
                            : rec_equal(n, c->id1 - 1, p, len)))
        return c->id1 - 1;
    ub_idslot *sl = ub_idtab_find(&n->rec_tab, h, rec_eq, n,
                                  &(ub_w_rkey){p, len});
    if (!sl) {
        n->failed = true;
        return 0;
    }
    if (ub_idslot_used(sl)) {
        /* used twice: likely again, keep it at hand */
        uint32_t id = ub_idslot_id(sl);
        c->hash = h;
        c->id1 = id + 1;
        c->len = (uint32_t)len;
        if (len <= UB_W_RBYTES)
            memcpy(c->bytes, p, len);
        return id;
    }
    if (!grow((void **)&n->rec_off, &n->caprecs, n->nrecs + 2,
              sizeof *n->rec_off, 1024)) {
        n->failed = true;
        return 0;
    }
    uint32_t id = n->nrecs++;
    n->rec_off[id] = n->recs_base + n->recs.len;
    ub_buf_append(&n->recs, p, len);
    n->rec_off[id + 1] = n->recs_base + n->recs.len;
    ub_idtab_put(&n->rec_tab, sl, h, id);
    if (id > n->chunk_start &&
        n->rec_off[id + 1] - n->rec_off[n->chunk_start] >
            UB_USDB_CHUNK_TARGET) {
        chunk_close(n, id);
    }
    return id;
}

/* A series with per-sample records: its bytes up to the ids, then the
 * ids of the samples numbered since the last series, as deltas. */
static uint32_t num_series(ub_w_num *n, const char *head, size_t len)
{
    ub_buf *b = &n->series;
    b->len = 0;
    ub_buf_append(b, head, len);
    for (uint32_t i = 0; i < n->nsample; i++) /* deltas, as in SPEC */
        put_vu(b, zigzag64((int64_t)n->sample_ids[i] -
                           (int64_t)(i ? n->sample_ids[i - 1] : 0)));
    n->nsample = 0;
    if (b->failed) {
        n->failed = true;
        return 0;
    }
    return num_record(n, XXH3_64bits(b->data, b->len), b->data, b->len);
}

/* Number a batch's records in order and copy its tree bytes to the tree
 * with their references filled in. */
static void num_batch(ub_w_num *n, ub_w_batch *b)
{
    if (n->failed || n->recs.failed || n->spec.failed) {
        n->failed = true;
        return;
    }
    /* The table probes miss the cache: start them all, and for an equal
     * record found, the misses on its offset and bytes.  Hints only. */
    const ub_idslot *slots = n->rec_tab.s;
    size_t cap = n->rec_tab.cap, mask = cap - 1;
    uint32_t hit[UB_W_NPEND];
    for (unsigned k = 0; k < b->npend && cap; k++) {
        ub_prefetch(&slots[(uint32_t)b->pend[k].hash & mask]);
        ub_prefetch(&n->rcache[(b->pend[k].hash >> 32) & (UB_W_RCACHE - 1)]);
    }
    for (unsigned k = 0; k < b->npend && cap; k++) {
        uint32_t h32 = (uint32_t)b->pend[k].hash;
        hit[k] = 0;
        for (size_t j = h32 & mask; slots[j].id1; j = (j + 1) & mask)
            if (slots[j].h == h32) {
                hit[k] = slots[j].id1;
                ub_prefetch(&n->rec_off[hit[k] - 1]);
                break;
            }
    }
    for (unsigned k = 0; k < b->npend && cap; k++)
        if (hit[k] && n->rec_off[hit[k] - 1] >= n->recs_base)
            ub_prefetch(n->recs.data + (n->rec_off[hit[k] - 1] - n->recs_base));
    size_t at = 0;
    for (unsigned k = 0; k < b->npend; k++) {
        ub_w_pend *pk = &b->pend[k];
        if (pk->kind == UB_W_COUNT)
            continue; /* no record: a batch may have no records at all */
        const char *p = b->recs.data + at;
        at += pk->len;
        if (pk->kind == UB_W_SERIES) {
            pk->id = num_series(n, p, pk->len);
            continue;
        }
        pk->id = num_record(n, pk->hash, p, pk->len);
        if (pk->kind == UB_W_SAMPLE) {
            if (!grow((void **)&n->sample_ids, &n->capsample,
                      n->nsample + 1, sizeof *n->sample_ids, 64)) {
                n->failed = true;
                return;
            }
            n->sample_ids[n->nsample++] = pk->id;
        }
    }
    size_t pos = 0;
    for (unsigned k = 0; k < b->npend; k++) {
        size_t hole = b->pend[k].hole;
        if (hole == SIZE_MAX)
            continue;
        ub_buf_append(&n->spec, b->tree.data + pos, hole - pos);
        pos = hole;
        if (b->pend[k].kind == UB_W_COUNT) {
            if (!grow((void **)&n->count_at, &n->capcount_at,
                      n->ncount_at + 1, sizeof *n->count_at, 64)) {
                n->failed = true;
                return;
            }
            n->count_at[n->ncount_at++] = n->spec.len;
            continue;
        }
        put_vu(&n->spec, tree_code(&n->tree_max_rec, b->pend[k].id));
    }
    ub_buf_append(&n->spec, b->tree.data + pos, b->tree.len - pos);
}

static void *num_main(void *arg)
{
    ub_w *w = arg;
    ub_w_q *q = w->q;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        /* Compress when there is nothing to number, a chunk at a time:
         * the walk may be waiting for a series' ids.  At the end, what
         * is left, before the walk's thread needs it. */
        while (!q->head) {
            pthread_mutex_unlock(&q->mu);
            bool did = num_compress_one(&w->num);
            pthread_mutex_lock(&q->mu);
            if (did || q->head)
                continue;
            if (q->closed)
                break;
            pthread_cond_wait(&q->cv, &q->mu);
        }
        ub_w_batch *b = q->head;
        if (b && !(q->head = b->next))
            q->tail = NULL;
        if (b) {
            q->queued--;
            pthread_cond_signal(&q->room);
        }
        pthread_mutex_unlock(&q->mu);
        if (!b)
            return NULL;
        num_batch(&w->num, b);
        pthread_mutex_lock(&q->mu);
        b->next = w->free;
        w->free = b;
        pthread_mutex_unlock(&q->mu);
    }
}

/* Start the numbering thread; false when none can be had (or only one
 * CPU would run both: then numbering inline costs no handing over). */
static bool num_start(ub_w *w)
{
    if (ub_cpus() < 2)
        return false;
    ub_w_q *q = calloc(1, sizeof *q);
    if (!q)
        return false;
    if (pthread_mutex_init(&q->mu, NULL) != 0)
        goto no_mutex;
    if (pthread_cond_init(&q->cv, NULL) != 0)
        goto no_cv;
    if (pthread_cond_init(&q->room, NULL) != 0)
        goto no_room;
    w->q = q;
    if (pthread_create(&q->th, NULL, num_main, w) == 0)
        return true;
    w->q = NULL;
    pthread_cond_destroy(&q->room);
no_room:
    pthread_cond_destroy(&q->cv);
no_cv:
    pthread_mutex_destroy(&q->mu);
no_mutex:
    free(q);
    return false;
}

/* Wait for the thread to number everything handed to it, and end it:
 * the numbering side is the caller's again. */
static void num_join(ub_w *w)
{
    ub_w_q *q = w->q;
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    q->closed = true;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->th, NULL);
    pthread_cond_destroy(&q->room);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
    w->q = NULL;
}

static void batch_free(ub_w_batch *b)
{
    ub_buf_free(&b->recs);
    ub_buf_free(&b->tree);
    free(b);
}

/* Hand the records and tree bytes since the last batch to the numbering
 * side (the buffers change hands: no copy). */
static void hand_off(ub_w *w)
{
    ub_w_batch *b = NULL;
    if (!w->recs.failed && !w->spec.failed) {
        if (w->q)
            pthread_mutex_lock(&w->q->mu);
        if ((b = w->free))
            w->free = b->next;
        if (w->q)
            pthread_mutex_unlock(&w->q->mu);
        if (!b)
            b = calloc(1, sizeof *b); /* zeroed: empty ub_bufs */
    }
    if (!b) {
        ub_w_oom(w);
        w->npend = 0;
        w->recs.len = w->spec.len = 0;
        return;
    }
    ub_buf t = b->recs;
    b->recs = w->recs;
    w->recs = t;
    t = b->tree;
    b->tree = w->spec;
    w->spec = t;
    w->recs.len = w->spec.len = 0;
    memcpy(b->pend, w->pend, w->npend * sizeof *w->pend);
    b->npend = w->npend;
    w->npend = 0;
    b->next = NULL;
    if (!w->q) {
        num_batch(&w->num, b);
        while (num_compress_one(&w->num)) /* (as the thread would) */
            ;
        b->next = w->free;
        w->free = b;
        return;
    }
    pthread_mutex_lock(&w->q->mu);
    while (w->q->queued >= UB_W_QUEUE_MAX)
        pthread_cond_wait(&w->q->room, &w->q->mu);
    if (w->q->tail)
        w->q->tail->next = b;
    else
        w->q->head = b;
    w->q->tail = b;
    w->q->queued++;
    pthread_cond_signal(&w->q->cv);
    pthread_mutex_unlock(&w->q->mu);
}

/* Before a record is encoded: room for it in the batch. */
static void pend_room(ub_w *w)
{
    if (w->npend == UB_W_NPEND || w->recs.len >= UB_W_BATCH_BYTES)
        hand_off(w);
}

/* The record just encoded at recs[start..): numbered later, in its batch.
 * `tree`: the tree refers to it here, at the end of spec. */
static void pend_add(ub_w *w, size_t start, bool tree, int kind)
{
    ub_buf *r = &w->recs;
    if (r->failed) {
        ub_w_oom(w);
        return;
    }
    uint64_t h = kind == UB_W_SERIES
                     ? 0 /* hashed when complete */
                     : XXH3_64bits(r->data + start, r->len - start);
    w->pend[w->npend++] = (ub_w_pend){h, r->len - start,
                                      tree ? w->spec.len : SIZE_MAX, 0,
                                      (uint8_t)kind};
}

/* --- numeric blocks ---------------------------------------------------- */

static uint64_t load_comp(const unsigned char *p, size_t s)
{
    switch (s) {
    case 1:
        return *p;
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static bool is_int_scalar(ub_scalar sc)
{
    return sc == UB_SC_INT || sc == UB_SC_UINT || sc == UB_SC_INT64 ||
           sc == UB_SC_UINT64;
}

/* k with k / 10^d == v exactly (for float columns: after rounding to
 * float), or false. */
static bool decimal_of(double v, bool is_float, unsigned d, int64_t *k)
{
    double x = v * ub_usdb_pow10[d];
    if (!(fabs(x) < 9007199254740992.0)) /* also NaN */
        return false;
    /* any nearby integer will do: the check below is what counts */
    int64_t kk = (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
    /* Most tries fail, and the division is their cost: when x is far
     * from kk the check cannot pass (if it passes, kk / 10^d is v to
     * within a float's rounding, so |x - kk| <= |x| 2^-22 plus far less
     * than 2^-60), so fail without dividing. */
    if (fabs(x - (double)kk) > fabs(x) * 0x1p-21 + 0x1p-60)
        return false;
    double r = ub_usdb_decimal(kk, d);
    if (is_float) {
        float rf = (float)r, vf = (float)v;
        if (memcmp(&rf, &vf, sizeof rf) != 0)
            return false;
    } else if (memcmp(&r, &v, sizeof r) != 0) {
        return false;
    }
    *k = kk;
    return true;
}

static unsigned bitlen(uint64_t x)
{
    return 64u - (unsigned)__builtin_clzll(x | 1);
}

/* One float/double column as a decimal column (values that text wrote as
 * short decimals, "0.1234", whose binary bits look random but are k/10^d
 * for a small k); false when some value is not such a decimal. */
static bool put_decimal_column(ub_buf *b, const unsigned char *src,
                               size_t stride, size_t n, bool is_float,
                               int64_t *k, uint8_t *kd, unsigned *digits)
{
    unsigned d = 0;
    for (size_t i = 0; i < n; i++) {
        double v;
        if (is_float) {
            float x;
            memcpy(&x, src + i * stride, 4);
            v = x;
        } else {
            memcpy(&v, src + i * stride, 8);
        }
        while (!decimal_of(v, is_float, d, &k[i]))
            if (++d > UB_USDB_DEC_MAX)
                return false;
        kd[i] = (uint8_t)d;
    }
    /* k at the column's d: k * 10^(d - d_i) over 10^d is the same exact
     * quotient while k stays below 2^53.  Delta coding where it makes the
     * numbers smaller. */
    uint64_t cost_plain = 0, cost_delta = 0, max_plain = 0, max_delta = 0;
    int64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        for (unsigned e = kd[i]; e < d; e++) {
            k[i] *= 10;
            if (k[i] >= ((int64_t)1 << 53) || k[i] <= -((int64_t)1 << 53))
                return false;
        }
        uint64_t zp = zigzag64(k[i]), zd = zigzag64(k[i] - prev);
        prev = k[i];
        cost_plain += bitlen(zp);
        cost_delta += bitlen(zd);
        max_plain = zp > max_plain ? zp : max_plain;
        max_delta = zd > max_delta ? zd : max_delta;
    }
    *digits = d;
    bool delta = cost_delta < cost_plain;
    uint64_t mx = delta ? max_delta : max_plain;
    size_t w = mx > UINT32_MAX ? 8 : 4;
    put_u8(b, UB_USDB_COL_DECIMAL);
    put_u8(b, d);
    put_u8(b, (delta ? 1 : 0) | (w == 8 ? 2 : 0));
    unsigned char *out = (unsigned char *)ub_buf_reserve(b, n * w);
    if (!out)
        return true; /* b->failed is set */
    b->len += n * w;
    prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = delta ? zigzag64(k[i] - prev) : zigzag64(k[i]);
        prev = k[i];
        for (size_t by = 0; by < w; by++)
            out[by * n + i] = (unsigned char)(z >> (8 * by));
    }
    return true;
}

/* Float/double elements, column by column: decimal where every value of
 * the column is a short decimal, byte planes otherwise. */
/* Returns whether every column was a decimal of at most 5 digits: data
 * authored as short decimals, where no other layout does better. */
static bool put_columns(ub_buf *b, const ub_type *t, const unsigned char *src,
                        size_t n)
{
    bool short_decimals = true;
    size_t s = ub_scalar_size(t->scalar);
    unsigned nc = ub_type_ncomp(t);
    size_t stride = nc * s;
    int64_t *k = malloc((n ? n : 1) * sizeof *k);
    uint8_t *kd = malloc(n ? n : 1);
    if (!k || !kd) {
        free(k);
        free(kd);
        b->failed = true;
        return false;
    }
    for (unsigned c = 0; c < nc; c++) {
        size_t mark = b->len;
        unsigned digits;
        if (put_decimal_column(b, src + c * s, stride, n, s == 4, k, kd,
                               &digits)) {
            short_decimals = short_decimals && digits <= 5;
            continue;
        }
        short_decimals = false;
        b->len = mark;
        put_u8(b, UB_USDB_COL_PLANES);
        unsigned char *col = (unsigned char *)ub_buf_reserve(b, n * s);
        if (!col)
            break;
        b->len += n * s;
        const unsigned char *p = src + c * s;
        for (size_t i = 0; i < n; i++, p += stride) {
            uint64_t v = load_comp(p, s);
            for (size_t by = 0; by < s; by++)
                col[by * n + i] = (unsigned char)(v >> (8 * by));
        }
    }
    free(k);
    free(kd);
    return short_decimals;
}

/* count elements of t at data, as a numeric block (layout byte + data). */
enum { PICK_AUTO, PICK_RAW, PICK_SMALL };

/* Returns whether the layout chosen is certainly the best (see
 * put_columns). */
static bool put_numeric_as(ub_buf *b, const ub_type *t, const void *data,
                           uint32_t count, int pick)
{
    size_t s = ub_scalar_size(t->scalar);
    unsigned nc = ub_type_ncomp(t);
    size_t n = count, bytes = n * nc * s;
    const unsigned char *src = data;
    bool fp = t->scalar == UB_SC_FLOAT || t->scalar == UB_SC_DOUBLE;
    bool raw = pick == PICK_RAW;
    if (fp && ((bytes < UB_USDB_SPLIT_MIN && !raw) || pick == PICK_SMALL)) {
        put_u8(b, UB_USDB_LAYOUT_SMALL);
        /* at most 1 + 10 bytes per component, written in place */
        unsigned char *o = (unsigned char *)ub_buf_reserve(b, n * nc * 11);
        if (!o)
            return false;
        unsigned char *o0 = o;
        unsigned prev_d = 0;
        for (size_t k = 0; k < n * nc; k++) {
            double v;
            if (s == 4) {
                float x;
                memcpy(&x, src + k * 4, 4);
                v = x;
            } else {
                memcpy(&v, src + k * 8, 8);
            }
            int64_t dk = 0;
            /* the previous value's digit count usually fits this one */
            unsigned d = prev_d;
            if (!decimal_of(v, s == 4, d, &dk))
                for (d = 0; d <= UB_USDB_DEC_MAX; d++)
                    if (decimal_of(v, s == 4, d, &dk))
                        break;
            if (d <= UB_USDB_DEC_MAX) {
                prev_d = d;
                *o++ = (unsigned char)d;
                uint64_t z = zigzag64(dk);
                do {
                    unsigned char c7 = z & 0x7f;
                    z >>= 7;
                    *o++ = c7 | (z ? 0x80 : 0);
                } while (z);
            } else { /* not a short decimal: its bits */
                *o++ = UB_USDB_SMALL_RAW;
                uint64_t u = load_comp(src + k * s, s);
                for (size_t by = 0; by < s; by++)
                    *o++ = (unsigned char)(u >> (8 * by));
            }
        }
        b->len += (size_t)(o - o0);
        return false;
    }
    unsigned layout = bytes < UB_USDB_SPLIT_MIN || raw ? UB_USDB_LAYOUT_RAW
                      : is_int_scalar(t->scalar) ? UB_USDB_LAYOUT_DELTA
                      : (t->scalar == UB_SC_FLOAT || t->scalar == UB_SC_DOUBLE)
                          ? UB_USDB_LAYOUT_COLUMNS
                          : UB_USDB_LAYOUT_SPLIT;
    put_u8(b, layout);
    if (layout == UB_USDB_LAYOUT_COLUMNS) {
        return put_columns(b, t, src, n);
    }
    unsigned char *out = (unsigned char *)ub_buf_reserve(b, bytes);
    if (!out)
        return false;
    b->len += bytes;
    if (layout == UB_USDB_LAYOUT_RAW) {
        for (size_t k = 0; k < n * nc; k++) {
            uint64_t v = load_comp(src + k * s, s);
            for (size_t by = 0; by < s; by++)
                *out++ = (unsigned char)(v >> (8 * by));
        }
        return false;
    }
    size_t stride = nc * s;
    unsigned bits = (unsigned)(s * 8);
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    for (unsigned c = 0; c < nc; c++) {
        unsigned char *col = out + (size_t)c * s * n;
        const unsigned char *p = src + c * s;
        uint64_t prev = 0;
        for (size_t i = 0; i < n; i++, p += stride) {
            uint64_t v = load_comp(p, s);
            if (layout == UB_USDB_LAYOUT_DELTA) {
                uint64_t d = (v - prev) & mask;
                prev = v;
                uint64_t neg = (d >> (bits - 1)) & 1 ? mask : 0;
                v = ((d << 1) ^ neg) & mask;
            }
            for (size_t by = 0; by < s; by++)
                col[by * n + i] = (unsigned char)(v >> (8 * by));
        }
    }
    return false;
}

/* Which layout compresses better depends on the data: decimal columns and
 * byte planes win on authored or noisy values, but full-precision meshes
 * repeat whole vertices, which the raw and SMALL layouts keep as repeats.
 * For big blocks, compress a sample in each with fast zstd and use the
 * layout of the smallest. */
static void put_numeric(ub_w *w, ub_buf *b, const ub_type *t,
                        const void *data, uint32_t count)
{
    size_t bytes = (size_t)count * ub_type_elem_size(t);
    if (bytes < UB_USDB_TRIAL_MIN || !w->trial) {
        put_numeric_as(b, t, data, count, PICK_AUTO);
        return;
    }
    bool fp = t->scalar == UB_SC_FLOAT || t->scalar == UB_SC_DOUBLE;
    int ncand = fp ? 3 : 2;
    ub_buf *cand[3] = {&w->cand[0], &w->cand[1], &w->cand[2]};
    size_t z[3];
    /* judge on a sample (the first ~16 KiB of elements), then encode all */
    size_t es = ub_type_elem_size(t);
    uint32_t sample = count;
    if ((size_t)sample * es > UB_USDB_TRIAL_SAMPLE)
        sample = (uint32_t)(UB_USDB_TRIAL_SAMPLE / es + 1);
    for (int i = 0; i < ncand; i++) {
        cand[i]->len = 0;
        if (put_numeric_as(cand[i], t, data, sample, i) && i == 0) {
            /* short decimals: nothing beats decimal columns */
            if (sample == count)
                ub_buf_append(b, cand[0]->data, cand[0]->len);
            else
                put_numeric_as(b, t, data, count, PICK_AUTO);
            return;
        }
        size_t bound = ZSTD_compressBound(cand[i]->len);
        char *dst = ub_buf_reserve(&w->ztmp, bound);
        z[i] = dst && !cand[i]->failed
                   ? ZSTD_compressCCtx(w->trial, dst, bound, cand[i]->data,
                                       cand[i]->len, 1)
                   : (size_t)-1;
        if (ZSTD_isError(z[i]))
            z[i] = (size_t)-1;
    }
    int bi = 0;
    for (int i = 1; i < ncand; i++)
        if (z[i] < z[bi])
            bi = i;
    if (cand[bi]->failed)
        w->failed = true;
    else if (sample == count)
        ub_buf_append(b, cand[bi]->data, cand[bi]->len);
    else
        put_numeric_as(b, t, data, count, bi);
}

/* --- values ------------------------------------------------------------ */

static void put_value_body(ub_w *w, ub_buf *b, const ub_value *v, int depth);

static void put_dict(ub_w *w, ub_buf *b, const ub_dict *d, int depth)
{
    uint32_t n = d ? d->n : 0;
    put_vu(b, n);
    for (uint32_t i = 0; i < n; i++) {
        put_str(w, b, d->e[i].key);
        put_value_body(w, b, &d->e[i].value, depth + 1);
    }
}

static void put_untyped(ub_w *w, ub_buf *b, const ub_untyped *u, int depth)
{
    if (depth > UB_USDB_MAX_DEPTH) {
        w->too_deep = true;
        return;
    }
    put_u8(b, u->kind);
    put_opt_str(w, b, u->text);
    put_vu(b, u->n);
    for (uint32_t i = 0; i < u->n; i++)
        put_untyped(w, b, &u->child[i], depth + 1);
}

static void put_value_body(ub_w *w, ub_buf *b, const ub_value *v, int depth)
{
    if (depth > UB_USDB_MAX_DEPTH) {
        w->too_deep = true;
        return;
    }
    put_u8(b, v->kind);
    put_u8(b, (v->is_array ? 1 : 0) | (ub_value_type(v) ? 2 : 0));
    if (ub_value_type(v))
        put_sid(w, b, type_sid(w, ub_value_type(v)));
    switch ((ub_vkind)v->kind) {
    case UB_V_EMPTY:
    case UB_V_BLOCK:
        break;
    case UB_V_DATA: {
        put_vu(b, v->count);
        const ub_type *t = ub_value_type(v);
        switch (t->scalar) {
        case UB_SC_STRING:
            for (uint32_t i = 0; i < v->count; i++)
                put_str(w, b, ub_value_str(v, i));
            break;
        case UB_SC_REF: {
            const ub_reference *r = ub_value_data(v);
            for (uint32_t i = 0; i < v->count; i++) {
                bool cd = r[i].custom_data != NULL;
                put_str(w, b, r[i].asset);
                put_str(w, b, r[i].prim_path);
                put_u8(b, (r[i].has_offset ? 1 : 0) |
                              (r[i].has_scale ? 2 : 0) | (cd ? 4 : 0));
                put_f64(b, r[i].offset.offset);
                put_f64(b, r[i].offset.scale);
                if (cd)
                    put_dict(w, b, r[i].custom_data, depth + 1);
            }
            break;
        }
        case UB_SC_DICT: {
            ub_dict *const *d = ub_value_data(v);
            for (uint32_t i = 0; i < v->count; i++) {
                put_u8(b, d[i] != NULL);
                if (d[i])
                    put_dict(w, b, d[i], depth + 1);
            }
            break;
        }
        case UB_SC_OPAQUE:
        case UB_SC_NONE:
            break;
        default:
            put_numeric(w, b, t, ub_value_data(v), v->count);
            break;
        }
        break;
    }
    case UB_V_DICT:
        put_dict(w, b, v->u.dict, depth);
        break;
    case UB_V_LISTOP: {
        const ub_listop *lo = v->u.listop;
        unsigned has = 0;
        for (int p = 0; p < UB_LO_NPARTS; p++)
            if (lo->has[p])
                has |= 1u << p;
        put_u8(b, lo->is_explicit);
        put_u8(b, has);
        for (int p = 0; p < UB_LO_NPARTS; p++)
            if (lo->has[p])
                put_value_body(w, b, ub_listop_get(lo, p), depth + 1);
        break;
    }
    case UB_V_UNTYPED:
        put_untyped(w, b, v->u.untyped, depth + 1);
        break;
    }
}

/* Value v as a pending record (pend_add). */
static void value_rec(ub_w *w, const ub_value *v, bool tree, int kind)
{
    pend_room(w);
    size_t start = w->recs.len;
    put_u8(&w->recs, UB_USDB_REC_VALUE);
    put_value_body(w, &w->recs, v, 0);
    pend_add(w, start, tree, kind);
}

/* A `val` in the tree: 0 for EMPTY, else a reference. */
static void put_val(ub_w *w, const ub_value *v)
{
    if (v->kind == UB_V_EMPTY && !ub_value_type(v) && !v->is_array) {
        put_vu(&w->spec, 0);
        return;
    }
    value_rec(w, v, true, UB_W_PLAIN);
}

static bool packable(const ub_samples *s)
{
    if (s->n < 2)
        return false;
    const ub_type *t = ub_value_type(&s->v[0].value);
    if (!t || t->scalar == UB_SC_STRING || t->scalar == UB_SC_REF ||
        t->scalar == UB_SC_DICT || t->scalar == UB_SC_OPAQUE ||
        t->scalar == UB_SC_NONE)
        return false;
    for (uint32_t i = 0; i < s->n; i++) {
        const ub_value *v = &s->v[i].value;
        if (v->kind != UB_V_DATA || ub_value_type(v) != t || v->is_array ||
            v->count != 1)
            return false;
    }
    return true;
}

static bool times_arithmetic(const ub_samples *s, double *t0, double *step)
{
    if (s->n < 2)
        return false;
    *t0 = s->v[0].time;
    *step = s->v[1].time - *t0;
    for (uint32_t i = 0; i < s->n; i++) {
        /* Two statements: no fused multiply-add, as the reader does. */
        double m = (double)i * *step;
        double t = *t0 + m;
        if (memcmp(&t, &s->v[i].time, sizeof t) != 0)
            return false;
    }
    return true;
}

/* The series s as a pending record the tree refers to. */
static void series_rec(ub_w *w, const ub_samples *s)
{
    bool packed = packable(s);
    for (uint32_t i = 0; !packed && i < s->n; i++)
        value_rec(w, &s->v[i].value, false, UB_W_SAMPLE);
    pend_room(w);
    ub_buf *b = &w->recs;
    size_t start = b->len;
    put_u8(b, UB_USDB_REC_SERIES);
    put_vu(b, s->n);
    double t0, step;
    if (times_arithmetic(s, &t0, &step)) {
        put_u8(b, UB_USDB_TIMES_ARITH);
        put_f64(b, t0);
        put_f64(b, step);
    } else {
        put_u8(b, UB_USDB_TIMES_RAW);
        for (uint32_t i = 0; i < s->n; i++)
            put_f64(b, s->v[i].time);
    }
    if (!packed) {
        put_u8(b, UB_USDB_SERIES_RECS); /* the ids follow: num_series */
        pend_add(w, start, true, UB_W_SERIES);
        return;
    }
    const ub_type *t = ub_value_type(&s->v[0].value);
    size_t es = ub_type_elem_size(t), need = es * s->n;
    if (need > w->tmp_cap) {
        void *nt = realloc(w->tmp, need);
        if (!nt) {
            ub_w_oom(w);
            return;
        }
        w->tmp = nt;
        w->tmp_cap = need;
    }
    for (uint32_t i = 0; i < s->n; i++)
        memcpy((char *)w->tmp + i * es, ub_value_data(&s->v[i].value), es);
    put_u8(b, UB_USDB_SERIES_PACKED);
    put_sid(w, b, type_sid(w, t));
    put_numeric(w, b, t, w->tmp, s->n);
    pend_add(w, start, true, UB_W_PLAIN);
}

/* --- the tree ---------------------------------------------------------- */

/* The tree walk chases pointers through the layer's arena (a prim's
 * property structs, their field arrays, each value's data), and every
 * step would miss the cache: prefetch an element or two ahead.  A
 * property's own arrays and a child prim's (prefetch_prop, prefetch_prim)
 * were fetched a step ahead too, on paper: GCC had deleted those calls
 * (ub_prefetch.h), and made to happen they saved nothing (+9 ms of user
 * CPU, 95%: -6..+23, converting the prim bench layer), so they are gone. */

/* Every cache line of p[0..bytes), up to a few. */
static inline void prefetch_range(const void *p, size_t bytes)
{
    const char *c = p;
    if (bytes > 512)
        bytes = 512;
    for (size_t o = 0; o < bytes; o += 64)
        ub_prefetch(c + o);
}

static void put_fields(ub_w *w, const ub_fields *f)
{
    put_vu(&w->spec, f->n);
    for (uint32_t i = 0; i < f->n; i++) {
        if (i + 1 < f->n)
            ub_prefetch(ub_value_data(&f->v[i + 1].value));
        put_str(w, &w->spec, f->v[i].key);
        put_val(w, &f->v[i].value);
    }
}

static void put_prop(ub_w *w, const ub_prop *p)
{
    ub_buf *b = &w->spec;
    put_str(w, b, p->name);
    put_u8(b, (p->kind == UB_REL ? 1 : 0) | (p->custom ? 2 : 0) |
                  (p->varying_keyword ? 4 : 0) | (p->is_array ? 8 : 0) |
                  (ub_prop_samples(p)->authored ? 16 : 0));
    put_u8(b, p->variability);
    put_opt_str(w, b, ub_prop_type_name(w->layer->strtab, p));
    if (ub_prop_type(p))
        put_opt_sid(w, b, type_sid(w, ub_prop_type(p)));
    else
        put_vu(b, 0);
    put_val(w, &p->default_value);
    const ub_samples *own = ub_prop_samples(p);
    if (own->authored && !own->n && w->samples) {
        /* (records are copies: the samples go once the series is made) */
        ub_arena_mark m = ub_arena_get_mark(w->samples_arena);
        ub_samples kept;
        if (w->samples(w->samples_ctx, p, w->samples_arena, &kept) != 0)
            w->failed = w->source_failed = true;
        series_rec(w, w->source_failed ? own : &kept);
        ub_arena_release(w->samples_arena, m);
    } else if (own->authored || own->n) {
        series_rec(w, own);
    } else {
        put_vu(b, 0);
    }
    put_val(w, ub_prop_connections(p));
    put_val(w, ub_prop_targets(p));
    put_opt_str(w, b, ub_prop_default_target(p));
    put_fields(w, ub_prop_meta(p));
}

/* A prim is its head (name to properties), its child count and children,
 * then its tail (variant sets).  The whole-layer walk writes them in one
 * go; a stream writes a head when the first child closes. */
static void put_prim_head(ub_w *w, const ub_prim *p)
{
    ub_buf *b = &w->spec;
    const ub_prop *const *props = (const ub_prop *const *)p->props.v;
    uint32_t np = p->props.n;
    for (uint32_t i = 0; i < np && i < 2; i++)
        prefetch_range(props[i], sizeof *props[i]);
    if (p->meta.n)
        ub_prefetch(ub_value_data(&p->meta.v[0].value));
    put_str(w, b, p->name);
    put_u8(b, p->specifier);
    put_opt_str(w, b, p->type_name);
    put_fields(w, &p->meta);
    put_val(w, ub_prim_prim_order(p));
    put_val(w, ub_prim_property_order(p));
    put_vu(b, np);
    for (uint32_t i = 0; i < np; i++) {
        if (i + 2 < np)
            prefetch_range(props[i + 2], sizeof *props[i + 2]);
        put_prop(w, props[i]);
    }
}

static void put_prim(ub_w *w, const ub_prim *p, int depth);

static void put_prim_tail(ub_w *w, const ub_prim *p, int depth)
{
    ub_buf *b = &w->spec;
    put_vu(b, ub_prim_n_variant_sets(p));
    for (uint32_t i = 0; i < ub_prim_n_variant_sets(p); i++) {
        const ub_variant_set *vs = &ub_prim_variant_sets(p)[i];
        put_str(w, b, vs->name);
        put_vu(b, vs->variants.n);
        for (uint32_t k = 0; k < vs->variants.n; k++)
            put_prim(w, vs->variants.v[k], depth + 1);
    }
}

static void put_prim(ub_w *w, const ub_prim *p, int depth)
{
    if (depth > UB_USDB_MAX_DEPTH) {
        w->too_deep = true;
        return;
    }
    put_prim_head(w, p);
    const ub_prim *const *kids = (const ub_prim *const *)p->children.v;
    uint32_t nk = p->children.n;
    put_vu(&w->spec, nk);
    for (uint32_t i = 0; i < nk; i++) {
        if (i + 2 < nk)
            prefetch_range(kids[i + 2], sizeof *kids[i + 2]);
        put_prim(w, kids[i], depth + 1);
    }
    put_prim_tail(w, p, depth);
}

/* The layer's fields and sublayers, which the tree starts with. */
static void put_layer_head(ub_w *w)
{
    const ub_layer *l = w->layer;
    ub_buf *b = &w->spec;
    put_fields(w, &l->meta);
    put_u8(b, l->has_sublayers);
    put_vu(b, l->n_sublayers);
    for (uint32_t i = 0; i < l->n_sublayers; i++) {
        const ub_sublayer *s = &l->sublayers[i];
        put_str(w, b, s->asset);
        put_u8(b, (s->has_offset ? 1 : 0) | (s->has_scale ? 2 : 0));
        put_f64(b, s->offset.offset);
        put_f64(b, s->offset.scale);
    }
}

static void put_layer(ub_w *w)
{
    put_layer_head(w);
    put_prim(w, w->layer->root, 0);
}

/* --- the file --------------------------------------------------------- */

static void ub_w_free(ub_w *w)
{
    num_join(w); /* first: the thread may be working */
    ub_arena_free(w->samples_arena);
    for (ub_w_batch *b = w->free, *nx; b; b = nx) {
        nx = b->next;
        batch_free(b);
    }
    ub_w_num *n = &w->num;
    ub_buf_free(&n->recs);
    free(n->rec_off);
    ub_idtab_free(&n->rec_tab);
    free(n->rcache);
    ub_buf_free(&n->spec);
    free(n->sample_ids);
    ub_buf_free(&n->series);
    free(n->chunk_first);
    ZSTD_freeCCtx(n->cctx);
    ub_buf_free(&n->zout);
    free(n->zsec);
    num_free_gone(n);
    free(w->strs);
    ub_idtab_free(&w->str_tab);
    free(w->scache);
    ub_buf_free(&w->recs);
    ub_buf_free(&w->spec);
    ub_buf_free(&w->cand[0]);
    ub_buf_free(&w->cand[1]);
    ub_buf_free(&w->cand[2]);
    ub_buf_free(&w->ztmp);
    ZSTD_freeCCtx(w->trial);
    free(w->tmp);
    free(n->count_at);
    free(w->counts);
    free(w->open);
}

/* What only the walk and the numbering need -- the string and record
 * tables, their caches, the walk's buffers and trial compressor -- given
 * back once the numbering thread is joined: the skeleton and the
 * compressed sections are built next, and the output's peak need not
 * hold both.  What stays: the records, their offsets, the chunks and the
 * strings by id (STRS is written from them next). */
static void ub_w_drop_tables(ub_w *w)
{
    ub_w_num *n = &w->num;
    for (ub_w_batch *b = w->free, *nx; b; b = nx) {
        nx = b->next;
        batch_free(b);
    }
    w->free = NULL;
    ub_idtab_free(&n->rec_tab);
    free(n->rcache);
    n->rcache = NULL;
    num_free_gone(n);
    free(n->sample_ids);
    n->sample_ids = NULL;
    n->nsample = n->capsample = 0;
    ub_buf_free(&n->series);
    ub_idtab_free(&w->str_tab);
    free(w->scache);
    w->scache = NULL;
    ub_buf_free(&w->recs);
    ub_buf_free(&w->spec);
    for (int i = 0; i < 3; i++)
        ub_buf_free(&w->cand[i]);
    ub_buf_free(&w->ztmp);
    ZSTD_freeCCtx(w->trial);
    w->trial = NULL;
    free(w->tmp);
    w->tmp = NULL;
    w->tmp_cap = 0;
}

static int ub_w_fail(ub_diags *diags, const ub_layer *layer, const char *why)
{
    if (diags)
        ub_diag_add(diags, UB_ERROR, (ub_loc){layer->path, 0, 0}, NULL,
                    NULL, 0, "cannot write usdb: %s", why);
    return -1;
}

static int ub_w_fail_oom(ub_diags *diags, const ub_layer *layer)
{
    if (diags)
        ub_diag_add_oom(diags, (ub_loc){layer->path, 0, 0},
                        "out of memory writing usdb");
    return -1;
}

#define UB_W_TOO_DEEP "values or prims nested more than 1000 levels deep"

/* Make *w ready to walk layer (zeroed before); -1 after adding an error
 * to diags (w freed). */
static int ub_w_begin(ub_w *w, const ub_layer *layer, int level,
                      ub_diags *diags)
{
    w->layer = layer;
    w->diags = diags;
    w->tree_max_str = -1;
    w->num.tree_max_rec = -1;
    w->num.level = level;
    for (int i = 0; i < UB_W_DZ; i++)
        w->num.dz_chunk[i] = UINT32_MAX;
    /* level 0 stores: no point in choosing layouts for zstd then */
    w->trial = level != 0 ? ZSTD_createCCtx() : NULL;
    w->empty = ub_intern(layer->strtab, "", 0);
    w->scache = calloc(UB_W_SCACHE, sizeof *w->scache);
    w->num.rcache = calloc(UB_W_RCACHE, sizeof *w->num.rcache);
    if (!w->empty || !w->scache || !w->num.rcache) {
        ub_w_free(w);
        return ub_w_fail_oom(diags, layer);
    }
    num_start(w); /* else numbered inline */
    return 0;
}

static int ub_w_finish(ub_w *w, int level, ub_buf *out);

int ub_usdb_write(const ub_layer *layer, int level, ub_buf *out,
                  ub_diags *diags)
{
    return ub_usdb_write_with(layer, level, NULL, NULL, out, diags);
}

int ub_usdb_write_with(const ub_layer *layer, int level, ub_samples_fn fn,
                       void *ctx, ub_buf *out, ub_diags *diags)
{
    ub_w w;
    memset(&w, 0, sizeof w);
    if (ub_w_begin(&w, layer, level, diags) != 0)
        return -1;
    if (fn) {
        w.samples = fn;
        w.samples_ctx = ctx;
        if (!(w.samples_arena = ub_arena_new()))
            w.failed = true;
    }
    put_layer(&w);
    return ub_w_finish(&w, level, out);
}

/* The tree after the walk, written out with the rest of the file; w is
 * freed.  Returns 0, or -1 after adding an error to w->diags. */
static int ub_w_finish(ub_w *w, int level, ub_buf *out)
{
    const ub_layer *layer = w->layer;
    ub_diags *diags = w->diags;
    bool source_failed = w->source_failed;
    ub_arena_free(w->samples_arena);
    w->samples_arena = NULL;
    hand_off(w); /* the rest of the tree */

    /* STRS and RIDX once the tables are gone: the peak is the walk's
     * tables and buffers together, and STRS is as big as the strings. */
    num_join(w);
    ub_w_drop_tables(w);
    ub_buf strs, ridx;
    ub_buf_init(&strs);
    ub_buf_init(&ridx);
    put_vu(&strs, w->nstrs);
    for (uint32_t i = 0; i < w->nstrs; i++)
        put_vu(&strs, ub_str_len(w->strs[i]));
    for (uint32_t i = 0; i < w->nstrs; i++)
        ub_buf_append(&strs, w->strs[i], ub_str_len(w->strs[i]));
    free(w->strs);
    w->strs = NULL;
    w->capstrs = 0;
    if (w->too_deep) {
        ub_buf_free(&strs);
        ub_w_free(w);
        return ub_w_fail(diags, layer, UB_W_TOO_DEEP);
    }
    ub_w_num *n = &w->num;

    /* The last chunk; chunk_first[nchunks] is nrecs. */
    if (n->chunk_start < n->nrecs)
        chunk_close(n, n->nrecs);
    uint32_t nchunks = n->nchunks, *chunk_first = n->chunk_first;
    put_vu(&ridx, nchunks);
    for (uint32_t c = 0; c < nchunks; c++) {
        put_vu(&ridx, chunk_first[c + 1] - chunk_first[c]);
        for (uint32_t r = chunk_first[c]; r < chunk_first[c + 1]; r++)
            put_vu(&ridx, n->rec_off[r + 1] - n->rec_off[r]);
    }

    /* The skeleton: everything a reader needs at open, in one frame.  The
     * tree is most of it: it moves up in its own buffer for the rest to
     * go in front, instead of being copied into fresh pages. */
    ub_buf pre;
    ub_buf_init(&pre);
    put_vu(&pre, strs.len);
    ub_buf_append(&pre, strs.data, strs.len);
    put_vu(&pre, ridx.len);
    ub_buf_append(&pre, ridx.data, ridx.len);
    ub_buf skel = n->spec;
    ub_buf_init(&n->spec);
    /* a streamed tree: the child counts go in as it moves up, from the
     * end, segment by segment */
    size_t grow = pre.len;
    unsigned char vu[10];
    for (uint32_t k = 0; k < w->ncounts; k++)
        grow += enc_vu(vu, w->counts[k]);
    if (n->ncount_at != w->ncounts) {
        skel.failed = true; /* a hole the numbering side did not place */
    } else if (!pre.failed && ub_buf_reserve(&skel, grow)) {
        char *d = skel.data;
        size_t from = skel.len, to = skel.len + grow;
        for (uint32_t k = w->ncounts; k-- > 0;) {
            size_t seg = from - n->count_at[k];
            to -= seg;
            memmove(d + to, d + n->count_at[k], seg);
            size_t l = enc_vu(vu, w->counts[k]);
            to -= l;
            memcpy(d + to, vu, l);
            from = n->count_at[k];
        }
        memmove(d + pre.len, d, from); /* to == pre.len + from here */
        memcpy(d, pre.data, pre.len);
        skel.len += grow;
    }
    skel.failed = skel.failed || pre.failed;
    ub_buf_free(&pre);

    if (level < 0)
        level = auto_level(skel.len + n->recs_base + n->recs.len);
    ub_w_section *secs = calloc((size_t)nchunks + 1, sizeof *secs);
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    int rc = 0;
    if (w->failed || n->failed || strs.failed || ridx.failed ||
        n->recs.failed || skel.failed || !secs || !cctx)
        rc = -1;
    /* An empty output without a sink takes the chunks compressed during
     * the walk as they lie, the header and skeleton moved in before them,
     * instead of a copy of them all (twice the file in memory) */
    bool take = out->len == 0 && !out->sink && !out->failed && n->nzipped;
    ub_buf head;
    ub_buf_init(&head);
    ub_buf *to = take ? &head : out;
    if (rc == 0) {
        unsigned char hdr[UB_USDB_HEADER_LEN];
        memcpy(hdr, UB_USDB_MAGIC, UB_USDB_MAGIC_LEN);
        ub_put_le16(hdr + 8, UB_USDB_MAJOR);
        ub_put_le16(hdr + 10, UB_USDB_MINOR);
        ub_buf_append(to, hdr, sizeof hdr);
    }
    size_t nsec = 0;
    if (rc == 0)
        rc = put_section(cctx, level, to, UB_USDB_TAG_SKEL, skel.data,
                         skel.len, &secs[nsec++]);
    ub_buf_free(&skel);
    /* chunks compressed during the walk, then the rest */
    if (rc == 0 && n->nzipped) {
        for (uint32_t c = 0; c < n->nzipped; c++)
            secs[nsec++] = n->zsec[c];
        if (!take) {
            ub_buf_append(out, n->zout.data, n->zout.len);
        } else if (head.failed || !ub_buf_reserve(&n->zout, head.len)) {
            rc = -1;
        } else {
            memmove(n->zout.data + head.len, n->zout.data, n->zout.len);
            memcpy(n->zout.data, head.data, head.len);
            n->zout.len += head.len;
            ub_buf_free(out);
            *out = n->zout;
            ub_buf_init(&n->zout);
        }
    }
    ub_buf_free(&head);
    for (uint32_t c = n->nzipped; rc == 0 && c < nchunks; c++) {
        uint64_t a = n->rec_off[chunk_first[c]];
        uint64_t e = n->rec_off[chunk_first[c + 1]];
        rc = put_section(cctx, level, out, UB_USDB_TAG_DATA,
                         n->recs.data + (a - n->recs_base), (size_t)(e - a),
                         &secs[nsec++]);
    }
    if (rc == 0) {
        ub_buf ix;
        ub_buf_init(&ix);
        put_vu(&ix, nsec);
        for (size_t i = 0; i < nsec; i++) {
            unsigned char e[8];
            ub_put_le32(e, secs[i].tag);
            ub_buf_append(&ix, e, 4);
            put_u8(&ix, secs[i].codec);
            put_vu(&ix, secs[i].stored);
            put_vu(&ix, secs[i].raw);
            ub_put_le64(e, secs[i].hash);
            ub_buf_append(&ix, e, 8);
        }
        if (ix.failed || ix.len > UINT32_MAX) {
            rc = -1;
        } else {
            ub_buf_append(out, ix.data, ix.len);
            unsigned char tr[UB_USDB_TRAILER_LEN];
            ub_put_le32(tr, (uint32_t)ix.len);
            ub_put_le64(tr + 4, XXH3_64bits(ix.data, ix.len));
            ub_put_le16(tr + 12, UB_USDB_MAJOR);
            ub_put_le16(tr + 14, UB_USDB_MINOR);
            memcpy(tr + 16, UB_USDB_TAIL_MAGIC, 4);
            ub_buf_append(out, tr, sizeof tr);
        }
        ub_buf_free(&ix);
    }
    ub_buf_free(&skel);
    if (out->failed)
        rc = -1;
    ZSTD_freeCCtx(cctx);
    free(secs);
    ub_buf_free(&strs);
    ub_buf_free(&ridx);
    ub_w_free(w);
    if (rc != 0)
        return source_failed ? -1 : ub_w_fail_oom(diags, layer);
    return 0;
}

/* --- streamed --------------------------------------------------------- */

struct ub_usdb_stream {
    ub_w w;
    int level;
    ub_diags *diags;
    bool begun;    /* the walk has begun: w is live */
    bool reopened; /* text came for a prim whose head went out */
    bool broken;   /* prims out of order, or the walk could not begin */
    bool reported; /* ... and diags says why */
};

ub_usdb_stream *ub_usdb_stream_new(int level, ub_diags *diags)
{
    ub_usdb_stream *s = calloc(1, sizeof *s);
    if (s) {
        s->level = level;
        s->diags = diags;
    }
    return s;
}

void ub_usdb_stream_free(ub_usdb_stream *s)
{
    if (!s)
        return;
    if (s->begun)
        ub_w_free(&s->w); /* joins the numbering thread first */
    free(s);
}

/* A slot for a child count, filled when its prim closes: a hole in the
 * tree here, which the numbering side places (UB_W_COUNT). */
static uint32_t count_slot(ub_w *w)
{
    if (!grow((void **)&w->counts, &w->capcounts, w->ncounts + 1,
              sizeof *w->counts, 64)) {
        ub_w_oom(w);
        return 0;
    }
    pend_room(w);
    w->pend[w->npend++] = (ub_w_pend){0, 0, w->spec.len, 0, UB_W_COUNT};
    w->counts[w->ncounts] = 0;
    return w->ncounts++;
}

/* Write p's head and the hole for its child count, and keep it open. */
static void stream_open(ub_w *w, const ub_prim *p)
{
    if (!grow((void **)&w->open, &w->capopen, w->nopen + 1, sizeof *w->open,
              16)) {
        ub_w_oom(w);
        return;
    }
    put_prim_head(w, p);
    w->open[w->nopen].prim = p;
    w->open[w->nopen].slot = count_slot(w);
    w->nopen++;
}

void ub_usdb_stream_prim(void *ctx, const ub_layer *layer, const ub_prim *prim,
                         unsigned depth)
{
    ub_usdb_stream *s = ctx;
    ub_w *w = &s->w;
    if (s->reopened || s->broken)
        return;
    if (!s->begun) {
        if (ub_w_begin(w, layer, s->level, s->diags) != 0) {
            s->broken = s->reported = true;
            return;
        }
        s->begun = true;
        put_layer_head(w);
        stream_open(w, layer->root);
    }
    if (depth == 0 || layer != w->layer) {
        /* the pseudo-root is never handed over; one stream, one layer */
        s->broken = true;
        return;
    }
    if (depth > UB_USDB_MAX_DEPTH) {
        w->too_deep = true; /* reported at the end */
        return;
    }
    /* The ancestors whose heads are not out yet, from the top: prims
     * close children first, so the open ones are the top of the chain. */
    while (w->nopen < depth && !w->failed) {
        const ub_prim *a = prim;
        for (unsigned k = depth; k > w->nopen && a; k--)
            a = a->parent;
        if (!a) {
            s->broken = true; /* a depth its parents do not have */
            return;
        }
        stream_open(w, a);
    }
    if (w->failed || w->nopen > depth + 1 ||
        w->open[depth - 1].prim != prim->parent) {
        s->broken = true;
        return;
    }
    if (w->nopen == depth + 1 && w->open[depth].prim == prim) {
        /* its children went out after its head: now their count */
        w->counts[w->open[depth].slot] = prim->children.n;
        put_prim_tail(w, prim, (int)depth);
        w->nopen = depth;
    } else if (w->nopen == depth) {
        put_prim(w, prim, (int)depth); /* no child of its own streamed */
    } else {
        s->broken = true;
    }
}

void ub_usdb_stream_reopened(void *ctx, const ub_prim *prim)
{
    (void)prim;
    ((ub_usdb_stream *)ctx)->reopened = true;
}

int ub_usdb_stream_end(ub_usdb_stream *s, const ub_layer *layer, ub_buf *out)
{
    if (s->reopened)
        return 1;
    if (s->reported)
        return -1;
    if (s->begun && s->w.too_deep) /* the prims below were not written */
        return ub_w_fail(s->diags, layer, UB_W_TOO_DEEP);
    if (s->begun && s->w.failed)
        return ub_w_fail_oom(s->diags, layer);
    if (s->broken)
        return ub_w_fail(s->diags, layer,
                         "the prims were not handed over in order");
    ub_w *w = &s->w;
    if (!s->begun) {
        /* no prim was handed over: the layer has none but the root */
        if (ub_w_begin(w, layer, s->level, s->diags) != 0)
            return -1;
        s->begun = true;
        put_layer(w);
    } else {
        if (w->nopen != 1 || w->open[0].prim != layer->root)
            return ub_w_fail(s->diags, layer,
                             "the prims were not handed over in order");
        w->counts[w->open[0].slot] = layer->root->children.n;
        put_prim_tail(w, layer->root, 0);
        w->nopen = 0;
    }
    s->begun = false; /* ub_w_finish frees it */
    return ub_w_finish(w, s->level, out);
}
