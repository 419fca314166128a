/* Unit tests of the crate (usdc) reader: the two codecs (OpenUSD's chunked
 * LZ4 framing and its integer coding), each structural section in the
 * layouts of every version, each value type and encoding (inlined, stored,
 * compressed arrays, list ops, dictionaries, samples), and damage, which
 * must be reported naming the section or spec.  Crate bytes are built here
 * by a small writer of the format (every int list written with the widest
 * code, which is valid and simple); tests/crate.test reads files that
 * OpenUSD itself wrote. */
#include <CUnit/Basic.h>
#include <lz4.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_crate.h"
#include "ub_crate_codec.h"
#include "ub_crate_format.h"
#include "ub_test.h"

static ub_strtab *T;

/* --- a byte buffer ------------------------------------------------------- */

typedef struct bb {
    unsigned char *d;
    size_t n, cap;
} bb;

static void put(bb *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->d = realloc(b->d, b->cap);
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}
static void u8(bb *b, uint8_t x) { put(b, &x, 1); }
static void u32(bb *b, uint32_t x) { put(b, &x, 4); }
static void u64(bb *b, uint64_t x) { put(b, &x, 8); }
static void f64(bb *b, double x) { put(b, &x, 8); }
static void f32(bb *b, float x) { put(b, &x, 4); }

/* OpenUSD's LZ4 framing, one chunk. */
static void lz4(bb *b, const void *src, size_t n)
{
    char *o = malloc(LZ4_compressBound((int)n) + 1);
    int c = LZ4_compress_default(src, o, (int)n, LZ4_compressBound((int)n));
    u8(b, 0);
    put(b, o, (size_t)c);
    free(o);
}

/* The integer coding with every value written full width (code 3). */
static void encode_ints(bb *e, const void *v, size_t n, unsigned w)
{
    e->n = 0;
    if (!n)
        return;
    uint64_t zero = 0;
    put(e, &zero, w);
    for (size_t i = 0; i < (n * 2 + 7) / 8; i++) {
        unsigned left = (unsigned)(n - i * 4 < 4 ? n - i * 4 : 4);
        u8(e, (uint8_t)(0xff >> (8 - 2 * left)));
    }
    int64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = 0;
        if (w == 4) {
            int32_t y;
            memcpy(&y, (const char *)v + 4 * i, 4);
            x = y;
        } else {
            memcpy(&x, (const char *)v + 8 * i, 8);
        }
        int64_t d = x - prev;
        prev = x;
        if (w == 4) {
            int32_t d32 = (int32_t)d;
            put(e, &d32, 4);
        } else {
            put(e, &d, 8);
        }
    }
}

/* Compressed ints as a section or array stores them: size, then bytes. */
static void cints(bb *b, const void *v, size_t n, unsigned w)
{
    bb e = {0}, c = {0};
    encode_ints(&e, v, n, w);
    lz4(&c, e.d, e.n);
    u64(b, c.n);
    put(b, c.d, c.n);
    free(e.d);
    free(c.d);
}

/* --- a crate writer ------------------------------------------------------ */

#define V(a, b, c) UB_CRATE_VERSION(a, b, c)
#define NO ((uint32_t)~0u)

static uint64_t rep(unsigned type, uint64_t payload, bool inl, bool arr)
{
    return ((uint64_t)type << 48) | payload |
           (inl ? UB_CRATE_REP_IS_INLINED : 0) |
           (arr ? UB_CRATE_REP_IS_ARRAY : 0);
}

typedef struct cfield {
    const char *name;
    uint64_t rep;
} cfield;

/* One layer: /P (def, type "Xform") with attribute /P.a of type `tname`
 * whose fields are `attr` (typeName is added); `prim` are extra fields of
 * /P.  Values the reps point at are in `data`, which starts at file offset
 * 88 (DATA below).  Extra tokens (for token-valued reps) come after the
 * fixed ones at index TOK0; strings are tokens (string i is token i). */
#define DATA 88
#define TOK0 10
typedef struct layer_spec {
    uint32_t ver;
    const char *tname;
    const cfield *attr;
    size_t nattr;
    const cfield *prim;
    size_t nprim;
    const cfield *root; /* extra fields of the layer (the root spec) */
    size_t nroot;
    const char *const *toks; /* extra tokens */
    size_t ntoks;
    bb data;
    /* damage, where set: the token naming field 0, FIELDSETS' entry 1,
     * SPECS' paths, field sets and types (3 each) */
    uint32_t field0_tok, fset1;
    const uint32_t (*specs)[3];
    /* the names of /P and of its property, when set: a fixed or extra
     * token */
    const char *prim_elem, *prop_elem;
    /* /P's properties field, when set (else a token vector of "a") */
    uint64_t props_rep;
} layer_spec;

static const char *fixed_toks[TOK0] = {
    "", "P", "a", "primChildren", "specifier", "properties", "typeName",
    "Xform", "default", "timeSamples"};

static uint32_t tok_index(const layer_spec *s, const char *name)
{
    for (uint32_t i = 0; i < TOK0; i++)
        if (strcmp(fixed_toks[i], name) == 0)
            return i;
    for (uint32_t i = 0; i < s->ntoks; i++)
        if (strcmp(s->toks[i], name) == 0)
            return TOK0 + i;
    /* the attribute's type name comes last */
    return strcmp(s->tname, name) == 0 ? TOK0 + (uint32_t)s->ntoks : NO;
}

static void section(bb *toc, const char *name, uint64_t start, uint64_t end)
{
    char n[16] = {0};
    strncpy(n, name, sizeof n - 1);
    put(toc, n, 16);
    u64(toc, start);
    u64(toc, end - start);
}

/* The file; *len its size.  Free with free(). */
static unsigned char *build(layer_spec *s, size_t *len)
{
    uint32_t ver = s->ver;
    bool comp = ver >= UB_CRATE_V_COMPRESSED_SECTIONS;
    bb f = {0}, toc = {0};
    unsigned char boot[DATA] = "PXR-USDC";
    boot[8] = (uint8_t)(ver >> 16);
    boot[9] = (uint8_t)(ver >> 8);
    boot[10] = (uint8_t)ver;
    put(&f, boot, DATA);
    put(&f, s->data.d, s->data.n);
    /* name lists live after the test's data */
    uint64_t kids = f.n;
    u64(&f, 1);
    u32(&f, 1); /* [P] */
    uint64_t props = f.n;
    u64(&f, 1);
    u32(&f, 2); /* [a] */

    /* TOKENS */
    uint32_t ntok = TOK0 + (uint32_t)s->ntoks + 1;
    bb text = {0};
    for (uint32_t i = 0; i < ntok; i++) {
        const char *t = i < TOK0              ? fixed_toks[i]
                        : i + 1 < ntok ? s->toks[i - TOK0]
                                       : s->tname;
        put(&text, t, strlen(t) + 1);
    }
    uint64_t start = f.n;
    u64(&f, ntok);
    u64(&f, text.n);
    if (comp) {
        bb c = {0};
        lz4(&c, text.d, text.n);
        u64(&f, c.n);
        put(&f, c.d, c.n);
        free(c.d);
    } else {
        put(&f, text.d, text.n);
    }
    free(text.d);
    section(&toc, "TOKENS", start, f.n);

    /* STRINGS: string i is token i */
    start = f.n;
    u64(&f, ntok);
    for (uint32_t i = 0; i < ntok; i++)
        u32(&f, i);
    section(&toc, "STRINGS", start, f.n);

    /* FIELDS: the fixed ones, then the prim's and the attribute's */
    cfield fields[64];
    size_t nf = 0;
    fields[nf++] = (cfield){"primChildren",
                            rep(UB_CRATE_TOKEN_VECTOR, kids, false, false)};
    fields[nf++] = (cfield){"specifier", rep(UB_CRATE_SPECIFIER, 0, true,
                                             false)};
    fields[nf++] = (cfield){"typeName", rep(UB_CRATE_TOKEN, 7, true, false)};
    fields[nf++] = (cfield){"properties",
                            s->props_rep ? s->props_rep
                                         : rep(UB_CRATE_TOKEN_VECTOR, props,
                                               false, false)};
    size_t prim_first = 1;
    for (size_t i = 0; i < s->nprim; i++)
        fields[nf++] = s->prim[i];
    size_t attr_first = nf;
    fields[nf++] = (cfield){"typeName",
                            rep(UB_CRATE_TOKEN, tok_index(s, s->tname), true,
                                false)};
    for (size_t i = 0; i < s->nattr; i++)
        fields[nf++] = s->attr[i];
    size_t root_first = nf;
    for (size_t i = 0; i < s->nroot; i++)
        fields[nf++] = s->root[i];
    start = f.n;
    uint32_t ftok[64];
    uint64_t frep[64];
    for (size_t i = 0; i < nf; i++) {
        ftok[i] = tok_index(s, fields[i].name);
        frep[i] = fields[i].rep;
    }
    if (s->field0_tok)
        ftok[0] = s->field0_tok;
    if (comp) {
        u64(&f, nf);
        cints(&f, ftok, nf, 4);
        bb c = {0};
        lz4(&c, frep, nf * 8);
        u64(&f, c.n);
        put(&f, c.d, c.n);
        free(c.d);
    } else {
        u64(&f, nf);
        for (size_t i = 0; i < nf; i++) {
            u32(&f, 0);
            u32(&f, ftok[i]);
            u64(&f, frep[i]);
        }
    }
    section(&toc, "FIELDS", start, f.n);

    /* FIELDSETS: root {0, root_first..nf}, prim {1..attr_first), attr
     * {attr_first..root_first) */
    uint32_t fs[80];
    size_t nfs = 0;
    fs[nfs++] = 0;
    for (size_t i = root_first; i < nf; i++)
        fs[nfs++] = (uint32_t)i;
    fs[nfs++] = NO;
    uint32_t prim_set = (uint32_t)nfs;
    for (size_t i = prim_first; i < attr_first; i++)
        fs[nfs++] = (uint32_t)i;
    fs[nfs++] = NO;
    uint32_t attr_set = (uint32_t)nfs;
    for (size_t i = attr_first; i < root_first; i++)
        fs[nfs++] = (uint32_t)i;
    fs[nfs++] = NO;
    if (s->fset1)
        fs[1] = s->fset1;
    start = f.n;
    u64(&f, nfs);
    if (comp)
        cints(&f, fs, nfs, 4);
    else
        for (size_t i = 0; i < nfs; i++)
            u32(&f, fs[i]);
    section(&toc, "FIELDSETS", start, f.n);

    /* PATHS: / -> /P -> /P.a */
    start = f.n;
    u64(&f, 3);
    uint32_t ptok[3] = {0, s->prim_elem ? tok_index(s, s->prim_elem) : 1,
                        s->prop_elem ? tok_index(s, s->prop_elem) : 2};
    if (comp) {
        uint32_t idx[3] = {0, 1, 2};
        int32_t tk[3] = {0, (int32_t)ptok[1], -(int32_t)ptok[2]},
                jump[3] = {-1, -1, -2};
        u64(&f, 3);
        cints(&f, idx, 3, 4);
        cints(&f, tk, 3, 4);
        cints(&f, jump, 3, 4);
    } else {
        uint8_t bits[3] = {UB_CRATE_PATH_HAS_CHILD, UB_CRATE_PATH_HAS_CHILD,
                           UB_CRATE_PATH_IS_PROPERTY};
        for (uint32_t i = 0; i < 3; i++) {
            if (ver < UB_CRATE_V_NO_PATH_PADDING)
                u32(&f, 0);
            u32(&f, i);
            u32(&f, ptok[i]);
            u8(&f, bits[i]);
            u8(&f, 0);
            u8(&f, 0);
            u8(&f, 0);
        }
    }
    section(&toc, "PATHS", start, f.n);

    /* SPECS */
    uint32_t sp[3] = {0, 1, 2}, sf[3] = {0, prim_set, attr_set},
             st[3] = {UB_CRATE_SPEC_PSEUDO_ROOT, UB_CRATE_SPEC_PRIM,
                      UB_CRATE_SPEC_ATTRIBUTE};
    for (int i = 0; s->specs && i < 3; i++) {
        sp[i] = s->specs[0][i] == NO ? sp[i] : s->specs[0][i];
        sf[i] = s->specs[1][i] == NO ? sf[i] : s->specs[1][i];
        st[i] = s->specs[2][i] == NO ? st[i] : s->specs[2][i];
    }
    start = f.n;
    u64(&f, 3);
    if (comp) {
        cints(&f, sp, 3, 4);
        cints(&f, sf, 3, 4);
        cints(&f, st, 3, 4);
    } else {
        for (int i = 0; i < 3; i++) {
            if (ver < UB_CRATE_V_NO_PATH_PADDING)
                u32(&f, 0);
            u32(&f, sp[i]);
            u32(&f, sf[i]);
            u32(&f, st[i]);
        }
    }
    section(&toc, "SPECS", start, f.n);

    uint64_t toc_at = f.n;
    u64(&f, 6);
    put(&f, toc.d, toc.n);
    free(toc.d);
    memcpy(f.d + 16, &toc_at, 8);
    *len = f.n;
    return f.d;
}

static ub_diags *D;

static ub_layer *read_spec(layer_spec *s)
{
    size_t len;
    unsigned char *bytes = build(s, &len);
    ub_diags_free(D);
    D = ub_diags_new();
    ub_layer *L = ub_crate_read(bytes, len, "t.usdc", T, D);
    free(bytes);
    free(s->data.d);
    s->data = (bb){0};
    return L;
}

static bool has_error(const char *what)
{
    for (size_t i = 0; i < ub_diags_count(D); i++)
        if (strstr(ub_diags_at(D, i)->message, what))
            return true;
    return false;
}

/* The attribute /P.a of a layer with default `r` (data in s). */
static const ub_prop *attr_of(ub_layer *L)
{
    if (!L || L->root->children.n != 1)
        return NULL;
    const ub_prim *p = L->root->children.v[0];
    return p->props.n == 1 ? p->props.v[0] : NULL;
}

/* Read a layer whose /P.a has typeName tname and default r. */
static ub_layer *with_default(uint32_t ver, const char *tname, uint64_t r,
                              bb *data, const char *const *toks,
                              size_t ntoks)
{
    cfield f[] = {{"default", r}};
    layer_spec s = {.ver = ver, .tname = tname, .attr = f, .nattr = 1,
                    .toks = toks, .ntoks = ntoks};
    if (data)
        s.data = *data;
    return read_spec(&s);
}

/* --- codecs ---------------------------------------------------------------- */

static void test_lz4_framing(void)
{
    char src[3000], out[3000];
    for (int i = 0; i < 3000; i++)
        src[i] = (char)(i % 7 == 0 ? i : 'a');
    bb one = {0};
    lz4(&one, src, sizeof src);
    const char *why = NULL;
    CU_ASSERT_EQUAL(ub_crate_lz4(one.d, one.n, out, sizeof out, &why), 0);
    CU_ASSERT(memcmp(src, out, sizeof src) == 0);
    /* wrong size either way */
    CU_ASSERT_EQUAL(ub_crate_lz4(one.d, one.n, out, 2999, &why), -1);
    CU_ASSERT_EQUAL(ub_crate_lz4(one.d, one.n, out, 3000 - 1, &why), -1);
    /* two chunks: count byte, then (int32 size, block) each */
    bb two = {0}, a = {0}, b = {0};
    lz4(&a, src, 1000);
    lz4(&b, src + 1000, 2000);
    u8(&two, 2);
    u32(&two, (uint32_t)(a.n - 1));
    put(&two, a.d + 1, a.n - 1);
    u32(&two, (uint32_t)(b.n - 1));
    put(&two, b.d + 1, b.n - 1);
    memset(out, 0, sizeof out);
    CU_ASSERT_EQUAL(ub_crate_lz4(two.d, two.n, out, sizeof out, &why), 0);
    CU_ASSERT(memcmp(src, out, sizeof src) == 0);
    /* a chunk size past the end, a truncated block, nothing at all */
    CU_ASSERT_EQUAL(ub_crate_lz4(two.d, two.n - 1, out, sizeof out, &why),
                    -1);
    CU_ASSERT_EQUAL(ub_crate_lz4(one.d, one.n / 2, out, sizeof out, &why),
                    -1);
    CU_ASSERT_EQUAL(ub_crate_lz4(one.d, 0, out, sizeof out, &why), -1);
    free(one.d);
    free(two.d);
    free(a.d);
    free(b.d);
}

static void test_int_coding(void)
{
    /* [5, 6, 7, 100, 100]: differences 5 1 1 93 0, the common one 1; codes
     * (2 bits, first int lowest) small common common small | small */
    const unsigned char enc[] = {1, 0, 0, 0, 0x41, 0x01, 5, 93, 0};
    uint32_t out[5];
    const char *why;
    CU_ASSERT_EQUAL(ub_crate_ints_decode(enc, sizeof enc, 5, 4, out, &why),
                    0);
    CU_ASSERT(out[0] == 5 && out[1] == 6 && out[2] == 7 && out[3] == 100 &&
              out[4] == 100);
    /* one value short */
    CU_ASSERT_EQUAL(
        ub_crate_ints_decode(enc, sizeof enc - 1, 5, 4, out, &why), -1);
    /* 64-bit: medium is 32 bits, large 64; negative differences */
    unsigned char e64[8 + 1 + 4 + 8];
    int64_t common = -3, big = -5000000000;
    int32_t med = 70000;
    memcpy(e64, &common, 8);
    e64[8] = 0 | 2 << 2 | 3 << 4; /* common, medium, large */
    memcpy(e64 + 9, &med, 4);
    memcpy(e64 + 13, &big, 8);
    uint64_t o64[3];
    CU_ASSERT_EQUAL(ub_crate_ints_decode(e64, sizeof e64, 3, 8, o64, &why),
                    0);
    CU_ASSERT_EQUAL((int64_t)o64[0], -3);
    CU_ASSERT_EQUAL((int64_t)o64[1], 69997);
    CU_ASSERT_EQUAL((int64_t)o64[2], 69997 - 5000000000);
    /* through LZ4 */
    int32_t v[40];
    for (int i = 0; i < 40; i++)
        v[i] = i * i - 300;
    bb e = {0}, c = {0};
    encode_ints(&e, v, 40, 4);
    lz4(&c, e.d, e.n);
    int32_t back[40];
    CU_ASSERT_EQUAL(ub_crate_ints(c.d, c.n, 40, 4, back, &why), 0);
    CU_ASSERT(memcmp(v, back, sizeof v) == 0);
    /* a count the bytes cannot hold is refused before any allocation */
    CU_ASSERT_EQUAL(ub_crate_ints(c.d, c.n, (size_t)1 << 40, 4, back, &why),
                    -1);
    free(e.d);
    free(c.d);
}

/* --- sections, every version ------------------------------------------------ */

static void test_versions(void)
{
    const uint32_t vers[] = {V(0, 0, 1), V(0, 1, 0), V(0, 3, 0), V(0, 4, 0),
                             V(0, 5, 0), V(0, 6, 0), V(0, 7, 0), V(0, 8, 0),
                             V(0, 9, 0), V(0, 10, 0), V(0, 11, 0)};
    for (size_t i = 0; i < sizeof vers / sizeof *vers; i++) {
        uint32_t ver = vers[i];
        /* float[] [1.5, 2.5]: a rank before 0.5.0, 32-bit size before
         * 0.7.0, 64-bit after */
        bb d = {0};
        if (ver < UB_CRATE_V_COMPRESSED_INTS)
            u32(&d, 1);
        if (ver < UB_CRATE_V_64BIT_ARRAY_SIZES)
            u32(&d, 2);
        else
            u64(&d, 2);
        f32(&d, 1.5f);
        f32(&d, 2.5f);
        ub_layer *L = with_default(ver, "float[]",
                                   rep(UB_CRATE_FLOAT, DATA, false, true), &d,
                                   NULL, 0);
        const ub_prop *a = attr_of(L);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(L->root->children.v[0]->specifier, UB_DEF);
        CU_ASSERT_STRING_EQUAL(L->root->children.v[0]->type_name, "Xform");
        CU_ASSERT_STRING_EQUAL(a->name, "a");
        CU_ASSERT(a->is_array);
        CU_ASSERT_EQUAL(a->default_value.count, 2);
        CU_ASSERT_EQUAL(ub_value_get_double(&a->default_value, 1, 0), 2.5);
        ub_layer_free(L);
    }
    /* newer than 24.08 reads: refused with the version named */
    ub_layer *L = with_default(V(0, 12, 0), "int",
                               rep(UB_CRATE_INT, 1, true, false), NULL, NULL,
                               0);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("version 0.12.0 is not supported"));
}

/* --- value types -------------------------------------------------------------- */

static double dflt(ub_layer *L, uint32_t i, unsigned c)
{
    const ub_prop *a = attr_of(L);
    return a && a->default_value.kind == UB_V_DATA
               ? ub_value_get_double(&a->default_value, i, c)
               : NAN;
}

static void test_inlined_values(void)
{
    uint32_t ver = V(0, 8, 0);
    float half = 0.75f;
    uint32_t fbits;
    memcpy(&fbits, &half, 4);
    ub_layer *L;
    L = with_default(ver, "int", rep(UB_CRATE_INT, (uint32_t)-7, true, false),
                     NULL, NULL, 0);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), -7);
    ub_layer_free(L);
    /* a double that is exactly a float is inlined as the float's bits */
    L = with_default(ver, "double", rep(UB_CRATE_DOUBLE, fbits, true, false),
                     NULL, NULL, 0);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), 0.75);
    ub_layer_free(L);
    /* int64 inlined as int32 */
    L = with_default(ver, "int64",
                     rep(UB_CRATE_INT64, (uint32_t)-9, true, false), NULL,
                     NULL, 0);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), -9);
    ub_layer_free(L);
    /* vectors of small ints as int8 components; the declared role kept */
    L = with_default(ver, "point3f",
                     rep(UB_CRATE_VEC3F, 0x00fe0201u, true, false), NULL,
                     NULL, 0);
    CU_ASSERT(dflt(L, 0, 0) == 1 && dflt(L, 0, 1) == 2 && dflt(L, 0, 2) == -2);
    CU_ASSERT_STRING_EQUAL(ub_value_type(&attr_of(L)->default_value)->name,
                           "point3f");
    ub_layer_free(L);
    /* a diagonal matrix as its int8 diagonal */
    L = with_default(ver, "matrix4d",
                     rep(UB_CRATE_MATRIX4D, 0x01030201u, true, false), NULL,
                     NULL, 0);
    CU_ASSERT(dflt(L, 0, 0) == 1 && dflt(L, 0, 5) == 2 &&
              dflt(L, 0, 10) == 3 && dflt(L, 0, 15) == 1 &&
              dflt(L, 0, 1) == 0);
    ub_layer_free(L);
    /* half, bool, token, asset (a token), string (a string index) */
    L = with_default(ver, "half", rep(UB_CRATE_HALF, 0x3c00, true, false),
                     NULL, NULL, 0);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), 1.0);
    ub_layer_free(L);
    L = with_default(ver, "bool", rep(UB_CRATE_BOOL, 1, true, false), NULL,
                     NULL, 0);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), 1);
    ub_layer_free(L);
    const char *toks[] = {"hello", "./tex.png"};
    L = with_default(ver, "token", rep(UB_CRATE_TOKEN, TOK0, true, false),
                     NULL, toks, 2);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&attr_of(L)->default_value, 0),
                           "hello");
    ub_layer_free(L);
    L = with_default(ver, "asset",
                     rep(UB_CRATE_ASSET_PATH, TOK0 + 1, true, false), NULL,
                     toks, 2);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&attr_of(L)->default_value, 0),
                           "./tex.png");
    ub_layer_free(L);
    L = with_default(ver, "string", rep(UB_CRATE_STRING, TOK0, true, false),
                     NULL, toks, 2);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&attr_of(L)->default_value, 0),
                           "hello");
    CU_ASSERT_EQUAL(ub_value_type(&attr_of(L)->default_value)->id,
                    UB_TY_STRING);
    ub_layer_free(L);
}

static void test_stored_values(void)
{
    uint32_t ver = V(0, 8, 0);
    bb d = {0};
    f64(&d, 0.1);
    ub_layer *L = with_default(ver, "double",
                               rep(UB_CRATE_DOUBLE, DATA, false, false), &d,
                               NULL, 0);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), 0.1);
    ub_layer_free(L);
    /* quaternions are stored imaginary first; the model puts real first */
    d = (bb){0};
    f32(&d, 1);
    f32(&d, 2);
    f32(&d, 3);
    f32(&d, 4);
    L = with_default(ver, "quatf", rep(UB_CRATE_QUATF, DATA, false, false),
                     &d, NULL, 0);
    CU_ASSERT(dflt(L, 0, 0) == 4 && dflt(L, 0, 1) == 1 && dflt(L, 0, 3) == 3);
    ub_layer_free(L);
    /* timecode (0.9.0) */
    d = (bb){0};
    f64(&d, 12.5);
    L = with_default(V(0, 9, 0), "timecode",
                     rep(UB_CRATE_TIME_CODE, DATA, false, false), &d, NULL,
                     0);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), 12.5);
    CU_ASSERT_EQUAL(ub_value_type(&attr_of(L)->default_value)->id,
                    UB_TY_TIMECODE);
    ub_layer_free(L);
    /* pathExpression (0.10.0): a string index where the rep points */
    const char *toks[] = {"/World//*"};
    d = (bb){0};
    u32(&d, TOK0);
    L = with_default(V(0, 10, 0), "pathExpression",
                     rep(UB_CRATE_PATH_EXPRESSION, DATA, false, false), &d,
                     toks, 1);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&attr_of(L)->default_value, 0),
                           "/World//*");
    ub_layer_free(L);
    /* a value block */
    L = with_default(ver, "float", rep(UB_CRATE_VALUE_BLOCK, 0, false, false),
                     NULL, NULL, 0);
    CU_ASSERT_EQUAL(attr_of(L)->default_value.kind, UB_V_BLOCK);
    ub_layer_free(L);
    /* an empty array has payload 0 */
    L = with_default(ver, "int[]", rep(UB_CRATE_INT, 0, false, true), NULL,
                     NULL, 0);
    CU_ASSERT(attr_of(L)->default_value.is_array &&
              attr_of(L)->default_value.count == 0);
    ub_layer_free(L);
    /* string arrays are string indexes, asset arrays too */
    const char *toks2[] = {"x", "y"};
    d = (bb){0};
    u64(&d, 2);
    u32(&d, TOK0 + 1);
    u32(&d, TOK0);
    L = with_default(ver, "asset[]", rep(UB_CRATE_ASSET_PATH, DATA, false,
                                         true), &d, toks2, 2);
    CU_ASSERT_STRING_EQUAL(ub_value_str(&attr_of(L)->default_value, 0), "y");
    CU_ASSERT_STRING_EQUAL(ub_value_str(&attr_of(L)->default_value, 1), "x");
    ub_layer_free(L);
    /* an asset path with a control character is refused, as OpenUSD
     * refuses the file (and the text reader such a path): alone and in
     * an array */
    const char *bad[] = {"ok.usda", "a\x01b.usda"};
    L = with_default(ver, "asset",
                     rep(UB_CRATE_ASSET_PATH, TOK0 + 1, true, false), NULL,
                     bad, 2);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("spec </P.a> field 'default': asset paths may not "
                        "contain control characters"));
    ub_layer_free(L);
    d = (bb){0};
    u64(&d, 2);
    u32(&d, TOK0);
    u32(&d, TOK0 + 1);
    L = with_default(ver, "asset[]", rep(UB_CRATE_ASSET_PATH, DATA, false,
                                         true), &d, bad, 2);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("asset paths may not contain control characters"));
    ub_layer_free(L);
    /* (the same in a token: no asset path, no rule) */
    L = with_default(ver, "token",
                     rep(UB_CRATE_TOKEN, TOK0 + 1, true, false), NULL, bad,
                     2);
    CU_ASSERT_PTR_NOT_NULL(L);
    ub_layer_free(L);
}

/* A double[16] as a lookup table {0.25, 0.5} (its first nlut entries)
 * and indexes 1 0 0 1 0 0 ... */
static ub_layer *lut_array(uint32_t ver, uint32_t nlut)
{
    bb d = {0};
    u64(&d, 16);
    u8(&d, 't');
    u32(&d, nlut);
    for (uint32_t i = 0; i < nlut; i++)
        f64(&d, 0.25 * (i + 1));
    uint32_t ix[16];
    for (int i = 0; i < 16; i++)
        ix[i] = (uint32_t)(i % 3 == 0);
    cints(&d, ix, 16, 4);
    return with_default(ver, "double[]",
                        rep(UB_CRATE_DOUBLE, DATA, false, true) |
                            UB_CRATE_REP_IS_COMPRESSED,
                        &d, NULL, 0);
}

static void test_compressed_arrays(void)
{
    uint32_t ver = V(0, 8, 0);
    /* ints: 16 or more compressed (0.5.0) */
    int32_t v[20];
    for (int i = 0; i < 20; i++)
        v[i] = 1000 - i * 77;
    bb d = {0};
    u64(&d, 20);
    cints(&d, v, 20, 4);
    uint64_t r = rep(UB_CRATE_INT, DATA, false, true) |
                 UB_CRATE_REP_IS_COMPRESSED;
    ub_layer *L = with_default(ver, "int[]", r, &d, NULL, 0);
    CU_ASSERT_EQUAL(attr_of(L)->default_value.count, 20);
    CU_ASSERT_EQUAL(dflt(L, 19, 0), 1000 - 19 * 77);
    ub_layer_free(L);
    /* int64 */
    int64_t w[17];
    for (int i = 0; i < 17; i++)
        w[i] = (int64_t)i * 3000000000;
    d = (bb){0};
    u64(&d, 17);
    cints(&d, w, 17, 8);
    L = with_default(ver, "int64[]",
                     rep(UB_CRATE_INT64, DATA, false, true) |
                         UB_CRATE_REP_IS_COMPRESSED,
                     &d, NULL, 0);
    CU_ASSERT_EQUAL(dflt(L, 16, 0), 16.0 * 3000000000);
    ub_layer_free(L);
    /* floats all integral: code 'i' then compressed int32s (0.6.0) */
    d = (bb){0};
    u64(&d, 18);
    u8(&d, 'i');
    int32_t fi[18];
    for (int i = 0; i < 18; i++)
        fi[i] = i - 5;
    cints(&d, fi, 18, 4);
    L = with_default(ver, "float[]",
                     rep(UB_CRATE_FLOAT, DATA, false, true) |
                         UB_CRATE_REP_IS_COMPRESSED,
                     &d, NULL, 0);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), -5);
    CU_ASSERT_EQUAL(dflt(L, 17, 0), 12);
    ub_layer_free(L);
    /* a lookup table: code 't', its size, its values, compressed indexes */
    L = lut_array(ver, 2);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), 0.5);
    CU_ASSERT_EQUAL(dflt(L, 1, 0), 0.25);
    ub_layer_free(L);
    /* an index past the table */
    L = lut_array(ver, 1);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("past the table"));
    ub_layer_free(L);
}

/* The usda reader reads a value by its attribute's type: a default of
 * another type would print as text it refuses (an int where a float is
 * declared) or reads as another value.  Floating-point components in the
 * same shape (a float for a double) are converted, as that reader would
 * read their text. */
static void test_value_types(void)
{
    uint32_t ver = V(0, 8, 0);
    float x = 0.75f;
    uint32_t fbits;
    memcpy(&fbits, &x, 4);
    ub_layer *L = with_default(ver, "float", rep(UB_CRATE_INT, 7, true,
                                                  false),
                               NULL, NULL, 0);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("spec </P.a> field 'default': the default is of "
                        "type int, where the attribute's is float"));
    L = with_default(ver, "float[]", rep(UB_CRATE_FLOAT, fbits, true,
                                         false),
                     NULL, NULL, 0);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("the default is of type float, where the "
                        "attribute's is float[]"));
    L = with_default(ver, "double", rep(UB_CRATE_FLOAT, fbits, true, false),
                     NULL, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    CU_ASSERT_EQUAL(dflt(L, 0, 0), 0.75);
    CU_ASSERT_EQUAL(attr_of(L)->default_value.type_id, UB_TY_DOUBLE);
    ub_layer_free(L);
    /* an unknown type keeps its default, whatever it is */
    L = with_default(ver, "Some::EnumValue",
                     rep(UB_CRATE_INT, 7, true, false), NULL, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL(L);
    ub_layer_free(L);
}

/* Time samples at 1 and 2.5, an int 4 (None when blocks) and None: the
 * times first, then at *ts a jump to their rep and a jump to the
 * values. */
static bb two_samples(bool blocks, uint64_t *ts)
{
    bb d = {0};
    u64(&d, 2);
    f64(&d, 1);
    f64(&d, 2.5);
    *ts = DATA + d.n;
    u64(&d, 8); /* jump */
    u64(&d, rep(UB_CRATE_DOUBLE_VECTOR, DATA, false, false));
    u64(&d, 8); /* jump */
    u64(&d, 2);
    u64(&d, blocks ? rep(UB_CRATE_VALUE_BLOCK, 0, false, false)
                   : rep(UB_CRATE_INT, 4, true, false));
    u64(&d, rep(UB_CRATE_VALUE_BLOCK, 0, false, false));
    return d;
}

/* An attribute's type name is what the text says first: an unknown one
 * is kept if the text can say it (an identifier), and then, as the usda
 * reader takes it, its samples can only be None. */
static void test_type_names(void)
{
    static const struct {
        const char *tname;
        bool blocks;
        const char *error; /* NULL: it reads */
    } cases[] = {
        {"int", false, NULL},
        {"foo", true, NULL},
        {"foo", false, "spec </P.a> field 'timeSamples': the sample at time "
                       "1 holds a value, where only None can be a sample of "
                       "an attribute of no known type"},
        {"Some::EnumValue", true, NULL},
        {"f oat", true, "spec </P.a> field 'typeName': the type name "
                        "'f oat' is not an identifier"},
        {"", true, "the type name '' is not an identifier"},
        /* a reserved word the grammar reads as such (`kind h4 = ...`) */
        {"kind", true, "spec </P.a> field 'typeName': the type name 'kind' "
                       "is not an identifier, or is a reserved word"},
        /* no array of opaque or group (`opaque[] x` does not read) */
        {"opaque", true, NULL},
        {"opaque[]", true, "spec </P.a> field 'typeName': type 'opaque' has "
                           "no array form"},
        {"group[]", true, "type 'group' has no array form"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t ts;
        bb d = two_samples(cases[i].blocks, &ts);
        cfield f[] = {{"timeSamples", rep(UB_CRATE_TIME_SAMPLES, ts, false,
                                          false)}};
        layer_spec s = {.ver = V(0, 8, 0), .tname = cases[i].tname,
                        .attr = f, .nattr = 1, .data = d};
        ub_layer *L = read_spec(&s);
        if (!cases[i].error) {
            const ub_prop *a = attr_of(L);
            CU_ASSERT_PTR_NOT_NULL_FATAL(a);
            CU_ASSERT_EQUAL(ub_prop_samples(a)->n, 2);
        } else {
            CU_ASSERT_PTR_NULL(L);
            if (!has_error(cases[i].error))
                fprintf(stderr, "\nwanted: %s\n", cases[i].error);
            CU_ASSERT(has_error(cases[i].error));
        }
        ub_layer_free(L);
    }
    /* a prim's type name: names the text takes, joined by '.' */
    static const char *const prim_types[] = {"Mesh", "my.Some::Type",
                                             "Poi\xc3tInstancer", "a..b",
                                             "my.over"};
    for (size_t i = 0; i < 5; i++) {
        cfield pf[] = {{"typeName", rep(UB_CRATE_TOKEN, TOK0, true, false)}};
        layer_spec s = {.ver = V(0, 8, 0), .tname = "int", .prim = pf,
                        .nprim = 1, .toks = &prim_types[i], .ntoks = 1};
        ub_layer *L = read_spec(&s);
        if (i < 2) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(L);
            CU_ASSERT_STRING_EQUAL(L->root->children.v[0]->type_name,
                                   prim_types[i]);
        } else {
            char want[80];
            snprintf(want, sizeof want,
                     "spec </P> field 'typeName': the type name '%s' is not "
                     "an identifier",
                     prim_types[i]);
            CU_ASSERT_PTR_NULL(L);
            CU_ASSERT(has_error(want));
        }
        ub_layer_free(L);
    }
}

static void test_samples_and_dicts(void)
{
    uint32_t ver = V(0, 8, 0);
    uint64_t times_at = DATA, ts;
    bb d = two_samples(false, &ts);
    cfield f[] = {{"timeSamples", rep(UB_CRATE_TIME_SAMPLES, ts, false,
                                      false)}};
    layer_spec s = {.ver = ver, .tname = "int", .attr = f, .nattr = 1,
                    .data = d};
    ub_layer *L = read_spec(&s);
    const ub_prop *a = attr_of(L);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(ub_prop_samples(a)->n, 2);
    CU_ASSERT_EQUAL(ub_prop_samples(a)->v[1].time, 2.5);
    CU_ASSERT_EQUAL(ub_value_get_double(&ub_prop_samples(a)->v[0].value, 0, 0),
                    4);
    CU_ASSERT_EQUAL(ub_prop_samples(a)->v[1].value.kind, UB_V_BLOCK);
    ub_layer_free(L);

    /* samples sharing one stored array (as OpenUSD dedups them) */
    d = (bb){0};
    u64(&d, 3);
    f64(&d, 1);
    f64(&d, 2);
    f64(&d, 3);
    uint64_t arr = DATA + d.n;
    u64(&d, 2);
    f32(&d, 0.5f);
    f32(&d, 1.5f);
    ts = DATA + d.n;
    u64(&d, 8);
    u64(&d, rep(UB_CRATE_DOUBLE_VECTOR, times_at, false, false));
    u64(&d, 8);
    u64(&d, 3);
    for (int i = 0; i < 3; i++)
        u64(&d, rep(UB_CRATE_FLOAT, arr, false, true));
    f[0].rep = rep(UB_CRATE_TIME_SAMPLES, ts, false, false);
    s = (layer_spec){.ver = ver, .tname = "float[]", .attr = f, .nattr = 1,
                     .data = d};
    L = read_spec(&s);
    a = attr_of(L);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(ub_prop_samples(a)->n, 3);
    for (uint32_t i = 0; i < ub_prop_samples(a)->n; i++) {
        CU_ASSERT_EQUAL(ub_prop_samples(a)->v[i].value.count, 2);
        CU_ASSERT_EQUAL(
            ub_value_get_double(&ub_prop_samples(a)->v[i].value, 1, 0), 1.5);
    }
    ub_layer_free(L);

    /* a dictionary in prim metadata: {"a": 7, "b": {}} */
    const char *toks[] = {"customData", "a", "b"};
    d = (bb){0};
    u64(&d, 2);
    u32(&d, TOK0 + 1);
    u64(&d, 8);
    u64(&d, rep(UB_CRATE_INT, 7, true, false));
    u32(&d, TOK0 + 2);
    u64(&d, 8);
    u64(&d, rep(UB_CRATE_DICTIONARY, 0, true, false));
    cfield pf[] = {{"customData", rep(UB_CRATE_DICTIONARY, DATA, false,
                                      false)}};
    s = (layer_spec){.ver = ver, .tname = "int", .prim = pf, .nprim = 1,
                     .toks = toks, .ntoks = 3, .data = d};
    L = read_spec(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    const ub_field *cd =
        ub_fields_find(&L->root->children.v[0]->meta, ub_intern_cstr(T,
                                                             "customData"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(cd);
    CU_ASSERT_EQUAL(cd->value.u.dict->n, 2);
    CU_ASSERT_EQUAL(ub_value_get_double(&cd->value.u.dict->e[0].value, 0, 0),
                    7);
    CU_ASSERT_EQUAL(cd->value.u.dict->e[1].value.kind, UB_V_DICT);
    ub_layer_free(L);

    /* a dictionary that contains itself (through a VtValue) is refused */
    d = (bb){0};
    u64(&d, 1);
    u32(&d, TOK0 + 1);
    u64(&d, 8);
    u64(&d, rep(UB_CRATE_DICTIONARY, DATA, false, false));
    s = (layer_spec){.ver = ver, .tname = "int", .prim = pf, .nprim = 1,
                     .toks = toks, .ntoks = 3, .data = d};
    L = read_spec(&s);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("nested more than"));
}

static void test_list_ops(void)
{
    uint32_t ver = V(0, 8, 0);
    /* apiSchemas: prepend [A, B], delete [C] */
    const char *toks[] = {"apiSchemas", "A", "B", "C", "references",
                          "./r.usda", "payload", "/R"};
    bb d = {0};
    u8(&d, UB_CRATE_LISTOP_HAS_PREPENDED | UB_CRATE_LISTOP_HAS_DELETED);
    u64(&d, 2);
    u32(&d, TOK0 + 1);
    u32(&d, TOK0 + 2);
    u64(&d, 1);
    u32(&d, TOK0 + 3);
    /* references: explicit [@./r.usda@ (offset 5)] with an empty path and
     * no custom data */
    uint64_t refs = DATA + d.n;
    u8(&d, UB_CRATE_LISTOP_IS_EXPLICIT | UB_CRATE_LISTOP_HAS_EXPLICIT);
    u64(&d, 1);
    u32(&d, TOK0 + 5);
    u32(&d, 99); /* a path index no path was given: the empty path */
    f64(&d, 5);
    f64(&d, 1);
    u64(&d, 0);
    cfield pf[] = {
        {"apiSchemas", rep(UB_CRATE_TOKEN_LISTOP, DATA, false, false)},
        {"references", rep(UB_CRATE_REFERENCE_LISTOP, refs, false, false)},
    };
    layer_spec s = {.ver = ver, .tname = "int", .prim = pf, .nprim = 2,
                    .toks = toks, .ntoks = 8, .data = d};
    ub_layer *L = read_spec(&s);
    /* 99 is outside the 3 paths: an error naming the spec and field */
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("path index 99 out of range"));
    {
        bool named = false;
        for (size_t i = 0; i < ub_diags_count(D); i++)
            named |= strstr(ub_diags_at(D, i)->message,
                            "spec </P> field 'references'") != NULL;
        CU_ASSERT(named);
    }
    d = (bb){0};
    u8(&d, UB_CRATE_LISTOP_HAS_PREPENDED | UB_CRATE_LISTOP_HAS_DELETED);
    u64(&d, 2);
    u32(&d, TOK0 + 1);
    u32(&d, TOK0 + 2);
    u64(&d, 1);
    u32(&d, TOK0 + 3);
    refs = DATA + d.n;
    u8(&d, UB_CRATE_LISTOP_IS_EXPLICIT | UB_CRATE_LISTOP_HAS_EXPLICIT);
    u64(&d, 1);
    u32(&d, TOK0 + 5);
    u32(&d, 1); /* </P> */
    f64(&d, 5);
    f64(&d, 1);
    u64(&d, 0);
    /* a single payload, as before 0.8.0: asset and path, no offset */
    uint64_t pl = DATA + d.n;
    u32(&d, TOK0 + 5);
    u32(&d, 1);
    pf[1].rep = rep(UB_CRATE_REFERENCE_LISTOP, refs, false, false);
    cfield pf3[] = {pf[0], pf[1],
                    {"payload", rep(UB_CRATE_PAYLOAD, pl, false, false)}};
    s = (layer_spec){.ver = V(0, 7, 0), .tname = "int", .prim = pf3,
                     .nprim = 3, .toks = toks, .ntoks = 8, .data = d};
    L = read_spec(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    const ub_prim *p = L->root->children.v[0];
    const ub_field *api = ub_fields_find(&p->meta, ub_intern_cstr(T,
                                                              "apiSchemas"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(api);
    CU_ASSERT_EQUAL(api->value.kind, UB_V_LISTOP);
    const ub_listop *lo = api->value.u.listop;
    CU_ASSERT(!lo->is_explicit && lo->has[UB_LO_PREPEND] &&
              lo->has[UB_LO_DELETE] && !lo->has[UB_LO_APPEND]);
    CU_ASSERT_STRING_EQUAL(ub_value_str(ub_listop_get(lo, UB_LO_PREPEND), 1),
                           "B");
    const ub_field *rf = ub_fields_find(&p->meta, ub_intern_cstr(T,
                                                             "references"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(rf);
    const ub_reference *r =
        ub_value_data(ub_listop_get(rf->value.u.listop, UB_LO_EXPLICIT));
    CU_ASSERT_STRING_EQUAL(r->asset, "./r.usda");
    CU_ASSERT_STRING_EQUAL(r->prim_path, "/P");
    CU_ASSERT_EQUAL(r->offset.offset, 5);
    CU_ASSERT(r->has_offset && !r->has_scale && !r->custom_data);
    const ub_field *pa = ub_fields_find(&p->meta, ub_intern_cstr(T,
                                                             "payload"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(pa);
    CU_ASSERT(pa->value.u.listop->is_explicit);
    CU_ASSERT_EQUAL(ub_listop_get(pa->value.u.listop, UB_LO_EXPLICIT)->count,
                    1);
    ub_layer_free(L);
}

/* A prim's properties stored as an array of tokens (not the token vector
 * OpenUSD writes), the same stored value as an attribute's default: the
 * list of names is read only to build from, and given back; the default
 * must not get it from the arrays read once (it did, freed). */
static void test_names_shared_with_a_value(void)
{
    bb d = {0};
    u64(&d, 3);
    for (int k = 0; k < 3; k++)
        u32(&d, 2); /* "a" */
    uint64_t r = rep(UB_CRATE_TOKEN, DATA, false, true);
    cfield f[] = {{"default", r}};
    layer_spec s = {.ver = V(0, 8, 0), .tname = "token[]", .attr = f,
                    .nattr = 1, .data = d, .props_rep = r};
    ub_layer *L = read_spec(&s);
    const ub_prop *a = attr_of(L);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL_FATAL(a->default_value.count, 3);
    for (uint32_t k = 0; k < 3; k++)
        CU_ASSERT_STRING_EQUAL(ub_value_str(&a->default_value, k), "a");
    ub_layer_free(L);
}

/* permission: the enum, or a token naming one of its two values; any
 * other value is refused (the writer would have made it `public`). */
static void test_permission(void)
{
    const char *toks[] = {"permission", "private", "/P"};
    struct {
        uint64_t rep;
        const char *want; /* NULL: refused */
    } cases[] = {
        {rep(UB_CRATE_PERMISSION, 1, true, false), "private"},
        {rep(UB_CRATE_TOKEN, TOK0 + 1, true, false), "private"},
        {rep(UB_CRATE_TOKEN, TOK0 + 2, true, false), NULL},
        {rep(UB_CRATE_STRING, TOK0 + 1, true, false), NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfield f[] = {{"permission", cases[i].rep}};
        layer_spec sp = {.ver = V(0, 8, 0), .tname = "float",
                         .attr = f, .nattr = 1, .toks = toks, .ntoks = 3};
        ub_layer *L = read_spec(&sp);
        if (!cases[i].want) {
            CU_ASSERT_PTR_NULL(L);
            CU_ASSERT(has_error(cases[i].rep == rep(UB_CRATE_STRING, TOK0 + 1,
                                                    true, false)
                                    ? "field 'permission': expected a token, "
                                      "found a value of type string"
                                    : "field 'permission': expected a "
                                      "permission: public or private, found "
                                      "a value of type token"));
        } else {
            const ub_prop *a = attr_of(L);
            CU_ASSERT_PTR_NOT_NULL_FATAL(a);
            const ub_field *pf = ub_fields_find(
                ub_prop_meta(a), ub_intern_cstr(T, "permission"));
            CU_ASSERT_PTR_NOT_NULL_FATAL(pf);
            CU_ASSERT_STRING_EQUAL(ub_value_str(&pf->value, 0),
                                   cases[i].want);
        }
        ub_layer_free(L);
    }
}

/* custom and variability are required fields: left out, they read as
 * their fallbacks (not custom, varying), and the property notes which
 * were left out (ub_prop.unwritten) so that a crate copy leaves them out
 * too. */
static void test_required_fallbacks(void)
{
    const char *toks[] = {"custom", "variability"};
    cfield none[] = {{"default", rep(UB_CRATE_FLOAT, 0, true, false)}};
    layer_spec s = {.ver = V(0, 8, 0), .tname = "float", .attr = none,
                    .nattr = 1, .toks = toks, .ntoks = 2};
    ub_layer *L = read_spec(&s);
    const ub_prop *a = attr_of(L);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_FALSE(a->custom);
    CU_ASSERT_EQUAL(a->variability, UB_VARYING);
    CU_ASSERT_EQUAL(a->unwritten,
                    UB_UNWRITTEN_CUSTOM | UB_UNWRITTEN_VARIABILITY);
    CU_ASSERT_EQUAL(L->root->children.v[0]->unwritten, 0); /* specifier */
    ub_layer_free(L);

    cfield both[] = {{"custom", rep(UB_CRATE_BOOL, 1, true, false)},
                     {"variability", rep(UB_CRATE_VARIABILITY, 1, true,
                                         false)}};
    layer_spec t = {.ver = V(0, 8, 0), .tname = "float", .attr = both,
                    .nattr = 2, .toks = toks, .ntoks = 2};
    L = read_spec(&t);
    a = attr_of(L);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_TRUE(a->custom);
    CU_ASSERT_EQUAL(a->variability, UB_UNIFORM);
    CU_ASSERT_EQUAL(a->unwritten, 0);
    ub_layer_free(L);
}

/* A list op of unregistered values (type 54, inside an unregistered value
 * as OpenUSD stores a list op field it does not know): each item a value
 * holding text; a part as the usda reader makes one, a list of atoms. */
/* A field the reader does not know is printed as metadata, `name =
 * value`: a name no text can say there (not an identifier or a C++ name)
 * is damage; one it can is kept as unregistered metadata. */
static void test_field_names(void)
{
    static const char *const names[] = {"my_key", "Some::Key", "bad key",
                                        "info:id", "1st", "a::", "a::1"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        cfield pf[] = {{names[i], rep(UB_CRATE_INT, 7, true, false)}};
        const char *toks[] = {names[i]};
        layer_spec s = {.ver = V(0, 8, 0), .tname = "int", .prim = pf,
                        .nprim = 1, .toks = toks, .ntoks = 1};
        ub_layer *L = read_spec(&s);
        if (i < 2) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(L);
            CU_ASSERT_PTR_NOT_NULL(
                ub_fields_find(&L->root->children.v[0]->meta,
                               ub_intern_cstr(T, names[i])));
        } else {
            char want[80];
            snprintf(want, sizeof want,
                     "section FIELDS: a field is named '%s', which is not "
                     "an identifier",
                     names[i]);
            CU_ASSERT_PTR_NULL(L);
            CU_ASSERT(has_error(want));
        }
        ub_layer_free(L);
    }
}

/* Prim p's metadata field key, or NULL. */
static const ub_field *prim_field(const ub_layer *L, const char *key)
{
    return L && L->root->children.n == 1
               ? ub_fields_find(&L->root->children.v[0]->meta,
                                ub_intern_cstr(T, key))
               : NULL;
}

/* Metadata is held to the shape its text has (runtime/ub_metadef.h): a
 * value the usda reader would refuse there, or read as another value, is
 * damage naming the field; a typed field's value of another width or the
 * other kind of string is converted. */
static void test_metadata_shapes(void)
{
    const char *toks[] = {"displayName", "x", "assetInfo", "kind",
                          "myPaths", "customData", "weight", "displayUnit",
                          "mm", "parsec", "inherits", "connectionPaths",
                          "relocates", "apiSchemas", "variantSets", "a b",
                          ""};
    enum { DN = TOK0, X, AI, KIND, MYP, CD, WEIGHT, DU, MM, PARSEC, INH, CP,
           RELOC, API, VSETS, AB, EMPTY };
    struct {
        const char *field;
        uint64_t rep;
        bool on_attr;
        const char *error; /* NULL: read */
    } cases[] = {
        {"displayName", rep(UB_CRATE_INT, 7, true, false), false,
         "field 'displayName': expected a value of type string, found a "
         "value of type int"},
        {"displayName", rep(UB_CRATE_TOKEN, X, true, false), false, NULL},
        {"assetInfo", rep(UB_CRATE_FLOAT, 0, true, false), false,
         "field 'assetInfo': expected a dictionary, found a value of type "
         "float"},
        {"default", rep(UB_CRATE_INT, 7, true, false), false,
         "field 'default': 'default' has no place on a prim"},
        {"kind", rep(UB_CRATE_INT, 7, true, false), false,
         "field 'kind': expected a token, found a value of type int"},
        {"myPaths", rep(UB_CRATE_PATH_VECTOR, DATA, false, false), false,
         "field 'myPaths': a field usdbake does not know cannot hold a value "
         "of type path[]"},
        {"weight", rep(UB_CRATE_DOUBLE, 0x3fc00000u, true, false), true,
         NULL},
        {"displayUnit", rep(UB_CRATE_TOKEN, MM, true, false), true, NULL},
        {"displayUnit", rep(UB_CRATE_TOKEN, PARSEC, true, false), true,
         "field 'displayUnit': expected a display unit, found a value of "
         "type token"},
        {"customData", rep(UB_CRATE_DICTIONARY, DATA + 16, false, false),
         false,
         "field 'customData': the dictionary's value 'x' is a list op, "
         "which no dictionary holds"},
        /* the text's inherits are prim paths (the usda reader refuses
         * `inherits = </P.a>`) */
        {"inherits", rep(UB_CRATE_PATH_LISTOP, DATA + 45, false, false),
         false,
         "field 'inherits': expected absolute prim paths without variant "
         "selections, found a list op of path"},
        {"inherits", rep(UB_CRATE_PATH_LISTOP, DATA + 58, false, false),
         false, NULL},
        /* connections and targets are absolute prim or property paths */
        {"connectionPaths", rep(UB_CRATE_PATH_LISTOP, DATA + 71, false,
                                false),
         true,
         "</> is not an absolute prim or property path without variant "
         "selections, as a target or connection path must be"},
        {"connectionPaths", rep(UB_CRATE_PATH_LISTOP, DATA + 45, false,
                                false),
         true, NULL},
        /* relocates pair prim paths */
        {"relocates", rep(UB_CRATE_RELOCATES, DATA + 84, false, false), false,
         "field 'relocates': expected pairs of absolute prim paths (a target "
         "may be <>), found a value of type path[]"},
        {"relocates", rep(UB_CRATE_RELOCATES, DATA + 100, false, false),
         false, NULL},
        /* a list op's part repeats no item */
        {"apiSchemas", rep(UB_CRATE_TOKEN_LISTOP, DATA + 116, false, false),
         false, "field 'apiSchemas': a part of the list op holds an item "
                "twice"},
        /* variant set names: the text's, and no "" where a writer makes
         * path elements of them */
        {"variantSets", rep(UB_CRATE_TOKEN_LISTOP, DATA + 133, false,
                            false),
         false, "field 'variantSets': expected variant set names"},
        {"variantSets", rep(UB_CRATE_TOKEN_LISTOP, DATA + 146, false,
                            false),
         false, "\"\" is not a valid variant set name"},
        {"variantSets", rep(UB_CRATE_TOKEN_LISTOP, DATA + 159, false,
                            false),
         false, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bb d = {0};
        u64(&d, 2); /* [</P>, </P.a>], at DATA */
        u32(&d, 1);
        u32(&d, 2);
        u64(&d, 1); /* {x: an empty IntListOp}, at DATA + 16 */
        u32(&d, X);
        u64(&d, 8);
        u64(&d, rep(UB_CRATE_INT_LISTOP, DATA + 44, false, false));
        u8(&d, 0); /* the list op, at DATA + 44 */
        /* explicit [</P.a>] at DATA + 45, [</P>] at DATA + 58, [</>] at
         * DATA + 71 */
        for (uint32_t path = 2; path <= 2; path--) {
            u8(&d, UB_CRATE_LISTOP_IS_EXPLICIT |
                       UB_CRATE_LISTOP_HAS_EXPLICIT);
            u64(&d, 1);
            u32(&d, path);
        }
        /* relocates [</P.a>: </P>] at DATA + 84, [</P>: </P>] at
         * DATA + 100 */
        for (uint32_t from = 2; from >= 1; from--) {
            u64(&d, 1);
            u32(&d, from);
            u32(&d, 1);
        }
        /* explicit [x, x] at DATA + 116, a token list op */
        u8(&d, UB_CRATE_LISTOP_IS_EXPLICIT | UB_CRATE_LISTOP_HAS_EXPLICIT);
        u64(&d, 2);
        u32(&d, X);
        u32(&d, X);
        /* explicit ["a b"] at DATA + 133, [""] at DATA + 146, [x] at
         * DATA + 159 */
        static const uint32_t vset_names[] = {AB, EMPTY, X};
        for (size_t k = 0; k < 3; k++) {
            u8(&d,
               UB_CRATE_LISTOP_IS_EXPLICIT | UB_CRATE_LISTOP_HAS_EXPLICIT);
            u64(&d, 1);
            u32(&d, vset_names[k]);
        }
        cfield f[] = {{cases[i].field, cases[i].rep}};
        layer_spec sp = {.ver = V(0, 8, 0), .tname = "float",
                         .toks = toks, .ntoks = sizeof toks / sizeof *toks,
                         .data = d};
        if (cases[i].on_attr) {
            sp.attr = f;
            sp.nattr = 1;
        } else {
            sp.prim = f;
            sp.nprim = 1;
        }
        ub_layer *L = read_spec(&sp);
        if (cases[i].error) {
            if (!has_error(cases[i].error))
                fprintf(stderr, "\ncase %zu: %s\n", i,
                        ub_diags_count(D) ? ub_diags_at(D, 0)->message : "");
            CU_ASSERT_PTR_NULL(L);
            CU_ASSERT(has_error(cases[i].error));
            continue;
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(L);
        const ub_field *got;
        if (strcmp(cases[i].field, "connectionPaths") == 0) {
            const ub_prop *a = attr_of(L);
            CU_ASSERT_PTR_NOT_NULL_FATAL(a);
            const ub_value *l = ub_listop_get(
                ub_prop_connections(a)->u.listop, UB_LO_EXPLICIT);
            CU_ASSERT_STRING_EQUAL(ub_value_str(l, 0), "/P.a");
            ub_layer_free(L);
            continue;
        }
        if (cases[i].on_attr) {
            const ub_prop *a = attr_of(L);
            CU_ASSERT_PTR_NOT_NULL_FATAL(a);
            got = ub_fields_find(ub_prop_meta(a),
                                 ub_intern_cstr(T, cases[i].field));
        } else {
            got = prim_field(L, cases[i].field);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (strcmp(cases[i].field, "displayName") == 0) {
            /* a token where the field is a string: read as a string */
            CU_ASSERT_EQUAL(got->value.type_id, UB_TY_STRING);
            CU_ASSERT_STRING_EQUAL(ub_value_str(&got->value, 0), "x");
        } else if (strcmp(cases[i].field, "variantSets") == 0) {
            const ub_value *l =
                ub_listop_get(got->value.u.listop, UB_LO_EXPLICIT);
            CU_ASSERT_STRING_EQUAL(ub_value_str(l, 0), "x");
        } else if (strcmp(cases[i].field, "relocates") == 0) {
            CU_ASSERT_EQUAL(got->value.count, 2);
            CU_ASSERT_STRING_EQUAL(ub_value_str(&got->value, 0), "/P");
        } else if (strcmp(cases[i].field, "inherits") == 0) {
            CU_ASSERT_EQUAL(got->value.kind, UB_V_LISTOP);
            const ub_value *l =
                ub_listop_get(got->value.u.listop, UB_LO_EXPLICIT);
            CU_ASSERT_PTR_NOT_NULL_FATAL(l);
            CU_ASSERT_STRING_EQUAL(ub_value_str(l, 0), "/P");
        } else if (strcmp(cases[i].field, "weight") == 0) {
            /* a double where the field is a float: read as a float */
            CU_ASSERT_EQUAL(got->value.type_id, UB_TY_FLOAT);
            CU_ASSERT_EQUAL(ub_value_get_double(&got->value, 0, 0), 1.5);
        } else {
            CU_ASSERT_STRING_EQUAL(ub_value_str(&got->value, 0), "mm");
        }
        ub_layer_free(L);
    }
}

/* A layer's framesPerSecond is greater than 0, as the usda reader holds
 * it (OpenUSD's text reader refuses another). */
static void test_frames_per_second(void)
{
    const char *toks[] = {"framesPerSecond"};
    static const uint32_t bits[] = {0x41c00000u /* 24 */, 0, 0xbf800000u,
                                    0x7fc00000u /* NaN */};
    for (size_t i = 0; i < 4; i++) {
        cfield f[] = {{"framesPerSecond",
                       rep(UB_CRATE_DOUBLE, bits[i], true, false)}};
        layer_spec sp = {.ver = V(0, 8, 0), .tname = "float", .toks = toks,
                         .ntoks = 1, .root = f, .nroot = 1};
        ub_layer *L = read_spec(&sp);
        if (i == 0) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(L);
            const ub_field *fps = ub_fields_find(
                &L->meta, ub_intern_cstr(T, "framesPerSecond"));
            CU_ASSERT_PTR_NOT_NULL_FATAL(fps);
            CU_ASSERT_EQUAL(ub_value_get_double(&fps->value, 0, 0), 24.0);
        } else {
            CU_ASSERT_PTR_NULL(L);
            CU_ASSERT(has_error("field 'framesPerSecond': it must be "
                                "greater than 0"));
        }
        ub_layer_free(L);
    }
}

/* A reference's path is a prim path, and its asset path (as a
 * sublayer's) one the text can say; a pathExpression is an expression,
 * read as OpenUSD writes it back. */
static void test_paths_in_values(void)
{
    const char *toks[] = {"references", "./r.usda", "/A//b", "/A/ b (",
                          "/A/B    /C"};
    for (uint32_t path = 1; path <= 3; path++) {
        bb d = {0};
        u8(&d, UB_CRATE_LISTOP_IS_EXPLICIT | UB_CRATE_LISTOP_HAS_EXPLICIT);
        u64(&d, 1);
        u32(&d, TOK0 + 1);
        u32(&d, path == 2 ? 2 : 1); /* </P>, </P.a>, </P> */
        f64(&d, 0);
        f64(&d, path == 3 ? NAN : 1); /* a scale no text says */
        u64(&d, 0);
        cfield pf[] = {{"references", rep(UB_CRATE_REFERENCE_LISTOP, DATA,
                                          false, false)}};
        layer_spec s = {.ver = V(0, 8, 0), .tname = "int", .prim = pf,
                        .nprim = 1, .toks = toks, .ntoks = 5, .data = d};
        ub_layer *L = read_spec(&s);
        if (path == 1) {
            CU_ASSERT_PTR_NOT_NULL(prim_field(L, "references"));
        } else {
            CU_ASSERT_PTR_NULL(L);
            CU_ASSERT(has_error(path == 2
                                    ? "field 'references': </P.a> is not a "
                                      "prim path, as a reference's path "
                                      "must be"
                                    : "field 'references': a layer offset "
                                      "or scale is not a number (NaN)"));
        }
        ub_layer_free(L);
    }
    /* asset paths with a control character, as a reference's and as a
     * sublayer (a string vector, as OpenUSD stores subLayers) */
    for (int sub = 0; sub < 2; sub++) {
        const char *atoks[] = {"references", "a\001.usda", "subLayers"};
        bb d = {0};
        uint64_t at = DATA;
        if (sub) {
            u64(&d, 1);
            u32(&d, TOK0 + 1);
        } else {
            u8(&d, UB_CRATE_LISTOP_IS_EXPLICIT |
                       UB_CRATE_LISTOP_HAS_EXPLICIT);
            u64(&d, 1);
            u32(&d, TOK0 + 1);
            u32(&d, 1);
            f64(&d, 0);
            f64(&d, 1);
            u64(&d, 0);
        }
        cfield f[] = {{sub ? "subLayers" : "references",
                       sub ? rep(UB_CRATE_STRING_VECTOR, at, false, false)
                           : rep(UB_CRATE_REFERENCE_LISTOP, at, false,
                                 false)}};
        layer_spec s = {.ver = V(0, 8, 0), .tname = "int", .toks = atoks,
                        .ntoks = 3, .data = d};
        if (sub) {
            s.root = f;
            s.nroot = 1;
        } else {
            s.prim = f;
            s.nprim = 1;
        }
        ub_layer *L = read_spec(&s);
        CU_ASSERT_PTR_NULL(L);
        CU_ASSERT(has_error(sub ? "field 'subLayers': asset paths may not "
                                  "contain control characters"
                                : "field 'references': asset paths may not "
                                  "contain control characters"));
        ub_layer_free(L);
    }
    /* a sublayer's offset that is not a number */
    {
        const char *stoks[] = {"subLayers", "subLayerOffsets", "./s.usda"};
        bb d = {0};
        u64(&d, 1); /* ["./s.usda"], at DATA */
        u32(&d, TOK0 + 2);
        u64(&d, 1); /* [(offset NaN, scale 1)], at DATA + 12 */
        f64(&d, NAN);
        f64(&d, 1);
        cfield rf[] = {
            {"subLayers", rep(UB_CRATE_STRING_VECTOR, DATA, false, false)},
            {"subLayerOffsets", rep(UB_CRATE_LAYER_OFFSET_VECTOR, DATA + 12,
                                    false, false)}};
        layer_spec s = {.ver = V(0, 8, 0), .tname = "int", .root = rf,
                        .nroot = 2, .toks = stoks, .ntoks = 3, .data = d};
        ub_layer *L = read_spec(&s);
        CU_ASSERT_PTR_NULL(L);
        CU_ASSERT(has_error("field 'subLayerOffsets': a layer offset or "
                            "scale is not a number (NaN)"));
        ub_layer_free(L);
    }
    const char *want[] = {"/A//b", NULL, "/A/B /C"};
    for (uint32_t i = 0; i < 3; i++) {
        bb d = {0};
        u32(&d, TOK0 + 2 + i);
        ub_layer *L = with_default(V(0, 8, 0), "pathExpression",
                                   rep(UB_CRATE_PATH_EXPRESSION, DATA, false,
                                       false),
                                   &d, toks, 5);
        if (want[i]) {
            const ub_prop *a = attr_of(L);
            CU_ASSERT_PTR_NOT_NULL_FATAL(a);
            CU_ASSERT_STRING_EQUAL(ub_value_str(&a->default_value, 0),
                                   want[i]);
        } else {
            CU_ASSERT_PTR_NULL(L);
            CU_ASSERT(has_error("invalid pathExpression \"/A/ b (\""));
        }
        ub_layer_free(L);
    }
}

static void test_unregistered_listops(void)
{
    const char *toks[] = {"k", "x", "1, 2", "e"};
    bb d = {0};
    u8(&d, UB_CRATE_LISTOP_HAS_PREPENDED);
    u64(&d, 2);
    u64(&d, 8);
    u64(&d, rep(UB_CRATE_STRING, TOK0 + 1, true, false));
    u64(&d, 8);
    u64(&d, rep(UB_CRATE_STRING, TOK0 + 2, true, false));
    uint64_t wrap = DATA + d.n;
    u64(&d, 8);
    u64(&d, rep(UB_CRATE_UNREGISTERED_VALUE_LISTOP, DATA, false, false));
    /* an explicit one with no items (the header alone) */
    uint64_t ex = DATA + d.n;
    u8(&d, UB_CRATE_LISTOP_IS_EXPLICIT);
    cfield pf[] = {
        {"k", rep(UB_CRATE_UNREGISTERED_VALUE, wrap, false, false)},
        {"e", rep(UB_CRATE_UNREGISTERED_VALUE_LISTOP, ex, false, false)},
    };
    layer_spec s = {.ver = V(0, 8, 0), .tname = "int", .prim = pf,
                    .nprim = 2, .toks = toks, .ntoks = 4, .data = d};
    ub_layer *L = read_spec(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    const ub_prim *p = L->root->children.v[0];
    const ub_field *k = ub_fields_find(&p->meta, ub_intern_cstr(T, "k"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_FATAL(k->value.kind == UB_V_LISTOP);
    CU_ASSERT_PTR_NULL(ub_value_type(&k->value));
    const ub_listop *lo = k->value.u.listop;
    CU_ASSERT(!lo->is_explicit && lo->has[UB_LO_PREPEND] &&
              !lo->has[UB_LO_APPEND]);
    const ub_value *pre = ub_listop_get(lo, UB_LO_PREPEND);
    CU_ASSERT_FATAL(pre->kind == UB_V_UNTYPED &&
                    pre->u.untyped->kind == UB_U_LIST);
    CU_ASSERT_EQUAL_FATAL(pre->u.untyped->n, 2);
    CU_ASSERT_STRING_EQUAL(pre->u.untyped->child[0].text, "x");
    CU_ASSERT_STRING_EQUAL(pre->u.untyped->child[1].text, "1, 2");
    const ub_field *e = ub_fields_find(&p->meta, ub_intern_cstr(T, "e"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_FATAL(e->value.kind == UB_V_LISTOP);
    CU_ASSERT(e->value.u.listop->is_explicit &&
              e->value.u.listop->has[UB_LO_EXPLICIT]);
    const ub_value *ev = ub_listop_get(e->value.u.listop, UB_LO_EXPLICIT);
    CU_ASSERT(ev->kind == UB_V_UNTYPED && ev->u.untyped->n == 0);
    ub_layer_free(L);
    /* an item that is not text (an int) is refused, named */
    d = (bb){0};
    u8(&d, UB_CRATE_LISTOP_HAS_DELETED);
    u64(&d, 1);
    u64(&d, 8);
    u64(&d, rep(UB_CRATE_INT, 5, true, false));
    cfield bad[] = {
        {"k", rep(UB_CRATE_UNREGISTERED_VALUE_LISTOP, DATA, false, false)}};
    s = (layer_spec){.ver = V(0, 8, 0), .tname = "int", .prim = bad,
                     .nprim = 1, .toks = toks, .ntoks = 4, .data = d};
    L = read_spec(&s);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("spec </P> field 'k': an item of a list op of "
                        "unregistered values is not text"));
    ub_layer_free(L);
}

/* --- damage ---------------------------------------------------------------- */

static ub_layer *read_bytes(unsigned char *b, size_t n)
{
    ub_diags_free(D);
    D = ub_diags_new();
    return ub_crate_read(b, n, "t.usdc", T, D);
}

static void test_damage(void)
{
    layer_spec s = {.ver = V(0, 8, 0), .tname = "int"};
    size_t len;
    unsigned char *b = build(&s, &len);
    ub_layer *L = read_bytes(b, len);
    CU_ASSERT_PTR_NOT_NULL(L);
    ub_layer_free(L);
    /* truncated: the table of contents is past the end */
    CU_ASSERT_PTR_NULL(read_bytes(b, len - 40));
    CU_ASSERT(has_error("table of contents"));
    CU_ASSERT_PTR_NULL(read_bytes(b, 50));
    CU_ASSERT(has_error("bootstrap header"));
    /* a section that lies outside the file */
    uint64_t toc;
    memcpy(&toc, b + 16, 8);
    unsigned char *c = malloc(len);
    memcpy(c, b, len);
    uint64_t huge = 1ull << 40;
    memcpy(c + toc + 8 + 16, &huge, 8); /* TOKENS' start */
    CU_ASSERT_PTR_NULL(read_bytes(c, len));
    CU_ASSERT(has_error("section TOKENS: the section"));
    /* a section count beyond the file */
    memcpy(c, b, len);
    memcpy(c + toc, &huge, 8);
    CU_ASSERT_PTR_NULL(read_bytes(c, len));
    CU_ASSERT(has_error("section count claims"));
    /* the token text decompresses to another size than it claims */
    memcpy(c, b, len);
    uint64_t tstart;
    memcpy(&tstart, c + toc + 8 + 16, 8);
    uint64_t nbytes;
    memcpy(&nbytes, c + tstart + 8, 8);
    nbytes += 3;
    memcpy(c + tstart + 8, &nbytes, 8);
    CU_ASSERT_PTR_NULL(read_bytes(c, len));
    CU_ASSERT(has_error("section TOKENS: decompresses to the wrong size"));
    free(c);
    free(b);

    /* a value offset outside the file */
    L = with_default(V(0, 8, 0), "double",
                     rep(UB_CRATE_DOUBLE, 1ull << 40, false, false), NULL,
                     NULL, 0);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("spec </P.a> field 'default': offset"));
    /* an array longer than the file */
    bb d = {0};
    u64(&d, 1ull << 33);
    L = with_default(V(0, 8, 0), "float[]",
                     rep(UB_CRATE_FLOAT, DATA, false, true), &d, NULL, 0);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("elements"));
    /* a token index out of range */
    L = with_default(V(0, 8, 0), "token",
                     rep(UB_CRATE_TOKEN, 5000, true, false), NULL, NULL, 0);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("token index 5000 out of range"));
    /* an unknown value type */
    L = with_default(V(0, 8, 0), "int", rep(99, 0, false, false), NULL, NULL,
                     0);
    CU_ASSERT_PTR_NULL(L);
    CU_ASSERT(has_error("unknown value type 99"));
}

/* Damaged FIELDS, FIELDSETS and SPECS, compressed and plain: refused,
 * naming the section and what is wrong. */
static void test_structure_damage(void)
{
    static const uint32_t vers[] = {V(0, 8, 0), V(0, 3, 0)};
    /* field sets: root {0} at 0, /P's at 2, /P.a's at 6 */
    static const uint32_t bad_type[3][3] = {
        {NO, NO, NO}, {NO, NO, NO}, {NO, NO, 99}};
    static const uint32_t no_path[3][3] = {
        {NO, NO, 3}, {NO, NO, NO}, {NO, NO, NO}};
    static const uint32_t mid_set[3][3] = {
        {NO, NO, NO}, {NO, NO, 7}, {NO, NO, NO}};
    static const uint32_t twice[3][3] = {
        {NO, NO, 1}, {NO, NO, NO}, {NO, NO, NO}};
    for (size_t v = 0; v < sizeof vers / sizeof *vers; v++) {
        layer_spec s = {.ver = vers[v], .tname = "int", .field0_tok = 999};
        CU_ASSERT_PTR_NULL(read_spec(&s));
        CU_ASSERT(has_error("section FIELDS: field 0 is named by token 999 "
                            "of 11"));
        s = (layer_spec){.ver = vers[v], .tname = "int", .fset1 = 77};
        CU_ASSERT_PTR_NULL(read_spec(&s));
        CU_ASSERT(has_error("section FIELDSETS: entry 1 names field 77 of "
                            "5"));
        s = (layer_spec){.ver = vers[v], .tname = "int", .specs = bad_type};
        CU_ASSERT_PTR_NULL(read_spec(&s));
        CU_ASSERT(has_error("section SPECS: spec 2 (</P.a>) has spec type "
                            "99, which is none"));
        s = (layer_spec){.ver = vers[v], .tname = "int", .specs = no_path};
        CU_ASSERT_PTR_NULL(read_spec(&s));
        CU_ASSERT(has_error("section SPECS: spec 2 has no path"));
        s = (layer_spec){.ver = vers[v], .tname = "int", .specs = mid_set};
        CU_ASSERT_PTR_NULL(read_spec(&s));
        CU_ASSERT(has_error("section SPECS: spec 2 (</P.a>) names a field "
                            "set that does not start at index 7"));
        s = (layer_spec){.ver = vers[v], .tname = "int", .specs = twice};
        CU_ASSERT_PTR_NULL(read_spec(&s));
        CU_ASSERT(has_error("section SPECS: two specs for </P>"));
        /* and the same layer undamaged reads */
        s = (layer_spec){.ver = vers[v], .tname = "int"};
        ub_layer *L = read_spec(&s);
        CU_ASSERT_PTR_NOT_NULL(attr_of(L));
        ub_layer_free(L);
    }
}

/* A path named what no path may hold is damage, as OpenUSD finds it
 * ("invalid prim name"): it would print as another path, or as none
 * (found by fuzz_crate, which read </World/> back as </World>). */
static void test_path_names(void)
{
    static const uint32_t vers[] = {V(0, 8, 0), V(0, 3, 0)};
    static const char *const odd[] = {"a b", "a:b", "1a", "[/A]", "{v=a}",
                                      ".x", "./world.usda", "[A]"};
    for (size_t v = 0; v < sizeof vers / sizeof *vers; v++) {
        /* {prim element, property element, the error}; the misplaced
         * ones are elements the root cannot have (fuzz_crate's
         * </World./world.usda> wrote back as a property "/world.usda") */
        static const char *const refused[][3] = {
            {"", NULL, "section PATHS: path 1 is named '', which is not a "
                       "valid prim name"},
            {"a:b", NULL, "path 1 is named 'a:b', which is not a valid "
                          "prim name"},
            {NULL, "1a", "path 2 is named '1a', which is not a valid "
                         "property name"},
            {"[/A]", NULL, "('[/A]', a target) is under a path that cannot"},
            {"{v=a}", NULL, "('{v=a}', a variant selection) is under a path"},
            {".x", NULL, "('.x', a relational attribute name) is under a "
                         "path"},
            {"./world.usda", NULL, "path 1 is named './world.usda', which "
                                   "is not a valid relational attribute "
                                   "name"},
            {"[A]", NULL, "path 1 is named '[A]', which is not a valid "
                          "target"}};
        layer_spec s = {.ver = vers[v], .tname = "int", .toks = odd,
                        .ntoks = 8};
        for (size_t r = 0; r < sizeof refused / sizeof *refused; r++) {
            s.prim_elem = refused[r][0];
            s.prop_elem = refused[r][1];
            CU_ASSERT_PTR_NULL(read_spec(&s));
            CU_ASSERT(has_error(refused[r][2]));
        }
        s.prim_elem = NULL;
        /* a namespaced property name is one */
        s.prop_elem = "a:b";
        ub_layer *L = read_spec(&s);
        CU_ASSERT_PTR_NOT_NULL(L);
        ub_layer_free(L);
    }
}

/* Path jumps that loop or leave the table (compressed PATHS). */
static void test_path_damage(void)
{
    layer_spec s = {.ver = V(0, 8, 0), .tname = "int"};
    size_t len;
    unsigned char *b = build(&s, &len);
    /* find the encoded jumps {-1, -1, -2} and put in ones whose root has
     * a sibling 7 paths ahead, past the last */
    int32_t good[3] = {-1, -1, -2}, loop[3] = {7, -1, -2};
    bb ge = {0}, gc = {0}, le = {0}, lc = {0};
    encode_ints(&ge, good, 3, 4);
    lz4(&gc, ge.d, ge.n);
    encode_ints(&le, loop, 3, 4);
    lz4(&lc, le.d, le.n);
    unsigned char *at = NULL;
    for (size_t i = 0; i + gc.n <= len; i++)
        if (memcmp(b + i, gc.d, gc.n) == 0)
            at = b + i;
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    CU_ASSERT_EQUAL_FATAL(gc.n, lc.n);
    memcpy(at, lc.d, lc.n);
    CU_ASSERT_PTR_NULL(read_bytes(b, len));
    CU_ASSERT(has_error("section PATHS: a jump leads past the last path"));
    free(ge.d);
    free(gc.d);
    free(le.d);
    free(lc.d);
    free(b);
}

int main(void)
{
    T = ub_strtab_new();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("crate", NULL, NULL);
    CU_add_test(s, "LZ4 framing: one block, chunks, wrong sizes",
                test_lz4_framing);
    CU_add_test(s, "integer coding: codes, widths, bounds", test_int_coding);
    CU_add_test(s, "sections in every version 24.08 reads", test_versions);
    CU_add_test(s, "inlined values", test_inlined_values);
    CU_add_test(s, "stored values", test_stored_values);
    CU_add_test(s, "compressed int and float arrays", test_compressed_arrays);
    CU_add_test(s, "time samples and dictionaries", test_samples_and_dicts);
    CU_add_test(s, "list ops, references, old payloads", test_list_ops);
    CU_add_test(s, "list ops of unregistered values",
                test_unregistered_listops);
    CU_add_test(s, "permission values", test_permission);
    CU_add_test(s, "a layer's framesPerSecond is greater than 0",
                test_frames_per_second);
    CU_add_test(s, "metadata held to the shape its text has",
                test_metadata_shapes);
    CU_add_test(s, "reference and asset paths, path expressions",
                test_paths_in_values);
    CU_add_test(s, "field names the text cannot say are damage",
                test_field_names);
    CU_add_test(s, "type names the text cannot say are damage",
                test_type_names);
    CU_add_test(s, "values of another type than their attribute's",
                test_value_types);
    CU_add_test(s, "required fields left out: their fallbacks",
                test_required_fallbacks);
    CU_add_test(s, "a list of names shared with a value",
                test_names_shared_with_a_value);
    CU_add_test(s, "damage is refused and named", test_damage);
    CU_add_test(s, "path jumps out of range", test_path_damage);
    CU_add_test(s, "path names no path may hold", test_path_names);
    CU_add_test(s, "damaged fields, field sets and specs",
                test_structure_damage);
    unsigned failed = ub_test_run_all();
    ub_diags_free(D);
    ub_strtab_free(T);
    return failed ? 1 : 0;
}
