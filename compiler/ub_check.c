#include "ub_check.h"

#include "ub_buf.h"
#include "ub_clips.h"
#include "ub_idtab.h"
#include "ub_time.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the check table ------------------------------------------------------ */

static const ub_check_info ub_checks[UB_CHK_COUNT] = {
    {UB_CHK_OFFSET_SCALE_ZERO, "offset-scale-zero", UB_ERROR,
     "a layer offset with scale 0 (OpenUSD drops the offset)"},
    {UB_CHK_OFFSET_SCALE_NEGATIVE, "offset-scale-negative", UB_ERROR,
     "a layer offset with a negative scale (documented as a composition "
     "error; OpenUSD applies it)"},
    {UB_CHK_OFFSET_NOT_FINITE, "offset-not-finite", UB_ERROR,
     "a layer offset whose offset or scale is inf or nan"},
    {UB_CHK_TCPS_INVALID, "tcps-invalid", UB_ERROR,
     "timeCodesPerSecond that is not a positive finite number"},
    {UB_CHK_FPS_INVALID, "fps-invalid", UB_ERROR,
     "framesPerSecond that is not a positive finite number"},
    {UB_CHK_TIME_RANGE_REVERSED, "time-range-reversed", UB_ERROR,
     "startTimeCode after endTimeCode"},
    {UB_CHK_TIME_NOT_FINITE, "time-not-finite", UB_ERROR,
     "an infinite or NaN time (samples, timecode values, start/end, clips)"},
    {UB_CHK_TCPS_MISMATCH, "tcps-mismatch", UB_WARNING,
     "a sublayer or reference whose timeCodesPerSecond differs"},
    {UB_CHK_TIME_FRACTIONAL, "time-fractional", UB_ERROR,
     "an offset or rate change that moves integer sample times off frames"},
    {UB_CHK_SUBLAYER_MISSING, "sublayer-missing", UB_ERROR,
     "a sublayer that cannot be found"},
    {UB_CHK_REFERENCE_MISSING, "reference-missing", UB_ERROR,
     "a referenced layer that cannot be found"},
    {UB_CHK_PAYLOAD_MISSING, "payload-missing", UB_ERROR,
     "a payload layer that cannot be found"},
    {UB_CHK_SUBLAYER_CYCLE, "sublayer-cycle", UB_ERROR,
     "layers that sublayer each other in a cycle"},
    {UB_CHK_ARC_CYCLE, "arc-cycle", UB_ERROR,
     "references or payloads that lead back to where they started"},
    {UB_CHK_DEFAULT_PRIM_MISSING, "default-prim-missing", UB_ERROR,
     "defaultPrim naming a prim that does not exist"},
    {UB_CHK_REFERENCE_NO_DEFAULT_PRIM, "reference-no-default-prim", UB_ERROR,
     "a reference without a prim path to a layer without defaultPrim"},
    {UB_CHK_REFERENCE_PRIM_MISSING, "reference-prim-missing", UB_ERROR,
     "a reference or payload to a prim the layer does not have"},
    {UB_CHK_CLIP_ASSET_MISSING, "clip-asset-missing", UB_ERROR,
     "a clip layer that cannot be found"},
    {UB_CHK_CLIP_MANIFEST_MISSING, "clip-manifest-missing", UB_ERROR,
     "a clip manifest that cannot be found"},
    {UB_CHK_CLIP_ACTIVE_INDEX, "clip-active-index", UB_ERROR,
     "an `active` entry whose clip index is outside assetPaths"},
    {UB_CHK_CLIP_ACTIVE_DUPLICATE, "clip-active-duplicate", UB_ERROR,
     "two `active` entries at the same stage time"},
    {UB_CHK_CLIP_TIMES_TRIPLE, "clip-times-triple", UB_ERROR,
     "a stage time that appears more than twice in `times`"},
    {UB_CHK_CLIP_TEMPLATE_OFFSET, "clip-template-offset", UB_ERROR,
     "templateActiveOffset larger than templateStride"},
    {UB_CHK_CLIP_TEMPLATE_PATTERN, "clip-template-pattern", UB_ERROR,
     "templateAssetPath without one or two adjacent groups of #"},
    {UB_CHK_CLIP_TEMPLATE_STRIDE, "clip-template-stride", UB_ERROR,
     "templateStride that is not positive, or gives over 1000000 frames"},
    {UB_CHK_CLIP_TEMPLATE_RANGE, "clip-template-range", UB_ERROR,
     "templateStartTime after templateEndTime"},
    {UB_CHK_CLIP_TEMPLATE_GAP, "clip-template-gap", UB_WARNING,
     "template frames with no clip file (OpenUSD skips them)"},
    {UB_CHK_CLIP_EXPLICIT_AND_TEMPLATE, "clip-explicit-and-template",
     UB_WARNING, "a clip set with both assetPaths and templateAssetPath"},
    {UB_CHK_CLIP_PRIM_PATH, "clip-prim-path", UB_ERROR,
     "a clip primPath that is not an absolute prim path"},
    {UB_CHK_CLIP_INCOMPLETE, "clip-incomplete", UB_WARNING,
     "a clip set missing fields OpenUSD needs (it is silently ignored)"},
    {UB_CHK_CLIP_FIELD_TYPE, "clip-field-type", UB_ERROR,
     "a clip field of the wrong type (OpenUSD ignores it)"},
    {UB_CHK_CLIP_NO_MANIFEST, "clip-no-manifest", UB_WARNING,
     "a clip set without manifestAssetPath"},
    {UB_CHK_CLIP_TCPS_MISMATCH, "clip-tcps-mismatch", UB_WARNING,
     "a clip layer whose timeCodesPerSecond differs (clips ignore it)"},
    {UB_CHK_CLIP_PRIM_MISSING, "clip-prim-missing", UB_WARNING,
     "clip layers that have no prim at the clip set's primPath"},
    {UB_CHK_CLIP_FIELD_UNKNOWN, "clip-field-unknown", UB_WARNING,
     "a clip set field OpenUSD does not know (a misspelling)"},
    {UB_CHK_CLIP_UNSORTED, "clip-unsorted", UB_WARNING,
     "clip `active` or `times` entries out of stage-time order"},
};

const ub_check_info *ub_check_info_get(ub_check_kind kind)
{
    return (unsigned)kind < UB_CHK_COUNT ? &ub_checks[kind] : NULL;
}

const ub_check_info *ub_check_find(const char *id)
{
    for (int i = 0; i < UB_CHK_COUNT; i++)
        if (strcmp(ub_checks[i].id, id) == 0)
            return &ub_checks[i];
    return NULL;
}

/* --- pass state ----------------------------------------------------------- */

typedef struct ck_layer {
    ub_layer *layer;
    uint32_t first_edge, n_edges; /* its sublayer edges (contiguous) */
    uint32_t first_arc, n_arcs;   /* its arcs (contiguous) */
    double *itimes;               /* distinct integer sample times, sorted */
    size_t n_itimes;
    bool itimes_done;
    uint8_t color;   /* sublayer-cycle search */
    uint32_t stamp;  /* stack closure walks */
    int32_t stack;   /* index into ck.stacks, or -1 */
} ck_layer;

typedef struct ck_edge {
    uint32_t from, to;
    const ub_sublayer *sub;
} ck_edge;

enum { CK_TARGET_MISSING = -1, CK_TARGET_INTERNAL = -2 };

typedef enum { CK_REF, CK_PAYLOAD, CK_INHERIT, CK_SPECIALIZE } ck_arc_kind;
static const char *const ck_arc_words[] = {"reference", "payload", "inherit",
                                           "specializes"};

typedef struct ck_arc {
    uint32_t from;        /* layer the arc is authored in */
    const char *src_path; /* interned prim path (variant selections dropped) */
    const ub_reference *ref; /* references and payloads; NULL otherwise */
    const char *tpath;    /* target prim path, interned; NULL: defaultPrim */
    ub_loc loc;
    ck_arc_kind kind;
    bool reported; /* an arc-cycle was reported at this arc */
    int32_t target; /* layer index, or CK_TARGET_* */
} ck_arc;

/* The arcs of one layer stack (every layer in it), sorted by prim path. */
typedef struct ck_entry {
    const char *path;
    uint32_t arc;
} ck_entry;

typedef struct ck_stack {
    ck_entry *v;
    size_t n;
    ub_idtab group; /* each distinct path -> its first index in v */
} ck_stack;

/* A memo from a pair of pointers to a number. */
typedef struct ck_memo_slot {
    const void *a, *b;
    int64_t v;
} ck_memo_slot;

typedef struct ck_memo {
    ck_memo_slot *v;
    size_t cap, n;
} ck_memo;

typedef struct ck {
    ub_loader *ld;
    ub_strtab *st;
    ub_diags *diags;
    ub_check_options opt;
    bool oom;

    ck_layer *layers;
    size_t n_layers, cap_layers;
    ck_memo layer_ix; /* (layer, NULL) -> index in layers */

    ck_edge *edges;
    size_t n_edges, cap_edges;
    ck_arc *arcs;
    size_t n_arcs, cap_arcs;
    ck_stack *stacks;
    size_t n_stacks, cap_stacks;
    uint32_t stamp;

    ck_memo seen; /* (path, stack + 1): sites the arc-cycle search saw */
    ck_memo opened; /* (anchor layer, asset) -> ck_open result and index */
    ck_memo found;  /* (stack root layer, prim path) -> ck_prim_in_stack */
    size_t cycle_budget;

    char *pbuf; /* the prim path being walked */
    size_t plen, pcap;

    const char *k_tcps, *k_fps, *k_start, *k_end, *k_default_prim,
        *k_references, *k_payload, *k_clips, *k_asset_paths, *k_prim_path,
        *k_active, *k_times, *k_manifest, *k_tmpl_path, *k_tmpl_start,
        *k_tmpl_end, *k_tmpl_stride, *k_tmpl_offset, *k_interp, *k_inherits,
        *k_specializes;
} ck;

/* Grow a malloc'd array to hold at least n+1 elements. */
static bool ck_reserve(ck *c, void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 16;
    void *np = realloc(*p, nc * elem);
    if (!np) {
        c->oom = true;
        return false;
    }
    *p = np;
    *cap = nc;
    return true;
}

static ub_diag *ck_emit(ck *c, ub_check_kind k, const ub_layer *L, ub_loc loc,
                        const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static ub_diag *ck_emitv(ck *c, ub_check_kind k, ub_severity sev,
                         const ub_layer *L, ub_loc loc, const char *hint,
                         const char *fmt, va_list ap)
{
    if (c->opt.disabled[k])
        return NULL;
    if (sev == UB_WARNING && c->opt.werror)
        sev = UB_ERROR;
    if (!loc.file)
        loc.file = L->path;
    ub_diag *d = ub_diag_addv(c->diags, sev, loc, ub_checks[k].id, L->source,
                              L->source_len, fmt, ap);
    if (!d)
        c->oom = true;
    else if (hint)
        ub_diag_set_hint(c->diags, d, "%s", hint);
    return d;
}

static ub_diag *ck_emit(ck *c, ub_check_kind k, const ub_layer *L, ub_loc loc,
                        const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ub_diag *d = ck_emitv(c, k, ub_checks[k].severity, L, loc, hint, fmt, ap);
    va_end(ap);
    return d;
}

/* The few checks whose severity depends on context say so in
 * doc/checks.md. */
static ub_diag *ck_emit_sev(ck *c, ub_check_kind k, ub_severity sev,
                            const ub_layer *L, ub_loc loc, const char *hint,
                            const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static ub_diag *ck_emit_sev(ck *c, ub_check_kind k, ub_severity sev,
                            const ub_layer *L, ub_loc loc, const char *hint,
                            const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ub_diag *d = ck_emitv(c, k, sev, L, loc, hint, fmt, ap);
    va_end(ap);
    return d;
}

static bool ck_is_int(double x)
{
    return isfinite(x) && x == floor(x);
}

/* A scalar number (any numeric type), as OpenUSD would read it. */
static bool ck_number(const ub_value *v, double *out)
{
    if (v->kind != UB_V_DATA || !ub_value_type(v) || v->count < 1 ||
        v->is_array)
        return false;
    switch (ub_value_type(v)->scalar) {
    case UB_SC_BOOL: case UB_SC_UCHAR: case UB_SC_INT: case UB_SC_UINT:
    case UB_SC_INT64: case UB_SC_UINT64: case UB_SC_HALF: case UB_SC_FLOAT:
    case UB_SC_DOUBLE:
        if (ub_type_ncomp(ub_value_type(v)) != 1)
            return false;
        *out = ub_value_get_double(v, 0, 0);
        return true;
    default:
        return false;
    }
}

/* A scalar string-like value (string, token, asset, path). */
static const char *ck_string(const ub_value *v)
{
    if (v->kind != UB_V_DATA || !ub_value_type(v) || v->count != 1 ||
        v->is_array ||
        ub_value_type(v)->scalar != UB_SC_STRING)
        return NULL;
    return ub_value_str(v, 0);
}

/* The last path component of a file name, for short messages. */
static const char *ck_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* --- memos ---------------------------------------------------------------- */

static size_t ck_memo_hash(const void *a, const void *b)
{
    uint64_t h = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4full + (h >> 31);
    return (size_t)(h ^ (h >> 29));
}

static int64_t *ck_memo_get(const ck_memo *m, const void *a, const void *b)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = ck_memo_hash(a, b) & mask;; i = (i + 1) & mask) {
        if (!m->v[i].a)
            return NULL;
        if (m->v[i].a == a && m->v[i].b == b)
            return &m->v[i].v;
    }
}

/* a must not be NULL. */
static void ck_memo_put(ck *c, ck_memo *m, const void *a, const void *b,
                        int64_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        ck_memo_slot *nv = calloc(cap, sizeof *nv);
        if (!nv) {
            c->oom = true;
            return;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->v[i].a)
                continue;
            size_t j = ck_memo_hash(m->v[i].a, m->v[i].b) & (cap - 1);
            while (nv[j].a)
                j = (j + 1) & (cap - 1);
            nv[j] = m->v[i];
        }
        free(m->v);
        m->v = nv;
        m->cap = cap;
    }
    size_t mask = m->cap - 1, j = ck_memo_hash(a, b) & mask;
    while (m->v[j].a)
        j = (j + 1) & mask;
    m->v[j] = (ck_memo_slot){a, b, v};
    m->n++;
}

/* --- layer registry ------------------------------------------------------- */

static int64_t ck_find_layer(const ck *c, const ub_layer *L)
{
    const int64_t *m = ck_memo_get(&c->layer_ix, L, NULL);
    return m ? *m : -1;
}

/* The index of L, registering it (to be walked) on first sight. */
static int64_t ck_add_layer(ck *c, ub_layer *L)
{
    int64_t found = ck_find_layer(c, L);
    if (found >= 0)
        return found;
    if (!ck_reserve(c, (void **)&c->layers, &c->cap_layers, c->n_layers,
                    sizeof *c->layers))
        return -1;
    uint32_t idx = (uint32_t)c->n_layers++;
    c->layers[idx] = (ck_layer){.layer = L, .stack = -1};
    ck_memo_put(c, &c->layer_ix, L, NULL, idx);
    return c->oom ? -1 : (int64_t)idx;
}

typedef enum {
    CK_OPEN_OK,
    CK_OPEN_MISSING,
    CK_OPEN_FAILED,  /* reported by the loader */
} ck_open_result;

/* Resolve and read asset as named from L.  A missing file is the caller's
 * to report (with its own check ID).  The loader tells the format by
 * content and reports what it cannot read (a layer with errors, a damaged
 * package, a Draco, Alembic or MaterialX file): a shot that flatten would
 * bake without one of its arcs does not pass check. */
static ck_open_result ck_open_uncached(ck *c, const char *asset,
                                       const ub_layer *L, ub_loc loc,
                                       int64_t *idx)
{
    if (!asset[0])
        return CK_OPEN_MISSING;
    /* "a.usd:SDF_FORMAT_ARGS:k=v" names a.usd, read with arguments */
    const char *args = strstr(asset, ":SDF_FORMAT_ARGS:");
    char *plain = NULL;
    if (args) {
        plain = strndup(asset, (size_t)(args - asset));
        if (!plain) {
            c->oom = true;
            return CK_OPEN_FAILED;
        }
        asset = plain;
    }
    ck_open_result r = CK_OPEN_FAILED;
    ub_load_status st;
    const char *resolved = ub_loader_resolve(c->ld, asset, L, &st);
    if (st == UB_LOAD_FAILED) {
        c->oom = true;
    } else if (!resolved) {
        r = CK_OPEN_MISSING;
    } else {
        ub_layer *T = ub_loader_open(c->ld, asset, L, loc);
        if (T) {
            *idx = ck_add_layer(c, T);
            r = *idx >= 0 ? CK_OPEN_OK : CK_OPEN_FAILED;
        }
    }
    free(plain);
    return r;
}

/* ck_open_uncached, once per (naming layer, asset): a shot names the same
 * asset from thousands of prims.  Asset strings are interned, so the
 * pointer is the key. */
static ck_open_result ck_open(ck *c, const char *asset, const ub_layer *L,
                              ub_loc loc, int64_t *idx)
{
    int64_t *m = ck_memo_get(&c->opened, L, asset);
    if (m) {
        *idx = *m >> 3;
        return (ck_open_result)(*m & 7);
    }
    *idx = -1;
    ck_open_result r = ck_open_uncached(c, asset, L, loc, idx);
    ck_memo_put(c, &c->opened, L, asset, (int64_t)((uint64_t)*idx << 3) | r);
    return r;
}

/* --- source positions ----------------------------------------------------- */

/* Byte offset of loc in L's source, or SIZE_MAX. */
static size_t ck_src_pos(const ub_layer *L, ub_loc loc)
{
    if (!L->source || loc.line == 0)
        return SIZE_MAX;
    size_t i = 0;
    for (uint32_t l = 1; l < loc.line; l++) {
        const char *nl = memchr(L->source + i, '\n', L->source_len - i);
        if (!nl)
            return SIZE_MAX;
        i = (size_t)(nl - L->source) + 1;
    }
    i += loc.col ? loc.col - 1 : 0;
    return i <= L->source_len ? i : SIZE_MAX;
}

/* The location of byte pos, given that byte `from` is at `at`. */
static ub_loc ck_src_loc(const ub_layer *L, size_t from, ub_loc at,
                         size_t pos)
{
    for (size_t i = from; i < pos; i++) {
        if (L->source[i] == '\n') {
            at.line++;
            at.col = 1;
        } else {
            at.col++;
        }
    }
    return at;
}

static size_t ck_skip_space(const ub_layer *L, size_t i)
{
    const char *s = L->source;
    size_t n = L->source_len;
    while (i < n) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
            i++;
        } else if (s[i] == '#') {
            while (i < n && s[i] != '\n')
                i++;
        } else {
            break;
        }
    }
    return i;
}

/* Skip a quoted string, an @asset@ or a <path> starting at i. */
static size_t ck_skip_token(const ub_layer *L, size_t i)
{
    const char *s = L->source;
    size_t n = L->source_len;
    char q = s[i];
    if (q == '<') {
        while (i < n && s[i] != '>' && s[i] != '\n')
            i++;
        return i < n ? i + 1 : n;
    }
    if (q != '@' && q != '"' && q != '\'')
        return i + 1;
    bool triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
    i += triple ? 3 : 1;
    while (i < n) {
        if (s[i] == '\\' && q != '@') {
            i += 2;
            continue;
        }
        if (s[i] == q) {
            if (!triple)
                return i + 1;
            if (i + 2 < n && s[i + 1] == q && s[i + 2] == q)
                return i + 3;
        }
        i++;
    }
    return n;
}

/* Where `word =` is written inside the `( offset = ...; scale = ... )`
 * following the asset path at loc; loc itself when it cannot be found. */
static ub_loc ck_offset_loc(const ub_layer *L, ub_loc loc, const char *word)
{
    size_t p = ck_src_pos(L, loc);
    if (p == SIZE_MAX)
        return loc;
    const char *s = L->source;
    size_t n = L->source_len, i = ck_skip_space(L, p);
    if (i < n && s[i] == '@')
        i = ck_skip_space(L, ck_skip_token(L, i));
    if (i < n && s[i] == '<')
        i = ck_skip_space(L, ck_skip_token(L, i));
    if (i >= n || s[i] != '(')
        return loc;
    size_t wl = strlen(word);
    for (i++; i < n && s[i] != ')'; i++) {
        i = ck_skip_space(L, i);
        if (i + wl <= n && memcmp(s + i, word, wl) == 0 &&
            (i == 0 || !(s[i - 1] == '_' || isalnum((unsigned char)s[i - 1]))) &&
            (i + wl == n || !(s[i + wl] == '_' ||
                              isalnum((unsigned char)s[i + wl]))))
            return ck_src_loc(L, p, loc, i);
        if (i < n && s[i] == ')')
            break;
    }
    return loc;
}

/* Where the first non-finite time-sample key is written, in the
 * `{ time: value, ... }` block at or after loc; loc when not found. */
static ub_loc ck_sample_key_loc(const ub_layer *L, ub_loc loc)
{
    size_t p = ck_src_pos(L, loc);
    if (p == SIZE_MAX)
        return loc;
    const char *s = L->source;
    size_t n = L->source_len, i = p;
    while (i < n && s[i] != '{' && s[i] != '\n')
        i++;
    if (i < n && s[i] == '\n') /* the block may start on the next line */
        while (i < n && s[i] != '{')
            i++;
    if (i >= n)
        return loc;
    i++;
    for (;;) {
        i = ck_skip_space(L, i);
        if (i >= n || s[i] == '}')
            return loc;
        size_t k = i;
        char num[64];
        size_t m = 0;
        while (i < n && s[i] != ':' && m + 1 < sizeof num && s[i] != '\n')
            num[m++] = s[i++];
        num[m] = '\0';
        if (!isfinite(strtod(num, NULL)))
            return ck_src_loc(L, p, loc, k);
        /* skip the value up to the ',' or '}' that ends the entry */
        int depth = 0;
        while (i < n) {
            char ch = s[i];
            if (ch == '"' || ch == '\'' || ch == '@' || ch == '<') {
                i = ck_skip_token(L, i);
                continue;
            }
            if (ch == '#') {
                i = ck_skip_space(L, i);
                continue;
            }
            if (ch == '(' || ch == '[' || ch == '{')
                depth++;
            else if (ch == ')' || ch == ']' || (ch == '}' && depth > 0))
                depth--;
            else if (depth == 0 && (ch == ',' || ch == '}'))
                break;
            i++;
        }
        if (i >= n || s[i] == '}')
            return loc;
        i++;
    }
}

/* --- time values ---------------------------------------------------------- */

static void ck_value_times(ck *c, const ub_layer *L, const ub_value *v,
                           ub_loc loc, const char *what);

static void ck_dict_times(ck *c, const ub_layer *L, const ub_dict *d,
                          const char *what)
{
    for (uint32_t i = 0; d && i < d->n; i++)
        ck_value_times(c, L, &d->e[i].value, ub_layer_loc(L, d->e[i].loc), what);
}

/* Report a timecode (or timecode[]) value holding inf or nan, at any depth
 * of dictionaries. */
static void ck_value_times(ck *c, const ub_layer *L, const ub_value *v,
                           ub_loc loc, const char *what)
{
    if (v->kind == UB_V_DICT) {
        ck_dict_times(c, L, v->u.dict, what);
        return;
    }
    if (v->kind != UB_V_DATA || !ub_value_type(v))
        return;
    if (v->type_id == UB_TY_TIMECODE) {
        const double *t = ub_value_data(v);
        for (uint32_t i = 0; i < v->count; i++) {
            if (isfinite(t[i]))
                continue;
            ck_emit(c, UB_CHK_TIME_NOT_FINITE, L, loc,
                    "a time must be a finite number of time codes",
                    "%s holds the timecode %g", what, t[i]);
            return;
        }
    } else if (ub_value_type(v)->scalar == UB_SC_DICT) {
        ub_dict *const *d = ub_value_data(v);
        for (uint32_t i = 0; i < v->count; i++)
            ck_dict_times(c, L, d[i], what);
    }
}

static void ck_fields_times(ck *c, const ub_layer *L, const ub_fields *f)
{
    for (uint32_t i = 0; i < f->n; i++) {
        const ub_value *v = &f->v[i].value;
        if (v->kind == UB_V_DICT ||
            (v->kind == UB_V_DATA && ub_value_type(v) &&
             (v->type_id == UB_TY_TIMECODE ||
              ub_value_type(v)->scalar == UB_SC_DICT)))
            ck_value_times(c, L, v, ub_layer_loc(L, f->v[i].loc), f->v[i].key);
    }
}

/* --- layer metadata ------------------------------------------------------- */

static void ck_rate(ck *c, const ub_layer *L, const char *key,
                    ub_check_kind kind)
{
    const ub_field *f = ub_fields_find(&L->meta, key);
    double v;
    if (!f || !ck_number(&f->value, &v) || ub_rate_ok(v))
        return;
    char msg[256];
    ub_rate_problem(msg, sizeof msg, key, v);
    ck_emit(c, kind, L, ub_layer_loc(L, f->loc), ub_rate_hint, "%s", msg);
}

static void ck_layer_meta(ck *c, const ub_layer *L)
{
    ck_rate(c, L, c->k_tcps, UB_CHK_TCPS_INVALID);
    ck_rate(c, L, c->k_fps, UB_CHK_FPS_INVALID);
    const ub_field *fs = ub_fields_find(&L->meta, c->k_start);
    const ub_field *fe = ub_fields_find(&L->meta, c->k_end);
    double s = 0, e = 0;
    bool hs = fs && ck_number(&fs->value, &s);
    bool he = fe && ck_number(&fe->value, &e);
    if (hs && !isfinite(s))
        ck_emit(c, UB_CHK_TIME_NOT_FINITE, L, ub_layer_loc(L, fs->loc),
                "author the first frame of the shot as a finite number",
                "startTimeCode is %g", s);
    if (he && !isfinite(e))
        ck_emit(c, UB_CHK_TIME_NOT_FINITE, L, ub_layer_loc(L, fe->loc),
                "author the last frame of the shot as a finite number",
                "endTimeCode is %g", e);
    if (hs && he && isfinite(s) && isfinite(e) && s > e)
        ck_emit(c, UB_CHK_TIME_RANGE_REVERSED, L, ub_layer_loc(L, fs->loc),
                "swap the two values, or fix the one that is wrong",
                "startTimeCode %g is after endTimeCode %g", s, e);
    ck_fields_times(c, L, &L->meta);
}

/* --- integer sample times (for time-fractional) --------------------------- */

#define CK_MAX_ITIMES 1000000

typedef struct ck_dvec {
    double *v;
    size_t n, cap;
} ck_dvec;

static void ck_itimes_prim(ck *c, const ub_prim *p, ck_dvec *out)
{
    for (uint32_t i = 0; i < p->props.n; i++) {
        const ub_samples *s = ub_prop_samples(p->props.v[i]);
        for (uint32_t j = 0; j < s->n && out->n < CK_MAX_ITIMES; j++) {
            double t = s->v[j].time;
            if (!ck_is_int(t))
                continue;
            /* samples are sorted: skip runs of the same time cheaply */
            if (out->n && out->v[out->n - 1] == t)
                continue;
            if (!ck_reserve(c, (void **)&out->v, &out->cap, out->n,
                            sizeof *out->v))
                return;
            out->v[out->n++] = t;
        }
    }
    for (uint32_t i = 0; i < p->children.n; i++)
        ck_itimes_prim(c, p->children.v[i], out);
    for (uint32_t i = 0; i < ub_prim_n_variant_sets(p); i++) {
        const ub_variant_set *vs = &ub_prim_variant_sets(p)[i];
        for (uint32_t j = 0; j < vs->variants.n; j++)
            ck_itimes_prim(c, vs->variants.v[j], out);
    }
}

static int ck_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void ck_itimes(ck *c, uint32_t li)
{
    if (c->layers[li].itimes_done)
        return;
    ck_dvec v = {0};
    ck_itimes_prim(c, c->layers[li].layer->root, &v);
    if (v.n)
        qsort(v.v, v.n, sizeof *v.v, ck_cmp_double);
    size_t w = 0;
    for (size_t i = 0; i < v.n; i++)
        if (w == 0 || v.v[w - 1] != v.v[i])
            v.v[w++] = v.v[i];
    c->layers[li].itimes = v.v;
    c->layers[li].n_itimes = w;
    c->layers[li].itimes_done = true;
}

static bool ck_is_whole(double x)
{
    return fabs(x - nearbyint(x)) <= 1e-9 * fmax(1.0, fabs(x));
}

/* The time checks of one arc (sublayer, reference or payload) from L to
 * layer index ti, authored with offset `authored` at loc. */
static void ck_arc_rates(ck *c, const ub_layer *L, uint32_t ti,
                         ub_offset authored, ub_loc loc, const char *what)
{
    const ub_layer *T = c->layers[ti].layer;
    double pt = ub_layer_tcps(L), tt = ub_layer_tcps(T);
    if (!ub_rate_ok(pt) || !ub_rate_ok(tt))
        return; /* tcps-invalid says why */
    ub_offset_status st;
    ub_offset m = ub_sublayer_offset(UB_OFFSET_IDENTITY, authored, pt, tt,
                                     &st);
    if (!ck_is_int(m.scale) || !ck_is_int(m.offset)) {
        ck_itimes(c, ti);
        const ck_layer *cl = &c->layers[ti];
        size_t bad = 0;
        double first = 0;
        for (size_t i = 0; i < cl->n_itimes; i++) {
            if (ck_is_whole(ub_offset_apply(m, cl->itimes[i])))
                continue;
            if (!bad++)
                first = cl->itimes[i];
        }
        if (bad) {
            char why[160];
            if (pt != tt)
                snprintf(why, sizeof why,
                         "timeCodesPerSecond %g there and %g here scale "
                         "its times by %g",
                         tt, pt, pt / tt);
            else
                snprintf(why, sizeof why, "the layer offset maps t to "
                                          "t * %g + %g",
                         m.scale, m.offset);
            ub_diag *d = ck_emit(
                c, UB_CHK_TIME_FRACTIONAL, L, loc, NULL,
                "%s '%s': sample time %g lands on %g here, between frames "
                "(%zu of %zu integer sample times do): %s",
                what, ck_base(T->path), first, ub_offset_apply(m, first), bad,
                cl->n_itimes, why);
            ub_diag_set_hint(c->diags, d,
                             "author the same timeCodesPerSecond in both "
                             "layers, or choose an offset and scale that "
                             "keep frames whole (mapping t to t * %g + %g)",
                             m.scale, m.offset);
            return;
        }
    }
    if (pt != tt) {
        ub_diag *d = ck_emit(
            c, UB_CHK_TCPS_MISMATCH, L, loc, NULL,
            "%s '%s' has timeCodesPerSecond %g but this layer has %g: "
            "OpenUSD scales its times by %g",
            what, ck_base(T->path), tt, pt, pt / tt);
        ub_diag_set_hint(c->diags, d,
                         "author timeCodesPerSecond = %g in '%s' (and "
                         "retime its samples), or keep the implied scale "
                         "on purpose and --disable tcps-mismatch",
                         pt, ck_base(T->path));
    }
}

/* Report what is wrong with an authored layer offset. */
static void ck_offset(ck *c, const ub_layer *L, ub_offset o, ub_loc loc,
                      const char *what, const char *asset)
{
    switch (ub_offset_validate(o)) {
    case UB_OFFSET_OK:
        return;
    case UB_OFFSET_NONFINITE: {
        bool bad_offset = !isfinite(o.offset);
        ck_emit(c, UB_CHK_OFFSET_NOT_FINITE, L,
                ck_offset_loc(L, loc, bad_offset ? "offset" : "scale"),
                "use a finite offset and a positive finite scale; OpenUSD "
                "ignores this offset entirely",
                "the layer offset of %s '%s' has %s %g", what, asset,
                bad_offset ? "offset" : "scale",
                bad_offset ? o.offset : o.scale);
        return;
    }
    case UB_OFFSET_SCALE_ZERO:
        ck_emit(c, UB_CHK_OFFSET_SCALE_ZERO, L, ck_offset_loc(L, loc, "scale"),
                "use a positive scale (1 keeps the timing); OpenUSD drops "
                "this offset, so the offset is lost as well",
                "the layer offset of %s '%s' has scale 0, which collapses "
                "all of its time onto one frame",
                what, asset);
        return;
    case UB_OFFSET_SCALE_NEGATIVE:
        ck_emit(c, UB_CHK_OFFSET_SCALE_NEGATIVE, L,
                ck_offset_loc(L, loc, "scale"),
                "use a positive scale; to play time backwards, use value "
                "clips (clips.times maps stage time to clip time, and may "
                "decrease), the documented way; OpenUSD 24.08 applies this "
                "offset anyway (flatten does too, with a warning)",
                "the layer offset of %s '%s' has scale %g: a negative "
                "scale is a composition error",
                what, asset, o.scale);
        return;
    }
}

/* --- sublayers ------------------------------------------------------------ */

/* The offset as authored: fields not written are the identity's, whatever
 * the struct holds (layers built in memory need not fill them). */
static ub_offset ck_authored(ub_offset o, bool has_offset, bool has_scale)
{
    return (ub_offset){has_offset ? o.offset : 0.0,
                       has_scale ? o.scale : 1.0};
}

static void ck_sublayers(ck *c, uint32_t li)
{
    ub_layer *L = c->layers[li].layer;
    c->layers[li].first_edge = (uint32_t)c->n_edges;
    for (uint32_t i = 0; i < L->n_sublayers && !c->oom; i++) {
        const ub_sublayer *sub = &L->sublayers[i];
        ub_offset off = ck_authored(sub->offset, sub->has_offset,
                                    sub->has_scale);
        ck_offset(c, L, off, ub_layer_loc(L, sub->loc), "sublayer", sub->asset);
        int64_t ti;
        ck_open_result r = ck_open(c, sub->asset, L, ub_layer_loc(L, sub->loc), &ti);
        if (r == CK_OPEN_MISSING) {
            ck_emit(c, UB_CHK_SUBLAYER_MISSING, L, ub_layer_loc(L, sub->loc),
                    "asset paths are resolved relative to the layer that "
                    "names them, then along --search-path",
                    "cannot find sublayer '%s'", sub->asset);
            continue;
        }
        if (r != CK_OPEN_OK)
            continue;
        ck_arc_rates(c, L, (uint32_t)ti, off, ub_layer_loc(L, sub->loc), "sublayer");
        if (!ck_reserve(c, (void **)&c->edges, &c->cap_edges, c->n_edges,
                        sizeof *c->edges))
            return;
        c->edges[c->n_edges++] = (ck_edge){li, (uint32_t)ti, sub};
    }
    c->layers[li].n_edges =
        (uint32_t)(c->n_edges - c->layers[li].first_edge);
}

/* --- prims ---------------------------------------------------------------- */

static bool ck_path_push(ck *c, const char *name)
{
    size_t n = strlen(name);
    if (c->plen + n + 2 > c->pcap) {
        size_t cap = c->pcap ? c->pcap : 256;
        while (c->plen + n + 2 > cap)
            cap *= 2;
        char *p = realloc(c->pbuf, cap);
        if (!p) {
            c->oom = true;
            return false;
        }
        c->pbuf = p;
        c->pcap = cap;
    }
    c->pbuf[c->plen++] = '/';
    memcpy(c->pbuf + c->plen, name, n + 1);
    c->plen += n;
    return true;
}

static const char *ck_cur_path(ck *c)
{
    if (c->plen == 0)
        return ub_intern(c->st, "/", 1);
    return ub_intern(c->st, c->pbuf, c->plen);
}

static void ck_arcs(ck *c, uint32_t li, const ub_field *f, bool payload)
{
    ub_layer *L = c->layers[li].layer;
    if (f->value.kind != UB_V_LISTOP || !f->value.u.listop)
        return;
    const ub_listop *lo = f->value.u.listop;
    const char *src = NULL;
    const char *what = payload ? "payload" : "reference";
    for (int part = 0; part < UB_LO_NPARTS && !c->oom; part++) {
        /* deleted and reordered items bring nothing in */
        if (part == UB_LO_DELETE || part == UB_LO_REORDER || !lo->has[part])
            continue;
        const ub_value *pv = ub_listop_get(lo, part);
        if (pv->kind != UB_V_DATA || !ub_value_type(pv) ||
            ub_value_type(pv)->scalar != UB_SC_REF)
            continue;
        for (uint32_t i = 0; i < pv->count && !c->oom; i++) {
            const ub_reference *ref = ub_value_elem(pv, i);
            ub_loc loc =
                ub_layer_loc(L, ub_sloc_line(ref->loc) ? ref->loc : f->loc);
            const char *asset = ref->asset ? ref->asset : "";
            ub_offset off = ck_authored(ref->offset, ref->has_offset,
                                        ref->has_scale);
            ck_offset(c, L, off, loc, what, asset[0] ? asset : "(internal)");
            int32_t target = CK_TARGET_INTERNAL;
            if (asset[0]) {
                int64_t ti;
                ck_open_result r = ck_open(c, asset, L, loc, &ti);
                target = r == CK_OPEN_OK ? (int32_t)ti : CK_TARGET_MISSING;
                if (r == CK_OPEN_MISSING)
                    ck_emit(c,
                            payload ? UB_CHK_PAYLOAD_MISSING
                                    : UB_CHK_REFERENCE_MISSING,
                            L, loc,
                            "asset paths are resolved relative to the layer "
                            "that names them, then along --search-path",
                            "cannot find %s '%s'", what, asset);
                else if (r == CK_OPEN_OK)
                    ck_arc_rates(c, L, (uint32_t)ti, off, loc, what);
            }
            if (!src && !(src = ck_cur_path(c))) {
                c->oom = true;
                return;
            }
            if (!ck_reserve(c, (void **)&c->arcs, &c->cap_arcs, c->n_arcs,
                            sizeof *c->arcs))
                return;
            c->arcs[c->n_arcs++] =
                (ck_arc){li,     src,   ref,
                         ref->prim_path && ref->prim_path[0] ? ref->prim_path
                                                             : NULL,
                         loc,    payload ? CK_PAYLOAD : CK_REF, false, target};
        }
    }
}

/* Inherits and specializes: arcs within the layer stack, which the
 * arc-cycle search follows like internal references.  Relative paths are
 * anchored at the prim, as OpenUSD does. */
static void ck_class_arcs(ck *c, uint32_t li, const ub_field *f,
                          ck_arc_kind kind)
{
    if (f->value.kind != UB_V_LISTOP || !f->value.u.listop)
        return;
    const ub_listop *lo = f->value.u.listop;
    const char *src = NULL;
    for (int part = 0; part < UB_LO_NPARTS && !c->oom; part++) {
        if (part == UB_LO_DELETE || part == UB_LO_REORDER || !lo->has[part])
            continue;
        const ub_value *pv = ub_listop_get(lo, part);
        if (pv->kind != UB_V_DATA || !ub_value_type(pv) ||
            ub_value_type(pv)->scalar != UB_SC_STRING)
            continue;
        for (uint32_t i = 0; i < pv->count && !c->oom; i++) {
            const char *p = ub_value_str(pv, i);
            if (!p || !p[0] || strchr(p, '{') || strchr(p, '.'))
                continue; /* relative "../" and variants: composition's */
            if (!src && !(src = ck_cur_path(c)))
                return;
            const char *abs = p;
            if (p[0] != '/') {
                size_t sl = strlen(src), pl = strlen(p);
                char *tmp = malloc(sl + pl + 2);
                if (!tmp) {
                    c->oom = true;
                    return;
                }
                memcpy(tmp, src, sl);
                tmp[sl] = '/';
                memcpy(tmp + sl + 1, p, pl + 1);
                abs = ub_intern(c->st, sl == 1 ? tmp + 1 : tmp,
                                sl == 1 ? pl + 1 : sl + pl + 1);
                free(tmp);
            } else {
                abs = ub_intern_cstr(c->st, p);
            }
            if (!abs || !ck_reserve(c, (void **)&c->arcs, &c->cap_arcs,
                                    c->n_arcs, sizeof *c->arcs)) {
                c->oom = true;
                return;
            }
            ub_loc loc = ub_strtab_loc(c->st, ub_sloc_line(ub_listop_loc(lo, part))
                                                  ? ub_listop_loc(lo, part)
                                                  : f->loc);
            c->arcs[c->n_arcs++] = (ck_arc){
                li, src, NULL, abs, loc, kind, false, CK_TARGET_INTERNAL};
        }
    }
}

static void ck_clips(ck *c, uint32_t li, const ub_field *f);

static void ck_walk_prim(ck *c, uint32_t li, const ub_prim *p, unsigned depth)
{
    const ub_layer *L = c->layers[li].layer;
    for (uint32_t i = 0; i < p->meta.n && !c->oom; i++) {
        const ub_field *f = &p->meta.v[i];
        if (f->key == c->k_references)
            ck_arcs(c, li, f, false);
        else if (f->key == c->k_payload)
            ck_arcs(c, li, f, true);
        else if (f->key == c->k_clips)
            ck_clips(c, li, f);
        else if (f->key == c->k_inherits)
            ck_class_arcs(c, li, f, CK_INHERIT);
        else if (f->key == c->k_specializes)
            ck_class_arcs(c, li, f, CK_SPECIALIZE);
    }
    ck_fields_times(c, L, &p->meta);
    for (uint32_t i = 0; i < p->props.n; i++) {
        const ub_prop *pr = p->props.v[i];
        const ub_samples *s = ub_prop_samples(pr);
        for (uint32_t j = 0; j < s->n; j++) {
            if (isfinite(s->v[j].time))
                continue;
            ck_emit(c, UB_CHK_TIME_NOT_FINITE, L,
                    ck_sample_key_loc(L, ub_layer_loc(L, ub_sloc_line(s->loc) ? s->loc
                                                                 : pr->loc)),
                    "sample times must be finite; remove the sample or give "
                    "it a frame number",
                    "'%s' has a time sample at %g", pr->name, s->v[j].time);
            break;
        }
        const ub_type *prt = ub_prop_type(pr);
        bool timed = prt && (prt->id == UB_TY_TIMECODE ||
                             prt->scalar == UB_SC_DICT);
        if (timed) {
            ck_value_times(c, L, &pr->default_value, ub_layer_loc(L, pr->loc), pr->name);
            for (uint32_t j = 0; j < s->n; j++)
                ck_value_times(c, L, &s->v[j].value,
                               ub_layer_loc(L, ub_sloc_line(s->loc) ? s->loc
                                                                    : pr->loc),
                               pr->name);
        }
        ck_fields_times(c, L, ub_prop_meta(pr));
    }
    if (depth > 4096) /* the parser's own limits keep real files far below */
        return;
    for (uint32_t i = 0; i < p->children.n && !c->oom; i++) {
        size_t save = c->plen;
        if (!ck_path_push(c, p->children.v[i]->name))
            return;
        ck_walk_prim(c, li, p->children.v[i], depth + 1);
        c->plen = save;
    }
    /* a variant's body speaks about the prim that owns the set */
    for (uint32_t i = 0; i < ub_prim_n_variant_sets(p) && !c->oom; i++) {
        const ub_variant_set *vs = &ub_prim_variant_sets(p)[i];
        for (uint32_t j = 0; j < vs->variants.n; j++)
            ck_walk_prim(c, li, vs->variants.v[j], depth + 1);
    }
}

static void ck_walk_layer(ck *c, uint32_t li)
{
    const ub_layer *L = c->layers[li].layer;
    ck_layer_meta(c, L);
    ck_sublayers(c, li);
    c->plen = 0;
    c->layers[li].first_arc = (uint32_t)c->n_arcs;
    ck_walk_prim(c, li, L->root, 0);
    c->layers[li].n_arcs = (uint32_t)(c->n_arcs - c->layers[li].first_arc);
}

/* --- value clips ---------------------------------------------------------- */

/* A clip field of the type OpenUSD requires (it ignores any other type).
 * Returns NULL when absent, blocked or mistyped (reporting the latter). */
static const ub_dict_entry *ck_clip_field(ck *c, const ub_layer *L,
                                          const ub_dict *d, const char *key,
                                          ub_type_id want, bool array)
{
    const ub_dict_entry *e = ub_dict_find(d, key);
    if (!e || e->value.kind == UB_V_BLOCK || e->value.kind == UB_V_EMPTY)
        return NULL;
    const ub_value *v = &e->value;
    if (v->kind == UB_V_DATA && v->type_id == want &&
        v->is_array == array)
        return e;
    const char *have = v->kind == UB_V_DICT   ? "dictionary"
                       : ub_value_type(v)              ? ub_value_type(v)->name
                                              : "an unknown type";
    ub_diag *d2 = ck_emit(c, UB_CHK_CLIP_FIELD_TYPE, L, ub_layer_loc(L, e->loc), NULL,
                          "clip field '%s' is %s%s, but OpenUSD reads it "
                          "only as %s%s and ignores it otherwise",
                          key, have, v->is_array ? "[]" : "",
                          ub_type_get(want)->name, array ? "[]" : "");
    ub_diag_set_hint(c->diags, d2, "declare it as `%s%s %s = ...`",
                     ub_type_get(want)->name, array ? "[]" : "", key);
    return NULL;
}

static bool ck_is_ident_char(char ch, bool first)
{
    return ch == '_' || isalpha((unsigned char)ch) ||
           (unsigned char)ch >= 0x80 || (!first && isdigit((unsigned char)ch));
}

/* An absolute prim path: "/A/B", each name an identifier (UTF-8 allowed),
 * no property part, no variant selection. */
static bool ck_is_abs_prim_path(const char *p)
{
    if (p[0] != '/' || p[1] == '\0')
        return false;
    const char *s = p + 1;
    for (;;) {
        if (!ck_is_ident_char(*s, true))
            return false;
        while (ck_is_ident_char(*s, false))
            s++;
        if (*s == '\0')
            return true;
        if (*s != '/')
            return false;
        s++;
    }
}

static size_t ck_count_equal_runs(double *v, size_t n, double *worst_time)
{
    qsort(v, n, sizeof *v, ck_cmp_double);
    size_t worst = n ? 1 : 0, run = 1;
    for (size_t i = 1; i < n; i++) {
        run = v[i] == v[i - 1] ? run + 1 : 1;
        if (run > worst) {
            worst = run;
            *worst_time = v[i];
        }
    }
    return worst;
}

/* Warn when the stage times st[0..n) of a clip set's field (active,
 * times), as authored, go back: OpenUSD sorts them (a stable sort, so
 * equal times, a jump, keep their order), which is seldom what was
 * meant. */
static void ck_clip_order(ck *c, const ub_layer *L, const ub_dict_entry *e,
                          const char *set, const double *st, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (st[i] >= st[i - 1])
            continue;
        ck_emit(c, UB_CHK_CLIP_UNSORTED, L, ub_layer_loc(L, e->loc),
                "OpenUSD sorts the entries by stage time; author them in "
                "that order, so that the list reads as it plays",
                "'%s' of clip set '%s' goes back in stage time: %g comes "
                "after %g",
                e->key, set, st[i], st[i - 1]);
        return;
    }
}

/* What the clips of one clip set have shown so far. */
typedef struct ck_clipstate {
    const char *set;
    const char *prim;   /* valid primPath, or NULL */
    ub_loc prim_loc;
    bool rate_done;
    size_t n_clips, n_without;
    const char *first_without;
} ck_clipstate;

/* Whether layer T has a prim spec at path (a clip is read as one layer:
 * its sublayers do not count). */
static bool ck_prim_in_layer(ck *c, const ub_layer *T, const char *path)
{
    const ub_prim *p = T->root;
    for (const char *s = path + 1; p && *s;) {
        size_t len = strcspn(s, "/");
        const char *name = ub_intern(c->st, s, len);
        if (!name) {
            c->oom = true;
            return true;
        }
        p = ub_prim_find_child(T, p, name);
        s += len + (s[len] == '/');
    }
    return p != NULL;
}

/* One clip layer of a clip set: its rate (reported once per set) and
 * whether it has the clip prim (counted, reported by ck_clip_done). */
static void ck_clip_seen(ck *c, const ub_layer *L, uint32_t ti, ub_loc loc,
                         ck_clipstate *cs)
{
    const ub_layer *T = c->layers[ti].layer;
    cs->n_clips++;
    if (cs->prim && !ck_prim_in_layer(c, T, cs->prim) && !cs->n_without++)
        cs->first_without = T->path;
    double pt = ub_layer_tcps(L), tt = ub_layer_tcps(T);
    const char *set = cs->set;
    if (cs->rate_done || pt == tt)
        return;
    cs->rate_done = true;
    ck_emit(c, UB_CHK_CLIP_TCPS_MISMATCH, L, loc,
            "value clips read a clip's samples at the clip times given by "
            "`times`, whatever the clip's rate: author the clip at the "
            "stage's rate, or map its times explicitly",
            "clip '%s' of clip set '%s' has timeCodesPerSecond %g, but "
            "this layer has %g; OpenUSD ignores the clip's rate",
            ck_base(T->path), set, tt, pt);
}

static void ck_clip_done(ck *c, const ub_layer *L, const ck_clipstate *cs)
{
    if (!cs->n_without)
        return;
    ub_diag *d = ck_emit(
        c, UB_CHK_CLIP_PRIM_MISSING, L, cs->prim_loc, NULL,
        "%zu of %zu clips of clip set '%s' have no prim <%s> (the first is "
        "'%s'): they give the prim no values",
        cs->n_without, cs->n_clips, cs->set, cs->prim,
        ck_base(cs->first_without));
    ub_diag_set_hint(c->diags, d,
                     "primPath names the prim inside each clip whose "
                     "samples are read; check its spelling against '%s'",
                     ck_base(cs->first_without));
}

static void ck_clip_explicit(ck *c, uint32_t li, ck_clipstate *cs,
                             const ub_dict_entry *paths,
                             const ub_dict_entry *active,
                             const ub_dict_entry *times)
{
    const ub_layer *L = c->layers[li].layer;
    const ub_value *pv = &paths->value;
    const char *set = cs->set;
    for (uint32_t i = 0; i < pv->count && !c->oom; i++) {
        const char *asset = ub_value_str(pv, i);
        int64_t ti;
        ck_open_result r = ck_open(c, asset ? asset : "", L, ub_layer_loc(L, paths->loc), &ti);
        if (r == CK_OPEN_MISSING)
            ck_emit(c, UB_CHK_CLIP_ASSET_MISSING, L, ub_layer_loc(L, paths->loc),
                    "clip paths are resolved relative to the layer that "
                    "names them; OpenUSD substitutes an empty clip",
                    asset && asset[0]
                        ? "cannot find clip '%s' (assetPaths[%u]) of clip "
                          "set '%s'"
                        : "empty clip asset path%s (assetPaths[%u]) in clip "
                          "set '%s'",
                    asset ? asset : "", i, set);
        else if (r == CK_OPEN_OK)
            ck_clip_seen(c, L, (uint32_t)ti, ub_layer_loc(L, paths->loc), cs);
    }
    ck_clip_done(c, L, cs);
    uint32_t n_clips = pv->count;
    if (active) {
        const ub_value *av = &active->value;
        double *st = malloc(((size_t)av->count + 1) * sizeof *st);
        if (!st) {
            c->oom = true;
            return;
        }
        size_t n = 0;
        bool index_done = false, finite_done = false;
        for (uint32_t i = 0; i < av->count; i++) {
            double t = ub_value_get_double(av, i, 0);
            double k = ub_value_get_double(av, i, 1);
            if (!isfinite(t) || !isfinite(k)) {
                if (!finite_done)
                    ck_emit(c, UB_CHK_TIME_NOT_FINITE, L, ub_layer_loc(L, active->loc),
                            "each entry is (stage time, clip index), both "
                            "finite",
                            "active[%u] of clip set '%s' is (%g, %g)", i,
                            set, t, k);
                finite_done = true;
                continue;
            }
            st[n++] = t;
            if (index_done || (k >= 0 && k < n_clips && k == floor(k)))
                continue;
            index_done = true;
            ub_diag *d = ck_emit(
                c, UB_CHK_CLIP_ACTIVE_INDEX, L, ub_layer_loc(L, active->loc), NULL,
                "active[%u] of clip set '%s' is (%g, %g), but clip %g does "
                "not exist: assetPaths has %u entr%s",
                i, set, t, k, k, n_clips, n_clips == 1 ? "y" : "ies");
            ub_diag_set_hint(c->diags, d,
                             "the second number is a 0-based index into "
                             "assetPaths (0..%d); OpenUSD drops the whole "
                             "clip set",
                             (int)n_clips - 1);
        }
        ck_clip_order(c, L, active, set, st, n);
        double when = 0;
        if (ck_count_equal_runs(st, n, &when) > 1)
            ck_emit(c, UB_CHK_CLIP_ACTIVE_DUPLICATE, L, ub_layer_loc(L, active->loc),
                    "give each clip its own start time; OpenUSD drops the "
                    "whole clip set",
                    "two clips of clip set '%s' are made active at stage "
                    "time %g",
                    set, when);
        free(st);
    }
    if (times) {
        const ub_value *tv = &times->value;
        double *st = malloc(((size_t)tv->count + 1) * sizeof *st);
        if (!st) {
            c->oom = true;
            return;
        }
        size_t n = 0;
        bool finite_done = false;
        for (uint32_t i = 0; i < tv->count; i++) {
            double t = ub_value_get_double(tv, i, 0);
            double k = ub_value_get_double(tv, i, 1);
            if (isfinite(t) && isfinite(k)) {
                st[n++] = t;
                continue;
            }
            if (!finite_done)
                ck_emit(c, UB_CHK_TIME_NOT_FINITE, L, ub_layer_loc(L, times->loc),
                        "each entry is (stage time, clip time), both finite",
                        "times[%u] of clip set '%s' is (%g, %g)", i, set, t,
                        k);
            finite_done = true;
        }
        ck_clip_order(c, L, times, set, st, n);
        double when = 0;
        size_t most = ck_count_equal_runs(st, n, &when);
        if (most > 2)
            ck_emit(c, UB_CHK_CLIP_TIMES_TRIPLE, L, ub_layer_loc(L, times->loc),
                    "two entries at one stage time make a jump (the first "
                    "applies before it, the second from it on); a third "
                    "cannot mean anything: OpenUSD drops the whole clip set",
                    "stage time %g appears %zu times in times of clip set "
                    "'%s'",
                    when, most, set);
        free(st);
    }
}

/* Expand templateAssetPath over start..end by stride as OpenUSD does
 * (times promoted to integers by 10000 so fractional strides add up) and
 * open every clip that exists. */
static void ck_clip_template(ck *c, uint32_t li, ck_clipstate *cs,
                             const ub_dict_entry *tmpl, double start,
                             double end, double stride)
{
    const char *set = cs->set;
    const ub_layer *L = c->layers[li].layer;
    const char *path = ub_value_str(&tmpl->value, 0);
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dir_len;
    /* tokens of the base name, split on '.' with empty ones dropped */
    size_t n_tok = 0, base_len = strlen(base);
    const char **tok = malloc((base_len + 1) * sizeof *tok);
    size_t *tok_len = malloc((base_len + 1) * sizeof *tok_len);
    char *buf = malloc(dir_len + base_len * 4 + 64 * 2 + 16);
    if (!tok || !tok_len || !buf) {
        c->oom = true;
        goto done;
    }
    size_t int_tok = SIZE_MAX, dec_tok = SIZE_MAX;
    for (const char *s = base; *s;) {
        const char *e = strchr(s, '.');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n) {
            bool hashes = strspn(s, "#") >= n;
            if (hashes && int_tok == SIZE_MAX)
                int_tok = n_tok;
            else if (hashes)
                dec_tok = n_tok;
            tok[n_tok] = s;
            tok_len[n_tok++] = n;
        }
        s += n + (e ? 1 : 0);
    }
    size_t found = 0, missing = 0, frames = 0;
    char first_missing[512] = "";
    const double promo = 10000;
    for (double t = start * promo; t <= end * promo && !c->oom;
         t += stride * promo) {
        if (++frames > UB_CLIP_TEMPLATE_MAX_FRAMES) /* checked by the caller */
            break;
        double ct = t / promo;
        if (fabs(ct) >= UB_CLIP_TEMPLATE_MAX_TIME) /* int() would overflow */
            break;
        size_t k = 0;
        memcpy(buf, path, dir_len);
        k = dir_len;
        for (size_t i = 0; i < n_tok; i++) {
            if (i)
                buf[k++] = '.';
            if (i == int_tok) {
                k += (size_t)sprintf(buf + k, "%0*d", (int)tok_len[i],
                                     (int)ct);
            } else if (i == dec_tok) {
                char num[400];
                snprintf(num, sizeof num, "%.*f", (int)tok_len[i], ct);
                const char *dot = strchr(num, '.');
                size_t dn = dot ? strlen(dot + 1) : 0;
                memcpy(buf + k, dot ? dot + 1 : "", dn);
                k += dn;
            } else {
                memcpy(buf + k, tok[i], tok_len[i]);
                k += tok_len[i];
            }
        }
        buf[k] = '\0';
        int64_t ti;
        ck_open_result r = ck_open_uncached(c, buf, L, ub_layer_loc(L, tmpl->loc), &ti);
        if (r == CK_OPEN_MISSING) {
            if (!missing++)
                snprintf(first_missing, sizeof first_missing, "%s", buf);
        } else {
            found++;
            if (r == CK_OPEN_OK)
                ck_clip_seen(c, L, (uint32_t)ti, ub_layer_loc(L, tmpl->loc), cs);
        }
    }
    ck_clip_done(c, L, cs);
    if (found == 0 && missing > 0) {
        ub_diag *d = ck_emit(
            c, UB_CHK_CLIP_ASSET_MISSING, L, ub_layer_loc(L, tmpl->loc), NULL,
            "no clip file matches templateAssetPath '%s' of clip set '%s' "
            "for times %g to %g by %g (the first would be '%s')",
            path, set, start, end, stride, first_missing);
        ub_diag_set_hint(c->diags, d,
                         "check the directory and the number of #s (they "
                         "set the zero padding); the template is resolved "
                         "relative to '%s'",
                         ck_base(L->path));
    } else if (missing > 0) {
        ck_emit(c, UB_CHK_CLIP_TEMPLATE_GAP, L, ub_layer_loc(L, tmpl->loc),
                "OpenUSD silently skips missing frames and holds the "
                "previous clip longer; write the missing clips or change "
                "the template range",
                "%zu of %zu frames of clip set '%s' have no clip file "
                "(the first is '%s')",
                missing, missing + found, set, first_missing);
    }
done:
    free(tok);
    free(tok_len);
    free(buf);
}

/* Whether a template base name has one group of #s, or two adjacent
 * ones, as OpenUSD's template rules require ("a.###.usd",
 * "a.###.##.usd"). */
static bool ck_template_ok(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *s = slash ? slash + 1 : path;
    size_t groups = 0, idx = 0, first = 0, second = 0;
    while (*s) {
        size_t n = strcspn(s, ".");
        if (n) {
            if (strspn(s, "#") >= n) {
                if (groups == 0)
                    first = idx;
                else
                    second = idx;
                groups++;
            }
            idx++;
        }
        s += n + (s[n] ? 1 : 0);
    }
    return groups == 1 || (groups == 2 && second == first + 1);
}

static void ck_clip_set(ck *c, uint32_t li, const ub_dict_entry *se)
{
    const ub_layer *L = c->layers[li].layer;
    const char *set = se->key;
    const ub_dict *d = se->value.u.dict;
    const ub_dict_entry *paths =
        ck_clip_field(c, L, d, c->k_asset_paths, UB_TY_ASSET, true);
    const ub_dict_entry *prim =
        ck_clip_field(c, L, d, c->k_prim_path, UB_TY_STRING, false);
    const ub_dict_entry *active =
        ck_clip_field(c, L, d, c->k_active, UB_TY_DOUBLE2, true);
    const ub_dict_entry *times =
        ck_clip_field(c, L, d, c->k_times, UB_TY_DOUBLE2, true);
    const ub_dict_entry *manifest =
        ck_clip_field(c, L, d, c->k_manifest, UB_TY_ASSET, false);
    const ub_dict_entry *tmpl =
        ck_clip_field(c, L, d, c->k_tmpl_path, UB_TY_STRING, false);
    const ub_dict_entry *t_start =
        ck_clip_field(c, L, d, c->k_tmpl_start, UB_TY_DOUBLE, false);
    const ub_dict_entry *t_end =
        ck_clip_field(c, L, d, c->k_tmpl_end, UB_TY_DOUBLE, false);
    const ub_dict_entry *t_stride =
        ck_clip_field(c, L, d, c->k_tmpl_stride, UB_TY_DOUBLE, false);
    const ub_dict_entry *t_offset =
        ck_clip_field(c, L, d, c->k_tmpl_offset, UB_TY_DOUBLE, false);
    (void)ck_clip_field(c, L, d, c->k_interp, UB_TY_BOOL, false);
    for (uint32_t i = 0; i < d->n; i++) {
        const char *k = d->e[i].key;
        if (k == c->k_asset_paths || k == c->k_prim_path ||
            k == c->k_active || k == c->k_times || k == c->k_manifest ||
            k == c->k_tmpl_path || k == c->k_tmpl_start ||
            k == c->k_tmpl_end || k == c->k_tmpl_stride ||
            k == c->k_tmpl_offset || k == c->k_interp)
            continue;
        ck_emit(c, UB_CHK_CLIP_FIELD_UNKNOWN, L, ub_layer_loc(L, d->e[i].loc),
                "the fields are assetPaths, primPath, active, times, "
                "manifestAssetPath, interpolateMissingClipValues and "
                "templateAssetPath/StartTime/EndTime/Stride/ActiveOffset",
                "clip set '%s' has a field '%s' that OpenUSD does not know "
                "and ignores",
                set, k);
    }

    if (!paths && !tmpl) {
        ck_emit(c, UB_CHK_CLIP_INCOMPLETE, L, ub_layer_loc(L, se->loc),
                "add assetPaths (or templateAssetPath and its times), or "
                "remove the clip set if it is not meant to block a weaker "
                "layer's clips",
                "clip set '%s' names no clips (no assetPaths or "
                "templateAssetPath here): OpenUSD ignores it unless another "
                "layer provides them",
                set);
        return;
    }
    if (paths && tmpl)
        ck_emit(c, UB_CHK_CLIP_EXPLICIT_AND_TEMPLATE, L, ub_layer_loc(L, tmpl->loc),
                "remove one of the two; explicit assetPaths win and the "
                "template is ignored",
                "clip set '%s' has both assetPaths and templateAssetPath",
                set);

    char need[160] = "";
    if (!prim)
        strcat(need, ", primPath");
    if (paths && !active)
        strcat(need, ", active");
    if (!paths) {
        if (!t_start)
            strcat(need, ", templateStartTime");
        if (!t_end)
            strcat(need, ", templateEndTime");
        if (!t_stride)
            strcat(need, ", templateStride");
    }
    if (need[0])
        ck_emit(c, UB_CHK_CLIP_INCOMPLETE, L, ub_layer_loc(L, se->loc),
                "author the missing fields; without them OpenUSD silently "
                "ignores the clip set",
                "clip set '%s' lacks %s", set, need + 2);

    ck_clipstate cs = {.set = set};
    if (prim) {
        const char *pp = ub_value_str(&prim->value, 0);
        if (pp && ck_is_abs_prim_path(pp)) {
            cs.prim = pp;
            cs.prim_loc = ub_layer_loc(L, prim->loc);
        }
        else
            ck_emit(c, UB_CHK_CLIP_PRIM_PATH, L, ub_layer_loc(L, prim->loc),
                    "primPath is the absolute path of the prim in each clip "
                    "whose samples are read, e.g. \"/Model\"",
                    "primPath \"%s\" of clip set '%s' is not an absolute "
                    "prim path; OpenUSD drops the clip set",
                    pp ? pp : "", set);
    }

    if (manifest) {
        const char *asset = ub_value_str(&manifest->value, 0);
        int64_t ti;
        if (ck_open(c, asset ? asset : "", L, ub_layer_loc(L, manifest->loc), &ti) ==
            CK_OPEN_MISSING)
            ck_emit(c, UB_CHK_CLIP_MANIFEST_MISSING, L, ub_layer_loc(L, manifest->loc),
                    "paths are resolved relative to the layer that names "
                    "them; generate one with UsdClipsAPI::GenerateClipManifest "
                    "or usdstitchclips",
                    "cannot find manifest '%s' of clip set '%s'",
                    asset ? asset : "", set);
    } else {
        ck_emit(c, UB_CHK_CLIP_NO_MANIFEST, L, ub_layer_loc(L, se->loc),
                "author manifestAssetPath (usdstitchclips writes one): "
                "without it every clip is opened to find which attributes "
                "have samples",
                "clip set '%s' has no manifest", set);
    }

    if (paths) {
        ck_clip_explicit(c, li, &cs, paths, active, times);
        return;
    }

    /* template clips */
    const char *tp = ub_value_str(&tmpl->value, 0);
    bool ok = true;
    if (!tp || !ck_template_ok(tp)) {
        ck_emit(c, UB_CHK_CLIP_TEMPLATE_PATTERN, L, ub_layer_loc(L, tmpl->loc),
                "write the frame number as one group of #s between dots "
                "(\"clip.###.usd\"), optionally followed by a second group "
                "for the fraction (\"clip.###.##.usd\")",
                "templateAssetPath \"%s\" of clip set '%s' must contain "
                "exactly one group of #s, or two adjacent ones",
                tp ? tp : "", set);
        ok = false;
    }
    double start = 0, end = 0, stride = 0, off = 0;
    if (t_stride) {
        stride = ub_value_get_double(&t_stride->value, 0, 0);
        if (!(isfinite(stride) && stride > 0)) {
            ck_emit(c, UB_CHK_CLIP_TEMPLATE_STRIDE, L, ub_layer_loc(L, t_stride->loc),
                    "the stride is the step between clip frames, e.g. 1",
                    "templateStride of clip set '%s' is %g; it must be a "
                    "positive finite number",
                    set, stride);
            ok = false;
        }
    } else {
        ok = false;
    }
    if (t_start) {
        start = ub_value_get_double(&t_start->value, 0, 0);
        if (!isfinite(start)) {
            ck_emit(c, UB_CHK_TIME_NOT_FINITE, L, ub_layer_loc(L, t_start->loc),
                    "author the first clip frame as a finite number",
                    "templateStartTime of clip set '%s' is %g", set, start);
            ok = false;
        }
    } else {
        ok = false;
    }
    if (t_end) {
        end = ub_value_get_double(&t_end->value, 0, 0);
        if (!isfinite(end)) {
            ck_emit(c, UB_CHK_TIME_NOT_FINITE, L, ub_layer_loc(L, t_end->loc),
                    "author the last clip frame as a finite number",
                    "templateEndTime of clip set '%s' is %g", set, end);
            ok = false;
        }
    } else {
        ok = false;
    }
    if (t_start && t_end && isfinite(start) && isfinite(end) && start > end) {
        ck_emit(c, UB_CHK_CLIP_TEMPLATE_RANGE, L, ub_layer_loc(L, t_start->loc),
                "swap the two times; OpenUSD drops the clip set",
                "templateStartTime %g of clip set '%s' is after "
                "templateEndTime %g",
                start, set, end);
        ok = false;
    }
    if (t_offset) {
        off = ub_value_get_double(&t_offset->value, 0, 0);
        if (!isfinite(off)) {
            ck_emit(c, UB_CHK_TIME_NOT_FINITE, L, ub_layer_loc(L, t_offset->loc),
                    "the active offset must be a finite number of frames",
                    "templateActiveOffset of clip set '%s' is %g", set, off);
            ok = false;
        } else if (t_stride && isfinite(stride) && stride > 0 &&
                   fabs(off) > stride) {
            ck_emit(c, UB_CHK_CLIP_TEMPLATE_OFFSET, L, ub_layer_loc(L, t_offset->loc),
                    "a clip may become active at most one stride early or "
                    "late; OpenUSD drops the clip set",
                    "templateActiveOffset %g of clip set '%s' is larger than "
                    "templateStride %g",
                    off, set, stride);
            ok = false;
        }
    }
    if (ok && (end - start) / stride >= UB_CLIP_TEMPLATE_MAX_FRAMES) {
        /* OpenUSD would try to derive that many clips (and run out of
         * memory or time); so would we */
        ck_emit(c, UB_CHK_CLIP_TEMPLATE_STRIDE, L, ub_layer_loc(L, t_stride->loc),
                "the stride is the step between clip frames, e.g. 1",
                "templateStride %g of clip set '%s' makes %.3g frames "
                "from %g to %g (at most %d are sensible)",
                stride, set, (end - start) / stride + 1, start, end,
                UB_CLIP_TEMPLATE_MAX_FRAMES);
        ok = false;
    }
    if (ok)
        ck_clip_template(c, li, &cs, tmpl, start, end, stride);
}

static void ck_clips(ck *c, uint32_t li, const ub_field *f)
{
    const ub_layer *L = c->layers[li].layer;
    if (f->value.kind != UB_V_DICT || !f->value.u.dict)
        return;
    const ub_dict *d = f->value.u.dict;
    for (uint32_t i = 0; i < d->n && !c->oom; i++) {
        const ub_dict_entry *e = &d->e[i];
        if (e->value.kind != UB_V_DICT || !e->value.u.dict) {
            ck_emit(c, UB_CHK_CLIP_FIELD_TYPE, L, ub_layer_loc(L, e->loc),
                    "write `dictionary NAME = { ... }` inside clips",
                    "clip set '%s' is not a dictionary; OpenUSD ignores it",
                    e->key);
            continue;
        }
        ck_clip_set(c, li, e);
    }
}

/* --- sublayer cycles ------------------------------------------------------ */

/* Depth-first search over sublayer edges; an edge to a layer still on the
 * search stack closes a cycle, reported where that edge is written. */
static void ck_sublayer_cycles(ck *c)
{
    typedef struct { uint32_t layer, next; } frame;
    frame *stk = malloc((c->n_layers + 1) * sizeof *stk);
    if (!stk) {
        c->oom = true;
        return;
    }
    for (size_t r = 0; r < c->n_layers; r++) {
        if (c->layers[r].color)
            continue;
        size_t sp = 0;
        stk[sp++] = (frame){(uint32_t)r, 0};
        c->layers[r].color = 1;
        while (sp) {
            frame *f = &stk[sp - 1];
            const ck_layer *cl = &c->layers[f->layer];
            if (f->next >= cl->n_edges) {
                c->layers[f->layer].color = 2;
                sp--;
                continue;
            }
            const ck_edge *e = &c->edges[cl->first_edge + f->next++];
            uint8_t col = c->layers[e->to].color;
            if (col == 0) {
                c->layers[e->to].color = 1;
                stk[sp++] = (frame){e->to, 0};
                continue;
            }
            if (col != 1)
                continue;
            /* the cycle: from e->to down the stack to here, and back */
            ub_buf msg;
            ub_buf_init(&msg);
            size_t k = sp;
            while (k > 0 && stk[k - 1].layer != e->to)
                k--;
            for (size_t j = k ? k - 1 : 0; j < sp; j++)
                ub_buf_printf(&msg, "%s -> ",
                              ck_base(c->layers[stk[j].layer].layer->path));
            ub_buf_printf(&msg, "%s", ck_base(c->layers[e->to].layer->path));
            ub_buf_putc(&msg, '\0');
            ck_emit(c, UB_CHK_SUBLAYER_CYCLE, c->layers[e->from].layer,
                    ub_layer_loc(c->layers[e->from].layer, e->sub->loc),
                    "remove this subLayers entry (or the one that leads "
                    "back here); OpenUSD skips the sublayer that closes "
                    "the cycle",
                    "sublayer cycle: %s",
                    msg.failed ? "(out of memory)" : msg.data);
            ub_buf_free(&msg);
        }
    }
    free(stk);
}

/* --- layer stacks and prim lookup ----------------------------------------- */

/* Layer indices of the stack rooted at root (root first, then its
 * sublayers depth first, each once).  Returns the count; *out is malloc'd
 * (free it). */
static size_t ck_stack_layers(ck *c, uint32_t root, uint32_t **out)
{
    uint32_t gen = ++c->stamp;
    size_t n = 0, cap = 8;
    uint32_t *v = malloc(cap * sizeof *v);
    uint32_t *todo = malloc((c->n_edges + 1) * sizeof *todo);
    size_t nt = 0;
    if (!v || !todo) {
        free(v);
        free(todo);
        c->oom = true;
        *out = NULL;
        return 0;
    }
    todo[nt++] = root;
    c->layers[root].stamp = gen;
    while (nt) {
        uint32_t li = todo[--nt];
        if (n == cap) {
            uint32_t *nv = realloc(v, cap * 2 * sizeof *v);
            if (!nv) {
                c->oom = true;
                break;
            }
            v = nv;
            cap *= 2;
        }
        v[n++] = li;
        const ck_layer *cl = &c->layers[li];
        /* push in reverse so the strongest sublayer is visited first */
        for (uint32_t i = cl->n_edges; i-- > 0;) {
            uint32_t to = c->edges[cl->first_edge + i].to;
            if (c->layers[to].stamp == gen)
                continue;
            c->layers[to].stamp = gen;
            todo[nt++] = to;
        }
    }
    free(todo);
    *out = v;
    return n;
}

static bool ck_has_arcs(const ck *c, const ub_prim *p)
{
    if (ub_prim_n_variant_sets(p))
        return true;
    for (uint32_t i = 0; i < p->meta.n; i++) {
        const char *k = p->meta.v[i].key;
        if (k == c->k_references || k == c->k_payload ||
            k == c->k_inherits || k == c->k_specializes)
            return true;
    }
    return false;
}

/* Whether some layer of the stack at root has a prim spec at path.  When
 * not, *unsure tells whether an ancestor has composition arcs (or
 * variants) that might supply the prim: then only composition can tell. */
static bool ck_prim_in_stack_uncached(ck *c, uint32_t root,
                                      const char *path, bool *unsure)
{
    *unsure = false;
    if (path[0] != '/' || strchr(path, '{') || strchr(path, '.'))
        return *unsure = true, false;
    uint32_t *ls;
    size_t n = ck_stack_layers(c, root, &ls);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) {
        ub_layer *L = c->layers[ls[i]].layer;
        const ub_prim *p = L->root;
        const char *s = path + 1;
        while (p && *s) {
            size_t len = strcspn(s, "/");
            const char *name = ub_intern(c->st, s, len);
            if (!name) {
                c->oom = true;
                break;
            }
            if (p != L->root && ck_has_arcs(c, p))
                *unsure = true;
            p = ub_prim_find_child(L, p, name);
            s += len + (s[len] == '/');
        }
        if (p && !*s)
            found = true;
    }
    free(ls);
    return found;
}

/* ck_prim_in_stack_uncached, once per (stack, path); path is interned. */
static bool ck_prim_in_stack(ck *c, uint32_t root, const char *path,
                             bool *unsure)
{
    const ub_layer *key = c->layers[root].layer;
    int64_t *m = ck_memo_get(&c->found, key, path);
    if (m) {
        *unsure = *m & 2;
        return *m & 1;
    }
    bool found = ck_prim_in_stack_uncached(c, root, path, unsure);
    ck_memo_put(c, &c->found, key, path, (found ? 1 : 0) | (*unsure ? 2 : 0));
    return found;
}

/* The prim a reference with no prim path targets: "/" + defaultPrim (or
 * the authored path when defaultPrim is one); NULL when none. */
static const char *ck_default_prim_path(ck *c, const ub_layer *L,
                                        const ub_field **fout)
{
    const ub_field *f = ub_fields_find(&L->meta, c->k_default_prim);
    if (fout)
        *fout = f;
    const char *dp = f ? ck_string(&f->value) : NULL;
    if (!dp || !dp[0])
        return NULL;
    if (dp[0] == '/')
        return dp;
    size_t n = strlen(dp);
    char *tmp = malloc(n + 2);
    if (!tmp) {
        c->oom = true;
        return NULL;
    }
    tmp[0] = '/';
    memcpy(tmp + 1, dp, n + 1);
    const char *r = ub_intern(c->st, tmp, n + 1);
    free(tmp);
    return r;
}

/* A dangling defaultPrim is an error where it is used: in a root layer
 * (what a consumer will reference) and in a layer referenced without a
 * prim path.  Elsewhere (a sublayer, a layer referenced by prim path) it
 * has no effect on this shot: a warning. */
static void ck_default_prims(ck *c, const uint32_t *roots, size_t n_roots)
{
    bool *used = calloc(c->n_layers + 1, sizeof *used);
    if (!used) {
        c->oom = true;
        return;
    }
    for (size_t i = 0; i < n_roots; i++)
        used[roots[i]] = true;
    for (size_t i = 0; i < c->n_arcs; i++)
        if (c->arcs[i].target >= 0 && c->arcs[i].ref &&
            !(c->arcs[i].ref->prim_path && c->arcs[i].ref->prim_path[0]))
            used[c->arcs[i].target] = true;
    for (size_t i = 0; i < c->n_layers && !c->oom; i++) {
        const ub_layer *L = c->layers[i].layer;
        const ub_field *f;
        const char *path = ck_default_prim_path(c, L, &f);
        bool unsure;
        if (!path || ck_prim_in_stack(c, (uint32_t)i, path, &unsure) ||
            unsure)
            continue;
        ck_emit_sev(c, UB_CHK_DEFAULT_PRIM_MISSING,
                    used[i] ? UB_ERROR : UB_WARNING, L, ub_layer_loc(L, f->loc),
                    "name a root prim of this layer (references without a "
                    "prim path use it)",
                    "defaultPrim names <%s>, but neither this layer nor its "
                    "sublayers has that prim",
                    path);
    }
    free(used);
}

static void ck_arc_targets(ck *c)
{
    for (size_t i = 0; i < c->n_arcs && !c->oom; i++) {
        const ck_arc *a = &c->arcs[i];
        if (a->target < 0 || !a->ref)
            continue;
        const ub_layer *L = c->layers[a->from].layer;
        const ub_layer *T = c->layers[a->target].layer;
        const char *what = ck_arc_words[a->kind];
        const char *pp = a->ref->prim_path ? a->ref->prim_path : "";
        if (!pp[0]) {
            if (ck_default_prim_path(c, T, NULL))
                continue; /* default-prim-missing covers a dangling one */
            ub_diag *d = ck_emit(
                c, UB_CHK_REFERENCE_NO_DEFAULT_PRIM, L, a->loc, NULL,
                "this %s names no prim, and '%s' has no defaultPrim: "
                "OpenUSD composes nothing",
                what, ck_base(T->path));
            ub_diag_set_hint(c->diags, d,
                             "name the prim (@%s@</Prim>), or author "
                             "defaultPrim in '%s'",
                             a->ref->asset, ck_base(T->path));
            continue;
        }
        bool unsure;
        if (ck_prim_in_stack(c, (uint32_t)a->target, pp, &unsure) || unsure)
            continue;
        ck_emit(c, UB_CHK_REFERENCE_PRIM_MISSING, L, a->loc,
                "check the prim path's spelling against the target layer",
                "%s to <%s>, but '%s' (with its sublayers) has no such prim",
                what, pp, ck_base(T->path));
    }
}

/* --- arc cycles ----------------------------------------------------------- */

static int ck_cmp_entry(const void *a, const void *b)
{
    const ck_entry *x = a, *y = b;
    int r = strcmp(x->path, y->path);
    return r ? r : (x->arc > y->arc) - (x->arc < y->arc);
}

/* A path's bytes, not NUL-terminated where a prefix is looked up. */
typedef struct ck_bytes {
    const char *s;
    size_t n;
} ck_bytes;

/* FNV-1a of s[0..n), its high half folded into the low one that places
 * a slot. */
static uint32_t ck_path_hash(const char *s, size_t n)
{
    uint64_t h = ub_hash_bytes(s, n);
    return (uint32_t)(h ^ (h >> 32));
}

/* Whether entry id of ctx (a stack's entries) has the path key. */
static bool ck_group_eq(const void *ctx, uint32_t id, const void *key)
{
    const char *q = ((const ck_entry *)ctx)[id].path;
    const ck_bytes *k = key;
    return strncmp(q, k->s, k->n) == 0 && q[k->n] == '\0';
}

/* The arcs of every layer in the stack at root, sorted by prim path. */
static const ck_stack *ck_stack_arcs(ck *c, uint32_t root)
{
    if (c->layers[root].stack >= 0)
        return &c->stacks[c->layers[root].stack];
    uint32_t *ls;
    size_t nl = ck_stack_layers(c, root, &ls);
    size_t total = 0;
    for (size_t i = 0; i < nl; i++)
        total += c->layers[ls[i]].n_arcs;
    ck_entry *v = malloc((total + 1) * sizeof *v);
    if (!v || !ck_reserve(c, (void **)&c->stacks, &c->cap_stacks,
                          c->n_stacks, sizeof *c->stacks)) {
        free(v);
        free(ls);
        c->oom = true;
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < nl; i++) {
        const ck_layer *cl = &c->layers[ls[i]];
        for (uint32_t k = 0; k < cl->n_arcs; k++) {
            uint32_t ai = cl->first_arc + k;
            v[n++] = (ck_entry){c->arcs[ai].src_path, ai};
        }
    }
    free(ls);
    qsort(v, n, sizeof *v, ck_cmp_entry);
    /* index the first entry of each path by the path's bytes, so the
     * cycle search looks up a prefix of a path without interning it */
    ub_idtab group = {0};
    for (size_t i = 0; i < n; i++) {
        if (i && v[i].path == v[i - 1].path)
            continue;
        ck_bytes k = {v[i].path, strlen(v[i].path)};
        uint32_t h = ck_path_hash(k.s, k.n);
        ub_idslot *s = ub_idtab_find(&group, h, ck_group_eq, v, &k);
        if (!s) {
            ub_idtab_free(&group);
            free(v);
            c->oom = true;
            return NULL;
        }
        ub_idtab_put(&group, s, h, (uint32_t)i);
    }
    c->stacks[c->n_stacks] = (ck_stack){v, n, group};
    c->layers[root].stack = (int32_t)c->n_stacks++;
    return &c->stacks[c->layers[root].stack];
}

/* Record site (stack, path) as seen; returns whether it was already. */
static bool ck_seen(ck *c, uint32_t stack, const char *path)
{
    const void *key = (const void *)(uintptr_t)(stack + 1);
    if (ck_memo_get(&c->seen, path, key))
        return true;
    ck_memo_put(c, &c->seen, path, key, 0);
    return c->oom; /* out of memory: treat as seen, so the search ends */
}

/* Whether one path is a prefix (in namespace) of the other. */
static bool ck_related(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > lb) {
        const char *t = a;
        a = b;
        b = t;
        size_t tl = la;
        la = lb;
        lb = tl;
    }
    return strncmp(a, b, la) == 0 &&
           (b[la] == '\0' || b[la] == '/' || (la == 1 && a[0] == '/'));
}

typedef struct ck_link {
    uint32_t stack;
    const char *path;
    uint32_t arc; /* the arc that led here; UINT32_MAX at the start */
} ck_link;

#define CK_MAX_CHAIN 64
/* Arcs below a site are followed only this deep into a chain: each step
 * copies the chain, and the cycles they close are short in practice. */
#define CK_MAX_CHILD_DEPTH 8

static void ck_report_cycle(ck *c, const ck_link *chain, size_t n,
                            uint32_t ai, uint32_t stack, const char *path)
{
    ck_arc *a = &c->arcs[ai];
    if (a->reported)
        return;
    a->reported = true;
    ub_buf msg;
    ub_buf_init(&msg);
    for (size_t i = 0; i < n; i++)
        ub_buf_printf(&msg, "%s<%s> -> ",
                      ck_base(c->layers[chain[i].stack].layer->path),
                      chain[i].path);
    ub_buf_printf(&msg, "%s<%s>", ck_base(c->layers[stack].layer->path),
                  path);
    ub_buf_putc(&msg, '\0');
    ck_emit(c, UB_CHK_ARC_CYCLE, c->layers[a->from].layer, a->loc,
            "a prim's arcs must not lead (directly or through other "
            "layers) back to it or to a prim above or below it; OpenUSD "
            "drops the arc that closes the cycle",
            "%s cycle: %s", ck_arc_words[a->kind],
            msg.failed ? "(out of memory)" : msg.data);
    ub_buf_free(&msg);
}

/* The first entry of st whose path is p[0..n), or SIZE_MAX. */
static size_t ck_stack_find(const ck_stack *st, const char *p, size_t n)
{
    uint32_t id = ub_idtab_get(&st->group, ck_path_hash(p, n), ck_group_eq,
                               st->v, &(ck_bytes){p, n});
    return id == UINT32_MAX ? SIZE_MAX : id;
}

static void ck_cycle_dfs(ck *c, ck_link *chain, size_t depth);

/* Follow arc ai from the top of chain to site (T, y): a cycle when y is
 * related to a site of the chain in the same stack, else search on. */
static void ck_cycle_follow(ck *c, ck_link *chain, size_t depth, uint32_t ai,
                            uint32_t T, const char *y)
{
    for (size_t j = 0; j < depth; j++)
        if (chain[j].stack == T && ck_related(chain[j].path, y)) {
            ck_report_cycle(c, chain, depth, ai, T, y);
            return;
        }
    if (c->cycle_budget == 0 || depth >= CK_MAX_CHAIN || ck_seen(c, T, y))
        return;
    c->cycle_budget--;
    chain[depth] = (ck_link){T, y, ai};
    ck_cycle_dfs(c, chain, depth + 1);
}

/* The stack and target path an arc leads to from a site in stack S. */
static bool ck_arc_target(ck *c, const ck_arc *a, uint32_t S, uint32_t *T,
                          const char **q)
{
    if (a->target >= 0)
        *T = (uint32_t)a->target;
    else if (a->target == CK_TARGET_INTERNAL)
        *T = S;
    else
        return false;
    *q = a->tpath ? a->tpath
                  : ck_default_prim_path(c, c->layers[*T].layer, NULL);
    return *q && (*q)[0] == '/' && !strchr(*q, '{');
}

static void ck_cycle_dfs(ck *c, ck_link *chain, size_t depth)
{
    const ck_link site = chain[depth - 1];
    const ck_stack *sp = ck_stack_arcs(c, site.stack);
    if (!sp)
        return;
    /* a copy: the recursion below may grow (move) c->stacks, but never
     * changes a stack once built */
    const ck_stack stack_copy = *sp;
    const ck_stack *arcs = &stack_copy;
    size_t plen = strlen(site.path);
    /* arcs on the site itself and on its ancestors (ancestral arcs) */
    for (size_t cut = plen; cut > 1 && !c->oom;) {
        size_t lo = ck_stack_find(arcs, site.path, cut);
        for (size_t k = lo; k < arcs->n && arcs->v[k].path == arcs->v[lo].path;
             k++) {
            uint32_t ai = arcs->v[k].arc, T;
            const char *q;
            if (!ck_arc_target(c, &c->arcs[ai], site.stack, &T, &q))
                continue;
            /* the site's path below p, mapped under the arc's target
             * (q itself, interned, for an arc on the site) */
            size_t ql = strlen(q), rl = plen - cut;
            const char *yi = q;
            if (rl) {
                char *y = malloc(ql + rl + 1);
                if (!y) {
                    c->oom = true;
                    return;
                }
                memcpy(y, q, ql);
                memcpy(y + ql, site.path + cut, rl + 1);
                yi = ub_intern(c->st, y, ql + rl);
                free(y);
                if (!yi) {
                    c->oom = true;
                    return;
                }
            }
            ck_cycle_follow(c, chain, depth, ai, T, yi);
        }
        /* up to the parent path */
        while (cut > 1 && site.path[cut - 1] != '/')
            cut--;
        if (cut > 1)
            cut--;
    }
    /* arcs below the site: they are the arcs of namespace children of the
     * prim being composed, for which every site of the chain stands as
     * many levels deeper (OpenUSD finds co-recursive class cycles so) */
    if (depth > CK_MAX_CHILD_DEPTH)
        return;
    size_t lo = 0, hi = arcs->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = strncmp(arcs->v[mid].path, site.path, plen);
        if (r < 0 || (r == 0 && (unsigned char)arcs->v[mid].path[plen] < '/'))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < arcs->n && !c->oom; k++) {
        const char *p = arcs->v[k].path;
        if (strncmp(p, site.path, plen) != 0 || p[plen] != '/')
            break;
        uint32_t ai = arcs->v[k].arc, T;
        const char *q;
        if (!ck_arc_target(c, &c->arcs[ai], site.stack, &T, &q))
            continue;
        const char *rel = p + plen;
        size_t rl = strlen(rel);
        ck_link *ext = malloc(CK_MAX_CHAIN * sizeof *ext);
        if (!ext) {
            c->oom = true;
            return;
        }
        size_t made = 0;
        for (; made + 1 < depth; made++) {
            size_t n = strlen(chain[made].path);
            char *e = malloc(n + rl + 1);
            if (!e) {
                c->oom = true;
                break;
            }
            memcpy(e, chain[made].path, n);
            memcpy(e + n, rel, rl + 1);
            ext[made] = (ck_link){chain[made].stack, e, chain[made].arc};
        }
        if (!c->oom) {
            ext[depth - 1] = (ck_link){site.stack, p, site.arc};
            ck_cycle_follow(c, ext, depth, ai, T, q);
        }
        for (size_t j = 0; j < made; j++)
            free((char *)ext[j].path);
        free(ext);
    }
}

static void ck_arc_cycles(ck *c, const uint32_t *roots, size_t n_roots)
{
    /* every layer that roots a stack: the roots and every arc target */
    size_t n = 0;
    uint32_t *starts = malloc((n_roots + c->n_arcs + 1) * sizeof *starts);
    ck_link *chain = malloc(CK_MAX_CHAIN * sizeof *chain);
    if (!starts || !chain) {
        free(starts);
        free(chain);
        c->oom = true;
        return;
    }
    /* each once: a thousand prims referencing one asset make one start */
    uint32_t gen = ++c->stamp;
    for (size_t i = 0; i < n_roots; i++)
        if (c->layers[roots[i]].stamp != gen) {
            c->layers[roots[i]].stamp = gen;
            starts[n++] = roots[i];
        }
    for (size_t i = 0; i < c->n_arcs; i++) {
        int32_t t = c->arcs[i].target;
        if (t >= 0 && c->layers[t].stamp != gen) {
            c->layers[t].stamp = gen;
            starts[n++] = (uint32_t)t;
        }
    }
    c->cycle_budget = 4000000;
    for (size_t i = 0; i < n && !c->oom; i++) {
        const ck_stack *arcs = ck_stack_arcs(c, starts[i]);
        for (size_t k = 0; arcs && k < arcs->n && !c->oom; k++) {
            const char *p = arcs->v[k].path;
            if (ck_seen(c, starts[i], p))
                continue;
            chain[0] = (ck_link){starts[i], p, UINT32_MAX};
            ck_cycle_dfs(c, chain, 1);
            arcs = ck_stack_arcs(c, starts[i]); /* stacks may have grown */
        }
    }
    free(starts);
    free(chain);
}

/* --- the pass ------------------------------------------------------------- */

static bool ck_keys(ck *c)
{
#define K(field, text) (c->field = ub_intern_cstr(c->st, text)) != NULL
    return K(k_tcps, "timeCodesPerSecond") && K(k_fps, "framesPerSecond") &&
           K(k_start, "startTimeCode") && K(k_end, "endTimeCode") &&
           K(k_default_prim, "defaultPrim") &&
           K(k_references, "references") && K(k_payload, "payload") &&
           K(k_clips, "clips") && K(k_asset_paths, "assetPaths") &&
           K(k_prim_path, "primPath") && K(k_active, "active") &&
           K(k_times, "times") && K(k_manifest, "manifestAssetPath") &&
           K(k_tmpl_path, "templateAssetPath") &&
           K(k_tmpl_start, "templateStartTime") &&
           K(k_tmpl_end, "templateEndTime") &&
           K(k_tmpl_stride, "templateStride") &&
           K(k_tmpl_offset, "templateActiveOffset") &&
           K(k_interp, "interpolateMissingClipValues") &&
           K(k_inherits, "inherits") && K(k_specializes, "specializes");
#undef K
}

int ub_check_run(ub_loader *ld, ub_strtab *t, const char *const *roots,
                 size_t n_roots, const ub_check_options *opt,
                 ub_diags *diags)
{
    ck c = {.ld = ld, .st = t, .diags = diags};
    if (opt)
        c.opt = *opt;
    uint32_t *root_idx = malloc((n_roots + 1) * sizeof *root_idx);
    size_t nr = 0;
    if (!root_idx || !ck_keys(&c))
        c.oom = true;
    for (size_t i = 0; i < n_roots && !c.oom; i++) {
        ub_layer *L = ub_loader_open(ld, roots[i], NULL, (ub_loc){NULL, 0, 0});
        int64_t idx = L ? ck_add_layer(&c, L) : -1;
        if (idx >= 0)
            root_idx[nr++] = (uint32_t)idx;
    }
    /* walking a layer may register more; they are walked in turn */
    for (size_t i = 0; i < c.n_layers && !c.oom; i++)
        ck_walk_layer(&c, (uint32_t)i);
    if (!c.oom)
        ck_sublayer_cycles(&c);
    if (!c.oom)
        ck_default_prims(&c, root_idx, nr);
    if (!c.oom)
        ck_arc_targets(&c);
    if (!c.oom)
        ck_arc_cycles(&c, root_idx, nr);

    int rc = 0;
    if (c.oom) {
        ub_diag_add_oom(diags, (ub_loc){NULL, 0, 0},
                        "out of memory while checking");
        rc = -1;
    }
    for (size_t i = 0; i < c.n_layers; i++)
        free(c.layers[i].itimes);
    for (size_t i = 0; i < c.n_stacks; i++)
        free(c.stacks[i].v), ub_idtab_free(&c.stacks[i].group);
    free(c.stacks);
    free(c.layers);
    free(c.layer_ix.v);
    free(c.edges);
    free(c.arcs);
    free(c.seen.v);
    free(c.opened.v);
    free(c.found.v);
    free(c.pbuf);
    free(root_idx);
    return rc;
}
