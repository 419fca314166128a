/* usdbake stitch: per-frame layers into a value-clip set (usdstitchclips),
 * or layers merged into one (--merge, usdstitch); usdbake clip-manifest:
 * the manifest of a clip set. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_cli.h"
#include "ub_ident.h"
#include "ub_stitch.h"
#include "ub_usdb_write.h"

static void ub_stitch_usage(void)
{
    printf(
        "usage: usdbake stitch --clip-path PRIM -o OUT [OPTIONS] FRAME...\n"
        "       usdbake stitch --merge -o OUT LAYER...\n"
        "\n"
        "Stitch per-frame layers (one layer per frame, as a simulation\n"
        "writes them) into a value-clip set, as OpenUSD's usdstitchclips\n"
        "does.  Writes three layers:\n"
        "  OUT                clip metadata (assetPaths, active, times,\n"
        "                     primPath, manifestAssetPath) on PRIM, over\n"
        "  OUT.topology.EXT   every frame's prims and properties, without\n"
        "                     time samples (first frame strongest)\n"
        "  OUT.manifest.EXT   every attribute the frames animate\n"
        "The frames themselves are the clips.  A frame's time is its\n"
        "startTimeCode (and endTimeCode); a frame without one takes the\n"
        "last number of its file name (splash.0101.usda: 101), where\n"
        "OpenUSD would use 0.  Frames are read in parallel; the output does\n"
        "not depend on the number of threads.\n"
        "\n"
        "With --merge: merge the layers into one, as OpenUSD's usdstitch\n"
        "does: the first layer is strongest, time samples are the union.\n"
        "\n"
        "The output format follows OUT's extension: .usdb is usdbake\n"
        "binary, anything else usda text.\n"
        "\n"
        "Options:\n"
        "  --clip-path PRIM         the prim the clips animate (required)\n"
        "  -o, --out OUT            the result layer (required)\n"
        "  --clip-set NAME          the clip set to author (default: default)\n"
        "  --start-time-code T      the result's startTimeCode (default: the\n"
        "                           first clip time)\n"
        "  --end-time-code T        the result's endTimeCode (default: the\n"
        "                           last clip time)\n"
        "  --template-path PATH     author template metadata (e.g.\n"
        "                           ./clip.#.usda) instead of explicit;\n"
        "                           needs --start-time-code,\n"
        "                           --end-time-code and --stride\n"
        "  --stride S               templateStride\n"
        "  --active-offset T        templateActiveOffset\n"
        "  --interpolate-missing    interpolateMissingClipValues = true\n"
        "  --no-comment             no 'Generated with' comment in OUT\n"
        "  --merge                  merge layers instead (see above)\n"
        "  --threads N              read with N threads (default: the CPUs\n"
        "                           this process may use)\n"
        "  -h, --help               show this help\n");
}

static void ub_clip_manifest_usage(void)
{
    printf(
        "usage: usdbake clip-manifest --clip-path PRIM [-o OUT] CLIP...\n"
        "\n"
        "Write the manifest of a clip set: every attribute with time samples\n"
        "in any clip at or below PRIM, declared with its type and\n"
        "variability, as OpenUSD's UsdClipsAPI::GenerateClipManifestFromLayers\n"
        "makes it.\n"
        "\n"
        "Options:\n"
        "  --clip-path PRIM   the clips' prim (required)\n"
        "  -o, --out OUT      write to OUT ('-' or none: standard output),\n"
        "                     atomically; .usdb is usdbake binary\n"
        "  --write-blocks     a value block at the start time of each clip\n"
        "                     that has no samples for an attribute (clip\n"
        "                     times as `stitch` reads them)\n"
        "  --threads N        read with N threads\n"
        "  -h, --help         show this help\n");
}

/* A number option's value; -1 after a usage error. */
static int ub_number(const char *cmd, const char *opt, const char *v,
                     double *x)
{
    char *e;
    errno = 0;
    *x = strtod(v, &e);
    if (!*v || *e || errno || !isfinite(*x)) {
        ub_cli_usage_error(cmd, "%s needs a number, got '%s'", opt, v);
        return -1;
    }
    return 0;
}

static int ub_threads_opt(const char *cmd, const char *v, unsigned *n)
{
    char *e;
    long x = strtol(v, &e, 10);
    if (!*v || *e || x < 1 || x > 1024) {
        ub_cli_usage_error(cmd, "--threads needs a count from 1 to 1024, "
                                "got '%s'",
                           v);
        return -1;
    }
    *n = (unsigned)x;
    return 0;
}

/* "Generated with usdbake stitch ARGS", as usdstitchclips writes it. */
static char *ub_generated_comment(int argc, char **argv)
{
    size_t n = sizeof "Generated with usdbake";
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *c = malloc(n);
    if (!c)
        return NULL;
    strcpy(c, "Generated with usdbake");
    for (int i = 0; i < argc; i++) {
        strcat(c, " ");
        strcat(c, argv[i]);
    }
    return c;
}

/* Write the layers to their paths, all or none; returns an exit status.
 * An output that is one of the inputs is refused (a usage error) before
 * anything is written: the layer read would be replaced, and a clip set
 * would name itself as a clip. */
static int ub_write_layers(const char *cmd, ub_layer *const *layers,
                           const char *const *paths, int n,
                           char *const *inputs, size_t n_inputs,
                           ub_diags *diags)
{
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < n_inputs; k++)
            if (ub_cli_same_file(paths[i], inputs[k]))
                return ub_cli_usage_error(cmd, "the output '%s' is the "
                                               "input '%s'",
                                          paths[i], inputs[k]);
    ub_buf bytes[3];
    ub_out outs[3];
    int status = 0, opened = 0;
    for (int i = 0; i < n; i++)
        ub_buf_init(&bytes[i]);
    for (int i = 0; i < n && status == 0; i++)
        if (ub_cli_write_layer(layers[i], ub_cli_format_of_path(paths[i]),
                               UB_USDB_LEVEL_DEFAULT, NULL, &bytes[i],
                               diags) != 0)
            status = -1;
    ub_cli_print_diags(diags);
    for (; opened < n && status == 0; opened++)
        if (ub_out_open(&outs[opened], paths[opened]) != 0 ||
            ub_out_write(&outs[opened], bytes[opened].data,
                         bytes[opened].len) != 0) {
            if (outs[opened].fd >= 0)
                ub_out_abort(&outs[opened]);
            status = -1;
            break;
        }
    for (int i = 0; i < opened; i++) {
        if (status == 0)
            status = ub_out_commit(&outs[i]);
        else
            ub_out_abort(&outs[i]);
    }
    for (int i = 0; i < n; i++)
        ub_buf_free(&bytes[i]);
    return status == 0 ? UB_EXIT_OK : UB_EXIT_INPUT;
}

/* Both commands' command lines. */
typedef struct ub_stitch_args {
    ub_stitch_opts o;
    const char *out;
    bool merge, no_comment, has_stride, blocks;
    char **inputs;
    size_t n;
} ub_stitch_args;

/* Parse argv of cmd ("stitch" or "clip-manifest", which takes only -o,
 * --clip-path, --threads and --write-blocks).  Returns UB_EXIT_OK, or an
 * exit status after printing why; a->inputs is to be freed either way. */
static int ub_stitch_parse(const char *cmd, int argc, char **argv,
                           ub_stitch_args *a)
{
    bool manifest = strcmp(cmd, "clip-manifest") == 0, options_done = false;
    ub_stitch_opts *o = &a->o;
    int st = UB_EXIT_OK;
    *a = (ub_stitch_args){0};
    a->inputs = calloc((size_t)argc, sizeof *a->inputs);
    if (!a->inputs) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return UB_EXIT_INPUT;
    }
    for (int i = 1; i < argc && st == UB_EXIT_OK; i++) {
        const char *v = NULL, *opt = argv[i];
        double *num = NULL;
        bool *flag = NULL;
        int r = 0;
        if (options_done || argv[i][0] != '-' || !argv[i][1]) {
            a->inputs[a->n++] = argv[i];
            continue;
        }
        if (strcmp(opt, "--") == 0)
            options_done = true;
        else if (manifest && strcmp(opt, "--write-blocks") == 0)
            a->blocks = true;
        else if (!manifest && strcmp(opt, "--merge") == 0)
            a->merge = true;
        else if (!manifest && strcmp(opt, "--no-comment") == 0)
            a->no_comment = true;
        else if (!manifest && strcmp(opt, "--interpolate-missing") == 0)
            o->interpolate_missing = true;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "-o", &v)) ||
                 (r = ub_cli_opt_value(argc, argv, &i, "--out", &v)) ||
                 (r = ub_cli_opt_value(argc, argv, &i, "--output", &v)))
            a->out = v;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--clip-path", &v)))
            o->clip_path = v;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--threads", &v))) {
            if (r > 0 && ub_threads_opt(cmd, v, &o->threads) != 0)
                st = UB_EXIT_USAGE;
        } else if (manifest)
            st = ub_cli_usage_error(cmd, "unknown option '%s'", opt);
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--clip-set", &v)))
            o->clip_set = v;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--template-path",
                                       &v)))
            o->template_path = v;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--start-time-code",
                                       &v)))
            num = &o->start, flag = &o->has_start;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--end-time-code",
                                       &v)))
            num = &o->end, flag = &o->has_end;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--stride", &v)))
            num = &o->stride, flag = &a->has_stride;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--active-offset",
                                       &v)))
            num = &o->active_offset, flag = &o->has_active_offset;
        else
            st = ub_cli_usage_error(cmd, "unknown option '%s'", opt);
        if (r < 0) {
            st = ub_cli_usage_error(cmd, "%s needs a value", opt);
        } else if (num) {
            *flag = true;
            if (ub_number(cmd, opt, v, num) != 0)
                st = UB_EXIT_USAGE;
        }
    }
    if (st == UB_EXIT_OK && !a->n)
        st = ub_cli_usage_error(cmd, "no input layers given");
    else if (st == UB_EXIT_OK && !a->merge && !o->clip_path)
        st = ub_cli_usage_error(cmd, "--clip-path PRIM is required");
    else if (st == UB_EXIT_OK && o->clip_path &&
             !ub_ident_prim_path_ok(o->clip_path))
        st = ub_cli_usage_error(cmd,
                                "--clip-path '%s' is not an absolute prim "
                                "path (expected something like /World/model)",
                                o->clip_path);
    else if (st == UB_EXIT_OK)
        st = ub_cli_no_usdz_output(cmd, a->out);
    return st;
}

static int ub_stitch_run(int argc, char **argv)
{
    ub_stitch_args a;
    int st = ub_stitch_parse("stitch", argc, argv, &a);
    ub_stitch_opts o = a.o;
    const char *out = a.out;
    size_t n = a.n;
    char **inputs = a.inputs;
    if (st != UB_EXIT_OK)
        goto done;
    if (!out || strcmp(out, "-") == 0)
        st = ub_cli_usage_error("stitch", "-o OUT is required (a file: "
                                          "stitch writes several layers "
                                          "named after it)");
    else if (a.merge && (o.clip_path || o.template_path))
        st = ub_cli_usage_error("stitch", "--merge takes no clip options");
    else if (o.template_path && !(o.has_start && o.has_end && a.has_stride))
        st = ub_cli_usage_error("stitch",
                                "--template-path needs --start-time-code, "
                                "--end-time-code and --stride");
    else if (!o.template_path && (a.has_stride || o.has_active_offset))
        st = ub_cli_usage_error("stitch", "%s needs --template-path",
                                a.has_stride ? "--stride" : "--active-offset");
    else if (a.has_stride && o.stride <= 0)
        st = ub_cli_usage_error("stitch", "--stride must be above 0");
    else if (o.has_start && o.has_end && o.end < o.start)
        st = ub_cli_usage_error("stitch", "--end-time-code %g is before "
                                          "--start-time-code %g",
                                o.end, o.start);
    if (st != UB_EXIT_OK)
        goto done;

    ub_session ss;
    if (ub_session_open(&ss, NULL, 0) != 0) {
        st = UB_EXIT_INPUT;
        goto done;
    }
    char *comment = NULL;
    if (!a.merge && !a.no_comment)
        o.comment = comment = ub_generated_comment(argc, argv);
    o.out_path = out;
    if (a.merge) {
        ub_layer *l = ub_stitch_layers(ss.strtab, (const char *const *)inputs,
                                       n, out, o.threads, ss.diags);
        if (!l)
            st = UB_EXIT_INPUT;
        else
            st = ub_write_layers("stitch", &l, &out, 1, inputs, n, ss.diags);
        if (!l)
            ub_cli_print_diags(ss.diags);
        ub_layer_free(l);
    } else {
        ub_stitch_out so;
        if (ub_stitch_clips(ss.strtab, (const char *const *)inputs, n, &o,
                            &so, ss.diags) != 0) {
            ub_cli_print_diags(ss.diags);
            st = UB_EXIT_INPUT;
        } else {
            ub_layer *ls[3] = {so.result, so.topology, so.manifest};
            const char *ps[3] = {out, so.topology_path, so.manifest_path};
            st = ub_write_layers("stitch", ls, ps, 3, inputs, n, ss.diags);
        }
        ub_stitch_out_free(&so);
    }
    free(comment);
    ub_session_close(&ss);
done:
    free(inputs);
    return st;
}

static int ub_clip_manifest_run(int argc, char **argv)
{
    ub_stitch_args a;
    int st = ub_stitch_parse("clip-manifest", argc, argv, &a);
    if (st != UB_EXIT_OK) {
        free(a.inputs);
        return st;
    }
    ub_session ss;
    if (ub_session_open(&ss, NULL, 0) != 0) {
        free(a.inputs);
        return UB_EXIT_INPUT;
    }
    const char *out = a.out ? a.out : "-";
    ub_layer *m = ub_stitch_manifest(
        ss.strtab, (const char *const *)a.inputs, a.n, a.o.clip_path,
        a.blocks, strcmp(out, "-") ? out : "manifest.usda", a.o.threads,
        ss.diags);
    if (!m)
        st = UB_EXIT_INPUT;
    else
        st = ub_write_layers("clip-manifest", &m, &out, 1, a.inputs, a.n,
                             ss.diags);
    if (!m)
        ub_cli_print_diags(ss.diags);
    ub_layer_free(m);
    ub_session_close(&ss);
    free(a.inputs);
    return st;
}

const ub_command ub_cmd_stitch = {
    .name = "stitch",
    .summary = "stitch per-frame layers into a value-clip set (or --merge "
               "layers into one)",
    .run = ub_stitch_run,
    .usage = ub_stitch_usage,
};

const ub_command ub_cmd_clip_manifest = {
    .name = "clip-manifest",
    .summary = "write the manifest of a set of value clips",
    .run = ub_clip_manifest_run,
    .usage = ub_clip_manifest_usage,
};
