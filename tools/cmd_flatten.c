/* usdbake flatten --layer-stack: merge a root layer stack into one layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "ub_cli.h"
#include "ub_compose.h"
#include "ub_loader.h"
#include "ub_progress.h"
#include "ub_spill.h"
#include "ub_stack.h"
#include "ub_usda.h"
#include "ub_usdb_write.h"

static void ub_flatten_usage(void)
{
    printf(
        "usage: usdbake flatten [--layer-stack] ROOT [-o OUT] [OPTIONS]\n"
        "\n"
        "Without --layer-stack: compose the stage of ROOT and write it as one\n"
        "layer, as OpenUSD's `usdcat --flatten` does.\n"
        "\n"
        "With --layer-stack: merge only the layer stack of ROOT (ROOT and its\n"
        "subLayers, recursively) into one layer, as OpenUSD's\n"
        "`usdcat --flattenLayerStack` does: every time (sample times,\n"
        "timecode values, timecode entries of dictionaries) is mapped through\n"
        "the sublayers' offsets and timeCodesPerSecond into ROOT's time\n"
        "frame, and relative asset paths are anchored to the layers that\n"
        "wrote them.\n"
        "\n"
        "Broken stacks (a missing sublayer, a sublayer cycle, an offset with\n"
        "a scale of 0) are reported as errors and worked around as OpenUSD\n"
        "does; use --strict to refuse them.\n"
        "\n"
        "Options:\n"
        "  --layer-stack        flatten the root layer stack only\n"
        "  -o, --output OUT     write to OUT ('-' or none: standard output),\n"
        "                       atomically\n"
        "  --format usda|usdc|usdb  output format (default: from OUT's\n"
        "                       extension, .usdc and .usd being OpenUSD's\n"
        "                       crate binary; usda otherwise; usdb is\n"
        "                       usdbake's binary)\n"
        "  --search-path DIR    also look for layers in DIR (repeatable)\n"
        "  --deps FILE          write a make rule `OUT: LAYER...` naming every\n"
        "                       layer read (needs -o)\n"
        "  --strict             treat every composition error as fatal\n"
        "  -h, --help           show this help\n"
        "\n"
        "Value clips are baked one clip layer at a time, read on\n"
        "USDBAKE_THREADS threads (default: the CPUs this process may use);\n"
        "the output is the same whatever the number.  A crate output goes\n"
        "to its file as it is written, past USDBAKE_USDC_WINDOW bytes\n"
        "(default 2 MiB).\n");
}

/* A path as a make word: spaces and '#' escaped, '$' doubled. */
static void ub_make_word(ub_buf *b, const char *p)
{
    for (; *p; p++) {
        if (*p == ' ' || *p == '#' || *p == '\\')
            ub_buf_putc(b, '\\');
        else if (*p == '$')
            ub_buf_putc(b, '$');
        ub_buf_putc(b, *p);
    }
}

/* OUT: dep... followed by an empty rule per dependency (as gcc -MP), so
 * make does not fail when a layer is later deleted. */
/* Whether layer i's file goes into the dependency list: read, not
 * standard input, and not a package already listed for another of its
 * entries. */
static bool ub_dep_listed(const ub_loader *ld, size_t i)
{
    /* read, whether kept or released (a clip layer) */
    const char *lp = ub_loader_path_at(ld, i);
    const char *f = ub_loader_file_at(ld, i);
    if (!lp || strcmp(f, "-") == 0)
        return false;
    /* a package entry's file is its package's */
    for (size_t k = 0; strcmp(f, lp) != 0 && k < i; k++)
        if (ub_loader_path_at(ld, k) && ub_loader_file_at(ld, k) == f)
            return false;
    return true;
}

/* The make rule written to its temporary file, not yet in place (the
 * caller commits it after OUT, or aborts it): a rule that cannot be
 * written leaves no OUT behind either. */
static int ub_write_deps(ub_out *d, const char *deps, const char *out,
                         ub_loader *ld)
{
    ub_buf b;
    ub_buf_init(&b);
    ub_make_word(&b, out);
    ub_buf_putc(&b, ':');
    size_t n = ub_loader_count(ld);
    for (size_t i = 0; i < n; i++) {
        if (!ub_dep_listed(ld, i))
            continue;
        ub_buf_puts(&b, " \\\n  ");
        ub_make_word(&b, ub_loader_file_at(ld, i));
    }
    ub_buf_putc(&b, '\n');
    for (size_t i = 0; i < n; i++) {
        if (!ub_dep_listed(ld, i))
            continue;
        ub_buf_putc(&b, '\n');
        ub_make_word(&b, ub_loader_file_at(ld, i));
        ub_buf_puts(&b, ":\n");
    }
    int r = -1;
    if (b.failed) {
        fprintf(stderr, "usdbake: error: out of memory\n");
    } else if (ub_out_open(d, deps) == 0) {
        r = ub_out_write(d, b.data, b.len);
        if (r != 0)
            ub_out_abort(d);
    }
    ub_buf_free(&b);
    return r;
}

/* --deps naming OUT, or a layer this run read, would replace it with a
 * make rule: a usage error, said before anything is written. */
static int ub_deps_conflict(const char *deps, const char *out, ub_loader *ld)
{
    const char *what = NULL;
    if (ub_cli_same_file(deps, out))
        what = "the output";
    for (size_t i = 0; !what && i < ub_loader_count(ld); i++)
        if (ub_cli_same_file(deps, ub_loader_file_at(ld, i)))
            what = "a layer it reads";
    if (!what)
        return 0;
    return ub_cli_usage_error("flatten", "--deps '%s' names %s", deps, what);
}

static int ub_flatten_run(int argc, char **argv)
{
    const char *out = NULL, *deps = NULL, *root = NULL;
    ub_out_format format = UB_FMT_NONE;
    const char *search[argc];
    int n_search = 0;
    bool layer_stack = false, strict = false, options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!options_done && strcmp(argv[i], "--") == 0) {
            options_done = true;
        } else if (!options_done && strcmp(argv[i], "--layer-stack") == 0) {
            layer_stack = true;
        } else if (!options_done && strcmp(argv[i], "--strict") == 0) {
            strict = true;
        } else if (!options_done &&
                   (r = ub_cli_opt_output(argc, argv, &i, "flatten", &out)) != 0) {
            if (r < 0)
                return UB_EXIT_USAGE;
        } else if (!options_done &&
                   (r = ub_cli_opt_value(argc, argv, &i, "--search-path",
                                         &v)) != 0) {
            if (r < 0)
                return ub_cli_usage_error("flatten",
                                          "--search-path needs a directory");
            search[n_search++] = v;
        } else if (!options_done &&
                   (r = ub_cli_opt_value(argc, argv, &i, "--deps", &v)) !=
                       0) {
            if (r < 0)
                return ub_cli_usage_error("flatten", "--deps needs a file");
            deps = v;
        } else if (!options_done &&
                   (r = ub_cli_opt_format(argc, argv, &i, "flatten",
                                          &format)) != 0) {
            if (r < 0)
                return UB_EXIT_USAGE;
        } else if (!options_done && argv[i][0] == '-' && argv[i][1]) {
            return ub_cli_usage_error("flatten", "unknown option '%s'",
                                      argv[i]);
        } else if (root) {
            return ub_cli_usage_error("flatten",
                                      "one root layer expected, got '%s' "
                                      "and '%s'",
                                      root, argv[i]);
        } else {
            root = argv[i];
        }
    }
    if (!root)
        return ub_cli_usage_error("flatten", "no root layer given");
    /* USDBAKE_THREADS: how many threads read clips (default: the CPUs the
     * process may use); the output is the same whatever it is */
    unsigned long long threads = 0;
    int bad = ub_cli_env_number("flatten", "USDBAKE_THREADS", 1024,
                                "a number from 1 to 1024", &threads);
    if (bad != UB_EXIT_OK)
        return bad;
    bad = format ? UB_EXIT_OK : ub_cli_no_usdz_output("flatten", out);
    if (bad != UB_EXIT_OK)
        return bad;
    if (!format)
        format = ub_cli_format_of_path(out);
    if (!format)
        format = UB_FMT_USDA;
    if (ub_cli_binary_to_tty(format, out))
        return ub_cli_usage_error("flatten",
                                  "not writing binary output to a terminal; "
                                  "use -o FILE");
    if (deps && (!out || strcmp(out, "-") == 0))
        return ub_cli_usage_error("flatten",
                                  "--deps needs an output file (-o OUT)");
    size_t window = 0;
    if (format == UB_FMT_USDC &&
        (bad = ub_cli_usdc_window("flatten", &window)) != UB_EXIT_OK)
        return bad;

    ub_session ss;
    bool oom = ub_session_open(&ss, search, n_search) != 0;
    ub_loader *ld = ss.loader;
    ub_diags *diags = ss.diags;
    ub_stack stack = {0};
    ub_layer *flat = NULL;
    ub_buf text;
    ub_buf_init(&text);
    int status = oom ? UB_EXIT_INPUT : UB_EXIT_OK;
    /* Reading and parsing the stack is the long part. */
    ub_progress prog;
    ub_progress_start(&prog, "reading layers", 0);
    if (!oom)
        ub_loader_set_progress(ld, ub_progress_loader_hook, &prog);
    ub_layer *rl = !oom ? ub_loader_open(ld, root, NULL, (ub_loc){NULL, 0, 0})
                      : NULL;
    if (status == UB_EXIT_OK && !rl)
        status = UB_EXIT_INPUT;
    size_t n_recovered = 0;
    /* Text output of a stage streams: baked clip samples wait in a spill
     * file (clips are read one at a time) and the text goes out as it is
     * written.  So do they for binary output, as values, which the
     * writer reads back an attribute at a time. */
    ub_spill *spill = NULL;
    if (status == UB_EXIT_OK && !layer_stack &&
        !(spill = ub_spill_new(format == UB_FMT_USDA ? UB_SPILL_TEXT
                                                     : UB_SPILL_VALUES)))
        status = UB_EXIT_INPUT;
    if (status == UB_EXIT_OK && !layer_stack) {
#ifdef M_TOP_PAD
        /* A clip bake passes blocks of a clip's size (its text, its
         * layer, its samples as text) through malloc on every thread, clip
         * after clip.  glibc gives the top of a thread's heap back after
         * each one and faults it in again for the next: two thirds of the
         * 200-frame bench bake's page faults.  A 4 MiB pad keeps it (wall
         * time -15%, peak RSS +1 MB); a whole-layer command is left alone,
         * where the pad would only add to its peak. */
        mallopt(M_TOP_PAD, 4 << 20);
#endif
        /* the whole stage: compose, then flatten (ub_compose) */
        size_t before = ub_diags_errors(diags);
        ub_clip_sink sink = spill ? ub_spill_sink(spill) : (ub_clip_sink){0};
        ub_flatten_opts fo = {.sink = spill ? &sink : NULL,
                              .threads = (unsigned)threads};
        flat = ub_compose_flatten_to(
            ld, rl, ss.schemas, out && strcmp(out, "-") ? out : "stdout.usda",
            diags, &n_recovered, &fo);
        if (!flat) {
            /* the spill says why it stopped the bake */
            if (ub_diags_errors(diags) == before &&
                !(spill && ub_spill_said(spill)))
                fprintf(stderr, "usdbake: error: out of memory\n");
            status = UB_EXIT_INPUT;
        } else if (spill) {
            ub_spill_finish(spill);
        }
    }
    if (status == UB_EXIT_OK && layer_stack &&
        ub_stack_build(&stack, ld, rl, diags) != 0) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        status = UB_EXIT_INPUT;
    }
    /* From here on the stack's layers are only read in order, never
     * searched by name: their name indexes (megabytes for a list of
     * 100,000 children) go before the flattened copy is built. */
    for (size_t i = 0; status == UB_EXIT_OK && layer_stack && i < stack.n;
         i++)
        ub_layer_unindexed(stack.layers[i]);
    ub_progress_end(&prog);
    if (status == UB_EXIT_OK) {
        size_t errors = ub_diags_errors(diags);
        if (errors > stack.n_recovered + n_recovered ||
            (strict && errors > 0))
            status = UB_EXIT_INPUT;
    }
    if (status == UB_EXIT_OK && layer_stack) {
        flat = ub_stack_flatten(&stack, out && strcmp(out, "-") ? out
                                                                : "stdout.usda",
                                diags);
        if (!flat) {
            fprintf(stderr, "usdbake: error: out of memory\n");
            status = UB_EXIT_INPUT;
        }
    }
    /* Text streams out as it is written, so the whole output never sits
     * in memory next to the layer; binary formats are built whole, and a
     * crate goes to its file as it is (the file is opened first). */
    bool stream = format == UB_FMT_USDA;
    ub_out sink;
    bool sink_open = false;
    ub_usdc_file file;
    ub_usdc_to to = {.samples = spill ? ub_spill_values : NULL,
                     .samples_ctx = spill};
    if (status == UB_EXIT_OK && format == UB_FMT_USDC) {
        if (ub_out_open(&sink, out) != 0)
            status = UB_EXIT_INPUT;
        else
            sink_open = true;
        if (sink_open && ub_out_usdc_file(&sink, window, &file))
            to.file = &file;
    }
    if (status == UB_EXIT_OK && !stream &&
        ub_cli_write_layer(flat, format, UB_USDB_LEVEL_DEFAULT, &to, &text,
                           diags) != 0)
        status = UB_EXIT_INPUT;
    if (diags)
        ub_cli_print_diags(diags);
    /* --deps: its rule waits in a temporary file while OUT is written,
     * and both go in place at the end (OUT first), or neither */
    ub_out dout;
    bool deps_open = false;
    if (status == UB_EXIT_OK && deps) {
        int c = ub_deps_conflict(deps, out, ld);
        if (c != 0)
            status = c;
        else if (ub_write_deps(&dout, deps, out, ld) != 0)
            status = UB_EXIT_INPUT;
        else
            deps_open = true;
    }
    bool written = false; /* sink holds the whole output, to commit */
    if (sink_open && status != UB_EXIT_OK) {
        ub_out_abort(&sink);
        sink_open = false;
    }
    if (status == UB_EXIT_OK && !sink_open && ub_out_open(&sink, out) != 0)
        status = UB_EXIT_INPUT;
    if (status == UB_EXIT_OK && !stream) {
        written = ub_out_write(&sink, text.data, text.len) == 0;
        if (!written) {
            ub_out_abort(&sink);
            status = UB_EXIT_INPUT;
        }
    }
    if (status == UB_EXIT_OK && stream) {
        /* written as it is produced, on a thread of its own while the
         * text is made (and the baked samples copied in) */
        ub_out_bg bg;
        ub_out_bg_start(&bg, &sink);
        ub_buf_set_sink(&text, ub_out_bg_write, &bg, UB_CLI_TEXT_CHUNK);
        int r = spill ? ub_usda_write_with(flat, &text, ub_spill_samples,
                                           spill)
                      : ub_usda_write(flat, &text);
        if (r == 0)
            r = ub_buf_flush(&text);
        if (ub_out_bg_finish(&bg) != 0) {
            r = -1;
            text.sink_failed = true; /* it said why */
        }
        /* the sink and the spill say why they failed; memory is what
         * else fails */
        if (r != 0 && text.failed && !text.sink_failed)
            fprintf(stderr, "usdbake: error: out of memory writing the "
                            "flattened layer\n");
        written = r == 0;
        if (!written) {
            ub_out_abort(&sink);
            status = UB_EXIT_INPUT;
        }
    }
    if (written && ub_out_commit(&sink) != 0)
        status = UB_EXIT_INPUT;
    if (deps_open) {
        if (status != UB_EXIT_OK)
            ub_out_abort(&dout);
        else if (ub_out_commit(&dout) != 0)
            status = UB_EXIT_INPUT;
    }
    ub_spill_free(spill);
    if (status == UB_EXIT_OK && ub_diags_errors(diags) > 0)
        fprintf(stderr,
                "usdbake flatten: note: output written despite %zu "
                "composition error%s, worked around as OpenUSD does; "
                "--strict refuses them\n",
                ub_diags_errors(diags), ub_diags_errors(diags) == 1 ? "" : "s");
    ub_buf_free(&text);
    ub_layer_free(flat);
    ub_stack_free(&stack);
    ub_session_close(&ss);
    return status;
}

const ub_command ub_cmd_flatten = {
    .name = "flatten",
    .summary = "compose a stage (or, --layer-stack, merge a layer stack) "
               "into one layer",
    .run = ub_flatten_run,
    .usage = ub_flatten_usage,
};
