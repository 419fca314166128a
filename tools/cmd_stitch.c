/* usdbake stitch: per-frame layers into a value-clip set (usdstitchclips),
 * or layers merged into one (--merge, usdstitch); usdbake clip-manifest:
 * the manifest of a clip set. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_cli.h"
#include "ub_stitch.h"

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

/* Write the layers to their paths, all or none. */
static int ub_write_layers(ub_layer *const *layers, const char *const *paths,
                           int n, ub_diags *diags)
{
    ub_buf bytes[3];
    ub_out outs[3];
    int status = 0, opened = 0;
    for (int i = 0; i < n; i++)
        ub_buf_init(&bytes[i]);
    for (int i = 0; i < n && status == 0; i++)
        if (ub_cli_encode(layers[i], paths[i], &bytes[i], diags) != 0)
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
    return status;
}

static int ub_stitch_run(int argc, char **argv)
{
    ub_stitch_opts o = {0};
    const char *out = NULL;
    bool merge = false, no_comment = false, options_done = false;
    bool has_stride = false;
    char **inputs = calloc((size_t)argc, sizeof *inputs);
    size_t n = 0;
    int st = UB_EXIT_OK;
    if (!inputs) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return UB_EXIT_INPUT;
    }
    for (int i = 1; i < argc && st == UB_EXIT_OK; i++) {
        const char *v = NULL, *opt = argv[i];
        int r = 0;
        if (options_done || argv[i][0] != '-' || !argv[i][1]) {
            inputs[n++] = argv[i];
        } else if (strcmp(opt, "--") == 0) {
            options_done = true;
        } else if (strcmp(opt, "--merge") == 0) {
            merge = true;
        } else if (strcmp(opt, "--no-comment") == 0) {
            no_comment = true;
        } else if (strcmp(opt, "--interpolate-missing") == 0) {
            o.interpolate_missing = true;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "-o", &v)) ||
                   (r = ub_cli_opt_value(argc, argv, &i, "--out", &v)) ||
                   (r = ub_cli_opt_value(argc, argv, &i, "--output", &v))) {
            out = v;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--clip-path",
                                         &v))) {
            o.clip_path = v;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--clip-set", &v))) {
            o.clip_set = v;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--template-path",
                                         &v))) {
            o.template_path = v;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--start-time-code",
                                         &v))) {
            if (r > 0 && ub_number("stitch", opt, v, &o.start) != 0)
                st = UB_EXIT_USAGE;
            o.has_start = true;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--end-time-code",
                                         &v))) {
            if (r > 0 && ub_number("stitch", opt, v, &o.end) != 0)
                st = UB_EXIT_USAGE;
            o.has_end = true;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--stride", &v))) {
            if (r > 0 && ub_number("stitch", opt, v, &o.stride) != 0)
                st = UB_EXIT_USAGE;
            has_stride = true;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--active-offset",
                                         &v))) {
            if (r > 0 && ub_number("stitch", opt, v, &o.active_offset) != 0)
                st = UB_EXIT_USAGE;
            o.has_active_offset = true;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--threads", &v))) {
            if (r > 0 && ub_threads_opt("stitch", v, &o.threads) != 0)
                st = UB_EXIT_USAGE;
        } else {
            st = ub_cli_usage_error("stitch", "unknown option '%s'", opt);
        }
        if (r < 0)
            st = ub_cli_usage_error("stitch", "%s needs a value", opt);
    }
    if (st != UB_EXIT_OK)
        goto done;
    if (!out || strcmp(out, "-") == 0)
        st = ub_cli_usage_error("stitch", "-o OUT is required (a file: "
                                          "stitch writes several layers "
                                          "named after it)");
    else if (!n)
        st = ub_cli_usage_error("stitch", "no input layers given");
    else if (!merge && !o.clip_path)
        st = ub_cli_usage_error("stitch", "--clip-path PRIM is required");
    else if (merge && (o.clip_path || o.template_path))
        st = ub_cli_usage_error("stitch", "--merge takes no clip options");
    else if (o.template_path && !(o.has_start && o.has_end && has_stride))
        st = ub_cli_usage_error("stitch",
                                "--template-path needs --start-time-code, "
                                "--end-time-code and --stride");
    else if (!o.template_path && (has_stride || o.has_active_offset))
        st = ub_cli_usage_error("stitch", "%s needs --template-path",
                                has_stride ? "--stride" : "--active-offset");
    else if (has_stride && o.stride <= 0)
        st = ub_cli_usage_error("stitch", "--stride must be above 0");
    else
        st = ub_cli_check_format("stitch", out);
    if (st != UB_EXIT_OK)
        goto done;

    ub_session ss;
    if (ub_session_open(&ss, NULL, 0) != 0) {
        st = UB_EXIT_INPUT;
        goto done;
    }
    char *comment = NULL;
    if (!merge && !no_comment)
        o.comment = comment = ub_generated_comment(argc, argv);
    o.out_path = out;
    if (merge) {
        ub_layer *l = ub_stitch_layers(ss.strtab, (const char *const *)inputs,
                                       n, out, o.threads, ss.diags);
        if (!l || ub_write_layers(&l, &out, 1, ss.diags) != 0)
            st = UB_EXIT_INPUT;
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
            if (ub_write_layers(ls, ps, 3, ss.diags) != 0)
                st = UB_EXIT_INPUT;
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
    const char *out = NULL, *clip_path = NULL;
    bool blocks = false, options_done = false;
    unsigned threads = 0;
    char **inputs = calloc((size_t)argc, sizeof *inputs);
    size_t n = 0;
    int st = UB_EXIT_OK;
    if (!inputs) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return UB_EXIT_INPUT;
    }
    for (int i = 1; i < argc && st == UB_EXIT_OK; i++) {
        const char *v = NULL, *opt = argv[i];
        int r = 0;
        if (options_done || argv[i][0] != '-' || !argv[i][1])
            inputs[n++] = argv[i];
        else if (strcmp(opt, "--") == 0)
            options_done = true;
        else if (strcmp(opt, "--write-blocks") == 0)
            blocks = true;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "-o", &v)) ||
                 (r = ub_cli_opt_value(argc, argv, &i, "--out", &v)) ||
                 (r = ub_cli_opt_value(argc, argv, &i, "--output", &v)))
            out = v;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--clip-path", &v)))
            clip_path = v;
        else if ((r = ub_cli_opt_value(argc, argv, &i, "--threads", &v))) {
            if (r > 0 && ub_threads_opt("clip-manifest", v, &threads) != 0)
                st = UB_EXIT_USAGE;
        } else
            st = ub_cli_usage_error("clip-manifest", "unknown option '%s'",
                                    opt);
        if (r < 0)
            st = ub_cli_usage_error("clip-manifest", "%s needs a value", opt);
    }
    if (st == UB_EXIT_OK && !n)
        st = ub_cli_usage_error("clip-manifest", "no clip layers given");
    else if (st == UB_EXIT_OK && !clip_path)
        st = ub_cli_usage_error("clip-manifest",
                                "--clip-path PRIM is required");
    else if (st == UB_EXIT_OK)
        st = ub_cli_check_format("clip-manifest", out);
    if (st != UB_EXIT_OK) {
        free(inputs);
        return st;
    }
    ub_session ss;
    if (ub_session_open(&ss, NULL, 0) != 0) {
        free(inputs);
        return UB_EXIT_INPUT;
    }
    ub_layer *m = ub_stitch_manifest(ss.strtab, (const char *const *)inputs,
                                     n, clip_path, blocks,
                                     out && strcmp(out, "-") ? out
                                                             : "manifest.usda",
                                     threads, ss.diags);
    const char *path = out ? out : "-";
    if (!m || ub_write_layers(&m, &path, 1, ss.diags) != 0)
        st = UB_EXIT_INPUT;
    if (!m)
        ub_cli_print_diags(ss.diags);
    ub_layer_free(m);
    ub_session_close(&ss);
    free(inputs);
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
