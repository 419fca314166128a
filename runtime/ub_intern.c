#include "ub_intern.h"

#include "ub_arena.h"
#include "ub_idtab.h"
#include "ub_specloc.h"
#include "ub_value.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Each string is stored as [uint32 mark][uint32 hash][uint32 length]
 * [bytes][NUL]; the pointer handed out points at the bytes, so it is an
 * ordinary C string and its length is one load away (the mark: see
 * ub_strtab_mark_claim).  A slot is the pointer alone: the hash
 * beside the bytes is checked before them, and a table of half the size
 * (a layer interns tens of thousands of names) is worth the load of a
 * line the comparison of a match reads anyway. */
typedef struct {
    const char *str;
} ub_slot;

/* The table is split by hash into shards, each with its own slots, arena
 * and lock, so that two threads interning at once rarely meet.  The locks
 * are only taken while the table is concurrent: a single-threaded run pays
 * one predictable branch per call. */
#define UB_SHARD_BITS 4
#define UB_SHARDS (1u << UB_SHARD_BITS)

typedef struct {
    alignas(64) pthread_mutex_t lock; /* own cache lines: no false sharing */
    ub_arena *arena;
    ub_slot *slots;
    size_t cap, count, bytes;
} ub_shard;

/* Location files by index, in chunks that never move, so that a reader
 * needs no lock; a table of the pointers finds an index when adding. */
#define UB_FILE_CHUNK 1024u
#define UB_FILE_CHUNKS ((UB_SLOC_FILE_UNKNOWN + UB_FILE_CHUNK) / UB_FILE_CHUNK)

typedef struct {
    pthread_mutex_t lock;
    uint32_t n;   /* indexes used: 1..n */
    ub_idtab tab; /* file pointer -> index */
    const char **chunk[UB_FILE_CHUNKS];
} ub_files;

/* Crate layers' path trees (ub_specloc.h) by index, in chunks that
 * never move (NULL: dropped), and the texts their locations were read
 * as: a diagnostic keeps a text after its layer and tree are gone.
 * Locked always: only diagnostics and the loading of a crate layer come
 * here. */
#define UB_TREE_CHUNK 1024u
typedef struct {
    pthread_mutex_t lock;
    uint32_t n; /* indexes used: 1..n */
    ub_arena *texts;
    ub_spec_tree **chunk[UB_SLOC_TREES / UB_TREE_CHUNK + 1];
} ub_trees;

/* The place of tree i (1..n: its chunk is there). */
static ub_spec_tree **ub_tree_at(const ub_trees *ts, uint32_t i)
{
    return &ts->chunk[i / UB_TREE_CHUNK][i % UB_TREE_CHUNK];
}

struct ub_strtab {
    atomic_uint concurrent; /* nesting depth of ub_strtab_set_concurrent */
    atomic_bool marks_claimed; /* see ub_strtab_mark_claim */
    ub_shard shard[UB_SHARDS];
    const char *type_names[UB_TY_COUNT]; /* see ub_strtab_type_name */
    ub_files files;
    ub_trees *trees; /* (a pointer: reading a location makes texts) */
};

uint64_t ub_hash_bytes(const char *s, size_t n)
{
    /* FNV-1a: short keys dominate (names, tokens), where it is as fast as
     * anything and needs no dependency in the runtime. */
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static ub_trees *ub_trees_new(void)
{
    ub_trees *ts = calloc(1, sizeof *ts);
    if (!ts)
        return NULL;
    if (pthread_mutex_init(&ts->lock, NULL) != 0) {
        free(ts);
        return NULL;
    }
    if (!(ts->texts = ub_arena_new())) {
        pthread_mutex_destroy(&ts->lock);
        free(ts);
        return NULL;
    }
    return ts;
}

ub_strtab *ub_strtab_new(void)
{
    ub_strtab *t = aligned_alloc(alignof(ub_strtab), sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    atomic_init(&t->concurrent, 0u);
    atomic_init(&t->marks_claimed, false);
    if (pthread_mutex_init(&t->files.lock, NULL) != 0) {
        free(t);
        return NULL;
    }
    unsigned i = 0;
    for (; i < UB_SHARDS; i++) {
        ub_shard *sh = &t->shard[i];
        sh->cap = 64;
        sh->arena = ub_arena_new();
        sh->slots = calloc(sh->cap, sizeof *sh->slots);
        if (!sh->arena || !sh->slots ||
            pthread_mutex_init(&sh->lock, NULL) != 0) {
            ub_arena_free(sh->arena);
            free(sh->slots);
            break;
        }
    }
    if (i < UB_SHARDS) {
        while (i-- > 0) {
            pthread_mutex_destroy(&t->shard[i].lock);
            ub_arena_free(t->shard[i].arena);
            free(t->shard[i].slots);
        }
        pthread_mutex_destroy(&t->files.lock);
        free(t);
        return NULL;
    }
    if (!(t->trees = ub_trees_new())) {
        ub_strtab_free(t);
        return NULL;
    }
    for (unsigned id = UB_TY_INVALID + 1; id < UB_TY_COUNT; id++) {
        const ub_type *ty = ub_type_get((ub_type_id)id);
        if (!ty || !ty->name)
            continue;
        t->type_names[id] = ub_intern_cstr(t, ty->name);
        if (!t->type_names[id]) {
            ub_strtab_free(t);
            return NULL;
        }
    }
    return t;
}

const char *ub_strtab_type_name(const ub_strtab *t, unsigned id)
{
    return id < UB_TY_COUNT ? t->type_names[id] : NULL;
}

void ub_strtab_free(ub_strtab *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < UB_SHARDS; i++) {
        pthread_mutex_destroy(&t->shard[i].lock);
        ub_arena_free(t->shard[i].arena);
        free(t->shard[i].slots);
    }
    pthread_mutex_destroy(&t->files.lock);
    ub_idtab_free(&t->files.tab);
    for (unsigned i = 0; i < UB_FILE_CHUNKS; i++)
        free(t->files.chunk[i]);
    if (t->trees) {
        for (uint32_t i = 1; i <= t->trees->n; i++)
            ub_spec_tree_free(*ub_tree_at(t->trees, i), true);
        for (size_t i = 0; i < sizeof t->trees->chunk / sizeof *t->trees->chunk;
             i++)
            free(t->trees->chunk[i]);
        ub_arena_free(t->trees->texts);
        pthread_mutex_destroy(&t->trees->lock);
        free(t->trees);
    }
    free(t);
}

void ub_strtab_set_concurrent(ub_strtab *t, bool on)
{
    if (on)
        atomic_fetch_add(&t->concurrent, 1);
    else
        atomic_fetch_sub(&t->concurrent, 1);
}

size_t ub_str_len(const char *interned)
{
    uint32_t n;
    memcpy(&n, interned - sizeof n, sizeof n);
    return n;
}

bool ub_strtab_mark_claim(ub_strtab *t)
{
    return !atomic_exchange(&t->marks_claimed, true);
}

void ub_strtab_mark_release(ub_strtab *t)
{
    atomic_store(&t->marks_claimed, false);
}

/* The low 32 bits of an interned string's hash (0 for a kept one). */
static uint32_t ub_str_hash32(const char *interned)
{
    uint32_t h;
    memcpy(&h, interned - 2 * sizeof h, sizeof h);
    return h;
}

static int ub_shard_grow(ub_shard *t)
{
    size_t cap = t->cap * 2;
    if (cap - 1 > UINT32_MAX) /* a slot is placed by 32 bits of hash */
        return -1;
    ub_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].str)
            continue;
        size_t j = ub_str_hash32(t->slots[i].str) & (cap - 1);
        while (slots[j].str)
            j = (j + 1) & (cap - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

/* s[0..n) with its mark (0), hash and length before it, in shard sh's
 * arena. */
static const char *ub_shard_copy(ub_shard *sh, const char *s, size_t n,
                                 uint32_t hash32)
{
    uint32_t len = (uint32_t)n, mark = 0;
    /* all three are read with memcpy (ub_str_len): no alignment needed */
    char *mem = ub_arena_alloc_bytes(sh->arena, 3 * sizeof len + n + 1);
    if (!mem)
        return NULL;
    memcpy(mem, &mark, sizeof mark);
    memcpy(mem + sizeof mark, &hash32, sizeof hash32);
    memcpy(mem + 2 * sizeof len, &len, sizeof len);
    char *str = mem + 3 * sizeof len;
    if (n)
        memcpy(str, s, n);
    str[n] = '\0';
    return str;
}

static const char *ub_shard_intern(ub_shard *t, uint64_t h, const char *s,
                                   size_t n)
{
    size_t mask = t->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        ub_slot *slot = &t->slots[i];
        if (!slot->str)
            break;
        if (ub_str_hash32(slot->str) == (uint32_t)h &&
            ub_str_len(slot->str) == n &&
            memcmp(slot->str, s, n) == 0)
            return slot->str;
    }
    if ((t->count + 1) * 4 > t->cap * 3 && ub_shard_grow(t) != 0)
        return NULL;
    const char *str = ub_shard_copy(t, s, n, (uint32_t)h);
    if (!str)
        return NULL;
    mask = t->cap - 1;
    size_t i = h & mask;
    while (t->slots[i].str)
        i = (i + 1) & mask;
    t->slots[i].str = str;
    t->count++;
    t->bytes += n;
    return str;
}

const char *ub_intern(ub_strtab *t, const char *s, size_t n)
{
    return ub_intern_hashed(t, ub_hash_bytes(s, n), s, n);
}

const char *ub_intern_hashed(ub_strtab *t, uint64_t h, const char *s,
                             size_t n)
{
    if (n > UINT32_MAX)
        return NULL;
    ub_shard *sh = &t->shard[h >> (64 - UB_SHARD_BITS)];
    if (!atomic_load_explicit(&t->concurrent, memory_order_relaxed))
        return ub_shard_intern(sh, h, s, n);
    pthread_mutex_lock(&sh->lock);
    const char *r = ub_shard_intern(sh, h, s, n);
    pthread_mutex_unlock(&sh->lock);
    return r;
}

const char *ub_strtab_keep(ub_strtab *t, const char *s, size_t n)
{
    if (n > UINT32_MAX)
        return NULL;
    /* any shard will do: spread by length */
    ub_shard *sh = &t->shard[n % UB_SHARDS];
    if (!atomic_load_explicit(&t->concurrent, memory_order_relaxed))
        return ub_shard_copy(sh, s, n, 0);
    pthread_mutex_lock(&sh->lock);
    const char *r = ub_shard_copy(sh, s, n, 0);
    pthread_mutex_unlock(&sh->lock);
    return r;
}

const char *ub_intern_cstr(ub_strtab *t, const char *s)
{
    return ub_intern(t, s, strlen(s));
}

size_t ub_strtab_count(const ub_strtab *t)
{
    size_t n = 0;
    for (unsigned i = 0; i < UB_SHARDS; i++)
        n += t->shard[i].count;
    return n;
}

size_t ub_strtab_bytes(const ub_strtab *t)
{
    size_t n = 0;
    for (unsigned i = 0; i < UB_SHARDS; i++)
        n += t->shard[i].bytes;
    return n;
}

static const char *ub_files_at(const ub_files *f, uint32_t id)
{
    return f->chunk[id / UB_FILE_CHUNK][id % UB_FILE_CHUNK];
}

static bool ub_files_eq(const void *ctx, uint32_t id, const void *key)
{
    return ub_files_at(ctx, id) == key;
}

static uint32_t ub_files_add(ub_files *f, const char *file)
{
    uint32_t h = ub_interned_hash(file);
    ub_idslot *s = ub_idtab_find(&f->tab, h, ub_files_eq, f, file);
    if (!s) {
        /* the table could not grow: a file already in is still found */
        uint32_t had = ub_idtab_get(&f->tab, h, ub_files_eq, f, file);
        return had != UINT32_MAX ? had : UB_SLOC_FILE_UNKNOWN;
    }
    if (ub_idslot_used(s))
        return ub_idslot_id(s);
    if (f->n >= UB_SLOC_FILES)
        return UB_SLOC_FILE_UNKNOWN;
    uint32_t id = f->n + 1;
    const char ***chunk = &f->chunk[id / UB_FILE_CHUNK];
    if (!*chunk && !(*chunk = calloc(UB_FILE_CHUNK, sizeof **chunk)))
        return UB_SLOC_FILE_UNKNOWN;
    (*chunk)[id % UB_FILE_CHUNK] = file;
    ub_idtab_put(&f->tab, s, h, id);
    f->n = id;
    return id;
}

uint32_t ub_strtab_file_id(ub_strtab *t, const char *file)
{
    if (!file)
        return 0;
    if (!atomic_load_explicit(&t->concurrent, memory_order_relaxed))
        return ub_files_add(&t->files, file);
    pthread_mutex_lock(&t->files.lock);
    uint32_t r = ub_files_add(&t->files, file);
    pthread_mutex_unlock(&t->files.lock);
    return r;
}

ub_sloc ub_strtab_sloc(ub_strtab *t, ub_loc loc)
{
    uintptr_t p = (uintptr_t)loc.file;
    /* a whole-file location keeps its pointer when the pointer leaves
     * the tag bits free (user-space addresses do) */
    if (!loc.line && !loc.col && p &&
        !((uint64_t)p & (UB_SLOC_PTR | UB_SLOC_SPEC)))
        return (ub_sloc){UB_SLOC_PTR | (uint64_t)p};
    return ub_sloc_make(ub_strtab_file_id(t, loc.file), loc.line, loc.col);
}

uint32_t ub_strtab_add_spec_tree(ub_strtab *t, const char *file,
                                 ub_spec_paths paths)
{
    ub_spec_tree *tr = ub_spec_tree_new(file, paths);
    if (!tr)
        return 0;
    ub_trees *ts = t->trees;
    pthread_mutex_lock(&ts->lock);
    uint32_t id = 0;
    if (ts->n < UB_SLOC_TREES) {
        ub_spec_tree ***chunk = &ts->chunk[(ts->n + 1) / UB_TREE_CHUNK];
        if (*chunk || (*chunk = calloc(UB_TREE_CHUNK, sizeof **chunk))) {
            id = ++ts->n;
            *ub_tree_at(ts, id) = tr;
        }
    }
    pthread_mutex_unlock(&ts->lock);
    if (!id)
        ub_spec_tree_free(tr, false);
    return id;
}

void ub_strtab_drop_spec_tree(ub_strtab *t, uint32_t tree)
{
    if (!tree) /* (a text layer's: t is not touched) */
        return;
    ub_trees *ts = t->trees;
    pthread_mutex_lock(&ts->lock);
    ub_spec_tree *tr = NULL;
    if (tree <= ts->n) {
        tr = *ub_tree_at(ts, tree);
        *ub_tree_at(ts, tree) = NULL;
    }
    pthread_mutex_unlock(&ts->lock);
    ub_spec_tree_free(tr, true);
}

/* The text of a spec's location; "(unknown file)" once its tree is
 * dropped (never another spec's: indexes are not used again). */
static const char *ub_spec_loc_text(const ub_strtab *t, ub_sloc s)
{
    ub_trees *ts = t->trees;
    uint32_t tree = (uint32_t)(s.bits >> UB_SLOC_PATH_BITS) & UB_SLOC_TREES;
    uint64_t path = s.bits & ((UINT64_C(1) << UB_SLOC_PATH_BITS) - 1);
    pthread_mutex_lock(&ts->lock);
    ub_spec_tree *tr = tree && tree <= ts->n ? *ub_tree_at(ts, tree) : NULL;
    const char *text =
        tr ? ub_spec_tree_loc(tr, path, ts->texts) : UB_SLOC_UNKNOWN_FILE;
    pthread_mutex_unlock(&ts->lock);
    return text;
}

ub_loc ub_strtab_loc(const ub_strtab *t, ub_sloc s)
{
    if (ub_sloc_is_spec(s))
        return (ub_loc){ub_spec_loc_text(t, s), 0, 0};
    if (s.bits & UB_SLOC_PTR)
        return (ub_loc){(const char *)(uintptr_t)(s.bits & ~UB_SLOC_PTR), 0,
                        0};
    uint32_t id = ub_sloc_file(s);
    const char *file = !id                          ? NULL
                       : id == UB_SLOC_FILE_UNKNOWN ? UB_SLOC_UNKNOWN_FILE
                                                    : ub_files_at(&t->files, id);
    return (ub_loc){file, ub_sloc_line(s), ub_sloc_col(s)};
}
