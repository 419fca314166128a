/*
 * The crate (usdc) writer.  One pass over the layer's prims, children
 * first -- the order in which a streaming parse closes them, so that a
 * stream and a whole layer are one walk -- collects specs (path, spec
 * type, field set); values go to the file as they are met, after the
 * 88-byte bootstrap, deduplicated by their encoded bytes; then the six
 * structural sections, the table of contents, and the bootstrap is filled
 * in.  doc/usdc.md ("Writing") describes the choices.
 */
#include "ub_usdc_write.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "ub_arena.h"
#include "ub_cpus.h"
#include "ub_crate_encode.h"
#include "ub_ident.h"
#include "ub_idtab.h"
#include "ub_pages.h"
#include "ub_prefetch.h"
#include "ub_crate_format.h"
#include "ub_format.h"

/* LZ4 HC level for the structural sections: with fields numbered in the
 * specs' order, level 3 keeps the files smaller than OpenUSD's (its fast
 * mode).  HC costs ~7x fast mode's time, which on a big layer was a
 * sixth of the writer's, and gains most on the field reps (8% there, 3-4%
 * on field sets, tokens and specs): FIELDS gets it whatever its size, the
 * other sections only up to UB_USDC_HC_UPTO bytes -- every section of a
 * small layer, where it is cheap, and where a percent is most of the
 * margin on OpenUSD's sizes.  (On the prim-heavy bench layer: 0.4% larger
 * than HC everywhere, still 0.4% under OpenUSD's.)
 * Integer and float arrays among the values get LZ4's fast mode: their
 * coded integers gain next to nothing from HC, and may be big. */
#define UB_USDC_HC 3
#define UB_USDC_HC_UPTO ((size_t)64 << 10)
#define UB_USDC_HC_ARRAYS 0

/* FIELDS' reps are HC's longest input, a third of the storing side's
 * end on a big layer: from this size they are cut into two LZ4 chunks,
 * the walk's side compressing the first while the storing side does the
 * second.  Readers take chunks of any size; the matches lost at the cut
 * cost ~200 bytes on the prim-heavy bench layer's 0.8 MB of reps. */
#define UB_USDC_CUT ((size_t)256 << 10)

#define UB_FCACHE 4096 /* entries of the recent-field cache (64 KiB) */
#define UB_TCACHE 4096 /* and of the recent-token cache */
#define UB_WCACHE 4096 /* and of the walk's recent-value cache (256 KiB) */
#define UB_WCACHE_BYTES 48 /* the most value bytes a wcache entry holds */
#define UB_SCACHE 1024 /* entries of the walk's recent-spec cache (80 KiB) */
#define UB_SCACHE_BYTES 64 /* the most record bytes (4 fields) one holds */
#define UB_BACK (64u << 10) /* bytes of a handed-over value read back at once */
#define UB_ARRAY_NAMES 16

static uint64_t ub_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* --- growable arrays ------------------------------------------------------ */

/* A growable array: cap elements at v, n of them used; from 64 KiB its
 * block is pages of its own (ub_scratch_resize), the first `present`
 * bytes of which were made present ahead of the pushes (UB_PUSH). */
#define UB_VEC(T) struct { T *v; size_t n, cap, present; ub_pages *pages; }

static bool ub_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need)
        cap2 *= 2;
    void *p = ub_scratch_resize(*v, *cap * elem, cap2 * elem);
    if (!p)
        return false;
    *v = p;
    *cap = cap2;
    return true;
}

/* Give a vector's block back as soon as it is done with: the sections are
 * built and appended to the output last, the peak of the whole write. */
#define UB_VEC_FREE(vec) UB_VEC_KEEP(NULL, vec)

/* The same, the block kept in k (ub_kept_free) for the temporaries of the
 * sections, built next; k NULL: freed. */
#define UB_VEC_KEEP(k, vec)                                                  \
    do {                                                                     \
        ub_vec_gone((k), (vec).v, (vec).cap * sizeof *(vec).v);              \
        (vec).v = NULL;                                                      \
        (vec).n = (vec).cap = (vec).present = 0;                             \
    } while (0)

static void ub_vec_gone(ub_kept *k, void *v, size_t n)
{
    if (k)
        ub_kept_free(k, v, n);
    else
        ub_scratch_free(v, n);
}

/* A block of cap elements (ub_kept_alloc's, its pages present) becomes
 * the vector, n of them used; the vector's old block is kept in k. */
#define UB_VEC_ADOPT(k, vec, block, len, cap_)                               \
    do {                                                                     \
        UB_VEC_KEEP(k, vec);                                                 \
        (vec).v = (block);                                                   \
        (vec).n = (len);                                                     \
        (vec).cap = (cap_);                                                  \
        (vec).present = (cap_) * sizeof *(vec).v;                            \
    } while (0)

/* Grow an array to hold count elements of elem bytes (false: out of
 * memory).  A big array's pages are made present a step (256 KiB) ahead
 * of its end, one system call a step: faulted in one by one, they were a
 * quarter of the storing side's time.  Inline: every push asks. */
static inline bool ub_room(void **v, size_t n, size_t *cap, size_t *present,
                           ub_pages *pages, size_t count, size_t elem)
{
    if (!ub_grow(v, cap, count, elem))
        return false;
    size_t end = count * elem, size = *cap * elem;
    if (end > *present && size >= UB_SCRATCH_PAGES && !UB_ASAN)
        *present = ub_pages_ahead(pages, *v, *present, n * elem, end, size);
    return true;
}

/* Room for count elements in a growable array (false: out of memory),
 * the pages up to them present (ub_room). */
#define UB_ROOM(vec, count)                                                  \
    ub_room((void **)&(vec).v, (vec).n, &(vec).cap, &(vec).present,         \
            (vec).pages, (count), sizeof *(vec).v)

/* Entry i of a growable array, the entries up to it added zeroed; NULL
 * when out of memory. */
static void *ub_at_zeroed(void **v, size_t *n, size_t *cap, size_t *present,
                          ub_pages *pages, size_t i, size_t elem)
{
    if (i >= *n) {
        if (!ub_room(v, *n, cap, present, pages, i + 1, elem))
            return NULL;
        memset((char *)*v + *n * elem, 0, (i + 1 - *n) * elem);
        *n = i + 1;
    }
    return (char *)*v + i * elem;
}

#define UB_AT_ZEROED(vec, i)                                                 \
    ub_at_zeroed((void **)&(vec).v, &(vec).n, &(vec).cap, &(vec).present,    \
                 (vec).pages, (i), sizeof *(vec).v)

#define UB_PUSH(w, vec, x)                                                   \
    do {                                                                     \
        if (UB_ROOM(vec, (vec).n + 1))                                       \
            (vec).v[(vec).n++] = (x);                                        \
        else                                                                 \
            (w)->oom = true;                                                 \
    } while (0)

/* --- the writer's state --------------------------------------------------- */

/* 16 bytes: a node a spec, the writer's biggest table.  Children are
 * listed newest first (PATHS then has a prim's properties before its
 * child prims, which the reader does not mind), so a node needs no
 * pointer to its last child. */
typedef struct ub_pnode {
    uint32_t parent;     /* UINT32_MAX for the root */
    uint32_t token : 30; /* element token (UB_MAX_TOKENS) */
    uint32_t is_prop : 1; /* a prim property: the token is its name */
    /* every child is in pnode_tab: set once a path's text has named a
     * child here.  Children the walk adds elsewhere need no lookup (a
     * prim's names are distinct), the bulk of the nodes */
    uint32_t indexed : 1;
    uint32_t first, next; /* children, newest first; next sibling */
} ub_pnode;

/* The spec sort's key of a spec at node nd (ub_spec_rec.name1): a prim
 * property's name token + 1, else 0. */
static inline uint32_t ub_pnode_name1(const ub_pnode *nd)
{
    return nd->is_prop ? nd->token + 1 : 0;
}

/* Tokens a file may have: an element token has 30 bits in a node. */
#define UB_MAX_TOKENS ((uint32_t)1 << 30)

/* The first field made of a value: its name's token + 1 (0: none yet)
 * and its index.  A value is mostly a field of one name, so this finds
 * its field without a probe of the field table, which holds only the
 * fields that are not their value's first (and the inlined values that
 * are not strings or tokens). */
typedef struct ub_first {
    uint32_t ftok1, field;
} ub_first;
typedef UB_VEC(ub_first) ub_firsts;

typedef struct ub_vrec {
    uint64_t rep;   /* the whole rep (type, flags, offset) */
    uint64_t len;
    ub_first first;
} ub_vrec;

typedef struct ub_field_rec {
    uint32_t token;
    /* the first field set whose newest field this is: its start + 1 (0:
     * none).  Likewise it spares most field sets a probe of fset_tab. */
    uint32_t fset1;
    uint64_t rep;
} ub_field_rec;

typedef struct ub_spec_rec {
    uint32_t path, fset, type;
    uint32_t name1; /* a prim property's spec: its name's token + 1 (the
                       spec sort's key, handed over so that the storing
                       side can count the specs of each name as they
                       come), else 0 */
} ub_spec_rec;

/* A spec kept at its path (ub_st.by_path), which is its index there:
 * half a spec_rec.  Its name1 is not kept: the spec sort reads it off
 * the path's node, in path order as it takes these (12 -> 8 bytes, 3 MB
 * fewer new pages on the prim-heavy bench layer). */
typedef struct ub_spec_at {
    uint32_t fset, type; /* (a type of 0: no spec there) */
} ub_spec_at;

enum {
    UB_K_DOC, UB_K_INHERITS, UB_K_VARIANTS, UB_K_VARIANTSETS,
    UB_K_PERMISSION, UB_K_RELOCATES, UB_K_DISPLAYUNIT, UB_K_COUNT
};
static const char *const ub_key_text[UB_K_COUNT] = {
    "doc", "inherits", "variants", "variantSets", "permission", "relocates",
    "displayUnit",
};

/* The storing side: values deduplicated into the file, fields, field
 * sets and specs numbered.  The walk (ub_cw) hands it records in order
 * (ub_q below), on a thread of its own where there is a second CPU; it
 * meets them in the walk's order either way, so it numbers everything as
 * one thread would and the file is the same bytes.  The walk names a
 * stored value by a ticket: the value's rep with the ticket number as
 * payload, not inlined (payload 0 stays an empty array's). */
typedef struct ub_st {
    ub_buf *out;
    size_t base;       /* where the file starts in out */
    bool oom;
    /* where out's bytes are handed over as they are written (NULL:
     * nowhere, out holds them all); the bytes handed over so far, so
     * that out's byte i is the file's byte gone + i */
    const ub_usdc_file *file;
    uint64_t gone;
    unsigned char *back; /* UB_BACK bytes: a stored value read back */

    UB_VEC(ub_vrec) vals;
    ub_idtab val_tab;
    UB_VEC(uint32_t) ticket_val; /* ticket - 1 -> value record */
    /* ticket - 1 -> that record's rep: a repeated value's record was
     * written long ago, and reading its rep there was a cache miss */
    UB_VEC(uint64_t) ticket_rep;

    UB_VEC(ub_field_rec) fields;
    ub_idtab field_tab;
    UB_VEC(uint32_t) fsets;
    ub_idtab fset_tab;
    uint32_t empty_fset1; /* the empty field set's start + 1, 0: none */
    /* the specs by path (a type of 0: no spec there): the spec sort
     * takes them in path order without a pass that fetches each at
     * random; n: the entries zeroed so far */
    UB_VEC(ub_spec_at) by_path;
    size_t nspecs;
    /* specs at a path that has one already (none are made), in the
     * order they came; after the spec sort, every spec, sorted */
    UB_VEC(ub_spec_rec) specs;
    /* the number of specs of each property name, by its token (name1 -
     * 1): the spec sort's counts, kept as the specs come */
    UB_VEC(uint32_t) per_name;
    UB_VEC(uint32_t) cur; /* field indices of the spec being built */
    /* the field set of the spec in each entry of the walk's spec cache
     * (ub_cw.scache), as the SPEC records that fill them say; NULL
     * (and no scache) when there was no memory */
    uint32_t *slot_fset;
    /* the first fields of inlined string and token values (a prim's
     * documentation, a name), by string and token index */
    ub_firsts string_first;
    ub_firsts token_first;
    /* the batch's values without tickets and their hashes (ub_st_batch) */
    UB_VEC(struct ub_ahead {
        const char *r;
        uint64_t h;
    }) ahead;
    /* the fields made last, direct-mapped by (token, rep): most repeat
     * (typeName = "float", kind = "component", the same properties
     * list), and a hit here spares a probe of the field table, a cache
     * miss once it outgrows the cache; NULL when there was no memory */
    struct ub_fcache {
        uint64_t rep;
        uint32_t token, id1; /* id + 1, 0: empty */
    } *fcache;
    ub_crate_lz4c lz4; /* for its sections: */
    ub_buf sec[3]; /* FIELDS, FIELDSETS and SPECS (ub_st_sections) */
    /* FIELDS' reps when cut (UB_USDC_CUT): the first chunk (the walk's)
     * and the second; sec[0] then ends with the chunk count, and its size
     * slot at fields_size_at (else SIZE_MAX) is filled in once both are
     * made */
    ub_buf fields_chunk[2];
    size_t fields_size_at;
    /* FIELDSETS and SPECS, taken by whichever side is free first
     * (ub_sec_either) */
    atomic_bool fsets_taken, specs_taken;
    /* the blocks of what only the walk needed (ub_st_free_walk), for
     * the sections' temporaries: their pages are present, new ones
     * would each be a fault and a clear */
    ub_kept kept;
    /* pages a streamed parse's tail gives back as its prims go out, for
     * the arrays of both sides and the values' buffer as they grow
     * (ub_cw_use_pages); NULL: none */
    ub_pages *pages;
} ub_st;

/* A batch of records from the walk to the storing side. */
typedef struct ub_batch {
    ub_buf buf;
    struct ub_batch *next;
} ub_batch;

typedef struct ub_q {
    pthread_mutex_t mu;
    pthread_cond_t more, room; /* a batch to store; an emptied one */
    ub_batch *head, *tail;     /* handed over, in order */
    ub_batch *free;            /* stored, to be filled again */
    size_t nbatch;             /* made so far */
    size_t queued;             /* batches in that list */
    bool busy;                 /* a thread is storing a batch */
    /* every CPU is parsing: the parse's threads store the batches, the
     * storing thread sleeps (ub_q_hand); and the tail's is ahead */
    bool parsing, tail_ahead;
    bool closed;
    bool sections; /* at the end, the storing side builds its sections */
    /* every batch is stored: out (the values) is the walk's from then on */
    bool stored;
    /* the fields are final (or the storing side failed): the walk may
     * compress a part of FIELDS while the storing side does the rest */
    bool renumbered;
    pthread_cond_t renumber; /* (either of the two) */
    pthread_t th;
} ub_q;

typedef struct ub_cw {
    const ub_layer *layer;
    ub_strtab *strtab;
    ub_diags *diags;
    uint32_t version;
    bool oom, failed;
    /* samples kept outside the layer (ub_usdc_to), read into the arena
     * an attribute at a time; NULL: none */
    ub_samples_fn samples;
    void *samples_ctx;
    ub_arena *samples_arena;

    ub_st st;
    ub_q *q;        /* the storing thread's queue; NULL: stored here */
    /* q, once it exists, for a split parse's tail to store from (read on
     * the tail's thread: ub_usdc_stream_tail_pace), and the batches it
     * stored (under q's lock) */
    _Atomic(ub_q *) q_shared;
    size_t tail_stored;
    unsigned cpus;  /* online */
    /* the threads a streaming parse keeps busy (parse_threads) */
    unsigned parse_threads;
    ub_batch *qb;   /* the batch being filled */
    bool st_sections; /* no thread: ub_q_join builds the storing side's
                         sections */
    uint64_t tickets; /* stored values handed over so far */
    /* the short values handed over last that hold no tickets, by hash:
     * most values that repeat (a list op of API schemas, a properties
     * list) repeat often, and one met again takes the earlier one's
     * ticket and is not handed over again.  The storing side then never
     * sees it, nor probes val_tab and compares with bytes stored long
     * before -- two cache misses, or a read back from the file once
     * those bytes left the window: the prim-heavy bench layer repeats
     * 400,000 values, almost all of 9 to 32 bytes.  (Without this cache
     * the walk was cheaper, its lookup a miss for each value met once:
     * -16 ms by bench/ab, 95% -47..+16; but in an 8 MiB window 247,000
     * values were read back rather than 31,000, and the convert took
     * 1.7-2.0 s rather than 1.4-1.8.)  NULL when there was no memory. */
    struct ub_wcache {
        uint64_t rep; /* flags | ticket; 0: empty */
        uint64_t len; /* (the flags say the alignment) */
        unsigned char bytes[UB_WCACHE_BYTES]; /* (the entry a cache line) */
    } *wcache;
    /* the hashes of wcache's entries, apart from them: most values
     * looked up are met for the first time, and are told from an entry
     * by its hash in these 32 KiB, which stay in the cache; read in the
     * 256 KiB of entries, it was a miss that took most of the walk's
     * time in ub_cw_store */
    uint64_t *wtag;
    /* The spec being built: where its records start in the batch, and
     * whether it handed a value over (its records must then all go:
     * the storing side numbers values in the order they come).  The
     * specs made last whose records were fields alone, by the hash of
     * those records: specs of the same fields have the same field set,
     * and most specs repeat one met shortly before (a prim's specifier
     * and kind; a property's type, variability and a value met again
     * through wcache).  A spec met again here goes over as that entry's
     * field set, its fields dropped from the batch: on the prim-heavy
     * bench layer 425,000 of 761,000 specs, and 1.5 of 3.4 million
     * fields the storing side no longer looks up (~2% of the convert's
     * CPU time).  NULL when there was no memory. */
    size_t spec_from;
    bool spec_stored;
    struct ub_scache {
        uint64_t h;
        uint32_t len; /* 0: empty (a spec of no fields never comes
                         here: there is nothing to save) */
        unsigned char recs[UB_SCACHE_BYTES];
    } *scache;

    UB_VEC(const char *) tokens;
    /* TOKENS' text, NUL after each, written as each token is new: at
     * the end the tokens are cold, scattered over the string table, and
     * reading them back took a third of TOKENS' time */
    ub_buf token_text;
    /* the strtab's marks hold the tokens' indices + 1 (ub_cw_token); else
     * (another writer has them) token_tab and tcache find them */
    bool marks;
    ub_idtab token_tab;
    UB_VEC(uint32_t) strings; /* string index -> token index */
    UB_VEC(uint32_t) tok_string; /* token index -> string index + 1 */

    UB_VEC(ub_pnode) pnodes; /* path index -> node */
    /* child prims not given their name's token yet (ub_cw_child), in
     * the order made (name NULL once given one), and the runs of them
     * that share a parent: a prim's run is the newest when it is done,
     * and there are no more runs than open prims */
    UB_VEC(struct ub_unnamed {
        uint32_t node;
        const char *name;
    }) unnamed;
    UB_VEC(struct ub_unnamed_run {
        uint32_t parent;
        size_t start; /* its first entry in unnamed */
    }) runs;
    ub_idtab pnode_tab;        /* (parent, element, is_prop) -> index */
    ub_idtab ptext_tab;        /* interned path text -> index */
    UB_VEC(const char *) ptext; /* parallel to ptext_tab entries */
    UB_VEC(uint32_t) ptext_idx;
    uint32_t empty_path;     /* index of the empty path, or UINT32_MAX */

    ub_crate_lz4c lz4;    /* LZ4 HC, its state kept between calls */
    ub_crate_lz4c lz4v;   /* integer and float arrays: fast mode */
    ub_kept kept; /* as the storing side's (ub_st), for this side's */
    /* the tokens of the names met last */
    struct ub_tcache {
        const char *s;
        uint32_t id;
    } *tcache;
    /* the metadata keys the writer treats apart, interned: layer keys
     * are interned, so they compare by address */
    const char *key[UB_K_COUNT];
    /* field names the writer spells (string literals), by address */
    struct ub_cw_name {
        const char *lit;
        uint32_t token;
    } names[64]; /* (ub_cw_token_c) */
    /* array type names ("float3[]") by their element type's name */
    const char *array_names[UB_ARRAY_NAMES][2];
    /* ub_cw_scratch's stack: a buffer and the offsets in it of the
     * tickets it holds (a dictionary's values, a series' samples), which
     * the storing side replaces with the values' reps */
    struct ub_scratch {
        ub_buf b;
        UB_VEC(uint64_t) holes;
    } **scratch;
    size_t nscratch, capscratch;
    ub_buf no_scratch;    /* handed out, failed, when memory ran out */
    const ub_prim *where; /* the prim being written, for errors */
    const ub_prop *where_prop; /* and its property, or NULL */
} ub_cw;

static void ub_cw_error(ub_cw *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void ub_cw_error(ub_cw *w, const char *fmt, ...)
{
    if (w->failed)
        return;
    w->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* the prim's path text is made only now: it takes layer memory */
    const char *where =
        w->where ? ub_prim_path((ub_layer *)w->layer, w->where) : NULL;
    /* where the text has the property or prim (a flattened layer's come
     * from the layers it was made of; a binary layer's have no line) */
    ub_loc at = ub_layer_loc(w->layer, w->where_prop ? w->where_prop->loc
                                       : w->where   ? w->where->loc
                                                    : (ub_sloc){0});
    if (!at.file || !at.line)
        at = (ub_loc){w->layer->path, 0, 0};
    ub_diag_add(w->diags, UB_ERROR, at, NULL,
                NULL, 0, "%s%s%s%s%s: cannot be written as usdc: %s",
                where ? "<" : "", where ? where : "the layer",
                w->where_prop ? "." : "",
                w->where_prop ? w->where_prop->name : "", where ? ">" : "",
                msg);
}

static const char *ub_cw_intern(ub_cw *w, const char *s, size_t n)
{
    const char *r = ub_intern(w->strtab, s, n);
    if (!r)
        w->oom = true;
    return r;
}

static void ub_cw_upgrade(ub_cw *w, uint32_t v)
{
    if (v > w->version)
        w->version = v;
}

/* Look key up in t: its id when it is there (*fresh false); else it is
 * entered as id `next` (*fresh true), and the caller appends the entry
 * before t is probed again.  UINT32_MAX when out of memory. */
static uint32_t ub_cw_lookup(ub_cw *w, ub_idtab *t, uint64_t h, ub_idtab_eq eq,
                             const void *key, size_t next, bool *fresh)
{
    *fresh = false;
    ub_idslot *sl = ub_idtab_find(t, h, eq, w, key);
    if (!sl) {
        w->oom = true;
        return UINT32_MAX;
    }
    if (ub_idslot_used(sl))
        return ub_idslot_id(sl);
    ub_idtab_put(t, sl, h, (uint32_t)next);
    *fresh = true;
    return (uint32_t)next;
}

/* --- tokens and strings --------------------------------------------------- */

static bool ub_eq_token(const void *ctx, uint32_t id, const void *key)
{
    return ((const ub_cw *)ctx)->tokens.v[id] == key;
}

/* s, new to the file, as its next token; returns its index.  (Here too
 * what a token may not be.) */
static uint32_t ub_cw_new_token(ub_cw *w, const char *s)
{
    uint32_t id = (uint32_t)w->tokens.n;
    UB_PUSH(w, w->tokens, s);
    if (w->oom)
        return id;
    if (w->tokens.n > UB_MAX_TOKENS)
        ub_cw_error(w, "more than %lu distinct tokens and strings",
                    (unsigned long)UB_MAX_TOKENS);
    /* TOKENS keeps them NUL-separated: one with a NUL in it would shift
     * every later token (the usda reader cuts strings at a NUL; a usdb
     * file or the API may still hold one) */
    size_t n = ub_str_len(s);
    if (memchr(s, '\0', n))
        ub_cw_error(w, "the string or token \"%s\" holds a NUL byte", s);
    ub_buf_append(&w->token_text, s, n + 1);
    return id;
}

/* The token index of s, interned in w->strtab (its mark is written:
 * any other pointer would have 4 bytes before it overwritten). */
static uint32_t ub_cw_token(ub_cw *w, const char *s)
{
    if (!s)
        s = ub_cw_intern(w, "", 0);
    if (!s)
        return 0;
    if (w->marks) {
        uint32_t m = ub_str_mark(s);
        if (m)
            return m - 1;
        if (w->oom)
            return 0;
        uint32_t id = ub_cw_new_token(w, s);
        if (w->oom)
            return 0;
        ub_str_set_mark(s, id + 1);
        return id;
    }
    /* one multiply places it in the cache; the full mix only on a miss */
    uint64_t g = (uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull;
    struct ub_tcache *tc =
        w->tcache ? &w->tcache[(g >> 40) & (UB_TCACHE - 1)] : NULL;
    if (tc && tc->s == s)
        return tc->id;
    uint64_t h = ub_mix((uintptr_t)s);
    bool fresh;
    uint32_t id = ub_cw_lookup(w, &w->token_tab, h, ub_eq_token, s,
                               w->tokens.n, &fresh);
    if (fresh)
        ub_cw_new_token(w, s);
    if (id == UINT32_MAX || w->oom)
        return 0;
    if (tc)
        *tc = (struct ub_tcache){s, id};
    return id;
}

/* The token of a string literal, kept by the literal's address in a
 * table that never evicts: the writer spells a few dozen names, and
 * interning one again each time two shared a slot (a lock while a split
 * parse runs) cost 3% of a big layer's write. */
static uint32_t ub_cw_token_c(ub_cw *w, const char *lit)
{
    enum { N = sizeof w->names / sizeof *w->names };
    size_t h = (size_t)(((uint64_t)(uintptr_t)lit * 0x9E3779B97F4A7C15ull) >>
                        58) % N;
    for (size_t k = 0; k < N; k++, h = (h + 1) % N) {
        if (w->names[h].lit == lit)
            return w->names[h].token;
        if (!w->names[h].lit)
            break;
    }
    uint32_t tok = ub_cw_token(w, ub_cw_intern(w, lit, strlen(lit)));
    if (!w->names[h].lit && !w->oom)
        w->names[h] = (struct ub_cw_name){lit, tok};
    return tok;
}

/* The string index of interned s (strings are tokens behind an index). */
static uint32_t ub_cw_string(ub_cw *w, const char *s)
{
    uint32_t tok = ub_cw_token(w, s);
    if (w->oom)
        return 0;
    if (tok >= w->tok_string.n) {
        size_t n = w->tokens.n;
        if (!ub_grow((void **)&w->tok_string.v, &w->tok_string.cap, n,
                     sizeof *w->tok_string.v)) {
            w->oom = true;
            return 0;
        }
        memset(w->tok_string.v + w->tok_string.n, 0,
               (n - w->tok_string.n) * sizeof *w->tok_string.v);
        w->tok_string.n = n;
    }
    uint32_t *id1 = &w->tok_string.v[tok];
    if (!*id1) {
        *id1 = (uint32_t)w->strings.n + 1;
        UB_PUSH(w, w->strings, tok);
    }
    return *id1 - 1;
}

/* --- paths ---------------------------------------------------------------- */

typedef struct ub_pkey {
    uint32_t parent, token;
    bool is_prop;
} ub_pkey;

static bool ub_eq_pnode(const void *ctx, uint32_t id, const void *key)
{
    const ub_pnode *n = &((const ub_cw *)ctx)->pnodes.v[id];
    const ub_pkey *k = key;
    return n->parent == k->parent && n->token == k->token &&
           n->is_prop == k->is_prop;
}

static uint64_t ub_pnode_hash(uint32_t parent, uint32_t token, bool is_prop)
{
    return ub_mix(((uint64_t)parent << 33) ^ ((uint64_t)token << 1) ^ is_prop);
}

/* A child prim of the walk gets its name's token only once its parent
 * is done, where primChildren has just numbered the names of all the
 * siblings, in their order: OpenUSD's writer numbers them so, and names
 * side by side (prop_000805, prop_000806, ...) compress far better in
 * TOKENS than names each next to its own prim's strings (0.5% of the
 * prim-heavy bench layer's file).  Until then the node's token is 0 and
 * nothing reads it: a path looked up among the parent's children names
 * them first (ub_cw_index_children), and PATHS is built after all are
 * named. */

/* Note node, just made as a child prim of parent, as unnamed. */
static void ub_cw_unnamed_add(ub_cw *w, uint32_t parent, uint32_t node,
                              const char *name)
{
    if (!w->runs.n || w->runs.v[w->runs.n - 1].parent != parent)
        UB_PUSH(w, w->runs,
                ((struct ub_unnamed_run){parent, w->unnamed.n}));
    UB_PUSH(w, w->unnamed, ((struct ub_unnamed){node, name}));
}

/* Give the unnamed entries [from, to) their tokens. */
static void ub_cw_name_run(ub_cw *w, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        struct ub_unnamed *u = &w->unnamed.v[i];
        if (u->name) {
            w->pnodes.v[u->node].token = ub_cw_token(w, u->name);
            u->name = NULL;
        }
    }
}

/* Node p is done: its unnamed children (the newest run) get their
 * tokens and leave the list. */
static void ub_cw_name_done(ub_cw *w, uint32_t p)
{
    while (w->runs.n && w->runs.v[w->runs.n - 1].parent == p) {
        size_t from = w->runs.v[--w->runs.n].start;
        ub_cw_name_run(w, from, w->unnamed.n);
        w->unnamed.n = from;
    }
}

/* Node p's unnamed children get their tokens now, p not done (every
 * unnamed node when p is UINT32_MAX).  The runs are few, so finding p's
 * costs little. */
static void ub_cw_name_now(ub_cw *w, uint32_t p)
{
    for (size_t k = 0; k < w->runs.n; k++)
        if (p == UINT32_MAX || w->runs.v[k].parent == p)
            ub_cw_name_run(w, w->runs.v[k].start,
                           k + 1 < w->runs.n ? w->runs.v[k + 1].start
                                             : w->unnamed.n);
}

/* Enter the children of node p in pnode_tab (from now on its new children
 * are entered as they come). */
static void ub_cw_index_children(ub_cw *w, uint32_t p)
{
    ub_cw_name_now(w, p); /* (their tokens are the keys) */
    w->pnodes.v[p].indexed = true;
    for (uint32_t c = w->pnodes.v[p].first; c != UINT32_MAX && !w->oom;
         c = w->pnodes.v[c].next) {
        const ub_pnode *n = &w->pnodes.v[c];
        ub_pkey k = {n->parent, n->token, n->is_prop};
        uint64_t h = ub_pnode_hash(n->parent, n->token, n->is_prop);
        ub_idslot *sl = ub_idtab_find(&w->pnode_tab, h, ub_eq_pnode, w, &k);
        if (!sl)
            w->oom = true;
        else if (!ub_idslot_used(sl))
            ub_idtab_put(&w->pnode_tab, sl, h, c);
    }
}

/* The child of path parent with element elem (interned; a property name
 * when is_prop), added when new.  walk: the child is one of the layer's
 * (a prim, property or variant met in the walk, which meets each once),
 * not a path's text. */
static uint32_t ub_cw_child(ub_cw *w, uint32_t parent, const char *elem,
                            bool is_prop, bool walk)
{
    uint32_t id = (uint32_t)w->pnodes.n;
    bool look = parent != UINT32_MAX &&
                (!walk || w->pnodes.v[parent].indexed);
    /* a child prim of the walk is named when its parent is done */
    bool later = walk && !look && !is_prop && parent != UINT32_MAX;
    uint32_t tok = later ? 0 : ub_cw_token(w, elem);
    if (w->oom)
        return 0;
    if (look) {
        if (!w->pnodes.v[parent].indexed)
            ub_cw_index_children(w, parent);
        ub_pkey k = {parent, tok, is_prop};
        bool fresh;
        id = ub_cw_lookup(w, &w->pnode_tab,
                          ub_pnode_hash(parent, tok, is_prop), ub_eq_pnode,
                          &k, w->pnodes.n, &fresh);
        if (!fresh)
            return id == UINT32_MAX ? 0 : id;
    }
    ub_pnode n = {.parent = parent, .token = tok, .is_prop = is_prop,
                  .first = UINT32_MAX, .next = UINT32_MAX};
    if (parent != UINT32_MAX)
        n.next = w->pnodes.v[parent].first;
    UB_PUSH(w, w->pnodes, n);
    if (w->oom)
        return 0;
    if (parent != UINT32_MAX)
        w->pnodes.v[parent].first = id;
    if (later)
        ub_cw_unnamed_add(w, parent, id, elem);
    return id;
}

static uint32_t ub_cw_child_n(ub_cw *w, uint32_t parent, const char *s,
                              size_t n, bool is_prop, bool walk)
{
    const char *e = ub_cw_intern(w, s, n);
    return e ? ub_cw_child(w, parent, e, is_prop, walk) : 0;
}

static uint32_t ub_cw_path_text(ub_cw *w, const char *text);

/* The variant selection child "{set=sel}" of a prim path. */
static uint32_t ub_cw_variant_path(ub_cw *w, uint32_t prim, const char *set,
                                   const char *sel)
{
    size_t ns = strlen(set), nv = sel ? strlen(sel) : 0;
    char *t = malloc(ns + nv + 4);
    if (!t) {
        w->oom = true;
        return 0;
    }
    t[0] = '{';
    memcpy(t + 1, set, ns);
    t[1 + ns] = '=';
    if (nv)
        memcpy(t + 2 + ns, sel, nv);
    t[2 + ns + nv] = '}';
    /* looked up: the layer model does not promise distinct variant names */
    uint32_t r = ub_cw_child_n(w, prim, t, ns + nv + 3, false, false);
    free(t);
    return r;
}

/* The target child "[target]" of a property path (the target is added to
 * the table too, as OpenUSD does). */
static uint32_t ub_cw_target_path(ub_cw *w, uint32_t prop, const char *target)
{
    ub_cw_path_text(w, target);
    size_t n = strlen(target);
    char *t = malloc(n + 3);
    if (!t) {
        w->oom = true;
        return 0;
    }
    t[0] = '[';
    memcpy(t + 1, target, n);
    t[n + 1] = ']';
    uint32_t r = ub_cw_child_n(w, prop, t, n + 2, false, false);
    free(t);
    return r;
}

/* Parse an absolute path's text into the table: prim names, variant
 * selections, one property, targets and relational attributes. */
static uint32_t ub_cw_parse_path(ub_cw *w, const char *s)
{
    uint32_t cur = 0; /* the root */
    const char *p = s + 1;
    bool in_prop = false;
    while (*p && !w->oom && !w->failed) {
        if (*p == '/') {
            p++;
            continue;
        }
        if (*p == '{') {
            const char *e = strchr(p, '}');
            if (!e)
                break;
            cur = ub_cw_child_n(w, cur, p, (size_t)(e - p + 1), false,
                                false);
            p = e + 1;
            continue;
        }
        if (*p == '[') {
            /* a target: up to the matching bracket */
            size_t n = strlen(p), e = ub_ident_close_bracket(p, n, 0);
            if (e == n)
                break;
            const char *ti = ub_cw_intern(w, p + 1, e - 1);
            if (ti)
                cur = ub_cw_target_path(w, cur, ti);
            p += e + 1;
            continue;
        }
        if (*p == '.') {
            size_t n = strcspn(p + 1, "[");
            if (!in_prop)
                cur = ub_cw_child_n(w, cur, p + 1, n, true, false);
            else /* a relational attribute: its element keeps the dot */
                cur = ub_cw_child_n(w, cur, p, n + 1, false, false);
            in_prop = true;
            p += 1 + n;
            continue;
        }
        size_t n = strcspn(p, "/{.[");
        cur = ub_cw_child_n(w, cur, p, n, false, false);
        p += n;
    }
    if (*p && !w->oom)
        ub_cw_error(w, "the path '%s' is not one crate can store", s);
    return cur;
}

static bool ub_eq_ptext(const void *ctx, uint32_t id, const void *key)
{
    return ((const ub_cw *)ctx)->ptext.v[id] == key;
}

/* The index of an absolute path given as interned text ("" is the empty
 * path, which has an index but no place in the tree). */
static uint32_t ub_cw_path_text(ub_cw *w, const char *text)
{
    if (!text || !*text) {
        if (w->empty_path == UINT32_MAX) {
            w->empty_path = (uint32_t)w->pnodes.n;
            ub_pnode n = {.parent = UINT32_MAX,
                          .token = ub_cw_token_c(w, ""),
                          .first = UINT32_MAX, .next = UINT32_MAX};
            UB_PUSH(w, w->pnodes, n);
        }
        return w->empty_path;
    }
    uint64_t h = ub_mix((uint64_t)(uintptr_t)text);
    ub_idslot *sl = ub_idtab_find(&w->ptext_tab, h, ub_eq_ptext, w, text);
    if (!sl) {
        w->oom = true;
        return 0;
    }
    if (ub_idslot_used(sl))
        return w->ptext_idx.v[ub_idslot_id(sl)];
    if (text[0] != '/') {
        ub_cw_error(w, "the path '%s' is not absolute", text);
        return 0;
    }
    uint32_t idx = ub_cw_parse_path(w, text);
    /* parsing may have grown the table: look again */
    sl = ub_idtab_find(&w->ptext_tab, h, ub_eq_ptext, w, text);
    if (!sl) {
        w->oom = true;
        return 0;
    }
    uint32_t id = (uint32_t)w->ptext.n;
    UB_PUSH(w, w->ptext, text);
    UB_PUSH(w, w->ptext_idx, idx);
    if (!w->oom)
        ub_idtab_put(&w->ptext_tab, sl, h, id);
    return idx;
}

/* --- scratch buffers -------------------------------------------------------- */

/* A buffer to encode one value in, from a stack reused for the whole
 * write: values nest (a dictionary's values are stored before it), and a
 * malloc and free per value were a tenth of the writer's instructions.
 * Returned in LIFO order with ub_cw_unscratch.  When there is no memory,
 * a buffer marked failed: appends to it are ignored and storing it sets
 * w->oom. */
static ub_buf *ub_cw_scratch(ub_cw *w)
{
    if (w->nscratch == w->capscratch) {
        size_t cap = w->capscratch ? w->capscratch * 2 : 16;
        struct ub_scratch **v = realloc(w->scratch, cap * sizeof *v);
        if (!v)
            return &w->no_scratch;
        for (size_t i = w->capscratch; i < cap; i++)
            v[i] = NULL;
        w->scratch = v;
        w->capscratch = cap;
    }
    struct ub_scratch **slot = &w->scratch[w->nscratch];
    if (!*slot) {
        if (!(*slot = calloc(1, sizeof **slot)))
            return &w->no_scratch;
        ub_buf_init(&(*slot)->b);
    }
    w->nscratch++;
    (*slot)->b.len = 0;
    (*slot)->b.failed = false;
    (*slot)->holes.n = 0;
    return &(*slot)->b;
}

static void ub_cw_unscratch(ub_cw *w, ub_buf *b)
{
    if (b != &w->no_scratch)
        w->nscratch--;
}

/* The scratch entry of b: the top of the stack (a value is encoded and
 * stored while its buffer is the newest), or NULL. */
static struct ub_scratch *ub_cw_scratch_of(ub_cw *w, const ub_buf *b)
{
    if (w->nscratch && &w->scratch[w->nscratch - 1]->b == b)
        return w->scratch[w->nscratch - 1];
    return NULL;
}

/* Whether rep is a ticket (see ub_st). */
static bool ub_is_ticket(uint64_t rep)
{
    return !(rep & UB_CRATE_REP_IS_INLINED) &&
           (rep & UB_CRATE_REP_PAYLOAD_MASK) != 0;
}

/* A rep inside a value's bytes: a ticket is noted, for the storing side
 * to replace. */
static void ub_put_rep(ub_cw *w, ub_buf *b, uint64_t rep)
{
    if (ub_is_ticket(rep)) {
        struct ub_scratch *sc = ub_cw_scratch_of(w, b);
        if (sc)
            UB_PUSH(w, sc->holes, b->len);
        else
            w->oom = true;
    }
    ub_buf_append(b, &rep, 8);
}

/* --- values --------------------------------------------------------------- */

static uint64_t ub_rep(ub_crate_type t, bool inlined, bool array,
                       uint64_t payload)
{
    return (array ? UB_CRATE_REP_IS_ARRAY : 0) |
           (inlined ? UB_CRATE_REP_IS_INLINED : 0) |
           ((uint64_t)t << UB_CRATE_REP_TYPE_SHIFT) |
           (payload & UB_CRATE_REP_PAYLOAD_MASK);
}

typedef struct ub_vkey {
    uint64_t rep; /* flags and type; no payload */
    const void *bytes;
    size_t len;
} ub_vkey;

/* Mark out failed for its file's sake: the file said why. */
static void ub_out_file_failed(ub_buf *out)
{
    out->failed = out->sink_failed = true;
}

/* Fail the write for its file's sake. */
static void ub_st_file_failed(ub_st *s)
{
    ub_out_file_failed(s->out);
    s->oom = true; /* (stops the write; no error of its own: sink_failed) */
}

/* Whether the bytes of a value stored at file offset at, handed over to
 * the file already, are b[0..n): read back a piece at a time. */
static bool ub_st_same_back(ub_st *s, uint64_t at, const char *b, size_t n)
{
    const void *in_place =
        s->file->view ? s->file->view(s->file->ctx, at, n) : NULL;
    if (in_place)
        return memcmp(in_place, b, n) == 0;
    if (!s->back && !(s->back = malloc(UB_BACK))) {
        s->oom = true;
        return false;
    }
    for (size_t done = 0; done < n;) {
        size_t piece = n - done < UB_BACK ? n - done : UB_BACK;
        if (s->file->read(s->file->ctx, s->back, piece, at + done) != 0) {
            ub_st_file_failed(s);
            return false;
        }
        if (memcmp(s->back, b + done, piece) != 0)
            return false;
        done += piece;
    }
    return true;
}

static bool ub_eq_val(const void *ctx, uint32_t id, const void *key)
{
    /* (the storing side's own table: reading back uses its buffer) */
    ub_st *s = (ub_st *)(uintptr_t)ctx;
    const ub_vrec *r = &s->vals.v[id];
    const ub_vkey *k = key;
    if ((r->rep & ~UB_CRATE_REP_PAYLOAD_MASK) != k->rep || r->len != k->len)
        return false;
    uint64_t at = s->base + (r->rep & UB_CRATE_REP_PAYLOAD_MASK);
    if (at >= s->gone)
        return memcmp(s->out->data + (at - s->gone), k->bytes, k->len) == 0;
    /* handed over: a value goes whole, never cut by a hand-over */
    return at + k->len <= s->gone && !s->oom &&
           ub_st_same_back(s, at, k->bytes, k->len);
}

/* Hand out's bytes to the file (ub_usdc_file); false when the file
 * failed (out is marked so). */
static bool ub_out_hand_over(ub_st *s)
{
    ub_buf *o = s->out;
    if (o->failed || !o->len)
        return true;
    if (s->file->write(s->file->ctx, o->data, o->len) != 0) {
        ub_out_file_failed(o);
        return false;
    }
    s->gone += o->len;
    o->len = 0;
    return true;
}

static void ub_st_hand_over(ub_st *s)
{
    if (!ub_out_hand_over(s))
        s->oom = true;
}

/* The key of a value's bytes of a type and flags (val_tab, wcache). */
static uint64_t ub_val_hash(uint64_t flags, const char *data, size_t len)
{
    return XXH3_64bits_withSeed(data, len, flags);
}

/* (The storing side.)  The record of an out-of-line value: the same
 * bytes of the same type and flags are stored once.  align: 8 for
 * uncompressed arrays, else 1; h: ub_val_hash of it.  *rep: the
 * record's rep.  UINT32_MAX when out of memory. */
static uint32_t ub_st_store(ub_st *s, uint64_t flags, const char *data,
                            size_t len, size_t align, uint64_t h,
                            uint64_t *rep_out)
{
    ub_vkey k = {flags, data, len};
    ub_idslot *sl = ub_idtab_find(&s->val_tab, h, ub_eq_val, s, &k);
    if (!sl) {
        s->oom = true;
        return UINT32_MAX;
    }
    if (ub_idslot_used(sl)) {
        uint32_t id = ub_idslot_id(sl);
        *rep_out = s->vals.v[id].rep;
        return id;
    }
    ub_buf *o = s->out;
    /* out holds the window at most, or the one value that outgrows it */
    if (s->file && o->len && o->len + len > s->file->window)
        ub_st_hand_over(s);
    uint64_t at = s->gone + o->len - s->base;
    for (; at % align; at++)
        ub_buf_putc(o, 0);
    ub_buf_append(o, data, len);
    if (o->failed) {
        s->oom = true;
        return UINT32_MAX;
    }
    uint64_t rep = flags | at;
    ub_vrec r = {rep, len, {0, 0}};
    uint32_t id = (uint32_t)s->vals.n;
    UB_PUSH(s, s->vals, r);
    if (s->oom)
        return UINT32_MAX;
    ub_idtab_put(&s->val_tab, sl, h, id);
    *rep_out = rep;
    return id;
}

/* (The storing side.)  The rep a ticket stands for (other reps are
 * what they say); *vid its value record, or UINT32_MAX. */
static uint64_t ub_st_rep(ub_st *s, uint64_t rep, uint32_t *vid)
{
    *vid = UINT32_MAX;
    if (!ub_is_ticket(rep))
        return rep;
    uint64_t t = rep & UB_CRATE_REP_PAYLOAD_MASK;
    if (t > s->ticket_val.n || t > s->ticket_rep.n ||
        s->ticket_val.v[t - 1] == UINT32_MAX) {
        s->oom = true;
        return 0;
    }
    *vid = s->ticket_val.v[t - 1];
    return s->ticket_rep.v[t - 1];
}

/* The records the walk hands the storing side, 8-byte aligned: a
 * 16-byte head, and for a value its length and alignment, the offsets
 * of the tickets in its bytes (ub_put_rep), then the bytes. */
enum { UB_R_VALUE = 1, UB_R_FIELD, UB_R_SPEC, UB_R_SPEC_AGAIN };
/* A SPEC record's kind holds, above its low byte, the scache entry it
 * fills + 1 (0: none); a SPEC_AGAIN record's, the entry whose field set
 * it has. */
#define UB_R_KIND(k) ((k) & 0xffu)
#define UB_R_SLOT(k) ((k) >> 8)
typedef struct ub_rhead {
    uint32_t kind;
    uint32_t a; /* VALUE: the number of tickets; FIELD: the name's token;
                   SPEC: the path */
    uint64_t b; /* VALUE: type and flags; FIELD: the rep; SPEC: the spec
                   type, and for a property its name's token + 1 << 32 */
} ub_rhead;

static inline char *ub_cw_rec(ub_cw *w, size_t n);

/* The ticket of an out-of-line value (ub_st_store stores it). */
static uint64_t ub_cw_store(ub_cw *w, uint64_t flags, const ub_buf *b,
                            size_t align)
{
    if (b->failed)
        w->oom = true;
    if (w->oom)
        return flags;
    struct ub_scratch *sc = ub_cw_scratch_of(w, b);
    size_t nh = sc ? sc->holes.n : 0;
    struct ub_wcache *wc = NULL;
    uint64_t vh = 0;
    if (!nh && b->len <= UB_WCACHE_BYTES && w->wcache) {
        vh = ub_val_hash(flags, b->data, b->len);
        size_t i = (vh >> 40) & (UB_WCACHE - 1);
        wc = &w->wcache[i];
        if (w->wtag[i] == vh && wc->rep &&
            (wc->rep & ~UB_CRATE_REP_PAYLOAD_MASK) == flags &&
            wc->len == b->len && memcmp(wc->bytes, b->data, b->len) == 0)
            return wc->rep;
    }
    char *r = ub_cw_rec(w, 32 + nh * 8 + ((b->len + 7) & ~(size_t)7));
    if (!r)
        return flags;
    ub_rhead h = {UB_R_VALUE, (uint32_t)nh, flags};
    uint64_t ext[2] = {b->len, align};
    memcpy(r, &h, sizeof h);
    memcpy(r + 16, ext, sizeof ext);
    if (nh)
        memcpy(r + 32, sc->holes.v, nh * 8);
    if (b->len)
        memcpy(r + 32 + nh * 8, b->data, b->len);
    uint64_t rep = flags | ++w->tickets;
    w->spec_stored = true;
    if (wc) {
        w->wtag[wc - w->wcache] = vh;
        *wc = (struct ub_wcache){rep, b->len, {0}};
        memcpy(wc->bytes, b->data, b->len);
    }
    return rep;
}

/* The value record at r (ub_cw_store's layout): its head, its length
 * and alignment (ext), where its bytes are; returns the next record. */
static char *ub_value_rec(char *r, ub_rhead *h, uint64_t ext[2], char **data)
{
    memcpy(h, r, sizeof *h);
    memcpy(ext, r + 16, 2 * sizeof *ext);
    *data = r + 32 + (size_t)h->a * 8;
    return *data + ((ext[0] + 7) & ~(uint64_t)7);
}

/* (The storing side.)  Store the value record at r, its tickets first
 * replaced by their reps; returns the next record.  *hash: the value's
 * hash, worked out ahead (ub_st_batch) for a value without tickets, else
 * NULL. */
static char *ub_st_value(ub_st *s, char *r, const uint64_t *hash)
{
    ub_rhead h;
    uint64_t ext[2];
    char *data;
    char *next = ub_value_rec(r, &h, ext, &data);
    for (uint32_t i = 0; i < h.a; i++) {
        uint64_t off, rep;
        uint32_t vid;
        memcpy(&off, r + 32 + (size_t)i * 8, 8);
        memcpy(&rep, data + off, 8);
        rep = ub_st_rep(s, rep, &vid);
        memcpy(data + off, &rep, 8);
    }
    uint64_t rep = 0;
    uint32_t id =
        s->oom ? UINT32_MAX
               : ub_st_store(s, h.b, data, ext[0], ext[1],
                             hash ? *hash : ub_val_hash(h.b, data, ext[0]),
                             &rep);
    UB_PUSH(s, s->ticket_val, id);
    UB_PUSH(s, s->ticket_rep, rep);
    return next;
}

/* n bytes at p to b; the test for room inline (values are encoded a
 * few bytes at a time). */
static inline void ub_wn(ub_buf *b, const void *p, size_t n)
{
    if (b->cap - b->len >= n && !b->failed) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    } else {
        ub_buf_append(b, p, n);
    }
}

static void ub_w32(ub_buf *b, uint32_t x) { ub_wn(b, &x, 4); }
static void ub_w64(ub_buf *b, uint64_t x) { ub_wn(b, &x, 8); }
static void ub_wf64(ub_buf *b, double x) { ub_wn(b, &x, 8); }

static ub_crate_type ub_crate_type_of(ub_type_id base)
{
    switch (base) {
    case UB_TY_BOOL: return UB_CRATE_BOOL;
    case UB_TY_UCHAR: return UB_CRATE_UCHAR;
    case UB_TY_INT: return UB_CRATE_INT;
    case UB_TY_UINT: return UB_CRATE_UINT;
    case UB_TY_INT64: return UB_CRATE_INT64;
    case UB_TY_UINT64: return UB_CRATE_UINT64;
    case UB_TY_HALF: return UB_CRATE_HALF;
    case UB_TY_FLOAT: return UB_CRATE_FLOAT;
    case UB_TY_DOUBLE: return UB_CRATE_DOUBLE;
    case UB_TY_TIMECODE: return UB_CRATE_TIME_CODE;
    case UB_TY_STRING: return UB_CRATE_STRING;
    case UB_TY_TOKEN: return UB_CRATE_TOKEN;
    case UB_TY_ASSET: return UB_CRATE_ASSET_PATH;
    case UB_TY_PATH_EXPRESSION: return UB_CRATE_PATH_EXPRESSION;
    case UB_TY_MATRIX2D: return UB_CRATE_MATRIX2D;
    case UB_TY_MATRIX3D: return UB_CRATE_MATRIX3D;
    case UB_TY_MATRIX4D: return UB_CRATE_MATRIX4D;
    case UB_TY_QUATH: return UB_CRATE_QUATH;
    case UB_TY_QUATF: return UB_CRATE_QUATF;
    case UB_TY_QUATD: return UB_CRATE_QUATD;
    case UB_TY_INT2: return UB_CRATE_VEC2I;
    case UB_TY_HALF2: return UB_CRATE_VEC2H;
    case UB_TY_FLOAT2: return UB_CRATE_VEC2F;
    case UB_TY_DOUBLE2: return UB_CRATE_VEC2D;
    case UB_TY_INT3: return UB_CRATE_VEC3I;
    case UB_TY_HALF3: return UB_CRATE_VEC3H;
    case UB_TY_FLOAT3: return UB_CRATE_VEC3F;
    case UB_TY_DOUBLE3: return UB_CRATE_VEC3D;
    case UB_TY_INT4: return UB_CRATE_VEC4I;
    case UB_TY_HALF4: return UB_CRATE_VEC4H;
    case UB_TY_FLOAT4: return UB_CRATE_VEC4F;
    case UB_TY_DOUBLE4: return UB_CRATE_VEC4D;
    case UB_TY_DICTIONARY: return UB_CRATE_DICTIONARY;
    default: return UB_CRATE_INVALID;
    }
}

/* Component c of element i as a double (numeric scalars). */
static double ub_comp(const ub_value *v, uint32_t i, unsigned c)
{
    return ub_value_get_double(v, i, c);
}

/* Whether x is exactly an integer of [lo, hi] (negative zero is not: it
 * would read back as +0). */
static bool ub_exact_int(double x, double lo, double hi)
{
    return x >= lo && x <= hi && x == (double)(int64_t)x &&
           !(x == 0 && signbit(x));
}

/* A scalar that fits the rep's 32 payload bits: *bits is the inlined
 * payload.  As OpenUSD inlines: 4-byte and smaller types always, as
 * their bytes;
 * (u)int64 in (u)int32 range; doubles exactly a float; vectors of int8
 * components; matrices with int8 diagonals and zeros elsewhere. */
static bool ub_inline_scalar(const ub_value *v, const ub_type *t,
                             uint32_t *bits)
{
    const void *e = ub_value_data(v);
    *bits = 0;
    unsigned nc = ub_type_ncomp(t);
    size_t es = ub_type_elem_size(t);
    if (es <= 4) { /* bool, uchar, half, int, uint, float, half2: raw */
        memcpy(bits, e, es);
        return true;
    }
    switch (t->base) {
    case UB_TY_INT64: {
        int64_t x;
        memcpy(&x, e, 8);
        if (x < INT32_MIN || x > INT32_MAX)
            return false;
        int32_t y = (int32_t)x;
        memcpy(bits, &y, 4);
        return true;
    }
    case UB_TY_UINT64: {
        uint64_t x;
        memcpy(&x, e, 8);
        if (x > UINT32_MAX)
            return false;
        *bits = (uint32_t)x;
        return true;
    }
    case UB_TY_DOUBLE: {
        double x;
        memcpy(&x, e, 8);
        float f = (float)x;
        if (isnan(x) || (double)f != x)
            return false;
        memcpy(bits, &f, 4);
        return true;
    }
    case UB_TY_INT2: case UB_TY_FLOAT2: case UB_TY_DOUBLE2:
    case UB_TY_INT3: case UB_TY_HALF3: case UB_TY_FLOAT3: case UB_TY_DOUBLE3:
    case UB_TY_INT4: case UB_TY_HALF4: case UB_TY_FLOAT4: case UB_TY_DOUBLE4: {
        int8_t b[4] = {0};
        for (unsigned c = 0; c < nc; c++) {
            double x = ub_comp(v, 0, c);
            if (!ub_exact_int(x, -128, 127))
                return false;
            b[c] = (int8_t)x;
        }
        memcpy(bits, b, 4);
        return true;
    }
    case UB_TY_MATRIX2D: case UB_TY_MATRIX3D: case UB_TY_MATRIX4D: {
        int8_t b[4] = {0};
        unsigned rows = t->rows;
        for (unsigned r = 0; r < rows; r++)
            for (unsigned c = 0; c < rows; c++) {
                double x = ub_comp(v, 0, r * rows + c);
                if (r != c ? (x != 0 || signbit(x))
                           : !ub_exact_int(x, -128, 127))
                    return false;
                if (r == c)
                    b[r] = (int8_t)x;
            }
        memcpy(bits, b, 4);
        return true;
    }
    default:
        return false;
    }
}

/* Element i's bytes as crate stores them: quaternions imaginary part
 * first, then the real part; everything else as the model holds it. */
static void ub_put_elem(ub_buf *b, const ub_value *v, const ub_type *t,
                        uint32_t i)
{
    size_t es = ub_type_elem_size(t);
    const char *e = ub_value_elem(v, i);
    if (t->base == UB_TY_QUATH || t->base == UB_TY_QUATF ||
        t->base == UB_TY_QUATD) {
        size_t cs = es / 4;
        ub_buf_append(b, e + cs, cs * 3);
        ub_buf_append(b, e, cs);
        return;
    }
    ub_buf_append(b, e, es);
}

static uint64_t ub_cw_value(ub_cw *w, const ub_value *v);

/* uint64 count, then n string / token indices (strings: string table). */
static void ub_put_str_list(ub_cw *w, ub_buf *b, const ub_value *v,
                            bool as_token)
{
    uint32_t n = v->kind == UB_V_DATA ? v->count : 0;
    ub_w64(b, n);
    for (uint32_t i = 0; i < n; i++) {
        const char *s = ub_value_str(v, i);
        ub_w32(b, as_token ? ub_cw_token(w, s) : ub_cw_string(w, s));
    }
}

/* Compressed float arrays (0.6.0): all integers, or a lookup table. */
static bool ub_put_float_array(ub_crate_lz4c *c, ub_buf *b,
                               const ub_value *v)
{
    uint32_t n = v->count;
    size_t es = ub_scalar_size(ub_value_type(v)->scalar);
    int32_t *ints = malloc((size_t)n * 4);
    if (!ints) {
        b->failed = true;
        return true;
    }
    bool integral = true;
    for (uint32_t i = 0; i < n && integral; i++) {
        double x = ub_comp(v, i, 0);
        integral = ub_exact_int(x, INT32_MIN, INT32_MAX);
        if (integral)
            ints[i] = (int32_t)x;
    }
    if (integral) {
        ub_w64(b, n);
        ub_buf_putc(b, 'i');
        ub_crate_put_ints32((const uint32_t *)ints, n, c, b);
        free(ints);
        return true;
    }
    /* A lookup table of at most min(n / 4, 1024) distinct values (by bits). */
    uint32_t max_lut = n / 4 < 1024 ? n / 4 : 1024;
    uint64_t lut[1024];
    uint32_t nlut = 0;
    uint32_t *idx = (uint32_t *)ints;
    enum { H = 4096 };
    uint16_t hash[H]; /* lut index + 1 */
    memset(hash, 0, sizeof hash);
    bool ok = max_lut > 0;
    for (uint32_t i = 0; i < n && ok; i++) {
        uint64_t bits = 0;
        memcpy(&bits, ub_value_elem(v, i), es);
        size_t j = (size_t)ub_mix(bits) & (H - 1);
        while (hash[j] && lut[hash[j] - 1] != bits)
            j = (j + 1) & (H - 1);
        if (!hash[j]) {
            if (nlut == max_lut) {
                ok = false;
                break;
            }
            lut[nlut++] = bits;
            hash[j] = (uint16_t)nlut;
        }
        idx[i] = hash[j] - 1u;
    }
    if (ok) {
        ub_w64(b, n);
        ub_buf_putc(b, 't');
        ub_w32(b, nlut);
        for (uint32_t k = 0; k < nlut; k++)
            ub_buf_append(b, &lut[k], es);
        ub_crate_put_ints32(idx, n, c, b);
    }
    free(ints);
    return ok;
}

/* An array value (also of length 0 or 1). */
static uint64_t ub_cw_array(ub_cw *w, const ub_value *v)
{
    const ub_type *t = ub_value_type(v);
    ub_crate_type ct = ub_crate_type_of(t->base);
    if (ct == UB_CRATE_INVALID || ct == UB_CRATE_DICTIONARY) {
        ub_cw_error(w, "no crate array type for '%s[]'", t->name);
        return 0;
    }
    if (ct == UB_CRATE_TIME_CODE)
        ub_cw_upgrade(w, UB_CRATE_V_TIMECODE);
    if (ct == UB_CRATE_PATH_EXPRESSION)
        ub_cw_upgrade(w, UB_CRATE_V_PATH_EXPRESSION);
    uint64_t flags = ub_rep(ct, false, true, 0);
    uint32_t n = v->count;
    if (n == 0)
        return flags;
    ub_buf *b = ub_cw_scratch(w);
    uint64_t rep;
    switch (t->scalar) {
    case UB_SC_INT:
    case UB_SC_UINT:
    case UB_SC_INT64:
    case UB_SC_UINT64:
        if (ub_type_ncomp(t) != 1)
            goto plain;
        ub_w64(b, n);
        if (n < UB_CRATE_MIN_COMPRESSED_ARRAY) {
            ub_buf_append(b, ub_value_data(v),
                          (size_t)n * ub_type_elem_size(t));
            rep = ub_cw_store(w, flags, b, 1);
        } else {
            if (t->scalar == UB_SC_INT || t->scalar == UB_SC_UINT)
                ub_crate_put_ints32(ub_value_data(v), n, &w->lz4v, b);
            else
                ub_crate_put_ints64(ub_value_data(v), n, &w->lz4v, b);
            rep = ub_cw_store(w, flags | UB_CRATE_REP_IS_COMPRESSED, b, 1);
        }
        break;
    case UB_SC_HALF:
    case UB_SC_FLOAT:
    case UB_SC_DOUBLE:
        if (ub_type_ncomp(t) != 1 || ct == UB_CRATE_TIME_CODE ||
            n < UB_CRATE_MIN_COMPRESSED_ARRAY ||
            !ub_put_float_array(&w->lz4v, b, v))
            goto plain;
        rep = ub_cw_store(w, flags | UB_CRATE_REP_IS_COMPRESSED, b, 1);
        break;
    case UB_SC_STRING:
        ub_put_str_list(w, b, v, ct == UB_CRATE_TOKEN);
        rep = ub_cw_store(w, flags, b, 8);
        break;
    default:
    plain:
        b->len = 0;
        ub_w64(b, n);
        for (uint32_t i = 0; i < n; i++)
            ub_put_elem(b, v, t, i);
        rep = ub_cw_store(w, flags, b, 8);
        break;
    }
    ub_cw_unscratch(w, b);
    return rep;
}

/* A scalar of a value type. */
static uint64_t ub_cw_scalar(ub_cw *w, const ub_value *v)
{
    const ub_type *t = ub_value_type(v);
    ub_crate_type ct = ub_crate_type_of(t->base);
    if (ct == UB_CRATE_INVALID || ct == UB_CRATE_DICTIONARY) {
        if (t->base == UB_TY_PATH)
            ub_cw_error(w, "a path value (OpenUSD cannot write it to usdc "
                           "either)");
        else
            ub_cw_error(w, "no crate value type for '%s'", t->name);
        return 0;
    }
    switch (ct) {
    case UB_CRATE_STRING:
        return ub_rep(ct, true, false, ub_cw_string(w, ub_value_str(v, 0)));
    case UB_CRATE_TOKEN:
    case UB_CRATE_ASSET_PATH:
        return ub_rep(ct, true, false, ub_cw_token(w, ub_value_str(v, 0)));
    default:
        break;
    }
    ub_buf *b = ub_cw_scratch(w);
    uint64_t rep;
    uint32_t bits;
    if (ct == UB_CRATE_PATH_EXPRESSION) {
        ub_cw_upgrade(w, UB_CRATE_V_PATH_EXPRESSION);
        ub_w32(b, ub_cw_string(w, ub_value_str(v, 0)));
        rep = ub_cw_store(w, ub_rep(ct, false, false, 0), b, 1);
    } else if (ct == UB_CRATE_TIME_CODE) {
        /* never inlined: 24.08 reads an inlined timecode as 0 */
        ub_cw_upgrade(w, UB_CRATE_V_TIMECODE);
        ub_buf_append(b, ub_value_data(v), 8);
        rep = ub_cw_store(w, ub_rep(ct, false, false, 0), b, 1);
    } else if (ub_inline_scalar(v, t, &bits)) {
        rep = ub_rep(ct, true, false, bits);
    } else {
        ub_put_elem(b, v, t, 0);
        rep = ub_cw_store(w, ub_rep(ct, false, false, 0), b, 1);
    }
    ub_cw_unscratch(w, b);
    return rep;
}

static int ub_cmp_entry_key(const void *a, const void *b)
{
    const ub_dict_entry *ea = *(const ub_dict_entry *const *)a;
    const ub_dict_entry *eb = *(const ub_dict_entry *const *)b;
    return strcmp(ea->key, eb->key);
}

#define UB_DICT_SMALL 16 /* entries sorted on the stack, not malloc'd */

/* The entries of d sorted by key (VtDictionary's order) into e, which
 * has room for UB_DICT_SMALL; a bigger one is malloc'd (the caller frees
 * what differs from e).  NULL for none or when out of memory (then
 * w->oom).  Dictionaries are mostly small (assetInfo, customData): an
 * insertion sort in place spares a malloc and a qsort each. */
static const ub_dict_entry **ub_sorted_entries(ub_cw *w, const ub_dict *d,
                                               const ub_dict_entry **e)
{
    if (!d || d->n == 0)
        return NULL;
    if (d->n > UB_DICT_SMALL) {
        e = malloc(d->n * sizeof *e);
        if (!e) {
            w->oom = true;
            return NULL;
        }
        for (uint32_t i = 0; i < d->n; i++)
            e[i] = &d->e[i];
        qsort(e, d->n, sizeof *e, ub_cmp_entry_key);
        return e;
    }
    for (uint32_t i = 0; i < d->n; i++) {
        const ub_dict_entry *x = &d->e[i];
        uint32_t j = i;
        for (; j > 0 && strcmp(e[j - 1]->key, x->key) > 0; j--)
            e[j] = e[j - 1];
        e[j] = x;
    }
    return e;
}

/* A dictionary's body: count, then (key string, forward offset, rep) per
 * entry; the values are packed before, so each offset is 8. */
static void ub_put_dict(ub_cw *w, ub_buf *b, const ub_dict *d)
{
    uint32_t n = d ? d->n : 0;
    const ub_dict_entry *small[UB_DICT_SMALL];
    uint64_t small_reps[UB_DICT_SMALL];
    const ub_dict_entry **e = ub_sorted_entries(w, d, small);
    uint64_t *reps = n <= UB_DICT_SMALL ? small_reps
                                        : calloc(n, sizeof *reps);
    if (n && (!e || !reps)) {
        w->oom = true;
        if (e != small)
            free(e);
        if (reps != small_reps)
            free(reps);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        reps[i] = ub_cw_value(w, &e[i]->value);
    ub_w64(b, n);
    for (uint32_t i = 0; i < n; i++) {
        ub_w32(b, ub_cw_string(w, e[i]->key));
        ub_w64(b, 8);
        ub_put_rep(w, b, reps[i]);
    }
    if (e != small)
        free(e);
    if (reps != small_reps)
        free(reps);
}

/* A dictionary value: empty ones are inlined. */
static uint64_t ub_cw_dict(ub_cw *w, const ub_dict *d)
{
    uint64_t flags = ub_rep(UB_CRATE_DICTIONARY, false, false, 0);
    if (!d || d->n == 0)
        return flags | UB_CRATE_REP_IS_INLINED;
    ub_buf *b = ub_cw_scratch(w);
    ub_put_dict(w, b, d);
    uint64_t rep = ub_cw_store(w, flags, b, 1);
    ub_cw_unscratch(w, b);
    return rep;
}

/* The inlined string rep of u's text; a list's without its brackets when
 * bare (as OpenUSD records a list op part of an unknown field). */
static uint64_t ub_cw_untyped_text(ub_cw *w, const ub_untyped *u, bool bare)
{
    ub_buf *b = ub_cw_scratch(w);
    ub_put_untyped(b, u);
    size_t skip = bare && u->kind == UB_U_LIST && b->len >= 2;
    if (b->failed)
        w->oom = true;
    const char *text =
        b->failed ? NULL
                  : ub_cw_intern(w, b->data + skip, b->len - 2 * skip);
    ub_cw_unscratch(w, b);
    return ub_rep(UB_CRATE_STRING, true, false,
                  text ? ub_cw_string(w, text) : 0);
}

/* A value of an unknown type: OpenUSD keeps the text it was written as
 * (SdfUnregisteredValue holding a string), stored as a nested value. */
static uint64_t ub_cw_unregistered(ub_cw *w, const ub_untyped *u)
{
    uint64_t text = ub_cw_untyped_text(w, u, false);
    ub_buf *b = ub_cw_scratch(w);
    ub_w64(b, 8);
    ub_w64(b, text);
    uint64_t rep = ub_cw_store(
        w, ub_rep(UB_CRATE_UNREGISTERED_VALUE, false, false, 0), b, 1);
    ub_cw_unscratch(w, b);
    return rep;
}

/* A value of a field, a dictionary entry or a time sample. */
static uint64_t ub_cw_value(ub_cw *w, const ub_value *v)
{
    switch (v->kind) {
    case UB_V_BLOCK:
        return ub_rep(UB_CRATE_VALUE_BLOCK, true, false, 0);
    case UB_V_DICT:
        return ub_cw_dict(w, v->u.dict);
    case UB_V_DATA:
        if (ub_value_type(v)->scalar == UB_SC_DICT && !v->is_array)
            return ub_cw_dict(w, v->count ? *(ub_dict *const *)ub_value_data(v)
                                          : NULL);
        if (v->is_array)
            return ub_cw_array(w, v);
        if (v->count != 1) {
            ub_cw_error(w, "a scalar of %u elements", v->count);
            return 0;
        }
        return ub_cw_scalar(w, v);
    case UB_V_LISTOP:
        ub_cw_error(w, "a list op where a value was expected");
        return 0;
    case UB_V_UNTYPED:
        return ub_cw_unregistered(w, v->u.untyped);
    default:
        ub_cw_error(w, "an empty value");
        return 0;
    }
}

/* --- list ops ------------------------------------------------------------- */

/* One item of a list op's part. */
static void ub_put_listop_item(ub_cw *w, ub_buf *b, ub_crate_type lt,
                               const ub_value *part, uint32_t i)
{
    switch (lt) {
    case UB_CRATE_TOKEN_LISTOP:
        ub_w32(b, ub_cw_token(w, ub_value_str(part, i)));
        break;
    case UB_CRATE_STRING_LISTOP:
        ub_w32(b, ub_cw_string(w, ub_value_str(part, i)));
        break;
    case UB_CRATE_PATH_LISTOP:
        ub_w32(b, ub_cw_path_text(w, ub_value_str(part, i)));
        break;
    case UB_CRATE_REFERENCE_LISTOP:
    case UB_CRATE_PAYLOAD_LISTOP: {
        const ub_reference *r = ub_value_elem(part, i);
        ub_w32(b, ub_cw_string(w, r->asset));
        ub_w32(b, ub_cw_path_text(w, r->prim_path));
        ub_wf64(b, r->offset.offset);
        ub_wf64(b, r->offset.scale);
        if (lt == UB_CRATE_REFERENCE_LISTOP)
            ub_put_dict(w, b, r->custom_data);
        break;
    }
    default: /* integers */
        ub_buf_append(b, ub_value_elem(part, i),
                      ub_type_elem_size(ub_value_type(part)));
        break;
    }
}

static ub_crate_type ub_listop_type(const ub_type *t)
{
    switch (t ? t->base : UB_TY_INVALID) {
    case UB_TY_TOKEN: return UB_CRATE_TOKEN_LISTOP;
    case UB_TY_STRING: return UB_CRATE_STRING_LISTOP;
    case UB_TY_PATH: return UB_CRATE_PATH_LISTOP;
    case UB_TY_REFERENCE: return UB_CRATE_REFERENCE_LISTOP;
    case UB_TY_PAYLOAD: return UB_CRATE_PAYLOAD_LISTOP;
    case UB_TY_INT: return UB_CRATE_INT_LISTOP;
    case UB_TY_INT64: return UB_CRATE_INT64_LISTOP;
    case UB_TY_UINT: return UB_CRATE_UINT_LISTOP;
    case UB_TY_UINT64: return UB_CRATE_UINT64_LISTOP;
    default: return UB_CRATE_INVALID;
    }
}

/* A list op's parts in stored order, with their header bits. */
static const struct {
    ub_listop_part part;
    uint8_t bit;
} ub_listop_order[] = {
    {UB_LO_EXPLICIT, UB_CRATE_LISTOP_HAS_EXPLICIT},
    {UB_LO_ADD, UB_CRATE_LISTOP_HAS_ADDED},
    {UB_LO_PREPEND, UB_CRATE_LISTOP_HAS_PREPENDED},
    {UB_LO_APPEND, UB_CRATE_LISTOP_HAS_APPENDED},
    {UB_LO_DELETE, UB_CRATE_LISTOP_HAS_DELETED},
    {UB_LO_REORDER, UB_CRATE_LISTOP_HAS_ORDERED},
};
#define UB_LO_ORDER_N (sizeof ub_listop_order / sizeof *ub_listop_order)

/* A list op of a field usdbake does not know (`prepend myKey = [...]`),
 * as OpenUSD's text reader keeps it: an unregistered value holding a list
 * op of unregistered values, a part one value with the part's text
 * without its brackets.  A part set to None is an empty part, which the
 * header leaves out as it leaves out every empty part. */
static uint64_t ub_cw_unregistered_listop(ub_cw *w, const ub_listop *lo)
{
    uint64_t text[UB_LO_ORDER_N];
    uint8_t h = lo->is_explicit ? UB_CRATE_LISTOP_IS_EXPLICIT : 0;
    for (size_t k = 0; k < UB_LO_ORDER_N; k++) {
        const ub_value *p = ub_listop_get(lo, ub_listop_order[k].part);
        if (!lo->has[ub_listop_order[k].part] || p->kind == UB_V_EMPTY ||
            (p->kind == UB_V_DATA && p->count == 0) ||
            (p->kind == UB_V_UNTYPED && p->u.untyped->kind == UB_U_LIST &&
             p->u.untyped->n == 0))
            continue;
        if (p->kind != UB_V_UNTYPED) {
            ub_cw_error(w, "a list op of an unknown field with typed items");
            return 0;
        }
        text[k] = ub_cw_untyped_text(w, p->u.untyped, true);
        h |= ub_listop_order[k].bit;
    }
    ub_buf *b = ub_cw_scratch(w);
    ub_buf_putc(b, (char)h);
    for (size_t k = 0; k < UB_LO_ORDER_N; k++) {
        if (!(h & ub_listop_order[k].bit))
            continue;
        ub_w64(b, 1); /* one item, a VtValue: a jump over nothing, a rep */
        ub_w64(b, 8);
        ub_w64(b, text[k]);
    }
    uint64_t lrep = ub_cw_store(
        w, ub_rep(UB_CRATE_UNREGISTERED_VALUE_LISTOP, false, false, 0), b, 1);
    b->len = 0;
    ub_w64(b, 8);
    ub_put_rep(w, b, lrep);
    uint64_t rep = ub_cw_store(
        w, ub_rep(UB_CRATE_UNREGISTERED_VALUE, false, false, 0), b, 1);
    ub_cw_unscratch(w, b);
    return rep;
}

/* A list op, as type lt (UB_CRATE_INVALID: by its element type). */
static uint64_t ub_cw_listop(ub_cw *w, const ub_value *v, ub_crate_type lt)
{
    const ub_listop *lo = v->u.listop;
    if (lt == UB_CRATE_INVALID && !ub_value_type(v))
        return ub_cw_unregistered_listop(w, lo);
    if (lt == UB_CRATE_INVALID)
        lt = ub_listop_type(ub_value_type(v));
    if (lt == UB_CRATE_INVALID) {
        ub_cw_error(w, "no crate list op of '%s'",
                    ub_value_type(v) ? ub_value_type(v)->name : "?");
        return 0;
    }
    uint8_t h = lo->is_explicit ? UB_CRATE_LISTOP_IS_EXPLICIT : 0;
    for (size_t k = 0; k < UB_LO_ORDER_N; k++) {
        const ub_value *p = ub_listop_get(lo, ub_listop_order[k].part);
        if (lo->has[ub_listop_order[k].part] && p->kind == UB_V_DATA &&
            p->count)
            h |= ub_listop_order[k].bit;
    }
    const ub_value *ex = ub_listop_get(lo, UB_LO_EXPLICIT);
    if (lt == UB_CRATE_PAYLOAD_LISTOP &&
        h == (UB_CRATE_LISTOP_IS_EXPLICIT | UB_CRATE_LISTOP_HAS_EXPLICIT) &&
        ex->count == 1 &&
        *((const ub_reference *)ub_value_elem(ex, 0))->asset) {
        /* One payload from another layer, set explicitly: a lone payload,
         * 9 bytes less, as OpenUSD stores it (the form crate had before
         * payload list ops; read back as this list op) */
        ub_buf *b = ub_cw_scratch(w);
        ub_put_listop_item(w, b, lt, ex, 0);
        uint64_t rep =
            ub_cw_store(w, ub_rep(UB_CRATE_PAYLOAD, false, false, 0), b, 1);
        ub_cw_unscratch(w, b);
        return rep;
    }
    if (lt == UB_CRATE_PAYLOAD_LISTOP)
        ub_cw_upgrade(w, UB_CRATE_V_PAYLOAD_LISTOP);
    ub_buf *b = ub_cw_scratch(w);
    ub_buf_putc(b, (char)h);
    for (size_t k = 0; k < UB_LO_ORDER_N; k++) {
        if (!(h & ub_listop_order[k].bit))
            continue;
        const ub_value *p = ub_listop_get(lo, ub_listop_order[k].part);
        ub_w64(b, p->count);
        for (uint32_t i = 0; i < p->count; i++)
            ub_put_listop_item(w, b, lt, p, i);
    }
    uint64_t rep = ub_cw_store(w, ub_rep(lt, false, false, 0), b, 1);
    ub_cw_unscratch(w, b);
    return rep;
}

/* --- fields, field sets, specs -------------------------------------------- */

static bool ub_eq_field(const void *ctx, uint32_t id, const void *key)
{
    const ub_field_rec *f = &((const ub_st *)ctx)->fields.v[id];
    const ub_field_rec *k = key;
    return f->token == k->token && f->rep == k->rep;
}

/* The table of first fields where an inlined string's or token's rep
 * has its entry (*i), or NULL: other reps have none. */
static ub_firsts *ub_st_firsts(ub_st *s, uint64_t rep, uint64_t *i)
{
    if (!(rep & UB_CRATE_REP_IS_INLINED) || (rep & UB_CRATE_REP_IS_ARRAY))
        return NULL;
    *i = rep & UB_CRATE_REP_PAYLOAD_MASK;
    switch ((rep >> UB_CRATE_REP_TYPE_SHIFT) & UB_CRATE_REP_TYPE_MASK) {
    case UB_CRATE_STRING:
        return &s->string_first;
    case UB_CRATE_TOKEN:
        return &s->token_first;
    default:
        return NULL;
    }
}

/* Where the first field of the value rep is kept, or NULL (then the
 * field table): a stored value's record (vid); an inlined string's or
 * token's entry. */
static ub_first *ub_st_first_of(ub_st *s, uint64_t rep, uint32_t vid)
{
    if (!(rep & UB_CRATE_REP_IS_INLINED))
        return vid != UINT32_MAX ? &s->vals.v[vid].first : NULL;
    uint64_t i;
    ub_firsts *t = ub_st_firsts(s, rep, &i);
    if (!t)
        return NULL;
    ub_first *f = UB_AT_ZEROED(*t, i);
    if (!f)
        s->oom = true;
    return f;
}

/* The key of a field (field_tab, fcache). */
static uint64_t ub_field_hash(uint32_t token, uint64_t rep)
{
    return ub_mix(rep * 31 + token);
}

/* The fcache entry of fields of hash h, or NULL (no fcache). */
static struct ub_fcache *ub_fcache_of(const ub_st *s, uint64_t h)
{
    return s->fcache ? &s->fcache[(h >> 40) & (UB_FCACHE - 1)] : NULL;
}

/* The number of the field (token, rep), a new one when it is new;
 * UINT32_MAX when out of memory.  rep is a stored rep (ub_st_rep), vid
 * its value's record or UINT32_MAX. */
static uint32_t ub_st_field_id(ub_st *s, uint32_t token, uint64_t rep,
                               uint32_t vid)
{
    ub_field_rec f = {token, 0, rep};
    /* A stored value's record, or a string's or token's, knows the
     * value's first field, and is asked first: for a value just stored
     * it is in the cache, where the fcache entry of a field never seen
     * was a miss (a quarter of this side's time went to that load).
     * The same field is found either way. */
    ub_first *vr = ub_st_first_of(s, rep, vid);
    if (vr && vr->ftok1 == token + 1)
        return vr->field;
    uint32_t id = (uint32_t)s->fields.n;
    if (vr && !vr->ftok1) {
        UB_PUSH(s, s->fields, f);
        if (s->oom)
            return UINT32_MAX;
        vr->ftok1 = token + 1;
        vr->field = id;
        return id;
    }
    /* else the fcache, then the field table */
    uint64_t h = ub_field_hash(token, rep);
    struct ub_fcache *fc = ub_fcache_of(s, h);
    if (fc && fc->id1 && fc->rep == rep && fc->token == token)
        return fc->id1 - 1;
    ub_idslot *sl = ub_idtab_find(&s->field_tab, h, ub_eq_field, s, &f);
    if (!sl) {
        s->oom = true;
        return UINT32_MAX;
    }
    if (ub_idslot_used(sl)) {
        id = ub_idslot_id(sl);
    } else {
        ub_idtab_put(&s->field_tab, sl, h, id);
        UB_PUSH(s, s->fields, f);
        if (s->oom)
            return UINT32_MAX;
    }
    if (fc)
        *fc = (struct ub_fcache){rep, token, id + 1};
    return id;
}

/* (The storing side.)  A field of the spec being built. */
static void ub_st_field(ub_st *s, uint32_t token, uint64_t rep)
{
    uint32_t vid;
    rep = ub_st_rep(s, rep, &vid);
    uint32_t id = ub_st_field_id(s, token, rep, vid);
    if (id == UINT32_MAX || s->oom)
        return;
    /* the spec's end reads the record of its newest field (its first
     * field set): fetched while the spec's other fields come */
    ub_prefetch(&s->fields.v[id]);
    UB_PUSH(s, s->cur, id);
}

typedef struct ub_fskey {
    const uint32_t *v;
    size_t n;
} ub_fskey;

static bool ub_eq_fset(const void *ctx, uint32_t id, const void *key)
{
    const ub_st *s = ctx;
    const ub_fskey *k = key;
    if (id + k->n >= s->fsets.n)
        return false;
    return memcmp(s->fsets.v + id, k->v, k->n * 4) == 0 &&
           s->fsets.v[id + k->n] == UINT32_MAX;
}

/* Whether the field set starting at fsets[start] is cur's. */
static bool ub_st_fset_is(const ub_st *s, uint32_t start)
{
    ub_fskey k = {s->cur.v, s->cur.n};
    return ub_eq_fset(s, start, &k);
}

/* (The storing side.)  Keep spec r at its path. */
static void ub_st_put_spec(ub_st *s, ub_spec_rec r)
{
    /* paths come mostly in order, most often the next one: that entry
     * is written whole (zeroed by a call to memset first, this function
     * took a third more samples); else the entries up to this one are
     * zeroed */
    ub_spec_at here = {r.fset, r.type};
    if (r.path == s->by_path.n && r.type) {
        if (!UB_ROOM(s->by_path, s->by_path.n + 1)) {
            s->oom = true;
            return;
        }
        s->by_path.v[s->by_path.n++] = here;
        s->nspecs++;
        return;
    }
    ub_spec_at *at = UB_AT_ZEROED(s->by_path, r.path);
    if (!at) {
        s->oom = true;
        return;
    }
    if (at->type || !r.type) {
        UB_PUSH(s, s->specs, r); /* (a second spec at the path) */
        return;
    }
    *at = here;
    s->nspecs++;
}

/* (The storing side.)  Where the field set of scache entry slot is kept;
 * NULL for a slot no walk names (or no cache). */
static uint32_t *ub_st_slot(const ub_st *s, uint32_t slot)
{
    return s->slot_fset && slot < UB_SCACHE ? &s->slot_fset[slot] : NULL;
}

/* (The storing side.)  The spec at path of the field set at start. */
static void ub_st_spec_at(ub_st *s, uint32_t path, uint32_t start,
                          uint32_t type, uint32_t name1)
{
    ub_spec_rec r = {path, start, type, name1};
    ub_st_put_spec(s, r);
    s->cur.n = 0;
    if (name1) {
        while (s->per_name.n < name1 && !s->oom)
            UB_PUSH(s, s->per_name, 0);
        if (!s->oom)
            s->per_name.v[name1 - 1]++;
    }
}

/* (The storing side.)  Close the spec being built: its field set
 * (shared when equal), kept in scache entry fill - 1 when fill is not
 * 0.  A set is found through its newest field when it is that field's
 * first set, else in fset_tab. */
static void ub_st_spec(ub_st *s, uint32_t path, uint32_t type,
                       uint32_t name1, uint32_t fill)
{
    uint32_t newest = UINT32_MAX; /* none: the empty set */
    for (size_t i = 0; i < s->cur.n; i++)
        if (newest == UINT32_MAX || s->cur.v[i] > newest)
            newest = s->cur.v[i];
    uint32_t *first = newest == UINT32_MAX ? &s->empty_fset1
                                           : &s->fields.v[newest].fset1;
    uint32_t start;
    if (*first && ub_st_fset_is(s, *first - 1)) {
        start = *first - 1;
    } else {
        ub_idslot *sl = NULL;
        uint64_t h = 0;
        if (*first) {
            ub_fskey k = {s->cur.v, s->cur.n};
            h = XXH3_64bits(s->cur.v, s->cur.n * 4);
            sl = ub_idtab_find(&s->fset_tab, h, ub_eq_fset, s, &k);
            if (!sl) {
                s->oom = true;
                return;
            }
        }
        if (sl && ub_idslot_used(sl)) {
            start = ub_idslot_id(sl);
        } else {
            start = (uint32_t)s->fsets.n;
            for (size_t i = 0; i < s->cur.n; i++)
                UB_PUSH(s, s->fsets, s->cur.v[i]);
            UB_PUSH(s, s->fsets, UINT32_MAX);
            if (s->oom)
                return;
            if (sl)
                ub_idtab_put(&s->fset_tab, sl, h, start);
            else
                *first = start + 1;
        }
    }
    uint32_t *slot = fill ? ub_st_slot(s, fill - 1) : NULL;
    if (slot)
        *slot = start;
    ub_st_spec_at(s, path, start, type, name1);
}

/* A batch is handed over once it holds this many bytes (at a spec's
 * end): small enough to stay in the cache between the threads, big
 * enough that the lock is rare.  At most UB_Q_MAX batches exist: the
 * walk may run 1 MiB ahead while the storing thread waits for a CPU (on
 * a busy machine it often does), then waits for it. */
#define UB_Q_BATCH ((size_t)64 << 10)
#define UB_AHEAD 8 /* values (ub_st_batch) */
#define UB_SECTIONS_AHEAD 8 /* specs (ub_cw_renumber) */
#define UB_Q_MAX 16
/* While every CPU parses, the batches the head's thread leaves for the
 * tail's before it stores them itself (ub_q_hand): while the tail is
 * behind, and while it is ahead. */
#define UB_Q_LAG 1
#define UB_Q_LEAVE 8

/* For the value of hash h, whose val_tab slot was fetched before: when
 * the slot names a value of that hash, fetch the value's record, or
 * (bytes) the value's bytes, where its record, fetched before in turn,
 * says they are.  A repeated value's record and bytes were written long
 * ago, and comparing them missed the cache as the slot's probe did. */
static void ub_st_fetch_val(ub_st *s, uint64_t h, bool bytes)
{
    const ub_idslot *sl = &s->val_tab.s[(uint32_t)h & (s->val_tab.cap - 1)];
    if (!ub_idslot_used(sl) || sl->h != (uint32_t)h)
        return;
    const ub_vrec *v = &s->vals.v[ub_idslot_id(sl)];
    if (!bytes) {
        ub_prefetch(v);
        return;
    }
    uint64_t at = s->base + (v->rep & UB_CRATE_REP_PAYLOAD_MASK);
    if (at >= s->gone) /* (else handed over: read back, not fetched) */
        ub_prefetch(s->out->data + (at - s->gone));
}

/* (The storing side.)  Every record of a batch, in order; then the
 * batch is empty.  A batch a big value (an array) made big gives its
 * memory back: that copy of the value is not kept to the end. */
static void ub_st_batch(ub_st *s, ub_buf *b)
{
    char *r = b->data, *end = b->data + b->len;
    /* The hashes of the values without tickets first, so that each
     * value's slot in val_tab is fetched UB_AHEAD values before it is
     * probed: the table outgrows the cache, and its probe, a miss, was
     * a quarter of the storing side's time.  Half as far ahead, the
     * record of the value that slot names (when its hash is the same),
     * and two values ahead that value's bytes: on the prim bench layer
     * the storing thread's memcmp took a third fewer samples. */
    s->ahead.n = 0;
    for (char *q = r; q < end;) {
        ub_rhead h;
        memcpy(&h, q, sizeof h);
        if (h.kind != UB_R_VALUE) {
            q += sizeof h;
            continue;
        }
        uint64_t ext[2];
        char *data;
        char *next = ub_value_rec(q, &h, ext, &data);
        if (!h.a)
            UB_PUSH(s, s->ahead,
                    ((struct ub_ahead){q, ub_val_hash(h.b, data, ext[0])}));
        q = next;
    }
    size_t next = 0; /* the first entry of ahead not stored yet */
    /* (Where each field would be looked up is not fetched ahead: made to
     * happen (ub_prefetch.h), that cost more than it saved, a field
     * mostly being found in its value's record, fetched already.) */
    while (r < end && !s->oom) {
        ub_rhead h;
        memcpy(&h, r, sizeof h);
        if (h.kind == UB_R_VALUE) {
            const uint64_t *hash = NULL;
            if (next < s->ahead.n && s->ahead.v[next].r == r) {
                hash = &s->ahead.v[next].h;
                const struct ub_ahead *a = s->ahead.v;
                size_t n = s->ahead.n;
                if (next + UB_AHEAD < n && s->val_tab.cap)
                    ub_prefetch(&s->val_tab.s[(uint32_t)a[next + UB_AHEAD].h &
                                              (s->val_tab.cap - 1)]);
                if (next + UB_AHEAD / 2 < n && s->val_tab.cap)
                    ub_st_fetch_val(s, a[next + UB_AHEAD / 2].h, false);
                if (next + 2 < n && s->val_tab.cap)
                    ub_st_fetch_val(s, a[next + 2].h, true);
                next++;
            }
            r = ub_st_value(s, r, hash);
            continue;
        }
        const uint32_t *again =
            UB_R_KIND(h.kind) == UB_R_SPEC_AGAIN
                ? ub_st_slot(s, UB_R_SLOT(h.kind))
                : NULL;
        if (h.kind == UB_R_FIELD)
            ub_st_field(s, h.a, h.b);
        else if (UB_R_KIND(h.kind) == UB_R_SPEC)
            ub_st_spec(s, h.a, (uint32_t)h.b, (uint32_t)(h.b >> 32),
                       UB_R_SLOT(h.kind));
        else if (again)
            ub_st_spec_at(s, h.a, *again, (uint32_t)h.b,
                          (uint32_t)(h.b >> 32));
        else
            s->oom = true; /* (a record no walk makes) */
        r += sizeof h;
    }
    b->len = 0;
    if (b->cap > 4 * UB_Q_BATCH) {
        ub_buf_free(b);
        ub_buf_init(b);
    }
}

/* --- handing records over ------------------------------------------------- */

static void ub_st_sections(ub_cw *w);

/* (The storing side.)  Tell the walk the field sets and specs are final. */
static void ub_q_renumbered(ub_q *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    q->renumbered = true;
    pthread_cond_signal(&q->renumber);
    pthread_mutex_unlock(&q->mu);
}

/* (Under q's lock.)  Hand batch b over, after the others. */
static void ub_q_push(ub_q *q, ub_batch *b)
{
    b->next = NULL;
    if (q->tail)
        q->tail->next = b;
    else
        q->head = b;
    q->tail = b;
    q->queued++;
}

/* (Under q's lock.)  Take the oldest batch handed over to store it. */
static ub_batch *ub_q_pop(ub_q *q)
{
    ub_batch *b = q->head;
    if (b) {
        if (!(q->head = b->next))
            q->tail = NULL;
        q->queued--;
        q->busy = true;
    }
    return b;
}

/* (Under q's lock, which it lets go meanwhile.)  Store the batch b
 * taken by ub_q_pop, and keep it to be filled again. */
static void ub_q_store(ub_cw *w, ub_q *q, ub_batch *b)
{
    pthread_mutex_unlock(&q->mu);
    ub_st_batch(&w->st, &b->buf);
    pthread_mutex_lock(&q->mu);
    q->busy = false;
    b->next = q->free;
    q->free = b;
    pthread_cond_signal(&q->room);
    if (!q->parsing) /* (the storing thread may wait for it) */
        pthread_cond_signal(&q->more);
}

static void *ub_st_main(void *arg)
{
    ub_cw *w = arg;
    ub_q *q = w->q;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        /* (a parse's thread may be storing, even once closed) */
        while (q->busy || ((!q->head || q->parsing) && !q->closed))
            pthread_cond_wait(&q->more, &q->mu);
        ub_batch *b = ub_q_pop(q);
        if (b) {
            ub_q_store(w, q, b);
            pthread_mutex_unlock(&q->mu);
            continue;
        }
        bool sections = q->sections;
        q->stored = true;
        pthread_cond_signal(&q->renumber);
        pthread_mutex_unlock(&q->mu);
        if (sections)
            ub_st_sections(w);
        ub_q_renumbered(q); /* (again, if sections did: harmless) */
        return NULL;
    }
}

static ub_batch *ub_batch_new(void)
{
    ub_batch *b = calloc(1, sizeof *b);
    if (b)
        ub_buf_init(&b->buf);
    return b;
}

static void ub_batch_free(ub_batch *b)
{
    if (b) {
        ub_buf_free(&b->buf);
        free(b);
    }
}

/* The first batch, and the storing thread when there is a second CPU
 * (else each batch is stored as it is handed over). */
static void ub_q_start(ub_cw *w)
{
    if (!(w->qb = ub_batch_new())) {
        w->oom = true;
        return;
    }
    if (ub_cpus() < 2)
        return;
    ub_q *q = calloc(1, sizeof *q);
    if (!q)
        return;
    if (pthread_mutex_init(&q->mu, NULL) != 0)
        goto no_mutex;
    if (pthread_cond_init(&q->more, NULL) != 0)
        goto no_more;
    if (pthread_cond_init(&q->room, NULL) != 0)
        goto no_room;
    if (pthread_cond_init(&q->renumber, NULL) != 0)
        goto no_renumber;
    q->nbatch = 1;
    q->parsing = w->parse_threads >= w->cpus;
    w->q = q;
    if (pthread_create(&q->th, NULL, ub_st_main, w) == 0) {
        atomic_store_explicit(&w->q_shared, q, memory_order_release);
        return;
    }
    w->q = NULL;
    pthread_cond_destroy(&q->renumber);
no_renumber:
    pthread_cond_destroy(&q->room);
no_room:
    pthread_cond_destroy(&q->more);
no_more:
    pthread_mutex_destroy(&q->mu);
no_mutex:
    free(q);
}

/* Hand the batch being filled over, and take an empty one. */
static void ub_q_hand(ub_cw *w)
{
    ub_batch *b = w->qb;
    if (!b || !b->buf.len)
        return;
    if (b->buf.failed) {
        w->oom = true;
        return;
    }
    ub_q *q = w->q;
    if (!q) {
        ub_st_batch(&w->st, &b->buf);
        return;
    }
    pthread_mutex_lock(&q->mu);
    ub_q_push(q, b);
    if (q->parsing) {
        /* Every CPU is parsing: the storing thread would take turns with
         * the parse's, each evicting the others' caches (storing it all
         * on this thread, a convert of the prim-heavy bench layer took
         * 11% less CPU).  This thread stores the batches, UB_Q_LAG
         * behind, but leaves them to the tail's while that is ahead
         * (ub_usdc_stream_tail_pace): the two then end their parts
         * together, whichever CPU is the faster. */
        size_t keep = q->tail_ahead ? UB_Q_LEAVE : UB_Q_LAG;
        while (q->queued > keep && !q->busy)
            ub_q_store(w, q, ub_q_pop(q));
    } else {
        pthread_cond_signal(&q->more);
    }
    while (!q->free && q->nbatch >= UB_Q_MAX)
        pthread_cond_wait(&q->room, &q->mu);
    b = q->free;
    if (b)
        q->free = b->next;
    else
        q->nbatch++;
    pthread_mutex_unlock(&q->mu);
    if (!b && !(b = ub_batch_new()))
        w->oom = true;
    w->qb = b;
}

/* The walk's end: the last batch handed over, and the storing side told
 * to build its sections (when nothing failed) once it has stored it. */
static void ub_q_close(ub_cw *w)
{
    ub_batch *b = w->qb;
    if (b && b->buf.failed)
        w->oom = true;
    bool send = b && b->buf.len && !w->oom;
    ub_q *q = w->q;
    if (!q) {
        if (send)
            ub_st_batch(&w->st, &b->buf);
        w->st_sections = !w->failed && !w->oom;
        return;
    }
    pthread_mutex_lock(&q->mu);
    if (send) {
        ub_q_push(q, b);
        w->qb = NULL;
    }
    q->closed = true;
    q->parsing = false; /* (what is left is the storing thread's) */
    q->sections = !w->failed && !w->oom;
    pthread_cond_signal(&q->more);
    pthread_mutex_unlock(&q->mu);
}

/* Wait until the storing side has stored every batch (or failed). */
static void ub_q_wait_stored(ub_cw *w)
{
    ub_q *q = w->q;
    if (!q)
        return; /* (stored here, by ub_q_close) */
    pthread_mutex_lock(&q->mu);
    while (!q->stored) /* (set before renumbered, failed or not) */
        pthread_cond_wait(&q->renumber, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

/* Wait until the storing side has renumbered the field sets and specs
 * (or failed): the fields are the walk's to read from then on.  Without a
 * storing thread, its sections are built here. */
static void ub_q_wait_renumbered(ub_cw *w)
{
    ub_q *q = w->q;
    if (q) {
        pthread_mutex_lock(&q->mu);
        while (!q->renumbered)
            pthread_cond_wait(&q->renumber, &q->mu);
        pthread_mutex_unlock(&q->mu);
    } else if (w->st_sections) {
        w->st_sections = false;
        ub_st_sections(w);
    }
}

/* Wait for the storing side (its thread ended, or its sections built
 * here): its state is the caller's again.  Again: nothing. */
static void ub_q_join(ub_cw *w)
{
    ub_q *q = w->q;
    if (q) {
        pthread_join(q->th, NULL); /* (it leaves when q->head is empty) */
        while (q->free) {
            ub_batch *b = q->free;
            q->free = b->next;
            ub_batch_free(b);
        }
        pthread_cond_destroy(&q->renumber);
        pthread_cond_destroy(&q->room);
        pthread_cond_destroy(&q->more);
        pthread_mutex_destroy(&q->mu);
        free(q);
        w->q = NULL;
        atomic_store_explicit(&w->q_shared, NULL, memory_order_relaxed);
    } else if (w->st_sections) {
        w->st_sections = false;
        ub_st_sections(w);
    }
    ub_batch_free(w->qb);
    w->qb = NULL;
    if (w->st.oom)
        w->oom = true;
}

/* Room for a record of n bytes in the batch being filled, or NULL (out
 * of memory).  Inlined: a record is made for every field, 3.5 million
 * on the prim-heavy bench layer, and the call was most of its cost. */
static inline __attribute__((always_inline)) char *ub_cw_rec(ub_cw *w,
                                                              size_t n)
{
    if (!w->qb) {
        w->oom = true;
        return NULL;
    }
    ub_buf *b = &w->qb->buf;
    /* (the test inline: a record is mostly 16 bytes) */
    char *p = b->cap - b->len >= n ? b->data + b->len : ub_buf_reserve(b, n);
    if (!p) {
        w->oom = true;
        return NULL;
    }
    b->len += n;
    return p;
}

static void ub_cw_field_tok(ub_cw *w, uint32_t token, uint64_t rep)
{
    if (w->failed || w->oom)
        return;
    char *r = ub_cw_rec(w, sizeof(ub_rhead));
    if (r) {
        ub_rhead h = {UB_R_FIELD, token, rep};
        memcpy(r, &h, sizeof h);
    }
}

static void ub_cw_field(ub_cw *w, const char *name, uint64_t rep)
{
    ub_cw_field_tok(w, ub_cw_token(w, name), rep);
}

/* A field named by a string literal (each spec names a few). */
static void ub_cw_field_c(ub_cw *w, const char *lit, uint64_t rep)
{
    ub_cw_field_tok(w, ub_cw_token_c(w, lit), rep);
}

/* The kind of the SPEC record closing the spec being built: when its
 * records (fields alone) are those of a spec in scache, SPEC_AGAIN of
 * that entry, and its fields are dropped from the batch; else SPEC,
 * filling the entry when they fit. */
static uint32_t ub_cw_spec_kind(ub_cw *w)
{
    ub_buf *b = &w->qb->buf;
    size_t len = b->len - w->spec_from;
    if (!w->scache || w->spec_stored || !len || len > UB_SCACHE_BYTES)
        return UB_R_SPEC;
    const unsigned char *recs = (const unsigned char *)b->data + w->spec_from;
    uint64_t h = XXH3_64bits(recs, len);
    uint32_t slot = (uint32_t)(h >> 40) & (UB_SCACHE - 1);
    struct ub_scache *e = &w->scache[slot];
    if (e->len == len && e->h == h && memcmp(e->recs, recs, len) == 0) {
        b->len = w->spec_from;
        return UB_R_SPEC_AGAIN | slot << 8;
    }
    e->h = h;
    e->len = (uint32_t)len;
    memcpy(e->recs, recs, len);
    return UB_R_SPEC | (slot + 1) << 8;
}

/* Close the spec being built (the storing side gives it its field set). */
static void ub_cw_spec(ub_cw *w, uint32_t path, ub_crate_spec_type type)
{
    if (w->failed || w->oom)
        return;
    if (!w->qb) {
        w->oom = true;
        return;
    }
    uint32_t kind = ub_cw_spec_kind(w);
    char *r = ub_cw_rec(w, sizeof(ub_rhead));
    if (r) {
        const ub_pnode *nd = &w->pnodes.v[path];
        ub_rhead h = {kind, path,
                      (uint64_t)type | (uint64_t)ub_pnode_name1(nd) << 32};
        memcpy(r, &h, sizeof h);
    }
    if (w->qb->buf.len >= UB_Q_BATCH)
        ub_q_hand(w); /* (which leaves no batch when out of memory) */
    w->spec_from = w->qb ? w->qb->buf.len : 0;
    w->spec_stored = false;
}

/* A token vector (primChildren, properties, ...). */
static uint64_t ub_cw_token_vector(ub_cw *w, const char *const *names,
                                   uint32_t n)
{
    ub_buf *b = ub_cw_scratch(w);
    ub_w64(b, n);
    for (uint32_t i = 0; i < n; i++)
        ub_w32(b, ub_cw_token(w, names[i]));
    uint64_t rep =
        ub_cw_store(w, ub_rep(UB_CRATE_TOKEN_VECTOR, false, false, 0), b, 1);
    ub_cw_unscratch(w, b);
    return rep;
}

/* --- metadata ------------------------------------------------------------- */

/* The crate field name of a text-format metadata keyword. */
static const char *ub_crate_field_name(const ub_cw *w, const char *key)
{
    if (key == w->key[UB_K_DOC])
        return "documentation";
    if (key == w->key[UB_K_INHERITS])
        return "inheritPaths";
    if (key == w->key[UB_K_VARIANTS])
        return "variantSelection";
    if (key == w->key[UB_K_VARIANTSETS])
        return "variantSetNames";
    return NULL;
}

/* A map of strings to strings (variantSelection). */
static uint64_t ub_cw_selection_map(ub_cw *w, const ub_dict *d)
{
    uint32_t n = d ? d->n : 0;
    const ub_dict_entry *small[UB_DICT_SMALL];
    const ub_dict_entry **e = ub_sorted_entries(w, d, small);
    ub_buf *b = ub_cw_scratch(w);
    ub_w64(b, n);
    for (uint32_t i = 0; i < n && e; i++) {
        const ub_value *v = &e[i]->value;
        ub_w32(b, ub_cw_string(w, e[i]->key));
        bool str = v->kind == UB_V_DATA &&
                   ub_value_type(v)->scalar == UB_SC_STRING;
        ub_w32(b, ub_cw_string(w, str ? ub_value_str(v, 0) : NULL));
    }
    if (e != small)
        free(e);
    uint64_t rep = ub_cw_store(
        w, ub_rep(UB_CRATE_VARIANT_SELECTION_MAP, false, false, 0), b, 1);
    ub_cw_unscratch(w, b);
    return rep;
}

/* Layer relocates: source/target path pairs (0.11.0). */
static uint64_t ub_cw_relocates(ub_cw *w, const ub_value *v)
{
    uint32_t n = v->kind == UB_V_DATA ? v->count / 2 : 0;
    if (n) /* as OpenUSD: an empty list needs no new version */
        ub_cw_upgrade(w, UB_CRATE_V_RELOCATES);
    ub_buf *b = ub_cw_scratch(w);
    ub_w64(b, n);
    for (uint32_t i = 0; i < 2 * n; i++)
        ub_w32(b, ub_cw_path_text(w, ub_value_str(v, i)));
    uint64_t rep =
        ub_cw_store(w, ub_rep(UB_CRATE_RELOCATES, false, false, 0), b, 1);
    ub_cw_unscratch(w, b);
    return rep;
}

static bool ub_is_key(const ub_cw *w, const ub_field *f, int k)
{
    return f->key == w->key[k];
}

/* One metadata field of a prim, property or the layer. */
static void ub_cw_meta(ub_cw *w, const ub_field *f, bool layer)
{
    const ub_value *v = &f->value;
    if (v->kind == UB_V_EMPTY)
        return;
    const char *name = ub_crate_field_name(w, f->key);
    uint64_t rep;
    if (ub_is_key(w, f, UB_K_PERMISSION) && v->kind == UB_V_DATA) {
        const char *s = ub_value_str(v, 0);
        rep = ub_rep(UB_CRATE_PERMISSION, true, false,
                     s && strcmp(s, "private") == 0 ? 1 : 0);
    } else if (ub_is_key(w, f, UB_K_VARIANTS) && v->kind == UB_V_DICT) {
        rep = ub_cw_selection_map(w, v->u.dict);
    } else if (ub_is_key(w, f, UB_K_RELOCATES)) {
        if (!layer) {
            ub_cw_error(w, "relocates authored on a prim (the legacy form; "
                           "OpenUSD cannot write it to usdc either)");
            return;
        }
        name = "layerRelocates";
        rep = ub_cw_relocates(w, v);
    } else if (ub_is_key(w, f, UB_K_DISPLAYUNIT)) {
        ub_cw_error(w, "displayUnit (an enum crate has no type for; "
                       "OpenUSD cannot write it to usdc either)");
        return;
    } else if (v->kind == UB_V_LISTOP) {
        rep = ub_cw_listop(w, v, ub_is_key(w, f, UB_K_VARIANTSETS)
                                     ? UB_CRATE_STRING_LISTOP
                                     : UB_CRATE_INVALID);
    } else {
        rep = ub_cw_value(w, v);
    }
    if (name)
        ub_cw_field_c(w, name, rep);
    else
        ub_cw_field(w, f->key, rep);
}

static void ub_cw_metas(ub_cw *w, const ub_fields *meta, bool layer)
{
    for (uint32_t i = 0; i < meta->n && !w->failed; i++)
        ub_cw_meta(w, &meta->v[i], layer);
}

/* --- the tree ------------------------------------------------------------- */

static uint64_t ub_cw_samples(ub_cw *w, const ub_samples *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (isnan(s->v[i].time)) {
            ub_cw_error(w, "a time sample at time nan (samples are kept "
                           "ordered by time; nan has no place among them)");
            return 0;
        }
    ub_buf *b = ub_cw_scratch(w);
    /* the times, shared by every attribute sampled at the same times */
    ub_w64(b, s->n);
    for (uint32_t i = 0; i < s->n; i++)
        ub_wf64(b, s->v[i].time);
    uint64_t times =
        ub_cw_store(w, ub_rep(UB_CRATE_DOUBLE_VECTOR, false, false, 0), b, 1);
    uint64_t *reps = s->n ? malloc(s->n * sizeof *reps) : NULL;
    if (s->n && !reps) {
        w->oom = true;
        ub_cw_unscratch(w, b);
        return 0;
    }
    for (uint32_t i = 0; i < s->n; i++)
        reps[i] = ub_cw_value(w, &s->v[i].value);
    b->len = 0;
    ub_w64(b, 8);
    ub_put_rep(w, b, times);
    ub_w64(b, 8);
    ub_w64(b, s->n);
    for (uint32_t i = 0; i < s->n; i++)
        ub_put_rep(w, b, reps[i]);
    free(reps);
    uint64_t rep =
        ub_cw_store(w, ub_rep(UB_CRATE_TIME_SAMPLES, false, false, 0), b, 1);
    ub_cw_unscratch(w, b);
    return rep;
}

/* An attribute's samples: the layer's, or where they wait
 * (ub_samples_fn), read back for the time it takes to store them. */
static uint64_t ub_cw_attr_samples(ub_cw *w, const ub_prop *p)
{
    const ub_samples *own = ub_prop_samples(p);
    if (own->n || !w->samples)
        return ub_cw_samples(w, own);
    ub_arena_mark m = ub_arena_get_mark(w->samples_arena);
    ub_samples kept;
    uint64_t rep = 0;
    if (w->samples(w->samples_ctx, p, w->samples_arena, &kept) != 0)
        w->failed = true; /* it said why */
    else
        rep = ub_cw_samples(w, &kept);
    ub_arena_release(w->samples_arena, m);
    return rep;
}

static uint64_t ub_cw_bool(bool b)
{
    return ub_rep(UB_CRATE_BOOL, true, false, b);
}

/* The type name token of an attribute: "float3[]" for arrays. */
static const char *ub_cw_type_name(ub_cw *w, const ub_prop *p)
{
    const char *tn = ub_prop_type_name(w->strtab, p);
    if (!tn)
        tn = ub_cw_intern(w, "", 0); /* a token is an interned string */
    if (!tn || !p->is_array)
        return tn;
    /* the last few made, by the element type's (interned) name */
    size_t slot = ((uintptr_t)tn >> 4) % UB_ARRAY_NAMES;
    if (w->array_names[slot][0] == tn)
        return w->array_names[slot][1];
    size_t n = strlen(tn);
    char *t = malloc(n + 3);
    if (!t) {
        w->oom = true;
        return NULL;
    }
    memcpy(t, tn, n);
    memcpy(t + n, "[]", 3);
    const char *r = ub_cw_intern(w, t, n + 2);
    free(t);
    if (r) {
        w->array_names[slot][0] = tn;
        w->array_names[slot][1] = r;
    }
    return r;
}

static void ub_cw_prop(ub_cw *w, uint32_t owner, const ub_prop *p)
{
    uint32_t path = ub_cw_child(w, owner, p->name, true, true);
    w->where_prop = p;
    /* (custom and variability as the layer has them: a crate layer may
     * leave them at their fallbacks, ub_prop.unwritten) */
    bool write_custom = !(p->unwritten & UB_UNWRITTEN_CUSTOM);
    bool write_variability = !(p->unwritten & UB_UNWRITTEN_VARIABILITY);
    if (p->kind == UB_ATTR) {
        if (write_custom)
            ub_cw_field_c(w, "custom", ub_cw_bool(p->custom));
        const char *tn = ub_cw_type_name(w, p);
        ub_cw_field_c(w, "typeName",
                      ub_rep(UB_CRATE_TOKEN, true, false, ub_cw_token(w, tn)));
        if (write_variability)
            ub_cw_field_c(w, "variability",
                          ub_rep(UB_CRATE_VARIABILITY, true, false,
                                 p->variability != UB_VARYING));
        /* the default before the metadata, in the order OpenUSD's text
         * reader sets them for `float a = 1 (doc = "...")` */
        if (p->default_value.kind != UB_V_EMPTY)
            ub_cw_field_c(w, "default", ub_cw_value(w, &p->default_value));
        ub_cw_metas(w, ub_prop_meta(p), false);
        if (ub_prop_samples(p)->authored)
            ub_cw_field_c(w, "timeSamples", ub_cw_attr_samples(w, p));
        if (ub_prop_connections(p)->kind == UB_V_LISTOP)
            ub_cw_field_c(
                w, "connectionPaths",
                ub_cw_listop(w, ub_prop_connections(p), UB_CRATE_PATH_LISTOP));
    } else {
        /* a relationship is uniform unless declared varying; OpenUSD's
         * text reader authors its custom field only when it is true, and
         * after the variability: the same field sets as its files keep
         * SPECS' set indices as small (22 KB on the prim bench layer) */
        if (write_variability)
            ub_cw_field_c(w, "variability",
                          ub_rep(UB_CRATE_VARIABILITY, true, false,
                                 !p->varying_keyword));
        if (p->custom)
            ub_cw_field_c(w, "custom", ub_cw_bool(true));
        ub_cw_metas(w, ub_prop_meta(p), false);
        for (uint32_t i = 0; i < ub_prop_samples(p)->n; i++)
            if (ub_prop_samples(p)->v[i].value.kind != UB_V_BLOCK) {
                ub_cw_error(w, "relationship time samples (path values; "
                               "OpenUSD cannot write them to usdc either)");
                break;
            }
        if (ub_prop_samples(p)->authored)
            ub_cw_field_c(w, "timeSamples",
                          ub_cw_samples(w, ub_prop_samples(p)));
        if (ub_prop_targets(p)->kind == UB_V_LISTOP)
            ub_cw_field_c(
                w, "targetPaths",
                ub_cw_listop(w, ub_prop_targets(p), UB_CRATE_PATH_LISTOP));
        if (ub_prop_default_target(p))
            ub_cw_error(w, "a relationship default target (a path value; "
                           "OpenUSD cannot write it to usdc either)");
    }
    ub_cw_spec(w, path, p->kind == UB_ATTR ? UB_CRATE_SPEC_ATTRIBUTE
                                           : UB_CRATE_SPEC_RELATIONSHIP);
    w->where_prop = NULL;
}

static void ub_cw_subtree(ub_cw *w, uint32_t path, const ub_prim *prim,
                          ub_crate_spec_type type);

/* A prim's variant set names as OpenUSD's text reader records them
 * (variantSetChildren): the names of an explicit (else an added)
 * variantSets list first -- the reader makes a variant set of each --,
 * then the sets with bodies not named there, as authored.  Returns the
 * count; *out is malloc'd (NULL for none). */
static uint32_t ub_variant_set_children(ub_cw *w, const ub_prim *prim,
                                        const char ***out)
{
    const ub_value *list = NULL;
    for (uint32_t i = 0; i < prim->meta.n; i++) {
        const ub_field *f = &prim->meta.v[i];
        if (f->key == w->key[UB_K_VARIANTSETS] &&
            f->value.kind == UB_V_LISTOP) {
            const ub_listop *lo = f->value.u.listop;
            if (lo->has[UB_LO_EXPLICIT])
                list = ub_listop_get(lo, UB_LO_EXPLICIT);
            else if (lo->has[UB_LO_ADD])
                list = ub_listop_get(lo, UB_LO_ADD);
        }
    }
    uint32_t nl = list && list->kind == UB_V_DATA ? list->count : 0;
    *out = NULL;
    if (nl + ub_prim_n_variant_sets(prim) == 0)
        return 0;
    const char **v = malloc((nl + ub_prim_n_variant_sets(prim)) * sizeof *v);
    if (!v) {
        w->oom = true;
        return 0;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < nl + ub_prim_n_variant_sets(prim); i++) {
        const char *name = i < nl ? ub_value_str(list, i)
                                  : ub_prim_variant_sets(prim)[i - nl].name;
        bool dup = false;
        for (uint32_t k = 0; k < n && !dup; k++)
            dup = v[k] == name;
        if (!dup)
            v[n++] = name;
    }
    *out = v;
    return n;
}

/* The children, properties and variant sets of prim, whose spec is being
 * built at path: their name lists go to the spec first. */
static void ub_cw_body(ub_cw *w, const ub_prim *prim)
{
    if (ub_prim_prim_order(prim)->kind == UB_V_DATA)
        ub_cw_field_c(w, "primOrder",
                      ub_cw_token_vector(
                          w, ub_value_data(ub_prim_prim_order(prim)),
                          ub_prim_prim_order(prim)->count));
    if (ub_prim_property_order(prim)->kind == UB_V_DATA)
        ub_cw_field_c(w, "propertyOrder",
                      ub_cw_token_vector(
                          w, ub_value_data(ub_prim_property_order(prim)),
                          ub_prim_property_order(prim)->count));
    uint32_t nmax = prim->children.n;
    if (prim->props.n > nmax)
        nmax = prim->props.n;
    const char **names = nmax ? malloc(nmax * sizeof *names) : NULL;
    if (nmax && !names) {
        w->oom = true;
        return;
    }
    if (prim->children.n) {
        for (uint32_t i = 0; i < prim->children.n; i++)
            names[i] = prim->children.v[i]->name;
        ub_cw_field_c(w, "primChildren",
                      ub_cw_token_vector(w, names, prim->children.n));
    }
    if (prim->props.n) {
        for (uint32_t i = 0; i < prim->props.n; i++)
            names[i] = prim->props.v[i]->name;
        ub_cw_field_c(w, "properties",
                      ub_cw_token_vector(w, names, prim->props.n));
    }
    free(names);
    uint32_t nsets = ub_variant_set_children(w, prim, &names);
    if (nsets)
        ub_cw_field_c(w, "variantSetChildren",
                      ub_cw_token_vector(w, names, nsets));
    free(names);
    /* the spec itself is closed by the caller */
}

/* What hangs from prim's spec at path but its child prims: its
 * properties, then its variant sets and their variants. */
static void ub_cw_props_and_variants(ub_cw *w, uint32_t path,
                                     const ub_prim *prim)
{
    for (uint32_t i = 0; i < prim->props.n && !w->failed; i++)
        ub_cw_prop(w, path, prim->props.v[i]);
    const char **sets;
    uint32_t nsets = ub_variant_set_children(w, prim, &sets);
    for (uint32_t i = 0; i < nsets && !w->failed; i++) {
        if (!sets[i][0]) {
            /* "{=}" reads back as no path (OpenUSD's own writer makes
             * that file, and then cannot read it) */
            ub_cw_error(w, "a variant set is named \"\": crate has no path "
                        "for it");
            break;
        }
        uint32_t set_path = ub_cw_variant_path(w, path, sets[i], NULL);
        const ub_variant_set *vs = ub_variant_set_find(prim, sets[i]);
        if (!vs) { /* named by variantSets only: a set without variants */
            ub_cw_spec(w, set_path, UB_CRATE_SPEC_VARIANT_SET);
            continue;
        }
        const char **names =
            vs->variants.n ? malloc(vs->variants.n * sizeof *names) : NULL;
        if (vs->variants.n && !names) {
            w->oom = true;
            break;
        }
        for (uint32_t k = 0; k < vs->variants.n; k++)
            names[k] = vs->variants.v[k]->name;
        if (vs->variants.n)
            ub_cw_field_c(w, "variantChildren",
                          ub_cw_token_vector(w, names, vs->variants.n));
        free(names);
        ub_cw_spec(w, set_path, UB_CRATE_SPEC_VARIANT_SET);
        for (uint32_t k = 0; k < vs->variants.n && !w->failed; k++) {
            const ub_prim *var = vs->variants.v[k];
            if (!var->name[0]) {
                /* the usda reader refuses it; a usdb file may hold one */
                ub_cw_error(w, "a variant of '%s' is named \"\": its path "
                            "would be its variant set's own", vs->name);
                break;
            }
            uint32_t vp = ub_cw_variant_path(w, path, vs->name, var->name);
            ub_cw_subtree(w, vp, var, UB_CRATE_SPEC_VARIANT);
        }
    }
    free(sets);
}

/* prim's own spec at path, and what hangs from it but its child prims,
 * which come first (see ub_usdc_stream). */
static void ub_cw_own(ub_cw *w, uint32_t path, const ub_prim *prim,
                      ub_crate_spec_type type)
{
    const ub_prim *saved = w->where;
    w->where = prim;
    if (!(prim->unwritten & UB_UNWRITTEN_SPECIFIER))
        ub_cw_field_c(w, "specifier",
                      ub_rep(UB_CRATE_SPECIFIER, true, false,
                             prim->specifier));
    if (prim->type_name && type == UB_CRATE_SPEC_PRIM)
        ub_cw_field_c(w, "typeName",
                      ub_rep(UB_CRATE_TOKEN, true, false,
                             ub_cw_token(w, prim->type_name)));
    ub_cw_metas(w, &prim->meta, false);
    ub_cw_body(w, prim);
    ub_cw_name_done(w, path);
    ub_cw_spec(w, path, type);
    ub_cw_props_and_variants(w, path, prim);
    w->where = saved;
}

/* A variant's subtree in the order a stream writes prims: each prim's
 * path is made before its children's, its spec after theirs. */
static void ub_cw_subtree(ub_cw *w, uint32_t path, const ub_prim *prim,
                          ub_crate_spec_type type)
{
    for (uint32_t i = 0; i < prim->children.n && !w->failed; i++) {
        const ub_prim *c = prim->children.v[i];
        ub_cw_subtree(w, ub_cw_child(w, path, c->name, false, true), c,
                      UB_CRATE_SPEC_PRIM);
    }
    ub_cw_own(w, path, prim, type);
}

/* How many prims (variants too) and properties there are under prim. */
static size_t ub_count_specs(const ub_prim *prim)
{
    size_t n = 1 + prim->props.n;
    for (uint32_t i = 0; i < prim->children.n; i++)
        n += ub_count_specs(prim->children.v[i]);
    const ub_variant_set *sets = ub_prim_variant_sets(prim);
    for (uint32_t s = 0; s < ub_prim_n_variant_sets(prim); s++)
        for (uint32_t i = 0; i < sets[s].variants.n; i++)
            n += 1 + ub_count_specs(sets[s].variants.v[i]);
    return n;
}

/* Room for n elements up front (best effort: the vector grows as it
 * fills when the memory is not there).  Growing by doubling copies into
 * fresh memory and leaves the old block behind in the heap, touched: on
 * a big layer those blocks were a third of the writer's peak memory,
 * while room reserved and not yet used costs no memory. */
#define UB_RESERVE(vec, count)                                               \
    (void)ub_grow((void **)&(vec).v, &(vec).cap, (count), sizeof *(vec).v)

/* The layer's first prim came (or its end): the tables get room for
 * about specs specs, the storing side starts, and the root path is
 * made (index 0). */
static void ub_cw_begin(ub_cw *w, const ub_layer *l, size_t specs)
{
    w->layer = l;
    w->strtab = l->strtab;
    w->cpus = ub_cpus();
    w->marks = ub_strtab_mark_claim(w->strtab);
    if (!w->marks) /* (NULL when there is no memory: a probe each time) */
        w->tcache = calloc(UB_TCACHE, sizeof *w->tcache);
    for (int k = 0; k < UB_K_COUNT; k++)
        w->key[k] = ub_cw_intern(w, ub_key_text[k], strlen(ub_key_text[k]));
    /* about one path, field and value a spec; ~3 field set entries */
    UB_RESERVE(w->pnodes, specs + 16);
    UB_RESERVE(w->st.by_path, specs + 16); /* (a path a spec, about) */
    UB_RESERVE(w->st.fields, specs);
    UB_RESERVE(w->st.vals, specs);
    UB_RESERVE(w->st.fsets, 3 * specs);
    ub_q_start(w);
    ub_cw_child(w, UINT32_MAX, ub_cw_intern(w, "", 0), false, true);
}

/* The pseudo-root's spec (path 0), after every prim's. */
static void ub_cw_root(ub_cw *w)
{
    const ub_layer *l = w->layer;
    ub_cw_metas(w, &l->meta, true);
    if (l->has_sublayers) {
        ub_buf *b = ub_cw_scratch(w);
        ub_w64(b, l->n_sublayers);
        for (uint32_t i = 0; i < l->n_sublayers; i++)
            ub_w32(b, ub_cw_string(w, l->sublayers[i].asset));
        ub_cw_field_c(w, "subLayers",
                      ub_cw_store(w, ub_rep(UB_CRATE_STRING_VECTOR, false,
                                            false, 0),
                                  b, 1));
        b->len = 0;
        ub_w64(b, l->n_sublayers);
        for (uint32_t i = 0; i < l->n_sublayers; i++) {
            ub_wf64(b, l->sublayers[i].offset.offset);
            ub_wf64(b, l->sublayers[i].offset.scale);
        }
        ub_cw_field_c(w, "subLayerOffsets",
                      ub_cw_store(w, ub_rep(UB_CRATE_LAYER_OFFSET_VECTOR,
                                            false, false, 0),
                                  b, 1));
        ub_cw_unscratch(w, b);
    }
    ub_cw_body(w, l->root);
    ub_cw_name_done(w, 0);
    ub_cw_spec(w, 0, UB_CRATE_SPEC_PSEUDO_ROOT);
    ub_cw_props_and_variants(w, 0, l->root);
}

/* --- sections ------------------------------------------------------------- */

typedef struct ub_section {
    const char *name;
    uint64_t start, size;
} ub_section;

/* Depth-first order of the path tree: index, element token (negative for
 * a prim property), and the jump (-2 leaf, -1 child only, 0 sibling only,
 * else the distance to the sibling). */
static void ub_cw_path_order(ub_cw *w, uint32_t *idx, int32_t *tok,
                             int32_t *jump, size_t *n)
{
    /* iterative walk: a stack of nodes whose sibling jump is pending */
    size_t depth_cap = 64, sp = 0;
    uint32_t *stack = malloc(depth_cap * sizeof *stack);
    size_t *pos = malloc(depth_cap * sizeof *pos);
    if (!stack || !pos) {
        w->oom = true;
        free(stack);
        free(pos);
        return;
    }
    uint32_t cur = 0; /* the root */
    for (;;) {
        const ub_pnode *nd = &w->pnodes.v[cur];
        size_t at = (*n)++;
        idx[at] = cur;
        tok[at] = nd->is_prop ? -(int32_t)nd->token : (int32_t)nd->token;
        bool child = nd->first != UINT32_MAX;
        bool sib = nd->next != UINT32_MAX && cur != 0;
        jump[at] = child ? (sib ? 0 : -1) : (sib ? 0 : -2);
        if (child) {
            if (sib) {
                if (sp == depth_cap) {
                    depth_cap *= 2;
                    uint32_t *s2 = realloc(stack, depth_cap * sizeof *stack);
                    size_t *p2 = s2 ? realloc(pos, depth_cap * sizeof *pos)
                                    : NULL;
                    if (s2)
                        stack = s2;
                    if (!s2 || !p2) {
                        w->oom = true;
                        break;
                    }
                    pos = p2;
                }
                stack[sp] = nd->next;
                pos[sp++] = at;
            }
            cur = nd->first;
            continue;
        }
        if (sib) {
            cur = nd->next;
            continue;
        }
        /* a leaf without a sibling: resume at the nearest pending one */
        if (sp == 0)
            break;
        sp--;
        jump[pos[sp]] = (int32_t)(*n - pos[sp]);
        cur = stack[sp];
    }
    free(stack);
    free(pos);
}

/* Specs as OpenUSD orders them: prims (and the pseudo-root, variant
 * sets, variants) first, then properties grouped by name; within a group
 * by path index.  Runs of like specs make the SPECS lists compress well.
 * The specs are kept in path order, so this is a stable counting sort by
 * the rank of the property name (0 for the others): only the distinct
 * names are compared, and the counts were kept as the specs came
 * (per_name), which spares two of the four passes over the specs at the
 * storing side's end. */
typedef struct ub_named {
    const char *s;
    uint32_t tok;
} ub_named;

static int ub_cmp_name(const void *a, const void *b)
{
    return strcmp(((const ub_named *)a)->s, ((const ub_named *)b)->s);
}

static void ub_sort_specs(ub_cw *w)
{
    ub_st *st = &w->st;
    size_t extra = st->specs.n, n = st->nspecs + extra;
    size_t nt = st->per_name.n, nn = 0;
    uint32_t *at = st->per_name.v; /* count, then where the next goes */
    for (size_t t = 0; t < nt; t++)
        nn += at[t] != 0;
    ub_named *names = malloc((nn ? nn : 1) * sizeof *names);
    ub_spec_rec *out = ub_kept_alloc(&st->kept, (n ? n : 1) * sizeof *out);
    if (!names || !out || nt > w->tokens.n) {
        st->oom = true;
        goto done;
    }
    nn = 0;
    size_t props = 0;
    for (size_t t = 0; t < nt; t++)
        if (at[t]) {
            names[nn++] = (ub_named){w->tokens.v[t], (uint32_t)t};
            props += at[t];
        }
    qsort(names, nn, sizeof *names, ub_cmp_name);
    size_t prim_at = 0, next = n - props; /* the prims' specs come first */
    for (size_t k = 0; k < nn; k++) {
        uint32_t c = at[names[k].tok];
        at[names[k].tok] = (uint32_t)next;
        next += c;
    }
    /* Each group in order of path index: a path is numbered where it is
     * first named, near its neighbours, so the SPECS path list then
     * delta-codes to about a byte an entry, as OpenUSD's (numbered in its
     * sorted spec order) does; in the walk's order a prim came after its
     * children.  The specs are kept by path (ub_st_put_spec): one pass
     * in order.  A second spec at a path (none are made) goes after its
     * group's others. */
    const ub_spec_at *bp = st->by_path.v;
    const ub_pnode *nd = w->pnodes.v; /* (kept by the walk until now) */
    for (size_t p = 0, m = st->by_path.n; p < m; p++)
        if (bp[p].type) {
            uint32_t name1 = ub_pnode_name1(&nd[p]);
            out[name1 ? at[name1 - 1]++ : prim_at++] =
                (ub_spec_rec){(uint32_t)p, bp[p].fset, bp[p].type, name1};
        }
    for (size_t k = 0; k < extra; k++) {
        const ub_spec_rec *s = &st->specs.v[k];
        out[s->name1 ? at[s->name1 - 1]++ : prim_at++] = *s;
    }
    UB_VEC_KEEP(&st->kept, st->by_path);
    /* the sorted copy becomes the vector (not copied back) */
    UB_VEC_ADOPT(&st->kept, st->specs, out, n, n ? n : 1);
    out = NULL;
done:
    free(names);
    ub_kept_free(&st->kept, out, (n ? n : 1) * sizeof *out);
    UB_VEC_KEEP(&st->kept, st->per_name);
}

/* Number the fields again in the order the (sorted) specs first use
 * them, and lay the field sets out again in the order the specs first
 * use them: one pass over the specs (a field set's first use numbers its
 * new fields, and a set seen again has all of its fields numbered).  A
 * set's new start is written over its old first entry, a bit saying so:
 * the old sets are dropped after, and a map from old starts to new ones
 * was 8 MB of new pages on the prim-heavy bench layer, every lookup a
 * cache miss, where the bits take 256 KB. */
static void ub_cw_renumber(ub_cw *w)
{
    size_t nf = w->st.fields.n, ns = w->st.fsets.n;
    size_t fton = (nf ? nf : 1) * sizeof(uint32_t);
    size_t fvn = (nf ? nf : 1) * sizeof(ub_field_rec);
    size_t ston = (ns ? ns : 1) * sizeof(uint32_t);
    ub_kept *kept = &w->st.kept;
    uint32_t *fto = ub_kept_alloc(kept, fton);
    ub_field_rec *fv = ub_kept_alloc(kept, fvn);
    uint32_t *sv = ub_kept_alloc(kept, ston);
    uint64_t *moved = calloc(ns / 64 + 1, sizeof *moved);
    if (!fto || !fv || !sv || !moved) {
        w->st.oom = true;
        goto done;
    }
    memset(fto, 0xff, fton);
    uint32_t k = 0;
    size_t m = 0;
    uint32_t *fs = w->st.fsets.v;
    size_t n = w->st.specs.n;
    for (size_t i = 0; i < n; i++) {
        /* the old sets are met out of their order: each one's first
         * entry is fetched a few specs ahead, or each is a miss or two
         * (this loop was the longest step of the storing side's end) */
        if (i + UB_SECTIONS_AHEAD < n)
            ub_prefetch(&fs[w->st.specs.v[i + UB_SECTIONS_AHEAD].fset]);
        uint32_t old = w->st.specs.v[i].fset;
        uint64_t bit = (uint64_t)1 << (old % 64);
        if (!(moved[old / 64] & bit)) {
            uint32_t start = (uint32_t)m;
            for (size_t j = old; fs[j] != UINT32_MAX; j++) {
                uint32_t f = fs[j];
                if (fto[f] == UINT32_MAX) {
                    fto[f] = k;
                    fv[k++] = w->st.fields.v[f];
                }
                sv[m++] = fto[f];
            }
            sv[m++] = UINT32_MAX;
            fs[old] = start;
            moved[old / 64] |= bit;
        }
        w->st.specs.v[i].fset = fs[old];
    }
    /* fields no spec uses (none are made) keep their relative order */
    for (size_t i = 0; i < nf; i++)
        if (fto[i] == UINT32_MAX)
            fv[k++] = w->st.fields.v[i];
    /* the new blocks become the vectors (not copied back: 15 MB on the
     * prim-heavy bench layer) */
    UB_VEC_ADOPT(kept, w->st.fields, fv, nf, nf ? nf : 1);
    UB_VEC_ADOPT(kept, w->st.fsets, sv, m, ns ? ns : 1);
    fv = NULL;
    sv = NULL;
done:
    free(moved);
    ub_kept_free(kept, fto, fton);
    ub_kept_free(kept, fv, fvn);
    ub_kept_free(kept, sv, ston);
}

/* A uint64 placeholder at o's end; ub_patch_size fills it with the number
 * of bytes after it. */
static size_t ub_size_slot(ub_buf *o)
{
    size_t at = o->len;
    ub_w64(o, 0);
    return at;
}

static void ub_patch_size(ub_buf *o, size_t at)
{
    uint64_t size = o->len - at - 8;
    if (!o->failed)
        memcpy(o->data + at, &size, 8);
}

/* The sections are built by the side that owns what they hold, at
 * once: the walk's thread builds TOKENS, STRINGS and PATHS while the
 * storing side (after its last batch) sorts the specs and numbers the
 * fields and field sets again; then the walk's thread writes the values
 * to the file and compresses half of FIELDS' reps while the storing side
 * builds the rest of FIELDS; FIELDSETS and SPECS go to whichever side is
 * done first (ub_sec_either).  Each reads what the other side left only
 * once it is final: the storing side reads the tokens (to sort), which
 * the walk no longer changes; the walk reads the renumbered fields, field
 * sets and specs. */

/* TOKENS: count, raw size, then the NUL-separated text compressed. */
static void ub_sec_tokens(ub_cw *w, ub_crate_lz4c *c, ub_buf *o)
{
    ub_buf *t = &w->token_text;
    ub_w64(o, w->tokens.n);
    ub_w64(o, t->len);
    size_t at = ub_size_slot(o);
    if (t->failed)
        o->failed = true;
    else
        ub_crate_lz4_compress(t->data, t->len, c, o);
    ub_patch_size(o, at);
    ub_buf_free(t);
}

/* PATHS: the count, then the tree in depth-first order. */
static void ub_sec_paths(ub_cw *w, ub_crate_lz4c *c, ub_buf *o)
{
    size_t total = w->pnodes.n, n = 0, size = (total ? total : 1) * 4;
    uint32_t *idx = ub_kept_alloc(&w->kept, size);
    int32_t *tok = ub_kept_alloc(&w->kept, size);
    int32_t *jump = ub_kept_alloc(&w->kept, size);
    if (!idx || !tok || !jump)
        w->oom = true;
    else
        ub_cw_path_order(w, idx, tok, jump, &n);
    ub_w64(o, total);
    ub_w64(o, n);
    if (!w->oom) {
        ub_crate_put_ints32(idx, n, c, o);
        ub_crate_put_ints32((uint32_t *)tok, n, c, o);
        ub_crate_put_ints32((uint32_t *)jump, n, c, o);
    }
    ub_kept_free(&w->kept, idx, size);
    ub_kept_free(&w->kept, tok, size);
    ub_kept_free(&w->kept, jump, size);
}

static bool ub_fields_cut(const ub_st *s)
{
    return s->fields.n >= UB_USDC_CUT / 8;
}

/* The reps of fields [from, to) compressed: the whole framing into o
 * (chunk NULL), or one chunk of it into chunk; the temporary from the
 * calling side's kept blocks. */
static void ub_fields_reps(const ub_st *s, size_t from, size_t to,
                           ub_crate_lz4c *c, ub_buf *o, ub_buf *chunk,
                           ub_kept *kept)
{
    size_t n = to - from;
    uint64_t *reps = ub_kept_alloc(kept, (n ? n : 1) * 8);
    if (!reps) {
        (chunk ? chunk : o)->failed = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        reps[i] = s->fields.v[from + i].rep;
    if (chunk)
        ub_crate_lz4_chunk(reps, n * 8, c, chunk);
    else
        ub_crate_lz4_compress(reps, n * 8, c, o);
    ub_kept_free(kept, reps, (n ? n : 1) * 8);
}

/* FIELDS: count, the key tokens as compressed ints, the reps as LZ4 --
 * when cut, only the second chunk (ub_sec_fields_first makes the
 * first). */
static void ub_sec_fields(ub_st *s, ub_crate_lz4c *c, ub_buf *o)
{
    size_t n = s->fields.n;
    uint32_t *toks = ub_kept_alloc(&s->kept, (n ? n : 1) * 4);
    if (!toks) {
        o->failed = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        toks[i] = s->fields.v[i].token;
    ub_w64(o, n);
    ub_crate_put_ints32(toks, n, c, o);
    ub_kept_free(&s->kept, toks, (n ? n : 1) * 4);
    size_t at = ub_size_slot(o);
    if (!ub_fields_cut(s)) {
        ub_fields_reps(s, 0, n, c, o, NULL, &s->kept);
        ub_patch_size(o, at);
        return;
    }
    ub_buf_putc(o, 2);
    s->fields_size_at = at;
    ub_fields_reps(s, n / 2, n, c, o, &s->fields_chunk[1], &s->kept);
}

/* (The walk's side.)  The first chunk of FIELDS' reps, when cut. */
static void ub_sec_fields_first(ub_st *s, ub_crate_lz4c *c, ub_kept *kept)
{
    if (ub_fields_cut(s))
        ub_fields_reps(s, 0, s->fields.n / 2, c, NULL, &s->fields_chunk[0],
                       kept);
}

/* FIELDSETS: the count, then the renumbered sets as compressed ints. */
static void ub_sec_fsets(ub_st *s, ub_crate_lz4c *c, ub_buf *o)
{
    ub_w64(o, s->fsets.n);
    ub_crate_put_ints32(s->fsets.v, s->fsets.n, c, o);
}

/* SPECS: the count, then paths, field sets and types as compressed ints;
 * the temporary from the calling side's kept blocks. */
static void ub_sec_specs(ub_st *s, ub_crate_lz4c *c, ub_buf *o, ub_kept *kept)
{
    size_t n = s->specs.n;
    uint32_t *tmp = ub_kept_alloc(kept, (n ? n : 1) * 4);
    if (!tmp) {
        o->failed = true;
        return;
    }
    ub_w64(o, n);
    for (size_t i = 0; i < n; i++)
        tmp[i] = s->specs.v[i].path;
    ub_crate_put_ints32(tmp, n, c, o);
    for (size_t i = 0; i < n; i++)
        tmp[i] = s->specs.v[i].fset;
    ub_crate_put_ints32(tmp, n, c, o);
    for (size_t i = 0; i < n; i++)
        tmp[i] = s->specs.v[i].type;
    ub_crate_put_ints32(tmp, n, c, o);
    ub_kept_free(kept, tmp, (n ? n : 1) * 4);
}

/* (Either side, once the renumbering is done and its own part of FIELDS
 * is made.)  FIELDSETS and SPECS, each built by the side that comes for
 * it first, the bigger first: which side finishes its part of FIELDS
 * first varies from run to run by tens of milliseconds, and the other
 * side idled that long while they were the storing side's.  The bytes do
 * not depend on who builds them: both sides' compressors have the same
 * level, and the same limit is set here. */
static void ub_sec_either(ub_st *s, ub_crate_lz4c *c, ub_kept *kept)
{
    c->hc_upto = UB_USDC_HC_UPTO;
    if (!atomic_exchange(&s->fsets_taken, true))
        ub_sec_fsets(s, c, &s->sec[1]);
    if (!atomic_exchange(&s->specs_taken, true))
        ub_sec_specs(s, c, &s->sec[2], kept);
}

/* What only the walk needed, freed before the sections are built, whose
 * buffers then take their place rather than add to them: the storing
 * side's lookup tables, caches and value records ... */
static void ub_st_free_walk(ub_st *s)
{
    ub_pages_release(s->pages); /* (nothing is stored after this) */
    ub_idtab_free_kept(&s->val_tab, &s->kept);
    ub_idtab_free_kept(&s->field_tab, &s->kept);
    ub_idtab_free_kept(&s->fset_tab, &s->kept);
    UB_VEC_KEEP(&s->kept, s->string_first);
    UB_VEC_KEEP(&s->kept, s->token_first);
    UB_VEC_KEEP(&s->kept, s->ahead);
    UB_VEC_KEEP(&s->kept, s->vals);
    UB_VEC_KEEP(&s->kept, s->ticket_val);
    UB_VEC_KEEP(&s->kept, s->ticket_rep);
    UB_VEC_KEEP(&s->kept, s->cur);
    free(s->fcache);
    free(s->back);
    free(s->slot_fset);
    s->fcache = NULL;
    s->back = NULL;
    s->slot_fset = NULL;
}

/* ... and the walk's: its tables, caches and scratch buffers. */
static void ub_cw_free_walk(ub_cw *w)
{
    if (w->marks) { /* back to 0, for the next writer */
        for (size_t i = 0; i < w->tokens.n; i++)
            ub_str_set_mark(w->tokens.v[i], 0);
        ub_strtab_mark_release(w->strtab);
        w->marks = false;
    }
    ub_idtab_free_kept(&w->token_tab, &w->kept);
    ub_idtab_free_kept(&w->pnode_tab, &w->kept);
    ub_idtab_free_kept(&w->ptext_tab, &w->kept);
    UB_VEC_KEEP(&w->kept, w->unnamed);
    UB_VEC_KEEP(&w->kept, w->runs);
    UB_VEC_KEEP(&w->kept, w->tok_string);
    UB_VEC_KEEP(&w->kept, w->ptext);
    UB_VEC_KEEP(&w->kept, w->ptext_idx);
    free(w->tcache);
    w->tcache = NULL;
    free(w->wcache);
    w->wcache = NULL;
    free(w->wtag);
    w->wtag = NULL;
    free(w->scache);
    w->scache = NULL;
    for (size_t i = 0; i < w->capscratch; i++)
        if (w->scratch[i]) {
            ub_buf_free(&w->scratch[i]->b);
            UB_VEC_FREE(w->scratch[i]->holes);
            free(w->scratch[i]);
        }
    free(w->scratch);
    w->scratch = NULL;
    w->nscratch = w->capscratch = 0;
    ub_crate_lz4c_free(&w->lz4v);
}

/* The biggest temporary the storing side makes after the renumbering:
 * FIELDS' tokens or its share of the reps, or a list of SPECS. */
static size_t ub_st_last_temp(const ub_st *s)
{
    size_t nf = s->fields.n, ns = s->specs.n;
    size_t reps = 8 * (ub_fields_cut(s) ? nf - nf / 2 : nf);
    size_t lists = 4 * (nf > ns ? nf : ns);
    return reps > lists ? reps : lists;
}

/* (The storing side, after its last batch.)  Its sections: the specs
 * sorted, then fields and field sets renumbered in the specs' order --
 * like specs next to each other then have like field set indices, and
 * like fields (all the radius defaults) sit together. */
static void ub_st_sections(ub_cw *w)
{
    ub_st *s = &w->st;
    ub_st_free_walk(s);
    if (s->oom)
        return;
    ub_sort_specs(w);
    ub_cw_renumber(w);
    /* what is left to make is a temporary at a time: the blocks it does
     * not need go now, not held through the end's peak */
    ub_kept_trim(&s->kept, ub_st_last_temp(s));
    /* from here on it writes only its sections (sec) and compressor */
    ub_q_renumbered(w->q);
    if (s->oom)
        return;
    s->lz4.hc_upto = SIZE_MAX; /* FIELDS: HC whatever its size */
    ub_sec_fields(s, &s->lz4, &s->sec[0]);
    ub_sec_either(s, &s->lz4, &s->kept);
    ub_kept_release(&s->kept);
}

/* The six sections, in OpenUSD's order, appended to the file. */
static void ub_cw_sections(ub_cw *w, ub_section *sec)
{
    ub_cw_free_walk(w);
    ub_buf tokens, strings, paths;
    ub_buf_init(&tokens);
    ub_buf_init(&strings);
    ub_buf_init(&paths);
    ub_sec_tokens(w, &w->lz4, &tokens);
    ub_w64(&strings, w->strings.n);
    if (w->strings.n)
        ub_buf_append(&strings, w->strings.v, w->strings.n * 4);
    ub_sec_paths(w, &w->lz4, &paths);
    /* The values are final once the last batch is stored: they go to the
     * file now, while the storing side renumbers and this side would
     * wait, not after the sections, where writing the whole file was the
     * end's longest step.  (A failure is this side's: the storing side
     * owns st.oom until it is joined.) */
    ub_q_wait_stored(w);
    if (w->st.file && !ub_out_hand_over(&w->st))
        w->oom = true;
    /* the first half of FIELDS' reps here while the storing side
     * compresses the rest (same bytes whichever side makes a part) */
    ub_q_wait_renumbered(w);
    /* (the spec sort read the properties' names in the nodes) */
    UB_VEC_KEEP(&w->kept, w->pnodes);
    if (!w->st.oom) {
        /* keep only a block for the first chunk of the reps, which then
         * serves a list of SPECS (ub_sec_either) */
        size_t reps = 8 * (w->st.fields.n / 2), list = 4 * w->st.specs.n;
        ub_kept_trim(&w->kept, reps > list ? reps : list);
        w->lz4.hc_upto = SIZE_MAX; /* FIELDS: HC whatever its size */
        ub_sec_fields_first(&w->st, &w->lz4, &w->kept);
        ub_sec_either(&w->st, &w->lz4, &w->kept);
    }
    ub_kept_release(&w->kept);
    ub_q_join(w);
    ub_buf *fc = w->st.fields_chunk;
    if (fc[0].failed || fc[1].failed)
        w->oom = true;
    else if (w->st.fields_size_at != SIZE_MAX && !w->st.sec[0].failed) {
        uint64_t size = 1 + fc[0].len + fc[1].len;
        memcpy(w->st.sec[0].data + w->st.fields_size_at, &size, 8);
    }
    /* the storing side read the tokens (the spec sort): given back only
     * now */
    UB_VEC_FREE(w->tokens);
    UB_VEC_FREE(w->strings);

    static const char *const names[6] = {
        UB_CRATE_SEC_TOKENS, UB_CRATE_SEC_STRINGS, UB_CRATE_SEC_FIELDS,
        UB_CRATE_SEC_FIELDSETS, UB_CRATE_SEC_PATHS, UB_CRATE_SEC_SPECS};
    const ub_buf *parts[6] = {&tokens,       &strings, &w->st.sec[0],
                              &w->st.sec[1], &paths,   &w->st.sec[2]};
    ub_buf *o = w->st.out;
    uint64_t at = w->st.gone + o->len - w->st.base;
    for (int k = 0; k < 6 && !w->oom; k++) {
        size_t size = parts[k]->len;
        if (parts[k]->failed)
            w->oom = true;
        else if (parts[k]->len)
            ub_buf_append(o, parts[k]->data, parts[k]->len);
        if (k == 2) /* FIELDS' chunks, when cut (else empty) */
            for (int i = 0; i < 2; i++) {
                ub_buf_append(o, fc[i].data, fc[i].len);
                size += fc[i].len;
            }
        sec[k].name = names[k];
        sec[k].start = at;
        sec[k].size = size;
        at += size;
    }
    ub_buf_free(&tokens);
    ub_buf_free(&strings);
    ub_buf_free(&paths);
}

static void ub_cw_free(ub_cw *w)
{
    ub_q_join(w);
    ub_arena_free(w->samples_arena);
    ub_cw_free_walk(w);
    ub_st_free_walk(&w->st);
    UB_VEC_FREE(w->tokens);
    ub_buf_free(&w->token_text);
    UB_VEC_FREE(w->strings);
    UB_VEC_FREE(w->pnodes);
    UB_VEC_FREE(w->st.fields);
    UB_VEC_FREE(w->st.fsets);
    UB_VEC_FREE(w->st.specs);
    UB_VEC_FREE(w->st.by_path);
    UB_VEC_FREE(w->st.per_name);
    for (int k = 0; k < 3; k++)
        ub_buf_free(&w->st.sec[k]);
    ub_buf_free(&w->st.fields_chunk[0]);
    ub_buf_free(&w->st.fields_chunk[1]);
    ub_crate_lz4c_free(&w->st.lz4);
    ub_crate_lz4c_free(&w->lz4);
    ub_kept_release(&w->kept);
    ub_kept_release(&w->st.kept);
}

/* --- prims as a parse closes them ------------------------------------------ */

/* Prims come children first (ub_parse_stream's order), each written when
 * it comes: its own spec, properties and variants.  Its path was made
 * when it came, or earlier, when a descendant came first: the prims
 * whose descendants came and they not yet are the open ones, a chain
 * from the pseudo-root. */
struct ub_usdc_stream {
    ub_cw w;
    size_t specs_hint;
    bool begun;  /* w has a layer: ub_cw_begin ran */
    bool broken; /* prims out of order */
    bool ended;  /* ub_usdc_stream_end ran */
    ub_pages *pages; /* (ub_usdc_stream_pages) */
    ub_usdc_file file; /* (w.st.file: this, or NULL) */
    struct ub_cw_open {
        const ub_prim *prim;
        uint32_t path;
    } *open;
    size_t nopen, capopen;
};

/* Both sides' growing arrays and the values' buffer take their next
 * pages from pp first.  The biggest grow while a streamed parse's tail
 * goes out, freeing as much as they take: its fresh pages were most of the
 * storing thread's time once the tail had been read. */
static void ub_cw_use_pages(ub_cw *w, ub_pages *pp)
{
    ub_st *st = &w->st;
    st->pages = pp;
    st->out->pages = pp;
    st->vals.pages = st->ticket_val.pages = st->ticket_rep.pages = pp;
    st->fields.pages = st->fsets.pages = st->by_path.pages = pp;
    st->specs.pages = st->per_name.pages = pp;
    st->string_first.pages = st->token_first.pages = pp;
    st->val_tab.pages = st->field_tab.pages = st->fset_tab.pages = pp;
    w->token_tab.pages = w->pnode_tab.pages = w->ptext_tab.pages = pp;
    w->tokens.pages = w->strings.pages = w->token_text.pages = pp;
    w->pnodes.pages = w->unnamed.pages = w->runs.pages = pp;
    w->ptext.pages = w->ptext_idx.pages = pp;
}

static ub_usdc_stream *ub_cw_stream_new(ub_buf *out, size_t specs_hint,
                                        const ub_usdc_to *to,
                                        ub_diags *diags)
{
    ub_usdc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->specs_hint = specs_hint;
    ub_cw *w = &s->w;
    w->diags = diags;
    w->st.out = out;
    w->st.base = out->len;
    if (to && to->file)
        s->file = *to->file;
    w->st.file = to && to->file ? &s->file : NULL;
    if (to && to->samples) {
        w->samples = to->samples;
        w->samples_ctx = to->samples_ctx;
        if (!(w->samples_arena = ub_arena_new())) {
            free(s);
            return NULL;
        }
    }
    w->version = UB_CRATE_VERSION_DEFAULT;
    w->empty_path = UINT32_MAX;
    ub_crate_lz4c_init(&w->lz4, UB_USDC_HC);
    w->lz4.hc_upto = UB_USDC_HC_UPTO;
    ub_crate_lz4c_init(&w->lz4v, UB_USDC_HC_ARRAYS);
    ub_crate_lz4c_init(&w->st.lz4, UB_USDC_HC);
    for (int k = 0; k < 3; k++)
        ub_buf_init(&w->st.sec[k]);
    ub_buf_init(&w->st.fields_chunk[0]);
    ub_buf_init(&w->st.fields_chunk[1]);
    w->st.fields_size_at = SIZE_MAX;
    atomic_init(&w->st.fsets_taken, false);
    atomic_init(&w->st.specs_taken, false);
    ub_buf_init(&w->token_text);
    ub_buf_init(&w->no_scratch);
    w->no_scratch.failed = true;
    w->st.fcache = calloc(UB_FCACHE, sizeof *w->st.fcache);
    /* (an entry a cache line) */
    w->wcache = aligned_alloc(64, UB_WCACHE * sizeof *w->wcache);
    w->wtag = calloc(UB_WCACHE, sizeof *w->wtag);
    if (w->wcache && w->wtag) {
        memset(w->wcache, 0, UB_WCACHE * sizeof *w->wcache);
    } else { /* both, or neither */
        free(w->wcache);
        free(w->wtag);
        w->wcache = NULL;
        w->wtag = NULL;
    }
    w->scache = calloc(UB_SCACHE, sizeof *w->scache);
    w->st.slot_fset = calloc(UB_SCACHE, sizeof *w->st.slot_fset);
    if (!w->scache || !w->st.slot_fset) { /* both, or neither */
        free(w->scache);
        free(w->st.slot_fset);
        w->scache = NULL;
        w->st.slot_fset = NULL;
    }
    /* the bootstrap, filled in at the end */
    char zero[UB_CRATE_BOOTSTRAP_SIZE] = {0};
    ub_buf_append(out, zero, sizeof zero);
    return s;
}

/* A stream's tables grow as they fill: room guessed from the text's size
 * was ten times too much for array-heavy text, address space that a
 * `ulimit -v` refuses, for 5% less memory on the prim bench layer. */
ub_usdc_stream *ub_usdc_stream_new(ub_buf *out, ub_diags *diags)
{
    return ub_usdc_stream_new_to(out, NULL, diags);
}

/* The pool of a stream's pages (ub_usdc_stream_pages): enough to carry
 * the tail's pages over while the storing side takes them, little enough
 * that what it holds at the peak does not matter. */
#define UB_USDC_POOL ((size_t)8 << 20)

ub_usdc_stream *ub_usdc_stream_new_to(ub_buf *out, const ub_usdc_to *to,
                                      ub_diags *diags)
{
    ub_usdc_stream *s = ub_cw_stream_new(out, 0, to, diags);
    if (s && (s->pages = ub_pages_new(UB_USDC_POOL)))
        ub_cw_use_pages(&s->w, s->pages);
    return s;
}

ub_pages *ub_usdc_stream_pages(ub_usdc_stream *s)
{
    return s->pages;
}

void ub_usdc_stream_free(ub_usdc_stream *s)
{
    if (!s)
        return;
    ub_q *q = s->w.q;
    if (q && !s->ended) { /* given up: the storing side ends, no sections */
        pthread_mutex_lock(&q->mu);
        q->closed = true;
        q->sections = false;
        pthread_cond_signal(&q->more);
        pthread_mutex_unlock(&q->mu);
    }
    ub_cw_free(&s->w);
    s->w.st.out->pages = NULL; /* (the caller's buffer outlives the pool) */
    ub_pages_free(s->pages);
    ub_scratch_free(s->open, s->capopen * sizeof *s->open);
    free(s);
}

static void ub_cw_open(ub_usdc_stream *s, const ub_prim *prim, uint32_t path)
{
    if (!ub_grow((void **)&s->open, &s->capopen, s->nopen + 1,
                 sizeof *s->open)) {
        s->w.oom = true;
        return;
    }
    s->open[s->nopen++] = (struct ub_cw_open){prim, path};
}

static void ub_cw_stream_begin(ub_usdc_stream *s, const ub_layer *layer)
{
    s->begun = true;
    ub_cw_begin(&s->w, layer, s->specs_hint);
    ub_cw_open(s, layer->root, 0);
}

void ub_usdc_stream_parse_threads(void *ctx, unsigned n)
{
    ub_cw *w = &((ub_usdc_stream *)ctx)->w;
    w->parse_threads = n;
    ub_q *q = w->q;
    if (q) {
        pthread_mutex_lock(&q->mu);
        q->parsing = n >= w->cpus;
        if (!q->parsing) /* what waits goes to the storing thread now */
            pthread_cond_signal(&q->more);
        pthread_mutex_unlock(&q->mu);
    }
}

void ub_usdc_stream_tail_pace(void *ctx, bool ahead)
{
    ub_cw *w = &((ub_usdc_stream *)ctx)->w;
    ub_q *q = atomic_load_explicit(&w->q_shared, memory_order_acquire);
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    q->tail_ahead = ahead;
    while (ahead && q->parsing && q->head && !q->busy) {
        ub_q_store(w, q, ub_q_pop(q));
        w->tail_stored++;
    }
    pthread_mutex_unlock(&q->mu);
}

size_t ub_usdc_stream_tail_stored(const ub_usdc_stream *s)
{
    return s->w.tail_stored;
}

void ub_usdc_stream_prim(void *ctx, const ub_layer *layer, const ub_prim *prim,
                         unsigned depth)
{
    ub_usdc_stream *s = ctx;
    ub_cw *w = &s->w;
    if (!s->begun)
        ub_cw_stream_begin(s, layer);
    if (s->broken || w->failed || w->oom)
        return;
    if (depth == 0 || layer != w->layer) {
        /* the pseudo-root is never handed over; one stream, one layer */
        s->broken = true;
        return;
    }
    /* the ancestors not open yet, from the top */
    while (s->nopen < depth && !w->oom) {
        const ub_prim *a = prim;
        for (size_t k = depth; k > s->nopen && a; k--)
            a = a->parent;
        if (!a || a->parent != s->open[s->nopen - 1].prim) {
            s->broken = true; /* a depth its parents do not have */
            return;
        }
        ub_cw_open(s, a,
                   ub_cw_child(w, s->open[s->nopen - 1].path, a->name, false,
                               true));
    }
    if (w->oom || s->nopen > depth + 1 ||
        s->open[depth - 1].prim != prim->parent) {
        s->broken = true;
        return;
    }
    uint32_t path;
    if (s->nopen == depth + 1) {
        if (s->open[depth].prim != prim) {
            s->broken = true; /* a prim open below it never closed */
            return;
        }
        path = s->open[depth].path;
        s->nopen = depth;
    } else {
        path = ub_cw_child(w, s->open[depth - 1].path, prim->name, false,
                           true);
    }
    ub_cw_own(w, path, prim, UB_CRATE_SPEC_PRIM);
}

int ub_usdc_stream_end(ub_usdc_stream *s, const ub_layer *layer)
{
    ub_cw *w = &s->w;
    ub_buf *out = w->st.out;
    s->ended = true;
    if (!s->begun)
        ub_cw_stream_begin(s, layer);
    if (w->failed || w->oom) {
        /* said already, or below */
    } else if (s->broken || s->nopen != 1 || s->open[0].prim != layer->root) {
        ub_cw_error(w, "the prims were not handed over in order");
    } else {
        ub_cw_root(w);
    }
    /* (none are left after the root unless the walk was cut short; named
     * before the storing side reads the tokens, to sort the specs) */
    ub_cw_name_now(w, UINT32_MAX);
    ub_q_close(w);

    ub_section sec[6];
    if (!w->failed && !w->oom)
        ub_cw_sections(w, sec);
    if (!w->failed && !w->oom && !out->failed) {
        uint64_t toc = w->st.gone + out->len - w->st.base;
        ub_w64(out, 6);
        for (int i = 0; i < 6; i++) {
            char name[UB_CRATE_SECTION_NAME_LEN] = {0};
            memcpy(name, sec[i].name, strlen(sec[i].name));
            ub_buf_append(out, name, sizeof name);
            ub_w64(out, sec[i].start);
            ub_w64(out, sec[i].size);
        }
        /* the identifier, the version and where the contents are */
        char boot[24] = {0};
        memcpy(boot, UB_CRATE_IDENT, UB_CRATE_IDENT_LEN);
        boot[8] = (char)(w->version >> 16);
        boot[9] = (char)(w->version >> 8);
        boot[10] = (char)w->version;
        memcpy(boot + 16, &toc, 8);
        if (!out->failed && w->st.base >= w->st.gone) /* (still here) */
            memcpy(out->data + (w->st.base - w->st.gone), boot, sizeof boot);
        else if (!out->failed && s->file.patch(s->file.ctx, boot, sizeof boot,
                                               w->st.base) != 0)
            ub_st_file_failed(&w->st);
    }
    ub_q_join(w); /* (done already, unless something failed) */
    if (out->sink_failed) {
        w->failed = true; /* the file said why */
    } else if ((w->oom || out->failed) && !w->failed) {
        w->failed = true;
        ub_diag_add_oom(w->diags, (ub_loc){layer->path, 0, 0},
                        "out of memory writing usdc");
    }
    return w->failed ? -1 : 0;
}

/* The whole layer's prims, handed over as a stream would: children
 * first. */
static void ub_cw_hand_over(ub_usdc_stream *s, const ub_layer *layer,
                            const ub_prim *prim, unsigned depth)
{
    for (uint32_t i = 0; i < prim->children.n && !s->w.failed; i++)
        ub_cw_hand_over(s, layer, prim->children.v[i], depth + 1);
    ub_usdc_stream_prim(s, layer, prim, depth);
}

int ub_usdc_write(const ub_layer *layer, ub_buf *out, ub_diags *diags)
{
    return ub_usdc_write_to(layer, out, NULL, diags);
}

int ub_usdc_write_to(const ub_layer *layer, ub_buf *out,
                     const ub_usdc_to *to, ub_diags *diags)
{
    ub_usdc_stream *s =
        ub_cw_stream_new(out, ub_count_specs(layer->root), to, diags);
    if (!s) {
        ub_diag_add_oom(diags, (ub_loc){layer->path, 0, 0},
                        "out of memory writing usdc");
        return -1;
    }
    ub_cw_stream_begin(s, layer);
    if (layer->streamed)
        ub_cw_error(&s->w, "the layer was read by a streaming parse");
    for (uint32_t i = 0; i < layer->root->children.n && !s->w.failed; i++)
        ub_cw_hand_over(s, layer, layer->root->children.v[i], 1);
    int rc = ub_usdc_stream_end(s, layer);
    ub_usdc_stream_free(s);
    return rc;
}
