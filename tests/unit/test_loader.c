/* CUnit tests for ub_loader: resolution, search paths, one layer per
 * file, content sniffing, located errors. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ub_loader.h"
#include "ub_usdc_write.h"
#include "zip_fixture.h"
#include "ub_test.h"

static char dir[256];

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

static const char *path(const char *rel)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, rel);
    return p[k];
}

static int setup(void)
{
    snprintf(dir, sizeof dir, "%s/ub_test_loader.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    char p[512];
    snprintf(p, sizeof p, "%s/lib", dir);
    mkdir(p, 0777);
    snprintf(p, sizeof p, "%s/sub", dir);
    mkdir(p, 0777);
    return 0;
}

static int teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}

static void test_normalize(void)
{
    char a[] = "a/./b//c/../d.usda", b[] = "/x/../../y", c[] = "../a/../../b",
         d[] = "./", e[] = "/";
    ub_path_normalize(a);
    ub_path_normalize(b);
    ub_path_normalize(c);
    ub_path_normalize(d);
    ub_path_normalize(e);
    CU_ASSERT_STRING_EQUAL(a, "a/b/d.usda");
    CU_ASSERT_STRING_EQUAL(b, "/y");
    CU_ASSERT_STRING_EQUAL(c, "../../b");
    CU_ASSERT_STRING_EQUAL(d, ".");
    CU_ASSERT_STRING_EQUAL(e, "/");
}

/* A loader (with its table and diagnostics) that opened dir/root.usda. */
static ub_loader *open_root(ub_strtab **t, ub_diags **d, ub_layer **root)
{
    *t = ub_strtab_new();
    *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(*t, *d);
    *root = ub_loader_open(ld, path("root.usda"), NULL, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(*root);
    return ld;
}

static void test_resolve_and_search(void)
{
    put("root.usda", "#usda 1.0\n");
    put("sub/near.usda", "#usda 1.0\n");
    put("lib/far.usda", "#usda 1.0\n");
    ub_strtab *t;
    ub_diags *d;
    ub_layer *root;
    ub_loader *ld = open_root(&t, &d, &root);
    ub_load_status rs;
    /* relative to the naming layer */
    CU_ASSERT_STRING_EQUAL(
        ub_loader_resolve(ld, "./sub/near.usda", root, &rs),
        path("sub/near.usda"));
    CU_ASSERT_STRING_EQUAL(
        ub_loader_resolve(ld, "sub/x/../near.usda", root, &rs),
        path("sub/near.usda"));
    /* search paths only after a miss, and never for ./ or ../ paths */
    CU_ASSERT_PTR_NULL(ub_loader_resolve(ld, "far.usda", root, &rs));
    CU_ASSERT_EQUAL(rs, UB_LOAD_MISSING);
    CU_ASSERT_EQUAL(ub_loader_add_search_path(ld, path("lib")), 0);
    CU_ASSERT_STRING_EQUAL(ub_loader_resolve(ld, "far.usda", root, &rs),
                           path("lib/far.usda"));
    CU_ASSERT_PTR_NULL(ub_loader_resolve(ld, "./far.usda", root, &rs));
    CU_ASSERT_EQUAL(ub_diags_count(d), 0);
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}

static void test_read_once(void)
{
    put("root.usda", "#usda 1.0\n");
    put("a.usda", "#usda 1.0\n");
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(t, d);
    ub_layer *root = ub_loader_open(ld, path("root.usda"), NULL,
                                    (ub_loc){0});
    ub_layer *a1 = ub_loader_open(ld, "./a.usda", root, (ub_loc){0});
    ub_layer *a2 = ub_loader_open(ld, path("a.usda"), root, (ub_loc){0});
    ub_layer *a3 = ub_loader_open(ld, "sub/../a.usda", root, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(a1);
    CU_ASSERT_PTR_EQUAL(a1, a2);
    CU_ASSERT_PTR_EQUAL(a1, a3);
    CU_ASSERT_EQUAL(ub_loader_count(ld), 2);
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}

/* Whether this process maps file p (Linux: /proc/self/maps); -1 when
 * that cannot be told. */
static int maps_file(const char *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t n = strlen(line), k = strlen(p);
        found = n >= k && strcmp(line + n - k, p) == 0;
    }
    fclose(f);
    return found;
}

/* A crate layer copies what it needs: its file is not kept mapped once
 * read (a text layer's is, to quote lines). */
static void test_crate_file_not_kept(void)
{
    /* both files past the size the loader maps rather than reads: an
     * array of 300,000 floats (1.2 MB in crate) */
    ub_buf txt;
    ub_buf_init(&txt);
    ub_buf_puts(&txt, "#usda 1.0\ndef \"A\"\n{\n    float[] x = [");
    for (int i = 0; i < 300000; i++) {
        char n[32];
        snprintf(n, sizeof n, "%s%d.5", i ? ", " : "", i);
        ub_buf_puts(&txt, n);
    }
    ub_buf_puts(&txt, "]\n}\n");
    ub_buf_putc(&txt, '\0');
    CU_ASSERT_FATAL(!txt.failed);
    put("held.usda", txt.data);
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_layer *l = ub_parse_usda(t, "held.usda", txt.data, txt.len - 1, d);
    ub_buf_free(&txt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ub_buf b;
    ub_buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(ub_usdc_write(l, &b, d), 0);
    ub_layer_free(l);
    CU_ASSERT(b.len > (1u << 20));
    FILE *f = fopen(path("crate.usdc"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(b.data, 1, b.len, f);
    fclose(f);
    ub_buf_free(&b);
    char crate[512], text[512];
    snprintf(crate, sizeof crate, "%s", path("crate.usdc"));
    snprintf(text, sizeof text, "%s", path("held.usda"));
    ub_loader *ld = ub_loader_new(t, d);
    ub_layer *c = ub_loader_open(ld, crate, NULL, (ub_loc){0});
    ub_layer *u = ub_loader_open(ld, text, NULL, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL(c);
    CU_ASSERT_PTR_NOT_NULL(u);
    CU_ASSERT_EQUAL(ub_diags_errors(d), 0);
    int held = maps_file(text);
    if (held >= 0) {
        CU_ASSERT_EQUAL(held, 1); /* (else the check below proves nothing) */
        CU_ASSERT_EQUAL(maps_file(crate), 0);
    }
    CU_ASSERT_EQUAL(c->root->children.n, 1);
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}

/* Layers a pass reads for a while: listed where first expected, freed
 * when given back, read again when opened again; a layer also opened for
 * good is never freed. */
static void test_transient(void)
{
    put("root.usda", "#usda 1.0\n");
    put("c1.usda", "#usda 1.0\ndef \"A\"\n{\n}\n");
    put("c2.usda", "#usda 1.0\ndef \"B\"\n{\n}\n");
    put("bad.usda", "#usda 1.0\ndef \"A\" {\n");
    ub_strtab *t;
    ub_diags *d;
    ub_layer *root;
    ub_loader *ld = open_root(&t, &d, &root);
    CU_ASSERT_EQUAL(ub_loader_expect(ld, "./c1.usda", root), 0);
    CU_ASSERT_EQUAL(ub_loader_count(ld), 2);
    CU_ASSERT_PTR_NULL(ub_loader_path_at(ld, 1)); /* not read yet */
    ub_layer *c1 = ub_loader_open_transient(ld, "./c1.usda", root,
                                            (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(c1);
    CU_ASSERT_EQUAL(c1->root->children.n, 1);
    CU_ASSERT_PTR_EQUAL(ub_loader_at(ld, 1), c1);
    ub_loader_release(ld, c1);
    CU_ASSERT_PTR_NULL(ub_loader_at(ld, 1));
    CU_ASSERT_PTR_NOT_NULL_FATAL(ub_loader_path_at(ld, 1));
    CU_ASSERT_PTR_NOT_NULL(strstr(ub_loader_path_at(ld, 1), "c1.usda"));
    c1 = ub_loader_open_transient(ld, "./c1.usda", root, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(c1);
    CU_ASSERT_STRING_EQUAL(c1->root->children.v[0]->name, "A");
    ub_loader_release(ld, c1);
    CU_ASSERT_EQUAL(ub_loader_count(ld), 2);
    /* opened for good as well: release leaves it */
    ub_layer *c2 = ub_loader_open_transient(ld, "./c2.usda", root,
                                            (ub_loc){0});
    CU_ASSERT_PTR_EQUAL(ub_loader_open(ld, "./c2.usda", root, (ub_loc){0}),
                        c2);
    ub_loader_release(ld, c2);
    CU_ASSERT_PTR_EQUAL(ub_loader_at(ld, 2), c2);
    /* a broken layer: one error, however often it is asked for */
    CU_ASSERT_PTR_NULL(
        ub_loader_open_transient(ld, "./bad.usda", root, (ub_loc){0}));
    size_t errors = ub_diags_errors(d);
    CU_ASSERT(errors > 0);
    CU_ASSERT_PTR_NULL(
        ub_loader_open_transient(ld, "./bad.usda", root, (ub_loc){0}));
    CU_ASSERT_EQUAL(ub_diags_errors(d), errors);
    CU_ASSERT_PTR_NULL(ub_loader_path_at(ld, 3));
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}

static void test_errors(void)
{
    put("root.usda", "#usda 1.0\n(\n    subLayers = [@gone.usda@]\n)\n");
    put("crate.usd", "PXR-USDC\x01\x02\x03");
    put("text.usd", "#usda 1.0\ndef \"T\"\n{\n}\n");
    ub_strtab *t;
    ub_diags *d;
    ub_layer *root;
    ub_loader *ld = open_root(&t, &d, &root);
    CU_ASSERT_EQUAL_FATAL(root->n_sublayers, 1);
    /* missing: located where it is named, the line quoted */
    CU_ASSERT_PTR_NULL(ub_loader_open(ld, root->sublayers[0].asset, root,
                                      ub_layer_loc(root, root->sublayers[0].loc)));
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(d), 1);
    const ub_diag *m = ub_diags_at(d, 0);
    CU_ASSERT_EQUAL(m->severity, UB_ERROR);
    CU_ASSERT_EQUAL(m->loc.line, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(m->message, "gone.usda"));
    CU_ASSERT(m->line_text && strstr(m->line_text, "@gone.usda@"));
    /* crate by content: this one is truncated, and the crate reader
     * says so (tests/crate.test reads whole ones) */
    CU_ASSERT_PTR_NULL(ub_loader_open(ld, "crate.usd", root, (ub_loc){0}));
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(d), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(ub_diags_at(d, 1)->message,
                                  "damaged usdc (crate) file: bootstrap "
                                  "header"));
    /* a text .usd is read as text */
    ub_layer *txt = ub_loader_open(ld, "text.usd", root, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL(txt);
    if (txt)
        CU_ASSERT_EQUAL(txt->root->children.n, 1);
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
}


/* A loader with its string table and diagnostics. */
typedef struct env {
    ub_strtab *t;
    ub_diags *d;
    ub_loader *ld;
} env;

static env env_new(void)
{
    env e;
    e.t = ub_strtab_new();
    e.d = ub_diags_new();
    e.ld = ub_loader_new(e.t, e.d);
    return e;
}

static void env_free(env *e)
{
    ub_loader_free(e->ld);
    ub_diags_free(e->d);
    ub_strtab_free(e->t);
}

/* A usdz package of text layers: pkg.usdz holds root.usda (its root
 * layer), sub/b.usda, tex.png and inner.usdz (itself holding in.usda). */
static void put_pkg(void)
{
    static zf_buf inner, pkg;
    inner.len = pkg.len = 0;
    zf_entry(&inner, "in.usda", "#usda 1.0\ndef \"In\"\n{\n}\n");
    zf_end(&inner);
    zf_entry(&pkg, "root.usda",
             "#usda 1.0\n(\n    subLayers = [@./sub/b.usda@]\n)\n"
             "def \"R\"\n{\n}\n");
    zf_entry(&pkg, "sub/b.usda", "#usda 1.0\ndef \"B\"\n{\n}\n");
    zf_entry(&pkg, "tex.png", "PNG");
    zf_entry_ex(&pkg, "inner.usdz", inner.data, inner.len, 0, 0);
    zf_end(&pkg);
    CU_ASSERT_FATAL(zf_write(path("pkg.usdz"), &pkg) == 0);
}

static void test_usdz(void)
{
    put_pkg();
    put("top.usda", "#usda 1.0\n");
    env e = env_new();
    ub_diags *d = e.d;
    ub_loader *ld = e.ld;
    ub_load_status rs;
    /* opening a package opens its first entry, named in its path */
    ub_layer *root = ub_loader_open(ld, path("pkg.usdz"), NULL, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_STRING_EQUAL(root->path, path("pkg.usdz[root.usda]"));
    CU_ASSERT_EQUAL(root->root->children.n, 1);
    /* relative paths written inside resolve inside */
    CU_ASSERT_STRING_EQUAL(ub_loader_resolve(ld, "./sub/b.usda", root, &rs),
                           path("pkg.usdz[sub/b.usda]"));
    ub_layer *b = ub_loader_open(ld, "./sub/b.usda", root, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(b->root->children.v[0]->name, "B");
    /* a search path from sub/b.usda: not in sub/, found next to the
     * package's root layer; else next to the package file */
    CU_ASSERT_STRING_EQUAL(ub_loader_resolve(ld, "tex.png", b, &rs),
                           path("pkg.usdz[tex.png]"));
    CU_ASSERT_STRING_EQUAL(ub_loader_resolve(ld, "top.usda", b, &rs),
                           path("top.usda"));
    /* a file-relative path inside stays inside: none there */
    CU_ASSERT_PTR_NULL(ub_loader_resolve(ld, "./top.usda", b, &rs));
    /* nested packages, named from outside */
    ub_layer *top = ub_loader_open(ld, path("top.usda"), NULL, (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(top);
    ub_layer *in = ub_loader_open(ld, "pkg.usdz[inner.usdz[in.usda]]", top,
                                  (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_STRING_EQUAL(in->root->children.v[0]->name, "In");
    ub_layer *in2 = ub_loader_open(ld, "./pkg.usdz[inner.usdz]", top,
                                   (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL(in2);
    if (in2)
        CU_ASSERT_STRING_EQUAL(in2->path,
                               path("pkg.usdz[inner.usdz[in.usda]]"));
    CU_ASSERT_EQUAL(ub_diags_errors(d), 0);
    /* an entry that is not there */
    ub_load_status st;
    size_t rec = 0;
    CU_ASSERT_PTR_NULL(ub_loader_open_arc(ld, "pkg.usdz[nope.usda]", top,
                                          (ub_loc){0}, &st, &rec));
    CU_ASSERT_EQUAL(st, UB_LOAD_MISSING);
    CU_ASSERT_EQUAL(rec, 1);
    env_free(&e);
}

static void test_anchor(void)
{
    put_pkg();
    put("root.usda", "#usda 1.0\n");
    put("near.usda", "#usda 1.0\n");
    env e = env_new();
    ub_loader *ld = e.ld;
    ub_layer *root = ub_loader_open(ld, path("root.usda"), NULL,
                                    (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    /* file-relative: anchored whether or not the file exists */
    CU_ASSERT_STRING_EQUAL(ub_loader_anchor(ld, "./x/../gone.usda", root),
                           path("gone.usda"));
    /* search path: anchored only when it exists next to the layer */
    CU_ASSERT_STRING_EQUAL(ub_loader_anchor(ld, "near.usda", root),
                           path("near.usda"));
    const char *gone = "gone.usda", *abs = "/x/./y.usda",
               *uri = "http://h/a.usda", *empty = "";
    CU_ASSERT_PTR_EQUAL(ub_loader_anchor(ld, gone, root), gone);
    /* absolute, URI and empty paths as written */
    CU_ASSERT_PTR_EQUAL(ub_loader_anchor(ld, abs, root), abs);
    CU_ASSERT_PTR_EQUAL(ub_loader_anchor(ld, uri, root), uri);
    CU_ASSERT_PTR_EQUAL(ub_loader_anchor(ld, empty, root), empty);
    /* a package-relative path: its package anchored, the entry as
     * written (a UDIM pattern need not exist) */
    CU_ASSERT_STRING_EQUAL(ub_loader_anchor(ld, "pkg.usdz[t_<UDIM>.png]",
                                            root),
                           path("pkg.usdz[t_<UDIM>.png]"));
    const char *nopkg = "nopkg.usdz[t.png]";
    CU_ASSERT_PTR_EQUAL(ub_loader_anchor(ld, nopkg, root), nopkg);
    /* inside a package: next to the layer, then the package's root layer,
     * then the package file */
    ub_layer *b = ub_loader_open(ld, "pkg.usdz[sub/b.usda]", root,
                                 (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(ub_loader_anchor(ld, "./c.png", b),
                           path("pkg.usdz[sub/c.png]"));
    CU_ASSERT_STRING_EQUAL(ub_loader_anchor(ld, "tex.png", b),
                           path("pkg.usdz[tex.png]"));
    CU_ASSERT_STRING_EQUAL(ub_loader_anchor(ld, "near.usda", b),
                           path("near.usda"));
    CU_ASSERT_PTR_EQUAL(ub_loader_anchor(ld, gone, b), gone);
    env_free(&e);
}

/* One placement with the n-th allocation on its way failing (n < 0:
 * none), by a fresh loader (nothing cached): the root layer or, with
 * in_pkg, pkg.usdz[sub/b.usda] anchors it.  Anchoring when !resolve.
 * Returns the answer (NULL: none) and *st. */
static const char *place_failing(long n, bool in_pkg, const char *asset,
                                 bool resolve, ub_load_status *st, env *e)
{
    *e = env_new();
    ub_layer *root = ub_loader_open(e->ld, path("root.usda"), NULL,
                                    (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    ub_layer *b = in_pkg ? ub_loader_open(e->ld, "pkg.usdz[sub/b.usda]",
                                          root, (ub_loc){0})
                         : NULL;
    CU_ASSERT_FATAL(!in_pkg || b);
    /* another loader places: its caches (package files, the current
     * directory) cold; the answer is interned in e->t, kept */
    ub_loader *ld = ub_loader_new(e->t, e->d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ld);
    ub_loader_fail_allocs_after(ld, n);
    const ub_layer *anchor = in_pkg ? b : root;
    const char *r;
    if (resolve) {
        r = ub_loader_resolve(ld, asset, anchor, st);
    } else {
        r = ub_loader_anchor(ld, asset, anchor);
        *st = r ? UB_LOAD_OK : UB_LOAD_FAILED;
    }
    ub_loader_free(ld);
    return r;
}

/* Out of memory while placing a path is its own answer, never a wrong
 * one: with any one allocation failing (and every one after it), a
 * resolve says UB_LOAD_FAILED or what it says with memory, never
 * "missing" for a file that is there; an anchor is NULL or the anchored
 * path, never the path as written; opening says "out of memory", never
 * "cannot find layer". */
static void test_out_of_memory(void)
{
    put_pkg();
    put("root.usda", "#usda 1.0\n");
    put("near.usda", "#usda 1.0\n");
    put("lib/far.usda", "#usda 1.0\n");
    static const struct {
        bool in_pkg;
        const char *asset;
        bool resolve;
    } q[] = {
        {false, "near.usda", true},         {false, "./near.usda", true},
        {false, "gone.usda", true},         {false, "pkg.usdz[tex.png]", true},
        {true, "tex.png", true},            {true, "./c.png", true},
        {true, "near.usda", true},          {false, "near.usda", false},
        {false, "./x/../gone.usda", false}, {false, "gone.usda", false},
        {false, "pkg.usdz[t.png]", false},  {true, "./c.png", false},
        {true, "tex.png", false},           {true, "near.usda", false},
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        env e;
        ub_load_status want_st, st;
        const char *want =
            place_failing(-1, q[i].in_pkg, q[i].asset, q[i].resolve,
                          &want_st, &e);
        CU_ASSERT_NOT_EQUAL(want_st, UB_LOAD_FAILED);
        char *w = want ? strdup(want) : NULL;
        env_free(&e);
        bool failed_once = false;
        for (long n = 0; n < 200; n++) {
            const char *r = place_failing(n, q[i].in_pkg, q[i].asset,
                                          q[i].resolve, &st, &e);
            bool ok = st == UB_LOAD_FAILED
                          ? r == NULL
                          : st == want_st &&
                                (w ? r && strcmp(r, w) == 0 : r == NULL);
            if (!ok)
                fprintf(stderr, "\n%s (%s, %s): allocation %ld failing "
                        "gave '%s' (status %d), not '%s' or out of memory\n",
                        q[i].asset, q[i].in_pkg ? "in pkg" : "root",
                        q[i].resolve ? "resolve" : "anchor", n,
                        r ? r : "(null)", (int)st, w ? w : "(null)");
            CU_ASSERT(ok);
            env_free(&e);
            failed_once |= st == UB_LOAD_FAILED;
            if (st != UB_LOAD_FAILED)
                break; /* it needed fewer: the rest succeed alike */
        }
        CU_ASSERT(failed_once); /* every placement allocates */
        free(w);
    }
    /* opening: the error says so, and the arc is not dropped as missing */
    env e = env_new();
    ub_layer *root = ub_loader_open(e.ld, path("root.usda"), NULL,
                                    (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    ub_loader_fail_allocs_after(e.ld, 0);
    ub_load_status st;
    size_t rec = 0;
    CU_ASSERT_PTR_NULL(ub_loader_open_arc(e.ld, "near.usda", root,
                                          (ub_loc){0}, &st, &rec));
    CU_ASSERT_EQUAL(st, UB_LOAD_FAILED);
    CU_ASSERT(!ub_load_recoverable(st));
    CU_ASSERT_EQUAL(rec, 0);
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(e.d), 1);
    CU_ASSERT_STRING_EQUAL(ub_diags_at(e.d, 0)->message,
                           "out of memory looking for 'near.usda'");
    CU_ASSERT_EQUAL(ub_loader_expect(e.ld, "near.usda", root), -1);
    env_free(&e);
}

/* Assets an arc cannot use: reported at the arc, counted as recovered
 * (the arc is dropped), except a format usdbake does not read yet. */
static void test_unreadable(void)
{
    put("root.usda", "#usda 1.0\n(\n    subLayers = [@mesh.drc@, "
                     "@bad.usda@, @crate.usd@, @zipped.usdz@]\n)\n");
    put("mesh.drc", "DRACO\x02\x02\x01");
    put("bad.usda", "#usda 1.0\ndef \"A\" {\n");
    put("crate.usd", "PXR-USDC\x01\x02\x03");
    static zf_buf z;
    z.len = 0;
    zf_entry_ex(&z, "root.usda", "xx", 2, 8, 0); /* deflated */
    CU_ASSERT_FATAL(zf_write(path("zipped.usdz"), &z) == 0);
    env e = env_new();
    ub_diags *d = e.d;
    ub_loader *ld = e.ld;
    ub_layer *root = ub_loader_open(ld, path("root.usda"), NULL,
                                    (ub_loc){0});
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_EQUAL_FATAL(root->n_sublayers, 4);
    const ub_sublayer *sl = root->sublayers;
    ub_load_status st;
    size_t rec = 0;
    /* a Draco mesh: one error, at the arc */
    CU_ASSERT_PTR_NULL(
        ub_loader_open_arc(ld, sl[0].asset, root, ub_layer_loc(root, sl[0].loc), &st, &rec));
    CU_ASSERT_EQUAL(st, UB_LOAD_UNREADABLE);
    CU_ASSERT_EQUAL(rec, 1);
    CU_ASSERT_EQUAL_FATAL(ub_diags_count(d), 1);
    const ub_diag *m = ub_diags_at(d, 0);
    CU_ASSERT_EQUAL(m->loc.line, 3);
    CU_ASSERT_EQUAL(m->loc.col, ub_layer_loc(root, sl[0].loc).col);
    CU_ASSERT_PTR_NOT_NULL(strstr(m->message, "Draco"));
    /* named again: reported again, at the new arc */
    CU_ASSERT_PTR_NULL(ub_loader_open_arc(ld, sl[0].asset, root, ub_layer_loc(root, sl[1].loc),
                                          &st, &rec));
    CU_ASSERT_EQUAL(st, UB_LOAD_UNREADABLE);
    CU_ASSERT_EQUAL(rec, 2);
    CU_ASSERT_EQUAL(ub_diags_at(d, 1)->loc.col, ub_layer_loc(root, sl[1].loc).col);
    /* a layer with a syntax error: its error, and one at the arc */
    CU_ASSERT_PTR_NULL(
        ub_loader_open_arc(ld, sl[1].asset, root, ub_layer_loc(root, sl[1].loc), &st, &rec));
    CU_ASSERT_EQUAL(st, UB_LOAD_UNREADABLE);
    CU_ASSERT_EQUAL(rec, 2 + ub_diags_errors(d) - 2);
    CU_ASSERT(ub_diags_errors(d) >= 4);
    const ub_diag *last = ub_diags_at(d, ub_diags_count(d) - 1);
    CU_ASSERT_EQUAL(last->loc.line, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(last->message, "bad.usda"));
    /* a damaged crate file: its errors, and one at the arc, dropped */
    size_t before = rec, errs = ub_diags_errors(d);
    CU_ASSERT_PTR_NULL(
        ub_loader_open_arc(ld, sl[2].asset, root, ub_layer_loc(root, sl[2].loc), &st, &rec));
    CU_ASSERT_EQUAL(st, UB_LOAD_UNREADABLE);
    CU_ASSERT_EQUAL(rec, before + ub_diags_errors(d) - errs);
    before = rec;
    /* a damaged package: said so, the arc dropped */
    CU_ASSERT_PTR_NULL(
        ub_loader_open_arc(ld, sl[3].asset, root, ub_layer_loc(root, sl[3].loc), &st, &rec));
    CU_ASSERT_EQUAL(st, UB_LOAD_UNREADABLE);
    CU_ASSERT_EQUAL(rec, before + 1);
    last = ub_diags_at(d, ub_diags_count(d) - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(last->message, "damaged usdz"));
    CU_ASSERT_PTR_NOT_NULL(strstr(last->message, "compressed"));
    env_free(&e);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("loader", setup, teardown);
    CU_add_test(s, "normalize", test_normalize);
    CU_add_test(s, "resolve and search paths", test_resolve_and_search);
    CU_add_test(s, "one layer per file", test_read_once);
    CU_add_test(s, "a crate file is not kept mapped",
                test_crate_file_not_kept);
    CU_add_test(s, "errors and sniffing", test_errors);
    CU_add_test(s, "transient layers", test_transient);
    CU_add_test(s, "usdz packages", test_usdz);
    CU_add_test(s, "anchoring asset paths", test_anchor);
    CU_add_test(s, "unreadable assets", test_unreadable);
    CU_add_test(s, "out of memory placing paths", test_out_of_memory);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
