/* libFuzzer target for layer stacks: the input is up to UB_FUZZ_LAYERS
 * usda layers separated by lines "#--8<--" (a comment, so a seed still
 * reads as one layer too).  Layer i is written to l<i>.usda deep in a
 * private temporary directory and l0.usda is the root, so sublayer
 * paths, offsets and scales, timeCodesPerSecond and the layers they name
 * are all mutated.  The root goes through what `flatten --layer-stack`,
 * `check` and `flatten` do: never a crash, a hang or a leak; an error
 * always says why.  Seeds: the corpus's and fixtures' layer stacks with
 * their sublayers renamed l1.usda, l2.usda, ... (tests/fuzz/run.sh). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ub_check.h"
#include "ub_compose.h"
#include "ub_loader.h"
#include "ub_stack.h"
#include "ub_usda.h"

#define UB_FUZZ_LAYERS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char ub_fuzz_sep[] = "\n#--8<--\n";

/* The directory, made once per process: a fuzzer's state, not the
 * library's.  The layers live UB_FUZZ_DEPTH empty directories below the
 * private one, so that the "../" a mutation puts in an asset path still
 * names a file of ours, not whatever lies in /tmp (a big layer left
 * there once turned a run into a timeout). */
#define UB_FUZZ_DEPTH 8
static char ub_fuzz_top[32];
static char ub_fuzz_dir[64];

static int ub_fuzz_put(const char *name, const char *text, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", ub_fuzz_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = len ? fwrite(text, 1, len, f) : 0;
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static void ub_fuzz_cleanup(void)
{
    char path[128];
    for (int i = 0; i < UB_FUZZ_LAYERS; i++) {
        snprintf(path, sizeof path, "%s/l%d.usda", ub_fuzz_dir, i);
        unlink(path);
    }
    /* the nested directories, deepest first */
    for (size_t n = strlen(ub_fuzz_dir); n > strlen(ub_fuzz_top);) {
        ub_fuzz_dir[n] = '\0';
        rmdir(ub_fuzz_dir);
        n = (size_t)(strrchr(ub_fuzz_dir, '/') - ub_fuzz_dir);
    }
    rmdir(ub_fuzz_top);
}

static void ub_fuzz_make_dir(void)
{
    snprintf(ub_fuzz_top, sizeof ub_fuzz_top, "/tmp/ubfuzz.XXXXXX");
    if (!mkdtemp(ub_fuzz_top))
        abort();
    snprintf(ub_fuzz_dir, sizeof ub_fuzz_dir, "%s", ub_fuzz_top);
    for (int i = 0; i < UB_FUZZ_DEPTH; i++) {
        size_t n = strlen(ub_fuzz_dir);
        snprintf(ub_fuzz_dir + n, sizeof ub_fuzz_dir - n, "/d");
        if (mkdir(ub_fuzz_dir, 0700) != 0)
            abort();
    }
    atexit(ub_fuzz_cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ub_fuzz_dir[0])
        ub_fuzz_make_dir();
    /* split, and write every layer (an absent one is a missing layer) */
    const char *text = (const char *)data, *end = text + size;
    size_t seplen = sizeof ub_fuzz_sep - 1;
    for (int i = 0; i < UB_FUZZ_LAYERS; i++) {
        char name[16];
        snprintf(name, sizeof name, "l%d.usda", i);
        if (!text) {
            char path[128];
            snprintf(path, sizeof path, "%s/%s", ub_fuzz_dir, name);
            unlink(path);
            continue;
        }
        const char *cut = NULL;
        for (const char *p = text; i + 1 < UB_FUZZ_LAYERS &&
                                   (size_t)(end - p) >= seplen; p++)
            if (memcmp(p, ub_fuzz_sep, seplen) == 0) {
                cut = p;
                break;
            }
        size_t n = cut ? (size_t)(cut - text) : (size_t)(end - text);
        if (ub_fuzz_put(name, text, n) != 0)
            abort();
        text = cut ? cut + seplen : NULL;
    }
    char root[128];
    snprintf(root, sizeof root, "%s/l0.usda", ub_fuzz_dir);

    /* flatten --layer-stack */
    ub_strtab *t = ub_strtab_new();
    ub_diags *d = ub_diags_new();
    ub_loader *ld = ub_loader_new(t, d);
    ub_layer *rl = ub_loader_open(ld, root, NULL, (ub_loc){0});
    if (!rl && ub_diags_errors(d) == 0)
        abort();
    if (rl) {
        ub_stack s = {0};
        if (ub_stack_build(&s, ld, rl, d) == 0) {
            ub_layer *flat = ub_stack_flatten(&s, "flat.usda", d);
            ub_buf b;
            ub_buf_init(&b);
            if (flat)
                ub_usda_write(flat, &b);
            ub_buf_free(&b);
            ub_layer_free(flat);
        }
        ub_stack_free(&s);
    }
    ub_loader_free(ld);
    ub_diags_free(d);

    /* check, on a loader of its own */
    d = ub_diags_new();
    ld = ub_loader_new(t, d);
    const char *roots[] = {root};
    ub_check_run(ld, t, roots, 1, NULL, d);
    ub_loader_free(ld);
    ub_diags_free(d);

    /* flatten (the stage) */
    d = ub_diags_new();
    ld = ub_loader_new(t, d);
    rl = ub_loader_open(ld, root, NULL, (ub_loc){0});
    if (rl) {
        size_t recovered = 0;
        ub_layer *flat = ub_compose_flatten(ld, rl, "flat.usda", d,
                                            &recovered);
        ub_layer_free(flat);
    }
    ub_loader_free(ld);
    ub_diags_free(d);
    ub_strtab_free(t);
    return 0;
}
